#!/usr/bin/env bash
# gpu_coproc: a real BOINC client whose volunteer declared a coprocessor in
# cc_config.xml (two devices of type locus_accel, as for hardware BOINC does
# not detect) computes from a real locusd whose project defines plan
# classes (plan_class.xml). The app `worker` has a CPU version and a
# version of plan class `accel` (same version number) for that device;
# `mtworker` a multithread version (plan class `mt`, 2 CPUs) and a newer
# one needing a CPU feature no host has. Once both batches are done:
# every job is done; worker jobs ran on the device (their version's plan
# class, the device number the app was given: 0 or 1) and on the CPU
# alike, the device ones while CPU ones ran; mtworker jobs ran with 2 CPUs
# (the client was told avg_ncpus 2) and the version the host cannot run
# was never sent; the client was told each version's plan class and
# coprocessor; `locus db check` is happy, no sanitizer report.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice
cat >"$proj/plan_class.xml" <<'XML'
<plan_classes>
  <plan_class>
    <name>accel</name>
    <gpu_type>locus_accel</gpu_type>
    <ngpus>1</ngpus>
    <cpu_frac>0.5</cpu_frac>
  </plan_class>
  <plan_class>
    <name>mt</name>
    <max_threads>2</max_threads>
  </plan_class>
  <plan_class>
    <name>future_cpu</name>
    <cpu_feature>no_such_feature</cpu_feature>
  </plan_class>
</plan_classes>
XML
add() { "$LOCUS" app add "$proj" "$@" --platform x86_64-pc-linux-gnu --exe "$WORKER" >/dev/null || fail "locus app add $*"; }
add worker --version 100 --plan-class accel   # beside make_project's CPU version 100
add mtworker --version 100 --plan-class mt
add mtworker --version 200 --plan-class future_cpu
out=$("$LOCUS" app add "$proj" worker --version 100 --plan-class nope --platform x86_64-pc-linux-gnu --exe "$WORKER" 2>&1) \
    && fail "a version of an undefined plan class was added"
grep -q "defines no plan class nope" <<<"$out" || fail "undefined plan class refused with: $out"

# ~1-2 s per job. The server prefers the faster version while its resource
# wants work, so each resource gets a few jobs per request only if jobs
# look long next to what the client asks for (1.2 days each): estimated
# at 5e13 flops, a job is 20000 s on a device (2e9 flops and half a CPU)
# and 50000 s on a CPU (the client's 1e9 without benchmarks).
echo '{"cmdline": "--iterations 300000 --sleep-ms 12 --seed {n}", "inputs": ["in.dat=in"], "flops": 5e13}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 24 --input-template "$TMP/tmpl.json" --name g1 \
    --quorum 1 --delay-bound 10000000 >/dev/null || fail "batch g1"
"$LOCUS" batch create "$proj" --app mtworker --count 4 --input-template "$TMP/tmpl.json" --name m1 \
    --quorum 1 --delay-bound 10000000 >/dev/null || fail "batch m1"

start_locusd "$proj"
grep -q "3 plan classes from" "$LOCUSD_LOG" || fail "locusd did not say it read plan_class.xml"
BOINC_CLIENT_GPUS='<coproc><type>locus_accel</type><count>2</count><peak_flops>2e9</peak_flops><device_nums>0 1</device_nums></coproc>' \
    start_client A "$(key_of alice)"
say "client attached with two declared locus_accel devices"
wait_batch_done "$proj" g1 240
wait_batch_done "$proj" m1 120
wait_clients_idle 60
cstate=${CLIENT_DIR[A]}/client_state.xml
cp "$cstate" "$TMP/client_state.xml"
stop_client A
stop_locusd

grep -q "Coprocessor specified in cc_config.xml. Type locus_accel" "${CLIENT_DIR[A]}/client.log" \
    || fail "the client did not take the declared coprocessor"
bad=$(sql "$proj" "SELECT j.name FROM jobs j JOIN batches b ON b.id=j.batch_id WHERE b.name IN ('g1','m1') AND j.state<>$JOB_DONE")
[ -z "$bad" ] || fail "jobs not done: $bad"

