/* log.c - log lines to one stream, thread safe by stdio's own lock:
 * timestamped, or with their priority for the systemd journal. */
#include "core/log.h"
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static FILE *log_file;
static enum log_level log_level = LOG_INFO;
static int log_topics;
/* Whether stderr is the journal: -1 not looked at yet, else 0 or 1. */
static atomic_int stderr_journal = -1;

/* Per level: its name (in lines and in log_parse_level) and its priority
 * for the journal, sd-daemon.h's SD_ERR, SD_WARNING, SD_INFO, SD_DEBUG. */
static const struct { const char *name; int priority; } levels[] = {
    [LOG_ERROR] = {"error", 3}, [LOG_WARN] = {"warn", 4}, [LOG_INFO] = {"info", 6}, [LOG_DEBUG] = {"debug", 7},
};

static const struct { const char *name; int bit; } topic_names[] = {
    {"rpc", LT_RPC}, {"sched", LT_SCHED}, {"trans", LT_TRANS},
    {"valid", LT_VALID}, {"http", LT_HTTP}, {"store", LT_STORE},
    {"cpu_sched", LT_CPU_SCHED}, {"work_fetch", LT_WORK_FETCH}, {"task", LT_TASK}, {"grid", LT_GRID},
};

void log_set_file(FILE *f)
{
    log_file = f;
    atomic_store(&stderr_journal, -1);
}

void log_set_level(enum log_level level) { log_level = level; }
int log_topic_on(enum log_topic t) { return log_level >= LOG_DEBUG && (log_topics & (int)t) != 0; }

int log_parse_level(const char *name, enum log_level *level)
{
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        if (!strcmp(name, levels[i].name)) {
            *level = (enum log_level)i;
            return 0;
        }
    }
    return -1;
}

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
    log_level = LOG_DEBUG;
    return 0;
}

int log_configure(const char *topics, const char *level, char *err, size_t errlen)
{
    enum log_level lv;
    if (topics && log_enable_topics(topics, err, errlen)) return -1;
    if (level && log_parse_level(level, &lv)) {
        snprintf(err, errlen, "unknown log level '%s' (known: error,warn,info,debug)", level);
        return -1;
    }
    if (level) log_level = lv;
    return 0;
}

/* systemd hands a service's stderr to the journal and sets JOURNAL_STREAM
 * to "DEVICE:INODE" of that stream; stderr may since have been sent
 * elsewhere (a shell's redirection), so both must match. */
static int stderr_is_journal(void)
{
    const char *env = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    if (!env || sscanf(env, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st)) return 0;
    return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

/* One line of level; tag names a debug topic, or NULL. */
static void vlog(enum log_level level, const char *tag, const char *fmt, va_list ap)
{
    FILE *f = log_file ? log_file : stderr;
    int journal = 0;
    if (!log_file) {
        journal = atomic_load(&stderr_journal);
        if (journal < 0) {   /* threads that race here find the same answer */
            journal = stderr_is_journal();
            atomic_store(&stderr_journal, journal);
        }
    }
    flockfile(f);
    if (journal) {
        fprintf(f, "<%d>", levels[level].priority);
        if (tag) fprintf(f, "[%s] ", tag);
    } else {
        struct timeval tv;
        struct tm tm;
        char ts[32];
        gettimeofday(&tv, NULL);
        localtime_r(&tv.tv_sec, &tm);
        strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
        fprintf(f, "%s.%03d [%s] ", ts, (int)(tv.tv_usec / 1000), tag ? tag : levels[level].name);
    }
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    funlockfile(f);
    fflush(f);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    if (level > log_level) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(level, NULL, fmt, ap);
    va_end(ap);
}

void log_debug(enum log_topic t, const char *fmt, ...)
{
    if (!log_topic_on(t)) return;
    const char *tag = levels[LOG_DEBUG].name;
    for (size_t i = 0; i < sizeof topic_names / sizeof topic_names[0]; i++)
        if (topic_names[i].bit == (int)t) tag = topic_names[i].name;
    va_list ap;
    va_start(ap, fmt);
    vlog(LOG_DEBUG, tag, fmt, ap);
    va_end(ap);
}
