#!/usr/bin/env bash
# quota_boinc: daily result quotas against a "black hole", with real BOINC
# clients. Client B runs the app through its own build (app_info.xml),
# which fails every job at once, and asks for more; client A computes
# honestly. With <daily_result_quota>4</daily_result_quota> and one CPU, B
# gets its day's 4 jobs, fails them, and its quota for that version falls
# to 1 (halved per error): it gets nothing more that day and its client log
# carries the server's message. A computes every job, B's failures
# included; A's record counts its valid results and keeps the full quota.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice bob
set_config "$proj" daily_result_quota 4
start_locusd "$proj"

start_client B "$(key_of bob)" 1
wait_first_rpc B
d=${CLIENT_DIR[B]}
pdir=$(find "$d/projects" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$pdir" ] || fail "client B has no project folder"
stop_client B
own_build "$pdir"
printf '#!/bin/sh\necho "black hole: failing at once" >&2\nexit 3\n' >"$pdir/myworker"
chmod 755 "$pdir/myworker"
boinc_client_start "$d" "${CLIENT_PORT[B]}" || fail "client B did not restart"
CLIENT_PID[B]=$(cat "$d/client.pid")
sed -i "s|<options>|<options>\n    <ncpus>1</ncpus>|" "$d/cc_config.xml"   # as start_client's NCPUS
bcmd B --read_cc_config >/dev/null 2>&1 || fail "client B: boinccmd --read_cc_config failed"
say "client B restarted with its own build of the app, which fails every job"

own_build_template
"$LOCUS" batch create "$proj" --app worker --count 6 --input-template "$TMP/own.json" --name q \
    --quorum 1 --delay-bound 3600 --max-error-instances 10 >/dev/null || fail "locus batch create failed"
bhost=$(client_hostid B)
[ "$(sql "$proj" "SELECT p_ncpus FROM hosts WHERE id=$bhost")" = 1 ] || client_update B
# B first, alone: it takes its day's quota and fails it
client_update B
for _ in $(seq 60); do
    [ "$(sql "$proj" "SELECT nerror FROM host_app_versions WHERE host_id=$bhost")" = 4 ] 2>/dev/null && break
    client_update B
    sleep 1
done
row=$(sql "$proj" "SELECT daily_max, sent_day, nerror, nvalid FROM host_app_versions WHERE host_id=$bhost")
[ "$row" = "1|4|4|0" ] || fail "B's quota record after its 4 errors: '$row' (daily_max|sent_day|nerror|nvalid)"
say "B got its day's 4 jobs, failed them all: its quota for the version is down to 1"

for _ in $(seq 3); do client_update B; sleep 2; done
n=$(sql "$proj" "SELECT count(*) FROM instances WHERE host_id=$bhost")
[ "$n" -eq 4 ] || fail "B got $n instances, not its 4"
grep -q "reached its daily quota" "$d/client.log" || fail "B's client log has no word of its quota"
say "B asks again and gets nothing, told: $(grep -o 'No tasks sent: this computer has reached its daily quota[^.]*' "$d/client.log" | head -n 1)"

start_client A "$(key_of alice)"
wait_batch_done "$proj" q 120
ahost=$(client_hostid A)
[ "$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_DONE")" -eq 6 ] || fail "not every job was done"
row=$(sql "$proj" "SELECT daily_max, nerror, nvalid FROM host_app_versions WHERE host_id=$ahost")
[ "$row" = "4|0|6" ] || fail "A's record: '$row' (daily_max|nerror|nvalid)"
[ "$(sql "$proj" "SELECT count(*) FROM instances WHERE host_id=$bhost")" -eq 4 ] || fail "B got more work"
say "A computed all 6 jobs (B's 4 failures included); its record: 6 valid, no error, the full quota"
stop_locusd
say "PASS"
