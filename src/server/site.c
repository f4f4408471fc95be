/* site.c - the web folder read into memory (site.h). Read once at start:
 * a request is answered from the table by exact name, never by opening a
 * path it gave, so ".." or a link in the folder leads nowhere, and no
 * folder is ever listed. */
#include "server/site.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/strbuf.h"
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef LOCUS_WEB_DIR
#define LOCUS_WEB_DIR "/usr/share/locus/web"
#endif
#define SITE_MAX_BYTES (32 << 20)     /* the whole site, Chart.js included */
#define SITE_MAX_DEPTH 4              /* folders within folders */
#define SITE_NAME_MAX 200
#define CHARTJS_FILE "chart.min.js"

/* The types served, by the name's ending; any other file is left out. */
static const struct { const char *ext, *type; } types[] = {
    {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},   {".svg", "image/svg+xml"},
    {".png", "image/png"},                 {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"}, {".json", "application/json"},
    {".woff2", "font/woff2"},
};

static const char *type_of(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        size_t e = strlen(types[i].ext);
        if (n > e && !strcmp(name + n - e, types[i].ext)) return types[i].type;
    }
    return NULL;
}

int site_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (!n || n > SITE_NAME_MAX) return 0;
    for (const char *p = name; *p; p++) {
        int part_start = p == name || p[-1] == '/';
        if (part_start && (*p == '.' || *p == '/')) return 0;
        if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9') &&
            !strchr("._-/", *p))
            return 0;
    }
    return name[n - 1] != '/';
}

int site_dir(const char *dir, const struct project_config *c, char *out, size_t len)
{
    if (!c->web_dir[0]) return snprintf(out, len, "%s", LOCUS_WEB_DIR), 0;
    if (c->web_dir[0] == '/') snprintf(out, len, "%s", c->web_dir);
    else snprintf(out, len, "%s/%s", dir, c->web_dir);
    return 1;
}

struct loading {
    const struct project_config *cfg;
    struct site *w;
    size_t cap, bytes;
    char *err;
    size_t errlen;
};

/* The page text with its {{...}} filled in from the settings, owned. */
static char *fill(const struct project_config *c, const char *text, size_t *len)
{
    char sched[sizeof c->master_url + 16], host[256], prefix[sizeof c->master_url] = "/";
    int port;
    snprintf(sched, sizeof sched, "%sscheduler", c->master_url);
    url_split(c->master_url, host, sizeof host, &port, prefix, sizeof prefix);
    const struct { const char *token, *value; } vars[] = {
        {"{{project_name}}", c->name}, {"{{master_url}}", c->master_url}, {"{{scheduler_url}}", sched},
        {"{{url_prefix}}", prefix},
    };
    struct strbuf sb;
    sb_init(&sb);
    const char *p = text;
    for (const char *open; (open = strstr(p, "{{"));) {
        size_t i = 0, nv = sizeof vars / sizeof *vars;
        while (i < nv && strncmp(open, vars[i].token, strlen(vars[i].token))) i++;
        sb_append(&sb, p, (size_t)(open - p) + (i < nv ? 0 : 2));
        if (i < nv) sb_xml_escape(&sb, vars[i].value);
        p = open + (i < nv ? strlen(vars[i].token) : 2);
    }
    sb_puts(&sb, p);
    *len = sb.len;
    char *filled = sb_detach(&sb);
    sb_free(&sb);   /* what sb_detach left it */
    return filled;
}

/* Adds the file at path as name. 0, or -1 with the reason in l->err. */
static int add(struct loading *l, const char *path, const char *name, const char *type, time_t mtime)
{
    size_t len;
    char *data = read_file(path, SITE_MAX_BYTES, &len);
    if (!data) return errf(l->err, l->errlen, "web site: cannot read %s: %s", path, strerror(errno)), -1;
    if (!strncmp(type, "text/html", 9)) {
        char *filled = fill(l->cfg, data, &len);
        free(data);
        data = filled;
    }
    if ((l->bytes += len) > SITE_MAX_BYTES) {
        free(data);
        return errf(l->err, l->errlen, "web site: its files pass %d MiB in all", SITE_MAX_BYTES >> 20), -1;
    }
    struct site *w = l->w;
    if (w->n == l->cap) w->files = xrealloc(w->files, (l->cap = l->cap ? 2 * l->cap : 32) * sizeof *w->files);
    struct site_file *f = &w->files[w->n++];
    char hex[SHA256_HEX_LEN];
    sha256_hex_buf(data, len, hex);
    *f = (struct site_file){.name = xstrdup(name), .data = data, .len = len, .type = type, .mtime = mtime,
                            .page = !strncmp(type, "text/html", 9)};
    snprintf(f->etag, sizeof f->etag, "\"%.16s\"", hex);
    return 0;
}

