/* daemons.c - the maintenance thread: instance timeouts (the transitioner's
 * clock-driven half; the rest happens as reports arrive), batch completion,
 * picking up new batches and cancellations, comparing twin sequences
 * (twins.c), deleting the uploads of ended jobs (never while a backup copies
 * the project: core/project.h's backup lock), and rebuilding memory from
 * the store if a commit ever failed. */
#include "core/log.h"
#include "store/store.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/rpc.h"
#include "server/server.h"
#include <time.h>
#include <unistd.h>

/* Deletes the uploaded files of jobs that ended, and the restart states
 * of work sequences newer ones superseded once their jobs ended, after
 * those ends are committed: before that, a crash would bring the jobs
 * back needing them. */
static void delete_outputs(struct server *s)
{
    /* a backup copying the project holds it: the ends wait in the index */
    int lock = project_backup_lock(&s->proj, 0, 1);
    if (lock < 0) {
        if (errno != EWOULDBLOCK) log_warn("file deleter: cannot take the backup lock: %s", strerror(errno));
        return;
    }
    int n, nstates;
    pthread_mutex_lock(&s->lock);
    struct ended_job *e = index_take_ended(&s->idx, &n);
    struct superseded_state *states = sequence_take_superseded(&s->idx, &nstates);
    pthread_mutex_unlock(&s->lock);
    if (!n && !nstates) {
        free(e);
        free(states);
        close(lock);
        return;
    }
    /* Waiting for a ticket after theirs says their groups are settled, not
     * that they committed: an empty group succeeds even after one of theirs
     * failed. Any failure since the last rebuild (which emptied the list
     * and cleared the flag; only this thread clears it) may hold such an
     * end, so the files are then kept (the start-up sweep removes them). */
    struct change_log none;
    change_log_init(&none);
    if (writer_wait(s->writer, writer_submit(s->writer, &none)) || writer_failed(s->writer)) {
        log_warn("file deleter: a commit failed; keeping the outputs of %d ended jobs and %d superseded states", n,
                 nstates);
        free(e);
        free(states);
        close(lock);
        return;
    }
    int deleted = 0;
    for (int i = 0; i < nstates; i++) {
        char path[PROJECT_PATH_MAX + 310];
        project_file_path(&s->proj, path, sizeof path, "upload", states[i].name);
        deleted += unlink(path) == 0;
    }
    free(states);
    for (int i = 0; i < n; i++) {
        for (int seq = 0; seq < e[i].nseq; seq++) {
            for (int k = 0; k < e[i].noutputs; k++) {
                char name[INSTANCE_NAME_MAX + 16], path[PROJECT_PATH_MAX + INSTANCE_NAME_MAX + 32];
                snprintf(name, sizeof name, "%s%d_%d", e[i].stem, seq, k);
                project_file_path(&s->proj, path, sizeof path, "upload", name);
                deleted += unlink(path) == 0;
                strcat(path, ".part");
                deleted += unlink(path) == 0;
            }
        }
    }
    log_debug(LT_VALID, "file deleter: %d uploaded files of %d ended jobs and %d superseded states deleted", deleted,
              n, nstates);
    free(e);
    close(lock);
}

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* 1 if NAME (an upload, maybe partial) belongs to an instance of a job
 * that is no longer live; files that are no upload of ours are kept, and
 * so is the state file that is its work sequence's restart point (or
 * final state); the others of ended jobs were superseded. */
static int orphan_upload(struct server *s, const char *name)
{
    char base[256], inst[256];
    size_t n = strlen(name);
    if (n >= sizeof base) return 0;
    memcpy(base, name, n + 1);
    if (n > 5 && !strcmp(base + n - 5, ".part")) base[n - 5] = 0;
    int k, seq;
    int64_t job_id;
    if (output_parse_name(base, inst, sizeof inst, &k) || instance_parse_name(inst, &job_id, &seq)) return 0;
    pthread_mutex_lock(&s->lock);
    int live = index_job(&s->idx, job_id) != NULL;
    pthread_mutex_unlock(&s->lock);
    if (live) return 0;
    struct job_spec spec;
    struct batch b;
    struct sequence_rec q;
    struct store *st = server_reader(s);
    if (!st || store_job_spec(st, job_id, &spec)) return 1;
    if (!spec.sequence_id || store_batch_get(st, spec.batch_id, &b) || k != b.noutputs) return 1;
    return store_sequence_get(st, spec.sequence_id, &q) || strcmp(base, q.restart_file) != 0;
}

