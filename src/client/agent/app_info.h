/* app_info.h - a volunteer's own builds of a project's apps, as BOINC's
 * anonymous platform: an app_info.xml in the project's folder lists app
 * versions and the files they run, which the volunteer put there. The
 * agent then asks as platform "anonymous", lists those versions, runs
 * jobs with them and never downloads the project's app files. */
#ifndef LOCUS_AGENT_APP_INFO_H
#define LOCUS_AGENT_APP_INFO_H
#include "client/agent/astate.h"
#include <stddef.h>

#define APP_INFO_FILE "app_info.xml"
#define APP_INFO_MAX_VERSIONS 64

/* Reads PDIR/app_info.xml for project p (PDIR: its folder). No file: 0,
 * p unchanged. A good file: 1; p's versions become the file's (a task of
 * a version the file drops ends when it would start), its <file_info>
 * files are marked present (each must be in PDIR, those marked
 * <executable/> runnable by the agent), p->anonymous = 1. A bad file
 * (XML, names, references, a missing file, more than
 * APP_INFO_MAX_VERSIONS versions): -1 with the reason in err, p
 * unchanged. */
int app_info_load(struct aproject *p, const char *pdir, char *err, size_t errlen);
#endif
