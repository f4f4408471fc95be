/* test_accounts.c - volunteers' accounts: keys, secrets and passwords.
 * core/account_key.c: a key is 32 lowercase hex digits made again the
 * same from (secret, user id, generation), and differs when any of the
 * three does, "1 11" and "11 1" included; it is HMAC-SHA256 of the label
 * and "ID GEN", recomputed here with OpenSSL, so keys already given out
 * stay valid across versions. The account secret is made once, in
 * keys/account_key, mode 0600, and read back the same.
 * core/upload_cert.c: eight processes that make the same key file at once
 * all end with the one key that is in the file, and leave no temporary
 * file behind.
 * core/passwd.c: a password stored with Argon2id checks, another does not;
 * stores are salted; garbage stored text is a "no", not a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/account_key.h"
#include "core/fsutil.h"
#include "core/passwd.h"
#include "core/project.h"
#include "core/upload_cert.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct fx {
    char dir[64];
    struct project *p;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/locus-test-accounts-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    char keys[128];
    snprintf(keys, sizeof keys, "%s/keys", f->dir);
    if (mkdir(keys, 0700)) return -1;
    f->p = calloc(1, sizeof *f->p);
    if (!f->p) return -1;
    snprintf(f->p->dir, sizeof f->p->dir, "%s", f->dir);
    *state = f;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int teardown(void **state)
{
    struct fx *f = *state;
    int rc = nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f->p);
    free(f);
    return rc;
}

static int is_lower_hex(const char *s, size_t n)
{
    if (strlen(s) != n) return 0;
    return strspn(s, "0123456789abcdef") == n;
}

static struct upload_key secret_of(unsigned char fill)
{
    struct upload_key k;
    memset(k.key, fill, sizeof k.key);
    k.key[0] = 0x5a;
    k.since = 1700000000;
    return k;
}

/* ---- account keys ---- */

static void test_key_form_and_determinism(void **state)
{
    struct upload_key s = secret_of(0x11);
    char a[ACCOUNT_KEY_LEN + 1], b[ACCOUNT_KEY_LEN + 1];
    memset(a, 'Z', sizeof a);
    account_key_make(&s, 42, 1, a);
    assert_true(is_lower_hex(a, ACCOUNT_KEY_LEN));
    account_key_make(&s, 42, 1, b);
    assert_string_equal(a, b);
    /* the same secret read from elsewhere (a copy) gives the same key */
    struct upload_key copy;
    memcpy(&copy, &s, sizeof copy);
    copy.since = 5;   /* the time is not part of the MAC's key */
    account_key_make(&copy, 42, 1, b);
    assert_string_equal(a, b);
}

static void test_key_differs_by_id_gen_secret(void **state)
{
    struct upload_key s = secret_of(0x11), t = secret_of(0x11);
    t.key[UPLOAD_KEY_BYTES - 1] ^= 0x01;   /* one bit apart */
    char base[ACCOUNT_KEY_LEN + 1], other[ACCOUNT_KEY_LEN + 1];
    account_key_make(&s, 42, 1, base);
    account_key_make(&s, 43, 1, other);
    assert_string_not_equal(base, other);
    account_key_make(&s, 42, 2, other);
    assert_string_not_equal(base, other);
    account_key_make(&t, 42, 1, other);
    assert_string_not_equal(base, other);
    account_key_make(&s, -42, 1, other);
    assert_string_not_equal(base, other);
    account_key_make(&s, (int64_t)42 + ((int64_t)1 << 32), 1, other);   /* no cut to 32 bits */
    assert_string_not_equal(base, other);
    /* "1 11" and "11 1": the text of id and gen is not ambiguous */
    char k1[ACCOUNT_KEY_LEN + 1], k2[ACCOUNT_KEY_LEN + 1];
    account_key_make(&s, 1, 11, k1);
    account_key_make(&s, 11, 1, k2);
    assert_string_not_equal(k1, k2);
    account_key_make(&s, 111, 1, k2);
    assert_string_not_equal(k1, k2);
    account_key_make(&s, 1, 111, k2);
    assert_string_not_equal(k1, k2);
}

/* The weak key: "ID_" and 32 hex digits; the same for the same secret,
 * user, generation and password, another when any of them changes; its
 * check takes only the exact text, and its parse only that form. */
