/* locus_app.h - the runtime an application links so that ONE binary runs
 * under the real BOINC client (7.x, api_version >= 6) and under locus-client.
 *
 * It speaks the BOINC app protocol without BOINC code: it reads the slot's
 * init_data.xml, resolves <soft_link> files, reports progress and CPU time
 * through the shared-memory file boinc_mmap_file (status channel 5), obeys
 * <quit/>, <suspend/>, <resume/>, <abort/> on control channel 0, and ends the
 * job with the boinc_finish_called / boinc_temporary_exit files the client
 * looks for. It depends on libc and pthreads only.
 *
 * Typical use:
 *     locus_init();
 *     locus_resolve_filename("in", path, sizeof path);  ... read input ...
 *     while (work left) {
 *         ... compute ...
 *         locus_fraction_done(done / total);
 *         if (locus_time_to_checkpoint()) {
 *             ... save state in the current directory ...
 *             locus_checkpoint_completed();
 *         }
 *     }
 *     ... write output via locus_resolve_filename("out", ...) ...
 *     locus_finish(0);
 *
 * Without init_data.xml in the current directory the runtime is
 * "standalone": no channel is mapped, nothing is reported, file names
 * resolve to themselves (no soft-link files exist), and the finish files are
 * still written so scripts can check them.
 *
 * Threads: the runtime owns one background thread (started by locus_init when
 * boinc_mmap_file exists). The functions below may be called from any one
 * application thread; locus_resolve_filename and locus_parse_init_data are
 * reentrant and need no locus_init. */
#ifndef LOCUS_APP_H
#define LOCUS_APP_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define LOCUS_NORETURN __attribute__((noreturn))
#else
#define LOCUS_NORETURN
#endif

/* Exit code of a process ended by <abort/> (any non-zero code is a compute
 * error for the client; this one is recognisable in logs). */
#define LOCUS_EXIT_ABORTED 194

/* Checkpoint period used when init_data.xml gives none (seconds). */
#define LOCUS_DEFAULT_CHECKPOINT_PERIOD 60.0

/* The few init_data.xml values an application may need. Strings are
 * NUL-terminated and silently truncated to their buffer; an absent value is
 * "" or 0 (but gpu_device_num: -1). Only direct children of the root element
 * are read, so tags of the same name inside <host_info> or
 * <project_preferences> do not leak in. */
struct locus_init_data {
    char app_name[256];
    char wu_name[256];
    char result_name[256];
    char project_dir[1024];   /* the project folder, absolute under BOINC */
    char boinc_dir[1024];     /* the client's data folder */
    char user_name[256];
    long long userid;
    long long hostid;
    long long teamid;
    int slot;                 /* slot number, 0 if absent */
    double checkpoint_period; /* seconds, 0 if absent */
    double rsc_fpops_est;     /* estimated floating-point operations of the job */
    double rsc_fpops_bound;   /* the client aborts the job beyond this */
    double rsc_memory_bound;  /* bytes */
    double rsc_disk_bound;    /* bytes */
    double wu_cpu_time;       /* CPU seconds used by earlier runs of this task */
    double starting_elapsed_time; /* elapsed seconds of earlier runs */
    double computation_deadline;  /* Unix time */
    int gpu_device_num;       /* the GPU the client assigned (0, 1, ...), -1 if none */
    char gpu_type[64];        /* its vendor as the client names it: "NVIDIA", "ATI",
                               * "intel_gpu", ...; "" if none */
};

/* Starts the runtime. Reads init_data.xml in the current directory if
 * present (otherwise standalone mode), maps boinc_mmap_file if present and
 * starts the thread that reports status once a second and polls the control
 * channel every 100 ms. The checkpoint period is init_data's
 * checkpoint_period, else LOCUS_DEFAULT_CHECKPOINT_PERIOD; the environment
 * variable LOCUS_CHECKPOINT_PERIOD (seconds, >= 0) overrides both.
 * Returns 0 (also when already started), -1 with errno if the thread could
 * not be started (the application may go on: it will just not be controlled). */
