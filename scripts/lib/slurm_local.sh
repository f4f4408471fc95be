# shellcheck shell=bash
# slurm_local.sh - a real Slurm cluster on loopback with all its state in
# one folder: no systemd, no cgroups, daemons stopped by the PIDs in their
# pid files. Source it; it defines functions and changes nothing by itself.
# Used by scripts/slurm-local.sh (to try campaigns by hand) and by the
# integration tests (tests/integration/lib/slurm.sh), so that both run the
# very cluster the tests check. Needs root, bash and the Slurm packages.
#
#   slurm_local_missing                     the Slurm packages not installed
#   slurm_local_munged                      starts munged if none runs
#   slurm_local_up DIR NAME PORT NODES CPUS slurm.conf in DIR, slurmctld on
#                                           PORT and NODES slurmd (ports
#                                           PORT+1..) of CPUS cpus, named
#                                           NAMEn1..; waits until they are idle
#   slurm_local_pids DIR                    the live daemons' PIDs
#   slurm_local_procs [DIR]                 the Slurm processes running (of DIR)
#   slurm_local_cancel DIR                  cancels its pending and running jobs
#   slurm_local_kill PID...                 stops daemons
#
# The cluster has a partition "normal" (default) and a partition
# "besteffort" on the same nodes whose jobs are cancelled when a normal job
# needs their cores (PreemptMode=CANCEL); finished jobs stay in slurmctld's
# memory for SLURM_MIN_JOB_AGE seconds (default 600) and are written to a
# jobcomp/filetxt log, DIR/log/jobcomp.txt: what locus's Slurm driver
# reads (docs/clusters.md). munged is the machine's, one for every cluster.

# shellcheck disable=SC2034 # read by those who source it
SLURM_LOCAL_PACKAGES=(slurmctld slurmd slurm-client munge)

# slurm_local_missing: prints the packages of SLURM_LOCAL_PACKAGES not
# installed, one line, empty when none.
slurm_local_missing() {
    local p missing=()
    for p in "${SLURM_LOCAL_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    echo "${missing[*]}"
}

# slurm_local_munged: one munged for every cluster of the machine; sets
# SLURM_LOCAL_MUNGED_PID to its PID when this call started it, else empty.
slurm_local_munged() {
    local i
    SLURM_LOCAL_MUNGED_PID=
    [ -S /run/munge/munge.socket.2 ] && pgrep -x munged >/dev/null && return 0
    mkdir -p /run/munge && chown munge:munge /run/munge
    # two starting at once: the loser's munged exits (socket in use). It
    # outlives the caller, so it gets no descriptor above 2: a test run as
    # `flock /tmp/locus-oar.lock bash TEST` would otherwise leave the lock
    # held by munged, and every OAR test after it waiting forever
    (
        for fd in "/proc/$BASHPID/fd"/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
        exec runuser -u munge -- /usr/sbin/munged
    ) 2>/dev/null
    for i in $(seq 50); do
        if [ -S /run/munge/munge.socket.2 ] && pgrep -x munged >/dev/null; then
            # shellcheck disable=SC2034 # read by those who source it
            SLURM_LOCAL_MUNGED_PID=$(pgrep -nx munged)
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# _slurm_local_conf DIR NAME PORT NODES CPUS: writes DIR/slurm.conf.
_slurm_local_conf() {
    local dir=$1 name=$2 port=$3 nn=$4 cpus=$5 i nl
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
}

slurm_local_up() {
    local dir=$1 name=$2 port=$3 nn=$4 cpus=$5 i
    mkdir -p "$dir/state" "$dir/log"
    _slurm_local_conf "$dir" "$name" "$port" "$nn" "$cpus"
    SLURM_CONF=$dir/slurm.conf /usr/sbin/slurmctld || { echo "slurm: slurmctld $name did not start" >&2; return 1; }
    for i in $(seq 1 "$nn"); do
        mkdir -p "$dir/spool-${name}n$i"
        SLURM_CONF=$dir/slurm.conf /usr/sbin/slurmd -N "${name}n$i" \
            || { echo "slurm: slurmd ${name}n$i did not start" >&2; return 1; }
    done
    for _ in $(seq 1 100); do
        [ "$(SLURM_CONF=$dir/slurm.conf sinfo -h -p normal -t idle -o %D 2>/dev/null)" = "$nn" ] && return 0
        sleep 0.2
    done
    echo "slurm: cluster $name not idle after 20 s" >&2
    SLURM_CONF=$dir/slurm.conf sinfo -N >&2 || true
    tail -n 20 "$dir/log/slurmctld.log" >&2 || true
    return 1
}

# slurm_local_pids DIR: the PIDs of DIR's live slurmd and slurmctld, one a
# line.
slurm_local_pids() {
    local f pid
    for f in "$1"/slurmd-*.pid "$1/slurmctld.pid"; do
        pid=$(cat "$f" 2>/dev/null) || continue
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
    done
    return 0
}

# slurm_local_procs [DIR]: the PIDs of this machine's slurmctld, slurmd and
# slurmstepd, one a line; with DIR, only those started with DIR's
# slurm.conf, found by their environment (slurmstepd inherits slurmd's),
# whatever the pid files say.
slurm_local_procs() {
    local pid
    for pid in $(pgrep -x slurmctld; pgrep -x slurmd; pgrep -x slurmstepd); do
        [ -z "${1:-}" ] || grep -qxzsF "SLURM_CONF=$1/slurm.conf" "/proc/$pid/environ" || continue
        echo "$pid"
    done
    return 0
}

# slurm_local_cancel DIR: jobs still there die with their slurmd only if
# cancelled first (their processes are not the daemons'); waits 1 s for
# them when there were some.
slurm_local_cancel() {
    local dir=$1 pid ids
    pid=$(cat "$dir/slurmctld.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null || return 0
    ids=$(SLURM_CONF=$dir/slurm.conf timeout 5 squeue -h -t pending,running -o %i 2>/dev/null) || return 0
    # shellcheck disable=SC2086 # one id per word
    [ -n "$ids" ] && SLURM_CONF=$dir/slurm.conf timeout 5 scancel $ids 2>/dev/null && sleep 1
    return 0
}

# slurm_local_kill PID...: SIGTERM to all at once, SIGKILL to those alive
# 3 s later.
slurm_local_kill() {
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
