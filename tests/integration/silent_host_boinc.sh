#!/usr/bin/env bash
# silent_host_boinc: a host that stops contacting the server mid-batch with
# work queued, with real BOINC clients. Client S (2 CPUs) attaches first
# and takes tasks of a batch of 16 jobs of about 3 s (quorum 1, a deadline
# of an hour); once it holds at least 3 it is killed, as a machine
# unplugged, and clients A and B attach. With
# <host_lost_after>20</host_lost_after>:
#  - the batch ends well before the deadline: within 5 minutes of S's last
#    request, not an hour;
#  - each instance S held and never reported was given up (no reply) within
#    a minute of its silence passing 20 s, not at its deadline, and its job
#    done by A or B;
#  - giving S up cost it quota (a silence past host_lost_after does).
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

NJOBS=16
BATCH=quiet
LOST_AFTER=20
proj=$TMP/proj

make_project "$proj" alice bob sam
set_config "$proj" host_lost_after "$LOST_AFTER"
set_config "$proj" daily_result_quota 100
# ~3 s per job, mostly asleep
echo '{"cmdline": "--iterations 200000 --sleep-ms 30 --seed {n}", "inputs": ["in.dat=in"], "flops": 3e9}' \
    >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count "$NJOBS" --input-template "$TMP/tmpl.json" --name "$BATCH" \
    --quorum 1 --delay-bound 3600 >/dev/null || fail "locus batch create failed"
start_locusd "$proj"

start_client S "$(key_of sam)" 2
for _ in $(seq 150); do [ "$(client_ntasks S)" -ge 3 ] && break; sleep 0.2; done
[ "$(client_ntasks S)" -ge 3 ] || fail "client S holds $(client_ntasks S) task(s) after 30 s, not 3"
hS=$(client_hostid S)
[ -n "$hS" ] || fail "client S has no host id"
stop_client S
_CLIENTS=()   # S is gone for good: wait_batch_done must not wait on it
held=$(sql "$proj" "SELECT count(*) FROM instances WHERE host_id=$hS AND state=$INST_IN_PROGRESS")
say "client S (host $hS) killed holding $held task(s) the server counts in progress"
[ "$held" -ge 1 ] || fail "S held nothing in progress when it was killed"

start_client A "$(key_of alice)" 2
start_client B "$(key_of bob)" 2
wait_batch_done "$proj" "$BATCH" 300
stop_client A
stop_client B
stop_locusd

last=$(sql "$proj" "SELECT rpc_time FROM hosts WHERE id=$hS")
bid=$(sql "$proj" "SELECT id FROM batches WHERE name='$BATCH'")
done_at=$(sql "$proj" "SELECT done_time FROM batches WHERE id=$bid")
[ $((done_at - last)) -le 300 ] || fail "the batch ended $((done_at - last)) s after S's last request"
say "the batch ended $((done_at - last)) s after S's last request (the deadline was an hour)"

# S's unreported instances: given up soon after its silence passed LOST_AFTER
bad=$(sql "$proj" "SELECT id||': state '||state||' outcome '||outcome||' at +'||(received_time-$last) FROM instances
                   WHERE host_id=$hS AND outcome<>$OUTCOME_SUCCESS
                     AND (state<>$INST_OVER OR outcome<>$OUTCOME_NO_REPLY
                          OR received_time-$last<$LOST_AFTER OR received_time-$last>$LOST_AFTER+60)")
[ -z "$bad" ] || fail "S's instances not given up soon after its silence: $bad"
ngiven=$(sql "$proj" "SELECT count(*) FROM instances WHERE host_id=$hS AND outcome=$OUTCOME_NO_REPLY")
[ "$ngiven" -ge 1 ] || fail "no instance of S was given up"
# their jobs done by A or B
bad=$(sql "$proj" "SELECT j.name FROM jobs j JOIN instances s ON s.job_id=j.id AND s.host_id=$hS
                     AND s.outcome=$OUTCOME_NO_REPLY
                   LEFT JOIN instances c ON c.id=j.canonical_id
                   WHERE j.state<>$JOB_DONE OR c.host_id IS NULL OR c.host_id=$hS")
[ -z "$bad" ] || fail "jobs S was given up on not done by another host: $bad"
say "$ngiven instance(s) of S given up about $LOST_AFTER s into its silence, their jobs done by A and B"

n=$(sql "$proj" "SELECT count(*) FROM jobs WHERE batch_id=$bid AND state=$JOB_DONE")
[ "$n" -eq "$NJOBS" ] || fail "$n of $NJOBS jobs done"
nerr=$(sql "$proj" "SELECT coalesce(sum(nerror), 0) FROM host_app_versions WHERE host_id=$hS")
[ "$nerr" -ge "$ngiven" ] || fail "S's record counts $nerr errors for $ngiven instances given up"
say "all $NJOBS jobs done; S's record counts its silence ($nerr error(s))"
say "PASS"
