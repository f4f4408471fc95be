/* assimilator.c - the assimilator thread: copies a validated job's
 * canonical outputs to PROJECT/results/BATCH/JOB/OPEN_NAME, runs the
 * project's assimilator_cmd if any, then marks the job done. Copying again
 * after a crash is harmless, so the step is idempotent. */
#include "core/fsutil.h"
#include "core/log.h"
#include "core/run.h"
#include "core/strbuf.h"
#include "server/server.h"
#include "store/store.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ajob {
    int64_t job_id;
    char batch[128];
    char canonical[256];
    int nfiles;                  /* canonical instance's files to keep: output number, open name */
    struct { int k; char open_name[64]; } files[MAX_OUTPUTS + 1];
};

/* The batch's outputs, but a work sequence's heartbeat has none, and its
 * restartable results add their state (lock held). */
static void files_to_keep(const struct sjob *j, struct ajob *a)
{
    struct seq_io io;
    int seq = !sequence_io(j, &io);
    for (int k = 0; k < j->batch->b.noutputs && (!seq || io.reports); k++) {
        a->files[a->nfiles].k = k;
        snprintf(a->files[a->nfiles++].open_name, sizeof a->files[0].open_name, "%s", j->batch->b.outputs[k].open_name);
    }
    if (seq && io.restartable) {
        a->files[a->nfiles].k = j->batch->b.noutputs;
        snprintf(a->files[a->nfiles++].open_name, sizeof a->files[0].open_name, "state");
    }
}

static int run_hook(const char *cmd, const char *dir, const struct ajob *a, const char *job_name)
{
    char v_dir[PROJECT_PATH_MAX + 600], v_name[300], v_id[64], v_batch[160];
    snprintf(v_dir, sizeof v_dir, "LOCUS_RESULT_DIR=%s", dir);
    snprintf(v_name, sizeof v_name, "LOCUS_JOB_NAME=%s", job_name);
    snprintf(v_id, sizeof v_id, "LOCUS_JOB_ID=%lld", (long long)a->job_id);
    snprintf(v_batch, sizeof v_batch, "LOCUS_BATCH=%s", a->batch);
    const char *env[] = {v_dir, v_name, v_id, v_batch, NULL};
    return run_command(cmd, "locus-assimilator", NULL, dir, env) == 0 ? 0 : -1;
}

/* 0 on success; -1 if the outputs could not be kept or the hook failed. */
static int assimilate(struct server *s, const struct ajob *a)
{
    if (a->nfiles == 0 && !s->proj.cfg.assimilator_cmd[0]) return 0;  /* heartbeat jobs: nothing to keep */
    struct store *st = server_reader(s);
    struct job_spec spec;
    if (!st || store_job_spec(st, a->job_id, &spec)) return -1;
    char dir[PROJECT_PATH_MAX + 512];
    snprintf(dir, sizeof dir, "%s/results/%s/%s", s->proj.dir, a->batch, spec.name);
    if (mkdir_p(dir, 0755)) {
        log_error("assimilator: cannot create %s", dir);
        return -1;
    }
    for (int i = 0; i < a->nfiles; i++) {
        char name[300], from[PROJECT_PATH_MAX + 300], to[PROJECT_PATH_MAX + 600];
        snprintf(name, sizeof name, "%s_%d", a->canonical, a->files[i].k);
        project_file_path(&s->proj, from, sizeof from, "upload", name);
        snprintf(to, sizeof to, "%s/%s", dir, a->files[i].open_name);
        if (copy_file(from, to)) {
            log_error("assimilator: job %s: cannot copy %s to %s", spec.name, from, to);
            return -1;
        }
    }
    if (s->proj.cfg.assimilator_cmd[0] && run_hook(s->proj.cfg.assimilator_cmd, dir, a, spec.name)) {
        log_error("assimilator: job %s: assimilator_cmd failed", spec.name);
        return -1;
    }
    log_debug(LT_VALID, "job %s assimilated into %s", spec.name, dir);
    return 0;
}

static void assimilate_job(struct server *s, int64_t job_id)
{
    struct ajob a = {.job_id = job_id};
    pthread_mutex_lock(&s->lock);
    struct sjob *j = index_job(&s->idx, job_id);
    struct instance *canon = j && j->st.state == JOB_VALIDATED ? job_instance(j, j->st.canonical_id) : NULL;
    if (canon) {
        snprintf(a.batch, sizeof a.batch, "%s", j->batch->b.name);
        instance_wire_name(a.canonical, sizeof a.canonical, j->batch->b.name, j->id, canon->seq);
        files_to_keep(j, &a);
    }
    pthread_mutex_unlock(&s->lock);
    if (!canon) return;

    int rc = assimilate(s, &a);
    struct change_log log;
    change_log_init(&log);
    pthread_mutex_lock(&s->lock);
    j = index_job(&s->idx, job_id);
    if (j && j->st.state == JOB_VALIDATED) {
        int64_t now = s->clock();
        index_end_job(&s->idx, j, rc ? JOB_FAILED : JOB_DONE, rc ? JOB_ERR_ASSIMILATE : 0, now, &log);
        index_reap_batches(&s->idx, now, &log);
        writer_submit(s->writer, &log);
    }
    pthread_mutex_unlock(&s->lock);
    change_log_free(&log);
}

void *assimilator_main(void *arg)
{
    struct server *s = arg;
    int64_t id;
    while (workq_pop(&s->assimilate_q, &id)) assimilate_job(s, id);
    return NULL;
}
