#!/usr/bin/env bash
# driver_slurmrest: the Slurm driver over slurmrestd (docs/clusters.md,
# "Slurm through slurmrestd") against a real Slurm cluster "rest1" (1 node
# of 4 cpus, partitions normal and besteffort) whose slurmctld accepts JWTs
# (auth/jwt, a key made here) and a real slurmrestd (rest_auth/jwt,
# openapi/v0.0.38) started here, both on ports of their own:
#  1. `locus cluster add --driver slurmrest` keeps the token in the
#     project's keys/ (mode 0600), refuses a missing token file and --conf;
#  2. locusd's grid daemon runs a campaign of 12 params through the driver
#     to its end, every param run once by the cluster's user, with no
#     shared file between locusd and the cluster but the jobs' own folder;
#  3. tests/unit/test_driver_slurmrest.c against the same slurmrestd: a
#     job's environment, arrays, failures, preemption, cancel, resources,
#     a user's own token, token rotation, a walltime kill after the
#     checkpointing signal, then a stopped and a dead slurmrestd giving
#     errors naming the cluster within the timeout.
# Everything started here is stopped by PID at the end (munged, the
# machine's, is left running), and $TMP removed.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' users and slurmrestd (nobody) walk through it
. "$(dirname "$0")/lib/slurm.sh"     # teardowns chain before boinc.sh's
. "$(dirname "$0")/lib/clusters.sh"
[ "$(id -u)" = 0 ] || fail "needs root (Slurm daemons, jobs of two users)"
PROG=$LOCUS_BUILD_DIR/bin/test_driver_slurmrest
[ -x "$PROG" ] || fail "$PROG is not built"

make_test_users
slurm_install
SLURM_EXTRA_CONF=$(slurmrest_conf) || fail "cannot set slurmrestd up"
pc=$(free_ports 1)
slurm_cluster_up rest1 "$pc" 1 4
CONF=${SLURM_CONF_OF[rest1]}
slurmrestd_up rest1 || fail "slurmrestd did not come up"
API=$SLURMREST_API
# tokens of root (who may act for any user) and of locusa, 0600 as the driver demands
(umask 077; slurm_token rest1 root >"$TMP/root.jwt"; slurm_token rest1 locusa >"$TMP/locusa.jwt")
[ -s "$TMP/root.jwt" ] && [ -s "$TMP/locusa.jwt" ] || fail "scontrol token gave no token"
say "cluster rest1 up (slurmctld port $pc), slurmrestd at $API"

# ---- 1. the cluster declared ----

proj=$TMP/proj
make_project "$proj" locusa
map_accounts "$proj" locusa
set_config "$proj" grid_cycle_period 1
set_config "$proj" grid_predictor adapt_down_exp_up
if "$LOCUS" cluster add "$proj" rest1 --driver slurmrest --api "$API" --api-user root >/dev/null 2>"$TMP/err"; then
    fail "a slurmrest cluster without --token-file was accepted"
fi
if "$LOCUS" cluster add "$proj" rest1 --driver slurmrest --api "$API" --api-user root --conf "$CONF" \
    --token-file "$TMP/root.jwt" >/dev/null 2>"$TMP/err"; then
    fail "a slurmrest cluster with --conf was accepted"
fi
if "$LOCUS" cluster add "$proj" rest1 --driver slurmrest --api "ftp://x" --api-user root \
    --token-file "$TMP/root.jwt" >/dev/null 2>"$TMP/err"; then
    fail "a slurmrest cluster with an ftp URL was accepted"
fi
grep -q "slurmrestd's http(s) URL" "$TMP/err" || fail "bad URL: $(cat "$TMP/err")"
[ ! -e "$proj/keys/slurmrest.rest1.jwt" ] || fail "a refused cluster left its token in keys/"
[ "$(sql "$proj" "SELECT count(*) FROM clusters")" = 0 ] || fail "a refused cluster was recorded"
"$LOCUS" cluster add "$proj" rest1 --driver slurmrest --api "$API" --api-user root --token-file "$TMP/root.jwt" \
    --timeout-ms 4000 >/dev/null || fail "locus cluster add rest1 failed"
[ "$(stat -c %a "$proj/keys/slurmrest.rest1.jwt")" = 600 ] || fail "the kept token is not mode 0600"
cmp -s "$proj/keys/slurmrest.rest1.jwt" "$TMP/root.jwt" || fail "the kept token differs from the one given"
"$LOCUS" cluster list "$proj" | grep -q "rest1 .*slurmrest .*$API" || fail "cluster list: $("$LOCUS" cluster list "$proj")"

# ---- 2. a campaign through locusd ----

WORK=$TMP/work
mkdir -p "$WORK"
chmod 777 "$WORK"
cat >"$TMP/job.sh" <<'SH'
#!/bin/bash
echo "$1 $(id -un) $SLURM_JOB_ID" >"$LOCUS_WORKDIR/out.$1"
sleep 3   # not near zero: a cluster whose jobs end at once is taken for a sink
SH
chmod 755 "$TMP/job.sh"
cat >"$TMP/camp.json" <<JSON
{"name": "rest", "exec_directory": "$WORK", "exec_file": "$TMP/job.sh", "walltime": 120,
 "params": [$(seq -f '"p%02g"' 1 12 | paste -sd,)], "clusters": {"rest1": {}}}
JSON
start_locusd "$proj"
CAMP=$("$LOCUS" campaign submit "$proj" "$TMP/camp.json" --user locusa) || fail "campaign submit failed"
CAMP=$(echo "$CAMP" | grep -o '[0-9]\+' | head -n 1)
ended() { [ "$(sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$CAMP")" = "$GCS_TERMINATED" ]; }
wait_for 240 ended || fail "campaign $CAMP not ended after 240 s: $(sql "$proj" "SELECT state, ndone, njobs
    FROM grid_campaigns WHERE id=$CAMP")"
n=$(sql "$proj" "SELECT count(*) FROM grid_jobs WHERE campaign_id=$CAMP AND state=$GJ_TERMINATED")
[ "$n" = 12 ] || fail "$n of the 12 jobs terminated"
for i in $(seq -f '%02g' 1 12); do
    grep -q "^p$i locusa [0-9]" "$WORK/out.p$i" 2>/dev/null || fail "param p$i did not run as locusa"
done
stop_locusd
say "campaign $CAMP: 12 params done through slurmrestd"

# ---- 3. the driver itself ----

LOCUS_SLURMREST_URL=$API LOCUS_SLURMREST_TOKEN=$TMP/root.jwt LOCUS_SLURMREST_USER_TOKEN=$TMP/locusa.jwt \
LOCUS_SLURMREST_PIDFILE=$TMP/slurmrestd.pid LOCUS_SLURM_WORK=$WORK LOCUS_SLURM_USER=locusa \
LOCUS_SLURM_OTHER_USER=locusb "$PROG" || fail "test_driver_slurmrest failed"
say "PASS"
