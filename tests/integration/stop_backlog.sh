#!/usr/bin/env bash
# stop_backlog: locusd stops at once with a backlog of jobs waiting for a
# slow assimilator hook, and the next start takes the backlog up again.
# bench-rpc (its own locusd) reports hundreds of jobs a second while the
# hook takes half a second a job; SIGTERM then returns within seconds (it
# used to run the whole backlog first: over 300 s in the soak), no job is
# lost (every one reported is validated or done), and a locusd started
# again assimilates the jobs left validated.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice bob
echo '{"cmdline": "--seed {n}", "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 5000 --input-template "$TMP/tmpl.json" --name b --no-output \
    >/dev/null || fail "locus batch create failed"
{ key_of alice; key_of bob; } >"$proj/bench_keys.txt"
chmod 600 "$proj/bench_keys.txt"
set_config "$proj" assimilator_cmd "sleep 0.5"

"$LOCUS_BUILD_DIR/bin/bench-rpc" --project "$proj" --hosts 20 --conns 4 --threads 1 --seconds 4 --warmup 1 --json \
    >"$TMP/bench.out" 2>&1 || fail "bench-rpc failed: $(tail -5 "$TMP/bench.out")"
stop_s=$(tail -n 1 "$TMP/bench.out" | grep -o '"stop_s":[0-9.]*' | cut -d: -f2)
validated=$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_VALIDATED")
done_=$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_DONE")
reported=$(sql "$proj" "SELECT count(DISTINCT job_id) FROM instances WHERE outcome=$OUTCOME_SUCCESS")
say "bench-rpc: $(grep -o "measured.*errors" "$TMP/bench.out" | head -n 1); locusd stopped in ${stop_s} s"
say "left: $validated validated (the backlog), $done_ done, of $reported reported"
[ "$validated" -ge 20 ] || fail "no backlog to stop with ($validated validated): the test proves nothing"
awk -v s="$stop_s" 'BEGIN { exit !(s < 10) }' || fail "locusd took $stop_s s to stop with $validated jobs waiting"
[ $((validated + done_)) -eq "$reported" ] || fail "$reported jobs reported, $validated validated + $done_ done"

start_locusd "$proj"
for _ in $(seq 100); do
    [ "$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_DONE")" -gt "$done_" ] && break
    sleep 0.2
done
now_done=$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_DONE")
[ "$now_done" -gt "$done_" ] || fail "the restarted locusd assimilates none of the $validated jobs left validated"
stop_locusd
check_sanitizers
say "restarted: the backlog goes on ($done_ -> $now_done done); PASS"
