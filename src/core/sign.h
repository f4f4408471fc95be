/* sign.h - BOINC code signing: the project's RSA key, the <code_sign_key>
 * text the client stores, and <file_signature> texts for app files.
 *
 * The scheme, as the BOINC client checks it: a 1024-bit RSA key (the
 * client cannot parse larger ones); what is signed is the 32-char lowercase
 * hex MD5 of the file, as ASCII, with PKCS#1 v1.5 type-1 padding and no
 * DigestInfo (what `openssl pkeyutl -sign` does). Texts are hex folded at 64
 * characters per line and end with a line ".". The output is byte-identical
 * to that of `openssl pkeyutl -sign` on the hex digest.
 *
 * Errors: functions that take err/errlen write a one-line message there
 * (with OpenSSL's reason when it failed); nothing is printed. Returned
 * strings are malloc'd and owned by the caller (free()). */
#ifndef LOCUS_SIGN_H
#define LOCUS_SIGN_H
#include <stddef.h>

#define SIGN_KEY_BITS 1024

/* Generates a 1024-bit RSA key with exponent 65537. Writes the private key
 * as PEM (PKCS#8, unencrypted) with mode 0600 and the public key text of
 * sign_public_key_text() to public_key_path, each atomically. Refuses to
 * overwrite an existing private key: clients trust the first key they see,
 * so losing it means every attached host rejects new app versions.
 * 0 on success, -1 on error. */
int sign_generate_key(const char *private_pem_path, const char *public_key_path,
                      char *err, size_t errlen);

/* The <code_sign_key> body for the key in private_pem_path (any PEM private
 * key OpenSSL reads, e.g. from `openssl genrsa 1024`): "1024\n", the 128-byte
 * big-endian modulus then the exponent as a 128-byte big-endian number, in
 * lowercase hex folded at 64, then ".\n". NULL on error (also for a key that
 * is not RSA-1024). */
char *sign_public_key_text(const char *private_pem_path, char *err, size_t errlen);

/* The <file_signature> body for file_path: 128 signature bytes in lowercase
 * hex folded at 64, then ".\n". NULL on error. */
char *sign_file(const char *private_pem_path, const char *file_path, char *err, size_t errlen);

/* The same over the MD5 of a string; used for <code_sign_key_signature>,
 * the new key text signed with the old key at key rollover. */
char *sign_text(const char *private_pem_path, const char *text, char *err, size_t errlen);

/* Checks a signature the way the client does: parse the public key text,
 * recover the signed bytes and compare their first 32 characters with the
 * MD5 hex of the file (or text). 1 valid, 0 invalid (including a signature
 * text that is not 128 bytes of hex), -1 error (bad key text, unreadable
 * file, out of memory). */
int sign_verify_file(const char *public_key_text, const char *file_path,
                     const char *signature_text);
int sign_verify_text(const char *public_key_text, const char *text,
                     const char *signature_text);
/* 1 if public_key_text (borrowed) is a public key the functions above
 * read, 0 if not (damaged, cut, not a key); never fails otherwise. */
int sign_public_key_valid(const char *public_key_text);
#endif
