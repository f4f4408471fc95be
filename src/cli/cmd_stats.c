/* cmd_stats.c - `locus stats export DIR [--out FOLDER]`: the statistics
 * export (store/stats_export.h) made now, as locusd makes it every
 * stats_export_hours, into PROJECT/stats or FOLDER. Reads the store
 * read-only, so it never blocks the running server. */
#include "cli/cli.h"
#include "store/stats_export.h"
#include <stdio.h>
#include <time.h>

int cmd_stats_export(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[1], *out = NULL;
    struct cli_opt opts[] = {
        {"out", OPT_STR, &out, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    if (rc) return rc;
    struct cli_project cp;
    struct stats_export_counts n;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (!rc && stats_export_project(&cp.p, cp.s, out, (int64_t)time(NULL), NULL, NULL, &n, err, errlen)) rc = CLI_FAIL;
    if (!rc) {
        char dir[PROJECT_PATH_MAX + 16];
        project_path(&cp.p, dir, sizeof dir, STATS_EXPORT_DIR);
        printf("exported %lld users, %lld hosts, %lld teams (%.2f credit) to %s\n", (long long)n.users,
               (long long)n.hosts, (long long)n.teams, n.total_credit, out ? out : dir);
    }
    cli_close(&cp);
    return rc;
}
