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
#define AT_SUFFIX ".at"
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

/* The hidden file ".NAME" + suffix of name in the folder of path (whose
 * last part is replaced) into out. */
static int beside(const char *path, const char *name, const char *suffix, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    int dir = slash ? (int)(slash - path) : 0;
    return path_printf(out, len, "%.*s/.%s%s", dir, path, name, suffix);
}

/* unlink that is done when there was nothing to remove. */
static int remove_if_there(const char *path) { return unlink(path) && errno != ENOENT ? -1 : 0; }

int campaign_output_place(const char *tmp, const char *name, const char *sha256)
{
    char sum[PROJECT_PATH_MAX + 320], at[PROJECT_PATH_MAX + 320], to[PROJECT_PATH_MAX + 320],
        line[SHA256_DIGITS + 2];
    const char *slash = strrchr(tmp, '/');
    int dir = slash ? (int)(slash - tmp) : 0;
    if (beside(tmp, name, SUM_SUFFIX, sum, sizeof sum) || beside(tmp, name, AT_SUFFIX, at, sizeof at) ||
        path_printf(to, sizeof to, "%.*s/%s", dir, tmp, name)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    snprintf(line, sizeof line, "%s\n", sha256);
    if (write_file_atomic_mode(sum, line, strlen(line), 0600) || rename(tmp, to) || remove_if_there(at) ||
        fsync_dir_of(to))
        return -1;
    return 0;
}

int campaign_output_record(const struct project *p, int64_t campaign, int64_t job, const char *name, int64_t size,
                           const char *sha256, const char *location)
{
    char dir[PROJECT_PATH_MAX + 64], file[PROJECT_PATH_MAX + 320], sum[PROJECT_PATH_MAX + 320],
        at[PROJECT_PATH_MAX + 320];
    if (campaign_outputs_path(p, campaign, job, dir, sizeof dir) ||
        path_printf(file, sizeof file, "%s/%s", dir, name) || beside(file, name, SUM_SUFFIX, sum, sizeof sum) ||
        beside(file, name, AT_SUFFIX, at, sizeof at)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    struct strbuf line;
    sb_init(&line);
    sb_printf(&line, "%" PRId64 " %s %s\n", size, sha256, location);
    int rc = mkdir_p(dir, 0700) || write_file_atomic_mode(at, line.s, line.len, 0600) || remove_if_there(file) ||
                     remove_if_there(sum) || fsync_dir_of(at)
                 ? -1
                 : 0;
    sb_free(&line);
    return rc;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The entries of dir that are not hidden, sorted by name (owned, with
 * each name): their count, or -1. With records, also the names of the
 * records ".NAME.at", as "NAME/" (a '/' no name has marks them). */
static int entries(const char *dir, int records, char ***out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : -1;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name), at = strlen(AT_SUFFIX);
        int record = records && e->d_name[0] == '.' && len > at + 1 && !strcmp(e->d_name + len - at, AT_SUFFIX);
        if (e->d_name[0] == '.' && !record) continue;
        if (n == cap) *out = xrealloc(*out, (size_t)(cap = cap ? 2 * cap : 16) * sizeof **out);
        if (record) {
            char *r = xstrdup(e->d_name + 1);
            strcpy(r + len - 1 - at, "/");
            (*out)[n++] = r;
        } else {
            (*out)[n++] = xstrdup(e->d_name);
        }
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

/* The record of an output stored elsewhere, path (".NAME.at"), read
 * into o (its strings in buf, len bytes): 0, or -1 when unreadable. */
static int read_record(const char *path, struct campaign_output *o, char *buf, size_t len)
{
    size_t n;
    char *text = read_file(path, CAMPAIGN_OUTPUT_LOCATION_MAX + 128, &n);
    long long size = -1;
    int sum_at = -1, sum_end = -1, loc_at = -1;
    int ok = text && sscanf(text, "%lld %n%*64[0-9a-f]%n %n", &size, &sum_at, &sum_end, &loc_at) >= 1 &&
             size >= 0 && sum_at > 0 && sum_end - sum_at == SHA256_DIGITS && loc_at > sum_end &&
             (size_t)loc_at < n && text[loc_at] != '\n' && n - (size_t)loc_at < len - SHA256_DIGITS - 1;
    if (ok) {
        memcpy(buf, text + sum_at, SHA256_DIGITS);
        buf[SHA256_DIGITS] = 0;
        snprintf(buf + SHA256_DIGITS + 1, len - SHA256_DIGITS - 1, "%.*s", (int)strcspn(text + loc_at, "\n"),
                 text + loc_at);
        o->size = size, o->sha256 = buf, o->location = buf + SHA256_DIGITS + 1;
    }
    free(text);
    return ok ? 0 : -1;
}

/* The outputs of one job's folder dir, by name. */
static int each_of_job(const char *dir, int64_t job, int (*cb)(void *ctx, const struct campaign_output *o), void *ctx)
{
    char **names;
    int n = entries(dir, 1, &names), rc = n < 0 ? -1 : 0;
    for (int i = 0; !rc && i < n; i++) {
        char path[PROJECT_PATH_MAX + 320], side[PROJECT_PATH_MAX + 320],
            hex[SHA256_DIGITS + 1 + CAMPAIGN_OUTPUT_LOCATION_MAX + 1] = "";
        size_t nl = strlen(names[i]);
        struct campaign_output o = {.job = job, .name = names[i], .sha256 = hex, .location = ""};
        if (names[i][nl - 1] == '/') {   /* a record: the output is elsewhere */
            names[i][nl - 1] = 0;
            if (path_printf(path, sizeof path, "%s/%s", dir, names[i]) ||
                beside(path, names[i], AT_SUFFIX, side, sizeof side) || read_record(side, &o, hex, sizeof hex))
                continue;
        } else {
            struct stat st;
            if (path_printf(path, sizeof path, "%s/%s", dir, names[i]) || lstat(path, &st) || !S_ISREG(st.st_mode))
                continue;
            size_t len;
            char *text = beside(path, names[i], SUM_SUFFIX, side, sizeof side) ? NULL : read_file(side, 256, &len);
            if (text && len >= SHA256_DIGITS) snprintf(hex, sizeof hex, "%.*s", SHA256_DIGITS, text);
            free(text);
            o.size = (int64_t)st.st_size;
        }
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
    int n = entries(dir, 0, &names), rc = n < 0 ? -1 : 0;
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
    json_t *j = json_pack("{s:I, s:s, s:I, s:s}", "job_id", (json_int_t)o->job, "name", o->name, "size",
                          (json_int_t)o->size, "sha256", o->sha256);
    if (*o->location) json_object_set_new(j, "location", json_string(o->location));
    json_array_append_new(ctx, j);
    return 0;
}

json_t *campaign_outputs_json(const struct project *p, int64_t campaign, int64_t job)
{
    json_t *a = json_array();
    if (campaign_outputs_each(p, campaign, job, add_json, a) >= 0) return a;
    json_decref(a);
    return NULL;
}
