/* cmd_sequence.c - `locus sequence create | extend | end | list`: work
 * sequences (docs/sequences.md). Creating one writes its batch, its record
 * and the jobs of every position in one transaction; extending and ending
 * change the record, which locusd picks up by its revision. */
#include "cli/cli.h"
#include "cli/jobdesc.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SEQ_COUNT_MAX 1000000
#define SEQ_LENGTH_MAX 10000000

struct seq_create {
    struct batch b;
    struct sequence_rec q;       /* the fields every sequence shares */
    struct job_spec first;       /* position 1, the template of the others */
    const char *app, *user, *initial_state;
    int count;
};

static int find_names(struct cli_project *cp, struct seq_create *sc, char *err, size_t errlen)
{
    if (cli_app_user(cp->s, sc->app, sc->user, &sc->b.app_id, &sc->b.user_id, err, errlen)) return CLI_FAIL;
    sc->first.app_id = sc->b.app_id;
    if (sc->initial_state) {
        struct file_rec f;
        int rc = store_file_by_name(cp->s, sc->initial_state, &f);
        if (rc == 1)
            return cli_errf(err, errlen, CLI_FAIL, "unknown file '%s': add it with locus file add", sc->initial_state);
        if (rc) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
        sc->first.inputs[0].file_id = f.id;
        snprintf(sc->first.inputs[0].open_name, sizeof sc->first.inputs[0].open_name, "state_in");
        sc->first.ninputs = 1;
        file_rec_clear(&f);
    }
    return 0;
}

static int create_sequences(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    (void)copies;
    struct seq_create *sc = ctx;
    if (find_names(cp, sc, err, errlen)) return CLI_FAIL;
    struct batch same;
    if (store_batch_by_name(cp->s, sc->b.name, &same) == 0)
        return cli_errf(err, errlen, CLI_FAIL, "a batch named %s exists: choose another --name", sc->b.name);
    if (store_batch_insert(cp->s, &sc->b)) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    for (int i = 1; i <= sc->count; i++) {
        struct sequence_rec q = sc->q;
        q.batch_id = sc->b.id;
        if (sc->count == 1) snprintf(q.name, sizeof q.name, "%s", sc->b.name);
        else snprintf(q.name, sizeof q.name, "%.100s-%d", sc->b.name, i);
        struct job_spec j = sc->first;
        j.batch_id = sc->b.id;
        j.job_num = 1;
        snprintf(j.name, sizeof j.name, "%s_1", q.name);
        if (store_sequence_insert(cp->s, &q)) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
        j.sequence_id = q.id;
        if (store_job_insert(cp->s, &j, &sc->b.red) ||
            (q.length > 1 && store_sequence_make_jobs(cp->s, &q, 2, q.length, 0, sc->b.id, sc->b.create_time)))
            return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    }
    return 0;
}

/* Everything that needs no store. */
static int check_create(struct seq_create *sc, const char *name, const char *cmdline, double flops,
                        const struct cli_list *outs, int no_output, char *err, size_t errlen)
{
    struct sequence_rec *q = &sc->q;
    if (!name_is_safe(name) || strlen(name) > 100)
        return cli_errf(err, errlen, CLI_FAIL, "--name '%s' is not a safe name of at most 100 characters", name);
    if (q->length < 1 || q->length > SEQ_LENGTH_MAX)
        return cli_errf(err, errlen, CLI_FAIL, "--length must be from 1 to %d", SEQ_LENGTH_MAX);
    if (sc->count < 1 || sc->count > SEQ_COUNT_MAX)
        return cli_errf(err, errlen, CLI_FAIL, "--count must be from 1 to %d", SEQ_COUNT_MAX);
    if (q->restart_every < 0 || q->output_every < 0)
        return cli_errf(err, errlen, CLI_FAIL, "--restart-every and --output-every take 0 or more");
    if (!(q->max_result_time > 0)) return cli_errf(err, errlen, CLI_FAIL, "--max-result-time must be positive (seconds)");
    if (q->state_max_nbytes < 1) return cli_errf(err, errlen, CLI_FAIL, "--state-max-bytes must be positive");
    if (!(flops > 0)) return cli_errf(err, errlen, CLI_FAIL, "--flops must be positive");
    if (cmdline && strlen(cmdline) >= sizeof sc->first.cmdline)
        return cli_errf(err, errlen, CLI_FAIL, "--cmdline is longer than %zu bytes", sizeof sc->first.cmdline - 1);
    /* the next result waits behind the one computing: two result times by default */
    if (sc->b.delay_bound <= 0) sc->b.delay_bound = 2 * q->max_result_time;
    if (sc->b.delay_bound < q->max_result_time)
        return cli_errf(err, errlen, CLI_FAIL, "--delay-bound must be at least --max-result-time");
    snprintf(sc->b.name, sizeof sc->b.name, "%s", name);
    sc->b.create_time = q->create_time = (int64_t)time(NULL);
    sc->b.state = BATCH_ACTIVE;
    sc->b.red = (struct redundancy){1, 1, RED_UNSET, RED_UNSET, RED_UNSET};
    if (redundancy_complete(&sc->b.red, err, errlen)) return CLI_FAIL;
    q->made_pos = q->length;
    snprintf(sc->first.cmdline, sizeof sc->first.cmdline, "%s", cmdline ? cmdline : "");
    sc->first.flops_est = flops;
    sc->first.flops_bound = flops * 10;
    sc->first.mem_bound = 1e9;
    sc->first.disk_bound = 1e9 + (double)q->state_max_nbytes * 2;
    return cli_batch_outputs(&sc->b, outs, no_output, err, errlen);
}

