/* workgen.c - on-demand work generation in locusd. For a cursor batch whose
 * jobs are generated, the maintenance pass asks for the next jobs of each
 * cursor short of its cushion, and the generator thread runs
 * <cursor_work_generator> BATCH FIRST LAST, which makes them with `locus
 * batch add-jobs`. For locality scheduling, the project's
 * locality_scheduling/ folder:
 *   need_work/X          touched when a host holding X found no work for it;
 *                        the project's generator removes it once it made work
 *   no_work_available/X  the project says no more work can be made for X
 *   generator_failed/X   locusd says the generator's last run for X failed
 *                        (its exit status and when); removed once one succeeds
 *   file_working_set/X   the working set, mirrored for the project to read
 *   files_no_work/X      files that have no sendable job
 * An RPC that raised need_work waits here, its connection suspended, until
 * work for one of its files is loaded or the wait period is over. The
 * generator thread runs <locality_work_generator> FILE for each trigger. */
#include "server/workgen.h"
#include "core/fsutil.h"
#include "sched/cursor.h"
#include "core/log.h"
#include "core/run.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "server/server.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct waiter {
    int64_t deadline;
    char **files;               /* owned */
    int nfiles;
    void (*wake)(void *arg);
    void *arg;
    struct waiter *next;
};

struct workgen {
    struct server *s;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct waiter *waiters;
    int poked, stopping, stopped;
    int64_t last_sync;          /* server clock of the last folder sync */
    struct smap queued;         /* file names waiting for the generator (values unused) */
    char **queue;
    int nqueue;
    int64_t *cq;                /* ids of cursors waiting for the generator (their wants are taken again
                                 * when it runs) */
    int ncq, capcq;
    struct imap cqueued;        /* ids of cursors queued or being generated for (values unused) */
    int warned;                 /* that cursors want jobs and no generator is configured */
    pthread_t waiter_thread, generator_thread;
};

static void dir_path(const struct server *s, char *out, size_t len, const char *sub, const char *name)
{
    if (name) snprintf(out, len, "%s/locality_scheduling/%s/%s", s->proj.dir, sub, name);
    else snprintf(out, len, "%s/locality_scheduling/%s", s->proj.dir, sub);
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) close(fd);
}

/* ---- waiting RPCs ---- */

static void waiter_free(struct waiter *w)
{
    for (int i = 0; i < w->nfiles; i++) free(w->files[i]);
    free(w->files);
    free(w);
}

/* 1 if the wait is over (server lock held): time is up, or one of its
 * files has work now, or the project said it can make none, or its
 * generator failed. */
static int waiter_ready(struct server *s, const struct waiter *w, int64_t now)
{
    if (now >= w->deadline) return 1;
    for (int i = 0; i < w->nfiles; i++) {
        struct lfile *f = locality_file(&s->idx.loc, w->files[i]);
        if (f && (f->sendable.count || f->no_more_work || f->generator_failed)) return 1;
    }
    return 0;
}

