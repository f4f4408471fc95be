/* trust.c - whether a host is trusted alone for a job (trust.h). */
#include "sched/trust.h"

int trust_alone(const struct trust_policy *p, const struct host_av *r, double draw)
{
    if (!r || r->consecutive_valid < p->min_valid || r->consecutive_valid < 1 || r->npending > 0) return 0;
    if ((double)r->ninvalid > TRUST_MAX_INVALID_SHARE * (double)(r->nagreed + r->ninvalid)) return 0;
    double check = 1.0 / r->consecutive_valid;
    if (check < p->spot_check) check = p->spot_check;
    return draw >= check;
}

int trust_reliable(const struct trust_policy *p, const struct host_av *r, double delay_bound)
{
    if (p->reduced_delay <= 0 || !r || r->nvalid < p->min_valid || r->npending > 0) return 0;
    double bad = (double)(r->nerror + r->ninvalid);
    if (bad > TRUST_MAX_INVALID_SHARE * ((double)r->nvalid + bad)) return 0;
    return r->turnaround_avg > 0 && r->turnaround_avg <= p->reduced_delay * delay_bound;
}

double trust_draw(uint64_t seed, int64_t inst_id)
{
    /* splitmix64's finalizer: every input bit reaches every output bit */
    uint64_t z = seed ^ ((uint64_t)inst_id * 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);   /* the top 53 bits over 2^53 */
}
