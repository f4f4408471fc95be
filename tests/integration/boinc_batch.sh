#!/usr/bin/env bash
# boinc_batch: two real BOINC clients of two users compute a batch of 40
# short jobs of examples/worker with min_quorum 2 from a real locusd. Once
# the batch is done: every job is done with a valid canonical instance whose
# output was assimilated (byte for byte what the worker computes) and whose
# uploads were then deleted; every instance is over, and each successful one
# was acknowledged to its client; no job had two instances on one host;
# both hosts computed; `locus db check` is happy; locusd stops cleanly
# (and, built with sanitizers, without a report).
# locusd is started with a relative project path, as the README shows, and
# its assimilator_cmd fails until the test lets it succeed: the jobs
# validated meanwhile stay validated, none fails, their uploads are kept,
# and once the hook works each canonical output reaches it exactly once.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

NJOBS=40
BATCH=b1
proj=$TMP/proj

make_project "$proj" alice bob
# ~1 s per job, mostly asleep: two clients run four at a time on two cores
echo '{"cmdline": "--iterations 200000 --sleep-ms 8 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count "$NJOBS" --input-template "$TMP/tmpl.json" --name "$BATCH" \
    --quorum 2 --delay-bound 3600 >/dev/null || fail "locus batch create failed"

# the hook runs in the job's results folder and is given its path
set_config "$proj" assimilator_cmd "test -e $TMP/hook_works \&amp;\&amp; cat \"\$LOCUS_RESULT_DIR/out\" \&gt;\&gt;$TMP/hooked"
start_locusd "$proj"
say "locusd serves $URL (pid $LOCUSD_PID), its assimilator hook failing"
start_client A "$(key_of alice)"
start_client B "$(key_of bob)"
t_attach=$(elapsed)
say "two clients attached"

