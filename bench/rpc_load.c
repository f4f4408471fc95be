/* rpc_load.c - bench-rpc: how many scheduler RPCs per second a real locusd
 * sustains, and how long each takes, while it holds a batch of a million
 * jobs. It makes a project with the real `locus` command (or reuses one),
 * starts the release locusd on a loopback port, and plays N BOINC hosts:
 * each RPC reports the instances the host received in its previous reply
 * (uploading their output files first when the batch has any) and asks for
 * new ones. Prints RPCs/s, jobs dispatched/s, p50/p99 latency and locusd's
 * peak RSS; with --json, the figures as one JSON object on the last line.
 *
 * The client is one epoll loop per thread over non-blocking keep-alive
 * connections, so that it costs a few microseconds per RPC and the server
 * is what is measured. Hosts outnumber connections: each thread keeps a
 * queue of idle hosts and a free connection takes the next one, so a host
 * never has two RPCs in flight and concurrency is the number of
 * connections (by Little's law, latency ~ connections / throughput). */
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/project.h"
#include "core/strbuf.h"
#include "core/upload_cert.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NAME_LEN 256              /* instance and file names (the server's SR_NAME_LEN) */
#define HEADER_MAX 16384          /* an HTTP reply header longer than this is an error */
#define MIN_ATTEMPTS 200          /* the 1% error rule applies after this many requests */
#define READY_TIMEOUT_S 600.0     /* loading a big batch into memory takes a while */
#define REGISTER_TIMEOUT_S 60.0   /* extra warm-up allowed for every host to get its id */
#define STOP_TIMEOUT_S 300.0      /* SIGTERM to exit; then SIGKILL */
#define OUTPUT_MAX_NBYTES 65536   /* --upload batches: the declared output limit */
#define PLATFORM "x86_64-pc-linux-gnu"
#define LF_NAME "lf%05d"          /* --locality: the sticky files, lf00000... */
#define LF_NBYTES 4096            /* --locality: the size of each */
#define LF_HELD_MAX 64            /* --locality: sticky files a host keeps at most */

/* ---- options ---- */

struct opts {
    int hosts, threads, conns, http_threads, max_send, users, json, upload, keepalive, keep, locality;
    double seconds, warmup, rate;
    long jobs;
    const char *project, *locus_bin;
};

enum opt_kind { O_INT, O_LONG, O_DOUBLE, O_STR, O_FLAG, O_NOFLAG };

struct opt {
    const char *name;
    enum opt_kind kind;
    void *dest;
    const char *arg, *help;
    int seen;
};

/* One table drives parsing and --help, so an option is one line to add. */
static int opts_table(struct opts *o, struct opt *t)
{
    const struct opt v[] = {
        {"hosts", O_INT, &o->hosts, "N", "simulated hosts (1000)", 0},
        {"threads", O_INT, &o->threads, "T", "client threads, each multiplexing its share of hosts (8)", 0},
        {"conns", O_INT, &o->conns, "C", "connections in all, i.e. RPCs in flight (min(hosts, 32))", 0},
        {"seconds", O_DOUBLE, &o->seconds, "S", "measured seconds (20)", 0},
        {"warmup", O_DOUBLE, &o->warmup, "S", "seconds before measuring; also until every host has its id (3)", 0},
        {"rate", O_DOUBLE, &o->rate, "R", "at most R scheduler RPCs a second in all (0: as fast as answered)", 0},
        {"jobs", O_LONG, &o->jobs, "J", "jobs in the batch (1000000)", 0},
        {"project", O_STR, &o->project, "DIR", "reuse this project instead of creating one", 0},
        {"locus-bin", O_STR, &o->locus_bin, "DIR", "where locus and locusd are (this program's folder)", 0},
        {"http-threads", O_INT, &o->http_threads, "N", "config.xml <http_threads> (4)", 0},
        {"max-send", O_INT, &o->max_send, "N", "config.xml <max_wus_to_send>: jobs per RPC (4)", 0},
        {"users", O_INT, &o->users, "N", "users the hosts belong to (100)", 0},
        {"upload", O_FLAG, &o->upload, NULL, "jobs with one output file, uploaded before each report", 0},
        {"no-keepalive", O_NOFLAG, &o->keepalive, NULL, "a new connection per request, as BOINC clients do", 0},
        {"keep", O_FLAG, &o->keep, NULL, "keep the temporary project (for --project next time)", 0},
        {"locality", O_INT, &o->locality, "FILES", "locality scheduling; the jobs read FILES sticky files (off)", 0},
        {"json", O_FLAG, &o->json, NULL, "the figures as one JSON object on the last line", 0},
    };
    int n = (int)(sizeof v / sizeof v[0]);
    if (t) memcpy(t, v, sizeof v);
    return n;
}

static void usage(FILE *out, const struct opt *t, int n)
{
    fprintf(out, "usage: bench-rpc [options]\n");
    for (int i = 0; i < n; i++) {
        char left[48];
        snprintf(left, sizeof left, "--%s%s%s", t[i].name, t[i].arg ? " " : "", t[i].arg ? t[i].arg : "");
        fprintf(out, "  %-22s %s\n", left, t[i].help);
    }
}

static int parse_value(struct opt *p, const char *v)
{
    char *end;
    errno = 0;
    switch (p->kind) {
    case O_INT: {
        long x = strtol(v, &end, 10);
        if (*end || errno || x < 1 || x > 10000000) return -1;
        *(int *)p->dest = (int)x;
        return 0;
    }
    case O_LONG: {
        long x = strtol(v, &end, 10);
        if (*end || errno || x < 1) return -1;
        *(long *)p->dest = x;
        return 0;
    }
    case O_DOUBLE: {
        double x = strtod(v, &end);
        if (*end || errno || !(x >= 0)) return -1;
        *(double *)p->dest = x;
        return 0;
    }
    default:
        *(const char **)p->dest = v;
        return 0;
    }
}

/* 0 ok, 1 --help shown, 2 usage error (message printed). */
static int parse_args(int argc, char **argv, struct opts *o, struct opt *t, int n)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout, t, n);
            return 1;
        }
        struct opt *p = NULL;
        for (int k = 0; k < n && !p; k++)
            if (!strncmp(argv[i], "--", 2) && !strcmp(argv[i] + 2, t[k].name)) p = &t[k];
        if (!p) {
            fprintf(stderr, "bench-rpc: unknown option '%s' (see --help)\n", argv[i]);
            return 2;
        }
        p->seen = 1;
        if (p->kind == O_FLAG || p->kind == O_NOFLAG) {
            *(int *)p->dest = p->kind == O_FLAG;
            continue;
        }
        if (i + 1 >= argc || parse_value(p, argv[++i])) {
            fprintf(stderr, "bench-rpc: --%s needs %s%s (see --help)\n", p->name, p->arg,
                    p->kind == O_STR ? "" : ", a positive number");
            return 2;
        }
    }
    if (o->conns == 0) o->conns = o->hosts < 32 ? o->hosts : 32;
    if (o->threads > o->conns) o->threads = o->conns;
    if (o->seconds <= 0) {
        fprintf(stderr, "bench-rpc: --seconds must be positive\n");
        return 2;
    }
    if (o->locality > o->jobs) {
        fprintf(stderr, "bench-rpc: --locality %d needs at least as many --jobs (%ld)\n", o->locality, o->jobs);
        return 2;
    }
    return 0;
}

static int opt_seen(const struct opt *t, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, name)) return t[i].seen;
    return 0;
}

