/* driver_fake.c - the in-memory scheduler of unit tests (driver_fake.h). */
#include "drivers/driver_fake.h"
#include "core/vec.h"
#include "grid/inputs.h"
#include "grid/jobscript.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A param of a temporally grouped job. */
struct fmember {
    int64_t job_id;
    long duration;
    int exit_code;
};

struct fjob {
    long cores, duration, walltime;
    int exit_code, best_effort;
    long start, stop;            /* -1: not yet */
    enum drv_state state;
    enum drv_end end;
    char *out;                   /* what its stdout holds: its param; owned */
    char *stage;                 /* its wrapper's stage lines, before the rest of its stdout; owned */
    int64_t campaign, tag;       /* its name */
    struct fmember *members;     /* a grouped job's params, run one after the other; owned */
    int nmembers;
};

struct fake {
    long now, cores;
    struct fjob *jobs;           /* job i has the id "i+1" */
    long n, cap;
    int ok_before_fail;          /* calls that still succeed before fail starts */
    int fail;                    /* calls still to fail */
    int lose;                    /* submissions still to answer with an error, taken */
    long calls;
    struct strbuf cached;        /* "<algo>-<digest>\n" of each input its cache holds */
};

static struct fake *F(const struct cluster_driver *d) { return d->impl; }

/* Counts a call; -1 (with err) when it is to fail. */
static int call(struct cluster_driver *d, char *err, size_t errlen)
{
    struct fake *f = F(d);
    f->calls++;
    if (f->ok_before_fail > 0) {
        f->ok_before_fail--;
        return 0;
    }
    if (f->fail <= 0) return 0;
    f->fail--;
    errf(err, errlen, "the fake scheduler does not answer (failure asked for by the test)");
    return -1;
}

static long used_cores(const struct fake *f)
{
    long used = 0;
    for (long i = 0; i < f->n; i++)
        if (f->jobs[i].state == DRV_RUNNING) used += f->jobs[i].cores;
    return used;
}

static void finish(struct fjob *j, long now, enum drv_end end)
{
    j->state = DRV_FINISHED;
    j->end = end;
    j->stop = now;
}

/* Normal jobs first, then best-effort ones, first come first served in
 * each class: the first waiting job starts when its cores are free, a
 * normal one by preempting the most recently started best-effort jobs if
 * that is enough; a job that cannot start blocks all those behind it. */
static int try_start(struct fake *f, struct fjob *j)
{
    long free_cores = f->cores - used_cores(f);
    if (j->cores > free_cores && !j->best_effort) {
        long preemptible = 0;
        for (long k = 0; k < f->n; k++)
            if (f->jobs[k].state == DRV_RUNNING && f->jobs[k].best_effort) preemptible += f->jobs[k].cores;
        while (free_cores + preemptible >= j->cores && free_cores < j->cores) {
            struct fjob *victim = NULL;
            for (long k = 0; k < f->n; k++) {
                struct fjob *v = &f->jobs[k];
                if (v->state == DRV_RUNNING && v->best_effort && (!victim || v->start >= victim->start)) victim = v;
            }
            finish(victim, f->now, DRV_END_PREEMPTED);
            free_cores += victim->cores;
            preemptible -= victim->cores;
        }
    }
    if (j->cores > free_cores) return 0;
    j->state = DRV_RUNNING;
    j->start = f->now;
    return 1;
}

static void schedule(struct fake *f)
{
    for (int best_effort = 0; best_effort <= 1; best_effort++)
        for (long i = 0; i < f->n; i++) {
            struct fjob *j = &f->jobs[i];
            if (j->state == DRV_WAITING && j->best_effort == best_effort && !try_start(f, j)) return;
        }
}

/* When a running job ends by itself: its duration or its walltime. */
static long end_time(const struct fjob *j)
{
    return j->start + (j->duration < j->walltime ? j->duration : j->walltime);
}

void drv_fake_advance(struct cluster_driver *d, long seconds)
{
    struct fake *f = F(d);
    long target = f->now + seconds;
    for (;;) {
        long next = -1;
        for (long i = 0; i < f->n; i++)
            if (f->jobs[i].state == DRV_RUNNING && (next < 0 || end_time(&f->jobs[i]) < next))
                next = end_time(&f->jobs[i]);
        if (next < 0 || next > target) break;
        f->now = next;
        for (long i = 0; i < f->n; i++) {
            struct fjob *j = &f->jobs[i];
            if (j->state != DRV_RUNNING || end_time(j) != next) continue;
            if (j->duration > j->walltime) finish(j, next, DRV_END_WALLTIME);
            else finish(j, next, j->exit_code ? DRV_END_EXIT : DRV_END_SUCCESS);
        }
        schedule(f);
    }
    f->now = target;
}

