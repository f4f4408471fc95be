/* tls_creds.h - the certificate and private key locusd serves HTTPS with
 * (config.xml's <https_cert> and <https_key>), read whole and checked
 * before any port is opened: each file parses as PEM, the key is the
 * certificate's, and the key file is no other user's to read. A bad pair
 * then stops the start with the reason, instead of failing every host's
 * handshake later or serving plain HTTP alone.
 *
 * Functions with err/errlen write a one-line reason there; nothing is
 * printed. */
#ifndef LOCUS_TLS_CREDS_H
#define LOCUS_TLS_CREDS_H
#include <stddef.h>

/* A certificate chain with a few intermediates, or a key, is a few KiB;
 * anything near this is not one. */
#define TLS_PEM_MAX (1u << 20)

struct tls_creds {
    char *cert;          /* PEM text, the server's certificate first, then its chain; owned */
    char *key;           /* PEM text of the unencrypted private key; owned, wiped when freed */
    char warning[512];   /* "" or what the operator should fix, though serving is possible:
                            a key its group may read, a certificate outside its dates */
};

/* Reads and checks cert_path and key_path into c (zeroed first). -1 with
 * the reason, c left empty, when a file is missing or unreadable, is not
 * PEM, the key is encrypted or not the certificate's, or the key file is
 * readable by others than its owner and group. */
int tls_creds_load(const char *cert_path, const char *key_path, struct tls_creds *c, char *err, size_t errlen);
/* Frees c's texts, the key wiped first; c is left empty. */
void tls_creds_free(struct tls_creds *c);
#endif