int cmd_sequence_create(int argc, char **argv, char *err, size_t errlen)
{
    struct seq_create sc;
    memset(&sc, 0, sizeof sc);
    const char *name = NULL, *cmdline = NULL, *pos[1];
    double flops = JOB_DEFAULT_FLOPS, state_max = 1 << 30;
    int length = 0, no_output = 0;
    struct cli_list outs = {.n = 0};
    sc.count = 1;
    sc.q.restart_every = 10;
    sc.q.output_every = 1;
    struct cli_opt opts[] = {
        {"app", OPT_STR, &sc.app, 1, 0},
        {"name", OPT_STR, &name, 1, 0},
        {"length", OPT_INT, &length, 1, 0},
        {"max-result-time", OPT_DOUBLE, &sc.q.max_result_time, 1, 0},
        {"count", OPT_INT, &sc.count, 0, 0},
        {"restart-every", OPT_INT, &sc.q.restart_every, 0, 0},
        {"output-every", OPT_INT, &sc.q.output_every, 0, 0},
        {"open", OPT_FLAG, &sc.q.open_ended, 0, 0},
        {"delay-bound", OPT_DOUBLE, &sc.b.delay_bound, 0, 0},
        {"flops", OPT_DOUBLE, &flops, 0, 0},
        {"cmdline", OPT_STR, &cmdline, 0, 0},
        {"initial-state", OPT_STR, &sc.initial_state, 0, 0},
        {"state-max-bytes", OPT_DOUBLE, &state_max, 0, 0},
        {"output", OPT_LIST, &outs, 0, 0},
        {"no-output", OPT_FLAG, &no_output, 0, 0},
        {"priority", OPT_INT, &sc.b.priority, 0, 0},
        {"user", OPT_STR, &sc.user, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    sc.q.length = length;
    sc.q.state_max_nbytes = state_max >= 1 && state_max < 1e15 ? (int64_t)state_max : 0;
    if (!rc) rc = check_create(&sc, name, cmdline, flops, &outs, no_output, err, errlen);
    struct cli_project cp = {.s = NULL};
    if (!rc) rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = cli_transaction(&cp, create_sequences, &sc, err, errlen);
    if (!rc)
        printf("created batch %s (id %lld): %d sequence%s of %d positions\n", sc.b.name, (long long)sc.b.id, sc.count,
               sc.count == 1 ? "" : "s", length);
    cli_close(&cp);
    return rc;
}

/* ---- extend, end ---- */

struct seq_change { const char *name; long more; int ended; struct sequence_rec q; };

static int change_sequence(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    (void)copies;
    struct seq_change *c = ctx;
    int rc = store_sequence_by_name(cp->s, c->name, &c->q);
    if (rc == 1) return cli_errf(err, errlen, CLI_FAIL, "no sequence named '%s' (see locus sequence list)", c->name);
    if (rc) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    if (c->q.state == SEQ_ENDED) return cli_errf(err, errlen, CLI_FAIL, "sequence %s has ended", c->name);
    rc = c->ended ? store_sequence_end(cp->s, c->q.id, (int64_t)time(NULL))
                  : store_sequence_extend(cp->s, c->q.id, c->q.length + c->more);
    return rc ? cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s)) : 0;
}

static int run_change(int argc, char **argv, int ended, char *err, size_t errlen)
{
    const char *pos[3];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, ended ? 2 : 3, ended ? 2 : 3, err, errlen);
    if (rc) return rc;
    struct seq_change c = {.name = pos[1], .ended = ended};
    if (!ended) {
        char *end;
        c.more = strtol(pos[2], &end, 10);
        if (*end || end == pos[2] || c.more < 1 || c.more > SEQ_LENGTH_MAX)
            return cli_errf(err, errlen, CLI_USAGE, "the number of positions to add must be from 1 to %d",
                            SEQ_LENGTH_MAX);
    }
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = cli_transaction(&cp, change_sequence, &c, err, errlen);
    cli_close(&cp);
    if (rc) return rc;
    if (ended) printf("sequence %s: ended; the server cancels what is not sent and tells its host\n", c.name);
    else printf("sequence %s: %lld positions\n", c.name, (long long)(c.q.length + c.more));
    return 0;
}

int cmd_sequence_extend(int argc, char **argv, char *err, size_t errlen) { return run_change(argc, argv, 0, err, errlen); }
int cmd_sequence_end(int argc, char **argv, char *err, size_t errlen) { return run_change(argc, argv, 1, err, errlen); }

/* ---- list ---- */

static int list_row(void *ctx, const struct sequence_rec *q)
{
    (void)ctx;
    printf("%-32s %-6s %8lld %8lld %8lld %6d %8lld %6d\n", q->name, q->state == SEQ_ENDED ? "ended" : "active",
           (long long)q->length, (long long)(q->first_unvalidated_pos - 1), (long long)q->host_id, q->branch,
           (long long)q->restart_pos, q->relocations);
    return 0;
}

int cmd_sequence_list(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[1];
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    if (rc) return rc;
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (rc) return rc;
    printf("%-32s %-6s %8s %8s %8s %6s %8s %6s\n", "name", "state", "length", "valid", "host", "branch", "restart",
           "moves");
    if (store_each_sequence_all(cp.s, list_row, NULL)) rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    cli_close(&cp);
    return rc;
}
