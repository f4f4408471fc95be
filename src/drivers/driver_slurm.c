/* driver_slurm.c - the Slurm driver, over Slurm's commands (sbatch, squeue,
 * scancel, sinfo, scontrol) run with the cluster's SLURM_CONF, each bounded
 * by the cluster's timeout. Remote ids are Slurm's: "123" for a job,
 * "123_4" for element 4 of array 123. Finished jobs are read from squeue
 * while slurmctld keeps them (MinJobAge), then from the jobcomp/filetxt log
 * when the cluster writes one; sacct is not used, as accounting needs
 * slurmdbd. An array element cancelled while pending has no record of its
 * own anywhere: it is recognised by its array's (unlisted_elements).
 * Outputs are written as locus.<cluster>.<id>.stdout and .stderr in the
 * job's working directory (clusters may share it: an NFS home), which the
 * tail reads: the driver runs on a submit
 * host that sees the cluster's file systems, as Slurm's commands do. */
#include "core/fsutil.h"
#include "core/hashmap.h"
#include "core/run.h"
#include "drivers/driver.h"
#include "drivers/slurm_parse.h"
#include "grid/jobscript.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SLURM_JOBCOMP_MAX (256u << 20)   /* bytes of the jobcomp log read at most */

struct slurm {
    char env_conf[CLUSTER_FIELD_MAX + 16];   /* "SLURM_CONF=..." */
    char jobcomp[PATH_MAX];              /* the jobcomp/filetxt log; "" none */
    int jobcomp_known;                   /* jobcomp was asked for already */
};

/* Runs a Slurm command. 0: it succeeded; -1: it could not run or timed out;
 * 1: it failed (its first line of stderr in err). res is the caller's to
 * free in every case. */
static int slurm_cmd(struct cluster_driver *d, const char *const *argv, struct run_output *res, char *err,
                     size_t errlen)
{
    struct slurm *s = d->impl;
    const char *env[] = {s->env_conf, NULL};
    if (run_capture(argv, env, d->cfg.timeout_ms, res, err, errlen)) return -1;
    if (res->status == 0) return 0;
    char line[300];
    size_t n = strcspn(res->err, "\n");
    snprintf(line, sizeof line, "%.*s", (int)(n < 299 ? n : 299), res->err);
    errf(err, errlen, "%s failed (status %d): %s", argv[0], res->status, line[0] ? line : "no message");
    return 1;
}

/* ---- submission ---- */

/* The sbatch options of a resources request: nodes and cores per node,
 * or cores anywhere; whole nodes when only nodes are asked for. */
static int resources_args(const struct cluster_spec *spec, struct strpool *pool, const char **argv, int *argc,
                          char *err, size_t errlen)
{
    long nodes, cores;
    if (slurm_spec_resources(spec, &nodes, &cores, err, errlen)) return -1;
    if (nodes) argv[(*argc)++] = strpool_printf(pool, "--nodes=%ld", nodes);
    if (nodes && cores) argv[(*argc)++] = strpool_printf(pool, "--ntasks-per-node=%ld", cores);
    else if (nodes) argv[(*argc)++] = "--exclusive";
    else argv[(*argc)++] = strpool_printf(pool, "--ntasks=%ld", cores ? cores : 1);
    return 0;
}

/* -1 with the reason for a request that none of the cluster's nodes can
 * hold (slurm_request_fits: Slurm would keep it pending for good); one
 * sinfo, spared for a single core, which any node holds. */
static int request_fits(struct cluster_driver *d, const struct cluster_spec *spec, char *err, size_t errlen)
{
    long nodes, cores;
    if (slurm_spec_resources(spec, &nodes, &cores, err, errlen)) return -1;
    if (!nodes && cores <= 1) return 0;
    const char *argv[] = {"sinfo", "-h", "-N", "-o", SLURM_SINFO_FORMAT, NULL};
    struct run_output res;
    int rc = slurm_cmd(d, argv, &res, err, errlen);
    if (rc == 0) {
        size_t n;
        long *cpus = slurm_parse_node_cpus(res.out, &n);
        rc = slurm_request_fits(nodes, cores, cpus, n, err, errlen);
        free(cpus);
    }
    run_output_free(&res);
    return rc ? -1 : 0;
}

