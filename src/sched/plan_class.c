/* plan_class.c - plan classes: parsing plan_class.xml and matching a host. */
#include "sched/plan_class.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "core/xmltree.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MB (1024.0 * 1024.0)

/* The wire's name of a GPU vendor a project may spell its own way; other
 * names are declared coprocessors' types, kept as written. */
static const struct { const char *alias, *type; } gpu_aliases[] = {
    { "nvidia", "NVIDIA" }, { "cuda", "NVIDIA" },
    { "amd", "ATI" }, { "ati", "ATI" },
    { "intel", "intel_gpu" }, { "intel_gpu", "intel_gpu" },
    { "apple", "apple_gpu" }, { "apple_gpu", "apple_gpu" },
};

int plan_class_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= PLAN_CLASS_LEN) return 0;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.') return 0;
    return 1;
}

/* A number field of a class: a double in [lo, hi]. */
struct num_field { const char *name; size_t off; int is_int; double lo, hi, scale; };

#define PC_DBL(tag, m, lo, hi, scale) { tag, offsetof(struct plan_class, m), 0, lo, hi, scale }
#define PC_INT(tag, m, lo, hi) { tag, offsetof(struct plan_class, m), 1, lo, hi, 1 }

static const struct num_field num_fields[] = {
    PC_DBL("ngpus", ngpus, 0.001, 64, 1),
    PC_DBL("cpu_frac", cpu_frac, 0, 1024, 1),
    PC_DBL("min_gpu_ram_mb", min_gpu_ram, 0, 1e9, MB),
    PC_INT("min_driver_version", min_driver_version, 0, 1e9),
    PC_INT("max_driver_version", max_driver_version, 0, 1e9),
    PC_INT("min_cuda_version", min_cuda_version, 0, 1e9),
    PC_INT("min_compute_capability", min_compute_cap, 0, 1e6),
    PC_INT("max_compute_capability", max_compute_cap, 0, 1e6),
    PC_DBL("gpu_peak_flops_scale", gpu_peak_flops_scale, 1e-6, 1e3, 1),
    PC_INT("min_ncpus", min_ncpus, 0, 1e6),
    PC_INT("max_threads", max_threads, 0, 1e6),
    PC_DBL("mem_usage_mb", mem_usage, 0, 1e12, MB),
};

static int parse_one(const struct xml_node *n, struct plan_class *pc, char *err, size_t errlen)
{
    memset(pc, 0, sizeof *pc);
    pc->ngpus = 1;
    pc->cpu_frac = 0.1;   /* a GPU job mostly waits on its device */
    pc->gpu_peak_flops_scale = 1;
    pc->max_threads = 1;
    const char *name = xml_child_text(n, "name");
    if (!name || !plan_class_name_ok(name)) {
        snprintf(err, errlen, "a <plan_class> needs a <name> of 1-%d letters, digits, '_', '-' or '.'",
                 PLAN_CLASS_LEN - 1);
        return -1;
    }
    snprintf(pc->name, sizeof pc->name, "%s", name);
    for (const struct xml_node *c = n->children; c; c = c->next) {
        if (!strcmp(c->name, "name")) continue;
        if (!strcmp(c->name, "gpu_type")) {
            if (!c->text[0] || strlen(c->text) >= sizeof pc->gpu_type) {
                snprintf(err, errlen, "plan class %s: <gpu_type> must have 1-%zu characters", pc->name,
                         sizeof pc->gpu_type - 1);
                return -1;
            }
            snprintf(pc->gpu_type, sizeof pc->gpu_type, "%s", c->text);
            for (size_t i = 0; i < sizeof gpu_aliases / sizeof gpu_aliases[0]; i++)
                if (!strcasecmp(c->text, gpu_aliases[i].alias))
                    snprintf(pc->gpu_type, sizeof pc->gpu_type, "%s", gpu_aliases[i].type);
            continue;
        }
        if (!strcmp(c->name, "cpu_feature")) {
            if (pc->nfeatures >= PLAN_CLASS_MAX_FEATURES || !c->text[0] || strchr(c->text, ' ') ||
                strlen(c->text) >= PLAN_CLASS_FEATURE_LEN) {
                snprintf(err, errlen, "plan class %s: at most %d <cpu_feature>, each one word", pc->name,
                         PLAN_CLASS_MAX_FEATURES);
                return -1;
            }
            snprintf(pc->features[pc->nfeatures++], PLAN_CLASS_FEATURE_LEN, "%s", c->text);
            continue;
        }
        if (!strcmp(c->name, "os")) {
            if (strlen(c->text) >= sizeof pc->os) {
                snprintf(err, errlen, "plan class %s: <os> too long", pc->name);
                return -1;
            }
            snprintf(pc->os, sizeof pc->os, "%s", c->text);
            continue;
        }
        const struct num_field *f = NULL;
        for (size_t i = 0; i < sizeof num_fields / sizeof num_fields[0]; i++)
            if (!strcmp(c->name, num_fields[i].name)) f = &num_fields[i];
        if (!f) {
            snprintf(err, errlen, "plan class %s: unknown element <%.64s>", pc->name, c->name);
            return -1;
        }
        char *end;
        double v = strtod(c->text, &end);
        if (!c->text[0] || *end || !(v >= f->lo && v <= f->hi)) {
            snprintf(err, errlen, "plan class %s: <%s> must be a number in [%g, %g]", pc->name, f->name, f->lo,
                     f->hi);
            return -1;
        }
        if (f->is_int) *(int *)((char *)pc + f->off) = (int)v;
        else *(double *)((char *)pc + f->off) = v * f->scale;
    }
    return 0;
}

