/* agent_internal.h - the daemon's working struct, shared by the files of
 * the agent driver (agent.c: loop and start-up; tasks.c: processes and the
 * scheduling pass; files.c: transfers; rpc.c: scheduler RPCs; control.c:
 * commands). Not for other layers. */
#ifndef LOCUS_AGENT_INTERNAL_H
#define LOCUS_AGENT_INTERNAL_H
#include "client/agent/agent.h"
#include "client/agent/astate.h"
#include "client/agent/hostinfo.h"

#include <jansson.h>
#include <limits.h>

struct agent {
    char dir[PATH_MAX];
    char state_path[PATH_MAX];
    struct agent_options opt;
    struct astate st;
    struct hostinfo host;
    double start_time;
    int dirty;                 /* the state changed: save it this turn */
    int need_schedule;         /* an event calls for a scheduling pass now */
    int ctl_fd;
};

/* The wall clock, in seconds since the epoch. */
double agent_now(void);
/* Marks the state for saving; with resched, also asks for a scheduling pass. */
void agent_changed(struct agent *a, int resched);
/* Saves the state now if it changed (errors logged: the loop goes on). */
void agent_save(struct agent *a);
/* Exponential backoff for the n-th consecutive failure, randomized in
 * [0.5, 1] x min(retry_max, retry_min x 2^(n-1)). */
double agent_backoff(const struct agent *a, int n);
/* DIR/projects/<p's folder>/name into out. */
void agent_file_path(const struct agent *a, const struct aproject *p, const char *name, char *out, size_t len);

/* tasks.c */
/* Reads status channels, reaps ended processes, enforces quit grace and
 * aborts; adds dt of running time to elapsed and debts' wall time. */
void tasks_poll(struct agent *a, double now, double dt);
/* The scheduling pass: rr simulation, debts, CPU scheduling, enforcement,
 * carried out on the processes. */
void tasks_schedule(struct agent *a, double now);
/* At start: each result the state says is running is recovered (its old
 * process killed) and either finished from its slot or made ready again. */
void tasks_recover(struct agent *a, double now);
/* Stops every task of p (kill) and frees its slots: before a detach. */
void tasks_kill_project(struct agent *a, struct aproject *p);
/* Fills the policy view: *cps (owned by the caller, free it) holds a copy
 * of each project's struct cproject, cs->results points into the state. */
void tasks_fill_cstate(struct agent *a, double now, struct cstate *cs, struct cproject **cps);
/* Copies the projects' policy fields back from the view and frees it. */
void tasks_release_cstate(struct agent *a, struct cstate *cs, struct cproject *cps);

/* files.c */
/* Downloads needed files, uploads outputs, moves results between the
 * downloading, ready, uploading and to-report phases. */
void files_transfer(struct agent *a, double now);
/* Deletes files of p no longer referenced and not sticky, and workunits no
 * result needs, from disk and state. */
void files_collect(struct agent *a, struct aproject *p);
/* Checks a complete download of f at path: its size; then, for a file
 * that must be signed (aproject_file_signed), p's code-signing key and f's
 * signature, its md5 never standing in for them (as BOINC: the signature
 * vouches for app files); for any other file, its md5. An executable file
 * accepted is made its owner's alone (mode 0700). 0 accepted, or -1 with
 * the reason in why (also when path cannot be read). */
int files_verify(const struct aproject *p, const struct afile *f, const char *path, char *why, size_t len);

/* rpc.c */
/* Does at most one scheduler RPC (or master page fetch), to the project
 * that needs it most: reports due, the server's next_rpc_delay, or work. */
void rpc_maybe(struct agent *a, double now);
/* The first contact of p (owned by a's state, just added by an attach),
 * at once: its master page for the scheduler URL, then a scheduler RPC
 * (asking for work if the policy would) that must give p a host id; its
 * reply is merged as any other. Blocks the loop as every RPC does, within
 * xfer's timeouts. 0, or -1 with one line in err: the master page cannot
 * be read (the URL and the network, HTTP or TLS error), names no scheduler
 * (not a project), the scheduler request fails, or the project refuses
 * (its message: a bad account key). On failure the copies of p's request
 * and reply are removed, and p is the caller's to remove. */
int rpc_attach(struct agent *a, struct aproject *p, double now, char *err, size_t errlen);

/* control.c */
/* Handles one control request (borrowed), returns a new reply object. */
json_t *control_handle(void *agent, json_t *req);
#endif