/* The home of user (NULL or "": the caller's) into out, and its uid/gid. */
static int user_home(const char *user, char *out, size_t outlen, uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    int rc = user && *user ? getpwnam_r(user, &pw, buf, sizeof buf, &res) : getpwuid_r(geteuid(), &pw, buf, sizeof buf, &res);
    if (rc || !res) {
        errf(err, errlen, "user \"%s\" is unknown on this submit host", user && *user ? user : "(self)");
        return -1;
    }
    snprintf(out, outlen, "%s", pw.pw_dir);
    *uid = pw.pw_uid;
    *gid = pw.pw_gid;
    return 0;
}

/* Submits jobs[0..n-1] as one sbatch: an array when array, else n is 1. */
static int sbatch(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                  int array, char (*ids)[DRV_ID_MAX], char *err, size_t errlen)
{
    const struct drv_job *j = &jobs[0];
    char home[PATH_MAX];
    uid_t uid;
    gid_t gid;
    if (user_home(j->user, home, sizeof home, &uid, &gid, err, errlen) || request_fits(d, spec, err, errlen))
        return -1;
    if (geteuid() != 0 && uid != geteuid()) {
        errf(err, errlen, "cannot submit as \"%s\": this process is neither root nor that user", j->user);
        return -1;
    }
    struct strpool pool;
    strpool_init(&pool);
    const char *argv[40];
    int argc = 0;
    int rc = -1;
    char script[] = "/tmp/locus-sbatch-XXXXXX";
    int fd = -1;
    struct strbuf text, dir;
    sb_init(&text);
    sb_init(&dir);
    struct run_output res = {0};

    struct jobscript_sched sched = {array ? "${SLURM_ARRAY_TASK_ID:-0}" : "0", slurm_nodefile_lines, 0};
    if (jobscript_write(&text, spec, jobs, n, &sched, err, errlen)) goto out;
    drv_expand_dir(&dir, spec->exec_directory, home, j->campaign_id);   /* sbatch -D needs the path */
    argv[argc++] = "sbatch";
    argv[argc++] = "--parsable";
    argv[argc++] = "--no-requeue";   /* a preempted or failed job comes back to locus, which resubmits */
    char name[DRV_NAME_MAX];
    drv_job_name(d, j->campaign_id, j->tag, name, sizeof name);
    argv[argc++] = strpool_printf(&pool, "--job-name=%s", name);
    argv[argc++] = strpool_printf(&pool, "--chdir=%s", dir.s);
    const char *num = array ? "%A_%a" : "%j";   /* cluster names hold no '%' (jdl_cluster_name_ok) */
    argv[argc++] = strpool_printf(&pool, "--output=locus.%s.%s.stdout", d->cfg.name, num);
    argv[argc++] = strpool_printf(&pool, "--error=locus.%s.%s.stderr", d->cfg.name, num);
    argv[argc++] = strpool_printf(&pool, "--time=%ld", (drv_job_walltime(spec, j) + 59) / 60);
    const char *part = spec->best_effort && d->cfg.besteffort_partition[0] ? d->cfg.besteffort_partition
                                                                            : d->cfg.partition;
    if (*part) argv[argc++] = strpool_printf(&pool, "--partition=%s", part);
    if (resources_args(spec, &pool, argv, &argc, err, errlen)) goto out;
    if (spec->properties[0]) argv[argc++] = strpool_printf(&pool, "--constraint=%s", spec->properties);
    if (spec->project[0]) argv[argc++] = strpool_printf(&pool, "--account=%s", spec->project);
    if (spec->checkpointing_period > 0)   /* B: to the wrapper, which forwards it to the job */
        argv[argc++] = strpool_printf(&pool, "--signal=B:%d@%ld", spec->checkpointing_signal,
                                      spec->checkpointing_period);
    if (geteuid() == 0 && uid != 0) {
        argv[argc++] = strpool_printf(&pool, "--uid=%u", (unsigned)uid);
        argv[argc++] = strpool_printf(&pool, "--gid=%u", (unsigned)gid);
    }
    if (array) argv[argc++] = strpool_printf(&pool, "--array=0-%d", n - 1);
    fd = mkstemp(script);
    if (fd < 0 || write(fd, text.s, text.len) != (ssize_t)text.len) {
        errf(err, errlen, "cannot write the job script %s: %s", script, strerror(errno));
        goto out;
    }
    argv[argc++] = script;
    argv[argc] = NULL;
    if (slurm_cmd(d, argv, &res, err, errlen)) goto out;
    long id;
    if (slurm_parse_sbatch_id(res.out, &id)) {
        char q[48];
        errf(err, errlen, "sbatch answered \"%s\", not a job id", snippet(res.out, q));
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (array) snprintf(ids[i], DRV_ID_MAX, "%ld_%d", id, i);
        else snprintf(ids[i], DRV_ID_MAX, "%ld", id);
    }
    rc = 0;
out:
    if (fd >= 0) {
        close(fd);
        unlink(script);
    }
    run_output_free(&res);
    sb_free(&text);
    sb_free(&dir);
    strpool_free(&pool);
    return rc;
}

