/* fuzz_cc_config.c - libFuzzer harness for the two files a volunteer
 * writes for the agent, given the same bytes: cc_config.xml
 * (coproc_read_config) and a project's app_info.xml (app_info_load, in a
 * private folder that also holds an executable "myworker" and a plain
 * "input.dat" for it to name). A refused cc_config.xml leaves no
 * coprocessor; an accepted one holds at most COPROC_MAX distinct types,
 * each with a count and device numbers in range, and the <coprocs> the
 * agent writes of it parses as XML with the same types. A refused
 * app_info.xml leaves the project as it was; an accepted one makes it
 * anonymous with 1..APP_INFO_MAX_VERSIONS versions whose every file_ref
 * names a file marked present. */
#include "client/agent/app_info.h"
#include "client/agent/coproc.h"
#include "core/xmltree.h"
#include "fuzz_tmp.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

static void check_coprocs(const struct acoprocs *c)
{
    check(c->n >= 0 && c->n <= COPROC_MAX);
    for (int i = 0; i < c->n; i++) {
        const struct acoproc *x = &c->c[i];
        check(x->type[0] && x->declared && x->count >= 1 && x->count <= COPROC_MAX_INSTANCES);
        check(isfinite(x->peak_flops) && x->peak_flops >= 0);
        for (int j = 0; j < i; j++) check(strcmp(c->c[j].type, x->type) != 0);
        for (int d = 0; d < x->count; d++) {
            check(x->device_nums[d] >= 0);
            for (int e = 0; e < d; e++) check(x->device_nums[e] != x->device_nums[d]);
        }
    }
    struct strbuf sb;
    char err[256];
    sb_init(&sb);
    coprocs_write(c, NULL, NULL, NULL, &sb);
    struct xml_node *root = xml_parse(sb.s, sb.len, err, sizeof err);
    check(root != NULL);
    const struct xml_node *x = xml_child(root, "coproc");
    for (int i = 0; i < c->n; i++, x = xml_next_named(x))
        check(x && xml_child_text(x, "type") && !strcmp(xml_child_text(x, "type"), c->c[i].type));
    check(x == NULL);
    xml_free(root);
    sb_free(&sb);
}

static void check_app_info(const struct aproject *p)
{
    check(p->anonymous && p->nversions >= 1 && p->nversions <= APP_INFO_MAX_VERSIONS);
    for (int i = 0; i < p->nversions; i++)
        for (int k = 0; k < p->versions[i].nrefs; k++) {
            const struct afile *f = aproject_file(p, p->versions[i].refs[k].file_name);
            check(f && f->status == AF_PRESENT);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t program[] = "#!/bin/sh\n";
    char path[1024], err[1024] = "";
    struct acoprocs c;
    if (!fuzz_dir[0]) {
        fuzz_tmp_write(path, "myworker", program, sizeof program - 1, 0700);
        fuzz_tmp_write(path, "input.dat", program, sizeof program - 1, 0600);
    }
    if (coproc_read_config(fuzz_tmp_write(path, "cc_config.xml", data, size, 0600), &c, err, sizeof err) == 0)
        check_coprocs(&c);
    else
        check(err[0] && c.n == 0);

    struct astate st;
    astate_init(&st, 1.7e9);
    struct aproject *p = astate_add_project(&st, "http://127.0.0.1:8080/proj/", "key", 100);
    fuzz_tmp_write(path, APP_INFO_FILE, data, size, 0600);
    err[0] = 0;
    int rc = app_info_load(p, fuzz_tmp_dir(), err, sizeof err);
    if (rc == 1)
        check_app_info(p);
    else
        check(rc == -1 && err[0] && !p->anonymous && p->nversions == 0 && p->nfiles == 0);
    astate_free(&st);
    return 0;
}
