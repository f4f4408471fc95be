/* jobdesc.c - job descriptions and template placeholders of a batch
 * order, from the CLI or the REST API alike (see jobdesc.h).
 * job_desc_resolve runs once per job: it avoids allocations and printf. */
#include "orders/jobdesc.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KNOWN_KEYS "name, cmdline, inputs, flops, flops_bound, mem_bound, disk_bound"

/* The message into the caller's err, then rc: a failing branch is one
 * statement (err and errlen in scope). */
#define FAIL(rc, ...) (errf(err, errlen, __VA_ARGS__), (rc))

/* ---- reading ---- */

static const struct { const char *key; size_t off; } number_keys[] = {
    {"flops", offsetof(struct job_desc, flops)},
    {"flops_bound", offsetof(struct job_desc, flops_bound)},
    {"mem_bound", offsetof(struct job_desc, mem_bound)},
    {"disk_bound", offsetof(struct job_desc, disk_bound)},
};

static int read_string(const char *key, json_t *v, const char **out, char *err, size_t errlen)
{
    if (!json_is_string(v)) return FAIL(-1, "\"%s\" must be a string", key);
    *out = json_string_value(v);
    return 0;
}

/* The object form of an input: {"file": "FILE", "open_name": "NAME"}. */
static int read_input_object(json_t *v, struct job_desc_input *in, char *err, size_t errlen)
{
    const char *key;
    json_t *x;
    json_object_foreach(v, key, x) {
        const char **dest = !strcmp(key, "file") ? &in->spec : !strcmp(key, "open_name") ? &in->open_name : NULL;
        if (!dest)
            return FAIL(-1, "unknown key '%s' in an input (expected file, open_name)", key);
        if (read_string(key, x, dest, err, errlen)) return -1;
    }
    return in->spec ? 0 : FAIL(-1, "an input object needs \"file\"");
}

static int read_inputs(json_t *v, struct job_desc *d, char *err, size_t errlen)
{
    if (!json_is_array(v)) return FAIL(-1, "\"inputs\" must be an array");
    if (json_array_size(v) > MAX_INPUTS)
        return FAIL(-1, "%zu inputs: at most %d per job", json_array_size(v), MAX_INPUTS);
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
        struct job_desc_input *in = &d->inputs[d->ninputs++];
        in->spec = in->open_name = NULL;
        if (json_is_string(x)) in->spec = json_string_value(x);
        else if (!json_is_object(x))
            return FAIL(-1, "input %zu must be \"FILE\", \"FILE=OPEN_NAME\" or "
                            "{\"file\": ..., \"open_name\": ...}", i + 1);
        else if (read_input_object(x, in, err, errlen)) return -1;
    }
    return 0;
}

static int read_number(const char *key, json_t *v, double *out, char *err, size_t errlen)
{
    double x = json_number_value(v);
    if (!json_is_number(v) || !(x > 0) || !isfinite(x))
        return FAIL(-1, "\"%s\" must be a positive number", key);
    *out = x;
    return 0;
}

static int read_key(const char *key, json_t *v, struct job_desc *d, char *err, size_t errlen)
{
    if (!strcmp(key, "name")) return read_string(key, v, &d->name, err, errlen);
    if (!strcmp(key, "cmdline")) return read_string(key, v, &d->cmdline, err, errlen);
    if (!strcmp(key, "inputs")) return read_inputs(v, d, err, errlen);
    for (size_t k = 0; k < sizeof number_keys / sizeof number_keys[0]; k++)
        if (!strcmp(key, number_keys[k].key))
            return read_number(key, v, (double *)((char *)d + number_keys[k].off), err, errlen);
    return FAIL(-1, "unknown key '%s' (expected " KNOWN_KEYS ")", key);
}

int job_desc_read(json_t *obj, struct job_desc *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (!json_is_object(obj)) return FAIL(-1, "a job description must be a JSON object");
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
        if (read_key(key, v, d, err, errlen)) return -1;
    return 0;
}

/* ---- placeholders ---- */

/* n in decimal at out (room for 21 bytes); the number of digits. */
static size_t put_long(char *out, long n)
{
    char tmp[24];
    size_t k = 0;
    unsigned long u = n < 0 ? 0UL - (unsigned long)n : (unsigned long)n;
    do tmp[k++] = (char)('0' + u % 10); while (u /= 10);
    if (n < 0) tmp[k++] = '-';
    for (size_t i = 0; i < k; i++) out[i] = tmp[k - 1 - i];
    return k;
}

