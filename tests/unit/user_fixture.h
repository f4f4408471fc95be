/* user_fixture.h - creates users with `locus user create` and keeps the
 * keys the CLI prints: the store keeps only the keys' hashes, so a test
 * that needs a user's key takes it where the operator does, from stdout.
 * Header-only, for unit tests that link the CLI. */
#ifndef LOCUS_TEST_USER_FIXTURE_H
#define LOCUS_TEST_USER_FIXTURE_H
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs cmd with argv (NULL-terminated) with its output in a temporary
 * file; key gets the first line it printed. Aborts the test on failure. */
__attribute__((unused)) static void user_fixture_run(cli_command *cmd, char **argv, char key[64])
{
    char err[CLI_ERR_MAX] = "";
    int argc = 0;
    while (argv[argc]) argc++;
    FILE *out = tmpfile();
    if (!out) abort();
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(fileno(out), STDOUT_FILENO);
    int rc = cmd(argc, argv, err, sizeof err);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    rewind(out);
    if (rc || !fgets(key, 64, out)) {
        fprintf(stderr, "locus user %s %s: %s\n", argv[0], argv[1], err);
        abort();
    }
    key[strcspn(key, "\n")] = 0;
    fclose(out);
}

/* `locus user create DIR NAME`: key gets the account key. */
__attribute__((unused)) static void user_fixture_create(const char *dir, const char *name, char key[64])
{
    char *argv[] = {(char *)dir, (char *)name, NULL};
    user_fixture_run(cmd_user_create, argv, key);
}

/* A user of role ROLE ("submitter" or "admin") and a submit key of theirs
 * (`locus user create DIR NAME --role ROLE`, `locus user key DIR NAME`):
 * key gets the submit key, the one the REST API takes. */
__attribute__((unused)) static void user_fixture_submitter(const char *dir, const char *name, const char *role,
                                                          char key[64])
{
    char account[64], *create[] = {(char *)dir, (char *)name, "--role", (char *)role, NULL};
    char *mint[] = {(char *)dir, (char *)name, NULL};
    user_fixture_run(cmd_user_create, create, account);
    user_fixture_run(cmd_user_key, mint, key);
}
#endif
