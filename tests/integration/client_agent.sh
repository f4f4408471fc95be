#!/usr/bin/env bash
# client_agent: locus-client (not the BOINC client) attached to locusd
# computes a batch of example-app jobs that checkpoint every second, while
#  - the agent is killed with SIGKILL mid-job and restarted: its apps die
#    with it, and the job resumes in its slot from its checkpoint (the app
#    says "resuming at iteration N", N close to the progress seen before the
#    kill);
#  - locusd is killed with SIGKILL and restarted on the same port;
#  - the control commands are used: status, tasks, projects, suspend (the
#    tasks quit), resume (they run again); then, after a clean stop and a
#    start with --leave-in-memory 1, suspend of the project (the apps are
#    stopped in memory) and resume;
#  - the CPU benchmark runs at the first start (briefly: --benchmark-seconds
#    0.5) and not at the restarts, and the scheduler requests report its
#    figures (p_fpops, p_iops), not the 1e9 assumed without one.
# Then every job must be validated, with exactly one instance each (quorum
# 1: none sent twice, none lost), every report acknowledged (the agent ends
# with no task), no sanitizer report in the agent's log, and a clean stop.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

NJOBS=6
BATCH=agent
proj=$TMP/proj
AGENT_DIR=$TMP/agent
AGENT_LOG=$TMP/agent.log
AGENT_OPTS=(--max-cpus 2 --retry-min 1 --retry-max 4 --checkpoint-period 1 --min-queue 60
            --debug cpu_sched,work_fetch,task,rpc)
D=$AGENT_DIR
. "$(dirname "$0")/lib/agent.sh"

make_project "$proj" alice
# ~8 s per job: 100 sleeps of 80 ms, a checkpoint about every second
echo '{"cmdline": "--iterations 200000 --sleep-ms 80 --seed {n}", "inputs": ["in.dat=in"], "flops": 8e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count "$NJOBS" --input-template "$TMP/tmpl.json" --name "$BATCH" \
    --quorum 1 --delay-bound 600 >/dev/null || fail "locus batch create failed"
start_locusd "$proj"
say "locusd serves $URL (pid $LOCUSD_PID)"

# ---- attach, and the control commands' errors ----
start_agent --benchmark-seconds 0.5
# the key on stdin, out of sight of ps
key_of alice | lc attach "$URL" - --share 50 || afail "attach failed"
if lc attach "$URL" "$(key_of alice)" 2>"$TMP/err"; then afail "a second attach of $URL succeeded"; fi
grep -q "already attached" "$TMP/err" || afail "second attach: unexpected message: $(cat "$TMP/err")"
if lc attach http://localhost x 2>/dev/null; then afail "attach accepted a URL without a final /"; fi
if "$AGENT" --dir "$TMP/nowhere" status 2>"$TMP/err"; then afail "status without a daemon succeeded"; fi
grep -q "no locus-client daemon" "$TMP/err" || afail "status without daemon: $(cat "$TMP/err")"
lc projects | grep -q "^$URL .*share=50" || afail "projects does not list $URL with share 50: $(lc projects)"
loose=$(find "$D" -type f -perm /077 -printf '%m %p\n' | head -n 3)
[ -z "$loose" ] || afail "the agent's files are readable by others (its state holds the key): $loose"
say "attached; control command errors checked"

# ---- the benchmark's figures in the request, and in locusd's store ----
for i in $(seq 40); do
    [ "$(sql "$proj" "SELECT count(*) FROM hosts")" -gt 0 ] && break
    sleep 0.25
done
[ "$(sql "$proj" "SELECT count(*) FROM hosts")" -gt 0 ] || afail "no host in locusd's store 10 s after attach"
grep -q "CPU benchmark: " "$AGENT_LOG" || afail "no CPU benchmark in the agent's log"
req=$(cat "$D"/sched_request_*.xml)
fpops=$(sed -n 's:.*<p_fpops>\(.*\)</p_fpops>.*:\1:p' <<<"$req")
iops=$(sed -n 's:.*<p_iops>\(.*\)</p_iops>.*:\1:p' <<<"$req")
stored=$(sql "$proj" "SELECT p_fpops FROM hosts")
awk -v f="$fpops" -v i="$iops" -v s="$stored" \
    'BEGIN { d = s - f; exit !(f > 0 && f != 1e9 && i > 0 && i != 1e9 && d * d <= 1e-12 * f * f) }' \
    || afail "request reports p_fpops=$fpops p_iops=$iops (locusd keeps $stored): not the benchmark's figures"
