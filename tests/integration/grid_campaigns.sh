#!/usr/bin/env bash
# grid_campaigns: campaigns end to end on two real Slurm clusters (alpha: 2
# nodes of 8 cores, beta: 1 node of 8) and one real OAR cluster (gamma),
# each with another user's jobs beside locus's, driven by locusd's grid
# daemon and `locus cluster` / `locus campaign` (docs/campaigns.md):
#  1. a test campaign runs one job per cluster before the default
#     campaigns submitted with it;
#  2. a default campaign of 500 jobs with params completes on all three;
#  3. its waiting jobs, sampled every second in each queue, never exceed
#     what the cycle allows (see "the flooding bound" below; jobs that a
#     slurmctld restarted from its saved state runs again are not locus's);
#  4. a cluster where the exec_file fails is blacklisted by an event and
#     the campaign completes elsewhere;
#  5. best-effort jobs preempted by the other user's normal jobs are
#     resubmitted and complete;
#  6. a sink cluster (jobs that "succeed" at once) is detected and
#     blacklisted, its jobs run again elsewhere;
#  7. a checkpointing job killed at its walltime resumes from its checkpoint;
#  8. kill -9 of locusd while a submission to Slurm is under way, then
#     while one to OAR is, each with a restart: no job submitted twice and
#     none lost (each run and each scheduler-side job checked against
#     locus's copies), also when the lost submission's jobs ended before
#     the restart;
#  9. bad input refused with nothing created; a dead slurmctld: its poll
#     fails, the other clusters go on, nothing lost once it is back.
# Checks after the setup do not stop the test: every failure is listed at
# the end (one daemon bug must not hide the state of the others).
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' users walk through it
. "$(dirname "$0")/lib/slurm.sh"     # teardowns chain before boinc.sh's
. "$(dirname "$0")/lib/oar.sh"
. "$(dirname "$0")/lib/clusters.sh"
[ "$(id -u)" = 0 ] || fail "needs root (Slurm, OAR, jobs of two users)"

WAITING_ALLOWED=4

# ---- clusters, users, project ----

# The clusters answer as soon as they can (lib/slurm.sh, lib/oar.sh):
# Slurm's main scheduler otherwise waits batch_sched_delay (3 s) after a
# submission or a job's end, and OAR's Almighty 5 s between two runs of its
# scheduler (SCHEDULER_MIN_TIME_BETWEEN_2_CALLS), then up to 10 s more on
# its command queue when a job is submitted sooner: gamma started jobs
# 13 s after their submission. OAR's API runs under FastCGI, as OAR's own
# Apache configuration has it, not as a CGI that starts Perl for each of
# the 4 or more requests of every grid cycle (each cycle waits for them).
# Only how long a job waits for a core and a cycle for OAR changes; what
# the test checks does not depend on it.
SLURM_EXTRA_CONF="SchedulerParameters=batch_sched_delay=0"
OAR_EXTRA_CONF="SCHEDULER_MIN_TIME_BETWEEN_2_CALLS=0"
OAR_API_FASTCGI=1

make_test_users
pa=$(free_ports 2)
pb=$(free_ports 1)
slurm_cluster_up alpha "$pa" 2 8 || fail "Slurm cluster alpha did not come up"
SLURM_MIN_JOB_AGE=2 slurm_cluster_up beta "$pb" 1 8 || fail "Slurm cluster beta did not come up"
oar_up 4 "$(free_ports 0)" || fail "OAR did not come up"
say "clusters up: alpha (slurm, port $pa), beta (slurm, port $pb), gamma (OAR, $OAR_API)"
T0=$(date +%s)

sq() { local c=$1; shift; SLURM_CONF=${SLURM_CONF_OF[$c]} timeout 5 "$@"; }
# Scheduler-side jobs of campaign C are named locus.TOKEN.C, or
# locus.TOKEN.C.TAG when the driver tags each submission (TOKEN: the
# store's, set once the project exists).
of_campaign() { awk -v c="locus.$TOKEN.$1" -v k="${2:-1}" '$k == c || index($k, c ".") == 1'; }
oar_jobs_of() {
    oarstat --sql "(job_name = 'locus.$TOKEN.$1' OR job_name LIKE 'locus.$TOKEN.$1.%') AND submission_time >= $T0" \
        2>/dev/null | awk '$1 ~ /^[0-9]+$/'
}
# oar_waiting_of C: the ids of those oarstat shows as waiting (W: states
# Waiting and toAckReservation; H: Hold), from the same rows of OAR's
# database (oarstat --sql selects from its jobs table alone), without
# oarstat's Perl start-up: the sampler asks every second.
oar_waiting_of() {
    PGPASSWORD=oarropw psql -h 127.0.0.1 -U oar_ro -d oar -Atc "SELECT job_id FROM jobs
        WHERE (job_name = 'locus.$TOKEN.$1' OR job_name LIKE 'locus.$TOKEN.$1.%') AND submission_time >= $T0
        AND state IN ('Waiting', 'toAckReservation', 'Hold')" 2>/dev/null
}
# the other user's jobs keep part of beta and gamma busy all along
sq beta runuser -u locusb -- sbatch -Q -p normal -n 1 -o /dev/null -D /tmp --wrap "sleep 3000" \
    || fail "locusb's background job on beta was refused"
BG_OAR=$(runuser -u locusb -- oarsub -n background -l /core=1,walltime=1:00:00 -d /tmp "sleep 3000" \
    | sed -n 's/^OAR_JOB_ID=//p') && [ -n "$BG_OAR" ] || fail "locusb's background job on gamma was refused"

