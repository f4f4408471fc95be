/* main.c - locusd: serves one project to BOINC clients until SIGINT or
 * SIGTERM, then stops cleanly (everything acknowledged is committed);
 * reads config.xml again on SIGHUP; with --check, opens the project as
 * serving would and says if it can. */
#include "core/log.h"
#include "server/server.h"
#include "store/store.h"
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *to)
{
    fputs("usage: locusd PROJECT_DIR [--debug TOPICS] [--log-level LEVEL] [--log FILE]\n"
          "       locusd --check PROJECT_DIR\n"
          "  --check          open the project as serving would (config.xml, keys, store, index),\n"
          "                   say what it holds and exit: 0 if locusd would start, else 1 and why\n"
          "  --debug TOPICS   log every decision of these topics: rpc,sched,trans,valid,http,store,grid or all\n"
          "  --log-level L    error, warn, info (the default) or debug (the default with --debug)\n"
          "  --log FILE       append the log to FILE instead of stderr\n", to);
}

/* --check: what the project holds, on stdout, and 0; or the reason it
 * would not start, one line on stderr, and 1. Starts no thread, opens no
 * port. */
static int check(struct server *s, const char *dir)
{
    /* Opening makes files (the store's journal, secrets not made yet): made
     * by another user than the project's, say root checking the folder of a
     * service's user, they would keep that service from starting. */
    struct stat ds;
    if (!stat(dir, &ds) && ds.st_uid != geteuid()) {
        const struct passwd *pw = getpwuid(ds.st_uid);
        fprintf(stderr, "locusd: %s belongs to %s (uid %u), not to this user: check it as its owner (sudo -u %s locusd "
                "--check %s)\n", dir, pw ? pw->pw_name : "another user", (unsigned)ds.st_uid,
                pw ? pw->pw_name : "OWNER", dir);
        return 1;
    }
    char err[1024];
    if (server_open(s, dir, err, sizeof err)) {
        fprintf(stderr, "locusd: %s would not start: %s\n", dir, err);
        return 1;
    }
    struct store *st = server_reader(s);   /* opened by server_open */
    int64_t hosts = store_count_hosts_since(st, 0), jobs = 0;
    if (hosts < 0) {
        fprintf(stderr, "locusd: %s would not start: %s\n", dir, store_error(st));
        server_stop(s);
        return 1;
    }
    for (int i = 0; i < s->idx.nbatches; i++) jobs += s->idx.batches[i]->nlive;
    printf("project  %s at %s\n", s->proj.cfg.name, s->proj.cfg.master_url);
    printf("store    %s, schema %d\n", s->db_path, store_schema_version(st));
    printf("loaded   %zu apps, %d batches with %lld jobs live, %lld hosts\n", s->apps.count, s->idx.nbatches,
           (long long)jobs, (long long)hosts);
    printf("OK: locusd would start\n");
    server_stop(s);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *level = NULL, *topics = NULL;
    int check_only = 0;
    char err[1024];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--debug") && i + 1 < argc) {
            topics = argv[++i];
        } else if (!strcmp(argv[i], "--log-level") && i + 1 < argc) {
            level = argv[++i];
        } else if (!strcmp(argv[i], "--log") && i + 1 < argc) {
            FILE *f = fopen(argv[++i], "a");
            if (!f) {
                fprintf(stderr, "locusd: cannot open log file %s\n", argv[i]);
                return 1;
            }
            log_set_file(f);
        } else if (!strcmp(argv[i], "--check")) {
            check_only = 1;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] != '-' && !dir) {
            dir = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    if (log_configure(topics, level, err, sizeof err)) {
        fprintf(stderr, "locusd: %s\n", err);
        return 2;
    }

    /* everything locusd creates (uploads, results, the store's journal) is
     * its user's alone */
    umask(PROJECT_UMASK);
    /* signals are taken by sigwait below, never by the worker threads: no
     * handler runs, so a reload is ordinary code on this thread */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    static struct server s;
    if (check_only) return check(&s, dir);
    if (server_open(&s, dir, err, sizeof err) || server_start(&s, err, sizeof err) ||
        http_start(&s, err, sizeof err)) {
        fprintf(stderr, "locusd: %s\n", err);
        return 1;
    }
    const struct project_config *c = &s.proj.cfg;
    if (c->https_listen_port)
        log_info("locusd: serving %s at %s (HTTP on %s:%d, HTTPS on %s:%d)", c->name, c->master_url, c->listen_addr,
                 c->listen_port, c->listen_addr, c->https_listen_port);
    else
        log_info("locusd: serving %s at %s (listening on %s:%d)", c->name, c->master_url, c->listen_addr,
                 c->listen_port);
    int sig = 0;
    while (!sigwait(&set, &sig) && sig == SIGHUP) {
        log_info("locusd: SIGHUP, reading config.xml again");
        server_reload(&s);   /* refused: logged, the settings kept */
    }
    log_info("locusd: signal %d, stopping", sig);
    workgen_shutdown(s.workgen);   /* RPCs waiting for work answer before HTTP stops */
    http_stop(&s);
    server_stop(&s);
    /* the last line: a supervisor or a test knows the stop was clean */
    log_info("locusd: stopped");
    return 0;
}
