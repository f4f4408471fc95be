/* cmd_sequence.c - `locus sequence create | extend | end | list`: work
 * sequences (docs/sequences.md), through orders/sequence_order.c as the REST
 * API does. Creating one writes its batch, its record (and its twin's) and
 * the jobs of every position in one transaction; extending and ending
 * change the records, which locusd picks up by their revision. */
#include "cli/cli.h"
#include "orders/sequence_order.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The CLI's exit status for an order that failed. */
static int order_status(enum seq_order_rc rc) { return rc ? CLI_FAIL : 0; }

struct create_ctx { struct sequence_order o; struct batch b; };

static int create_sequences(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    (void)copies;
    struct create_ctx *c = ctx;
    return order_status(sequence_order_create(cp->s, &c->o, (int64_t)time(NULL), &c->b, err, errlen));
}

/* What a create made, locally and remotely the same. */
static void print_created(const char *batch, long long id, const struct sequence_order *o, int length)
{
    printf("created batch %s (id %lld): %d sequence%s of %d positions%s\n", batch, id, o->count,
           o->count == 1 ? "" : "s", length, o->twins ? ", each with its twin" : "");
}

/* sequence create on a server: POST sequences with the options as JSON. */
static int remote_create(const struct cli_opt *opts, const struct sequence_order *o, int length, char *err,
                         size_t errlen)
{
    if (cli_seen(opts, "user"))
        return cli_errf(err, errlen, CLI_USAGE, "--user is for the server's own command line: remote sequences are "
                        "the key's user's");
    static const char *const skip[] = {NULL};
    json_t *answer = NULL;
    int rc = remote_json("POST", "sequences", remote_opts_json(opts, skip), &answer, err, errlen);
    if (rc) return rc;
    print_created(json_string_value(json_object_get(answer, "batch")),
                  (long long)json_integer_value(json_object_get(answer, "batch_id")), o, length);
    json_decref(answer);
    return 0;
}

