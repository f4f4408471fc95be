#!/usr/bin/env bash
# grid_deps: dependencies between a campaign's jobs and between campaigns
# (docs/campaigns.md "Dependencies") end to end, driven by locusd's grid
# daemon on a real Slurm cluster (alpha: 1 node of 4 cores) and a real OAR
# cluster (gamma):
#  1. on each cluster, a campaign of a small DAG (a; b after a; c after b;
#     d after c; e after b and c; f after a; x alone) whose middle job c
#     always fails: once c is given up, d and e are dependency_failed and
#     never reach the scheduler, the others all ran, each after its needs
#     ended; `locus campaign stat` shows them so; the DAG's campaign
#     terminates;
#  2. a campaign `after` both DAGs (one by name, one by id) waits, then runs
#     once they terminated: none of its jobs starts before their last one
#     ended;
#  3. a JDL with a cycle, or after another user's campaign, is refused with
#     nothing created.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' users walk through it
. "$(dirname "$0")/lib/slurm.sh"     # teardowns chain before boinc.sh's
. "$(dirname "$0")/lib/oar.sh"
. "$(dirname "$0")/lib/clusters.sh"
[ "$(id -u)" = 0 ] || fail "needs root (Slurm, OAR, jobs of two users)"

# the schedulers answer as soon as they can (see grid_campaigns.sh)
SLURM_EXTRA_CONF="SchedulerParameters=batch_sched_delay=0"
OAR_EXTRA_CONF="SCHEDULER_MIN_TIME_BETWEEN_2_CALLS=0"
OAR_API_FASTCGI=1

make_test_users
slurm_cluster_up alpha "$(free_ports 1)" 1 4 || fail "Slurm cluster alpha did not come up"
oar_up 4 "$(free_ports 0)" || fail "OAR did not come up"
say "clusters up: alpha (slurm), gamma (OAR, $OAR_API)"

proj=$TMP/proj
make_project "$proj" locusa locusb
map_accounts "$proj" locusa locusb
set_config "$proj" grid_cycle_period 1
# CiGri's tap, the default when the waits below were measured
set_config "$proj" grid_predictor tap
set_config "$proj" grid_max_attempts 1   # c is given up at its second failure
"$LOCUS" cluster add "$proj" alpha --driver slurm --conf "${SLURM_CONF_OF[alpha]}" --partition normal >/dev/null \
    || fail "locus cluster add alpha failed"
"$LOCUS" cluster add "$proj" gamma --driver oar --api "$OAR_API" >/dev/null || fail "locus cluster add gamma failed"

WORK=$TMP/work BIN=$TMP/bin
mkdir -p "$WORK" "$BIN"
chmod 777 "$WORK"
# job.sh NAME: logs "start|end CAMPAIGN NAME TIME" to the shared log;
# c exits 66 (a retry code: it is tried grid_max_attempts + 1 = 2 times, then given
# up), the others succeed after 3 s (not near zero: no sink).
cat >"$BIN/job.sh" <<'SH'
#!/bin/bash
log=$LOCUS_WORKDIR/jobs.log
echo "start $LOCUS_CAMPAIGN_ID $1 $(date +%s.%N)" >>"$log"
[ "$1" = c ] && { echo "fail $LOCUS_CAMPAIGN_ID $1 $(date +%s.%N)" >>"$log"; exit 66; }
sleep 3
echo "end $LOCUS_CAMPAIGN_ID $1 $(date +%s.%N)" >>"$log"
SH
chmod 755 "$BIN/job.sh"
LOG=$WORK/jobs.log

# jdl NAME BODY: a campaign file with the common settings.
jdl() {
    cat >"$TMP/$1.json" <<JSON
{"name": "$1", "exec_directory": "$WORK", "exec_file": "$BIN/job.sh", "walltime": 300, $2}
JSON
}
DAG='"params": ["a", "b", "c", "d", "e", "f", "x"],
  "depends": {"b": "a", "c": "b", "d": "c", "e": ["b", "c"], "f": "a"}'
