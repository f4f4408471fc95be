/* store_job_view.c - a job and its instances, and a batch's failures, as
 * users see them (store_job_view.h): SQL over jobs, instances, hosts and
 * users, the instances' stderr taken apart as BOINC clients write it, and
 * the job's files looked for on disk. Read only. */
#include "store/store_job_view.h"
#include "core/fsutil.h"
#include "core/hashmap.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "store/store_internal.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a failures view reads of each stderr: its error line is near the
 * head (after the client's version and message), and reading no more
 * bounds the view on a batch whose hosts send long stderr. */
#define JV_STDERR_HEAD_CHARS 4096
#define JV_STR(x) JV_STR2(x)
#define JV_STR2(x) #x
#define JV_NUMBER_DIGITS_MAX 18  /* a job number below 10^18: no overflow */

/* ---- names ---- */

const char *jv_match_name(enum jv_match m)
{
    static const char *const n[] = {[JV_BY_NAME] = "name", [JV_BY_INSTANCE] = "instance", [JV_BY_NUMBER] = "number"};
    return (unsigned)m < sizeof n / sizeof *n ? n[m] : "unknown";
}

static const struct { int bit; const char *name; } job_errors[JV_JOB_ERRORS] = {
    {JOB_ERR_TOO_MANY_ERRORS, "too_many_errors"}, {JOB_ERR_TOO_MANY_TOTAL, "too_many_total"},
    {JOB_ERR_TOO_MANY_SUCCESS, "too_many_success"}, {JOB_ERR_CANCELLED, "cancelled"},
    {JOB_ERR_ASSIMILATE, "assimilate"},
};

int jv_job_error_bit(int k) { return k >= 0 && k < JV_JOB_ERRORS ? job_errors[k].bit : 0; }
const char *jv_job_error_name(int k) { return k >= 0 && k < JV_JOB_ERRORS ? job_errors[k].name : "unknown"; }

const char *jv_instance_state_name(int state)
{
    return state == INST_IN_PROGRESS ? "in_progress" : state == INST_OVER ? "over" : "unknown";
}

const char *jv_validate_state_name(int state)
{
    switch (state) {
    case VALIDATE_INIT: return "init";
    case VALIDATE_VALID: return "valid";
    case VALIDATE_INVALID: return "invalid";
    case VALIDATE_INCONCLUSIVE: return "inconclusive";
    }
    return "unknown";
}

/* ---- text from hosts ---- */

/* The length of the UTF-8 character at p, 0 if it is not a valid one
 * (overlong forms, surrogates and code points past U+10FFFF included, as
 * jansson refuses them). */
static size_t utf8_len(const unsigned char *p)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xbf;
    size_t n;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return 0;
    }
    if (p[1] < lo || p[1] > hi) return 0;   /* the NUL ends it here too */
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf) return 0;
    return n;
}

/* Cleans s in place (see the header): carriage returns dropped, invalid
 * bytes and control characters (C0 but line break and tab, DEL, C1, which
 * some terminals take as escapes) replaced by '?'. */
static void clean_text(char *s)
{
    unsigned char *r = (unsigned char *)s, *w = r;
    while (*r) {
        size_t n = utf8_len(r);
        if (*r == '\r') {
            r++;
        } else if (!n) {
            *w++ = '?';
            r++;
        } else if ((n == 1 && ((*r < 0x20 && *r != '\n' && *r != '\t') || *r == 0x7f)) ||
                   (n == 2 && *r == 0xc2 && r[1] < 0xa0)) {
            *w++ = '?';
            r += n;
        } else {
            memmove(w, r, n);
            w += n;
            r += n;
        }
    }
    *w = 0;
}

static void col_clean(sqlite3_stmt *st, int i, char *out, size_t len)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(out, len, "%s", t ? (const char *)t : "");
    clean_text(out);
}

/* The start of the character holding p (p past a cut), so that a cut
 * never splits one. */
