/* campaign_order.c - the checks of campaign_order.h and the orders they
 * write for locusd's grid daemon: `locus` and the REST API both come here,
 * so they accept and refuse the same campaigns. */
#include "orders/campaign_order.h"
#include "core/fsutil.h"
#include "core/project.h"
#include "core/strbuf.h"
#include "grid/admission.h"
#include "grid/deps.h"
#include "grid/jobscript.h"
#include "orders/campaign_record.h"
#include "store/store_campaign_view.h"
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RULE_MAX_BYTES (1UL << 20)   /* an admission rule's source */
#define RULES_MAX 256                /* rules in PROJECT/admission */

static enum camp_order_rc fail(enum camp_order_rc rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum camp_order_rc fail(enum camp_order_rc rc, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return rc;
}

static enum camp_order_rc store_failed(struct store *st, char *err, size_t errlen)
{
    return fail(CAMP_ORDER_STORE, err, errlen, "%s", store_error(st));
}

/* Writes o as a pending order in its own transaction. */
static enum camp_order_rc insert_order(struct store *st, struct grid_order *o, char *err, size_t errlen)
{
    if (store_begin(st)) return store_failed(st, err, errlen);
    if (store_grid_order_insert(st, o) || store_commit(st)) {
        enum camp_order_rc rc = store_failed(st, err, errlen);
        store_rollback(st);
        return rc;
    }
    return CAMP_ORDER_OK;
}

/* ---- submit ---- */

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names of PROJECT/admission/ *.lua in name order (owned; none when
 * the folder does not exist). -1 with err when it cannot be read. */
static int rule_names(const char *dir, char ***names, int *n, char *err, size_t errlen)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return 0;
        errf(err, errlen, "admission: cannot read %s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l < 5 || strcmp(e->d_name + l - 4, ".lua")) continue;
        if (*n == RULES_MAX) {
            closedir(d);
            strlist_free(*names, *n);
            errf(err, errlen, "admission: more than %d rules in %s", RULES_MAX, dir);
            return -1;
        }
        strlist_add(names, n, e->d_name);
    }
    closedir(d);
    if (*n) qsort(*names, (size_t)*n, sizeof **names, by_name);
    return 0;
}

/* Runs every rule of PROJECT/admission in name order on spec. */
static enum camp_order_rc run_rules(const char *project_dir, const char *user, struct campaign_spec *spec,
                                    char *err, size_t errlen)
{
    char dir[PROJECT_PATH_MAX + 16];
    if (path_printf(dir, sizeof dir, "%s/admission", project_dir))
        return fail(CAMP_ORDER_STORE, err, errlen, "admission: the project's path is too long");
    char **names;
    int n;
    if (rule_names(dir, &names, &n, err, errlen)) return CAMP_ORDER_STORE;
    enum camp_order_rc rc = CAMP_ORDER_OK;
    for (int i = 0; i < n && !rc; i++) {
        char path[PROJECT_PATH_MAX + 300];
        size_t len;
        char *text = NULL;
        if (path_printf(path, sizeof path, "%s/%s", dir, names[i]))
            errno = ENAMETOOLONG;
        else
            text = read_file(path, RULE_MAX_BYTES, &len);
        if (!text) {
            rc = fail(CAMP_ORDER_STORE, err, errlen, "admission: cannot read rule %s/%s: %s", dir, names[i],
                      strerror(errno));
            break;
        }
        int r = admission_run(text, names[i], user, spec, err, errlen);
        free(text);
        if (r == ADMISSION_REJECTED) rc = CAMP_ORDER_FORBIDDEN;
        else if (r) rc = CAMP_ORDER_INVALID;
    }
    strlist_free(names, n);
    return rc;
}

/* Every cluster of spec must be declared; a disabled one is fine (it
 * just gets no jobs). With unknown, an undeclared one is passed to it
 * instead of refused. */
