#!/usr/bin/env bash
# metrics: GET /metrics of a real locusd, read by Prometheus's own parser
# (promtool check metrics: no error, no lint), before and after hand-made
# scheduler RPCs: a host registers, asks for work, reports one job done
# and one failed, and two more requests are malformed or carry an unknown
# key. Between the two scrapes the RPC counters by outcome, the latency
# histogram's count, the scheduler route's requests, the instances sent
# (as many as the reply held and the store recorded), reported, jobs
# validated and failed (per app and per batch) and the index's live jobs
# and instances in progress moved by exactly that much. Who may read it:
# with <metrics_allow>10.0.0.0/8</metrics_allow> 127.0.0.1 gets 403 with
# a one-line reason, with the empty element 404, and a malformed prefix
# stops locusd at start with a message naming it. locusd stops cleanly.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/rpc.sh"
command -v promtool >/dev/null || fail "promtool is missing; run scripts/deps.sh (Debian's prometheus)"

proj=$TMP/proj
make_project "$proj" alice
echo '{"cmdline": "--iterations 1 --seed {n}", "flops": 1e12}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 4 --input-template "$TMP/tmpl.json" --name b1 --no-output \
    --max-error-instances 0 >/dev/null || fail "locus batch create failed"
start_locusd "$proj"
METRICS=http://127.0.0.1:$PORT/metrics
SCHED=${URL}scheduler
R=$TMP/req.xml B=$TMP/body H=$TMP/headers

# scrape FILE: GET /metrics into FILE, checked by promtool (parse and lint)
scrape() {
    local st
    st=$(curl -s -o "$1" -D "$TMP/mh" -w '%{http_code}' --max-time 10 "$METRICS") || fail "GET /metrics failed"
    [ "$st" = 200 ] || fail "GET /metrics: HTTP $st: $(head -c 300 "$1")"
    grep -qi '^Content-Type: text/plain; version=0.0.4' "$TMP/mh" \
        || fail "GET /metrics: $(grep -i '^Content-Type' "$TMP/mh")"
    promtool check metrics <"$1" >"$TMP/promtool.out" 2>&1 || fail "promtool check metrics: $(cat "$TMP/promtool.out")"
    [ ! -s "$TMP/promtool.out" ] || fail "promtool check metrics printed: $(cat "$TMP/promtool.out")"
}
# value FILE SERIES: the value of SERIES (its name and labels as written) in FILE; fails if absent
value() {
    local v
    v=$(awk -v s="$2" '$1 == s {print $2}' "$1")
    [ -n "$v" ] || fail "$2 is not in $1"
    echo "$v"
}
# grew SERIES N: SERIES went up by N between the two scrapes
grew() {
    local a b
    a=$(value "$TMP/m1" "$1")
    b=$(value "$TMP/m2" "$1")
    [ $((b - a)) -eq "$2" ] || fail "$1 went from $a to $b, not up by $2"
}

scrape "$TMP/m1"
say "first scrape: $(grep -vc '^#' "$TMP/m1") series, promtool finds nothing to say"

KEY=$(key_of alice)
HOST=$(register "$KEY")
[ -n "$HOST" ] || fail "no hostid from the registering RPC"
SEQNO=1 request "$KEY" "$HOST" 3000 >"$R"
[ "$(post "$SCHED" "$R")" = 200 ] || fail "work RPC failed: $(head -c 300 "$B")"
names=$(tr -d '\n' <"$B" | grep -o '<result>[[:space:]]*<name>[^<]*</name>' | sed 's|.*<name>\(.*\)</name>|\1|')
sent=$(echo "$names" | grep -c . || true)
[ "$sent" -ge 2 ] || fail "the work RPC sent $sent jobs, not 2 or more"
[ "$(sql "$proj" "SELECT COUNT(*) FROM instances")" = "$sent" ] || fail "the store holds not $sent instances"
done_inst=$(echo "$names" | sed -n 1p)
failed_inst=$(echo "$names" | sed -n 2p)
# report NAME STATE EXIT: a <result> the client sends for a task that ended
report() {
    cat <<XML
<result>
    <name>$1</name>
    <final_cpu_time>1.000000</final_cpu_time>
    <final_elapsed_time>1.000000</final_elapsed_time>
    <exit_status>$3</exit_status>
    <state>$2</state>
    <platform>x86_64-pc-linux-gnu</platform>
    <version_num>100</version_num>
    <app_version_num>100</app_version_num>
</result>
XML
}
SEQNO=2 request "$KEY" "$HOST" 0 "$(report "$done_inst" 5 0)$(report "$failed_inst" 3 1)" >"$R"
[ "$(post "$SCHED" "$R")" = 200 ] || fail "report RPC failed: $(head -c 300 "$B")"
grep -q "<result_ack>" "$B" || fail "the reports were not acknowledged: $(head -c 300 "$B")"
echo "<scheduler_request><authenticator>" >"$TMP/bad.xml"
st=$(post "$SCHED" "$TMP/bad.xml")
[ "$st" = 400 ] || fail "a malformed request got HTTP $st, not 400"
request nosuchkey 0 0 >"$R"
[ "$(post "$SCHED" "$R")" = 200 ] || fail "an RPC with an unknown key failed"
grep -q 'Invalid or missing account key' "$B" || fail "an unknown key was not refused: $(head -c 300 "$B")"
# the validated job is assimilated at once (no outputs): wait for both jobs to end in the store
for _ in $(seq 50); do
    [ "$(sql "$proj" "SELECT COUNT(*) FROM jobs WHERE state IN ($JOB_DONE, $JOB_FAILED)")" = 2 ] && break
    sleep 0.1
