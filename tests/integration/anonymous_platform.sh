#!/usr/bin/env bash
# anonymous_platform: a volunteer runs the project's app through a build of
# their own, declared in an app_info.xml (BOINC's anonymous platform). The
# real BOINC client then says platform "anonymous" and lists its version
# (worker 555). locusd sends it jobs for that version and no app file: the
# client never downloads the project's worker; every instance is recorded
# as run by the host's own version; the batch is done with the outputs the
# project's worker computes. Then the operator closes the door
# (<no_anonymous_platform/>): the host gets no new job and is told why.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice
start_locusd "$proj"
start_client A "$(key_of alice)"
wait_first_rpc A
d=${CLIENT_DIR[A]}
pdir=$(find "$d/projects" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$pdir" ] || fail "the client has no project folder"
stop_client A

own_build "$pdir"   # the volunteer's own build, declared with its own version number
boinc_client_start "$d" "${CLIENT_PORT[A]}" || fail "client A did not restart"
CLIENT_PID[A]=$(cat "$d/client.pid")
say "client A restarted with an app_info.xml"

own_build_template
"$LOCUS" batch create "$proj" --app worker --count 8 --input-template "$TMP/own.json" --name anon1 \
    --quorum 1 --delay-bound 3600 >/dev/null || fail "batch anon1"
client_update A
wait_batch_done "$proj" anon1 180
grep -q "Found app_info.xml; using anonymous platform" "$d/client.log" || fail "the client did not use its app_info.xml"
grep -q "<platform_name>anonymous</platform_name>" "$d"/sched_request_*.xml || fail "the request did not say anonymous"

# every instance ran the host's own version, no app file went out
check_own_build_ran "$proj" anon1
ls "$pdir" | grep -q '^worker_100' && fail "the client downloaded the project's worker: $(ls "$pdir")"
grep -q "<version_num>555</version_num>" "$d/client_state.xml" || fail "the client's state lost its own version"
say "jobs done by the host's own version 555; the outputs are the worker's"

# the operator refuses hosts with their own apps: no more work for A
refuse_own_builds "$proj"
# told: the client shows the reason. grep -c reads all of boinccmd's output:
# grep -q would stop at the match and, under pipefail, boinccmd killed by
# SIGPIPE would make a match read as none.
told() {
    [ "$(bcmd A --get_messages 0 2>/dev/null | grep -c "does not send work to hosts with their own applications")" -gt 0 ]
}
for _ in $(seq 20); do
    client_update A
    sleep 1
    told && break
done
told || fail "the client was not told why it gets no work"
sent=$(anon2_sent "$proj")
[ "$sent" -eq 0 ] || fail "$sent instances of anon2 went to an anonymous host the project refuses"
stop_client A
stop_locusd
"$LOCUS" db check "$proj" >/dev/null || fail "locus db check found problems"
check_sanitizers
say "PASS"
