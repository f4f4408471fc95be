#!/usr/bin/env bash
# driver_oar: the OAR cluster driver against a real OAR 2.5 server and its
# REST API on loopback (4 resources, two users); runs
# tests/unit/test_driver_oar.c with their settings in its environment: a
# job's environment and outputs, an array of params, lost submissions
# found by name once ended (OAR's ended jobs since a time), failures, best-effort
# preemption by the other user's normal job, cancel, resources, a walltime
# kill after the checkpointing signal, a silent and a stopped API (see that
# file).
set -euo pipefail
TEST_NAME=$(basename "$0" .sh)
LOCUS_BUILD_DIR=$(cd "${LOCUS_BUILD_DIR:-build}" && pwd)
PROG=$LOCUS_BUILD_DIR/bin/test_driver_oar
[ -x "$PROG" ] || { echo "$TEST_NAME: $PROG is not built (set LOCUS_BUILD_DIR)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "$TEST_NAME: needs root (OAR, jobs of two users)" >&2; exit 1; }
T_START=$(date +%s)
say() { echo "[$TEST_NAME +$(( $(date +%s) - T_START ))s] $*"; }

TMP=$(mktemp -d "/tmp/locus-$TEST_NAME-XXXXXX")
chmod 755 "$TMP"             # the jobs' users walk through it
_cleanup() {
    local rc=$?
    if [ $rc -ne 0 ] && [ -e "$TMP/oar/apache-error.log" ]; then
        { echo "---- apache error log (last 15 lines) ----"; tail -n 15 "$TMP/oar/apache-error.log"
          echo "---- /var/log/oar.log (last 15 lines) ----"; tail -n 15 /var/log/oar.log; } >&2 || true
    fi
    if [ "${LOCUS_KEEP_TMP:-0}" = 1 ]; then echo "[$TEST_NAME] kept $TMP" >&2; else rm -rf "$TMP"; fi
    exit $rc
}
trap _cleanup EXIT
. "$(dirname "$0")/lib/oar.sh"       # chains its teardown before _cleanup
. "$(dirname "$0")/lib/clusters.sh"
make_test_users
oar_up 4 "$(free_ports 0)"
say "OAR up, API at $OAR_API"

WORK=$TMP/work
mkdir -p "$WORK"
chown locusa "$WORK"
chmod 777 "$WORK"            # locusb's job writes its outputs there too

LOCUS_OAR_API=$OAR_API LOCUS_OAR_WORK=$WORK LOCUS_OAR_USER=locusa LOCUS_OAR_OTHER_USER=locusb \
LOCUS_OAR_HTTPD_CONF=$OAR_DIR/httpd.conf \
    "$PROG" || { say "FAIL: test_driver_oar failed"; exit 1; }
say "PASS"
