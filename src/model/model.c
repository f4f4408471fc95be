/* model.c - names of state codes, for logs, the CLI and the API. */
#include "model/model.h"
#include <stdio.h>
#include <string.h>

const char *outcome_name(int outcome)
{
    switch (outcome) {
    case OUTCOME_INIT: return "init";
    case OUTCOME_SUCCESS: return "success";
    case OUTCOME_CLIENT_ERROR: return "client_error";
    case OUTCOME_NO_REPLY: return "no_reply";
    case OUTCOME_DIDNT_NEED: return "didnt_need";
    case OUTCOME_VALIDATE_ERROR: return "validate_error";
    }
    return "unknown";
}

const char *job_state_name(int state)
{
    static const char *n[] = {"active", "validated", "done", "failed", "cancelled"};
    return state >= 0 && state <= JOB_CANCELLED ? n[state] : "unknown";
}

const char *batch_state_name(int state)
{
    static const char *n[] = {"active", "done", "cancelling", "cancelled"};
    return state >= 0 && state <= BATCH_CANCELLED ? n[state] : "unknown";
}

void instance_wire_name(char *out, size_t len, const char *batch, int64_t job_id, int seq)
{
    snprintf(out, len, "%s_%lld_%d", batch, (long long)job_id, seq);
}

/* Reads the decimal number that ends s at *end (exclusive), moving *end to
 * its first digit. -1 if there is none. */
static long long trailing_number(const char *s, size_t *end)
{
    size_t e = *end, b = e;
    while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9') b--;
    if (b == e || e - b > 18) return -1;
    long long v = 0;
    for (size_t i = b; i < e; i++) v = v * 10 + (s[i] - '0');
    *end = b;
    return v;
}

int instance_parse_name(const char *name, int64_t *job_id, int *seq)
{
    size_t end = strlen(name);
    long long s = trailing_number(name, &end);
    if (s < 0 || s > 1000000 || end < 2 || name[end - 1] != '_') return -1;
    end--;
    long long j = trailing_number(name, &end);
    if (j <= 0 || end < 2 || name[end - 1] != '_') return -1;
    *job_id = j;
    *seq = (int)s;
    return 0;
}

int output_parse_name(const char *name, char *inst, size_t len, int *k)
{
    size_t end = strlen(name);
    long long v = trailing_number(name, &end);
    if (v < 0 || v >= 1000 || end < 2 || name[end - 1] != '_' || end - 1 >= len) return -1;
    snprintf(inst, len, "%.*s", (int)(end - 1), name);
    *k = (int)v;
    return 0;
}
