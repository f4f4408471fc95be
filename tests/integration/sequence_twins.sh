#!/usr/bin/env bash
# sequence_twins: a twin pair of work sequences (`locus sequence create
# --twins`) of 4 steps of the example worker, computed by two real BOINC
# clients of two users; every 2nd step uploads its state. It proves that:
#  - each client computes one twin (twins never share a user);
#  - a twin's restart point moves only where both twins' uploaded states
#    agree (steps 2 and 4), and both end at step 4 with no disagreement;
#  - locusd restarted after the first agreement goes on from it;
#  - only the first twin's steps are assimilated (results/), the second's
#    end as done; both final states equal 4 steps run in a row here;
#  - the API and `locus sequence list` name each one's twin;
#  - `locus db check` is happy and locusd stops cleanly.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice bob
set_config "$proj" next_rpc_delay 2
CMD="--iterations 100000 --sleep-ms 10 --seed 7 --in state_in --state state"
out=$("$LOCUS" sequence create "$proj" --app worker --name pair --length 4 --restart-every 2 --output-every 2 \
      --max-result-time 30 --delay-bound 120 --flops 1e9 --state-max-bytes 100000 --cmdline "$CMD" --twins) \
    || fail "locus sequence create --twins failed"
case $out in *"each with its twin"*) ;; *) fail "sequence create said: $out" ;; esac

seqcol() { sql "$proj" "SELECT $2 FROM sequences WHERE name='$1'"; }
[ "$(seqcol pair twin_id)" = "$(seqcol pair.twin id)" ] && [ "$(seqcol pair.twin twin_id)" = "$(seqcol pair id)" ] \
    || fail "pair and pair.twin are not each other's twin: $(sql "$proj" "SELECT * FROM sequences")"

start_locusd "$proj"
start_client C1 "$(key_of alice)" 1
start_client C2 "$(key_of bob)" 1
wait_first_rpc C1 C2

# wait_restart POS SECONDS: both twins' restart point reaches POS
wait_restart() {
    local i
    for i in $(seq "$2"); do
        [ "$(seqcol pair restart_pos)" -ge "$1" ] && [ "$(seqcol pair.twin restart_pos)" -ge "$1" ] && return 0
        [ $((i % 5)) -ne 0 ] || { client_update C1; client_update C2; }
        sleep 1
    done
    fail "the twins did not agree at step $1 within $2 s: $(sql "$proj" "SELECT * FROM sequences")"
}
wait_restart 2 180
say "the twins agree at step 2: $(sql "$proj" "SELECT name||' host '||host_id||' user '||branch_user_id FROM sequences" \
    | tr '\n' ' ')"
stop_locusd
start_locusd "$proj"
say "locusd restarted"

for i in $(seq 180); do
    [ "$(seqcol pair state)" = "$SEQ_ENDED" ] && [ "$(seqcol pair.twin state)" = "$SEQ_ENDED" ] && break
    [ $((i % 5)) -ne 0 ] || { client_update C1; client_update C2; }
    sleep 1
done
[ "$(seqcol pair state)" = "$SEQ_ENDED" ] && [ "$(seqcol pair.twin state)" = "$SEQ_ENDED" ] \
    || fail "the twins did not both end within 180 s: $(sql "$proj" "SELECT * FROM sequences")"
wait_clients_idle 60
say "both twins ended"

for n in pair pair.twin; do
    row=$(seqcol "$n" "restart_pos||' '||branch||' '||disagreements||' '||first_unvalidated_pos")
    [ "$row" = "4 0 0 5" ] || fail "$n: restart_pos branch disagreements first_unvalidated_pos = $row, want 4 0 0 5"
done
# one twin per client, and so per user
users=$(sql "$proj" "SELECT s.name||':'||i.user_id FROM instances i JOIN jobs j ON j.id=i.job_id
                     JOIN sequences s ON s.id=j.sequence_id GROUP BY s.name, i.user_id ORDER BY s.name")
[ "$(echo "$users" | wc -l)" -eq 2 ] && [ "$(echo "$users" | cut -d: -f2 | sort -u | wc -l)" -eq 2 ] \
    || fail "each twin on one user, not the same: $users"
# the first twin's steps assimilated, the second's done without
for n in pair pair.twin; do
    st=$(sql "$proj" "SELECT group_concat(state) FROM (SELECT j.state FROM jobs j JOIN sequences s
                      ON s.id=j.sequence_id WHERE s.name='$n' ORDER BY j.job_num)")
    [ "$st" = "$JOB_DONE,$JOB_DONE,$JOB_DONE,$JOB_DONE" ] || fail "$n: job states $st, want every step done ($JOB_DONE)"
done
[ -d "$proj/results/pair/pair_4" ] || fail "the first twin's step 4 is not in results/: $(ls -R "$proj/results" | head)"
assimilated=$(find "$proj/results" -mindepth 2 -maxdepth 2 -type d -name 'pair.twin_*' | wc -l)
[ "$assimilated" -eq 0 ] || fail "$assimilated steps of the second twin were assimilated"
grep -q "twin sequences .* agree at position 4" "$LOCUSD_LOG" || fail "locusd did not log the agreement at step 4"

work=$TMP/local
mkdir -p "$work"
for k in $(seq 4); do
    (cd "$work" && "$WORKER" $CMD >/dev/null 2>&1) || fail "local step $k failed"
    mv "$work/state" "$work/state_in"
done
for n in pair pair.twin; do
    final=$(upload_path "$proj" "$(seqcol "$n" restart_file)")
    [ -n "$final" ] || fail "$n: its final state $(seqcol "$n" restart_file) is not in the upload folder"
    cmp -s "$work/state_in" "$final" || fail "$n: the final state differs from 4 steps in a row"
done
say "both final states equal 4 steps in a row: $(grep accumulator "$work/state_in")"

# what the API and `locus sequence list` show of the pair
body=$(curl -s --max-time 10 "http://127.0.0.1:$PORT/api/v1/sequences/pair") || fail "GET sequences/pair failed"
case $body in *'"state":"ended"'*'"twin":"pair.twin"'*) ;; *) fail "GET sequences/pair: $body" ;; esac
list=$("$LOCUS" sequence list "$proj") || fail "locus sequence list failed"
echo "$list" | grep -q '^pair\.twin  *ended .* pair *$' || fail "locus sequence list: $list"

stop_locusd
"$LOCUS" db check "$proj" >/dev/null || fail "locus db check failed"
say "ok"
