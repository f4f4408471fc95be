/* cli.c - helpers every `locus` command uses: error messages, option
 * parsing, opening a project, copying files into its download area. */
#include "cli/cli.h"
#include "orders/file_order.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_errf(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- options ---- */

static struct cli_opt *opt_find(struct cli_opt *opts, const char *name, size_t len)
{
    for (struct cli_opt *o = opts; o->name; o++)
        if (strlen(o->name) == len && !strncmp(o->name, name, len)) return o;
    return NULL;
}

int cli_seen(const struct cli_opt *opts, const char *name)
{
    for (const struct cli_opt *o = opts; o->name; o++)
        if (!strcmp(o->name, name)) return o->seen;
    return 0;
}

/* Stores value into o's destination according to its kind. */
static int opt_set(struct cli_opt *o, const char *value, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    switch (o->kind) {
    case OPT_FLAG:
        *(int *)o->dest = 1;
        return 0;
    case OPT_STR:
        *(const char **)o->dest = value;
        return 0;
    case OPT_INT: {
        long v = strtol(value, &end, 10);
        if (end == value || *end || errno || v < -2147483647L || v > 2147483647L)
            return cli_errf(err, errlen, CLI_USAGE, "--%s: expected an integer, got '%s'", o->name, value);
        *(int *)o->dest = (int)v;
        return 0;
    }
    case OPT_DOUBLE: {
        double v = strtod(value, &end);
        if (end == value || *end || errno || !isfinite(v))
            return cli_errf(err, errlen, CLI_USAGE, "--%s: expected a number, got '%s'", o->name, value);
        *(double *)o->dest = v;
        return 0;
    }
    case OPT_LIST: {
        struct cli_list *l = o->dest;
        if (l->n == CLI_LIST_MAX)
            return cli_errf(err, errlen, CLI_USAGE, "--%s: at most %d times", o->name, CLI_LIST_MAX);
        l->v[l->n++] = value;
        return 0;
    }
    }
    return 0;
}

/* One "--name[=value]" at argv[*i]; takes the next word as value if needed. */
static int parse_option(int argc, char **argv, int *i, struct cli_opt *opts, char *err, size_t errlen)
{
    const char *arg = argv[*i] + 2;
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    struct cli_opt *o = opt_find(opts, arg, len);
    if (!o) return cli_errf(err, errlen, CLI_USAGE, "unknown option --%.*s", (int)len, arg);
    if (o->seen && o->kind != OPT_LIST)
        return cli_errf(err, errlen, CLI_USAGE, "--%s given twice", o->name);
    o->seen = 1;
    if (o->kind == OPT_FLAG) {
        if (eq) return cli_errf(err, errlen, CLI_USAGE, "--%s takes no value", o->name);
        return opt_set(o, NULL, err, errlen);
    }
    if (eq) return opt_set(o, eq + 1, err, errlen);
    if (*i + 1 >= argc) return cli_errf(err, errlen, CLI_USAGE, "--%s needs a value", o->name);
    return opt_set(o, argv[++*i], err, errlen);
}

int cli_parse(int argc, char **argv, struct cli_opt *opts, const char **pos, int minpos, int maxpos,
              char *err, size_t errlen)
{
    int npos = 0, options_done = 0;
    for (int k = 0; k < maxpos; k++) pos[k] = NULL;
    for (int i = 0; i < argc; i++) {
        if (!options_done && !strcmp(argv[i], "--")) {
            options_done = 1;
        } else if (!options_done && !strncmp(argv[i], "--", 2)) {
            int rc = parse_option(argc, argv, &i, opts, err, errlen);
            if (rc) return rc;
        } else if (npos == maxpos) {
            return cli_errf(err, errlen, CLI_USAGE, "unexpected argument '%s'", argv[i]);
        } else {
            pos[npos++] = argv[i];
        }
    }
    for (struct cli_opt *o = opts; o->name; o++)
        if (o->required && !o->seen) return cli_errf(err, errlen, CLI_USAGE, "--%s is required", o->name);
    if (npos < minpos) return cli_errf(err, errlen, CLI_USAGE, "missing arguments");
    return 0;
}

/* ---- projects ---- */

int cli_open(struct cli_project *cp, const char *dir, int store_flags, char *err, size_t errlen)
{
    cp->s = NULL;
    char perr[CLI_ERR_MAX];
    if (project_load(&cp->p, dir, perr, sizeof perr))
        return cli_errf(err, errlen, CLI_FAIL, "%s (create a project with: locus init DIR --url URL)", perr);
    char db[PROJECT_PATH_MAX + 16];
    project_path(&cp->p, db, sizeof db, "locus.db");
    cp->s = store_open(db, store_flags, perr, sizeof perr);
    if (!cp->s) return cli_errf(err, errlen, CLI_FAIL, "%s", perr);
    return 0;
}