static const char *char_start(const char *text, const char *p)
{
    while (p > text && ((unsigned char)*p & 0xc0) == 0x80) p--;
    return p;
}

struct span { const char *p; size_t n; };

/* The text between open and close in text (to its end without close);
 * p NULL when open is not there. */
static struct span element(const char *text, size_t len, const char *open, const char *close)
{
    const char *a = memmem(text, len, open, strlen(open));
    if (!a) return (struct span){NULL, 0};
    a += strlen(open);
    const char *b = memmem(a, len - (size_t)(a - text), close, strlen(close));
    return (struct span){a, b ? (size_t)(b - a) : len - (size_t)(a - text)};
}

/* A BOINC client reports "<core_client_version>...</core_client_version>
 * <message>what it saw</message> <stderr_txt>the app's stderr</stderr_txt>",
 * each part optional; another sends the app's text bare. The app's part
 * and the client's message, each an owned cleaned string ("" none). */
static void stderr_split(const char *text, size_t len, char **app, char **message)
{
    struct span msg = element(text, len, "<message>", "</message>");
    struct span out = element(text, len, "<stderr_txt>", "</stderr_txt>");
    if (!out.p && !msg.p && !memmem(text, len, "<core_client_version>", strlen("<core_client_version>")))
        out = (struct span){text, len};
    *app = xmalloc(out.n + 1);
    memcpy(*app, out.p ? out.p : "", out.n);
    (*app)[out.n] = 0;
    *message = xmalloc(msg.n + 1);
    memcpy(*message, msg.p ? msg.p : "", msg.n);
    (*message)[msg.n] = 0;
    clean_text(*app);
    clean_text(*message);
}

/* Drops the blanks (line breaks among them) at both ends of s, in place. */
static void trim(char *s)
{
    size_t a = strspn(s, " \t\n"), n = strlen(s);
    while (n > a && strchr(" \t\n", s[n - 1])) n--;
    memmove(s, s + a, n - a);
    s[n - a] = 0;
}

/* The first line of text that is not blank, trimmed and cut to fit out. */
static void first_line(const char *text, char *out, size_t len)
{
    text += strspn(text, " \t\n");
    size_t n = strcspn(text, "\n");
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\t')) n--;
    if (n >= len) n = (size_t)(char_start(text, text + len - 1) - text);
    memcpy(out, text, n);
    out[n] = 0;
}

/* The tail of the app's stderr (app, owned, trimmed) into v: its last
 * JV_STDERR_TAIL_LINES lines, at most JV_STDERR_TAIL_BYTES bytes of them
 * (whole lines but when the last alone is longer). */
static void stderr_tail(struct jv_instance *v, char *app)
{
    size_t len = strlen(app);
    v->stderr_lines = 0;
    for (size_t i = 0; i < len; i++) v->stderr_lines += app[i] == '\n';
    v->stderr_lines += len > 0;
    const char *end = app + len, *start = app;
    int lines = 0;
    for (const char *q = end; q > app; q--)
        if (q[-1] == '\n' && ++lines == JV_STDERR_TAIL_LINES) {
            start = q;
            break;
        }
    if (end - start > JV_STDERR_TAIL_BYTES) {
        const char *cut = end - JV_STDERR_TAIL_BYTES, *nl = memchr(cut, '\n', (size_t)(end - cut));
        start = nl ? nl + 1 : char_start(app, cut);
    }
    v->stderr_cut = start != app;
    memmove(app, start, (size_t)(end - start) + 1);
    v->stderr_tail = app;
}

/* ---- queries ---- */

/* Runs sql (codes named, store_prepare) with ?1 = a and ?2 = b, calling
 * row(ctx, st) per row until it answers non-zero. 0, -1 (store_error) or
 * row's answer. */
