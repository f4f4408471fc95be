/* change.c - an append-only array of change records. */
#include "sched/change.h"
#include "core/vec.h"
#include <stdlib.h>
#include <string.h>

void change_log_init(struct change_log *l) { memset(l, 0, sizeof *l); }

void change_log_free(struct change_log *l)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].kind == CH_INST_STDERR) free(l->v[i].u.stderr_text.text);
    free(l->v);
    memset(l, 0, sizeof *l);
}

struct change *change_add(struct change_log *l, int kind)
{
    VEC_GROW(l->v, l->n, l->cap);
    struct change *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    return c;
}
