/* jobscript.h - the bash wrapper every cluster driver submits in place of
 * a campaign's exec_file. It picks its job among an array's by index, sets
 * the job environment (LOCUS_* and CiGri's CIGRI_* aliases), enters the
 * working directory or fails explicitly (Slurm would run the job in /tmp),
 * writes the node file, runs "<exec_file> <param>" (or the prologue or
 * epilogue lines) in the background and forwards the checkpointing signal
 * and SIGTERM to it, and exits with its status. The scheduler-specific
 * parts come from the driver, so this file knows no scheduler. */
#ifndef LOCUS_JOBSCRIPT_H
#define LOCUS_JOBSCRIPT_H
#include "core/strbuf.h"
#include "grid/driver.h"

/* Exit status of a wrapper that cannot enter its working directory or
 * finds no job at its index. */
#define JOBSCRIPT_SETUP_FAILED 125

struct jobscript_sched {
    const char *index;           /* shell expression of the array index, from 0 ("0" outside arrays) */
    const char *nodefile;        /* shell lines writing one line per allocated core to "$LOCUS_NODEFILE" */
};

/* Appends to out the wrapper of jobs[0..n-1] (borrowed), element i running
 * when sched's index is i. The macros {HOME}, a leading ~ and
 * {CAMPAIGN_ID} of exec_file and exec_directory are expanded on the node.
 * -1 with the reason in err for a job the wrapper cannot express (an env
 * entry that is not NAME=VALUE). */
int jobscript_write(struct strbuf *out, const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                    const struct jobscript_sched *sched, char *err, size_t errlen);

/* Appends s to out as one single-quoted shell word. */
void sh_quote(struct strbuf *out, const char *s);
#endif
