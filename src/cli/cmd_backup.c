/* cmd_backup.c - `locus db backup DIR DEST` and `locus db restore BACKUP
 * DIR`. A backup is a copy of the project folder whose store is one
 * snapshot (SQLite's online backup: locusd goes on serving meanwhile) and
 * whose files include every file that snapshot names: the snapshot is taken
 * first, then the files copied, with the project's backup lock held so
 * that locusd deletes no upload of an ended job until the copy is over
 * (core/project.h). Files that arrive meanwhile are copied too, harmless:
 * locusd removes uploads no job needs when it starts. BACKUP_MANIFEST says
 * what the folder is. A restore copies it to a new project folder, opens
 * the store (migrating a backup of an older locus) and checks it. */
#include "cli/cli.h"
#include "core/fsutil.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BACKUP_MANIFEST "backup.txt"
#define BACKUP_MAGIC "locus backup\n"
#define STORE_FILE "locus.db"
#define SNAPSHOT_SUFFIX ".locus.db.part"   /* the snapshot, beside DEST until DEST exists */
#define MANIFEST_MAX 4096

/* What a backup leaves out: the live store and its journals (the snapshot
 * stands for them), the lock, and files half-written (an upload not yet
 * whole, a file being replaced). */
static int backup_skips(void *ctx, const char *rel, int is_dir)
{
    static const char *const live[] = {STORE_FILE, STORE_FILE "-wal", STORE_FILE "-shm", STORE_FILE "-journal",
                                       PROJECT_BACKUP_LOCK, BACKUP_MANIFEST};
    (void)ctx;
    if (is_dir) return 0;
    for (size_t i = 0; i < sizeof live / sizeof *live; i++)
        if (!strcmp(rel, live[i])) return 1;
    size_t n = strlen(rel);
    return (n > 5 && !strcmp(rel + n - 5, ".part")) || (n > 4 && !strcmp(rel + n - 4, ".tmp"));
}

static int restore_skips(void *ctx, const char *rel, int is_dir)
{
    (void)ctx;
    return !is_dir && !strcmp(rel, BACKUP_MANIFEST);
}

static int absent(const char *path, const char *what, char *err, size_t errlen)
{
    if (access(path, F_OK) == 0 || errno != ENOENT)
        return cli_errf(err, errlen, CLI_FAIL, "%s %s exists already: give a new folder", what, path);
    return 0;
}

/* The snapshot, then the files, under the backup lock. */
static int take_backup(struct cli_project *cp, const char *dest, const char *snap, struct copy_stats *st, char *err,
                       size_t errlen)
{
    int lock = project_backup_lock(&cp->p, 1, 0);
    if (lock < 0) return cli_errf(err, errlen, CLI_FAIL, "cannot take the backup lock: %s", strerror(errno));
    char failed[PROJECT_PATH_MAX + 300], to[PROJECT_PATH_MAX + 32];
    int rc = store_backup(cp->s, snap, err, errlen) ? CLI_FAIL : 0;
    if (!rc && copy_tree(cp->p.dir, dest, backup_skips, NULL, st, failed, sizeof failed))
        rc = cli_errf(err, errlen, CLI_FAIL, "cannot copy %s: %s", failed, strerror(errno));
    close(lock);
    if (!rc && (path_printf(to, sizeof to, "%s/%s", dest, STORE_FILE) || rename(snap, to) || fsync_dir_of(to)))
        rc = cli_errf(err, errlen, CLI_FAIL, "cannot put the store's snapshot in %s: %s", dest, strerror(errno));
    return rc;
}