/* ---- small helpers ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) && errno == EINTR) {}
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench-rpc: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* The last non-empty line of a file, for one-line error messages. */
static void last_line(const char *path, char *out, size_t len)
{
    size_t n;
    char *text = read_file(path, 1 << 24, &n);
    out[0] = 0;
    if (!text) return;
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r')) text[--n] = 0;
    char *p = strrchr(text, '\n');
    snprintf(out, len, "%s", p ? p + 1 : text);
    free(text);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(const char *dir) { nftw(dir, rm_entry, 64, FTW_DEPTH | FTW_PHYS); }

/* Many connections, and the server's own files, need more than 1024 fds. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* ---- running the locus command ---- */

/* Runs argv (NULL-terminated); its stdout goes to out when given, else to
 * the log, and its stderr to the log. Returns the exit status, -1 if it
 * could not run. */
static int run_cmd(char *const argv[], struct strbuf *out, const char *log)
{
    int pfd[2] = {-1, -1};
    if (out && pipe2(pfd, O_CLOEXEC)) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (lfd >= 0) {
            dup2(lfd, 2);
            dup2(out ? pfd[1] : lfd, 1);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    if (out) {
        close(pfd[1]);
        char buf[4096];
        ssize_t r;
        while ((r = read(pfd[0], buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR))
            if (r > 0) sb_append(out, buf, (size_t)r);
        close(pfd[0]);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* run_cmd, and on failure one line saying which command and why. */
static int locus(const char *log, struct strbuf *out, char *const argv[])
{
    int rc = run_cmd(argv, out, log);
    if (rc == 0) return 0;
    char why[512];
    last_line(log, why, sizeof why);
    note("'locus %s %s' failed (exit %d): %s (full log: %s)", argv[1], argv[2] ? argv[2] : "", rc,
         why[0] ? why : "no message", log);
    return -1;
}

/* ---- the project ---- */

struct setup {
    char work[1024];                  /* temporary folder: logs, and the project unless --project */
    char proj[PROJECT_PATH_MAX];
    char bin_locus[PROJECT_PATH_MAX], bin_locusd[PROJECT_PATH_MAX];
    char setup_log[1100], server_log[1100];
    char **auth;                      /* the users' account keys */
    int nauth;
    int outputs;                      /* the batch made has output files */
    double batch_s;                   /* time to create the batch */
    double files_s;                   /* --locality: time to add the sticky files */
};

static void add_auth(struct setup *s, const char *key)
{
    s->auth = xrealloc(s->auth, (size_t)(s->nauth + 1) * sizeof *s->auth);
    s->auth[s->nauth++] = xstrdup(key);
}

/* A loopback port nobody listens on now. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof a) && !getsockname(fd, (struct sockaddr *)&a, &len))
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

/* Whether this locus has `batch create --no-output` (being added). */
static int has_no_output(struct setup *s)
{
    struct strbuf out;
    sb_init(&out);
    char *argv[] = {s->bin_locus, "help", NULL};
    int yes = run_cmd(argv, &out, s->setup_log) == 0 && strstr(out.s, "--no-output");
    sb_free(&out);
    return yes;
}

/* The store keeps only the keys' hashes: the keys made for the benchmark's
 * users are kept in the project (BENCH_KEYS, private) for a later --project. */
#define BENCH_KEYS "bench_keys.txt"

static int save_keys(struct setup *s)
{
    struct strbuf b;
    sb_init(&b);
    for (int i = 0; i < s->nauth; i++) sb_printf(&b, "%s\n", s->auth[i]);
    char path[PROJECT_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" BENCH_KEYS, s->proj);
    int rc = write_file_atomic_mode(path, b.s ? b.s : "", b.len, 0600);
    if (rc) note("cannot write %s: %s", path, strerror(errno));
    sb_free(&b);
    return rc;
}

static int create_users(struct setup *s, int n)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "bench%d", i);
        struct strbuf key;
        sb_init(&key);
        char *argv[] = {s->bin_locus, "user", "create", s->proj, name, NULL};
        int rc = locus(s->setup_log, &key, argv);
        while (key.len && (key.s[key.len - 1] == '\n' || key.s[key.len - 1] == '\r')) key.s[--key.len] = 0;
        if (!rc) add_auth(s, key.s);
        sb_free(&key);
        if (rc) return -1;
    }
    return save_keys(s);
}

static int write_buf(const char *path, const void *data, size_t n, int mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) return -1;
    const char *p = data;
    int rc = 0;
    while (n && !rc) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) rc = -1;
        else p += w, n -= (size_t)w;
    }
    return close(fd) || rc ? -1 : 0;
}

static int write_text(const char *path, const char *text, int mode)
{
    return write_buf(path, text, strlen(text), mode);
}

/* ---- --locality: sticky files, and jobs named after them ---- */

/* The file of "lfNNNNN" (exactly, and below nfiles); -1 if not one of them. */
static int lf_index(const char *name, int nfiles)
{
    if (strncmp(name, "lf", 2) || name[2] < '0' || name[2] > '9') return -1;
    char *end;
    long i = strtol(name + 2, &end, 10);
    return *end || end - name < 7 || i >= nfiles ? -1 : (int)i;
}

/* Jobs per file: contiguous ranges of job numbers, the last file takes the rest. */
static long lf_first_job(long jobs, int nfiles, int f) { return (long)f * (jobs / nfiles) + 1; }
static long lf_jobs(long jobs, int nfiles, int f)
{
    return f == nfiles - 1 ? jobs - lf_first_job(jobs, nfiles, f) + 1 : jobs / nfiles;
}

/* LF_NBYTES deterministic bytes, different for every file. */
static void lf_content(int i, unsigned char *data)
{
    uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
    for (size_t k = 0; k + 8 <= LF_NBYTES; k += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(data + k, &x, 8);
    }
}

