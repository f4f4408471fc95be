/* cli.h - what the `locus` commands share: exit codes, error messages,
 * a small declarative option parser, opening a project with its store, and
 * the commands themselves (one function per command, called by main.c and
 * by the unit tests with an argv that starts after the command words).
 *
 * Errors: every function writes one line (no "locus: " prefix, no newline)
 * into err and returns CLI_FAIL or CLI_USAGE; nothing is printed below
 * main(), except a command's normal output on stdout. */
#ifndef LOCUS_CLI_H
#define LOCUS_CLI_H
#include "core/project.h"
#include "model/model.h"
#include "orders/batch_order.h"
#include "store/store.h"
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

#define CLI_ERR_MAX 1024

/* Writes the message into err and returns code, so that a failing branch
 * is one statement: return cli_errf(err, errlen, CLI_FAIL, "...", ...). */
int cli_errf(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- options ---- */

enum cli_opt_kind {
    OPT_FLAG,     /* int: set to 1 */
    OPT_STR,      /* const char *: the argument itself (points into argv) */
    OPT_INT,      /* int: a whole decimal integer */
    OPT_DOUBLE,   /* double: a finite number */
    OPT_LIST,     /* struct cli_list: each occurrence appended */
};

#define CLI_LIST_MAX 16
struct cli_list {
    const char *v[CLI_LIST_MAX];
    int n;
};

struct cli_opt {
    const char *name;          /* without the leading "--"; NULL ends a table */
    enum cli_opt_kind kind;
    void *dest;
    int required;
    int seen;                  /* set by cli_parse: the option was given */
};

/* Parses "--name VALUE", "--name=VALUE" and flags anywhere in argv, and up
 * to maxpos positional arguments into pos[] (unset ones become NULL); "--"
 * ends the options. CLI_USAGE with a message for an unknown option, a
 * missing or malformed value, a missing required option, or a wrong number
 * of positional arguments. */
int cli_parse(int argc, char **argv, struct cli_opt *opts, const char **pos, int minpos, int maxpos,
              char *err, size_t errlen);
/* Whether the option called name was given. */
int cli_seen(const struct cli_opt *opts, const char *name);

/* Reads standard input (at most max bytes) into *text (owned), its
 * length into *len; CLI_FAIL naming what went wrong. */
int cli_read_stdin(size_t max, char **text, size_t *len, char *err, size_t errlen);

/* ---- projects ---- */

struct cli_project {
    struct project p;
    struct store *s;
};

/* Loads dir's config.xml and opens its store with store flags (0 or
 * STORE_READONLY). Close with cli_close (also after a failed open). */
int cli_open(struct cli_project *cp, const char *dir, int store_flags, char *err, size_t errlen);
void cli_close(struct cli_project *cp);

/* ---- files ---- */

/* Files copied into a project by one command, unlinked again by
 * cli_transaction when the transaction fails, so nothing is left half-made. */
struct cli_copies {
    char *paths[CLI_LIST_MAX + 1];
    int n;
};
/* Copies src to the project's download area as name (fan-out folder
 * created), atomically; fills f's md5 and nbytes from the copy. */
int cli_copy_to_download(const struct project *p, struct cli_copies *c, const char *src, const char *name,
                         struct file_rec *f, char *err, size_t errlen);

/* Runs body inside one store transaction: commits when it returns 0, else
 * rolls back and unlinks the files it copied. Returns body's code, or
 * CLI_FAIL when the transaction cannot begin or commit. */
typedef int cli_tx_body(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen);
int cli_transaction(struct cli_project *cp, cli_tx_body *body, void *ctx, char *err, size_t errlen);

/* 0 if path is a regular file this process can read, else CLI_FAIL and why. */
int cli_check_source(const char *path, char *err, size_t errlen);
/* Removes a folder and everything below it (no symlinks followed). */
int cli_remove_tree(const char *path);
/* The last component of path, without trailing slashes, into out. */
void cli_basename(const char *path, char *out, size_t len);
/* A batch's outputs from --output OPEN_NAME:MAX_BYTES options (at most
 * MAX_OUTPUTS, distinct), the default "out", or none with --no-output
 * (none set): into b->outputs. 0, or CLI_USAGE / CLI_FAIL and why. */
int cli_batch_outputs(struct batch *b, const struct cli_list *outs, int none, char *err, size_t errlen);
/* Ids of an app and of a user (user NULL: *user_id untouched) by name;
 * CLI_FAIL naming the unknown one. */
int cli_app_user(struct store *s, const char *app, const char *user, int64_t *app_id, int64_t *user_id, char *err,
                 size_t errlen);
/* The id of the user called user into *id; CLI_FAIL naming it if unknown. */
int cli_user_id(struct store *s, const char *user, int64_t *id, char *err, size_t errlen);
/* What a batch cancel did to the batch called name, whose state was the
 * state named was before: one line on stdout, locally and remotely the same. */
void cli_print_cancel(const char *name, const char *was);

/* ---- a remote server (remote.c): `locus --server URL ...` ---- */

/* Takes the options before the command words off argv (--server URL,
 * --key KEY, --key-file FILE, --cacert FILE; else LOCUS_SERVER,
 * LOCUS_KEY_FILE, LOCUS_KEY, LOCUS_CACERT), leaving argv as if they were
 * not there. 0, or CLI_USAGE / CLI_FAIL and why. */
int cli_remote_options(int *argc, char ***argv, char *err, size_t errlen);
/* Whether the commands go to a server (no project folder is named then). */
int cli_remote(void);
/* method /api/v1/path with body (taken; NULL: {} for a POST, none for a
 * GET): 0 with the JSON answer in *answer (owned), or CLI_FAIL with the
 * server's error message and HTTP status, or why no answer came. */
int remote_json(const char *method, const char *path, json_t *body, json_t **answer, char *err, size_t errlen);
/* As remote_json with the body's JSON text as it is (borrowed; NULL as
 * remote_json's NULL): for a body the server is to judge as written. */
int remote_text(const char *method, const char *path, const char *text, json_t **answer, char *err, size_t errlen);
/* key %-escaped for a URL path (owned). */
char *remote_escape(const char *key);
/* PUT /api/v1/files/NAME from src (f: the name and flags), with its
 * SHA-256 for the server to check; prints what happened as file add does. */
int remote_file_add(const char *src, struct file_rec *f, char *err, size_t errlen);
/* GET /api/v1/path into the file dest, through dest.part renamed when
 * whole (removed otherwise). */
int remote_download(const char *path, const char *dest, char *err, size_t errlen);
/* The options seen in opts as an order's JSON object (owned): the same
 * names with '_' for '-' ("--delay-bound 60": "delay_bound": 60), a list
 * option plural ("--output": "outputs"), those named in skip (NULL ends it)
 * left out. */
json_t *remote_opts_json(const struct cli_opt *opts, const char *const *skip);
/* What file add did, locally and remotely the same. */
void cli_print_file_added(const struct file_rec *f, int existed);

/* ---- output ---- */

/* A duration left as "-" (s <= 0, nothing left or unknown), "42s",
 * "3m05s", "2h10m" or "1d04h" into out. */
void cli_format_eta(double s, char *out, size_t len);
/* Prints root (owned: released) as one compact JSON line on stdout. */
void cli_print_json(json_t *root);

/* ---- commands: argv holds what follows the command words ---- */
typedef int cli_command(int argc, char **argv, char *err, size_t errlen);
cli_command cmd_init, cmd_app_add, cmd_app_set, cmd_file_add, cmd_user_create, cmd_user_role, cmd_user_key, cmd_user_keys,
    cmd_user_revoke, cmd_user_account, cmd_user_hook, cmd_batch_create, cmd_batch_add_jobs,
    cmd_batch_cancel, cmd_batch_results,
    cmd_batch_list, cmd_stat, cmd_db_check, cmd_sequence_create, cmd_sequence_extend, cmd_sequence_end,
    cmd_sequence_list, cmd_cluster_add, cmd_cluster_list, cmd_cluster_set, cmd_cluster_affinity, cmd_campaign_submit, cmd_campaign_stat,
    cmd_campaign_events, cmd_campaign_results, cmd_campaign_fix, cmd_campaign_pause, cmd_campaign_resume, cmd_campaign_cancel,
    cmd_campaign_clusters, cmd_campaign_share, cmd_campaign_add_params,
    cmd_campaign_project_share;

/* ---- what happened to jobs (cmd_job.c; the views are store/store_job_view.h's) ---- */
struct failure_group;
/* t as local "YYYY-mm-dd HH:MM:SS", or "-" for 0 (not yet, never). */
void cli_format_time(int64_t t, char *out, size_t len);
/* One group of errors in one line: "client_error, exit 3: primes: cannot open table". */
void cli_format_error(const struct failure_group *g, char *out, size_t len);
cli_command cmd_job_show, cmd_batch_show;

/* ---- listings (cmd_list.c) and checks that submit nothing ---- */
cli_command cmd_news_add, cmd_news_list, cmd_news_remove;
cli_command cmd_db_backup, cmd_db_purge, cmd_db_restore, cmd_team_create, cmd_team_join, cmd_team_leave, cmd_team_list,
    cmd_user_account_key, cmd_user_list, cmd_app_list, cmd_file_list, cmd_host_list, cmd_campaign_check,
    cmd_stats_export;
#endif
