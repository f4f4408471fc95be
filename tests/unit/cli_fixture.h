/* cli_fixture.h - for unit tests that set a project up with the locus
 * commands themselves (include after cmocka.h and cli/cli.h). */
#ifndef LOCUS_TEST_CLI_FIXTURE_H
#define LOCUS_TEST_CLI_FIXTURE_H
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* Runs a locus command with the NULL-terminated arguments, its normal
 * output written to the file out (made anew); its exit code, and its error
 * printed. run() drops the output. */
#define run(...) run_into("/dev/null", __VA_ARGS__)
static int run_into(const char *out, cli_command *cmd, ...)
{
    char *argv[32], err[CLI_ERR_MAX] = "";
    int argc = 0;
    va_list ap;
    va_start(ap, cmd);
    for (char *a; (a = va_arg(ap, char *));) argv[argc++] = a;
    va_end(ap);
    fflush(stdout);
    int saved = dup(1), null = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(saved >= 0 && null >= 0);
    dup2(null, 1);
    int rc = cmd(argc, argv, err, sizeof err);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(null);
    if (rc) print_error("locus %s...: %s\n", argv[0], err);
    return rc;
}
#endif
