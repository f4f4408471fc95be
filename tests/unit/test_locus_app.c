/* test_locus_app.c - tests of liblocus_app and of the example worker. The
 * test plays the BOINC client: it builds a fake slot (init_data.xml,
 * soft-link files, an 8 KB boinc_mmap_file it maps too), reads the status
 * channel, writes control messages, and checks exit codes and finish files
 * of forked children. The worker end-to-end test needs LOCUS_BUILD_DIR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app/app_internal.h"
#include <locus/locus_app.h>

#define CH_SIZE 1024
#define CH_CONTROL 0
#define CH_STATUS 5
#define WAIT_LIMIT 30.0 /* s: only to never hang; no test depends on speed */

static char origin[4096]; /* cwd of the test process */
static char root[4096];   /* per-test temporary folder */

/* ---- small helpers ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void path_in(char *out, size_t n, const char *dir, const char *name)
{
    assert_true((size_t)snprintf(out, n, "%s/%s", dir, name) < n);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

/* Whole file into a malloc'd NUL-terminated buffer, NULL if absent. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, r;
    char *buf = malloc(cap + 1);
    while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static int exists_in(const char *dir, const char *name)
{
    char p[4200];
    path_in(p, sizeof p, dir, name);
    return access(p, F_OK) == 0;
}

static void make_dir(char *out, size_t n, const char *name)
{
    path_in(out, n, root, name);
    assert_int_equal(mkdir(out, 0755), 0);
}

static const char slot_init_data[] =
    "<app_init_data>\n"
    "<app_name>worker</app_name>\n"
    "<wu_name>wu_7</wu_name>\n"
    "<result_name>wu_7_r0</result_name>\n"
    "<userid>5</userid><hostid>9</hostid>\n"
    "<checkpoint_period>3600</checkpoint_period>\n"
    "<wu_cpu_time>100</wu_cpu_time>\n"
    "</app_init_data>\n";

/* A slot folder under root with init_data.xml (unless xml is NULL) and a
 * zeroed boinc_mmap_file, mapped shared like the client does. */
static char *make_slot(char *dir, size_t n, const char *name, const char *xml)
{
    char p[4200];
    make_dir(dir, n, name);
    if (xml) {
        path_in(p, sizeof p, dir, "init_data.xml");
        write_text(p, xml);
    }
    path_in(p, sizeof p, dir, "boinc_mmap_file");
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 8 * CH_SIZE), 0);
    char *shm = mmap(NULL, 8 * CH_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    assert_true(shm != MAP_FAILED);
    return shm;
}

static void client_send(char *shm, const char *msg)
{
    char *ch = shm + CH_CONTROL * CH_SIZE;
    strcpy(ch + 1, msg);
    __atomic_store_n(ch, 1, __ATOMIC_RELEASE);
}

/* Reads (and clears) a pending status message into buf; 1 if there was one. */
static int client_read_status(char *shm, char *buf)
{
    char *ch = shm + CH_STATUS * CH_SIZE;
    if (!__atomic_load_n(ch, __ATOMIC_ACQUIRE))
        return 0;
    memcpy(buf, ch + 1, CH_SIZE - 1);
    buf[CH_SIZE - 1] = '\0';
    __atomic_store_n(ch, 0, __ATOMIC_RELEASE);
    return 1;
}

/* The number inside <tag>...</tag> of msg, or -1. */
static double tag_value(const char *msg, const char *tag)
{
    char open[64];
    snprintf(open, sizeof open, "<%s>", tag);
    const char *p = strstr(msg, open);
    return p ? strtod(p + strlen(open), NULL) : -1.0;
}

/* Waits for a status message containing want (any message if NULL). */
static int wait_status(char *shm, const char *want, char *msg)
{
    for (double t0 = now_s(); now_s() - t0 < WAIT_LIMIT; nap_ms(10))
        if (client_read_status(shm, msg) && (!want || strstr(msg, want)))
            return 1;
    return 0;
}

/* A forked child seen by the fake client. */
struct child {
    pid_t pid;
    int exited;
    int wstatus;
    double fraction; /* last fraction_done received */
};

static void child_poll(struct child *c, char *shm)
{
    char msg[CH_SIZE];
    if (shm && client_read_status(shm, msg))
        c->fraction = tag_value(msg, "fraction_done");
    if (!c->exited && waitpid(c->pid, &c->wstatus, WNOHANG) == c->pid)
        c->exited = 1;
}

/* Serves the child until it exits; fails the test (after SIGKILL) if it
 * does not within WAIT_LIMIT. */
static void child_wait(struct child *c, char *shm)
{
    for (double t0 = now_s(); !c->exited; nap_ms(10)) {
        child_poll(c, shm);
        if (!c->exited && now_s() - t0 > WAIT_LIMIT) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, &c->wstatus, 0);
            fail_msg("child %d did not exit", (int)c->pid);
        }
    }
    child_poll(c, shm);  /* the final status, written just before exit */
}

static void assert_exit_code(const struct child *c, int code)
{
    assert_true(c->exited);
    if (!WIFEXITED(c->wstatus))
        fail_msg("child did not exit normally (status 0x%x)", c->wstatus);
    assert_int_equal(WEXITSTATUS(c->wstatus), code);
}