/* Writes o->locality files and adds each, sticky and report-on-rpc. */
static int add_locality_files(struct setup *s, const struct opts *o)
{
    char dir[PROJECT_PATH_MAX];
    snprintf(dir, sizeof dir, "%s/lf", s->work);
    if (mkdir(dir, 0755)) {
        note("cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    note("adding %d sticky files of %d bytes (locus file add, one each)", o->locality, LF_NBYTES);
    double t = now_s();
    unsigned char data[LF_NBYTES];
    for (int i = 0; i < o->locality; i++) {
        char path[PROJECT_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/" LF_NAME, dir, i);
        lf_content(i, data);
        if (write_buf(path, data, sizeof data, 0644)) {
            note("cannot write %s: %s", path, strerror(errno));
            return -1;
        }
        char *argv[] = {s->bin_locus, "file", "add", s->proj, path, "--sticky", "--report-on-rpc", NULL};
        if (locus(s->setup_log, NULL, argv)) return -1;
    }
    s->files_s = now_s() - t;
    return 0;
}

/* The batch as JSON lines: job J is named lfNNNNN__J and reads file NNNNN
 * of its range, written in one go (a million lines are about 70 MB). */
static int write_locality_jobs(const char *path, const struct opts *o)
{
    struct strbuf b;
    sb_init(&b);
    long per = o->jobs / o->locality;
    for (long j = 1; j <= o->jobs; j++) {
        long f = (j - 1) / per;
        if (f >= o->locality) f = o->locality - 1;
        sb_printf(&b, "{\"name\": \"" LF_NAME "__%ld\", \"cmdline\": \"--seed %ld\", \"inputs\": [\"" LF_NAME
                      "=in\"]}\n",
                  (int)f, j, j, (int)f);
    }
    int rc = write_buf(path, b.s, b.len, 0644);
    sb_free(&b);
    return rc;
}

static int create_batch(struct setup *s, const struct opts *o, int no_output)
{
    char tmpl[PROJECT_PATH_MAX + 32], count[32];
    snprintf(tmpl, sizeof tmpl, "%s/%s", s->work, o->locality ? "jobs.jsonl" : "template.json");
    snprintf(count, sizeof count, "%ld", o->jobs);
    if (o->locality ? write_locality_jobs(tmpl, o) : write_text(tmpl, "{\"cmdline\": \"--seed {n}\"}\n", 0644)) {
        note("cannot write %s: %s", tmpl, strerror(errno));
        return -1;
    }
    char outspec[64];
    snprintf(outspec, sizeof outspec, "out:%d", OUTPUT_MAX_NBYTES);
    char *argv[20];
    int n = 0;
    char *head[] = {s->bin_locus, "batch", "create", s->proj, "--app", "bench", "--name", "rpcload"};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) argv[n++] = head[i];
    if (o->locality) {
        argv[n++] = "--jobs";
        argv[n++] = tmpl;
    } else {
        argv[n++] = "--count";
        argv[n++] = count;
        argv[n++] = "--input-template";
        argv[n++] = tmpl;
    }
    argv[n++] = "--quorum";
    argv[n++] = "1";
    argv[n++] = no_output ? "--no-output" : "--output";
    if (!no_output) argv[n++] = outspec;
    argv[n] = NULL;
    double t = now_s();
    if (locus(s->setup_log, NULL, argv)) return -1;
    s->batch_s = now_s() - t;
    s->outputs = !no_output;
    return 0;
}

/* A new project: init, one app, the users and a batch of o->jobs jobs. */
static int create_project(struct setup *s, const struct opts *o)
{
    int port = free_port();
    if (port < 0) {
        note("cannot find a free loopback port: %s", strerror(errno));
        return -1;
    }
    snprintf(s->proj, sizeof s->proj, "%s/proj", s->work);
    char url[128], app[PROJECT_PATH_MAX + 16];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/bench/", port);
    snprintf(app, sizeof app, "%s/app.sh", s->work);
    if (write_text(app, "#!/bin/sh\nexit 0\n", 0755)) {
        note("cannot write %s: %s", app, strerror(errno));
        return -1;
    }
    char *init[] = {s->bin_locus, "init", s->proj, "--url", url, "--name", "bench-rpc", NULL};
    char *add[] = {s->bin_locus, "app", "add", s->proj, "bench", "--platform", PLATFORM, "--exe", app,
                   "--version", "1", NULL};
    if (locus(s->setup_log, NULL, init) || locus(s->setup_log, NULL, add) || create_users(s, o->users))
        return -1;
    int no_output = !o->upload && has_no_output(s);
    if (!o->upload && !no_output)
        note("this locus has no 'batch create --no-output' yet: jobs get an output file that hosts upload");
    if (o->locality && add_locality_files(s, o)) return -1;
    if (o->locality) note("creating a batch of %ld jobs, about %ld per file", o->jobs, o->jobs / o->locality);
    else note("creating a batch of %ld jobs", o->jobs);
    return create_batch(s, o, no_output);
}

/* Sets <tag>value</tag> in a config.xml text, adding it if absent. */
static void xml_set(struct strbuf *doc, const char *tag, const char *value)
{
    char open_tag[64], close_tag[64];
    snprintf(open_tag, sizeof open_tag, "<%s>", tag);
    snprintf(close_tag, sizeof close_tag, "</%s>", tag);
    char *a = strstr(doc->s, open_tag), *b = a ? strstr(a, close_tag) : NULL;
    struct strbuf n;
    sb_init(&n);
    if (a && b) {
        sb_append(&n, doc->s, (size_t)(a - doc->s) + strlen(open_tag));
        sb_puts(&n, value);
        sb_puts(&n, b);
    } else {
        char *end = strstr(doc->s, "</config>");
        size_t at = end ? (size_t)(end - doc->s) : doc->len;
        sb_append(&n, doc->s, at);
        sb_printf(&n, "  %s%s%s\n", open_tag, value, close_tag);
        sb_puts(&n, doc->s + at);
    }
    sb_free(doc);
    *doc = n;
}

/* Adds the empty element <tag/> to a config.xml text, before </config>. */
static void xml_add_empty(struct strbuf *doc, const char *tag)
{
    char *end = strstr(doc->s, "</config>");
    size_t at = end ? (size_t)(end - doc->s) : doc->len;
    struct strbuf n;
    sb_init(&n);
    sb_append(&n, doc->s, at);
    sb_printf(&n, "  <%s/>\n", tag);
    sb_puts(&n, doc->s + at);
    sb_free(doc);
    *doc = n;
}

/* Writes the benchmark's settings into config.xml; with --project only the
 * ones given on the command line, so a reused project keeps its own. A
 * project it makes has no daily quota: its hosts take hundreds of jobs
 * each in seconds, and the figures are the RPC path's, not the quota's. */
static int edit_config(const struct setup *s, const struct opts *o, int http_threads, int max_send, int made)
{
    if (!http_threads && !max_send && !o->locality && !made) return 0;
    char path[PROJECT_PATH_MAX + 16], v[32];
    snprintf(path, sizeof path, "%s/config.xml", s->proj);
    size_t len;
    char *text = read_file(path, 1 << 20, &len);
    if (!text) {
        note("cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    struct strbuf doc;
    sb_init(&doc);
    sb_append(&doc, text, len);
    free(text);
    snprintf(v, sizeof v, "%d", o->http_threads);
    if (http_threads) xml_set(&doc, "http_threads", v);
    snprintf(v, sizeof v, "%d", o->max_send);
    if (max_send) xml_set(&doc, "max_wus_to_send", v);
    if (made) xml_set(&doc, "daily_result_quota", "0");
    if (o->locality && !strstr(doc.s, "<locality_scheduling/>") && !strstr(doc.s, "<locality_scheduling>"))
        xml_add_empty(&doc, "locality_scheduling");
    int rc = write_file_atomic(path, doc.s, doc.len);
    if (rc) note("cannot write %s: %s", path, strerror(errno));
    sb_free(&doc);
    return rc;
}

/* The account keys of a reused project: those a run with --keep saved. */
static int read_users(struct setup *s)
{
    char path[PROJECT_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" BENCH_KEYS, s->proj);
    size_t len;
    char *text = read_file(path, 1 << 24, &len);
    if (!text) {
        note("cannot read %s (%s): reuse a project a run with --keep made", path, strerror(errno));
        return -1;
    }
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (*line) add_auth(s, line);
    free(text);
    if (!s->nauth) note("%s lists no keys", path);
    return s->nauth ? 0 : -1;
}

/* ---- the server process ---- */

struct endpoint {
    struct sockaddr_in addr;
    char host_hdr[80];                /* "127.0.0.1:PORT" */
    char prefix[256];                 /* "/bench/" */
    char sched_path[300], upload_path[300];
    char upload_url[700];
};

static int endpoint_of(const char *proj, struct endpoint *e)
{
    struct project p;
    char err[512];
    if (project_load(&p, proj, err, sizeof err)) {
        note("%s", err);
        return -1;
    }
    char host[128];
    int port;
    url_split(p.cfg.master_url, host, sizeof host, &port, e->prefix, sizeof e->prefix);
    e->addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)p.cfg.listen_port)};
    if (inet_pton(AF_INET, p.cfg.listen_addr, &e->addr.sin_addr) != 1) {
        note("%s listens on '%s', not an IPv4 address", proj, p.cfg.listen_addr);
        return -1;
    }
    snprintf(e->host_hdr, sizeof e->host_hdr, "%s:%d", p.cfg.listen_addr, p.cfg.listen_port);
    snprintf(e->sched_path, sizeof e->sched_path, "%sscheduler", e->prefix);
    snprintf(e->upload_path, sizeof e->upload_path, "%sfile_upload_handler", e->prefix);
    snprintf(e->upload_url, sizeof e->upload_url, "%sfile_upload_handler", p.cfg.master_url);
    return 0;
}

static pid_t server_spawn(const struct setup *s)
{
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) dup2(devnull, 0);
        char *argv[] = {(char *)s->bin_locusd, (char *)s->proj, "--log", (char *)s->server_log, NULL};
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* The status of GET path, or -1 if nothing answers. */
static int http_get_status(const struct endpoint *e, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int status = -1;
    char req[512], buf[64];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, e->host_hdr);
    if (!connect(fd, (const struct sockaddr *)&e->addr, sizeof e->addr) &&
        write(fd, req, strlen(req)) == (ssize_t)strlen(req)) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        if (n > 12) {
            buf[n] = 0;
            sscanf(buf, "HTTP/1.%*d %d", &status);
        }
    }
    close(fd);
    return status;
}

/* Waits until the master page answers: 0; 1 if locusd exited (and is
 * reaped); -1 if it is still running but never answered. */
static int server_wait_ready(pid_t pid, const struct setup *s, const struct endpoint *e)
{
    double t0 = now_s();
    while (now_s() - t0 < READY_TIMEOUT_S) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            char why[512];
            last_line(s->server_log, why, sizeof why);
            note("locusd exited before answering: %s (log: %s)", why[0] ? why : "no message", s->server_log);
            return 1;
        }
        if (http_get_status(e, e->prefix) == 200) return 0;
        sleep_s(0.05);
    }
    note("locusd did not answer within %.0f s (log: %s)", READY_TIMEOUT_S, s->server_log);
    return -1;
}

/* A line "Key:   123 kB" of /proc/PID/status, in MB; -1 if absent. */
static double proc_status_mb(pid_t pid, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    double mb = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') mb = strtod(line + kl + 1, NULL) / 1024.0;
    if (f) fclose(f);
    return mb;
}