int cmd_sequence_create(int argc, char **argv, char *err, size_t errlen)
{
    struct create_ctx c;
    sequence_order_defaults(&c.o);
    const char *pos[1];
    int length = 0;
    struct cli_list outs = {.n = 0};
    struct cli_opt opts[] = {
        {"app", OPT_STR, &c.o.app, 1, 0},
        {"name", OPT_STR, &c.o.name, 1, 0},
        {"length", OPT_INT, &length, 1, 0},
        {"max-result-time", OPT_DOUBLE, &c.o.max_result_time, 1, 0},
        {"count", OPT_INT, &c.o.count, 0, 0},
        {"restart-every", OPT_INT, &c.o.restart_every, 0, 0},
        {"output-every", OPT_INT, &c.o.output_every, 0, 0},
        {"open", OPT_FLAG, &c.o.open_ended, 0, 0},
        {"delay-bound", OPT_DOUBLE, &c.o.delay_bound, 0, 0},
        {"flops", OPT_DOUBLE, &c.o.flops, 0, 0},
        {"cmdline", OPT_STR, &c.o.cmdline, 0, 0},
        {"initial-state", OPT_STR, &c.o.initial_state, 0, 0},
        {"state-max-bytes", OPT_DOUBLE, &c.o.state_max_bytes, 0, 0},
        {"output", OPT_LIST, &outs, 0, 0},
        {"no-output", OPT_FLAG, &c.o.no_output, 0, 0},
        {"priority", OPT_INT, &c.o.priority, 0, 0},
        {"user", OPT_STR, &c.o.user, 0, 0},
        {"twins", OPT_FLAG, &c.o.twins, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int r = cli_remote();   /* remotely, no project folder */
    pos[0] = NULL;
    int rc = cli_parse(argc, argv, opts, pos + r, 1 - r, 1 - r, err, errlen);
    if (!rc && c.o.no_output && outs.n) rc = cli_errf(err, errlen, CLI_USAGE, "give --output or --no-output, not both");
    if (rc) return rc;
    if (r) return remote_create(opts, &c.o, length, err, errlen);
    c.o.length = length;
    c.o.outputs = outs.v;
    c.o.noutputs = outs.n;
    struct cli_project cp = {.s = NULL};
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = cli_transaction(&cp, create_sequences, &c, err, errlen);
    if (!rc) print_created(c.b.name, (long long)c.b.id, &c.o, length);
    cli_close(&cp);
    return rc;
}

/* ---- extend, end ---- */

struct change_ctx { const char *name; long more; struct sequence_rec q; };

static int change_sequence(struct cli_project *cp, struct cli_copies *copies, void *ctx, char *err, size_t errlen)
{
    (void)copies;
    struct change_ctx *c = ctx;
    return order_status(sequence_order_change(cp->s, c->name, 0, c->more ? SEQ_EXTEND_BY : SEQ_END, c->more,
                                              (int64_t)time(NULL), &c->q, err, errlen));
}

static int run_change(int argc, char **argv, int ended, char *err, size_t errlen)
{
    const char *pos[3] = {NULL, NULL, NULL};
    struct cli_opt opts[] = {{NULL, 0, NULL, 0, 0}};
    int r = cli_remote();   /* remotely, no project folder */
    int rc = cli_parse(argc, argv, opts, pos + r, (ended ? 2 : 3) - r, (ended ? 2 : 3) - r, err, errlen);
    if (rc) return rc;
    struct change_ctx c = {.name = pos[1]};
    if (!ended) {
        char *end;
        c.more = strtol(pos[2], &end, 10);
        if (*end || end == pos[2] || c.more < 1 || c.more > SEQ_LENGTH_MAX)
            return cli_errf(err, errlen, CLI_USAGE, "the number of positions to add must be from 1 to %d",
                            SEQ_LENGTH_MAX);
    }
    if (r) {   /* POST sequences/NAME/extend or /end */
        char *k = remote_escape(c.name), path[1024];
        snprintf(path, sizeof path, "sequences/%s/%s", k, ended ? "end" : "extend");
        free(k);
        json_t *answer = NULL;
        rc = remote_json("POST", path, ended ? NULL : json_pack("{s:I}", "positions", (json_int_t)c.more), &answer,
                         err, errlen);
        if (rc) return rc;
        c.q.length = (int64_t)json_integer_value(json_object_get(answer, "length"));
        json_decref(answer);
    } else {
        struct cli_project cp;
        rc = cli_open(&cp, pos[0], 0, err, errlen);
        if (!rc) rc = cli_transaction(&cp, change_sequence, &c, err, errlen);
        cli_close(&cp);
        if (rc) return rc;
    }
    if (ended) printf("sequence %s: ended; the server cancels what is not sent and tells its host\n", c.name);
    else printf("sequence %s: %lld positions\n", c.name, (long long)c.q.length);
    return 0;
}

int cmd_sequence_extend(int argc, char **argv, char *err, size_t errlen) { return run_change(argc, argv, 0, err, errlen); }
int cmd_sequence_end(int argc, char **argv, char *err, size_t errlen) { return run_change(argc, argv, 1, err, errlen); }

/* ---- list ---- */

static const char *const state_names[] = {[SEQ_ACTIVE] = "active", [SEQ_ENDED] = "ended", [SEQ_FAILED] = "failed"};

struct list_ctx { struct store *st; int failed; };

static int list_row(void *ctx, const struct sequence_rec *q)
{
    struct list_ctx *c = ctx;
    struct sequence_rec t;
    int rc = q->twin_id ? store_sequence_get(c->st, q->twin_id, &t) : 1;
    if (rc < 0) return c->failed = 1;
    printf("%-32s %-6s %8lld %8lld %8lld %6d %8lld %6d %-32s\n", q->name,
           state_names[q->state >= SEQ_ACTIVE && q->state <= SEQ_FAILED ? q->state : SEQ_ENDED], (long long)q->length,
           (long long)(q->first_unvalidated_pos - 1), (long long)q->host_id, q->branch, (long long)q->restart_pos,
           q->relocations, rc == 0 ? t.name : "-");
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
    printf("%-32s %-6s %8s %8s %8s %6s %8s %6s %-32s\n", "name", "state", "length", "valid", "host", "branch",
           "restart", "moves", "twin");
    struct list_ctx c = {cp.s, 0};
    if (store_each_sequence_all(cp.s, list_row, &c) || c.failed)
        rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    cli_close(&cp);
    return rc;
}
