/* purger.c - the purge thread: each hour, what ended long enough ago goes
 * to the archive (store/purge.h), on a store connection of its own. A
 * thread of its own, as a first purge of a large store takes minutes that
 * the maintenance thread's timeouts cannot wait; its steps are short
 * transactions, so the writer waits for one at most. */
#include "core/log.h"
#include "server/server.h"
#include "store/purge.h"
#include <time.h>

#define PURGE_PERIOD_S 3600   /* how often; rows go days after their end, so an hour late is nothing */
#define PURGE_FIRST_S 60      /* the first, once start-up's own work is done */

static void purge_once(struct server *s)
{
    struct purge_cut cut;
    purge_cut_of(&s->proj, s->clock(), &cut);
    char err[512];
    struct store *st = store_open(s->db_path, 0, err, sizeof err);
    if (!st) {
        log_error("purge: %s", err);
        return;
    }
    struct purge_result r;
    int rc = purge_run(&s->proj, st, &cut, 0, &r, err, sizeof err);
    store_close(st);
    if (r.jobs || r.hosts || r.files)
        log_info("purged %lld jobs (%lld instances), %lld hosts to archive/, %lld files (%lld bytes)",
                 (long long)r.jobs, (long long)r.instances, (long long)r.hosts, (long long)r.files,
                 (long long)r.file_bytes);
    if (rc) log_error("purge: %s", err);
}

void *purger_main(void *arg)
{
    struct server *s = arg;
    int64_t next = s->clock() + PURGE_FIRST_S;
    while (!s->stopping) {
        if (s->clock() >= next) {
            purge_once(s);
            next = s->clock() + PURGE_PERIOD_S;
        }
        struct timespec ts = {1, 0};   /* a second: server_stop waits for no longer */
        nanosleep(&ts, NULL);
    }
    return NULL;
}
