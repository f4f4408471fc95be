/* app_runtime.c - the per-process runtime of liblocus_app: init_data.xml,
 * the boinc_mmap_file channels (status out on 5, control in on 0), the
 * background thread that serves them, suspend/quit/abort, checkpoint timing
 * and the finish files. All state is in the one static struct rt, like a
 * process has one slot. */
#include "app_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <locus/locus_app.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHANNEL_SIZE 1024
#define MMAP_SIZE (8 * CHANNEL_SIZE)
#define CH_CONTROL 0           /* client -> app */
#define CH_STATUS 5            /* app -> client */
#define TICK_NS 100000000L     /* control is polled every 100 ms ... */
#define TICKS_PER_STATUS 10    /* ... status sent every second */
#define QUIT_GRACE 1.0         /* s before an uncooperative app is ended */
#define QUIT_GRACE_CHECKPOINT 10.0 /* s while it writes its checkpoint */
#define FINAL_STATUS_WAIT 1.0  /* s to wait for the client to read the last status */
#define INIT_DATA_MAX (4 << 20)

static struct runtime {
    pthread_mutex_t lock;      /* guards everything below but shmem/thread */
    pthread_cond_t cond;       /* signalled on resume, quit and stop */
    int started;
    int standalone;
    struct locus_init_data init;
    char *shmem;               /* boinc_mmap_file, MMAP_SIZE bytes, or NULL */
    pthread_t thread;
    int thread_running;
    int stop;                  /* asks the thread to end */
    int suspended, quit, in_checkpoint;
    double quit_time;          /* monotonic s when <quit/> came */
    double fraction_done;
    double checkpoint_cpu;     /* CPU s at the last checkpoint, earlier runs included */
    double checkpoint_period;
    double last_checkpoint;    /* monotonic s, 0 = not yet set */
    atomic_int exiting;        /* set by whichever thread ends the process */
} rt = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cond = PTHREAD_COND_INITIALIZER,
    .standalone = 1,
    .init = {.gpu_device_num = -1},
    .checkpoint_period = LOCUS_DEFAULT_CHECKPOINT_PERIOD,
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of this task: this process plus earlier runs (wu_cpu_time). */
static double task_cpu_time(void)
{
    struct timespec ts;
    double t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0) {
        t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    } else {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        t = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    }
    return t + rt.init.wu_cpu_time;
}

static void sleep_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- start-up ---- */

/* Fills *d from init_data.xml; 1 if the file exists (even if unreadable or
 * odd: we are in a slot then), 0 if it does not. */
static int read_init_data(struct locus_init_data *d)
{
    memset(d, 0, sizeof *d);
    d->gpu_device_num = -1;
    FILE *f = fopen("init_data.xml", "rb");
    if (!f)
        return errno != ENOENT;
    char *buf = malloc(INIT_DATA_MAX);
    if (buf) {
        size_t n = fread(buf, 1, INIT_DATA_MAX, f);
        locus_parse_init_data(buf, n, d);
        free(buf);
    }
    fclose(f);
    return 1;
}

static char *map_channels(void)
{
    struct stat st;
    int fd = open("boinc_mmap_file", O_RDWR | O_CLOEXEC);
    void *p = MAP_FAILED;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= MMAP_SIZE)
        p = mmap(NULL, MMAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);  /* the mapping stays */
    return p == MAP_FAILED ? NULL : p;
}

static double checkpoint_period(const struct locus_init_data *d)
{
    const char *env = getenv("LOCUS_CHECKPOINT_PERIOD");
    double v;
    if (env && locus_app_parse_double(env, strlen(env), &v) == 0 && v >= 0)
        return v;
    return d->checkpoint_period > 0 ? d->checkpoint_period : LOCUS_DEFAULT_CHECKPOINT_PERIOD;
}

/* ---- channels ---- */

static char *channel(int k)
{
    return rt.shmem + k * CHANNEL_SIZE;
}

/* Writes a status message unless the client has not read the previous one
 * (flag byte still set). 0 if written. */
static int try_send_status(void)
{
    char *ch = channel(CH_STATUS);
    char cpu[32], ckpt[32], frac[32], msg[CHANNEL_SIZE];
    if (__atomic_load_n(ch, __ATOMIC_ACQUIRE))
        return -1;
    pthread_mutex_lock(&rt.lock);
    locus_app_format_fixed(ckpt, sizeof ckpt, rt.checkpoint_cpu);
    locus_app_format_fixed(frac, sizeof frac, rt.fraction_done);
    pthread_mutex_unlock(&rt.lock);
    locus_app_format_fixed(cpu, sizeof cpu, task_cpu_time());
    int n = snprintf(msg, sizeof msg,
                     "<current_cpu_time>%s</current_cpu_time>"
                     "<checkpoint_cpu_time>%s</checkpoint_cpu_time>"
                     "<fraction_done>%s</fraction_done>\n", cpu, ckpt, frac);
    if (n < 0 || n >= CHANNEL_SIZE - 1)
        return -1;
    memcpy(ch + 1, msg, (size_t)n + 1);
    __atomic_store_n(ch, 1, __ATOMIC_RELEASE);  /* text first, then the flag */
    return 0;
}

