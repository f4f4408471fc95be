#!/usr/bin/env bash
# locality_generator: on-demand work generation of locality scheduling with
# a real BOINC client (one CPU). One large sticky file G.dat with 2 jobs
# G.dat__1..2; <locality_scheduling_wait_period>5</...> and
# <locality_work_generator> running examples/locality/make_work.sh (3 jobs
# per chunk, 2 chunks). It proves that:
#  - a request from the host holding G.dat that finds no job for it raises
#    need_work and waits; the generator makes the next chunk (batches
#    gen_G.dat_1 and gen_G.dat_2, jobs G.dat__gN_K), and that same
#    request's reply carries the chunk's 3 jobs (locusd's log: "waiting for
#    more", the chunk's "sent job" lines, then that request's "[rpc]" line);
#  - the client keeps G.dat for all 8 jobs: it is downloaded once;
#  - once the generator has no chunk left (it touches
#    no_work_available/G.dat), the third waiting request gets no job and
#    is told to delete G.dat as soon as the generator said so (locusd's
#    log: "work generator for G.dat: done (no more work)" before that
#    reply), and only after the last job was sent; the client logs the
#    request and G.dat leaves its project folder;
#  - need_work was raised exactly 3 times and the generator never failed;
#    at the end locality_scheduling/need_work/ is empty (each successful
#    run removed its trigger), no_work_available/G.dat is there, and
#    /api/v1/locality says the same and shows the wait period;
#  - every job done once, on the client's host; locusd stops cleanly
#    (built with sanitizers: without a report); `locus db check` is happy.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

