/* passwd.h - how the store keeps a volunteer's password. The BOINC client
 * never sends the password itself but its "passwd_hash", the MD5 of the
 * password followed by the lower-cased e-mail address: fast to compute,
 * so a copy of the store holding it would give every account away to a
 * dictionary. The store keeps it only through Argon2id (libsodium), salted
 * and slow: about a tenth of a second and PASSWD_MEMORY_BYTES of memory per
 * check. Callers bound how many checks run at once. */
#ifndef LOCUS_PASSWD_H
#define LOCUS_PASSWD_H
#include <stddef.h>

#define PASSWD_STORED_MAX 128                /* bytes of the stored text, NUL included */
#define PASSWD_MEMORY_BYTES (64u << 20)      /* libsodium's "interactive" memory limit */

/* Derives the text to store for passwd (NUL-terminated; the client's
 * passwd_hash) into out. 0, or -1 if libsodium cannot start or the memory
 * is lacking. */
int passwd_store(const char *passwd, char out[PASSWD_STORED_MAX]);
/* 1 if passwd is the one stored (as passwd_store made it), 0 if not or if
 * stored is no such text. */
int passwd_check(const char *stored, const char *passwd);
#endif