# which version each success ran with, and what the app said of its device
per_class() {   # BATCH: "plan_class count" lines of its successful instances
    sql "$proj" "SELECT v.plan_class, count(*) FROM instances i JOIN jobs j ON j.id=i.job_id
                 JOIN batches b ON b.id=j.batch_id JOIN app_versions v ON v.id=i.app_version_id
                 WHERE b.name='$1' AND i.outcome=$OUTCOME_SUCCESS GROUP BY v.plan_class ORDER BY v.plan_class"
}
g=$(per_class g1)
say "worker instances by plan class: $(tr '\n' ' ' <<<"$g")"
ngpu=$(sed -n 's/^accel|//p' <<<"$g")
ncpu=$(sed -n 's/^|//p' <<<"$g")
[ "${ngpu:-0}" -ge 2 ] || fail "worker jobs ran on the device ${ngpu:-0} times: $g"
[ "${ncpu:-0}" -ge 2 ] || fail "worker jobs ran on the CPU ${ncpu:-0} times: $g"
m=$(per_class m1)
[ "$m" = "mt|4" ] || fail "mtworker instances by plan class: $m (expected all 4 of plan class mt)"
n=$(sql "$proj" "SELECT count(*) FROM instances i JOIN app_versions v ON v.id=i.app_version_id WHERE v.plan_class='future_cpu'")
[ "$n" -eq 0 ] || fail "$n instances of a version the host cannot run"

# the app was told its device (init_data.xml), and only device jobs were
gpu_said=$(sql "$proj" "SELECT count(*) FROM instances i JOIN app_versions v ON v.id=i.app_version_id
                        WHERE v.plan_class='accel' AND i.outcome=$OUTCOME_SUCCESS
                        AND (i.stderr LIKE '%worker: gpu device 0 (%' OR i.stderr LIKE '%worker: gpu device 1 (%')")
[ "$gpu_said" -eq "$ngpu" ] || fail "$gpu_said of $ngpu device jobs saw a device number: $(sql "$proj" \
    "SELECT substr(i.stderr,1,300) FROM instances i JOIN app_versions v ON v.id=i.app_version_id WHERE v.plan_class='accel' LIMIT 1")"
cpu_said=$(sql "$proj" "SELECT count(*) FROM instances i JOIN app_versions v ON v.id=i.app_version_id
                        WHERE v.plan_class<>'accel' AND i.stderr LIKE '%gpu device%'")
[ "$cpu_said" -eq 0 ] || fail "$cpu_said CPU jobs were given a device"
both=$(sql "$proj" "SELECT count(DISTINCT substr(i.stderr, instr(i.stderr,'gpu device ')+11, 1)) FROM instances i
                    JOIN app_versions v ON v.id=i.app_version_id WHERE v.plan_class='accel'")
say "device jobs saw $both distinct device numbers"

# the device and the CPUs computed at once: some device job ran while a CPU one did
overlap=$(sql "$proj" "SELECT count(*) FROM instances a JOIN app_versions va ON va.id=a.app_version_id,
                       instances c JOIN app_versions vc ON vc.id=c.app_version_id
                       WHERE va.plan_class='accel' AND vc.plan_class='' AND a.outcome=$OUTCOME_SUCCESS
                       AND c.outcome=$OUTCOME_SUCCESS AND a.sent_time < c.received_time AND c.sent_time < a.received_time")
[ "$overlap" -gt 0 ] || fail "no device job was out while a CPU job was"

# what the client was told: per version, its plan class, CPUs and device
version_block() {   # APP PLAN_CLASS: that <app_version> of the client's state
    awk -v app="$1" -v pc="$2" '/<app_version>/{b=""; on=1} on{b=b $0 "\n"}
        /<\/app_version>/{on=0; if (index(b, "<app_name>" app "</app_name>") &&
            (pc == "" ? !index(b, "<plan_class>") : index(b, "<plan_class>" pc "</plan_class>"))) printf "%s", b}' \
        "$TMP/client_state.xml"
}
acc=$(version_block worker accel)
grep -q "<type>locus_accel</type>" <<<"$acc" || fail "the client's accel version has no locus_accel coproc: $acc"
grep -q "<avg_ncpus>0.500000</avg_ncpus>" <<<"$acc" || fail "the accel version's CPU share: $acc"
mt=$(version_block mtworker mt)
grep -q "<avg_ncpus>2.000000</avg_ncpus>" <<<"$mt" || fail "the client's mt version does not take 2 CPUs: $mt"
cpuv=$(version_block worker "")
[ -n "$cpuv" ] && ! grep -q "<coproc>" <<<"$cpuv" || fail "the client's CPU version of worker: $cpuv"

"$LOCUS" db check "$proj" >/dev/null || fail "locus db check found problems"
check_sanitizers
say "PASS: $ngpu device and $ncpu CPU worker jobs, 4 multithread jobs on 2 CPUs each"