void cli_close(struct cli_project *cp)
{
    store_close(cp->s);
    cp->s = NULL;
}

/* ---- files ---- */

int cli_copy_to_download(const struct project *p, struct cli_copies *c, const char *src, const char *name,
                         struct file_rec *f, char *err, size_t errlen)
{
    if (c->n == (int)(sizeof c->paths / sizeof c->paths[0]))
        return cli_errf(err, errlen, CLI_FAIL, "too many files in one command");
    char dest[PROJECT_PATH_MAX + 256];
    if (file_order_place(p, src, name, 0, dest, sizeof dest))
        return cli_errf(err, errlen, CLI_FAIL, "cannot copy %s to %s: %s", src, dest, strerror(errno));
    c->paths[c->n++] = xstrdup(dest);
    if (md5_hex_file(dest, f->md5, &f->nbytes))
        return cli_errf(err, errlen, CLI_FAIL, "cannot read %s: %s", dest, strerror(errno));
    return 0;
}

int cli_transaction(struct cli_project *cp, cli_tx_body *body, void *ctx, char *err, size_t errlen)
{
    if (store_begin(cp->s)) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    struct cli_copies copies = {.n = 0};
    int rc = body(cp, &copies, ctx, err, errlen);
    if (!rc && store_commit(cp->s)) rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    if (rc) store_rollback(cp->s);
    for (int i = 0; i < copies.n; i++) {
        if (rc) unlink(copies.paths[i]);
        free(copies.paths[i]);
    }
    return rc;
}

int cli_check_source(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) || access(path, R_OK))
        return cli_errf(err, errlen, CLI_FAIL, "cannot read %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return cli_errf(err, errlen, CLI_FAIL, "%s is not a regular file", path);
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    return remove(path);
}

int cli_remove_tree(const char *path)
{
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void cli_basename(const char *path, char *out, size_t len)
{
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/') end--;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/') start--;
    snprintf(out, len, "%.*s", (int)(end - start), path + start);
}

/* Outputs as given, the default "out", or none with --no-output (jobs whose
 * result is only their success, such as heartbeats and benchmarks). */
int cli_batch_outputs(struct batch *b, const struct cli_list *outs, int none, char *err, size_t errlen)
{
    if (none && outs->n) return cli_errf(err, errlen, CLI_USAGE, "give --output or --no-output, not both");
    return batch_set_outputs(b, (const char *const *)outs->v, outs->n, none, err, errlen) ? CLI_FAIL : 0;
}

int cli_app_user(struct store *s, const char *app, const char *user, int64_t *app_id, int64_t *user_id, char *err,
                 size_t errlen)
{
    struct app a;
    int rc = store_app_by_name(s, app, &a);
    if (rc == 1) return cli_errf(err, errlen, CLI_FAIL, "unknown app '%s': register it with locus app add", app);
    if (rc) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(s));
    *app_id = a.id;
    return user ? cli_user_id(s, user, user_id, err, errlen) : 0;
}

int cli_user_id(struct store *s, const char *user, int64_t *id, char *err, size_t errlen)
{
    struct user u;
    int rc = store_user_by_name(s, user, &u);
    if (rc == 1) return cli_errf(err, errlen, CLI_FAIL, "unknown user '%s': create it with locus user create", user);
    if (rc) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(s));
    *id = u.id;
    return 0;
}

/* ---- output ---- */

void cli_format_eta(double s, char *out, size_t len)
{
    long t = (long)(s + 0.5);
    if (s <= 0) snprintf(out, len, "-");
    else if (t >= 86400) snprintf(out, len, "%ldd%02ldh", t / 86400, t % 86400 / 3600);
    else if (t >= 3600) snprintf(out, len, "%ldh%02ldm", t / 3600, t % 3600 / 60);
    else if (t >= 60) snprintf(out, len, "%ldm%02lds", t / 60, t % 60);
    else snprintf(out, len, "%lds", t);
}

void cli_print_json(json_t *root)
{
    json_dumpf(root, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(root);
}

/* Reads standard input (at most max bytes) into *text (owned); CLI_FAIL
 * naming what went wrong. A pipe has no size to check first: read_file
 * cannot serve. */
int cli_read_stdin(size_t max, char **text, size_t *len, char *err, size_t errlen)
{
    struct strbuf b;
    sb_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0 && b.len <= max) sb_append(&b, chunk, n);
    if (ferror(stdin) || b.len > max) {
        int big = b.len > max;
        sb_free(&b);
        return big ? cli_errf(err, errlen, CLI_FAIL, "standard input: larger than %zu MiB", max >> 20)
                   : cli_errf(err, errlen, CLI_FAIL, "cannot read standard input: %s", strerror(errno));
    }
    *len = b.len;
    *text = sb_detach(&b);
    sb_free(&b);
    return 0;
}