SRC=${LOCUS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
GEN=$SRC/examples/locality/make_work.sh
[ -r "$GEN" ] || fail "$GEN is missing (set LOCUS_SOURCE_DIR)"
WAIT=5
proj=$TMP/proj

make_project "$proj" alice
set_config "$proj" locality_scheduling /
set_config "$proj" locality_scheduling_wait_period "$WAIT"
# run as sh -c CMD locus-work-generator FILE: the file is "$1"
set_config "$proj" locality_work_generator \
    "env LOCUS=$LOCUS APP=worker JOBS=3 CHUNKS=2 FLOPS=1e9 sh $GEN \"\$1\""
set_config "$proj" next_rpc_delay 2
set_config "$proj" pace_share 0   # the replies carry whole chunks (generated work turns pacing off anyway)
grep -q '<locality_work_generator>env LOCUS=.* "$1"</locality_work_generator>' "$proj/config.xml" \
    || fail "config.xml lacks the generator: $(cat "$proj/config.xml")"

head -c 1500000 /dev/urandom >"$TMP/G.dat"
"$LOCUS" file add "$proj" "$TMP/G.dat" --sticky --report-on-rpc >/dev/null || fail "locus file add G.dat failed"
for i in 1 2; do
    printf '{"name": "G.dat__%d", "cmdline": "--iterations 200000 --sleep-ms 5 --seed %d", "inputs": ["G.dat=in"], "flops": 1e9}\n' \
        "$i" "$i"
done >"$TMP/g.jsonl"
"$LOCUS" batch create "$proj" --app worker --jobs "$TMP/g.jsonl" --name bG --delay-bound 3600 >/dev/null \
    || fail "locus batch create failed"

start_locusd "$proj"
say "locusd serves $URL (pid $LOCUSD_PID)"
start_client C "$(key_of alice)" 1
wait_first_rpc C
h=$(client_hostid C)
say "client C attached (host $h)"

wait_batch_done "$proj" bG 90
wait_batch_done "$proj" gen_G.dat_1 90
wait_batch_done "$proj" gen_G.dat_2 90
# the third trigger: no chunk left; the request waits out the wait period
# and the host is told to delete G.dat
for i in $(seq 60); do
    grep -q "\[sched\] host $h: delete G.dat " "$LOCUSD_LOG" && break
    [ $((i % 8)) -ne 0 ] || [ "$(client_ntasks C)" -gt 0 ] || client_update C
    sleep 1
done
grep -q "\[sched\] host $h: delete G.dat " "$LOCUSD_LOG" || fail "locusd never told the client to delete G.dat"
wait_clients_idle 60
stop_client C
api=$(curl -sf --max-time 5 "http://127.0.0.1:$PORT/api/v1/locality" || true)
stop_locusd
say "all batches done, G.dat deleted; client and locusd stopped"

# ---- the generator's work ----
[ "$(cat "$proj/locality_scheduling/generator.G.dat" 2>/dev/null)" = 2 ] \
    || fail "the generator's state says '$(cat "$proj/locality_scheduling/generator.G.dat" 2>/dev/null)' chunks, expected 2"
jobs=$(sql "$proj" "SELECT b.name||':'||j.name FROM jobs j JOIN batches b ON b.id=j.batch_id ORDER BY j.id" | tr '\n' ' ')
want="bG:G.dat__1 bG:G.dat__2 gen_G.dat_1:G.dat__g1_1 gen_G.dat_1:G.dat__g1_2 gen_G.dat_1:G.dat__g1_3 "
want+="gen_G.dat_2:G.dat__g2_1 gen_G.dat_2:G.dat__g2_2 gen_G.dat_2:G.dat__g2_3 "
[ "$jobs" = "$want" ] || fail "jobs in the store: $jobs; expected $want"
bad=$(sql "$proj" "SELECT name||' state '||state FROM jobs WHERE state<>$JOB_DONE")
[ -z "$bad" ] || fail "jobs not done: $bad"
n=$(sql "$proj" "SELECT count(*) FROM instances")
[ "$n" -eq 8 ] || fail "$n instances for 8 jobs of quorum 1"
other=$(sql "$proj" "SELECT count(*) FROM instances WHERE host_id<>$h")
[ "$other" -eq 0 ] || fail "$other instances on another host than the client's ($h)"

# ---- each waiting request's reply ----
# For every "no work for G.dat: waiting for more" of the host, what the
# same request's reply carried (its lines come before the reply's "[rpc]
# host H (user" line): "BATCH:COUNT ..." of the jobs sent, "delete" or
# "keep", and the seconds from the wait's start to the reply.
replies=$(awk -v h="$h" '
    function secs(line) { split(line, f, " "); split(f[2], t, ":"); return t[1] * 3600 + t[2] * 60 + t[3] }
    index($0, "[sched] host " h ": no work for G.dat: waiting for more") { w = 1; t0 = secs($0); next }
    w && index($0, "[sched] host " h ": sent job ") {
        b = $0; sub(/.*\(batch /, "", b); sub(/,.*/, "", b); c[b]++; if (!(b in seen)) { seen[b] = 1; order[++k] = b } }
    w && index($0, "[sched] host " h ": delete G.dat ") { del = 1 }
    w && index($0, "[rpc] host " h " (user ") {
        s = ""; for (i = 1; i <= k; i++) s = s order[i] ":" c[order[i]] " "
        printf "%s%s %.1f\n", (s == "" ? "none " : s), (del ? "delete" : "keep"), secs($0) - t0
        w = 0; del = 0; k = 0; delete c; delete seen }' "$LOCUSD_LOG")
say "replies to the requests that waited for work (jobs, delete/keep, seconds waited): $(echo "$replies" | tr '\n' ';')"
[ "$(echo "$replies" | wc -l)" -eq 3 ] || fail "$(echo "$replies" | wc -l) requests waited for work, expected 3: $(echo "$replies" | tr '\n' ';')"
# the first two got their chunk in their own reply (how soon they were
# woken is printed above, not asserted: tests never assert on speed)
read -r w1 k1 _ <<<"$(sed -n 1p <<<"$replies")"
read -r w2 k2 _ <<<"$(sed -n 2p <<<"$replies")"
[ "$w1 $k1" = "gen_G.dat_1:3 keep" ] && [ "$w2 $k2" = "gen_G.dat_2:3 keep" ] \
    || fail "the first two waiting requests did not get each new chunk in their reply: $(echo "$replies" | tr '\n' ';')"
# the third: no chunk left; no job and delete G.dat, answered once the
# generator said it can make no more (not at the end of the wait period)
read -r w3 k3 _ <<<"$(sed -n 3p <<<"$replies")"
[ "$w3 $k3" = "none delete" ] || fail "the request that waited when no chunk was left got '$w3 $k3', expected no job and delete G.dat"
order=$(grep -n "work generator for G.dat: done (no more work)\|\[sched\] host $h: delete G.dat " "$LOCUSD_LOG" | cut -d: -f1 | tr '\n' ' ')
set -- $order
[ $# -eq 2 ] && [ "$1" -lt "$2" ] \
    || fail "the generator's 'no more work' should come once, before the delete of G.dat (log lines: $order)"
# need_work raised by each of them, and the generator never failed
ngen=$(grep -c "need_work G.dat" "$LOCUSD_LOG" || true)
[ "$ngen" -eq 3 ] || fail "need_work G.dat raised $ngen times, expected 3"
! grep -q "work generator for G.dat failed" "$LOCUSD_LOG" || fail "the work generator failed: $(grep "work generator" "$LOCUSD_LOG" | head -n 3)"

# ---- the file on the client ----
g=$(grep -c "GET download/G.dat[: ]" "$LOCUSD_LOG" || true)
[ "$g" -eq 1 ] || fail "G.dat was downloaded $g times, expected once (the client keeps it between chunks)"
last_sent=$(grep -n "\[sched\] host $h: sent job " "$LOCUSD_LOG" | tail -n 1 | cut -d: -f1)
first_del=$(grep -n "\[sched\] host $h: delete G.dat " "$LOCUSD_LOG" | head -n 1 | cut -d: -f1)
[ "$first_del" -gt "$last_sent" ] || fail "G.dat deleted (log line $first_del) before the last job was sent (line $last_sent)"
grep -q "request to delete file G.dat" "${CLIENT_DIR[C]}/client.log" \
    || fail "the client never logged the server's request to delete G.dat"
[ -d "$(client_project_dir C)" ] || fail "the client's project folder $(client_project_dir C) does not exist (wrong path?)"
[ ! -e "$(client_project_dir C)/G.dat" ] || fail "G.dat is still in the client's folder $(client_project_dir C)"

# ---- the locality_scheduling folder and the API ----
left=$(ls -A "$proj/locality_scheduling/need_work")
[ -z "$left" ] || fail "need_work/ still holds: $left"
[ -e "$proj/locality_scheduling/no_work_available/G.dat" ] || fail "no_work_available/G.dat is missing"
case $api in
*'"need_work":[]'*'"no_work_available":["G.dat"]'* | *'"no_work_available":["G.dat"]'*'"need_work":[]'*) ;;
*) fail "GET /api/v1/locality at the end: $api" ;;
esac
case $api in *'"wait_period":5'*) ;; *) fail "the API does not show the wait period: $api" ;; esac

"$LOCUS" db check "$proj" >"$TMP/check.out" 2>&1 || fail "locus db check: $(cat "$TMP/check.out")"
say "PASS: total $(elapsed)s"
