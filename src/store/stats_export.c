/* stats_export.c - the statistics export (stats_export.h): each table read
 * row by row from one snapshot and gzip'd as it goes, so that memory does
 * not grow with the store, into a new folder swapped in at the end. */
#include "store/stats_export.h"
#include "core/account_key.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "model/credit.h"
#include "store/store_internal.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define TABLES_FILE "tables.xml"
#define STOP_CHECK_ROWS 1024      /* rows between two questions to stopping */
#define GZ_BUFFER (128 * 1024)    /* zlib's buffer: fewer, larger writes */
#define XML_HEAD "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"

struct exporter {
    struct store *s;
    const struct upload_key *secret;
    double now;
    int (*stopping)(void *ctx);
    void *ctx;
    struct strbuf rec, text;   /* the record being written; a text being cleaned */
    gzFile gz;
    int64_t rows;              /* rows of the current table */
    double credit;             /* the users' total credit */
    int failed;                /* a row could not be written, or the export was stopped */
    char *err;
    size_t errlen;
};

static int fail(struct exporter *x, const char *what)
{
    snprintf(x->err, x->errlen, "%s", what);
    x->failed = 1;
    return -1;
}

/* <tag>text</tag>, text XML-escaped and rid of the control characters
 * XML 1.0 does not allow (a store written by an older locus may hold them). */
static void put_text(struct exporter *x, const char *indent, const char *tag, const char *text)
{
    sb_reset(&x->text);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (*p >= 0x20 || *p == '\t' || *p == '\n' || *p == '\r') sb_append(&x->text, (const char *)p, 1);
    sb_printf(&x->rec, "%s<%s>", indent, tag);
    sb_xml_escape(&x->rec, x->text.len ? x->text.s : "");
    sb_printf(&x->rec, "</%s>\n", tag);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? t : "";
}

/* The credit columns i, i+1, i+2 (total, recent average, its time) as
 * db_dump writes them, the average decayed to the export's time. */
static void put_credit(struct exporter *x, const char *indent, sqlite3_stmt *st, int i)
{
    double avg = credit_average_at(sqlite3_column_double(st, i + 1), sqlite3_column_double(st, i + 2), x->now);
    sb_printf(&x->rec, "%s<total_credit>%f</total_credit>\n%s<expavg_credit>%f</expavg_credit>\n"
                       "%s<expavg_time>%f</expavg_time>\n",
              indent, sqlite3_column_double(st, i), indent, avg, indent, x->now);
}

/* md5 of a + b, BOINC's way of salting an id with the owner's e-mail address. */
static void md5_of_pair(const char *a, const char *b, char out[MD5_HEX_LEN])
{
    struct md5_ctx *c = md5_begin();
    md5_update(c, a, strlen(a));
    md5_update(c, b, strlen(b));
    md5_end(c, out);
}

/* Sends the record to the file; asks stopping now and then. */
static int put_record(struct exporter *x)
{
    if (x->rec.len && gzwrite(x->gz, x->rec.s, (unsigned)x->rec.len) != (int)x->rec.len)
        return fail(x, "cannot write the export (disk full?)");
    sb_reset(&x->rec);
    if (++x->rows > 0 && x->rows % STOP_CHECK_ROWS == 0 && x->stopping && x->stopping(x->ctx))
        return fail(x, "stopped");
    return 0;
}

/* users: BOINC's write_user; cpid = md5(cross-project id + e-mail), the
 * e-mail itself never written */
#define USER_SQL                                                                                            \
    "SELECT id, name, create_time, total_credit, expavg_credit, expavg_time, IFNULL(email, ''),"           \
    " IFNULL(team_id, 0) FROM users WHERE total_credit > 0 ORDER BY id"

static int user_row(struct store *s, sqlite3_stmt *st, void *p)
{
    struct exporter *x = p;
    int64_t id = sqlite3_column_int64(st, 0), team = sqlite3_column_int64(st, 7);
    char cpid[ACCOUNT_KEY_LEN + 1];
    account_cpid_make(x->secret, id, col_text(st, 6), cpid);
    x->credit += sqlite3_column_double(st, 3);
    sb_printf(&x->rec, "<user>\n <id>%lld</id>\n", (long long)id);
    put_text(x, " ", "name", col_text(st, 1));
    sb_printf(&x->rec, " <create_time>%lld</create_time>\n", (long long)sqlite3_column_int64(st, 2));
    put_credit(x, " ", st, 3);
    sb_printf(&x->rec, " <cpid>%s</cpid>\n", cpid);
    if (team) sb_printf(&x->rec, " <teamid>%lld</teamid>\n", (long long)team);
    sb_puts(&x->rec, "</user>\n");
    return put_record(x);
}

