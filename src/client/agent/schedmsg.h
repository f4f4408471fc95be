/* schedmsg.h - the two documents of a BOINC scheduler RPC as the agent
 * sees them: writing the <scheduler_request> (what the real 7.x client
 * sends, so locusd's and any BOINC server's parser accept it) and merging a
 * <scheduler_reply> into the agent's state. No I/O here. */
#ifndef LOCUS_AGENT_SCHEDMSG_H
#define LOCUS_AGENT_SCHEDMSG_H
#include "client/agent/astate.h"
#include "client/agent/hostinfo.h"
#include "client/workfetch.h"
#include "core/strbuf.h"

#define SCHEDMSG_REPLY_MAX (8u << 20)   /* a reply larger than this is refused */
#define SCHEDMSG_PLATFORM "x86_64-pc-linux-gnu"
#define SCHEDMSG_ANONYMOUS "anonymous"   /* the platform of a project run with the host's own apps */

/* What this RPC asks for. */
struct rpc_want {
    struct wf_request req;     /* work wanted per resource (workfetch.h); zero: none */
    double estimated_delay;    /* seconds until a CPU is free */
    double client_start;       /* when the agent started (time_stats) */
};

/* Appends p's request to out (all borrowed). Reports every result of p in
 * phase AR_TO_REPORT, lists the others in <other_results> and
 * <in_progress_results> (with est_remaining), and p's sticky files. */
void schedmsg_request(const struct astate *st, const struct aproject *p, const struct hostinfo *h,
                      const struct rpc_want *w, double now, struct strbuf *out);

/* What a reply did, for the caller's backoffs and log. */
struct reply_effects {
    int nnew;                  /* results added */
    int nacked;                /* reported results acknowledged and removed */
    int naborted;              /* results marked for abort */
    int ndeleted;              /* sticky files released */
    double request_delay, next_rpc_delay;   /* 0: absent */
    int project_is_down;
    int no_work_deadlines;     /* <no_work_because_of_deadlines/>: latency-limited until request_delay ends */
    char message[256];         /* the first <message> on one line (astate_text_copy), "" if none */
};

/* Parses the reply in buf (len bytes; anything before <scheduler_reply>
 * skipped) and merges it into p (owned by st): identity, delays, apps,
 * files, app versions, workunits, new results (with received = now),
 * acknowledgements (results removed), aborts, sticky-file deletions. The
 * whole reply is checked (sizes, safe file names, references) before p is
 * touched, so a bad reply changes nothing. Texts kept go through
 * astate_text_copy. A reply that refuses the host (a bad account key) is
 * a valid one without <hostid>: p->hostid stays as it was (0 for a project
 * never contacted), the server's reason in fx->message. 0 and *fx filled, or -1 with the reason in err. */
int schedmsg_apply_reply(struct astate *st, struct aproject *p, const char *buf, size_t len,
                         double now, struct reply_effects *fx, char *err, size_t errlen);

/* Checks an <app_version> element n (of a reply or an app_info.xml, root
 * its document) and fills *v (the caller's): a safe app name, at most
 * AS_MAX_REFS file_refs with safe names, each naming a file of p or a
 * <file_info> of root, a plan class and a <coproc> that fit. 0, or -1 with
 * the reason in err and *v untouched. */
struct xml_node;
int schedmsg_read_version(const struct xml_node *n, const struct xml_node *root, const struct aproject *p,
                          struct aapp_version *v, char *err, size_t errlen);

/* The scheduler URL in a master page (<link rel="boinc_scheduler"
 * href="..."> or <scheduler>...</scheduler>), into out; 0 or -1 if none. */
int schedmsg_master_scheduler(const char *page, char *out, size_t len);
#endif
