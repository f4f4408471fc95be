/* cmd_batch.c - `locus batch create | add-jobs | cancel | list | show`.
 * Creating and cancelling are orders (orders/batch_order.c, shared with
 * the REST API); here jobs come from a JSONL file read line by line, or
 * from a template expanded N times, both fed to the order's one insertion
 * loop. A cursor batch may instead be planned with no jobs, which
 * the project's generator makes on demand with add-jobs, a chunk (a child
 * batch) at a time. show says what went wrong: a batch's figures and its
 * errors grouped (store/store_job_view.h, which the REST API answers
 * with too). */
#include "cli/cli.h"
#include "orders/batch_order.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "model/credit.h"
#include "store/store_job_view.h"
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEMPLATE_MAX_BYTES (1 << 20)

/* Where jobs come from: a JSONL file, or a template expanded count times
 * (the order's struct batch_jobs). */
struct job_source {
    const char *path;
    FILE *jsonl;             /* JSONL mode */
    char *line;              /* getline buffer, reused */
    size_t cap;
    long line_no;            /* line of the current job (JSONL mode), else 0 */
    json_t *tmpl;            /* template mode: the parsed template, owner of desc's strings */
    struct job_desc desc;
    long count;              /* template mode: jobs to make */
    long n;                  /* jobs made so far */
};

static void source_where(void *ctx, long n, char *out, size_t len)
{
    const struct job_source *src = ctx;
    if (src->line_no) snprintf(out, len, "%s line %ld", src->path, src->line_no);
    else snprintf(out, len, "%s (job %ld)", src->path, n);
}

static int blank(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    return !*s;
}

/* The next JSONL job into j: 1 made, 0 end of file, -1 error. */
static int jsonl_next(struct job_source *src, const struct job_env *env, long n, struct job_spec *j, char *msg,
                      size_t msglen)
{
    ssize_t len;
    do {
        errno = 0;
        len = getline(&src->line, &src->cap, src->jsonl);
        src->line_no++;
    } while (len > 0 && blank(src->line));
    if (len < 0) {
        if (!errno) return 0;
        snprintf(msg, msglen, "cannot read: %s", strerror(errno));
        return -1;
    }
    json_error_t jerr;
    json_t *obj = json_loadb(src->line, (size_t)len, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj) {
        snprintf(msg, msglen, "malformed JSON: %s (column %d)", jerr.text, jerr.column);
        return -1;
    }
    int rc = job_desc_read(obj, &src->desc, msg, msglen) || job_desc_resolve(&src->desc, env, n, j, msg, msglen);
    json_decref(obj);
    return rc ? -1 : 1;
}

static int source_next(void *ctx, const struct job_env *env, long n, struct job_spec *j, char *msg, size_t msglen)
{
    struct job_source *src = ctx;
    int rc;
    if (src->jsonl) {
        rc = jsonl_next(src, env, n, j, msg, msglen);
    } else if (src->n == src->count) {
        return 0;
    } else {
        struct job_env expanded = *env;
        expanded.expand = 1;
        rc = job_desc_resolve(&src->desc, &expanded, n, j, msg, msglen) ? -1 : 1;
    }
    if (rc == 1) src->n++;
    return rc;
}

/* Opens the job source before the store, so a missing file fails early;
 * a template is parsed and checked once here. */
static int source_open(struct job_source *src, const char *jobs, const char *tmpl, long count,
                       char *err, size_t errlen)
{
    src->path = jobs ? jobs : tmpl;
    if (jobs) {
        src->jsonl = fopen(jobs, "r");
        if (!src->jsonl) return cli_errf(err, errlen, CLI_FAIL, "cannot open %s: %s", jobs, strerror(errno));
        return 0;
    }
    if (count < 1 || count > BATCH_JOB_COUNT_MAX)
        return cli_errf(err, errlen, CLI_FAIL, "--count must be from 1 to %d", BATCH_JOB_COUNT_MAX);
    src->count = count;
    size_t len;
    char *text = read_file(tmpl, TEMPLATE_MAX_BYTES, &len);
    if (!text) return cli_errf(err, errlen, CLI_FAIL, "cannot read %s: %s", tmpl, strerror(errno));
    json_error_t jerr;
    src->tmpl = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!src->tmpl)
        return cli_errf(err, errlen, CLI_FAIL, "%s line %d: malformed JSON: %s", tmpl, jerr.line, jerr.text);
    char msg[CLI_ERR_MAX];
    if (job_desc_read(src->tmpl, &src->desc, msg, sizeof msg))
        return cli_errf(err, errlen, CLI_FAIL, "%s: %s", tmpl, msg);
    return 0;
}

