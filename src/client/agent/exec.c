/* exec.c - slot folders and app processes (exec.h and docs/client.md,
 * "Protocol", say what the app expects). */
#include "client/agent/exec.h"

#include "core/fsutil.h"
#include "core/log.h"
#include "core/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHANNEL_SIZE 1024
#define MMAP_SIZE (8 * CHANNEL_SIZE)
#define CH_CONTROL 0
#define CH_STATUS 5
#define MAX_ARGS 64

static void slot_path(char *out, size_t len, const char *dir, int slot, const char *file)
{
    snprintf(out, len, "%s/slots/%d%s%s", dir, slot, file ? "/" : "", file ? file : "");
}

/* The lowest slot number no other result of st uses and no folder holds. */
static int free_slot(const char *dir, const struct astate *st)
{
    for (int n = 0;; n++) {
        int used = 0;
        for (int i = 0; i < st->nprojects && !used; i++)
            for (int j = 0; j < st->projects[i]->nresults && !used; j++)
                used = st->projects[i]->results[j]->slot == n;
        char path[PATH_MAX];
        struct stat sb;
        slot_path(path, sizeof path, dir, n, NULL);
        if (!used && stat(path, &sb) != 0)
            return n;
    }
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

void exec_remove_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void put_tag(struct strbuf *b, const char *tag, const char *text)
{
    sb_printf(b, "<%s>", tag);
    sb_xml_escape(b, text);
    sb_printf(b, "</%s>\n", tag);
}

static int write_init_data(const char *dir, const struct astate *st, const struct aproject *p,
                           const struct aresult *r, const struct aworkunit *wu, const struct aapp_version *v)
{
    char path[PATH_MAX], pdir[PATH_MAX], bdir[PATH_MAX];
    struct strbuf b;
    if (!realpath(dir, bdir))
        return -1;
    if (path_printf(pdir, sizeof pdir, "%s/projects/%s", bdir, p->dir_name))
        return -1;
    sb_init(&b);
    sb_puts(&b, "<app_init_data>\n<major_version>7</major_version>\n<minor_version>20</minor_version>\n");
    put_tag(&b, "app_name", v->app_name);
    put_tag(&b, "project_dir", pdir);
    put_tag(&b, "boinc_dir", bdir);
    put_tag(&b, "authenticator", p->authenticator);
    put_tag(&b, "wu_name", wu->name);
    put_tag(&b, "result_name", r->c.name);
    put_tag(&b, "project_name", p->c.name);
    sb_printf(&b, "<userid>%lld</userid>\n<hostid>%lld</hostid>\n<slot>%d</slot>\n",
              (long long)p->userid, (long long)p->hostid, r->slot);
    sb_printf(&b, "<checkpoint_period>%.6f</checkpoint_period>\n", st->prefs.checkpoint_period);
    sb_printf(&b, "<rsc_fpops_est>%.6f</rsc_fpops_est>\n<rsc_fpops_bound>%.6f</rsc_fpops_bound>\n"
                  "<rsc_memory_bound>%.6f</rsc_memory_bound>\n<rsc_disk_bound>%.6f</rsc_disk_bound>\n",
              wu->rsc_fpops_est, wu->rsc_fpops_bound, wu->rsc_memory_bound, wu->rsc_disk_bound);
    /* a restart resumes from the checkpoint: its CPU and elapsed time */
    sb_printf(&b, "<wu_cpu_time>%.6f</wu_cpu_time>\n<starting_elapsed_time>%.6f</starting_elapsed_time>\n",
              r->checkpoint_cpu, r->c.checkpoint_elapsed);
    sb_printf(&b, "<computation_deadline>%.6f</computation_deadline>\n", r->c.deadline);
    if (v->coproc_type[0]) {
        put_tag(&b, "gpu_type", v->coproc_type);
        sb_printf(&b, "<gpu_device_num>%d</gpu_device_num>\n", r->device_num);
    }
    sb_puts(&b, "</app_init_data>\n");
    slot_path(path, sizeof path, dir, r->slot, "init_data.xml");
    int rc = write_file_atomic(path, b.s, b.len);
    sb_free(&b);
    return rc;
}

/* Puts file_name of p under open_name in the slot: a copy or a soft link. */
static int link_file(const char *dir, const struct aproject *p, int slot, const struct afile_ref *ref)
{
    char path[PATH_MAX], target[PATH_MAX];
    const char *open = ref->open_name[0] ? ref->open_name : ref->file_name;
    snprintf(target, sizeof target, "%s/projects/%s/%s", dir, p->dir_name, ref->file_name);
    slot_path(path, sizeof path, dir, slot, open);
    if (ref->copy_file)
        return file_size(target) < 0 ? 0 : copy_file(target, path);  /* outputs: nothing yet */
    char text[PATH_MAX + 32];
    int n = snprintf(text, sizeof text, "<soft_link>../../projects/%s/%s</soft_link>\n", p->dir_name,
                     ref->file_name);
    return write_file_atomic(path, text, (size_t)n);
}

static int prepare_slot(const char *dir, const struct astate *st, const struct aproject *p,
                        struct aresult *r, const struct aworkunit *wu, const struct aapp_version *v)
{
    char path[PATH_MAX];
    slot_path(path, sizeof path, dir, r->slot, NULL);
    if (mkdir_p(path, 0755) != 0)
        return -1;
    slot_path(path, sizeof path, dir, r->slot, "boinc_mmap_file");
    if (file_size(path) != MMAP_SIZE) {
        char zero[MMAP_SIZE] = {0};
        if (write_file_atomic(path, zero, sizeof zero) != 0)
            return -1;
    }
    for (int i = 0; i < wu->nrefs; i++)
        if (link_file(dir, p, r->slot, &wu->refs[i]) != 0)
            return -1;
    for (int i = 0; i < r->nrefs; i++)
        if (link_file(dir, p, r->slot, &r->refs[i]) != 0)
            return -1;
    for (int i = 0; i < v->nrefs; i++)
        if (!v->refs[i].main_program && link_file(dir, p, r->slot, &v->refs[i]) != 0)
            return -1;
    return write_init_data(dir, st, p, r, wu, v);
}

/* Splits a command line on white space into argv[1..]; argv[0] is prog. */
static int split_args(char *line, const char *prog, char **argv)
{
    int n = 0;
    argv[n++] = (char *)prog;
    for (char *save = NULL, *t = line ? strtok_r(line, " \t\n", &save) : NULL; t && n < MAX_ARGS;
         t = strtok_r(NULL, " \t\n", &save))
        argv[n++] = t;
    argv[n] = NULL;
    return n;
}

int exec_start(const char *dir, const struct astate *st, const struct aproject *p, struct aresult *r,
               double now, char *err, size_t errlen)
{
    const struct aworkunit *wu = aproject_wu(p, r->wu_name);
    const struct aapp_version *v = aresult_version(p, r);
    const struct afile_ref *main_ref = NULL;
    for (int i = 0; v && i < v->nrefs; i++)
        if (v->refs[i].main_program)
            main_ref = &v->refs[i];
    if (!wu || !v || !main_ref) {
        errf(err, errlen, "task %s: no workunit, app version or main program", r->c.name);
        return -1;
    }
    if (r->slot < 0)
        r->slot = free_slot(dir, st);
    if (prepare_slot(dir, st, p, r, wu, v) != 0) {
        errf(err, errlen, "task %s: cannot prepare slot %d: %s", r->c.name, r->slot, strerror(errno));
        return -1;
    }
    char slot[PATH_MAX], prog[PATH_MAX], errpath[PATH_MAX];
    slot_path(slot, sizeof slot, dir, r->slot, NULL);
    slot_path(errpath, sizeof errpath, dir, r->slot, "stderr.txt");
    snprintf(prog, sizeof prog, "../../projects/%s/%s", p->dir_name, main_ref->file_name);
    char *cmd = wu->command_line ? xstrdup(wu->command_line) : NULL, *argv[MAX_ARGS + 4], devnum[16];
    int argc = split_args(cmd, prog, argv);
    if (v->coproc_type[0]) {
        /* the device, as BOINC's client tells a GPU app */
        snprintf(devnum, sizeof devnum, "%d", r->device_num);
        argv[argc++] = "--device";
        argv[argc++] = devnum;
        argv[argc] = NULL;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        free(cmd);
        errf(err, errlen, "task %s: fork: %s", r->c.name, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* the app dies with the agent: a restarted agent then restarts it
         * from its checkpoint instead of finding a process it cannot reap */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int in = open("/dev/null", O_RDONLY), e = open(errpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (chdir(slot) != 0 || in < 0 || e < 0)
            _exit(127);
        dup2(in, 0);
        dup2(in, 1);
        dup2(e, 2);
        setpgid(0, 0);
        execv(prog, argv);
        _exit(127);
    }
    free(cmd);
    r->pid = pid;
    r->suspended_via_signal = 0;
    r->c.run_started = now;
    log_debug(LT_TASK, "task %s: started pid %d in slot %d", r->c.name, (int)pid, r->slot);
    return 0;
}

/* Maps r's channels; NULL if the file is not there. */
static char *map_slot(const char *dir, const struct aresult *r)
{
    char path[PATH_MAX];
    slot_path(path, sizeof path, dir, r->slot, "boinc_mmap_file");
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    void *m = mmap(NULL, MMAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return m == MAP_FAILED ? NULL : m;
}

static double tag_value(const char *msg, const char *tag, double dflt)
{
    char open[64];
    snprintf(open, sizeof open, "<%s>", tag);
    const char *s = strstr(msg, open);
    return s ? strtod(s + strlen(open), NULL) : dflt;
}

int exec_poll_status(const char *dir, struct aresult *r, double now)
{
    char *m = r->slot >= 0 ? map_slot(dir, r) : NULL, msg[CHANNEL_SIZE];
    int checkpoint = 0;
    if (!m)
        return 0;
    char *ch = m + CH_STATUS * CHANNEL_SIZE;
    if (__atomic_load_n(ch, __ATOMIC_ACQUIRE)) {
        memcpy(msg, ch + 1, CHANNEL_SIZE - 1);
        msg[CHANNEL_SIZE - 1] = '\0';
        __atomic_store_n(ch, 0, __ATOMIC_RELEASE);
        double f = tag_value(msg, "fraction_done", r->c.fraction_done);
        double ck = tag_value(msg, "checkpoint_cpu_time", r->checkpoint_cpu);
        r->c.fraction_done = f < 0 ? 0 : f > 1 ? 1 : f;
        r->cpu_time = tag_value(msg, "current_cpu_time", r->cpu_time);
        if (ck != r->checkpoint_cpu) {   /* BOINC counts a checkpoint when the value changes */
            r->checkpoint_cpu = ck;
            r->c.checkpoint_elapsed = r->c.elapsed;
            r->c.last_checkpoint = now;
            checkpoint = 1;
            log_debug(LT_TASK, "task %s: checkpoint at %.1f%% (cpu %.1f s)", r->c.name,
                      100 * r->c.fraction_done, ck);
        }
    }
    munmap(m, MMAP_SIZE);
    return checkpoint;
}

/* Writes a control message; a pending unread one is replaced, since each
 * new message supersedes the last (resume after suspend, abort after all). */
static void send_control(const char *dir, const struct aresult *r, const char *text)
{
    char *m = map_slot(dir, r);
    if (!m)
        return;
    char *ch = m + CH_CONTROL * CHANNEL_SIZE;
    __atomic_store_n(ch, 0, __ATOMIC_RELEASE);
    snprintf(ch + 1, CHANNEL_SIZE - 1, "%s", text);
    __atomic_store_n(ch, 1, __ATOMIC_RELEASE);
    munmap(m, MMAP_SIZE);
}

void exec_suspend(const char *dir, struct aresult *r)
{
    if (!r->pid)
        return;
    send_control(dir, r, "<suspend/>");
    kill(r->pid, SIGSTOP);
    r->suspended_via_signal = 1;
    log_debug(LT_TASK, "task %s: suspended in memory", r->c.name);
}

void exec_resume(const char *dir, struct aresult *r)
{
    if (!r->pid)
        return;
    send_control(dir, r, "<resume/>");
    kill(r->pid, SIGCONT);
    r->suspended_via_signal = 0;
    log_debug(LT_TASK, "task %s: resumed", r->c.name);
}

void exec_quit(const char *dir, struct aresult *r)
{
    if (!r->pid)
        return;
    send_control(dir, r, "<quit/>");
    if (r->suspended_via_signal)
        kill(r->pid, SIGCONT);
    r->suspended_via_signal = 0;
    log_debug(LT_TASK, "task %s: asked to quit", r->c.name);
}

void exec_kill(struct aresult *r)
{
    if (!r->pid)
        return;
    kill(r->pid, SIGKILL);
    kill(r->pid, SIGCONT);
}

/* The first line of a finish file as a status; 0 if present, -1 if not. */
static int read_status_file(const char *dir, int slot, const char *name, int *status)
{
    char path[PATH_MAX];
    size_t len;
    slot_path(path, sizeof path, dir, slot, name);
    char *t = read_file(path, 4096, &len);
    if (!t)
        return -1;
    *status = atoi(t);
    free(t);
    return 0;
}

static enum exec_end classify_slot(const char *dir, const struct aresult *r, int *code)
{
    int st;
    if (read_status_file(dir, r->slot, "boinc_finish_called", &st) == 0) {
        *code = st;
        return st == 0 ? EE_SUCCESS : EE_FAILED;
    }
    return EE_STOPPED;
}

enum exec_end exec_reap(const char *dir, struct aresult *r, double now, int *code)
{
    int ws;
    *code = 0;
    if (!r->pid)
        return EE_STOPPED;
    pid_t got = waitpid(r->pid, &ws, WNOHANG);
    if (got == 0)
        return EE_RUNNING;
    r->pid = 0;
    r->suspended_via_signal = 0;
    exec_poll_status(dir, r, now);  /* the last status, sent at exit */
    if (got < 0)
        return EE_STOPPED;
    if (WIFSIGNALED(ws)) {
        int sig = WTERMSIG(ws);
        *code = sig;
        log_debug(LT_TASK, "task %s: killed by signal %d", r->c.name, sig);
        /* the signals an agent or an operator stops a process with */
        return sig == SIGKILL || sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT
                   ? EE_STOPPED : EE_FAILED;
    }
    *code = WEXITSTATUS(ws);
    log_debug(LT_TASK, "task %s: exited with %d", r->c.name, *code);
    if (*code != 0)
        return EE_FAILED;
    return classify_slot(dir, r, code);
}

/* 1 if pid's current folder is r's slot: it is that task's app. */
static int runs_in_slot(const char *dir, const struct aresult *r, int pid)
{
    char link[64], cwd[PATH_MAX], slot[PATH_MAX], real[PATH_MAX];
    snprintf(link, sizeof link, "/proc/%d/cwd", pid);
    ssize_t n = readlink(link, cwd, sizeof cwd - 1);
    slot_path(slot, sizeof slot, dir, r->slot, NULL);
    if (n <= 0 || !realpath(slot, real))
        return 0;
    cwd[n] = '\0';
    return !strcmp(cwd, real);
}

enum exec_end exec_recover(const char *dir, struct aresult *r, int *code)
{
    *code = 0;
    if (r->pid && r->slot >= 0 && runs_in_slot(dir, r, r->pid)) {
        log_info("task %s: killing pid %d left by the previous agent", r->c.name, r->pid);
        kill(r->pid, SIGKILL);
        kill(r->pid, SIGCONT);
        for (int i = 0; i < 100 && kill(r->pid, 0) == 0 && runs_in_slot(dir, r, r->pid); i++)
            usleep(20000);
    }
    r->pid = 0;
    r->suspended_via_signal = 0;
    return r->slot >= 0 ? classify_slot(dir, r, code) : EE_STOPPED;
}

static void keep_stderr(const char *dir, struct aresult *r)
{
    char path[PATH_MAX];
    size_t len;
    slot_path(path, sizeof path, dir, r->slot, "stderr.txt");
    char *t = read_file(path, 64u << 20, &len);
    if (!t)
        return;
    size_t from = len > AS_STDERR_MAX ? len - AS_STDERR_MAX : 0;
    free(r->stderr_txt);
    r->stderr_txt = xstrdup(t + from);
    free(t);
}

void exec_collect(const char *dir, const struct aproject *p, struct aresult *r)
{
    char from[PATH_MAX], to[PATH_MAX];
    if (r->slot < 0)
        return;
    keep_stderr(dir, r);
    for (int i = 0; i < r->nrefs; i++) {
        const struct afile_ref *ref = &r->refs[i];
        if (!ref->copy_file)
            continue;
        slot_path(from, sizeof from, dir, r->slot, ref->open_name[0] ? ref->open_name : ref->file_name);
        snprintf(to, sizeof to, "%s/projects/%s/%s", dir, p->dir_name, ref->file_name);
        rename(from, to);
    }
}

void exec_free_slot(const char *dir, struct aresult *r)
{
    char path[PATH_MAX];
    if (r->slot < 0)
        return;
    slot_path(path, sizeof path, dir, r->slot, NULL);
    exec_remove_tree(path);
    r->slot = -1;
}
