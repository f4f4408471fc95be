/* fuzz_sched_request.c - libFuzzer harness for the scheduler request
 * parser: any input must parse or fail cleanly (no crash, no leak, no
 * undefined behaviour), and a parsed request must respect its limits. */
#include "proto/sched_request.h"

#include <stdint.h>
#include <string.h>

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sched_request req;
    char err[256];
    err[0] = 0;
    if (sched_request_parse((const char *)data, size, &req, err, sizeof err) == 0) {
        check(req.nresults >= 0 && req.nresults <= SR_MAX_REPORTED);
        check(req.nsticky >= 0 && req.nsticky <= SR_MAX_STICKY);
        check(req.nother >= 0 && req.nother <= SR_MAX_OTHER);
        check(req.napp_versions >= 0 && req.napp_versions <= SR_MAX_APP_VERSIONS);
        check(req.nalt_platforms >= 0 && req.nalt_platforms <= SR_MAX_ALT_PLATFORMS);
        check(strlen(req.authenticator) < sizeof req.authenticator);
        for (int i = 0; i < req.nresults; i++) {
            const struct sr_result *r = &req.results[i];
            check(r->name[0] != 0);
            check(r->nfiles >= 0 && r->nfiles <= SR_MAX_RESULT_FILES);
            check(!r->stderr_out || strlen(r->stderr_out) <= SR_STDERR_MAX);
            for (int j = 0; j < r->nfiles; j++) check(r->files[j].name[0] != 0);
        }
        for (int i = 0; i < req.nsticky; i++) check(req.sticky[i].name[0] != 0);
        for (int i = 0; i < req.nother; i++) check(req.other_results[i][0] != 0);
        sched_request_free(&req);
    } else {
        check(err[0] != 0 && strchr(err, '\n') == NULL);
        check(req.results == NULL && req.sticky == NULL && req.other_results == NULL &&
              req.app_versions == NULL && req.nresults == 0);
    }
    return 0;
}