static void test_weak_key(void **state)
{
    (void)state;
    struct upload_key s = secret_of(0x11), t = secret_of(0x12);
    const char *pw = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA";
    char a[WEAK_KEY_MAX + 1], b[WEAK_KEY_MAX + 1];
    account_weak_key_make(&s, 42, 1, pw, a);
    assert_int_equal(strncmp(a, "42_", 3), 0);
    assert_true(is_lower_hex(a + 3, WEAK_KEY_HASH_LEN));
    account_weak_key_make(&s, 42, 1, pw, b);
    assert_string_equal(a, b);
    assert_true(account_weak_key_check(&s, 42, 1, pw, a));
    /* another password, generation, user or secret: another key */
    account_weak_key_make(&s, 42, 1, "$argon2id$v=19$m=65536,t=2,p=1$c2FsdB$aGFzaA", b);
    assert_string_not_equal(a, b);
    assert_false(account_weak_key_check(&s, 42, 1, "other", a));
    assert_false(account_weak_key_check(&s, 42, 2, pw, a));
    assert_false(account_weak_key_check(&s, 43, 1, pw, a));
    assert_false(account_weak_key_check(&t, 42, 1, pw, a));
    account_weak_key_make(&s, 42, 1, "", b);   /* no password (an operator's user): a key all the same */
    assert_true(account_weak_key_check(&s, 42, 1, "", b));
    assert_string_not_equal(a, b);
    /* the exact text only: a prefix, a longer text, upper case */
    char c[WEAK_KEY_MAX + 2];
    snprintf(c, sizeof c, "%.*s", (int)strlen(a) - 1, a);
    assert_false(account_weak_key_check(&s, 42, 1, pw, c));
    snprintf(c, sizeof c, "%s0", a);
    assert_false(account_weak_key_check(&s, 42, 1, pw, c));
    snprintf(c, sizeof c, "%s", a);
    for (char *p = c; *p; p++) *p = (char)toupper((unsigned char)*p);
    assert_false(account_weak_key_check(&s, 42, 1, pw, c));
    /* the id a weak key names, and only from that form */
    int64_t id = 0;
    assert_int_equal(account_weak_key_user(a, &id), 0);
    assert_int_equal(id, 42);
    const char *bad[] = {"", "_0123456789abcdef0123456789abcdef", "042_0123456789abcdef0123456789abcdef",
                         "-4_0123456789abcdef0123456789abcdef", "4_0123456789abcdef0123456789abcde",
                         "4_0123456789ABCDEF0123456789abcdef", "4_0123456789abcdef0123456789abcdef0",
                         "1234567890123456789_0123456789abcdef0123456789abcdef", "4-0123456789abcdef0123456789abcdef",
                         "0123456789abcdef0123456789abcdef"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) assert_int_equal(account_weak_key_user(bad[i], &id), -1);
}

/* The cpid: 32 hex digits, the same for the same user and address, another
 * for another address or user. */
static void test_cpid(void **state)
{
    (void)state;
    struct upload_key s = secret_of(0x11);
    char a[ACCOUNT_KEY_LEN + 1], b[ACCOUNT_KEY_LEN + 1];
    account_cpid_make(&s, 7, "carol@example.org", a);
    assert_true(is_lower_hex(a, ACCOUNT_KEY_LEN));
    account_cpid_make(&s, 7, "carol@example.org", b);
    assert_string_equal(a, b);
    account_cpid_make(&s, 7, "carol@example.net", b);
    assert_string_not_equal(a, b);
    account_cpid_make(&s, 8, "carol@example.org", b);
    assert_string_not_equal(a, b);
}

/* The key, recomputed: the first 16 bytes of HMAC-SHA256(secret,
 * "locus account key v1\n" "ID GEN"). If this changes, every key given out
 * to volunteers stops working. */
static void test_key_known_answer(void **state)
{
    struct upload_key s = secret_of(0x3c);
    const char *msg = "locus account key v1\n" "123456789012 7";
    unsigned char mac[32];
    unsigned int maclen = sizeof mac;
    assert_non_null(HMAC(EVP_sha256(), s.key, (int)sizeof s.key, (const unsigned char *)msg, strlen(msg), mac, &maclen));
    assert_int_equal(maclen, 32);
    char want[ACCOUNT_KEY_LEN + 1];
    for (int i = 0; i < ACCOUNT_KEY_LEN / 2; i++) snprintf(want + 2 * i, 3, "%02x", mac[i]);
    char got[ACCOUNT_KEY_LEN + 1];
    account_key_make(&s, 123456789012, 7, got);
    assert_string_equal(got, want);
}

