/* fuzz_status.h - what the harnesses of the cluster drivers' readers
 * (fuzz_slurm_output.c, fuzz_oar_json.c, fuzz_slurmrest_json.c) check of
 * every normalised status, and their check itself. */
#ifndef LOCUS_FUZZ_STATUS_H
#define LOCUS_FUZZ_STATUS_H
#include "drivers/driver.h"
#include <string.h>

static inline void check(int cond)
{
    if (!cond) __builtin_trap();
}

/* A normalised status holds together: a known state with an end that
 * agrees with it, a raw name that ends, times never negative, an exit
 * code within 1..255 for a failure and 0 for a success. */
static inline void check_status_common(const struct drv_status *st)
{
    check(st->state == DRV_WAITING || st->state == DRV_RUNNING || st->state == DRV_FINISHED);
    check(st->end >= DRV_END_NONE && st->end <= DRV_END_UNKNOWN);
    check((st->state == DRV_FINISHED) == (st->end != DRV_END_NONE));
    check(memchr(st->raw, '\0', sizeof st->raw) != NULL);
    check(st->start >= 0 && st->stop >= 0 && st->run_seconds >= 0);
    if (st->end == DRV_END_SUCCESS) check(st->exit_code == 0);
    if (st->end == DRV_END_EXIT) check(st->exit_code > 0 && st->exit_code <= 255);
}
#endif
