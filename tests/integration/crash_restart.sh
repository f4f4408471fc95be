#!/usr/bin/env bash
# crash_restart: real BOINC clients compute a batch of 40 jobs of a few
# seconds each (min_quorum 2) while locusd is killed with SIGKILL four
# times (right after the first reports; mid-batch just as an RPC sends jobs;
# later just as an RPC takes a report; near the end just as a job is
# assimilated, i.e. ends) and restarted each time on the same port. The
# batch must complete with:
#  - no job lost: 40 jobs, all done, none failed;
#  - no instance given to two hosts, and at most one instance per (job, host);
#  - no job with more instances than it needed, beyond replacements of
#    errors and timeouts (the counts are printed);
#  - no acknowledged report forgotten: every task a client logged as acked
#    ("got ack for task JOB__JOBID_SEQ") is in the store, over, with an
#    outcome, on that client's host;
#  - the uploads of every ended job deleted;
#  - `locus db check` OK, and locusd never leaving a sanitizer report.
#
# Three clients (three users), not two: an instance whose reply a crash
# cut off is unknown to its client, so it only comes back by timing out
# (delay bound 60 s here), and its replacement needs a host that has no
# instance of that job yet. With two hosts such a job could never end.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

NJOBS=40
QUORUM=2
BATCH=crash
proj=$TMP/proj

make_project "$proj" alice bob carol
# few jobs buffered per host: many RPCs (more moments to crash in) and no
# buffered task anywhere near its deadline
set_config "$proj" max_wus_in_progress 2
# no end-of-batch spares: they add instances of their own, and the count of
# instances beyond replacements is what shows a crash sending a job twice
set_config "$proj" end_of_batch_replication 0
# ~3 s per job (100 sleeps of 30 ms), checkpointing as it goes
echo '{"cmdline": "--iterations 300000 --sleep-ms 30 --seed {n}", "inputs": ["in.dat=in"], "flops": 3e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count "$NJOBS" --input-template "$TMP/tmpl.json" --name "$BATCH" \
    --quorum "$QUORUM" --delay-bound 60 >/dev/null || fail "locus batch create failed"

start_locusd "$proj"
say "locusd serves $URL (pid $LOCUSD_PID)"
start_client A "$(key_of alice)"
start_client B "$(key_of bob)"
start_client C "$(key_of carol)"
say "three clients attached"

KILLS=0
declare -a KILL_AT=()

# crash_now WHY: SIGKILL locusd, restart it on the same port after a short
# pause, and cut the clients' backoffs.
crash_now() {
    kill9_locusd
    KILLS=$((KILLS + 1))
    KILL_AT+=("+$(elapsed)s ($1)")
    say "kill -9 #$KILLS: $1"
    sleep "0.$((RANDOM % 10))"
    start_locusd "$proj"
    say "locusd restarted (pid $LOCUSD_PID) on port $PORT"
    local n
    for n in "${_CLIENTS[@]}"; do client_update "$n"; done
}

# on_log_line PATTERN: returns as soon as locusd logs a line matching
# PATTERN (or after 40 s), so that the kill lands inside an RPC: between
# the decision and the commit, or between the commit and the reply.
on_log_line() {
    LOG_HIT=yes
    timeout 40 grep -m1 -q -e "$1" < <(tail --pid="$LOCUSD_PID" -n0 -F "$LOCUSD_LOG" 2>/dev/null) || LOG_HIT=no
}

# Called every round while waiting: the four crash moments.
crash_hook() {
    local over ndone
    case $KILLS in
    0)  over=$(sql "$proj" "SELECT count(*) FROM instances WHERE state=$INST_OVER" 2>/dev/null || echo 0)
        [ "$over" -gt 0 ] && crash_now "right after the first reports ($over instances over)" ;;
    1)  ndone=$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_DONE" 2>/dev/null || echo 0)
        if [ "$ndone" -ge $((NJOBS / 2)) ]; then
            on_log_line '\[sched\] host [0-9]*: sent job'
            crash_now "mid-batch ($ndone jobs done), just after jobs were sent (seen: $LOG_HIT)"
        fi ;;
    2)  ndone=$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_DONE" 2>/dev/null || echo 0)
        if [ "$ndone" -ge $((NJOBS * 5 / 8)) ]; then
            on_log_line '\[rpc\] host [0-9]* reported'
            crash_now "later ($ndone jobs done), just after a report was taken (seen: $LOG_HIT)"
        fi ;;
    3)  ndone=$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_DONE" 2>/dev/null || echo 0)
        if [ "$ndone" -ge $((NJOBS * 3 / 4)) ]; then
            on_log_line '\[valid\] job .* assimilated into'
            # the job's end is committed within milliseconds; its uploads
            # are deleted at the next maintenance round (<= transition_period)
            sleep "0.$((RANDOM % 9 + 1))"
            crash_now "near the end ($ndone jobs done), 0.1-0.9 s after a job was assimilated (seen: $LOG_HIT)"
        fi ;;
    esac
    return 0
}

wait_batch_done "$proj" "$BATCH" 400 crash_hook
t_done=$(elapsed)
[ "$KILLS" -ge 2 ] || fail "locusd was killed only $KILLS times before the batch ended"

# every task reported and acknowledged before stopping the clients
wait_clients_idle 60
# the uploads of ended jobs are deleted, crashes or not
left=$(uploads_left "$proj")
orphans=
[ "$left" -eq 0 ] || orphans="$left uploads of ended jobs never deleted (jobs that ended just before a kill?): $(cd "$proj/upload" && find . -type f | head -n 6 | tr '\n' ' ')"
declare -A HOST
for n in "${_CLIENTS[@]}"; do HOST[$n]=$(client_hostid "$n"); stop_client "$n"; done
stop_locusd
say "clients and locusd stopped; hosts: A=${HOST[A]} B=${HOST[B]} C=${HOST[C]}"

