/* sched_reply.h - writes a BOINC scheduler reply the real 7.x client
 * accepts. The caller fills a sched_reply (all strings borrowed, none freed
 * here) and sched_reply_write appends the XML to a strbuf. Apps and files are
 * written once each even if added several times, by name. */
#ifndef LOCUS_SCHED_REPLY_H
#define LOCUS_SCHED_REPLY_H
#include "core/strbuf.h"
#include <stdint.h>

struct rp_file_ref { const char *file_name, *open_name; int main_program; };

struct rp_file {                   /* <file_info> */
    const char *name;
    const char *url;               /* download url, or NULL */
    const char *upload_url;        /* for outputs, or NULL */
    double nbytes;                 /* 0: omitted */
    const char *md5;               /* NULL: omitted */
    double max_nbytes;             /* outputs */
    int executable, sticky, report_on_rpc;
    const char *signature;         /* <file_signature> text, NULL: omitted */
    const char *upload_cert;       /* an output's certificate, sent as <xml_signature>; NULL: omitted */
};

struct rp_app_version {
    const char *app_name;
    int version_num;
    const char *platform;
    const char *plan_class;        /* NULL or "": none */
    const char *api_version;
    double avg_ncpus, flops;
    const char *coproc_type;       /* the device a job takes (<coproc>); NULL: a CPU version */
    double coproc_count;
    int nfile_refs;
    struct rp_file_ref file_refs[8];
};

struct rp_workunit {
    const char *name, *app_name;
    int version_num;
    const char *command_line;      /* NULL: omitted */
    double rsc_fpops_est, rsc_fpops_bound, rsc_memory_bound, rsc_disk_bound;
    int nfile_refs;
    struct rp_file_ref file_refs[16];
};

struct rp_result {
    const char *name, *wu_name, *platform;
    int version_num;
    const char *plan_class;        /* its app version's; NULL or "": none */
    int64_t report_deadline;
    int report_immediately;
    int nfile_refs;
    struct rp_file_ref file_refs[8];
};

struct rp_message { const char *text, *priority; };  /* priority "notice", "low", ... */

struct sched_reply {
    const char *project_name, *master_url;
    double request_delay, next_rpc_delay;   /* 0: omitted */
    int64_t hostid;                /* > 0: sent (only for a host just created) */
    int64_t userid;
    const char *user_name;
    double user_total_credit, user_expavg_credit, host_total_credit, host_expavg_credit;
    /* The account as BOINC's client keeps it per project (NULL: omitted):
     * the MD5 of its e-mail address (which project's preferences are the
     * account's), its cross-project id and public cpid, the host's venue. */
    const char *email_hash, *cross_project_id, *external_cpid, *host_venue;
    /* The account's preferences, well-formed documents rooted at
     * <global_preferences> and <project_preferences> (the account calls
     * check them): written as they are. NULL: omitted. */
    const char *global_prefs, *project_prefs;
    const char *code_sign_key;     /* NULL: omitted */
    int project_is_down;
    int send_full_workload;        /* ask the client to list its tasks (<in_progress_results>) */
    int no_work_deadlines;         /* work exists but would miss deadlines: the client is latency-limited */
    int no_work_quota;             /* the daily quota message was added (a retry adds it once) */

    /* Dynamic arrays, grown by the add functions below; freed by sched_reply_free. */
    int napps, capapps;             const char **apps;   /* app names */
    int nfiles, capfiles;           struct rp_file *files;
    int nversions, capversions;     struct rp_app_version *versions;
    int nworkunits, capworkunits;   struct rp_workunit *workunits;
    int nresults, capresults;       struct rp_result *results;
    int nacks, capacks;             const char **acks;           /* <result_ack> names */
    int naborts, capaborts;         const char **aborts;         /* <result_abort> names */
    int nabort_ns, capabort_ns;     const char **abort_ns;       /* <result_abort_if_not_started> */
    int ndeletes, capdeletes;       const char **deletes;        /* <delete_file_info> names */
    int nmessages, capmessages;     struct rp_message *messages;
};

void sched_reply_init(struct sched_reply *r);
void sched_reply_free(struct sched_reply *r);      /* frees the arrays, not the strings */
void reply_add_app(struct sched_reply *r, const char *name);   /* deduplicated */
void reply_add_file(struct sched_reply *r, const struct rp_file *f); /* deduplicated by name */
void reply_add_version(struct sched_reply *r, const struct rp_app_version *v); /* dedup by app+version+platform+plan class */
void reply_add_workunit(struct sched_reply *r, const struct rp_workunit *w);
void reply_add_result(struct sched_reply *r, const struct rp_result *res);
void reply_add_ack(struct sched_reply *r, const char *name);
void reply_add_abort(struct sched_reply *r, const char *name);
void reply_add_abort_if_not_started(struct sched_reply *r, const char *name);
void reply_add_delete(struct sched_reply *r, const char *name);
void reply_add_message(struct sched_reply *r, const char *text, const char *priority);

/* Appends the whole <scheduler_reply> document, XML-escaping every text. */
void sched_reply_write(const struct sched_reply *r, struct strbuf *out);
#endif
