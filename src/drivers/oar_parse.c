/* oar_parse.c - the JSON answers of OAR's REST API, read (see oar_parse.h). */
#include "drivers/oar_parse.h"
#include "core/vec.h"
#include "grid/jobscript.h"
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OAR's job states, normalised; Terminated and Error are read further. */
static const struct { const char *name; enum drv_state state; } oar_states[] = {
    {"Waiting", DRV_WAITING},  {"Hold", DRV_WAITING},      {"toLaunch", DRV_WAITING},
    {"toError", DRV_WAITING},  {"toAckReservation", DRV_WAITING},
    {"Launching", DRV_RUNNING}, {"Running", DRV_RUNNING},  {"Finishing", DRV_RUNNING},
    {"Suspended", DRV_RUNNING}, {"Resuming", DRV_RUNNING}, {"Terminated", DRV_FINISHED},
    {"Error", DRV_FINISHED},
};

/* Why a job in Error ended, from its events, the most telling first (a
 * walltime kill also has FRAG_JOB_REQUEST, which alone means a delete). */
static const struct { const char *event; enum drv_end end; } oar_events[] = {
    {"BESTEFFORT_KILL", DRV_END_PREEMPTED},
    {"WALLTIME", DRV_END_WALLTIME},
    {"PING_CHECKER_NODE_SUSPECTED", DRV_END_NODE_FAIL},
    {"EXTERMINATE_JOB", DRV_END_NODE_FAIL},
    {"FRAG_JOB_REQUEST", DRV_END_CANCELLED},
    {"WORKING_DIRECTORY", DRV_END_EXIT},
};