static enum camp_order_rc check_clusters(struct store *st, const struct campaign_spec *spec,
                                         campaign_unknown_cluster_fn *unknown, void *ctx, char *err, size_t errlen)
{
    for (int i = 0; i < spec->nclusters; i++) {
        struct cluster_row c;
        int rc = store_cluster_by_name(st, spec->clusters[i].name, &c);
        if (rc == 1 && unknown) unknown(ctx, spec->clusters[i].name);
        else if (rc == 1)
            return fail(CAMP_ORDER_UNKNOWN, err, errlen, "clusters.%s: unknown cluster (see locus cluster list)",
                        spec->clusters[i].name);
        else if (rc) return store_failed(st, err, errlen);
    }
    return CAMP_ORDER_OK;
}

/* The params' dependencies from pair first_pair on name params (those
 * from first_param on depending) and make no cycle. */
static enum camp_order_rc check_deps(const struct campaign_spec *spec, size_t first_param, size_t first_pair,
                                     char *err, size_t errlen)
{
    struct dep_edge *e;
    size_t n;
    if (deps_resolve(spec, first_param, first_pair, &e, &n, err, errlen)) return CAMP_ORDER_INVALID;
    free(e);
    return CAMP_ORDER_OK;
}

/* Parses the JDL and its params, and runs the rules as user (NULL: no
 * rule runs), into spec. */
static enum camp_order_rc build_spec(const char *project_dir, const char *user, const char *jdl_text, size_t len,
                                     const char *params_text, size_t params_len, struct campaign_spec *spec,
                                     char *err, size_t errlen)
{
    if (len > CAMP_JDL_MAX_BYTES)
        return fail(CAMP_ORDER_INVALID, err, errlen, "the JDL is %zu bytes: at most %lu MiB", len,
                    CAMP_JDL_MAX_BYTES >> 20);
    if (params_text && params_len > CAMP_PARAMS_MAX_BYTES)
        return fail(CAMP_ORDER_INVALID, err, errlen, "the param file is %zu bytes: at most %lu MiB", params_len,
                    CAMP_PARAMS_MAX_BYTES >> 20);
    if (jdl_parse(jdl_text, len, spec, err, errlen)) return CAMP_ORDER_INVALID;
    const char *file = spec->params.param_file;
    if (file && !params_text)
        return fail(CAMP_ORDER_INVALID, err, errlen, "param_file %s: give the file's contents", file);
    if (!file && params_text)
        return fail(CAMP_ORDER_INVALID, err, errlen,
                    "params were given beside the JDL, but it has no param_file: give one or the other");
    if (file) {
        char why[512];
        if (jdl_add_params_text(spec, params_text, params_len, why, sizeof why))
            return fail(CAMP_ORDER_INVALID, err, errlen, "param_file %.512s: %s", file, why);
    }
    enum camp_order_rc rc = user ? run_rules(project_dir, user, spec, err, errlen) : CAMP_ORDER_OK;
    return rc ? rc : check_deps(spec, 0, 0, err, errlen);
}

/* The campaigns spec runs after, ids or names, made ids of user_id's
 * campaigns; another user's is refused as one that does not exist. */
static enum camp_order_rc resolve_after(struct store *st, int64_t user_id, struct campaign_spec *spec, char *err,
                                        size_t errlen)
{
    for (int k = 0; k < spec->nafter; k++) {
        const char *a = spec->after[k];
        int64_t id = 0, owner;
        int count = 1;
        size_t digits = strspn(a, "0123456789");
        if (digits && !a[digits] && digits < 19) {
            id = strtoll(a, NULL, 10);
            int r = campaign_owner(st, id, &owner);
            if (r < 0) return store_failed(st, err, errlen);
            if (r == 1 || owner != user_id)
                return fail(CAMP_ORDER_INVALID, err, errlen, "after[%d]: no campaign %lld of yours", k, (long long)id);
        } else {
            if (store_campaign_by_name(st, user_id, a, &id, &count)) return store_failed(st, err, errlen);
            if (count > 1)
                return fail(CAMP_ORDER_INVALID, err, errlen,
                            "after[%d]: %d campaigns of yours are named \"%.64s\": give the id", k, count, a);
            if (!count)
                return fail(CAMP_ORDER_INVALID, err, errlen, "after[%d]: no campaign of yours is named \"%.64s\"", k,
                            a);
        }
        char num[24];
        snprintf(num, sizeof num, "%lld", (long long)id);
        free(spec->after[k]);
        spec->after[k] = xstrdup(num);
    }
    return CAMP_ORDER_OK;
}

