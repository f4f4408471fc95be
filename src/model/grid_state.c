/* grid_state.c - lookups by id, names of the grid state's codes and the
 * form of events' messages (grid_state.h). */
#include "model/grid_state.h"
#include <string.h>

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
    static const char *const n[] = {"none", "success", "exit", "walltime", "preempted", "admin_cancel", "node_failure",
                                    "unknown"};
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
    static const char *const n[] = {"exit_error",     "submit_refused", "sink",        "walltime",
                                    "too_many_attempts", "prologue_error", "epilogue_error", "input_error",
                                    "stage_error"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "unknown";
}

const char *grid_submit_kind_name(enum grid_submit_kind k)
{
    static const char *const n[] = {"new", "resubmit", "checkpoint", "test", "replica", "prologue", "epilogue"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "unknown";
}

/* The length of the valid UTF-8 sequence at s, 0 if none starts there. */
static size_t utf8_seq(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    size_t n = s[0] >= 0xc2 && s[0] <= 0xdf   ? 2
               : s[0] >= 0xe0 && s[0] <= 0xef ? 3
               : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                              : 0;
    /* the second byte's range rules out overlong forms, surrogates and code points above U+10FFFF */
    unsigned char lo = s[0] == 0xe0 ? 0xa0 : s[0] == 0xf0 ? 0x90 : 0x80;
    unsigned char hi = s[0] == 0xed ? 0x9f : s[0] == 0xf4 ? 0x8f : 0xbf;
    if (n && (s[1] < lo || s[1] > hi)) return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

void grid_message_clean(char out[GRID_EVENT_MESSAGE_MAX + 1], const char *text)
{
    const unsigned char *t = (const unsigned char *)text;
    size_t len = strlen(text), room = len > GRID_EVENT_MESSAGE_MAX ? GRID_EVENT_MESSAGE_MAX - 3 : len, n = 0;
    /* each byte out stands for one byte in: the cut falls where it would in text */
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq(t + i);
        if (n + (k ? k : 1) > room) break;
        if (!k) out[n++] = '?', i++;
        else if (k == 1 && (t[i] < 0x20 || t[i] == 0x7f)) out[n++] = ' ', i++;
        else memcpy(out + n, t + i, k), n += k, i += k;
    }
    while (n && out[n - 1] == ' ') n--;
    if (len > GRID_EVENT_MESSAGE_MAX) memcpy(out + n, "...", 3), n += 3;
    out[n] = 0;
}
