#!/usr/bin/env bash
# adaptive_boinc: adaptive replication with real BOINC clients, one of which
# returns wrong results. Clients A and C compute honestly; W runs the app
# through its own build (app_info.xml), which runs the worker and then
# appends a line to its output: a wrong result, with exit status 0; W takes
# no new tasks after its first (why below). The batch is made with
# --quorum 2 --adaptive, so a job starts at one instance and needs 2
# agreeing results once it goes to a host not trusted alone; with
# <adaptive_trust_valid>2</adaptive_trust_valid> and spot checks at their
# floor, a host whose last 2 results agreed with another host's gets jobs
# alone (still replicated at 1 / its streak, BOINC's rate).
# Once the batch is done:
#  - every job is done, its canonical result a valid one of A or C, and the
#    output kept is byte for byte the worker's: none of W's;
#  - W's results are all invalid; its record says so, with a streak of 0;
#    every job it had was replicated and settled by A's and C's results
#    (an honest host that disagreed with W is not trusted until the third
#    result's verdict, and keeps its streak after);
#  - some jobs were done by one instance alone, each sent to A or C after
#    at least 2 of that host's results had agreed with another host's; a
#    job kept its target of 1 exactly when it was sent once;
#  - credit went to valid results only, the lone ones included: none to W.
# Run without --adaptive, every job takes 2 results and the test fails.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

NJOBS=16
TRUST=2
BATCH=ad
WRONG="appended by W's own build"
proj=$TMP/proj

make_project "$proj" alice carol wendy
set_config "$proj" adaptive_trust_valid "$TRUST"
set_config "$proj" adaptive_spot_check 0.001
# two tasks per CPU at a time: the jobs go out over several rounds of RPCs,
# so that hosts trusted after the first rounds still find fresh jobs (the
# first host to ask would otherwise take them all, untrusted)
set_config "$proj" max_wus_in_progress 2
# no end-of-batch spares: a job's instances must be those its target says
set_config "$proj" end_of_batch_replication 0
start_locusd "$proj"
own_build_template
"$LOCUS" batch create "$proj" --app worker --count "$NJOBS" --input-template "$TMP/own.json" --name "$BATCH" \
    --quorum 2 --adaptive --delay-bound 300 >/dev/null || fail "locus batch create failed"

# W's own build, put in its project folder before it attaches (the client
# then reads the app_info.xml at once, no restart): the worker, then a line
# appended to the output, whose name in the slot is a BOINC link file
CLIENT_DIR[W]=$TMP/client-W   # as start_client sets it
pdir=$(client_project_dir W)
mkdir -p "$pdir"
own_build "$pdir"
cat >"$pdir/myworker" <<EOF
#!/bin/sh
"$WORKER" "\$@" || exit \$?
f=\$(sed -n 's|.*<soft_link>\(.*\)</soft_link>.*|\1|p' out)
echo "$WRONG" >>"\${f:-out}"
EOF
chmod 755 "$pdir/myworker"
# W first, so that its job is among the first; A and C with 2 CPUs
start_client W "$(key_of wendy)" 1
start_client A "$(key_of alice)" 2
start_client C "$(key_of carol)" 2
# W takes no new tasks once it has its first: with 16 jobs going out a few
# a round (a round is ~14 s: a BOINC client waits 5 s between RPCs), each
# job W touches takes three results, and A or C is not trusted alone while
# its result that disagreed with W's awaits the third's verdict: W asking
# all along spent the batch replicated before A and C were trusted (no
# job alone in one run of two). W's results are reported and judged all
# the same.
for _ in $(seq 150); do [ "$(client_ntasks W)" -gt 0 ] && break; sleep 0.2; done
[ "$(client_ntasks W)" -gt 0 ] || fail "client W got no task in 30 s"
bcmd W --project "$URL" nomorework >/dev/null 2>&1 || fail "client W: boinccmd nomorework failed"
say "A and C attached, and W with its own build, which spoils every output: it holds $(client_ntasks W) task(s)"
wait_batch_done "$proj" "$BATCH" 240
wait_clients_idle 60
hA=$(client_hostid A)
hC=$(client_hostid C)
hW=$(client_hostid W)
for n in A C W; do stop_client "$n"; done
stop_locusd
[ -n "$hA" ] && [ -n "$hC" ] && [ -n "$hW" ] || fail "host ids: A='$hA' C='$hC' W='$hW'"
grep -q "<platform_name>anonymous</platform_name>" "${CLIENT_DIR[W]}"/sched_request_*.xml \
    || fail "client W did not ask with its app_info.xml"