/* Offset of the last occurrence of pat in s, or -1. */
static long last_offset(const char *s, const char *pat)
{
    long at = -1;
    for (const char *p = strstr(s, pat); p; p = strstr(p + 1, pat))
        at = p - s;
    return at;
}

/* Reads and clears the control channel. Returns an exit code the process
 * must end with now (abort), or -1. */
static int poll_control(void)
{
    char *ch = channel(CH_CONTROL), msg[CHANNEL_SIZE];
    if (!__atomic_load_n(ch, __ATOMIC_ACQUIRE))
        return -1;
    memcpy(msg, ch + 1, CHANNEL_SIZE - 1);
    msg[CHANNEL_SIZE - 1] = '\0';
    __atomic_store_n(ch, 0, __ATOMIC_RELEASE);
    if (strstr(msg, "<abort/>"))
        return LOCUS_EXIT_ABORTED;
    long s = last_offset(msg, "<suspend/>"), r = last_offset(msg, "<resume/>");
    pthread_mutex_lock(&rt.lock);
    if (strstr(msg, "<quit/>") && !rt.quit) {
        rt.quit = 1;
        rt.quit_time = mono_now();
    }
    if (s >= 0 || r >= 0)
        rt.suspended = s > r;  /* the later of the two wins */
    pthread_cond_broadcast(&rt.cond);
    pthread_mutex_unlock(&rt.lock);
    return -1;
}

/* 1 when a quit is pending and the application had its chance to exit. */
static int quit_overdue(void)
{
    pthread_mutex_lock(&rt.lock);
    double grace = rt.in_checkpoint ? QUIT_GRACE_CHECKPOINT : QUIT_GRACE;
    int overdue = rt.quit && mono_now() - rt.quit_time > grace;
    pthread_mutex_unlock(&rt.lock);
    return overdue;
}

/* Only one thread may run exit(); 1 for the one that may. */
static int claim_exit(void)
{
    return atomic_exchange(&rt.exiting, 1) == 0;
}

static void *runtime_main(void *arg)
{
    (void)arg;
    for (unsigned tick = 0;; tick++) {
        pthread_mutex_lock(&rt.lock);
        int stop = rt.stop;
        pthread_mutex_unlock(&rt.lock);
        if (stop)
            break;
        int code = poll_control();
        if (code < 0 && tick % TICKS_PER_STATUS == 0)
            try_send_status();
        if (code < 0 && quit_overdue())
            code = 0;
        if (code >= 0) {
            if (claim_exit())
                exit(code);
            break;  /* the application is already ending the process */
        }
        sleep_ns(TICK_NS);
    }
    return NULL;
}

/* Starts the thread with every signal blocked, so signals meant for the
 * application are never delivered to it. */
static int start_thread(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&rt.thread, NULL, runtime_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        errno = e;
        return -1;
    }
    rt.thread_running = 1;
    return 0;
}

static void stop_thread(void)
{
    if (!rt.thread_running || pthread_equal(pthread_self(), rt.thread))
        return;
    pthread_mutex_lock(&rt.lock);
    rt.stop = 1;
    pthread_cond_broadcast(&rt.cond);
    pthread_mutex_unlock(&rt.lock);
    pthread_join(rt.thread, NULL);
    rt.thread_running = 0;
}

int locus_init(void)
{
    struct locus_init_data d;
    pthread_mutex_lock(&rt.lock);
    if (rt.started) {
        pthread_mutex_unlock(&rt.lock);
        return 0;
    }
    int in_slot = read_init_data(&d);
    rt.started = 1;
    rt.standalone = !in_slot;
    rt.init = d;
    rt.checkpoint_period = checkpoint_period(&d);
    rt.last_checkpoint = mono_now();
    rt.checkpoint_cpu = d.wu_cpu_time;
    rt.fraction_done = 0;
    rt.suspended = rt.quit = rt.in_checkpoint = rt.stop = 0;
    rt.shmem = in_slot ? map_channels() : NULL;
    pthread_mutex_unlock(&rt.lock);
    return rt.shmem ? start_thread() : 0;
}

void locus_shutdown(void)
{
    stop_thread();
    pthread_mutex_lock(&rt.lock);
    if (rt.shmem)
        munmap(rt.shmem, MMAP_SIZE);
    rt.shmem = NULL;
    rt.started = 0;
    rt.standalone = 1;
    memset(&rt.init, 0, sizeof rt.init);
    rt.init.gpu_device_num = -1;
    rt.suspended = rt.quit = rt.in_checkpoint = rt.stop = 0;
    rt.fraction_done = 0;
    rt.checkpoint_cpu = 0;
    rt.checkpoint_period = LOCUS_DEFAULT_CHECKPOINT_PERIOD;
    rt.last_checkpoint = 0;
    pthread_mutex_unlock(&rt.lock);
}