/* hosts: BOINC's write_host with its details; host_cpid salted with the
 * owner's e-mail as BOINC's scheduler stores it, so that one computer has
 * the same id at every project of one volunteer; no domain name, address,
 * or anything else the store keeps of the host's network */
#define HOST_SQL                                                                                            \
    "SELECT h.id, h.user_id, h.total_credit, h.expavg_credit, h.expavg_time, h.os_name, h.os_version,"      \
    " h.create_time, h.rpc_time, h.p_ncpus, h.p_fpops, h.m_nbytes, h.d_free, h.host_cpid, IFNULL(u.email, '')" \
    " FROM hosts h JOIN users u ON u.id = h.user_id WHERE h.total_credit > 0 ORDER BY h.id"

static int host_row(struct store *s, sqlite3_stmt *st, void *p)
{
    struct exporter *x = p;
    sb_printf(&x->rec, "<host>\n    <id>%lld</id>\n    <userid>%lld</userid>\n", (long long)sqlite3_column_int64(st, 0),
              (long long)sqlite3_column_int64(st, 1));
    put_credit(x, "    ", st, 2);
    put_text(x, "    ", "os_name", col_text(st, 5));
    put_text(x, "    ", "os_version", col_text(st, 6));
    sb_printf(&x->rec,
              "    <create_time>%lld</create_time>\n    <rpc_time>%lld</rpc_time>\n    <ncpus>%d</ncpus>\n"
              "    <p_fpops>%f</p_fpops>\n    <m_nbytes>%f</m_nbytes>\n    <d_free>%f</d_free>\n",
              (long long)sqlite3_column_int64(st, 7), (long long)sqlite3_column_int64(st, 8),
              sqlite3_column_int(st, 9), sqlite3_column_double(st, 10), sqlite3_column_double(st, 11),
              sqlite3_column_double(st, 12));
    const char *host_cpid = col_text(st, 13);
    if (*host_cpid) {
        char cpid[MD5_HEX_LEN];
        md5_of_pair(host_cpid, col_text(st, 14), cpid);
        sb_printf(&x->rec, "    <host_cpid>%s</host_cpid>\n", cpid);
    }
    sb_puts(&x->rec, "</host>\n");
    return put_record(x);
}

/* teams: BOINC's write_team, without the fields locus has no such thing for
 * (type, country, name_html) */
#define TEAM_SQL                                                                                            \
    "SELECT t.id, t.name, t.founder_id, t.total_credit, t.expavg_credit, t.expavg_time, f.name,"           \
    " t.create_time, t.url, t.description FROM teams t LEFT JOIN users f ON f.id = t.founder_id"          \
    " WHERE t.total_credit > 0 ORDER BY t.id"

static int team_row(struct store *s, sqlite3_stmt *st, void *p)
{
    struct exporter *x = p;
    sb_printf(&x->rec, "<team>\n <id>%lld</id>\n", (long long)sqlite3_column_int64(st, 0));
    put_text(x, " ", "name", col_text(st, 1));
    sb_printf(&x->rec, " <userid>%lld</userid>\n", (long long)sqlite3_column_int64(st, 2));
    put_credit(x, " ", st, 3);
    if (sqlite3_column_type(st, 6) != SQLITE_NULL) put_text(x, " ", "founder_name", col_text(st, 6));
    sb_printf(&x->rec, " <create_time>%lld</create_time>\n", (long long)sqlite3_column_int64(st, 7));
    if (*col_text(st, 8)) put_text(x, " ", "url", col_text(st, 8));
    if (*col_text(st, 9)) put_text(x, " ", "description", col_text(st, 9));
    sb_puts(&x->rec, "</team>\n");
    return put_record(x);
}

static int app_row(struct store *s, sqlite3_stmt *st, void *p)
{
    struct exporter *x = p;
    sb_puts(&x->rec, "        <application>\n");
    put_text(x, "            ", "name", col_text(st, 0));
    sb_puts(&x->rec, "        </application>\n");
    return 0;
}