static void source_close(struct job_source *src)
{
    if (src->jsonl) fclose(src->jsonl);
    free(src->line);
    json_decref(src->tmpl);
}

/* The order's jobs from src. */
static void source_attach(struct batch_order *o, struct job_source *src)
{
    o->jobs = (struct batch_jobs){.next = source_next, .where = source_where, .what = src->path, .ctx = src};
}

/* ---- batch create ---- */

static int order_tx(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    (void)copies;
    return batch_order_create(cp->s, ctx, err, errlen) ? CLI_FAIL : 0;
}

/* Which of --jobs, --count/--input-template and --generate, exactly. */
static int check_mode(const struct cli_opt *opts, char *err, size_t errlen)
{
    int jobs = cli_seen(opts, "jobs"), count = cli_seen(opts, "count"), tmpl = cli_seen(opts, "input-template");
    int gen = cli_seen(opts, "generate");
    if (jobs + (count || tmpl) + gen > 1)
        return cli_errf(err, errlen, CLI_USAGE, "give one of --jobs, --count with --input-template, or --generate");
    if (!jobs && !gen && !(count && tmpl))
        return cli_errf(err, errlen, CLI_USAGE, "give --jobs FILE.jsonl, --count N with --input-template FILE.json, "
                        "or --generate N with --cursors");
    return 0;
}

/* --cursors N (1 to BATCH_CURSORS_MAX) or auto; absent: -1, a batch without cursors. */
static int check_cursors(const char *arg, int *out, char *err, size_t errlen)
{
    *out = -1;
    if (!arg) return 0;
    if (!strcmp(arg, "auto")) {
        *out = 0;
        return 0;
    }
    char *end;
    errno = 0;
    long n = strtol(arg, &end, 10);
    if (errno || *end || end == arg || n < 1 || n > BATCH_CURSORS_MAX)
        return cli_errf(err, errlen, CLI_USAGE, "--cursors takes a number from 1 to %d, or auto", BATCH_CURSORS_MAX);
    *out = (int)n;
    return 0;
}

/* The jobs of a JSONL file as a JSON list, for a remote order (whose
 * body the API bounds: API_MAX_BODY); the same messages as locally for a
 * line that is not JSON. */
static int jsonl_array(const char *path, json_t **out, char *err, size_t errlen)
{
    struct job_source src = {.path = path};
    int rc = source_open(&src, path, NULL, 0, err, errlen);
    json_t *arr = json_array();
    ssize_t len;
    while (!rc && (len = getline(&src.line, &src.cap, src.jsonl)) > 0) {
        src.line_no++;
        if (blank(src.line)) continue;
        json_error_t jerr;
        json_t *obj = json_loadb(src.line, (size_t)len, JSON_REJECT_DUPLICATES, &jerr);
        if (!obj) rc = cli_errf(err, errlen, CLI_FAIL, "%s line %ld: malformed JSON: %s (column %d)", path,
                                src.line_no, jerr.text, jerr.column);
        else json_array_append_new(arr, obj);
    }
    source_close(&src);
    if (rc) json_decref(arr);
    else *out = arr;
    return rc;
}

/* batch create on a server: the options as the API's JSON order. */
static int remote_create(const struct cli_opt *opts, const char *jobs, const char *tmpl, const char *cursors,
                         char *err, size_t errlen)
{
    if (cli_seen(opts, "user") || cli_seen(opts, "generate"))
        return cli_errf(err, errlen, CLI_USAGE, "--user and --generate are for the server's own command line: a "
                        "remote batch is the key's user's");
    static const char *const skip[] = {"jobs", "input-template", "cursors", "user", "generate", NULL};
    json_t *body = remote_opts_json(opts, skip), *list = NULL, *answer = NULL;
    int rc = 0;
    if (jobs) {
        if (!(rc = jsonl_array(jobs, &list, err, errlen))) json_object_set_new(body, "jobs", list);
    } else {
        json_error_t jerr;
        json_t *t = json_load_file(tmpl, JSON_REJECT_DUPLICATES, &jerr);
        if (!t) rc = cli_errf(err, errlen, CLI_FAIL, "%s line %d: malformed JSON: %s", tmpl, jerr.line, jerr.text);
        else json_object_set_new(body, "template", t);
    }
    if (cursors) {
        char *end;
        long n = strtol(cursors, &end, 10);
        json_object_set_new(body, "cursors", *end || end == cursors ? json_string(cursors) : json_integer(n));
    }
    if (rc) {
        json_decref(body);
        return rc;
    }
    if ((rc = remote_json("POST", "batches", body, &answer, err, errlen))) return rc;
    int ncursors = (int)json_integer_value(json_object_get(answer, "cursors"));
    printf("created batch %s (id %lld): %lld jobs", json_string_value(json_object_get(answer, "batch")),
           (long long)json_integer_value(json_object_get(answer, "batch_id")),
           (long long)json_integer_value(json_object_get(answer, "jobs")));
    if (ncursors) printf(" in %d cursors", ncursors);
    printf("\n");
    json_decref(answer);
    return 0;
}

