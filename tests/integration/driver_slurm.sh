#!/usr/bin/env bash
# driver_slurm: the Slurm cluster driver against two real Slurm clusters on
# loopback. Starts "alpha" (2 nodes of 4 cpus) and "beta" (1 node of 4 cpus,
# finished jobs forgotten by slurmctld after 2 s), each with a normal and a
# preemptible besteffort partition, and two users; then runs
# tests/unit/test_driver_slurm.c with their settings in its environment:
# a job's environment and outputs, an array of params, failures, best-effort
# preemption by the other user's normal job, cancel, resources, the jobcomp
# log, a walltime kill after the checkpointing signal, and a dead slurmctld
# giving a clear error within the driver's timeout (see that file).
set -euo pipefail
TEST_NAME=$(basename "$0" .sh)
LOCUS_BUILD_DIR=$(cd "${LOCUS_BUILD_DIR:-build}" && pwd)
PROG=$LOCUS_BUILD_DIR/bin/test_driver_slurm
[ -x "$PROG" ] || { echo "$TEST_NAME: $PROG is not built (set LOCUS_BUILD_DIR)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$TEST_NAME: needs root (Slurm daemons, jobs of two users)" >&2; exit 1; }
T_START=$(date +%s)
say() { echo "[$TEST_NAME +$(( $(date +%s) - T_START ))s] $*"; }

TMP=$(mktemp -d "/tmp/locus-$TEST_NAME-XXXXXX")
chmod 755 "$TMP"             # the jobs' users walk through it
_cleanup() {
    local rc=$?
    if [ $rc -ne 0 ]; then
        for f in "$TMP"/slurm-*/log/slurmctld.log; do
            [ -e "$f" ] && { echo "---- $f (last 15 lines) ----"; tail -n 15 "$f"; } >&2
        done
    fi
    if [ "${LOCUS_KEEP_TMP:-0}" = 1 ]; then echo "[$TEST_NAME] kept $TMP" >&2; else rm -rf "$TMP"; fi
    exit $rc
}
trap _cleanup EXIT
. "$(dirname "$0")/lib/slurm.sh"     # chains its teardown before _cleanup

. "$(dirname "$0")/lib/clusters.sh"
make_test_users
slurm_install
pa=$(free_ports 2)
pb=$(free_ports 1)
slurm_cluster_up alpha "$pa" 2 4
SLURM_MIN_JOB_AGE=2 slurm_cluster_up beta "$pb" 1 4
say "clusters up: alpha on port $pa, beta on port $pb"

WORK=$TMP/work
mkdir -p "$WORK"
chown locusa "$WORK"
chmod 777 "$WORK"            # locusb's job writes its outputs there too

LOCUS_SLURM_CONF_A=${SLURM_CONF_OF[alpha]} LOCUS_SLURM_CONF_B=${SLURM_CONF_OF[beta]} \
LOCUS_SLURM_WORK=$WORK LOCUS_SLURM_USER=locusa LOCUS_SLURM_OTHER_USER=locusb \
LOCUS_SLURM_CTLD_PIDFILE_B=${SLURM_DIR[beta]}/slurmctld.pid \
    "$PROG" || { say "FAIL: test_driver_slurm failed"; exit 1; }
say "PASS"
