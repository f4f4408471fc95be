# tests/integration/lib/boinc.sh - helpers for integration tests that run
# locusd and real BOINC clients on loopback. Sourced by a test (it lives in a
# subfolder so that ctest's tests/integration/*.sh glob does not take it).
#
# Sourcing it creates the test's temporary folder ($TMP) and installs a trap
# on EXIT that stops everything the test started, by PID only (locusd, the
# BOINC clients and the apps they run), then removes $TMP unless
# LOCUS_KEEP_TMP=1. Needs only bash, coreutils, curl, sqlite3 and
# boinc-client: no python, no jq (a fresh CI machine has just scripts/deps.sh).
#
# Variables a test may read: TMP, LOCUS, LOCUSD, WORKER, TEST_NAME,
# URL and PORT (after make_project), LOCUSD_PID, LOCUSD_LOG.

. "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib/boinc_client.sh"
. "$(dirname "${BASH_SOURCE[0]}")/codes.sh"

TEST_NAME=$(basename "$0" .sh)
LOCUS_BUILD_DIR=${LOCUS_BUILD_DIR:-build}
LOCUS_BUILD_DIR=$(cd "$LOCUS_BUILD_DIR" 2>/dev/null && pwd) || {
    echo "$TEST_NAME: LOCUS_BUILD_DIR ${LOCUS_BUILD_DIR} does not exist" >&2; exit 1; }
LOCUS=$LOCUS_BUILD_DIR/bin/locus
LOCUSD=$LOCUS_BUILD_DIR/bin/locusd
WORKER=$LOCUS_BUILD_DIR/examples/worker
for _b in "$LOCUS" "$LOCUSD" "$WORKER"; do
    [ -x "$_b" ] || { echo "$TEST_NAME: $_b is not built (set LOCUS_BUILD_DIR)" >&2; exit 1; }
done
for _b in boinc boinccmd sqlite3 curl; do
    command -v "$_b" >/dev/null || {
        echo "$TEST_NAME: $_b is missing; run scripts/deps.sh" >&2; exit 1; }
done

# ASan/UBSan in locusd: report to its log, and make UBSan fatal too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

TMP=$(mktemp -d "/tmp/locus-$TEST_NAME-XXXXXX")
LOCUSD_LOG=$TMP/locusd.log
LOCUSD_PID=
URL=
PORT=
T_START=$(date +%s)
_CLIENTS=()                 # names of started clients
declare -A CLIENT_DIR CLIENT_PORT CLIENT_PID

# ---- messages ----

elapsed() { echo $(( $(date +%s) - T_START )); }
say() { echo "[$TEST_NAME +$(elapsed)s] $*"; }

# dump_logs: the tails of locusd's and every client's log, on stderr.
dump_logs() {
    {
        if [ -s "$LOCUSD_LOG" ]; then
            echo "---- locusd log (last 40 lines of $LOCUSD_LOG) ----"
            tail -n 40 "$LOCUSD_LOG"
        fi
        local n
        for n in "${_CLIENTS[@]}"; do
            echo "---- client $n log (last 25 lines of ${CLIENT_DIR[$n]}/client.log) ----"
            tail -n 25 "${CLIENT_DIR[$n]}/client.log" 2>/dev/null || true
        done
    } >&2
}

# fail MSG: says what failed with the logs' tails, and ends the test.
fail() {
    echo "[$TEST_NAME +$(elapsed)s] FAIL: $*" >&2
    dump_logs
    exit 1
}

# ---- processes ----

