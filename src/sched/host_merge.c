/* host_merge.c - the old host a reinstalled client is (host_merge.h). */
#include "sched/host_merge.h"
#include <string.h>

static int same_computer(const struct host *a, const struct host *b)
{
    return a->user_id == b->user_id && !strcmp(a->domain_name, b->domain_name) && !strcmp(a->os_name, b->os_name) &&
           !strcmp(a->platform, b->platform) && a->p_ncpus == b->p_ncpus && a->m_nbytes == b->m_nbytes &&
           a->net == b->net;
}

int host_merge_pick(const struct host *req, int multiple_clients, const struct host *cands, int n, int64_t now)
{
    if (multiple_clients || !req->domain_name[0] || !req->os_name[0] || !(req->m_nbytes > 0) || !req->net)
        return -1;
    for (int i = 0; i < n; i++)
        if (same_computer(req, &cands[i])) return now - cands[i].rpc_time >= HOST_MERGE_SILENT_S ? i : -1;
    return -1;
}