int plan_classes_parse(const char *buf, size_t len, struct plan_class_set *out, char *err, size_t errlen)
{
    out->n = 0;
    out->v = NULL;
    struct xml_node *root = xml_parse(buf, len, err, errlen);
    if (!root) return -1;
    int rc = 0, cap = 0;
    if (strcmp(root->name, "plan_classes")) {
        snprintf(err, errlen, "root element is <%.64s>, expected <plan_classes>", root->name);
        rc = -1;
    }
    for (const struct xml_node *n = root->children; !rc && n; n = n->next) {
        if (strcmp(n->name, "plan_class")) {
            snprintf(err, errlen, "unknown element <%.64s> in <plan_classes>", n->name);
            rc = -1;
        } else if (out->n >= PLAN_CLASS_MAX) {
            snprintf(err, errlen, "more than %d plan classes", PLAN_CLASS_MAX);
            rc = -1;
        } else {
            VEC_GROW(out->v, out->n, cap);
            rc = parse_one(n, &out->v[out->n], err, errlen);
            if (!rc && plan_class_find(out, out->v[out->n].name)) {
                snprintf(err, errlen, "plan class %s is defined twice", out->v[out->n].name);
                rc = -1;
            }
            if (!rc) out->n++;
        }
    }
    xml_free(root);
    if (rc) plan_classes_free(out);
    return rc;
}

void plan_classes_free(struct plan_class_set *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

const struct plan_class *plan_class_find(const struct plan_class_set *s, const char *name)
{
    for (int i = 0; s && i < s->n; i++)
        if (!strcmp(s->v[i].name, name)) return &s->v[i];
    return NULL;
}

/* 1 if word is one of the space-separated words of list. */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        while (*p == ' ') p++;
        const char *e = p;
        while (*e && *e != ' ') e++;
        if ((size_t)(e - p) == n && !strncmp(p, word, n)) return 1;
        p = e;
    }
    return 0;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n)) return 1;
    return n == 0;
}

/* The host's bounds every class checks: OS, CPU features, RAM. */
static int host_fits(const struct plan_class *pc, const struct host_view *h)
{
    if (pc->os[0] && (!h->os_name || !contains_nocase(h->os_name, pc->os))) return 0;
    for (int i = 0; i < pc->nfeatures; i++)
        if (!has_word(h->cpu_features, pc->features[i])) return 0;
    return !(pc->mem_usage > 0 && h->mem_bytes > 0 && h->mem_bytes < pc->mem_usage);
}

