#!/usr/bin/env bash
# slurm-local.sh - a small real Slurm cluster on this machine, on loopback,
# to try locus's campaigns (docs/campaigns.md, "Trying campaigns on one
# machine"). It is the cluster the integration tests run
# (scripts/lib/slurm_local.sh): all its state in DIR, no systemd.
#
#   scripts/slurm-local.sh start DIR [--nodes N] [--cpus C] [--port P] [--name NAME]
#   scripts/slurm-local.sh status DIR
#   scripts/slurm-local.sh stop DIR
#
# start: munged (if none runs), slurmctld on 127.0.0.1:P and N slurmd
# (ports P+1..P+N) of C CPUs each, named NAMEn1..NAMEnN (defaults: 2 nodes
# of 2 CPUs, cluster "local", the first free ports from 16817); prints the
# SLURM_CONF to export for sinfo/squeue/sbatch and the `locus cluster add`
# that declares it. status: which daemons run, sinfo and squeue; exit 0
# when all run, 3 otherwise. stop: cancels the jobs left, stops the
# daemons (and munged when start started it and no other Slurm uses it);
# DIR's files (logs, state) stay. Needs root and the Slurm packages.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib/slurm_local.sh"
me=$(basename "$0")
MARK=.slurm-local            # what tells a cluster folder of ours from any folder
FIRST_PORT=16817             # below the tests' range (20000 on) and off Slurm's usual 6817

die() { echo "$me: $*" >&2; exit 1; }
usage() {
    sed -n 's/^#   //p' "$0" >&2
    exit 2
}

# ports_free P N: P..P+N all free on loopback (nothing accepts a connection).
ports_free() {
    local i
    for i in $(seq "$1" $(($1 + $2))); do
        (exec 3<>"/dev/tcp/127.0.0.1/$i") 2>/dev/null && return 1
    done
    return 0
}

# quoted WORD: WORD as a shell would need it, for the lines to copy.
quoted() { printf '%q' "$1"; }

# the lines a person copies: SLURM_CONF for Slurm's commands, the locus
# cluster declaration.
print_use() {
    local dir=$1 name=$2
    cat <<EOF

Slurm's commands (sinfo, squeue, sbatch, scancel) need its configuration:
  export SLURM_CONF=$(quoted "$dir/slurm.conf")

Declare it in a locus project (best-effort jobs go to its besteffort partition):
  locus cluster add PROJ $name --driver slurm --conf $(quoted "$dir/slurm.conf") --partition normal --besteffort-partition besteffort

Stop it: $0 stop $(quoted "$dir")
EOF
}

# conf_value DIR KEY: KEY's value in DIR/slurm.conf.
conf_value() { sed -n "s/^$2=//p" "$1/slurm.conf" | head -n 1; }

need_root() {
    [ "$(id -u)" = 0 ] || die "needs root: slurmctld and slurmd run as root (SlurmUser=root), and slurmd starts each job as its user; run it with sudo"
}

# cluster_dir DIR: DIR as an absolute path, which must be a cluster folder of ours.
cluster_dir() {
    local dir
    dir=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such folder"
    [ -e "$dir/$MARK" ] || die "$dir: no cluster of $me there (no $MARK)"
    echo "$dir"
}

