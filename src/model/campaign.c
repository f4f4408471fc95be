/* campaign.c - names of cluster driver kinds (campaign.h). */
#include "model/campaign.h"
#include <string.h>

static const char *const kind_names[] = {"slurm", "oar", "fake", "slurmrest"};

const char *cluster_kind_name(enum driver_kind k) { return kind_names[k]; }

int cluster_kind_parse(const char *name)
{
    for (int i = 0; i < (int)(sizeof kind_names / sizeof *kind_names); i++)
        if (!strcmp(name, kind_names[i])) return i;
    return -1;
}