/* Runs fn in a child whose cwd is dir; fn's return value is its exit code. */
static struct child fork_in(const char *dir, int (*fn)(void *), void *arg)
{
    struct child c = {0};
    fflush(NULL);
    c.pid = fork();
    assert_true(c.pid >= 0);
    if (c.pid == 0) {
        if (chdir(dir) != 0)
            _exit(120);
        _exit(fn(arg));
    }
    return c;
}

/* ---- fixtures ---- */

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/locus_app_test_XXXXXX");
    if (!mkdtemp(root))
        return -1;
    unsetenv("LOCUS_CHECKPOINT_PERIOD");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    locus_shutdown();
    unsetenv("LOCUS_CHECKPOINT_PERIOD");
    if (chdir(origin) != 0)
        return -1;
    return nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- init_data.xml and numbers ---- */

static const char full_init_data[] =
    "<?xml version=\"1.0\"?>\n"
    "<!-- <app_name>comment</app_name> -->\n"
    "<app_init_data>\n"
    "<major_version>7</major_version>\n"
    "<app_name>worker</app_name>\n"
    "<project_preferences><wu_name>inner</wu_name><x><userid>1</userid></x></project_preferences>\n"
    "<wu_name> wu_1 &amp; &lt;co&gt; </wu_name>\n"
    "<result_name>wu_1_r0</result_name>\n"
    "<userid>12</userid><hostid>34</hostid><teamid>0</teamid>\n"
    "<slot>3</slot>\n"
    "<project_dir>/var/lib/boinc/projects/127.0.0.1_18080_proj</project_dir>\n"
    "<checkpoint_period>  120.5 </checkpoint_period>\n"
    "<rsc_fpops_est>1.5e+13</rsc_fpops_est>\n"
    "<rsc_memory_bound>268435456.000000</rsc_memory_bound>\n"
    "<wu_cpu_time>12.25</wu_cpu_time>\n"
    "<host_info><hostid>999</hostid><p_vendor a=\"x>y\">GenuineIntel</p_vendor></host_info>\n"
    "<computation_deadline>bogus</computation_deadline>\n"
    "<empty/>\n"
    "</app_init_data>\n";

static void test_parse_init_data(void **state)
{
    (void)state;
    struct locus_init_data d;
    int found = locus_parse_init_data(full_init_data, strlen(full_init_data), &d);
    assert_int_equal(found, 12);
    assert_string_equal(d.app_name, "worker");
    assert_string_equal(d.wu_name, "wu_1 & <co>");
    assert_string_equal(d.result_name, "wu_1_r0");
    assert_string_equal(d.project_dir, "/var/lib/boinc/projects/127.0.0.1_18080_proj");
    assert_int_equal(d.userid, 12);
    assert_int_equal(d.hostid, 34);
    assert_int_equal(d.slot, 3);
    assert_true(d.checkpoint_period == 120.5);
    assert_true(d.rsc_fpops_est == 1.5e13);
    assert_true(d.rsc_memory_bound == 268435456.0);
    assert_true(d.wu_cpu_time == 12.25);
    assert_true(d.computation_deadline == 0);  /* "bogus" skipped */
    assert_string_equal(d.boinc_dir, "");
}

static void test_parse_init_data_tolerant(void **state)
{
    (void)state;
    struct locus_init_data d;
    size_t n = strlen(full_init_data);
    for (size_t len = 0; len <= n; len++)  /* every truncation */
        locus_parse_init_data(full_init_data, len, &d);
    assert_int_equal(locus_parse_init_data(NULL, 10, &d), 0);
    assert_int_equal(locus_parse_init_data("", 0, &d), 0);
    assert_int_equal(locus_parse_init_data("<<<</>>", 7, &d), 0);
    unsigned char junk[4096];
    uint32_t x = 12345;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof junk; i++) {
            x = x * 1103515245u + 12345u;
            junk[i] = (unsigned char)"<>/a_n!-?[\"' x"[(x >> 16) % 14];
        }
        locus_parse_init_data((const char *)junk, sizeof junk, &d);
    }
    char longname[3000] = "<r><app_name>";
    memset(longname + strlen(longname), 'a', 2000);
    strcat(longname, "</app_name></r>");
    assert_int_equal(locus_parse_init_data(longname, strlen(longname), &d), 1);
    assert_int_equal(strlen(d.app_name), sizeof d.app_name - 1);  /* truncated */
}

/* What the client writes for a GPU task (app_ipc.cpp), with look-alikes
 * inside <host_info> that must not leak in. */
static const char gpu_init_data[] =
    "<app_init_data>\n"
    "<app_name>gpu_worker</app_name>\n"
    "<host_info><coprocs><coproc_cuda><gpu_device_num>7</gpu_device_num>"
    "<gpu_type>inner</gpu_type></coproc_cuda></coprocs></host_info>\n"
    "<gpu_type>NVIDIA</gpu_type>\n"
    "<gpu_device_num>1</gpu_device_num>\n"
    "<gpu_opencl_dev_index>1</gpu_opencl_dev_index>\n"
    "<ncpus>0.200000</ncpus>\n"
    "</app_init_data>\n";

