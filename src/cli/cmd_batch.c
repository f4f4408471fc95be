/* cmd_batch.c - `locus batch create | add-jobs | cancel | list | show`. A batch
 * and all its jobs are created in one store transaction, so a bad line
 * anywhere leaves nothing behind. Jobs come from a JSONL file read line by
 * line, or from a template expanded N times; both feed the same insertion
 * loop, which does no per-job allocation in template mode (a million jobs
 * in seconds). A cursor batch may instead be planned with no jobs, which
 * the project's generator makes on demand with add-jobs, a chunk (a child
 * batch) at a time. show says what went wrong: a batch's figures and its
 * errors grouped (store/store_job_view.h, which the REST API answers
 * with too). */
#include "cli/cli.h"
#include "cli/jobdesc.h"
#include "core/fsutil.h"
#include "core/hashmap.h"
#include "core/strbuf.h"
#include "model/credit.h"
#include "sched/cursor.h"
#include "core/vec.h"
#include "store/store_job_view.h"
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEMPLATE_MAX_BYTES (1 << 20)
#define JOB_COUNT_MAX 100000000

/* Where jobs come from: a JSONL file, or a template expanded count times. */
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
    long base;               /* the number of the first: {n} and default names count from it */
    struct job_env env;
};

static void source_where(const struct job_source *src, char *out, size_t len)
{
    if (src->line_no) snprintf(out, len, "%s line %ld", src->path, src->line_no);
    else snprintf(out, len, "%s (job %ld)", src->path, src->n);
}

/* A failure about the current job, prefixed with where it comes from. */
static int source_err(const struct job_source *src, const char *msg, char *err, size_t errlen)
{
    char where[PROJECT_PATH_MAX + 64];
    source_where(src, where, sizeof where);
    return cli_errf(err, errlen, CLI_FAIL, "%s: %s", where, msg);
}

static int blank(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    return !*s;
}

/* The next JSONL job into j: 1 made, 0 end of file, -1 error. */
static int jsonl_next(struct job_source *src, struct job_spec *j, char *msg, size_t msglen)
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
    int rc = job_desc_read(obj, &src->desc, msg, msglen) ||
             job_desc_resolve(&src->desc, &src->env, src->base + src->n, j, msg, msglen);
    json_decref(obj);
    return rc ? -1 : 1;
}