/* Opens path, a new file, and writes to it through fd (kept for fsync) and zlib. */
static int open_out(struct exporter *x, const char *path, int *fd, int compress)
{
    *fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int zfd = *fd < 0 ? -1 : dup(*fd);
    /* "T": tables.xml goes through the same calls, written as it is */
    x->gz = zfd < 0 ? NULL : gzdopen(zfd, compress ? "wb" : "wbT");
    if (!x->gz) {
        snprintf(x->err, x->errlen, "cannot write %s: %s", path, strerror(errno));
        if (zfd >= 0) close(zfd);
        if (*fd >= 0) close(*fd);
        return -1;
    }
    gzbuffer(x->gz, GZ_BUFFER);
    return 0;
}

/* Flushes and closes x->gz, then syncs the file. */
static int close_out(struct exporter *x, const char *path, int fd)
{
    int rc = gzclose(x->gz) != Z_OK;
    x->gz = NULL;
    rc = rc || fsync(fd);
    close(fd);
    if (rc) snprintf(x->err, x->errlen, "cannot write %s (disk full?)", path);
    return rc ? -1 : 0;
}

/* The export's files but tables.xml, each a table of the store, in the order written. */
static const struct table_file {
    const char *name, *root, *sql;
    int (*row)(struct store *s, sqlite3_stmt *st, void *x);
} tables[] = {
    {"user.gz", "users", USER_SQL, user_row},
    {"host.gz", "hosts", HOST_SQL, host_row},
    {"team.gz", "teams", TEAM_SQL, team_row},
};
#define NTABLES (sizeof tables / sizeof *tables)
#define GZIP_TYPE "application/gzip"   /* not Content-Encoding: sites fetch the .gz as a file */

const char *stats_export_type(const char *name)
{
    if (!strcmp(name, TABLES_FILE)) return "text/xml";
    for (size_t i = 0; i < NTABLES; i++)
        if (!strcmp(name, tables[i].name)) return GZIP_TYPE;
    return NULL;
}

/* One table's file: its root element, a record per row, closed and
 * synced; the number of rows into *n. */
static int write_table(struct exporter *x, const char *tmp, const struct table_file *t, int64_t *n)
{
    char path[PROJECT_PATH_MAX + 64];
    int fd;
    if (path_printf(path, sizeof path, "%s/%s", tmp, t->name)) return fail(x, "export folder name too long");
    if (open_out(x, path, &fd, 1)) return -1;
    sb_reset(&x->rec);
    sb_printf(&x->rec, XML_HEAD "<%s>\n", t->root);
    x->rows = -1;   /* the head is no row */
    int rc = put_record(x) || store_each_row(x->s, t->sql, 0, t->row, x) || x->failed;
    if (!rc) {
        *n = x->rows;
        sb_printf(&x->rec, "</%s>\n", t->root);
        rc = put_record(x);
    } else if (!x->failed) {
        snprintf(x->err, x->errlen, "%s", store_error(x->s));
    }
    return close_out(x, path, fd) || rc ? -1 : 0;
}

/* tables.xml: as db_dump's, the counts always written (db_dump leaves out
 * a 0), the applications by their names for people, no badges. */
static int write_tables_file(struct exporter *x, const char *tmp, int64_t now, const struct stats_export_counts *n)
{
    char path[PROJECT_PATH_MAX + 64];
    int fd;
    if (path_printf(path, sizeof path, "%s/%s", tmp, TABLES_FILE)) return fail(x, "export folder name too long");
    if (open_out(x, path, &fd, 0)) return -1;
    sb_reset(&x->rec);
    sb_printf(&x->rec,
              XML_HEAD "<tables>\n    <update_time>%lld</update_time>\n    <nusers_total>%lld</nusers_total>\n"
                       "    <nteams_total>%lld</nteams_total>\n    <nhosts_total>%lld</nhosts_total>\n"
                       "    <total_credit>%f</total_credit>\n    <applications>\n",
              (long long)now, (long long)n->users, (long long)n->teams, (long long)n->hosts, n->total_credit);
    int rc = store_each_row(x->s, "SELECT user_friendly_name FROM apps ORDER BY id", 0, app_row, x);
    if (rc) snprintf(x->err, x->errlen, "%s", store_error(x->s));
    sb_puts(&x->rec, "    </applications>\n</tables>\n");
    rc = rc || put_record(x);
    return close_out(x, path, fd) || rc ? -1 : 0;
}

