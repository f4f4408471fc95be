#!/usr/bin/env bash
# cursor_boinc: a cursor batch over a sequence of 20 small sticky files,
# computed by two real BOINC clients (one CPU each). Job k (1..19) reads
# files F01..F20 number k and k+1; `locus batch create --cursors 2` cuts
# the 19 jobs into two cursors of equal work (jobs 1-9 and 10-19). With
# quorum 1 and at most 2 jobs per reply it proves that:
#  - the two clients join different teams (an empty team first), as
#    GET /api/v1/cursors shows;
#  - each cursor's jobs go out in increasing job number, whoever takes them;
#  - each client starts in its own cursor and switches at most once: when
#    its cursor has nothing left to send, it helps the other;
#  - a client keeps its files between jobs: each file is downloaded once per
#    client that ran a job reading it (again only after it was told to
#    delete it), and neither client gets all 20;
#  - a client is told to delete a file once no unfinished job of its cursor
#    reads it (its log has the request: at its next request after that),
#    and no sequence file is left on
#    either client at the end;
#  - the store's cursors end finished (first_unfinished_job_num past the
#    range, remaining_credit 0), the batch is done, each job ran once, and
#    `locus db check` is happy; locusd stops cleanly.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

NFILES=20
proj=$TMP/proj

make_project "$proj" alice bob
set_config "$proj" max_wus_to_send 2
set_config "$proj" next_rpc_delay 2

: >"$TMP/jobs.jsonl"
for k in $(seq "$NFILES"); do
    f=$(printf 'F%02d.dat' "$k")
    head -c 200000 /dev/urandom >"$TMP/$f"
    "$LOCUS" file add "$proj" "$TMP/$f" --sticky --report-on-rpc >/dev/null || fail "locus file add $f failed"
    [ "$k" -lt "$NFILES" ] || break
    g=$(printf 'F%02d.dat' $((k + 1)))
    printf '{"name": "seq_%d", "cmdline": "--iterations 200000 --sleep-ms 5 --seed %d", "inputs": ["%s=in", "%s=in2"], "flops": 1e9}\n' \
        "$k" "$k" "$f" "$g" >>"$TMP/jobs.jsonl"
done
out=$("$LOCUS" batch create "$proj" --app worker --jobs "$TMP/jobs.jsonl" --name cb --cursors 2 --delay-bound 3600) \
    || fail "locus batch create --cursors 2 failed"
case $out in *"19 jobs in 2 cursors"*) ;; *) fail "batch create said: $out" ;; esac
ranges=$(sql "$proj" "SELECT first_job_num||'-'||last_job_num FROM cursors ORDER BY first_job_num" | tr '\n' ' ')
case $ranges in "1-9 10-19 " | "1-10 11-19 ") ;; *) fail "cursor ranges $ranges, expected 1-9 10-19 or 1-10 11-19 (equal work)" ;; esac
nums=$(sql "$proj" "SELECT count(*) FROM jobs WHERE job_num = CAST(substr(name, 5) AS INTEGER) AND cursor_id IS NOT NULL")
[ "$nums" -eq 19 ] || fail "$nums of 19 jobs carry their cursor and job number"

start_locusd "$proj"
start_client C1 "$(key_of alice)" 1
start_client C2 "$(key_of bob)" 1
wait_first_rpc C1 C2
h1=$(client_hostid C1)
h2=$(client_hostid C2)
say "clients attached: C1 host $h1, C2 host $h2"
# the API's view: one cursor batch, two cursors, one client in each team
api=$(curl -sf --max-time 5 "http://127.0.0.1:$PORT/api/v1/cursors") || fail "GET /api/v1/cursors failed"
teams=$(grep -o '"team":\[[0-9,]*\]' <<<"$api" | sort | tr '\n' ' ')
[ "$teams" = "\"team\":[$h1] \"team\":[$h2] " ] || [ "$teams" = "\"team\":[$h2] \"team\":[$h1] " ] \
    || fail "teams per the API: $teams, expected one client in each cursor ($api)"

wait_batch_done "$proj" cb 240
wait_clients_idle 60

n=$(sql "$proj" "SELECT count(*) FROM instances")
[ "$n" -eq 19 ] || fail "$n instances for 19 jobs of quorum 1"

# send order per cursor: job numbers increase with instance ids
for c in $(sql "$proj" "SELECT id FROM cursors"); do
    order=$(sql "$proj" "SELECT j.job_num FROM instances i JOIN jobs j ON j.id=i.job_id WHERE j.cursor_id=$c ORDER BY i.id" | tr '\n' ' ')
    sorted=$(tr ' ' '\n' <<<"$order" | sed '/^$/d' | sort -n | tr '\n' ' ')
    [ "$order" = "$sorted" ] || fail "cursor $c's jobs went out in the order $order"
