# tests/integration/lib/slurmrest.sh - slurmrestd in front of the tests'
# Slurm clusters (lib/slurm.sh), as docs/clusters.md sets one up: slurmctld
# accepting JWTs signed with a key made here, a slurmrestd per cluster on a
# loopback port of its own, run as nobody. Sourced after lib/slurm.sh and
# lib/clusters.sh, before the clusters start.
#
#   slurmrest_install        installs slurmrestd and the JWT plugin if missing
#                            (scripts/deps.sh has them too); sets
#                            SLURM_EXTRA_CONF so that the clusters started
#                            next accept JWTs (SLURMREST_EXTRA_CONF: lines
#                            added to it)
#   slurmrest_token NAME USER  a token of USER for cluster NAME, on stdout
#   slurmrest_up NAME        a slurmrestd for cluster NAME; waits until it
#                            answers; sets REST_URL[NAME] and REST_PID[NAME]
#                            (its PID also in $TMP/slurmrestd.NAME.pid, its
#                            log in $TMP/slurmrestd.NAME.log)
#
# Every slurmrestd started here is stopped by PID when the test exits.

declare -A REST_URL REST_PID

slurmrest_install() {
    local p missing=
    for p in slurmrestd slurm-wlm-jwt-plugin; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        # shellcheck disable=SC2086 # one package per word
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
            $missing >/dev/null || { echo "slurmrest: cannot install$missing" >&2; return 1; }
    fi
    # the key slurmctld signs and checks tokens with: 32 random bytes, its own
    (umask 077; head -c 32 /dev/urandom >"$TMP/jwt.key")
    # shellcheck disable=SC2034 # read by lib/slurm.sh
    SLURM_EXTRA_CONF=$(printf 'AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=%s' "$TMP/jwt.key")
    [ -z "${SLURMREST_EXTRA_CONF:-}" ] || SLURM_EXTRA_CONF=$(printf '%s\n%s' "$SLURM_EXTRA_CONF" "$SLURMREST_EXTRA_CONF")
}

slurmrest_token() {
    SLURM_CONF=${SLURM_CONF_OF[$1]} scontrol token username="$2" lifespan=7200 | sed -n 's/^SLURM_JWT=//p'
}

_slurmrest_pinged() {
    curl -sf --max-time 2 -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $2" \
        "$1/slurm/v0.0.38/ping" | grep -q '"ping": "UP"'
}

slurmrest_up() {
    local name=$1 port token
    port=$(free_ports 0) || return 1
    # slurmrestd refuses to run as root or SlurmUser: nobody, once its socket is open
    SLURM_CONF=${SLURM_CONF_OF[$name]} SLURM_JWT=daemon /usr/sbin/slurmrestd -a rest_auth/jwt -s openapi/v0.0.38 \
        -u nobody -g nogroup "127.0.0.1:$port" >"$TMP/slurmrestd.$name.log" 2>&1 &
    REST_PID[$name]=$!
    echo "${REST_PID[$name]}" >"$TMP/slurmrestd.$name.pid"
    REST_URL[$name]=http://127.0.0.1:$port
    token=$(slurmrest_token "$name" root)
    if ! wait_for 20 _slurmrest_pinged "${REST_URL[$name]}" "$token"; then
        cat "$TMP/slurmrestd.$name.log" >&2
        echo "slurmrest: slurmrestd of $name on port $port does not answer" >&2
        return 1
    fi
}

_slurmrest_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
# shellcheck disable=SC2064 # the previous handler is fixed now
trap "_slurmrest_rc=\$?; set +e; for _p in \${REST_PID[@]}; do kill \$_p 2>/dev/null; done;
    (exit \$_slurmrest_rc); ${_slurmrest_prev_trap:-:}" EXIT
