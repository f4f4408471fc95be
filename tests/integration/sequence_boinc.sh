#!/usr/bin/env bash
# sequence_boinc: a work sequence of 10 results computed by real BOINC
# clients, relocated when its host disappears. Each result is a step of the
# example worker that reads the state the previous step left on the host
# (logical "state_in") and writes the next ("state"); every 3rd step and
# the last upload their state (restartable), every 2nd its output, the
# others are heartbeats. It proves that:
#  - the sequence is assigned to one client (C1), which keeps up to two of
#    its results at once and chains them through its own state files;
#  - once C1 is killed after step 4 is validated (or 5 to 8, when C1 is
#    quicker than the poll), the result it held misses its deadline (45 s),
#    and the sequence is relocated: branch 1 starts after the last
#    validated restartable step (3, or 6), from its state, on the other
#    client;
#  - C2 downloads that state (the only state file it downloads), computes
#    the steps after it up to 10, and the sequence ends with every step
#    validated;
#  - the final state uploaded by step 10 is byte for byte what 10 steps
#    run one after the other on one machine produce: nothing was lost or
#    computed from a wrong state;
#  - exactly the restartable steps uploaded a state file, the heartbeats no
#    output, and the states superseded by a later restart point are deleted
#    (the final state stays); `locus db check` is happy and locusd stops
#    cleanly.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice bob
set_config "$proj" next_rpc_delay 2
CMD="--iterations 200000 --sleep-ms 20 --seed 7 --in state_in --state state"
out=$("$LOCUS" sequence create "$proj" --app worker --name climate --length 10 --restart-every 3 --output-every 2 \
      --max-result-time 20 --delay-bound 45 --flops 1e9 --state-max-bytes 100000 --cmdline "$CMD") \
    || fail "locus sequence create failed"
case $out in *"1 sequence of 10 positions"*) ;; *) fail "sequence create said: $out" ;; esac
[ "$(sql "$proj" "SELECT count(*) FROM jobs WHERE sequence_id IS NOT NULL AND branch=0")" -eq 10 ] \
    || fail "the sequence does not have its 10 jobs"

seqcol() { sql "$proj" "SELECT $1 FROM sequences WHERE name='climate'"; }

start_locusd "$proj"
start_client C1 "$(key_of alice)" 1
wait_first_rpc C1
h1=$(client_hostid C1)
say "C1 attached as host $h1"

# C1 computes until step 4 is validated (the restart point is then step 3)
for i in $(seq 180); do
    [ "$(seqcol first_unvalidated_pos)" -ge 5 ] && break
    [ $((i % 5)) -ne 0 ] || client_update C1
    sleep 1
done
[ "$(seqcol first_unvalidated_pos)" -ge 5 ] || fail "C1 did not get 4 steps validated in 180 s: $(seqcol '*')"
[ "$(seqcol host_id)" = "$h1" ] || fail "the sequence is not assigned to C1 (host $h1): $(seqcol '*')"
out_max=$(sql "$proj" "SELECT count(*) FROM instances WHERE state=$INST_IN_PROGRESS")
[ "$out_max" -le 2 ] || fail "$out_max results of the sequence out at once on C1 (high-water mark 2)"
stop_client C1
# C1 may have had step 5 (or 6) validated between the poll and the kill:
# what follows is checked against what it had when it stopped
done_c1=$(seqcol "first_unvalidated_pos - 1")
rp=$(seqcol restart_pos)
say "C1 killed with steps 1..$done_c1 validated, restart point $rp"
[ "$rp" -eq $((done_c1 / 3 * 3)) ] && [ "$rp" -lt 9 ] ||
    fail "restart point $rp after steps 1..$done_c1 validated (every 3rd step is restartable)"

start_client C2 "$(key_of bob)" 1
wait_first_rpc C2
h2=$(client_hostid C2)
# the deadline (45 s) passes, the sequence moves, C2 finishes it
for i in $(seq 240); do
    [ "$(seqcol state)" = "$SEQ_ENDED" ] && break
    [ $((i % 5)) -ne 0 ] || client_update C2
    sleep 1
done
[ "$(seqcol state)" = "$SEQ_ENDED" ] || fail "the sequence did not end within 240 s of starting C2: $(seqcol '*')"
wait_clients_idle 60
say "sequence ended: $(seqcol "'branch '||branch||', relocations '||relocations||', restart '||restart_pos")"

[ "$(seqcol relocations)" -eq 1 ] && [ "$(seqcol branch)" -eq 1 ] \
    || fail "expected one relocation to branch 1: $(seqcol '*')"