/* Adds the files of folder dir, named rel/NAME (rel "": the top). */
static int walk(struct loading *l, const char *dir, const char *rel, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return errf(l->err, l->errlen, "web site: cannot read the folder %s: %s", dir, strerror(errno)), -1;
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;   /* ., .., and hidden files (an editor's) */
        char path[PROJECT_PATH_MAX + 2 * SITE_NAME_MAX], name[SITE_NAME_MAX + 2];
        struct stat st;
        if (path_printf(path, sizeof path, "%s/%s", dir, e->d_name) ||
            snprintf(name, sizeof name, "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= (int)sizeof name ||
            !site_name_ok(name)) {
            rc = (errf(l->err, l->errlen, "web site: %s/%s is not a name the site can serve ([A-Za-z0-9._-], "
                       "at most %d bytes)", dir, e->d_name, SITE_NAME_MAX), -1);
        } else if (stat(path, &st)) {
            rc = (errf(l->err, l->errlen, "web site: %s: %s", path, strerror(errno)), -1);
        } else if (S_ISDIR(st.st_mode)) {
            if (depth >= SITE_MAX_DEPTH)
                rc = (errf(l->err, l->errlen, "web site: %s is more than %d folders deep", path, SITE_MAX_DEPTH), -1);
            else rc = walk(l, path, name, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            const char *type = type_of(name);
            if (type) rc = add(l, path, name, type, st.st_mtime);
            else log_info("web site: %s is not served (not a type the site serves)", path);
        }
    }
    closedir(d);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct site_file *)a)->name, ((const struct site_file *)b)->name);
}

int site_load(const char *web_dir, const char *chartjs_dir, const struct project_config *c, struct site **out,
              char *err, size_t errlen)
{
    *out = NULL;
    struct stat st;
    if (stat(web_dir, &st) && errno == ENOENT) return 1;
    struct loading l = {.cfg = c, .w = xcalloc(1, sizeof *l.w), .err = err, .errlen = errlen};
    int rc = walk(&l, web_dir, "", 0);
    char path[PROJECT_PATH_MAX + 64];
    if (!rc && chartjs_dir) {
        struct stat cs;
        path_printf(path, sizeof path, "%s/%s", chartjs_dir, CHARTJS_FILE);
        if (stat(path, &cs)) rc = (errf(err, errlen, "web site: no Chart.js at %s (install libjs-chart.js)", path), -1);
        else rc = add(&l, path, SITE_CHARTJS, type_of(CHARTJS_FILE), cs.st_mtime);
    }
    if (!rc) qsort(l.w->files, l.w->n, sizeof *l.w->files, by_name);
    const struct site_file *home = rc ? NULL : site_find(l.w, SITE_HOME);
    if (!rc && home && !strstr(home->data, "rel=\"boinc_scheduler\""))
        rc = (errf(err, errlen, "web site: %s/%s lacks <link rel=\"boinc_scheduler\" href=\"{{scheduler_url}}\">, "
                   "which BOINC clients read", web_dir, SITE_HOME), -1);
    if (rc) {
        site_free(l.w);
        return -1;
    }
    *out = l.w;
    return 0;
}

void site_free(struct site *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n; i++) {
        free(w->files[i].name);
        free(w->files[i].data);
    }
    free(w->files);
    free(w);
}

const struct site_file *site_find(const struct site *w, const char *name)
{
    struct site_file key = {.name = (char *)(*name ? name : SITE_HOME)};
    return w ? bsearch(&key, w->files, w->n, sizeof *w->files, by_name) : NULL;
}
