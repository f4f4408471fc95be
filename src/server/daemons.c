/* daemons.c - the maintenance thread: instance timeouts (the transitioner's
 * clock-driven half; the rest happens as reports arrive), batch completion,
 * picking up new batches and cancellations, and rebuilding memory from the
 * store if a commit ever failed. */
#include "core/log.h"
#include "server/server.h"
#include <time.h>
#include <unistd.h>

static void on_job_event(void *ctx, struct sjob *j, int events) { server_job_events(ctx, j, events); }

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

void *maintenance_main(void *arg)
{
    struct server *s = arg;
    double period = s->proj.cfg.transition_period;
    while (!s->stopping) {
        char err[512];
        if (writer_failed(s->writer)) {
            log_warn("a commit failed: rebuilding the scheduling index from the store");
            if (server_rebuild(s, err, sizeof err)) log_error("rebuild: %s", err);
        }
        struct change_log log;
        change_log_init(&log);
        pthread_mutex_lock(&s->lock);
        int64_t now = s->clock();
        int n = index_timeouts(&s->idx, now, &log, on_job_event, s);
        index_reap_batches(&s->idx, now, &log);
        if (log.n) writer_submit(s->writer, &log);
        pthread_mutex_unlock(&s->lock);
        change_log_free(&log);
        if (n) log_debug(LT_TRANS, "%d instances timed out", n);
        if (server_refresh(s, err, sizeof err)) log_error("refresh: %s", err);
        sleep_seconds(period);
    }
    return NULL;
}
