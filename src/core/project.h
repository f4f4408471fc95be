/* project.h - a project on disk: its folder layout and its config.xml.
 *   PROJECT/config.xml              settings (BOINC element names where they exist)
 *   PROJECT/locus.db                the store
 *   PROJECT/keys/code_sign_private.pem   may be moved off the server after signing
 *   PROJECT/keys/code_sign_public   the key text sent to clients
 *   PROJECT/download/xx/NAME        input and app files (fan-out by name hash)
 *   PROJECT/upload/xx/NAME          uploaded outputs
 *   PROJECT/results/BATCH/JOB/      assimilated canonical outputs */
#ifndef LOCUS_PROJECT_H
#define LOCUS_PROJECT_H
#include <stddef.h>

/* Adaptive replication's defaults (sched/trust.h): BOINC's streak of 10
 * agreeing results (CONS_VALID_UNREPLICATED) before a host is trusted
 * alone, and the least share of a trusted host's jobs replicated anyway. */
#define TRUST_MIN_VALID_DEFAULT 10
#define TRUST_SPOT_CHECK_DEFAULT 0.05

/* Pacing's default (sched/pace.h): a host's queue reaches at most half the
 * time the project needs for its remaining work. */
#define PACE_SHARE_DEFAULT 0.5
/* End-of-batch replication's default: one spare per late result. The end
 * of a batch waits on results held by hosts that went off or left; a
 * spare on an idle host that would return it twice as soon ends the batch
 * sooner for a few percent more computing (docs/benchmarks.md). */
#define REPLICATE_DEFAULT 1
/* Purging's defaults: a month for a scientist to look at an ended job in
 * the store (the archive keeps it after), half a year for a volunteer to
 * come back to the same host record. */
#define PURGE_AFTER_DAYS_DEFAULT 30
#define ARCHIVE_HOSTS_AFTER_DAYS_DEFAULT 180

/* A project is its owner's alone: its folder and everything created in it
 * (the store holds every user's data; keys/ the project's secrets). */
#define PROJECT_DIR_MODE 0700
#define PROJECT_FILE_MODE 0600
#define PROJECT_UMASK 077
#define PROJECT_PATH_MAX 4096