say "benchmark: p_fpops=$fpops p_iops=$iops in the request, and in locusd's hosts table"

# ---- a task running with a checkpoint, then kill -9 of the agent ----
victim= ; done_before=0
for i in $(seq 90); do
    while read -r line; do
        d=$(field done "$line"); ck=$(field checkpoint_elapsed "$line")
        if awk -v d="$d" -v c="$ck" 'BEGIN { exit !(d >= 0.3 && c > 0) }'; then
            victim=${line%% *}; done_before=$d
            break
        fi
    done < <(lc tasks | grep "state=running" || true)
    [ -n "$victim" ] && break
    sleep 0.5
done
[ -n "$victim" ] || afail "no task reached 30% with a checkpoint within 45 s: $(lc tasks)"
apps_before=$(descendants "$AGENT_PID" | wc -l)
say "task $victim at $done_before with a checkpoint; $apps_before apps running; kill -9 of the agent"
kill -KILL "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
# the apps die with it (PR_SET_PDEATHSIG): no orphan keeps computing
sleep 0.5
for s in "$D"/slots/*; do
    [ -d "$s" ] || continue
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/cwd" 2>/dev/null)" = "$(cd "$s" && pwd)" ] && afail "app pid ${p#/proc/} still runs in $s after the agent was killed"
    done
done
start_agent
say "agent restarted (pid $AGENT_PID)"
resumed=
for i in $(seq 40); do
    line=$(lc tasks | grep "^$victim " || true)
    [ -n "$line" ] || { resumed=finished; break; }
    st=$(field state "$line"); d=$(field done "$line")
    if [ "$st" = running ] && awk -v d="$d" 'BEGIN { exit !(d > 0) }'; then resumed=$d; break; fi
    sleep 0.5
done
[ -n "$resumed" ] || afail "task $victim did not run again after the restart: $(lc tasks)"
slot=$(field slot "$(lc tasks | grep "^$victim " || true)")
if [ "$resumed" != finished ]; then
    # the app says where it resumed: at its last checkpoint before the kill
    # (checkpoints come every second, ~12% of the job), not at 0
    at=$(sed -n 's/^worker: resuming at iteration \([0-9]*\) of \([0-9]*\)$/\1 \2/p' "$D/slots/$slot/stderr.txt" | tail -n 1)
    [ -n "$at" ] || afail "task $victim: the app did not resume from a checkpoint: $(cat "$D/slots/$slot/stderr.txt")"
    read -r it of <<<"$at"
    awk -v i="$it" -v n="$of" -v b="$done_before" 'BEGIN { exit !(i > 0 && i / n >= b - 0.15) }' \
        || afail "task $victim resumed at iteration $it of $of, but was at $done_before before the kill"
    resumed="iteration $it of $of"
fi
say "task $victim resumed from its checkpoint (progress $done_before before the kill, resumed at $resumed)"

# ---- kill -9 of locusd, restarted on the same port ----
kill9_locusd
say "locusd killed with SIGKILL"
# an RPC now fails and backs off; the agent goes on computing
nfail=$(grep -c "scheduler RPC failed" "$AGENT_LOG" || true)
lc update >/dev/null || afail "update failed"
for i in $(seq 40); do
    [ "$(grep -c "scheduler RPC failed" "$AGENT_LOG" || true)" -gt "$nfail" ] && break
    sleep 0.25
done
[ "$(grep -c "scheduler RPC failed" "$AGENT_LOG" || true)" -gt "$nfail" ] || afail "no failed RPC while locusd was down"
say "an RPC failed while locusd was down: $(grep "scheduler RPC failed" "$AGENT_LOG" | tail -n 1 | cut -c 25-)"
start_locusd "$proj"
say "locusd restarted (pid $LOCUSD_PID)"

# ---- suspend and resume ----
lc suspend || afail "suspend failed"
for i in $(seq 40); do
    s=$(lc status)
    [ "$(field running "$s")" = 0 ] && break
    sleep 0.5
done
[ "$(field running "$(lc status)")" = 0 ] || afail "tasks still run 20 s after suspend: $(lc tasks)"
[ "$(field suspended "$(lc status)")" = 1 ] || afail "status does not say suspended"
sleep 2
[ "$(field running "$(lc status)")" = 0 ] || afail "a task started while suspended"
lc resume || afail "resume failed"
ntasks=$(field tasks "$(lc status)")
if [ "$ntasks" -gt 0 ]; then
    for i in $(seq 40); do
        [ "$(field running "$(lc status)")" -gt 0 ] && break
        [ "$(field tasks "$(lc status)")" = 0 ] && break
        sleep 0.5
    done
    s=$(lc status)
    [ "$(field running "$s")" -gt 0 ] || [ "$(field tasks "$s")" = 0 ] || afail "no task runs 20 s after resume: $(lc tasks)"
fi
say "suspend stopped every task, resume ran them again: $(lc status)"

# ---- a clean stop with tasks running, then suspend in memory ----
stop_agent
start_agent --leave-in-memory 1
for i in $(seq 40); do
    [ "$(field running "$(lc status)")" -gt 0 ] && break
    [ "$(field tasks "$(lc status)")" = 0 ] && break
    sleep 0.5
done
if [ "$(field running "$(lc status)")" -gt 0 ]; then
    lc suspend "$URL" || afail "suspend $URL failed"
    for i in $(seq 20); do
        [ "$(field running "$(lc status)")" = 0 ] && break
        sleep 0.25
    done
    lc tasks | grep -q "state=suspended" || afail "no task suspended in memory: $(lc tasks)"
    for pid in $(descendants "$AGENT_PID"); do
        st=$(sed 's/.*) \(.\).*/\1/' "/proc/$pid/stat" 2>/dev/null || echo gone)
        [ "$st" = T ] || [ "$st" = gone ] || afail "app pid $pid is in state $st while suspended in memory"
    done
    lc projects | grep -q "suspended=1" || afail "projects does not show $URL suspended"
    lc resume "$URL" || afail "resume $URL failed"
    for i in $(seq 20); do
        [ "$(field running "$(lc status)")" -gt 0 ] && break
        sleep 0.25
    done
    [ "$(field running "$(lc status)")" -gt 0 ] || afail "no task runs after resume $URL: $(lc tasks)"
    say "suspended in memory (SIGSTOP) and resumed: $(lc status)"