done

# per host: the cursors of its jobs in send order, as runs "cursor:count"
runs() {
    sql "$proj" "SELECT j.cursor_id FROM instances i JOIN jobs j ON j.id=i.job_id WHERE i.host_id=$1 ORDER BY i.id" \
        | uniq -c | awk '{printf "%s:%s ", $2, $1}'
}
r1=$(runs "$h1")
r2=$(runs "$h2")
say "cursors of the jobs sent, in order: C1 $r1; C2 $r2"
[ "$(wc -w <<<"$r1")" -le 2 ] && [ "$(wc -w <<<"$r2")" -le 2 ] \
    || fail "a client went back and forth between cursors: C1 $r1; C2 $r2"
[ -n "$r1" ] && [ -n "$r2" ] && [ "${r1%%:*}" != "${r2%%:*}" ] \
    || fail "the clients did not start in different cursors: C1 $r1; C2 $r2"

# files: downloaded once per client that needed them, not all to both
need=$(sql "$proj" "SELECT count(*) FROM (SELECT DISTINCT i.host_id, f.name FROM instances i
                    JOIN jobs j ON j.id=i.job_id JOIN files f ON j.inputs LIKE f.id||':%' OR j.inputs LIKE '%,'||f.id||':%')")
gets=$(grep -c 'GET download/F[0-9]*\.dat' "$LOCUSD_LOG" || true)
# a client fetches a file again only after it was told to delete it: a
# boundary file of its cursor, deleted once its cursor's jobs were done
# with it, read again by a job of the cursor it then went to help
again=0
for c in C1 C2; do
    n=$(awk '/Finished download of F[0-9]+\.dat/ { f = $NF; if (have[f]) bad = 1; have[f] = 1; if (seen[f]++) again++ }
             /request to delete file F[0-9]+\.dat/ { have[$NF] = 0 }
             END { print bad ? "bad" : again + 0 }' "${CLIENT_DIR[$c]}/client.log")
    [ "$n" != bad ] || fail "$c downloaded a sequence file it still held"
    again=$((again + n))
done
fetched=$(cat "${CLIENT_DIR[C1]}/client.log" "${CLIENT_DIR[C2]}/client.log" | grep -c 'Finished download of F[0-9]*\.dat' || true)
[ "$fetched" -eq "$gets" ] || fail "the clients logged $fetched downloads of sequence files, locusd served $gets"
[ "$gets" -eq $((need + again)) ] \
    || fail "$gets downloads of sequence files for $need (client, file) pairs that ran a job reading them and $again fetched again after a delete"
[ "$need" -lt $((2 * NFILES)) ] || fail "both clients needed every file ($need downloads): cursors kept nothing apart"
say "$gets downloads of sequence files (every file to both clients would be $((2 * NFILES)))"

# deletes: heard by the clients, and nothing left behind
dels=$(cat "${CLIENT_DIR[C1]}/client.log" "${CLIENT_DIR[C2]}/client.log" | grep -c 'request to delete file F' || true)
[ "$dels" -gt 0 ] || fail "no client logged a request to delete a sequence file"
# a file the other client's last job still read when this one last asked
# is deleted at its next request: it gets one, then nothing may be left
for c in C1 C2; do
    for i in $(seq 30); do
        left=$(ls "$(client_project_dir "$c")" 2>/dev/null | grep -c '^F[0-9]*\.dat$' || true)
        [ "$left" -eq 0 ] && break
        [ $((i % 10)) -ne 1 ] || client_update "$c"
        sleep 1
    done
    [ "$left" -eq 0 ] || fail "$left sequence files left on $c: $(ls "$(client_project_dir "$c")")"
done
say "$dels delete requests logged by the clients; no sequence file left on either"

bad=$(sql "$proj" "SELECT id FROM cursors WHERE first_unfinished_job_num<>last_job_num+1 OR remaining_credit<>0")
[ -z "$bad" ] || fail "cursors not finished in the store: $(sql "$proj" "SELECT * FROM cursors")"
team=$(sql "$proj" "SELECT count(*) FROM batch_hosts")
[ "$team" -ge 1 ] || fail "no team member recorded in batch_hosts"

stop_locusd
"$LOCUS" db check "$proj" >/dev/null || fail "locus db check failed"
say "ok"