int locus_is_standalone(void)
{
    pthread_mutex_lock(&rt.lock);
    int s = rt.standalone;
    pthread_mutex_unlock(&rt.lock);
    return s;
}

const struct locus_init_data *locus_get_init_data(void)
{
    return &rt.init;
}

/* N of "--device N" (val) or "--device=N" (arg), -1 if arg is neither or
 * N is not a whole number in 0..9999. */
static int device_arg(const char *arg, const char *val)
{
    static const char opt[] = "--device";
    const char *s;
    if (!arg || strncmp(arg, opt, sizeof opt - 1) != 0)
        return -1;
    if (arg[sizeof opt - 1] == '\0')
        s = val;
    else if (arg[sizeof opt - 1] == '=')
        s = arg + sizeof opt;
    else
        return -1;
    if (!s || !*s)
        return -1;
    int n = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || n > 999)
            return -1;
        n = n * 10 + (*s - '0');
    }
    return n;
}

int locus_gpu_device(int argc, char **argv)
{
    int dev = -1;
    for (int i = 1; argv && i < argc && argv[i]; i++) {
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int d = device_arg(argv[i], val);
        if (d >= 0)
            dev = d;  /* the last one wins: the client appends its own */
    }
    if (dev >= 0)
        return dev;
    pthread_mutex_lock(&rt.lock);
    dev = rt.init.gpu_device_num >= 0 ? rt.init.gpu_device_num : -1;
    pthread_mutex_unlock(&rt.lock);
    return dev;
}

/* ---- what the application calls while computing ---- */

/* Caller holds rt.lock. A quit or a shutdown releases a suspended app. */
static void wait_while_suspended(void)
{
    while (rt.suspended && !rt.quit && !rt.stop)
        pthread_cond_wait(&rt.cond, &rt.lock);
}

void locus_fraction_done(double f)
{
    pthread_mutex_lock(&rt.lock);
    wait_while_suspended();
    if (!isnan(f))
        rt.fraction_done = f < 0 ? 0 : f > 1 ? 1 : f;
    pthread_mutex_unlock(&rt.lock);
}

int locus_time_to_checkpoint(void)
{
    pthread_mutex_lock(&rt.lock);
    wait_while_suspended();
    double now = mono_now();
    if (rt.last_checkpoint == 0)
        rt.last_checkpoint = now;  /* called before locus_init */
    int due = rt.quit || now - rt.last_checkpoint >= rt.checkpoint_period;
    if (due)
        rt.in_checkpoint = 1;  /* a quit now waits longer for the checkpoint */
    pthread_mutex_unlock(&rt.lock);
    return due;
}

int locus_quit_requested(void)
{
    pthread_mutex_lock(&rt.lock);
    int q = rt.quit;
    pthread_mutex_unlock(&rt.lock);
    return q;
}

/* ---- ending the process ---- */

/* Gives the client the final CPU time and fraction (it reads the status
 * channel once more when the process has exited). */
static void send_final_status(void)
{
    for (double waited = 0; rt.shmem && try_send_status() != 0; waited += 0.02) {
        if (waited >= FINAL_STATUS_WAIT)
            break;
        sleep_ns(20000000L);
    }
}

/* Ends the process from an application thread, after writing file (if not
 * NULL) with text. */
LOCUS_NORETURN static void end_process(int code, const char *file, const char *text)
{
    if (!claim_exit())
        for (;;)
            pause();  /* the runtime thread is already ending the process */
    stop_thread();
    send_final_status();
    if (file && locus_app_write_atomic(file, text, strlen(text)) != 0)
        fprintf(stderr, "locus_app: cannot write %s: %s\n", file, strerror(errno));
    exit(code);
}

void locus_checkpoint_completed(void)
{
    pthread_mutex_lock(&rt.lock);
    rt.last_checkpoint = mono_now();
    rt.checkpoint_cpu = task_cpu_time();
    rt.in_checkpoint = 0;
    int quit = rt.quit;
    pthread_mutex_unlock(&rt.lock);
    if (quit)
        end_process(0, NULL, NULL);  /* no finish file: the client restarts us */
}

void locus_finish(int status)
{
    char text[32];
    if (status == 0) {
        pthread_mutex_lock(&rt.lock);
        rt.fraction_done = 1;
        pthread_mutex_unlock(&rt.lock);
    }
    snprintf(text, sizeof text, "%d\n", status);
    end_process(status, "boinc_finish_called", text);
}

void locus_temporary_exit(int delay_seconds, const char *reason)
{
    char text[320];
    int n = snprintf(text, sizeof text, "%d\n", delay_seconds);
    /* the reason is one line of the file: no newlines, bounded */
    for (const char *r = reason ? reason : ""; *r && n < (int)sizeof text - 2; r++)
        text[n++] = (*r == '\n' || *r == '\r') ? ' ' : *r;
    text[n++] = '\n';
    text[n] = '\0';
    end_process(0, "boinc_temporary_exit", text);
}
