# boinc_client.sh - run real BOINC clients for locus demos and tests:
# each in its own data folder, configured so that it talks only to loopback
# and never waits long (cc_config.xml and the retry delays of
# boinc_client_start).
# Source it; it defines functions and changes nothing by itself. Needs only
# bash, coreutils and boinc-client.

# boinc_client_start DIR PORT: starts a client daemon with data in DIR and
# its GUI RPC port PORT, and waits until it answers; its pid goes to
# DIR/client.pid, its port to DIR/gui_port, its log to DIR/client.log.
# GPUs are off, unless BOINC_CLIENT_GPUS holds XML for cc_config.xml's
# <options> (the <coproc> a volunteer declares, say; a single space for
# none): then the client looks for GPUs, logs what it finds, and may use
# them while the computer is in use. BOINC_CLIENT_BIN names the client
# program (default: boinc on the PATH). Clients run as one of several on
# the computer (allow_multiple_clients: each is a host of its own), unless
# BOINC_CLIENT_SINGLE=1: then as a volunteer's only client.
boinc_client_start() {
    local dir=$1 port=$2 pid i gpus=${BOINC_CLIENT_GPUS:-} no_gpus='<no_gpus>1</no_gpus>' flag=--no_gpus
    local bin=${BOINC_CLIENT_BIN:-boinc} gpu_log= multiple='<allow_multiple_clients>1</allow_multiple_clients>'
    local multiple_flag=--allow_multiple_clients
    [ -z "$gpus" ] || { no_gpus=$gpus; flag=; gpu_log='<coproc_debug>1</coproc_debug>'; }
    [ -z "${BOINC_CLIENT_SINGLE:-}" ] || { multiple=; multiple_flag=; }
    mkdir -p "$dir"
    : > "$dir/gui_rpc_auth.cfg"   # empty: boinccmd needs no password
    cat > "$dir/cc_config.xml" <<XML
<cc_config>
  <log_flags>
    <sched_op_debug>1</sched_op_debug>
    <task_debug>1</task_debug>
    <file_xfer_debug>1</file_xfer_debug>
    $gpu_log
  </log_flags>
  <options>
    <no_info_fetch>1</no_info_fetch>
    <dont_contact_ref_site>1</dont_contact_ref_site>
    $no_gpus
    <skip_cpu_benchmarks>1</skip_cpu_benchmarks>
    <report_results_immediately>1</report_results_immediately>
    $multiple
  </options>
</cc_config>
XML
    cat > "$dir/global_prefs_override.xml" <<'XML'
<global_preferences>
  <run_if_user_active>1</run_if_user_active>
  <suspend_cpu_usage>0</suspend_cpu_usage>
  <cpu_usage_limit>100</cpu_usage_limit>
  <run_gpu_if_user_active>1</run_gpu_if_user_active>
</global_preferences>
XML
    echo "$port" > "$dir/gui_port"
    (cd "$dir" && exec "$bin" --dir "$dir" --gui_rpc_port "$port" --no_info_fetch --skip_cpu_benchmarks \
        $flag $multiple_flag --sched_retry_delay_min 5 --sched_retry_delay_max 20 \
        --pers_retry_delay_min 5 --pers_retry_delay_max 20 </dev/null >"$dir/client.log" 2>&1) &
    pid=$!
    echo "$pid" > "$dir/client.pid"
    for i in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || { echo "boinc client in $dir exited at start; see $dir/client.log" >&2; return 1; }
        boinc_cmd "$dir" --get_cc_status >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "boinc client in $dir does not answer GUI RPCs; see $dir/client.log" >&2
    return 1
}

# boinc_cmd DIR ARGS...: boinccmd against the client of DIR.
boinc_cmd() {
    local dir=$1
    shift
    (cd "$dir" && boinccmd --host "127.0.0.1:$(cat "$dir/gui_port")" "$@")
}

# boinc_client_attach DIR URL KEY: attaches, and checks that the client
# took the project (boinccmd --project_attach exits 0 even when attaching
# failed). It returns before the client's first scheduler request, so a
# caller may still change the project's settings (nomorework) before any
# work comes; whether the project accepted the key is boinc_client_key_ok's.
boinc_client_attach() {
    local dir=$1 url=$2 key=$3 i
    boinc_cmd "$dir" --project_attach "$url" "$key" >/dev/null 2>&1 || true
    for i in $(seq 100); do
        boinc_cmd "$dir" --get_project_status 2>/dev/null | grep -q "master URL: $url" && return 0
        sleep 0.2
    done
    echo "boinc client in $dir could not attach to $url; see $dir/client.log" >&2
    return 1
}

# boinc_client_key_ok DIR URL: waits (30 s at most) until the project's
# first reply gave the client a user name, that is until the project took
# its key: a client attached with a wrong key stays attached, without one.
boinc_client_key_ok() {
    local dir=$1 url=$2 i
    for i in $(seq 150); do
        boinc_cmd "$dir" --get_project_status 2>/dev/null \
            | awk -v u="master URL: $url" '$0 ~ /^[0-9]+\) -+$/ {p = 0} index($0, u) {p = 1}
                                           p && /^ *user_name: ./ {found = 1} END {exit !found}' && return 0
        [ $((i % 25)) -ne 0 ] || boinc_client_update "$dir" "$url"
        sleep 0.2
    done
    echo "boinc client in $dir has no user name from $url after 30 s: a wrong key?; see $dir/client.log" >&2
    return 1
}

# boinc_client_update DIR URL: asks for a scheduler RPC now, cutting backoffs.
boinc_client_update() { boinc_cmd "$1" --project "$2" update >/dev/null 2>&1 || true; }

# boinc_client_stop DIR: stops the client by its pid (it stops its apps).
boinc_client_stop() {
    local pid i
    pid=$(cat "$1/client.pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || return 0
    for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
}

# free_port [USED_FILE]: a loopback TCP port that nothing listens on; with
# USED_FILE, also one not handed out before (recorded there). Below Linux's
# ephemeral range (32768 on): a port there may be the local end of some
# outgoing connection, which no probe sees and which makes bind() fail.
free_port() {
    local used=${1:-} p i
    for i in $(seq 200); do
        p=$(( 20000 + RANDOM % 12000 ))
        [ -n "$used" ] && grep -qx "$p" "$used" 2>/dev/null && continue
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            [ -z "$used" ] || echo "$p" >> "$used"
            echo "$p"
            return 0
        fi
    done
    echo "free_port: no free port found" >&2
    return 1
}
