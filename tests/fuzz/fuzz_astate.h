/* fuzz_astate.h - the agent's state as a harness checks it: saved as name
 * in the harness's private folder (fuzz_tmp.h) and read back as text, so
 * that two states can be compared byte for byte. Traps when either step
 * fails. */
#ifndef LOCUS_FUZZ_ASTATE_H
#define LOCUS_FUZZ_ASTATE_H
#include "client/agent/astate.h"
#include "core/fsutil.h"
#include "fuzz_tmp.h"

/* The text of st saved as name (owned by the caller). */
static inline char *fuzz_state_text(const struct astate *st, const char *name)
{
    char path[1024], err[512];
    size_t len;
    if (astate_save(fuzz_tmp_path(path, name), st, err, sizeof err) != 0) __builtin_trap();
    char *text = read_file(path, (size_t)1 << 30, &len);
    if (!text) __builtin_trap();
    return text;
}
#endif
