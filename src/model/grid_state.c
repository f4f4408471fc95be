/* grid_state.c - lookups by id and names of the grid state's codes
 * (grid_state.h). */
#include "model/grid_state.h"

struct grid_cluster *grid_cluster_find(struct grid_state *st, int64_t id)
{
    return id >= 1 && id <= st->nclusters ? &st->clusters[id - 1] : NULL;
}

struct grid_campaign *grid_campaign_find(struct grid_state *st, int64_t id)
{
    return id >= 1 && id <= st->ncamps ? &st->camps[id - 1] : NULL;
}

struct grid_job *grid_job_find(struct grid_state *st, int64_t id)
{
    return id >= 1 && id <= st->njobs ? &st->jobs[id - 1] : NULL;
}

struct grid_copy *grid_copy_find(struct grid_state *st, int64_t id)
{
    return id >= 1 && id <= st->ncopies ? &st->copies[id - 1] : NULL;
}

struct grid_event *grid_event_find(struct grid_state *st, int64_t id)
{
    return id >= 1 && id <= st->nevents ? &st->events[id - 1] : NULL;
}

const char *grid_end_name(enum grid_end e)
{
    static const char *const n[] = {"none", "success", "exit", "walltime", "preempted", "admin_cancel", "node_failure"};
    return (unsigned)e < sizeof n / sizeof *n ? n[e] : "unknown";
}

const char *grid_cancel_name(enum grid_cancel_reason r)
{
    static const char *const n[] = {"none", "excess_waiting", "waited_too_long", "over_walltime", "finalize_loser",
                                    "campaign_cancelled"};
    return (unsigned)r < sizeof n / sizeof *n ? n[r] : "unknown";
}

const char *grid_event_name(enum grid_event_kind k)
{
    static const char *const n[] = {"exit_error",        "submit_refused", "sink",          "walltime",
                                    "too_many_attempts", "prologue_error", "epilogue_error"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "unknown";
}

const char *grid_submit_kind_name(enum grid_submit_kind k)
{
    static const char *const n[] = {"new", "resubmit", "checkpoint", "test", "replica", "prologue", "epilogue"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "unknown";
}