enum camp_order_rc campaign_order_check(struct store *st, const char *project_dir, const char *user,
                                        const char *jdl_text, size_t len, const char *params_text,
                                        size_t params_len, campaign_unknown_cluster_fn *unknown, void *ctx,
                                        char *err, size_t errlen)
{
    struct campaign_spec spec = {0};
    enum camp_order_rc rc = build_spec(project_dir, user, jdl_text, len, params_text, params_len, &spec, err, errlen);
    if (!rc) rc = check_clusters(st, &spec, unknown, ctx, err, errlen);
    campaign_spec_free(&spec);
    return rc;
}

enum camp_order_rc campaign_order_submit(struct store *st, const char *project_dir, int64_t user_id,
                                         const char *jdl_text, size_t len, const char *params_text,
                                         size_t params_len, int64_t now, int64_t *order_id, char *err,
                                         size_t errlen)
{
    struct user u;
    int r = store_user_get(st, user_id, &u);
    if (r == 1) return fail(CAMP_ORDER_UNKNOWN, err, errlen, "unknown user id %lld", (long long)user_id);
    if (r) return store_failed(st, err, errlen);
    struct campaign_spec spec = {0};
    enum camp_order_rc rc =
        build_spec(project_dir, u.name, jdl_text, len, params_text, params_len, &spec, err, errlen);
    if (!rc) rc = check_clusters(st, &spec, NULL, NULL, err, errlen);
    if (!rc) rc = resolve_after(st, user_id, &spec, err, errlen);
    if (!rc) {
        json_t *j = jdl_to_json(&spec);
        struct grid_order o = {.kind = GO_SUBMIT, .user_id = user_id, .body = json_dumps(j, JSON_COMPACT),
                               .create_time = now};
        json_decref(j);
        rc = insert_order(st, &o, err, errlen);
        *order_id = o.id;
        grid_order_clear(&o);
    }
    campaign_spec_free(&spec);
    return rc;
}

/* ---- changes ---- */

/* The owner check shared by every change of a campaign. */
static enum camp_order_rc check_campaign(struct store *st, int64_t user_id, int64_t campaign_id, char *err,
                                         size_t errlen)
{
    int64_t owner;
    int r = campaign_owner(st, campaign_id, &owner);
    if (r == 1) return fail(CAMP_ORDER_UNKNOWN, err, errlen, "no campaign %lld", (long long)campaign_id);
    if (r) return store_failed(st, err, errlen);
    if (user_id > 0 && owner != user_id)
        return fail(CAMP_ORDER_NOT_OWNER, err, errlen, "campaign %lld belongs to another user",
                    (long long)campaign_id);
    return CAMP_ORDER_OK;
}

enum camp_order_rc campaign_order_change(struct store *st, enum grid_order_kind kind, int64_t user_id,
                                         int64_t campaign_id, int64_t event_id, int resubmit, int64_t now,
                                         int64_t *order_id, char *err, size_t errlen)
{
    struct grid_order o = {.kind = kind, .user_id = user_id, .create_time = now};
    if (kind == GO_FIX) {
        int r = event_campaign(st, event_id, &campaign_id);
        if (r == 1) return fail(CAMP_ORDER_UNKNOWN, err, errlen, "no event %lld", (long long)event_id);
        if (r) return store_failed(st, err, errlen);
        o.event_id = event_id;
        o.value = resubmit != 0;
    } else if (kind != GO_PAUSE && kind != GO_RESUME && kind != GO_CANCEL) {
        return fail(CAMP_ORDER_INVALID, err, errlen, "order kind %d is not a change of a campaign", (int)kind);
    }
    o.campaign_id = campaign_id;
    enum camp_order_rc rc = check_campaign(st, user_id, campaign_id, err, errlen);
    if (!rc) rc = insert_order(st, &o, err, errlen);
    *order_id = o.id;
    return rc;
}