int cmd_batch_create(int argc, char **argv, char *err, size_t errlen)
{
    struct batch_order *o = xcalloc(1, sizeof *o);
    struct job_source src = {.path = NULL};
    batch_order_init(o);
    struct batch *b = &o->b;
    const char *jobs = NULL, *tmpl = NULL, *cursors = NULL, *pos[1];
    int count = 0, no_output = 0;
    struct cli_list outs = {.n = 0};
    struct cli_opt opts[] = {
        {"app", OPT_STR, &o->app, 1, 0},
        {"jobs", OPT_STR, &jobs, 0, 0},
        {"count", OPT_INT, &count, 0, 0},
        {"input-template", OPT_STR, &tmpl, 0, 0},
        {"name", OPT_STR, &o->name, 0, 0},
        {"quorum", OPT_INT, &b->red.min_quorum, 0, 0},
        {"target-nresults", OPT_INT, &b->red.target_nresults, 0, 0},
        {"max-error-instances", OPT_INT, &b->red.max_error_instances, 0, 0},
        {"max-total-instances", OPT_INT, &b->red.max_total_instances, 0, 0},
        {"max-success-instances", OPT_INT, &b->red.max_success_instances, 0, 0},
        {"delay-bound", OPT_DOUBLE, &b->delay_bound, 0, 0},
        {"priority", OPT_INT, &b->priority, 0, 0},
        {"output", OPT_LIST, &outs, 0, 0},
        {"no-output", OPT_FLAG, &no_output, 0, 0},
        {"flops", OPT_DOUBLE, &o->flops, 0, 0},
        {"one-result-per-user", OPT_FLAG, &b->one_result_per_user, 0, 0},
        {"adaptive", OPT_FLAG, &b->red.adaptive, 0, 0},
        {"user", OPT_STR, &o->user, 0, 0},
        {"cursors", OPT_STR, &cursors, 0, 0},
        {"generate", OPT_INT, &o->generate, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    struct cli_project cp = {.s = NULL};
    int r = cli_remote();   /* remotely, no project folder */
    pos[0] = NULL;
    int rc = cli_parse(argc, argv, opts, pos + r, 1 - r, 1 - r, err, errlen);
    if (!rc) rc = check_cursors(cursors, &o->cursors, err, errlen);
    if (!rc) rc = check_mode(opts, err, errlen);
    if (!rc && r) {
        rc = remote_create(opts, jobs, tmpl, cursors, err, errlen);
        batch_order_free(o);
        free(o);
        return rc;
    }
    if (!rc && cli_seen(opts, "generate") && o->generate < 1) o->generate = -1;   /* refused as out of range */
    if (!rc && batch_order_check_mode(o, err, errlen)) rc = CLI_USAGE;
    if (!rc && batch_order_check(o, (int64_t)time(NULL), err, errlen)) rc = CLI_FAIL;
    if (!rc) rc = cli_batch_outputs(b, &outs, no_output, err, errlen);
    if (!rc && !o->generate) rc = source_open(&src, jobs, tmpl, count, err, errlen);
    source_attach(o, &src);
    if (!rc) rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc && o->generate && !cp.p.cfg.cursor_generator[0])
        rc = cli_errf(err, errlen, CLI_FAIL, "--generate needs <cursor_work_generator> in %s/config.xml: the command "
                      "that makes the jobs (docs/cursors.md)", pos[0]);
    if (!rc) rc = cli_transaction(&cp, order_tx, o, err, errlen);
    if (!rc && o->generate)
        printf("created batch %s (id %lld): %d jobs to generate in %d cursors\n", b->name, (long long)b->id,
               o->generate, o->cursors);
    else if (!rc && o->cursors > 0)
        printf("created batch %s (id %lld): %ld jobs in %d cursors\n", b->name, (long long)b->id, o->njobs, o->cursors);
    else if (!rc)
        printf("created batch %s (id %lld): %ld jobs\n", b->name, (long long)b->id, o->njobs);
    cli_close(&cp);
    source_close(&src);
    batch_order_free(o);
    free(o);
    return rc;
}

/* ---- batch add-jobs ---- */

struct add_jobs {
    struct batch_order o;        /* the chunk: a child batch of the cursor batch */
    const char *key;
    int64_t first;               /* --first: the job number of the file's first line */
    struct batch parent;
    struct cursor_rec cur;       /* the cursor whose range holds first */
    int found;
};

static int cursor_holding(void *ctx, const struct cursor_rec *c)
{
    struct add_jobs *a = ctx;
    if (c->first_job_num > a->first || a->first > c->last_job_num) return 0;
    a->cur = *c;
    a->found = 1;
    return 1;
}

static int add_jobs(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    (void)copies;
    struct add_jobs *a = ctx;
    struct batch *p = &a->parent, *b = &a->o.b;
    int rc = batch_find(cp->s, a->key, p);
    if (rc == 1) return cli_errf(err, errlen, CLI_FAIL, "no batch named or numbered '%s' (see locus batch list)", a->key);
    if (rc || store_each_cursor(cp->s, p->id, cursor_holding, a) < 0)
        return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    if (p->state != BATCH_ACTIVE)
        return cli_errf(err, errlen, CLI_FAIL, "batch %s is %s: no more jobs", p->name, batch_state_name(p->state));
    if (!a->found)
        return cli_errf(err, errlen, CLI_FAIL, "batch %s has no cursor with job %lld (see GET /api/v1/cursors)", p->name,
                        (long long)a->first);
    const struct cursor_rec *c = &a->cur;
    if (c->first_ungenerated_job_num > c->last_job_num)
        return cli_errf(err, errlen, CLI_FAIL, "cursor %lld (jobs %lld-%lld) has all its jobs", (long long)c->id,
                        (long long)c->first_job_num, (long long)c->last_job_num);
    if (a->first != c->first_ungenerated_job_num)   /* a cursor's jobs are made in order, each once */
        return cli_errf(err, errlen, CLI_FAIL, "cursor %lld (jobs %lld-%lld) makes job %lld next, not %lld",
                        (long long)c->id, (long long)c->first_job_num, (long long)c->last_job_num,
                        (long long)c->first_ungenerated_job_num, (long long)a->first);
    *b = *p;
    b->parent_id = p->id;
    b->create_time = (int64_t)time(NULL);
    b->done_time = 0;
    if ((size_t)snprintf(b->name, sizeof b->name, "%s.%lld", p->name, (long long)a->first) >= sizeof b->name)
        return cli_errf(err, errlen, CLI_FAIL, "batch name %s is too long to name its chunks", p->name);
    struct batch same;
    if (store_batch_by_name(cp->s, b->name, &same) == 0)   /* made before the rule of batch create against it */
        return cli_errf(err, errlen, CLI_FAIL, "a batch named %s exists: the chunk of batch %s from job %lld cannot "
                        "take its name", b->name, p->name, (long long)a->first);
    a->o.max_jobs = c->last_job_num - a->first + 1;
    /* jobs that give no flops: the batch's estimate, which planned their credit */
    int n = p->red.target_nresults > 1 ? p->red.target_nresults : 1;
    a->o.env.flops = c->planned_job_credit > 0 ? c->planned_job_credit / n / CREDIT_PER_FLOP : JOB_DEFAULT_FLOPS;
    if (batch_order_insert(cp->s, &a->o, err, errlen)) return CLI_FAIL;
    /* numbered from first: job_num = id - (first_job_id - first + 1) + 1 */
    struct cursor_rec chunk = {.id = c->id, .batch_id = b->id, .first_job_num = a->first,
                               .last_job_num = a->first + a->o.njobs - 1};
    if (store_cursor_take_jobs(cp->s, &chunk, a->o.first_job_id - a->first + 1) ||
        store_cursor_made(cp->s, c->id, chunk.last_job_num + 1))
        return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    return 0;
}

int cmd_batch_add_jobs(int argc, char **argv, char *err, size_t errlen)
{
    struct add_jobs *a = xcalloc(1, sizeof *a);
    struct job_source src = {.path = NULL};
    const char *jobs = NULL, *pos[2];
    int first = 0;
    struct cli_opt opts[] = {
        {"first", OPT_INT, &first, 1, 0},
        {"jobs", OPT_STR, &jobs, 1, 0},
        {NULL, 0, NULL, 0, 0},
    };
    struct cli_project cp = {.s = NULL};
    batch_order_init(&a->o);
    a->o.cursors = 0;   /* a cursor batch's: every job reads a sticky file */
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (!rc && first < 1) rc = cli_errf(err, errlen, CLI_USAGE, "--first is a job number, from 1");
    if (!rc) rc = source_open(&src, jobs, NULL, 0, err, errlen);
    if (!rc) rc = cli_open(&cp, pos[0], 0, err, errlen);
    source_attach(&a->o, &src);
    a->key = pos[1];
    a->first = first;
    a->o.base = first;   /* default job names: BATCH_<job number> */
    a->o.env.batch = a->parent.name;
    if (!rc) rc = cli_transaction(&cp, add_jobs, a, err, errlen);
    if (!rc)
        printf("batch %s: made jobs %lld-%lld of cursor %lld (chunk %s)\n", a->parent.name, (long long)first,
               (long long)(first + a->o.njobs - 1), (long long)a->cur.id, a->o.b.name);
    cli_close(&cp);
    source_close(&src);
    batch_order_free(&a->o);
    free(a);
    return rc;
}

/* ---- batch cancel ---- */

struct batch_cancel {
    const char *key;
    struct batch b;
};

static int cancel(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    (void)copies;
    struct batch_cancel *bc = ctx;
    return batch_order_cancel(cp->s, bc->key, 0, &bc->b, err, errlen) ? CLI_FAIL : 0;
}

/* What a cancel did, as the CLI and the remote CLI say it. */
void cli_print_cancel(const char *name, const char *was)
{
    if (!strcmp(was, batch_state_name(BATCH_ACTIVE)))
        printf("batch %s: cancelling; the server (locusd) cancels its jobs and instances\n", name);
    else
        printf("batch %s is already %s: nothing to do\n", name, was);
}

/* batch cancel on a server: POST batches/KEY/cancel. */
static int remote_cancel(const char *key, char *err, size_t errlen)
{
    char *k = remote_escape(key), path[1024];
    snprintf(path, sizeof path, "batches/%s/cancel", k);
    free(k);
    json_t *answer = NULL;
    int rc = remote_json("POST", path, NULL, &answer, err, errlen);
    if (rc) return rc;
    const char *was = json_string_value(json_object_get(answer, "was"));
    cli_print_cancel(json_string_value(json_object_get(answer, "batch")), was ? was : "?");
    json_decref(answer);
    return 0;
}

int cmd_batch_cancel(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2] = {NULL, NULL};
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int r = cli_remote();
    int rc = cli_parse(argc, argv, opts, pos + r, 2 - r, 2 - r, err, errlen);
    if (rc) return rc;
    if (r) return remote_cancel(pos[1], err, errlen);
    struct cli_project cp;
    struct batch_cancel bc = {.key = pos[1]};
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = cli_transaction(&cp, cancel, &bc, err, errlen);
    cli_close(&cp);
    if (!rc) cli_print_cancel(bc.b.name, batch_state_name(bc.b.state));
    return rc;
}