# descendants PID: every live descendant of PID (from /proc, no procps).
descendants() {
    local parent=$1 f pid ppid rest kids=()
    for f in /proc/[0-9]*/stat; do
        # stat is "pid (comm) state ppid ..."; comm may hold spaces or ')'
        { read -r rest <"$f"; } 2>/dev/null || continue
        pid=${rest%% *}
        rest=${rest##*) }        # "STATE PPID ..."
        ppid=${rest#* }
        ppid=${ppid%% *}
        [ "$ppid" = "$parent" ] && kids+=("$pid")
    done
    for pid in "${kids[@]}"; do
        echo "$pid"
        descendants "$pid"
    done
}

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# kill_tree PID: SIGKILL to PID and all its descendants (the apps a client runs).
kill_tree() {
    local pid=$1 all
    alive "$pid" || return 0
    all=$(descendants "$pid")
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL "$pid" $all 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

_cleanup() {
    local rc=$? n
    set +e
    for n in "${_CLIENTS[@]}"; do kill_tree "${CLIENT_PID[$n]}"; done
    if alive "$LOCUSD_PID"; then
        kill -TERM "$LOCUSD_PID" 2>/dev/null
        local i
        for i in $(seq 50); do alive "$LOCUSD_PID" || break; sleep 0.1; done
        kill_tree "$LOCUSD_PID"
    fi
    if [ "${LOCUS_KEEP_TMP:-0}" = 1 ]; then
        echo "[$TEST_NAME] kept $TMP" >&2
    else
        rm -rf "$TMP"
    fi
    exit $rc
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

# port: a loopback port nothing listens on and this test has not used yet.
port() { free_port "$TMP/.ports"; }

# ---- the store ----

# sql PROJ QUERY: runs QUERY on PROJ's store, read-only; one row per line,
# columns separated by '|'.
sql() {
    sqlite3 -readonly -batch -noheader -cmd '.timeout 10000' "$1/locus.db" "$2"
}

# INSTANCE_NAME: in a query over batches b, jobs j and instances i, the
# wire name of instance i (model.h: instance_wire_name).
INSTANCE_NAME="iif(b.task_names = $TASK_NAMES_JOB, j.name || '__', b.name || '_') || j.id || '_' || i.seq"

# dump_store PROJ: the whole store as SQL text.
dump_store() { sqlite3 -readonly -batch -cmd '.timeout 10000' "$1/locus.db" .dump; }

# set_config PROJ NAME VALUE: sets <NAME>VALUE</NAME> in PROJ/config.xml
# (VALUE "/" writes the flag <NAME/>). Before starting locusd.
set_config() {
    local proj=$1 name=$2 value=$3 f=$1/config.xml line
    if [ "$value" = / ]; then line="  <$name/>"; else line="  <$name>$value</$name>"; fi
    grep -v -e "<$name>.*</$name>" -e "<$name/>" "$f" | sed "s|</config>|$line\n</config>|" >"$f.new"
    chmod --reference="$f" "$f.new"   # private as locus made it
    mv "$f.new" "$f"
}

# make_project PROJ [USER...]: a project at a fresh port on 127.0.0.1 with the
# worker app, an input file in.dat and the given users (default alice bob);
# each user's key is in $TMP/key.USER. Sets PORT and URL. Fast RPC pacing.
make_project() {
    local proj=$1 u
    shift
    [ $# -gt 0 ] || set -- alice bob
    PORT=$(port)
    URL=http://127.0.0.1:$PORT/proj/
    "$LOCUS" init "$proj" --url "$URL" --name "Locus $TEST_NAME" >/dev/null || fail "locus init failed"
    "$LOCUS" app add "$proj" worker --platform x86_64-pc-linux-gnu --exe "$WORKER" --version 100 >/dev/null \
        || fail "locus app add failed"
    head -c 3000 /dev/urandom >"$TMP/in.dat"
    "$LOCUS" file add "$proj" "$TMP/in.dat" >/dev/null || fail "locus file add failed"
    for u in "$@"; do
        "$LOCUS" user create "$proj" "$u" >"$TMP/key.$u" || fail "locus user create $u failed"
        [ -s "$TMP/key.$u" ] || fail "locus user create $u printed no key"
    done
    set_config "$proj" request_delay 1
    set_config "$proj" next_rpc_delay 5
    set_config "$proj" transition_period 1
}

key_of() { cat "$TMP/key.$1"; }

# map_accounts PROJ USER...: each user's campaigns run as the cluster
# account of the same name (locus user account, on every cluster).
map_accounts() {
    local proj=$1 u
    shift
    for u in "$@"; do
        "$LOCUS" user account "$proj" "$u" "$u" || fail "locus user account $u failed"
    done
}

# job_token PROJ: the store's token in the names of the jobs it submits to
# clusters (locus.TOKEN.CAMPAIGN[.TAG]).
job_token() { sql "$1" "SELECT value FROM store_meta WHERE name='job_token'"; }

# submit_key_of PROJ NAME: a submit key of user NAME, made a submitter: the
# key the REST API takes (an account key attaches hosts only). Minted once
# per test, kept in $TMP/skey.NAME.
submit_key_of() {
    if [ ! -s "$TMP/skey.$2" ]; then
        "$LOCUS" user role "$1" "$2" submitter || fail "locus user role $2 submitter failed"
        "$LOCUS" user key "$1" "$2" >"$TMP/skey.$2" || fail "locus user key $2 failed"
    fi
    cat "$TMP/skey.$2"
}

# api_get PATH [KEY]: GET /api/v1/PATH of the locusd at $PORT, with KEY as
# its bearer key when given; prints the HTTP status (000: no answer), the
# body in $TMP/body.
api_get() {
    local auth=()
    [ -n "${2:-}" ] && auth=(-H "Authorization: Bearer $2")
    curl -s -o "$TMP/body" -w '%{http_code}' --max-time 30 "${auth[@]}" "http://127.0.0.1:$PORT/api/v1/$1" || echo 000
}

# ---- locusd ----

# start_locusd PROJ: starts locusd (debug log appended to $LOCUSD_LOG) and
# waits until it serves the master page. LOCUSD_DEBUG overrides the debug
# topics. locusd is given a relative path from PROJ's parent folder, as the
# README shows, so that every test runs its hooks and generators that way.
start_locusd() {
    local proj=$1 i
    echo "==== locusd start at +$(elapsed)s ====" >>"$LOCUSD_LOG"
    (cd "$(dirname "$proj")" && exec "$LOCUSD" "./$(basename "$proj")" --debug "${LOCUSD_DEBUG:-rpc,sched,valid,http}") \
        </dev/null >>"$LOCUSD_LOG" 2>&1 &
    LOCUSD_PID=$!
    for i in $(seq 150); do
        alive "$LOCUSD_PID" || fail "locusd exited at start"
        curl -sf -o /dev/null --max-time 2 "$URL" && return 0
        sleep 0.1
    done
    fail "locusd does not serve $URL after 15 s"
}

# check_sanitizers: fails if locusd's log holds a sanitizer report.
check_sanitizers() {
    if grep -q -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' -e 'runtime error:' "$LOCUSD_LOG"; then
        grep -n -A 30 -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' -e 'runtime error:' "$LOCUSD_LOG" \
            | head -n 80 >&2
        fail "sanitizer report in locusd's log"
    fi
}

# stop_locusd: SIGTERM, and a clean exit (status 0, no sanitizer report) expected.
stop_locusd() {
    alive "$LOCUSD_PID" || fail "locusd is not running (it died?)"
    kill -TERM "$LOCUSD_PID"
    local rc=0
    wait "$LOCUSD_PID" || rc=$?
    LOCUSD_PID=
    check_sanitizers
    [ "$rc" -eq 0 ] || fail "locusd exited with status $rc on SIGTERM"
}

# kill9_locusd: the crash: SIGKILL, no chance to flush anything.
kill9_locusd() {
    alive "$LOCUSD_PID" || fail "locusd is not running (it died?)"
    kill -KILL "$LOCUSD_PID"
    wait "$LOCUSD_PID" 2>/dev/null || true
    LOCUSD_PID=
    echo "==== locusd killed with SIGKILL at +$(elapsed)s ====" >>"$LOCUSD_LOG"
    check_sanitizers
}

# locusd_alive: locusd runs and serves its master page.
locusd_alive() { alive "$LOCUSD_PID" && curl -sf -o /dev/null --max-time 5 "$URL"; }

# ---- BOINC clients ----

# bcmd NAME ARGS...: boinccmd against client NAME.
bcmd() {
    local n=$1
    shift
    boinc_cmd "${CLIENT_DIR[$n]}" "$@"
}

# start_client NAME KEY [NCPUS]: a BOINC client daemon with its own data
# folder and GUI RPC port, attached to $URL with KEY (attach checked). With
# NCPUS, the client uses (and reports) that many CPUs (cc_config <ncpus>),
# set before it attaches.
start_client() {
    local n=$1 key=$2 ncpus=${3:-} d=$TMP/client-$1
    CLIENT_DIR[$n]=$d
    CLIENT_PORT[$n]=$(port)
    CLIENT_PID[$n]=
    _CLIENTS+=("$n")
    boinc_client_start "$d" "${CLIENT_PORT[$n]}" || fail "client $n did not start"
    CLIENT_PID[$n]=$(cat "$d/client.pid")
    if [ -n "$ncpus" ]; then
        sed -i "s|<options>|<options>\n    <ncpus>$ncpus</ncpus>|" "$d/cc_config.xml"
        bcmd "$n" --read_cc_config >/dev/null 2>&1 || fail "client $n: boinccmd --read_cc_config failed"
    fi
    boinc_client_attach "$d" "$URL" "$key" || fail "client $n could not attach to $URL"
}

# client_update NAME: an RPC now, cutting backoffs.
client_update() { boinc_client_update "${CLIENT_DIR[$1]}" "$URL"; }

# client_ntasks NAME: how many tasks the client holds.
client_ntasks() { bcmd "$1" --get_tasks 2>/dev/null | grep -c '^ *name: ' || true; }

# client_hostid NAME: the host id locusd gave the client (empty if none yet).
client_hostid() {
    sed -n 's|.*<hostid>\([0-9]*\)</hostid>.*|\1|p' "${CLIENT_DIR[$1]}"/client_state.xml 2>/dev/null | head -n 1
}

# wait_first_rpc NAME...: waits (30 s at most) until each client has a
# host id (made its first scheduler RPC), asking for one now and then: a
# client that just attached takes its time otherwise.
wait_first_rpc() {
    local i n h left
    for i in $(seq 30); do
        left=
        for n in "$@"; do h=$(client_hostid "$n"); [ "${h:-0}" -gt 0 ] || left="$left $n"; done
        [ -z "$left" ] && return 0
        [ $((i % 3)) -ne 1 ] || for n in $left; do client_update "$n"; done
        sleep 1
    done
    fail "no scheduler RPC from$left within 30 s of attaching"
}

# client_project_dir NAME: the client's folder of the project at $URL
# (the master URL without its scheme, ':' and '/' as '_').
client_project_dir() {
    local u=${URL#http://}
    u=${u%/}
    u=${u//:/_}
    echo "${CLIENT_DIR[$1]}/projects/${u//\//_}"
}

# client_acked NAME: the task names the client logged as acknowledged.
client_acked() {
    sed -n 's/.*got ack for task \([^ ]*\).*/\1/p' "${CLIENT_DIR[$1]}/client.log" | sort -u
}

# wait_clients_idle SECONDS: waits until no client holds a task (every result
# reported and acknowledged), asking idle ones for an RPC now and then.
wait_clients_idle() {
    local i n k left=0
    for i in $(seq "$1"); do
        left=0
        for n in "${_CLIENTS[@]}"; do
            k=$(client_ntasks "$n")
            left=$((left + k))
            [ "$k" -eq 0 ] || [ $((i % 5)) -ne 0 ] || client_update "$n"
        done
        [ "$left" -eq 0 ] && return 0
        sleep 1
    done
    fail "clients still hold $left tasks $1 s after the batch was done"
}

# stop_client NAME: the client and the apps it runs, killed.
stop_client() { kill_tree "${CLIENT_PID[$1]}"; }

# ---- batches ----

# batch_counts PROJ BATCH: "jobs active validated done failed cancelled inst_in_progress".
batch_counts() {   # a generated cursor batch's jobs are in its chunks (parent_id)
    sql "$1" "WITH bs AS (SELECT id FROM batches WHERE name='$2'
                          UNION ALL SELECT c.id FROM batches c JOIN batches p ON c.parent_id=p.id WHERE p.name='$2')
              SELECT count(*), sum(j.state=$JOB_ACTIVE), sum(j.state=$JOB_VALIDATED), sum(j.state=$JOB_DONE),
                     sum(j.state=$JOB_FAILED), sum(j.state=$JOB_CANCELLED),
                     (SELECT count(*) FROM instances i JOIN jobs j2 ON i.job_id=j2.id
                       WHERE j2.batch_id IN (SELECT id FROM bs) AND i.state=$INST_IN_PROGRESS)
              FROM jobs j WHERE j.batch_id IN (SELECT id FROM bs)" | tr '|' ' '
}

# wait_batch_done PROJ BATCH TIMEOUT [HOOK]: waits until the batch's state is
# done (1), printing progress every 10 s; nudges idle clients (an RPC now)
# so that no-work backoffs do not stall the end. HOOK, if given, is a command
# run every round (the crash test kills locusd from there).
wait_batch_done() {
    local proj=$1 b=$2 timeout=$3 hook=${4:-} t0 now last=0 lastnudge=0 st n
    t0=$(date +%s)
    while :; do
        st=$(sql "$proj" "SELECT state FROM batches WHERE name='$b'" 2>/dev/null || echo "?")
        [ "$st" = 1 ] && { say "batch $b done after $(( $(date +%s) - t0 ))s: $(batch_counts "$proj" "$b")"; return 0; }
        now=$(date +%s)
        [ $((now - t0)) -lt "$timeout" ] || fail "batch $b not done after ${timeout}s: (jobs active validated done failed cancelled inst_in_progress) = $(batch_counts "$proj" "$b")"
        if [ $((now - last)) -ge 10 ]; then
            say "progress: (jobs active validated done failed cancelled inst_in_progress) = $(batch_counts "$proj" "$b" 2>/dev/null || echo '?')"
            last=$now
        fi
        if [ $((now - lastnudge)) -ge 8 ]; then
            for n in "${_CLIENTS[@]}"; do
                alive "${CLIENT_PID[$n]}" || fail "client $n died"
                [ "$(client_ntasks "$n")" -gt 0 ] || client_update "$n"
            done
            lastnudge=$now
        fi
        [ -z "$hook" ] || $hook
        [ -z "$LOCUSD_PID" ] || alive "$LOCUSD_PID" || fail "locusd died"
        sleep 1
    done
}

# uploads_left PROJ: waits up to 15 s for PROJ's upload folder to empty
# (the deleter runs once a job's end is committed); prints how many remain.
uploads_left() {
    local i left
    for i in $(seq 30); do
        left=$(find "$1/upload" -type f | wc -l)
        [ "$left" -eq 0 ] && break
        sleep 0.5
    done
    echo "$left"
}

# upload_path PROJ NAME: where locusd keeps an uploaded file (fan-out folder).
upload_path() { find "$1/upload" -type f -name "$2" 2>/dev/null | head -n 1; }

# own_build PDIR: a volunteer's own build of the app worker, put in the
# client's project folder PDIR (BOINC's anonymous platform): the project's
# worker program as myworker, declared version 555 in an app_info.xml.
own_build() {
    cp "$WORKER" "$1/myworker"
    cat >"$1/app_info.xml" <<'XML'
<app_info>
  <app><name>worker</name></app>
  <file_info><name>myworker</name><executable/></file_info>
  <app_version>
    <app_name>worker</app_name>
    <version_num>555</version_num>
    <platform>x86_64-pc-linux-gnu</platform>
    <avg_ncpus>1</avg_ncpus>
    <file_ref><file_name>myworker</file_name><main_program/></file_ref>
  </app_version>
</app_info>
XML
}

# own_build_template: a batch template for own_build's tests, in $TMP/own.json
own_build_template() {
    echo '{"cmdline": "--iterations 200000 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/own.json"
}

# refuse_own_builds PROJ: the operator closes the door to hosts with their
# own builds (<no_anonymous_platform/>, locusd restarted) and orders batch
# anon2 (2 jobs), which such a host must not get.
refuse_own_builds() {
    stop_locusd
    set_config "$1" no_anonymous_platform /
    start_locusd "$1"
    "$LOCUS" batch create "$1" --app worker --count 2 --input-template "$TMP/own.json" --name anon2 \
        --quorum 1 --delay-bound 3600 >/dev/null || fail "batch anon2"
}

# anon2_sent PROJ: how many instances of refuse_own_builds's batch went out.
anon2_sent() {
    sql "$1" "SELECT count(*) FROM instances i JOIN jobs j ON j.id=i.job_id JOIN batches b ON b.id=j.batch_id
              WHERE b.name='anon2'"
}

# check_own_build_ran PROJ BATCH: every instance of BATCH is recorded as run
# by the host's own version (APP_VERSION_ANONYMOUS, -1), and the output of
# its first job is what the project's worker computes here.
check_own_build_ran() {
    local proj=$1 batch=$2 bad job res
    bad=$(sql "$proj" "SELECT i.id||':'||i.app_version_id FROM instances i JOIN jobs j ON j.id=i.job_id
                       JOIN batches b ON b.id=j.batch_id WHERE b.name='$batch' AND i.app_version_id<>-1")
    [ -z "$bad" ] || fail "instances recorded with a project version: $bad"
    job=$(sql "$proj" "SELECT j.name FROM jobs j JOIN batches b ON b.id=j.batch_id WHERE b.name='$batch'
                       ORDER BY j.id LIMIT 1")
    res=$(find "$proj/results/$batch" -name out -path "*/$job/*" | head -n 1)
    [ -s "$res" ] || fail "no result of $job in $proj/results/$batch"
    rm -rf "$TMP/here"
    mkdir "$TMP/here"
    cp "$TMP/in.dat" "$TMP/here/in"
    (cd "$TMP/here" && "$WORKER" --iterations 200000 --seed "${job##*_}" 2>/dev/null) || fail "the worker failed here"
    cmp -s "$res" "$TMP/here/out" || fail "$job's output differs from the worker's own"
}