enum camp_order_rc campaign_order_add_params(struct store *st, const char *project_dir, int64_t user_id,
                                             int64_t campaign_id, const char *text, size_t len, int64_t now,
                                             int64_t *order_id, char *err, size_t errlen)
{
    if (len > CAMP_PARAMS_MAX_BYTES)
        return fail(CAMP_ORDER_INVALID, err, errlen, "the params are %zu bytes: at most %lu MiB", len,
                    CAMP_PARAMS_MAX_BYTES >> 20);
    enum camp_order_rc rc = check_campaign(st, user_id, campaign_id, err, errlen);
    if (rc) return rc;
    struct campaign_spec spec = {0};
    int64_t owner;
    struct user u;
    int r = campaign_record_read(st, campaign_id, &spec, &owner);
    if (!r) r = store_user_get(st, owner, &u);
    size_t before = campaign_nparams(&spec), deps_before = spec.deps.n;
    if (r) {
        rc = r == 1 ? fail(CAMP_ORDER_UNKNOWN, err, errlen, "campaign %lld or its owner vanished",
                           (long long)campaign_id)
                    : store_failed(st, err, errlen);
    } else if (jdl_add_params_text(&spec, text, len, err, errlen)) {
        rc = CAMP_ORDER_INVALID;
    } else if (campaign_nparams(&spec) == before) {
        rc = fail(CAMP_ORDER_INVALID, err, errlen, "no param to add: every line is empty or a comment");
    }
    if (!rc) rc = check_deps(&spec, before, deps_before, err, errlen);
    if (!rc) rc = run_rules(project_dir, u.name, &spec, err, errlen);
    if (!rc) {
        struct strbuf body;
        sb_init(&body);
        for (size_t i = before; i < campaign_nparams(&spec); i++) sb_printf(&body, "%s\n", campaign_param(&spec, i));
        for (size_t i = deps_before; i < spec.deps.n; i++)
            sb_printf(&body, "@depends %s %s\n", spec.deps.names[2 * i], spec.deps.names[2 * i + 1]);
        struct grid_order o = {.kind = GO_ADD_PARAMS, .user_id = user_id, .campaign_id = campaign_id,
                               .body = body.s, .create_time = now};
        rc = insert_order(st, &o, err, errlen);
        *order_id = o.id;
        sb_free(&body);
    }
    campaign_spec_free(&spec);
    return rc;
}

enum camp_order_rc campaign_order_share(struct store *st, int64_t user_id, double weight, int64_t now,
                                        int64_t *order_id, char *err, size_t errlen)
{
    if (!(weight > 0 && weight <= FAIRSHARE_WEIGHT_MAX))
        return fail(CAMP_ORDER_INVALID, err, errlen, "weight: expected a number above 0 and at most %g, got %g",
                    FAIRSHARE_WEIGHT_MAX, weight);
    struct user u;
    int r = store_user_get(st, user_id, &u);
    if (r == 1) return fail(CAMP_ORDER_UNKNOWN, err, errlen, "unknown user id %lld", (long long)user_id);
    if (r) return store_failed(st, err, errlen);
    struct grid_order o = {.kind = GO_SHARE, .user_id = user_id, .value = weight, .create_time = now};
    enum camp_order_rc rc = insert_order(st, &o, err, errlen);
    *order_id = o.id;
    return rc;
}

enum camp_order_rc campaign_order_project_share(struct store *st, const char *name, double weight, int64_t now,
                                                int64_t *order_id, char *err, size_t errlen)
{
    if (!jdl_project_name_ok(name))
        return fail(CAMP_ORDER_INVALID, err, errlen, "project: expected 1 to %d of A-Z a-z 0-9 _ -",
                    JDL_PROJECT_NAME_MAX);
    if (!(weight > 0 && weight <= FAIRSHARE_WEIGHT_MAX))
        return fail(CAMP_ORDER_INVALID, err, errlen, "weight: expected a number above 0 and at most %g, got %g",
                    FAIRSHARE_WEIGHT_MAX, weight);
    struct grid_order o = {.kind = GO_PROJECT_SHARE, .body = (char *)name, .value = weight, .create_time = now};
    enum camp_order_rc rc = insert_order(st, &o, err, errlen);
    *order_id = o.id;
    return rc;
}

