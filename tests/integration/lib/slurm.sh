# tests/integration/lib/slurm.sh - real Slurm clusters on loopback for
# integration tests: no systemd, no cgroups, one private folder per cluster
# under the test's temporary folder. Sourced by a test, after lib/boinc.sh if
# it uses both (then $TMP is that one's); sourcing it alone creates $TMP.
#
#   slurm_cluster_up NAME PORT NODES CPUS   starts slurmctld on PORT and NODES
#                                           slurmd (ports PORT+1..) of CPUS cpus
#                                           each; waits until they are idle;
#                                           sets SLURM_DIR[NAME], SLURM_CONF_OF[NAME]
#   slurm_ctld_kill NAME                    SIGKILL to that cluster's slurmctld
#   slurm_teardown_all                      stops every daemon this test started
#
# Each cluster has a partition "normal" (default) and a partition
# "besteffort" on the same nodes whose jobs are cancelled when a normal job
# needs their cores (PreemptMode=CANCEL); finished jobs stay in slurmctld's
# memory for SLURM_MIN_JOB_AGE seconds (default 600) and are written to a
# jobcomp/filetxt log. munged is started if none runs and left running: it
# is the machine's, shared by every Slurm test, and one test stopping it
# would break another running beside it. The rest is stopped by PID.

if [ -z "${TMP:-}" ]; then
    TMP=$(mktemp -d "/tmp/locus-$(basename "$0" .sh)-XXXXXX")
    _SLURM_OWN_TMP=1
fi
declare -A SLURM_DIR SLURM_CONF_OF
_SLURM_CLUSTERS=()

# slurm_install: installs the Slurm packages if missing (scripts/deps.sh
# has them too).
slurm_install() {
    local p missing=()
    for p in slurmctld slurmd slurm-client munge; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null
}

# _slurm_munged: one munged for every cluster of the machine.
_slurm_munged() {
    local i
    [ -S /run/munge/munge.socket.2 ] && pgrep -x munged >/dev/null && return 0
    mkdir -p /run/munge && chown munge:munge /run/munge
    # two tests starting at once: the loser's munged exits (socket in use)
    runuser -u munge -- /usr/sbin/munged 2>/dev/null
    for i in $(seq 50); do
        [ -S /run/munge/munge.socket.2 ] && pgrep -x munged >/dev/null && return 0
        sleep 0.1
    done
    return 1
}

slurm_cluster_up() {
    local name=$1 port=$2 nn=$3 cpus=$4 dir=$TMP/slurm-$1 i nl t
    slurm_install || { echo "slurm: cannot install the Slurm packages" >&2; return 1; }
    _slurm_munged || { echo "slurm: cannot start munged" >&2; return 1; }
    mkdir -p "$dir/state" "$dir/log"
    nl=$(seq -s, -f "${name}n%g" 1 "$nn")
    {
        cat <<CONF
ClusterName=$name
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=${SLURM_MIN_JOB_AGE:-600}
KillWait=5
MessageTimeout=5
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
CONF
        for i in $(seq 1 "$nn"); do
            echo "NodeName=${name}n$i NodeAddr=127.0.0.1 Port=$((port + i)) CPUs=$cpus RealMemory=1000 State=UNKNOWN"
        done
        echo "PartitionName=normal Nodes=$nl Default=YES MaxTime=INFINITE State=UP PriorityTier=10 PreemptMode=OFF"
        echo "PartitionName=besteffort Nodes=$nl MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=CANCEL"
    } >"$dir/slurm.conf"
    SLURM_DIR[$name]=$dir
    SLURM_CONF_OF[$name]=$dir/slurm.conf
    _SLURM_CLUSTERS+=("$name")
    SLURM_CONF=$dir/slurm.conf /usr/sbin/slurmctld || { echo "slurm: slurmctld $name did not start" >&2; return 1; }
    for i in $(seq 1 "$nn"); do
        mkdir -p "$dir/spool-${name}n$i"
        SLURM_CONF=$dir/slurm.conf /usr/sbin/slurmd -N "${name}n$i" \
            || { echo "slurm: slurmd ${name}n$i did not start" >&2; return 1; }
    done
    for t in $(seq 1 100); do
        [ "$(SLURM_CONF=$dir/slurm.conf sinfo -h -p normal -t idle -o %D 2>/dev/null)" = "$nn" ] && return 0
        sleep 0.2
    done
    echo "slurm: cluster $name not idle after 20 s" >&2
    SLURM_CONF=$dir/slurm.conf sinfo -N >&2 || true
    tail -n 20 "$dir/log/slurmctld.log" >&2 || true
    return 1
}

# _slurm_stop PID...: SIGTERM to all at once, SIGKILL to those alive 3 s later.
_slurm_stop() {
    local pid i left
    kill -TERM "$@" 2>/dev/null || true
    for i in $(seq 30); do
        left=
        for pid in "$@"; do kill -0 "$pid" 2>/dev/null && left=1; done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    kill -KILL "$@" 2>/dev/null || true
}

slurm_ctld_kill() {
    local pid
    pid=$(cat "${SLURM_DIR[$1]}/slurmctld.pid" 2>/dev/null) || return 0
    kill -KILL "$pid" 2>/dev/null || true
}

slurm_teardown_all() {
    local n f pid pids=() ids
    # jobs still there (a test that failed midway) die with their slurmd
    # only if cancelled first: their processes are not the daemons'
    for n in "${_SLURM_CLUSTERS[@]}"; do
        pid=$(cat "${SLURM_DIR[$n]}/slurmctld.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null || continue
        ids=$(SLURM_CONF=${SLURM_CONF_OF[$n]} timeout 5 squeue -h -t pending,running -o %i 2>/dev/null) || continue
        # shellcheck disable=SC2086 # one id per word
        [ -n "$ids" ] && SLURM_CONF=${SLURM_CONF_OF[$n]} timeout 5 scancel $ids 2>/dev/null && sleep 1
    done
    for n in "${_SLURM_CLUSTERS[@]}"; do
        for f in "${SLURM_DIR[$n]}"/slurmd-*.pid "${SLURM_DIR[$n]}/slurmctld.pid"; do
            pid=$(cat "$f" 2>/dev/null) || continue
            [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && pids+=("$pid")
        done
    done
    [ ${#pids[@]} -gt 0 ] && _slurm_stop "${pids[@]}"
    _SLURM_CLUSTERS=()
    if [ -n "${_SLURM_OWN_TMP:-}" ] && [ "${LOCUS_KEEP_TMP:-0}" != 1 ]; then rm -rf "$TMP"; fi
}

# Chain with the trap of a library sourced before (lib/boinc.sh's _cleanup,
# which ends with exit): the Slurm daemons go first.
_slurm_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
# the previous handler sees the test's exit status, not ours
# shellcheck disable=SC2064 # the previous handler is fixed now
trap "_slurm_rc=\$?; set +e; slurm_teardown_all; (exit \$_slurm_rc); ${_slurm_prev_trap:-:}" EXIT
