#!/usr/bin/env bash
# client_anonymous: a volunteer runs the project's app through a build of
# their own with locus-client, declared in an app_info.xml in the project's
# folder (BOINC's anonymous platform), as anonymous_platform.sh does with
# the BOINC client. An app_info.xml naming a file that is not there is
# refused with the reason, and the project's own apps are used. With a good
# one, the agent asks as platform "anonymous" listing its version 555;
# locusd sends jobs for it and no app file: the agent never downloads the
# project's worker, every instance is recorded as run by the host's own
# version, and the outputs are the worker's. Then the operator closes the
# door (<no_anonymous_platform/>): no new job, and the agent logs why.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
AGENT_DIR=$TMP/agent
AGENT_LOG=$TMP/agent.log
AGENT_OPTS=(--max-cpus 2 --retry-min 1 --retry-max 4 --min-queue 600 --benchmark-seconds 0 --debug rpc,task)
. "$(dirname "$0")/lib/agent.sh"

make_project "$proj" alice
start_locusd "$proj"
start_agent
key_of alice | lc attach "$URL" - || afail "attach failed"
for _ in $(seq 60); do
    [ "$(field hostid "$(lc projects)")" -gt 0 ] 2>/dev/null && break
    sleep 0.25
done
[ "$(field hostid "$(lc projects)")" -gt 0 ] || afail "no first RPC: $(lc projects)"
pdir=$(find "$AGENT_DIR/projects" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$pdir" ] || afail "the agent has no project folder"
stop_agent

# an app_info.xml naming a file that is not there: said, and not used
own_build "$pdir"
mv "$pdir/myworker" "$pdir/elsewhere"
start_agent
grep -q "names myworker, which is not a file in" "$AGENT_LOG" || afail "the bad app_info.xml was not refused"
grep -q "using the project's own apps" "$AGENT_LOG" || afail "the refusal does not say what the agent does instead"
stop_agent
mv "$pdir/elsewhere" "$pdir/myworker"

start_agent
grep -q "found app_info.xml: anonymous platform, 1 app versions" "$AGENT_LOG" || afail "the agent did not take its app_info.xml"
own_build_template
"$LOCUS" batch create "$proj" --app worker --count 8 --input-template "$TMP/own.json" --name anon1 \
    --quorum 1 --delay-bound 3600 >/dev/null || fail "batch anon1"
lc update "$URL" || afail "update failed"
wait_batch_done "$proj" anon1 180
grep -q "<platform_name>anonymous</platform_name>" "$AGENT_DIR"/sched_request_*.xml \
    || afail "the request did not say anonymous"
check_own_build_ran "$proj" anon1
ls "$pdir" | grep -q '^worker_100' && afail "the agent downloaded the project's worker: $(ls "$pdir")"
say "jobs done by the host's own version 555; the outputs are the worker's"

# the operator refuses hosts with their own apps: no more work, and the agent says why
refuse_own_builds "$proj"
for _ in $(seq 30); do
    lc update "$URL" >/dev/null 2>&1 || true
    sleep 1
    grep -q "does not send work to hosts with their own applications" "$AGENT_LOG" && break
done
grep -q "does not send work to hosts with their own applications" "$AGENT_LOG" \
    || afail "the agent was not told (or did not log) why it gets no work"
sent=$(anon2_sent "$proj")
[ "$sent" -eq 0 ] || fail "$sent instances of anon2 went to an anonymous host the project refuses"
stop_agent
stop_locusd
"$LOCUS" db check "$proj" >/dev/null || fail "locus db check found problems"
check_agent_sanitizers
check_sanitizers
say "PASS"