static int source_next(struct job_source *src, struct job_spec *j, char *msg, size_t msglen)
{
    if (src->jsonl) return jsonl_next(src, j, msg, msglen);
    if (src->n == src->count) return 0;
    return job_desc_resolve(&src->desc, &src->env, src->base + src->n, j, msg, msglen) ? -1 : 1;
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
    if (count < 1 || count > JOB_COUNT_MAX)
        return cli_errf(err, errlen, CLI_FAIL, "--count must be from 1 to %d", JOB_COUNT_MAX);
    src->count = count;
    src->env.expand = 1;
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

/* ---- batch create ---- */

struct batch_create {
    const char *app, *user, *name;
    struct batch b;
    struct job_source src;
    struct smap files;
    struct imap sticky;          /* ids of sticky files */
    int cursors;                 /* --cursors: -1 none, 0 from the active hosts, else that many */
    int generate;                /* --generate: jobs the generator makes later; 0: all given now */
    double flops;                /* --flops */
    long max_jobs;               /* add-jobs: the most the source may hold (what the cursor has left) */
    int64_t first_job_id;        /* the first job inserted */
    char default_name[sizeof ((struct batch *)0)->name];
};

static int put_file(void *ctx, const struct file_rec *f)
{
    struct batch_create *bc = ctx;
    smap_put(&bc->files, f->name, (void *)(intptr_t)f->id);
    if (f->sticky) imap_put(&bc->sticky, f->id, bc);
    return 0;
}

/* A job insert failed: a name clash is the likely reason, so say with what. */
static int insert_failed(struct cli_project *cp, const struct batch_create *bc, const struct job_spec *j,
                         char *err, size_t errlen)
{
    char msg[CLI_ERR_MAX];
    struct job_spec other;
    struct batch ob;
    if (store_job_by_name(cp->s, j->name, &other) != 0)
        snprintf(msg, sizeof msg, "%s", store_error(cp->s));
    else if (other.batch_id == bc->b.id)
        snprintf(msg, sizeof msg, "job name %s appears twice in this batch", j->name);
    else if (store_batch_get(cp->s, other.batch_id, &ob) == 0)
        snprintf(msg, sizeof msg, "job name %s already exists in batch %s", j->name, ob.name);
    else
        snprintf(msg, sizeof msg, "job name %s already exists", j->name);
    return source_err(&bc->src, msg, err, errlen);
}

/* 1 if the job reads a sticky file (every job of a cursor batch does). */
static int reads_sticky(const struct batch_create *bc, const struct job_spec *j)
{
    for (int i = 0; i < j->ninputs; i++)
        if (imap_get(&bc->sticky, j->inputs[i].file_id)) return 1;
    return 0;
}

static int insert_jobs(struct cli_project *cp, struct batch_create *bc, char *err, size_t errlen)
{
    struct job_spec *j = xcalloc(1, sizeof *j);
    char msg[CLI_ERR_MAX];
    int rc, got;
    j->batch_id = bc->b.id;
    j->app_id = bc->b.app_id;
    while ((got = source_next(&bc->src, j, msg, sizeof msg)) == 1) {
        if (bc->max_jobs && bc->src.n == bc->max_jobs) {
            snprintf(msg, sizeof msg, "more jobs than the cursor has left to make (%ld)", bc->max_jobs);
            got = -1;
            break;
        }
        if (bc->cursors >= 0 && !reads_sticky(bc, j)) {
            snprintf(msg, sizeof msg, "job %s reads no sticky file: the jobs of a cursor batch read a range of a "
                     "sequence of sticky files (locus file add --sticky)", j->name);
            got = -1;
            break;
        }
        if (store_job_insert(cp->s, j, &bc->b.red)) break;
        if (!bc->src.n) bc->first_job_id = j->id;
        bc->src.n++;
    }
    if (got < 0) rc = source_err(&bc->src, msg, err, errlen);
    else if (got > 0) rc = insert_failed(cp, bc, j, err, errlen);
    else if (bc->src.n == 0) rc = cli_errf(err, errlen, CLI_FAIL, "%s has no jobs", bc->src.path);
    else rc = 0;
    free(j);
    return rc;
}

/* ---- cursors ---- */

struct job_credits { double *credit; int64_t n, cap; };

static int job_credit_row(void *ctx, const struct live_job *lj)
{
    struct job_credits *c = ctx;
    VEC_GROW(c->credit, c->n, c->cap);
    c->credit[c->n++] = credit_for_job(lj->flops_est);
    return 0;
}

/* Cuts the jobs just inserted, in their order, into cursors of about equal
 * work, or the jobs to generate into cursors of equal counts: as many as
 * asked, or one per CURSOR_TEAM_SIZE hosts seen this week. */
static int make_cursors(struct cli_project *cp, struct batch_create *bc, char *err, size_t errlen)
{
    struct job_credits c = {.credit = NULL};
    int rc = 0, n;
    if (!bc->generate && store_each_live_job(cp->s, bc->b.id, job_credit_row, &c)) {
        free(c.credit);
        return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    }
    int64_t hosts = store_count_hosts_since(cp->s, bc->b.create_time - 7 * 86400);
    double planned = credit_for_job(bc->flops) * (bc->b.red.target_nresults > 1 ? bc->b.red.target_nresults : 1);
    struct cursor_rec *recs = cursor_plan(bc->b.id, c.credit, planned, bc->generate ? bc->generate : c.n,
                                          bc->cursors, hosts > 0 ? hosts : 0, &n);
    for (int i = 0; i < n && !rc; i++)
        if (store_cursor_insert(cp->s, &recs[i]) ||
            (!bc->generate && store_cursor_take_jobs(cp->s, &recs[i], bc->first_job_id)))
            rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    bc->cursors = n;
    free(recs);
    free(c.credit);
    return rc;
}

static int create_batch(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    struct batch_create *bc = ctx;
    if (cli_app_user(cp->s, bc->app, bc->user, &bc->b.app_id, &bc->b.user_id, err, errlen)) return CLI_FAIL;
    struct batch same;
    char other[sizeof same.name];
    if (store_batch_by_name(cp->s, bc->b.name, &same) == 0)
        return cli_errf(err, errlen, CLI_FAIL, "a batch named %s exists: choose another --name", bc->b.name);
    int clash = store_batch_chunk_clash(cp->s, bc->b.name, bc->generate > 0, other, sizeof other);
    if (clash < 0) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    if (clash)   /* chunks of a generated batch P are named P.K */
        return cli_errf(err, errlen, CLI_FAIL, "the name %s would clash with the chunks of generated batch %s: choose "
                        "another --name", bc->b.name, bc->generate ? bc->b.name : other);
    if (store_each_file(cp->s, 0, put_file, bc) || store_batch_insert(cp->s, &bc->b))
        return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    int rc = bc->generate ? 0 : insert_jobs(cp, bc, err, errlen);
    return rc || bc->cursors < 0 ? rc : make_cursors(cp, bc, err, errlen);
}

/* Which of --jobs, --count/--input-template and --generate, exactly. */
static int check_mode(const struct cli_opt *opts, const struct batch_create *bc, char *err, size_t errlen)
{
    int jobs = cli_seen(opts, "jobs"), count = cli_seen(opts, "count"), tmpl = cli_seen(opts, "input-template");
    int gen = cli_seen(opts, "generate");
    if (jobs + (count || tmpl) + gen > 1)
        return cli_errf(err, errlen, CLI_USAGE, "give one of --jobs, --count with --input-template, or --generate");
    if (!jobs && !gen && !(count && tmpl))
        return cli_errf(err, errlen, CLI_USAGE, "give --jobs FILE.jsonl, --count N with --input-template FILE.json, "
                        "or --generate N with --cursors");
    if (gen && (bc->generate < 1 || bc->generate > JOB_COUNT_MAX))
        return cli_errf(err, errlen, CLI_USAGE, "--generate must be from 1 to %d", JOB_COUNT_MAX);
    if (gen && bc->cursors < 0)
        return cli_errf(err, errlen, CLI_USAGE, "--generate is for cursor batches: give --cursors N or auto too");
    char chunk[32];
    if (gen && bc->name && strlen(bc->name) + (size_t)snprintf(chunk, sizeof chunk, ".%d", bc->generate) >=
                               sizeof bc->b.name)   /* its chunks are named NAME.K */
        return cli_errf(err, errlen, CLI_USAGE, "batch name %s leaves no room to name its chunks %s.K: at most %zu "
                        "characters", bc->name, bc->name, sizeof bc->b.name - 1 - strlen(chunk));
    return 0;
}

/* --cursors N (1 to 100000) or auto; absent: -1, a batch without cursors. */
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
    if (errno || *end || end == arg || n < 1 || n > 100000)
        return cli_errf(err, errlen, CLI_USAGE, "--cursors takes a number from 1 to 100000, or auto");
    *out = (int)n;
    return 0;
}

