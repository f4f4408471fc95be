/* test_agent_coproc.c - the agent's coprocessors (client/agent/coproc.h):
 * the <coprocs> it writes are read back by locusd's own request parser and
 * match, line for line, what the real BOINC 7.20.5 client sent
 * (tests/fixtures/boinc/); cc_config.xml declarations, good and bad; NVIDIA
 * detection against tests/gpu/fake_libcuda.c, built as BUILD/tests/gpu/
 * libcuda.so.1 and opened by its path (FAKE_LIBCUDA). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "client/agent/coproc.h"
#include "core/fsutil.h"
#include "proto/sched_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

static char dir[64], cfg[128];

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/test_agent_coproc.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(cfg, sizeof cfg, "%s/cc_config.xml", dir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    unlink(cfg);
    rmdir(dir);
    return 0;
}

static void write_cfg(const char *text)
{
    assert_int_equal(write_file_atomic(cfg, text, strlen(text)), 0);
}

/* The H100 of tests/fixtures/boinc/sched_request_cuda_h100.xml. */
static struct acoproc h100(void)
{
    struct acoproc c = {.type = COPROC_TYPE_NVIDIA, .count = 1, .name = "NVIDIA H100 80GB HBM3",
                        .available_ram = 85017493504.0, .total_ram = 85017493504.0,
                        .compute_units = 132, .clock_khz = 1980000, .cc_major = 9,
                        .cc_minor = 0, .drv_version = 58099, .cuda_version = 13000};
    c.peak_flops = coproc_nvidia_peak_flops(9, 0, 132, 1980000);
    return c;
}

static struct acoproc radeon(void)
{
    return (struct acoproc){.type = COPROC_TYPE_ATI, .count = 2, .device_nums = {0, 1},
                            .name = "AMD Radeon RX 7900 XTX <gfx1100>", .available_ram = 24 * GIB,
                            .total_ram = 24 * GIB, .compute_units = 48, .clock_khz = 2482000,
                            .peak_flops = 48.0 * 64 * 2 * 2482e6,
                            .cl_vendor = "Advanced Micro Devices, Inc.",
                            .cl_device_version = "OpenCL 2.0 AMD-APP (3614.0)",
                            .cl_driver_version = "3614.0 (HSA1.1,LC)"};
}

static struct acoproc declared(const char *type, int count, double peak)
{
    struct acoproc c = {.declared = 1, .count = count, .peak_flops = peak};
    snprintf(c.type, sizeof c.type, "%s", type);
    return c;
}

/* What coprocs_write writes, inside a request, parsed by locusd. */
static void parse_written(const struct acoprocs *c, const double *secs, const double *inst,
                          const double *delay, struct sched_request *req)
{
    struct strbuf sb;
    char err[256] = "";
    sb_init(&sb);
    sb_puts(&sb, "<scheduler_request>\n<platform_name>x86_64-pc-linux-gnu</platform_name>\n");
    coprocs_write(c, secs, inst, delay, &sb);
    sb_puts(&sb, "</scheduler_request>\n");
    int rc = sched_request_parse(sb.s, sb.len, req, err, sizeof err);
    if (rc != 0)
        fail_msg("%s\n%s", err, sb.s);
    sb_free(&sb);
}

