# tests/integration/lib/oar.sh - a real OAR 2.5 cluster and its REST API on
# loopback for integration tests: no systemd and no sshd (OAR's ssh is
# replaced by a wrapper that runs the command through oarsh_shell on this
# host). Sourced by a test that has set $TMP.
#
#   oar_up NRES PORT   starts PostgreSQL (if down), the OAR server and the
#                      API (Apache on 127.0.0.1:PORT) with NRES resources
#                      on "localhost", each with a "core" property, all
#                      Alive (others an earlier test added: Absent); sets
#                      OAR_API=http://127.0.0.1:PORT/oarapi and OAR_DIR;
#                      OAR_EXTRA_CONF, when set: KEY=VALUE lines set in
#                      oar.conf too (a test's own tuning); OAR_API_FASTCGI=1:
#                      the API served by FastCGI (mod_fcgid), see oar_up
#   oar_api_kill       stops the API (a dead scheduler API)
#   oar_teardown       stops what oar_up started, by PID, and puts back
#                      /etc/oar/oar.conf as it was
#
# OAR allows one instance per machine (fixed paths under /etc/oar,
# /var/lib/oar): the database is kept between tests, so job ids grow.

. "$(dirname "${BASH_SOURCE[0]}")/apache.sh"

OAR_DIR=
OAR_API=
_OAR_PG_STARTED=
_OAR_CONF=/etc/oar/oar.conf

# oar_install: the OAR packages, PostgreSQL's server, which they do not
# bring (only its client), and Apache's FastCGI module for the API, if
# missing.
oar_install() {
    local p missing=()
    for p in postgresql oar-server oar-server-pgsql oar-node oar-user oar-user-pgsql oar-restful-api \
        libapache2-mod-fcgid; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
}

# _oar_set KEY VALUE: KEY="VALUE" in oar.conf, replacing any setting of KEY.
_oar_set() {
    sed -i "/^$1=/d" "$_OAR_CONF"
    echo "$1=\"$2\"" >>"$_OAR_CONF"
}

oar_up() {
    local nres=$1 port=$2 i
    OAR_DIR=$TMP/oar
    mkdir -p "$OAR_DIR"
    oar_install || { echo "oar: cannot install the OAR packages" >&2; return 1; }
    if ! pg_ctlcluster 15 main status >/dev/null 2>&1; then
        pg_ctlcluster 15 main start || { echo "oar: PostgreSQL does not start" >&2; return 1; }
        _OAR_PG_STARTED=1
    fi
    cp -p "$_OAR_CONF" "$OAR_DIR/oar.conf.orig"
    _oar_set DB_BASE_PASSWD oarpw
    _oar_set DB_BASE_PASSWD_RO oarropw
    sed -i 's/^JOB_RESOURCE_MANAGER_PROPERTY_DB_FIELD=/#&/' "$_OAR_CONF"   # no cpuset job manager
    cat >"$OAR_DIR/fakessh" <<'FAKE'
#!/bin/bash
# OAR's "ssh [options] HOST COMMAND": every node is this host, so drop the
# options and the host and run COMMAND as sshd would for user oar.
while [ $# -gt 0 ]; do
  case "$1" in
    -p|-o|-i|-l|-e|-F|-E|-b|-c|-m|-O|-Q|-S|-W|-w|-J|-L|-R|-D|-B|-I) shift 2;;
    -*) shift;;
    *) shift; break;;
  esac
done
exec /usr/lib/oar/oarsh_shell -c "$*"
FAKE
    chmod 755 "$OAR_DIR/fakessh"
    chmod 755 "$TMP"
    _oar_set OPENSSH_CMD "$OAR_DIR/fakessh"
    printf '#!/bin/sh\necho "GLOBAL_STRESS=$(cat %s/stress 2>/dev/null || echo 0)"\n' "$OAR_DIR" >"$OAR_DIR/stress.sh"
    chmod 755 "$OAR_DIR/stress.sh"
    _oar_set API_STRESS_FACTOR_SCRIPT "$OAR_DIR/stress.sh"
    local k v
    while IFS='=' read -r k v; do
        if [ -n "$k" ]; then _oar_set "$k" "$v"; fi
    done <<<"${OAR_EXTRA_CONF:-}"
    oar-database --check >/dev/null 2>&1 || oar-database --create --db-is-local -y >/dev/null \
        || { echo "oar: cannot create the database" >&2; return 1; }
    /usr/sbin/oar-server || { echo "oar: oar-server does not start" >&2; return 1; }
    _oar_resources "$nres" || { echo "oar: cannot set up $nres resources" >&2; return 1; }
    # OAR_API_FASTCGI=1: the API script (made for FastCGI: CGI::Fast, the
    # FastCgiServer of OAR's own Apache configuration) stays loaded between
    # requests, in mod_fcgid's processes, instead of a Perl start-up for
    # each (~0.15 s of CPU, several times a grid cycle); same script, same
    # answers. The script ends itself after its 51st request, while
    # mod_fcgid may be handing it a 52nd (then lost, an HTTP 500):
    # mod_fcgid retires it after 50 instead. Plain CGI where mod_fcgid is
    # not there.
    local fcgi="" fcgid_so=/usr/lib/apache2/modules/mod_fcgid.so
    if [ "${OAR_API_FASTCGI:-0}" = 1 ]; then
        if [ -e "$fcgid_so" ]; then
            install -d -o oar -g oar "$OAR_DIR/fcgid"
            fcgi="LoadModule fcgid_module $fcgid_so
