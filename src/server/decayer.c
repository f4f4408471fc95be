/* decayer.c - the credit decay thread: each hour, the recent-average
 * credit of every user, host and team is decayed to now
 * (store_credit_decay), as BOINC's update_stats daemon does. The store
 * keeps each average as of its last credit and the leaderboards by recent
 * credit read the index of the stored averages: without this, a volunteer
 * who stopped a month ago ranked above one computing now. Decayed, the
 * order is right to within DECAY_PERIOD_S (the values shown are decayed to
 * the moment shown, credit_average_at). In steps of DECAY_STEP_ROWS rows,
 * each a short transaction that the writer runs between its groups
 * (writer_run_credit, which also drops the averages it keeps), as the
 * purger's steps: RPCs wait for one step at most. */
#include "core/log.h"
#include "server/server.h"
#include "server/writer.h"
#include "store/store_site.h"
#include <stdio.h>
#include <time.h>

#define DECAY_PERIOD_S 3600   /* the leaderboards' order is right to within this */
#define DECAY_FIRST_S 60      /* the first, once start-up's own work is done */
#define DECAY_STEP_ROWS 1000  /* rows per transaction: a few milliseconds of the writer */

struct decay_step {
    enum board_kind kind;
    int64_t after, last, now;
    char err[256];               /* why a step failed (the writer's store's error) */
};

/* A step in the writer's thread, on its store: a transaction of its own. */
static int decay_step(struct store *st, void *arg)
{
    struct decay_step *d = arg;
    if (!store_begin(st) && !store_credit_decay(st, d->kind, d->after, DECAY_STEP_ROWS, d->now, &d->last) &&
        !store_commit(st))
        return 0;
    snprintf(d->err, sizeof d->err, "%s", store_error(st));
    store_rollback(st);
    return -1;
}

/* Every user's, host's and team's average, to now; stops between two
 * steps when locusd stops. 0, or -1 (logged). */
static int decay_all(struct server *s)
{
    static const enum board_kind kinds[] = {BOARD_USERS, BOARD_HOSTS, BOARD_TEAMS};
    int64_t now = s->clock();
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        struct decay_step d = {kinds[k], 0, 0, now, ""};
        do {
            if (s->stopping) return 0;
            if (writer_run_credit(s->writer, decay_step, &d)) {
                log_error("credit decay: %s", d.err);
                return -1;
            }
            d.after = d.last;
        } while (d.last);
    }
    return 0;
}

void *decayer_main(void *arg)
{
    struct server *s = arg;
    int64_t next = s->clock() + DECAY_FIRST_S;
    while (!s->stopping) {
        if (s->clock() >= next) {
            decay_all(s);   /* a failed turn is tried again a period later */
            next = s->clock() + DECAY_PERIOD_S;
        }
        struct timespec ts = {1, 0};   /* a second: server_stop waits for no longer */
        nanosleep(&ts, NULL);
    }
    return NULL;
}
