/* cmd_db.c - `locus db check DIR [--md5]`: the store's invariants
 * (store_check), and that every registered file is in the download area
 * with its recorded size (and md5 with --md5). Violations go to stdout, one
 * per line; the exit status says whether there were any.
 * `locus db purge DIR [--dry-run]`: what ended goes to the archive
 * (store/purge.h), as locusd does each hour; the cut from config.xml, or
 * --days and --host-days. */
#include "cli/cli.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "store/purge.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

struct check_ctx {
    const struct project *p;
    int md5;
    long files, violations;
};

static void report(void *ctx, const char *msg)
{
    printf("violation: %s\n", msg);
}

static void file_violation(struct check_ctx *c, const char *name, const char *path, const char *what)
{
    printf("violation: file %s: %s (%s)\n", name, what, path);
    c->violations++;
}

static int check_file(void *ctx, const struct file_rec *f)
{
    struct check_ctx *c = ctx;
    char path[PROJECT_PATH_MAX + 256];
    project_file_path(c->p, path, sizeof path, "download", f->name);
    c->files++;
    int64_t size = file_size(path);
    char md5[MD5_HEX_LEN];
    if (size < 0) file_violation(c, f->name, path, "missing");
    else if (size != f->nbytes) file_violation(c, f->name, path, "size differs from the store");
    else if (c->md5 && (md5_hex_file(path, md5, NULL) || strcmp(md5, f->md5)))
        file_violation(c, f->name, path, "md5 differs from the store");
    return 0;
}

int cmd_db_check(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[1];
    struct check_ctx c = {NULL, 0, 0, 0};
    struct cli_opt opts[] = {
        {"md5", OPT_FLAG, &c.md5, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    if (rc) return rc;
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    c.p = &cp.p;
    int n = rc ? 0 : store_check(cp.s, report, NULL);
    if (!rc && (n < 0 || store_each_file(cp.s, 0, check_file, &c)))
        rc = cli_errf(err, errlen, CLI_FAIL, "cannot check the store: %s", store_error(cp.s));
    cli_close(&cp);
    if (rc) return rc;
    if (n + c.violations)
        return cli_errf(err, errlen, CLI_FAIL, "%ld violations (listed above): the store or download area is damaged",
                        n + c.violations);
    printf("store OK: %ld checks (store invariants, %ld files with size%s)\n", 1 + c.files, c.files,
           c.md5 ? " and md5" : "");
    return 0;
}

#define BYTES_PER_MB 1e6

int cmd_db_purge(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[1];
    int dry = 0;
    double days = -1, host_days = -1;
    struct cli_opt opts[] = {
        {"dry-run", OPT_FLAG, &dry, 0, 0},
        {"days", OPT_DOUBLE, &days, 0, 0},
        {"host-days", OPT_DOUBLE, &host_days, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    if (rc) return rc;
    if ((days < 0 && days != -1) || (host_days < 0 && host_days != -1))
        return cli_errf(err, errlen, CLI_USAGE, "--days and --host-days take a number of days, 0 for never");
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], dry ? STORE_READONLY : 0, err, errlen);
    if (rc) {
        cli_close(&cp);
        return rc;
    }
    if (days >= 0) cp.p.cfg.purge_after_days = days;
    if (host_days >= 0) cp.p.cfg.archive_hosts_after_days = host_days;
    struct purge_cut cut;
    purge_cut_of(&cp.p, (int64_t)time(NULL), &cut);
    struct purge_result r;
    char why[CLI_ERR_MAX];
    rc = purge_run(&cp.p, cp.s, NULL, &cut, dry, &r, why, sizeof why);
    printf("%s %lld jobs (%lld instances), %lld hosts%s, %lld files (%.1f MB)%s\n", dry ? "would purge" : "purged",
           (long long)r.jobs, (long long)r.instances, (long long)r.hosts, dry ? "" : " to archive/",
           (long long)r.files, (double)r.file_bytes / BYTES_PER_MB, rc ? " before an error" : "");
    cli_close(&cp);
    return rc ? cli_errf(err, errlen, CLI_FAIL, "%s", why) : 0;
}
