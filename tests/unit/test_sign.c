/* test_sign.c - code signing: key files, the public key text layout,
 * sign/verify round trips, and byte-identity with an openssl CLI recipe
 * (run_recipe) whose output the real client accepted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "core/sign.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx {
    char dir[256];
    char key[300];
    char pub[300];
    char file[300];
};

static void path_in(const struct fx *f, char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", f->dir, name);
}

static void put(const char *path, const char *text)
{
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/locus-test-sign-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    path_in(f, f->key, sizeof f->key, "code_sign.pem");
    path_in(f, f->pub, sizeof f->pub, "code_sign_key.txt");
    path_in(f, f->file, sizeof f->file, "app_1");
    char err[256] = "";
    if (sign_generate_key(f->key, f->pub, err, sizeof err)) {
        fprintf(stderr, "sign_generate_key: %s\n", err);
        return -1;
    }
    put(f->file, "#!/bin/sh\necho hello from app_1\n");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    return rc;
}

static char *slurp(const char *path)
{
    char *s = read_file(path, 1 << 20, NULL);
    assert_non_null(s);
    return s;
}

/* Runs the shell recipe whose key and signature texts the real client
 * accepted (K and FILE substituted) in dir; leaves code_sign_key.txt and
 * FILE.sig there. */
static void run_recipe(const char *dir, const char *key, const char *file_name)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && K='%s' && "
             "m=$(openssl rsa -in $K -noout -modulus | cut -d= -f2 | tr 'A-F' 'a-f') && "
             "{ echo 1024; printf '%%s%%0256x' \"$m\" 65537 | fold -w 64; echo; echo .; } > code_sign_key.txt && "
             "{ printf '%%s' \"$(md5sum %s | cut -c1-32)\" | openssl pkeyutl -sign -inkey $K "
             "| od -An -v -tx1 | tr -d ' \\n' | fold -w 64; echo; echo .; } > %s.sig",
             dir, key, file_name, file_name);
    assert_int_equal(system(cmd), 0);
}

