/* server.h - locusd's state shared by its threads: the project, the
 * scheduling index and the caches around it, all under one lock; the
 * writer; the work queues of the validator and assimilator. */
#ifndef LOCUS_SERVER_H
#define LOCUS_SERVER_H
#include "core/cidr.h"
#include "core/digest.h"
#include "core/hashmap.h"
#include "core/project.h"
#include "core/tls_creds.h"
#include "core/upload_cert.h"
#include "model/model.h"
#include "sched/host_rpc.h"
#include "sched/index.h"
#include "sched/plan_class.h"
#include "server/workgen.h"
#include "server/workq.h"
#include "server/writer.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct MHD_Daemon;
struct metrics;

/* The time a hook may run under the settings c (a struct project_config
 * *: hook_timeout), in ms. */
#define HOOK_MS(c) ((c)->hook_timeout * 1000)

#define API_LIST_CACHE_S 5       /* seconds the answer to GET /api/v1/batches is kept, at least */
#define API_LIST_CACHE_COST 10   /* ... and at least this many times as long as it took to make */
#define API_ORDER_WAIT_MS 30000 /* an API campaign order awaited this long, then 503 (it stays queued) */

/* The settings a running locusd works with, and what is made of them for
 * the request threads. Never changed once published (server_config): a
 * reload publishes a new one, so that a thread may keep what it took (a
 * hook's command line) for as long as it needs it. */
struct server_config {
    struct project_config cfg;   /* the live settings as config.xml last had them; the restart-only ones,
                                    and where locusd listens, as at start */
    struct cidr_list metrics_allow; /* who may read /metrics (cfg.metrics_allow); empty: nobody, 404 */
    struct server_config *replaced; /* owned: the one this replaced, freed by server_stop (a thread may
                                       still read it); NULL for the first */
};

struct server {
    struct project proj;         /* the folder, and config.xml as read at start: what start-up made
                                    (ports, threads, TLS) follows it; all else reads server_cfg */
    char db_path[PROJECT_PATH_MAX + 16];
    char url_prefix[256];        /* path part of the master URL: "/proj/" */
    char *code_sign_key;         /* public key text for clients */
    struct upload_key upload_key; /* signs and checks upload certificates */
    struct upload_key output_key; /* signs and checks the grid jobs' output tokens (grid/outputs.h) */
    struct plan_class_set plan_classes;  /* plan_class.xml, read at start; empty without one */
    struct tls_creds tls;        /* HTTPS certificate and key, read at start; empty without HTTPS */
    struct web_accounts *accounts; /* owned: BOINC's account web RPCs (web_rpc.c) */
    struct site *site;           /* owned: the web site (site.h), read at start; NULL: none, the built-in
                                    master page alone */
    struct metrics *metrics;     /* owned: the figures of GET /metrics (metrics.h) */
    /* owned: the settings now, read through server_config. Published
     * under the lock, with the index's copies of them: a thread holding
     * the lock sees both from the same config.xml. */
    _Atomic(struct server_config *) config;

    /* GET /api/v1/batches, open to anyone, computes every batch's figures:
     * its answer is kept API_LIST_CACHE_S seconds, or API_LIST_CACHE_COST
     * times as long as it took to make when longer (seconds, with a
     * million jobs), so that a flood of such requests costs one
     * computation per period and the list at most a tenth of a core. */
    pthread_mutex_t list_lock;   /* guards the three below */
    int64_t list_time;           /* when list_text was made (by clock) */
    int64_t list_keep;           /* seconds it is kept */
    char *list_text;             /* owned, or NULL */
    /* GET /api/v1/status, the site's live figures, likewise (api_site.c) */
    pthread_mutex_t status_lock; /* guards the three below */
    int64_t status_time;
    char *status_text;           /* owned, or NULL */
    int status_computing;        /* a thread computes it: the others answer the last one meanwhile */

    pthread_mutex_t lock;        /* guards everything below up to the queues */
    struct sched_index idx;
    /* Append-only caches (all but hosts): entries are never freed while the
     * server runs, so a pointer taken under the lock stays valid after it
     * is released. A host is copied out under the lock, and one silent for
     * a day leaves the cache (rpc_forget_silent_hosts): host ids made by
     * the thousand cost memory only while they are in use. */
    struct imap apps;            /* id -> struct app* */
    struct imap versions;        /* id -> struct app_version* */
    struct imap files;           /* id -> struct file_rec* */
    struct smap files_by_name;   /* name -> struct file_rec* (the same records) */
    struct imap hosts;           /* id -> struct host* */
    struct smap users;           /* authenticator -> struct user* */
    int64_t next_host_id;
    uint64_t random_state;       /* for the policies' random choices */
    int64_t last_batch_id, last_file_id, last_version_id, last_app_id;
    int64_t seq_revision;        /* sequences' revisions read up to here */

