/* progress.c - throughput over the batch's life so far, and the ETA it implies. */
#include "store/progress.h"

void batch_progress_compute(const struct batch *b, const struct batch_stats *st, int64_t now,
                            struct batch_progress *out)
{
    out->st = *st;
    int64_t finished = st->ndone + st->nfailed;
    int64_t end = b->done_time > 0 ? b->done_time : now;
    double hours = (double)(end - b->create_time) / 3600.0;
    out->jobs_per_hour = hours > 0 && finished > 0 ? (double)finished / hours : 0;
    int64_t remaining = st->nactive + st->nvalidated;
    if (remaining == 0) out->eta_s = 0;
    else out->eta_s = out->jobs_per_hour > 0 ? (double)remaining / out->jobs_per_hour * 3600.0 : -1;
}
