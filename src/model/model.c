/* model.c - names of state codes, for logs, the CLI and the API. */
#include "model/model.h"

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
