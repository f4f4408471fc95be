#!/usr/bin/env bash
# locality_boinc: locality scheduling (<locality_scheduling/>, full mode)
# with real BOINC clients (one CPU each). Large files added with
# --sticky --report-on-rpc; jobs named FILE__n, so placed by FILE; at most
# 3 jobs per reply, so that a file's jobs come in several RPCs.
#
# Part 1: one client C1, two files A.dat (2 MB) and B.dat (3 MB), 8 jobs
# each. It proves that:
#  - the client gets the jobs of one file only until all of them are sent:
#    in send order (instance ids) the 8 jobs of its first file come before
#    any job of the other; all 16 go to it, one instance each;
#  - it keeps the file between RPCs and gets the file's jobs because it
#    holds it: each file is downloaded once (locusd's http log) although
#    its jobs come in several replies, and locusd counts at most one
#    reply's worth of each file's jobs as "sent new file", the rest as
#    "sent from held", none as fallback (/api/v1/locality);
#  - it is told to delete a file only once all the file's jobs are sent
#    (locusd's "delete FILE" comes after the file's last "sent job"), the
#    client logs the request, and the file leaves its project folder
#    while it still computes the other file's jobs with that file present
#    (sampled while waiting); at the end neither file is left.
# Part 2: a second client C2 (attached during part 1 with "no more work")
# and two more files C.dat and D.dat, 10 jobs each. With both clients off
# the network while the stage is set (no RPC races the checks):
#  - with two active hosts the working set (API) holds both files;
#  - once C1 starts on one file, the working set holds only the other, and
#    C2 starts on that other file while C1 still gets jobs of its own;
#  - both batches are done and no file is left on either client.
# Finally locusd stops cleanly (built with sanitizers: without a report)
# and `locus db check` is happy. On-demand work generation is in
# locality_generator.sh (its wait period would change every RPC here).
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

NPER=8       # jobs per file in part 1
PER_RPC=3    # max_wus_to_send
proj=$TMP/proj

make_project "$proj" alice bob
set_config "$proj" locality_scheduling /
set_config "$proj" max_wus_to_send "$PER_RPC"
# clients hardly fetch on their own: they come back every 2 s (in fact every
# ~6 s: a client polls its scheduler RPCs no more often than every 5 s)
set_config "$proj" next_rpc_delay 2

# add_big NAME BYTES: a random file registered sticky and report-on-rpc.
add_big() {
    head -c "$2" /dev/urandom >"$TMP/$1"
    "$LOCUS" file add "$proj" "$TMP/$1" --sticky --report-on-rpc >/dev/null || fail "locus file add $1 failed"
}

# add_batch BATCH FILE N: a batch of N jobs FILE__1..N reading FILE as "in",
# about 2 s each in a client. Their flops are declared high (5 s at the
# clients' 1e9 flops/s): a job that ran longer than estimated would raise
# C1's duration correction factor at once (under load, above 4), and C1,
# seen that much slower than C2, would hold a file too slowly for part 2's
# working set to be the one this test expects.
add_batch() {
    local b=$1 f=$2 n=$3 i
    : >"$TMP/$b.jsonl"
    for i in $(seq "$n"); do
        printf '{"name": "%s__%d", "cmdline": "--iterations 200000 --sleep-ms 5 --seed %d", "inputs": ["%s=in"], "flops": 5e9}\n' \
            "$f" "$i" "$i" "$f" >>"$TMP/$b.jsonl"
    done
    "$LOCUS" batch create "$proj" --app worker --jobs "$TMP/$b.jsonl" --name "$b" --delay-bound 3600 >/dev/null \
        || fail "locus batch create $b failed"
}

# has_file NAME FILE: 1 if the file is in the client's project folder, else 0.
has_file() { if [ -e "$(client_project_dir "$1")/$2" ]; then echo 1; else echo 0; fi; }

# files_gone NAME FILE...: waits (10 s at most) until none of the files is
# in the client's project folder (it deletes them right after the acks).
files_gone() {
    local n=$1 i f left
    shift
    for i in $(seq 20); do
        left=
        for f in "$@"; do [ "$(has_file "$n" "$f")" -eq 0 ] || left="$left $f"; done
        [ -z "$left" ] && return 0
        sleep 0.5
    done
    fail "still in $n's project folder $(client_project_dir "$n") after all their work:$left"
}

