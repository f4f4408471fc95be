/* fuzz_jdl.c - libFuzzer harness for the campaign description parser:
 * any input parses or fails cleanly with one line naming what failed; a
 * parsed campaign keeps the JDL's bounds, and its canonical JSON parses
 * back to the same campaign; the same bytes given as a params text either add
 * params or leave the campaign as it was. */
#include "grid/jdl.h"

#include <stdint.h>
#include <string.h>

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

static void check_spec(const struct campaign_spec *s)
{
    check(s->name && s->name[0] && strlen(s->name) <= JDL_NAME_MAX);
    check(s->nclusters >= 1 && s->nclusters <= JDL_CLUSTERS_MAX);
    check(campaign_nparams(s) <= JDL_PARAMS_MAX);
    check(campaign_nparams(s) > 0 || s->params.param_file);
    for (int i = 0; i < s->nclusters; i++) {
        const struct cluster_spec *c = &s->clusters[i];
        check(c->exec_file[0] && c->walltime > 0 && c->walltime <= JDL_SECONDS_MAX);
        check(c->prologue_walltime > 0 && c->epilogue_walltime > 0);
        check(c->checkpointing_period >= 0 && c->checkpointing_period < c->walltime);
        check(c->nlevels >= 1 && c->nlevels <= JDL_LEVELS_MAX);
        for (int k = 0; k < c->nlevels; k++) check(c->levels[k].count >= 1 && c->levels[k].count <= JDL_COUNT_MAX);
        check(i == 0 || strcmp(s->clusters[i - 1].name, c->name) < 0);
    }
}

static int lines_same(char **a, int na, char **b, int nb)
{
    if (na != nb) return 0;
    for (int i = 0; i < na; i++)
        if (strcmp(a[i], b[i])) return 0;
    return 1;
}

static int cluster_same(const struct cluster_spec *a, const struct cluster_spec *b)
{
    if (strcmp(a->name, b->name) || strcmp(a->exec_file, b->exec_file) || strcmp(a->exec_directory, b->exec_directory)
        || strcmp(a->properties, b->properties) || strcmp(a->project, b->project) || a->nlevels != b->nlevels)
        return 0;
    for (int i = 0; i < a->nlevels; i++)
        if (strcmp(a->levels[i].name, b->levels[i].name) || a->levels[i].count != b->levels[i].count) return 0;
    return a->walltime == b->walltime && a->prologue_walltime == b->prologue_walltime
           && a->epilogue_walltime == b->epilogue_walltime && a->max_jobs == b->max_jobs
           && a->best_effort == b->best_effort && lines_same(a->prologue, a->nprologue, b->prologue, b->nprologue)
           && lines_same(a->epilogue, a->nepilogue, b->epilogue, b->nepilogue)
           && a->checkpointing_signal == b->checkpointing_signal && a->checkpointing_period == b->checkpointing_period
           && a->temporal_grouping == b->temporal_grouping
           && a->temporal_grouping_duration == b->temporal_grouping_duration;
}

/* Every field of the two campaigns, not their JSON: a field to_json
 * forgot would look the same in both. */
static int spec_same(const struct campaign_spec *a, const struct campaign_spec *b)
{
    if (strcmp(a->name, b->name) || a->type != b->type || a->priority != b->priority
        || a->params.nb_jobs != b->params.nb_jobs || !a->params.param_file != !b->params.param_file
        || (a->params.param_file && strcmp(a->params.param_file, b->params.param_file))
        || campaign_nparams(a) != campaign_nparams(b) || a->nclusters != b->nclusters)
        return 0;
    for (size_t i = 0; i < campaign_nparams(a); i++)
        if (strcmp(campaign_param(a, i), campaign_param(b, i))) return 0;
    for (int i = 0; i < a->nclusters; i++)
        if (!cluster_same(&a->clusters[i], &b->clusters[i])) return 0;
    return 1;
}

/* parse(to_json(s)) == s, and gives the same canonical JSON. */
static void check_round_trip(const struct campaign_spec *s)
{
    json_t *j = jdl_to_json(s);
    char *text = json_dumps(j, 0);
    check(text != NULL);
    struct campaign_spec t;
    char err[512];
    check(jdl_parse(text, strlen(text), &t, err, sizeof err) == 0);
    check(spec_same(s, &t));
    json_t *j2 = jdl_to_json(&t);
    check(json_equal(j, j2));
    json_decref(j);
    json_decref(j2);
    free(text);
    campaign_spec_free(&t);
}

static void check_params_text(const char *text, size_t size)
{
    static const char base[] = "{\"name\": \"f\", \"params\": [\"a\", \"b c\"], \"exec_file\": \"x\", \"clusters\": {\"z\": {}}}";
    struct campaign_spec s;
    char err[512];
    check(jdl_parse(base, sizeof base - 1, &s, err, sizeof err) == 0);
    if (jdl_add_params_text(&s, text, size, err, sizeof err) == 0) {
        check(campaign_nparams(&s) >= 2);
        check_round_trip(&s);
    } else {
        check(err[0] && !strchr(err, '\n'));
        check(campaign_nparams(&s) == 2 && !strcmp(campaign_param(&s, 1), "b c"));
    }
    campaign_spec_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct campaign_spec s;
    char err[512];
    err[0] = 0;
    if (jdl_parse(text, size, &s, err, sizeof err) == 0) {
        check_spec(&s);
        if (campaign_nparams(&s) <= 100000) check_round_trip(&s);   /* keep each run short */
    } else {
        check(err[0] && !strchr(err, '\n'));
        check(s.name == NULL && s.nclusters == 0 && campaign_nparams(&s) == 0);
    }
    campaign_spec_free(&s);
    check_params_text(text, size);
    return 0;
}