[ "$(seqcol first_unvalidated_pos)" -eq 11 ] || fail "not every step validated: $(seqcol '*')"
# branch 1 starts after the last restartable step C1 had validated
first1=$(sql "$proj" "SELECT min(job_num) FROM jobs WHERE sequence_id IS NOT NULL AND branch=1")
[ "$first1" -eq $((rp + 1)) ] || fail "branch 1 starts at step $first1, expected $((rp + 1)) (after restartable step $rp)"
hosts0=$(sql "$proj" "SELECT DISTINCT i.host_id FROM instances i JOIN jobs j ON j.id=i.job_id WHERE j.branch=0")
hosts1=$(sql "$proj" "SELECT DISTINCT i.host_id FROM instances i JOIN jobs j ON j.id=i.job_id WHERE j.branch=1")
[ "$hosts0" = "$h1" ] && [ "$hosts1" = "$h2" ] || fail "branch 0 ran on '$hosts0', branch 1 on '$hosts1' (C1 $h1, C2 $h2)"
valid1=$(sql "$proj" "SELECT group_concat(job_num) FROM (SELECT job_num FROM jobs WHERE branch=1 AND state=$JOB_DONE
                      AND sequence_id IS NOT NULL ORDER BY job_num)")
[ "$valid1" = "$(seq -s, $((rp + 1)) 10)" ] || fail "branch 1 completed steps $valid1"
dead=$(sql "$proj" "SELECT count(*) FROM jobs WHERE branch=0 AND job_num>$done_c1 AND state=$JOB_CANCELLED")
[ "$dead" -eq $((10 - done_c1)) ] || fail "$dead of the $((10 - done_c1)) unfinished steps of the dead branch are cancelled"

# the restart state: the one state file C2 downloaded, published from C1's upload
restart=$(sql "$proj" "SELECT f.name FROM files f JOIN jobs j ON j.inputs LIKE f.id||':state_in%'
                       WHERE j.branch=1 AND j.job_num=4")
[ -n "$restart" ] || fail "step 4 of branch 1 does not read a restart state"
gets=$(grep -c "GET download/$restart" "$LOCUSD_LOG" || true)
[ "$gets" -ge 1 ] || fail "C2 never downloaded the restart state $restart"
other=$(grep 'GET download/' "$LOCUSD_LOG" | grep -v "$restart" | grep -vc 'worker' || true)
[ "$other" -eq 0 ] || fail "$other other downloads: state should pass between steps on the host"

# uploads (as locusd logged them): the state of restartable steps only;
# outputs of every 2nd step and the last
ups=$(grep -o 'upload [^ ]*_1 complete' "$LOCUSD_LOG" | sed 's|.*_\([0-9]*\)_[0-9]*_1 complete$|\1|' | sort -u |
      tr '\n' ',')
ups_pos=$(sql "$proj" "SELECT group_concat(branch||':'||job_num) FROM (SELECT branch, job_num FROM jobs
                       WHERE id IN (${ups%,}) ORDER BY branch, job_num)")
case $ups_pos in "0:3,1:6,1:9,1:10" | "0:3,0:6,1:6,1:9,1:10" | "0:3,0:6,1:9,1:10" | "0:3,0:6,0:9,1:9,1:10") ;;
    *) fail "state files uploaded by (branch:step) $ups_pos; expected the restartable steps 3, 6, 9 and 10 only" ;; esac
nout=$(find "$proj/upload" -type f -name '*_0' | wc -l)
[ "$nout" -eq 0 ] || fail "$nout outputs left in the upload folder after assimilation" 
final=$(upload_path "$proj" "$(seqcol restart_file)")
[ -n "$final" ] || fail "the final state $(seqcol restart_file) is not in the upload folder"
# the states the next restart point superseded are deleted once their jobs ended
for i in $(seq 20); do
    [ "$(find "$proj/upload" -type f -name '*_1' | wc -l)" -eq 1 ] && break
    sleep 0.5
done
states=$(find "$proj/upload" -type f -name '*_1')
[ "$states" = "$final" ] || fail "state files left in the upload folder: $states (only the final $final should be)"

# the same 10 steps one after the other, here
work=$TMP/local
mkdir -p "$work"
for k in $(seq 10); do
    (cd "$work" && "$LOCUS_BUILD_DIR/examples/worker" $CMD >/dev/null 2>&1) || fail "local step $k failed"
    mv "$work/state" "$work/state_in"
done
cmp -s "$work/state_in" "$final" || fail "the final state differs from 10 steps run in a row: $(cat "$final")"
say "final state equals 10 steps in a row: $(grep accumulator "$final")"

stop_locusd
"$LOCUS" db check "$proj" >/dev/null || fail "locus db check failed"
say "ok"