/* User plus system CPU seconds a process has used. */
static double proc_cpu_s(pid_t pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');   /* the command name may hold spaces */
    unsigned long ut = 0, st = 0;
    if (p) sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

/* SIGTERM, then wait: locusd commits what it acknowledged and drains its
 * validator and assimilator queues first, which takes long when they fell
 * behind (*took says how long). Its exit status, 128 + N if signal N ended it. */
static int server_stop(pid_t pid, double *took)
{
    kill(pid, SIGTERM);
    int status, told = 0;
    double t0 = now_s();
    while ((*took = now_s() - t0) < STOP_TIMEOUT_S) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (!told && *took > 10) {
            note("locusd is still stopping after 10 s (draining its queues?)");
            told = 1;
        }
        sleep_s(0.05);
    }
    note("locusd did not stop within %.0f s of SIGTERM: killing it", STOP_TIMEOUT_S);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* ---- simulated hosts ---- */

/* An instance a host holds, with the output files it must upload and
 * their upload certificates. */
struct held {
    char name[NAME_LEN];
    int nout;
    char (*out)[NAME_LEN];
    char (*cert)[UPLOAD_CERT_LEN + 1];
};

struct host {
    int idx;
    const char *auth;
    int64_t hostid;
    int seqno;
    char cpid[33];
    struct held *held;                /* received in the last reply: reported in the next */
    int nheld, capheld;
    int up_inst, up_file;             /* next output file to upload */
    int *lf, nlf;                     /* --locality: sticky files held, oldest first */
};

static void host_clear_held(struct host *h)
{
    for (int i = 0; i < h->nheld; i++) free(h->held[i].out), free(h->held[i].cert);
    h->nheld = 0;
    h->up_inst = h->up_file = 0;
}

/* Moves the upload cursor past instances without outputs; 1 if one remains. */
static int host_has_upload(struct host *h)
{
    while (h->up_inst < h->nheld && h->up_file >= h->held[h->up_inst].nout) {
        h->up_inst++;
        h->up_file = 0;
    }
    return h->up_inst < h->nheld;
}

/* What a simulated app writes: small, and different for every file. */
static void output_text(const char *file, char *out, size_t len)
{
    snprintf(out, len, "bench-rpc output of %s\n", file);
}

static void put_result(struct strbuf *b, const struct endpoint *e, const struct held *in, unsigned seed)
{
    sb_printf(b, "<result>\n    <name>%s</name>\n    <final_cpu_time>%u.250000</final_cpu_time>\n"
                 "    <final_elapsed_time>%u.500000</final_elapsed_time>\n    <exit_status>0</exit_status>\n"
                 "    <state>5</state>\n    <platform>" PLATFORM "</platform>\n    <version_num>1</version_num>\n"
                 "    <app_version_num>1</app_version_num>\n",
              in->name, 900 + seed % 200, 950 + seed % 200);
    for (int k = 0; k < in->nout; k++) {
        char text[NAME_LEN + 64], md5[MD5_HEX_LEN];
        output_text(in->out[k], text, sizeof text);
        md5_hex_buf(text, strlen(text), md5);
        sb_printf(b, "    <file_info>\n        <name>%s</name>\n        <nbytes>%zu.000000</nbytes>\n"
                     "        <max_nbytes>%d.000000</max_nbytes>\n        <md5_cksum>%s</md5_cksum>\n"
                     "        <upload_url>%s</upload_url>\n    </file_info>\n",
                  in->out[k], strlen(text), OUTPUT_MAX_NBYTES, md5, e->upload_url);
    }
    sb_puts(b, "    <stderr_out>\n<core_client_version>7.20.5</core_client_version>\n<![CDATA[\n"
               "<stderr_txt>\nbench-rpc: done\n</stderr_txt>\n]]>\n    </stderr_out>\n</result>\n");
}

/* The body of a scheduler request as a 7.20.5 client writes it (the parts
 * locusd reads), reporting every instance held. */
static void sched_body(struct strbuf *b, const struct endpoint *e, const struct host *h)
{
    sb_printf(b, "<scheduler_request>\n    <authenticator>%s</authenticator>\n    <hostid>%lld</hostid>\n"
                 "    <rpc_seqno>%d</rpc_seqno>\n    <core_client_major_version>7</core_client_major_version>\n"
                 "    <core_client_minor_version>20</core_client_minor_version>\n"
                 "    <core_client_release>5</core_client_release>\n"
                 "    <resource_share_fraction>1.000000</resource_share_fraction>\n"
                 "    <duration_correction_factor>1.000000</duration_correction_factor>\n"
                 "    <work_req_seconds>207360.000000</work_req_seconds>\n"
                 "    <cpu_req_secs>207360.000000</cpu_req_secs>\n"
                 "    <cpu_req_instances>4.000000</cpu_req_instances>\n"
                 "    <estimated_delay>0.000000</estimated_delay>\n"
                 "    <client_cap_plan_class>1</client_cap_plan_class>\n"
                 "    <platform_name>" PLATFORM "</platform_name>\n"
                 "<code_sign_key>\nbench-rpc holds the key\n.\n</code_sign_key>\n"
                 "<time_stats>\n    <on_frac>1.000000</on_frac>\n    <connected_frac>1.000000</connected_frac>\n"
                 "    <active_frac>1.000000</active_frac>\n    <gpu_active_frac>1.000000</gpu_active_frac>\n"
                 "</time_stats>\n"
                 "<host_info>\n    <timezone>0</timezone>\n    <domain_name>bench-host-%d</domain_name>\n"
                 "    <ip_addr>127.0.0.1</ip_addr>\n    <host_cpid>%s</host_cpid>\n    <p_ncpus>4</p_ncpus>\n"
                 "    <p_vendor>AuthenticAMD</p_vendor>\n    <p_model>bench-rpc simulated host</p_model>\n"
                 "    <p_fpops>1000000000.000000</p_fpops>\n    <p_iops>1000000000.000000</p_iops>\n"
                 "    <m_nbytes>8000000000.000000</m_nbytes>\n    <d_total>100000000000.000000</d_total>\n"
                 "    <d_free>50000000000.000000</d_free>\n    <os_name>Linux</os_name>\n"
                 "    <os_version>6.1.0</os_version>\n</host_info>\n",
              h->auth, (long long)h->hostid, h->seqno, h->idx, h->cpid);
    for (int i = 0; i < h->nheld; i++) put_result(b, e, &h->held[i], (unsigned)(h->idx + i));
    /* sticky files, as the client lists them (--locality) */
    for (int i = 0; i < h->nlf; i++)
        sb_printf(b, "<file_info>\n    <name>" LF_NAME "</name>\n    <nbytes>%d.000000</nbytes>\n"
                     "    <status>1</status>\n</file_info>\n", h->lf[i], LF_NBYTES);
    /* every instance held is reported, so none is left to list here */
    sb_puts(b, "<other_results>\n</other_results>\n</scheduler_request>\n");
}

/* An upload of the host's next output file, as in protocol notes 3.2. */
static void upload_body(struct strbuf *b, const struct host *h)
{
    const char *file = h->held[h->up_inst].out[h->up_file];
    const char *cert = h->held[h->up_inst].cert[h->up_file];
    char text[NAME_LEN + 64], md5[MD5_HEX_LEN];
    output_text(file, text, sizeof text);
    md5_hex_buf(text, strlen(text), md5);
    sb_printf(b, "<data_server_request>\n    <core_client_major_version>7</core_client_major_version>\n"
                 "    <core_client_minor_version>20</core_client_minor_version>\n"
                 "    <core_client_release>5</core_client_release>\n<file_upload>\n<file_info>\n"
                 "<name>%s</name>\n<xml_signature>\n%s\n</xml_signature>\n<max_nbytes>%d</max_nbytes>\n</file_info>\n"
                 "<nbytes>%zu</nbytes>\n<md5_cksum>%s</md5_cksum>\n<offset>0</offset>\n<data>\n%s",
              file, cert, OUTPUT_MAX_NBYTES, strlen(text), md5, text);
}

/* ---- reading replies ---- */

/* The text of the first <tag> inside [from, to), into out; 0 if found. */
static int tag_text(const char *from, const char *to, const char *tag, char *out, size_t len)
{
    char open_tag[64], close_tag[64];
    snprintf(open_tag, sizeof open_tag, "<%s>", tag);
    snprintf(close_tag, sizeof close_tag, "</%s>", tag);
    const char *a = memmem(from, (size_t)(to - from), open_tag, strlen(open_tag));
    if (!a) return -1;
    a += strlen(open_tag);
    const char *b = memmem(a, (size_t)(to - a), close_tag, strlen(close_tag));
    if (!b || (size_t)(b - a) >= len) return -1;
    memcpy(out, a, (size_t)(b - a));
    out[b - a] = 0;
    return 0;
}

static int count_of(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* The upload certificate of output file in the reply body, into cert ("" if
 * the reply has none): the <xml_signature> of its <file_info>. */
static void file_cert(const char *body, const char *file, char cert[UPLOAD_CERT_LEN + 1])
{
    char key[NAME_LEN + 16];
    snprintf(key, sizeof key, "<name>%s</name>", file);
    cert[0] = 0;
    const char *at = strstr(body, key), *end = at ? strstr(at, "</file_info>") : NULL;
    if (end) tag_text(at, end, "xml_signature", cert, UPLOAD_CERT_LEN + 1);
}

/* One <result> of a reply: its name and output files (its file_refs). */
static int take_result(struct host *h, const char *body, const char *from, const char *to)
{
    if (h->nheld == h->capheld) {
        h->capheld = h->capheld ? 2 * h->capheld : 8;
        h->held = xrealloc(h->held, (size_t)h->capheld * sizeof *h->held);
    }
    struct held *in = &h->held[h->nheld];
    if (tag_text(from, to, "name", in->name, sizeof in->name)) return -1;
    in->nout = 0;
    in->out = NULL;
    in->cert = NULL;
    char file[NAME_LEN];
    for (const char *p = from; p < to && !tag_text(p, to, "file_name", file, sizeof file);) {
        in->out = xrealloc(in->out, (size_t)(in->nout + 1) * sizeof *in->out);
        in->cert = xrealloc(in->cert, (size_t)(in->nout + 1) * sizeof *in->cert);
        file_cert(body, file, in->cert[in->nout]);
        memcpy(in->out[in->nout++], file, sizeof file);
        p = memmem(p, (size_t)(to - p), "</file_name>", 12) + 12;
    }
    h->nheld++;
    return 0;
}

/* What one scheduler reply gave, and whether it was right; with
 * --locality also what it did to the host's sticky files. */
struct sched_outcome {
    int jobs, acks, registered;
    int fetched, deleted, deleted_unheld, deleted_unsent, deleted_sent, evicted;
    char why[160];
};

static int take_sched_reply(struct host *h, int nreported, const char *body, struct sched_outcome *o)
{
    memset(o, 0, sizeof *o);
    if (!strstr(body, "<scheduler_reply>")) {
        snprintf(o->why, sizeof o->why, "reply is not a <scheduler_reply>: %.60s", body);
        return -1;
    }
    o->acks = count_of(body, "<result_ack>");
    if (o->acks != nreported) {
        snprintf(o->why, sizeof o->why, "%d results reported but %d acknowledged", nreported, o->acks);
        return -1;
    }
    if (!h->hostid) {
        char id[32];
        const char *end = body + strlen(body);
        if (tag_text(body, end, "hostid", id, sizeof id) || (h->hostid = strtoll(id, NULL, 10)) <= 0) {
            snprintf(o->why, sizeof o->why, "first reply without a <hostid>");
            return -1;
        }
        h->seqno = 0;
        o->registered = 1;
    } else {
        h->seqno++;
    }
    host_clear_held(h);
    /* "<result>" exactly: <result_ack> and <result_abort> do not match */
    for (const char *p = strstr(body, "<result>"); p; p = strstr(p, "<result>")) {
        const char *end = strstr(p, "</result>");
        if (!end || take_result(h, body, p, end)) {
            snprintf(o->why, sizeof o->why, "malformed <result> in the reply");
            return -1;
        }
        o->jobs++;
        p = end;
    }
    return 0;
}

static int take_upload_reply(const char *body, char *why, size_t len)
{
    if (strstr(body, "<status>0</status>")) return 0;
    snprintf(why, len, "upload refused: %.100s", body);
    return -1;
}

/* ---- the load: connections, workers ---- */

enum conn_state { C_UNUSED, C_CONNECTING, C_SENDING, C_RECEIVING, C_RETRY };
enum req_kind { REQ_SCHED, REQ_UPLOAD };

struct conn {
    int fd;
    enum conn_state state;
    struct worker *w;
    struct host *host;
    enum req_kind kind;
    int nreported;                    /* results in the request in flight */
    struct strbuf out;                /* the request */
    size_t sent;
    char *in;                         /* the reply so far, NUL-terminated */
    size_t in_len, in_cap;
    size_t body_at;                   /* 0 until the header is complete */
    size_t body_len;
    int status, server_closes;
    double t_send, retry_at;
};

struct stats {
    long rpcs, jobs, reported, uploads, errors, upload_errors, registered;
    long no_work;                     /* scheduler replies without a job */
    long lf_fetched, lf_deleted, lf_deleted_unheld, lf_deleted_unsent, lf_deleted_sent, lf_evicted;
    double *lat_ms;
    size_t nlat, caplat;
};

struct load;

struct worker {
    struct load *L;
    pthread_t thread;
    int epfd;
    struct host **ring;               /* idle hosts, first come first served */
    size_t ring_head, ring_n, ring_cap;
    struct conn *conns;
    int nconns;
    struct strbuf body;               /* scratch */
    struct stats st;                  /* the measured window only */
    double next_turn;                 /* --rate: when the next scheduler RPC may begin */
};

struct load {
    const struct opts *o;
    const struct endpoint *e;
    struct host *hosts;
    int nhosts;
    struct worker *workers;
    atomic_long attempts, failures;   /* the whole run, for the 1% rule */
    atomic_int stop, registered;
    _Atomic double window_start;      /* 0 until measuring starts */
    double window_end;
    atomic_flag first_error_taken;
    char first_error[256];
    atomic_int *lf_sent;              /* --locality: jobs received per file, the whole run */
    int lf_sent_known;                /* the batch is ours, so lf_jobs says how many each file has */
};

static int measuring(const struct load *L, double t)
{
    double a = atomic_load(&L->window_start);
    return a > 0 && t >= a && t < a + L->o->seconds;
}

static void ring_push(struct worker *w, struct host *h)
{
    w->ring[(w->ring_head + w->ring_n++) % w->ring_cap] = h;
}

static struct host *ring_pop(struct worker *w)
{
    if (!w->ring_n) return NULL;
    struct host *h = w->ring[w->ring_head];
    w->ring_head = (w->ring_head + 1) % w->ring_cap;
    w->ring_n--;
    return h;
}

/* Counts one finished request for the 1% rule; stops the run past it. */
static void count_attempt(struct load *L, int failed, const char *why)
{
    long a = atomic_fetch_add(&L->attempts, 1) + 1;
    if (!failed) return;
    long f = atomic_fetch_add(&L->failures, 1) + 1;
    if (!atomic_flag_test_and_set(&L->first_error_taken)) snprintf(L->first_error, sizeof L->first_error, "%s", why);
    if ((a >= MIN_ATTEMPTS || f >= MIN_ATTEMPTS) && f * 100 > a) atomic_store(&L->stop, 1);
}

static void record_latency(struct stats *st, double ms)
{
    if (st->nlat == st->caplat) {
        st->caplat = st->caplat ? 2 * st->caplat : 65536;
        st->lat_ms = xrealloc(st->lat_ms, st->caplat * sizeof *st->lat_ms);
    }
    st->lat_ms[st->nlat++] = ms;
}

static void conn_close(struct conn *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

static int conn_open(struct worker *w, struct conn *c)
{
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) return -1;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP, .data.ptr = c};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev)) {
        conn_close(c);
        return -1;
    }
    int rc = connect(c->fd, (const struct sockaddr *)&w->L->e->addr, sizeof w->L->e->addr);
    if (rc && errno != EINPROGRESS) {
        conn_close(c);
        return -1;
    }
    c->state = rc ? C_CONNECTING : C_SENDING;
    return 0;
}

