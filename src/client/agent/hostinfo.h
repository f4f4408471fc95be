/* hostinfo.h - what the agent tells a project about the machine in the
 * <host_info> of a scheduler request: CPUs, memory, disk, OS, and a host
 * cross-project id stable for one data folder. Measured at start. */
#ifndef LOCUS_AGENT_HOSTINFO_H
#define LOCUS_AGENT_HOSTINFO_H
#include "client/agent/coproc.h"

struct hostinfo {
    int ncpus;                 /* online CPUs */
    double iops;               /* per CPU: an assumed 1e9, reported until the benchmark measures (astate.host_iops) */
    double m_nbytes, d_total, d_free;
    char os_name[128], os_version[128];
    char domain_name[128];
    char p_vendor[64], p_model[128];
    char host_cpid[33];        /* md5 of host name and data folder */
    struct acoprocs coprocs;   /* GPUs and declared coprocessors (coproc_probe; not hostinfo_probe's) */
};

/* Fills *h for the agent running in data folder dir. Never fails: what
 * cannot be measured is left 0 or "". */
void hostinfo_probe(struct hostinfo *h, const char *dir);
#endif
