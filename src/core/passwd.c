/* passwd.c - Argon2id over the client's passwd_hash (passwd.h). */
#include "core/passwd.h"
#include <sodium.h>
#include <string.h>

_Static_assert(crypto_pwhash_STRBYTES <= PASSWD_STORED_MAX, "stored password text does not fit");
_Static_assert(crypto_pwhash_MEMLIMIT_INTERACTIVE == PASSWD_MEMORY_BYTES, "memory limit changed");

int passwd_store(const char *passwd, char out[PASSWD_STORED_MAX])
{
    if (sodium_init() < 0) return -1;   /* idempotent and thread-safe */
    return crypto_pwhash_str(out, passwd, strlen(passwd), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                             crypto_pwhash_MEMLIMIT_INTERACTIVE) ? -1 : 0;
}

int passwd_check(const char *stored, const char *passwd)
{
    if (sodium_init() < 0 || strnlen(stored, PASSWD_STORED_MAX) == PASSWD_STORED_MAX) return 0;
    return crypto_pwhash_str_verify(stored, passwd, strlen(passwd)) == 0;
}
