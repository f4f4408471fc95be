/* fuzz_oar_json.c - libFuzzer harness for the readers of OAR's REST API
 * answers (drivers/oar_parse.h). The first byte picks the answer, as the
 * corpus files begin: '0' a job (GET /jobs/ID), '1' /jobs/details (bulk
 * status), '2' POST /jobs and an array's members, '3' the cluster's load
 * (/resources/full, /jobs/details, /stress_factor), '4' a page of
 * /jobs/table searched for a submission, '5' member indexes; the rest is
 * the JSON text (any JSON, or none). What is read holds: a known state
 * with an end that agrees with it, times and durations never negative, an
 * exit code within 0..255, statuses only for the ids asked, each member
 * once at its index, cores within 0..total and a stress within 0..1, the
 * jobs of a search found once each, in submission order, and named as
 * asked. */
#include "drivers/oar_parse.h"
#include "fuzz_status.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODES 6
#define NOW ((time_t)1795760000)   /* the caller's clock, given */
#define SEARCH_NAME "locus.0123456789abcdef.5.77"
#define SEARCH_USER "locusa"

static void check_status(const struct drv_status *st)
{
    check_status_common(st);
    check(st->raw[0]);
    if (st->state != DRV_FINISHED) check(st->stop == 0 && st->run_seconds <= NOW);
    if (st->state == DRV_WAITING) check(st->run_seconds == 0);
    if (st->state == DRV_FINISHED && st->run_seconds) check(st->run_seconds == st->stop - st->start);
}

static void job(const json_t *j)
{
    struct drv_status st;
    memset(&st, 0x5a, sizeof st);   /* overwritten whole */
    oar_normalise(j, NOW, &st);
    check_status(&st);
    const char *state = json_string_value(json_object_get(j, "state"));
    if (!state || !*state) check(st.state == DRV_FINISHED && (st.end == DRV_END_UNKNOWN) == !strcmp(st.raw, "?"));
    else if (st.end == DRV_END_UNKNOWN || st.end == DRV_END_NONE) check(!strncmp(state, st.raw, strlen(st.raw)));
}

/* Bulk status for the ids of the answer, and ids it has not. */
static void details(const json_t *ans)
{
    int64_t ids[8];
    int n = 0;
    size_t k;
    json_t *it;
    json_array_foreach(json_object_get(ans, "items"), k, it) {
        if (n < 6) ids[n++] = (int64_t)json_integer_value(json_object_get(it, "id"));
    }
    ids[n++] = -1;
    ids[n++] = INT64_MAX;
    struct drv_status out[8];
    for (int i = 0; i < n; i++) out[i] = (struct drv_status){.state = DRV_WAITING, .raw = "UNTOUCHED"};
    int found = oar_parse_details(ans, ids, n, NOW, out);
    check(found >= 0 && (size_t)found <= json_array_size(json_object_get(ans, "items")) * (size_t)n);
    int changed = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(out[i].raw, "UNTOUCHED")) continue;
        changed++;
        check_status(&out[i]);
    }
    check(changed <= found);
    check(oar_parse_details(ans, ids, 0, NOW, out) == 0);
}

static void post_and_members(const json_t *ans, int n)
{
    int64_t id = oar_parse_post_id(ans);
    check(id == -1 || (id > 0 && id == (int64_t)json_integer_value(json_object_get(ans, "id"))));
    char ids[16][DRV_ID_MAX];
    int found = oar_parse_members(ans, n, ids);
    check(found >= 0 && found <= n);
    int nonempty = 0;
    for (int i = 0; i < n; i++) {
        if (!ids[i][0]) continue;
        nonempty++;
        char *end;
        long long v = strtoll(ids[i], &end, 10);
        check(v > 0 && !*end);
        for (int j = 0; j < i; j++) check(strcmp(ids[i], ids[j]) != 0);   /* one job, one index */
    }
    check(nonempty == found);
}