fi

# ---- the batch completes ----
wait_batch_done "$proj" "$BATCH" 150
for i in $(seq 60); do
    [ "$(field tasks "$(lc status)")" = 0 ] && break
    [ $((i % 5)) -ne 0 ] || lc update >/dev/null
    sleep 0.5
done
[ "$(field tasks "$(lc status)")" = 0 ] || afail "the agent still holds tasks after the batch: $(lc tasks)"
say "status at the end: $(lc status)"
stop_agent
nbench=$(grep -c "CPU benchmark: " "$AGENT_LOG" || true)
[ "$nbench" -eq 1 ] || fail "the CPU benchmark ran $nbench times in 3 starts (once expected: its time is saved)"
stop_locusd

bid=$(sql "$proj" "SELECT id FROM batches WHERE name='$BATCH'")
n=$(sql "$proj" "SELECT count(*) FROM jobs WHERE batch_id=$bid AND state=$JOB_DONE")
[ "$n" -eq "$NJOBS" ] || fail "$n of $NJOBS jobs done"
bad=$(sql "$proj" "SELECT j.name FROM jobs j LEFT JOIN instances i ON i.id=j.canonical_id
                   WHERE j.batch_id=$bid AND (i.id IS NULL OR i.outcome<>$OUTCOME_SUCCESS)")
[ -z "$bad" ] || fail "jobs without a successful canonical instance: $bad"
dup=$(sql "$proj" "SELECT job_id||': '||count(*) FROM instances GROUP BY job_id HAVING count(*)>1")
[ -z "$dup" ] || fail "jobs sent more than once (quorum 1): $dup"
for jname in $(sql "$proj" "SELECT name FROM jobs WHERE batch_id=$bid"); do
    grep -q "^iterations 200000$" "$proj/results/$BATCH/$jname/out" || fail "job $jname: output incomplete"
done
say "PASS: $NJOBS jobs validated, one instance each, after kill -9 of the agent and of locusd; total $(elapsed)s"