/* ---- batch results (remote) ---- */

int cmd_batch_results(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[1], *job = NULL, *dest = NULL;
    struct cli_opt opts[] = {
        {"job", OPT_STR, &job, 0, 0},
        {"output-file", OPT_STR, &dest, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    if (rc) return rc;
    if (!cli_remote())
        return cli_errf(err, errlen, CLI_USAGE, "batch results downloads from a server (locus --server URL ...); on "
                        "the server, results are in DIR/results/BATCH/");
    char *k = remote_escape(pos[0]), *j = job ? remote_escape(job) : NULL, path[1024], file[512];
    snprintf(path, sizeof path, "batches/%s%s%s/results", k, j ? "/jobs/" : "", j ? j : "");
    snprintf(file, sizeof file, "%s%s%s.tar", pos[0], job ? "-" : "", job ? job : "");
    free(k);
    free(j);
    if (!dest) dest = file;
    rc = remote_download(path, dest, err, errlen);
    if (!rc) printf("results of %s%s%s in %s\n", pos[0], job ? " job " : "", job ? job : "", dest);
    return rc;
}

/* ---- batch list ---- */

struct list_ctx {
    struct store *s;
    int64_t last_id;
    int rc;
};

static int list_row(void *ctx, const struct batch *b)
{
    struct list_ctx *l = ctx;
    if (b->id <= l->last_id) return 0;   /* cancelling batches may come twice */
    l->last_id = b->id;
    if (b->parent_id) return 0;          /* a chunk: counted in its generated batch */
    struct app app = {.name = "?"};
    struct batch_stats st;
    if (store_app_get(l->s, b->app_id, &app) < 0 || store_batch_stats(l->s, b->id, &st)) {
        l->rc = -1;
        return 1;
    }
    char when[32];
    time_t t = (time_t)b->create_time;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&t));
    printf("%-6lld %-32s %-16s %-10s %10lld  %s\n", (long long)b->id, b->name, app.name,
           batch_state_name(b->state), (long long)st.njobs, when);
    return 0;
}