done
[ "$(sql "$proj" "SELECT COUNT(*) FROM jobs WHERE state = $JOB_FAILED")" = 1 ] || fail "no job failed"
say "RPCs: register, $sent jobs sent, one reported done and one failed; one malformed, one unknown key"

scrape "$TMP/m2"
grew 'locus_rpc_requests_total{outcome="ok"}' 3
grew 'locus_rpc_requests_total{outcome="refused"}' 1
grew 'locus_rpc_requests_total{outcome="malformed"}' 1
grew 'locus_rpc_requests_total{outcome="unavailable"}' 0
grew 'locus_rpc_duration_seconds_count' 5
grew 'locus_rpc_duration_seconds_bucket{le="+Inf"}' 5
grew 'locus_http_requests_total{route="scheduler"}' 5
grew 'locus_http_requests_total{route="metrics"}' 1
for scope in '{app="worker"}' '{batch="b1",app="worker"}'; do
    [ "$scope" = '{app="worker"}' ] && pre=locus_ || pre=locus_batch_
    grew "${pre}instances_sent_total$scope" "$sent"
    grew "${pre}instances_reported_total$scope" 2
    grew "${pre}jobs_validated_total$scope" 1
    grew "${pre}jobs_failed_total$scope" 1
done
[ "$(value "$TMP/m2" 'locus_batch_jobs_live{batch="b1",app="worker"}')" = 2 ] || fail "b1 does not have 2 live jobs"
[ "$(value "$TMP/m2" locus_index_jobs)" = 2 ] || fail "the index does not hold 2 live jobs"
[ "$(value "$TMP/m2" locus_index_instances_in_progress)" = $((sent - 2)) ] || fail "in progress is not $((sent - 2))"
[ "$(value "$TMP/m2" locus_hosts_cached)" = 1 ] || fail "the host cache does not hold the one host"
[ "$(value "$TMP/m2" locus_writer_commit_seconds_count)" -ge 1 ] || fail "no commit timed"
[ "$(value "$TMP/m2" locus_writer_groups_total)" -ge 1 ] || fail "no group committed"
[ "$(value "$TMP/m2" 'locus_http_connections{scheme="http"}')" -ge 1 ] || fail "no connection open while scraping"
[ "$(value "$TMP/m2" process_open_fds)" -ge 3 ] || fail "process_open_fds is not plausible"
[ "$(value "$TMP/m2" process_resident_memory_bytes)" -gt $((1 << 20)) ] || fail "locusd's resident memory is below 1 MiB"
st=$(curl -s -o /dev/null -w '%{http_code}' -X POST --max-time 5 "$METRICS")
[ "$st" = 404 ] || fail "POST /metrics got HTTP $st, not 404"
say "second scrape: every counter moved by what the RPCs did"
stop_locusd

# who may read it: not 127.0.0.1 when only 10.0.0.0/8 may
set_config "$proj" metrics_allow 10.0.0.0/8
start_locusd "$proj"
st=$(curl -s -o "$TMP/body403" -w '%{http_code}' --max-time 5 "$METRICS")
[ "$st" = 403 ] || fail "GET /metrics from 127.0.0.1 with metrics_allow 10.0.0.0/8: HTTP $st, not 403"
[ "$(wc -l <"$TMP/body403")" = 1 ] && grep -q metrics_allow "$TMP/body403" \
    || fail "the 403 body is not one line naming metrics_allow: $(cat "$TMP/body403")"
stop_locusd
set_config "$proj" metrics_allow /
start_locusd "$proj"
st=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$METRICS")
[ "$st" = 404 ] || fail "GET /metrics with an empty metrics_allow: HTTP $st, not 404"
stop_locusd
say "403 to an address not allowed, 404 when no address is"

set_config "$proj" metrics_allow 10.0.0.0/33
rc=0
timeout 20 "$LOCUSD" "$proj" >"$TMP/bad.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "locusd started with metrics_allow 10.0.0.0/33"
grep -q "<metrics_allow>: '10.0.0.0/33' is not ADDRESS or ADDRESS/BITS" "$TMP/bad.log" \
    || fail "locusd did not say what is wrong with metrics_allow: $(cat "$TMP/bad.log")"
say "PASS"