static void test_parse_init_data_gpu(void **state)
{
    (void)state;
    struct locus_init_data d;
    assert_int_equal(locus_parse_init_data(gpu_init_data, strlen(gpu_init_data), &d), 3);
    assert_string_equal(d.app_name, "gpu_worker");
    assert_int_equal(d.gpu_device_num, 1);
    assert_string_equal(d.gpu_type, "NVIDIA");

    /* absent: -1 and "", also for the texts that hold nothing at all */
    assert_int_equal(locus_parse_init_data(full_init_data, strlen(full_init_data), &d), 12);
    assert_int_equal(d.gpu_device_num, -1);
    assert_string_equal(d.gpu_type, "");
    assert_int_equal(locus_parse_init_data(NULL, 0, &d), 0);
    assert_int_equal(d.gpu_device_num, -1);
    assert_int_equal(locus_parse_init_data("", 0, &d), 0);
    assert_int_equal(d.gpu_device_num, -1);

    /* device 0 is a device; a bad number is skipped */
    static const char zero[] = "<a><gpu_device_num> 0 </gpu_device_num></a>";
    assert_int_equal(locus_parse_init_data(zero, strlen(zero), &d), 1);
    assert_int_equal(d.gpu_device_num, 0);
    static const char bad[] = "<a><gpu_device_num>x</gpu_device_num><gpu_type>ATI</gpu_type></a>";
    assert_int_equal(locus_parse_init_data(bad, strlen(bad), &d), 1);
    assert_int_equal(d.gpu_device_num, -1);
    assert_string_equal(d.gpu_type, "ATI");

    /* a long type is truncated to its buffer */
    char longtype[200] = "<a><gpu_type>";
    memset(longtype + strlen(longtype), 'g', 100);
    strcat(longtype, "</gpu_type></a>");
    assert_int_equal(locus_parse_init_data(longtype, strlen(longtype), &d), 1);
    assert_int_equal(strlen(d.gpu_type), sizeof d.gpu_type - 1);
}

/* locus_gpu_device(argc, argv) with argv given as a NULL-terminated list. */
static int gpu_device_of(char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return locus_gpu_device(argc, argv);
}

static void test_gpu_device(void **state)
{
    (void)state;
    char *none[] = {"app", "--iterations", "5", NULL};
    char *spaced[] = {"app", "--iterations", "5", "--device", "3", NULL};
    char *joined[] = {"app", "--device=2", "--seed", "1", NULL};
    char *zero[] = {"app", "--device", "0", NULL};
    char *last[] = {"app", "--device", "4", "--device=6", NULL};
    char *bad1[] = {"app", "--device", "x", NULL};
    char *bad2[] = {"app", "--device", "-1", NULL};
    char *bad3[] = {"app", "--device=", "--devices", "4", "--device5", NULL};
    char *bad4[] = {"app", "--device", "99999", NULL};
    char *dangling[] = {"app", "--device", NULL};
    char *prog[] = {"--device=8", NULL};  /* argv[0] is the program */

    /* before locus_init: argv only */
    assert_int_equal(gpu_device_of(none), -1);
    assert_int_equal(gpu_device_of(spaced), 3);
    assert_int_equal(gpu_device_of(joined), 2);
    assert_int_equal(gpu_device_of(zero), 0);
    assert_int_equal(gpu_device_of(last), 6);
    assert_int_equal(gpu_device_of(bad1), -1);
    assert_int_equal(gpu_device_of(bad2), -1);
    assert_int_equal(gpu_device_of(bad3), -1);
    assert_int_equal(gpu_device_of(bad4), -1);
    assert_int_equal(gpu_device_of(dangling), -1);
    assert_int_equal(gpu_device_of(prog), -1);
    assert_int_equal(locus_gpu_device(0, NULL), -1);
    assert_int_equal(locus_gpu_device(3, NULL), -1);
    assert_int_equal(locus_get_init_data()->gpu_device_num, -1);
    /* argc bounds the scan: "3" lies beyond it */
    assert_int_equal(locus_gpu_device(4, spaced), -1);

    /* in a GPU slot: init_data's device, which --device overrides */
    char dir[4096];
    char *shm = make_slot(dir, sizeof dir, "slot", gpu_init_data);
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(locus_init(), 0);
    assert_int_equal(locus_get_init_data()->gpu_device_num, 1);
    assert_string_equal(locus_get_init_data()->gpu_type, "NVIDIA");
    assert_int_equal(gpu_device_of(none), 1);
    assert_int_equal(gpu_device_of(bad1), 1);
    assert_int_equal(gpu_device_of(zero), 0);
    assert_int_equal(gpu_device_of(spaced), 3);
    locus_shutdown();
    assert_int_equal(locus_get_init_data()->gpu_device_num, -1);
    assert_int_equal(gpu_device_of(none), -1);
    munmap(shm, 8 * CH_SIZE);

    /* a CPU slot and standalone mode: none */
    char cpu[4096], plain[4096];
    shm = make_slot(cpu, sizeof cpu, "cpu", slot_init_data);
    assert_int_equal(chdir(cpu), 0);
    assert_int_equal(locus_init(), 0);
    assert_int_equal(locus_is_standalone(), 0);
    assert_int_equal(gpu_device_of(none), -1);
    assert_string_equal(locus_get_init_data()->gpu_type, "");
    locus_shutdown();
    munmap(shm, 8 * CH_SIZE);
    make_dir(plain, sizeof plain, "plain");
    assert_int_equal(chdir(plain), 0);
    assert_int_equal(locus_init(), 0);
    assert_int_equal(locus_is_standalone(), 1);
    assert_int_equal(locus_get_init_data()->gpu_device_num, -1);
    assert_int_equal(gpu_device_of(none), -1);
    assert_int_equal(gpu_device_of(joined), 2);
}