static void *waiter_main(void *arg)
{
    struct workgen *g = arg;
    struct server *s = g->s;
    pthread_mutex_lock(&g->mu);
    while (!g->stopping) {
        if (!g->waiters) {
            pthread_cond_wait(&g->cv, &g->mu);
        } else if (!g->poked) {
            /* wake at the next second: deadlines are in whole seconds */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            pthread_cond_timedwait(&g->cv, &g->mu, &ts);
        }
        g->poked = 0;
        struct waiter *all = g->waiters, *keep = NULL, *ready = NULL;
        g->waiters = NULL;
        pthread_mutex_unlock(&g->mu);
        pthread_mutex_lock(&s->lock);
        int64_t now = s->clock();
        while (all) {
            struct waiter *w = all;
            all = w->next;
            struct waiter **to = waiter_ready(s, w, now) || g->stopping ? &ready : &keep;
            w->next = *to;
            *to = w;
        }
        pthread_mutex_unlock(&s->lock);
        while (ready) {
            struct waiter *w = ready;
            ready = w->next;
            w->wake(w->arg);
            waiter_free(w);
        }
        pthread_mutex_lock(&g->mu);
        while (keep) {
            struct waiter *w = keep;
            keep = w->next;
            w->next = g->waiters;
            g->waiters = w;
        }
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

void workgen_wait(struct workgen *g, int64_t deadline, char *const *files, int n, void (*wake)(void *), void *arg)
{
    pthread_mutex_lock(&g->mu);
    int stopping = g->stopping;
    pthread_mutex_unlock(&g->mu);
    if (stopping) return wake(arg);
    struct waiter *w = xcalloc(1, sizeof *w);
    w->deadline = deadline;
    w->files = xmalloc((size_t)(n ? n : 1) * sizeof *w->files);
    for (int i = 0; i < n; i++) w->files[i] = xstrdup(files[i]);
    w->nfiles = n;
    w->wake = wake;
    w->arg = arg;
    pthread_mutex_lock(&g->mu);
    w->next = g->waiters;
    g->waiters = w;
    g->poked = 1;   /* it may be ready already */
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

void workgen_poke(struct workgen *g)
{
    pthread_mutex_lock(&g->mu);
    g->poked = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* ---- triggers and the generator ---- */

void workgen_need_work(struct workgen *g, char *const *files, int n)
{
    struct server *s = g->s;
    for (int i = 0; i < n; i++) {
        if (!name_is_safe(files[i])) continue;
        char path[PROJECT_PATH_MAX + 300];
        dir_path(s, path, sizeof path, "need_work", files[i]);
        touch(path);
        log_debug(LT_SCHED, "need_work %s", files[i]);
        if (!server_cfg(s)->locality_generator[0]) continue;
        pthread_mutex_lock(&g->mu);
        if (!smap_get(&g->queued, files[i])) {
            smap_put(&g->queued, files[i], g);
            strlist_add(&g->queue, &g->nqueue, files[i]);
            pthread_cond_broadcast(&g->cv);
        }
        pthread_mutex_unlock(&g->mu);
    }
}

void workgen_cursors(struct workgen *g, const struct cursor_gen *wants, int n)
{
    if (!n) return;
    if (!server_cfg(g->s)->cursor_generator[0]) {
        if (!g->warned) log_warn("cursor batch %s has jobs to generate but config.xml has no <cursor_work_generator>",
                                 wants[0].batch);
        g->warned = 1;
        return;
    }
    pthread_mutex_lock(&g->mu);
    for (int i = 0; i < n; i++) {
        if (imap_get(&g->cqueued, wants[i].cursor_id)) continue;
        imap_put(&g->cqueued, wants[i].cursor_id, g);
        VEC_GROW(g->cq, g->ncq, g->capcq);
        g->cq[g->ncq++] = wants[i].cursor_id;
    }
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Loads what a generator made now, not at the next maintenance pass, and
 * wakes the requests waiting for it. */
static void load_made(struct workgen *g)
{
    char err[512];
    if (server_refresh(g->s, err, sizeof err)) log_error("refresh: %s", err);
    workgen_poke(g);
}

/* <locality_work_generator> FILE, for a need_work trigger. */
static void generate_for_file(struct workgen *g, const char *name)
{
    struct server *s = g->s;
    char v_dir[PROJECT_PATH_MAX + 32], v_file[300];
    snprintf(v_dir, sizeof v_dir, "LOCUS_PROJECT_DIR=%s", s->proj.dir);
    snprintf(v_file, sizeof v_file, "LOCUS_FILE=%s", name);
    const char *env[] = {v_dir, v_file, NULL};
    const char *args[] = {name, NULL};
    const struct project_config *c = server_cfg(s);
    int rc = run_command(c->locality_generator, "locus-work-generator", args, s->proj.dir, env, HOOK_MS(c));
    char path[PROJECT_PATH_MAX + 300];
    dir_path(s, path, sizeof path, "generator_failed", name);
    pthread_mutex_lock(&s->lock);
    locality_set_generator_failed(&s->idx.loc, name, rc != 0);
    pthread_mutex_unlock(&s->lock);
    if (rc) {
        /* said where people look (locus stat reads the folder), and the
         * waiting hosts answered now: they keep the file and ask again */
        char how[64] = "it could not run, was killed or ran out of time";
        if (rc > 0) snprintf(how, sizeof how, "exit %d", rc);
        log_warn("work generator for %s failed (%s): hosts keep %s and ask again; "
                 "locality_scheduling/generator_failed/%s stays until a run succeeds",
                 name, how, name, name);
        FILE *fp = fopen(path, "w");
        if (fp) {
            fprintf(fp, "%d %lld\n", rc, (long long)s->clock());
            fclose(fp);
        }
        workgen_poke(g);
        return;
    }
    unlink(path);
    dir_path(s, path, sizeof path, "need_work", name);
    unlink(path);
    /* it may have said it can make no more: waiting requests need not wait */
    dir_path(s, path, sizeof path, "no_work_available", name);
    int none = access(path, F_OK) == 0;
    if (none) {
        pthread_mutex_lock(&s->lock);
        locality_set_no_more_work(&s->idx.loc, name, 1);
        pthread_mutex_unlock(&s->lock);
    }
    log_debug(LT_SCHED, "work generator for %s: done%s", name, none ? " (no more work)" : "");
    load_made(g);
}

/* <cursor_work_generator> BATCH FIRST LAST, for a cursor short of jobs:
 * its wants of now, as a run just before may have made some. */
static void generate_for_cursor(struct workgen *g, int64_t cursor_id)
{
    struct server *s = g->s;
    struct cursor_gen want;
    pthread_mutex_lock(&s->lock);
    int wanted = cursor_want(&s->idx, cursor_id, (int)server_cfg(s)->cursor_cushion, &want);
    pthread_mutex_unlock(&s->lock);
    if (!wanted) return;
    char v_dir[PROJECT_PATH_MAX + 32], v_batch[160], v_cur[48], v_first[48], v_last[48], first[24], last[24];
    snprintf(v_dir, sizeof v_dir, "LOCUS_PROJECT_DIR=%s", s->proj.dir);
    snprintf(v_batch, sizeof v_batch, "LOCUS_BATCH=%s", want.batch);
    snprintf(v_cur, sizeof v_cur, "LOCUS_CURSOR=%lld", (long long)want.cursor_id);
    snprintf(first, sizeof first, "%lld", (long long)want.first);
    snprintf(last, sizeof last, "%lld", (long long)want.last);
    snprintf(v_first, sizeof v_first, "LOCUS_FIRST=%s", first);
    snprintf(v_last, sizeof v_last, "LOCUS_LAST=%s", last);
    const char *env[] = {v_dir, v_batch, v_cur, v_first, v_last, NULL};
    const char *args[] = {want.batch, first, last, NULL};
    const struct project_config *c = server_cfg(s);
    int rc = run_command(c->cursor_generator, "locus-cursor-generator", args, s->proj.dir, env, HOOK_MS(c));
    if (rc) {
        log_warn("cursor generator for batch %s, jobs %s-%s, failed (exit %d); asked again at the next pass", want.batch,
                 first, last, rc);
        return;
    }
    log_debug(LT_SCHED, "cursor generator for batch %s, jobs %s-%s: done", want.batch, first, last);
    load_made(g);
}

static void *generator_main(void *arg)
{
    struct workgen *g = arg;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        while (!g->nqueue && !g->ncq && !g->stopping) pthread_cond_wait(&g->cv, &g->mu);
        if (g->stopping) break;
        if (g->nqueue) {   /* a host may be waiting on a file's trigger: those first */
            char *name = g->queue[0];
            memmove(g->queue, g->queue + 1, (size_t)--g->nqueue * sizeof *g->queue);
            pthread_mutex_unlock(&g->mu);
            generate_for_file(g, name);
            pthread_mutex_lock(&g->mu);
            smap_del(&g->queued, name);
            free(name);
        } else {
            int64_t id = g->cq[0];
            memmove(g->cq, g->cq + 1, (size_t)--g->ncq * sizeof *g->cq);
            pthread_mutex_unlock(&g->mu);
            generate_for_cursor(g, id);
            pthread_mutex_lock(&g->mu);
            imap_del(&g->cqueued, id);
        }
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* ---- the folder ---- */

/* Makes DIR hold exactly the entries of names (n of them). */
static void mirror(const struct server *s, const char *sub, char **names, int n)
{
    char dir[PROJECT_PATH_MAX + 64];
    dir_path(s, dir, sizeof dir, sub, NULL);
    struct smap want;
    smap_init(&want);
    for (int i = 0; i < n; i++) smap_put(&want, names[i], &want);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            if (smap_del(&want, e->d_name)) continue;   /* there and wanted */
            char path[PROJECT_PATH_MAX + 400];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    size_t it = 0;
    const char *name;
    while (smap_next(&want, &it, &name, NULL)) {
        if (!name_is_safe(name)) continue;
        char path[PROJECT_PATH_MAX + 400];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        touch(path);
    }
    smap_free(&want);
}

/* The folder is for people and project scripts: every few seconds is enough,
 * and a big working set makes each sync a few thousand file operations. */
#define SYNC_PERIOD 10

void workgen_sync(struct workgen *g)
{
    struct server *s = g->s;
    int64_t now = s->clock();
    if (now - g->last_sync < SYNC_PERIOD) return;
    g->last_sync = now;
    /* the project's word first: what it cannot make work for */
    char **nowork = NULL;
    int nnowork = 0;
    char dir[PROJECT_PATH_MAX + 64];
    dir_path(s, dir, sizeof dir, "no_work_available", NULL);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') strlist_add(&nowork, &nnowork, e->d_name);
        closedir(d);
    }
    char **ws = NULL, **empty = NULL;
    int nws = 0, nempty = 0;
    pthread_mutex_lock(&s->lock);
    struct locality *l = &s->idx.loc;
    locality_maintain(l, s->clock());
    struct smap flagged;
    smap_init(&flagged);
    for (int i = 0; i < nnowork; i++) smap_put(&flagged, nowork[i], &flagged);
    for (size_t i = 0; i < l->nfiles; i++) {
        struct lfile *f = l->files[i];
        if (!f) continue;
        f->no_more_work = smap_get(&flagged, f->name) != NULL;
        if (f->files_no_work && !f->sendable.count) strlist_add(&empty, &nempty, f->name);
    }
    size_t n;
    struct lfile *const *set = locality_working_set(l, &n);
    for (size_t i = 0; i < n; i++) strlist_add(&ws, &nws, set[i]->name);
    pthread_mutex_unlock(&s->lock);
    smap_free(&flagged);
    mirror(s, "file_working_set", ws, nws);
    mirror(s, "files_no_work", empty, nempty);
    strlist_free(ws, nws);
    strlist_free(empty, nempty);
    strlist_free(nowork, nnowork);
}

/* ---- life ---- */

struct workgen *workgen_start(struct server *s, char *err, size_t errlen)
{
    static const char *const subs[] = {"need_work", "no_work_available", "generator_failed", "file_working_set",
                                       "files_no_work"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        char dir[PROJECT_PATH_MAX + 64];
        dir_path(s, dir, sizeof dir, subs[i], NULL);
        if (mkdir_p(dir, 0755)) {
            snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
            return NULL;
        }
    }
    struct workgen *g = xcalloc(1, sizeof *g);
    g->s = s;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    smap_init(&g->queued);
    imap_init(&g->cqueued);
    if (pthread_create(&g->waiter_thread, NULL, waiter_main, g)) {
        snprintf(err, errlen, "cannot start the work generation threads");
        free(g);
        return NULL;
    }
    if (pthread_create(&g->generator_thread, NULL, generator_main, g)) {
        snprintf(err, errlen, "cannot start the work generation threads");
        g->stopping = 1;
        pthread_cond_broadcast(&g->cv);
        pthread_join(g->waiter_thread, NULL);
        free(g);
        return NULL;
    }
    return g;
}

void workgen_shutdown(struct workgen *g)
{
    if (!g || g->stopped) return;
    pthread_mutex_lock(&g->mu);
    g->stopping = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->waiter_thread, NULL);
    pthread_join(g->generator_thread, NULL);
    g->stopped = 1;
    pthread_mutex_lock(&g->mu);
    struct waiter *w = g->waiters;
    g->waiters = NULL;
    pthread_mutex_unlock(&g->mu);
    while (w) {   /* their connections finish with what they have */
        struct waiter *next = w->next;
        w->wake(w->arg);
        waiter_free(w);
        w = next;
    }
}

void workgen_free(struct workgen *g)
{
    if (!g) return;
    workgen_shutdown(g);
    strlist_free(g->queue, g->nqueue);
    smap_free(&g->queued);
    free(g->cq);
    imap_free(&g->cqueued);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    free(g);
}
