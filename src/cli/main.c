/* main.c - `locus`, the project's command-line tool: finds the command in
 * the table, runs it, and turns its result into one line on stderr and the
 * exit status (0 success, 1 failure, 2 usage). */
#include "cli/cli.h"
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>

struct command {
    const char *group, *sub;     /* "batch", "create"; sub is NULL for one-word commands */
    cli_command *run;
    const char *args;
};

static const struct command commands[] = {
    {"init", NULL, cmd_init, "DIR --url URL [--name NAME]"},
    {"app", "add", cmd_app_add,
     "DIR NAME --platform P --exe PATH --version N [--api-version 7.20.0] [--avg-ncpus 1] [--plan-class NAME] "
     "[--friendly-name TEXT] [--hr off|coarse|fine] [--file PATH[=OPEN_NAME]]..."},
    {"app", "set", cmd_app_set, "DIR NAME --hr off|coarse|fine"},
    {"app", "list", cmd_app_list, "DIR [--limit N] [--json]"},
    {"file", "add", cmd_file_add, "DIR PATH [--name NAME] [--sticky] [--report-on-rpc]"},
    {"file", "list", cmd_file_list, "DIR [--limit N] [--json]"},
    {"host", "list", cmd_host_list, "DIR [--limit N] [--json]"},
    {"user", "create", cmd_user_create, "DIR NAME [--role volunteer|submitter|admin]"},
    {"user", "list", cmd_user_list, "DIR [--limit N] [--json]"},
    {"user", "account-key", cmd_user_account_key, "DIR NAME [--weak]"},
    {"team", "create", cmd_team_create, "DIR NAME --founder USER [--url URL] [--description TEXT]"},
    {"team", "join", cmd_team_join, "DIR TEAM USER"},
    {"team", "leave", cmd_team_leave, "DIR USER"},
    {"team", "list", cmd_team_list, "DIR [--limit N] [--json]"},
    {"news", "add", cmd_news_add, "DIR TITLE [TEXT|-]"},
    {"news", "list", cmd_news_list, "DIR [--json]"},
    {"news", "remove", cmd_news_remove, "DIR ID"},
    {"user", "role", cmd_user_role, "DIR NAME volunteer|submitter|admin"},
    {"user", "key", cmd_user_key, "DIR NAME [--label TEXT]"},
    {"user", "keys", cmd_user_keys, "DIR NAME"},
    {"user", "revoke", cmd_user_revoke, "DIR NAME KEY_ID"},
    {"user", "account", cmd_user_account, "DIR NAME ACCOUNT|- [--cluster NAME]"},
    {"user", "hook", cmd_user_hook, "DIR NAME [--command CMD] [--url URL]"},
    {"batch", "create", cmd_batch_create,
     "DIR --app APP (--jobs FILE.jsonl | --count N --input-template FILE.json | --generate N) [--name NAME] [--quorum Q] "
     "[--target-nresults T] [--max-error-instances E] [--max-total-instances M] [--max-success-instances S] "
     "[--delay-bound SECONDS] [--priority P] [--output OPEN_NAME:MAX_BYTES]... [--no-output] [--flops F] "
     "[--one-result-per-user] [--user NAME] [--cursors N|auto]"},
    {"batch", "add-jobs", cmd_batch_add_jobs, "DIR BATCH --first JOB_NUM --jobs FILE.jsonl"},
    {"batch", "cancel", cmd_batch_cancel, "DIR BATCH"},
    {"batch", "results", cmd_batch_results, "BATCH [--job JOB] [--output-file FILE.tar] (with --server URL)"},
    {"batch", "list", cmd_batch_list, "DIR"},
    {"batch", "show", cmd_batch_show, "DIR BATCH [--json]"},
    {"job", "show", cmd_job_show, "DIR BATCH JOB [--json]"},
    {"sequence", "create", cmd_sequence_create,
     "DIR --app APP --name NAME --length N --max-result-time SECONDS [--count C] [--restart-every K] "
     "[--output-every M] [--open] [--delay-bound SECONDS] [--flops F] [--cmdline TEXT] [--initial-state FILE] "
     "[--state-max-bytes B] [--output OPEN_NAME:MAX_BYTES]... [--no-output] [--priority P] [--user NAME] [--twins]"},
    {"sequence", "extend", cmd_sequence_extend, "DIR SEQUENCE N"},
    {"sequence", "end", cmd_sequence_end, "DIR SEQUENCE"},
    {"sequence", "list", cmd_sequence_list, "DIR"},
    {"cluster", "add", cmd_cluster_add,
     "DIR NAME --driver slurm|slurmrest|oar [--conf PATH] [--partition P] [--besteffort-partition P] [--api URL] "
     "[--ident-header H] [--api-user U] [--token-file F] [--timeout-ms N]"},
    {"cluster", "list", cmd_cluster_list, "DIR [--json]"},
    {"cluster", "set", cmd_cluster_set,
     "DIR NAME [--disabled 0|1] [--waiting-allowed N] [--cache-dir DIR] [--cache-bytes N] [--bandwidth B]"},
    {"cluster", "affinity", cmd_cluster_affinity, "DIR [NAME USER AFFINITY [--shared]]"},
    {"campaign", "submit", cmd_campaign_submit, "DIR FILE.json --user NAME [--wait SECONDS]"},
    {"campaign", "check", cmd_campaign_check, "DIR FILE.json [--user NAME]"},
    {"campaign", "add-params", cmd_campaign_add_params, "DIR ID FILE|- [--user NAME] [--wait SECONDS]"},
    {"campaign", "stat", cmd_campaign_stat, "DIR [ID] [-f] [--jobs [--state STATE]] [--users] [--json]"},
    {"campaign", "events", cmd_campaign_events, "DIR ID [--json]"},
    {"campaign", "results", cmd_campaign_results,
     "DIR ID [--job JOB] [--json] (the outputs' list) | with --server URL: ID [--job JOB] [--output-file FILE.tar]"},
    {"campaign", "fix", cmd_campaign_fix, "DIR EVENT [--resubmit] [--user NAME] [--wait SECONDS]"},
    {"campaign", "pause", cmd_campaign_pause, "DIR ID [--user NAME] [--wait SECONDS]"},
    {"campaign", "resume", cmd_campaign_resume, "DIR ID [--user NAME] [--wait SECONDS]"},
    {"campaign", "cancel", cmd_campaign_cancel, "DIR ID [--user NAME] [--wait SECONDS]"},
    {"campaign", "clusters", cmd_campaign_clusters, "DIR [--json]"},
    {"campaign", "share", cmd_campaign_share, "DIR USER WEIGHT [--wait SECONDS]"},
    {"campaign", "project-share", cmd_campaign_project_share, "DIR PROJECT WEIGHT [--wait SECONDS]"},
    {"stat", NULL, cmd_stat, "DIR [BATCH] [--json]"},
    {"stats", "export", cmd_stats_export, "DIR [--out FOLDER]"},
    {"db", "check", cmd_db_check, "DIR [--md5]"},
    {"db", "purge", cmd_db_purge, "DIR [--dry-run] [--days D] [--host-days D]"},
    {"db", "backup", cmd_db_backup, "DIR DEST"},
    {"db", "restore", cmd_db_restore, "BACKUP DIR"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* The commands that also go to a server (`locus --server URL ...`), where
 * the API has their order; they then take no DIR. */
static const char *const remote_commands[] = {"file add", "batch create", "batch cancel", "batch results", "stat",
                                              "sequence create", "sequence extend", "sequence end",
                                              "campaign submit", "campaign add-params", "campaign stat",
                                              "campaign events", "campaign results", "campaign fix", "campaign pause",
                                              "campaign resume", "campaign cancel"};

/* The commands of group (NULL: all of them), one per line. */
static void usage(FILE *out, const char *group)
{
    fprintf(out, "usage: locus COMMAND PROJECT_DIR ...\n"
                 "   or: locus --server URL [--key-file FILE] [--cacert FILE] COMMAND ... (file add, batch create, "
                 "batch cancel, batch results, stat, sequence create|extend|end, campaign "
                 "submit|add-params|stat|events|results|fix|pause|resume|cancel: without DIR; the key also from "
                 "LOCUS_KEY or LOCUS_KEY_FILE)\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!group || !strcmp(group, commands[i].group))
            fprintf(out, "  locus %s%s%s %s\n", commands[i].group, commands[i].sub ? " " : "",
                commands[i].sub ? commands[i].sub : "", commands[i].args);
}

/* The command named by argv[1] (and argv[2]); NULL if none. */
static const struct command *find(int argc, char **argv)
{
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const struct command *c = &commands[i];
        if (strcmp(argv[1], c->group)) continue;
        if (!c->sub || (argc > 2 && !strcmp(argv[2], c->sub))) return c;
    }
    return NULL;
}

/* Whether word names a group of commands ("campaign"), not a command. */
static int is_group(const char *word)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (commands[i].sub && !strcmp(word, commands[i].group)) return 1;
    return 0;
}

static int remote_command(const struct command *c)
{
    char words[64];
    snprintf(words, sizeof words, "%s%s%s", c->group, c->sub ? " " : "", c->sub ? c->sub : "");
    for (size_t i = 0; i < sizeof remote_commands / sizeof *remote_commands; i++)
        if (!strcmp(words, remote_commands[i])) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    umask(PROJECT_UMASK);   /* what locus creates in a project is its owner's alone */
    char err[CLI_ERR_MAX] = "";
    int rc = cli_remote_options(&argc, &argv, err, sizeof err);
    if (rc) {
        fprintf(stderr, "locus: %s\n", err);
        return rc;
    }
    if (argc < 2) {
        usage(stderr, NULL);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout, NULL);
        return CLI_OK;
    }
    const struct command *c = find(argc, argv);
    if (!c && is_group(argv[1])) {
        /* a group alone or with a wrong word ("locus campaign"): what it offers */
        if (argc > 2) fprintf(stderr, "locus: unknown command '%s %s'\n", argv[1], argv[2]);
        usage(stderr, argv[1]);
        return CLI_USAGE;
    }
    if (!c) {
        fprintf(stderr, "locus: unknown command '%s': run 'locus help' for the list\n", argv[1]);
        return CLI_USAGE;
    }
    if (cli_remote() && !remote_command(c)) {
        fprintf(stderr, "locus: %s%s%s works on the server's folder only: run it there, without --server\n", c->group,
                c->sub ? " " : "", c->sub ? c->sub : "");
        return CLI_USAGE;
    }
    int skip = c->sub ? 3 : 2;
    rc = c->run(argc - skip, argv + skip, err, sizeof err);
    fflush(stdout);
    if (rc == CLI_USAGE)
        fprintf(stderr, "locus: %s%s%s: %s (usage: locus %s%s%s %s)\n", c->group, c->sub ? " " : "",
                c->sub ? c->sub : "", err, c->group, c->sub ? " " : "", c->sub ? c->sub : "", c->args);
    else if (rc)
        fprintf(stderr, "locus: %s\n", err);
    return rc;
}