static void test_numbers(void **state)
{
    (void)state;
    double v = 0;
    char buf[64];
    assert_int_equal(locus_app_parse_double("1e+13", 5, &v), 0);
    assert_true(v == 1e13);
    assert_int_equal(locus_app_parse_double(" -3.5\n", 6, &v), 0);
    assert_true(v == -3.5);
    assert_int_equal(locus_app_parse_double("0.005", 5, &v), 0);
    assert_true(v > 0.00499999 && v < 0.00500001);
    assert_int_equal(locus_app_parse_double("60", 2, &v), 0);
    assert_true(v == 60);
    assert_int_equal(locus_app_parse_double("abc", 3, &v), -1);
    assert_int_equal(locus_app_parse_double("1e", 2, &v), -1);
    assert_int_equal(locus_app_parse_double("", 0, &v), -1);
    assert_int_equal(locus_app_parse_double(".", 1, &v), -1);
    assert_int_equal(locus_app_parse_double("1e999", 5, &v), -1);
    assert_int_equal(locus_app_parse_double("12x", 3, &v), -1);
    locus_app_format_fixed(buf, sizeof buf, 0.25);
    assert_string_equal(buf, "0.250000");
    locus_app_format_fixed(buf, sizeof buf, -1.5);
    assert_string_equal(buf, "-1.500000");
    locus_app_format_fixed(buf, sizeof buf, 123.0000004);
    assert_string_equal(buf, "123.000000");
}

/* ---- soft links ---- */