int template_expand(const char *in, long n, const char *batch, char *out, size_t outlen)
{
    size_t blen = strlen(batch), k = 0;
    for (const char *p = in; *p;) {
        const char *brace = strchr(p, '{');
        size_t lit = brace ? (size_t)(brace - p) : strlen(p);
        if (k + lit >= outlen) return -1;
        memcpy(out + k, p, lit);
        k += lit;
        p += lit;
        if (!brace) break;
        if (!strncmp(p, "{n}", 3)) {
            if (k + 21 >= outlen) return -1;
            k += put_long(out + k, n);
            p += 3;
        } else if (!strncmp(p, "{batch}", 7)) {
            if (k + blen >= outlen) return -1;
            memcpy(out + k, batch, blen);
            k += blen;
            p += 7;
        } else {
            if (k + 1 >= outlen) return -1;
            out[k++] = *p++;
        }
    }
    out[k] = 0;
    return (int)k;
}

/* in into out; its length, or -1 if it does not fit. */
static int copy_str(const char *in, char *out, size_t outlen)
{
    size_t len = strlen(in);
    if (len >= outlen) return -1;
    memcpy(out, in, len + 1);
    return (int)len;
}

/* A string of the description into out: expanded in template mode. */
static int put(const char *in, const struct job_env *env, long n, char *out, size_t outlen)
{
    return env->expand ? template_expand(in, n, env->batch, out, outlen) : copy_str(in, out, outlen);
}

/* ---- resolving ---- */

static int resolve_input(const struct job_desc_input *d, const struct job_env *env, long n,
                         struct job_input *in, char *err, size_t errlen)
{
    char file[LOCUS_NAME_MAX + sizeof in->open_name + 2];
    if (put(d->spec, env, n, file, sizeof file) < 0)
        return FAIL(-1, "input '%.60s...' is too long", d->spec);
    char *eq = d->open_name ? NULL : strchr(file, '=');
    if (eq) *eq = 0;
    int len = d->open_name ? put(d->open_name, env, n, in->open_name, sizeof in->open_name)
                           : copy_str(eq ? eq + 1 : file, in->open_name, sizeof in->open_name);
    if (len < 0 || !name_is_safe(in->open_name))
        return FAIL(-1, "open name of input '%s' is not a safe name of at most %zu characters "
                        "(A-Z a-z 0-9 . _ + -)", file, sizeof in->open_name - 1);
    void *id = smap_get(env->files, file);
    if (!id)
        return FAIL(-1, "input file '%s' is not registered (add it with: locus file add)", file);
    in->file_id = (int64_t)(intptr_t)id;
    return 0;
}

static int resolve_inputs(const struct job_desc *d, const struct job_env *env, long n, struct job_spec *j,
                          char *err, size_t errlen)
{
    j->ninputs = d->ninputs;
    for (int i = 0; i < d->ninputs; i++) {
        if (resolve_input(&d->inputs[i], env, n, &j->inputs[i], err, errlen)) return -1;
        for (int k = 0; k < i; k++)
            if (!strcmp(j->inputs[k].open_name, j->inputs[i].open_name))
                return FAIL(-1, "two inputs open as '%s'", j->inputs[i].open_name);
    }
    return 0;
}

static int resolve_name(const struct job_desc *d, const struct job_env *env, long n, struct job_spec *j,
                        char *err, size_t errlen)
{
    int len = d->name ? put(d->name, env, n, j->name, sizeof j->name)
                      : template_expand("{batch}_{n}", n, env->batch, j->name, sizeof j->name);
    if (len < 0 || len > JOB_NAME_MAX)
        return FAIL(-1, "job name '%.40s...' is longer than %d characters",
                        d->name ? d->name : env->batch, JOB_NAME_MAX);
    if (!name_is_safe(j->name))
        return FAIL(-1, "job name '%s' is not a safe name: use A-Z a-z 0-9 . _ + -, "
                        "not starting with '.'", j->name);
    return 0;
}

int job_desc_resolve(const struct job_desc *d, const struct job_env *env, long n, struct job_spec *j,
                     char *err, size_t errlen)
{
    if (resolve_name(d, env, n, j, err, errlen)) return -1;
    if (put(d->cmdline ? d->cmdline : "", env, n, j->cmdline, sizeof j->cmdline) < 0)
        return FAIL(-1, "cmdline of job %s is longer than %d bytes", j->name, JOB_CMDLINE_MAX);
    if (resolve_inputs(d, env, n, j, err, errlen)) return -1;
    j->flops_est = d->flops > 0 ? d->flops : env->flops;
    j->flops_bound = d->flops_bound > 0 ? d->flops_bound : JOB_FLOPS_BOUND_FACTOR * j->flops_est;
    j->mem_bound = d->mem_bound > 0 ? d->mem_bound : JOB_DEFAULT_MEM_BOUND;
    j->disk_bound = d->disk_bound > 0 ? d->disk_bound : JOB_DEFAULT_DISK_BOUND;
    return 0;
}