int cmd_batch_list(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[1];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    if (rc) return rc;
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (!rc) {
        struct list_ctx l = {cp.s, 0, 0};
        printf("%-6s %-32s %-16s %-10s %10s  %s\n", "ID", "NAME", "APP", "STATE", "JOBS", "CREATED");
        if (store_each_batch(cp.s, 0, list_row, &l) || l.rc)
            rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    }
    cli_close(&cp);
    return rc;
}

/* ---- batch show ---- */

static void print_failures(const struct failures_view *v)
{
    const struct batch_stats *s = &v->prog.st;
    char created[32], eta[32];
    cli_format_time(v->b.create_time, created, sizeof created);
    cli_format_eta(v->prog.eta_s, eta, sizeof eta);
    printf("batch %s (id %lld): app %s, %s, created %s\n", v->b.name, (long long)v->b.id, v->app,
           batch_state_name(v->b.state), created);
    printf("jobs %lld: %lld done, %lld to assimilate, %lld active, %lld failed, %lld cancelled\n", (long long)s->njobs,
           (long long)s->ndone, (long long)s->nvalidated, (long long)s->nactive, (long long)s->nfailed,
           (long long)s->ncancelled);
    printf("instances: %lld in progress, %lld succeeded, %lld errored; %.1f jobs/h, ETA %s\n",
           (long long)s->ninstances_in_progress, (long long)s->ninstances_success, (long long)s->ninstances_error,
           v->prog.jobs_per_hour, eta);
    if (s->nfailed) {
        printf("failed jobs, by reason:");
        for (int k = 0; k < JV_JOB_ERRORS; k++)
            if (v->failed_by[k]) printf(" %s %lld", jv_job_error_name(k), (long long)v->failed_by[k]);
        printf("\n");
    }
    if (!v->read) {
        printf("no errored instances\n");
        return;
    }
    if (v->read < s->ninstances_error)
        printf("errors (the newest %lld of %lld errored instances), by outcome, exit status and first line of "
               "stderr:\n", (long long)v->read, (long long)s->ninstances_error);
    else
        printf("errors, by outcome, exit status and first line of stderr:\n");
    for (int i = 0; i < v->ngroups; i++) {
        const struct failure_group *g = &v->groups[i];
        char what[JV_ERROR_LINE_MAX + 64], last[32];
        cli_format_error(g, what, sizeof what);
        cli_format_time(g->last_time, last, sizeof last);
        printf("  %lld instance%s on %lld host%s: %s\n", (long long)g->instances, g->instances == 1 ? "" : "s",
               (long long)g->hosts, g->hosts == 1 ? "" : "s", what);
        printf("      e.g. job %s (instance %s), back %s\n", g->example_job, g->example_instance, last);
    }
    if (v->other_groups)
        printf("  and %lld more groups of %lld instances\n", (long long)v->other_groups, (long long)v->other_instances);
    printf("one job, its instances and their stderr: locus job show DIR %s JOB\n", v->b.name);
}

int cmd_batch_show(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2];
    int as_json = 0;
    struct cli_opt opts[] = {
        {"json", OPT_FLAG, &as_json, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (!rc) {
        struct batch b;
        struct failures_view v;
        int found = batch_find(cp.s, pos[1], &b);
        if (found == 1)
            rc = cli_errf(err, errlen, CLI_FAIL, "no batch named or numbered '%s' (see locus batch list)", pos[1]);
        else if (found || failures_view_get(cp.s, &b, (int64_t)time(NULL), &v))
            rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
        else if (as_json)
            cli_print_json(failures_view_json(&v));
        else
            print_failures(&v);
    }
    cli_close(&cp);
    return rc;
}