# ---- no job lost ----
bid=$(sql "$proj" "SELECT id FROM batches WHERE name='$BATCH'")
n=$(sql "$proj" "SELECT count(*) FROM jobs WHERE batch_id=$bid")
[ "$n" -eq "$NJOBS" ] || fail "$n jobs in the store, expected $NJOBS"
bad=$(sql "$proj" "SELECT name||' state '||state||' error_mask '||error_mask FROM jobs WHERE batch_id=$bid AND state<>$JOB_DONE")
[ -z "$bad" ] || fail "jobs not done: $bad"
bad=$(sql "$proj" "SELECT j.name FROM jobs j LEFT JOIN instances i ON i.id=j.canonical_id AND i.job_id=j.id
                   WHERE j.batch_id=$bid AND (i.id IS NULL OR i.outcome<>$OUTCOME_SUCCESS)")
[ -z "$bad" ] || fail "jobs without a successful canonical instance: $bad"
for jname in $(sql "$proj" "SELECT name FROM jobs WHERE batch_id=$bid"); do
    [ -f "$proj/results/$BATCH/$jname/out" ] || fail "job $jname: output not assimilated"
done

# ---- instances: one per (job, host), none left in progress ----
dup=$(sql "$proj" "SELECT 'job '||job_id||' host '||host_id||': '||count(*) FROM instances
                   GROUP BY job_id, host_id HAVING count(*)>1")
[ -z "$dup" ] || fail "jobs with more than one instance on one host: $dup"
dup=$(sql "$proj" "SELECT job_id||'_'||seq FROM instances GROUP BY job_id, seq HAVING count(*)>1")
[ -z "$dup" ] || fail "instance names given twice: $dup"
inprog=$(sql "$proj" "SELECT count(*) FROM instances WHERE state<>$INST_OVER")
[ "$inprog" -eq 0 ] || fail "$inprog instances are not over"

# ---- no more instances than needed, beyond replacements ----
# a client error, no reply and outputs missing call for a replacement;
# anything else beyond the quorum is an instance too many.
REPLACEABLE=$OUTCOME_CLIENT_ERROR,$OUTCOME_NO_REPLY,$OUTCOME_VALIDATE_ERROR
extra=$(sql "$proj" "SELECT 'job '||job_id||': '||count(*)||' instances, '||sum(outcome IN ($REPLACEABLE))||' replaceable'
                     FROM instances GROUP BY job_id HAVING count(*) - sum(outcome IN ($REPLACEABLE)) > $QUORUM")
ninst=$(sql "$proj" "SELECT count(*) FROM instances")
outcomes=$(sql "$proj" "SELECT 'outcome '||outcome||': '||count(*) FROM instances GROUP BY outcome" | tr '\n' ' ')
nrepl=$(sql "$proj" "SELECT count(*) FROM instances WHERE outcome IN ($REPLACEABLE)")
njobs_repl=$(sql "$proj" "SELECT count(DISTINCT job_id) FROM instances WHERE outcome IN ($REPLACEABLE)")
say "instances: $ninst for $NJOBS jobs (quorum $QUORUM: $((NJOBS * QUORUM)) needed); $outcomes"
say "replacements: $nrepl instances of $njobs_repl jobs ended in error or timeout"
[ -z "$extra" ] || fail "jobs with more instances than needed beyond replacements: $extra"

# ---- no acknowledged report forgotten ----
nacked=0
for n in "${_CLIENTS[@]}"; do
    h=${HOST[$n]}
    [ -n "$h" ] || fail "client $n has no host id"
    while read -r name; do
        [[ $name =~ ^${BATCH}_[0-9]+__([0-9]+)_([0-9]+)$ ]] \
            || fail "client $n: acked task '$name' does not look like JOB__JOBID_SEQ (JOB: ${BATCH}_N)"
        row=$(sql "$proj" "SELECT state||' '||outcome||' '||host_id FROM instances
                           WHERE job_id=${BASH_REMATCH[1]} AND seq=${BASH_REMATCH[2]}")
        [ -n "$row" ] || fail "client $n: task $name was acknowledged but the store has no such instance"
        read -r st oc hh <<<"$row"
        [ "$st" = "$INST_OVER" ] && [ "$oc" != "$OUTCOME_INIT" ] || fail "client $n: task $name was acknowledged but is state $st outcome $oc in the store"
        [ "$hh" = "$h" ] || fail "client $n (host $h): acknowledged task $name belongs to host $hh"
        nacked=$((nacked + 1))
    done < <(client_acked "$n")
done
# and every success in the store was acknowledged to its client
nsucc=$(sql "$proj" "SELECT count(*) FROM instances WHERE outcome=$OUTCOME_SUCCESS")
say "$nacked acknowledged reports, all in the store as over; $nsucc successes in the store"
[ "$nacked" -ge "$nsucc" ] || fail "$nsucc successes in the store but only $nacked acks in the clients' logs"

"$LOCUS" db check "$proj" >"$TMP/check.out" 2>&1 || fail "locus db check: $(cat "$TMP/check.out")"
[ -z "$orphans" ] || fail "$orphans"
say "locus db check: $(tail -n 1 "$TMP/check.out")"
say "kills: ${KILL_AT[*]}"
say "PASS: batch done at +${t_done}s after $KILLS crashes, total $(elapsed)s"
