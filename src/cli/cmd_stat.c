/* cmd_stat.c - `locus stat DIR [BATCH] [--json]`: progress of batches,
 * their throughput and the time left, and under a batch with failures,
 * how many and its most frequent error (store/store_job_view.h; `locus
 * batch show` has them all); files whose locality work generator failed,
 * which hold their hosts' work up. Reads the store read-only, so it never
 * blocks the running server. */
#include "cli/cli.h"
#include "store/store_job_view.h"
#include "core/project.h"
#include "store/progress.h"
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One batch's figures: the counts, and its pace and ETA as the REST API
 * computes them (store/progress.h), so both say the same. */
struct stat_row {
    const struct batch *b;
    struct batch_progress p;
    char app[128];
};

/* TO_ASSIM: validated jobs the assimilator has not yet put in results/
 * (DONE counts those it has); ACTIVE: jobs with instances to send or out. */
static void print_header(void)
{
    printf("%-6s %-28s %-12s %-10s %9s %9s %9s %9s %9s %9s %8s %8s %8s %10s %9s\n", "ID", "NAME", "APP", "STATE",
           "JOBS", "DONE", "TO_ASSIM", "ACTIVE", "FAILED", "CANCEL", "INST_RUN", "INST_OK", "INST_ERR", "JOBS/H", "ETA");
}

static void print_row(const struct stat_row *r)
{
    char eta[32];
    cli_format_eta(r->p.eta_s, eta, sizeof eta);
    const struct batch_stats *s = &r->p.st;
    printf("%-6lld %-28s %-12s %-10s %9lld %9lld %9lld %9lld %9lld %9lld %8lld %8lld %8lld %10.1f %9s\n",
           (long long)r->b->id, r->b->name, r->app, batch_state_name(r->b->state), (long long)s->njobs,
           (long long)s->ndone, (long long)s->nvalidated, (long long)s->nactive, (long long)s->nfailed,
           (long long)s->ncancelled, (long long)s->ninstances_in_progress, (long long)s->ninstances_success,
           (long long)s->ninstances_error, r->p.jobs_per_hour, eta);
}

/* The line under a batch with failures: its failed jobs by reason, its
 * errored instances and their most frequent error. */
static void print_failures(const struct stat_row *r, const struct failures_view *f)
{
    const struct batch_stats *st = &r->p.st;
    printf("       failures: %lld job%s failed", (long long)st->nfailed, st->nfailed == 1 ? "" : "s");
    for (int k = 0, first = 1; k < JV_JOB_ERRORS; k++)
        if (f->failed_by[k]) {
            printf("%s%s %lld", first ? " (" : ", ", jv_job_error_name(k), (long long)f->failed_by[k]);
            first = 0;
        }
    printf("%s; %lld errored instance%s", st->nfailed ? ")" : "", (long long)st->ninstances_error,
           st->ninstances_error == 1 ? "" : "s");
    if (f->ngroups) {
        char what[JV_ERROR_LINE_MAX + 64];
        cli_format_error(&f->groups[0], what, sizeof what);
        printf(", most often (%lld) %s", (long long)f->groups[0].instances, what);
    }
    printf("; see locus batch show\n");
}

struct stat_ctx {
    struct store *s;
    json_t *json;          /* the "batches" array with --json, else NULL */
    int64_t last_id, now;
    int rc;
    int all;               /* listing every batch, not one asked for */
};

static int stat_batch(void *ctx, const struct batch *b)
{
    struct stat_ctx *c = ctx;
    if (b->id <= c->last_id) return 0;   /* cancelling batches may come twice */
    c->last_id = b->id;
    if (b->parent_id && c->all) return 0;   /* a chunk: counted in its generated batch */
    struct stat_row r = {.b = b};
    struct app app = {.name = "?"};
    struct batch_stats st;
    if (store_app_get(c->s, b->app_id, &app) < 0 || store_batch_stats(c->s, b->id, &st)) {
        c->rc = -1;
        return 1;
    }
    snprintf(r.app, sizeof r.app, "%s", app.name);
    batch_progress_compute(b, &st, c->now, &r.p);
    struct failures_view f;
    int failing = st.nfailed > 0 || st.ninstances_error > 0;
    if (!failing) memset(&f, 0, sizeof f);
    else if (failures_view_get(c->s, b, c->now, &f)) {
        c->rc = -1;
        return 1;
    }
    if (c->json) {
        json_t *o = batch_figures_json(b, r.app, &r.p);
        json_object_set_new(o, "failed_by", failed_by_json(f.failed_by));
        json_object_set_new(o, "top_error", f.ngroups ? failure_group_json(&f.groups[0]) : json_null());
        json_array_append_new(c->json, o);
    } else {
        print_row(&r);
        if (failing) print_failures(&r, &f);
    }
    return 0;
}