long drv_fake_now(const struct cluster_driver *d) { return F(d)->now; }
long drv_fake_calls(const struct cluster_driver *d) { return F(d)->calls; }
void drv_fake_fail_calls(struct cluster_driver *d, int after, int ncalls)
{
    F(d)->ok_before_fail = after;
    F(d)->fail = ncalls;
}

void drv_fake_lose_answers(struct cluster_driver *d, int ncalls) { F(d)->lose = ncalls; }

long drv_fake_njobs(const struct cluster_driver *d) { return F(d)->n; }

void drv_fake_set_cores(struct cluster_driver *d, long cores)
{
    F(d)->cores = cores;
    schedule(F(d));
}

static struct fjob *add_job(struct fake *f, long cores, long duration, long walltime, int best_effort, char *out,
                            char id[DRV_ID_MAX])
{
    VEC_GROW(f->jobs, f->n, f->cap);
    struct fjob *j = &f->jobs[f->n++];
    *j = (struct fjob){.cores = cores, .duration = duration, .walltime = walltime, .best_effort = best_effort,
                       .start = -1, .stop = -1, .state = DRV_WAITING, .out = out};
    snprintf(id, DRV_ID_MAX, "%ld", f->n);
    return j;
}

void drv_fake_submit_foreign(struct cluster_driver *d, long cores, long seconds, int best_effort,
                             char id[DRV_ID_MAX])
{
    add_job(F(d), cores, seconds, seconds + 1, best_effort, xstrdup(""), id);
    schedule(F(d));
}

/* 1 if the param text has the word w. */
static int has_word(const char *text, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = text; p && *p;) {
        p += strspn(p, " \t");
        if (!strncmp(p, w, n) && (!p[n] || p[n] == ' ' || p[n] == '\t')) return 1;
        p += strcspn(p, " \t");
    }
    return 0;
}

/* The wrapper's stage-in (jobscript.h) as the fake plays it, at
 * submission: each input of job, or of its members, is fetched at
 * FAKE_STAGE_BPS the first time the cluster sees it and cached after; a
 * param word "stage=bad" (or "stage=error") fails its first input as a
 * wrong checksum (a 503 of its source) does. Its lines into out; 1 when
 * the stage-in failed (the job then exits JOBSCRIPT_INPUT_FAILED at once). */
static int fake_stage(struct fake *f, const struct drv_job *job, struct strbuf *out)
{
    for (int g = 0; g < (job->group ? job->ngroup : 1); g++) {
        const struct drv_job *m = job->group ? &job->group[g] : job;
        for (int k = 0; k < m->ninputs; k++) {
            const struct input_file *in = m->inputs[k];
            if (!k && has_word(m->param, "stage=bad")) {
                sb_printf(out, JOBSCRIPT_STAGE " bad %s checksum mismatch: %s 0, expected %s\n", in->name,
                          input_sum_name(in->sum), in->digest);
                return 1;
            }
            if (!k && has_word(m->param, "stage=error")) {
                sb_printf(out, JOBSCRIPT_STAGE " error %s HTTP 503 from its source\n", in->name);
                return 1;
            }
            char key[80];
            snprintf(key, sizeof key, "%s-%s\n", input_sum_name(in->sum), in->digest);
            if (f->cached.s && strstr(f->cached.s, key)) {
                sb_printf(out, JOBSCRIPT_STAGE " cached %s %" PRId64 "\n", in->name, in->size);
                continue;
            }
            sb_puts(&f->cached, key);
            sb_printf(out, JOBSCRIPT_STAGE " fetched %s %" PRId64 " %" PRId64 "\n", in->name, in->size,
                      in->size * 1000 / FAKE_STAGE_BPS);
        }
    }
    return 0;
}

/* The job's "sleep=" and "exit=" words. */
static void read_words(const char *text, long *duration, int *exit_code)
{
    for (const char *p = text; p && *p;) {
        p += strspn(p, " \t");
        if (!strncmp(p, "sleep=", 6)) *duration = atol(p + 6);
        else if (!strncmp(p, "exit=", 5)) *exit_code = atoi(p + 5);
        p += strcspn(p, " \t");
    }
}

