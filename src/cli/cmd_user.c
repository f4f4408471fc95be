/* cmd_user.c - `locus user create`: a user and its authenticator, the
 * account key a volunteer attaches a BOINC client with. The key alone goes
 * to stdout so a script can capture it: KEY=$(locus user create DIR NAME).
 * `locus user hook`: where the user's campaign notices go. */
#include "cli/cli.h"
#include "store/store_grid.h"
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define USER_NAME_MAX 100
#define AUTH_BYTES 16    /* 32 hex digits */

static int name_printable(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > USER_NAME_MAX) return 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p > 0x7e) return 0;
    return 1;
}

static int make_authenticator(char *out, size_t len, char *err, size_t errlen)
{
    unsigned char bytes[AUTH_BYTES];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        return cli_errf(err, errlen, CLI_FAIL, "cannot draw random bytes for the authenticator (OpenSSL RAND_bytes)");
    for (size_t i = 0; i < sizeof bytes && 2 * i + 2 < len; i++) snprintf(out + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}

static int insert_user(struct store *s, struct user *u, char *err, size_t errlen)
{
    struct user old;
    int found = store_user_by_name(s, u->name, &old);
    if (found == 0) return cli_errf(err, errlen, CLI_FAIL, "user '%s' already exists", u->name);
    if (found < 0 || store_user_insert(s, u)) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(s));
    return 0;
}

int cmd_user_create(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    if (!name_printable(pos[1]))
        return cli_errf(err, errlen, CLI_FAIL, "user name must be 1 to %d printable ASCII characters", USER_NAME_MAX);
    struct user u = {.create_time = (int64_t)time(NULL)};
    snprintf(u.name, sizeof u.name, "%s", pos[1]);
    if (make_authenticator(u.authenticator, sizeof u.authenticator, err, errlen)) return CLI_FAIL;
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = insert_user(cp.s, &u, err, errlen);
    cli_close(&cp);
    if (!rc) printf("%s\n", u.authenticator);
    return rc;
}

/* `locus user hook DIR NAME [--command CMD] [--url URL]`: where the grid
 * daemon sends the user's notices (campaign ended, fatal event). Without
 * either option the hook is removed. The command runs on the server as
 * locusd, so only the operator sets it (the REST API cannot). */
int cmd_user_hook(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2], *command = "", *url = "";
    struct cli_opt opts[] = {
        {"command", OPT_STR, &command, 0, 0},
        {"url", OPT_STR, &url, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    if (strlen(command) >= 1024 || strlen(url) >= 1024)
        return cli_errf(err, errlen, CLI_FAIL, "a hook's command and URL are at most 1023 bytes");
    if (*url && strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
        return cli_errf(err, errlen, CLI_FAIL, "--url must start with http:// or https://");
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    struct user u;
    if (!rc) {
        int found = store_user_by_name(cp.s, pos[1], &u);
        if (found) rc = cli_errf(err, errlen, CLI_FAIL, "%s", found > 0 ? "no such user" : store_error(cp.s));
    }
    if (!rc && store_grid_hook_set(cp.s, u.id, command, url))
        rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    cli_close(&cp);
    return rc;
}
