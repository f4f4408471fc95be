/* run.h - running a project's hook command (validator_cmd,
 * assimilator_cmd, locality_work_generator) as `sh -c CMD NAME ARGS...`,
 * so the command sees its arguments as $1, $2... */
#ifndef LOCUS_RUN_H
#define LOCUS_RUN_H

/* Runs cmd with arguments args (NULL-terminated, may be NULL), in dir cwd
 * (NULL: unchanged), with the "NAME=VALUE" strings of env (NULL-terminated,
 * may be NULL) added to the environment. Waits for it. Returns its exit
 * status, or -1 if it could not run or was killed by a signal. */
int run_command(const char *cmd, const char *name, const char *const *args, const char *cwd,
                const char *const *env);
#endif
