/* transition.c - BOINC's transitioner semantics, stated once:
 * successes that are not known invalid count toward the target; errors
 * (client error, no reply, outputs missing) count toward max_error; every
 * instance counts toward max_total. */
#include "sched/transition.h"
#include <string.h>

int instance_timed_out(const struct instance *in, int64_t now)
{
    return in->state == INST_IN_PROGRESS && in->deadline < now;
}

void transition_job(const struct job_status *js, const struct redundancy *red,
                    const struct instance *inst, int ninst, struct transition *out)
{
    memset(out, 0, sizeof *out);
    int unchecked = 0, candidates = 0;
    for (int i = 0; i < ninst; i++) {
        const struct instance *in = &inst[i];
        if (in->state == INST_IN_PROGRESS) {
            out->nin_progress++;
            continue;
        }
        switch (in->outcome) {
        case OUTCOME_SUCCESS:
            if (in->validate_state == VALIDATE_INVALID) break;
            out->nsuccess++;
            if (in->validate_state == VALIDATE_INIT) unchecked++;
            if (in->validate_state != VALIDATE_VALID) candidates++;
            break;
        case OUTCOME_CLIENT_ERROR:
        case OUTCOME_NO_REPLY:
        case OUTCOME_VALIDATE_ERROR:
            out->nerror++;
            break;
        }
    }
    if (js->state == JOB_VALIDATED) {
        /* late results are checked against the canonical one */
        out->validate = unchecked > 0;
        return;
    }
    if (js->state != JOB_ACTIVE) return;
    int quorum = job_quorum(red, js);
    out->validate = unchecked > 0 && candidates >= quorum;
    if (out->nerror > red->max_error_instances) {
        out->fail_mask = JOB_ERR_TOO_MANY_ERRORS;
        return;
    }
    if (out->nsuccess > red->max_success_instances && !out->validate) {
        out->fail_mask = JOB_ERR_TOO_MANY_SUCCESS;
        return;
    }
    int target = js->target_nresults > quorum ? js->target_nresults : quorum;
    int needed = target - out->nin_progress - out->nsuccess;
    if (needed < 0) needed = 0;
    if (needed > 0 && ninst + needed > red->max_total_instances) {
        /* send what still fits; fail only when nothing fits and nothing is out */
        needed = red->max_total_instances - ninst;
        if (needed <= 0) {
            needed = 0;
            if (out->nin_progress == 0 && !out->validate) out->fail_mask = JOB_ERR_TOO_MANY_TOTAL;
        }
    }
    out->needed = needed;
}