enum camp_order_rc campaign_order_wait(struct store *st, int64_t order_id, int timeout_ms, int64_t *result,
                                       char *err, size_t errlen)
{
    const struct timespec tick = {0, 100 * 1000000L};
    for (int waited = 0;; waited += 100) {
        struct grid_order o;
        int r = store_grid_order_get(st, order_id, &o);
        if (r == 1) return fail(CAMP_ORDER_UNKNOWN, err, errlen, "no order %lld", (long long)order_id);
        if (r) return store_failed(st, err, errlen);
        grid_order_clear(&o);
        if (o.state == GOS_DONE) {
            *result = o.result;
            return CAMP_ORDER_OK;
        }
        if (o.state == GOS_REFUSED) return fail(CAMP_ORDER_CONFLICT, err, errlen, "%s", o.error);
        if (waited >= timeout_ms)
            return fail(CAMP_ORDER_TIMEOUT, err, errlen,
                        "order %lld is queued, but the grid daemon has not carried it out after %d s: "
                        "locusd must be running (the order stays queued)",
                        (long long)order_id, timeout_ms / 1000);
        nanosleep(&tick, NULL);
    }
}

/* ---- clusters ---- */

static enum camp_order_rc check_waiting(int waiting_allowed, char *err, size_t errlen)
{
    if (waiting_allowed > CLUSTER_WAITING_ALLOWED_MAX)
        return fail(CAMP_ORDER_INVALID, err, errlen, "waiting_allowed: at most %d (below 0: the project's)",
                    CLUSTER_WAITING_ALLOWED_MAX);
    return CAMP_ORDER_OK;
}

enum camp_order_rc cluster_order_add(struct store *st, struct cluster_row *c, cluster_check_fn *check, int64_t now,
                                     char *err, size_t errlen)
{
    if (!memchr(c->cfg.name, 0, sizeof c->cfg.name) || !jdl_cluster_name_ok(c->cfg.name))
        return fail(CAMP_ORDER_INVALID, err, errlen, "name: 1 to %d characters of A-Z a-z 0-9 _ -",
                    JDL_CLUSTER_NAME_MAX);
    if (c->cfg.timeout_ms < 0 || c->cfg.timeout_ms > CLUSTER_TIMEOUT_MS_MAX)
        return fail(CAMP_ORDER_INVALID, err, errlen, "timeout_ms: from 0 (the default, %d) to %d",
                    CLUSTER_DEFAULT_TIMEOUT_MS, CLUSTER_TIMEOUT_MS_MAX);
    enum camp_order_rc rc = check_waiting(c->waiting_allowed, err, errlen);
    if (rc) return rc;
    c->disabled = c->disabled != 0;
    if (check(&c->cfg, err, errlen)) return CAMP_ORDER_INVALID;
    c->create_time = now;
    if (store_begin(st)) return store_failed(st, err, errlen);
    struct cluster_row old;
    int r = store_cluster_by_name(st, c->cfg.name, &old);
    if (r == 0) rc = fail(CAMP_ORDER_CONFLICT, err, errlen, "cluster %s exists: choose another name", c->cfg.name);
    else if (r < 0 || store_cluster_insert(st, c) || store_commit(st)) rc = store_failed(st, err, errlen);
    if (rc) store_rollback(st);
    return rc;
}

