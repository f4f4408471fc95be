/* log.h - the one logging module: levels, and debug topics that can be
 * switched on one by one (like BOINC's sched_op_debug) to trace decisions. */
#ifndef LOCUS_LOG_H
#define LOCUS_LOG_H
#include <stdio.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Debug topics; each is off unless enabled by log_enable_topics(). */
enum log_topic {
    LT_RPC = 1 << 0,      /* scheduler requests and replies */
    LT_SCHED = 1 << 1,    /* every dispatch decision */
    LT_TRANS = 1 << 2,    /* transitioner */
    LT_VALID = 1 << 3,    /* validator and assimilator */
    LT_HTTP = 1 << 4,     /* HTTP requests, uploads, downloads */
    LT_STORE = 1 << 5,    /* store commits */
    LT_CPU_SCHED = 1 << 6, /* locus-client: CPU scheduling and enforcement */
    LT_WORK_FETCH = 1 << 7, /* locus-client: work fetch decisions */
    LT_TASK = 1 << 8,     /* locus-client: task start, suspend, exit */
    LT_GRID = 1 << 9,     /* locusd's grid daemon: cycles, submissions, cancels */
};

/* Messages go to f (not owned), each line timestamped; NULL (the default):
 * to stderr. On stderr a line starts with a timestamp too, unless stderr
 * is the systemd journal (JOURNAL_STREAM names it, as systemd sets it for
 * a service): then with its priority, "<3>" error, "<4>" warn, "<6>" info,
 * "<7>" debug (sd-daemon(3)), and the journal adds the time. Whether it is
 * is looked at on the first line after this call. */
void log_set_file(FILE *f);
/* The least severe level written (LOG_INFO unless set); the lines of the
 * debug topics are of LOG_DEBUG. */
void log_set_level(enum log_level level);
/* "error", "warn", "info" or "debug" into *level: 0, or -1 for another name. */
int log_parse_level(const char *name, enum log_level *level);
/* "rpc,sched,..." or "all"; returns -1 and names the bad topic in err on
 * error. The level becomes LOG_DEBUG, so that they show: a log_set_level
 * after it may raise it again. */
int log_enable_topics(const char *list, char *err, size_t errlen);
/* A program's --debug TOPICS and --log-level LEVEL (either NULL: not
 * given): the topics first, so that an explicit level wins over the debug
 * level they set. 0, or -1 with the reason in err. */
int log_configure(const char *topics, const char *level, char *err, size_t errlen);
/* Whether log_debug(t, ...) writes anything: t is on and the level is LOG_DEBUG. */
int log_topic_on(enum log_topic t);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_debug(enum log_topic t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#endif
