/* upload_cert.h - upload certificates: what proves that an upload comes
 * from the host that was sent the instance. Output file names are
 * guessable (batch, job id, copy number), so the name alone proves
 * nothing. Each output file_info of a reply carries a certificate, a keyed
 * MAC (HMAC-SHA256) of the file's name under the project's upload key,
 * which only that host sees; the BOINC client sends the file_info back,
 * certificate included (as <xml_signature>), with every upload of the
 * file, and the upload handler accepts only a certificate it made.
 *
 * The key is 32 random bytes in keys/upload_key (mode 0600) with the time
 * it was made: instances sent before that carry no certificate. Functions
 * with err/errlen write a one-line reason there; nothing is printed. */
#ifndef LOCUS_UPLOAD_CERT_H
#define LOCUS_UPLOAD_CERT_H
#include <stddef.h>
#include <stdint.h>

#define UPLOAD_KEY_BYTES 32
#define UPLOAD_CERT_LEN 64   /* hex characters of a certificate */

struct upload_key {
    unsigned char key[UPLOAD_KEY_BYTES];
    int64_t since;           /* unix time the key was made */
};

/* Reads the key at path, or makes one (with the time now) if there is no
 * file there; processes making it at once end with the same key. 0, or -1
 * if it cannot be read, is malformed, or cannot be written. The same file
 * format holds the project's other secrets (account_key.h). */
int upload_key_load(const char *path, int64_t now, struct upload_key *k, char *err, size_t errlen);
/* The key file's text: "since UNIX_TIME\n", then the key as
 * 2 x UPLOAD_KEY_BYTES lowercase hex digits and "\n". upload_key_format
 * writes it into out and returns its length (out holds UPLOAD_KEY_TEXT_MAX
 * bytes: every key fits; a key's since is >= 0, a time the clock gave);
 * upload_key_parse reads it back into *k: 0, or -1
 * when text is not that ("since", a decimal time, blanks, exactly that
 * many hex digits of either case, then only blanks up to the end), *k then
 * zeroed. Neither keeps a pointer to its arguments. */
#define UPLOAD_KEY_TEXT_MAX 128
int upload_key_format(const struct upload_key *k, char out[UPLOAD_KEY_TEXT_MAX]);
int upload_key_parse(const char *text, struct upload_key *k);
/* HMAC-SHA256 under k of label then text (both NUL-terminated): a label
 * per use, so that a MAC made for one use never stands for another. */
#define UPLOAD_MAC_BYTES 32
void upload_key_mac(const struct upload_key *k, const char *label, const char *text,
                    unsigned char out[UPLOAD_MAC_BYTES]);
/* The certificate of the file name, in lowercase hex, into out. */
void upload_cert_make(const struct upload_key *k, const char *name, char out[UPLOAD_CERT_LEN + 1]);
/* 1 if cert is the certificate of name (compared in constant time). */
int upload_cert_ok(const struct upload_key *k, const char *name, const char *cert);
#endif