static void build_request(struct worker *w, struct conn *c)
{
    struct host *h = c->host;
    const struct endpoint *e = w->L->e;
    sb_reset(&w->body);
    c->kind = host_has_upload(h) ? REQ_UPLOAD : REQ_SCHED;
    if (c->kind == REQ_UPLOAD) upload_body(&w->body, h);
    else sched_body(&w->body, e, h);
    c->nreported = h->nheld;
    sb_reset(&c->out);
    sb_printf(&c->out, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: BOINC client (" PLATFORM " 7.20.5)\r\n"
                       "Accept: */*\r\nAccept-Encoding: deflate, gzip, br, zstd\r\n"
                       "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %zu\r\n%s\r\n",
              c->kind == REQ_UPLOAD ? e->upload_path : e->sched_path, e->host_hdr, w->body.len,
              w->L->o->keepalive ? "" : "Connection: close\r\n");
    sb_append(&c->out, w->body.s, w->body.len);
    c->sent = 0;
    c->in_len = c->body_at = c->body_len = 0;
    c->status = c->server_closes = 0;
}

static void request_failed(struct worker *w, struct conn *c, const char *why);
static void conn_begin(struct worker *w, struct conn *c);

/* Sends what the socket takes; on to receiving once all is out. */
static void conn_send(struct worker *w, struct conn *c)
{
    while (c->sent < c->out.len) {
        ssize_t n = send(c->fd, c->out.s + c->sent, c->out.len - c->sent, MSG_NOSIGNAL);
        if (n > 0) {
            c->sent += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        char why[128];
        snprintf(why, sizeof why, "send: %s", strerror(errno));
        request_failed(w, c, why);
        return;
    }
    c->state = C_RECEIVING;
}

/* Starts the next request on c: the next idle host's upload or RPC. */
static void conn_begin(struct worker *w, struct conn *c)
{
    if (atomic_load(&w->L->stop)) {
        c->state = C_UNUSED;
        return;
    }
    /* --rate: scheduler RPCs at a fixed pace (a host's uploads go before its RPC, unpaced) */
    if (w->L->o->rate > 0 && w->ring_n && !host_has_upload(w->ring[w->ring_head])) {
        double t = now_s(), every = w->L->o->threads / w->L->o->rate;
        if (w->next_turn > t) {
            c->state = C_RETRY;
            c->retry_at = w->next_turn;
            return;
        }
        /* late turns are made up, up to 50 ms of them: the mean rate holds, bursts stay short */
        w->next_turn = (w->next_turn > t - 0.050 ? w->next_turn : t - 0.050) + every;
    }
    c->host = ring_pop(w);
    if (!c->host) {   /* fewer hosts than connections: this one stays unused */
        c->state = C_UNUSED;
        return;
    }
    build_request(w, c);
    c->t_send = now_s();
    if (c->fd < 0 && conn_open(w, c)) {
        char why[128];
        snprintf(why, sizeof why, "connect: %s", strerror(errno));
        request_failed(w, c, why);
        return;
    }
    if (c->fd >= 0 && c->state != C_CONNECTING) {
        c->state = C_SENDING;
        conn_send(w, c);
    }
}

/* The host goes back to the queue to try again; the connection is renewed
 * after a short pause so a dead server does not make a busy loop. */
static void request_failed(struct worker *w, struct conn *c, const char *why)
{
    double t = now_s();
    if (measuring(w->L, t)) {
        w->st.errors++;
        if (c->kind == REQ_UPLOAD) w->st.upload_errors++;
    }
    count_attempt(w->L, 1, why);
    conn_close(c);
    ring_push(w, c->host);
    c->host = NULL;
    c->state = C_RETRY;
    c->retry_at = t + 0.01;
}

static int lf_find(const struct host *h, int f)
{
    for (int i = 0; i < h->nlf; i++)
        if (h->lf[i] == f) return i;
    return -1;
}

/* --locality: the host's sticky files after a reply. A file becomes held
 * when the reply describes it (a job of the reply reads it) and is dropped
 * when the reply says to delete it; the descriptions are taken first. Also
 * counts the jobs received per file, from the workunit names lfNNNNN__J. */
static void take_locality(struct load *L, struct host *h, const char *body, struct sched_outcome *so)
{
    int nf = L->o->locality;
    char name[NAME_LEN];
    const char *end;
    for (const char *p = strstr(body, "<workunit>"); p && (end = strstr(p, "</workunit>"));
         p = strstr(end, "<workunit>")) {
        if (tag_text(p, end, "name", name, sizeof name)) continue;
        char *u = strstr(name, "__");
        if (u) *u = 0;
        int f = lf_index(name, nf);
        if (f >= 0) atomic_fetch_add(&L->lf_sent[f], 1);
    }
    /* top-level only: app versions, workunits and results name files in <file_name> */
    for (const char *p = strstr(body, "<file_info>"); p && (end = strstr(p, "</file_info>"));
         p = strstr(end, "<file_info>")) {
        int f = tag_text(p, end, "name", name, sizeof name) ? -1 : lf_index(name, nf);
        if (f < 0 || lf_find(h, f) >= 0) continue;
        if (h->nlf == LF_HELD_MAX) {   /* full: the oldest goes, as a client short of disk would */
            memmove(h->lf, h->lf + 1, (size_t)(h->nlf - 1) * sizeof *h->lf);
            h->nlf--;
            so->evicted++;
        }
        h->lf[h->nlf++] = f;
        so->fetched++;
    }
    static const char del[] = "<delete_file_info>";
    for (const char *p = strstr(body, del); p; p = strstr(p + 1, del)) {
        so->deleted++;
        const char *a = p + sizeof del - 1, *b = strchr(a, '<');
        if (!b || b - a >= NAME_LEN) continue;
        memcpy(name, a, (size_t)(b - a));
        name[b - a] = 0;
        int f = lf_index(name, nf);
        if (f < 0) continue;
        int at = lf_find(h, f);
        if (at < 0) {
            so->deleted_unheld++;
        } else {
            memmove(h->lf + at, h->lf + at + 1, (size_t)(h->nlf - at - 1) * sizeof *h->lf);
            h->nlf--;
        }
        /* approximate: another host's reply with the file's last jobs may still be on its way */
        if (L->lf_sent_known && atomic_load(&L->lf_sent[f]) < lf_jobs(L->o->jobs, nf, f)) so->deleted_unsent++;
        char ref[NAME_LEN + 16];
        snprintf(ref, sizeof ref, "<name>%s</name>", name);
        if (strstr(body, ref)) so->deleted_sent++;   /* described for a job of this very reply */
    }
}

/* A complete reply on c: account for it, hand the host back, go on. */
static void conn_done(struct worker *w, struct conn *c)
{
    double t = now_s();
    struct host *h = c->host;
    const char *body = c->in + c->body_at;
    char why[256] = "";
    int failed = 0;
    struct sched_outcome so = {0};
    if (c->status != 200) {
        snprintf(why, sizeof why, "HTTP %d from %s: %.100s", c->status, c->kind == REQ_UPLOAD ? "upload" : "scheduler",
                 body);
        failed = 1;
    } else if (c->kind == REQ_UPLOAD) {
        failed = take_upload_reply(body, why, sizeof why);
        h->up_file++;   /* a refused file is not retried: its report then fails validation */
    } else {
        failed = take_sched_reply(h, c->nreported, body, &so);
        if (failed) snprintf(why, sizeof why, "%s", so.why);
        else if (w->L->o->locality) take_locality(w->L, h, body, &so);
        if (so.registered) atomic_fetch_add(&w->L->registered, 1);
    }
    if (failed) {
        request_failed(w, c, why);
        return;
    }
    count_attempt(w->L, 0, NULL);
    if (measuring(w->L, t)) {
        if (c->kind == REQ_UPLOAD) {
            w->st.uploads++;
        } else {
            w->st.rpcs++;
            w->st.jobs += so.jobs;
            w->st.reported += so.acks;
            w->st.registered += so.registered;
            w->st.no_work += so.jobs == 0;
            w->st.lf_fetched += so.fetched;
            w->st.lf_deleted += so.deleted;
            w->st.lf_deleted_unheld += so.deleted_unheld;
            w->st.lf_deleted_unsent += so.deleted_unsent;
            w->st.lf_deleted_sent += so.deleted_sent;
            w->st.lf_evicted += so.evicted;
            record_latency(&w->st, (t - c->t_send) * 1e3);
        }
    }
    ring_push(w, h);
    c->host = NULL;
    if (c->server_closes || !w->L->o->keepalive) conn_close(c);
    conn_begin(w, c);
}

/* Parses the reply header once it is complete: 1 then, 0 before, -1 bad. */
static int parse_header(struct conn *c, char *why, size_t len)
{
    char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (!end) {
        if (c->in_len < HEADER_MAX) return 0;
        snprintf(why, len, "reply header longer than %d bytes", HEADER_MAX);
        return -1;
    }
    *end = 0;   /* search the header alone; the byte is part of the separator */
    if (sscanf(c->in, "HTTP/1.%*d %d", &c->status) != 1) {
        snprintf(why, len, "not an HTTP reply: %.60s", c->in);
        return -1;
    }
    char *cl = strcasestr(c->in, "\r\ncontent-length:");
    if (!cl) {
        snprintf(why, len, "reply without Content-Length (HTTP %d)", c->status);
        return -1;
    }
    c->body_len = (size_t)strtoull(cl + 17, NULL, 10);
    char *ch = strcasestr(c->in, "\r\nconnection:");
    if (ch) {   /* look at that header's value only */
        char *eol = strstr(ch + 2, "\r\n"), *close_word = strcasestr(ch, "close");
        c->server_closes = close_word && (!eol || close_word < eol);
    }
    *end = '\r';
    c->body_at = (size_t)(end - c->in) + 4;
    return 1;
}

/* Reads until the socket is empty (edge-triggered), finishing replies. */
static void conn_read(struct worker *w, struct conn *c)
{
    for (;;) {
        if (c->state != C_RECEIVING) return;
        if (c->in_cap - c->in_len < 16384 + 1) {
            c->in_cap = c->in_cap ? 2 * c->in_cap : 32768;
            c->in = xrealloc(c->in, c->in_cap);
        }
        ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len - 1, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            char why[128];
            snprintf(why, sizeof why, "%s after %zu bytes of the reply",
                     n == 0 ? "connection closed by locusd" : strerror(errno), c->in_len);
            request_failed(w, c, why);
            return;
        }
        c->in_len += (size_t)n;
        c->in[c->in_len] = 0;
        char why[160];
        int rc = c->body_at ? 1 : parse_header(c, why, sizeof why);
        if (rc == 0 || (rc > 0 && c->in_len < c->body_at + c->body_len)) continue;
        if (rc > 0 && c->in_len > c->body_at + c->body_len) snprintf(why, sizeof why, "more bytes than Content-Length");
        if (rc < 0 || c->in_len > c->body_at + c->body_len) {
            request_failed(w, c, why);
            return;
        }
        conn_done(w, c);   /* may start the next request on this connection, or close it */
    }
}

