/* exporter.c - the statistics export thread: every stats_export_hours
 * (read at each turn, so a reload changes it; 0 off) it writes PROJECT/stats
 * (store/stats_export.h) from a read-only store connection of its own: the
 * export reads one snapshot for as long as it takes, holding up neither
 * the writer nor the RPCs. The first export is due one period after the
 * last one on disk, or soon after start where there is none. */
#include "core/clock.h"
#include "core/log.h"
#include "server/server.h"
#include "store/stats_export.h"
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#define EXPORT_FIRST_S 60   /* the first, once start-up's own work is done (sooner if the period is) */

/* locusd stops between two rows, not after the whole export */
static int server_stopping(void *ctx) { return ((struct server *)ctx)->stopping; }

/* When the export on disk was made (its tables.xml is written last); 0 if there is none. */
static int64_t last_export(const struct server *s)
{
    char path[PROJECT_PATH_MAX + 32];
    project_path(&s->proj, path, sizeof path, STATS_EXPORT_DIR "/tables.xml");
    struct stat st;
    return stat(path, &st) ? 0 : (int64_t)st.st_mtime;
}

static void export_once(struct server *s)
{
    char err[512];
    struct store *st = store_open(s->db_path, STORE_READONLY, err, sizeof err);
    if (!st) {
        log_error("stats export: %s", err);
        return;
    }
    struct stats_export_counts n;
    int64_t t0 = monotonic_ns();
    int rc = stats_export_project(&s->proj, st, NULL, s->clock(), server_stopping, s, &n, err, sizeof err);
    store_close(st);
    if (rc) {
        if (!s->stopping) log_error("stats export: %s", err);
        return;
    }
    log_info("stats export: %lld users, %lld hosts, %lld teams in %.1f s", (long long)n.users, (long long)n.hosts,
             (long long)n.teams, (double)(monotonic_ns() - t0) / NS_PER_S);
}

void *exporter_main(void *arg)
{
    struct server *s = arg;
    int64_t last = last_export(s), started = s->clock();
    while (!s->stopping) {
        double hours = server_cfg(s)->stats_export_hours;
        int64_t period = (int64_t)(hours * 3600) > 0 ? (int64_t)(hours * 3600) : 1;
        int64_t due = last ? last + period : started + (period < EXPORT_FIRST_S ? period : EXPORT_FIRST_S);
        if (hours > 0 && s->clock() >= due) {
            export_once(s);
            last = s->clock();   /* a failed export is tried again a period later, as a made one */
        }
        struct timespec ts = {1, 0};   /* a second: server_stop waits for no longer */
        nanosleep(&ts, NULL);
    }
    return NULL;
}
