/* purger.c - the purge thread: each hour (sooner for short waits), what ended long enough ago goes
 * to the archive (store/purge.h), on a store connection of its own. A
 * thread of its own, as a first purge of a large store takes minutes that
 * the maintenance thread's timeouts cannot wait. It reads on its own
 * connection, and its steps, short transactions, are written by the writer
 * between its groups (writer_run): contending for SQLite's lock, the side
 * asleep in its busy wait loses, and RPCs waited on purging for seconds. */
#include "core/clock.h"
#include "core/log.h"
#include "server/metrics.h"
#include "server/server.h"
#include "server/writer.h"
#include "store/purge.h"
#include <stdio.h>
#include <time.h>

#define PURGE_FIRST_S 60   /* the first, once start-up's own work is done (sooner if the period is) */

static int run_in_writer(void *ctx, int (*step)(struct store *st, void *arg), void *arg)
{
    return writer_run(((struct server *)ctx)->writer, step, arg);
}

/* locusd stops between two steps, not after the whole purge */
static int server_stopping(void *ctx) { return ((struct server *)ctx)->stopping; }

/* p: the project's folder with the settings now (a reload may change them). */
static void purge_once(struct server *s, const struct project *p)
{
    struct purge_cut cut;
    purge_cut_of(p, s->clock(), &cut);
    char err[512];
    struct store *st = store_open(s->db_path, 0, err, sizeof err);
    if (!st) {
        log_error("purge: %s", err);
        metrics_purge(s->metrics, &(struct purge_result){0}, 1, 0);
        return;
    }
    struct purge_result r;
    struct purge_writer w = {run_in_writer, server_stopping, s};
    int64_t t0 = monotonic_ns();
    int rc = purge_run(p, st, &w, &cut, 0, &r, err, sizeof err);
    store_close(st);
    metrics_purge(s->metrics, &r, rc != 0, (double)(monotonic_ns() - t0) / NS_PER_S);
    if (r.jobs || r.hosts || r.files)
        log_info("purged %lld jobs (%lld instances), %lld hosts to archive/, %lld files (%lld bytes)",
                 (long long)r.jobs, (long long)r.instances, (long long)r.hosts, (long long)r.files,
                 (long long)r.file_bytes);
    if (rc) log_error("purge: %s", err);
}

void *purger_main(void *arg)
{
    struct server *s = arg;
    int64_t first = purge_period(&s->proj);
    int64_t next = s->clock() + (first < PURGE_FIRST_S ? first : PURGE_FIRST_S);
    while (!s->stopping) {
        if (s->clock() >= next) {
            struct project p = {.cfg = *server_cfg(s)};
            snprintf(p.dir, sizeof p.dir, "%s", s->proj.dir);
            purge_once(s, &p);
            next = s->clock() + purge_period(&p);
        }
        struct timespec ts = {1, 0};   /* a second: server_stop waits for no longer */
        nanosleep(&ts, NULL);
    }
    return NULL;
}
