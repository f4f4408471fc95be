/* sched_fixtures.h - redundancy settings shared by the scheduling tests
 * (test_index.c, test_locality.c). */
#ifndef LOCUS_TEST_SCHED_FIXTURES_H
#define LOCUS_TEST_SCHED_FIXTURES_H
#include "model/model.h"

static const struct redundancy red1 = {.min_quorum = 1, .target_nresults = 1, .max_error_instances = 3,
                                       .max_total_instances = 6, .max_success_instances = 3};
static const struct redundancy red2 = {.min_quorum = 2, .target_nresults = 2, .max_error_instances = 3,
                                       .max_total_instances = 6, .max_success_instances = 4};
#endif