int cmd_db_backup(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    char snap[PROJECT_PATH_MAX + 32], manifest[PROJECT_PATH_MAX + 32];
    if (rc) return rc;
    if (path_printf(snap, sizeof snap, "%s%s", pos[1], SNAPSHOT_SUFFIX) ||
        path_printf(manifest, sizeof manifest, "%s/%s", pos[1], BACKUP_MANIFEST))
        return cli_errf(err, errlen, CLI_FAIL, "backup folder name too long: %s", pos[1]);
    if ((rc = absent(pos[1], "backup folder", err, errlen)) || (rc = absent(snap, "file", err, errlen))) return rc;
    struct cli_project cp;
    if ((rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen))) {
        cli_close(&cp);
        return rc;
    }
    struct copy_stats st;
    time_t made = time(NULL);
    rc = take_backup(&cp, pos[1], snap, &st, err, errlen);
    if (!rc) {
        char text[MANIFEST_MAX];
        int n = snprintf(text, sizeof text, BACKUP_MAGIC "project %s\nmaster_url %s\nmade %lld\nschema %d\n"
                         "files %ld\nbytes %lld\n", cp.p.cfg.name, cp.p.cfg.master_url, (long long)made,
                         STORE_SCHEMA_VERSION, st.files, st.bytes);
        if (write_file_atomic_mode(manifest, text, (size_t)n, 0600))
            rc = cli_errf(err, errlen, CLI_FAIL, "cannot write %s: %s", manifest, strerror(errno));
    }
    cli_close(&cp);
    unlink(snap);
    if (rc) {
        cli_remove_tree(pos[1]);
        return rc;
    }
    printf("backup of %s in %s: its store (schema %d) and %ld files, %lld bytes\n", pos[0], pos[1],
           STORE_SCHEMA_VERSION, st.files, st.bytes);
    return 0;
}

static void report(void *ctx, const char *msg)
{
    (*(long *)ctx)++;
    printf("violation: %s\n", msg);
}

/* The restored store opens (an older schema is migrated) and keeps its invariants. */
static int check_restored(const char *dir, char *err, size_t errlen)
{
    char path[PROJECT_PATH_MAX + 32];
    if (path_printf(path, sizeof path, "%s/%s", dir, STORE_FILE))
        return cli_errf(err, errlen, CLI_FAIL, "project folder name too long: %s", dir);
    char why[512];
    struct store *s = store_open(path, 0, why, sizeof why);
    if (!s) return cli_errf(err, errlen, CLI_FAIL, "the restored store does not open: %s", why);
    long bad = 0;
    int n = store_check(s, report, &bad);
    int rc = n < 0 ? cli_errf(err, errlen, CLI_FAIL, "cannot check the restored store: %s", store_error(s))
           : bad ? cli_errf(err, errlen, CLI_FAIL, "the restored store breaks %ld invariants (listed above)", bad)
           : 0;
    store_close(s);
    return rc;
}

int cmd_db_restore(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    char manifest[PROJECT_PATH_MAX + 32], failed[PROJECT_PATH_MAX + 300];
    if (rc) return rc;
    if (path_printf(manifest, sizeof manifest, "%s/%s", pos[0], BACKUP_MANIFEST))
        return cli_errf(err, errlen, CLI_FAIL, "backup folder name too long: %s", pos[0]);
    char *text = read_file(manifest, MANIFEST_MAX, NULL);
    int is_backup = text && !strncmp(text, BACKUP_MAGIC, strlen(BACKUP_MAGIC));
    free(text);
    if (!is_backup) return cli_errf(err, errlen, CLI_FAIL, "%s is no backup of locus (no %s)", pos[0], manifest);
    if ((rc = absent(pos[1], "project folder", err, errlen))) return rc;
    struct copy_stats st;
    if (copy_tree(pos[0], pos[1], restore_skips, NULL, &st, failed, sizeof failed))
        rc = cli_errf(err, errlen, CLI_FAIL, "cannot copy %s: %s", failed, strerror(errno));
    if (!rc) rc = check_restored(pos[1], err, errlen);
    if (rc) {
        cli_remove_tree(pos[1]);
        return rc;
    }
    printf("restored %s into %s: its store and %ld other files, %lld bytes; start it with: locusd %s\n", pos[0],
           pos[1], st.files - 1, st.bytes, pos[1]);
    return 0;
}
