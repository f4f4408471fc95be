#!/usr/bin/env bash
# grid_multinode: multi-node jobs (resources /nodes=2/core=2) on a real
# Slurm cluster of two nodes, run by locusd's grid daemon, and jobs a
# scheduler forgot (docs/clusters.md). Cluster duo: 2 slurmd (duon1,
# duon2) of 4 cpus, accepting JWTs, with a slurmrestd; cluster brief: 1
# node, finished jobs forgotten after 2 s (MinJobAge), with a slurmrestd.
#  1. through the slurm driver (cluster "duo") and the slurmrest driver
#     (cluster "duorest", the same slurmctld): a job of /nodes=2/core=2
#     sees a node file of 4 lines naming both nodes twice, its CiGri
#     aliases, SLURM_JOB_NUM_NODES 2, SLURM_NTASKS 4, 2 tasks per node, and
#     an `srun` step of its own runs on both nodes;
#  2. a campaign asking for 3 nodes of the 2 (through either driver), and
#     one asking for 2 nodes of 8 cores (16 of the 8 cores), are refused,
#     not left waiting for ever: a submit_refused event naming the cluster
#     and why, the cluster blacklisted for that campaign, no job of it
#     pending on the cluster (Slurm would keep one pending for good);
#  3. a job that ends while locusd is stopped, and that slurmctld forgets
#     (MinJobAge 2 s) before locusd is back, is not left running: its copy
#     ends `unknown` (the scheduler no longer says how it ended) and the
#     job runs again, counted as an attempt (docs/clusters.md, "Jobs a
#     scheduler forgot").
# Everything started here is stopped by PID at the end (munged, the
# machine's, is left running), and $TMP removed.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' users and slurmrestd (nobody) walk through it
. "$(dirname "$0")/lib/slurm.sh"     # teardowns chain before boinc.sh's
. "$(dirname "$0")/lib/clusters.sh"
. "$(dirname "$0")/lib/slurmrest.sh"   # its teardown before lib/slurm.sh's
[ "$(id -u)" = 0 ] || fail "needs root (Slurm daemons, jobs of a test user)"

make_test_users
slurm_install
# the schedulers answer as soon as they can (see grid_campaigns.sh)
SLURMREST_EXTRA_CONF="SchedulerParameters=batch_sched_delay=0"
slurmrest_install || fail "slurmrestd cannot be installed"
slurm_cluster_up duo "$(free_ports 2)" 2 4 || fail "Slurm cluster duo did not come up"
SLURM_MIN_JOB_AGE=2 slurm_cluster_up brief "$(free_ports 1)" 1 4 || fail "Slurm cluster brief did not come up"
slurmrest_up duo || fail "no slurmrestd for duo"
slurmrest_up brief || fail "no slurmrestd for brief"
(umask 077; slurmrest_token duo root >"$TMP/root.jwt")   # one key: good for both clusters
[ -s "$TMP/root.jwt" ] || fail "scontrol token gave no token"
say "clusters up: duo (2 x 4 cpus, slurmrestd ${REST_URL[duo]}), brief (MinJobAge 2 s, ${REST_URL[brief]})"

proj=$TMP/proj
make_project "$proj" locusa
map_accounts "$proj" locusa
set_config "$proj" grid_cycle_period 1
"$LOCUS" cluster add "$proj" duo --driver slurm --conf "${SLURM_CONF_OF[duo]}" --partition normal >/dev/null \
    || fail "locus cluster add duo failed"
for c in duo brief; do
    "$LOCUS" cluster add "$proj" "${c}rest" --driver slurmrest --api "${REST_URL[$c]}" --api-user root \
        --token-file "$TMP/root.jwt" --partition normal >/dev/null || fail "locus cluster add ${c}rest failed"
done

