/* transition.h - the transitioner's rules for one job: from its instances
 * and redundancy settings, decide how many new instances it needs, whether
 * its results should be validated, and whether it has failed. Pure: the
 * caller applies the decision. */
#ifndef LOCUS_TRANSITION_H
#define LOCUS_TRANSITION_H
#include "model/model.h"

struct transition {
    int needed;          /* instances to send in addition to those out now */
    int validate;        /* enough unchecked successes to run the validator */
    int fail_mask;       /* non-zero: the job fails with these job_error bits */
    int nin_progress, nsuccess, nerror;
};

/* An in-progress instance past its deadline has not been answered. */
int instance_timed_out(const struct instance *in, int64_t now);

void transition_job(const struct job_status *js, const struct redundancy *red,
                    const struct instance *inst, int ninst, struct transition *out);
#endif