static void conn_event(struct worker *w, struct conn *c, uint32_t events)
{
    if (c->state == C_CONNECTING && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
            char why[128];
            snprintf(why, sizeof why, "connect: %s", strerror(err));
            request_failed(w, c, why);
            return;
        }
        c->state = C_SENDING;
    }
    if (c->state == C_SENDING) conn_send(w, c);
    if (c->state == C_RECEIVING && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) conn_read(w, c);
}

/* Begins what waited until t; returns the ms until the next such wait ends (at most 10). */
static int retry_conns(struct worker *w, double t)
{
    double next = t + 0.010;
    for (int i = 0; i < w->nconns; i++) {
        struct conn *c = &w->conns[i];
        if (c->state == C_RETRY && c->retry_at <= t) conn_begin(w, c);
        if (c->state == C_RETRY && c->retry_at < next) next = c->retry_at;
    }
    double ms = ceil((next - t) * 1e3);
    return ms < 0 ? 0 : (int)ms;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct epoll_event ev[256];
    for (int i = 0; i < w->nconns; i++) conn_begin(w, &w->conns[i]);
    int wait_ms = 10;   /* --rate paces to the ms */
    while (!atomic_load(&w->L->stop)) {
        int n = epoll_wait(w->epfd, ev, 256, wait_ms);
        for (int i = 0; i < n; i++) conn_event(w, ev[i].data.ptr, ev[i].events);
        wait_ms = retry_conns(w, now_s());
    }
    for (int i = 0; i < w->nconns; i++) conn_close(&w->conns[i]);
    return NULL;
}

