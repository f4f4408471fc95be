/* cmd_file.c - `locus file add`: registers an input file that jobs can
 * name. Adding the same content again under the same name succeeds, so a
 * submission script can be re-run. */
#include "cli/cli.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

struct file_add {
    const char *src;
    struct file_rec f;
    int existed;        /* already registered with this content */
};

/* The same name is already registered: fine if the content is the same. */
static int compare_existing(const struct file_add *a, const struct file_rec *old, char *err, size_t errlen)
{
    char md5[MD5_HEX_LEN];
    int64_t size;
    if (md5_hex_file(a->src, md5, &size))
        return cli_errf(err, errlen, CLI_FAIL, "cannot read %s: %s", a->src, strerror(errno));
    if (size != old->nbytes || strcmp(md5, old->md5))
        return cli_errf(err, errlen, CLI_FAIL, "a different file named %s is already registered "
                        "(%lld bytes, md5 %s): choose another name with --name", old->name,
                        (long long)old->nbytes, old->md5);
    return 0;
}

static int add_file(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    struct file_add *a = ctx;
    struct file_rec old;
    int rc = store_file_by_name(cp->s, a->f.name, &old);
    if (rc < 0) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    if (rc == 0) {
        rc = compare_existing(a, &old, err, errlen);
        file_rec_clear(&old);
        a->existed = 1;
        return rc;
    }
    if (cli_copy_to_download(&cp->p, copies, a->src, a->f.name, &a->f, err, errlen)) return CLI_FAIL;
    if (store_file_insert(cp->s, &a->f)) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    return 0;
}

int cmd_file_add(int argc, char **argv, char *err, size_t errlen)
{
    const char *name = NULL, *pos[2];
    struct file_add a = {.existed = 0};
    struct cli_opt opts[] = {
        {"name", OPT_STR, &name, 0, 0},
        {"sticky", OPT_FLAG, &a.f.sticky, 0, 0},
        {"report-on-rpc", OPT_FLAG, &a.f.report_on_rpc, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    a.src = pos[1];
    char base[sizeof a.f.name + 1];
    cli_basename(a.src, base, sizeof base);
    if (!name) name = base;
    if (!name_is_safe(name))
        return cli_errf(err, errlen, CLI_FAIL, "file name '%s' is not safe: use 1 to %d characters of "
                        "A-Z a-z 0-9 . _ + -, not starting with '.' (choose one with --name)", name, LOCUS_NAME_MAX);
    snprintf(a.f.name, sizeof a.f.name, "%s", name);
    if (cli_check_source(a.src, err, errlen)) return CLI_FAIL;
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = cli_transaction(&cp, add_file, &a, err, errlen);
    cli_close(&cp);
    if (rc) return rc;
    if (a.existed) printf("file %s is already registered with the same content\n", a.f.name);
    else printf("added file %s (%lld bytes, md5 %s)\n", a.f.name, (long long)a.f.nbytes, a.f.md5);
    return 0;
}