static void test_server_reads_what_is_written(void **st)
{
    (void)st;
    struct acoprocs c = {.n = 3, .c = {h100(), radeon(), declared("locus_accel", 2, 1e11)}};
    const double secs[] = {51840, 7200, 1}, inst[] = {1, 2, 0}, delay[] = {0, 30, 5};
    struct sched_request req;
    parse_written(&c, secs, inst, delay, &req);
    assert_int_equal(req.ncoprocs, 3);
    for (int i = 0; i < 3; i++) {
        const struct sr_coproc *p = &req.coprocs[i];
        assert_string_equal(p->type, c.c[i].type);
        assert_int_equal(p->count, c.c[i].count);
        assert_true(p->peak_flops == c.c[i].peak_flops);
        assert_true(p->req_secs == secs[i]);
        assert_true(p->req_instances == inst[i]);
        assert_true(p->estimated_delay == delay[i]);
        assert_true(p->available_ram == c.c[i].available_ram);
    }
    const struct sr_coproc *nv = &req.coprocs[0];
    assert_true(nv->total_global_mem == 85017493504.0);
    assert_int_equal(nv->drv_version, 58099);
    assert_int_equal(nv->cuda_version, 13000);
    assert_int_equal(nv->major, 9);
    assert_int_equal(nv->minor, 0);
    sched_request_free(&req);
}

static void test_no_request_arrays_mean_zeros(void **st)
{
    (void)st;
    struct acoprocs c = {.n = 1, .c = {h100()}};
    struct sched_request req;
    parse_written(&c, NULL, NULL, NULL, &req);
    assert_int_equal(req.ncoprocs, 1);
    assert_true(req.coprocs[0].req_secs == 0 && req.coprocs[0].req_instances == 0 &&
                req.coprocs[0].estimated_delay == 0);
    sched_request_free(&req);
}

static void test_names_are_escaped(void **st)
{
    (void)st;
    struct acoprocs c = {.n = 1, .c = {radeon()}};
    struct strbuf sb;
    sb_init(&sb);
    coprocs_write(&c, NULL, NULL, NULL, &sb);
    assert_non_null(strstr(sb.s, "<name>AMD Radeon RX 7900 XTX &lt;gfx1100&gt;</name>"));
    assert_non_null(strstr(sb.s, "<opencl_driver_version>3614.0 (HSA1.1,LC)</opencl_driver_version>"));
    sb_free(&sb);
}

/* The text of a fixture from tests/fixtures/boinc/ (free it). */
static char *fixture(const char *name)
{
    const char *src = getenv("LOCUS_SOURCE_DIR");
    char path[1024];
    size_t len;
    snprintf(path, sizeof path, "%s/tests/fixtures/boinc/%s", src ? src : ".", name);
    char *t = read_file(path, 1 << 20, &len);
    if (!t)
        fail_msg("cannot read %s", path);
    return t;
}

/* Whether every line of part is a line of whole, in the same order. */
static int lines_within(const char *part, const char *whole)
{
    const char *w = whole;
    for (const char *p = part; *p;) {
        size_t n = strcspn(p, "\n");
        char line[512];
        snprintf(line, sizeof line, "\n%.*s\n", (int)n, p);
        w = strstr(w, line);
        if (!w)
            return 0;
        w += strlen(line) - 1;
        p += n + (p[n] == '\n');
    }
    return 1;
}

/* The H100's <coproc_cuda> is the real client's, less the device limits. */
static void test_cuda_as_boinc_7_20_wrote_it(void **st)
{
    (void)st;
    struct acoprocs c = {.n = 1, .c = {h100()}};
    const double secs[] = {51840}, inst[] = {1};
    struct strbuf sb;
    char *fix = fixture("sched_request_cuda_h100.xml");
    assert_true(c.c[0].peak_flops == 33454080000000.0);
    sb_init(&sb);
    coprocs_write(&c, secs, inst, NULL, &sb);
    if (!lines_within(sb.s, fix))
        fail_msg("not in the fixture, in its order:\n%s", sb.s);
    sb_free(&sb);
    free(fix);
}

/* The declared <coproc> is the real client's, byte for byte. */
static void test_declared_as_boinc_7_20_wrote_it(void **st)
{
    (void)st;
    struct acoprocs c = {.n = 1, .c = {declared("locus_accel", 2, 5e12)}};
    const double secs[] = {1};
    struct strbuf sb;
    char *fix = fixture("sched_request_declared_coproc.xml");
    sb_init(&sb);
    coprocs_write(&c, secs, NULL, NULL, &sb);
    assert_non_null(strstr(fix, sb.s));
    sb_free(&sb);
    free(fix);
}

