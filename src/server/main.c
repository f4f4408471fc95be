/* main.c - locusd: serves one project to BOINC clients until SIGINT or
 * SIGTERM, then stops cleanly (everything acknowledged is committed). */
#include "core/log.h"
#include "server/server.h"
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *to)
{
    fputs("usage: locusd PROJECT_DIR [--debug TOPICS] [--log-level LEVEL] [--log FILE]\n"
          "  --debug TOPICS   log every decision of these topics: rpc,sched,trans,valid,http,store,grid or all\n"
          "  --log-level L    error, warn, info (the default) or debug (the default with --debug)\n"
          "  --log FILE       append the log to FILE instead of stderr\n", to);
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *level = NULL, *topics = NULL;
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
    /* topics first: they lower the level to debug, an explicit level wins */
    if (topics && log_enable_topics(topics, err, sizeof err)) {
        fprintf(stderr, "locusd: %s\n", err);
        return 2;
    }
    enum log_level lv;
    if (level && log_parse_level(level, &lv)) {
        fprintf(stderr, "locusd: unknown log level '%s' (known: error,warn,info,debug)\n", level);
        return 2;
    }
    if (level) log_set_level(lv);

    /* everything locusd creates (uploads, results, the store's journal) is
     * its user's alone */
    umask(PROJECT_UMASK);
    /* signals are taken by sigwait below, never by the worker threads */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    static struct server s;
    if (server_start(&s, dir, err, sizeof err) || http_start(&s, err, sizeof err)) {
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
    int sig;
    sigwait(&set, &sig);
    log_info("locusd: signal %d, stopping", sig);
    workgen_shutdown(s.workgen);   /* RPCs waiting for work answer before HTTP stops */
    http_stop(&s);
    server_stop(&s);
    /* the last line: a supervisor or a test knows the stop was clean */
    log_info("locusd: stopped");
    return 0;
}
