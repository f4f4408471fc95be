/* run.h - running external commands: a project's hook command
 * (validator_cmd, assimilator_cmd, locality_work_generator) as
 * `sh -c CMD NAME ARGS...`, so the command sees its arguments as $1, $2...;
 * and a program whose output is wanted (a batch scheduler's commands),
 * bounded in time. */
#ifndef LOCUS_RUN_H
#define LOCUS_RUN_H
#include <stddef.h>

/* Runs cmd with arguments args (NULL-terminated, may be NULL), in dir cwd
 * (NULL: unchanged), with the "NAME=VALUE" strings of env (NULL-terminated,
 * may be NULL) added to the environment. Waits for it, timeout_ms at most:
 * then it and what it started are killed (a hung hook must not hold up the
 * daemon that runs it forever). Returns its exit status, or -1 if it could
 * not run, was killed by a signal or ran out of time. */
int run_command(const char *cmd, const char *name, const char *const *args, const char *cwd,
                const char *const *env, int timeout_ms);

/* What run_capture saw of a command: owned by the caller, who frees it with
 * run_output_free (also after an error). */
#define RUN_CAPTURE_MAX (4u << 20)   /* bytes kept of each stream; the rest is dropped */
struct run_output {
    int status;                  /* exit status; -1: killed by a signal */
    char *out, *err;             /* stdout, stderr: NUL-terminated, owned; never NULL after a call */
    size_t out_len, err_len;
    long elapsed_ms;
};

/* Runs the program argv[0] (looked up in PATH) with arguments argv (borrowed,
 * NULL-terminated), the "NAME=VALUE" strings of env (borrowed, may be NULL)
 * added to the environment and stdin from /dev/null; captures its stdout and
 * stderr into res (overwritten) and waits at most timeout_ms. Returns 0 when
 * the program ran to its end, whatever its status; -1 with the reason in err
 * when it could not be started or did not end in time (then it and every
 * process of its group are killed). */
int run_capture(const char *const *argv, const char *const *env, int timeout_ms, struct run_output *res,
                char *err, size_t errlen);
void run_output_free(struct run_output *res);
#endif