    struct writer *writer;
    /* From server_open to server_start: the writer's two store handles,
     * and the changes loading the index made, which it commits first. */
    struct store *writer_st, *checkpoint_st;
    struct change_log opened;
    int started;                 /* server_start ran: there are threads to stop */
    struct workgen *workgen;     /* locality: need_work waits, generator, folder */
    struct workq validate_q, assimilate_q;   /* job ids */
    pthread_t maint_thread, validate_thread, assimilate_thread, grid_thread, purge_thread, export_thread,
        decay_thread;
    struct MHD_Daemon *http;     /* plain HTTP */
    struct MHD_Daemon *https;    /* the same over TLS; NULL without a certificate */
    atomic_int stopping;         /* set by server_stop, read by the daemon threads */
    atomic_int api_waits;        /* API orders in progress off the HTTP threads (api_wait.c) */
    atomic_int api_stopping;     /* set before HTTP stops: those answer at once */
    atomic_llong http_body_bytes; /* request bodies held now, all connections (max_body_mib_in_flight) */
    int http_max_connections;    /* on each port: max_connections, or fewer if open files do not allow */
    atomic_int http_unanswered;  /* requests suspended at some point and not yet completed: HTTP stops
                                    only once they are answered */
    int64_t (*clock)(void);      /* seconds; time(NULL) unless a test sets it */
    int api_order_wait_ms;       /* how long an API campaign order is awaited before its 503 (the order
                                    stays queued): API_ORDER_WAIT_MS unless a test sets it */
};

/* The settings s runs with now (see struct server_config): take the
 * pointer once for what must agree (one request's limits). */
static inline const struct server_config *server_config(const struct server *s) { return atomic_load(&s->config); }
static inline const struct project_config *server_cfg(const struct server *s) { return &server_config(s)->cfg; }

/* Opens the project in project_dir as serving it needs: config.xml, the
 * keys (those secrets not made yet are made), plan_class.xml, the HTTPS
 * certificate, the store (migrated if older), and the scheduling index
 * loaded from it. Starts no thread and writes nothing else. 0, or -1 with
 * the reason in err: s then holds what was made so far, for the process's
 * exit (server_stop is for a server opened). */
int server_open(struct server *s, const char *project_dir, char *err, size_t errlen);
/* Starts the writer, which first commits what loading decided, and the
 * daemon threads (not HTTP) of a server opened. -1 with the reason in err. */
int server_start(struct server *s, char *err, size_t errlen);
/* Stops the threads server_start started and frees s; after server_open
 * alone, drops what loading decided (never written) and frees s. */
void server_stop(struct server *s);

/* Reads config.xml again (SIGHUP) with project_load's checks and the
 * server's own. The settings that apply live take effect at once,
 * together with what is made of them (the index's copies, who may read
 * /metrics, the account allowance); each restart-only setting that changed
 * is a warning that it takes effect at the next restart; an info line
 * lists what changed. -1 when the file is refused: the reason is logged
 * as an error and s keeps its settings. One caller at a time (main's
 * signal loop). */
int server_reload(struct server *s);

/* Reads new apps, versions, files and batches, and applies cancellations.
 * Takes the lock itself. */
int server_refresh(struct server *s, char *err, size_t errlen);
/* Drops the index and reloads it from the store (after a failed commit). */
int server_rebuild(struct server *s, char *err, size_t errlen);

/* A random number for a policy's choices (lock held). */
uint64_t server_random(struct server *s);

/* This thread's read-only store handle, opened on first use. */
struct store *server_reader(struct server *s);

/* Acts on job events from the index (lock held): validation and
 * assimilation that need no file work are done at once, into log; the rest
 * goes to the validator's and assimilator's queues. */
void server_job_events(struct server *s, struct sjob *j, int events, int64_t now, struct change_log *log);
/* server_job_events as the on_event callback of the index's passes. */
struct job_event_ctx { struct server *s; int64_t now; struct change_log *log; };
void server_on_job_event(void *ctx, struct sjob *j, int events);   /* ctx: a struct job_event_ctx */
/* Who judges and keeps results here (config.xml's commands), for host_rpc_route. */
struct rpc_routing server_routing(const struct server *s);
/* Queues job_id for the daemons its rpc_route bits name. */
void server_hand_on(struct server *s, int64_t job_id, int route);

/* HTTP front (http.c). */
/* Reads and checks the HTTPS certificate and key when config.xml names
 * them (and that libmicrohttpd has TLS), before anything else starts.
 * -1 with the reason in err. */
int http_load_tls(struct server *s, char *err, size_t errlen);
/* Serves plain HTTP, and HTTPS when configured: both, or neither (-1 with
 * the reason in err). */
int http_start(struct server *s, char *err, size_t errlen);
/* Connections open now on plain HTTP (tls 0) or on HTTPS (tls 1); -1
 * when that daemon does not run. */
int http_connections(const struct server *s, int tls);
/* Takes no new connection, awaits the answers of suspended requests (the
 * writer and the work generator must still run), then stops. If some are
 * still unanswered after a minute it says so in the log and leaves HTTP
 * running for the process's exit: stopping MHD then would abort. */
void http_stop(struct server *s);

/* The validator's comparison of two results of nout files each (paths a,
 * b; their SHA-256 digests da, db): the project's validator_cmd on the
 * files of a then b when it has one (exit 0: they agree; past hook_timeout
 * it is killed and they do not), else equal digests. 1 if they agree,
 * else 0 (validator.c). */
int results_agree(const struct server *s, const char *const *a, char (*da)[SHA256_HEX_LEN], const char *const *b,
                  char (*db)[SHA256_HEX_LEN], int nout);
/* Compares the state files of twin sequences at the restart points the
 * policy lists, with results_agree, and hands it the verdicts (twins.c;
 * the maintenance thread, lock not held). */
void twins_compare(struct server *s);

/* Daemon threads (daemons.c, validator.c, assimilator.c, purger.c, exporter.c, decayer.c). */
void *maintenance_main(void *arg);
void *purger_main(void *arg);
void *exporter_main(void *arg);
void *decayer_main(void *arg);
void *validator_main(void *arg);
void *assimilator_main(void *arg);
#endif