# ---- every job done by a valid result of A or C: the worker's output ----
bid=$(sql "$proj" "SELECT id FROM batches WHERE name='$BATCH'")
n=$(sql "$proj" "SELECT count(*) FROM jobs WHERE batch_id=$bid AND state=$JOB_DONE")
[ "$n" -eq "$NJOBS" ] || fail "$n of $NJOBS jobs done: $(batch_counts "$proj" "$BATCH")"
bad=$(sql "$proj" "SELECT j.name FROM jobs j LEFT JOIN instances i ON i.id=j.canonical_id AND i.job_id=j.id
                   WHERE j.batch_id=$bid AND (i.id IS NULL OR i.outcome<>$OUTCOME_SUCCESS
                         OR i.validate_state<>$VALIDATE_VALID OR i.host_id NOT IN ($hA, $hC))")
[ -z "$bad" ] || fail "jobs without a valid canonical result of A or C: $bad"
mkdir "$TMP/ref"
cp "$TMP/in.dat" "$TMP/ref/in"
while IFS='|' read -r jname cmdline; do
    res=$proj/results/$BATCH/$jname/out
    [ -f "$res" ] || fail "job $jname: $res missing"
    # shellcheck disable=SC2086 # the cmdline is split into words, as the client does
    (cd "$TMP/ref" && rm -f out && "$WORKER" $cmdline 2>/dev/null) || fail "job $jname: the worker failed here"
    cmp -s "$res" "$TMP/ref/out" || fail "job $jname: $res is not the worker's output: $(tail -n 1 "$res")"
done < <(sql "$proj" "SELECT name, cmdline FROM jobs WHERE batch_id=$bid")
if grep -rqF "$WRONG" "$proj/results"; then
    fail "W's wrong output reached the results: $(grep -rlF "$WRONG" "$proj/results" | tr '\n' ' ')"
fi
say "all $NJOBS jobs done; each output kept is A's or C's, byte for byte the worker's"

# ---- W: every result invalid, never trusted, never alone ----
nw=$(sql "$proj" "SELECT count(*) FROM instances WHERE host_id=$hW AND outcome=$OUTCOME_SUCCESS")
[ "$nw" -ge 1 ] || fail "W returned no result"
# (a task W still held when the batch ended was not needed)
bad=$(sql "$proj" "SELECT id||':'||app_version_id||':'||outcome||':'||validate_state FROM instances
                   WHERE host_id=$hW AND app_version_id<>-1
                      OR host_id=$hW AND outcome=$OUTCOME_SUCCESS AND validate_state<>$VALIDATE_INVALID
                      OR host_id=$hW AND outcome NOT IN ($OUTCOME_SUCCESS, $OUTCOME_DIDNT_NEED)")
[ -z "$bad" ] || fail "W's instances not all invalid results of its own build (id:version:outcome:validate): $bad"
row=$(sql "$proj" "SELECT ninvalid, nvalid, nagreed, consecutive_valid FROM host_app_versions WHERE host_id=$hW")
[ "$row" = "$nw|0|0|0" ] || fail "W's record: '$row' (ninvalid|nvalid|nagreed|consecutive_valid), $nw invalid results"
# each job W had was replicated, and settled by A's and C's agreeing results
bad=$(sql "$proj" "SELECT j.name||' target '||j.target_nresults FROM jobs j WHERE j.batch_id=$bid
                   AND j.id IN (SELECT job_id FROM instances WHERE host_id=$hW)
                   AND (j.target_nresults<2 OR (SELECT count(*) FROM instances i WHERE i.job_id=j.id
                        AND i.host_id IN ($hA, $hC) AND i.validate_state=$VALIDATE_VALID)<>2)")
[ -z "$bad" ] || fail "jobs of W not replicated and settled by A and C: $bad"
bad=$(sql "$proj" "SELECT host_id||': '||ninvalid||' invalid, '||nerror||' errors' FROM host_app_versions
                   WHERE host_id IN ($hA, $hC) AND (ninvalid<>0 OR nerror<>0)")
[ -z "$bad" ] || fail "honest hosts with invalid results or errors: $bad"
say "W returned $nw wrong result(s), all invalid, its streak 0; each job it had was settled by A and C"

# ---- jobs done alone, by trusted hosts ----
lone=$(sql "$proj" "SELECT count(*) FROM jobs j WHERE j.batch_id=$bid
                    AND (SELECT count(*) FROM instances i WHERE i.job_id=j.id)=1")
[ "$lone" -gt 0 ] || fail "no job was done by one instance alone (host|streak|agreed: $(sql "$proj" \
    "SELECT host_id||'|'||consecutive_valid||'|'||nagreed FROM host_app_versions" | tr '\n' ' '))"
# a job kept its target of 1 exactly when it was sent once
bad=$(sql "$proj" "SELECT j.name||' target '||j.target_nresults||', '||count(i.id)||' instances' FROM jobs j
                   JOIN instances i ON i.job_id=j.id WHERE j.batch_id=$bid GROUP BY j.id
                   HAVING (count(i.id)=1) <> (j.target_nresults=1)")
[ -z "$bad" ] || fail "jobs whose target does not say whether they were sent alone: $bad"
# each went to A or C once TRUST of that host's results had agreed with
# another host's: received (so validated at the earliest) before it was sent
agreed="SELECT count(*) FROM instances a WHERE a.host_id=i.host_id AND a.validate_state=$VALIDATE_VALID
         AND a.received_time<=i.sent_time
         AND (SELECT count(*) FROM instances o WHERE o.job_id=a.job_id AND o.validate_state=$VALIDATE_VALID)>=2"
bad=$(sql "$proj" "SELECT j.name||' on host '||i.host_id||' after '||($agreed)||' agreed' FROM jobs j
                   JOIN instances i ON i.job_id=j.id WHERE j.batch_id=$bid AND j.target_nresults=1
                   AND (i.host_id NOT IN ($hA, $hC) OR ($agreed)<$TRUST)")
[ -z "$bad" ] || fail "jobs sent alone to a host not trusted: $bad"
bad=$(sql "$proj" "SELECT host_id||': '||nagreed FROM host_app_versions
                   WHERE host_id IN (SELECT i.host_id FROM instances i JOIN jobs j ON j.id=i.job_id
                                     WHERE j.batch_id=$bid AND j.target_nresults=1) AND nagreed<$TRUST")
[ -z "$bad" ] || fail "hosts with jobs alone and fewer than $TRUST agreed results (host: nagreed): $bad"
per=$(sql "$proj" "SELECT h.id||':'||count(i.id) FROM hosts h LEFT JOIN instances i ON i.host_id=h.id
                   AND i.job_id IN (SELECT id FROM jobs WHERE batch_id=$bid AND target_nresults=1) GROUP BY h.id" \
      | tr '\n' ' ')
say "$lone jobs done by one instance alone (host:jobs $per; A=$hA C=$hC W=$hW)"

# ---- credit: to valid results only, the lone ones included ----
bad=$(sql "$proj" "SELECT id||': '||credit FROM instances WHERE (validate_state=$VALIDATE_VALID) <> (credit>0)")
[ -z "$bad" ] || fail "instances whose credit does not match their validity (id: credit): $bad"
bad=$(sql "$proj" "SELECT h.id||': '||h.total_credit||' vs '||coalesce(sum(i.credit), 0) FROM hosts h
                   LEFT JOIN instances i ON i.host_id=h.id GROUP BY h.id
                   HAVING abs(h.total_credit - coalesce(sum(i.credit), 0)) > 1e-6 * (1 + h.total_credit)")
[ -z "$bad" ] || fail "hosts' credit is not their valid results' (host: total vs sum): $bad"
[ "$(sql "$proj" "SELECT total_credit FROM hosts WHERE id=$hW")" = 0.0 ] || fail "W's host was granted credit"
say "credit granted to valid results only, the $lone lone ones included; none to W"

"$LOCUS" db check "$proj" >"$TMP/check.out" 2>&1 || fail "locus db check: $(cat "$TMP/check.out")"
say "PASS: total $(elapsed)s"
