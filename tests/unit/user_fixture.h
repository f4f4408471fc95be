/* user_fixture.h - creates a user with `locus user create` and keeps the
 * account key it prints: the store keeps only the key's hash, so a test
 * that needs a user's key takes it where the operator does, from stdout.
 * Header-only, for unit tests that link the CLI. */
#ifndef LOCUS_TEST_USER_FIXTURE_H
#define LOCUS_TEST_USER_FIXTURE_H
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs `locus user create DIR NAME` with its output in a temporary file;
 * key gets the key it printed. Aborts the test on failure. */
__attribute__((unused)) static void user_fixture_create(const char *dir, const char *name, char key[64])
{
    char err[CLI_ERR_MAX] = "", *argv[] = {(char *)dir, (char *)name, NULL};
    FILE *out = tmpfile();
    if (!out) abort();
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(fileno(out), STDOUT_FILENO);
    int rc = cmd_user_create(2, argv, err, sizeof err);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    rewind(out);
    if (rc || !fgets(key, 64, out)) {
        fprintf(stderr, "locus user create %s %s: %s\n", dir, name, err);
        abort();
    }
    key[strcspn(key, "\n")] = 0;
    fclose(out);
}
#endif
