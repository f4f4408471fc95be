/* am_rpc.h - the web RPCs BOINC's account managers (BAM!, Science United,
 * GridRepublic) and clients read and set an account with, as BOINC's PHP
 * answers them: am_get_info.php, am_set_info.php, am_set_host_info.php,
 * and team_lookup.php. Pure: text in, text out; the driver
 * (server/web_am.c) does the keys, the store and the allowance. The
 * requests and replies are in docs/accounts.md. */
#ifndef LOCUS_AM_RPC_H
#define LOCUS_AM_RPC_H
#include "core/strbuf.h"
#include "model/model.h"
#include <stddef.h>
#include <stdint.h>

#define BOINC_ERR_XML_PARSE (-112)   /* am_set_info: preferences that are no document of theirs */
#define AM_ERR_GENERIC (-1)          /* BOINC's xml_error(-1, ...): anything without a number of its own */

/* What am_get_info.php tells of an account (borrowed for the call). */
struct am_info {
    int64_t id, create_time, team_id;
    const char *name, *weak_auth, *cpid;
    const struct user_profile *p;
    int team_founder;                 /* the account founded its team */
};

/* Appends am_get_info.php's reply. As BOINC's, the name, country, postal
 * code and URL are URL-encoded (PHP's urlencode) and the preferences are
 * the documents as they were set (am_prefs_ok checked them). */
void am_info_xml(struct strbuf *out, const struct am_info *a);
/* Appends <ROOT><success/></ROOT>, the reply of a change that worked
 * (ROOT is am_set_info_reply or am_set_host_info_reply). */
void am_success_xml(struct strbuf *out, const char *root);
/* Appends one team as BOINC's show_team_xml writes it (founder_name is
 * not in it: BOINC gives the founder's id). */
void am_team_xml(struct strbuf *out, const struct team *t);
/* Appends s encoded as PHP's urlencode does: letters, digits and "-_."
 * as they are, ' ' as '+', every other byte as %XX. */
void am_urlencode(struct strbuf *out, const char *s);

/* Argument checks, each 1 if the text may be kept, else 0. */
/* A venue: "", "home", "work" or "school" (BOINC's). */
int am_venue_ok(const char *v);
/* "0" or "1" into *flag. */
int am_flag_parse(const char *text, int *flag);
/* A country or postal code: at most PROFILE_TEXT_MAX bytes, no control
 * characters (UTF-8 is kept as it is). */
int am_text_ok(const char *text);
/* A user's URL: "" or http:// or https:// and at most PROFILE_TEXT_MAX
 * printable ASCII characters without blanks, quotes or angle brackets. */
int am_url_ok(const char *url);
/* A preferences document: at most PREFS_MAX bytes, well-formed XML (no
 * entity declarations) whose one root element is root
 * (global_preferences or project_preferences). BOINC checks only that the
 * text starts and ends with those tags and has a line break; as its reply
 * carries the text as it is, anything less than XML would break the
 * reader of the reply. Else 0 with the reason in why. */
int am_prefs_ok(const char *text, const char *root, char *why, size_t whylen);
/* The <mod_time> of a preferences document (am_prefs_ok's), a direct
 * child of its root: 0 when it has none or the text is no document. */
double am_prefs_mod_time(const char *text);
/* A positive decimal id without sign or leading zero, at most 18 digits,
 * into *id; or "0" (0) when zero_ok. */
int am_id_parse(const char *text, int zero_ok, int64_t *id);
#endif