static int query(struct store *s, const char *sql, int64_t a, int64_t b, int (*row)(void *ctx, sqlite3_stmt *st),
                 void *ctx)
{
    sqlite3_stmt *st;
    if (store_prepare(s, sql, 0, &st)) return -1;
    sqlite3_bind_int64(st, 1, a);
    if (sqlite3_bind_parameter_count(st) > 1) sqlite3_bind_int64(st, 2, b);
    int rc = SQLITE_DONE, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) stop = row(ctx, st);
    if (!stop && rc != SQLITE_DONE) stop = store_fail(s, "job view");
    sqlite3_finalize(st);
    return stop;
}

static int first_int64(void *ctx, sqlite3_stmt *st)
{
    *(int64_t *)ctx = sqlite3_column_int64(st, 0);
    return 2;   /* found: stop */
}

/* One int64 of the first row: 0, 1 absent, -1. */
static int lookup(struct store *s, const char *sql, int64_t a, int64_t b, int64_t *out)
{
    int rc = query(s, sql, a, b, first_int64, out);
    return rc == 2 ? 0 : rc < 0 ? -1 : 1;
}

/* ---- finding the job ---- */

/* Job id's spec, status and batch into v if the job is b's or one of its
 * chunks': 0, 1 not, -1. */
static int load_job(struct store *s, const struct batch *b, int64_t id, struct job_view *v)
{
    struct batch jb;
    int rc = store_job_spec(s, id, &v->spec);
    if (!rc) rc = store_batch_get(s, v->spec.batch_id, &jb);
    if (rc) return rc;
    if (jb.id != b->id && jb.parent_id != b->id) return 1;
    snprintf(v->job_batch, sizeof v->job_batch, "%s", jb.name);
    v->task_names = jb.task_names;
    if (store_job_status(s, id, &v->st)) return -1;
    /* a chunk's jobs carry their number; the others are numbered as made,
     * from 0: from their first job's id once purging took some (a batch's
     * jobs are made in one transaction, so their ids follow each other) */
    if (jb.parent_id) v->number = v->spec.job_num;
    else if (lookup(s, "SELECT CASE WHEN first_job_id <> 0 THEN ?2 - first_job_id"
                       " ELSE (SELECT count(*) FROM jobs WHERE batch_id=?1 AND id<?2) END FROM batches WHERE id=?1",
                    jb.id, id, &v->number) < 0)
        return -1;
    return 0;
}

static int by_name(struct store *s, const struct batch *b, const char *job, struct job_view *v)
{
    struct job_spec j;
    int rc = store_job_by_name(s, job, &j);
    return rc ? rc : load_job(s, b, j.id, v);
}

/* The wire name of the viewed job's instance seq into out. */
static void view_instance_name(const struct job_view *v, int seq, char *out, size_t len)
{
    struct batch b = {.task_names = v->task_names};
    snprintf(b.name, sizeof b.name, "%s", v->job_batch);
    instance_wire_name(out, len, &b, v->spec.name, v->spec.id, seq);
}

/* An instance's wire name: its job, if the name is the one the job's batch
 * gives that instance and the instance was sent. */
static int by_instance(struct store *s, const struct batch *b, const char *job, struct job_view *v)
{
    int64_t id, n;
    int seq;
    if (instance_parse_name(job, &id, &seq)) return 1;
    int rc = load_job(s, b, id, v);
    if (rc) return rc;
    char name[JV_INSTANCE_NAME_MAX];
    view_instance_name(v, seq, name, sizeof name);
    if (strcmp(name, job)) return 1;
    rc = lookup(s, "SELECT 1 FROM instances WHERE job_id=?1 AND seq=?2", id, seq, &n);
    v->asked_seq = seq;
    return rc;
}

/* A number: the {n} of the job's description. A plain batch's jobs are
 * numbered as they were made, from 0; a generated batch's jobs are in its
 * chunks, numbered as their generator made them (their job_num). */