/* Hosts i, i+T, i+2T... and connections likewise go to worker i. */
static void worker_init(struct load *L, struct worker *w, int id)
{
    const struct opts *o = L->o;
    memset(w, 0, sizeof *w);
    w->L = L;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->ring_cap = (size_t)(L->nhosts / o->threads + 1);
    w->ring = xcalloc(w->ring_cap, sizeof *w->ring);
    for (int i = id; i < L->nhosts; i += o->threads) ring_push(w, &L->hosts[i]);
    w->nconns = o->conns / o->threads + (id < o->conns % o->threads);
    w->conns = xcalloc((size_t)w->nconns, sizeof *w->conns);
    for (int i = 0; i < w->nconns; i++) {
        w->conns[i].fd = -1;
        w->conns[i].w = w;
        sb_init(&w->conns[i].out);
    }
    sb_init(&w->body);
}

static void worker_free(struct worker *w)
{
    for (int i = 0; i < w->nconns; i++) {
        sb_free(&w->conns[i].out);
        free(w->conns[i].in);
    }
    free(w->conns);
    free(w->ring);
    sb_free(&w->body);
    free(w->st.lat_ms);
    close(w->epfd);
}

static void hosts_init(struct load *L, const struct setup *s)
{
    L->hosts = xcalloc((size_t)L->nhosts, sizeof *L->hosts);
    for (int i = 0; i < L->nhosts; i++) {
        struct host *h = &L->hosts[i];
        h->idx = i;
        h->auth = s->auth[i % s->nauth];
        /* a per-run salt keeps host_cpid distinct when a project is reused */
        snprintf(h->cpid, sizeof h->cpid, "%08x%08x%016x", (unsigned)getpid(), (unsigned)time(NULL), (unsigned)i);
        if (L->o->locality) h->lf = xcalloc(LF_HELD_MAX, sizeof *h->lf);
    }
}

static void hosts_free(struct load *L)
{
    for (int i = 0; i < L->nhosts; i++) {
        host_clear_held(&L->hosts[i]);
        free(L->hosts[i].held);
        free(L->hosts[i].lf);
    }
    free(L->hosts);
}

/* ---- measuring and reporting ---- */

struct figures {
    double seconds, rpcs_per_s, jobs_per_s, uploads_per_s, p50, p90, p99, max_ms, mean_ms;
    double rss_mb, server_cpu, client_cpu;   /* CPU in cores busy over the window */
    double stop_s;                           /* SIGTERM to exit */
    long rpcs, jobs, reported, uploads, errors, upload_errors, registered;
    long attempts, failures;
    long no_work, lf_fetched, lf_deleted, lf_deleted_unheld, lf_deleted_unsent, lf_deleted_sent, lf_evicted;
    double lf_held_mean;                     /* sticky files per host at the end */
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v. */
static double percentile(const double *v, size_t n, double q)
{
    if (!n) return 0;
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

static void merge_stats(struct load *L, struct figures *f)
{
    size_t n = 0;
    for (int i = 0; i < L->o->threads; i++) n += L->workers[i].st.nlat;
    double *all = xmalloc((n ? n : 1) * sizeof *all), sum = 0;
    n = 0;
    for (int i = 0; i < L->o->threads; i++) {
        const struct stats *st = &L->workers[i].st;
        f->rpcs += st->rpcs;
        f->jobs += st->jobs;
        f->reported += st->reported;
        f->uploads += st->uploads;
        f->errors += st->errors;
        f->upload_errors += st->upload_errors;
        f->registered += st->registered;
        f->no_work += st->no_work;
        f->lf_fetched += st->lf_fetched;
        f->lf_deleted += st->lf_deleted;
        f->lf_deleted_unheld += st->lf_deleted_unheld;
        f->lf_deleted_unsent += st->lf_deleted_unsent;
        f->lf_deleted_sent += st->lf_deleted_sent;
        f->lf_evicted += st->lf_evicted;
        memcpy(all + n, st->lat_ms, st->nlat * sizeof *all);
        n += st->nlat;
    }
    qsort(all, n, sizeof *all, cmp_double);
    for (size_t i = 0; i < n; i++) sum += all[i];
    f->p50 = percentile(all, n, 0.50);
    f->p90 = percentile(all, n, 0.90);
    f->p99 = percentile(all, n, 0.99);
    f->max_ms = n ? all[n - 1] : 0;
    f->mean_ms = n ? sum / (double)n : 0;
    f->rpcs_per_s = (double)f->rpcs / f->seconds;
    f->jobs_per_s = (double)f->jobs / f->seconds;
    f->uploads_per_s = (double)f->uploads / f->seconds;
    f->attempts = atomic_load(&L->attempts);
    f->failures = atomic_load(&L->failures);
    free(all);
}

/* Waits out the warm-up (and every host's first RPC), then the window. */
static void run_window(struct load *L, pid_t server, struct figures *f)
{
    double t0 = now_s();
    sleep_s(L->o->warmup);
    double give_up = t0 + L->o->warmup + REGISTER_TIMEOUT_S;
    while (!atomic_load(&L->stop) && atomic_load(&L->registered) < L->nhosts && now_s() < give_up) sleep_s(0.01);
    if (atomic_load(&L->registered) < L->nhosts)
        note("only %d of %d hosts have an id after the warm-up; measuring anyway", atomic_load(&L->registered),
             L->nhosts);
    double cpu_s0 = proc_cpu_s(server), cpu_c0 = self_cpu_s(), start = now_s();
    atomic_store(&L->window_start, start);
    while (!atomic_load(&L->stop) && now_s() < start + L->o->seconds) sleep_s(0.01);
    double end = now_s();
    f->seconds = end - start < L->o->seconds ? end - start : L->o->seconds;
    f->server_cpu = (proc_cpu_s(server) - cpu_s0) / f->seconds;
    f->client_cpu = (self_cpu_s() - cpu_c0) / f->seconds;
    atomic_store(&L->stop, 1);
}

/* Plays the hosts against the running server; 0 if errors stayed under 1%. */
static int run_load(const struct opts *o, const struct setup *s, const struct endpoint *e, pid_t server,
                    struct figures *f)
{
    struct load L = {.o = o, .e = e, .nhosts = o->hosts};
    atomic_flag_clear(&L.first_error_taken);
    if (o->locality) {
        L.lf_sent = xcalloc((size_t)o->locality, sizeof *L.lf_sent);
        L.lf_sent_known = !o->project;
    }
    hosts_init(&L, s);
    L.workers = xcalloc((size_t)o->threads, sizeof *L.workers);
    for (int i = 0; i < o->threads; i++) worker_init(&L, &L.workers[i], i);
    for (int i = 0; i < o->threads; i++) pthread_create(&L.workers[i].thread, NULL, worker_main, &L.workers[i]);
    run_window(&L, server, f);
    for (int i = 0; i < o->threads; i++) pthread_join(L.workers[i].thread, NULL);
    merge_stats(&L, f);
    int bad = f->failures * 100 > f->attempts && f->failures > 0;
    if (f->failures)
        note("%ld of %ld requests failed%s; first: %s", f->failures, f->attempts,
             bad ? " (over 1%: stopped early)" : "", L.first_error);
    for (int i = 0; i < o->threads; i++) worker_free(&L.workers[i]);
    free(L.workers);
    long held = 0;
    for (int i = 0; i < L.nhosts; i++) held += L.hosts[i].nlf;
    f->lf_held_mean = (double)held / (double)L.nhosts;
    hosts_free(&L);
    free(L.lf_sent);
    return bad ? -1 : 0;
}

static void print_figures(const struct opts *o, const struct setup *s, const struct figures *f, int http_threads,
                          int max_send)
{
    printf("bench-rpc: %d hosts (%d users), %d client threads, %d connections, locusd http_threads %d, "
           "max_wus_to_send %d, %s, %s\n",
           o->hosts, s->nauth, o->threads, o->conns, http_threads, max_send,
           o->project ? "the project's own batches" : s->outputs ? "one output file per job (uploaded)"
                                                                : "jobs without output files",
           o->keepalive ? "keep-alive" : "a connection per request");
    if (o->locality)
        printf("locality scheduling: %d sticky files of %d bytes, %ld jobs each (lfNNNNN__J)\n", o->locality,
               LF_NBYTES, o->jobs / o->locality);
    printf("measured %.1f s: %ld RPCs, %ld jobs dispatched, %ld reported, %ld uploads, %ld errors\n", f->seconds,
           f->rpcs, f->jobs, f->reported, f->uploads, f->errors);
    printf("  rpcs_per_s     %10.1f\n  jobs_per_s     %10.1f\n", f->rpcs_per_s, f->jobs_per_s);
    if (f->uploads) printf("  uploads_per_s  %10.1f\n", f->uploads_per_s);
    printf("  p50_ms         %10.2f\n  p90_ms         %10.2f\n  p99_ms         %10.2f\n  max_ms         %10.2f\n",
           f->p50, f->p90, f->p99, f->max_ms);
    printf("  rss_mb         %10.1f   (locusd peak, VmHWM)\n", f->rss_mb);
    printf("  cpu            %10.2f   cores locusd, %.2f cores bench-rpc (of %ld)\n", f->server_cpu,
           f->client_cpu, sysconf(_SC_NPROCESSORS_ONLN));
    printf("  stop_s         %10.1f   (locusd's SIGTERM to exit)\n", f->stop_s);
    printf("  rpcs_no_work   %10ld   (%.1f%% of the RPCs)\n", f->no_work,
           f->rpcs ? 100.0 * (double)f->no_work / (double)f->rpcs : 0);
    double per_fetch = f->lf_fetched ? (double)f->jobs / (double)f->lf_fetched : 0;
    if (o->locality) {
        printf("  files_fetched  %10ld   (sticky files new to their host: %.1f jobs per fetch)\n", f->lf_fetched,
               per_fetch);
        printf("  files_deleted  %10ld   (delete instructions: ", f->lf_deleted);
        if (!o->project) printf("%ld while the file had unsent jobs, ", f->lf_deleted_unsent);
        printf("%ld of files not held, %ld of files a job of the same reply reads)\n", f->lf_deleted_unheld,
               f->lf_deleted_sent);
        printf("  held_files     %10.2f   (per host at the end; %ld dropped at the limit of %d)\n", f->lf_held_mean,
               f->lf_evicted, LF_HELD_MAX);
        printf("  files_add_s    %10.1f   (locus file add of the %d files)\n", s->files_s, o->locality);
    }
    if (o->json)
        printf("{\"rpcs_per_s\":%.1f,\"jobs_per_s\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"rss_mb\":%.1f,"
               "\"p90_ms\":%.3f,\"max_ms\":%.3f,\"mean_ms\":%.3f,\"hosts\":%d,\"threads\":%d,\"conns\":%d,"
               "\"http_threads\":%d,\"max_wus_to_send\":%d,\"upload\":%d,\"keepalive\":%d,\"seconds\":%.3f,"
               "\"rpcs\":%ld,\"jobs\":%ld,\"reported\":%ld,\"uploads\":%ld,\"errors\":%ld,"
               "\"server_cpu_cores\":%.3f,\"client_cpu_cores\":%.3f,\"batch_create_s\":%.3f,\"stop_s\":%.3f,"
               "\"rpcs_no_work\":%ld",
               f->rpcs_per_s, f->jobs_per_s, f->p50, f->p99, f->rss_mb, f->p90, f->max_ms, f->mean_ms, o->hosts,
               o->threads, o->conns, http_threads, max_send, s->outputs || f->uploads > 0, o->keepalive, f->seconds,
               f->rpcs, f->jobs, f->reported, f->uploads, f->errors, f->server_cpu, f->client_cpu, s->batch_s,
               f->stop_s, f->no_work);
    if (o->json && o->locality) {
        printf(",\"locality_files\":%d,\"files_fetched\":%ld,\"files_deleted\":%ld,\"jobs_per_fetch\":%.2f,"
               "\"held_files_mean\":%.2f,\"deletes_not_held\":%ld,\"deletes_same_reply\":%ld,"
               "\"files_evicted\":%ld,\"files_add_s\":%.3f,\"deletes_with_unsent\":",
               o->locality, f->lf_fetched, f->lf_deleted, per_fetch, f->lf_held_mean,
               f->lf_deleted_unheld, f->lf_deleted_sent, f->lf_evicted, s->files_s);
        if (o->project) printf("null");
        else printf("%ld", f->lf_deleted_unsent);
    }
    if (o->json) printf("}\n");
}

/* ---- main ---- */

static void find_binaries(struct setup *s, const struct opts *o)
{
    char self[PROJECT_PATH_MAX] = ".";
    const char *dir = o->locus_bin;
    if (!dir) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 1] = 0;
        dir = dirname(self);
    }
    snprintf(s->bin_locus, sizeof s->bin_locus, "%s/locus", dir);
    snprintf(s->bin_locusd, sizeof s->bin_locusd, "%s/locusd", dir);
}

