/* site.h - the project's web site (docs/web.md): the files of a web
 * folder (web/ of the source tree, installed as share/locus/web), read
 * into memory once at start and served under the master URL's prefix by
 * their exact names only, so that no request names a path on disk. The
 * pages' {{project_name}}, {{master_url}}, {{scheduler_url}} and
 * {{url_prefix}} (the master URL's path) are filled in as they are
 * read; Chart.js comes from Debian's libjs-chart.js as
 * static/vendor/chart.min.js. */
#ifndef LOCUS_SITE_H
#define LOCUS_SITE_H
#include "core/project.h"
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SITE_HOME "index.html"          /* the master page, when the folder has one */
#define SITE_CHARTJS "static/vendor/chart.min.js"
#define SITE_NEWS_FEED "news.atom"         /* made by the server from the news (store/news.h) */

struct site_file {
    char *name;                 /* owned: "users.html", "static/site.js" */
    char *data;                 /* owned: the bytes served */
    size_t len;
    const char *type;           /* static: its Content-Type */
    char etag[24];              /* "\"<16 hex of its SHA-256>\"" */
    time_t mtime;               /* of its file: Last-Modified */
    int page;                   /* an HTML page: revalidated at each load, not cached */
};

struct site {
    struct site_file *files;    /* owned, sorted by name */
    size_t n;
};

/* The web folder c names: <web_dir> (relative: to the project folder
 * dir), or the compile-time default (LOCUS_WEB_DIR) when it is empty,
 * into out. Returns 1 when it was the setting, 0 the default. */
int site_dir(const char *dir, const struct project_config *c, char *out, size_t len);

/* Reads the site of folder web_dir for the project of c into a new *out
 * (owned: site_free), Chart.js from chartjs_dir (NULL: not served). 0;
 * 1 when web_dir does not exist (*out NULL: no site); -1 with the reason
 * in err: a file unreadable or of a type not served (the extension names
 * it), a name that is not a page name (site_name_ok), over SITE_MAX_BYTES
 * in all, or a home page without what the BOINC client reads (the
 * rel="boinc_scheduler" link). */
int site_load(const char *web_dir, const char *chartjs_dir, const struct project_config *c, struct site **out,
              char *err, size_t errlen);
void site_free(struct site *w);

/* The file called name ("" the home page); NULL if none. */
const struct site_file *site_find(const struct site *w, const char *name);

/* 1 if name may name a file of a site: [A-Za-z0-9._-] parts separated by
 * single '/', none empty or starting with '.', at most 200 bytes. */
int site_name_ok(const char *name);
#endif
