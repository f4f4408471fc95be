/* fuzz_client_state.c - libFuzzer harness for the agent's state file
 * (astate_load of client_state.json, written to a private folder): any
 * input loads or is refused with a reason and an empty state; a loaded
 * state saves, and what it saves loads back and saves again as the same
 * file (a round trip the agent makes at every restart). */
#include "client/agent/astate.h"
#include "core/fsutil.h"
#include "fuzz_astate.h"
#include "fuzz_tmp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOW 1.7e9

static void check(int cond)
{
    if (!cond) __builtin_trap();
}


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024], err[1024] = "";
    struct astate st, st2;
    int rc = astate_load(fuzz_tmp_write(path, "client_state.json", data, size, 0600), &st, NOW, err, sizeof err);
    check(rc == 0 || rc == -1);
    if (rc == 0) {
        char *a = fuzz_state_text(&st, "a.json");
        check(astate_load(fuzz_tmp_path(path, "a.json"), &st2, NOW, err, sizeof err) == 0);
        char *b = fuzz_state_text(&st2, "b.json");
        check(strcmp(a, b) == 0);
        astate_free(&st2);
        free(a);
        free(b);
    } else {
        check(err[0] && st.nprojects == 0);
    }
    astate_free(&st);
    return 0;
}
