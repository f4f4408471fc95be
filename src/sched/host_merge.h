/* host_merge.h - which host a client that comes without a host id is.
 * A volunteer who reinstalls BOINC on a computer gets a client with no
 * host id and (in another folder) another host CPID; as BOINC's scheduler
 * does (find_host_by_other), the user's most recently made host with the
 * same characteristics is taken to be that computer, and the client gets
 * its id back: the host keeps its id, credit and record instead of a
 * second host starting from nothing. Pure: hosts and a clock in, a choice
 * out.
 *
 * BOINC compares the domain name, the IP address the client reports, the
 * OS name, the CPU model and the memory. locus keeps no CPU model nor
 * reported address: it compares the domain name, the network the request
 * comes from (core/cidr.h), the OS name, the platform, the CPU count and
 * the memory to the byte. Two safety rules BOINC lacks: the old host must
 * have been silent for HOST_MERGE_SILENT_S (a live host is never taken
 * over by another client: cloned computers look alike), and, as BOINC,
 * never when the client says it is one of several on its computer
 * (allow_multiple_clients), nor across users (the caller gives only the
 * user's hosts, and each is checked again). */
#ifndef LOCUS_HOST_MERGE_H
#define LOCUS_HOST_MERGE_H
#include "model/model.h"
#include <stdint.h>

#define HOST_MERGE_SILENT_S 3600   /* an old host silent for less may still be running */
#define HOST_MERGE_CANDIDATES 16   /* the user's hosts of that name looked at, newest first (BOINC: all) */

/* The index in cands (n hosts, the most recently made first) of the host
 * the client of req is (req: the request's characteristics and user_id;
 * multiple_clients: its allow_multiple_clients), or -1 for a new host.
 * Nothing is taken when req lacks a domain name, an OS name, its memory
 * or its network. */
int host_merge_pick(const struct host *req, int multiple_clients, const struct host *cands, int n, int64_t now);
#endif