FcgidIPCDir $OAR_DIR/fcgid
FcgidProcessTableFile $OAR_DIR/fcgid/table
FcgidInitialEnv OARCONFFILE /etc/oar/oar.conf
FcgidMaxRequestLen 67108864
FcgidMaxRequestsPerProcess 50"
        else
            echo "oar: no mod_fcgid, the API runs as a plain CGI" >&2
        fi
    fi
    { apache_conf "$OAR_DIR" "$port" oar authz_host alias cgi env mime; cat <<CONF
$fcgi
TypesConfig /etc/mime.types
ScriptAlias /oarapi /usr/lib/cgi-bin/oarapi/oarapi.cgi
<Directory /usr/lib/cgi-bin/oarapi>
  Options +ExecCGI
  ${fcgi:+SetHandler fcgid-script}
  SetEnv OARCONFFILE /etc/oar/oar.conf
  Require local
</Directory>
CONF
    } >"$OAR_DIR/httpd.conf"
    _oar_delete_all || { echo "oar: jobs of an earlier run do not go away" >&2; return 1; }
    apache2 -f "$OAR_DIR/httpd.conf" -k start || { echo "oar: apache does not start" >&2; return 1; }
    OAR_API=http://127.0.0.1:$port/oarapi
    for i in $(seq 1 100); do
        curl -sf --max-time 2 "$OAR_API/resources.json" >/dev/null && return 0
        sleep 0.2
    done
    echo "oar: the API does not answer at $OAR_API" >&2
    tail -n 20 "$OAR_DIR/apache-error.log" >&2 || true
    return 1
}

# _oar_resources NRES: exactly NRES usable resources, whatever an earlier
# test left in the database (which outlives it): the missing ones added,
# the first NRES Alive (a test that stopped OAR while it launched a job may
# have left one Suspected, which takes no job until an admin's fix) and any
# beyond Absent. Only what differs is changed (each change is a Perl
# start-up), through the running server, then awaited.
_oar_states() { oarnodes -s 2>/dev/null | awk '$2 == ":" && $1 ~ /^[0-9]+$/ {print $1, $3}'; }
_oar_resources() {
    local nres=$1 have id s state k i
    oarproperty -a core >/dev/null 2>&1 || true
    have=$(_oar_states | wc -l)
    for i in $(seq $((have + 1)) "$nres"); do oarnodesetting -a -h localhost -p core="$i" >/dev/null || return 1; done
    for i in $(seq 50); do
        k=0 state=ok
        while read -r id s; do
            k=$((k + 1))
            if [ "$k" -le "$nres" ] && [ "$s" != Alive ]; then
                [ "$i" = 1 ] && { oarnodesetting -r "$id" -s Alive >/dev/null || return 1; }
                state=changing
            elif [ "$k" -gt "$nres" ] && [ "$s" != Absent ]; then
                [ "$i" = 1 ] && { oarnodesetting -r "$id" -s Absent >/dev/null || return 1; }
                state=changing
            fi
        done < <(_oar_states)
        [ "$state" = ok ] && return 0
        sleep 0.2
    done
    return 1
}

# _oar_delete_all: deletes every job not ended (the database outlives a
# test), and waits until they are gone.
_oar_delete_all() {
    local ids i
    for i in $(seq 60); do
        ids=$(oarstat 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1}')
        [ -z "$ids" ] && return 0
        # shellcheck disable=SC2086 # one id per word
        [ $((i % 10)) = 1 ] && oardel $ids >/dev/null 2>&1
        sleep 0.5
    done
    return 1
}

oar_api_kill() {
    [ -n "$OAR_DIR" ] && apache2 -f "$OAR_DIR/httpd.conf" -k stop >/dev/null 2>&1 || true
    local i
    for i in $(seq 30); do [ -e "$OAR_DIR/apache.pid" ] || return 0; sleep 0.1; done
}

oar_teardown() {
    [ -n "$OAR_DIR" ] || return 0
    local pid i
    oar_api_kill
    _oar_delete_all || true
    pid=$(cat /var/run/oar-server.pid 2>/dev/null) || pid=
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    [ -e "$OAR_DIR/oar.conf.orig" ] && cp -p "$OAR_DIR/oar.conf.orig" "$_OAR_CONF"
    [ -n "$_OAR_PG_STARTED" ] && pg_ctlcluster 15 main stop >/dev/null 2>&1
    OAR_DIR=
}

_oar_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
# the previous handler sees the test's exit status, not ours
# shellcheck disable=SC2064 # the previous handler is fixed now
trap "_oar_rc=\$?; set +e; oar_teardown; (exit \$_oar_rc); ${_oar_prev_trap:-:}" EXIT