static int show(struct stat_ctx *c, const char *key, char *err, size_t errlen)
{
    if (!key) {
        c->all = 1;
        if (!c->json) print_header();
        if (store_each_batch(c->s, 0, stat_batch, c) || c->rc)
            return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(c->s));
        return 0;
    }
    struct batch b;
    int rc = batch_find(c->s, key, &b);
    if (rc == 1) return cli_errf(err, errlen, CLI_FAIL, "no batch named or numbered '%s' (see locus batch list)", key);
    if (rc == 0) {
        if (!c->json) print_header();
        stat_batch(c, &b);
    }
    if (rc || c->rc) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(c->s));
    return 0;
}

/* A file whose work generator's last run failed, from what locusd wrote
 * in locality_scheduling/generator_failed/FILE ("STATUS TIME"). */
struct gen_failure {
    char file[256];
    int status;           /* the exit status; -1: it could not run, was killed or ran out of time */
    long long time;
};

/* At most this many failed files are read: a line names the latest. */
#define GEN_FAILURES_MAX 1000

/* The failures under dir/locality_scheduling/generator_failed/ into
 * out[0..max), the latest first; their count (also those not kept). */
static int gen_failures(const char *dir, struct gen_failure *out, int max)
{
    char path[PROJECT_PATH_MAX + 320];
    snprintf(path, sizeof path, "%s/locality_scheduling/generator_failed", dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n++ >= max) continue;
        struct gen_failure *g = &out[n - 1];
        *g = (struct gen_failure){.status = -1};
        snprintf(g->file, sizeof g->file, "%s", e->d_name);
        snprintf(path, sizeof path, "%s/locality_scheduling/generator_failed/%s", dir, e->d_name);
        FILE *fp = fopen(path, "r");
        if (fp) {
            if (fscanf(fp, "%d %lld", &g->status, &g->time) != 2) g->time = 0;
            fclose(fp);
        }
    }
    closedir(d);
    int kept = n < max ? n : max;
    for (int i = 1; i < kept; i++)   /* the latest first: few, and read by people */
        for (int k = i; k > 0 && out[k].time > out[k - 1].time; k--) {
            struct gen_failure t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    return n;
}

/* The "locality" line, or the JSON array, of failed generators. */
static void show_gen_failures(const char *dir, json_t *root)
{
    struct gen_failure *g = calloc(GEN_FAILURES_MAX, sizeof *g);
    if (!g) return;
    int n = gen_failures(dir, g, GEN_FAILURES_MAX);
    if (root) {
        json_t *a = json_array();
        for (int i = 0; i < n && i < GEN_FAILURES_MAX; i++)
            json_array_append_new(a, json_pack("{s:s, s:i, s:I}", "file", g[i].file, "status", g[i].status, "time",
                                               (json_int_t)g[i].time));
        json_object_set_new(root, "generator_failed", a);
    } else if (n) {
        char when[32], how[32] = "did not run to its end";
        cli_format_time(g[0].time, when, sizeof when);
        if (g[0].status >= 0) snprintf(how, sizeof how, "exit %d", g[0].status);
        printf("locality: the work generator failed for %d file%s, latest %s (%s, %s); their hosts keep them and "
               "ask again: see locusd's log and locality_scheduling/generator_failed/\n",
               n, n == 1 ? "" : "s", g[0].file, how, when);
    }
    free(g);
}

/* stat on a server: the API's view of the batches, or of one, which is
 * what --json prints locally. */
static int remote_stat(const char *key, char *err, size_t errlen)
{
    char path[1024] = "batches";
    if (key) {
        char *k = remote_escape(key);
        snprintf(path, sizeof path, "batches/%s", k);
        free(k);
    }
    json_t *answer = NULL;
    int rc = remote_json("GET", path, NULL, &answer, err, errlen);
    if (rc) return rc;
    if (key) answer = json_pack("{s:[o]}", "batches", answer);
    cli_print_json(answer);
    return 0;
}

int cmd_stat(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2];
    int as_json = 0;
    struct cli_opt opts[] = {
        {"json", OPT_FLAG, &as_json, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int r = cli_remote();   /* remotely, no project folder */
    pos[0] = pos[1] = NULL;
    int rc = cli_parse(argc, argv, opts, pos + r, 1 - r, 2 - r, err, errlen);
    if (rc) return rc;
    if (r) return remote_stat(pos[1], err, errlen);
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (!rc) {
        struct stat_ctx c = {cp.s, as_json ? json_array() : NULL, 0, (int64_t)time(NULL), 0, 0};
        rc = show(&c, pos[1], err, errlen);
        if (!rc && c.json) {
            json_t *root = json_pack("{s:o}", "batches", c.json);
            show_gen_failures(pos[0], root);
            json_dumpf(root, stdout, JSON_COMPACT);
            putchar('\n');
            json_decref(root);
        } else {
            json_decref(c.json);
            if (!rc) show_gen_failures(pos[0], NULL);
        }
    }
    cli_close(&cp);
    return rc;
}