static int slurm_submit(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *jobs,
                        int n, int array, char (*ids)[DRV_ID_MAX], char *err, size_t errlen)
{
    if (array) return sbatch(d, spec, jobs, n, 1, ids, err, errlen) ? 0 : n;
    for (int i = 0; i < n; i++)
        if (sbatch(d, spec, &jobs[i], 1, 0, &ids[i], err, errlen)) return i;
    return n;
}

/* ---- status ---- */

/* Runs squeue on ids (comma-separated in list) into jobs, keyed by remote
 * id (owned entries). 0, or -1 when squeue could not tell. */
static int squeue_jobs(struct cluster_driver *d, const char *list, struct smap *jobs, char *err, size_t errlen)
{
    const char *argv[] = {"squeue", "-h", "-r", "-t", "all", "-j", list, "-O", SLURM_SQUEUE_FIELDS, NULL};
    struct run_output res;
    int rc = slurm_cmd(d, argv, &res, err, errlen);
    if (rc == 1 && strstr(res.err, "Invalid job id")) rc = 0;   /* none of them is known any more */
    for (char *line = res.out; rc == 0 && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        char id[DRV_ID_MAX];
        struct slurm_job *j = xmalloc(sizeof *j);
        if (slurm_parse_squeue_line(line, id, j) == 0) {
            free(smap_get(jobs, id));
            smap_put(jobs, id, j);
        } else {
            free(j);
        }
        line = nl ? nl + 1 : line + strlen(line);
    }
    run_output_free(&res);
    return rc ? -1 : 0;
}

/* The jobcomp log of the cluster, if it writes one (asked once). */
static const char *jobcomp_path(struct cluster_driver *d, char *err, size_t errlen)
{
    struct slurm *s = d->impl;
    if (s->jobcomp_known) return s->jobcomp;
    const char *argv[] = {"scontrol", "show", "config", NULL};
    struct run_output res;
    int rc = slurm_cmd(d, argv, &res, err, errlen);
    if (rc == 0) {
        slurm_parse_jobcomp_loc(res.out, s->jobcomp, sizeof s->jobcomp);   /* "" when none, or too long */
        s->jobcomp_known = 1;
    }
    run_output_free(&res);
    return rc ? NULL : s->jobcomp;
}

/* Jobs of ids not in jobs, looked up in the jobcomp log and added; an
 * array's own line without an index is added under the array's id. A line
 * is matched by its JobId and its array fields only, which only Slurm
 * writes (slurm_jobcomp_id). Yet any user's job name or folder may hold a
 * newline, and Slurm writes it as it is: the text after it reads as a line
 * of its own, which can be a whole line as Slurm writes it, for any id.
 * Locus's jobs end once (--no-requeue), so have one line each: an id that
 * more than one line claims is added as unknown, its status and folder
 * taken from none of them. A slurmctld that lost its state (killed before
 * saving it) gives out ids again, so the log can also hold an older job's
 * line for an id: where names[i] is known, only a line of that name is
 * ids[i]'s. */
