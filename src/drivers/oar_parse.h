/* oar_parse.h - the JSON answers of OAR 2.5's REST API as the OAR driver
 * (driver_oar.c) reads them: a job's state and end (GET /jobs/ID,
 * /jobs/details), the new job's id (POST /jobs), an array's members by
 * the index appended to their command, the cluster's load
 * (/resources/full, /jobs/details, /stress_factor) and the rows of
 * /jobs/table naming a submission. Pure functions: parsed JSON in,
 * borrowed and never changed; the caller's structs out; no I/O, no
 * globals, and the time is given (now), never read. Any JSON may come: a
 * member missing or of another type reads as not known, numbers are
 * bounded and so is what is kept. Errors are returned, never printed. */
#ifndef LOCUS_OAR_PARSE_H
#define LOCUS_OAR_PARSE_H
#include "core/hashmap.h"
#include "core/strbuf.h"
#include "drivers/driver.h"
#include <jansson.h>
#include <stdint.h>
#include <time.h>

#define OAR_INDEX_MAX 999999999L   /* an array member's index at most */
#define OAR_FIND_MAX 100000        /* jobs of one submission kept at most */

/* The index OAR appended to an array member's command (job: a job
 * object, borrowed): the last word of "command" when it is a number of at
 * most 9 digits ("./oarapi.subscript.X 3": 3); -1 when there is none. */
long oar_member_index(const json_t *job);

/* Fills *st (overwritten) from a job object (borrowed) of /jobs/ID or
 * /jobs/details: its state (raw, cut to fit), start and stop times (0
 * when absent or negative), time running (to now while it runs, never
 * negative), and for an ended job why: "Terminated" by its exit code (a
 * wait status), "Error" by its events, the most telling first
 * (BESTEFFORT_KILL, WALLTIME, a node's failure, FRAG_JOB_REQUEST, a
 * working directory OAR could not enter). Never fails: a state OAR does
 * not have is DRV_FINISHED with DRV_END_UNKNOWN, raw "?" when there is
 * none. */
void oar_normalise(const json_t *job, time_t now, struct drv_status *st);

/* For each item of a /jobs/details answer (borrowed) whose "id" is
 * ids[i] (i < n), fills out[i] (the caller's) with oar_normalise; the
 * others are left alone. Returns how many out[i] were filled (an id the
 * answer lists twice counts twice). */
int oar_parse_details(const json_t *ans, const int64_t *ids, int n, time_t now, struct drv_status *out);

/* The new job's id in POST /jobs's answer (borrowed): > 0, or -1 when
 * there is none. */
int64_t oar_parse_post_id(const json_t *ans);

/* The members of an array of n jobs (1 <= n) in a /jobs/details?array=
 * answer (borrowed): ids[i] (the caller's, n of them) gets the id of the
 * member whose index is i, "" when none is (the first one listed wins;
 * members without a positive id, with an index outside 0..n-1 or with
 * the id of another index are skipped). Returns how many of the n were
 * found. */
int oar_parse_members(const json_t *ans, int n, char (*ids)[DRV_ID_MAX]);

/* The cluster's load into *out (overwritten) from the answers (borrowed)
 * of /resources/full (cores: the resources "Alive"), /jobs/details
 * (waiting and running jobs; the running ones' resources are the cores in
 * use) and /stress_factor (GLOBAL_STRESS, a number or a number's text,
 * put within 0..1; 0 when it is none). */
void oar_parse_resources(const json_t *res, const json_t *jobs, const json_t *stress, struct drv_resources *out);

/* One job of a submission found in /jobs/table. */
struct oar_found {
    int64_t array;               /* its array_id, or its own id for a single job */
    int64_t index;               /* oar_member_index, -1 for a single job */
    int64_t id;
};

/* The search of a submission's jobs through the pages of /jobs/table:
 * oar_finding_init, oar_finding_page for each page, oar_finding_ids,
 * oar_finding_free. */
struct oar_finding {
    const char *name;            /* the jobs' name (drv_job_name's); borrowed */
    const char *user;            /* the account they must run as; borrowed */
    time_t after;                /* jobs submitted before are not taken; 0: any */
    struct oar_found *f;         /* the jobs found; owned */
    int n, cap;
    struct imap seen;            /* ids in f */
};

/* Starts a search (s is the caller's; name and user stay borrowed until
 * oar_finding_free). */
void oar_finding_init(struct oar_finding *s, const char *name, const char *user, time_t after);

/* Adds the rows of one page of /jobs/table (borrowed) that are jobs named
 * s->name run as s->user ("job_user"), submitted at s->after or later
 * (a row without a numeric submission_time is not filtered on), and not
 * found already (pages may overlap). Returns the number of rows the page
 * has, found or not (a full page means another may follow), or -1 when
 * the search would keep more than OAR_FIND_MAX jobs. */
long oar_finding_page(struct oar_finding *s, const json_t *ans);

/* The ids of the jobs found, in submission order (by array, then member
 * index), into ids (room for max, the caller's); returns how many (at
 * most max). s's jobs are sorted in place. */
int oar_finding_ids(struct oar_finding *s, char (*ids)[DRV_ID_MAX], int max);

/* Frees what s owns (not name and user). */
void oar_finding_free(struct oar_finding *s);

/* Appends to out the names of OAR's states of jobs not ended, comma
 * separated ("Waiting,Hold,..."), for a /jobs/table query. */
void oar_live_states(struct strbuf *out);
#endif
