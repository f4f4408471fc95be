/* validate.h - choosing the canonical result of a job. The caller compares
 * results (bitwise, or with the project's command) and passes the outcome
 * as an equivalence matrix; this decides, as BOINC's validator does, which
 * results are valid and which is canonical. Pure. */
#ifndef LOCUS_VALIDATE_H
#define LOCUS_VALIDATE_H

#define VALIDATE_MAX 16   /* results compared at once */

struct validate_input {
    int n;                        /* successful results not yet judged valid or invalid */
    int usable[VALIDATE_MAX];     /* 0 if the result's files could not be read: never valid */
    int eq[VALIDATE_MAX][VALIDATE_MAX]; /* eq[i][j]: results i and j agree */
    int canonical;                /* index of an existing canonical result among them, or -1 */
    int min_quorum;
};

struct validate_output {
    int canonical;                /* index of the canonical result, or -1 if none yet */
    int state[VALIDATE_MAX];      /* VALIDATE_VALID / VALIDATE_INVALID / VALIDATE_INCONCLUSIVE */
    int want_more;                /* no agreement yet: one more result is needed */
};

void validate_decide(const struct validate_input *in, struct validate_output *out);
#endif
