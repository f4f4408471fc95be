/* cmd_user.c - `locus user create`: a user and its authenticator, the
 * account key a volunteer attaches a BOINC client with. The key alone goes
 * to stdout so a script can capture it: KEY=$(locus user create DIR NAME);
 * `locus user account-key` prints it again (it is made, not stored), or
 * with --weak the weak key (a client attaches with it, nothing else).
 * `locus user role`: what a user may do (volunteer, submitter, admin).
 * `locus user key`, `keys`, `revoke`: a submitter's submit keys, the keys
 * the REST API takes. `locus user account`: the cluster account a user's
 * campaigns run as. `locus user hook`: where the user's campaign notices
 * go. */
#include "cli/cli.h"
#include "grid/jdl.h"
#include "core/account_key.h"
#include "core/passwd.h"
#include "store/store_grid.h"
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AUTH_BYTES 16    /* 32 hex digits */

static int make_authenticator(char *out, size_t len, char *err, size_t errlen)
{
    unsigned char bytes[AUTH_BYTES];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        return cli_errf(err, errlen, CLI_FAIL, "cannot draw random bytes for the authenticator (OpenSSL RAND_bytes)");
    for (size_t i = 0; i < sizeof bytes && 2 * i + 2 < len; i++) snprintf(out + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}

/* Inserts u with a key made from the project's account secret and its
 * id (core/account_key.h), in one transaction, the key into
 * u->authenticator: the project can give it again (locus user
 * account-key, lookup_account). */
static int insert_user(struct cli_project *cp, struct user *u, char *err, size_t errlen)
{
    struct upload_key secret;
    if (account_secret_load(&cp->p, (int64_t)time(NULL), &secret, err, errlen)) return CLI_FAIL;
    struct store *s = cp->s;
    struct user old;
    int found = store_begin(s) ? -1 : store_user_by_name(s, u->name, &old), rc = -1;
    if (found == 0) {
        cli_errf(err, errlen, CLI_FAIL, "user '%s' already exists", u->name);
        rc = 1;
    } else if (found == 1) {
        u->key_gen = ACCOUNT_KEY_GEN_RANDOM + 1;
        rc = store_user_next_id(s, &u->id);
        if (!rc) account_key_make(&secret, u->id, u->key_gen, u->authenticator);
        rc = rc || store_user_insert(s, u) || store_commit(s) ? -1 : 0;
    }
    OPENSSL_cleanse(&secret, sizeof secret);
    if (rc < 0) cli_errf(err, errlen, CLI_FAIL, "%s", store_error(s));
    if (rc) store_rollback(s);
    return rc ? CLI_FAIL : 0;
}

/* Prints user u's weak key (core/account_key.h), which needs no key of
 * its own: 0 or CLI_FAIL. */
static int print_weak_key(struct cli_project *cp, const struct user *u, char *err, size_t errlen)
{
    char passwd[PASSWD_STORED_MAX], weak[WEAK_KEY_MAX + 1];
    struct upload_key secret;
    if (store_user_passwd(cp->s, u->id, passwd, sizeof passwd))
        return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    int rc = account_secret_load(&cp->p, (int64_t)time(NULL), &secret, err, errlen) ? CLI_FAIL : 0;
    if (!rc) {
        account_weak_key_make(&secret, u->id, u->key_gen, passwd, weak);
        printf("%s\n", weak);
        OPENSSL_cleanse(weak, sizeof weak);
        OPENSSL_cleanse(&secret, sizeof secret);
    }
    OPENSSL_cleanse(passwd, sizeof passwd);
    return rc;
}

int cmd_user_account_key(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2];
    int weak = 0;
    struct cli_opt opts[] = {{"weak", OPT_FLAG, &weak, 0, 0}, {NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    struct cli_project cp;
    if (rc || (rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen))) return rc;
    struct user u;
    struct upload_key secret;
    int found = store_user_by_name(cp.s, pos[1], &u);
    if (found < 0) rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    else if (found) rc = cli_errf(err, errlen, CLI_FAIL, "no user '%s'", pos[1]);
    else if (weak) rc = print_weak_key(&cp, &u, err, errlen);
    else if (u.key_gen == ACCOUNT_KEY_GEN_RANDOM)
        rc = cli_errf(err, errlen, CLI_FAIL,
                      "user '%s' has a key drawn at random before keys could be made again: only its owner has it",
                      pos[1]);
    else if (!(rc = account_secret_load(&cp.p, (int64_t)time(NULL), &secret, err, errlen) ? CLI_FAIL : 0)) {
        char key[ACCOUNT_KEY_LEN + 1];
        account_key_make(&secret, u.id, u.key_gen, key);
        printf("%s\n", key);
        OPENSSL_cleanse(key, sizeof key);
        OPENSSL_cleanse(&secret, sizeof secret);
    }
    cli_close(&cp);
    return rc;
}

/* The role called name into *role; CLI_USAGE naming the roles if none. */
static int role_of(const char *name, int *role, char *err, size_t errlen)
{
    *role = user_role_parse(name);
    if (*role < 0)
        return cli_errf(err, errlen, CLI_USAGE, "unknown role '%s' (expected volunteer, submitter or admin)", name);
    return 0;
}

int cmd_user_create(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2], *role_name = "volunteer";
    struct cli_opt opts[] = {{"role", OPT_STR, &role_name, 0, 0}, {NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen), role;
    if (rc || (rc = role_of(role_name, &role, err, errlen))) return rc;
    if (!display_name_ok(pos[1]))
        return cli_errf(err, errlen, CLI_FAIL, "user name must be 1 to %d printable ASCII characters", DISPLAY_NAME_MAX);
    struct user u = {.create_time = (int64_t)time(NULL), .role = role};
    snprintf(u.name, sizeof u.name, "%s", pos[1]);
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = insert_user(&cp, &u, err, errlen);
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

/* Opens project dir and finds user name: 0 with cp open, or the error
 * with cp closed. */
static int open_user(struct cli_project *cp, const char *dir, const char *name, struct user *u, char *err,
                     size_t errlen)
{
    int rc = cli_open(cp, dir, 0, err, errlen);
    if (rc) return rc;
    int found = store_user_by_name(cp->s, name, u);
    if (!found) return 0;
    if (found > 0) rc = cli_errf(err, errlen, CLI_FAIL, "no user '%s'", name);
    else rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    cli_close(cp);
    return rc;
}

/* `locus user role DIR NAME ROLE`. A user made a volunteer keeps their
 * submit keys, unusable until the role comes back. */
int cmd_user_role(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[3];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 3, 3, err, errlen), role;
    if (rc || (rc = role_of(pos[2], &role, err, errlen))) return rc;
    struct cli_project cp;
    struct user u;
    if ((rc = open_user(&cp, pos[0], pos[1], &u, err, errlen))) return rc;
    if (store_user_set_role(cp.s, u.id, role)) rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    cli_close(&cp);
    return rc;
}

/* `locus user key DIR NAME [--label TEXT]`: a new submit key for a
 * submitter or admin, printed once (the store keeps its hash). */
int cmd_user_key(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2], *label = "";
    struct cli_opt opts[] = {{"label", OPT_STR, &label, 0, 0}, {NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    struct submit_key k = {.create_time = (int64_t)time(NULL)};
    if (strlen(label) >= sizeof k.label)
        return cli_errf(err, errlen, CLI_FAIL, "--label is at most %zu bytes", sizeof k.label - 1);
    snprintf(k.label, sizeof k.label, "%s", label);
    char key[2 * AUTH_BYTES + 1];
    if (make_authenticator(key, sizeof key, err, errlen)) return CLI_FAIL;
    struct cli_project cp;
    struct user u;
    if ((rc = open_user(&cp, pos[0], pos[1], &u, err, errlen))) return rc;
    k.user_id = u.id;
    if (u.role < USER_SUBMITTER)
        rc = cli_errf(err, errlen, CLI_FAIL, "'%s' is a volunteer: make them a submitter first (locus user role DIR %s "
                      "submitter)", u.name, u.name);
    else if (store_submit_key_insert(cp.s, key, &k))
        rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    cli_close(&cp);
    if (!rc) printf("%s\n", key);
    return rc;
}

static int print_key(void *arg, const struct submit_key *k)
{
    (void)arg;
    printf("%lld %s created=%lld%s%s\n", (long long)k->id, k->revoke_time ? "revoked" : "in-force",
           (long long)k->create_time, k->label[0] ? " label=" : "", k->label);
    return 0;
}

/* `locus user keys DIR NAME`: the user's role, then one line per submit key. */
int cmd_user_keys(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    struct cli_project cp;
    struct user u;
    if ((rc = open_user(&cp, pos[0], pos[1], &u, err, errlen))) return rc;
    printf("user %s role=%s\n", u.name, user_role_name(u.role));
    if (store_submit_keys_each(cp.s, u.id, print_key, NULL)) rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    cli_close(&cp);
    return rc;
}

/* `locus user revoke DIR NAME KEY_ID`: the key stops working at once. */
int cmd_user_revoke(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[3];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 3, 3, err, errlen);
    if (rc) return rc;
    char *end;
    long long id = strtoll(pos[2], &end, 10);
    if (*end || id <= 0) return cli_errf(err, errlen, CLI_USAGE, "KEY_ID is a key's number (locus user keys)");
    struct cli_project cp;
    struct user u;
    if ((rc = open_user(&cp, pos[0], pos[1], &u, err, errlen))) return rc;
    int r = store_submit_key_revoke(cp.s, u.id, id, (int64_t)time(NULL));
    if (r > 0) rc = cli_errf(err, errlen, CLI_FAIL, "'%s' has no key %lld in force", u.name, id);
    else if (r < 0) rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    cli_close(&cp);
    return rc;
}

/* A cluster account name: a portable user name (letters, digits, _ . -,
 * not starting with '-'), at most STORE_ACCOUNT_MAX - 1 bytes. */
static int account_name_ok(const char *a)
{
    size_t n = strlen(a);
    return n > 0 && n < STORE_ACCOUNT_MAX && a[0] != '-' &&
           strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* `locus user account DIR NAME ACCOUNT|- [--cluster C]`: the cluster
 * account NAME's campaigns run as (on C, or on every cluster without one
 * of its own); - removes it. root is refused here, and every account
 * below grid_min_uid when a campaign is submitted. */
int cmd_user_account(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[3], *cluster = "";
    struct cli_opt opts[] = {{"cluster", OPT_STR, &cluster, 0, 0}, {NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 3, 3, err, errlen);
    if (rc) return rc;
    const char *account = strcmp(pos[2], "-") ? pos[2] : "";
    if (*account && !account_name_ok(account))
        return cli_errf(err, errlen, CLI_FAIL, "'%s' is not an account name (letters, digits, _ . -; at most %d)",
                        account, STORE_ACCOUNT_MAX - 1);
    if (!strcmp(account, "root")) return cli_errf(err, errlen, CLI_FAIL, "no campaign runs as root");
    if (*cluster && !jdl_cluster_name_ok(cluster))
        return cli_errf(err, errlen, CLI_FAIL, "'%s' is not a cluster name", cluster);
    struct cli_project cp;
    struct user u;
    if ((rc = open_user(&cp, pos[0], pos[1], &u, err, errlen))) return rc;
    if (store_cluster_account_set(cp.s, u.id, cluster, account)) rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    cli_close(&cp);
    return rc;
}