static int by_number(struct store *s, const struct batch *b, const char *job, struct job_view *v)
{
    size_t n = strlen(job);
    if (!n || n > JV_NUMBER_DIGITS_MAX || strspn(job, "0123456789") != n) return 1;
    int64_t num = strtoll(job, NULL, 10), id = 0;   /* set by lookup on 0; gcc -O3 cannot tell */
    int rc = b->parent_id
        ? lookup(s, "SELECT id FROM jobs WHERE batch_id=?1 AND job_num=?2", b->id, num, &id)
        : lookup(s, "SELECT j.id FROM batches c JOIN jobs j ON j.id = c.first_job_id + ?2 AND j.batch_id = c.id"
                    " WHERE c.id=?1 AND c.first_job_id <> 0"
                    " UNION ALL SELECT id FROM (SELECT id FROM jobs WHERE batch_id=?1"
                    "  AND (SELECT first_job_id FROM batches WHERE id=?1) = 0 ORDER BY id LIMIT 1 OFFSET ?2)",
                 b->id, num, &id);
    if (rc == 1)
        rc = lookup(s, "SELECT j.id FROM batches c JOIN jobs j ON j.batch_id=c.id"
                       " WHERE c.parent_id=?1 AND c.parent_id<>0 AND j.job_num=?2 LIMIT 1", b->id, num, &id);
    return rc ? rc : load_job(s, b, id, v);
}

/* ---- the job's parts ---- */

/* The file's size and its path relative to the project, or nbytes -1. */
static void locate(const struct project *p, const char *rel, struct jv_file *f)
{
    char abs[PROJECT_PATH_MAX + JV_PATH_MAX];
    snprintf(abs, sizeof abs, "%s/%s", p->dir, rel);
    f->nbytes = file_size(abs);
    snprintf(f->path, sizeof f->path, "%s", f->nbytes >= 0 ? rel : "");
}

static int inst_row(void *ctx, sqlite3_stmt *st)
{
    struct job_view *v = ctx;
    VEC_GROW(v->inst, v->ninst, v->capinst);
    struct jv_instance *x = &v->inst[v->ninst++];
    memset(x, 0, sizeof *x);
    struct instance *in = &x->in;
    store_inst_from_row(st, in);
    col_clean(st, STORE_INST_NCOLS + 0, x->host, sizeof x->host);
    col_clean(st, STORE_INST_NCOLS + 1, x->user, sizeof x->user);
    x->version_num = sqlite3_column_int(st, STORE_INST_NCOLS + 2);
    col_clean(st, STORE_INST_NCOLS + 3, x->platform, sizeof x->platform);
    col_clean(st, STORE_INST_NCOLS + 4, x->plan_class, sizeof x->plan_class);
    const char *text = (const char *)sqlite3_column_text(st, STORE_INST_NCOLS + 5);
    char *app;
    stderr_split(text ? text : "", text ? (size_t)sqlite3_column_bytes(st, STORE_INST_NCOLS + 5) : 0, &app, &x->message);
    trim(x->message);
    trim(app);
    stderr_tail(x, app);
    x->canonical = in->id == v->st.canonical_id;
    view_instance_name(v, in->seq, x->name, sizeof x->name);
    return 0;
}

#define INSTANCES_SQL                                                                                     \
    "SELECT " STORE_INST_COLS("i.") ", coalesce(h.domain_name, ''), coalesce(u.name, ''),"              \
    " coalesce(v.version_num, 0), coalesce(p.name, ''), coalesce(v.plan_class, ''), i.stderr"             \
    " FROM instances i LEFT JOIN hosts h ON h.id = i.host_id LEFT JOIN users u ON u.id = i.user_id"       \
    " LEFT JOIN app_versions v ON v.id = i.app_version_id LEFT JOIN platforms p ON p.id = v.platform_id" \
    " WHERE i.job_id = ?1 ORDER BY i.seq"