/* The files of the export in folder tmp, from one read snapshot. */
static int write_all_files(struct exporter *x, const char *tmp, int64_t now, struct stats_export_counts *n)
{
    if (store_run_sql(x->s, "BEGIN")) return snprintf(x->err, x->errlen, "%s", store_error(x->s)), -1;
    int64_t *counts[NTABLES] = {&n->users, &n->hosts, &n->teams};
    int rc = 0;
    for (size_t i = 0; !rc && i < NTABLES; i++) rc = write_table(x, tmp, &tables[i], counts[i]);
    n->total_credit = x->credit;
    if (!rc) rc = write_tables_file(x, tmp, now, n);
    store_run_sql(x->s, "COMMIT");   /* a read-only transaction: nothing to keep or lose */
    return rc;
}

/* 1 if folder dir holds the export's files and nothing else (so that
 * replacing it never deletes what an operator put there); 0 if it holds
 * more or is no folder. */
static int only_export_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int only = 1;
    while (only && (e = readdir(d)))
        only = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || stats_export_type(e->d_name);
    closedir(d);
    return only;
}

/* Removes the export folder dir, its files and itself, unless it holds
 * anything else. */
static void remove_export(const char *dir)
{
    if (!only_export_files(dir)) return;
    for (size_t i = 0; i <= NTABLES; i++) {
        char path[PROJECT_PATH_MAX + 64];
        if (!path_printf(path, sizeof path, "%s/%s", dir, i < NTABLES ? tables[i].name : TABLES_FILE)) unlink(path);
    }
    rmdir(dir);
}

/* 0 if dir is absent, or an export folder that may be replaced. */
static int replaceable(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) && errno == ENOENT) return 0;
    if (S_ISDIR(st.st_mode) && only_export_files(dir)) return 0;
    snprintf(err, errlen, "%s is not a statistics export folder (it holds other files): not replaced", dir);
    return -1;
}

int stats_export_write(struct store *s, const struct upload_key *secret, const char *dir, int64_t now,
                       int (*stopping)(void *ctx), void *ctx, struct stats_export_counts *n, char *err,
                       size_t errlen)
{
    memset(n, 0, sizeof *n);
    /* "out/" is the folder out: its new copy goes beside it, not in it */
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    char tmp[PROJECT_PATH_MAX + 32], target[PROJECT_PATH_MAX + 16];
    if (path_printf(target, sizeof target, "%.*s", (int)len, dir)) {
        snprintf(err, errlen, "export folder name too long");
        return -1;
    }
    dir = target;
    if (replaceable(dir, err, errlen)) return -1;
    if (path_printf(tmp, sizeof tmp, "%s.new-XXXXXX", dir) || !mkdtemp(tmp)) {
        snprintf(err, errlen, "cannot make a folder beside %s: %s", dir, strerror(errno));
        return -1;
    }
    struct exporter x = {.s = s, .secret = secret, .now = (double)now, .stopping = stopping, .ctx = ctx,
                         .err = err, .errlen = errlen};
    sb_init(&x.rec);
    sb_init(&x.text);
    int rc = write_all_files(&x, tmp, now, n);
    sb_free(&x.rec);
    sb_free(&x.text);
    char synced[PROJECT_PATH_MAX + 64];
    if (!rc && (path_printf(synced, sizeof synced, "%s/%s", tmp, TABLES_FILE) || fsync_dir_of(synced))) {
        snprintf(err, errlen, "cannot sync %s: %s", tmp, strerror(errno));
        rc = -1;
    }
    /* swapped in whole: RENAME_EXCHANGE where there is an export already */
    if (!rc && rename(tmp, dir) &&
        ((errno != EEXIST && errno != ENOTEMPTY) || renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE))) {
        snprintf(err, errlen, "cannot put the export at %s: %s", dir, strerror(errno));
        rc = -1;
    }
    if (!rc) fsync_dir_of(dir);
    remove_export(tmp);   /* the one replaced, or this one if it failed */
    return rc;
}

int stats_export_project(const struct project *p, struct store *s, const char *out, int64_t now,
                         int (*stopping)(void *ctx), void *ctx, struct stats_export_counts *n, char *err,
                         size_t errlen)
{
    char dir[PROJECT_PATH_MAX + 16];
    if (!out) project_path(p, dir, sizeof dir, STATS_EXPORT_DIR);
    struct upload_key secret;
    if (account_secret_load(p, now, &secret, err, errlen)) return -1;
    int rc = stats_export_write(s, &secret, out ? out : dir, now, stopping, ctx, n, err, errlen);
    OPENSSL_cleanse(&secret, sizeof secret);
    return rc;
}
