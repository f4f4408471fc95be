/* admission.h - admission rules: small Lua 5.4 scripts an operator
 * installs, run on each campaign at submission, that may change it (force
 * best-effort, cap a walltime) or reject it. CiGri's rules were Ruby
 * snippets eval'd inside its server; here a rule runs in a sandbox with a
 * bounded instruction count and memory, and what it leaves goes through
 * the JDL's own checks (docs/campaigns.md, "Admission rules").
 *
 * What a rule sees (globals):
 *   campaign   the campaign as jdl_settings_to_json gives it (name, type,
 *              priority, clusters.NAME.walltime...), every cluster section
 *              resolved, durations in seconds, plus campaign.nb_params
 *              (read-only: a rule cannot change the params)
 *   user       the submitting user's name
 *   param(i)   params[i - 1] as a string (1 <= i <= nb_params), else nil
 *   reject(m)  rejects the campaign with message m and stops the rule
 * and the libraries base (without dofile, loadfile, load, require,
 * collectgarbage; print and warn do nothing), string, table, math, utf8. */
#ifndef LOCUS_GRID_ADMISSION_H
#define LOCUS_GRID_ADMISSION_H
#include "grid/jdl.h"
#include <stddef.h>

#define ADMISSION_MAX_INSTRUCTIONS 10000000L   /* Lua VM instructions per rule run */
#define ADMISSION_MAX_MEMORY (64UL << 20)      /* bytes the rule's Lua state may hold */

/* What admission_run returns besides 0. */
#define ADMISSION_REJECTED 1   /* the rule called reject(): the user's campaign is refused */
#define ADMISSION_ERROR (-1)   /* the rule failed or left an invalid campaign: the rule's fault */

/* Runs the rule script_text (NUL-terminated Lua source; binary chunks are
 * refused) named script_name in messages ("cap_walltime.lua"), for user,
 * on spec; all three strings are borrowed. On 0, spec has been replaced by
 * the campaign the rule left (checked by jdl_parse_settings; the params
 * are kept as they were). Otherwise spec is unchanged and err holds one
 * line: "admission: rule 'x.lua' rejected: <message>" (ADMISSION_REJECTED),
 * or "admission: rule 'x.lua' failed: x.lua:3: <Lua error>" or
 * "admission: rule 'x.lua' made an invalid campaign: <JDL error>"
 * (ADMISSION_ERROR). A rule can be run on its own: running several in
 * turn (a directory of them) is the caller's business. */
int admission_run(const char *script_text, const char *script_name, const char *user, struct campaign_spec *spec,
                  char *err, size_t errlen);
#endif
