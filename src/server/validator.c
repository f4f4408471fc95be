/* validator.c - the validator thread: compares the successful results of a
 * job (bitwise by SHA-256 of every output file, or with the project's
 * validator_cmd), lets the pure policy choose the canonical result, and
 * grants credit for valid ones. File reading happens outside the lock. */
#include "core/digest.h"
#include "core/log.h"
#include "core/run.h"
#include "core/strbuf.h"
#include "model/credit.h"
#include "sched/validate.h"
#include "server/server.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct candidate {
    int64_t id;
    char name[INSTANCE_NAME_MAX];
    int canonical;
    char digest[MAX_OUTPUTS][SHA256_HEX_LEN];
    const char *path[MAX_OUTPUTS];   /* in the job's pool */
};

struct vjob {
    int64_t job_id;
    int noutputs, min_quorum;
    double flops_est;
    int n;
    struct candidate c[VALIDATE_MAX];
    struct strpool pool;
};

/* Copies what validation needs into a zeroed v (lock held). 0 if there is
 * nothing to do. */
static int snapshot(struct server *s, struct sjob *j, struct vjob *v)
{
    v->job_id = j->id;
    v->noutputs = j->batch->b.noutputs;
    v->min_quorum = job_quorum(&j->batch->b.red, &j->st);   /* 1 for a job sent only to trusted hosts */
    v->flops_est = j->flops_est;
    for (int i = 0; i < j->ninst && v->n < VALIDATE_MAX; i++) {
        const struct instance *in = &j->inst[i];
        int is_canonical = in->id == j->st.canonical_id;
        if (in->state != INST_OVER || in->outcome != OUTCOME_SUCCESS) continue;
        if (!is_canonical && in->validate_state != VALIDATE_INIT && in->validate_state != VALIDATE_INCONCLUSIVE)
            continue;
        struct candidate *c = &v->c[v->n++];
        c->id = in->id;
        c->canonical = is_canonical;
        sjob_instance_name(c->name, sizeof c->name, j, in->seq);
        for (int k = 0; k < v->noutputs; k++) {
            char out[300], path[PROJECT_PATH_MAX + 310];
            snprintf(out, sizeof out, "%s_%d", c->name, k);
            project_file_path(&s->proj, path, sizeof path, "upload", out);
            c->path[k] = strpool_printf(&v->pool, "%s", path);
        }
    }
    return v->n;
}

int results_agree(const struct server *s, const char *const *a, char (*da)[SHA256_HEX_LEN], const char *const *b,
                  char (*db)[SHA256_HEX_LEN], int nout)
{
    const struct project_config *c = server_cfg(s);
    const char *cmd = c->validator_cmd;
    if (cmd[0]) {   /* the project's comparison command: exit 0 = agree */
        const char *args[2 * MAX_OUTPUTS + 1];
        int n = 0;
        for (int k = 0; k < nout; k++) args[n++] = a[k];
        for (int k = 0; k < nout; k++) args[n++] = b[k];
        args[n] = NULL;
        return run_command(cmd, "locus-validator", args, NULL, NULL, HOOK_MS(c)) == 0;
    }
    for (int k = 0; k < nout; k++)
        if (strcmp(da[k], db[k])) return 0;
    return 1;
}

static void compare(struct server *s, struct vjob *v, struct validate_input *in)
{
    memset(in, 0, sizeof *in);
    in->n = v->n;
    in->min_quorum = v->min_quorum;
    in->canonical = -1;
    for (int i = 0; i < v->n; i++) {
        struct candidate *c = &v->c[i];
        in->usable[i] = 1;
        for (int k = 0; k < v->noutputs; k++)
            if (sha256_hex_file(c->path[k], c->digest[k])) in->usable[i] = 0;
        if (c->canonical) in->canonical = i;
    }
    for (int i = 0; i < v->n; i++) {
        in->eq[i][i] = in->usable[i];
        for (int j = i + 1; j < v->n; j++) {
            struct candidate *a = &v->c[i], *b = &v->c[j];
            int same = in->usable[i] && in->usable[j] &&
                       results_agree(s, a->path, a->digest, b->path, b->digest, v->noutputs);
            in->eq[i][j] = in->eq[j][i] = same;
        }
    }
}

static void validate_job(struct server *s, int64_t job_id)
{
    struct vjob v;
    memset(&v, 0, sizeof v);
    pthread_mutex_lock(&s->lock);
    struct sjob *j = index_job(&s->idx, job_id);
    int have = j && j->validating && snapshot(s, j, &v);
    if (j && !have) j->validating = 0;
    pthread_mutex_unlock(&s->lock);
    if (!have) {
        strpool_free(&v.pool);
        return;
    }

    struct validate_input in;
    struct validate_output out;
    compare(s, &v, &in);
    validate_decide(&in, &out);

    int64_t ids[VALIDATE_MAX];
    for (int i = 0; i < v.n; i++) ids[i] = v.c[i].id;
    double credit = credit_for_job(v.flops_est);
    struct change_log log;
    change_log_init(&log);
    pthread_mutex_lock(&s->lock);
    int64_t now = s->clock();
    j = index_job(&s->idx, job_id);
    if (j) {
        int ev = index_validated(&s->idx, j, ids, out.state, v.n, out.canonical >= 0 ? ids[out.canonical] : 0,
                                 out.want_more, credit, now, &log);
        server_job_events(s, j, ev, now, &log);
        log_debug(LT_VALID, "job %lld: %d results, canonical %s%s", (long long)job_id, v.n,
                  out.canonical >= 0 ? v.c[out.canonical].name : "none", out.want_more ? ", one more wanted" : "");
    }
    if (log.n) writer_submit(s->writer, &log);
    pthread_mutex_unlock(&s->lock);
    change_log_free(&log);
    strpool_free(&v.pool);
}

void *validator_main(void *arg)
{
    struct server *s = arg;
    int64_t id;
    while (workq_pop(&s->validate_q, &id)) validate_job(s, id);
    return NULL;
}