proj=$TMP/proj
make_project "$proj" locusa locusb
map_accounts "$proj" locusa locusb
TOKEN=$(job_token "$proj")
set_config "$proj" grid_cycle_period 1
set_config "$proj" grid_predictor adapt_down_exp_up
set_config "$proj" grid_waiting_allowed "$WAITING_ALLOWED"
"$LOCUS" cluster add "$proj" alpha --driver slurm --conf "${SLURM_CONF_OF[alpha]}" --partition normal \
    --besteffort-partition besteffort >/dev/null || fail "locus cluster add alpha failed"
# beta's commands are cut at 2 s: its slurmctld dies in step 9
"$LOCUS" cluster add "$proj" beta --driver slurm --conf "${SLURM_CONF_OF[beta]}" --partition normal \
    --besteffort-partition besteffort --timeout-ms 2000 >/dev/null || fail "locus cluster add beta failed"
"$LOCUS" cluster add "$proj" gamma --driver oar --api "$OAR_API" >/dev/null || fail "locus cluster add gamma failed"
cid_of() { sql "$proj" "SELECT id FROM clusters WHERE name='$1'"; }
declare -A CL=([alpha]=$(cid_of alpha) [beta]=$(cid_of beta) [gamma]=$(cid_of gamma))

# ---- the jobs ----

WORK=$TMP/work BIN=$TMP/bin
mkdir -p "$WORK" "$BIN"
chmod 777 "$WORK"
# job.sh PARAM: records where it runs (its copy, cluster and the
# scheduler's id for it) in runs.CAMPAIGN, sleeps 2 to 3 s (LOCUS_SLEEP
# seconds if set), records its end and writes its param's output file.
cat >"$BIN/job.sh" <<'SH'
#!/bin/bash
if [ -n "${SLURM_CLUSTER_NAME:-}" ]; then
    c=$SLURM_CLUSTER_NAME s=${SLURM_ARRAY_JOB_ID:+${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}}
    s=${s:-$SLURM_JOB_ID}
else
    c=gamma s=${OAR_JOB_ID:-${OAR_JOBID:-unknown}}
fi
runs=$LOCUS_WORKDIR/runs.$LOCUS_CAMPAIGN_ID
echo "start $1 $LOCUS_COPY_ID $c $s" >>"$runs"
sleep "${LOCUS_SLEEP:-2.$((RANDOM % 10))}"
mkdir -p "$LOCUS_WORKDIR/out.$LOCUS_CAMPAIGN_ID"
echo "$1 $LOCUS_COPY_ID $c $s" >>"$LOCUS_WORKDIR/out.$LOCUS_CAMPAIGN_ID/$1"
echo "end $1 $LOCUS_COPY_ID $c $s" >>"$runs"
SH
# the sink's jobs: at once on alpha, 12 s elsewhere. Slurm counts an
# instant job as 1 s, and a success is near zero only below a tenth of the
# campaign's mean elsewhere (docs/grid-policies.md, "The sink effect").
printf '#!/bin/bash\nLOCUS_SLEEP=0 exec %s "$@"\n' "$BIN/job.sh" >"$BIN/instant.sh"
printf '#!/bin/bash\nLOCUS_SLEEP=12 exec %s "$@"\n' "$BIN/job.sh" >"$BIN/slow.sh"
# ckpt.sh NAME: counts steps until killed; the checkpointing signal saves
# the step; resumed (LOCUS_RESUME=1), it goes on from the saved step.
cat >"$BIN/ckpt.sh" <<'SH'
#!/bin/bash
f=$LOCUS_WORKDIR/ckpt.$1 log=$LOCUS_WORKDIR/ckpt.log
step=0
if [ "${LOCUS_RESUME:-0}" = 1 ] && [ -s "$f" ]; then
    step=$(cat "$f")
    echo "resumed $1 from step $step (copy $LOCUS_COPY_ID)" >>"$log"
    for i in 1 2 3; do step=$((step + 1)); sleep 0.5; done
    echo "done $1 at step $step" >>"$log"
    exit 0