static int fake_submit(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                       int array, char (*ids)[DRV_ID_MAX], char *err, size_t errlen)
{
    struct fake *f = F(d);
    long cores = 1;
    for (int i = 0; i < spec->nlevels; i++) cores *= spec->levels[i].count;
    int done = 0;
    for (; done < n; done++) {
        /* an array is one call; separate jobs are one each */
        if ((done == 0 || !array) && call(d, err, errlen)) break;
        if (cores > f->cores) {
            errf(err, errlen, "job %d asks for %ld cores, the cluster has %ld", done, cores, f->cores);
            break;
        }
        const struct drv_job *job = &jobs[done];
        long duration = FAKE_DEFAULT_SLEEP;
        int code = 0;
        read_words(job->param, &duration, &code);
        for (int k = 0; k < job->nscript; k++) read_words(job->script[k], &duration, &code);
        struct fmember *members = job->ngroup > 0 ? xcalloc((size_t)job->ngroup, sizeof *members) : NULL;
        if (members) duration = 0;
        for (int k = 0; k < job->ngroup; k++) {   /* the wrapper's loop: one after the other */
            struct fmember *m = &members[k];
            *m = (struct fmember){.job_id = job->group[k].job_id, .duration = FAKE_DEFAULT_SLEEP};
            read_words(job->group[k].param, &m->duration, &m->exit_code);
            duration += m->duration;
            if (!code) code = m->exit_code;   /* the wrapper exits with the first failing status */
        }
        struct strbuf stage;
        sb_init(&stage);
        int failed = fake_stage(f, job, &stage);
        if (failed) duration = 0, code = JOBSCRIPT_INPUT_FAILED;
        struct fjob *j = add_job(f, cores, duration, drv_job_walltime(spec, job), spec->best_effort,
                                 xstrdup(job->param ? job->param : ""), ids[done]);
        j->stage = stage.len ? xstrdup(stage.s) : NULL;
        sb_free(&stage);
        j->members = failed ? (free(members), NULL) : members;   /* none started */
        j->nmembers = failed ? 0 : job->ngroup;
        j->exit_code = code;
        j->campaign = job->campaign_id;
        j->tag = jobs[0].tag;
    }
    schedule(f);
    if (done && f->lose > 0) {
        f->lose--;
        errf(err, errlen, "the fake scheduler's answer was lost (asked for by the test)");
        return 0;
    }
    return done;
}

/* Every job the fake ever had: no history to bound, so since is unused;
 * the fake runs every job as one user. */
static int fake_find(struct cluster_driver *d, int64_t campaign_id, int64_t tag, const char *user, time_t since,
                     char (*ids)[DRV_ID_MAX], int max, char *err, size_t errlen)
{
    (void)since;
    (void)user;   /* the fake has one user */
    struct fake *f = F(d);
    if (call(d, err, errlen)) return -1;
    int n = 0;
    for (long i = 0; i < f->n && n < max; i++)
        if (tag > 0 && f->jobs[i].tag == tag && f->jobs[i].campaign == campaign_id)
            snprintf(ids[n++], DRV_ID_MAX, "%ld", i + 1);
    return n;
}

static struct fjob *find(struct fake *f, const char *id)
{
    char *end;
    long i = strtol(id, &end, 10);
    return *end || i < 1 || i > f->n ? NULL : &f->jobs[i - 1];
}

int drv_fake_node_fail(struct cluster_driver *d, const char *id)
{
    struct fjob *j = find(F(d), id);
    if (!j || j->state != DRV_RUNNING) return -1;
    finish(j, F(d)->now, DRV_END_NODE_FAIL);
    schedule(F(d));
    return 0;
}

