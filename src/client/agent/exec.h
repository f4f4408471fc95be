/* exec.h - running tasks: a slot folder per task (DIR/slots/N) with
 * init_data.xml, the 8 KB boinc_mmap_file channels, and the task's files
 * under their open names as <soft_link> files (or copies); the app started
 * as a child process; its status channel read back (fraction done, CPU and
 * checkpoint CPU time); control messages (<suspend/>, <resume/>, <quit/>,
 * <abort/>) with SIGSTOP/SIGCONT; the exit classified with the finish files
 * liblocus-app writes. Paths are relative to the data folder dir. */
#ifndef LOCUS_AGENT_EXEC_H
#define LOCUS_AGENT_EXEC_H
#include "client/agent/astate.h"
#include <stddef.h>

#define EXEC_QUIT_GRACE 15.0    /* seconds an app has to obey <quit/> */

/* Starts r (project p, state st, all borrowed) in its slot, creating the
 * slot first if r has none. Sets r->slot, r->pid, r->c.run_started = now.
 * A coprocessor job's app is told its device (r->device_num) as BOINC's
 * client tells it: "--device N" after its command line, and gpu_type and
 * gpu_device_num in init_data.xml. 0, or -1 with err (the task cannot run: a missing file, fork failure). */
int exec_start(const char *dir, const struct astate *st, const struct aproject *p, struct aresult *r,
               double now, char *err, size_t errlen);

/* Reads r's status channel if it holds a message: fraction done, CPU time,
 * and a checkpoint when the checkpoint CPU time moved (then checkpoint
 * fields set from now and r->c.elapsed). Returns 1 on a checkpoint. */
int exec_poll_status(const char *dir, struct aresult *r, double now);

/* Keeps r in memory but stopped (<suspend/> then SIGSTOP), or resumes it. */
void exec_suspend(const char *dir, struct aresult *r);
void exec_resume(const char *dir, struct aresult *r);
/* Asks r to checkpoint and exit (<quit/>); exec_reap sees it go. */
void exec_quit(const char *dir, struct aresult *r);
/* SIGKILL to r's process (after SIGCONT: a stopped process must die too). */
void exec_kill(struct aresult *r);

enum exec_end {
    EE_RUNNING,       /* not exited */
    EE_SUCCESS,       /* exit 0 with boinc_finish_called "0" */
    EE_FAILED,        /* exit status or finish status non-zero: *code has it */
    EE_STOPPED,       /* exited without finishing (quit, temporary exit, killed): restart later */
};

/* Reaps r's process if it exited (non-blocking). On an end, r->pid is 0,
 * the last status is read (as of now), and *code holds the exit code or
 * signal. */
enum exec_end exec_reap(const char *dir, struct aresult *r, double now, int *code);

/* At agent start: a pid recorded for r may be an app of the previous
 * agent still running in r's slot (not our child, so never reaped): kill
 * it. Then classifies the slot: EE_SUCCESS or EE_FAILED (with *code) if a
 * finish file is there, else EE_STOPPED. */
enum exec_end exec_recover(const char *dir, struct aresult *r, int *code);

/* Collects what r's slot holds for the report: the tail of stderr.txt in
 * r->stderr_txt, and outputs given as copies moved back to the project
 * folder. Harmless to repeat. */
void exec_collect(const char *dir, const struct aproject *p, struct aresult *r);
/* Removes r's slot folder and sets r->slot to -1. */
void exec_free_slot(const char *dir, struct aresult *r);

/* Removes a folder and everything under it (a slot, a detached project's
 * folder); errors ignored: what cannot be removed stays. */
void exec_remove_tree(const char *path);
#endif