static int jobcomp_jobs(struct cluster_driver *d, const char *const *ids, const char *const *names, int n,
                        struct smap *jobs, char *err, size_t errlen)
{
    const char *path = jobcomp_path(d, err, errlen);
    if (!path) return -1;
    if (!*path) return 0;
    size_t len;
    char *text = read_file(path, SLURM_JOBCOMP_MAX, &len);
    if (!text) return errno == ENOENT ? 0 : (errf(err, errlen, "cannot read %s: %s", path, strerror(errno)), -1);
    struct smap wanted, claimed;   /* claimed: how many lines each wanted id had */
    smap_init(&wanted);
    smap_init(&claimed);
    char arr[DRV_ID_MAX];
    for (int i = 0; i < n; i++) {
        if (smap_get(jobs, ids[i])) continue;
        /* the name wanted (an array's elements share theirs), "" when any will do */
        const char *name = names && names[i] ? names[i] : "";
        smap_put(&wanted, ids[i], (void *)name);
        /* and the line of its array's own record, if any (unlisted_elements) */
        if (slurm_array_of(ids[i], arr)) smap_put(&wanted, arr, (void *)name);
    }
    for (char *line = text; wanted.count && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        char id[DRV_ID_MAX], name[DRV_NAME_MAX];
        const char *want;
        if (!slurm_jobcomp_id(line, id) && (want = smap_get(&wanted, id)) &&
            (!*want || (!slurm_jobcomp_field(line, "Name", name, sizeof name) && !strcmp(name, want)))) {
            uintptr_t lines = (uintptr_t)smap_get(&claimed, id);
            smap_put(&claimed, id, (void *)(lines + 1));
            struct slurm_job *j = xmalloc(sizeof *j);
            if (lines) {   /* a second line: not ours alone */
                *j = (struct slurm_job){.st = {.state = DRV_FINISHED, .end = DRV_END_UNKNOWN, .raw = "UNKNOWN"}};
            } else if (slurm_parse_jobcomp_line(line, j)) {
                free(j);   /* not one of ours (their names are one word): the id stays open */
                j = NULL;
            }
            if (j) {
                free(smap_get(jobs, id));
                smap_put(jobs, id, j);
            }
        }
        line = nl ? nl + 1 : line + strlen(line);
    }
    smap_free(&claimed);
    smap_free(&wanted);
    free(text);
    return 0;
}

static void free_jobs(struct smap *jobs)
{
    const char *k;
    void *v;
    for (size_t it = 0; smap_next(jobs, &it, &k, &v);) free(v);
    smap_free(jobs);
}

/* A record of an element of array a in m, or NULL. */
static const struct slurm_job *element_of(const struct smap *m, const char *a)
{
    size_t al = strlen(a);
    const char *k;
    void *v;
    for (size_t it = 0; smap_next(m, &it, &k, &v);)
        if (!strncmp(k, a, al) && k[al] == '_') return v;
    return NULL;
}

/* Array elements that neither squeue nor the jobcomp log names, added to
 * jobs. slurmctld drops an element cancelled while pending from its
 * array's record without giving it a record of its own: the array's record
 * keeps the elements still pending, and once none is left it ends
 * CANCELLED without an index (squeue -r then lists it as "A", the jobcomp
 * log as JobId=A). Such an element ends as that record did when it was
 * cancelled, and as cancelled otherwise: while the array still has
 * elements, or when the record of that id ended another way (it is then
 * an element that ran, or another job's: never this element's success,
 * which would be a job done that never ran). This is sure only with a jobcomp
 * log, which has a line for every element that ran: the caller does not
 * call this without one, as an element that ran and that slurmctld forgot
 * (MinJobAge) would look the same. */
static int unlisted_elements(struct cluster_driver *d, const char *const *ids, int n, struct smap *jobs, char *err,
                             size_t errlen)
{
    struct strbuf list;
    struct smap asked, arrays;
    sb_init(&list);
    smap_init(&asked);
    smap_init(&arrays);
    char a[DRV_ID_MAX];
    for (int i = 0; i < n; i++)
        if (!smap_get(jobs, ids[i]) && slurm_array_of(ids[i], a) && !smap_get(jobs, a) && !smap_get(&asked, a)) {
            smap_put(&asked, a, (void *)1);
            sb_printf(&list, "%s%s", list.len ? "," : "", a);
        }
    int rc = list.len ? squeue_jobs(d, list.s, &arrays, err, errlen) : 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        if (smap_get(jobs, ids[i]) || !slurm_array_of(ids[i], a)) continue;
        const struct slurm_job *own = smap_get(&arrays, ids[i]);   /* it started since */
        const struct slurm_job *whole = smap_get(jobs, a) ? smap_get(jobs, a) : smap_get(&arrays, a);
        const struct slurm_job *any = own ? own : whole ? whole : element_of(&arrays, a);
        if (!any) continue;                                     /* its array is unknown too */
        struct slurm_job *j = xmalloc(sizeof *j);
        *j = *any;   /* the workdir, for tails */
        if (!own && whole && whole->st.state == DRV_FINISHED && whole->st.end == DRV_END_CANCELLED) {
            j->st.start = 0;   /* the array's record "started" when it was cancelled */
            j->st.run_seconds = 0;
        } else if (!own) {
            j->st = (struct drv_status){.state = DRV_FINISHED, .end = DRV_END_CANCELLED, .raw = "CANCELLED"};
        }
        smap_put(jobs, ids[i], j);
    }
    free_jobs(&arrays);
    smap_free(&asked);
    sb_free(&list);
    return rc;
}

