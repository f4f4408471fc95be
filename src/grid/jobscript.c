/* jobscript.c - the job wrapper (see jobscript.h). */
#include "grid/jobscript.h"
#include "grid/inputs.h"
#include "grid/jdl.h"
#include "grid/outputs.h"
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define XSTR(x) STR(x)
#define STR(x) #x

void sh_quote(struct strbuf *out, const char *s)
{
    sb_puts(out, "'");
    for (; *s; s++) {
        if (*s == '\'') sb_puts(out, "'\\''");
        else sb_append(out, s, 1);
    }
    sb_puts(out, "'");
}

/* text as one shell word with CiGri's macros expanded on the node: a
 * leading ~ and {HOME} become "$HOME", {CAMPAIGN_ID} the campaign's id;
 * the rest is literal. */
static void sh_word(struct strbuf *out, const char *text, int64_t campaign)
{
    struct strbuf lit;
    sb_init(&lit);
    const char *p = text;
    if (p[0] == '~' && (p[1] == '/' || !p[1])) {
        sb_puts(out, "\"$HOME\"");
        p++;
    }
    for (; *p; p++) {
        const char *macro = NULL;
        if (!strncmp(p, "{HOME}", 6)) macro = "\"$HOME\"";
        else if (!strncmp(p, "{CAMPAIGN_ID}", 13)) macro = "";
        if (!macro) {
            sb_append(&lit, p, 1);
            continue;
        }
        if (lit.len) sh_quote(out, lit.s);
        sb_reset(&lit);
        if (*macro) {
            sb_puts(out, macro);
            p += 5;
        } else {
            sb_printf(out, "%" PRId64, campaign);
            p += 12;
        }
    }
    if (lit.len || !out->len) sh_quote(out, lit.s);
    sb_free(&lit);
}

static int env_name_ok(const char *e)
{
    const char *eq = strchr(e, '=');
    if (!eq || eq == e || isdigit((unsigned char)e[0])) return 0;
    for (const char *p = e; p < eq; p++)
        if (!isalnum((unsigned char)*p) && *p != '_') return 0;
    return 1;
}