/* 1 if a bound is met: 0 means none; an unknown value (0) meets none. */
static int at_least(int have, int min) { return !min || (have && have >= min); }
static int at_most(int have, int max) { return !max || (have && have <= max); }

static int gpu_usage(const struct plan_class *pc, const struct host_view *h, struct rsc_usage *u)
{
    int n = h->ncoprocs < HOST_MAX_COPROCS ? h->ncoprocs : HOST_MAX_COPROCS;
    for (int k = 0; k < n; k++) {
        const struct host_coproc *c = &h->coprocs[k];
        if (strcasecmp(c->type, pc->gpu_type) || c->count < 1 || pc->ngpus > c->count) continue;
        if (pc->min_gpu_ram > 0 && c->ram < pc->min_gpu_ram) return 0;
        if (!at_least(c->driver_version, pc->min_driver_version) ||
            !at_most(c->driver_version, pc->max_driver_version) || !at_least(c->cuda_version, pc->min_cuda_version) ||
            !at_least(c->compute_cap, pc->min_compute_cap) || !at_most(c->compute_cap, pc->max_compute_cap))
            return 0;
        /* the job's speed is its share of the device (one that reports no
         * peak is counted as fast as a CPU): the CPU share it keeps busy
         * feeds the device, it does not make the job faster */
        double peak = c->peak_flops > 0 ? c->peak_flops : cpu_usage(h).flops;
        *u = (struct rsc_usage){
            .rsc = 1 + k, .ncpus = pc->cpu_frac, .ndevices = pc->ngpus,
            .flops = peak * pc->ngpus * pc->gpu_peak_flops_scale,
        };
        return 1;
    }
    return 0;
}

int plan_class_usage(const struct plan_class *pc, const struct host_view *h, struct rsc_usage *u)
{
    if (!pc) {
        *u = cpu_usage(h);
        return 1;
    }
    if (!host_fits(pc, h)) return 0;
    if (pc->gpu_type[0]) return gpu_usage(pc, h, u);
    int cpus = h->ncpus > 0 ? h->ncpus : 1;
    if (pc->min_ncpus > cpus) return 0;
    int threads = pc->max_threads == 0 || pc->max_threads > cpus ? cpus : pc->max_threads;
    *u = cpu_usage(h);
    u->ncpus = threads;
    u->flops *= threads;
    return 1;
}

/* A version the host brought: it says what it takes and how fast it runs. */
static int own_usage(const struct app_version *v, const struct host_view *h, struct rsc_usage *u)
{
    *u = cpu_usage(h);
    if (v->avg_ncpus > 0) u->ncpus = v->avg_ncpus;
    if (v->coproc_type[0]) {
        int k = 0, n = h->ncoprocs < HOST_MAX_COPROCS ? h->ncoprocs : HOST_MAX_COPROCS;
        while (k < n && strcasecmp(h->coprocs[k].type, v->coproc_type)) k++;
        if (k == n || v->coproc_count <= 0 || v->coproc_count > h->coprocs[k].count) return 0;
        u->rsc = 1 + k;
        u->ndevices = v->coproc_count;
        u->flops = h->coprocs[k].peak_flops > 0 ? h->coprocs[k].peak_flops * v->coproc_count : u->flops;
    } else {
        u->flops *= u->ncpus;
    }
    if (v->flops > 0) u->flops = v->flops;
    return 1;
}

int app_version_usage(const struct plan_class_set *s, const struct app_version *v, const struct host_view *h,
                      struct rsc_usage *u)
{
    if (v->id == APP_VERSION_ANONYMOUS) return own_usage(v, h, u);
    const struct plan_class *pc = NULL;
    if (v->plan_class[0] && !(pc = plan_class_find(s, v->plan_class))) return 0;
    if (!plan_class_usage(pc, h, u)) return 0;
    if (!pc && v->avg_ncpus > 0) {   /* a multithread version declared with its CPU count alone */
        double cpus = h->ncpus > 0 ? h->ncpus : 1, n = v->avg_ncpus < cpus ? v->avg_ncpus : cpus;
        u->ncpus = n;
        u->flops *= n;
    }
    return 1;
}