jdl dag_slurm "$DAG, \"clusters\": {\"alpha\": {}}"
jdl dag_oar "$DAG, \"clusters\": {\"gamma\": {}}"
jdl cyclic '"params": ["a", "b"], "depends": {"a": "b", "b": "a"}, "clusters": {"alpha": {}}'

export LOCUSD_DEBUG=grid
start_locusd "$proj"

submit() {   # submit FILE USER: the campaign's id
    "$LOCUS" campaign submit "$proj" "$TMP/$1.json" --user "$2" 2>"$TMP/err" \
        || fail "locus campaign submit $1 failed: $(cat "$TMP/err")"
}
refused() {  # refused WANT FILE USER: refused with WANT, nothing created
    local n0
    n0=$(sql "$proj" "SELECT count(*) FROM grid_orders")
    if "$LOCUS" campaign submit "$proj" "$TMP/$2.json" --user "$3" >"$TMP/out" 2>"$TMP/err"; then
        bad "$2 was accepted (campaign $(cat "$TMP/out"))"
    else
        grep -qF -- "$1" "$TMP/err" || bad "$2: error without '$1': $(cat "$TMP/err")"
    fi
    [ "$(sql "$proj" "SELECT count(*) FROM grid_orders")" = "$n0" ] || bad "$2 wrote an order"
}

# ---- 3. bad input ----

say "step 3: a cycle and another user's campaign refused"
refused 'depends: a cycle, each needing the next' cyclic locusa

# ---- 1. the DAGs ----

DS=$(submit dag_slurm locusa)
DO=$(submit dag_oar locusa)
jdl next "\"params\": [\"n1\", \"n2\"], \"after\": [\"dag_slurm\", $DO], \"clusters\": {\"alpha\": {}, \"gamma\": {}}"
jdl others "\"params\": [\"o1\"], \"after\": [$DS], \"clusters\": {\"alpha\": {}}"
refused "after[0]: no campaign $DS of yours" others locusb
NEXT=$(submit next locusa)
say "campaigns: dag_slurm $DS, dag_oar $DO, next $NEXT (after both)"

