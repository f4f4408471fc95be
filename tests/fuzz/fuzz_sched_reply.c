/* fuzz_sched_reply.c - libFuzzer harness for the host agent's reading of a
 * scheduler reply (schedmsg_apply_reply on a fresh state with one project),
 * the bytes a hostile or broken server sends, and of a master page
 * (schedmsg_master_scheduler) on the same bytes. A refused reply leaves the
 * project empty, with one line saying why. An accepted one leaves only safe
 * names and references that resolve (each file_ref a file of the project,
 * each result a workunit); applied again it adds nothing (a "resent lost"
 * reply); and the state it made survives a restart: saved, loaded and saved
 * again it is the same file. A scheduler URL found in a master page is an
 * http(s) URL. */
#include "client/agent/schedmsg.h"
#include "core/fsutil.h"
#include "fuzz_astate.h"
#include "fuzz_tmp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define URL "http://127.0.0.1:8080/proj/"
#define NOW 1.7e9

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

static void check_refs(const struct aproject *p, const struct afile_ref *refs, int n)
{
    check(n >= 0 && n <= AS_MAX_REFS);
    for (int i = 0; i < n; i++) {
        check(aproject_file(p, refs[i].file_name) != NULL);
        check(!refs[i].open_name[0] || name_is_safe(refs[i].open_name));
    }
}

static void check_project(const struct aproject *p)
{
    for (int i = 0; i < p->nfiles; i++) {
        check(name_is_safe(p->files[i].name));
        check(p->files[i].nurls >= 0 && p->files[i].nurls <= AS_MAX_URLS);
    }
    for (int i = 0; i < p->nversions; i++) {
        check(name_is_safe(p->versions[i].app_name));
        check_refs(p, p->versions[i].refs, p->versions[i].nrefs);
    }
    for (int i = 0; i < p->nwus; i++) {
        check(name_is_safe(p->wus[i].name) && name_is_safe(p->wus[i].app_name));
        check_refs(p, p->wus[i].refs, p->wus[i].nrefs);
    }
    for (int i = 0; i < p->nresults; i++) {
        check(name_is_safe(p->results[i]->c.name) && aproject_wu(p, p->results[i]->wu_name));
        check_refs(p, p->results[i]->refs, p->results[i]->nrefs);
    }
}


static void check_restart(const struct astate *st)
{
    char path[1024], err[512];
    struct astate st2;
    char *a = fuzz_state_text(st, "a.json");
    check(astate_load(fuzz_tmp_path(path, "a.json"), &st2, NOW, err, sizeof err) == 0);
    char *b = fuzz_state_text(&st2, "b.json");
    check(strcmp(a, b) == 0);
    astate_free(&st2);
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    struct astate st;
    struct reply_effects fx, fx2;
    char err[512] = "";
    astate_init(&st, NOW);
    struct aproject *p = astate_add_project(&st, URL, "key", 100);
    if (schedmsg_apply_reply(&st, p, buf, size, NOW, &fx, err, sizeof err) == 0) {
        check(fx.nnew == p->nresults && fx.nacked == 0 && strlen(fx.message) < sizeof fx.message);
        check_project(p);
        int nfiles = p->nfiles, nversions = p->nversions, nwus = p->nwus, nresults = p->nresults;
        check(schedmsg_apply_reply(&st, p, buf, size, NOW, &fx2, err, sizeof err) == 0);
        check(fx2.nnew == 0 && p->nfiles == nfiles && p->nversions == nversions && p->nwus == nwus &&
              p->nresults == nresults);
        check_restart(&st);
    } else {
        check(err[0] && !strchr(err, '\n'));
        check(p->nfiles == 0 && p->nversions == 0 && p->nwus == 0 && p->nresults == 0 && p->hostid == 0 &&
              !p->code_sign_key && !p->c.name[0]);
    }
    astate_free(&st);

    char *page = malloc(size + 1), url[512];
    check(page != NULL);
    memcpy(page, data, size);
    page[size] = '\0';
    if (schedmsg_master_scheduler(page, url, sizeof url) == 0)
        check(!strncmp(url, "http", 4));
    free(page);
    return 0;
}