int locus_init(void);

/* Stops the thread and unmaps the channels without exiting, so that
 * locus_init can run again. For tests and for applications that must tear
 * everything down themselves; a normal application ends with locus_finish. */
void locus_shutdown(void);

/* 1 without init_data.xml (or before locus_init), else 0. */
int locus_is_standalone(void);

/* The values read by locus_init; all zero in standalone mode (and before
 * locus_init), but gpu_device_num: -1. The struct is owned by the runtime
 * and stays valid until locus_shutdown. */
const struct locus_init_data *locus_get_init_data(void);

/* Parses an init_data.xml text of len bytes (need not be NUL-terminated)
 * into *out (zeroed first, gpu_device_num set to -1; both owned by the
 * caller). Tolerant: unknown tags, bad numbers and broken markup are
 * skipped. Returns the number of values found, 0 if none. Reentrant; no
 * locus_init needed. */
int locus_parse_init_data(const char *xml, size_t len, struct locus_init_data *out);

/* The GPU a GPU job is to use, as the BOINC client passes it: the number N
 * of the last "--device N" or "--device=N" in argv[1..argc) (the client
 * appends it for apps of api_version < 7.5), else init_data's
 * gpu_device_num as read by locus_init (so call it after locus_init), else
 * -1 (a CPU job, or standalone: the application picks its default). A
 * --device whose value is not a whole number in 0..9999 is ignored. argv
 * (owned by the caller, may be NULL) is only read; nothing fails. */
int locus_gpu_device(int argc, char **argv);

/* The physical path of a logical file name: if the file named logical in the
 * current directory is a text file "<soft_link>PATH</soft_link>" (what the
 * BOINC client puts in a slot for inputs AND outputs), PATH; otherwise
 * logical itself. Writes a NUL-terminated string into physical (len bytes,
 * owned by the caller). Returns 0, or -1 with errno EINVAL (bad arguments)
 * or ENAMETOOLONG (does not fit). Reentrant; no locus_init needed. */
int locus_resolve_filename(const char *logical, char *physical, size_t len);

/* Records progress, f in [0, 1] (clamped; NaN ignored), sent to the client
 * with the next status message. Blocks while the client has the task
 * suspended, so a cooperative application pauses here. */
void locus_fraction_done(double f);

/* 1 when the checkpoint period has elapsed since the last checkpoint (or
 * since locus_init), or when the client asked the application to quit: save
 * the state then call locus_checkpoint_completed. Blocks while suspended. */
int locus_time_to_checkpoint(void);

/* Records that a checkpoint was written: restarts the period and sets the
 * checkpoint CPU time the client sees (it counts a checkpoint when that value
 * changes). If the client asked to quit, the process exits here with 0
 * (no finish file: the client restarts the task later from the checkpoint). */
void locus_checkpoint_completed(void);

/* Control messages have this effect without the application's help:
 * - <abort/>: exit(LOCUS_EXIT_ABORTED) at once, from the runtime thread.
 * - <quit/>: locus_time_to_checkpoint returns 1 and locus_checkpoint_completed
 *   exits 0; an application that does not checkpoint within 1 s (10 s once it
 *   has started a checkpoint) is ended with exit(0) by the runtime thread.
 * - <suspend/> / <resume/>: see locus_fraction_done.
 * Returns 1 once <quit/> was received, for applications that want to stop
 * work of their own. */
int locus_quit_requested(void);

/* Ends the job: sends a last status, writes boinc_finish_called (first line
 * the status, then a newline) atomically in the current directory, flushes
 * and exits with status. BOINC counts status 0 plus that file as success. */
LOCUS_NORETURN void locus_finish(int status);

/* Ends the process without finishing the job: writes boinc_temporary_exit
 * (first line delay_seconds, second line reason; reason may be NULL, it is
 * not kept) then exits 0; the client restarts the task after the delay. */
LOCUS_NORETURN void locus_temporary_exit(int delay_seconds, const char *reason);

#ifdef __cplusplus
}
#endif
#endif