fi
echo "started $1 (copy $LOCUS_COPY_ID, resume ${LOCUS_RESUME:-unset})" >>"$log"
trap 'echo "$step" >"$f"; echo "checkpointed $1 at step $step" >>"$log"' USR2
while :; do step=$((step + 1)); sleep 0.5; done
SH
chmod 755 "$BIN"/*.sh

# params_json PREFIX N: ["PREFIX000", ...] (N params).
params_json() { echo "[$(seq -f "\"$1%03g\"" 0 $(($2 - 1)) | paste -sd,)]"; }
# jdl NAME FILE JSON_BODY: a campaign file with the common defaults.
jdl() {
    cat >"$TMP/$1.json" <<JSON
{"name": "$1", "exec_directory": "$WORK", "exec_file": "$BIN/job.sh", "walltime": 300, $2}
JSON
}
jdl probe '"type": "test", "params": ["t0", "t1", "t2", "t3", "t4"],
  "clusters": {"alpha": {}, "beta": {}, "gamma": {}}'
jdl main "\"params\": $(params_json m 500), \"clusters\": {\"alpha\": {}, \"beta\": {}, \"gamma\": {}}"
jdl ckpt "\"priority\": 100, \"params\": [\"ck\"], \"clusters\": {\"gamma\": {\"exec_file\": \"$BIN/ckpt.sh\",
  \"type\": \"normal\", \"walltime\": 20, \"checkpointing_signal\": \"SIGUSR2\", \"checkpointing_period\": 12}}"
jdl fail "\"priority\": 60, \"params\": $(params_json f 10),
  \"clusters\": {\"beta\": {\"exec_file\": \"$BIN/missing.sh\"}, \"gamma\": {}}"
jdl sink "\"priority\": 50, \"params\": $(params_json s 20),
  \"clusters\": {\"alpha\": {\"exec_file\": \"$BIN/instant.sh\"}, \"beta\": {\"exec_file\": \"$BIN/slow.sh\"}}"

export LOCUSD_DEBUG=grid
start_locusd "$proj"

# ---- 9a. bad input: clear errors, nothing created ----

say "step 9a: bad input"
nothing_created() {
    [ "$(sql "$proj" "SELECT (SELECT count(*) FROM campaigns) + (SELECT count(*) FROM grid_campaigns)
                      + (SELECT count(*) FROM grid_orders)")" = 0 ]
}
# refused WANT FILE: submitting FILE fails with WANT on stderr, nothing created.
refused() {
    local want=$1 file=$2
    if "$LOCUS" campaign submit "$proj" "$file" --user locusa >"$TMP/out" 2>"$TMP/err"; then
        bad "$(basename "$file") was accepted (campaign $(cat "$TMP/out"))"
    else
        grep -qF -- "$want" "$TMP/err" || bad "$(basename "$file"): error without '$want': $(cat "$TMP/err")"
    fi
    nothing_created || bad "$(basename "$file") left rows behind"
}
printf '{"name": "broken", "nb_jobs": 3, "clusters": {"alpha": {"exec_file": "%s"}' "$BIN/job.sh" >"$TMP/bad1.json"
refused "JSON syntax" "$TMP/bad1.json"
printf '{"name": "x", "nb_jobs": 3, "clusters": {"alpha": {"exec_file": "%s", "walltime": "1h"}}}' \
    "$BIN/job.sh" >"$TMP/bad2.json"
refused 'clusters.alpha.walltime: expected seconds or "HH:MM:SS"' "$TMP/bad2.json"
printf '{"name": "x", "nb_jobs": 3, "clusters": {"delta": {"exec_file": "%s"}}}' "$BIN/job.sh" >"$TMP/bad3.json"
refused "clusters.delta: unknown cluster" "$TMP/bad3.json"
say "malformed JDL, wrong value and unknown cluster refused, nothing created"

# ---- campaigns ----

submit() {
    "$LOCUS" campaign submit "$proj" "$TMP/$1.json" --user locusa 2>"$TMP/err" \
        || fail "locus campaign submit $1 failed: $(cat "$TMP/err")"
}
PROBE=$(submit probe)
# the default ones together once the test campaign exists (each waits for
# locusd to carry its order out, a grid cycle or so)
declare -A SUBMITTER
for c in main ckpt fail sink; do
    "$LOCUS" campaign submit "$proj" "$TMP/$c.json" --user locusa >"$TMP/id.$c" 2>"$TMP/err.$c" &
    SUBMITTER[$c]=$!
done
for c in main ckpt fail sink; do
    wait "${SUBMITTER[$c]}" || fail "locus campaign submit $c failed: $(cat "$TMP/err.$c")"
done
MAIN=$(cat "$TMP/id.main") CKPT=$(cat "$TMP/id.ckpt") FAIL=$(cat "$TMP/id.fail") SINK=$(cat "$TMP/id.sink")
say "campaigns submitted: probe $PROBE (test), main $MAIN, ckpt $CKPT, fail $FAIL, sink $SINK"

# The sampler: every second, the main campaign's jobs waiting in each
# queue, a line "TIME CLUSTER ID..." (the scheduler's ids, none when none
# waits).
sample_queues() {
    local t ids c
    while [ ! -e "$TMP/sampler.stop" ]; do
        t=$(date +%s)
        for c in alpha beta; do
            ids=$(sq "$c" squeue -h -r -t PD -o '%j %i' 2>/dev/null | of_campaign "$MAIN" | awk '{printf " %s", $2}') \
                && echo "$t $c$ids"
        done
        ids=$(oar_waiting_of "$MAIN" | awk '{printf " %s", $1}') && echo "$t gamma$ids"
        sleep 1
    done >>"$TMP/queue.samples"
}
sample_queues &
SAMPLER=$!
_grid_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
# shellcheck disable=SC2064 # the previous handler is fixed now
trap "_grid_rc=\$?; set +e; kill \$SAMPLER \${PREEMPTER:-} 2>/dev/null; (exit \$_grid_rc); ${_grid_prev_trap:-:}" EXIT

state_of() { sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$1"; }
done_jobs() { sql "$proj" "SELECT count(*) FROM grid_jobs WHERE campaign_id=$1 AND state=$GJ_TERMINATED"; }
running_on() { sq "$1" squeue -h -r -t R -o %j 2>/dev/null | of_campaign "$2" | wc -l; }

# ---- 5. preemption: locusb's normal jobs take alpha from the best-effort ones ----

# Until one of main's copies ends preempted (at most 6 tries): once main
# has 4 jobs running on alpha, locusb fills its 16 cores for 5 s. Main's
# jobs last 2 to 3 s, so a try may find them all ended; runs beside the rest.
preempt_alpha() {
    local try
    for try in 1 2 3 4 5 6; do
        wait_for 60 main_runs_on_alpha || return 1
        sq alpha runuser -u locusb -- sbatch -Q -p normal -n 1 --array=0-15 -o /dev/null -D /tmp --wrap "sleep 5" \
            || return 1
        echo "try $try: $(running_on alpha "$MAIN") jobs of main were running on alpha"
        sleep 7
        [ "$(sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$MAIN AND end_reason=$GE_PREEMPTED")" = 0 ] \
            || { echo preempted; return 0; }
    done
    return 1
}
main_runs_on_alpha() { [ "$(running_on alpha "$MAIN")" -ge 4 ]; }
preempt_alpha >"$TMP/preempt.log" 2>&1 &
PREEMPTER=$!

# ---- 8. kill -9 of locusd while it submits, restart ----

# kill_while_submitting CLUSTER [HOOK]: SIGKILL to locusd while a
# submission to CLUSTER is under way (a row of grid_launches: marked before
# its driver is called, removed once its outcome is recorded), then
# `HOOK SUBMISSION` if given, then a restart. 1 when the submission ended
# before the kill; sub is set to the submission caught.
INFLIGHT=()
kill_while_submitting() {
    local c=$1 hook=${2:-} i
    sub=
    for i in $(seq 6000); do
        sub=$(sqlite3 -readonly "$proj/locus.db" \
            "SELECT submission FROM grid_launches WHERE cluster_id=${CL[$c]}" 2>/dev/null) || continue
        [ -n "$sub" ] && break
    done
    kill9_locusd
    sub=$(sql "$proj" "SELECT submission FROM grid_launches WHERE cluster_id=${CL[$c]}")
    [ -n "$sub" ] && INFLIGHT+=("$sub")
    say "step 8: locusd killed with SIGKILL at $(done_jobs "$MAIN") jobs of main done; submission to $c under way: ${sub:-none (it ended first)}"
    [ -n "$sub" ] && [ -n "$hook" ] && "$hook" "$sub"
    start_locusd "$proj"
    if [ -n "$sub" ]; then
        # the grid thread recovers after the HTTP front is up: wait for it
        if wait_for 60 grep -q "submission $sub to $c was under way" "$LOCUSD_LOG"; then
            say "restart: $(grep -o "submission $sub to $c was under way.*" "$LOCUSD_LOG" | tail -n 1)"
        else
            bad "the restart did not report submission $sub"
        fi
    fi
    [ -n "$sub" ]
}
main_at() { [ "$(done_jobs "$MAIN")" -ge "$1" ]; }
wait_for 200 main_at 100 || bad "main did not reach 100 jobs done in 200 s ($(done_jobs "$MAIN"))"
kill_while_submitting alpha || true   # Slurm: squeue by name, while slurmctld keeps the jobs
wait_for 200 main_at 200 || bad "main did not reach 200 jobs done ($(done_jobs "$MAIN"))"
# OAR (gamma): the driver also lists the jobs ended since the submission,
# so a lost submission is found even when its jobs ended before the
# restart, which waits for that. Until a submission is caught under way
# after it reached OAR.
# oar_sub_states SUB: the states of the OAR jobs of main's submission SUB,
# from OAR's database itself: oarstat's listing joins on assigned
# resources and misses a job that has none (yet, or ever).
oar_sub_states() {
    PGPASSWORD=oarropw psql -h 127.0.0.1 -U oar_ro -d oar -Atc \
        "SELECT state FROM jobs WHERE job_name = 'locus.$TOKEN.$MAIN.$1' AND submission_time >= $T0" 2>/dev/null
}
oar_sub_ended() { ! oar_sub_states "$1" | grep -qv '^\(Terminated\|Error\)$'; }
let_oar_jobs_end() {
    sleep 3    # the API completes a submission whose client died
    wait_for 60 oar_sub_ended "$1" || bad "jobs of submission $1 on gamma not ended after 60 s"
    say "step 8: submission $1: $(oar_sub_states "$1" | wc -l) jobs on gamma, all ended before the restart"
}
# found_by_restart SUB: how many jobs of SUB locusd's restart found on gamma.
found_by_restart() {
    grep -o "submission $1 to gamma was under way when locusd stopped: [0-9]*" "$LOCUSD_LOG" | tail -n 1 | grep -o '[0-9]*$'
}
# OAR may commit a submission whose client died after the hook counted
# its jobs: the count is the database's once it agrees, or after 10 s
same_count() { [ "$(oar_sub_states "$sub" | wc -l)" = "$(found_by_restart "$sub")" ]; }
caught=
for _ in 1 2 3; do
    kill_while_submitting gamma let_oar_jobs_end || continue
    if ! wait_for 10 same_count; then
        n=$(PGPASSWORD=oarropw psql -h 127.0.0.1 -U oar_ro -d oar -Atc "SELECT job_id || ':' || state || ':' || \
submission_time FROM jobs WHERE job_name = 'locus.$TOKEN.$MAIN.$sub'" 2>&1 | tr '\n' ' ')
        # Seen now and then: the restart counts a job of the killed
        # submission that OAR's database no longer holds by that name (the
        # cause is not known yet). locusd then finds it gone at its next
        # poll, as any lost job; the campaign's end below shows that none
        # stays counted and none is done twice.
        if [ -z "$n" ]; then
            say "gamma: the restart found $(found_by_restart "$sub") jobs of submission $sub, which OAR dropped since"
        else
            bad "gamma: the restart found $(found_by_restart "$sub") jobs of submission $sub; OAR's database has \
(id:state:submitted): $n"
        fi
    fi
    n=$(oar_sub_states "$sub" | wc -l)
    [ "$n" -gt 0 ] && { caught=1; break; }
done
[ -n "$caught" ] || bad "no submission to gamma was caught under way with jobs on OAR in 3 kills"

# ---- 9b. a dead slurmctld ----

wait_for 200 main_at 300 || bad "main did not reach 300 jobs done ($(done_jobs "$MAIN"))"
successes_elsewhere() {
    sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$MAIN AND end_reason=$GE_SUCCESS
                 AND cluster_id IN (${CL[alpha]}, ${CL[gamma]})"
}
slurm_ctld_kill beta
beta_failed() { [ "$(sql "$proj" "SELECT poll_failed FROM grid_clusters WHERE id=${CL[beta]}")" = 1 ]; }
if wait_for 30 beta_failed; then
    s1=$(successes_elsewhere)
    sleep 10
    s2=$(successes_elsewhere)
    say "step 9b: beta's slurmctld dead, its poll fails; alpha and gamma: $s1 -> $s2 successes in 10 s"
    [ "$s2" -gt "$s1" ] || bad "alpha and gamma made no progress while beta was down ($s1 -> $s2)"
    grep -q "grid: .*beta" "$LOCUSD_LOG" || bad "no warning about beta in locusd's log"
else
    bad "beta's failed poll not recorded (grid_clusters.poll_failed) within 30 s"
fi
SLURM_CONF=${SLURM_CONF_OF[beta]} /usr/sbin/slurmctld || bad "beta's slurmctld did not restart"
beta_back() { [ "$(sql "$proj" "SELECT poll_failed FROM grid_clusters WHERE id=${CL[beta]}")" = 0 ]; }
wait_for 60 beta_back || bad "beta's poll still fails 60 s after its slurmctld restarted"
say "beta's slurmctld restarted"

# ---- the end of every campaign ----

all_ended() {
    local c
    for c in $PROBE $MAIN $CKPT $FAIL $SINK; do [ "$(state_of "$c")" = 3 ] || return 1; done
}
# unended: what a stalled campaign's jobs, copies and pairs look like, so
# that a stall seen once (under load, in CI) can be understood from the log
unended() {
    local c
    for c in $PROBE $MAIN $CKPT $FAIL $SINK; do
        [ "$(state_of "$c")" = 3 ] && continue
        echo "campaign $c: jobs (state:attempts:pin:event:n) $(sql "$proj" "SELECT state || ':' || attempts || ':' ||
            pin_cluster || ':' || event_id || ':' || count(*) FROM grid_jobs WHERE campaign_id=$c
            GROUP BY state, attempts, pin_cluster, event_id" | tr '\n' ' ')"
        echo "  copies (cluster:state:kind:end:exit:n) $(sql "$proj" "SELECT cluster_id || ':' || state || ':' ||
            kind || ':' || end_reason || ':' || exit_code || ':' || count(*) FROM grid_copies WHERE campaign_id=$c
            GROUP BY cluster_id, state, kind, end_reason, exit_code" | tr '\n' ' ')"
        echo "  pairs (cluster:jr:allowed:pred_jobs:running:waiting:blacklist:test:successes) $(sql "$proj" "SELECT
            cluster_id || ':' || jr || ':' || last_allowed || ':' || pred_jobs || ':' || running || ':' ||
            waiting || ':' || blacklist_event || ':' || test_state || ':' || successes FROM grid_pairs
            WHERE campaign_id=$c" | tr '\n' ' ')"
        echo "  events (id:cluster:kind:open:blacklists:exit) $(sql "$proj" "SELECT id || ':' || cluster_id || ':' ||
            kind || ':' || open || ':' || blacklists || ':' || exit_code FROM grid_events WHERE campaign_id=$c" |
            tr '\n' ' ')"
    done
    echo "  clusters (id:name:free:total:disabled:poll_failed) $(sql "$proj" "SELECT id || ':' || name || ':' ||
        free || ':' || total || ':' || disabled || ':' || poll_failed FROM grid_clusters" | tr '\n' ' ')"
    echo "  gamma's resources (OAR): $(oarnodes -s 2>&1 | tr '\n' ' ' | head -c 600)"
    echo "  gamma's jobs (OAR): $(oarstat 2>&1 | tail -n +3 | head -n 20 | tr '\n' ';' | head -c 1500)"
}
wait_for 300 all_ended || bad "campaigns not all terminated: $(sql "$proj" "SELECT id, state, ndone, njobs
    FROM grid_campaigns" | tr '\n' ' ')
$(unended)"
touch "$TMP/sampler.stop"
wait "$SAMPLER" || true
# the outcome is in the log, not wait's status: the test spawns so many
# processes that the pid of a finished preempter may be reused, and bash
# then forgets its status ("not a child of this shell")
wait "$PREEMPTER" 2>/dev/null || true
# locusb's background jobs have done their part: cancelled now, so that
# the teardown does not wait for them after the checks
sq beta scancel -u locusb 2>/dev/null || true
oardel "$BG_OAR" >/dev/null 2>&1 || true
grep -qx preempted "$TMP/preempt.log" || bad "no job of main was preempted on alpha in 6 tries: $(tr '\n' ';' <"$TMP/preempt.log")"
say "campaigns ended: $("$LOCUS" campaign stat "$proj" | tail -n +2 | awk '{print $1":"$4}' | tr '\n' ' ')"
# gridstat's lists: main's 500 jobs terminated, each with the copy that
# succeeded; locusa's five campaigns summed
n=$("$LOCUS" campaign stat "$proj" "$MAIN" --jobs --state terminated | awk 'NR > 1 && $6 == "success"' | wc -l)
[ "$n" = 500 ] || bad "campaign stat --jobs --state terminated: $n jobs of main with a successful copy, not 500"
"$LOCUS" campaign stat "$proj" --users | grep -q "^locusa *5 " \
    || bad "campaign stat --users: $("$LOCUS" campaign stat "$proj" --users)"
stop_locusd

# ---- 1. the test campaign first ----

say "step 1: test campaign"
copies_of() { sql "$proj" "SELECT cluster_id, kind, end_reason FROM grid_copies WHERE campaign_id=$1 ORDER BY cluster_id"; }
[ "$(copies_of "$PROBE")" = "${CL[alpha]}|3|1
${CL[beta]}|3|1
${CL[gamma]}|3|1" ] || bad "test campaign: copies (cluster|kind|end) are $(copies_of "$PROBE" | tr '\n' ' '), expected one successful test job per cluster"
for c in alpha beta gamma; do
    order=$(sql "$proj" "SELECT t.submitted_at, t.started_at, min(d.submitted_at), min(nullif(d.started_at, 0))
        FROM grid_copies t, grid_copies d JOIN grid_campaigns g ON g.id = d.campaign_id
        WHERE t.campaign_id=$PROBE AND t.cluster_id=${CL[$c]} AND d.cluster_id=${CL[$c]} AND g.type=0")
    IFS='|' read -r ts tstart ds dstart <<<"$order"
    [ "$ts" -le "$ds" ] && [ "$tstart" -gt 0 ] && [ "$tstart" -le "$dstart" ] \
        || bad "$c: the test job (submitted $ts, started $tstart) is not before the default jobs (first submitted $ds, first started $dstart)"
done

# ---- 2, 8. main: every param done once, no job submitted twice, none lost ----

say "step 2: main campaign"
[ "$(done_jobs "$MAIN")" = 500 ] || bad "main: $(done_jobs "$MAIN") of 500 jobs terminated"
missing=()
for p in $(seq -f "m%03g" 0 499); do [ -s "$WORK/out.$MAIN/$p" ] || missing+=("$p"); done
# each param without output: its job and every copy (cluster:state:kind:end:exit:scheduler id:started:replica)
for p in "${missing[@]}"; do
    j=$(( 10#${p#m} ))
    bad "main: param $p has no output; its job: $(sql "$proj" "SELECT id || ':' || state || ':' || attempts || ':' ||
        success_copy FROM grid_jobs WHERE campaign_id=$MAIN AND param=$j"); its copies: $(sql "$proj" "SELECT
        c.id || ':' || c.cluster_id || ':' || c.state || ':' || c.kind || ':' || c.end_reason || ':' || c.exit_code ||
        ':' || c.cluster_job_id || ':' || c.started_at || ':' || c.replica FROM grid_copies c JOIN grid_jobs g
        ON g.id = c.job_id WHERE g.campaign_id=$MAIN AND g.param=$j" | tr '\n' ' '); runs: $(grep " $p " \
        "$WORK/runs.$MAIN" | tr '\n' ';')"
done
# exactly one success per job, unless a finalize replica also finished
nsucc=$(sql "$proj" "SELECT count(*) FROM grid_jobs j JOIN grid_copies c ON c.id=j.success_copy
    WHERE j.campaign_id=$MAIN AND c.job_id=j.id AND c.end_reason=$GE_SUCCESS")
[ "$nsucc" = 500 ] || bad "main: $nsucc jobs point to a successful copy of their own, expected 500"
extra=$(sql "$proj" "SELECT count(*) FROM (SELECT job_id FROM grid_copies WHERE campaign_id=$MAIN AND end_reason=$GE_SUCCESS
    GROUP BY job_id HAVING count(*) > 1 AND sum(replica) = 0)")
[ "$extra" = 0 ] || bad "main: $extra jobs have two successful copies and no replica"
for c in alpha beta gamma; do
    n=$(sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$MAIN AND cluster_id=${CL[$c]} AND end_reason=$GE_SUCCESS")
    say "main: $n successful jobs on $c"
    [ "$n" -gt 0 ] || bad "main: no job completed on $c"
done

say "step 8: no job submitted twice, none lost (submissions under way at the kills: ${INFLIGHT[*]:-none})"
# every run: a copy of that param on that cluster, recorded with the
# scheduler's id the run saw (a submission locusd lost track of shows up
# as a run of a copy without that id)
sql "$proj" "SELECT c.id, 'm' || substr('000' || j.param, -3), c.cluster_id, c.cluster_job_id FROM grid_copies c
    JOIN grid_jobs j ON j.id=c.job_id WHERE c.campaign_id=$MAIN" | tr '|' ' ' >"$TMP/copies.main"
awk -v a="${CL[alpha]}" -v b="${CL[beta]}" -v g="${CL[gamma]}" '
    BEGIN { cl["alpha"] = a; cl["beta"] = b; cl["gamma"] = g }
    FNR == NR { param[$1] = $2; cluster[$1] = $3; sched[$1] = $4; next }
    $1 != "start" { next }
    !($3 in param) { print "run of unknown copy " $3 " (" $2 " on " $4 ", scheduler job " $5 ")"; next }
    param[$3] != $2 || cluster[$3] != cl[$4] || sched[$3] != $5 {
        print "copy " $3 " (" param[$3] ", cluster " cluster[$3] ", scheduler job \"" sched[$3] "\") ran as " \
              $2 " on " $4 " as scheduler job " $5 }
    { seen[$3 " " $5] = 1 }
' "$TMP/copies.main" "$WORK/runs.$MAIN" >"$TMP/unrecorded"
[ -s "$TMP/unrecorded" ] && bad "runs not recorded by locus ($(wc -l <"$TMP/unrecorded")): $(head -n 3 "$TMP/unrecorded" | tr '\n' ';')"
# every scheduler-side job of main (Slurm's jobcomp log, OAR's database) is a
# recorded copy. Slurm logs the record of an array's tasks still pending
# when cancelled as its bare JobId: it stands for tasks of that array.
for c in alpha beta; do
    awk -v name="Name=locus[.]$TOKEN[.]$MAIN([.][0-9]+)?" '$0 ~ " " name " " {
        id = ""; arr = ""; task = ""
        for (i = 1; i <= NF; i++) {
            if ($i ~ /^JobId=/) id = substr($i, 7)
            if ($i ~ /^ArrayJobId=/) arr = substr($i, 12)
            if ($i ~ /^ArrayTaskId=/) task = substr($i, 13)
        }
        print (arr != "" && arr != "0" && task ~ /^[0-9]+$/) ? arr "_" task : id }' \
        "${SLURM_DIR[$c]}/log/jobcomp.txt" | sort -u >"$TMP/sched.$c"
done
oar_jobs_of "$MAIN" | awk '{print $1}' | sort -u >"$TMP/sched.gamma"
for c in alpha beta gamma; do
    awk -v id="${CL[$c]}" '$3 == id && $4 != "" {print $4}' "$TMP/copies.main" | sort -u >"$TMP/known.$c"
    orphans=$(comm -23 "$TMP/sched.$c" "$TMP/known.$c" | while read -r o; do
        grep -q "^${o}_" "$TMP/known.$c" || echo "$o"; done)
    [ -z "$orphans" ] || bad "$c: scheduler jobs of main unknown to locus: $(echo "$orphans" | head -n 5 | tr '\n' ' ')"
    say "$c: $(wc -l <"$TMP/sched.$c") scheduler jobs of main, $(wc -l <"$TMP/known.$c") copies submitted there"
done
runs=$(grep -c '^start' "$WORK/runs.$MAIN")
maxruns=$(awk '$1 == "end" {n[$2]++} END {m = 0; for (p in n) if (n[p] > m) m = n[p]; print m}' "$WORK/runs.$MAIN")
say "main: $runs runs for 500 params (at most $maxruns successful runs of one param)"

# ---- 3. the flooding bound ----

# A cycle submits at most the free cores it saw (minus those of its own
# copies not yet seen by a poll): the metascheduler caps each offer by
# free / resources per job, and finalize takes what is left. Nikita
# cancels the waiting copies beyond <grid_waiting_allowed> at each cycle,
# before the cycle submits. So between two cycles a campaign has at most
# waiting_allowed + what the last cycle submitted waiting on a cluster,
# and what one cycle submits is at most the cluster's cores.
say "step 3: queue flooding"
[ -s "$TMP/queue.samples" ] || bad "no queue samples"
# A job waiting again after locus saw it start is not counted: slurmctld,
# killed with SIGKILL in step 9b, restarts from its last saved state (a few
# seconds old), where jobs that ran since may be pending still, and runs
# them again by itself; no cycle submitted them, nikita does not see them
# (their copies ended), and they are not in the bound. A waiting job is the
# copy with its id on that cluster submitted last before the sample (Slurm
# hands out such a lost job's id again).
sql "$proj" "SELECT cluster_id, cluster_job_id, submitted_at, started_at FROM grid_copies
    WHERE campaign_id=$MAIN AND cluster_job_id != ''" | tr '|' ' ' >"$TMP/copies.times"
declare -A CORES=([alpha]=16 [beta]=8
    [gamma]=$(curl -s --max-time 10 "$OAR_API/resources.json" | grep -c '"state" *: *"Alive"'))
for c in alpha beta gamma; do
    total=${CORES[$c]}
    per_cycle=$(sql "$proj" "SELECT max(n) FROM (SELECT count(*) n FROM grid_copies WHERE campaign_id=$MAIN
        AND cluster_id=${CL[$c]} GROUP BY submitted_at)")
    # maxw: the most waiting in one sample; again: waiting again, not counted
    read -r maxw again < <(awk -v c="$c" -v cl="${CL[$c]}" '
        FNR == NR { if ($1 == cl) { k = ++nc[$2]; sub_at[$2, k] = $3; start[$2, k] = $4 } next }
        $2 == c {
            n = 0
            for (i = 3; i <= NF; i++) {
                best = 0
                for (k = 1; k <= nc[$i]; k++)
                    if (sub_at[$i, k] <= $1 && (!best || sub_at[$i, k] >= sub_at[$i, best])) best = k
                if (best && start[$i, best] > 0 && start[$i, best] < $1) again++; else n++
            }
            if (n > m) m = n
        }
        END { print m + 0, again + 0 }' "$TMP/copies.times" "$TMP/queue.samples")
    nsamples=$(awk -v c="$c" '$2 == c' "$TMP/queue.samples" | wc -l)
    say "$c: $nsamples samples, at most $maxw waiting (and $again sightings of a job waiting again); at most $per_cycle submitted by one cycle ($total cores); bound $((WAITING_ALLOWED + per_cycle))"
    [ "$per_cycle" -le "$total" ] || bad "$c: one cycle submitted $per_cycle jobs of main for $total cores"
    [ "$maxw" -le $((WAITING_ALLOWED + per_cycle)) ] \
        || bad "$c: $maxw jobs of main waiting at once, above $WAITING_ALLOWED allowed + $per_cycle of one cycle"
done
# nikita acts on the last poll: a copy seen waiting may have started by
# the time it is cancelled (a figure for the report, not a check)
say "nikita: $(sql "$proj" "SELECT count(*) || ' copies of main cancelled as excess waiting, ' ||
    coalesce(sum(started_at > 0), 0) || ' of them already started' FROM grid_copies
    WHERE campaign_id=$MAIN AND cancel_reason=$GK_EXCESS_WAITING")"

# ---- 4. a failing exec_file ----

say "step 4: exec_file failing on beta"
ev=$(sql "$proj" "SELECT id || ' ' || kind || ' ' || exit_code || ' ' || open FROM grid_events
    WHERE campaign_id=$FAIL AND cluster_id=${CL[beta]}")
[ "${ev#* }" = "0 127 1" ] || bad "fail: event on beta is '$ev', expected one open exit_error (kind 0) with exit code 127"
[ "$(sql "$proj" "SELECT blacklist_event FROM grid_pairs WHERE campaign_id=$FAIL AND cluster_id=${CL[beta]}")" \
    = "${ev%% *}" ] || bad "fail: beta not blacklisted by event ${ev%% *}"
[ "$(sql "$proj" "SELECT count(*) FROM grid_jobs j JOIN grid_copies c ON c.id=j.success_copy
     WHERE j.campaign_id=$FAIL AND j.state=$GJ_TERMINATED AND c.cluster_id=${CL[gamma]}")" = 10 ] \
    || bad "fail: not all 10 jobs completed on gamma"
"$LOCUS" campaign events "$proj" "$FAIL" | grep -q "exit_error" || bad "fail: 'locus campaign events' does not show the exit_error event"

# ---- 5. preempted jobs resubmitted ----

say "step 5: preemption"
pre=$(sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$MAIN AND end_reason=$GE_PREEMPTED")
pre_done=$(sql "$proj" "SELECT count(DISTINCT c.job_id) FROM grid_copies c JOIN grid_jobs j ON j.id=c.job_id
    WHERE c.campaign_id=$MAIN AND c.end_reason=$GE_PREEMPTED AND j.state=$GJ_TERMINATED")
pre_jobs=$(sql "$proj" "SELECT count(DISTINCT job_id) FROM grid_copies WHERE campaign_id=$MAIN AND end_reason=$GE_PREEMPTED")
say "main: $pre copies preempted ($pre_jobs jobs, $pre_done of them completed later)"
[ "$pre" -gt 0 ] || bad "main: no copy ended preempted"
[ "$pre_done" = "$pre_jobs" ] || bad "main: preempted jobs not all completed"
[ "$(sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$MAIN AND kind=$GSK_RESUBMIT")" -gt 0 ] \
    || bad "main: no resubmission recorded"

# ---- 6. the sink ----

say "step 6: sink on alpha"
ev=$(sql "$proj" "SELECT id || ' ' || kind FROM grid_events WHERE campaign_id=$SINK AND cluster_id=${CL[alpha]}")
[ "${ev#* }" = "$GEV_SINK" ] || bad "sink: event on alpha is '$ev', expected a sink event (kind $GEV_SINK)"
[ "$(sql "$proj" "SELECT blacklist_event FROM grid_pairs WHERE campaign_id=$SINK AND cluster_id=${CL[alpha]}")" \
    = "${ev%% *}" ] || bad "sink: alpha not blacklisted by event ${ev%% *}"
[ "$(sql "$proj" "SELECT count(*) FROM grid_jobs j JOIN grid_copies c ON c.id=j.success_copy
     WHERE j.campaign_id=$SINK AND j.state=$GJ_TERMINATED AND c.cluster_id=${CL[beta]}")" = 20 ] \
    || bad "sink: not all 20 jobs completed on beta: $(sql "$proj" "SELECT j.param, c.cluster_id FROM grid_jobs j
       LEFT JOIN grid_copies c ON c.id=j.success_copy WHERE j.campaign_id=$SINK" | tr '\n' ' ')"
say "sink: $(sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$SINK AND cluster_id=${CL[alpha]}") jobs sank on alpha"

# ---- 7. checkpoint and resume ----

say "step 7: checkpointing"
ck=$(sql "$proj" "SELECT group_concat(kind || ':' || resume || ':' || end_reason, ' ') FROM
    (SELECT * FROM grid_copies WHERE campaign_id=$CKPT ORDER BY id)")
say "ckpt copies (kind:resume:end): $ck; log: $(tr '\n' ';' <"$WORK/ckpt.log" 2>/dev/null)"
[[ "$ck" =~ ^0:0:3\ (.*\ )?2:1:1$ ]] || bad "ckpt: copies $ck, expected a walltime kill then a checkpoint resume that succeeded"
grep -Eq '^checkpointed ck at step [1-9]' "$WORK/ckpt.log" 2>/dev/null || bad "ckpt: the checkpointing signal did not reach the job"
grep -Eq '^resumed ck from step [1-9][0-9]* ' "$WORK/ckpt.log" 2>/dev/null || bad "ckpt: the job did not resume from its checkpoint"

# ---- finalize, measured ----

rep=$(sql "$proj" "SELECT count(*), coalesce(sum(end_reason=$GE_SUCCESS), 0) FROM grid_copies WHERE campaign_id=$MAIN AND replica=1")
say "finalize: main's replicas (made, succeeded): ${rep//|/, }"

check_sanitizers
checks_passed