cmd_start() {
    local dir=$1 nodes=2 cpus=2 port='' name=local missing pids tries
    shift
    while [ $# -gt 0 ]; do
        [ $# -ge 2 ] || usage
        case $1 in
            --nodes) nodes=$2 ;;
            --cpus) cpus=$2 ;;
            --port) port=$2 ;;
            --name) name=$2 ;;
            *) usage ;;
        esac
        shift 2
    done
    [[ $nodes =~ ^[1-9][0-9]?$ ]] || die "--nodes: 1 to 99, got '$nodes'"
    [[ $cpus =~ ^[1-9][0-9]{0,2}$ ]] || die "--cpus: 1 to 999, got '$cpus'"
    [ -z "$port" ] || { [[ $port =~ ^[1-9][0-9]{3,4}$ ]] && [ $((port + nodes)) -le 65535 ]; } ||
        die "--port: 1000 to $((65535 - nodes)), got '$port'"
    # a Slurm cluster name (lower case), a node name prefix and a locus cluster name at once
    [[ $name =~ ^[a-z][a-z0-9]{0,31}$ ]] || die "--name: a lower-case letter, then up to 31 letters or digits, got '$name'"
    need_root
    missing=$(slurm_local_missing)
    [ -z "$missing" ] || die "Slurm is not installed (missing: $missing): run scripts/deps.sh, or apt-get install --no-install-recommends $missing"

    # slurm.conf holds DIR's paths unquoted
    [[ $dir =~ ^[A-Za-z0-9._/+-]+$ ]] || die "$dir: give a folder whose path has only letters, digits and . _ / + -"
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    pids=$(slurm_local_pids "$dir")
    [ -z "$pids" ] || die "$dir: a cluster of $me runs there already (pids ${pids//$'\n'/ }): '$0 status $dir', or '$0 stop $dir' first"
    if [ -e "$dir/$MARK" ]; then
        # stopped earlier: a fresh cluster, not the old one's nodes and jobs
        rm -rf "${dir:?}/state" "$dir/log" "$dir"/spool-* "$dir"/*.pid "$dir/slurm.conf"
    elif [ -n "$(ls -A "$dir")" ]; then
        die "$dir: not empty, and not a cluster folder of $me: give a new or empty folder"
    fi

    if [ -n "$port" ]; then
        ports_free "$port" "$nodes" ||
            die "a port of $port..$((port + nodes)) is in use (slurmctld takes the first, each slurmd one more): give another --port, or leave it out to take the first free ones"
    else
        port=$FIRST_PORT
        for tries in $(seq 50); do
            ports_free "$port" "$nodes" && break
            [ "$tries" = 50 ] && die "no $((nodes + 1)) free ports from $FIRST_PORT on: give --port"
            port=$((port + nodes + 1))
        done
    fi

    slurm_local_munged || die "cannot start munged: is /etc/munge/munge.key there (mungekey --create, as root)? see munged's log, /var/log/munge/munged.log"
    [ -z "$SLURM_LOCAL_MUNGED_PID" ] || echo "$SLURM_LOCAL_MUNGED_PID" >"$dir/munged.pid"
    printf 'name=%s\nport=%s\nnodes=%s\ncpus=%s\n' "$name" "$port" "$nodes" "$cpus" >"$dir/$MARK"
    if ! slurm_local_up "$dir" "$name" "$port" "$nodes" "$cpus"; then
        # nothing half started is left behind
        pids=$(slurm_local_pids "$dir")
        # shellcheck disable=SC2086 # one pid per word
        [ -z "$pids" ] || slurm_local_kill $pids
        stop_munged "$dir" >/dev/null
        die "the cluster did not start (its logs: $dir/log/); nothing of it is left running"
    fi
    local nl=${name}n1
    [ "$nodes" = 1 ] || nl="${name}n[1-$nodes]"
    echo "Slurm cluster $name up: slurmctld on 127.0.0.1:$port, $nodes node(s) $nl of $cpus CPUs, partitions normal (default) and besteffort; state and logs in $dir"
    print_use "$dir" "$name"
}

cmd_status() {
    local dir name f pid down=0 node
    dir=$(cluster_dir "$1")
    name=$(conf_value "$dir" ClusterName)
    echo "cluster $name in $dir, slurmctld on 127.0.0.1:$(conf_value "$dir" SlurmctldPort)"
    for f in slurmctld $(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' "$dir/slurm.conf"); do
        node=$f
        [ "$f" = slurmctld ] && f=slurmctld.pid || f=slurmd-$f.pid
        pid=$(cat "$dir/$f" 2>/dev/null) || pid=
        # /proc, not kill -0: status needs no root
        if [ -n "$pid" ] && [ -e "/proc/$pid" ]; then
            echo "  $node: running (pid $pid)"
        else
            echo "  $node: not running"
            down=1
        fi
    done
    pid=$(cat "$dir/slurmctld.pid" 2>/dev/null) || pid=
    if [ -n "$pid" ] && [ -e "/proc/$pid" ]; then
        echo
        SLURM_CONF=$dir/slurm.conf timeout 10 sinfo || echo "(sinfo did not answer)"
        echo
        SLURM_CONF=$dir/slurm.conf timeout 10 squeue || echo "(squeue did not answer)"
        print_use "$dir" "$name"
    fi
    [ $down = 0 ] || exit 3
}

# stop_munged DIR: munged, if DIR's start started it and no other Slurm
# process of the machine uses it (DIR's are stopped by now).
stop_munged() {
    local pid
    pid=$(cat "$1/munged.pid" 2>/dev/null) || pid=
    rm -f "$1/munged.pid"
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = munged ] || return 0
    if [ -n "$(slurm_local_procs)" ]; then
        echo "munged (pid $pid), which start started, is left running: other Slurm daemons of this machine use it"
    else
        slurm_local_kill "$pid"
        echo "stopped munged (pid $pid), which start started"
    fi
}

cmd_stop() {
    local dir pids left i
    need_root
    dir=$(cluster_dir "$1")
    slurm_local_cancel "$dir"
    pids=$(slurm_local_pids "$dir")
    if [ -n "$pids" ]; then
        # shellcheck disable=SC2086 # one pid per word
        slurm_local_kill $pids
        echo "stopped slurmctld and slurmd (pids ${pids//$'\n'/ })"
    else
        echo "no daemon of $dir was running"
    fi
    # what the pid files miss: a job's slurmstepd ends after its job (up to
    # KillWait, 5 s), a daemon whose pid file is gone
    for i in $(seq 100); do
        left=$(slurm_local_procs "$dir")
        [ -z "$left" ] && break
        # shellcheck disable=SC2086 # one pid per word
        [ "$i" = 80 ] && kill -KILL $left 2>/dev/null
        sleep 0.1
    done
    [ -z "$left" ] || die "still running after 10 s: ${left//$'\n'/ }"
    stop_munged "$dir"
    echo "its files (logs in $dir/log) stay: rm -rf $(quoted "$dir") to remove them"
}

[ $# -ge 2 ] || usage
case $1 in
    start) shift; cmd_start "$@" ;;
    status) [ $# = 2 ] || usage; cmd_status "$2" ;;
    stop) [ $# = 2 ] || usage; cmd_stop "$2" ;;
    *) usage ;;
esac