static void test_peak_flops_by_compute_capability(void **st)
{
    (void)st;
    /* cores per multiprocessor x 2, for 1 multiprocessor at 1 GHz */
    const struct { int major, minor; double flops; } cases[] = {
        {1, 3, 24e9}, {2, 0, 64e9}, {2, 1, 96e9}, {3, 5, 384e9}, {4, 0, 0}, {5, 2, 256e9},
        {6, 0, 128e9}, {6, 1, 256e9}, {7, 5, 128e9}, {8, 0, 128e9}, {8, 6, 256e9},
        {9, 0, 128e9}, {12, 0, 128e9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (coproc_nvidia_peak_flops(cases[i].major, cases[i].minor, 1, 1000000) != cases[i].flops)
            fail_msg("compute capability %d.%d", cases[i].major, cases[i].minor);
}

/* ---- cc_config.xml ---- */

static void test_config_two_coprocs(void **st)
{
    (void)st;
    struct acoprocs c;
    char err[256] = "";
    write_cfg("<cc_config>\n<log_flags><task/></log_flags>\n<options>\n"
              "  <ncpus>2</ncpus>\n"
              "  <coproc><type>locus_accel</type><count>2</count><peak_flops>1e11</peak_flops>"
              "<device_nums>3 1</device_nums></coproc>\n"
              "  <coproc><type>fpga</type><count>1</count></coproc>\n"
              "</options>\n</cc_config>\n");
    assert_int_equal(coproc_read_config(cfg, &c, err, sizeof err), 0);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.c[0].type, "locus_accel");
    assert_int_equal(c.c[0].declared, 1);
    assert_int_equal(c.c[0].count, 2);
    assert_true(c.c[0].peak_flops == 1e11);
    assert_int_equal(c.c[0].device_nums[0], 3);
    assert_int_equal(c.c[0].device_nums[1], 1);
    assert_string_equal(c.c[1].type, "fpga");
    assert_int_equal(c.c[1].count, 1);
    assert_true(c.c[1].peak_flops == 0);
    assert_int_equal(c.c[1].device_nums[0], 0);
    assert_string_equal(c.notes, "");
}

static void test_config_missing_or_without_coprocs(void **st)
{
    (void)st;
    struct acoprocs c;
    char err[256] = "";
    memset(&c, 0x55, sizeof c);
    assert_int_equal(coproc_read_config(cfg, &c, err, sizeof err), 0);
    assert_int_equal(c.n, 0);
    write_cfg("<cc_config><options><ncpus>1</ncpus></options></cc_config>");
    assert_int_equal(coproc_read_config(cfg, &c, err, sizeof err), 0);
    assert_int_equal(c.n, 0);
}

/* Each bad file: -1, the reason naming the fault, and nothing kept. */
static void test_config_errors(void **st)
{
    (void)st;
    const struct { const char *coprocs, *reason; } cases[] = {
        {"<coproc><type>a</type><count>1</count>", "line"},     /* not closed: malformed */
        {"<coproc><count>1</count></coproc>", "no <type>"},
        {"<coproc><type></type><count>1</count></coproc>", "no <type>"},
        {"<coproc><type>a</type></coproc>", "(missing)"},
        {"<coproc><type>a</type><count>0</count></coproc>", "\"0\" is not a number in 1..64"},
        {"<coproc><type>a</type><count>65</count></coproc>", "\"65\""},
        {"<coproc><type>a</type><count>two</count></coproc>", "\"two\""},
        {"<coproc><type>a</type><count>1</count><peak_flops>fast</peak_flops></coproc>",
         "<peak_flops> \"fast\""},
        {"<coproc><type>a</type><count>1</count><peak_flops>-1</peak_flops></coproc>",
         "<peak_flops> \"-1\""},
        {"<coproc><type>a</type><count>2</count><device_nums>0 x</device_nums></coproc>",
         "\"x\" is not a list"},
        {"<coproc><type>a</type><count>2</count><device_nums>0</device_nums></coproc>",
         "lists 1 device, <count> is 2"},
        {"<coproc><type>a</type><count>1</count><device_nums>0 1</device_nums></coproc>",
         "more than <count> 1"},
        {"<coproc><type>a</type><count>2</count><device_nums>1 1</device_nums></coproc>",
         "device 1 twice"},
        {"<coproc><type>a</type><count>2</count><device_nums>0 -1</device_nums></coproc>",
         "\"-1\" is not a list"},
        {"<coproc><type>a</type><count>1</count></coproc>"
         "<coproc><type>a</type><count>1</count></coproc>", "<coproc> #2: type a declared twice"},
        {"<coproc><type>0123456789012345678901234567890123</type><count>1</count></coproc>",
         "longer than 31 bytes"},
        {"<coproc><type>a</type><count>1</count></coproc><coproc><type>b</type><count>1</count></coproc>"
         "<coproc><type>c</type><count>1</count></coproc><coproc><type>d</type><count>1</count></coproc>"
         "<coproc><type>e</type><count>1</count></coproc>", "more than 4 <coproc>"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024], err[256] = "";
        struct acoprocs c;
        snprintf(text, sizeof text, "<cc_config><options>%s</options></cc_config>", cases[i].coprocs);
        write_cfg(text);
        memset(&c, 0x55, sizeof c);
        if (coproc_read_config(cfg, &c, err, sizeof err) != -1 || !strstr(err, cases[i].reason))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, cases[i].reason);
        assert_non_null(strstr(err, cfg));
        struct acoprocs empty;
        memset(&empty, 0, sizeof empty);
        assert_memory_equal(&c, &empty, sizeof c);
    }
}