state_of() { sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$1"; }
[ "$(state_of "$NEXT")" = "$GCS_WAITING" ] || bad "next: state $(state_of "$NEXT"), expected waiting ($GCS_WAITING)"
"$LOCUS" campaign stat "$proj" "$NEXT" >"$TMP/stat.next" 2>&1 || bad "locus campaign stat $NEXT failed"
grep -q ': waiting,' "$TMP/stat.next" || bad "stat of next does not say waiting: $(head -n 1 "$TMP/stat.next")"

# gamma's links are slow: after a job waited, CiGri's tap (set above)
# opens again for the next about a minute later; the DAG took
# 80 to 200 s there
terminated() { [ "$(state_of "$1")" = "$GCS_TERMINATED" ]; }
for c in "$DS" "$DO"; do
    wait_for 360 terminated "$c" || bad "campaign $c did not terminate: state $(state_of "$c"),
        jobs $(sql "$proj" "SELECT group_concat(param || ':' || state, ' ') FROM grid_jobs WHERE campaign_id=$c")"
done
say "DAGs terminated"

# job_state CAMPAIGN PARAM_INDEX
job_state() { sql "$proj" "SELECT state FROM grid_jobs WHERE campaign_id=$1 AND param=$2"; }
copies_of() { sql "$proj" "SELECT count(*) FROM grid_copies c JOIN grid_jobs j ON j.id=c.job_id
                           WHERE j.campaign_id=$1 AND j.param=$2"; }
# t KIND CAMPAIGN NAME: the time of the first such line of the log (the last with "last")
t() { awk -v k="$1" -v c="$2" -v n="$3" '$1 == k && $2 == c && $3 == n {print $4; exit}' "$LOG"; }
before() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a != "" && b != "" && a + 0 <= b + 0)}'; }
declare -A IDX=([a]=0 [b]=1 [c]=2 [d]=3 [e]=4 [f]=5 [x]=6)
for camp in "$DS" "$DO"; do
    for n in a b f x; do
        [ "$(job_state "$camp" "${IDX[$n]}")" = "$GJ_TERMINATED" ] || bad "campaign $camp: $n is $(job_state "$camp" "${IDX[$n]}"), expected terminated"
    done
    [ "$(job_state "$camp" 2)" = "$GJ_ERROR" ] || bad "campaign $camp: c is $(job_state "$camp" 2), expected error (given up)"
    for n in d e; do
        [ "$(job_state "$camp" "${IDX[$n]}")" = "$GJ_DEP_FAILED" ] \
            || bad "campaign $camp: $n is $(job_state "$camp" "${IDX[$n]}"), expected dependency_failed ($GJ_DEP_FAILED)"
        [ "$(copies_of "$camp" "${IDX[$n]}")" = 0 ] || bad "campaign $camp: $n was submitted"
        if grep -q "^start $camp $n " "$LOG"; then bad "campaign $camp: $n ran"; fi
    done
    # each job started after what it needs ended
    for pair in b:a f:a c:b; do
        before "$(t end "$camp" "${pair#*:}")" "$(t start "$camp" "${pair%%:*}")" \
            || bad "campaign $camp: ${pair%%:*} started before ${pair#*:} ended"
    done
    [ "$(grep -c "^fail $camp c " "$LOG")" -ge 2 ] || bad "campaign $camp: c ran $(grep -c "^fail $camp c " "$LOG") times"
    ev=$(sql "$proj" "SELECT kind FROM grid_events WHERE campaign_id=$camp")
    [ "$ev" = "$GEV_TOO_MANY_ATTEMPTS" ] || bad "campaign $camp: events '$ev', expected one too_many_attempts"
    "$LOCUS" campaign stat "$proj" "$camp" >"$TMP/stat.$camp" 2>&1 || bad "locus campaign stat $camp failed"
    grep -q ' 2 dependency_failed' "$TMP/stat.$camp" || bad "stat of $camp: $(grep jobs: "$TMP/stat.$camp")"
    grep -q ' 1 error,' "$TMP/stat.$camp" || bad "stat of $camp: $(grep jobs: "$TMP/stat.$camp")"
    say "campaign $camp: $(grep jobs: "$TMP/stat.$camp")"
done
"$LOCUS" campaign stat "$proj" "$DS" --jobs --state dependency_failed >"$TMP/stat.jobs" 2>&1 \
    || bad "locus campaign stat --jobs --state dependency_failed failed: $(cat "$TMP/stat.jobs")"
[ "$(awk '$2 == "dependency_failed" {print $NF}' "$TMP/stat.jobs" | sort | paste -sd,)" = d,e ] \
    || bad "stat --jobs --state dependency_failed: $(cat "$TMP/stat.jobs")"
"$LOCUS" campaign stat "$proj" "$DS" --json >"$TMP/stat.json" 2>&1 || bad "locus campaign stat --json failed"
grep -q '"dependency_failed":2' "$TMP/stat.json" || bad "stat --json lacks the dependency_failed jobs: $(cat "$TMP/stat.json")"

# ---- 2. the campaign after both ----

wait_for 120 terminated "$NEXT" || bad "next did not terminate: state $(state_of "$NEXT")"
last_dag=$(awk -v a="$DS" -v b="$DO" '($1 == "end" || $1 == "fail") && ($2 == a || $2 == b) && $4 > m {m = $4} END {print m}' "$LOG")
first_next=$(awk -v c="$NEXT" '$1 == "start" && $2 == c && (m == "" || $4 < m) {m = $4} END {print m}' "$LOG")
before "$last_dag" "$first_next" || bad "next started at $first_next, before the DAGs' last job ended ($last_dag)"
[ "$(sql "$proj" "SELECT count(*) FROM grid_jobs WHERE campaign_id=$NEXT AND state=$GJ_TERMINATED")" = 2 ] \
    || bad "next: not both jobs done"
say "next ran after the DAGs: their last job ended at $last_dag, its first started at $first_next"

check_sanitizers
checks_passed