/* Everything about the batch that needs no store. */
static int check_batch(struct batch_create *bc, double flops, const struct cli_list *outs, int no_output,
                       char *err, size_t errlen)
{
    struct batch *b = &bc->b;
    if (redundancy_complete(&b->red, err, errlen)) return CLI_FAIL;
    if (b->delay_bound <= 0) return cli_errf(err, errlen, CLI_FAIL, "--delay-bound must be positive (seconds)");
    if (flops <= 0) return cli_errf(err, errlen, CLI_FAIL, "--flops must be positive");
    if (!name_is_safe(bc->app)) return cli_errf(err, errlen, CLI_FAIL, "unknown app '%s'", bc->app);
    if (!bc->name) {
        time_t now = time(NULL);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
        snprintf(bc->default_name, sizeof bc->default_name, "%.100s-%.15s", bc->app, stamp);
        bc->name = bc->default_name;
    }
    if (!name_is_safe(bc->name) || strlen(bc->name) >= sizeof b->name)
        return cli_errf(err, errlen, CLI_FAIL, "batch name '%s' is not a safe name of at most %zu characters "
                        "(A-Z a-z 0-9 . _ + -)", bc->name, sizeof b->name - 1);
    snprintf(b->name, sizeof b->name, "%s", bc->name);
    b->create_time = (int64_t)time(NULL);
    b->state = BATCH_ACTIVE;
    bc->src.env.batch = b->name;
    bc->src.env.flops = flops;
    return cli_batch_outputs(b, outs, no_output, err, errlen);
}

