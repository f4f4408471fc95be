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
#endif
