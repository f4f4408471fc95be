#!/usr/bin/env bash
# slurm_local: scripts/slurm-local.sh, the local Slurm cluster a person
# starts to try campaigns. start prints a SLURM_CONF through which sinfo
# sees its idle nodes and a `locus cluster add` naming that file; status
# tells the daemons running; a second start on the same folder, or on busy
# ports, is refused and starts nothing; a job runs through sbatch; stop,
# with another job running, leaves no slurmctld, slurmd or slurmstepd of
# the folder, and status says so. Not root: refused with what it needs.
set -euo pipefail
TEST_NAME=$(basename "$0" .sh)
SCRIPT=$(cd "$(dirname "$0")/../../scripts" && pwd)/slurm-local.sh
[ "$(id -u)" = 0 ] || { echo "$TEST_NAME: needs root (Slurm daemons)" >&2; exit 1; }
T_START=$(date +%s)
say() { echo "[$TEST_NAME +$(( $(date +%s) - T_START ))s] $*"; }
fail() { say "FAIL: $*" >&2; exit 1; }

TMP=$(mktemp -d "/tmp/locus-$TEST_NAME-XXXXXX")
DIR=$TMP/cluster
# On any exit: the script's own stop, then whatever it missed by PID.
_cleanup() {
    local rc=$? pids
    set +e
    if [ -e "$DIR/.slurm-local" ]; then
        [ $rc -ne 0 ] && { echo "---- slurmctld log (last 15 lines) ----"; tail -n 15 "$DIR/log/slurmctld.log"; } >&2
        "$SCRIPT" stop "$DIR" >/dev/null 2>&1
        pids=$(slurm_local_pids "$DIR")
        # shellcheck disable=SC2086 # one pid per word
        [ -z "$pids" ] || kill -KILL $pids
    fi
    if [ "${LOCUS_KEEP_TMP:-0}" = 1 ]; then echo "[$TEST_NAME] kept $TMP" >&2; else rm -rf "$TMP"; fi
    exit $rc
}
trap _cleanup EXIT
. "$(dirname "$0")/lib/slurm.sh"      # slurm_install, and the shared munged
. "$(dirname "$0")/lib/clusters.sh"   # free_ports
slurm_install
# munged started here is left running for every Slurm test, as
# lib/slurm.sh does: the script then neither starts nor stops it
slurm_local_munged || fail "cannot start munged"

# ---- not root: refused, nothing made ----
out=$(runuser -u nobody -- "$SCRIPT" start "$TMP/nobody" 2>&1) && fail "started as nobody: $out"
echo "$out" | grep -q "needs root" || fail "as nobody: $out"
[ ! -e "$TMP/nobody" ] || fail "as nobody: $TMP/nobody made"

# ---- start ----
port=$(free_ports 2)
out=$("$SCRIPT" start "$DIR" --nodes 2 --cpus 2 --port "$port" --name slt) || fail "start failed: $out"
say "started on port $port: $(echo "$out" | head -n 1)"
conf=$(echo "$out" | sed -n 's/^ *export SLURM_CONF=//p')
[ "$conf" = "$DIR/slurm.conf" ] || fail "start printed SLURM_CONF '$conf'"
echo "$out" | grep -qF "locus cluster add PROJ slt --driver slurm --conf $DIR/slurm.conf --partition normal" ||
    fail "start printed no locus cluster add: $out"
nodes=$(SLURM_CONF=$conf timeout 10 sinfo -h -N -p normal -t idle -o %N | sort | paste -sd,)
[ "$nodes" = "sltn1,sltn2" ] || fail "sinfo's idle nodes: '$nodes'"
out=$("$SCRIPT" status "$DIR") || fail "status exit $?: $out"
[ "$(echo "$out" | grep -c ': running (pid [0-9]*)$')" = 3 ] || fail "status: $out"

# ---- refusals: the same folder again, busy ports ----
out=$("$SCRIPT" start "$DIR" 2>&1) && fail "a second start on $DIR: $out"
echo "$out" | grep -q "runs there already" || fail "second start: $out"
out=$("$SCRIPT" start "$TMP/other" --port "$((port + 1))" 2>&1) && fail "a start on busy ports: $out"
echo "$out" | grep -q "is in use" || fail "busy ports: $out"
[ -z "$(slurm_local_pids "$TMP/other")" ] || fail "the start on busy ports left daemons"
say "second start and busy ports refused"

# ---- a job through sbatch ----
mkdir -p "$TMP/work"
# shellcheck disable=SC2016 # the job's shell expands it
id=$(SLURM_CONF=$conf timeout 10 sbatch --parsable --chdir="$TMP/work" --output="$TMP/work/out.%j" \
    --wrap 'echo "hello from $SLURMD_NODENAME"') || fail "sbatch refused the job"
for _ in $(seq 60); do
    grep -q "^JobId=$id .*JobState=COMPLETED" "$DIR/log/jobcomp.txt" 2>/dev/null && break
    sleep 0.5
done
grep -q "^JobId=$id .*JobState=COMPLETED" "$DIR/log/jobcomp.txt" || fail "job $id not completed in 30 s"
grep -qx "hello from sltn[12]" "$TMP/work/out.$id" || fail "job $id's output: $(cat "$TMP/work/out.$id")"
say "job $id ran: $(cat "$TMP/work/out.$id")"

# ---- stop, a job still running ----
SLURM_CONF=$conf timeout 10 sbatch -Q --chdir="$TMP/work" --output=/dev/null --wrap 'sleep 300' ||
    fail "sbatch refused the long job"
for _ in $(seq 20); do
    [ -n "$(SLURM_CONF=$conf timeout 5 squeue -h -t running -o %i)" ] && break
    sleep 0.5
done
# the oracle below finds them all, the long job's slurmstepd too
steps=0
for pid in $(slurm_local_procs "$DIR"); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] && steps=$((steps + 1))
done
[ $steps -gt 0 ] || fail "no slurmstepd of $DIR found for the long job: $(slurm_local_procs "$DIR" | tr '\n' ' ')"
out=$("$SCRIPT" stop "$DIR") || fail "stop failed: $out"
left=$(slurm_local_procs "$DIR")
[ -z "$left" ] || fail "left running after stop: $(ps -o pid=,comm= -p "${left//$'\n'/,}")"
status=0
out=$("$SCRIPT" status "$DIR") || status=$?
[ $status = 3 ] && [ "$(echo "$out" | grep -c ': not running$')" = 3 ] || fail "status after stop, exit $status: $out"
say "PASS"
