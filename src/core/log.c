/* log.c - timestamped log lines to one stream, thread safe by stdio's own lock. */
#include "core/log.h"
#include <stdarg.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static FILE *log_file;
static enum log_level log_level = LOG_INFO;
static int log_topics;

static const struct { const char *name; int bit; } topic_names[] = {
    {"rpc", LT_RPC}, {"sched", LT_SCHED}, {"trans", LT_TRANS},
    {"valid", LT_VALID}, {"http", LT_HTTP}, {"store", LT_STORE},
    {"cpu_sched", LT_CPU_SCHED}, {"work_fetch", LT_WORK_FETCH}, {"task", LT_TASK}, {"grid", LT_GRID},
};

void log_set_file(FILE *f) { log_file = f; }
void log_set_level(enum log_level level) { log_level = level; }
int log_topic_on(enum log_topic t) { return (log_topics & (int)t) != 0; }

int log_enable_topics(const char *list, char *err, size_t errlen)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (size_t i = 0; i < sizeof topic_names / sizeof topic_names[0]; i++) {
            if (!strcmp(tok, "all") || !strcmp(tok, topic_names[i].name)) {
                log_topics |= topic_names[i].bit;
                found = 1;
            }
        }
        if (!found) {
            snprintf(err, errlen, "unknown debug topic '%s' (known: rpc,sched,trans,valid,http,store,cpu_sched,work_fetch,task,all)", tok);
            return -1;
        }
    }
    return 0;
}

static void vlog(const char *tag, const char *fmt, va_list ap)
{
    FILE *f = log_file ? log_file : stderr;
    struct timeval tv;
    struct tm tm;
    char ts[32];
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
    flockfile(f);
    fprintf(f, "%s.%03d [%s] ", ts, (int)(tv.tv_usec / 1000), tag);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    funlockfile(f);
    fflush(f);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    static const char *tags[] = {"error", "warn", "info", "debug"};
    if (level > log_level) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(tags[level], fmt, ap);
    va_end(ap);
}

void log_debug(enum log_topic t, const char *fmt, ...)
{
    if (!log_topic_on(t)) return;
    const char *tag = "debug";
    for (size_t i = 0; i < sizeof topic_names / sizeof topic_names[0]; i++)
        if (topic_names[i].bit == (int)t) tag = topic_names[i].name;
    va_list ap;
    va_start(ap, fmt);
    vlog(tag, fmt, ap);
    va_end(ap);
}
