#!/usr/bin/env bash
# client_coproc: locus-client, with two devices of type locus_accel
# declared in its cc_config.xml, computes from a real locusd whose project
# defines plan classes (lib/coproc.sh), as gpu_coproc.sh does with the
# BOINC client. A cc_config.xml with a mistake stops the agent at start
# with the reason. Once both batches are done: lib/coproc.sh's checks
# (every job done, on the devices and on the CPUs at once, each device job
# told its device number, the version no host can run never sent); the
# agent logged the declaration and asked for work for the devices apart
# from CPU work; its state kept each version's plan class, CPU share and
# coprocessor; every report acknowledged, no sanitizer report, a clean stop.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/coproc.sh"

proj=$TMP/proj
AGENT_DIR=$TMP/agent
AGENT_LOG=$TMP/agent.log
# a day of work wanted: several jobs per request on each resource (a job
# is estimated at 20000 s on a device and 50000 s on a CPU); the
# benchmark off, so that the CPU's speed is the 1e9 those figures assume
AGENT_OPTS=(--max-cpus 2 --retry-min 1 --retry-max 4 --min-queue 86400 --benchmark-seconds 0
            --debug cpu_sched,work_fetch,task,rpc)
. "$(dirname "$0")/lib/agent.sh"

coproc_project "$proj"
start_locusd "$proj"

# a declaration with a mistake: the agent says so and does not start
mkdir -m 700 "$TMP/bad"
echo '<cc_config><options><coproc><count>2</count></coproc></options></cc_config>' >"$TMP/bad/cc_config.xml"
if "$AGENT" --dir "$TMP/bad" --benchmark-seconds 0 >"$TMP/bad.log" 2>&1; then
    fail "locus-client started with a coproc without type"
fi
grep -q "cc_config.xml" "$TMP/bad.log" || fail "the refusal does not name cc_config.xml: $(cat "$TMP/bad.log")"

mkdir -m 700 "$AGENT_DIR"
printf '<cc_config><options>%s</options></cc_config>\n' "$COPROC_DECL" >"$AGENT_DIR/cc_config.xml"
start_agent
grep -q "coprocessor locus_accel: 2 x" "$AGENT_LOG" || afail "the agent did not take the declared coprocessor"
key_of alice | lc attach "$URL" - || afail "attach failed"
say "agent attached with two declared locus_accel devices"
wait_batch_done "$proj" g1 240
wait_batch_done "$proj" m1 120
for i in $(seq 120); do
    [ "$(field tasks "$(lc status)")" = 0 ] && break
    sleep 0.5
done
[ "$(field tasks "$(lc status)")" = 0 ] || afail "tasks left 60 s after the batches were done: $(lc tasks)"
cp "$AGENT_DIR/client_state.json" "$TMP/state.json"
stop_agent
stop_locusd

coproc_check "$proj"
grep -q "s of locus_accel work for" "$AGENT_LOG" || afail "the agent never asked for work for its devices"

# what the agent was told: per version, its plan class, CPUs and device
python3 - "$TMP/state.json" <<'PY' || fail "the agent's state lacks what its versions were sent with"
import json, sys
vs = [v for p in json.load(open(sys.argv[1]))["projects"] for v in p["app_versions"]]
def one(app, pc):
    m = [v for v in vs if v["app_name"] == app and v.get("plan_class", "") == pc]
    assert len(m) == 1, (app, pc, vs)
    return m[0]
acc = one("worker", "accel")
assert acc["coproc_type"] == "locus_accel" and acc["coproc_count"] == 1 and acc["avg_ncpus"] == 0.5, acc
assert one("mtworker", "mt")["avg_ncpus"] == 2, vs
cpu = one("worker", "")
assert not cpu.get("coproc_type"), cpu
PY

check_agent_sanitizers
check_sanitizers
say "PASS: $COPROC_NGPU device and $COPROC_NCPU CPU worker jobs, 4 multithread jobs on 2 CPUs each"
