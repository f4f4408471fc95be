#!/usr/bin/env bash
# deadline_check: locusd's deadline check (docs/server.md, "The deadline
# check") against hand-written requests that list the tasks the
# host holds (<in_progress_results>, as the BOINC client sends them once a
# reply asked with <send_full_workload/>). A one-CPU 1 GFLOPS host holding
# a task that needs 3000 s of its 3100 s gets none of the 1000 s jobs due in
# an hour (the reply says <no_work_because_of_deadlines/>, nothing is
# recorded); holding a task of 1000 s, it gets two (ending at 2000 and
# 3000 s), not the third, which would end at 4000 s > 3600 s.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/rpc.sh"

proj=$TMP/proj
make_project "$proj" alice
echo '{"cmdline": "--iterations 1000 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e12}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 3 --input-template "$TMP/tmpl.json" --name b1 \
    --delay-bound 3600 >/dev/null || fail "locus batch create failed"
# the deadline check alone: pacing would trim these requests before it looks
set_config "$proj" pace_share 0
start_locusd "$proj"
SCHED=${URL}scheduler
R=$TMP/req.xml B=$TMP/body H=$TMP/headers
KEY=$(key_of alice)
HOST=$(register "$KEY")
[ -n "$HOST" ] || fail "no hostid from the registering RPC"
grep -q '<send_full_workload/>' "$B" || fail "the reply does not ask for the host's workload"

# held REMAINING DUE_IN: an <in_progress_results> with one task
held() {
    cat <<XML
<in_progress_results>
    <ip_result>
        <name>other_project_task_0</name>
        <report_deadline>$(( $(date +%s) + $2 ))</report_deadline>
        <time_remaining>$1</time_remaining>
        <avg_ncpus>1.000000</avg_ncpus>
    </ip_result>
</in_progress_results>
XML
}
# results_sent: how many <result> the last reply holds
results_sent() { grep -c '<result>' "$B" || true; }
instances() { sql "$proj" "SELECT COUNT(*) FROM instances"; }

SEQNO=1 request "$KEY" "$HOST" 3600 "$(held 3000 3100)" >"$R"
st=$(post "$SCHED" "$R")
[ "$st" = 200 ] || fail "RPC 1: HTTP $st"
[ "$(results_sent)" = 0 ] || fail "RPC 1: a job was sent that would end past its deadline: $(head -c 600 "$B")"
grep -q '<no_work_because_of_deadlines/>' "$B" || fail "RPC 1: no <no_work_because_of_deadlines/> flag"
grep -q 'would miss their deadlines' "$B" || fail "RPC 1: no message for the user"
[ "$(instances)" = 0 ] || fail "RPC 1: instances recorded though nothing was sent"
say "a host whose held task fills its time got nothing, with the flag and a message"

SEQNO=2 request "$KEY" "$HOST" 3600 "$(held 1000 3100)" >"$R"
st=$(post "$SCHED" "$R")
[ "$st" = 200 ] || fail "RPC 2: HTTP $st"
[ "$(results_sent)" = 2 ] || fail "RPC 2: expected two jobs (ending at 2000 and 3000 s after the held 1000 s; the third would end at 4000 s > 3600 s), got $(results_sent)"
grep -q '<no_work_because_of_deadlines/>' "$B" && fail "RPC 2: the flag is set though a job was sent"
[ "$(instances)" = 2 ] || fail "RPC 2: $(instances) instances recorded, expected 2"
say "with room for two jobs, two were sent, not the third"
stop_locusd
say "PASS"