/* Whether a reused project has the files of --locality (its first and last). */
static int has_locality_files(const struct setup *s, int nfiles)
{
    struct project p;
    char err[512], name[32], path[PROJECT_PATH_MAX + 400];
    if (project_load(&p, s->proj, err, sizeof err)) {
        note("%s", err);
        return 0;
    }
    for (int i = 0; i < nfiles; i += nfiles - 1 > 0 ? nfiles - 1 : 1) {
        snprintf(name, sizeof name, LF_NAME, i);
        project_file_path(&p, path, sizeof path, "download", name);
        if (access(path, F_OK)) {
            note("%s has no file %s: --locality %d with --project needs a project made by "
                 "'bench-rpc --locality %d --keep'", s->proj, name, nfiles, nfiles);
            return 0;
        }
    }
    return 1;
}

/* Makes or adopts the project and applies the settings. */
static int prepare(struct setup *s, const struct opts *o, const struct opt *t, int nt)
{
    if (access(s->bin_locus, X_OK) || access(s->bin_locusd, X_OK)) {
        note("%s or %s is missing: build first (make), or give --locus-bin DIR", s->bin_locus, s->bin_locusd);
        return -1;
    }
    char tmpl[] = "/tmp/locus-bench-rpc-XXXXXX";
    if (!mkdtemp(tmpl)) {
        note("cannot create a temporary folder: %s", strerror(errno));
        return -1;
    }
    snprintf(s->work, sizeof s->work, "%s", tmpl);
    snprintf(s->setup_log, sizeof s->setup_log, "%s/setup.log", s->work);
    snprintf(s->server_log, sizeof s->server_log, "%s/locusd.log", s->work);
    if (o->project) {
        snprintf(s->proj, sizeof s->proj, "%s", o->project);
        char cfg[PROJECT_PATH_MAX + 16];
        snprintf(cfg, sizeof cfg, "%s/config.xml", s->proj);
        if (access(cfg, R_OK)) {
            note("%s is not a locus project (no config.xml): make one with 'locus init', or drop --project", s->proj);
            return -1;
        }
        if (read_users(s)) return -1;
        if (o->locality && !has_locality_files(s, o->locality)) return -1;
        return edit_config(s, o, opt_seen(t, nt, "http-threads"), opt_seen(t, nt, "max-send"), 0);
    }
    if (create_project(s, o)) return -1;
    return edit_config(s, o, 1, 1, 1);
}

/* The settings locusd will run with, as it reads them. */
static void effective_settings(const struct setup *s, int *http_threads, int *max_send)
{
    struct project p;
    char err[256];
    *http_threads = *max_send = 0;
    if (!project_load(&p, s->proj, err, sizeof err)) {
        *http_threads = p.cfg.threads;
        *max_send = p.cfg.max_jobs_per_rpc;
    }
}

static int bench(const struct opts *o, struct setup *s)
{
    struct endpoint e;
    int http_threads, max_send;
    if (endpoint_of(s->proj, &e)) return -1;
    effective_settings(s, &http_threads, &max_send);
    double t = now_s();
    pid_t pid = server_spawn(s);
    if (pid < 0) {
        note("cannot start %s: %s", s->bin_locusd, strerror(errno));
        return -1;
    }
    int ready = server_wait_ready(pid, s, &e);
    double took;
    if (ready < 0) server_stop(pid, &took);
    if (ready) return -1;
    note("locusd %d ready after %.1f s; %d hosts, %.0f s warm-up, %.0f s measured", (int)pid, now_s() - t,
         o->hosts, o->warmup, o->seconds);
    struct figures f = {0};
    int rc = run_load(o, s, &e, pid, &f);
    f.rss_mb = proc_status_mb(pid, "VmHWM");
    int src = server_stop(pid, &f.stop_s);
    if (src) note("locusd exited with status %d on SIGTERM (log: %s)", src, s->server_log);
    if (!f.rpcs && !rc) {
        note("no RPC completed in the measured window");
        rc = -1;
    }
    print_figures(o, s, &f, http_threads, max_send);
    return rc || src ? -1 : 0;
}

int main(int argc, char **argv)
{
    struct opts o = {.hosts = 1000, .threads = 8, .seconds = 20, .warmup = 3, .jobs = 1000000,
                     .http_threads = 4, .max_send = 4, .users = 100, .keepalive = 1};
    struct opt table[32];
    int nt = opts_table(&o, table);
    int prc = parse_args(argc, argv, &o, table, nt);
    if (prc) return prc == 1 ? 0 : 2;
    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();
    struct setup s = {0};
    find_binaries(&s, &o);
    int rc = prepare(&s, &o, table, nt);
    if (!rc) rc = bench(&o, &s);
    if (s.work[0] && o.keep) note("kept %s (project %s, logs there)", s.work, s.proj);
    else if (s.work[0] && rc && (!access(s.setup_log, F_OK) || !access(s.server_log, F_OK)))
        note("kept %s for its logs", s.work);
    else if (s.work[0]) rm_tree(s.work);
    for (int i = 0; i < s.nauth; i++) free(s.auth[i]);
    free(s.auth);
    return rc ? 1 : 0;
}