static void test_key_files(void **state)
{
    struct fx *f = *state;
    struct stat st;
    assert_int_equal(stat(f->key, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char *pem = slurp(f->key);
    assert_non_null(strstr(pem, "-----BEGIN PRIVATE KEY-----"));
    free(pem);

    /* the public key file is what sign_public_key_text derives */
    char err[256] = "";
    char *text = sign_public_key_text(f->key, err, sizeof err);
    assert_non_null(text);
    char *file = slurp(f->pub);
    assert_string_equal(text, file);
    free(text);
    free(file);

    /* never replaces an existing signing key */
    err[0] = 0;
    assert_int_equal(sign_generate_key(f->key, f->pub, err, sizeof err), -1);
    assert_non_null(strstr(err, "already exists"));
}

static void test_public_key_layout(void **state)
{
    struct fx *f = *state;
    char err[256] = "";
    char *text = sign_public_key_text(f->key, err, sizeof err);
    assert_non_null(text);
    assert_true(strncmp(text, "1024\n", 5) == 0);
    size_t len = strlen(text);
    assert_true(len > 3);
    assert_string_equal(text + len - 3, "\n.\n");

    /* 8 lines of 64 lowercase hex digits between the two */
    const char *p = text + 5;
    size_t hex = 0;
    for (int line = 0; line < 8; line++) {
        for (int i = 0; i < 64; i++, p++, hex++)
            assert_non_null(strchr("0123456789abcdef", *p));
        assert_int_equal(*p++, '\n');
    }
    assert_int_equal(hex, 512);
    assert_string_equal(p, ".\n");
    /* exponent 65537 as a 128-byte big-endian number: 250 zeros, 010001 */
    const char *exp_line = text + 5 + 7 * 65;
    assert_memory_equal(exp_line, "0000000000000000000000000000000000000000000000000000000000010001", 64);
    /* the modulus of a 1024-bit key has its top bit set */
    assert_true(strchr("89abcdef", text[5]) != NULL);
    /* the text is a key; cut, or with a digit gone, it is none */
    assert_int_equal(sign_public_key_valid(text), 1);
    text[5 + 3 * 65] = 0;
    assert_int_equal(sign_public_key_valid(text), 0);
    assert_int_equal(sign_public_key_valid(""), 0);
    assert_int_equal(sign_public_key_valid("1024\nnot hex\n.\n"), 0);
    free(text);
}

static void test_sign_and_verify(void **state)
{
    struct fx *f = *state;
    char err[256] = "";
    char *pub = slurp(f->pub);
    char *sig = sign_file(f->key, f->file, err, sizeof err);
    assert_non_null(sig);
    assert_int_equal(strlen(sig), 4 * 65 + 2);
    assert_string_equal(sig + strlen(sig) - 3, "\n.\n");
    assert_int_equal(sign_verify_file(pub, f->file, sig), 1);

    /* a tampered file fails */
    put(f->file, "#!/bin/sh\necho hello from app_2\n");
    assert_int_equal(sign_verify_file(pub, f->file, sig), 0);

    /* a tampered signature fails, a truncated one is invalid too */
    put(f->file, "#!/bin/sh\necho hello from app_1\n");
    assert_int_equal(sign_verify_file(pub, f->file, sig), 1);
    sig[10] = sig[10] == '0' ? '1' : '0';
    assert_int_equal(sign_verify_file(pub, f->file, sig), 0);
    assert_int_equal(sign_verify_file(pub, f->file, "abcdef\n.\n"), 0);
    assert_int_equal(sign_verify_file(pub, f->file, "not hex at all"), 0);

    /* errors: bad key text, missing file */
    assert_int_equal(sign_verify_file("1024\n00\n.\n", f->file, sig), -1);
    assert_int_equal(sign_verify_file("", f->file, sig), -1);
    char missing[300];
    path_in(f, missing, sizeof missing, "missing");
    assert_int_equal(sign_verify_file(pub, missing, sig), -1);
    free(sig);
    free(pub);
}

static void test_other_key_rejects(void **state)
{
    struct fx *f = *state;
    char key2[300], pub2[300], err[256] = "";
    path_in(f, key2, sizeof key2, "other.pem");
    path_in(f, pub2, sizeof pub2, "other.txt");
    assert_int_equal(sign_generate_key(key2, pub2, err, sizeof err), 0);
    char *pub = slurp(f->pub), *other = slurp(pub2);
    assert_string_not_equal(pub, other);
    char *sig = sign_file(key2, f->file, err, sizeof err);
    assert_non_null(sig);
    assert_int_equal(sign_verify_file(other, f->file, sig), 1);
    assert_int_equal(sign_verify_file(pub, f->file, sig), 0);
    free(sig);
    free(pub);
    free(other);
}

/* key rollover: the new key text signed with the old key */
static void test_sign_text(void **state)
{
    struct fx *f = *state;
    char err[256] = "";
    char *pub = slurp(f->pub);
    const char *new_key = "1024\nabcdef\n.\n";
    char *sig = sign_text(f->key, new_key, err, sizeof err);
    assert_non_null(sig);
    assert_int_equal(sign_verify_text(pub, new_key, sig), 1);
    assert_int_equal(sign_verify_text(pub, "1024\nabcdee\n.\n", sig), 0);
    free(sig);
    free(pub);
}

static void test_matches_openssl_recipe(void **state)
{
    struct fx *f = *state;
    char err[256] = "";
    run_recipe(f->dir, f->key, "app_1");
    char want[300];
    path_in(f, want, sizeof want, "code_sign_key.txt");

    char *cli_key = slurp(want), *ours_key = sign_public_key_text(f->key, err, sizeof err);
    assert_non_null(ours_key);
    assert_string_equal(ours_key, cli_key);

    path_in(f, want, sizeof want, "app_1.sig");
    char *cli_sig = slurp(want), *ours_sig = sign_file(f->key, f->file, err, sizeof err);
    assert_non_null(ours_sig);
    assert_string_equal(ours_sig, cli_sig);
    assert_int_equal(sign_verify_file(ours_key, f->file, cli_sig), 1);
    free(cli_key);
    free(ours_key);
    free(cli_sig);
    free(ours_sig);
}

/* a key made by `openssl genrsa 1024`, as the protocol notes suggest, is
 * read too and still gives the recipe's texts */
static void test_openssl_genrsa_key(void **state)
{
    struct fx *f = *state;
    char key[300], cmd[700], want[300], err[256] = "";
    path_in(f, key, sizeof key, "genrsa.pem");
    snprintf(cmd, sizeof cmd, "openssl genrsa -out '%s' 1024 2>/dev/null", key);
    assert_int_equal(system(cmd), 0);
    put(f->file, "");   /* the empty file has an MD5 too */
    run_recipe(f->dir, key, "app_1");

    char *ours = sign_public_key_text(key, err, sizeof err);
    assert_non_null(ours);
    path_in(f, want, sizeof want, "code_sign_key.txt");
    char *cli = slurp(want);
    assert_string_equal(ours, cli);
    free(ours);
    free(cli);

    ours = sign_file(key, f->file, err, sizeof err);
    assert_non_null(ours);
    path_in(f, want, sizeof want, "app_1.sig");
    cli = slurp(want);
    assert_string_equal(ours, cli);
    free(ours);
    free(cli);
}

static void test_errors(void **state)
{
    struct fx *f = *state;
    char path[300], cmd[700], err[256] = "";

    /* missing key file */
    path_in(f, path, sizeof path, "nope.pem");
    assert_null(sign_file(path, f->file, err, sizeof err));
    assert_non_null(strstr(err, "nope.pem"));

    /* not a key: OpenSSL's reason is in the message */
    path_in(f, path, sizeof path, "junk.pem");
    put(path, "this is not a PEM file\n");
    err[0] = 0;
    assert_null(sign_public_key_text(path, err, sizeof err));
    assert_non_null(strstr(err, "cannot read private key"));

    /* a 2048-bit key would overflow the client's parser */
    path_in(f, path, sizeof path, "big.pem");
    snprintf(cmd, sizeof cmd, "openssl genrsa -out '%s' 2048 2>/dev/null", path);
    assert_int_equal(system(cmd), 0);
    err[0] = 0;
    assert_null(sign_public_key_text(path, err, sizeof err));
    assert_non_null(strstr(err, "2048 bits"));
    assert_null(sign_file(path, f->file, err, sizeof err));

    /* missing file to sign */
    path_in(f, path, sizeof path, "missing");
    err[0] = 0;
    assert_null(sign_file(f->key, path, err, sizeof err));
    assert_non_null(strstr(err, "missing"));

    /* folder of the key does not exist */
    path_in(f, path, sizeof path, "no/such/dir/k.pem");
    err[0] = 0;
    assert_int_equal(sign_generate_key(path, path, err, sizeof err), -1);
    assert_true(err[0] != 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_key_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_public_key_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sign_and_verify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_key_rejects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sign_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matches_openssl_recipe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_openssl_genrsa_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