struct project_config {
    char name[128];              /* <project_name> */
    char master_url[512];        /* <master_url>, ends with '/' */
    char listen[128];            /* <listen>: ADDRESS:PORT instead of master_url's host and port */
    char https_cert[1024];       /* <https_cert>: PEM certificate (then its chain) HTTPS is served with;
                                    relative to the project folder, or absolute */
    char https_key[1024];        /* <https_key>: its PEM private key, the project user's alone */
    int https_port;              /* <https_port>: where HTTPS listens; 0: the port of an https master_url */
    char listen_addr[64];        /* where locusd listens: from listen, else master_url (derived) */
    int listen_port;             /* plain HTTP's port (derived) */
    int https_listen_port;       /* HTTPS's port; 0: no HTTPS (derived) */
    int threads;                 /* <http_threads>: HTTP worker threads */
    int max_connections;         /* <max_connections>: open at once, each port (4096; fewer if the file
                                    descriptors locusd may open do not allow them) */
    int max_connections_per_ip;  /* <max_connections_per_ip>: open at once from one address (64) */
    int http_idle_timeout;       /* <http_idle_timeout>: seconds a file transfer may stall (30) */
    int http_preauth_timeout;    /* <http_preauth_timeout>: seconds any other connection may send nothing,
                                    before its key or certificate is checked or between requests (10) */
    int max_body_mib_in_flight;  /* <max_body_mib_in_flight>: MiB of request bodies held at once, all
                                    connections together, before they are handled (256) */
    char metrics_allow[1024];    /* <metrics_allow>: addresses and prefixes that may read /metrics, comma
                                    separated ("127.0.0.1/8,::1/128"); empty: no /metrics */
    double request_delay;        /* <request_delay>: seconds between a host's RPCs */
    double next_rpc_delay;       /* <next_rpc_delay>: 0 = none */
    int max_jobs_per_rpc;        /* <max_wus_to_send> */
    int max_jobs_in_progress;    /* <max_wus_in_progress> per CPU */
    int max_jobs_in_progress_gpu;   /* <max_wus_in_progress_gpu>: jobs on a GPU type in progress per device of
                                       it, besides the per-CPU cap on all (0: none, as BOINC) */
    int max_new_hosts_per_day;   /* <max_new_hosts_per_day>: hosts one account may add in a day (100) */
    int daily_result_quota;      /* <daily_result_quota>: jobs of one app version a host may get per processor
                                    per day, halved by each error, doubled back by valid results (1000); 0 off */
    int one_result_per_user_per_wu; /* <one_result_per_user_per_wu/> */
    int one_result_per_network;  /* <one_result_per_network/>: never two results of one job to hosts whose
                                    addresses share an IPv4 /24 or IPv6 /48 (core/cidr.h) */
    int one_result_per_signup_batch;   /* <one_result_per_signup_batch/>: nor to accounts made from one such
                                          network within a day of each other (sched/index.h) */
    int adaptive_trust_valid;    /* <adaptive_trust_valid>: agreeing results in a row before a host takes an
                                    adaptive batch's jobs alone (10) */
    double adaptive_spot_check;  /* <adaptive_spot_check>: the least share of a trusted host's jobs still
                                    replicated (0.05) */
    double reliable_reduced_delay_bound;   /* <reliable_reduced_delay_bound>: accelerated retries, a retry's
                                              deadline on a reliable host as a share of the delay bound; 0 off */
    double transition_period;    /* <transition_period>: seconds between timeout scans */
    int max_request_bytes;       /* <max_request_bytes> of a scheduler request */
    char validator_cmd[1024];    /* <validator_cmd>: compares two results' files */
    int hook_timeout;            /* <hook_timeout>: seconds a validator, assimilator, work generator or
                                    notification hook may run before it is killed (3600) */
    char assimilator_cmd[1024];  /* <assimilator_cmd>: run after outputs are copied */
    char sequence_result_cmd[1024]; /* <sequence_result_cmd>: run for each validated position of a work
                                    sequence; prints "extend N", "end" or nothing */
    int report_immediately;      /* <report_immediately/> on every result sent */
    int locality;                /* <locality_scheduling/>: jobs named FILENAME__* */
    int locality_lite;           /* <locality_scheduling_lite/>: score by sticky input bytes on the host */
    int locality_sorted;         /* <locality_scheduling_sorted_order/> */
    double locality_wait_period; /* <locality_scheduling_wait_period>: 0, no on-demand work */
    char locality_generator[1024]; /* <locality_work_generator>: run with a file name per need_work */
    int replicate;               /* <end_of_batch_replication>: spares per late result when nothing is
                                    left to send (empty element: 1; REPLICATE_DEFAULT); 0: off */
    double pace_share;           /* <pace_share>: a host's queue reaches at most this share of the time the
                                    project needs for its remaining work (0.5); 0 off (sched/pace.h) */
    double purge_after_days;     /* <purge_after_days>: ended jobs go to the archive this long after
                                    their end (store/purge.h); 0 never */
    double archive_hosts_after_days; /* <archive_hosts_after_days>: hosts silent this long go; 0 never */
    double stats_export_hours;   /* <stats_export_hours>: locusd writes the statistics export
                                    (store/stats_export.h) this often; 0 never */
    double host_lost_after;      /* <host_lost_after>: seconds of silence before a host's work is
                                    given up; 0: at the deadline only */
    int deadline_check;          /* the server deadline check (EDF of the host's work, docs/server.md);
                                    off with <no_deadline_check/> */
    int anonymous_platform;      /* hosts with their own app versions (app_info.xml) get work; off with
                                    <no_anonymous_platform/> */
    int deadline_min_queue;      /* <deadline_min_queue/>: also refuse a job due before now + the
                                    host's min_queue (off: that rule refuses all work of
                                    short-deadline projects) */
    int cursor_in_order;         /* <cursor_in_order/>: a team takes its cursor's jobs in one increasing
                                    job-number order instead of lanes (docs/cursors.md) */
    double cursor_move_ratio;    /* <cursor_move_ratio>: the speed rule, a host moves to a team when
                                    est_time_left(own) < this x est_time_left(that); 0: off (0) */
    char cursor_generator[1024]; /* <cursor_work_generator>: run with a cursor batch and job numbers to make */
    double cursor_cushion;       /* <cursor_cushion>: jobs never sent the generator keeps per cursor (100) */
    double sequence_high_water;  /* <sequence_high_water>: results of a work sequence out at once (2) */
    double sequences_per_host;   /* <sequences_per_host>: sequences a host may hold, at most its CPUs (1) */
    double sequence_twin_lag;    /* <sequence_twin_lag>: restartable intervals a twin may fall behind its
                                    twin before a faster host takes it over (2) */
    /* what one submitter may order (docs/api.md, "Keys and roles"); admins are not limited */
    int submit_max_order_positions; /* <submit_max_order_positions>: positions (jobs) one order creates or
                                    adds to a sequence (100000: about half a second of the store) */
    int submit_max_live_batches; /* <submit_max_live_batches>: batches not ended (100) */
    int submit_max_file_mib;     /* <submit_max_file_mib>: the largest input file PUT /api/v1/files takes (1024) */
    int submit_max_live_campaigns; /* <submit_max_live_campaigns>: campaigns not ended (20) */
    /* accounts volunteers make themselves (BOINC's web RPCs, docs/accounts.md) */
    char web_dir[1024];          /* <web_dir>: the web site's folder (site.h); empty: the installed one */
    char account_creation[16];   /* <account_creation>: closed, open or invitation (closed) */
    char invitation_code[128];   /* <invitation_code>: what sign-up asks for in invitation mode */
    int min_passwd_length;       /* <min_passwd_length>: the client checks it before hashing (6) */
    int account_rpcs_per_hour;   /* <account_rpcs_per_hour>: creations and lookups one address may make (20) */
    /* the grid daemon (campaigns on clusters, docs/campaigns.md) */
    int grid_daemon;             /* off with <no_grid_daemon/>: this locusd runs no campaign */
    int grid_finalize;           /* off with <grid_no_finalize/>: no replicas of a campaign's last jobs */
    int grid_max_attempts;       /* <grid_max_attempts>: resubmissions of a job that may be to blame before
                                    it is given up (5) */
    int grid_output_max_file_mib; /* <grid_output_max_file_mib>: the largest output file a job sends (1024) */
    int grid_output_max_job_mib; /* <grid_output_max_job_mib>: the most bytes of outputs one job sends (4096) */
    int grid_min_uid;            /* <grid_min_uid>: the lowest uid a campaign runs as, where locusd's host
                                    knows the account (1000); root never */
    double grid_cycle_period;    /* <grid_cycle_period>: seconds between grid cycles (30) */
    char grid_predictor[32];     /* <grid_predictor>: tap, slow_start, two_way_adaptive, adapt_down_exp_up */
    double grid_waiting_allowed; /* <grid_waiting_allowed>: waiting jobs of a campaign on a cluster (5) */
    double grid_waiting_timeout; /* <grid_waiting_timeout>: seconds a job may wait before nikita cancels it (900) */
    double grid_sink_seconds;    /* <grid_sink_seconds>: a success shorter is near zero, a sink's sign (2) */
    double grid_settle_seconds;  /* <grid_settle_seconds>: a job just submitted that waits less is not excess (10) */
    double grid_fairshare_half_life; /* <grid_fairshare_half_life>: seconds (86400) */
    int grid_early_jobs;         /* <grid_early_jobs>: a campaign's first jobs that go early (10; 0: none) */
    int grid_data_placement;     /* off with <grid_no_data_placement/>: jobs are not placed by their inputs */
    int grid_stage_retries;      /* <grid_stage_retries>: failed fetches of a job's inputs on a cluster
                                    before they count against it (2) */
};