static void test_secret_made_once_and_private(void **state)
{
    struct fx *f = *state;
    char err[256] = "", path[256];
    snprintf(path, sizeof path, "%s/%s", f->dir, ACCOUNT_KEY_FILE);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    struct upload_key s1, s2;
    if (account_secret_load(f->p, 1000, &s1, err, sizeof err)) fail_msg("account_secret_load: %s", err);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(s1.since, 1000);
    static const unsigned char zero[UPLOAD_KEY_BYTES];
    assert_memory_not_equal(s1.key, zero, UPLOAD_KEY_BYTES);
    /* again, later: the same secret, not a new one */
    if (account_secret_load(f->p, 2000, &s2, err, sizeof err)) fail_msg("account_secret_load: %s", err);
    assert_int_equal(s2.since, 1000);
    assert_memory_equal(s1.key, s2.key, UPLOAD_KEY_BYTES);
    /* and so the same keys */
    char k1[ACCOUNT_KEY_LEN + 1], k2[ACCOUNT_KEY_LEN + 1];
    account_key_make(&s1, 9, 1, k1);
    account_key_make(&s2, 9, 1, k2);
    assert_string_equal(k1, k2);
    /* the file holds it, in the key file format */
    char *text = read_file(path, 4096, NULL);
    assert_non_null(text);
    struct upload_key parsed;
    assert_int_equal(upload_key_parse(text, &parsed), 0);
    free(text);
    assert_memory_equal(parsed.key, s1.key, UPLOAD_KEY_BYTES);
}

/* No keys/ folder: an error with a reason, no secret. */
static void test_secret_missing_folder(void **state)
{
    struct fx *f = *state;
    char keys[128];
    snprintf(keys, sizeof keys, "%s/keys", f->dir);
    assert_int_equal(rmdir(keys), 0);
    char err[256] = "";
    struct upload_key s;
    assert_int_equal(account_secret_load(f->p, 1000, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "account_key"));
    assert_int_equal(mkdir(keys, 0700), 0);   /* for teardown's walk: nothing to find */
}

/* ---- the key file made by many processes at once ---- */

#define RACERS 8
#define ROUNDS 6

struct race_out {
    unsigned char key[UPLOAD_KEY_BYTES];
    int64_t since;
};

static int read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

/* In the child: wait for the start (the parent closes the pipe), make or
 * read the key, send it back. Never returns. */
static void racer(int start_fd, int out_fd, const char *path, int64_t now)
{
    char c;
    ssize_t r;
    while ((r = read(start_fd, &c, 1)) < 0 && errno == EINTR) {}
    if (r != 0) _exit(3);   /* the start is the pipe's end, nothing else */
    struct upload_key k;
    char err[256];
    if (upload_key_load(path, now, &k, err, sizeof err)) {
        fprintf(stderr, "racer %ld: %s\n", (long)getpid(), err);
        _exit(1);
    }
    struct race_out o;
    memset(&o, 0, sizeof o);
    memcpy(o.key, k.key, sizeof o.key);
    o.since = k.since;
    if (write(out_fd, &o, sizeof o) != (ssize_t)sizeof o) _exit(2);
    _exit(0);
}

static void race_once(const char *dir, int round)
{
    char path[256];
    snprintf(path, sizeof path, "%s/race_key_%d", dir, round);
    int start[2];
    assert_int_equal(pipe(start), 0);
    pid_t pids[RACERS];
    int outs[RACERS];
    for (int i = 0; i < RACERS; i++) {
        int out[2];
        assert_int_equal(pipe(out), 0);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(start[1]);   /* else the start never comes: this child would hold it open */
            close(out[0]);
            for (int j = 0; j < i; j++) close(outs[j]);
            racer(start[0], out[1], path, 1000 + i);
        }
        close(out[1]);
        pids[i] = pid;
        outs[i] = out[0];
    }
    close(start[0]);
    close(start[1]);   /* go */

    struct race_out got[RACERS];
    for (int i = 0; i < RACERS; i++) {
        int rd = read_full(outs[i], &got[i], sizeof got[i]);
        close(outs[i]);
        int status = 0;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("round %d, racer %d: status 0x%x", round, i, status);
        assert_int_equal(rd, 0);
    }
    /* one key for all, made by one of them, at its time */
    for (int i = 1; i < RACERS; i++) {
        assert_memory_equal(got[i].key, got[0].key, UPLOAD_KEY_BYTES);
        assert_int_equal(got[i].since, got[0].since);
    }
    assert_in_range(got[0].since, 1000, 1000 + RACERS - 1);
    static const unsigned char zero[UPLOAD_KEY_BYTES];
    assert_memory_not_equal(got[0].key, zero, UPLOAD_KEY_BYTES);

    /* the file is that key, private, whole */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char *text = read_file(path, 4096, NULL);
    assert_non_null(text);
    struct upload_key k;
    assert_int_equal(upload_key_parse(text, &k), 0);
    free(text);
    assert_memory_equal(k.key, got[0].key, UPLOAD_KEY_BYTES);
    assert_int_equal(k.since, got[0].since);
}