static void test_resolve_filename(void **state)
{
    (void)state;
    char out[256];
    assert_int_equal(chdir(root), 0);
    write_text("in", "<soft_link>../../projects/p/wu_1_in</soft_link>\n");
    write_text("out", "<soft_link>../../projects/p/wu_1_r0_out</soft_link>");
    write_text("plain", "just data\n");
    write_text("spaced", "  \n<soft_link>\n  dir/a b  \n</soft_link>\n");
    write_text("broken", "<soft_link>nowhere");
    write_text("empty", "<soft_link> </soft_link>");
    assert_int_equal(locus_resolve_filename("in", out, sizeof out), 0);
    assert_string_equal(out, "../../projects/p/wu_1_in");
    assert_int_equal(locus_resolve_filename("out", out, sizeof out), 0);
    assert_string_equal(out, "../../projects/p/wu_1_r0_out");
    assert_int_equal(locus_resolve_filename("plain", out, sizeof out), 0);
    assert_string_equal(out, "plain");
    assert_int_equal(locus_resolve_filename("spaced", out, sizeof out), 0);
    assert_string_equal(out, "dir/a b");
    assert_int_equal(locus_resolve_filename("broken", out, sizeof out), 0);
    assert_string_equal(out, "broken");
    assert_int_equal(locus_resolve_filename("empty", out, sizeof out), 0);
    assert_string_equal(out, "empty");
    assert_int_equal(locus_resolve_filename("missing", out, sizeof out), 0);
    assert_string_equal(out, "missing");
    assert_int_equal(mkdir("adir", 0755), 0);
    assert_int_equal(locus_resolve_filename("adir", out, sizeof out), 0);
    assert_string_equal(out, "adir");
    errno = 0;
    assert_int_equal(locus_resolve_filename("in", out, 10), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    assert_int_equal(locus_resolve_filename("missing", out, 7), -1);
    assert_int_equal(locus_resolve_filename(NULL, out, sizeof out), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(locus_resolve_filename("in", NULL, 5), -1);
    assert_int_equal(locus_resolve_filename("", out, sizeof out), -1);
}

/* ---- in-process runtime: status channel, checkpoint timing ---- */

static void test_status_channel(void **state)
{
    (void)state;
    char dir[4096], msg[CH_SIZE];
    char *shm = make_slot(dir, sizeof dir, "slot", slot_init_data);
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(locus_init(), 0);
    assert_int_equal(locus_init(), 0);  /* twice is harmless */
    assert_int_equal(locus_is_standalone(), 0);
    assert_string_equal(locus_get_init_data()->wu_name, "wu_7");
    assert_int_equal(locus_get_init_data()->hostid, 9);
    assert_int_equal(locus_time_to_checkpoint(), 0);  /* period 3600 s */

    locus_fraction_done(0.5);
    assert_true(wait_status(shm, "<fraction_done>0.500000</fraction_done>", msg));
    assert_true(tag_value(msg, "current_cpu_time") >= 100.0);  /* wu_cpu_time counts */
    assert_true(tag_value(msg, "checkpoint_cpu_time") == 100.0);

    /* a message the client has not read yet is never overwritten */
    char *ch = shm + CH_STATUS * CH_SIZE;
    strcpy(ch + 1, "SENTINEL");
    __atomic_store_n(ch, 1, __ATOMIC_RELEASE);
    locus_fraction_done(0.75);
    nap_ms(1500);
    assert_int_equal(ch[0], 1);
    assert_string_equal(ch + 1, "SENTINEL");
    ch[0] = 0;
    assert_true(wait_status(shm, "<fraction_done>0.750000</fraction_done>", msg));

    locus_fraction_done(7.0);  /* clamped */
    assert_true(wait_status(shm, "<fraction_done>1.000000</fraction_done>", msg));

    /* a checkpoint moves checkpoint_cpu_time, which the client counts */
    for (volatile long i = 0; i < 20000000; i++)
        ;
    locus_checkpoint_completed();
    for (int tries = 0; tries < 10; tries++) {
        assert_true(wait_status(shm, NULL, msg));
        if (tag_value(msg, "checkpoint_cpu_time") > 100.0)
            break;
    }
    assert_true(tag_value(msg, "checkpoint_cpu_time") > 100.0);
    locus_shutdown();
    assert_int_equal(locus_is_standalone(), 1);
    munmap(shm, 8 * CH_SIZE);
}

static void test_checkpoint_timing(void **state)
{
    (void)state;
    char dir[4096];
    /* standalone: no init_data.xml; the environment sets the period */
    make_dir(dir, sizeof dir, "plain");
    assert_int_equal(chdir(dir), 0);
    setenv("LOCUS_CHECKPOINT_PERIOD", "1", 1);
    assert_int_equal(locus_init(), 0);
    assert_int_equal(locus_is_standalone(), 1);
    assert_int_equal(locus_time_to_checkpoint(), 0);
    nap_ms(1100);
    assert_int_equal(locus_time_to_checkpoint(), 1);
    locus_checkpoint_completed();
    assert_int_equal(locus_time_to_checkpoint(), 0);
    locus_shutdown();

    setenv("LOCUS_CHECKPOINT_PERIOD", "0", 1);
    assert_int_equal(locus_init(), 0);
    assert_int_equal(locus_time_to_checkpoint(), 1);
    locus_checkpoint_completed();
    assert_int_equal(locus_time_to_checkpoint(), 1);
    locus_shutdown();

    /* from init_data.xml when the environment says nothing */
    unsetenv("LOCUS_CHECKPOINT_PERIOD");
    char slot[4096];
    char *shm = make_slot(slot, sizeof slot, "slot",
                          "<app_init_data><checkpoint_period>0.5</checkpoint_period></app_init_data>");
    assert_int_equal(chdir(slot), 0);
    assert_int_equal(locus_init(), 0);
    assert_int_equal(locus_time_to_checkpoint(), 0);
    nap_ms(600);
    assert_int_equal(locus_time_to_checkpoint(), 1);
    locus_shutdown();
    munmap(shm, 8 * CH_SIZE);
}

/* ---- control channel, in forked children ---- */

/* Cooperative app: checkpoints (writes "ckpt") when told to. */
static int app_cooperative(void *arg)
{
    (void)arg;
    locus_init();
    for (double t0 = now_s(); now_s() - t0 < WAIT_LIMIT; nap_ms(10)) {
        locus_fraction_done(0.5);
        if (locus_time_to_checkpoint()) {
            FILE *f = fopen("ckpt", "w");
            if (f)
                fclose(f);
            locus_checkpoint_completed();
        }
    }
    return 3;
}

/* Only reports progress, never checkpoints. */
static int app_progress_only(void *arg)
{
    volatile int *counter = arg;
    locus_init();
    for (double t0 = now_s(); now_s() - t0 < WAIT_LIMIT; nap_ms(5)) {
        locus_fraction_done(0.25);
        if (counter)
            (*counter)++;
    }
    return 3;
}

static void test_quit_checkpoints_then_exits(void **state)
{
    (void)state;
    char dir[4096], msg[CH_SIZE];
    char *shm = make_slot(dir, sizeof dir, "slot", slot_init_data);
    struct child c = fork_in(dir, app_cooperative, NULL);
    assert_true(wait_status(shm, NULL, msg));  /* running and reporting */
    assert_false(exists_in(dir, "ckpt"));     /* period 3600 s */
    client_send(shm, "<quit/>");
    child_wait(&c, shm);
    assert_exit_code(&c, 0);
    assert_true(exists_in(dir, "ckpt"));
    assert_false(exists_in(dir, "boinc_finish_called"));
    assert_int_equal(shm[CH_CONTROL * CH_SIZE], 0);  /* the app read it */
    munmap(shm, 8 * CH_SIZE);
}

static void test_quit_uncooperative_app(void **state)
{
    (void)state;
    char dir[4096], msg[CH_SIZE];
    char *shm = make_slot(dir, sizeof dir, "slot", slot_init_data);
    struct child c = fork_in(dir, app_progress_only, NULL);
    assert_true(wait_status(shm, NULL, msg));
    client_send(shm, "<quit/>");
    child_wait(&c, shm);
    assert_exit_code(&c, 0);
    assert_false(exists_in(dir, "boinc_finish_called"));
    munmap(shm, 8 * CH_SIZE);
}

static void test_abort(void **state)
{
    (void)state;
    char dir[4096], msg[CH_SIZE];
    char *shm = make_slot(dir, sizeof dir, "slot", slot_init_data);
    struct child c = fork_in(dir, app_cooperative, NULL);
    assert_true(wait_status(shm, NULL, msg));
    client_send(shm, "<abort/>");
    child_wait(&c, shm);
    assert_exit_code(&c, LOCUS_EXIT_ABORTED);
    assert_false(exists_in(dir, "boinc_finish_called"));
    assert_false(exists_in(dir, "ckpt"));
    munmap(shm, 8 * CH_SIZE);
}

static int wait_counter_above(volatile int *counter, int above)
{
    for (double t0 = now_s(); now_s() - t0 < WAIT_LIMIT; nap_ms(5))
        if (*counter > above)
            return 1;
    return 0;
}

static int wait_control_read(char *shm)
{
    for (double t0 = now_s(); now_s() - t0 < WAIT_LIMIT; nap_ms(5))
        if (!__atomic_load_n(shm + CH_CONTROL * CH_SIZE, __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

static void test_suspend_resume(void **state)
{
    (void)state;
    char dir[4096];
    char *shm = make_slot(dir, sizeof dir, "slot", slot_init_data);
    volatile int *counter = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true((void *)counter != MAP_FAILED);
    *counter = 0;
    struct child c = fork_in(dir, app_progress_only, (void *)counter);
    assert_true(wait_counter_above(counter, 5));

    client_send(shm, "<suspend/>");
    assert_true(wait_control_read(shm));
    nap_ms(200);  /* the app finishes the iteration it was in */
    int c1 = *counter;
    nap_ms(500);
    assert_true(*counter - c1 <= 1);  /* paused in locus_fraction_done */

    client_send(shm, "<resume/>");
    assert_true(wait_control_read(shm));
    assert_true(wait_counter_above(counter, c1 + 5));

    /* a quit releases a suspended app, which then exits */
    client_send(shm, "<suspend/>");
    assert_true(wait_control_read(shm));
    client_send(shm, "<quit/>");
    child_wait(&c, shm);
    assert_exit_code(&c, 0);
    assert_false(exists_in(dir, "boinc_finish_called"));
    munmap((void *)counter, sizeof(int));
    munmap(shm, 8 * CH_SIZE);
}

/* ---- finishing ---- */

static int app_finish(void *arg)
{
    locus_init();
    locus_fraction_done(0.3);
    locus_finish(*(int *)arg);
}

static void test_finish(void **state)
{
    (void)state;
    char dir[4096], p[4200];
    char *shm = make_slot(dir, sizeof dir, "slot", slot_init_data);
    int status = 0;
    struct child c = fork_in(dir, app_finish, &status);
    child_wait(&c, shm);
    assert_exit_code(&c, 0);
    path_in(p, sizeof p, dir, "boinc_finish_called");
    char *text = slurp(p, NULL);
    assert_non_null(text);
    assert_string_equal(text, "0\n");
    free(text);
    assert_true(c.fraction == 1.0);  /* the last status says done */
    assert_false(exists_in(dir, "boinc_finish_called.tmp"));

    /* standalone (no init_data.xml) writes the file as well */
    char plain[4096];
    make_dir(plain, sizeof plain, "plain");
    status = 3;
    c = fork_in(plain, app_finish, &status);
    child_wait(&c, NULL);
    assert_exit_code(&c, 3);
    path_in(p, sizeof p, plain, "boinc_finish_called");
    text = slurp(p, NULL);
    assert_non_null(text);
    assert_string_equal(text, "3\n");
    free(text);
    munmap(shm, 8 * CH_SIZE);
}

static int app_temporary_exit(void *arg)
{
    (void)arg;
    locus_init();
    locus_temporary_exit(30, "gpu\nbusy");
}

static void test_temporary_exit(void **state)
{
    (void)state;
    char dir[4096], p[4200];
    char *shm = make_slot(dir, sizeof dir, "slot", slot_init_data);
    struct child c = fork_in(dir, app_temporary_exit, NULL);
    child_wait(&c, shm);
    assert_exit_code(&c, 0);
    path_in(p, sizeof p, dir, "boinc_temporary_exit");
    char *text = slurp(p, NULL);
    assert_non_null(text);
    assert_string_equal(text, "30\ngpu busy\n");
    free(text);
    assert_false(exists_in(dir, "boinc_finish_called"));
    munmap(shm, 8 * CH_SIZE);
}

/* ---- the example worker, end to end ---- */

#define WORKER_ITERATIONS "3000000"

static char worker_path[4096];

struct worker_run {
    const char *sleep_ms;          /* NULL: no sleeping */
    const char *checkpoint_period; /* NULL: default */
    const char *fail_code;         /* NULL: none */
    const char *device;            /* NULL: no --device */
};

static int exec_worker(void *arg)
{
    const struct worker_run *r = arg;
    char *argv[16];
    int n = 0;
    argv[n++] = worker_path;
    argv[n++] = "--iterations";
    argv[n++] = WORKER_ITERATIONS;
    argv[n++] = "--seed";
    argv[n++] = "7";
    if (r->sleep_ms) {
        argv[n++] = "--sleep-ms";
        argv[n++] = (char *)r->sleep_ms;
    }
    if (r->fail_code) {
        argv[n++] = "--fail-code";
        argv[n++] = (char *)r->fail_code;
    }
    if (r->device) {  /* appended last, like the client does */
        argv[n++] = "--device";
        argv[n++] = (char *)r->device;
    }
    argv[n] = NULL;
    if (r->checkpoint_period)
        setenv("LOCUS_CHECKPOINT_PERIOD", r->checkpoint_period, 1);
    /* like the client: stderr appended to the slot's stderr.txt */
    int fd = open("stderr.txt", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0)
        dup2(fd, 2);
    execv(worker_path, argv);
    return 121;
}

/* A slot whose "in" and "out" are soft links to ../proj/wu_in and
 * ../proj/<out>. */
static char *make_worker_slot_xml(char *dir, size_t n, const char *name, const char *out,
                                  const char *xml)
{
    char p[4200], link[4200];
    char *shm = make_slot(dir, n, name, xml);
    path_in(p, sizeof p, dir, "in");
    write_text(p, "<soft_link>../proj/wu_in</soft_link>\n");
    path_in(p, sizeof p, dir, "out");
    snprintf(link, sizeof link, "<soft_link>../proj/%s</soft_link>\n", out);
    write_text(p, link);
    return shm;
}

static char *make_worker_slot(char *dir, size_t n, const char *name, const char *out)
{
    return make_worker_slot_xml(dir, n, name, out, slot_init_data);
}

static char *read_proj_file(const char *name)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/proj/%s", root, name);
    return slurp(p, NULL);
}

static void run_worker_as(const char *dir, char *shm, const struct worker_run *r)
{
    struct child c = fork_in(dir, exec_worker, (void *)r);
    child_wait(&c, shm);
    assert_exit_code(&c, 0);
    char p[4200];
    path_in(p, sizeof p, dir, "boinc_finish_called");
    char *text = slurp(p, NULL);
    assert_non_null(text);
    assert_string_equal(text, "0\n");
    free(text);
    assert_false(exists_in(dir, "worker_state"));
}

static void run_worker_to_end(const char *dir, char *shm)
{
    struct worker_run plain = {0};
    run_worker_as(dir, shm, &plain);
}

/* The slot's stderr.txt (malloc'd), "" if absent. */
static char *slot_stderr(const char *dir)
{
    char p[4200];
    path_in(p, sizeof p, dir, "stderr.txt");
    char *text = slurp(p, NULL);
    return text ? text : strdup("");
}

/* Iterations recorded in the slot's worker_state (field 6), -1 if none. */
static long long checkpointed_iterations(const char *dir)
{
    char p[4200];
    unsigned long long v[6];
    path_in(p, sizeof p, dir, "worker_state");
    char *text = slurp(p, NULL);
    if (!text)
        return -1;
    int n = sscanf(text, "locus-worker-state 1 %llu %llu %llu %llx %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4]);
    free(text);
    return n == 5 ? (long long)v[4] : -1;
}

/* Starts a slow worker, interrupts it past 30% (SIGKILL, or <quit/> if
 * quit), checks it left a partial checkpoint and no finish file, then
 * restarts it to the end. */
static void interrupt_and_restart(const char *dir, char *shm, int quit)
{
    struct worker_run slow = {.sleep_ms = "30", .checkpoint_period = "0.05"};
    struct child c = fork_in(dir, exec_worker, &slow);
    for (double t0 = now_s(); !c.exited; nap_ms(5)) {
        child_poll(&c, shm);
        if (c.fraction >= 0.3 && checkpointed_iterations(dir) > 0)
            break;
        assert_true(now_s() - t0 < WAIT_LIMIT);
    }
    assert_false(c.exited);  /* it must still be mid-way */
    if (quit) {
        client_send(shm, "<quit/>");
        child_wait(&c, shm);
        assert_exit_code(&c, 0);
    } else {
        kill(c.pid, SIGKILL);
        assert_int_equal(waitpid(c.pid, &c.wstatus, 0), c.pid);
        assert_true(WIFSIGNALED(c.wstatus));
    }
    assert_false(exists_in(dir, "boinc_finish_called"));
    long long done = checkpointed_iterations(dir);
    assert_true(done > 0 && done < atoll(WORKER_ITERATIONS));
    run_worker_to_end(dir, shm);
    char p[4200], want[64];
    path_in(p, sizeof p, dir, "stderr.txt");
    char *log = slurp(p, NULL);
    assert_non_null(log);
    snprintf(want, sizeof want, "resuming at iteration %lld of", done);
    assert_non_null(strstr(log, want));  /* it did restart from the checkpoint */
    free(log);
}

static void test_worker_end_to_end(void **state)
{
    (void)state;
    const char *build = getenv("LOCUS_BUILD_DIR");
    if (!build) {
        print_message("LOCUS_BUILD_DIR not set: worker test skipped\n");
        skip();
    }
    snprintf(worker_path, sizeof worker_path, "%s/examples/worker", build);
    if (access(worker_path, X_OK) != 0) {
        print_message("%s missing: worker test skipped\n", worker_path);
        skip();
    }
    char proj[4096], p[4200];
    make_dir(proj, sizeof proj, "proj");
    char input[10000];
    for (size_t i = 0; i < sizeof input; i++)
        input[i] = (char)('a' + (i * 7919) % 26);
    path_in(p, sizeof p, proj, "wu_in");
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(input, 1, sizeof input, f), sizeof input);
    fclose(f);

    char a[4096], b[4096], q[4096], plain[4096];
    char *shm_a = make_worker_slot(a, sizeof a, "slot_a", "out_a");
    char *shm_b = make_worker_slot(b, sizeof b, "slot_b", "out_b");
    char *shm_q = make_worker_slot(q, sizeof q, "slot_q", "out_q");

    run_worker_to_end(a, shm_a);
    char *out_a = read_proj_file("out_a");
    assert_non_null(out_a);
    assert_non_null(strstr(out_a, "input_size 10000\nseed 7\niterations " WORKER_ITERATIONS "\n"));
    assert_false(exists_in(a, "out.tmp"));

    interrupt_and_restart(b, shm_b, 0);
    char *out_b = read_proj_file("out_b");
    assert_non_null(out_b);
    assert_string_equal(out_b, out_a);

    interrupt_and_restart(q, shm_q, 1);
    char *out_q = read_proj_file("out_q");
    assert_non_null(out_q);
    assert_string_equal(out_q, out_a);

    /* standalone: plain names, no slot, same bytes */
    make_dir(plain, sizeof plain, "plain");
    path_in(p, sizeof p, plain, "in");
    f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(input, 1, sizeof input, f), sizeof input);
    fclose(f);
    run_worker_to_end(plain, NULL);
    path_in(p, sizeof p, plain, "out");
    char *out_plain = slurp(p, NULL);
    assert_non_null(out_plain);
    assert_string_equal(out_plain, out_a);

    /* a CPU slot names no GPU */
    char *log = slot_stderr(a);
    assert_null(strstr(log, "gpu device"));
    free(log);

    /* a GPU slot: the device on stderr, the same output; --device from the
     * command line wins over init_data.xml, a slot without a type says so */
    char g[4096], g2[4096];
    char *shm_g = make_worker_slot_xml(g, sizeof g, "slot_g", "out_g", gpu_init_data);
    run_worker_to_end(g, shm_g);
    log = slot_stderr(g);
    assert_non_null(strstr(log, "worker: gpu device 1 (NVIDIA)\n"));
    free(log);
    char *out_g = read_proj_file("out_g");
    assert_non_null(out_g);
    assert_string_equal(out_g, out_a);
    free(out_g);
    char *shm_g2 = make_worker_slot(g2, sizeof g2, "slot_g2", "out_g2");
    struct worker_run dev = {.device = "2"};
    run_worker_as(g2, shm_g2, &dev);
    log = slot_stderr(g2);
    assert_non_null(strstr(log, "worker: gpu device 2 (unknown)\n"));
    free(log);
    out_g = read_proj_file("out_g2");
    assert_non_null(out_g);
    assert_string_equal(out_g, out_a);
    free(out_g);
    munmap(shm_g, 8 * CH_SIZE);
    munmap(shm_g2, 8 * CH_SIZE);

    /* --fail-code: that exit code, no output, no finish file */
    char failing[4096];
    char *shm_f = make_worker_slot(failing, sizeof failing, "slot_f", "out_f");
    struct worker_run fail = {.fail_code = "5"};
    struct child c = fork_in(failing, exec_worker, &fail);
    child_wait(&c, shm_f);
    assert_exit_code(&c, 5);
    assert_false(exists_in(failing, "boinc_finish_called"));
    assert_null(read_proj_file("out_f"));

    free(out_a);
    free(out_b);
    free(out_q);
    free(out_plain);
    munmap(shm_a, 8 * CH_SIZE);
    munmap(shm_b, 8 * CH_SIZE);
    munmap(shm_q, 8 * CH_SIZE);
    munmap(shm_f, 8 * CH_SIZE);
}

int main(void)
{
    if (!getcwd(origin, sizeof origin))
        return 1;
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_parse_init_data),
        T(test_parse_init_data_tolerant),
        T(test_parse_init_data_gpu),
        T(test_gpu_device),
        T(test_numbers),
        T(test_resolve_filename),
        T(test_status_channel),
        T(test_checkpoint_timing),
        T(test_quit_checkpoints_then_exits),
        T(test_quit_uncooperative_app),
        T(test_abort),
        T(test_suspend_resume),
        T(test_finish),
        T(test_temporary_exit),
        T(test_worker_end_to_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