/* squeue, then the jobcomp log for the ids squeue did not know, then
 * array elements cancelled while pending. */
static int find_jobs(struct cluster_driver *d, const char *const *ids, const char *const *names, int n,
                     struct smap *jobs, char *err, size_t errlen)
{
    struct strbuf list;
    sb_init(&list);
    for (int i = 0; i < n; i++) sb_printf(&list, "%s%s", i ? "," : "", ids[i]);
    int rc = squeue_jobs(d, list.s, jobs, err, errlen);
    sb_free(&list);
    if (rc == 0 && jobs->count < (size_t)n) rc = jobcomp_jobs(d, ids, names, n, jobs, err, errlen);
    if (rc == 0 && ((struct slurm *)d->impl)->jobcomp[0]) rc = unlisted_elements(d, ids, n, jobs, err, errlen);
    return rc;
}

/* A record of another name than the one asked for is another job's that
 * got the id again (jobcomp_jobs): the job asked for is unknown. */
static int slurm_status(struct cluster_driver *d, const char *const *ids, const char *const *names, int n,
                        struct drv_status *out, char *err, size_t errlen)
{
    struct smap jobs;
    smap_init(&jobs);
    int rc = find_jobs(d, ids, names, n, &jobs, err, errlen);
    for (int i = 0; rc == 0 && i < n; i++) {
        struct slurm_job *j = smap_get(&jobs, ids[i]);
        if (j && names && names[i] && strcmp(j->name, names[i])) j = NULL;
        if (j) out[i] = j->st;
        else out[i] = (struct drv_status){.state = DRV_FINISHED, .end = DRV_END_UNKNOWN, .raw = "UNKNOWN"};
    }
    free_jobs(&jobs);
    return rc;
}

/* ---- cancel, resources, tail ---- */

static int slurm_cancel(struct cluster_driver *d, const char *const *ids, int n, char *err, size_t errlen)
{
    const char **argv = xcalloc((size_t)n + 2, sizeof *argv);
    argv[0] = "scancel";
    for (int i = 0; i < n; i++) argv[i + 1] = ids[i];
    struct run_output res;
    int rc = slurm_cmd(d, argv, &res, err, errlen);
    if (rc == 1) {
        /* jobs that ended or are unknown are not an error: any other line is */
        rc = 0;
        for (char *line = res.err; *line && !rc;) {
            size_t len = strcspn(line, "\n");
            char save = line[len];
            line[len] = '\0';
            if (!strstr(line, "Invalid job id") && !strstr(line, "already completing or completed")) rc = 1;
            line[len] = save;
            line += len + (save ? 1 : 0);
        }
    }
    run_output_free(&res);
    free(argv);
    return rc ? -1 : 0;
}

static int slurm_resources(struct cluster_driver *d, struct drv_resources *out, char *err, size_t errlen)
{
    /* one line per node and partition: count each node once */
    const char *sinfo[] = {"sinfo", "-h", "-N", "-o", SLURM_SINFO_FORMAT, NULL};
    const char *squeue[] = {"squeue", "-h", "-r", "-o", "%T", NULL};
    struct run_output r1, r2 = {0};
    int rc = slurm_cmd(d, sinfo, &r1, err, errlen);
    if (rc == 0) rc = slurm_cmd(d, squeue, &r2, err, errlen);
    if (rc == 0) {
        slurm_parse_sinfo(r1.out, out);
        slurm_parse_job_states(r2.out, out);
        /* slurmctld answering slower than half the timeout is stressed */
        double slow = d->cfg.timeout_ms / 2.0;
        out->stress = (r1.elapsed_ms + r2.elapsed_ms) / slow;
        if (out->stress > 1) out->stress = 1;
    }
    run_output_free(&r1);
    run_output_free(&r2);
    return rc ? -1 : 0;
}

