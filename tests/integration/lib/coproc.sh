# coproc.sh - what the tests of a client with a declared coprocessor share
# (gpu_coproc.sh: the BOINC client; client_coproc.sh: locus-client): the
# project, whose plan classes give the app `worker` a CPU version and a
# version of plan class `accel` (same version number) for two declared
# devices of type locus_accel, and `mtworker` a multithread version (plan
# class `mt`, 2 CPUs) and a newer one needing a CPU feature no host has;
# and the checks of what the store says once both batches are done.
# Source after lib/boinc.sh.

# The declaration, as cc_config.xml's <options> hold it.
COPROC_DECL='<coproc><type>locus_accel</type><count>2</count><peak_flops>2e9</peak_flops><device_nums>0 1</device_nums></coproc>'

# coproc_project PROJ: the project with user alice, the plan classes, the
# versions and the batches g1 (24 worker jobs) and m1 (4 mtworker jobs).
coproc_project() {
    local proj=$1 out
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
    _coproc_add "$proj" worker --version 100 --plan-class accel   # beside make_project's CPU version 100
    _coproc_add "$proj" mtworker --version 100 --plan-class mt
    _coproc_add "$proj" mtworker --version 200 --plan-class future_cpu
    out=$("$LOCUS" app add "$proj" worker --version 100 --plan-class nope --platform x86_64-pc-linux-gnu \
        --exe "$WORKER" 2>&1) && fail "a version of an undefined plan class was added"
    grep -q "defines no plan class nope" <<<"$out" || fail "undefined plan class refused with: $out"

    # ~1-2 s per job. The server prefers the faster version while its
    # resource wants work, so each resource gets a few jobs per request
    # only if jobs look long next to what the client asks for: estimated at
    # 5e13 flops, a job is 20000 s on a device (2e9 flops) and 50000 s on a
    # CPU (the 1e9 flops of a client without benchmarks).
    echo '{"cmdline": "--iterations 300000 --sleep-ms 12 --seed {n}", "inputs": ["in.dat=in"], "flops": 5e13}' \
        >"$TMP/coproc_tmpl.json"
    "$LOCUS" batch create "$proj" --app worker --count 24 --input-template "$TMP/coproc_tmpl.json" --name g1 \
        --quorum 1 --delay-bound 10000000 >/dev/null || fail "batch g1"
    "$LOCUS" batch create "$proj" --app mtworker --count 4 --input-template "$TMP/coproc_tmpl.json" --name m1 \
        --quorum 1 --delay-bound 10000000 >/dev/null || fail "batch m1"
}

_coproc_add() {
    local proj=$1
    shift
    "$LOCUS" app add "$proj" "$@" --platform x86_64-pc-linux-gnu --exe "$WORKER" >/dev/null || fail "locus app add $*"
}

# _coproc_per_class PROJ BATCH: "plan_class|count" lines of its successful instances
_coproc_per_class() {
    sql "$1" "SELECT v.plan_class, count(*) FROM instances i JOIN jobs j ON j.id=i.job_id
              JOIN batches b ON b.id=j.batch_id JOIN app_versions v ON v.id=i.app_version_id
              WHERE b.name='$2' AND i.outcome=$OUTCOME_SUCCESS GROUP BY v.plan_class ORDER BY v.plan_class"
}

# coproc_check PROJ: every job is done; worker jobs ran on the device
# (their version's plan class, the device number the app was given: 0 or
# 1) and on the CPU alike, some device job while a CPU one ran; mtworker
# jobs ran the mt version, and the version no host can run was never
# sent; `locus db check` is happy. Sets COPROC_NGPU and COPROC_NCPU, the
# worker jobs done on each.
coproc_check() {
    local proj=$1 bad g m n gpu_said cpu_said both overlap
    bad=$(sql "$proj" "SELECT j.name FROM jobs j JOIN batches b ON b.id=j.batch_id
                       WHERE b.name IN ('g1','m1') AND j.state<>$JOB_DONE")
    [ -z "$bad" ] || fail "jobs not done: $bad"
    g=$(_coproc_per_class "$proj" g1)
    say "worker instances by plan class: $(tr '\n' ' ' <<<"$g")"
    COPROC_NGPU=$(sed -n 's/^accel|//p' <<<"$g")
    COPROC_NCPU=$(sed -n 's/^|//p' <<<"$g")
    [ "${COPROC_NGPU:-0}" -ge 2 ] || fail "worker jobs ran on the device ${COPROC_NGPU:-0} times: $g"
    [ "${COPROC_NCPU:-0}" -ge 2 ] || fail "worker jobs ran on the CPU ${COPROC_NCPU:-0} times: $g"
    m=$(_coproc_per_class "$proj" m1)
    [ "$m" = "mt|4" ] || fail "mtworker instances by plan class: $m (expected all 4 of plan class mt)"
    n=$(sql "$proj" "SELECT count(*) FROM instances i JOIN app_versions v ON v.id=i.app_version_id
                     WHERE v.plan_class='future_cpu'")
    [ "$n" -eq 0 ] || fail "$n instances of a version the host cannot run"

    # the app was told its device, and only device jobs were
    gpu_said=$(sql "$proj" "SELECT count(*) FROM instances i JOIN app_versions v ON v.id=i.app_version_id
                            WHERE v.plan_class='accel' AND i.outcome=$OUTCOME_SUCCESS
                            AND (i.stderr LIKE '%worker: gpu device 0 (%' OR i.stderr LIKE '%worker: gpu device 1 (%')")
    [ "$gpu_said" -eq "$COPROC_NGPU" ] || fail "$gpu_said of $COPROC_NGPU device jobs saw a device number: $(sql "$proj" \
        "SELECT substr(i.stderr,1,300) FROM instances i JOIN app_versions v ON v.id=i.app_version_id
         WHERE v.plan_class='accel' LIMIT 1")"
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
                           AND c.outcome=$OUTCOME_SUCCESS AND a.sent_time < c.received_time
                           AND c.sent_time < a.received_time")
    [ "$overlap" -gt 0 ] || fail "no device job was out while a CPU job was"
    "$LOCUS" db check "$proj" >/dev/null || fail "locus db check found problems"
}
