/* cmd_job.c - `locus job show DIR BATCH JOB [--json]`: what happened to
 * one job: its state and inputs, and each of its instances with its host,
 * times, outcome, exit status, the tail of its stderr and its output files
 * on disk; and the wording of errors that `locus batch show` and `locus
 * stat` share. The views and their JSON are store/store_job_view.h's,
 * which the REST API answers with too. Reads the store read-only, so it
 * never blocks the running server. */
#include "cli/cli.h"
#include "store/store_job_view.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

void cli_format_time(int64_t t, char *out, size_t len)
{
    time_t tt = (time_t)t;
    if (t <= 0 || !strftime(out, len, "%Y-%m-%d %H:%M:%S", localtime(&tt))) snprintf(out, len, "-");
}

void cli_format_error(const struct failure_group *g, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "%s", outcome_name(g->outcome));
    /* a host reports an exit status with a client error; another outcome's is 0 but when it ran */
    if (n < len && (g->outcome == OUTCOME_CLIENT_ERROR || g->exit_status))
        n += (size_t)snprintf(out + n, len - n, ", exit %d", g->exit_status);
    /* a host that never reported had nothing to say */
    if (n < len && (g->error[0] || g->outcome != OUTCOME_NO_REPLY))
        snprintf(out + n, len - n, ": %s", g->error[0] ? g->error : "(no stderr)");
}

/* "name: path (N bytes)" or "name: not on disk". */
static void print_file(const char *indent, const struct jv_file *f)
{
    if (f->nbytes >= 0) printf("%s%s: %s (%lld bytes)\n", indent, f->name, f->path, (long long)f->nbytes);
    else printf("%s%s: not on disk (%s)\n", indent, f->name, f->file);
}

/* The tail of stderr, each line indented. */
static void print_lines(const char *text)
{
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        printf("    | %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

static void print_instance(const struct jv_instance *x)
{
    const struct instance *in = &x->in;
    char sent[32], back[32], due[32];
    cli_format_time(in->sent_time, sent, sizeof sent);
    cli_format_time(in->received_time, back, sizeof back);
    cli_format_time(in->deadline, due, sizeof due);
    printf("\ninstance %s%s: %s, %s, exit status %d, validation %s\n", x->name, x->canonical ? " (canonical)" : "",
           jv_instance_state_name(in->state), outcome_name(in->outcome), in->exit_status,
           jv_validate_state_name(in->validate_state));
    printf("  host %lld (%s), user %s, ", (long long)in->host_id, x->host[0] ? x->host : "no name", x->user);
    if (in->app_version_id == APP_VERSION_ANONYMOUS) printf("the host's own app version\n");
    else if (x->version_num) printf("app version %d %s%s%s\n", x->version_num, x->platform, x->plan_class[0] ? " " : "",
                                    x->plan_class);
    else printf("app version unknown\n");
    printf("  sent %s, deadline %s, received %s\n", sent, due, back);
    printf("  elapsed %.1f s, cpu %.1f s, credit %.2f\n", in->elapsed_time, in->cpu_time, in->credit);
    for (int k = 0; k < x->noutputs; k++) print_file("  output ", &x->outputs[k]);
    if (x->message[0]) printf("  client's message: %s\n", x->message);
    if (!x->stderr_lines) {
        printf("  stderr: none\n");
        return;
    }
    int shown = 1;
    for (const char *p = x->stderr_tail; *p; p++) shown += *p == '\n';
    if (x->stderr_cut)
        printf("  stderr (the last %d of %d lines, at most %d bytes):\n", shown, x->stderr_lines, JV_STDERR_TAIL_BYTES);
    else
        printf("  stderr (%d line%s):\n", x->stderr_lines, x->stderr_lines == 1 ? "" : "s");
    print_lines(x->stderr_tail);
}

static void print_job(const struct job_view *v)
{
    printf("job %s (id %lld), number %lld of batch %s", v->spec.name, (long long)v->spec.id, (long long)v->number,
           v->batch);
    if (strcmp(v->job_batch, v->batch)) printf(" (in its chunk %s)", v->job_batch);
    printf(": %s", job_state_name(v->st.state));
    for (int k = 0, first = 1; k < JV_JOB_ERRORS; k++)
        if (v->st.error_mask & jv_job_error_bit(k)) {
            printf("%s%s", first ? " (" : ", ", jv_job_error_name(k));
            first = 0;
        }
    printf("%s\n", v->st.error_mask ? ")" : "");
    if (v->matched_by == JV_BY_INSTANCE) printf("  %s is its instance %d\n", v->asked, v->asked_seq);
    else if (v->matched_by == JV_BY_NUMBER) printf("  %s is its number in batch %s\n", v->asked, v->batch);
    printf("app %s, command line '%s', results wanted: %d\n", v->app, v->spec.cmdline, v->st.target_nresults);
    if (!v->ninputs) printf("inputs: none\n");
    for (int i = 0; i < v->ninputs; i++) {
        const struct jv_input *in = &v->inputs[i];
        if (in->nbytes >= 0) printf("input %s as %s (%lld bytes)\n", in->file, in->open_name, (long long)in->nbytes);
        else printf("input %s: unknown file\n", in->open_name);
    }
    int kept = 0;
    for (int k = 0; k < v->nresults; k++) kept += v->results[k].nbytes >= 0;
    if (kept)
        for (int k = 0; k < v->nresults; k++) print_file("result ", &v->results[k]);
    else
        printf("results: none in results/\n");
    printf("%d instance%s\n", v->ninst, v->ninst == 1 ? "" : "s");
    for (int i = 0; i < v->ninst; i++) print_instance(&v->inst[i]);
}

static int show(struct cli_project *cp, const char *key, const char *job, int as_json, char *err, size_t errlen)
{
    struct batch b;
    int rc = batch_find(cp->s, key, &b);
    if (rc == 1) return cli_errf(err, errlen, CLI_FAIL, "no batch named or numbered '%s' (see locus batch list)", key);
    if (rc) return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s));
    struct job_view v;
    rc = job_view_get(cp->s, &cp->p, &b, job, &v);
    if (!rc && as_json) cli_print_json(job_view_json(&v));
    else if (!rc) print_job(&v);
    job_view_free(&v);
    if (rc == 1)
        return cli_errf(err, errlen, CLI_FAIL, "batch %s has no job named '%s', no instance of that name and no job "
                        "of that number", b.name, job);
    return rc ? cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp->s)) : 0;
}

int cmd_job_show(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[3];
    int as_json = 0;
    struct cli_opt opts[] = {
        {"json", OPT_FLAG, &as_json, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 3, 3, err, errlen);
    if (rc) return rc;
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (!rc) rc = show(&cp, pos[1], pos[2], as_json, err, errlen);
    cli_close(&cp);
    return rc;
}
