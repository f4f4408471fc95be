/* cmd_file.c - `locus file add`: registers an input file that jobs can
 * name, through the order shared with PUT /api/v1/files/NAME
 * (orders/file_order.h). Adding the same content again under the same
 * name succeeds, so a submission script can be re-run. */
#include "cli/cli.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "orders/file_order.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct file_add {
    const char *src;
    struct file_rec f;
    int existed;        /* already registered with this content */
};

static int add_file(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    struct file_add *a = ctx;
    char placed[PROJECT_PATH_MAX + 256];
    enum file_order_rc rc = file_order_add(cp->s, &cp->p, a->src, 0, &a->f, &a->existed, placed, sizeof placed,
                                           err, errlen);
    if (placed[0]) copies->paths[copies->n++] = xstrdup(placed);   /* unlinked if the transaction fails */
    return rc ? CLI_FAIL : 0;
}

int cmd_file_add(int argc, char **argv, char *err, size_t errlen)
{
    const char *name = NULL, *pos[2] = {NULL, NULL};
    struct file_add a = {.existed = 0};
    struct cli_opt opts[] = {
        {"name", OPT_STR, &name, 0, 0},
        {"sticky", OPT_FLAG, &a.f.sticky, 0, 0},
        {"report-on-rpc", OPT_FLAG, &a.f.report_on_rpc, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int r = cli_remote();   /* remotely, no project folder */
    int rc = cli_parse(argc, argv, opts, pos + r, 2 - r, 2 - r, err, errlen);
    if (rc) return rc;
    a.src = pos[1];
    char base[sizeof a.f.name + 1];
    cli_basename(a.src, base, sizeof base);
    if (!name) name = base;
    if (file_order_check_name(name, err, errlen)) return CLI_FAIL;
    snprintf(a.f.name, sizeof a.f.name, "%s", name);
    if (cli_check_source(a.src, err, errlen)) return CLI_FAIL;
    if (r) return remote_file_add(a.src, &a.f, err, errlen);
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = cli_transaction(&cp, add_file, &a, err, errlen);
    cli_close(&cp);
    if (rc) return rc;
    cli_print_file_added(&a.f, a.existed);
    return 0;
}

void cli_print_file_added(const struct file_rec *f, int existed)
{
    if (existed) printf("file %s is already registered with the same content\n", f->name);
    else printf("added file %s (%lld bytes, md5 %s)\n", f->name, (long long)f->nbytes, f->md5);
}