static void test_config_wrong_root(void **st)
{
    (void)st;
    struct acoprocs c;
    char err[256] = "";
    write_cfg("<config><options/></config>");
    assert_int_equal(coproc_read_config(cfg, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "not <cc_config>"));
}

/* The probe: declarations first, a note per vendor; a bad file stops it. */
static void test_probe(void **st)
{
    (void)st;
    struct acoprocs c;
    char err[256] = "";
    write_cfg("<cc_config><options><coproc><type>locus_accel</type><count>1</count>"
              "</coproc></options></cc_config>");
    assert_int_equal(coproc_probe(dir, &c, err, sizeof err), 0);
    assert_true(c.n >= 1);
    assert_string_equal(c.c[0].type, "locus_accel");
    assert_true(!strncmp(c.notes, "NVIDIA: ", 8));
    assert_non_null(strstr(c.notes, "\nATI: "));
    assert_int_equal(c.notes[strlen(c.notes) - 1], '\n');
    write_cfg("<cc_config><options><coproc><count>1</count></coproc></options></cc_config>");
    assert_int_equal(coproc_probe(dir, &c, err, sizeof err), -1);
    assert_int_equal(c.n, 0);
    assert_non_null(strstr(err, "no <type>"));
}

/* ---- NVIDIA detection against the fake driver ---- */