/* Inputs, app, instances with their uploads, and the kept results. */
static int fill(struct store *s, const struct project *p, const struct batch *b, struct job_view *v)
{
    struct app a;
    if (store_app_get(s, v->spec.app_id, &a) < 0) return -1;
    snprintf(v->app, sizeof v->app, "%s", a.name);
    v->ninputs = v->spec.ninputs;
    for (int i = 0; i < v->ninputs; i++) {
        struct file_rec f;
        struct jv_input *in = &v->inputs[i];
        int rc = store_file_get(s, v->spec.inputs[i].file_id, &f);
        if (rc < 0) return -1;
        snprintf(in->file, sizeof in->file, "%s", rc ? "" : f.name);
        snprintf(in->open_name, sizeof in->open_name, "%s", v->spec.inputs[i].open_name);
        in->nbytes = rc ? -1 : f.nbytes;
        if (!rc) file_rec_clear(&f);
    }
    if (query(s, INSTANCES_SQL, v->spec.id, 0, inst_row, v) < 0) return -1;
    /* a chunk's outputs are its generated batch's */
    v->nresults = b->noutputs;
    for (int k = 0; k < b->noutputs; k++) {
        char rel[JV_PATH_MAX];
        struct jv_file *f = &v->results[k];
        snprintf(f->name, sizeof f->name, "%s", b->outputs[k].open_name);
        snprintf(f->file, sizeof f->file, "%s", f->name);
        snprintf(rel, sizeof rel, "results/%s/%s/%s", v->job_batch, v->spec.name, f->name);
        locate(p, rel, f);
    }
    for (int i = 0; i < v->ninst; i++) {
        struct jv_instance *x = &v->inst[i];
        x->noutputs = b->noutputs;
        for (int k = 0; k < b->noutputs; k++) {
            char rel[JV_PATH_MAX];
            struct jv_file *f = &x->outputs[k];
            snprintf(f->name, sizeof f->name, "%s", b->outputs[k].open_name);
            snprintf(f->file, sizeof f->file, "%s_%d", x->name, k);
            fanout_path(rel, sizeof rel, "upload", f->file);
            locate(p, rel, f);
        }
    }
    return 0;
}

int job_view_get(struct store *s, const struct project *p, const struct batch *b, const char *job,
                 struct job_view *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->batch, sizeof out->batch, "%s", b->name);
    snprintf(out->asked, sizeof out->asked, "%s", job);
    clean_text(out->asked);
    static int (*const finders[])(struct store *, const struct batch *, const char *, struct job_view *) = {
        [JV_BY_NAME] = by_name, [JV_BY_INSTANCE] = by_instance, [JV_BY_NUMBER] = by_number};
    int rc = 1;
    for (size_t k = 0; rc == 1 && k < sizeof finders / sizeof *finders; k++) {
        out->matched_by = (enum jv_match)k;
        rc = finders[k](s, b, job, out);
    }
    return rc ? rc : fill(s, p, b, out);
}

void job_view_free(struct job_view *v)
{
    for (int i = 0; i < v->ninst; i++) {
        free(v->inst[i].message);
        free(v->inst[i].stderr_tail);
    }
    free(v->inst);
    memset(v, 0, sizeof *v);
}

/* ---- failures ---- */

struct group_acc {
    struct failure_group g;
    struct imap hosts;           /* the hosts seen, as keys */
    int64_t newest;              /* its newest instance's id: ties go to the most recent */
};

struct scan {
    struct smap index;           /* "outcome|exit|error" -> its group's index + 1 */
    struct group_acc *v;
    int n, cap;
    int64_t read;
};