static int slurm_tail(struct cluster_driver *d, const char *id, enum drv_stream which, size_t max_bytes,
                      struct strbuf *out, char *err, size_t errlen)
{
    struct smap jobs;
    smap_init(&jobs);
    const char *ids[] = {id};
    int rc = find_jobs(d, ids, NULL, 1, &jobs, err, errlen);
    struct slurm_job *j = rc ? NULL : smap_get(&jobs, id);
    if (!rc && (!j || !j->workdir[0])) {
        errf(err, errlen, "job %s is not known to the scheduler any more", id);
        rc = -1;
    }
    if (!rc) {
        char path[PATH_MAX + JDL_CLUSTER_NAME_MAX + DRV_ID_MAX + 16];
        snprintf(path, sizeof path, "%s/locus.%s.%s.%s", j->workdir, d->cfg.name, id,
                 which == DRV_STDOUT ? "stdout" : "stderr");
        /* The folder is the job's user's, who may put anything there: a FIFO
         * would block this thread for good, a symbolic or hard link would
         * make locusd read a file that user may not. Only a plain file of
         * one name is read, and only the last max_bytes of it. */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        struct stat stt;
        if (fd < 0 || fstat(fd, &stt)) {
            errf(err, errlen, "cannot read %s: %s", path, strerror(errno));
            rc = -1;
        } else if (!S_ISREG(stt.st_mode) || stt.st_nlink != 1) {
            errf(err, errlen, "%s is not a plain file of the job's: not read", path);
            rc = -1;
        } else {
            size_t from = (size_t)stt.st_size > max_bytes ? (size_t)stt.st_size - max_bytes : 0;
            char buf[8192];
            ssize_t got;
            while (from < (size_t)stt.st_size && (got = pread(fd, buf, sizeof buf, (off_t)from)) > 0) {
                size_t keep = from + (size_t)got > (size_t)stt.st_size ? (size_t)stt.st_size - from : (size_t)got;
                sb_append(out, buf, keep);
                from += keep;
            }
        }
        if (fd >= 0) close(fd);
    }
    free_jobs(&jobs);
    return rc;
}

static void slurm_close(struct cluster_driver *d) { free(d->impl); }

/* squeue by job name and user; slurmctld forgets ended jobs after
 * MinJobAge (300 s by default), which bounds how late a lost submission
 * can be found, and how much is read: since is not needed. */
static int slurm_find(struct cluster_driver *d, int64_t campaign_id, int64_t tag, const char *user, time_t since,
                      char (*ids)[DRV_ID_MAX], int max, char *err, size_t errlen)
{
    (void)since;
    char name[DRV_NAME_MAX], home[PATH_MAX], me[256];
    uid_t uid;
    gid_t gid;
    if (!*user) {   /* the driver's own jobs: by uid, as squeue takes a number too */
        if (user_home(NULL, home, sizeof home, &uid, &gid, err, errlen)) return -1;
        snprintf(me, sizeof me, "%u", (unsigned)uid);
        user = me;
    }
    drv_job_name(d, campaign_id, tag, name, sizeof name);
    const char *argv[] = {"squeue", "-h", "-r", "-t", "all", "-n", name, "-u", user, "-o", SLURM_FIND_FORMAT, NULL};
    struct run_output res = {0};
    int n = -1;
    if (!slurm_cmd(d, argv, &res, err, errlen)) {
        n = slurm_parse_ids(res.out, ids, max);
    }
    run_output_free(&res);
    return n;
}

static const struct cluster_driver_ops slurm_ops = {
    .kind = "slurm",
    .submit = slurm_submit,
    .status = slurm_status,
    .cancel = slurm_cancel,
    .resources = slurm_resources,
    .tail = slurm_tail,
    .find = slurm_find,
    .close = slurm_close,
};

int drv_slurm_init(struct cluster_driver *d, char *err, size_t errlen)
{
    if (!d->cfg.conf[0]) {
        errf(err, errlen, "the slurm driver needs the cluster's slurm.conf (--conf)");
        return -1;
    }
    if (access(d->cfg.conf, R_OK)) {
        errf(err, errlen, "cannot read %s: %s", d->cfg.conf, strerror(errno));
        return -1;
    }
    struct slurm *s = xcalloc(1, sizeof *s);
    snprintf(s->env_conf, sizeof s->env_conf, "SLURM_CONF=%s", d->cfg.conf);
    d->impl = s;
    d->ops = &slurm_ops;
    return 0;
}