WORK=$TMP/work BIN=$TMP/bin
mkdir -p "$WORK" "$BIN"
chmod 777 "$WORK"
# probe.sh NAME: what a parallel job sees, in NAME.seen; the step's nodes
# are slurmd's names for themselves (every slurmd here runs on one host).
cat >"$BIN/probe.sh" <<'SH'
#!/bin/bash
{
    echo "nodefile=$(sort "$LOCUS_NODEFILE" | paste -sd,)"
    echo "cigri=$([ "$CIGRI_NODE_FILE" = "$LOCUS_NODEFILE" ] && [ "$CIGRI_NODEFILE" = "$LOCUS_NODEFILE" ] && echo same)"
    echo "resources=$LOCUS_RESOURCES"
    echo "num_nodes=$SLURM_JOB_NUM_NODES"
    echo "ntasks=$SLURM_NTASKS"
    echo "tasks_per_node=$SLURM_TASKS_PER_NODE"
    echo "step=$(srun bash -c 'echo "$SLURMD_NODENAME"' 2>"$LOCUS_WORKDIR/$1.srun.err" | sort | paste -sd,)"
} >"$LOCUS_WORKDIR/$1.seen"
sleep 3   # not near zero: a cluster whose jobs end at once is taken for a sink
SH
# forget.sh NAME: logs each run (the first ends while locusd is stopped)
cat >"$BIN/forget.sh" <<'SH'
#!/bin/bash
echo "run $LOCUS_ATTEMPT $SLURM_JOB_ID" >>"$LOCUS_WORKDIR/$1.runs"
sleep 3
SH
chmod 755 "$BIN/probe.sh" "$BIN/forget.sh"

