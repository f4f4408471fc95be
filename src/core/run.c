/* run.c - hook commands: fork, exec /bin/sh, wait. */
#include "core/run.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUN_MAX_ARGS 64

int run_command(const char *cmd, const char *name, const char *const *args, const char *cwd,
                const char *const *env)
{
    const char *argv[RUN_MAX_ARGS + 5];
    int n = 0;
    argv[n++] = "sh";
    argv[n++] = "-c";
    argv[n++] = cmd;
    argv[n++] = name;
    for (int i = 0; args && args[i] && i < RUN_MAX_ARGS; i++) argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);   /* the child's own copy */
        if (cwd && chdir(cwd)) _exit(126);
        execv("/bin/sh", (char *const *)argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno == EINTR) continue;
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
