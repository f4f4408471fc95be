/* locality.h - locality scheduling (docs/locality.md): jobs that read a
 * large sticky file go to hosts that already hold it. The index keeps, per
 * file, its live jobs in id order with the sendable ones in a bit index;
 * per host, the files it reported at its last RPC; and a working set of
 * files open to hosts that hold none. Pure like the rest of src/sched:
 * the driver passes the clock, the host's files and a random seed. */
#ifndef LOCUS_LOCALITY_H
#define LOCUS_LOCALITY_H
#include "core/bitidx.h"
#include "core/hashmap.h"
#include <stddef.h>
#include <stdint.h>

struct sjob;

enum locality_mode {
    LOC_OFF = 0,
    LOC_FULL,    /* jobs named FILENAME__* go to hosts holding FILENAME (docs/locality.md) */
    LOC_LITE,    /* any job with sticky inputs: candidates scored by bytes on the host */
};

#define LF_NEED_LEVELS 8
/* host_ttl unless config.xml's host_lost_after sets it: a day */
#define LOCALITY_HOST_TTL_DEFAULT 86400

struct lslot { struct sjob *job; int64_t id; };

/* A large file and the live jobs that read it. */
struct lfile {
    char *name;                 /* owned */
    double nbytes;
    size_t seq;                 /* index in locality.files: creation order */
    struct lslot *jobs;         /* owned array: live jobs by increasing id (job NULL where one ended) */
    uint32_t n, cap, nholes;
    struct bitidx sendable;     /* positions of jobs with instances to send */
    int need[LF_NEED_LEVELS];   /* sendable jobs by instances needed (last level: that many or more) */
    int holders;                /* active hosts that hold it */
    double holders_speed;       /* their flops per second, all CPUs, availability included */
    double flops_needed;        /* flops of the instances still to send */
    size_t ws_pos;              /* 0: not in the working set, else index + 1 */
    struct imap cursor;         /* user id -> last job id sent to that user (as intptr) */
    uint32_t mark;              /* scratch for set differences */
    uint8_t no_more_work;       /* the project said it cannot make more work for it */
    uint8_t generator_failed;   /* its work generator's last run failed: its holders keep it, or none
                                 * would be left to ask for its work once the generator is fixed */
    uint8_t files_no_work;      /* listed as having no sendable work */
    uint32_t hr_class;          /* the class its first holder sent its jobs to (homogeneous redundancy,
                                 * hr.h); 0: none. Hosts of another class join it last */
};

/* One file membership of a job: the file and the job's position in it. */
struct lref { struct lfile *f; uint32_t pos; };

/* A file on a host: reported by the host, or assigned by the server (a job
 * using it was sent) and not yet reported, since the host lists a file only
 * once it has it. */
struct lheld {
    struct lfile *f;
    int64_t assigned;           /* when the server sent the first job using it */
    int reported;               /* the host listed it */
};

/* What locality knows of a host: when it was last seen and its files. */
struct lhost {
    int64_t host_id, last_seen;
    double speed;               /* flops per second, all CPUs, availability included */
    struct lhost *prev, *next;  /* activity list, least recently seen first */
    struct lheld *files;        /* owned array (files borrowed) */
    int nfiles, cap;
};

struct locality {
    int mode;                   /* enum locality_mode */
    int sorted;                 /* <locality_scheduling_sorted_order/> */
    int wait_period;            /* <locality_scheduling_wait_period>: 0, no on-demand generation */
    int64_t host_ttl;           /* a host unseen for longer no longer counts as a holder */
    struct smap by_name;        /* name -> struct lfile* (owned) */
    struct smap retired;        /* names of files freed: hosts still reporting one delete it */
    struct lfile **files;       /* by seq; NULL once freed */
    size_t nfiles, capfiles;
    struct bitidx withwork;     /* seqs of files with sendable jobs */
    struct bitidx candidates;   /* seqs of open files not in the working set */
    struct lfile **ws;          /* the working set */
    size_t nws, capws;
    struct imap hosts;          /* host id -> struct lhost* (owned) */
    struct lhost *oldest, *newest;
    int nactive;                /* hosts in the activity list */
    double total_speed;         /* of the active hosts */
    double flops_needed;        /* of all files' jobs, each job once */
    double flops_out;           /* of their instances sent and not yet returned */
    int target;                 /* the largest target_nresults seen: M of N/M */
    uint32_t mark;
    int64_t sent_from_held, sent_new_file, sent_fallback;   /* counters for the API and the simulator */
};

/* A file a job reads, as the driver names it. */
struct lfile_key { const char *name; double nbytes; };

void locality_init(struct locality *l);
void locality_free(struct locality *l);

/* The file of a job named FILENAME__*: its length, or 0 if the name does not
 * follow the rule (no "__", or nothing before it). */
size_t locality_name_prefix(const char *job_name);

/* The working set, for the API and the project's directory (borrowed). */
struct lfile *const *locality_working_set(const struct locality *l, size_t *n);
/* The file called NAME, or NULL. */
struct lfile *locality_file(const struct locality *l, const char *name);
/* The project says no more work can be made for NAME (no_work_available/),
 * or withdraws that. Unknown names are ignored. */
void locality_set_no_more_work(struct locality *l, const char *name, int on);
/* The last run of the work generator for NAME failed (on), or succeeded.
 * Unknown names are ignored. */
void locality_set_generator_failed(struct locality *l, const char *name, int on);
/* Forgets hosts unseen for host_ttl, refreshes the working set, frees files
 * with no job and no holder. The driver calls it now and then. */
void locality_maintain(struct locality *l, int64_t now);
#endif
