# tests/integration/lib/slurm.sh - real Slurm clusters on loopback for
# integration tests: no systemd, no cgroups, one private folder per cluster
# under the test's temporary folder. Sourced by a test, after lib/boinc.sh if
# it uses both (then $TMP is that one's); sourcing it alone creates $TMP.
#
#   slurm_cluster_up NAME PORT NODES CPUS   starts slurmctld on PORT and NODES
#                                           slurmd (ports PORT+1..) of CPUS cpus
#                                           each; waits until they are idle;
#                                           sets SLURM_DIR[NAME], SLURM_CONF_OF[NAME]
#                                           (SLURM_EXTRA_CONF: lines added to
#                                           its slurm.conf)
#   slurm_ctld_kill NAME                    SIGKILL to that cluster's slurmctld
#   slurmrest_conf                          installs slurmrestd and the JWT plugin if
#                                           missing, makes the key slurmctld signs
#                                           tokens with ($TMP/jwt.key) and prints the
#                                           slurm.conf lines for SLURM_EXTRA_CONF
#   slurmrestd_up NAME                      starts slurmrestd (as nobody) for that
#                                           cluster on a free port: SLURMREST_API,
#                                           its PID in $TMP/slurmrestd.pid; waits
#                                           until it answers a ping
#   slurm_token NAME USER                   prints a JWT of USER (2 hours)
#   slurm_teardown_all                      stops every daemon this test started
#
# The clusters are scripts/lib/slurm_local.sh's (that of
# scripts/slurm-local.sh too): partitions "normal" and "besteffort"
# (preemptible), finished jobs kept SLURM_MIN_JOB_AGE seconds (default 600)
# and in a jobcomp log. munged is started if none runs and left running: it
# is the machine's, shared by every Slurm test, and one test stopping it
# would break another running beside it. The rest is stopped by PID.

. "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib/slurm_local.sh"

if [ -z "${TMP:-}" ]; then
    TMP=$(mktemp -d "/tmp/locus-$(basename "$0" .sh)-XXXXXX")
    _SLURM_OWN_TMP=1
fi
declare -A SLURM_DIR SLURM_CONF_OF
_SLURM_CLUSTERS=()

# slurm_install: installs the Slurm packages if missing (scripts/deps.sh
# has them too).
slurm_install() {
    local missing
    missing=$(slurm_local_missing)
    [ -z "$missing" ] && return 0
    # shellcheck disable=SC2086 # one package per word
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends $missing >/dev/null
}

# SLURM_EXTRA_CONF: when set, lines added to the slurm.conf of every cluster
# this test starts (a test's own tuning, e.g. SchedulerParameters; the rest
# is scripts/lib/slurm_local.sh's, that of every cluster).
eval "_slurm_local_conf_base() $(declare -f _slurm_local_conf | tail -n +2)"
_slurm_local_conf() {
    _slurm_local_conf_base "$@"
    [ -z "${SLURM_EXTRA_CONF:-}" ] || printf '%s\n' "$SLURM_EXTRA_CONF" >>"$1/slurm.conf"
}

slurm_cluster_up() {
    local name=$1 dir=$TMP/slurm-$1
    slurm_install || { echo "slurm: cannot install the Slurm packages" >&2; return 1; }
    slurm_local_munged || { echo "slurm: cannot start munged" >&2; return 1; }
    # known before its daemons start, so that a failed start is torn down too
    SLURM_DIR[$name]=$dir
    SLURM_CONF_OF[$name]=$dir/slurm.conf
    _SLURM_CLUSTERS+=("$name")
    slurm_local_up "$dir" "$@"
}

slurmrest_conf() {
    local p missing=
    for p in slurmrestd slurm-wlm-jwt-plugin; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        # shellcheck disable=SC2086 # one package per word
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
            $missing >/dev/null || { echo "slurm: cannot install$missing" >&2; return 1; }
    fi
    (umask 077; head -c 32 /dev/urandom >"$TMP/jwt.key")
    printf 'AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=%s' "$TMP/jwt.key"
}

slurm_token() {
    SLURM_CONF=${SLURM_CONF_OF[$1]} scontrol token username="$2" lifespan=7200 | sed -n 's/^SLURM_JWT=//p'
}

SLURMREST_API=
_SLURMREST_PID=
slurmrestd_up() {
    local port root
    port=$(free_ports 0)
    # slurmrestd refuses to run as root or SlurmUser: nobody, once its socket is open
    SLURM_CONF=${SLURM_CONF_OF[$1]} SLURM_JWT=daemon /usr/sbin/slurmrestd -a rest_auth/jwt -s openapi/v0.0.38 \
        -u nobody -g nogroup "127.0.0.1:$port" >"$TMP/slurmrestd.log" 2>&1 &
    _SLURMREST_PID=$!
    echo "$_SLURMREST_PID" >"$TMP/slurmrestd.pid"
    SLURMREST_API=http://127.0.0.1:$port
    root=$(slurm_token "$1" root)
    for _ in $(seq 40); do
        curl -sf --max-time 2 -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $root" \
            "$SLURMREST_API/slurm/v0.0.38/ping" | grep -q '"ping": "UP"' && return 0
        sleep 0.5
    done
    cat "$TMP/slurmrestd.log" >&2
    echo "slurm: slurmrestd on port $port does not answer" >&2
    return 1
}

slurm_ctld_kill() {
    local pid
    pid=$(cat "${SLURM_DIR[$1]}/slurmctld.pid" 2>/dev/null) || return 0
    kill -KILL "$pid" 2>/dev/null || true
}

slurm_teardown_all() {
    local n pids=()
    [ -z "$_SLURMREST_PID" ] || kill "$_SLURMREST_PID" 2>/dev/null || true
    for n in "${_SLURM_CLUSTERS[@]}"; do slurm_local_cancel "${SLURM_DIR[$n]}"; done
    for n in "${_SLURM_CLUSTERS[@]}"; do mapfile -t -O ${#pids[@]} pids < <(slurm_local_pids "${SLURM_DIR[$n]}"); done
    # all at once: one 3 s grace for every cluster, not one each
    [ ${#pids[@]} -gt 0 ] && slurm_local_kill "${pids[@]}"
    _SLURM_CLUSTERS=()
    if [ -n "${_SLURM_OWN_TMP:-}" ] && [ "${LOCUS_KEEP_TMP:-0}" != 1 ]; then rm -rf "$TMP"; fi
}

# Chain with the trap of a library sourced before (lib/boinc.sh's _cleanup,
# which ends with exit): the Slurm daemons go first.
_slurm_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
# the previous handler sees the test's exit status, not ours
# shellcheck disable=SC2064 # the previous handler is fixed now
trap "_slurm_rc=\$?; set +e; slurm_teardown_all; (exit \$_slurm_rc); ${_slurm_prev_trap:-:}" EXIT
