/* placement.c - the data placement rule (see placement.h). */
#include "grid/placement.h"

double place_expected_start(const struct place_cluster *c, const struct stage_input *in, int n)
{
    double wait = c->queue_wait_s > 0 ? c->queue_wait_s : 0;
    return wait + stage_bw_seconds(c->bw, stage_cache_missing(c->cache, in, n));
}

int place_choose(const struct place_cluster *cl, int ncl, const struct stage_input *in, int n)
{
    int best = -1;
    double best_t = 0;
    int64_t best_miss = 0;
    for (int i = 0; i < ncl; i++) {
        double t = place_expected_start(&cl[i], in, n);
        int64_t miss = stage_cache_missing(cl[i].cache, in, n);
        if (best < 0 || t < best_t || (t == best_t && miss < best_miss)) {
            best = i;
            best_t = t;
            best_miss = miss;
        }
    }
    return best;
}