static int failure_row(void *ctx, sqlite3_stmt *st)
{
    struct scan *sc = ctx;
    sc->read++;
    int outcome = sqlite3_column_int(st, 4), exit_status = sqlite3_column_int(st, 5);
    const char *text = (const char *)sqlite3_column_text(st, 9);
    char *app, *message, error[JV_ERROR_LINE_MAX];
    stderr_split(text ? text : "", text ? (size_t)sqlite3_column_bytes(st, 9) : 0, &app, &message);
    first_line(app, error, sizeof error);
    if (!error[0]) first_line(message, error, sizeof error);
    free(app);
    free(message);
    struct strbuf key;
    sb_init(&key);
    sb_printf(&key, "%d|%d|%s", outcome, exit_status, error);
    intptr_t at = (intptr_t)smap_get(&sc->index, key.s);
    if (!at) {   /* rows come newest first: the first of a group is its example */
        VEC_GROW(sc->v, sc->n, sc->cap);
        struct group_acc *a = &sc->v[sc->n++];
        memset(a, 0, sizeof *a);
        imap_init(&a->hosts);
        a->g.outcome = outcome;
        a->g.exit_status = exit_status;
        snprintf(a->g.error, sizeof a->g.error, "%s", error);
        a->newest = sqlite3_column_int64(st, 0);
        a->g.last_time = sqlite3_column_int64(st, 6);
        col_clean(st, 7, a->g.example_job, sizeof a->g.example_job);
        struct batch b = {.task_names = sqlite3_column_int(st, 10)};
        col_clean(st, 8, b.name, sizeof b.name);
        instance_wire_name(a->g.example_instance, sizeof a->g.example_instance, &b, a->g.example_job,
                           sqlite3_column_int64(st, 1), sqlite3_column_int(st, 2));
        at = sc->n;
        smap_put(&sc->index, key.s, (void *)at);
    }
    sb_free(&key);
    struct group_acc *a = &sc->v[at - 1];
    a->g.instances++;
    int64_t host = sqlite3_column_int64(st, 3);
    if (!imap_get(&a->hosts, host)) {
        imap_put(&a->hosts, host, a);
        a->g.hosts++;
    }
    return 0;
}

/* The newest errored instances of the batch (as store_batch_stats counts
 * errors): their ids first, so that the stderr of those past the bound is
 * never read. The errored instances of the whole store newest first
 * (instances_errors, schema v29), each job's batch looked up, until the
 * bound: the batch's million jobs are not read, only the errors newer than
 * its own (CROSS JOIN keeps that order: by the batch's jobs, SQLite would
 * read them all and sort). */
#define FAILURES_SQL                                                                                      \
    "SELECT i.id, i.job_id, i.seq, i.host_id, i.outcome, i.exit_status, i.received_time, j.name, b.name," \
    " substr(i.stderr, 1, " JV_STR(JV_STDERR_HEAD_CHARS) "), b.task_names"                                 \
    " FROM instances i JOIN jobs j ON j.id = i.job_id JOIN batches b ON b.id = j.batch_id"                  \
    " WHERE i.id IN (SELECT i2.id FROM instances i2 CROSS JOIN jobs j2 ON j2.id = i2.job_id"               \
    " WHERE " INST_ERRORED("i2.") " AND j2.batch_id IN (" BATCH_AND_CHUNKS ") ORDER BY i2.id DESC LIMIT ?2)" \
    " ORDER BY i.id DESC"

static int by_count(const void *x, const void *y)
{
    const struct group_acc *a = x, *b = y;
    if (a->g.instances != b->g.instances) return a->g.instances > b->g.instances ? -1 : 1;
    return a->newest > b->newest ? -1 : a->newest < b->newest;
}

static int failed_row(void *ctx, sqlite3_stmt *st)
{
    int64_t *failed_by = ctx;
    int mask = sqlite3_column_int(st, 0);
    for (int k = 0; k < JV_JOB_ERRORS; k++)
        if (mask & job_errors[k].bit) failed_by[k] += sqlite3_column_int64(st, 1);
    return 0;
}