struct project {
    char dir[PROJECT_PATH_MAX];
    struct project_config cfg;
};

/* The kinds of values a setting holds. */
enum setting_type {
    SETTING_TEXT,       /* a string (char array field) of min to sizeof field - 1 bytes */
    SETTING_FLAG,       /* <name/> present sets the int field to the opposite of its default */
    SETTING_INT,        /* a whole number in [min, max] (int field) */
    SETTING_DOUBLE,     /* a number in [min, max], or [min, max) when max_open (double field) */
    SETTING_COUNT_FLAG, /* a whole number in [min, max] (int field); the empty <name/> means 1 */
};

/* One setting of config.xml. The table of them, project_settings, is the
 * only list: defaults, loading, saving, project_config_set and the unit
 * test holding docs/guide.md's list to it all walk it. */
struct setting {
    const char *name;        /* the element of config.xml */
    enum setting_type type;
    size_t offset, size;     /* its field in struct project_config */
    double def;              /* default of a number or flag */
    const char *def_text;    /* default of a text; NULL: empty */
    double min, max;         /* bounds of a number; a text's least length is min */
    int max_open;            /* the number must be below max */
    int always_saved;        /* written even at its default, to show in a new config.xml */
    int restart;             /* read at start only (sockets, threads, what the index is built with):
                                a reload keeps the running value and warns (project_config_diff) */
    /* Further validation of a text; 0, or -1 with the reason in err. */
    int (*check)(const char *value, char *err, size_t errlen);
};

