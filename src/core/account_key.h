/* account_key.h - account keys that the project can give again. BOINC's
 * lookup_account hands an account's key to whoever proves its password,
 * and a volunteer attaches every host with that one key; but the store
 * keeps only a key's SHA-256 (a copy of the store must not let anyone in).
 * So a key is not drawn at random: it is a MAC of the user's id and key
 * generation under the project's account secret (keys/account_key, mode
 * 0600, the format of upload_cert.h), made again on demand. A new
 * generation replaces a leaked key; generation 0 marks a key drawn at
 * random before keys were made so, which cannot be made again. */
#ifndef LOCUS_ACCOUNT_KEY_H
#define LOCUS_ACCOUNT_KEY_H
#include "core/project.h"
#include "core/upload_cert.h"
#include <stdint.h>

#define ACCOUNT_KEY_LEN 32         /* hex characters, as BOINC's keys */
#define ACCOUNT_KEY_GEN_RANDOM 0   /* a key drawn at random: not made again */
#define ACCOUNT_KEY_FILE "keys/account_key"
/* A weak key: "ID_" and 32 hex digits, as BOINC's (user id, '_', a hash) */
#define WEAK_KEY_HASH_LEN 32
#define WEAK_KEY_MAX (20 + 1 + WEAK_KEY_HASH_LEN)

/* Reads the account secret of project p into *secret, or makes it (at
 * the time now) if it has none yet. 0, or -1 with the reason in err. */
int account_secret_load(const struct project *p, int64_t now, struct upload_key *secret, char *err, size_t errlen);
/* The key of generation gen (>= 1) of user user_id, in lowercase hex,
 * into out. Never fails. */
void account_key_make(const struct upload_key *secret, int64_t user_id, int gen, char out[ACCOUNT_KEY_LEN + 1]);
/* User user_id's cross-project id, BOINC's user.cross_project_id: a
 * secret the statistics export hashes with the e-mail address into the
 * public cpid (store/stats_export.h). BOINC draws it at random and keeps
 * it; locus makes it again from the account secret (another label than
 * the keys', so neither tells the other), which needs no column and stays
 * the same for as long as the secret does. Lowercase hex into out. Never
 * fails. */
void account_cross_project_id(const struct upload_key *secret, int64_t user_id, char out[ACCOUNT_KEY_LEN + 1]);

/* BOINC's cpid of an account, as account managers and statistics sites
 * read it: the MD5 of its cross-project id (above) and e-mail address,
 * into out in lowercase hex. Never fails. */
void account_cpid_make(const struct upload_key *secret, int64_t user_id, const char *email,
                       char out[ACCOUNT_KEY_LEN + 1]);
/* The same from the cross-project id (borrowed) already made. Never fails. */
void account_cpid_of(const char *cross_project_id, const char *email, char out[ACCOUNT_KEY_LEN + 1]);

/* BOINC's weak account key: a key that attaches a host to the account and
 * lets it compute, but opens nothing else (no account call, no API). BOINC
 * makes it "ID_" + MD5(account key, password hash), so it changes with the
 * password; here the hash is a MAC under the account secret of the user's
 * id, key generation and stored password (core/passwd.h, "" none), so it
 * changes when either is replaced and a copy of the store cannot make it.
 * Written into out (NUL-terminated). Never fails. */
void account_weak_key_make(const struct upload_key *secret, int64_t user_id, int gen, const char *passwd,
                           char out[WEAK_KEY_MAX + 1]);
/* The user id a weak key names, if key has the form ID_HASH (a positive
 * decimal id without sign or leading zero, 32 lowercase hex digits): 0 and
 * *user_id set, else -1. Says nothing of whether the key is right. */
int account_weak_key_user(const char *key, int64_t *user_id);
/* 1 if key is the weak key of that user, generation and password,
 * compared in constant time; else 0. */
int account_weak_key_check(const struct upload_key *secret, int64_t user_id, int gen, const char *passwd,
                           const char *key);
#endif