/* names are not needed: the fake never reuses an id. */
static int fake_status(struct cluster_driver *d, const char *const *ids, const char *const *names, int n,
                       struct drv_status *out, char *err, size_t errlen)
{
    (void)names;
    if (call(d, err, errlen)) return -1;
    struct fake *f = F(d);
    for (int i = 0; i < n; i++) {
        struct fjob *j = find(f, ids[i]);
        if (!j) {
            out[i] = (struct drv_status){.state = DRV_FINISHED, .end = DRV_END_UNKNOWN};
            continue;
        }
        out[i] = (struct drv_status){.state = j->state, .end = j->end, .exit_code = j->exit_code};
        if (j->start >= 0) {
            out[i].start = j->start;
            out[i].run_seconds = (j->stop >= 0 ? j->stop : f->now) - j->start;
        }
        if (j->stop >= 0) out[i].stop = j->stop;
        if (j->end != DRV_END_EXIT) out[i].exit_code = 0;
        snprintf(out[i].raw, sizeof out[i].raw, "%s", drv_end_name(j->end));
    }
    return 0;
}

static int fake_cancel(struct cluster_driver *d, const char *const *ids, int n, char *err, size_t errlen)
{
    if (call(d, err, errlen)) return -1;
    for (int i = 0; i < n; i++) {
        struct fjob *j = find(F(d), ids[i]);
        if (j && j->state != DRV_FINISHED) finish(j, F(d)->now, DRV_END_CANCELLED);
    }
    schedule(F(d));
    return 0;
}

static int fake_resources(struct cluster_driver *d, struct drv_resources *out, char *err, size_t errlen)
{
    if (call(d, err, errlen)) return -1;
    struct fake *f = F(d);
    out->total_cores = f->cores;
    out->free_cores = f->cores - used_cores(f);
    for (long i = 0; i < f->n; i++) {
        if (f->jobs[i].state == DRV_WAITING) out->waiting_jobs++;
        if (f->jobs[i].state == DRV_RUNNING) out->running_jobs++;
    }
    return 0;
}

/* A grouped job's stdout so far: the wrapper's markers (jobscript.h) of
 * the params started and ended by the job's end, or now. A job killed
 * (walltime, preemption, cancel, node failure) leaves the param it
 * interrupted without an end marker and the later ones without any. */
static void group_stdout(const struct fake *f, const struct fjob *j, struct strbuf *out)
{
    if (j->start < 0) return;
    long until = j->stop >= 0 ? j->stop : f->now;
    int killed = j->state == DRV_FINISHED && j->end != DRV_END_SUCCESS && j->end != DRV_END_EXIT;
    long t = j->start;
    for (int k = 0; k < j->nmembers; k++) {
        const struct fmember *m = &j->members[k];
        if (killed ? t >= until : t > until) break;
        sb_printf(out, JOBSCRIPT_MARK " start %" PRId64 " %ld\n", m->job_id, t);
        t += m->duration;
        if (killed ? t >= until : t > until) break;
        sb_printf(out, JOBSCRIPT_MARK " end %" PRId64 " %d %ld\n", m->job_id, m->exit_code, t);
    }
}

static int fake_tail(struct cluster_driver *d, const char *id, enum drv_stream which, size_t max_bytes,
                     struct strbuf *out, char *err, size_t errlen)
{
    if (call(d, err, errlen)) return -1;
    struct fjob *j = find(F(d), id);
    if (!j) {
        errf(err, errlen, "job %s is not known to the scheduler", id);
        return -1;
    }
    if (which != DRV_STDOUT) return 0;
    struct strbuf text;
    sb_init(&text);
    if (j->stage) sb_puts(&text, j->stage);
    if (j->members) group_stdout(F(d), j, &text);
    else sb_puts(&text, j->out);
    sb_puts(out, text.s + (text.len > max_bytes ? text.len - max_bytes : 0));
    sb_free(&text);
    return 0;
}

static void fake_close(struct cluster_driver *d)
{
    struct fake *f = F(d);
    for (long i = 0; i < f->n; i++) {
        free(f->jobs[i].out);
        free(f->jobs[i].stage);
        free(f->jobs[i].members);
    }
    free(f->jobs);
    sb_free(&f->cached);
    free(f);
}

static const struct cluster_driver_ops fake_ops = {
    .kind = "fake",
    .submit = fake_submit,
    .status = fake_status,
    .cancel = fake_cancel,
    .resources = fake_resources,
    .tail = fake_tail,
    .find = fake_find,
    .close = fake_close,
};

int drv_fake_init(struct cluster_driver *d, char *err, size_t errlen)
{
    struct fake *f = xcalloc(1, sizeof *f);
    f->cores = FAKE_DEFAULT_CORES;
    sb_init(&f->cached);
    d->impl = f;
    d->ops = &fake_ops;
    return 0;
}
