/* web_rpc.h - BOINC's account web RPCs, as the BOINC client's "Add
 * project" wizard (and boinccmd) calls them before it attaches: what
 * get_project_config.php, create_account.php and lookup_account.php
 * answer, and the checks of what they are given. Pure: text in, text out;
 * the driver (server/web_rpc.c) does the store, the passwords and the
 * limits. The exchanges with the real client are in docs/accounts.md. */
#ifndef LOCUS_WEB_RPC_H
#define LOCUS_WEB_RPC_H
#include "core/strbuf.h"
#include <stddef.h>

/* BOINC's error numbers (its lib/error_numbers.h), as <error_num>: the
 * client reacts to the number, the message is shown to the volunteer. */
enum boinc_error {
    BOINC_ERR_DB_NOT_FOUND = -136,          /* no account with that e-mail address */
    BOINC_ERR_DB_NOT_UNIQUE = -137,         /* an account has that e-mail address already */
    BOINC_ERR_PROJECT_DOWN = -183,          /* try again later (also: too many tries) */
    BOINC_ERR_BAD_USER_NAME = -188,
    BOINC_ERR_BAD_EMAIL_ADDR = -205,
    BOINC_ERR_BAD_PASSWD = -206,
    BOINC_ERR_ACCT_CREATION_DISABLED = -208, /* also a missing or wrong invitation code: the
                                                client's text for BOINC's PHP's -209 is another error's */
};

/* Who may create an account (config.xml <account_creation>). */
enum signup_mode {
    SIGNUP_CLOSED,        /* only the operator (locus user create) */
    SIGNUP_OPEN,          /* anyone */
    SIGNUP_INVITATION,    /* whoever gives one of the invitation codes */
};

#define EMAIL_MAX 254                 /* an address's longest (RFC 5321) */
#define PASSWD_HASH_LEN 32            /* the client's passwd_hash: MD5 in hex */

struct web_project_config {
    const char *name, *master_url;    /* the master URL ends with '/' */
    int min_passwd_length;
    enum signup_mode signup;
    const char *const *platforms;     /* the platforms the project has app versions for */
    int nplatforms;
    const char *terms_of_use;         /* "" none */
};

/* Appends get_project_config.php's reply to out. */
void web_project_config_xml(struct strbuf *out, const struct web_project_config *c);
/* Appends the reply of a created or found account: its key. */
void web_account_xml(struct strbuf *out, const char *account_key);
/* Appends an error reply: BOINC's number (enum boinc_error) and a message
 * for the volunteer. */
void web_error_xml(struct strbuf *out, int error_num, const char *msg);

/* The address in (NUL-terminated) lower-cased into out (len bytes) as BOINC
 * keeps it, if it looks like one: 3 to EMAIL_MAX printable ASCII characters
 * without blanks, quotes or angle brackets, one '@' with text before it and
 * a dotted domain after it, no '.' at either end of either part nor two in
 * a row. 0, or -1 (out then empty). */
int web_email_normalize(const char *in, char *out, size_t len);
/* 1 if h is a passwd_hash: PASSWD_HASH_LEN hex digits. */
int web_passwd_hash_ok(const char *h);
#endif