static void load(const json_t *doc)
{
    struct drv_resources r;
    memset(&r, 0x5a, sizeof r);
    oar_parse_resources(doc, doc, doc, &r);
    check(r.total_cores >= 0 && r.free_cores >= 0 && r.free_cores <= r.total_cores);
    check(r.waiting_jobs >= 0 && r.running_jobs >= 0);
    check(!isnan(r.stress) && r.stress >= 0 && r.stress <= 1);
    check((size_t)r.total_cores <= json_array_size(json_object_get(doc, "items")));
    check((size_t)(r.waiting_jobs + r.running_jobs) <= json_array_size(json_object_get(doc, "items")));
    oar_parse_resources(NULL, NULL, NULL, &r);
    check(r.total_cores == 0 && r.free_cores == 0 && r.stress == 0 && r.running_jobs == 0);
}

static void search(const json_t *page, time_t after)
{
    struct oar_finding s;
    oar_finding_init(&s, SEARCH_NAME, SEARCH_USER, after);
    long rows = oar_finding_page(&s, page);
    check(rows >= -1 && (rows == -1 || (size_t)rows == json_array_size(json_object_get(page, "items"))));
    int n = s.n;
    check(n >= 0 && n <= OAR_FIND_MAX && (rows < 0 || n <= rows));
    /* the same page again (pages overlap): nothing more */
    check(oar_finding_page(&s, page) == rows && s.n == n);
    for (int i = 0; i < n; i++) check(s.f[i].id > 0 && s.f[i].array > 0 && s.f[i].index >= -1);
    char ids[32][DRV_ID_MAX];
    int got = oar_finding_ids(&s, ids, 32);
    check(got == (n < 32 ? n : 32));
    for (int i = 1; i < n; i++) {
        const struct oar_found *x = &s.f[i - 1], *y = &s.f[i];
        check(x->array < y->array || (x->array == y->array && (x->index < y->index || (x->index == y->index && x->id < y->id))));
    }
    for (int i = 0; i < got; i++) {
        char want[DRV_ID_MAX];
        snprintf(want, sizeof want, "%" PRId64, s.f[i].id);
        check(!strcmp(ids[i], want));
        /* a row of the page with that id, the name and the user asked */
        int seen = 0;
        size_t k;
        json_t *it;
        json_array_foreach(json_object_get(page, "items"), k, it) {
            if (json_integer_value(json_object_get(it, "id")) != s.f[i].id) continue;
            const char *nm = json_string_value(json_object_get(it, "job_name"));
            const char *u = json_string_value(json_object_get(it, "job_user"));
            seen |= nm && u && !strcmp(nm, SEARCH_NAME) && !strcmp(u, SEARCH_USER);
        }
        check(seen);
    }
    check(oar_finding_ids(&s, ids, 0) == 0);
    oar_finding_free(&s);
}

static void indexes(const json_t *doc)
{
    size_t k;
    json_t *it;
    json_array_foreach(json_object_get(doc, "items"), k, it) {
        long idx = oar_member_index(it);
        check(idx >= -1 && idx <= OAR_INDEX_MAX);
        if (idx < 0) continue;
        /* the command's last word, digits only */
        const char *cmd = json_string_value(json_object_get(it, "command"));
        const char *sp = cmd ? strrchr(cmd, ' ') : NULL;
        check(sp && sp[1] && strspn(sp + 1, "0123456789") == strlen(sp + 1) && strtol(sp + 1, NULL, 10) == idx);
    }
    check(oar_member_index(doc) >= -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int mode = data[0] % MODES;
    json_error_t je;
    json_t *doc = json_loadb((const char *)data + 1, size - 1, 0, &je);   /* NULL: every reader takes it too */
    switch (mode) {
    case 0:
        job(doc);
        break;
    case 1:
        details(doc);
        break;
    case 2:
        post_and_members(doc, 1);
        post_and_members(doc, 5);
        post_and_members(doc, 16);
        break;
    case 3:
        load(doc);
        break;
    case 4:
        search(doc, 0);
        search(doc, NOW - 600);
        break;
    case 5:
        indexes(doc);
        break;
    }
    json_decref(doc);
    return 0;
}
