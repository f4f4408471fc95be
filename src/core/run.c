/* run.c - hook commands: fork, exec /bin/sh, wait; and commands whose
 * output is captured, under a deadline (posix_spawn). */
#include "core/run.h"
#include "core/clock.h"
#include "core/strbuf.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUN_MAX_ARGS 64

extern char **environ;

/* The environment a child gets: ours with the "NAME=VALUE" strings of add
 * (borrowed) put over it. Built before fork: a child of a threaded process
 * may only make async-signal-safe calls until it execs, and putenv may
 * allocate, which deadlocks when another thread held the allocator's lock
 * at the fork (seen as a grid daemon hung in a poll thread's sbatch). The
 * array is owned by the caller (free it alone); its strings are borrowed. */
static char **env_with(const char *const *add)
{
    size_t n = 0, k = 0, nadd = 0;
    while (environ && environ[n]) n++;
    while (add && add[nadd]) nadd++;
    char **envp = xcalloc(n + nadd + 1, sizeof *envp);
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t len = eq ? (size_t)(eq - environ[i]) + 1 : strlen(environ[i]);
        int replaced = 0;
        for (size_t j = 0; j < nadd && !replaced; j++) replaced = !strncmp(add[j], environ[i], len);
        if (!replaced) envp[k++] = environ[i];
    }
    for (size_t j = 0; j < nadd; j++) envp[k++] = (char *)add[j];
    return envp;
}

/* Waits for pid until timeout_ms from t0 have passed, then kills its
 * process group (it made one) and reaps it. Its wait status into *status:
 * 0; -1 when the wait failed or the time ran out. Polls at most every
 * RUN_POLL_MAX_MS, so a long hook costs a few wake-ups a second. */
#define RUN_POLL_MAX_MS 100
static int wait_bounded(pid_t pid, long t0, int timeout_ms, int *status)
{
    for (long nap = 1;; nap = nap * 2 < RUN_POLL_MAX_MS ? nap * 2 : RUN_POLL_MAX_MS) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w > 0) return 0;
        if (w < 0 && errno != EINTR) return -1;
        long left = t0 + timeout_ms - (long)monotonic_ms();
        if (left <= 0) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
            return -1;
        }
        usleep((useconds_t)(nap < left ? nap : left) * 1000);
    }
}

int run_command(const char *cmd, const char *name, const char *const *args, const char *cwd,
                const char *const *env, int timeout_ms)
{
    const char *argv[RUN_MAX_ARGS + 5];
    int n = 0;
    argv[n++] = "sh";
    argv[n++] = "-c";
    argv[n++] = cmd;
    argv[n++] = name;
    for (int i = 0; args && args[i] && i < RUN_MAX_ARGS; i++) argv[n++] = args[i];
    argv[n] = NULL;
    char **envp = env_with(env);
    long t0 = (long)monotonic_ms();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);           /* so that a timeout kills whatever it started too */
        if (cwd && chdir(cwd)) _exit(126);
        execve("/bin/sh", (char *const *)argv, envp);
        _exit(127);
    }
    free(envp);
    if (pid < 0) return -1;
    int status;
    if (wait_bounded(pid, t0, timeout_ms, &status)) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void run_output_free(struct run_output *res)
{
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
    res->out_len = res->err_len = 0;
}

/* Appends what fd has to (*buf, *len), keeping at most RUN_CAPTURE_MAX
 * bytes; 0 at end of file, 1 if more may come. */
static int drain(int fd, char **buf, size_t *len)
{
    char chunk[8192];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0) return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (n == 0) return 0;
    size_t keep = *len + (size_t)n > RUN_CAPTURE_MAX ? RUN_CAPTURE_MAX - *len : (size_t)n;
    if (keep) {
        *buf = xrealloc(*buf, *len + keep + 1);
        memcpy(*buf + *len, chunk, keep);
        *len += keep;
        (*buf)[*len] = '\0';
    }
    return 1;
}

int run_capture(const char *const *argv, const char *const *env, int timeout_ms, struct run_output *res,
                char *err, size_t errlen)
{
    *res = (struct run_output){.status = -1, .out = xcalloc(1, 1), .err = xcalloc(1, 1)};
    long t0 = (long)monotonic_ms();
    int po[2], pe[2];            /* stdout, stderr */
    if (pipe2(po, O_CLOEXEC)) goto no_pipe;
    if (pipe2(pe, O_CLOEXEC)) { close(po[0]); close(po[1]); goto no_pipe; }
    /* posix_spawn, not fork: glibc's shares our memory until the exec
     * (CLONE_VM | CLONE_VFORK), where fork copies the page tables of all
     * of it, a cost that grows with locusd's size (a grid daemon holding a
     * campaign of 100,000 jobs runs several commands per cycle), and
     * reports a failed exec as its answer. */
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    /* its own process group, so that a timeout kills whatever it started too */
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    char **envp = env_with(env);
    pid_t pid;
    int exec_errno = posix_spawnp(&pid, argv[0], &fa, &at, (char *const *)argv, envp);
    free(envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(po[1]);
    close(pe[1]);
    if (exec_errno) {
        close(po[0]);
        close(pe[0]);
        errf(err, errlen, "cannot run %s: %s", argv[0], strerror(exec_errno));
        return -1;
    }
    int timed_out = 0;
    struct pollfd fds[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
    int open_fds = 2;
    while (open_fds > 0) {
        long left = t0 + timeout_ms - (long)monotonic_ms();
        if (left <= 0) { timed_out = 1; break; }
        int r = poll(fds, 2, (int)left);
        if (r < 0 && errno != EINTR) break;
        for (int i = 0; i < 2 && r > 0; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            if (!drain(fds[i].fd, i ? &res->err : &res->out, i ? &res->err_len : &res->out_len)) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0) close(fds[i].fd);
    if (timed_out) kill(-pid, SIGKILL);
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, timed_out ? 0 : WNOHANG);
        if (w > 0) break;
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) { status = -1; break; }
        /* output closed but still running: wait for the rest of the deadline */
        long left = t0 + timeout_ms - (long)monotonic_ms();
        if (timed_out || left <= 0) { timed_out = 1; kill(-pid, SIGKILL); continue; }
        usleep(left < 10 ? (useconds_t)left * 1000 : 10000);
    }
    res->elapsed_ms = (long)monotonic_ms() - t0;
    if (timed_out) {
        errf(err, errlen, "%s did not answer within %d s (killed)", argv[0], (timeout_ms + 999) / 1000);
        return -1;
    }
    res->status = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return 0;
no_pipe:
    errf(err, errlen, "cannot start %s: %s", argv[0], strerror(errno));
    return -1;
}
