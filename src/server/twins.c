/* twins.c - locusd's half of twin work sequences (docs/sequences.md): the
 * policy lists the restart points where both twins uploaded their state;
 * this compares the two state files as the validator compares two results
 * (results_agree: the project's validator_cmd, else SHA-256), reading the
 * files outside the lock, and hands the verdicts back to the policy. */
#include "core/log.h"
#include "server/server.h"

#define TWINS_PER_ROUND 64
#define TWINS_ROUNDS 16   /* a pass drains a backlog, but never spins */

/* 1 if the two state files agree; a file that cannot be read agrees with
 * nothing, as in validation. */
static int states_agree(struct server *s, const struct seq_compare *c)
{
    char paths[2][PROJECT_PATH_MAX + 210], digests[2][1][SHA256_HEX_LEN];
    const char *p[2][1];
    for (int i = 0; i < 2; i++) {
        project_file_path(&s->proj, paths[i], sizeof paths[i], "upload", c->state[i]);
        p[i][0] = paths[i];
        if (sha256_hex_file(paths[i], digests[i][0])) {
            log_warn("twin sequences %lld/%lld position %lld: cannot read %s: counted as a disagreement",
                     (long long)c->seq[0], (long long)c->seq[1], (long long)c->pos, paths[i]);
            return 0;
        }
    }
    return results_agree(s, p[0], digests[0], p[1], digests[1], 1);
}

void twins_compare(struct server *s)
{
    struct seq_compare due[TWINS_PER_ROUND];
    for (int round = 0; round < TWINS_ROUNDS && !s->stopping; round++) {
        pthread_mutex_lock(&s->lock);
        int n = sequence_twins_due(&s->idx, due, TWINS_PER_ROUND);
        pthread_mutex_unlock(&s->lock);
        for (int i = 0; i < n; i++) {
            int agree = states_agree(s, &due[i]);
            struct change_log log;
            change_log_init(&log);
            pthread_mutex_lock(&s->lock);
            int64_t now = s->clock();
            struct job_event_ctx ec = {s, now, &log};
            int rc = sequence_twins_compared(&s->idx, &due[i], agree, now, &log, server_on_job_event, &ec);
            if (log.n) writer_submit(s->writer, &log);
            pthread_mutex_unlock(&s->lock);
            change_log_free(&log);
            if (rc) continue;   /* a twin moved meanwhile: compared again at its next restart point */
            const struct seq_compare *c = &due[i];
            if (agree)
                log_debug(LT_VALID, "twin sequences %lld/%lld agree at position %lld", (long long)c->seq[0],
                          (long long)c->seq[1], (long long)c->pos);
            else
                log_warn("twin sequences %lld/%lld disagree at position %lld (%s, %s): both start again from "
                         "their last agreed point, or fail after %d in a row", (long long)c->seq[0],
                         (long long)c->seq[1], (long long)c->pos, c->state[0], c->state[1], SEQ_TWIN_TRIES);
        }
        if (n < TWINS_PER_ROUND) break;
    }
}