enum camp_order_rc cluster_order_affinity(struct store *st, const char *name, int64_t user_id, int affinity,
                                          int shared, char *err, size_t errlen)
{
    if (affinity < -AFFINITY_MAX || affinity > AFFINITY_MAX)
        return fail(CAMP_ORDER_INVALID, err, errlen, "affinity: from %d to %d, got %d", -AFFINITY_MAX, AFFINITY_MAX,
                    affinity);
    if (shared != 0 && shared != 1) return fail(CAMP_ORDER_INVALID, err, errlen, "shared: 0 or 1, got %d", shared);
    if (store_begin(st)) return store_failed(st, err, errlen);
    struct cluster_row c;
    enum camp_order_rc rc = CAMP_ORDER_OK;
    int r = store_cluster_by_name(st, name, &c);
    if (r == 1) {
        rc = fail(CAMP_ORDER_UNKNOWN, err, errlen, "no cluster named '%s' (see locus cluster list)", name);
    } else {
        struct grid_affinity a = {user_id, r ? 0 : c.id, affinity, shared};
        if (r || store_affinity_set(st, &a) || store_commit(st)) rc = store_failed(st, err, errlen);
    }
    if (rc) store_rollback(st);
    return rc;
}

/* A cache folder a job wrapper takes as one shell word (jobscript.c's
 * sh_word quotes it; what is refused here is what would surprise there). */
static int cache_dir_ok(const char *d)
{
    if (!*d) return 1;
    if (d[0] != '/' && strncmp(d, "~/", 2) && strncmp(d, "{HOME}", 6)) return 0;
    if (strstr(d, "..")) return 0;
    for (const char *p = d; *p; p++)
        if (*p < 0x20 || *p > 0x7e || strchr("'\"\\$`", *p)) return 0;
    return 1;
}

static enum camp_order_rc check_settings(const struct cluster_settings *set, char *err, size_t errlen)
{
    if (set->disabled && *set->disabled != 0 && *set->disabled != 1)
        return fail(CAMP_ORDER_INVALID, err, errlen, "disabled: 0 or 1, got %d", *set->disabled);
    enum camp_order_rc rc = set->waiting_allowed ? check_waiting(*set->waiting_allowed, err, errlen) : CAMP_ORDER_OK;
    if (rc) return rc;
    if (set->cache_dir && (strlen(set->cache_dir) >= CLUSTER_FIELD_MAX || !cache_dir_ok(set->cache_dir)))
        return fail(CAMP_ORDER_INVALID, err, errlen,
                    "cache_dir: \"\" (the default, %s) or a path from / or ~/ of at most %d printable characters, "
                    "without quotes, backslashes, $ or ..", JOBSCRIPT_CACHE_DEFAULT, CLUSTER_FIELD_MAX - 1);
    if (set->cache_bytes && *set->cache_bytes < 0)
        return fail(CAMP_ORDER_INVALID, err, errlen, "cache_bytes: 0 (unbounded) or more, got %lld",
                    (long long)*set->cache_bytes);
    if (set->bandwidth && !(*set->bandwidth >= 0 && *set->bandwidth <= CLUSTER_BANDWIDTH_MAX))
        return fail(CAMP_ORDER_INVALID, err, errlen, "bandwidth: bytes/s from 0 (the default prior) to %g",
                    CLUSTER_BANDWIDTH_MAX);
    return CAMP_ORDER_OK;
}

enum camp_order_rc cluster_order_set(struct store *st, const char *name, const struct cluster_settings *set,
                                     struct cluster_row *out, char *err, size_t errlen)
{
    enum camp_order_rc rc = check_settings(set, err, errlen);
    if (rc) return rc;
    if (store_begin(st)) return store_failed(st, err, errlen);
    struct cluster_row c;
    int r = store_cluster_by_name(st, name, &c);
    if (r == 1) {
        rc = fail(CAMP_ORDER_UNKNOWN, err, errlen, "no cluster named '%s' (see locus cluster list)", name);
    } else {
        if (!r && set->disabled) c.disabled = *set->disabled;
        if (!r && set->waiting_allowed) c.waiting_allowed = *set->waiting_allowed;
        if (!r && set->cache_dir) snprintf(c.cache_dir, sizeof c.cache_dir, "%s", set->cache_dir);
        if (!r && set->cache_bytes) c.cache_bytes = *set->cache_bytes;
        if (!r && set->bandwidth) c.bandwidth = *set->bandwidth;
        if (r || store_cluster_update(st, &c) || store_commit(st)) rc = store_failed(st, err, errlen);
    }
    if (rc) {
        store_rollback(st);
        return rc;
    }
    if (out) *out = c;
    return CAMP_ORDER_OK;
}
