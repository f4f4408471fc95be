#!/usr/bin/env bash
# grid_runner: locusd's runner on one real Slurm cluster (1 node of 4
# cores): a temporally grouped campaign of 20 params of 2 s grouped by 6 s,
# with a prologue and an epilogue (docs/campaigns.md). Not 1 s: on a lone
# cluster a success under 2 s is "near zero", the sink effect.
#  1. the prologue runs first: it writes a file that every job checks
#     (a job that misses it exits 3, an exit_error event);
#  2. the params run in groups (one Slurm job for several params), each
#     with its own LOCUS_JOB_ID and LOCUS_JOB_NAME, each printing 300 KB
#     to its stdout, and each param's output file proves it ran exactly
#     once; the Slurm job's own stdout holds only the group's markers;
#  3. the epilogue runs after every job ended, and the campaign ends after it;
#  4. Slurm ran exactly the jobs locus recorded (one per group, prologue
#     and epilogue included), and nothing else of the campaign.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' user walks through it
. "$(dirname "$0")/lib/slurm.sh"     # its teardown chains before boinc.sh's
. "$(dirname "$0")/lib/clusters.sh"
[ "$(id -u)" = 0 ] || fail "needs root (Slurm daemons, jobs of another user)"

make_test_users
slurm_cluster_up alpha "$(free_ports 1)" 1 4 || fail "Slurm cluster alpha did not come up"
sq() { SLURM_CONF=${SLURM_CONF_OF[alpha]} timeout 5 "$@"; }

proj=$TMP/proj
make_project "$proj" locusa
map_accounts "$proj" locusa
TOKEN=$(job_token "$proj")
set_config "$proj" grid_cycle_period 1
# CiGri's tap waits 60 s after a job was seen waiting: too long for this test
set_config "$proj" grid_predictor adapt_down_exp_up
"$LOCUS" cluster add "$proj" alpha --driver slurm --conf "${SLURM_CONF_OF[alpha]}" --partition normal \
    --besteffort-partition besteffort >/dev/null || fail "locus cluster add alpha failed"

WORK=$TMP/work BIN=$TMP/bin
mkdir -p "$WORK/out" "$BIN"
chmod 777 "$WORK" "$WORK/out"
# job.sh PARAM: fails without the prologue's file; runs 2 s; prints 300 KB;
# appends "PARAM JOB_NAME JOB_ID END_TIME" to out/PARAM.
cat >"$BIN/job.sh" <<'SH'
#!/bin/bash
[ -e "$LOCUS_WORKDIR/prologue.done" ] || { echo "no prologue before $1" >&2; exit 3; }
sleep 2
head -c 300000 /dev/zero | tr '\0' x
echo
echo "$1 $LOCUS_JOB_NAME $LOCUS_JOB_ID $(date +%s.%N)" >>"$LOCUS_WORKDIR/out/$1"
SH
chmod 755 "$BIN/job.sh"
params=$(seq -f '"p%02g"' 0 19 | paste -sd,)
cat >"$TMP/grp.json" <<JSON
{"name": "grp", "exec_directory": "$WORK", "exec_file": "$BIN/job.sh", "type": "normal", "walltime": 60,
 "temporal_grouping": true, "temporal_grouping_duration": 6, "params": [$params],
 "prologue": ["sleep 1", "date +%s.%N >prologue.done"],
 "epilogue": ["ls out | wc -l >epilogue.count", "date +%s.%N >epilogue.done"],
 "clusters": {"alpha": {}}}
JSON

export LOCUSD_DEBUG=grid
start_locusd "$proj"
C=$("$LOCUS" campaign submit "$proj" "$TMP/grp.json" --user locusa 2>"$TMP/err") \
    || fail "locus campaign submit failed: $(cat "$TMP/err")"
say "campaign $C submitted"