int failures_view_get(struct store *s, const struct batch *b, int64_t now, struct failures_view *out)
{
    memset(out, 0, sizeof *out);
    out->b = *b;
    struct batch_stats bs;
    struct app a;
    int rc = store_app_get(s, b->app_id, &a);
    if (rc < 0 || store_batch_stats(s, b->id, &bs)) return -1;
    snprintf(out->app, sizeof out->app, "%s", rc ? "" : a.name);
    batch_progress_compute(b, &bs, now, &out->prog);
    if (query(s, "SELECT error_mask, sum(n) FROM batch_jobs WHERE batch_id IN (" BATCH_AND_CHUNKS ")"
                 " AND state = {JOB_FAILED} GROUP BY error_mask", b->id, 0, failed_row, out->failed_by) < 0)
        return -1;
    struct scan sc = {.n = 0};
    smap_init(&sc.index);
    rc = query(s, FAILURES_SQL, b->id, JV_FAILURES_READ, failure_row, &sc);
    if (sc.n) qsort(sc.v, (size_t)sc.n, sizeof *sc.v, by_count);
    for (int i = 0; i < sc.n; i++) {
        if (i < JV_FAILURE_GROUPS) {
            out->groups[out->ngroups++] = sc.v[i].g;
        } else {
            out->other_groups++;
            out->other_instances += sc.v[i].g.instances;
        }
        imap_free(&sc.v[i].hosts);
    }
    out->read = sc.read;
    free(sc.v);
    smap_free(&sc.index);
    return rc < 0 ? -1 : 0;
}

/* ---- JSON ---- */

static json_t *file_json(const struct jv_file *f)
{
    return json_pack("{s:s, s:s, s:o, s:o}", "name", f->name, "file", f->file, "path",
                     f->path[0] ? json_string(f->path) : json_null(), "nbytes",
                     f->nbytes >= 0 ? json_integer(f->nbytes) : json_null());
}

static json_t *files_json(const struct jv_file *f, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, file_json(&f[i]));
    return a;
}

static json_t *instance_json(const struct jv_instance *x)
{
    const struct instance *in = &x->in;
    json_t *version = in->app_version_id == APP_VERSION_ANONYMOUS || !x->version_num
        ? json_null()
        : json_pack("{s:i, s:s, s:s}", "version_num", x->version_num, "platform", x->platform, "plan_class",
                    x->plan_class);
    json_t *j = json_pack("{s:s, s:i, s:I, s:s, s:I, s:s, s:o, s:b, s:s, s:s, s:s, s:i}", "name", x->name, "seq",
                          in->seq, "host_id", (json_int_t)in->host_id, "host", x->host, "user_id",
                          (json_int_t)in->user_id, "user", x->user, "app_version", version, "anonymous_platform",
                          in->app_version_id == APP_VERSION_ANONYMOUS, "state", jv_instance_state_name(in->state),
                          "outcome", outcome_name(in->outcome), "validate_state",
                          jv_validate_state_name(in->validate_state), "exit_status", in->exit_status);
    json_object_update_new(j, json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:b, s:s, s:s, s:i, s:b, s:o}", "sent_time",
                                        (json_int_t)in->sent_time, "deadline", (json_int_t)in->deadline,
                                        "received_time", (json_int_t)in->received_time, "elapsed_time",
                                        in->elapsed_time, "cpu_time", in->cpu_time, "credit", in->credit, "canonical",
                                        x->canonical, "message", x->message, "stderr_tail", x->stderr_tail,
                                        "stderr_lines", x->stderr_lines, "stderr_cut", x->stderr_cut, "outputs",
                                        files_json(x->outputs, x->noutputs)));
    return j;
}

