#!/usr/bin/env bash
# config_reload: SIGHUP makes a running locusd read config.xml again. A
# live setting takes effect at once, seen over HTTP: <metrics_allow> turns
# GET /metrics from 403 to 200 and <request_delay> is the scheduler
# reply's; the info line lists both. A config.xml that does not load (a
# value out of its type, then no XML at all) is refused with an error
# naming what is wrong, and locusd serves on with the settings it had. A
# restart-only setting (<http_threads>) is kept, with a warning that it
# takes effect at the next restart. locusd stops cleanly.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/rpc.sh"

proj=$TMP/proj
make_project "$proj" alice
set_config "$proj" metrics_allow 10.0.0.0/8
start_locusd "$proj"
METRICS=http://127.0.0.1:$PORT/metrics
SCHED=${URL}scheduler
R=$TMP/req.xml B=$TMP/body H=$TMP/headers
KEY=$(key_of alice)
HOST=$(register "$KEY")
[ -n "$HOST" ] || fail "no hostid from the registering RPC"

metrics_status() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$METRICS"; }
# reply_delay: the <request_delay> of a scheduler reply to a request for no work
reply_delay() {
    SEQNO=2 request "$KEY" "$HOST" 0 >"$R"
    [ "$(post "$SCHED" "$R")" = 200 ] || fail "RPC failed: $(head -c 300 "$B")"
    sed -n 's|.*<request_delay>\([0-9.]*\)</request_delay>.*|\1|p' "$B" | awk '{printf "%g\n", $1}'
}
# reload PATTERN: SIGHUP, then waits until the log has one more line matching PATTERN
reload() {
    local before i
    before=$(grep -c -e "$1" "$LOCUSD_LOG" || true)
    kill -HUP "$LOCUSD_PID"
    for i in $(seq 100); do
        [ "$(grep -c -e "$1" "$LOCUSD_LOG" || true)" -gt "$before" ] && return 0
        alive "$LOCUSD_PID" || fail "locusd died on SIGHUP"
        sleep 0.1
    done
    fail "no log line '$1' 10 s after SIGHUP"
}

[ "$(metrics_status)" = 403 ] || fail "GET /metrics with metrics_allow 10.0.0.0/8: not 403"
[ "$(reply_delay)" = 1 ] || fail "request_delay is not the 1 of config.xml"
say "at start: /metrics 403, request_delay 1"

# live settings
set_config "$proj" metrics_allow 127.0.0.1/32
set_config "$proj" request_delay 42
reload "config.xml reloaded"
grep -q "config.xml reloaded: metrics_allow, request_delay changed" "$LOCUSD_LOG" \
    || fail "the reload did not list what changed: $(grep 'config.xml' "$LOCUSD_LOG" | tail -n 3)"
[ "$(metrics_status)" = 200 ] || fail "GET /metrics after allowing 127.0.0.1: $(metrics_status), not 200"
[ "$(reply_delay)" = 42 ] || fail "request_delay after the reload is not 42"
say "reloaded: /metrics 200, request_delay 42, both listed"

# a config.xml that does not load: refused, the settings kept
cp "$proj/config.xml" "$TMP/good.xml"
set_config "$proj" request_delay soon
set_config "$proj" metrics_allow /
reload "config.xml not reloaded"
grep -q "config.xml not reloaded.*<request_delay> must be a number" "$LOCUSD_LOG" \
    || fail "the error does not name request_delay: $(grep 'not reloaded' "$LOCUSD_LOG" | tail -n 1)"
[ "$(metrics_status)" = 200 ] || fail "a refused config.xml changed metrics_allow"
[ "$(reply_delay)" = 42 ] || fail "a refused config.xml changed request_delay"
echo "<locus><config>" >"$proj/config.xml"
reload "config.xml not reloaded"
grep "config.xml not reloaded" "$LOCUSD_LOG" | tail -n 1 | grep -q "is not a locus project" \
    || fail "the error does not say config.xml is no XML: $(grep 'not reloaded' "$LOCUSD_LOG" | tail -n 1)"
locusd_alive || fail "locusd does not serve after a broken config.xml"
[ "$(reply_delay)" = 42 ] || fail "a broken config.xml changed request_delay"
say "a bad value and a broken file refused with the reason; locusd serves on as before"

# a restart-only setting: kept, and a warning
cp "$TMP/good.xml" "$proj/config.xml"
set_config "$proj" http_threads 8
reload "config.xml reloaded"
grep -q "http_threads changed: takes effect at the next restart" "$LOCUSD_LOG" \
    || fail "no warning that http_threads waits for a restart"
grep "config.xml reloaded" "$LOCUSD_LOG" | tail -n 1 | grep -q "no setting that applies at once changed" \
    || fail "the reload says a live setting changed: $(grep 'config.xml reloaded' "$LOCUSD_LOG" | tail -n 1)"
[ "$(reply_delay)" = 42 ] && [ "$(metrics_status)" = 200 ] || fail "the settings moved on an unchanged reload"
say "http_threads: kept until the next restart, with a warning"

stop_locusd
say "PASS"
