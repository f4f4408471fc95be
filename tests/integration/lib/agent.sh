# agent.sh - running locus-client in a test: the daemon in data folder
# $AGENT_DIR with options $AGENT_OPTS (an array) and its log in $AGENT_LOG,
# the control commands (lc), the sanitizer check of its log; the agent and
# its apps are stopped on any exit. Source after lib/boinc.sh, with
# AGENT_DIR, AGENT_LOG and AGENT_OPTS set.

AGENT=$LOCUS_BUILD_DIR/bin/locus-client
[ -x "$AGENT" ] || fail "$AGENT is not built"
AGENT_PID=

lc() { "$AGENT" --dir "$AGENT_DIR" "$@"; }

# field NAME LINE: the value of NAME=... in a key=value line (lc status, tasks)
field() { sed -n "s/.*[ ^]$1=\([^ ]*\).*/\1/p" <<<" $2"; }

# start_agent [OPTION...]: the daemon, with $AGENT_OPTS and these; waits
# until it answers status.
start_agent() {
    echo "==== agent start at +$(elapsed)s ====" >>"$AGENT_LOG"
    "$AGENT" --dir "$AGENT_DIR" "${AGENT_OPTS[@]}" "$@" </dev/null >>"$AGENT_LOG" 2>&1 &
    AGENT_PID=$!
    local i
    for i in $(seq 50); do
        alive "$AGENT_PID" || fail "locus-client exited at start: $(tail -n 5 "$AGENT_LOG")"
        lc status >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    fail "locus-client does not answer status after 5 s"
}

# start_second_agent KEY: a second daemon with $AGENT_OPTS, in data folder
# $TMP/agent2 (its log $TMP/agent2.log), attached to $URL with account key
# KEY: a second host, as a host never gets two instances of one job.
AGENT2_PID=
start_second_agent() {
    "$AGENT" --dir "$TMP/agent2" "${AGENT_OPTS[@]}" </dev/null >>"$TMP/agent2.log" 2>&1 &
    AGENT2_PID=$!
    local i
    for i in $(seq 50); do
        "$AGENT" --dir "$TMP/agent2" status >/dev/null 2>&1 && break
        sleep 0.1
    done
    "$AGENT" --dir "$TMP/agent2" attach "$URL" - <<<"$1" || afail "attach of the second agent failed"
}

# Stops the agents and their apps on any exit (lib/boinc.sh's trap handles
# locusd). Returns the status it was called with: _cleanup exits with the
# status it finds, so that a test that failed does not exit 0. In the trap,
# a failed test's status would stop the trap there under set -e, leaving
# locusd running and $TMP behind: "|| _cleanup" takes that branch instead.
_agent_cleanup() {
    local rc=$?
    kill_tree "$AGENT2_PID"
    kill_tree "$AGENT_PID"
    return "$rc"
}
trap '_agent_cleanup || _cleanup; _cleanup' EXIT

agent_dump() { echo "---- agent log (last 40 lines) ----" >&2; tail -n 40 "$AGENT_LOG" >&2; }
afail() { agent_dump; fail "$@"; }

# stop_agent: SIGTERM to the agent, which must exit 0 with a clean
# sanitizer log.
stop_agent() {
    kill -TERM "$AGENT_PID"
    local rc=0
    wait "$AGENT_PID" || rc=$?
    AGENT_PID=
    [ "$rc" -eq 0 ] || afail "locus-client exited with $rc on SIGTERM"
    check_agent_sanitizers
}

check_agent_sanitizers() {
    if grep -q -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' -e 'runtime error:' "$AGENT_LOG"; then
        grep -n -A 30 -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' -e 'runtime error:' "$AGENT_LOG" | head -n 60 >&2
        fail "sanitizer report in the agent's log"
    fi
}