static void hms(struct strbuf *out, long s)
{
    sb_printf(out, "%02ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

static int check_env(const struct drv_job *j, char *err, size_t errlen)
{
    for (int k = 0; j->env && j->env[k]; k++) {
        if (!env_name_ok(j->env[k])) {
            char q[48];
            errf(err, errlen, "job %" PRId64 ": environment entry \"%s\" is not NAME=VALUE", j->job_id,
                 snippet(j->env[k], q));
            return -1;
        }
    }
    return 0;
}

/* "exec <exec_file> <param>", as one shell word. */
static void quoted_command(struct strbuf *out, const struct cluster_spec *spec, const struct drv_job *j)
{
    struct strbuf cmd;
    sb_init(&cmd);
    sb_puts(&cmd, "exec ");
    sh_word(&cmd, spec->exec_file, j->campaign_id);
    if (j->param && *j->param) sb_printf(&cmd, " %s", j->param);   /* shell words, as CiGri */
    sh_quote(out, cmd.s);
    sb_free(&cmd);
}

/* The loop of a grouped job (jobscript.h), run in the wrapper's place of
 * one job. SIGTERM (walltime, preemption, cancel) goes to the param
 * running and stops the loop: that param gets no end marker, so the
 * daemon gives it the scheduler's reason; one that ends at the very moment
 * of the signal may lose its marker and run again. */
static const char group_loop[] =
    "locus_stop= locus_pid= locus_status=0 locus_outs= locus_tok=\n"
    "trap 'locus_stop=1; kill -TERM $locus_pid 2>/dev/null' TERM\n"
    "locus_param() {\n"
    "  [ -z \"$locus_stop\" ] || exit 143\n"
    "  local id=$1 name=$2 cmd=$3\n"
    "  shift 3\n"
    "  printf '" JOBSCRIPT_MARK " start %s %(%s)T\\n' \"$id\" -1\n"
    "  ( export LOCUS_JOB_ID=\"$id\" LOCUS_JOB_NAME=\"$name\" CIGRI_JOB_ID=\"$id\" CIGRI_JOBID=\"$id\"\n"
    "    export CIGRI_JOB_NAME=\"$name\" CIGRI_JOBNAME=\"$name\"\n"
    "    [ $# -eq 0 ] || export \"$@\"\n"
    "    eval \"$cmd\" ) >\"$locus_out.job$id.stdout\" 2>\"$locus_out.job$id.stderr\" &\n"
    "  locus_pid=$!\n"
    "  wait $locus_pid\n"
    "  while kill -0 $locus_pid 2>/dev/null; do wait $locus_pid; done\n"
    "  wait $locus_pid\n"
    "  local s=$?\n"
    "  [ -z \"$locus_stop\" ] || exit 143\n"
    "  if [ \"$s\" -eq 0 ] && [ -n \"$locus_outs\" ]; then\n"
    "    locus_gather \"$id\" \"$locus_tok\" \"$locus_outs\" >>\"$locus_out.job$id.stderr\" 2>&1\n"
    "    case $? in 0) ;; 2) s=" XSTR(JOBSCRIPT_OUTPUT_UNSENT) " ;; *) s=" XSTR(JOBSCRIPT_OUTPUT_FAILED) " ;; esac\n"
    "  fi\n"
    "  printf '" JOBSCRIPT_MARK " end %s %d %(%s)T\\n' \"$id\" \"$s\" -1\n"
    "  [ \"$s\" -eq 0 ] || [ \"$locus_status\" -ne 0 ] || locus_status=$s\n"
    "}\n";

static int write_group(struct strbuf *out, const struct cluster_spec *spec, const struct drv_job *j, char *err,
                       size_t errlen)
{
    struct strbuf g;
    sb_init(&g);
    sb_puts(&g, "locus_out=locus.");   /* clusters may share the directory: outputs carry the cluster */
    sh_quote(&g, spec->name);
    sb_puts(&g, "\n");
    sb_puts(&g, group_loop);
    if (spec->checkpointing_period > 0)
        sb_printf(&g, "trap 'kill -%d $locus_pid 2>/dev/null' %d\n", spec->checkpointing_signal,
                  spec->checkpointing_signal);
    for (int i = 0; i < j->ngroup; i++) {
        const struct drv_job *m = &j->group[i];
        if (check_env(m, err, errlen)) {
            sb_free(&g);
            return -1;
        }
        if (m->outputs && *m->outputs) {   /* for the one call: the loop's own are empty */
            sb_puts(&g, "locus_outs=");
            sh_quote(&g, m->outputs);
            sb_puts(&g, " locus_tok=");
            sh_quote(&g, m->output_token ? m->output_token : "");
            sb_puts(&g, " ");
        }
        sb_printf(&g, "locus_param %" PRId64 " ", m->job_id);
        sh_quote(&g, m->name ? m->name : "");
        sb_puts(&g, " ");
        quoted_command(&g, spec, m);
        for (int k = 0; m->env && m->env[k]; k++) {
            sb_puts(&g, " ");
            sh_quote(&g, m->env[k]);
        }
        sb_puts(&g, "\n");
    }
    sb_puts(&g, "exit $locus_status\n");
    sh_quote(out, g.s);
    sb_free(&g);
    return 0;
}

/* The stage-in records of j (a grouped job's members'), one line each:
 * URL SIZE ALGO DIGEST INPUT LOCAL-NAME. No field has a blank (inputs.c). */
static void stage_records(struct strbuf *out, const struct drv_job *j, const char *download_url)
{
    for (int g = 0; g < (j->group ? j->ngroup : 1); g++) {
        const struct drv_job *m = j->group ? &j->group[g] : j;
        for (int k = 0; k < m->ninputs; k++) {
            const struct input_file *f = m->inputs[k];
            int url = !strncmp(f->name, "http://", 7) || !strncmp(f->name, "https://", 8);
            size_t ln;
            const char *local = input_local_name(f, &ln);
            sb_printf(out, "%s%s %" PRId64 " %s %s %s %.*s\n", url ? "" : download_url, f->name, f->size,
                      input_sum_name(f->sum), f->digest, f->name, (int)ln, local);
        }
    }
}

/* The stage-in step (jobscript.h), run in the working directory. A file
 * is cached under its checksum: two URLs of one content are one file. The
 * lock is the cached file's own, so different files fetch in parallel.
 * curl is not given -f, so that the source's HTTP status tells an input
 * wrong at its source (4xx: "bad") from a fetch that may pass (5xx, no
 * answer: "error"). The job gets a hard link: the data stays its own even
 * if the cache name is evicted; a cache on another file system than the
 * working directory gets a copy instead. Each use touches the cached
 * file's access stamp, which eviction orders by (noatime mounts do not
 * stamp reads). */
static const char stage_in[] =
    "locus_stage() {\n"
    "  local url=$1 size=$2 algo=$3 sum=$4 name=$5 as=$6 f t0 got code\n"
    "  f=$locus_cache/$algo-$sum\n"
    "  {\n"
    "    flock 9 || { echo \"" JOBSCRIPT_STAGE " error $name cannot lock $f.lock\"; return 1; }\n"
    "    if [ -f \"$f\" ]; then\n"
    "      echo \"" JOBSCRIPT_STAGE " cached $name $size\"\n"
    "    else\n"
    "      t0=$(date +%s%N)\n"
    "      code=$(curl -sSL --proto-redir =http,https --retry 2 -w '%{http_code}' -o \"$f.part\" \"$url\" 2>\"$f.err\") ||\n"
    "        { echo \"" JOBSCRIPT_STAGE " error $name download failed: $(tail -c 200 \"$f.err\" | tr '\\n' ' ')\"; rm -f \"$f.part\" \"$f.err\"; return 1; }\n"
    "      rm -f \"$f.err\"\n"
    "      case $code in\n"
    "      2[0-9][0-9] | 000) ;;\n"   /* 000: not HTTP (file:, in tests) */
    "      4[0-9][0-9]) echo \"" JOBSCRIPT_STAGE " bad $name HTTP $code from its source\"; rm -f \"$f.part\"; return 1;;\n"
    "      *) echo \"" JOBSCRIPT_STAGE " error $name HTTP $code from its source\"; rm -f \"$f.part\"; return 1;;\n"
    "      esac\n"
    "      got=$(stat -c %s \"$f.part\")\n"
    "      [ \"$got\" = \"$size\" ] ||\n"
    "        { echo \"" JOBSCRIPT_STAGE " bad $name size mismatch: $got bytes, expected $size\"; rm -f \"$f.part\"; return 1; }\n"
    "      got=$(\"${algo}sum\" <\"$f.part\") && got=${got%% *}\n"
    "      [ \"$got\" = \"$sum\" ] ||\n"
    "        { echo \"" JOBSCRIPT_STAGE " bad $name checksum mismatch: $algo $got, expected $sum\"; rm -f \"$f.part\"; return 1; }\n"
    "      mv -f \"$f.part\" \"$f\" || { echo \"" JOBSCRIPT_STAGE " error $name cannot write the cache\"; return 1; }\n"
    "      echo \"" JOBSCRIPT_STAGE " fetched $name $size $(( ($(date +%s%N) - t0) / 1000000 ))\"\n"
    "    fi\n"
    "    touch -a \"$f\"\n"
    "    [ \"$f\" -ef \"$as\" ] || ln -f \"$f\" \"$as\" 2>/dev/null || cp -f \"$f\" \"$as\" ||\n"
    "      { echo \"" JOBSCRIPT_STAGE " error $name cannot link it as $as\"; return 1; }\n"
    "  } 9>\"$f.lock\"\n"
    "}\n"
    /* Least recently used first, by access stamp, until the cache is
     * under its bound. A file still linked from a working directory (two
     * links or more) is left: a job may be reading it, and removing the
     * cache's name would free nothing. Each is removed under its lock, so
     * never while a job stages it. */
    "locus_evict() {\n"
    "  local total=0 a h s f line\n"
    "  local -a files\n"
    "  mapfile -t files < <(find \"$locus_cache\" -maxdepth 1 -type f \\( -name 'sha256-*' -o -name 'md5-*' \\) "
    "! -name '*.*' -printf '%A@ %n %s %p\\n' | sort -n)\n"
    "  for line in \"${files[@]}\"; do read -r a h s f <<<\"$line\"; total=$((total + s)); done\n"
    "  for line in \"${files[@]}\"; do\n"
    "    [ \"$total\" -gt \"$locus_cache_bytes\" ] || break\n"
    "    read -r a h s f <<<\"$line\"\n"
    "    [ \"$h\" = 1 ] || continue\n"
    "    { flock -n 9 && [ \"$(stat -c %h \"$f\")\" = 1 ] && rm -f \"$f\" &&\n"
    "      echo \"" JOBSCRIPT_STAGE " evicted ${f##*/} $s\" && total=$((total - s)); } 9>\"$f.lock\"\n"
    "  done\n"
    "}\n"
    "mkdir -p \"$locus_cache\" || { echo \"" JOBSCRIPT_STAGE " error - cannot create the cache folder $locus_cache\"; exit " XSTR(JOBSCRIPT_INPUT_FAILED) "; }\n"
    "while read -r u sz a d n l; do\n"
    "  [ -z \"$u\" ] || locus_stage \"$u\" \"$sz\" \"$a\" \"$d\" \"$n\" \"$l\" || exit " XSTR(JOBSCRIPT_INPUT_FAILED) "\n"
    "done <<<\"$locus_inputs\"\n"
    "[ \"$locus_cache_bytes\" -le 0 ] || locus_evict\n";

/* The stage-in step in the cluster's cache folder, for the element whose
 * locus_inputs is not empty. */
static void stage_step(struct strbuf *out, const struct drv_job *jobs)
{
    sb_puts(out, "if [ -n \"$locus_inputs\" ]; then\nlocus_cache=");
    const char *cache = jobs[0].cache_dir && *jobs[0].cache_dir ? jobs[0].cache_dir : JOBSCRIPT_CACHE_DEFAULT;
    sh_word(out, cache, jobs[0].campaign_id);
    sb_printf(out, "\nlocus_cache_bytes=%" PRId64 "\n", jobs[0].cache_bytes > 0 ? jobs[0].cache_bytes : 0);
    sb_puts(out, stage_in);
    sb_puts(out, "fi\n");
}

/* The gathering step (jobscript.h). locus_http runs one curl request,
 * retried with a growing pause on a network error or 5xx: 0 on 2xx, 1 on
 * 4xx, 2 when every try failed (the status in locus_code). locus_store
 * stores one output at its destination (a folder on the cluster: copied
 * beside, checked, renamed; a URL: a PUT, the missing collections made
 * with MKCOL on a 409). locus_put sends one output to locusd, or only its
 * record once stored elsewhere. Each returns 0 done, 1 the job's fault
 * (refused), 2 not taken through every retry. locus_gather checks every
 * output of a job before storing any, in a subshell of its own (nullglob,
 * its temporary files) and exits as locus_put. */
static const char gather_fns[] =
    "locus_http() {\n"
    "  local try=1 pause=1\n"
    "  while :; do\n"
    "    locus_code=$(curl -sS -o \"$locus_reply\" -w '%{http_code}' \"$@\" 2>\"$locus_reply.err\")\n"
    "    case $locus_code in 2[0-9][0-9]) return 0 ;; 4[0-9][0-9]) return 1 ;; esac\n"
    "    [ \"$try\" -lt " XSTR(JOBSCRIPT_OUTPUT_TRIES) " ] || return 2\n"
    "    sleep $pause\n"
    "    pause=$((pause * 2)) try=$((try + 1))\n"
    "  done\n"
    "}\n"
    "locus_why() {\n"
    "  if [ \"$1\" = 1 ]; then echo \"HTTP $locus_code $(head -c 300 \"$locus_reply\" | tr '\\n' ' ')\"\n"
    "  else echo \"HTTP $locus_code $(tail -c 200 \"$locus_reply.err\" | tr '\\n' ' ')\"; fi\n"
    "}\n"
    "locus_mkcols() {\n"
    "  local url=$1 rest at seg\n"
    "  rest=${url#*://} at=${url%%://*}://${rest%%/*}/ rest=${rest#*/}\n"
    "  IFS=/ read -ra seg <<<\"${rest%/*}\"\n"
    "  for s in \"${seg[@]}\"; do at=$at$s/; curl -s -o /dev/null --netrc-optional -X MKCOL \"$at\" || true; done\n"
    "}\n"
    "locus_store() {\n"
    "  local name=$1 f=$2 sum=$3 at=$4 part rc\n"
    "  case $at in\n"
    "    /*) part=${at%/*}/.$name.locus-part\n"
    "      if mkdir -p -- \"${at%/*}\" && cp -- \"$f\" \"$part\" && [ \"$(sha256sum <\"$part\")\" = \"$sum  -\" ] &&\n"
    "        mv -f -- \"$part\" \"$at\"; then return 0; fi\n"
    "      rm -f -- \"$part\"\n"
    "      echo \"" JOBSCRIPT_OUTPUT " error $name cannot be stored in ${at%/*}\"; return 1 ;;\n"
    "  esac\n"
    "  locus_http --netrc-optional -T \"$f\" -H \"X-Checksum-Sha256: $sum\" \"$at\"; rc=$?\n"
    "  if [ \"$rc\" = 1 ] && [ \"$locus_code\" = 409 ]; then\n"
    "    locus_mkcols \"$at\"\n"
    "    locus_http --netrc-optional -T \"$f\" -H \"X-Checksum-Sha256: $sum\" \"$at\"; rc=$?\n"
    "  fi\n"
    "  case $rc in\n"
    "    0) return 0 ;;\n"
    "    1) echo \"" JOBSCRIPT_OUTPUT " error $name refused by $at: $(locus_why 1)\"; return 1 ;;\n"
    "    *) echo \"" JOBSCRIPT_OUTPUT " error $name not taken by $at: $(locus_why 2)\"; return 2 ;;\n"
    "  esac\n"
    "}\n"
    "locus_put() {\n"
    "  local id=$1 tok=$2 name=$3 f=$4 at=$5 sum size body\n"
    "  size=$(stat -c %s \"$f\") && sum=$(sha256sum <\"$f\") && sum=${sum%% *} ||\n"
    "    { echo \"" JOBSCRIPT_OUTPUT " error $name cannot be read\"; return 1; }\n"
    "  body=(-T \"$f\")\n"
    "  if [ -n \"$at\" ]; then\n"
    "    at=$at/$name\n"
    "    locus_store \"$name\" \"$f\" \"$sum\" \"$at\" || return $?\n"
    "    body=(-X PUT --data-binary '' -H \"X-Locus-Output-Location: $at\" -H \"X-Locus-Output-Size: $size\")\n"
    "  fi\n"
    "  locus_http \"${body[@]}\" -H \"X-Locus-Output-Token: $tok\" -H \"X-Locus-SHA256: $sum\" \\\n"
    "    \"$locus_output_url$id/outputs/$name\"\n"
    "  case $? in\n"
    "    0) echo \"" JOBSCRIPT_OUTPUT " sent $name $size $sum${at:+ $at}\"; return 0 ;;\n"
    "    1) echo \"" JOBSCRIPT_OUTPUT " error $name refused by locusd: $(locus_why 1)\"; return 1 ;;\n"
    "    *) echo \"" JOBSCRIPT_OUTPUT " error $name not taken by locusd: $(locus_why 2)\"; return 2 ;;\n"
    "  esac\n"
    "}\n"
    "locus_gather() (\n"
    "  id=$1 tok=$2 total=0 names=() files=() to=\n"
    "  shopt -s nullglob\n"
    "  locus_reply=$(mktemp \"${TMPDIR:-/tmp}/locus-output.XXXXXX\") ||\n"
    "    { echo \"" JOBSCRIPT_OUTPUT " error - cannot make a temporary file\"; exit 1; }\n"
    "  trap 'rm -f \"$locus_reply\" \"$locus_reply.err\" \"$locus_reply.tar\"' EXIT\n"
    "  while read -r k p; do\n"
    "    case $k in\n"
    "      " OUTPUT_REC_DESTINATION ") to=$p ;;\n"
    "      " OUTPUT_REC_FOLDER ")\n"
    "        if [ -L \"$p\" ] || [ ! -d \"$p\" ]; then echo \"" JOBSCRIPT_OUTPUT " error $p.tar no folder $p (or a link)\"; exit 1; fi\n"
    "        tar -cf \"$locus_reply.tar\" -- \"$p\" || { echo \"" JOBSCRIPT_OUTPUT " error $p.tar cannot archive $p\"; exit 1; }\n"
    "        names+=(\"$p.tar\") files+=(\"$locus_reply.tar\") ;;\n"
    "      " OUTPUT_REC_FILES ")\n"
    "        m=()\n"
    "        for f in $p; do if [ -e \"$f\" ] || [ -L \"$f\" ]; then m+=(\"$f\"); fi; done\n"
    "        [ ${#m[@]} -gt 0 ] || { echo \"" JOBSCRIPT_OUTPUT " error $p no file matches\"; exit 1; }\n"
    "        names+=(\"${m[@]}\") files+=(\"${m[@]}\") ;;\n"
    "    esac\n"
    "  done <<<\"$3\"\n"
    "  for i in \"${!names[@]}\"; do\n"
    "    n=${names[$i]} f=${files[$i]}\n"
    "    if ! [[ $n =~ ^[A-Za-z0-9_+-][A-Za-z0-9._+-]*$ ]] || [[ $n == *..* ]]; then\n"
    "      echo \"" JOBSCRIPT_OUTPUT " error $n not a name of A-Z a-z 0-9 . _ - +\"; exit 1\n"
    "    fi\n"
    "    if [ -L \"$f\" ] || [ ! -f \"$f\" ]; then echo \"" JOBSCRIPT_OUTPUT " error $n not a regular file (a link, a folder...)\"; exit 1; fi\n"
    "    [ -z \"$to\" ] || continue   # the limits are locusd's disk's\n"
    "    sz=$(stat -c %s \"$f\") || exit 1\n"
    "    [ \"$sz\" -le \"$locus_output_max_file\" ] ||\n"
    "      { echo \"" JOBSCRIPT_OUTPUT " error $n $sz bytes, over the limit of $locus_output_max_file\"; exit 1; }\n"
    "    total=$((total + sz))\n"
    "  done\n"
    "  [ \"$total\" -le \"$locus_output_max_job\" ] ||\n"
    "    { echo \"" JOBSCRIPT_OUTPUT " error - $total bytes of outputs, over the job's limit of $locus_output_max_job\"; exit 1; }\n"
    "  for i in \"${!names[@]}\"; do locus_put \"$id\" \"$tok\" \"${names[$i]}\" \"${files[$i]}\" \"$to\" || exit $?; done\n"
    ")\n";

/* The gathering functions and where they send, when a job has outputs. */
static void gather_step(struct strbuf *out, const struct drv_job *jobs)
{
    sb_puts(out, "locus_output_url=");
    sh_quote(out, jobs[0].output_url ? jobs[0].output_url : "");
    sb_printf(out, "\nlocus_output_max_file=%" PRId64 " locus_output_max_job=%" PRId64 "\n", jobs[0].output_max_file,
              jobs[0].output_max_job);
    sb_puts(out, gather_fns);
}

/* One element of the case on the index: what differs between jobs. */
static int write_element(struct strbuf *out, const struct cluster_spec *spec, const struct drv_job *j, int i,
                         const char *download_url, char *err, size_t errlen)
{
    if (check_env(j, err, errlen)) return -1;
    sb_printf(out, "%d)\n  LOCUS_JOB_ID=%" PRId64 "\n  LOCUS_JOB_NAME=", i, j->job_id);
    sh_quote(out, j->name ? j->name : "");
    long wall = drv_job_walltime(spec, j);
    sb_puts(out, "\n  LOCUS_WALLTIME=");
    hms(out, wall);
    sb_printf(out, "\n  LOCUS_WALLTIME_SECONDS=%ld\n", wall);
    struct strbuf rec;
    sb_init(&rec);
    stage_records(&rec, j, download_url);
    if (rec.len) {
        sb_puts(out, "  locus_inputs=");
        sh_quote(out, rec.s);
        sb_puts(out, "\n");
    }
    sb_free(&rec);
    if (j->outputs && *j->outputs && !j->group) {
        sb_puts(out, "  locus_outputs=");
        sh_quote(out, j->outputs);
        sb_puts(out, "\n  locus_token=");
        sh_quote(out, j->output_token ? j->output_token : "");
        sb_puts(out, "\n");
    }
    sb_puts(out, "  locus_run=");
    if (j->group) {
        if (write_group(out, spec, j, err, errlen)) return -1;
    } else if (j->script) {
        struct strbuf lines;
        sb_init(&lines);
        for (int k = 0; k < j->nscript; k++) sb_printf(&lines, "%s\n", j->script[k]);
        sh_quote(out, lines.s);
        sb_free(&lines);
    } else {
        quoted_command(out, spec, j);
    }
    sb_puts(out, "\n");
    for (int k = 0; j->env && j->env[k]; k++) {
        sb_puts(out, "  export ");
        sh_quote(out, j->env[k]);
        sb_puts(out, "\n");
    }
    sb_puts(out, "  ;;\n");
    return 0;
}

long drv_job_walltime(const struct cluster_spec *spec, const struct drv_job *job)
{
    return job->walltime > 0 ? job->walltime : spec->walltime;
}

int jobscript_write(struct strbuf *out, const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                    const struct jobscript_sched *sched, char *err, size_t errlen)
{
    char res[256] = "";
    jdl_format_resources(spec->levels, spec->nlevels, res, sizeof res);
    sb_printf(out, "#!/bin/bash\n# locus job wrapper: campaign %" PRId64 ", %d job(s)\n", jobs[0].campaign_id, n);
    sb_printf(out, "locus_index=%s\nlocus_inputs= locus_outputs= locus_token=\ncase \"$locus_index\" in\n", sched->index);
    const char *download_url = jobs[0].download_url ? jobs[0].download_url : "";
    for (int i = 0; i < n; i++)
        if (write_element(out, spec, &jobs[i], i, download_url, err, errlen)) return -1;
    sb_printf(out, "*) echo \"locus: no job at index $locus_index\" >&2; exit %d;;\nesac\n", JOBSCRIPT_SETUP_FAILED);
    sb_printf(out, "LOCUS_CAMPAIGN_ID=%" PRId64 "\nLOCUS_USER=", jobs[0].campaign_id);
    sh_quote(out, jobs[0].user ? jobs[0].user : "");
    sb_puts(out, "\nLOCUS_RESOURCES=");
    sh_quote(out, res);
    /* sbatch hands on the environment it ran in, so under a locusd run as
     * root the job saw root's HOME: a HOME the job's user does not own is
     * not theirs, and ~, {HOME} and the default directory are the user's */
    sb_puts(out, "\nif [ ! -O \"$HOME\" ]; then\n"
                 "  locus_home=$(getent passwd \"$(id -u)\" | cut -d: -f6)\n"
                 "  [ -z \"$locus_home\" ] || export HOME=$locus_home\n"
                 "fi");
    sb_puts(out, "\nlocus_dir=");
    if (spec->exec_directory[0]) sh_word(out, spec->exec_directory, jobs[0].campaign_id);
    else sb_puts(out, "\"$HOME\"");
    sb_printf(out,
              "\ncd \"$locus_dir\" || { echo \"locus: cannot enter the working directory $locus_dir\" >&2; exit %d; }\n",
              JOBSCRIPT_SETUP_FAILED);
    sb_puts(out, "LOCUS_WORKDIR=$PWD\n"
                 "LOCUS_NODEFILE=$(mktemp \"${TMPDIR:-/tmp}/locus-nodefile.XXXXXX\") || exit 1\n"
                 "trap 'rm -f \"$LOCUS_NODEFILE\"' EXIT\n");
    sb_printf(out, "%s\n", sched->nodefile);
    int staged = 0, gathered = 0;   /* a wrapper without inputs (outputs) has no such step */
    for (int i = 0; i < n; i++) {
        staged |= jobs[i].ninputs > 0;
        gathered |= jobs[i].outputs && *jobs[i].outputs;
        for (int g = 0; jobs[i].group && g < jobs[i].ngroup; g++) {
            staged |= jobs[i].group[g].ninputs > 0;
            gathered |= jobs[i].group[g].outputs && *jobs[i].group[g].outputs;
        }
    }
    if (staged) stage_step(out, jobs);
    if (gathered) gather_step(out, jobs);

    sb_puts(out, "export LOCUS_JOB_ID LOCUS_JOB_NAME LOCUS_CAMPAIGN_ID LOCUS_USER LOCUS_WORKDIR LOCUS_NODEFILE\n"
                 "export LOCUS_RESOURCES LOCUS_WALLTIME LOCUS_WALLTIME_SECONDS\n"
                 "# CiGri's names, so that CiGri scripts run unchanged\n"
                 "export CIGRI_JOB_ID=$LOCUS_JOB_ID CIGRI_JOBID=$LOCUS_JOB_ID\n"
                 "export CIGRI_CAMPAIGN_ID=$LOCUS_CAMPAIGN_ID CIGRI_CAMPAIGNID=$LOCUS_CAMPAIGN_ID\n"
                 "export CIGRI_JOB_NAME=$LOCUS_JOB_NAME CIGRI_JOBNAME=$LOCUS_JOB_NAME CIGRI_USER=$LOCUS_USER\n"
                 "export CIGRI_WORKDIR=$LOCUS_WORKDIR CIGRI_WORKING_DIRECTORY=$LOCUS_WORKDIR\n"
                 "export CIGRI_NODE_FILE=$LOCUS_NODEFILE CIGRI_NODEFILE=$LOCUS_NODEFILE\n"
                 "export CIGRI_RESOURCES=$LOCUS_RESOURCES CIGRI_WALLTIME=$LOCUS_WALLTIME\n"
                 "export CIGRI_WALLTIME_SECONDS=$LOCUS_WALLTIME_SECONDS\n"
                 "locus_child= locus_signalled=\n");
    /* the checkpoint signal is trapped before the job starts, or one that
     * came at once (the job signalling its parent as it starts) would kill
     * the wrapper; one that came before the job's pid was known is passed
     * on then. The wait below returns early when a trapped signal arrives:
     * wait again until the job really ended, to exit with its status */
    if (spec->checkpointing_period > 0)
        sb_printf(out, "trap 'if [ -n \"$locus_child\" ]; then kill -%d $locus_child 2>/dev/null; "
                       "else locus_signalled=1; fi' %d\n",
                  spec->checkpointing_signal, spec->checkpointing_signal);
    sb_puts(out, "( eval \"$locus_run\" ) &\n"
                 "locus_child=$!\n");
    if (spec->checkpointing_period > 0)
        sb_printf(out, "[ -z \"$locus_signalled\" ] || kill -%d $locus_child 2>/dev/null\n",
                  spec->checkpointing_signal);
    int64_t every = spec->checkpointing_period > 0 ? jobs[0].checkpoint_interval : 0;
    if (every > 0)   /* the scheduler sends one signal, before the walltime: the others come from here */
        sb_printf(out, "( trap 'kill $locus_nap 2>/dev/null; exit 0' TERM\n"
                       "  while :; do sleep %" PRId64 " & locus_nap=$!; wait $locus_nap\n"
                       "    kill -%d $locus_child 2>/dev/null || exit 0; done ) &\n"
                       "locus_ticker=$!\n",
                  every, spec->checkpointing_signal);
    sb_puts(out, "trap 'kill -TERM $locus_child 2>/dev/null' TERM\n");
    int timer = spec->checkpointing_period > 0 && sched->signal_after > 0;
    if (timer)   /* a scheduler that cannot signal the wrapper: its own timer, stopped with it */
        sb_printf(out, "( trap 'kill $locus_s 2>/dev/null; exit' TERM; sleep %ld & locus_s=$!; wait $locus_s; "
                       "kill -%d $$ ) &\nlocus_timer=$!\n",
                  sched->signal_after, spec->checkpointing_signal);
    sb_puts(out, "wait $locus_child\n"
                 "while kill -0 $locus_child 2>/dev/null; do wait $locus_child; done\n"
                 "wait $locus_child\n"   /* bash keeps the status of a reaped child */
                 "locus_status=$?\n");
    if (gathered)   /* a grouped job's params sent theirs, each as it ended */
        sb_puts(out, "if [ \"$locus_status\" -eq 0 ] && [ -n \"$locus_outputs\" ]; then\n"
                     "  locus_gather \"$LOCUS_JOB_ID\" \"$locus_token\" \"$locus_outputs\"\n"
                     "  case $? in 0) ;; 2) locus_status=" XSTR(JOBSCRIPT_OUTPUT_UNSENT) " ;; *) locus_status="
                     XSTR(JOBSCRIPT_OUTPUT_FAILED) " ;; esac\n"
                     "fi\n");
    if (every > 0) sb_puts(out, "kill $locus_ticker 2>/dev/null\n");
    if (timer) sb_puts(out, "kill $locus_timer 2>/dev/null\n");
    sb_puts(out, "exit $locus_status\n");
    return 0;
}

void jobscript_group_marks(const char *text, const int64_t *ids, int n, struct jobscript_mark *out)
{
    memset(out, 0, (size_t)(n > 0 ? n : 0) * sizeof *out);
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        const char *p = line + sizeof JOBSCRIPT_MARK;   /* after the mark and its space */
        long long id, when;
        int status, start = 0, end = 0;
        if (!strncmp(line, JOBSCRIPT_MARK " ", sizeof JOBSCRIPT_MARK)) {
            start = sscanf(p, "start %lld %lld", &id, &when) == 2;
            end = !start && sscanf(p, "end %lld %d %lld", &id, &status, &when) == 3;
        }
        for (int i = 0; (start || end) && i < n; i++) {
            if (ids[i] != id) continue;
            out[i].started = 1;   /* an end whose start left the text still started */
            if (start) out[i].start = (int64_t)when;
            if (end) {
                out[i].ended = 1;
                out[i].status = status;
                out[i].end = (int64_t)when;
            }
        }
        line = eol ? eol + 1 : NULL;
    }
}

/* "<input> <rest>" of a stage line after its word, into out. */
static void stage_why(const char *p, const char *eol, char *out, size_t len)
{
    size_t n = eol ? (size_t)(eol - p) : strlen(p);
    const char *sp = memchr(p, ' ', n);
    if (sp) snprintf(out, len, "%.*s: %.*s", (int)(sp - p), p, (int)(n - (size_t)(sp - p) - 1), sp + 1);
    else snprintf(out, len, "%.*s", (int)n, p);
}

void jobscript_stage_read(const char *text, struct jobscript_stage *out)
{
    *out = (struct jobscript_stage){0};
    const size_t mark = sizeof JOBSCRIPT_STAGE;   /* the word and its space */
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n'), *p = line + mark;
        char name[JOBSCRIPT_STAGE_NAME_MAX + 1];
        long long bytes, ms;
        if (strncmp(line, JOBSCRIPT_STAGE " ", mark)) {
            /* not a stage line: the job's own output */
        } else if (sscanf(p, "fetched %" XSTR(JOBSCRIPT_STAGE_NAME_MAX) "s %lld %lld", name, &bytes, &ms) == 3 &&
                   out->nfetched < JOBSCRIPT_STAGE_MAX) {
            struct jobscript_fetch *f = &out->fetched[out->nfetched++];
            snprintf(f->input, sizeof f->input, "%s", name);
            f->bytes = bytes;
            f->ms = ms;
        } else if (!out->fail && !strncmp(p, "bad ", 4)) {
            out->fail = JOBSCRIPT_STAGE_BAD;
            stage_why(p + 4, eol, out->why, sizeof out->why);
        } else if (!out->fail && !strncmp(p, "error ", 6)) {
            out->fail = JOBSCRIPT_STAGE_ERROR;
            stage_why(p + 6, eol, out->why, sizeof out->why);
        }
        line = eol ? eol + 1 : NULL;
    }
}