json_t *job_view_json(const struct job_view *v)
{
    json_t *inputs = json_array(), *errors = json_array(), *inst = json_array();
    for (int i = 0; i < v->ninputs; i++)
        json_array_append_new(inputs, json_pack("{s:s, s:s, s:o}", "file", v->inputs[i].file, "open_name",
                                                v->inputs[i].open_name, "nbytes",
                                                v->inputs[i].nbytes >= 0 ? json_integer(v->inputs[i].nbytes)
                                                                         : json_null()));
    for (int k = 0; k < JV_JOB_ERRORS; k++)
        if (v->st.error_mask & job_errors[k].bit) json_array_append_new(errors, json_string(job_errors[k].name));
    const char *canonical = NULL;
    for (int i = 0; i < v->ninst; i++) {
        json_array_append_new(inst, instance_json(&v->inst[i]));
        if (v->inst[i].canonical) canonical = v->inst[i].name;
    }
    json_t *job = json_pack("{s:I, s:s, s:s, s:I, s:s, s:s, s:o, s:s, s:o, s:i, s:o, s:I, s:o}", "id",
                            (json_int_t)v->spec.id, "name", v->spec.name, "batch", v->job_batch, "number",
                            (json_int_t)v->number, "app", v->app, "state", job_state_name(v->st.state),
                            "errors", errors, "cmdline", v->spec.cmdline, "inputs", inputs, "target_nresults",
                            v->st.target_nresults, "canonical_instance",
                            canonical ? json_string(canonical) : json_null(), "done_time",
                            (json_int_t)v->st.done_time, "results", files_json(v->results, v->nresults));
    return json_pack("{s:s, s:s, s:s, s:o, s:o}", "batch", v->batch, "asked", v->asked, "matched_by",
                     jv_match_name(v->matched_by), "job", job, "instances", inst);
}

json_t *failure_group_json(const struct failure_group *g)
{
    return json_pack("{s:s, s:i, s:s, s:I, s:I, s:s, s:s, s:I}", "outcome", outcome_name(g->outcome), "exit_status",
                     g->exit_status, "error", g->error, "instances", (json_int_t)g->instances, "hosts",
                     (json_int_t)g->hosts, "example_job", g->example_job, "example_instance", g->example_instance,
                     "last_time", (json_int_t)g->last_time);
}

json_t *failed_by_json(const int64_t failed_by[JV_JOB_ERRORS])
{
    json_t *o = json_object();
    for (int k = 0; k < JV_JOB_ERRORS; k++)
        if (failed_by[k]) json_object_set_new(o, job_errors[k].name, json_integer(failed_by[k]));
    return o;
}

json_t *batch_figures_json(const struct batch *b, const char *app, const struct batch_progress *p)
{
    const struct batch_stats *bs = &p->st;
    return json_pack("{s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:f, s:o}",
        "id", (json_int_t)b->id, "name", b->name, "state", batch_state_name(b->state), "app", app,
        "create_time", (json_int_t)b->create_time, "done_time", (json_int_t)b->done_time,
        "jobs", (json_int_t)bs->njobs, "done", (json_int_t)bs->ndone, "to_assimilate", (json_int_t)bs->nvalidated,
        "active", (json_int_t)bs->nactive, "failed", (json_int_t)bs->nfailed, "cancelled", (json_int_t)bs->ncancelled,
        "instances_in_progress", (json_int_t)bs->ninstances_in_progress,
        "instances_success", (json_int_t)bs->ninstances_success, "instances_error", (json_int_t)bs->ninstances_error,
        "min_quorum", (json_int_t)b->red.min_quorum, "adaptive", b->red.adaptive, "throughput_jobs_per_h", p->jobs_per_hour, "eta_s",
        p->eta_s < 0 ? json_null() : json_real(p->eta_s));
}

json_t *failures_view_json(const struct failures_view *v)
{
    json_t *groups = json_array();
    for (int i = 0; i < v->ngroups; i++) json_array_append_new(groups, failure_group_json(&v->groups[i]));
    return json_pack("{s:o, s:o, s:I, s:o, s:I, s:I}", "batch", batch_figures_json(&v->b, v->app, &v->prog),
                     "failed_by", failed_by_json(v->failed_by), "instances_read", (json_int_t)v->read, "groups",
                     groups, "other_groups", (json_int_t)v->other_groups, "other_instances",
                     (json_int_t)v->other_instances);
}