/* The integer member key of o, or 0 when it is absent or not an integer. */
static int64_t int_of(const json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

long oar_member_index(const json_t *job)
{
    const char *cmd = json_string_value(json_object_get(job, "command"));
    const char *sp = cmd ? strrchr(cmd, ' ') : NULL;
    if (!sp) return -1;
    size_t n = strlen(sp + 1);
    if (n == 0 || n > 9 || strspn(sp + 1, "0123456789") != n) return -1;
    return strtol(sp + 1, NULL, 10);   /* 9 digits: within OAR_INDEX_MAX */
}

void oar_normalise(const json_t *job, time_t now, struct drv_status *st)
{
    *st = (struct drv_status){0};
    const char *state = json_string_value(json_object_get(job, "state"));
    if (state && !*state) state = NULL;   /* an empty state says no more than none: messages show "?" */
    snprintf(st->raw, sizeof st->raw, "%s", state ? state : "?");
    st->state = DRV_FINISHED;
    st->end = DRV_END_UNKNOWN;
    for (size_t i = 0; i < sizeof oar_states / sizeof *oar_states; i++)
        if (state && !strcmp(state, oar_states[i].name)) st->state = oar_states[i].state;
    int64_t start = int_of(job, "start_time"), stop = int_of(job, "stop_time");
    st->start = start > 0 ? (time_t)start : 0;
    st->stop = stop > 0 ? (time_t)stop : 0;
    if (st->state != DRV_FINISHED) {
        st->end = DRV_END_NONE;
        st->stop = 0;
        st->run_seconds = st->state == DRV_RUNNING && st->start > 0 && now > st->start ? (long)(now - st->start) : 0;
        return;
    }
    if (st->start > 0 && st->stop >= st->start) st->run_seconds = (long)(st->stop - st->start);
    json_t *code = json_object_get(job, "exit_code");
    if (state && !strcmp(state, "Terminated") && json_is_integer(code)) {
        int raw = (int)(json_integer_value(code) & 0xffff);   /* a wait status */
        st->exit_code = raw & 0x7f ? 128 + (raw & 0x7f) : (raw >> 8) & 0xff;
        st->end = st->exit_code ? DRV_END_EXIT : DRV_END_SUCCESS;
        return;
    }
    json_t *events = json_object_get(job, "events");
    for (size_t i = 0; i < sizeof oar_events / sizeof *oar_events && st->end == DRV_END_UNKNOWN; i++) {
        size_t k;
        json_t *e;
        json_array_foreach(events, k, e) {
            const char *type = json_string_value(json_object_get(e, "type"));
            if (type && !strcmp(type, oar_events[i].event)) {
                st->end = oar_events[i].end;
                if (st->end == DRV_END_EXIT) st->exit_code = JOBSCRIPT_SETUP_FAILED;
                snprintf(st->raw, sizeof st->raw, "%s", type);
                break;
            }
        }
    }
}

int oar_parse_details(const json_t *ans, const int64_t *ids, int n, time_t now, struct drv_status *out)
{
    int found = 0;
    size_t k;
    json_t *it;
    json_array_foreach(json_object_get(ans, "items"), k, it) {
        json_t *id = json_object_get(it, "id");
        if (!json_is_integer(id)) continue;
        for (int i = 0; i < n; i++)
            if (ids[i] == (int64_t)json_integer_value(id)) {
                oar_normalise(it, now, &out[i]);
                found++;
            }
    }
    return found;
}

int64_t oar_parse_post_id(const json_t *ans)
{
    int64_t id = int_of(ans, "id");
    return id > 0 ? id : -1;
}

int oar_parse_members(const json_t *ans, int n, char (*ids)[DRV_ID_MAX])
{
    int found = 0;
    size_t k;
    json_t *it;
    for (int i = 0; i < n; i++) ids[i][0] = '\0';
    json_array_foreach(json_object_get(ans, "items"), k, it) {
        long idx = oar_member_index(it);
        int64_t id = int_of(it, "id");
        if (idx < 0 || idx >= n || id <= 0 || ids[idx][0]) continue;
        char text[DRV_ID_MAX];
        snprintf(text, sizeof text, "%" PRId64, id);
        int taken = 0;   /* by another index: one remote job cannot be two of ours */
        for (int i = 0; i < n && !taken; i++) taken = !strcmp(ids[i], text);
        if (taken) continue;
        memcpy(ids[idx], text, sizeof text);
        found++;
    }
    return found;
}

void oar_parse_resources(const json_t *res, const json_t *jobs, const json_t *stress, struct drv_resources *out)
{
    *out = (struct drv_resources){0};
    size_t k;
    json_t *it;
    json_array_foreach(json_object_get(res, "items"), k, it) {
        const char *s = json_string_value(json_object_get(it, "state"));
        if (s && !strcmp(s, "Alive")) out->total_cores++;
    }
    long used = 0;
    json_array_foreach(json_object_get(jobs, "items"), k, it) {
        struct drv_status st;
        oar_normalise(it, 0, &st);
        if (st.state == DRV_WAITING) out->waiting_jobs++;
        if (st.state != DRV_RUNNING) continue;
        out->running_jobs++;
        used += (long)json_array_size(json_object_get(it, "resources"));   /* bounded by the answer's size */
    }
    out->free_cores = out->total_cores > used ? out->total_cores - used : 0;
    json_t *g = json_object_get(stress, "GLOBAL_STRESS");
    double v = json_is_number(g) ? json_number_value(g) : json_is_string(g) ? strtod(json_string_value(g), NULL) : 0;
    out->stress = !(v > 0) ? 0 : v > 1 ? 1 : v;   /* NaN too: 0 */
}

void oar_finding_init(struct oar_finding *s, const char *name, const char *user, time_t after)
{
    *s = (struct oar_finding){.name = name, .user = user, .after = after};
    imap_init(&s->seen);
}

long oar_finding_page(struct oar_finding *s, const json_t *ans)
{
    json_t *items = json_object_get(ans, "items"), *it;
    size_t k;
    json_array_foreach(items, k, it) {
        const char *nm = json_string_value(json_object_get(it, "job_name"));
        const char *owner = json_string_value(json_object_get(it, "job_user"));
        int64_t id = int_of(it, "id");
        json_t *at = json_object_get(it, "submission_time");   /* not a number: not filtered on */
        if (id <= 0 || !nm || strcmp(nm, s->name) || !owner || strcmp(owner, s->user) || imap_get(&s->seen, id) ||
            (s->after && json_is_integer(at) && json_integer_value(at) < s->after))
            continue;
        if (s->n >= OAR_FIND_MAX) return -1;
        VEC_GROW(s->f, s->n, s->cap);
        int64_t array = int_of(it, "array_id");
        s->f[s->n++] = (struct oar_found){array > 0 ? array : id, oar_member_index(it), id};
        imap_put(&s->seen, id, (void *)1);
    }
    size_t got = json_array_size(items);
    return got > LONG_MAX ? LONG_MAX : (long)got;
}

/* Arrays (chunks of one submission) in submission order, each by member
 * index; single jobs are their own array. */
static int found_order(const void *a, const void *b)
{
    const struct oar_found *x = a, *y = b;
    if (x->array != y->array) return (x->array > y->array) - (x->array < y->array);
    if (x->index != y->index) return (x->index > y->index) - (x->index < y->index);
    return (x->id > y->id) - (x->id < y->id);
}

int oar_finding_ids(struct oar_finding *s, char (*ids)[DRV_ID_MAX], int max)
{
    if (s->n > 1) qsort(s->f, (size_t)s->n, sizeof *s->f, found_order);
    int n = s->n < max ? s->n : max;
    if (n < 0) n = 0;
    for (int i = 0; i < n; i++) snprintf(ids[i], DRV_ID_MAX, "%" PRId64, s->f[i].id);
    return n;
}

void oar_finding_free(struct oar_finding *s)
{
    free(s->f);
    s->f = NULL;
    s->n = s->cap = 0;
    imap_free(&s->seen);
}

void oar_live_states(struct strbuf *out)
{
    const char *sep = "";
    for (size_t i = 0; i < sizeof oar_states / sizeof *oar_states; i++) {
        if (oar_states[i].state == DRV_FINISHED) continue;
        sb_printf(out, "%s%s", sep, oar_states[i].name);
        sep = ",";
    }
}