# jdl NAME CLUSTER RESOURCES PROGRAM: a campaign of one param, NAME.
jdl() {
    cat >"$TMP/$1.json" <<JSON
{"name": "$1", "exec_directory": "$WORK", "exec_file": "$BIN/$4", "walltime": 300, "params": ["$1"],
 "clusters": {"$2": {"resources": "$3"}}}
JSON
}
submit() {   # submit NAME: the campaign's id
    "$LOCUS" campaign submit "$proj" "$TMP/$1.json" --user locusa 2>"$TMP/err" \
        || fail "locus campaign submit $1 failed: $(cat "$TMP/err")"
}
state_of() { sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$1"; }
terminated() { [ "$(state_of "$1")" = "$GCS_TERMINATED" ]; }
copies_of() {
    sql "$proj" "SELECT group_concat(state || '/' || end_reason || '/' || cluster_job_id, ' ')
        FROM grid_copies WHERE campaign_id=$1"
}

export LOCUSD_DEBUG=grid
start_locusd "$proj"

# ---- 1. a job on two nodes, through both drivers ----

jdl two_slurm duo /nodes=2/core=2 probe.sh
jdl two_rest duorest /nodes=2/core=2 probe.sh
jdl three duo /nodes=3/core=2 probe.sh
jdl three_rest duorest /nodes=3/core=2 probe.sh
jdl wide duo /nodes=2/core=8 probe.sh
TS=$(submit two_slurm)
TR=$(submit two_rest)
T3=$(submit three)
T3R=$(submit three_rest)
TW=$(submit wide)
say "campaigns: two_slurm $TS, two_rest $TR, three $T3, three_rest $T3R, wide $TW"
for c in "$TS" "$TR"; do
    wait_for 120 terminated "$c" || bad "campaign $c not terminated: state $(state_of "$c"), copies $(copies_of "$c")"
done
for name in two_slurm two_rest; do
    seen=$WORK/$name.seen
    [ -f "$seen" ] || { bad "$name: the job left no $seen"; continue; }
    want=("nodefile=duon1,duon1,duon2,duon2" "cigri=same" "resources=/nodes=2/core=2" "num_nodes=2" "ntasks=4"
          "tasks_per_node=2(x2)" "step=duon1,duon1,duon2,duon2")
    for w in "${want[@]}"; do
        grep -qxF "$w" "$seen" || bad "$name: the job saw no '$w': $(tr '\n' ' ' <"$seen") $(cat "$WORK/$name.srun.err")"
    done
done
say "step 1: a /nodes=2/core=2 job saw both nodes through slurm and slurmrest"

# ---- 2. more nodes or cores than the cluster has ----

refused_on() {   # refused_on CAMPAIGN CLUSTER: an open submit_refused event, the cluster blacklisted
    [ "$(sql "$proj" "SELECT count(*) FROM grid_events e JOIN clusters c ON c.id = e.cluster_id
        WHERE e.campaign_id=$1 AND e.kind=$GEV_SUBMIT_REFUSED AND e.open=1 AND c.name='$2'")" = 1 ]
}
three="3 nodes of 2 cpus asked for: the cluster has 2 nodes, 2 of them with 2 cpus or more (4 at most)"
for x in "$T3:duo:to duo was refused: cluster duo (slurm): $three" \
         "$T3R:duorest:to duorest was refused: cluster duorest (slurmrest): $three" \
         "$TW:duo:can run on duo: each needs 16 cores (its resources), the cluster has 8 in all"; do
    c=${x%%:*} cl=${x#*:} why=${x#*:*:}
    cl=${cl%%:*}
    wait_for 60 refused_on "$c" "$cl" || { bad "campaign $c (too big for $cl): no submit_refused event; copies
        $(copies_of "$c"), events $(sql "$proj" "SELECT kind, message FROM grid_events WHERE campaign_id=$c")"; continue; }
    msg=$(sql "$proj" "SELECT message FROM grid_events WHERE campaign_id=$c AND kind=$GEV_SUBMIT_REFUSED")
    echo "$msg" | grep -qF "$why" || bad "campaign $c: the event does not say '$why': $msg"
    n=$(sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$c AND state<>$GC_ENDED")
    [ "$n" = 0 ] || bad "campaign $c: $n copies of a job too big for $cl left there: $(copies_of "$c")"
    "$LOCUS" campaign stat "$proj" "$c" >"$TMP/stat.$c" 2>&1 || bad "locus campaign stat $c failed"
    grep -q "submit_refused" "$TMP/stat.$c" || bad "campaign stat $c does not show the event: $(cat "$TMP/stat.$c")"
    say "campaign $c: $msg"
done
pending=$(SLURM_CONF=${SLURM_CONF_OF[duo]} squeue -h -t pending -o %i)
[ -z "$pending" ] || bad "jobs left pending on duo: $pending"
say "step 2: more nodes or cores than duo has refused, through both drivers"

# ---- 3. a job slurmctld forgot while locusd was stopped ----

jdl forget briefrest /core=1 forget.sh
F=$(submit forget)
running() { [ "$(sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$F AND state=$GC_RUNNING")" = 1 ]; }
wait_for 60 running || fail "campaign $F: its job never ran: $(copies_of "$F")"
stop_locusd
RID=$(sql "$proj" "SELECT cluster_job_id FROM grid_copies WHERE campaign_id=$F")
known() {
    curl -sf --max-time 5 -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $(cat "$TMP/root.jwt")" \
        "${REST_URL[brief]}/slurm/v0.0.38/jobs" | grep -q "\"job_id\": $RID,"
}
forgotten() { ! known; }
# slurmctld purges jobs past MinJobAge about once a minute
wait_for 150 forgotten || fail "slurmctld of brief still lists job $RID after 150 s"
say "job $RID ended and was forgotten while locusd was stopped"
start_locusd "$proj"
wait_for 60 terminated "$F" || bad "campaign $F not terminated after the restart: $(copies_of "$F")"
first=$(sql "$proj" "SELECT end_reason FROM grid_copies WHERE campaign_id=$F AND cluster_job_id='$RID'")
[ "$first" = "$GE_UNKNOWN" ] || bad "the forgotten copy ended $first, not unknown ($GE_UNKNOWN)"
n=$(sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$F AND end_reason=$GE_SUCCESS")
[ "$n" = 1 ] || bad "the forgotten job did not run again to a success: $(copies_of "$F")"
a=$(sql "$proj" "SELECT attempts FROM grid_jobs WHERE campaign_id=$F")
[ "$a" = 1 ] || bad "the forgotten copy counted $a attempts, not 1"
[ "$(wc -l <"$WORK/forget.runs")" = 2 ] || bad "forget ran $(wc -l <"$WORK/forget.runs") times, not twice"
say "step 3: the forgotten job ran again, $(copies_of "$F")"

stop_locusd
checks_passed