int cmd_batch_create(int argc, char **argv, char *err, size_t errlen)
{
    struct batch_create *bc = xcalloc(1, sizeof *bc);
    struct batch *b = &bc->b;
    const char *jobs = NULL, *tmpl = NULL, *cursors = NULL, *pos[1];
    int count = 0, no_output = 0;
    bc->flops = JOB_DEFAULT_FLOPS;
    struct cli_list outs = {.n = 0};
    b->red = (struct redundancy){.min_quorum = RED_UNSET, .target_nresults = RED_UNSET, .max_error_instances = RED_UNSET,
                                 .max_total_instances = RED_UNSET, .max_success_instances = RED_UNSET};
    b->delay_bound = 7 * 86400;
    struct cli_opt opts[] = {
        {"app", OPT_STR, &bc->app, 1, 0},
        {"jobs", OPT_STR, &jobs, 0, 0},
        {"count", OPT_INT, &count, 0, 0},
        {"input-template", OPT_STR, &tmpl, 0, 0},
        {"name", OPT_STR, &bc->name, 0, 0},
        {"quorum", OPT_INT, &b->red.min_quorum, 0, 0},
        {"target-nresults", OPT_INT, &b->red.target_nresults, 0, 0},
        {"max-error-instances", OPT_INT, &b->red.max_error_instances, 0, 0},
        {"max-total-instances", OPT_INT, &b->red.max_total_instances, 0, 0},
        {"max-success-instances", OPT_INT, &b->red.max_success_instances, 0, 0},
        {"delay-bound", OPT_DOUBLE, &b->delay_bound, 0, 0},
        {"priority", OPT_INT, &b->priority, 0, 0},
        {"output", OPT_LIST, &outs, 0, 0},
        {"no-output", OPT_FLAG, &no_output, 0, 0},
        {"flops", OPT_DOUBLE, &bc->flops, 0, 0},
        {"one-result-per-user", OPT_FLAG, &b->one_result_per_user, 0, 0},
        {"adaptive", OPT_FLAG, &b->red.adaptive, 0, 0},
        {"user", OPT_STR, &bc->user, 0, 0},
        {"cursors", OPT_STR, &cursors, 0, 0},
        {"generate", OPT_INT, &bc->generate, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    struct cli_project cp = {.s = NULL};
    smap_init(&bc->files);
    imap_init(&bc->sticky);
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    if (!rc) rc = check_cursors(cursors, &bc->cursors, err, errlen);
    if (!rc) rc = check_mode(opts, bc, err, errlen);
    if (!rc) rc = check_batch(bc, bc->flops, &outs, no_output, err, errlen);
    if (!rc && !bc->generate) rc = source_open(&bc->src, jobs, tmpl, count, err, errlen);
    if (!rc) rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc && bc->generate && !cp.p.cfg.cursor_generator[0])
        rc = cli_errf(err, errlen, CLI_FAIL, "--generate needs <cursor_work_generator> in %s/config.xml: the command "
                      "that makes the jobs (docs/cursors.md)", pos[0]);
    bc->src.env.files = &bc->files;
    if (!rc) rc = cli_transaction(&cp, create_batch, bc, err, errlen);
    if (!rc && bc->generate)
        printf("created batch %s (id %lld): %d jobs to generate in %d cursors\n", b->name, (long long)b->id,
               bc->generate, bc->cursors);
    else if (!rc && bc->cursors > 0)
        printf("created batch %s (id %lld): %ld jobs in %d cursors\n", b->name, (long long)b->id, bc->src.n, bc->cursors);
    else if (!rc)
        printf("created batch %s (id %lld): %ld jobs\n", b->name, (long long)b->id, bc->src.n);
    cli_close(&cp);
    source_close(&bc->src);
    smap_free(&bc->files);
    imap_free(&bc->sticky);
    free(bc);
    return rc;
}

/* ---- batch add-jobs ---- */

struct add_jobs {
    struct batch_create bc;      /* the chunk: a child batch of the cursor batch */
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
    struct batch *p = &a->parent, *b = &a->bc.b;
    int rc = cli_find_batch(cp->s, a->key, p);
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
    a->bc.max_jobs = c->last_job_num - a->first + 1;
    /* jobs that give no flops: the batch's estimate, which planned their credit */
    int n = p->red.target_nresults > 1 ? p->red.target_nresults : 1;
    a->bc.src.env.flops = c->planned_job_credit > 0 ? c->planned_job_credit / n / CREDIT_PER_FLOP : JOB_DEFAULT_FLOPS;
    if (store_each_file(cp->s, 0, put_file, &a->bc) || store_batch_insert(cp->s, b))
        return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    if ((rc = insert_jobs(cp, &a->bc, err, errlen))) return rc;
    /* numbered from first: job_num = id - (first_job_id - first + 1) + 1 */
    struct cursor_rec chunk = {.id = c->id, .batch_id = b->id, .first_job_num = a->first,
                               .last_job_num = a->first + a->bc.src.n - 1};
    if (store_cursor_take_jobs(cp->s, &chunk, a->bc.first_job_id - a->first + 1) ||
        store_cursor_made(cp->s, c->id, chunk.last_job_num + 1))
        return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    return 0;
}

int cmd_batch_add_jobs(int argc, char **argv, char *err, size_t errlen)
{
    struct add_jobs *a = xcalloc(1, sizeof *a);
    const char *jobs = NULL, *pos[2];
    int first = 0;
    struct cli_opt opts[] = {
        {"first", OPT_INT, &first, 1, 0},
        {"jobs", OPT_STR, &jobs, 1, 0},
        {NULL, 0, NULL, 0, 0},
    };
    struct cli_project cp = {.s = NULL};
    smap_init(&a->bc.files);
    imap_init(&a->bc.sticky);
    a->bc.cursors = 0;   /* a cursor batch's: every job reads a sticky file */
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (!rc && first < 1) rc = cli_errf(err, errlen, CLI_USAGE, "--first is a job number, from 1");
    if (!rc) rc = source_open(&a->bc.src, jobs, NULL, 0, err, errlen);
    if (!rc) rc = cli_open(&cp, pos[0], 0, err, errlen);
    a->key = pos[1];
    a->first = first;
    a->bc.src.base = first;   /* default job names: BATCH_<job number> */
    a->bc.src.env.files = &a->bc.files;
    a->bc.src.env.batch = a->parent.name;
    if (!rc) rc = cli_transaction(&cp, add_jobs, a, err, errlen);
    if (!rc)
        printf("batch %s: made jobs %lld-%lld of cursor %lld (chunk %s)\n", a->parent.name, (long long)first,
               (long long)(first + a->bc.src.n - 1), (long long)a->cur.id, a->bc.b.name);
    cli_close(&cp);
    source_close(&a->bc.src);
    smap_free(&a->bc.files);
    imap_free(&a->bc.sticky);
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
    struct batch_cancel *bc = ctx;
    int rc = cli_find_batch(cp->s, bc->key, &bc->b);
    if (rc == 1) return cli_errf(err, errlen, CLI_FAIL, "no batch named or numbered '%s' (see locus batch list)", bc->key);
    if (rc == 0 && bc->b.state == BATCH_ACTIVE) rc = store_batch_cancel(cp->s, bc->b.id);
    return rc ? cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s)) : 0;
}

int cmd_batch_cancel(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    struct cli_project cp;
    struct batch_cancel bc = {.key = pos[1]};
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = cli_transaction(&cp, cancel, &bc, err, errlen);
    cli_close(&cp);
    if (rc) return rc;
    if (bc.b.state == BATCH_ACTIVE)
        printf("batch %s: cancelling; the server (locusd) cancels its jobs and instances\n", bc.b.name);
    else
        printf("batch %s is already %s: nothing to do\n", bc.b.name, batch_state_name(bc.b.state));
    return 0;
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
        int found = cli_find_batch(cp.s, pos[1], &b);
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