extern const struct setting project_settings[];
extern const size_t project_settings_count;

/* Defaults for every setting; master_url and name left empty. */
void project_config_defaults(struct project_config *c);
/* Sets the setting called name from value, its text as in config.xml ("" for
 * the empty element). 0, or -1 with a reason naming the setting in err and c
 * unchanged: an unknown name, a malformed value, or one out of bounds. */
int project_config_set(struct project_config *c, const char *name, const char *value, char *err, size_t errlen);
/* Writes the value of setting s in c to out as config.xml text ("" for a
 * flag that is set or a count of 1, the empty element). Returns 1 when the
 * value differs from the default, else 0. */
int project_setting_text(const struct project_config *c, const struct setting *s, char *out, size_t len);
/* Loads dir/config.xml over the defaults and derives where locusd
 * listens: HTTPS (with <https_cert> and <https_key>, which go together) on
 * <https_port>, else on the port of an https:// master URL; plain HTTP on
 * <listen>, else on the master URL's host and port unless HTTPS has that
 * port. -1 with the reason in err, also when <project_name> or <master_url>
 * is missing. */
int project_load(struct project *p, const char *dir, char *err, size_t errlen);
/* The settings whose values differ between a and b, in the table's order:
 * pointers into project_settings, at most project_settings_count of them,
 * into out (sized by the caller); returns how many. Derived fields (where
 * locusd listens) follow restart-only settings and are not compared. */
size_t project_config_diff(const struct project_config *a, const struct project_config *b,
                           const struct setting **out);
/* Copies every setting that is not restart-only from from into to: the
 * settings a running locusd takes from a config.xml read again. */
void project_config_apply_live(struct project_config *to, const struct project_config *from);
/* Writes cfg as dir/config.xml (atomically): every setting not at its
 * default, and those always_saved. -1 with the reason in err. */
int project_save_config(const struct project *p, char *err, size_t errlen);
/* Splits "http://HOST:PORT/PATH/" into host, port and path ("/proj/").
 * -1 if the URL is not http(s), lacks the final '/' or a dotted host
 * (the BOINC client rejects a master URL such as http://localhost/). */
int url_split(const char *url, char *host, size_t hostlen, int *port, char *path, size_t pathlen);

/* PROJECT/<sub>; and PROJECT/<sub>/xx/NAME for fanned-out folders. */
void project_path(const struct project *p, char *out, size_t len, const char *sub);
void project_file_path(const struct project *p, char *out, size_t len, const char *sub, const char *name);

/* The backup lock, PROJECT/backup.lock (flock): `locus db backup` holds it
 * exclusively while it copies the project, so that no file the store's
 * snapshot names is deleted before it is copied; locusd holds it shared
 * while it deletes the uploads of ended jobs, and defers the deletions
 * while a backup holds it. An open descriptor (close it to release), or -1
 * with errno (EWOULDBLOCK: held, when nonblock). */
#define PROJECT_BACKUP_LOCK "backup.lock"
int project_backup_lock(const struct project *p, int exclusive, int nonblock);
#endif