static void test_key_file_race(void **state)
{
    struct fx *f = *state;
    for (int round = 0; round < ROUNDS; round++) race_once(f->dir, round);
    /* only the key files, no temporary left */
    DIR *d = opendir(f->dir);
    assert_non_null(d);
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "keys")) continue;
        if (strstr(e->d_name, ".tmp")) fail_msg("temporary file left: %s", e->d_name);
        if (strncmp(e->d_name, "race_key_", 9)) fail_msg("unexpected file: %s", e->d_name);
        files++;
    }
    closedir(d);
    assert_int_equal(files, ROUNDS);
}

/* ---- passwords (each store or check is ~0.1 s and 64 MiB: few of them) ---- */

static void test_passwd_round_trip(void **state)
{
    const char *pw = "5f4dcc3b5aa765d61d8327deb882cf99";
    const char *other = "5f4dcc3b5aa765d61d8327deb882cf98";
    char s1[PASSWD_STORED_MAX], s2[PASSWD_STORED_MAX];
    memset(s1, 'Z', sizeof s1);
    memset(s2, 'Z', sizeof s2);
    assert_int_equal(passwd_store(pw, s1), 0);                      /* argon2 1 */
    assert_true(memchr(s1, 0, sizeof s1) != NULL);
    assert_true(strlen(s1) < PASSWD_STORED_MAX);
    assert_int_equal(strncmp(s1, "$argon2id$", 10), 0);
    assert_null(strstr(s1, pw));                                    /* not kept in clear */
    assert_int_equal(passwd_check(s1, pw), 1);                      /* argon2 2 */
    assert_int_equal(passwd_check(s1, other), 0);                   /* argon2 3 */
    /* salted: the same password stored twice reads differently, both check */
    assert_int_equal(passwd_store(pw, s2), 0);                      /* argon2 4 */
    assert_string_not_equal(s1, s2);
    assert_int_equal(passwd_check(s2, pw), 1);                      /* argon2 5 */
    /* a stored text altered inside its hash (base64: a middle character
     * carries 6 bits of it) no longer checks */
    size_t n = strlen(s1);
    s1[n - 10] = s1[n - 10] == 'A' ? 'B' : 'A';
    assert_int_equal(passwd_check(s1, pw), 0);                      /* argon2 6 */
}

static void test_passwd_garbage_stored(void **state)
{
    const char *pw = "5f4dcc3b5aa765d61d8327deb882cf99";
    /* none of these is a whole Argon2 text: refused before any hashing */
    assert_int_equal(passwd_check("", pw), 0);
    assert_int_equal(passwd_check("$argon2id$garbage", pw), 0);
    assert_int_equal(passwd_check("$argon2id$v=19$m=65536,t=2,p=1$", pw), 0);
    assert_int_equal(passwd_check(pw, pw), 0);   /* the passwd_hash itself, as a store copied in clear */
    /* a 127-character text of junk (fits PASSWD_STORED_MAX with its NUL) */
    char junk[PASSWD_STORED_MAX];
    memset(junk, 'x', sizeof junk - 1);
    junk[sizeof junk - 1] = 0;
    assert_int_equal(passwd_check(junk, pw), 0);
    memcpy(junk, "$argon2id$", 10);
    assert_int_equal(passwd_check(junk, pw), 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_form_and_determinism),
        cmocka_unit_test(test_key_differs_by_id_gen_secret),
        cmocka_unit_test(test_key_known_answer),
        cmocka_unit_test(test_weak_key),
        cmocka_unit_test(test_cpid),
        T(test_secret_made_once_and_private),
        T(test_secret_missing_folder),
        T(test_key_file_race),
        cmocka_unit_test(test_passwd_round_trip),
        cmocka_unit_test(test_passwd_garbage_stored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