# Until it ends; when it is seen ended, its epilogue must have run.
state=
for _ in $(seq 120); do
    state=$(sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$C")
    [ "$state" = "$GCS_TERMINATED" ] && break
    sleep 0.5
done
[ "$state" = 3 ] || fail "campaign $C not terminated after 60 s: $(sql "$proj" \
    "SELECT state, ndone, njobs FROM grid_campaigns WHERE id=$C")"
[ -e "$WORK/epilogue.done" ] || fail "the campaign ended before its epilogue ran"
say "campaign $C terminated"
stop_locusd

# ---- 1. the prologue first ----
[ "$(sql "$proj" "SELECT count(*) FROM grid_events WHERE campaign_id=$C")" = 0 ] \
    || fail "events: $(sql "$proj" "SELECT kind, exit_code FROM grid_events" | tr '\n' ' ')"
pro=$(cat "$WORK/prologue.done")
first=$(cat "$WORK"/out/* | awk '{print $4}' | sort -n | head -1)
awk -v a="$pro" -v b="$first" 'BEGIN { exit !(a < b) }' || fail "a job ended ($first) before the prologue ($pro)"
say "prologue at $pro, before every job"

# ---- 2. each param once, in groups ----
for i in $(seq -f 'p%02g' 0 19); do
    [ -f "$WORK/out/$i" ] || fail "param $i never ran"
    [ "$(wc -l <"$WORK/out/$i")" = 1 ] || fail "param $i ran $(wc -l <"$WORK/out/$i") times"
    read -r p name id _ <"$WORK/out/$i"
    [ "$p" = "$i" ] && [ "$name" = "$i" ] || fail "param $i ran as LOCUS_JOB_NAME $name"
    [ "$(sql "$proj" "SELECT id FROM grid_jobs WHERE campaign_id=$C AND param=${i#p}")" = "$id" ] ||
        fail "param $i ran as LOCUS_JOB_ID $id"
done
groups=$(sql "$proj" "SELECT count(DISTINCT cluster_job_id) FROM grid_copies WHERE campaign_id=$C AND grouped=1")
grouped=$(sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$C AND grouped=1")
[ "$groups" -gt 0 ] && [ "$grouped" -gt "$groups" ] || fail "no grouped Slurm job ($grouped copies in $groups jobs)"
# a group's Slurm stdout: its markers alone; each param's output in its own file
gid=$(sql "$proj" "SELECT cluster_job_id FROM grid_copies WHERE campaign_id=$C AND grouped=1 AND end_reason=$GE_SUCCESS LIMIT 1")
[ -s "$WORK/locus.alpha.$gid.stdout" ] || fail "no stdout for the grouped Slurm job $gid"
grep -qv '^locus-group \(start\|end\) ' "$WORK/locus.alpha.$gid.stdout" && fail "not only markers in locus.alpha.$gid.stdout"
n=$(sql "$proj" "SELECT count(*) FROM grid_copies WHERE cluster_job_id='$gid'")
[ "$(grep -c '^locus-group end [0-9]* 0 ' "$WORK/locus.alpha.$gid.stdout")" = "$n" ] ||
    fail "locus.alpha.$gid.stdout does not end each of its $n params"
for j in $(sql "$proj" "SELECT job_id FROM grid_copies WHERE cluster_job_id='$gid'"); do
    [ "$(stat -c %s "$WORK/locus.alpha.job$j.stdout")" -ge 300000 ] || fail "no output of job $j in locus.alpha.job$j.stdout"
done
# the outcomes came from the markers, read back through the driver's tail
grep -q "params is given the job's end" "$LOCUSD_LOG" && fail "a group's markers could not be read"
[ "$(sql "$proj" "SELECT count(DISTINCT started_at) FROM grid_copies WHERE cluster_job_id='$gid'")" = "$n" ] ||
    fail "the params of job $gid do not have their own start times"
say "20 params ran once each; $grouped of their copies in $groups grouped Slurm jobs (job $gid: $n params)"

# ---- 3. the epilogue after every job ----
epi=$(cat "$WORK/epilogue.done")
last=$(cat "$WORK"/out/* | awk '{print $4}' | sort -n | tail -1)
awk -v a="$last" -v b="$epi" 'BEGIN { exit !(a < b) }' || fail "the epilogue ($epi) ran before the last job ($last)"
[ "$(cat "$WORK/epilogue.count")" = 20 ] || fail "the epilogue saw $(cat "$WORK/epilogue.count") outputs, not 20"
[ "$(sql "$proj" "SELECT kind, end_reason FROM grid_copies WHERE campaign_id=$C AND job_id=0 ORDER BY id" \
    | tr '\n' ' ')" = "5|1 6|1 " ] || fail "prologue and epilogue copies: $(sql "$proj" \
    "SELECT kind, end_reason FROM grid_copies WHERE campaign_id=$C AND job_id=0" | tr '\n' ' ')"
say "epilogue at $epi, after the last job at $last"

# ---- 4. Slurm ran what locus recorded ----
slurm_ids=$(sq squeue -h -t all -o '%i %j' | awk -v c="locus.$TOKEN.$C." 'index($2, c) == 1 {print $1}' | sort -u)
locus_ids=$(sql "$proj" "SELECT DISTINCT cluster_job_id FROM grid_copies WHERE campaign_id=$C AND cluster_job_id != ''" \
    | sort -u)
[ "$slurm_ids" = "$locus_ids" ] || fail "Slurm's jobs ($(echo $slurm_ids)) are not locus's ($(echo $locus_ids))"
say "Slurm ran $(echo "$slurm_ids" | wc -l) jobs, those locus recorded"

# ---- 5. no campaign runs as a system account, nor without the operator's mapping ----
"$LOCUS" user create "$proj" daemon >/dev/null || fail "locus user create daemon failed"
"$LOCUS" user create "$proj" nomap >/dev/null || fail "locus user create nomap failed"
"$LOCUS" user account "$proj" daemon root 2>/dev/null && fail "a user was mapped to root"
"$LOCUS" user account "$proj" daemon daemon || fail "locus user account daemon failed"   # uid 1: refused at submission
start_locusd "$proj"
cat >"$TMP/sys.json" <<JSON
{"name": "sys", "exec_directory": "/tmp", "exec_file": "/usr/bin/id", "type": "normal", "walltime": 60,
 "params": ["a", "b"], "clusters": {"alpha": {}}}
JSON
for who in daemon nomap; do
    S=$("$LOCUS" campaign submit "$proj" "$TMP/sys.json" --user "$who" 2>"$TMP/err") \
        || fail "locus campaign submit as $who failed: $(cat "$TMP/err")"
    for _ in $(seq 60); do
        "$LOCUS" campaign events "$proj" "$S" 2>/dev/null | grep -q submit_refused && break
        sleep 0.5
    done
    "$LOCUS" campaign events "$proj" "$S" | grep -q submit_refused || fail "campaign $S of $who: no submit_refused event"
    [ -z "$(sq squeue -h -t all -o '%j' | grep "^locus\.$TOKEN\.$S\(\.\|$\)")" ] || fail "a job of campaign $S of $who reached Slurm"
done
grep -q "account daemon (uid 1) is a system account" "$LOCUSD_LOG" || fail "the log does not say why daemon was refused"
grep -q "user nomap has no account on cluster alpha" "$LOCUSD_LOG" || fail "the log does not say why nomap was refused"
stop_locusd
check_sanitizers
say "campaigns as a system account or an unmapped user refused, none of their jobs on Slurm"
say "PASS"
