/* progress.h - a batch's progress as `locus stat` and the API show it:
 * counts from the store plus throughput and an ETA, computed one way. */
#ifndef LOCUS_PROGRESS_H
#define LOCUS_PROGRESS_H
#include "store/store.h"

struct batch_progress {
    struct batch_stats st;
    double jobs_per_hour;   /* finished jobs (done or failed) per hour since the batch began */
    double eta_s;           /* seconds until every job is finished at that rate; -1 unknown */
};

void batch_progress_compute(const struct batch *b, const struct batch_stats *st, int64_t now,
                            struct batch_progress *out);
#endif
