/* campaign_outputs.c - the outputs of campaigns' jobs on locusd's disk
 * (see campaign_outputs.h). */
#include "orders/campaign_outputs.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEMP_NAME ".part-XXXXXX"
#define SUM_SUFFIX ".sha256"
#define SHA256_DIGITS 64

int campaign_outputs_path(const struct project *p, int64_t campaign, int64_t job, char *out, size_t len)
{
    char dir[PROJECT_PATH_MAX + 32];
    project_path(p, dir, sizeof dir, CAMPAIGN_OUTPUTS_DIR);
    if (job > 0) return path_printf(out, len, "%s/%" PRId64 "/%" PRId64, dir, campaign, job);
    return path_printf(out, len, "%s/%" PRId64, dir, campaign);
}

int campaign_output_temp(const struct project *p, int64_t campaign, int64_t job, char *tmp, size_t len)
{
    char dir[PROJECT_PATH_MAX + 64];
    if (campaign_outputs_path(p, campaign, job, dir, sizeof dir) || mkdir_p(dir, 0700) ||
        path_printf(tmp, len, "%s/" TEMP_NAME, dir)) {
        if (!errno) errno = ENAMETOOLONG;
        return -1;
    }
    return mkostemp(tmp, O_CLOEXEC);
}

/* The checksum file of name in the folder of path (whose last part is
 * replaced) into out. */
static int sum_path(const char *path, const char *name, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    int dir = slash ? (int)(slash - path) : 0;
    return path_printf(out, len, "%.*s/.%s" SUM_SUFFIX, dir, path, name);
}

int campaign_output_place(const char *tmp, const char *name, const char *sha256)
{
    char sum[PROJECT_PATH_MAX + 320], to[PROJECT_PATH_MAX + 320], line[SHA256_DIGITS + 2];
    const char *slash = strrchr(tmp, '/');
    int dir = slash ? (int)(slash - tmp) : 0;
    if (sum_path(tmp, name, sum, sizeof sum) || path_printf(to, sizeof to, "%.*s/%s", dir, tmp, name)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    snprintf(line, sizeof line, "%s\n", sha256);
    if (write_file_atomic_mode(sum, line, strlen(line), 0600) || rename(tmp, to) || fsync_dir_of(to)) return -1;
    return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The entries of dir that are not hidden, sorted by name (owned, with
 * each name): their count, or -1. */
static int entries(const char *dir, char ***out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : -1;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) *out = xrealloc(*out, (size_t)(cap = cap ? 2 * cap : 16) * sizeof **out);
        (*out)[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(*out, (size_t)n, sizeof **out, cmp_name);
    return n;
}

static void free_entries(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* The outputs of one job's folder dir, by name. */
static int each_of_job(const char *dir, int64_t job, int (*cb)(void *ctx, const struct campaign_output *o), void *ctx)
{
    char **names;
    int n = entries(dir, &names), rc = n < 0 ? -1 : 0;
    for (int i = 0; !rc && i < n; i++) {
        char path[PROJECT_PATH_MAX + 320], sum[PROJECT_PATH_MAX + 320], hex[SHA256_DIGITS + 1] = "";
        struct stat st;
        if (path_printf(path, sizeof path, "%s/%s", dir, names[i]) || lstat(path, &st) || !S_ISREG(st.st_mode))
            continue;
        size_t len;
        char *text = sum_path(path, names[i], sum, sizeof sum) ? NULL : read_file(sum, 256, &len);
        if (text && len >= SHA256_DIGITS) snprintf(hex, sizeof hex, "%.*s", SHA256_DIGITS, text);
        free(text);
        struct campaign_output o = {job, names[i], (int64_t)st.st_size, hex};
        rc = cb(ctx, &o);
    }
    free_entries(names, n);
    return rc;
}

int campaign_outputs_each(const struct project *p, int64_t campaign, int64_t job,
                          int (*cb)(void *ctx, const struct campaign_output *o), void *ctx)
{
    char dir[PROJECT_PATH_MAX + 64];
    if (campaign_outputs_path(p, campaign, job, dir, sizeof dir)) return errno = ENAMETOOLONG, -1;
    if (job > 0) return each_of_job(dir, job, cb, ctx);
    char **names;
    int n = entries(dir, &names), rc = n < 0 ? -1 : 0;
    int64_t *ids = xcalloc((size_t)n + 1, sizeof *ids);
    int nids = 0;
    for (int i = 0; i < n; i++) {
        char *end;
        long long id = strtoll(names[i], &end, 10);
        if (!*end && id > 0) ids[nids++] = id;
    }
    free_entries(names, n);
    qsort(ids, (size_t)nids, sizeof *ids, cmp_id);
    for (int i = 0; !rc && i < nids; i++) {
        char sub[PROJECT_PATH_MAX + 64];
        rc = campaign_outputs_path(p, campaign, ids[i], sub, sizeof sub) ? -1 : each_of_job(sub, ids[i], cb, ctx);
    }
    free(ids);
    return rc;
}

static int add_json(void *ctx, const struct campaign_output *o)
{
    json_array_append_new(ctx, json_pack("{s:I, s:s, s:I, s:s}", "job_id", (json_int_t)o->job, "name", o->name,
                                         "size", (json_int_t)o->size, "sha256", o->sha256));
    return 0;
}

json_t *campaign_outputs_json(const struct project *p, int64_t campaign, int64_t job)
{
    json_t *a = json_array();
    if (campaign_outputs_each(p, campaign, job, add_json, a) >= 0) return a;
    json_decref(a);
    return NULL;
}
