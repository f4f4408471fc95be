/* fuzz_names.c - libFuzzer harness for the wire names of instances and
 * output files (model.h): "BATCH_JOBID_SEQ" and "BATCH_JOBID_SEQ_K", which
 * the upload handler, the scheduler and the file deleter split to find a
 * job. Any input as a name: what parses is bounded and has one spelling
 * (printed back, it is the same name, so two names never stand for one
 * file), and a failed parse leaves its outputs alone. The input as a batch
 * name and numbers: every name made from them parses back to them, and an
 * output's name is a safe file name the upload handler takes. */
#include "core/fsutil.h"
#include "model/model.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_IN 300                  /* longer than any name the parsers take */
#define BATCH_NAME_MAX 127               /* struct batch's name */
#define SEQ_MAX 1000000                  /* instance_parse_name's bound */
#define K_MAX 999                        /* output_parse_name's bound */
#define JOB_ID_MAX 999999999999999999LL  /* 18 digits: the most a name's job id has */
#define UNTOUCHED (-7)

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

/* The input as a name: what parses prints back to the same name. */
static void parse_any(const char *name)
{
    int64_t job = UNTOUCHED;
    int seq = UNTOUCHED;
    char back[NAME_MAX_IN + 64];
    if (instance_parse_name(name, &job, &seq) == 0) {
        check(job >= 1 && job <= JOB_ID_MAX && seq >= 0 && seq <= SEQ_MAX);
        char tail[64];
        int n = snprintf(tail, sizeof tail, "_%lld_%d", (long long)job, seq);
        size_t len = strlen(name);
        check((size_t)n < len && !strcmp(name + len - (size_t)n, tail));   /* a batch or job part before it */
        char prefix[NAME_MAX_IN + 1];
        size_t pl = len - (size_t)n;
        snprintf(prefix, sizeof prefix, "%.*s", (int)pl, name);
        if (pl < sizeof ((struct batch *)0)->name) {   /* as a batch of that name names it */
            struct batch b = {.task_names = TASK_NAMES_BATCH};
            memcpy(b.name, prefix, pl + 1);
            instance_wire_name(back, sizeof back, &b, "", job, seq);
            check(!strcmp(back, name));
        }
        if (prefix[pl - 1] == '_') {   /* as the job of that name, less a '_', names it */
            prefix[pl - 1] = '\0';
            instance_wire_name(back, sizeof back, &(struct batch){.task_names = TASK_NAMES_JOB}, prefix, job, seq);
            check(!strcmp(back, name));
        }
    } else {
        check(job == UNTOUCHED && seq == UNTOUCHED);
    }

    char inst[256] = "untouched";
    int k = UNTOUCHED;
    if (output_parse_name(name, inst, sizeof inst, &k) == 0) {
        check(k >= 0 && k <= K_MAX && inst[0]);
        snprintf(back, sizeof back, "%s_%d", inst, k);
        check(!strcmp(back, name));
    } else {
        check(k == UNTOUCHED && !strcmp(inst, "untouched"));
    }
    /* a buffer too small for the instance part is an error, never a cut name */
    char small[8];
    if (output_parse_name(name, small, sizeof small, &k) == 0)
        check(strlen(small) < sizeof small && !strncmp(small, name, strlen(small)));
}

/* Reads n bytes of the input as a number (little-endian), 0 past its end. */
static uint64_t take(const uint8_t **p, const uint8_t *end, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n && *p < end; i++, (*p)++) v |= (uint64_t)**p << (8 * i);
    return v;
}

/* The input as a batch or job name and numbers: the names made, in
 * either naming, parse back. */
static void round_trip(const uint8_t *data, size_t size)
{
    static const char alphabet[] = "abcXYZ019._+-";   /* name_is_safe's classes, '_' and digits to confuse the parser */
    const uint8_t *p = data, *end = data + size;
    int64_t job = (int64_t)(take(&p, end, 8) % (uint64_t)JOB_ID_MAX) + 1;
    int seq = (int)(take(&p, end, 4) % (SEQ_MAX + 1));
    int k = (int)(take(&p, end, 2) % (K_MAX + 1));
    int by_job = (int)(take(&p, end, 1) & 1);
    char batch[BATCH_NAME_MAX + 1];
    size_t n = 0;
    for (; p < end && n < BATCH_NAME_MAX; p++) batch[n++] = alphabet[*p % (sizeof alphabet - 1)];
    batch[n] = 0;
    if (!name_is_safe(batch)) return;   /* the CLI and the API refuse such a batch */

    char inst[256], out[300], back[256];
    struct batch b = {.task_names = by_job ? TASK_NAMES_JOB : TASK_NAMES_BATCH};
    snprintf(b.name, sizeof b.name, "%s", batch);
    instance_wire_name(inst, sizeof inst, &b, batch, job, seq);   /* the name as a job's, or the batch's */
    int64_t job2;
    int seq2, k2;
    check(instance_parse_name(inst, &job2, &seq2) == 0 && job2 == job && seq2 == seq);
    snprintf(out, sizeof out, "%s_%d", inst, k);
    check(name_is_safe(out));            /* else its upload would be refused */
    check(output_parse_name(out, back, sizeof back, &k2) == 0 && k2 == k && !strcmp(back, inst));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[NAME_MAX_IN + 1];
    size_t n = size < NAME_MAX_IN ? size : NAME_MAX_IN;
    memcpy(name, data, n);
    name[n] = 0;
    parse_any(name);
    round_trip(data, size);
    return 0;
}