static void test_fake_driver_two_gpus(void **st)
{
    (void)st;
    struct acoproc c;
    char note[512] = "";
    setenv("FAKE_CUDA_DEVICES", "2", 1);
    assert_int_equal(coproc_detect_nvidia(FAKE_LIBCUDA, FAKE_LIBCUDA, &c, note, sizeof note), 1);
    assert_string_equal(c.type, "NVIDIA");
    assert_int_equal(c.declared, 0);
    assert_int_equal(c.count, 2);
    assert_int_equal(c.device_nums[0], 0);
    assert_int_equal(c.device_nums[1], 1);
    assert_string_equal(c.name, "Fake CUDA GPU (CPU emulation)");
    assert_int_equal(c.cc_major, 9);
    assert_int_equal(c.cc_minor, 0);
    assert_int_equal(c.compute_units, 4);
    assert_int_equal(c.clock_khz, 1500000);
    assert_true(c.total_ram == 4 * GIB && c.available_ram == 4 * GIB);
    /* 4 multiprocessors x 64 cores (cc 9.0, as BOINC 7.20) x 2 x 1.5 GHz */
    assert_true(c.peak_flops == 768e9);
    assert_int_equal(c.cuda_version, 13000);
    assert_int_equal(c.drv_version, 58099);   /* 580.159.03 */
    assert_string_equal(note, "NVIDIA: 2 x Fake CUDA GPU (CPU emulation) (devices 0 1), 4096 MiB, "
                              "768 GFLOPS peak, compute capability 9.0, CUDA 13000, driver 58099");
}

static void test_fake_driver_without_nvml(void **st)
{
    (void)st;
    struct acoproc c;
    char note[512] = "";
    setenv("FAKE_CUDA_DEVICES", "1", 1);
    assert_int_equal(coproc_detect_nvidia(FAKE_LIBCUDA, "/nonexistent/libnvidia-ml.so.1", &c, note,
                                          sizeof note), 1);
    assert_int_equal(c.count, 1);
    assert_int_equal(c.drv_version, 0);
    assert_non_null(strstr(note, "driver version unknown (/nonexistent/libnvidia-ml.so.1"));
}

static void test_fake_driver_no_device(void **st)
{
    (void)st;
    struct acoproc c;
    char note[512] = "";
    setenv("FAKE_CUDA_DEVICES", "0", 1);
    memset(&c, 0x55, sizeof c);
    assert_int_equal(coproc_detect_nvidia(FAKE_LIBCUDA, FAKE_LIBCUDA, &c, note, sizeof note), 0);
    assert_int_equal(c.count, 0);
    assert_string_equal(c.type, "");
    assert_string_equal(note, "NVIDIA: driver present but cuInit failed (CUresult 100, no CUDA device)");
}

static void test_no_driver(void **st)
{
    (void)st;
    struct acoproc c;
    char note[512] = "";
    assert_int_equal(coproc_detect_nvidia("/nonexistent/libcuda.so.1", NULL, &c, note, sizeof note), 0);
    assert_int_equal(c.count, 0);
    assert_non_null(strstr(note, "NVIDIA: /nonexistent/libcuda.so.1"));
    assert_int_equal(coproc_detect_ati("/nonexistent/libOpenCL.so.1", &c, note, sizeof note), 0);
    assert_non_null(strstr(note, "ATI: /nonexistent/libOpenCL.so.1"));
}

/* A library that loads but lacks the API: the fake is no OpenCL. */
static void test_library_without_the_api(void **st)
{
    (void)st;
    struct acoproc c;
    char note[512] = "";
    assert_int_equal(coproc_detect_ati(FAKE_LIBCUDA, &c, note, sizeof note), 0);
    assert_string_equal(note, "ATI: clGetPlatformIDs() missing from the library");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_reads_what_is_written),
        cmocka_unit_test(test_no_request_arrays_mean_zeros),
        cmocka_unit_test(test_names_are_escaped),
        cmocka_unit_test(test_cuda_as_boinc_7_20_wrote_it),
        cmocka_unit_test(test_declared_as_boinc_7_20_wrote_it),
        cmocka_unit_test(test_peak_flops_by_compute_capability),
        cmocka_unit_test_setup_teardown(test_config_two_coprocs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_missing_or_without_coprocs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_wrong_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe, setup, teardown),
        cmocka_unit_test(test_fake_driver_two_gpus),
        cmocka_unit_test(test_fake_driver_without_nvml),
        cmocka_unit_test(test_fake_driver_no_device),
        cmocka_unit_test(test_no_driver),
        cmocka_unit_test(test_library_without_the_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
