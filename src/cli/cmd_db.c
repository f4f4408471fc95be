/* cmd_db.c - `locus db check DIR [--md5]`: the store's invariants
 * (store_check), and that every registered file is in the download area
 * with its recorded size (and md5 with --md5). Violations go to stdout, one
 * per line; the exit status says whether there were any. */
#include "cli/cli.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include <stdio.h>
#include <string.h>

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
