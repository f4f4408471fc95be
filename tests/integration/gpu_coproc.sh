#!/usr/bin/env bash
# gpu_coproc: a real BOINC client whose volunteer declared a coprocessor in
# cc_config.xml (two devices of type locus_accel, as for hardware BOINC does
# not detect) computes from a real locusd whose project defines plan
# classes (plan_class.xml). The app `worker` has a CPU version and a
# version of plan class `accel` (same version number) for that device;
# `mtworker` a multithread version (plan class `mt`, 2 CPUs) and a newer
# one needing a CPU feature no host has (lib/coproc.sh). Once both batches
# are done: lib/coproc.sh's checks (every job done, on the device and on
# the CPU at once, each device job told its device number, the version no
# host can run never sent); the client took the declaration, and was told
# each version's plan class, CPUs (mtworker's avg_ncpus 2) and
# coprocessor; no sanitizer report.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/coproc.sh"

proj=$TMP/proj
coproc_project "$proj"
start_locusd "$proj"
grep -q "3 plan classes from" "$LOCUSD_LOG" || fail "locusd did not say it read plan_class.xml"
BOINC_CLIENT_GPUS=$COPROC_DECL start_client A "$(key_of alice)"
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
coproc_check "$proj"

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

check_sanitizers
say "PASS: $COPROC_NGPU device and $COPROC_NCPU CPU worker jobs, 4 multithread jobs on 2 CPUs each"
