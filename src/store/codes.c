/* codes.c - the codes of model.h, grid_state.h and store_grid.h by name,
 * and the period of the batch series that schema v29 counts by. */
#include "store/codes.h"
#include "core/account_key.h"
#include "model/grid_state.h"
#include "model/model.h"
#include "store/store_grid.h"
#include "store/store_science.h"
#include <stdio.h>
#include <string.h>

#define CODE(x) {#x, x}

const struct code_name codes[] = {
    CODE(INST_IN_PROGRESS), CODE(INST_OVER),
    CODE(OUTCOME_INIT), CODE(OUTCOME_SUCCESS), CODE(OUTCOME_CLIENT_ERROR), CODE(OUTCOME_NO_REPLY),
    CODE(OUTCOME_DIDNT_NEED), CODE(OUTCOME_VALIDATE_ERROR),
    CODE(VALIDATE_INIT), CODE(VALIDATE_VALID), CODE(VALIDATE_INVALID), CODE(VALIDATE_INCONCLUSIVE),
    CODE(JOB_ACTIVE), CODE(JOB_VALIDATED), CODE(JOB_DONE), CODE(JOB_FAILED), CODE(JOB_CANCELLED),
    CODE(JOB_ERR_TOO_MANY_ERRORS), CODE(JOB_ERR_TOO_MANY_TOTAL), CODE(JOB_ERR_TOO_MANY_SUCCESS),
    CODE(JOB_ERR_CANCELLED), CODE(JOB_ERR_ASSIMILATE),
    CODE(BATCH_ACTIVE), CODE(BATCH_DONE), CODE(BATCH_CANCELLING), CODE(BATCH_CANCELLED),
    CODE(TASK_NAMES_BATCH), CODE(TASK_NAMES_JOB), CODE(HR_OFF), CODE(SERIES_STEP_S),
    CODE(SEQ_ACTIVE), CODE(SEQ_ENDED), CODE(SEQ_FAILED),
    CODE(USER_VOLUNTEER), CODE(USER_SUBMITTER), CODE(USER_ADMIN), CODE(ACCOUNT_KEY_GEN_RANDOM),
    CODE(GCS_RUNNING), CODE(GCS_PAUSED), CODE(GCS_CANCELLED), CODE(GCS_TERMINATED), CODE(GCS_WAITING),
    CODE(GJ_TO_LAUNCH), CODE(GJ_SUBMITTED), CODE(GJ_WAITING), CODE(GJ_RUNNING), CODE(GJ_TERMINATED),
    CODE(GJ_ERROR), CODE(GJ_CANCELLED), CODE(GJ_BLOCKED), CODE(GJ_DEP_FAILED),
    CODE(GSK_NEW), CODE(GSK_RESUBMIT), CODE(GSK_CHECKPOINT), CODE(GSK_TEST), CODE(GSK_REPLICA),
    CODE(GSK_PROLOGUE), CODE(GSK_EPILOGUE),
    CODE(GSS_NONE), CODE(GSS_TODO), CODE(GSS_LIVE), CODE(GSS_DONE),
    CODE(GT_TO_TEST), CODE(GT_IN_FLIGHT), CODE(GT_DONE),
    CODE(GC_LAUNCHING), CODE(GC_SUBMITTED), CODE(GC_WAITING), CODE(GC_RUNNING), CODE(GC_ENDED),
    CODE(GE_NONE), CODE(GE_SUCCESS), CODE(GE_EXIT), CODE(GE_WALLTIME), CODE(GE_PREEMPTED),
    CODE(GE_ADMIN_CANCEL), CODE(GE_NODE_FAILURE), CODE(GE_UNKNOWN),
    CODE(GK_NONE), CODE(GK_EXCESS_WAITING), CODE(GK_WAITED_TOO_LONG), CODE(GK_OVER_WALLTIME),
    CODE(GK_FINALIZE_LOSER), CODE(GK_CAMPAIGN_CANCELLED),
    CODE(GEV_EXIT_ERROR), CODE(GEV_SUBMIT_REFUSED), CODE(GEV_SINK), CODE(GEV_WALLTIME),
    CODE(GEV_TOO_MANY_ATTEMPTS), CODE(GEV_PROLOGUE_ERROR), CODE(GEV_EPILOGUE_ERROR), CODE(GEV_INPUT_ERROR),
    CODE(GEV_STAGE_ERROR),
    CODE(GO_SUBMIT), CODE(GO_PAUSE), CODE(GO_RESUME), CODE(GO_CANCEL), CODE(GO_FIX), CODE(GO_SHARE),
    CODE(GO_ADD_PARAMS), CODE(GO_PROJECT_SHARE),
    CODE(GOS_PENDING), CODE(GOS_DONE), CODE(GOS_REFUSED),
};
const size_t codes_count = sizeof codes / sizeof codes[0];

int codes_expand(const char *tmpl, struct strbuf *out)
{
    for (const char *p = tmpl; *p;) {
        const char *open = strchr(p, '{');
        if (!open) {
            sb_puts(out, p);
            return 0;
        }
        sb_append(out, p, (size_t)(open - p));
        const char *close = strchr(open, '}');
        if (!close) return -1;
        size_t len = (size_t)(close - open - 1);
        size_t i = 0;
        while (i < codes_count && (strlen(codes[i].name) != len || strncmp(codes[i].name, open + 1, len))) i++;
        if (i == codes_count) return -1;
        sb_printf(out, "%d", codes[i].value);
        p = close + 1;
    }
    return 0;
}