# tasks_of NAME FILE: how many tasks of jobs of FILE the client holds (a
# task is named after its job, FILE__N, then the job's id and its number).
tasks_of() { bcmd "$1" --get_tasks 2>/dev/null | grep -c "^ *name: ${2}__[0-9]*__" || true; }

# api_locality: GET /api/v1/locality (one line of JSON).
api_locality() { curl -sf --max-time 5 "http://127.0.0.1:$PORT/api/v1/locality" || true; }

# counter NAME: a counter of the locality API.
counter() { api_locality | grep -o "\"$1\":[0-9]*" | cut -d: -f2 || true; }

# ws_now: the working set's file names, sorted, each followed by a space.
ws_now() {
    api_locality | grep -o '"working_set":\[[^]]*\]' | grep -o '"[^"]*\.dat"' | tr -d '"' | sort | tr '\n' ' ' || true
}

# gets FILE: how many times locusd served download/FILE.
gets() { grep -c "GET download/$1[: ]" "$LOCUSD_LOG" || true; }

# first_files WHERE: the file of each instance matching WHERE, in send order.
first_files() {
    sql "$proj" "SELECT substr(j.name, 1, instr(j.name, '__') - 1) FROM instances i JOIN jobs j ON j.id=i.job_id
                 JOIN batches b ON b.id=j.batch_id WHERE $1 ORDER BY i.id"
}

# batch_all_done BATCH: fails unless every job of BATCH is done.
batch_all_done() {
    local bad
    bad=$(sql "$proj" "SELECT j.name||' state '||j.state FROM jobs j JOIN batches b ON b.id=j.batch_id
                       WHERE b.name='$1' AND j.state<>$JOB_DONE")
    [ -z "$bad" ] || fail "jobs of $1 not done: $bad"
}

add_big A.dat 2000000
add_big B.dat 3000000
add_batch bA A.dat "$NPER"
add_batch bB B.dat "$NPER"

start_locusd "$proj"
say "locusd serves $URL (pid $LOCUSD_PID)"

# ================= part 1: one client, two files =================
start_client C1 "$(key_of alice)" 1
# C2 attaches now (attaching takes a client ~10 s) but asks for no work
start_client C2 "$(key_of bob)" 1
bcmd C2 --project "$URL" nomorework >/dev/null 2>&1 || fail "boinccmd --project nomorework failed"
wait_first_rpc C1 C2
h1=$(client_hostid C1)
h2=$(client_hostid C2)
[ "$h1" != "$h2" ] || fail "both clients have host id $h1"
say "clients attached: C1 host $h1, C2 host $h2 (no more work)"

# every round while waiting: what C1's project folder holds, and which
# tasks it holds. Lines "A.dat B.dat tasks_of_bA tasks_of_bB".
: >"$TMP/samples"
sample() {
    echo "$(has_file C1 A.dat) $(has_file C1 B.dat) $(tasks_of C1 A.dat) $(tasks_of C1 B.dat)" >>"$TMP/samples"
}
wait_batch_done "$proj" bA 120 sample
wait_batch_done "$proj" bB 120 sample
wait_clients_idle 60
nc=$(sql "$proj" "SELECT p_ncpus FROM hosts WHERE id=$h1")
[ "$nc" = 1 ] || fail "client C1 reports $nc CPUs, not the 1 of its cc_config (test setup)"

batch_all_done bA
batch_all_done bB
n=$(sql "$proj" "SELECT count(*) FROM instances")
[ "$n" -eq $((2 * NPER)) ] || fail "$n instances for $((2 * NPER)) jobs of quorum 1 (an instance sent twice, or lost?)"
other=$(sql "$proj" "SELECT count(*) FROM instances WHERE host_id<>$h1")
[ "$other" -eq 0 ] || fail "$other instances on a host other than C1's ($h1)"

# send order: the files' jobs in two runs, FIRST x8 then SECOND x8
order=$(first_files 1 | uniq -c | awk '{printf "%s:%s ", $2, $1}')
first=${order%%:*}
case $first in A.dat) second=B.dat ;; B.dat) second=A.dat ;; *) fail "first job sent is of neither file: $order" ;; esac
[ "$order" = "$first:$NPER $second:$NPER " ] \
    || fail "jobs were not sent file by file (runs of file:count in send order): $order"
say "send order, file by file: $order"

