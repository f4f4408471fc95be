/* validate.c - the largest group of agreeing results wins if it reaches the
 * quorum; its earliest member becomes canonical. With a canonical result
 * already chosen, each newcomer is simply compared with it. */
#include "sched/validate.h"
#include "model/model.h"

void validate_decide(const struct validate_input *in, struct validate_output *out)
{
    out->canonical = -1;
    out->want_more = 0;
    if (in->canonical >= 0) {
        out->canonical = in->canonical;
        for (int i = 0; i < in->n; i++)
            out->state[i] = in->usable[i] && in->eq[i][in->canonical] ? VALIDATE_VALID : VALIDATE_INVALID;
        out->state[in->canonical] = VALIDATE_VALID;
        return;
    }
    int best = -1, best_size = 0;
    for (int i = 0; i < in->n; i++) {
        if (!in->usable[i]) continue;
        int size = 0;
        for (int j = 0; j < in->n; j++) size += in->usable[j] && in->eq[i][j];
        if (size > best_size) {
            best = i;
            best_size = size;
        }
    }
    if (best >= 0 && best_size >= in->min_quorum) {
        out->canonical = best;
        for (int i = 0; i < in->n; i++)
            out->state[i] = in->usable[i] && in->eq[best][i] ? VALIDATE_VALID : VALIDATE_INVALID;
        return;
    }
    for (int i = 0; i < in->n; i++) out->state[i] = in->usable[i] ? VALIDATE_INCONCLUSIVE : VALIDATE_INVALID;
    out->want_more = 1;
}