/* At start: a crash between a job's end and the deleter's pass leaves its
 * uploads behind, and only this finds them again. */
static void sweep_orphan_uploads(struct server *s)
{
    int lock = project_backup_lock(&s->proj, 0, 1);
    if (lock < 0) {
        log_warn("a backup is running (or its lock cannot be taken: %s): uploads of jobs ended before the restart "
                 "are kept", strerror(errno));
        return;
    }
    char root[PROJECT_PATH_MAX + 16];
    project_path(&s->proj, root, sizeof root, "upload");
    int deleted = 0;
    for (int b = 0; b < 256 && !s->stopping; b++) {
        char dir[PROJECT_PATH_MAX + 32];
        snprintf(dir, sizeof dir, "%s/%02x", root, b);
        DIR *d = opendir(dir);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.' || !orphan_upload(s, e->d_name)) continue;
            char path[PROJECT_PATH_MAX + 300];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            deleted += unlink(path) == 0;
        }
        closedir(d);
    }
    close(lock);
    if (deleted) log_info("deleted %d uploaded files of jobs that ended before a restart", deleted);
}

#define HOST_CACHE_IDLE_S 86400     /* a host silent this long leaves the host cache */
#define HOST_CACHE_SWEEP_S 3600     /* how often the cache is swept */

void *maintenance_main(void *arg)
{
    struct server *s = arg;
    int64_t next_host_sweep = 0;
    sweep_orphan_uploads(s);
    while (!s->stopping) {
        char err[512];
        if (writer_failed(s->writer)) {
            log_warn("a commit failed: rebuilding the scheduling index from the store");
            if (server_rebuild(s, err, sizeof err)) log_error("rebuild: %s", err);
        }
        struct change_log log;
        change_log_init(&log);
        pthread_mutex_lock(&s->lock);
        const struct project_config *cfg = server_cfg(s);   /* a reload publishes under the lock */
        int64_t now = s->clock();
        struct job_event_ctx ec = {s, now, &log};
        int n = index_timeouts(&s->idx, now, &log, server_on_job_event, &ec);
        n += index_give_up_silent(&s->idx, now, (int64_t)cfg->host_lost_after, &log, server_on_job_event, &ec);
        index_reap_batches(&s->idx, now, &log);
        cursor_maintain(&s->idx, now, &log);
        int nwants, moved = sequence_maintain(&s->idx, now, &log);
        struct cursor_gen *wants = cursor_wants(&s->idx, (int)cfg->cursor_cushion, &nwants);
        if (log.n) writer_submit(s->writer, &log);
        pthread_mutex_unlock(&s->lock);
        change_log_free(&log);
        workgen_cursors(s->workgen, wants, nwants);
        free(wants);
        if (n) log_debug(LT_TRANS, "%d instances timed out", n);
        if (moved) log_info("%d work sequences relocated from their last restartable state", moved);
        twins_compare(s);
        delete_outputs(s);
        if (now >= next_host_sweep) {
            size_t gone = rpc_forget_silent_hosts(s, now, HOST_CACHE_IDLE_S);
            if (gone) log_debug(LT_RPC, "%zu hosts silent for a day left the host cache", gone);
            next_host_sweep = now + HOST_CACHE_SWEEP_S;
        }
        if (server_refresh(s, err, sizeof err)) log_error("refresh: %s", err);
        if (s->idx.loc.mode != LOC_OFF) workgen_sync(s->workgen);
        sleep_seconds(cfg->transition_period);
    }
    return NULL;
}