# each file downloaded once although its jobs came in several replies
# (a reply's "sent job" lines come before its "[rpc] host H (user" line)
replies=$(awk -v h="$h1" '
    index($0, "[sched] host " h ": sent job ") { b = $0; sub(/.*\(batch /, "", b); sub(/,.*/, "", b); cur[b] = 1 }
    index($0, "[rpc] host " h " (user ") { for (b in cur) n[b]++; delete cur }
    END { printf "%d %d", n["bA"], n["bB"] }' "$LOCUSD_LOG")
read -r ra rb <<<"$replies"
[ "$ra" -ge 2 ] && [ "$rb" -ge 2 ] || fail "A.dat's jobs came in $ra replies, B.dat's in $rb: expected several each"
for f in A.dat B.dat; do
    g=$(gets "$f")
    [ "$g" -eq 1 ] || fail "$f was downloaded $g times, expected once: $(grep "GET download/$f" "$LOCUSD_LOG" | head -n 5)"
done
# jobs of a file after its first reply were sent because the host holds
# it: at most one reply's worth of each file counts as "sent new file"
held=$(counter sent_from_held)
new=$(counter sent_new_file)
fb=$(counter sent_fallback)
[ -n "$held" ] && [ -n "$new" ] && [ -n "$fb" ] || fail "GET /api/v1/locality lacks the counters: $(api_locality)"
[ $((held + new + fb)) -eq $((2 * NPER)) ] && [ "$fb" -eq 0 ] && [ "$new" -le $((2 * PER_RPC)) ] \
    || fail "locality counters: sent_new_file=$new sent_from_held=$held sent_fallback=$fb; expected $((2 * NPER)) in all, none by fallback, at most $((2 * PER_RPC)) for new files"
say "each file downloaded once, its jobs in several replies (A.dat $ra, B.dat $rb); sent_new_file=$new sent_from_held=$held sent_fallback=$fb"

# deletes: only once all the file's jobs were sent, and heard by the client
for f in A.dat B.dat; do
    b=b${f%.dat}
    last_sent=$(grep -n "\[sched\] host $h1: sent job .*(batch $b," "$LOCUSD_LOG" | tail -n 1 | cut -d: -f1)
    first_del=$(grep -n "\[sched\] host $h1: delete $f " "$LOCUSD_LOG" | head -n 1 | cut -d: -f1)
    [ -n "$last_sent" ] || fail "no 'sent job' line of batch $b in locusd's log"
    [ -n "$first_del" ] || fail "locusd never told C1 to delete $f"
    [ "$first_del" -gt "$last_sent" ] \
        || fail "locusd told C1 to delete $f (log line $first_del) before the last job of $f was sent (line $last_sent)"
    grep -q "request to delete file $f" "${CLIENT_DIR[C1]}/client.log" \
        || fail "client C1 never logged the server's request to delete $f"
done
say "C1 was told to delete each file after the file's last job was sent, and logged both requests"

# while it ran: the first file on the client while it computed its jobs;
# then gone while the client computed the second file's jobs, that file there
if [ "$first" = A.dat ]; then c1=1 c2=2 t1=3 t2=4; else c1=2 c2=1 t1=4 t2=3; fi
awk -v a=$c1 -v t=$t1 '$a == 1 && $t > 0 { ok = 1 } END { exit !ok }' "$TMP/samples" \
    || fail "never saw $first on C1 while it held $first's tasks (samples \"A B tasksA tasksB\": $(tr '\n' ',' <"$TMP/samples"))"
awk -v a=$c1 -v b=$c2 -v t=$t1 -v u=$t2 '$a == 0 && $b == 1 && $t == 0 && $u > 0 { ok = 1 } END { exit !ok }' "$TMP/samples" \
    || fail "never saw C1 without $first but with $second while computing $second's jobs (samples \"A B tasksA tasksB\": $(tr '\n' ',' <"$TMP/samples"))"
files_gone C1 A.dat B.dat
say "PART 1 OK: $first left C1 while it computed $second's jobs; no file left at the end ($(wc -l <"$TMP/samples") samples)"

# ================= part 2: a second host starts on another file =================
bcmd C2 --project "$URL" allowmorework >/dev/null 2>&1 || fail "boinccmd --project allowmorework failed"
rpcs() { grep -c "\[rpc\] host $h2 (user bob): .* asked [1-9]" "$LOCUSD_LOG" || true; }
r0=$(rpcs)
client_update C2
for i in $(seq 40); do [ "$(rpcs)" -gt "$r0" ] && break; sleep 0.5; done
[ "$(rpcs)" -gt "$r0" ] || fail "client C2 asked for no work within 20 s of allowmorework"
bcmd C1 --set_network_mode never 0 >/dev/null 2>&1 || fail "boinccmd --set_network_mode failed"
bcmd C2 --set_network_mode never 0 >/dev/null 2>&1 || fail "boinccmd --set_network_mode failed"
sleep 2   # an RPC under way when the network was cut ends
add_big C.dat 1000000
add_big D.dat 1000000
add_batch bC C.dat 10
add_batch bD D.dat 10
say "C2 asked for work (active); clients off the network; batches bC and bD created"

# two active hosts, one result per job: a working set of two files
ws=
for i in $(seq 40); do
    ws=$(ws_now)
    [ "$ws" = "C.dat D.dat " ] && break
    sleep 0.5
done
[ "$ws" = "C.dat D.dat " ] || fail "the working set for two active hosts is '$ws', expected C.dat and D.dat"
say "working set for two active hosts: $ws"

bcmd C1 --set_network_mode auto 0 >/dev/null 2>&1 || fail "boinccmd --set_network_mode failed"
client_update C1
for i in $(seq 100); do [ "$(client_ntasks C1)" -gt 0 ] && break; sleep 0.2; done
[ "$(client_ntasks C1)" -gt 0 ] || fail "client C1 got no task of bC/bD within 20 s"
if [ "$(tasks_of C1 C.dat)" -gt 0 ]; then f1=C.dat f2=D.dat; else f1=D.dat f2=C.dat; fi
# the file C1 holds left the working set; the other one is still open
ws=$(ws_now)
[ "$ws" = "$f2 " ] || fail "C1 started on $f1; the working set is then '$ws', expected only $f2 (hosts' dcf: $(sql "$proj" "SELECT group_concat(dcf, ' ') FROM hosts"))"
say "C1 started on $f1; working set now: $ws"
bcmd C2 --set_network_mode auto 0 >/dev/null 2>&1 || fail "boinccmd --set_network_mode failed"
client_update C2
wait_batch_done "$proj" bC 150
wait_batch_done "$proj" bD 150
wait_clients_idle 60

s1=$(first_files "b.name IN ('bC', 'bD') AND i.host_id=$h1" | head -n 1)
s2=$(first_files "b.name IN ('bC', 'bD') AND i.host_id=$h2" | head -n 1)
[ "$s1" = "$f1" ] || fail "part 2: C1's first job is of '$s1', but its first tasks were of $f1"
[ "$s2" = "$f2" ] || fail "part 2: C2 started on '$s2', not on $f2, the working set's file (C1 holds $f1)"
# C1 still got jobs of its file after C2's first job: both held files at once
c2first=$(sql "$proj" "SELECT min(id) FROM instances WHERE host_id=$h2")
later=$(sql "$proj" "SELECT count(*) FROM instances i JOIN jobs j ON j.id=i.job_id
                     WHERE i.host_id=$h1 AND i.id>$c2first AND j.name LIKE '$f1%'")
[ "$later" -gt 0 ] || fail "part 2: C1 got no job of $f1 after C2's first job: the hosts did not work concurrently"
batch_all_done bC
batch_all_done bD
files_gone C1 C.dat D.dat
files_gone C2 C.dat D.dat
per=$(sql "$proj" "SELECT i.host_id||':'||substr(j.name, 1, instr(j.name, '__') - 1)||'x'||count(*) FROM instances i
                   JOIN jobs j ON j.id=i.job_id JOIN batches b ON b.id=j.batch_id WHERE b.name IN ('bC', 'bD')
                   GROUP BY i.host_id, substr(j.name, 1, instr(j.name, '__') - 1) ORDER BY i.host_id" | tr '\n' ' ')
say "PART 2 OK: C1 started on $f1, then C2 on $f2 ($later more $f1 jobs to C1 after that); jobs per host: $per"

stop_client C1
stop_client C2
stop_locusd
"$LOCUS" db check "$proj" >"$TMP/check.out" 2>&1 || fail "locus db check: $(cat "$TMP/check.out")"
say "PASS: total $(elapsed)s"