# JOB_VALIDATED = 1, JOB_FAILED = 3 (src/model/model.h)
held() { [ "$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_VALIDATED")" -ge 8 ]; }
for _ in $(seq 240); do held && break; sleep 0.5; done
held || fail "not 8 jobs validated while the hook fails: $(batch_counts "$proj" "$BATCH")"
nfailed=$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_FAILED")
[ "$nfailed" -eq 0 ] || fail "$nfailed jobs failed because the assimilator hook did"
while read -r name; do
    [ -n "$(upload_path "$proj" "${name}_0")" ] || fail "the upload of $name, canonical result of a job the hook failed, is gone"
done < <(sql "$proj" "SELECT $INSTANCE_NAME FROM jobs j JOIN instances i ON i.id=j.canonical_id
                      JOIN batches b ON b.id=j.batch_id WHERE j.state=$JOB_VALIDATED")
[ ! -e "$TMP/hooked" ] || fail "the hook ran to its end before it was let"
say "8 jobs validated and kept with their uploads while the hook fails; the hook now works"
touch "$TMP/hook_works"

wait_batch_done "$proj" "$BATCH" 280
t_done=$(elapsed)

# The reply carrying the last acks may still be on its way: wait until both
# clients hold no task any more.
wait_clients_idle 60
# the uploads of ended jobs are deleted (maintenance thread, once the end is committed)
left=$(uploads_left "$proj")
[ "$left" -eq 0 ] || fail "uploads of ended jobs still there: $(find "$proj/upload" -type f | head -n 5 | tr '\n' ' ')"
hostA=$(client_hostid A)
hostB=$(client_hostid B)
stop_client A
stop_client B
stop_locusd
say "clients and locusd stopped (hosts: A=$hostA B=$hostB)"

# ---- assertions on the store ----
[ -n "$hostA" ] && [ -n "$hostB" ] && [ "$hostA" != "$hostB" ] || fail "clients' host ids: A='$hostA' B='$hostB'"

bid=$(sql "$proj" "SELECT id FROM batches WHERE name='$BATCH'")
n=$(sql "$proj" "SELECT count(*) FROM jobs WHERE batch_id=$bid")
[ "$n" -eq "$NJOBS" ] || fail "$n jobs in the store, expected $NJOBS"
bad=$(sql "$proj" "SELECT name||' state '||state FROM jobs WHERE batch_id=$bid AND state<>$JOB_DONE")
[ -z "$bad" ] || fail "jobs not done: $bad"

# a canonical instance: of the job, successful and valid
bad=$(sql "$proj" "SELECT j.name FROM jobs j LEFT JOIN instances i ON i.id=j.canonical_id AND i.job_id=j.id
                   WHERE j.batch_id=$bid AND (i.id IS NULL OR i.outcome<>$OUTCOME_SUCCESS OR i.validate_state<>$VALIDATE_VALID)")
[ -z "$bad" ] || fail "jobs without a valid canonical instance: $bad"

# canonical outputs assimilated. locusd deletes uploads once their job has
# ended, so the reference is the worker's output computed here: the worker is
# deterministic and the validator accepted the canonical upload only as
# byte-identical to the other instance's (the job's cmdline without sleeps).
mkdir -p "$TMP/ref"
cp "$TMP/in.dat" "$TMP/ref/in"
while IFS='|' read -r jname cmdline; do
    res=$proj/results/$BATCH/$jname/out
    [ -f "$res" ] || fail "job $jname: $res missing"
    # shellcheck disable=SC2086 # the cmdline is split into words, as the client does
    (cd "$TMP/ref" && rm -f out worker_state && "$WORKER" $(echo "$cmdline" | sed 's/--sleep-ms [0-9]*/--sleep-ms 0/') 2>/dev/null) \
        || fail "job $jname: the worker did not run here with '$cmdline'"
    cmp -s "$res" "$TMP/ref/out" || fail "job $jname: $res differs from the worker's output for '$cmdline'"
done < <(sql "$proj" "SELECT name, cmdline FROM jobs WHERE batch_id=(SELECT id FROM batches WHERE name='$BATCH')")
say "all $NJOBS jobs done; their outputs in results/ are byte for byte the worker's"
# every canonical output reached the hook once, the retried ones included
cat "$proj"/results/"$BATCH"/*/out | sort >"$TMP/outs.sorted"
sort "$TMP/hooked" | cmp -s - "$TMP/outs.sorted" \
    || fail "the hook saw $(wc -l <"$TMP/hooked") lines, the jobs' outputs hold $(wc -l <"$TMP/outs.sorted")"
say "the assimilator hook got every output once"

# every instance over; none in progress
ninst=$(sql "$proj" "SELECT count(*) FROM instances")
inprog=$(sql "$proj" "SELECT count(*) FROM instances WHERE state=$INST_IN_PROGRESS")
notover=$(sql "$proj" "SELECT count(*) FROM instances WHERE state<>$INST_OVER")
[ "$inprog" -eq 0 ] || fail "$inprog instances still in progress"
[ "$notover" -eq 0 ] || fail "$notover instances not over"

# one instance per (job, host)
dup=$(sql "$proj" "SELECT job_id||' on host '||host_id FROM instances GROUP BY job_id, host_id HAVING count(*)>1")
[ -z "$dup" ] || fail "jobs with two instances on one host: $dup"

# both hosts computed, and only they
hosts=$(sql "$proj" "SELECT host_id||':'||count(*) FROM instances GROUP BY host_id ORDER BY host_id" | tr '\n' ' ')
for h in "$hostA" "$hostB"; do
    c=$(sql "$proj" "SELECT count(*) FROM instances WHERE host_id=$h AND outcome=$OUTCOME_SUCCESS")
    [ "$c" -gt 0 ] || fail "host $h got no work done (instances per host: $hosts)"
done
other=$(sql "$proj" "SELECT count(*) FROM instances WHERE host_id NOT IN ($hostA, $hostB)")
[ "$other" -eq 0 ] || fail "$other instances on hosts that are neither client"

# every successful instance acknowledged to the client of its host
client_acked A >"$TMP/acked.$hostA"
client_acked B >"$TMP/acked.$hostB"
nsucc=0
while IFS='|' read -r name host; do
    grep -qxF "$name" "$TMP/acked.$host" || fail "instance $name (host $host) succeeded but its client never logged its ack"
    nsucc=$((nsucc + 1))
done < <(sql "$proj" "SELECT $INSTANCE_NAME, i.host_id FROM instances i JOIN jobs j ON j.id=i.job_id
                      JOIN batches b ON b.id=j.batch_id WHERE i.outcome=$OUTCOME_SUCCESS")
outcomes=$(sql "$proj" "SELECT 'outcome '||outcome||': '||count(*) FROM instances GROUP BY outcome" | tr '\n' ' ')
say "$ninst instances, all over ($outcomes); per host: $hosts; $nsucc successes all acknowledged"

"$LOCUS" db check "$proj" >"$TMP/check.out" 2>&1 || fail "locus db check: $(cat "$TMP/check.out")"
say "locus db check: $(tail -n 1 "$TMP/check.out")"
say "PASS: attach at +${t_attach}s, batch done at +${t_done}s, total $(elapsed)s"
