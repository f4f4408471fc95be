#!/usr/bin/env bash
# tests/gpu/gpu_check.sh CARRYDIR OUTDIR - the check run once on a machine
# with an NVIDIA GPU (x86-64, root, the NVIDIA driver, no network, no
# package manager). CARRYDIR is what tests/gpu/carry.sh gathered on Debian:
# locusd, locus, gpu_worker, worker, BOINC's boinc and boinccmd, their
# libraries in lib/, maybe sqlite3. It:
#   1. prints the GPU, glibc and OS; finds the driver's libcuda.so.1 and
#      gives it the name BOINC 7.20 dlopen()s, libcuda.so, in a folder put
#      on LD_LIBRARY_PATH with CARRYDIR/lib; checks the programs start;
#   2. runs gpu_worker once by itself (is the app fine on this GPU?);
#   3. makes a project on loopback with two apps: gpu_worker, whose only
#      version has plan class cuda (plan_class.xml: one NVIDIA GPU, 0.2 CPU,
#      CUDA 11 or newer, compute capability 5.0 or more), and worker, a CPU
#      app; a batch of 8 jobs of each;
#   4. starts locusd and one client that may use the GPU, and waits until
#      both batches are done, GPU_CHECK_WAIT (240) s at most. The client is
#      the real BOINC client (no <no_gpus>, GPU use while the user is
#      active, coproc_debug), or with GPU_CHECK_CLIENT=locus, locus-client
#      (which must then be in CARRYDIR);
#   5. copies to OUTDIR, always, failed or not (flat, at most 8 files):
#      summary.txt        what happened, job by job, and the verdict
#      gpu_outputs.txt    the GPU jobs' outputs as the server assimilated them
#      coproc_info.xml    the GPUs BOINC detected (locus-client: its log's lines on them)
#      sched_request_cuda.xml  the first scheduler request seen with <coproc_cuda>
#      client_state.xml   the client's state at the end (locus-client: client_state.json)
#      client.log locusd.log   the logs (1 MB ends each at most)
# Exit status: 0 when all 8 GPU jobs and all 8 CPU jobs are done and the GPU
# outputs are those computed on the CPU with fmaf (EXPECTED_GPU below);
# 3 when the jobs are done but an output differs; 1 otherwise. Every wait
# is bounded: about 5 minutes at most in all.
# A dry run without a GPU: tests/gpu/fake_check.sh (a fake libcuda).
# shellcheck disable=SC2317 # finish and its helpers run from the EXIT trap
set -uo pipefail

[ $# -eq 2 ] || { echo "usage: gpu_check.sh CARRYDIR OUTDIR" >&2; exit 2; }
CARRY=$(cd "$1" 2>/dev/null && pwd) || { echo "gpu_check: no folder $1" >&2; exit 1; }
mkdir -p "$2" || exit 1
OUT=$(cd "$2" && pwd)
(cd "$OUT" && rm -f summary.txt gpu_outputs.txt coproc_info.xml sched_request_cuda.xml client_state.xml \
    client_state.json client.log locusd.log)   # no file of an earlier run passes for this one's
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# boinc_cmd, boinc_client_attach, boinc_client_update, free_port
# shellcheck source=scripts/lib/boinc_client.sh
. "$HERE/../../scripts/lib/boinc_client.sh"

NJOBS=8
WAIT_S=${GPU_CHECK_WAIT:-240}
CLIENT=${GPU_CHECK_CLIENT:-boinc}
case $CLIENT in boinc|locus) ;; *) echo "gpu_check: GPU_CHECK_CLIENT is boinc or locus, not $CLIENT" >&2; exit 2 ;; esac
GPU_CMDLINE=${GPU_CHECK_GPU_CMDLINE:-"--threads 1048576 --iterations 20000"}
CPU_CMDLINE=${GPU_CHECK_CPU_CMDLINE:-"--iterations 2000000 --seed {n}"}
# What every GPU job writes for the default command line: computed on
# Debian 12 by the same program against tests/gpu/fake_libcuda.c, whose
# kernel is fmaf on the CPU (IEEE 754 fused multiply-add, as fma.rn.f32),
# and again by a separate OpenMP loop of the x86 FMA instruction.
EXPECTED_DEFAULT="gpu_worker threads=1048576 iterations=20000 sum=977500.53280109167"
if [ -n "${GPU_CHECK_EXPECT:-}" ]; then
    EXPECTED_GPU=$GPU_CHECK_EXPECT
elif [ -z "${GPU_CHECK_GPU_CMDLINE:-}" ]; then
    EXPECTED_GPU=$EXPECTED_DEFAULT
else
    EXPECTED_GPU=
fi

T0=$(date +%s)
WORK=$(mktemp -d /tmp/gpu_check.XXXXXX)
PROJ=$WORK/proj
CDIR=$WORK/client
SUMMARY=$WORK/summary.txt
LOCUSD_PID=
CLIENT_PID=
URL=
STATUS=1           # the exit status, set by the checks
: >"$SUMMARY"

elapsed() { echo $(( $(date +%s) - T0 )); }
say() { echo "[gpu_check +$(elapsed)s] $*" | tee -a "$SUMMARY"; }
# section TITLE: a heading in the summary
section() { printf '\n==== %s ====\n' "$*" | tee -a "$SUMMARY"; }
# record CMD...: runs CMD (bounded), its output into the summary and on stdout
record() { timeout 30 "$@" 2>&1 | tee -a "$SUMMARY"; }
fail() { say "FAIL: $*"; exit 1; }

# ---- processes, by pid only ----

descendants() {
    local parent=$1 f rest pid ppid
    for f in /proc/[0-9]*/stat; do
        { read -r rest <"$f"; } 2>/dev/null || continue
        pid=${rest%% *}
        rest=${rest##*) }
        ppid=${rest#* }
        ppid=${ppid%% *}
        if [ "$ppid" = "$parent" ]; then echo "$pid"; descendants "$pid"; fi
    done
}
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
# stop PID: SIGTERM, 5 s, then SIGKILL to it and what it started
stop() {
    local pid=$1 kids
    alive "$pid" || return 0
    kids=$(descendants "$pid")
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    # shellcheck disable=SC2086,SC2046 # one pid per word
    kill -KILL "$pid" $kids $(descendants "$pid") 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

# ---- the store and the batches ----

SQLITE=
if [ -x "$CARRY/sqlite3" ]; then SQLITE=$CARRY/sqlite3; elif command -v sqlite3 >/dev/null; then SQLITE=sqlite3; fi
# sql MODE QUERY: MODE -column (a table with a header) or -list (bare lines)
sql() {
    local mode=$1 header=-noheader
    [ "$mode" = -column ] && header=-header
    [ -n "$SQLITE" ] && timeout 20 "$SQLITE" -readonly -batch "$header" "$mode" -cmd '.timeout 5000' "$PROJ/locus.db" "$2"
}

# batch_row NAME: "STATE JOBS DONE VALID ACTIVE FAILED" from locus stat
batch_row() {
    timeout 20 "$CARRY/locus" stat "$PROJ" "$1" 2>/dev/null | awk -v b="$1" '$2 == b {print $4, $5, $6, $7, $8, $9}'
}
# shellcheck disable=SC2086 # the row is split into its fields
batch_done() { local r; r=$(batch_row "$1"); set -- $r; [ "${3:-0}" -ge "$NJOBS" ]; }
# batch_hopeless NAME: every job is over and some failed
# shellcheck disable=SC2086 # the row is split into its fields
batch_hopeless() { local r; r=$(batch_row "$1"); set -- $r; [ "${6:-0}" -gt 0 ] && [ $(( ${3:-0} + ${6:-0} )) -ge "$NJOBS" ]; }

# ---- what goes to OUTDIR, whatever happened ----

# keep_log SRC NAME: SRC into OUTDIR/NAME, its first and last 512 KB if bigger than 1 MB
keep_log() {
    local src=$1 dst=$OUT/$2
    [ -f "$src" ] || { echo "(no $src)" >"$dst"; return; }
    if [ "$(stat -c %s "$src")" -le 1048576 ]; then
        cp "$src" "$dst"
    else
        { head -c 524288 "$src"; printf '\n\n[... %s cut: %d bytes in all ...]\n\n' "$2" "$(stat -c %s "$src")"; tail -c 524288 "$src"; } >"$dst"
    fi
}

finish() {
    local rc=$? n line
    trap - EXIT
    set +e
    [ "$rc" -eq 0 ] || STATUS=$rc
    stop "$CLIENT_PID"
    stop "$LOCUSD_PID"
    if [ -d "$PROJ" ]; then
        section "batches (locus stat)"
        record "$CARRY/locus" stat "$PROJ"
        if [ -n "$SQLITE" ] && [ -f "$PROJ/locus.db" ]; then
            section "app versions"
            sql -column "SELECT * FROM app_versions" | tee -a "$SUMMARY"
            section "hosts"
            sql -column "SELECT * FROM hosts" | cut -c1-400 | tee -a "$SUMMARY"
            section "jobs and instances (state, outcome, exit status, times)"
            sql -column "SELECT b.name AS batch, j.name AS job, j.state AS job_state, i.seq, i.host_id, i.app_version_id AS av,
                        i.state, i.outcome, i.exit_status, round(i.cpu_time, 2) AS cpu_s, round(i.elapsed_time, 2) AS elapsed_s
                 FROM jobs j JOIN batches b ON b.id = j.batch_id LEFT JOIN instances i ON i.job_id = j.id
                 ORDER BY b.name, j.id, i.seq" | tee -a "$SUMMARY"
            section "stderr of the GPU jobs, as the server stored it"
            sql -list "SELECT '-- ' || j.name || ' #' || i.seq || ':' || char(10) || coalesce(i.stderr, '(none)')
                 FROM instances i JOIN jobs j ON j.id = i.job_id JOIN batches b ON b.id = j.batch_id
                 WHERE b.name = 'g1' ORDER BY j.id, i.seq" | tee -a "$SUMMARY"
        else
            section "no sqlite3 here: the result files stand for the store"
            find "$PROJ/results" -type f 2>/dev/null | sort | tee -a "$SUMMARY"
        fi
        : >"$OUT/gpu_outputs.txt"
        for f in "$PROJ"/results/g1/*/*; do
            [ -f "$f" ] || continue
            printf '%s: %s\n' "${f#"$PROJ"/results/}" "$(head -c 300 "$f")" >>"$OUT/gpu_outputs.txt"
        done
        section "GPU outputs"
        tee -a "$SUMMARY" <"$OUT/gpu_outputs.txt"
        if [ "$STATUS" -eq 0 ] && [ -n "$EXPECTED_GPU" ]; then
            n=0
            while read -r line; do
                [ "${line#*: }" = "$EXPECTED_GPU" ] || { say "output differs from the CPU's: $line"; STATUS=3; }
                n=$((n + 1))
            done <"$OUT/gpu_outputs.txt"
            [ "$n" -eq "$NJOBS" ] || { say "$n GPU outputs in results/, $NJOBS expected"; STATUS=3; }
            [ "$STATUS" -ne 0 ] || say "all $NJOBS GPU outputs are the CPU's, bit for bit: $EXPECTED_GPU"
        fi
    fi
    if [ -d "$CDIR" ]; then
        section "what the client logged about GPUs and tasks"
        grep -e 'CUDA' -e 'NVIDIA' -e 'GPU' -e '\[coproc\]' -e 'Starting task' -e 'Computation for task' \
             -e 'coprocessor' -e 'device' -e 'task .*: ' -e 'exit' -e 'rror' "$CDIR/client.log" 2>/dev/null \
            | grep -v -e '\[work_fetch\]' -e '\[cpu_sched_debug\]' -e 'result state=' | head -n 80 | tee -a "$SUMMARY"
        if [ "$CLIENT" = locus ]; then
            grep -e 'coprocessor' "$CDIR/client.log" >"$OUT/coproc_info.xml" 2>/dev/null \
                || echo "(no coprocessor line in the log)" >"$OUT/coproc_info.xml"
            cp "$CDIR/client_state.json" "$OUT/client_state.json" 2>/dev/null
        else
            cp "$CDIR/coproc_info.xml" "$OUT/coproc_info.xml" 2>/dev/null || echo "(no coproc_info.xml)" >"$OUT/coproc_info.xml"
            cp "$CDIR/client_state.xml" "$OUT/client_state.xml" 2>/dev/null
        fi
        keep_log "$CDIR/client.log" client.log
    fi
    [ -f "$OUT/sched_request_cuda.xml" ] || echo "(no scheduler request with <coproc_cuda> was seen)" >"$OUT/sched_request_cuda.xml"
    keep_log "$WORK/locusd.log" locusd.log
    case $STATUS in
        0) say "PASS: $NJOBS GPU jobs and $NJOBS CPU jobs done in $(elapsed) s" ;;
        3) say "FAIL: the jobs are done but GPU outputs differ from the CPU's" ;;
        *) say "FAIL (status $STATUS) after $(elapsed) s" ;;
    esac
    cp "$SUMMARY" "$OUT/summary.txt"
    echo "gpu_check: $(find "$OUT" -maxdepth 1 -type f | wc -l) files in $OUT; work folder $WORK"
    exit "$STATUS"
}
trap finish EXIT
trap 'exit 130' INT TERM

# ---- 1. the machine ----

section "machine"
say "gpu_check.sh in $WORK, carried programs in $CARRY"
record uname -m
if command -v nvidia-smi >/dev/null; then
    record nvidia-smi -L
    record nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
else
    say "nvidia-smi: not found"
fi
record bash -c 'ldd --version | head -n 1'
record head -n 2 /etc/os-release
[ -f "$CARRY/MANIFEST.txt" ] && record head -n 6 "$CARRY/MANIFEST.txt"

# the driver's libcuda.so.1 (GPU_CHECK_LIBCUDA names one)
libcuda=${GPU_CHECK_LIBCUDA:-}
if [ -z "$libcuda" ]; then
    libcuda=$(ldconfig -p 2>/dev/null | awk '$1 == "libcuda.so.1" && /x86-64/ {print $NF; exit}')
fi
if [ -z "$libcuda" ]; then
    for d in /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64 /usr/lib \
             /usr/lib/wsl/lib /run/nvidia/driver/usr/lib/x86_64-linux-gnu; do
        if [ -e "$d/libcuda.so.1" ]; then libcuda=$d/libcuda.so.1; break; fi
    done
fi
if [ -z "$libcuda" ]; then
    libcuda=$(timeout 20 find /usr /lib /lib64 /opt /run -name 'libcuda.so.1' -not -path '*/stubs/*' 2>/dev/null | head -n 1)
fi
[ -n "$libcuda" ] && [ -e "$libcuda" ] || libcuda=
[ -n "$libcuda" ] || fail "no libcuda.so.1 on this machine (is the NVIDIA driver there?)"
mkdir -p "$WORK/cudalib"
ln -sf "$(readlink -f "$libcuda")" "$WORK/cudalib/libcuda.so"
ln -sf "$(readlink -f "$libcuda")" "$WORK/cudalib/libcuda.so.1"
say "libcuda: $libcuda -> $(readlink -f "$libcuda"), named libcuda.so in $WORK/cudalib"
nvml=$(ldconfig -p 2>/dev/null | awk '$1 == "libnvidia-ml.so.1" && /x86-64/ {print $NF; exit}')
[ -z "$nvml" ] && [ -e "$(dirname "$libcuda")/libnvidia-ml.so.1" ] && nvml=$(dirname "$libcuda")/libnvidia-ml.so.1
[ -n "$nvml" ] && ln -sf "$(readlink -f "$nvml")" "$WORK/cudalib/libnvidia-ml.so"

export PATH=$CARRY:$PATH
export LD_LIBRARY_PATH=$CARRY/lib:$WORK/cudalib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
say "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

# the carried programs start (a missing library or too old a glibc shows here)
starts() {
    local prog=$1 want=$2 out
    shift 2
    [ -x "$CARRY/$prog" ] || fail "$CARRY/$prog is missing"
    out=$(timeout 20 "$CARRY/$prog" "$@" 2>&1)
    if ! grep -q -e "$want" <<<"$out"; then
        say "$prog $* does not start:"
        printf '%s\n' "$out" | head -n 20 | tee -a "$SUMMARY"
        say "ldd $CARRY/$prog:"
        ldd "$CARRY/$prog" 2>&1 | tee -a "$SUMMARY"
        fail "$prog does not start here"
    fi
}
starts locusd 'usage: locusd' --help
starts locus 'usage: locus' --help
if [ "$CLIENT" = locus ]; then
    starts locus-client 'usage: locus-client' --help
    say "locusd, locus and locus-client start"
else
    starts boinc '^7\.' --version
    starts boinccmd 'usage' --help
    say "locusd, locus, boinc $("$CARRY/boinc" --version 2>&1 | head -n 1) and boinccmd start"
fi

# ---- 2. the GPU app by itself ----

section "gpu_worker by itself (outside BOINC)"
mkdir -p "$WORK/direct"
# shellcheck disable=SC2086 # the command line is split into words, as the client does
(cd "$WORK/direct" && timeout 60 "$CARRY/gpu_worker" $GPU_CMDLINE >stdout.txt 2>stderr.txt)
rc=$?
say "gpu_worker $GPU_CMDLINE: exit $rc"
cat "$WORK/direct/stderr.txt" "$WORK/direct/out" 2>/dev/null | tee -a "$SUMMARY"

# ---- 3. the project ----

section "project"
PORT=$(free_port "$WORK/.ports") || fail "no free port"
URL=http://127.0.0.1:$PORT/proj/
"$CARRY/locus" init "$PROJ" --url "$URL" --name gpucheck >/dev/null || fail "locus init failed"
cat >"$PROJ/plan_class.xml" <<'XML'
<plan_classes>
  <plan_class>
    <name>cuda</name>
    <gpu_type>nvidia</gpu_type>
    <ngpus>1</ngpus>
    <cpu_frac>0.2</cpu_frac>
    <min_cuda_version>11000</min_cuda_version>
    <min_compute_capability>500</min_compute_capability>
  </plan_class>
</plan_classes>
XML
plan=(--plan-class cuda)
if [ "${GPU_CHECK_PLAN_CLASS:-1}" = 0 ]; then
    plan=()   # a dry run against a server without plan classes: gpu_worker as a CPU app
    say "GPU_CHECK_PLAN_CLASS=0: gpu_worker's version has no plan class"
fi
"$CARRY/locus" app add "$PROJ" gpu_worker --platform x86_64-pc-linux-gnu --exe "$CARRY/gpu_worker" \
    --version 100 "${plan[@]}" 2>&1 | tee -a "$SUMMARY"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "locus app add gpu_worker ${plan[*]} failed"
"$CARRY/locus" app add "$PROJ" worker --platform x86_64-pc-linux-gnu --exe "$CARRY/worker" --version 100 \
    2>&1 | tee -a "$SUMMARY"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "locus app add worker failed"
KEY=$("$CARRY/locus" user create "$PROJ" alice) || KEY=
[ -n "$KEY" ] || fail "locus user create failed"
printf '{"cmdline": "%s", "flops": 1e12}\n' "$GPU_CMDLINE" >"$WORK/gpu.json"
printf '{"cmdline": "%s", "flops": 1e9}\n' "$CPU_CMDLINE" >"$WORK/cpu.json"
"$CARRY/locus" batch create "$PROJ" --app gpu_worker --count "$NJOBS" --input-template "$WORK/gpu.json" \
    --name g1 --quorum 1 --delay-bound 3600 2>&1 | tee -a "$SUMMARY"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "locus batch create g1 failed"
"$CARRY/locus" batch create "$PROJ" --app worker --count "$NJOBS" --input-template "$WORK/cpu.json" \
    --name c1 --quorum 1 --delay-bound 3600 2>&1 | tee -a "$SUMMARY"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "locus batch create c1 failed"
# fast RPC pacing, as the integration tests' make_project
for kv in request_delay=1 next_rpc_delay=5 transition_period=1; do
    k=${kv%=*} v=${kv#*=}
    grep -v "<$k>" "$PROJ/config.xml" | sed "s|</config>|  <$k>$v</$k>\n</config>|" >"$PROJ/config.xml.new" \
        && mv "$PROJ/config.xml.new" "$PROJ/config.xml"
done

# ---- 4. locusd and a BOINC client with the GPU ----

# http_ok: locusd answers GET /proj/ with 200 (bash's /dev/tcp: no curl needed)
http_ok() {
    local line
    exec 3<>"/dev/tcp/127.0.0.1/$PORT" 2>/dev/null || return 1
    printf 'GET /proj/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    read -r -t 5 line <&3
    exec 3<&- 3>&-
    [[ $line == HTTP/1.?\ 200* ]]
}
(cd "$WORK" && exec "$CARRY/locusd" ./proj --debug rpc,sched,http) </dev/null >>"$WORK/locusd.log" 2>&1 &
LOCUSD_PID=$!
for _ in $(seq 100); do
    alive "$LOCUSD_PID" || fail "locusd exited at start: $(tail -n 5 "$WORK/locusd.log")"
    http_ok && break
    sleep 0.1
done
http_ok || fail "locusd does not serve $URL after 10 s"
say "locusd serves $URL (pid $LOCUSD_PID)"

mkdir -m 700 -p "$CDIR"
lc() { timeout 20 "$CARRY/locus-client" --dir "$CDIR" "$@"; }
if [ "$CLIENT" = locus ]; then
    # it finds the GPU itself; ten minutes of work wanted, the benchmark brief
    "$CARRY/locus-client" --dir "$CDIR" --min-queue 600 --retry-min 1 --retry-max 4 --benchmark-seconds 1 \
        --debug cpu_sched,work_fetch,task,rpc </dev/null >>"$CDIR/client.log" 2>&1 &
    CLIENT_PID=$!
    for _ in $(seq 100); do
        alive "$CLIENT_PID" || fail "locus-client exited at start: $(tail -n 5 "$CDIR/client.log")"
        lc status >/dev/null 2>&1 && break
        sleep 0.1
    done
    lc status >/dev/null 2>&1 || fail "locus-client does not answer status after 10 s"
    say "locus-client started (pid $CLIENT_PID); its coprocessors:"
    grep -e 'coprocessor' "$CDIR/client.log" | tee -a "$SUMMARY"
    echo "$KEY" | lc attach "$URL" - >>"$SUMMARY" 2>&1 || fail "locus-client could not attach to $URL"
else
    GUI_PORT=$(free_port "$WORK/.ports") || fail "no free port"
    # the carried client, GPUs on (no <coproc> to declare: it finds the GPU itself)
    BOINC_CLIENT_BIN="$CARRY/boinc" BOINC_CLIENT_GPUS=' ' boinc_client_start "$CDIR" "$GUI_PORT" \
        || fail "the BOINC client did not start: $(tail -n 5 "$CDIR/client.log")"
    CLIENT_PID=$(cat "$CDIR/client.pid")
    say "BOINC client started (pid $CLIENT_PID); its GPUs:"
    grep -e 'CUDA' -e 'NVIDIA' -e 'No usable GPUs' "$CDIR/client.log" | tee -a "$SUMMARY"
    boinc_client_attach "$CDIR" "$URL" "$KEY" >>"$SUMMARY" 2>&1 || fail "the client could not attach to $URL"
fi
say "client attached with alice's key; waiting for both batches, ${WAIT_S} s at most"

# client_tasks: how many tasks the client holds; client_update: an RPC now
client_tasks() {
    if [ "$CLIENT" = locus ]; then lc tasks 2>/dev/null | grep -c ' state='
    else boinc_cmd "$CDIR" --get_tasks 2>/dev/null | grep -c '^ *name: '; fi
}
client_update() {
    if [ "$CLIENT" = locus ]; then lc update "$URL" >/dev/null 2>&1
    else boinc_client_update "$CDIR" "$URL"; fi
}

# ---- the wait ----

req_seen=
last=0
nudged=0
wait_start=$(elapsed)
while :; do
    if [ -z "$req_seen" ]; then
        for f in "$CDIR"/sched_request_*.xml; do
            if [ -f "$f" ] && grep -q '<coproc_cuda>' "$f"; then
                cp "$f" "$OUT/sched_request_cuda.xml" && req_seen=$f
                say "scheduler request with <coproc_cuda> seen: $(basename "$f")"
                break
            fi
        done
    fi
    g=$(batch_row g1)
    c=$(batch_row c1)
    if batch_done g1 && batch_done c1; then
        say "both batches done: g1 [$g] c1 [$c] (state jobs done valid active failed)"
        STATUS=0
        break
    fi
    batch_hopeless g1 && fail "batch g1 cannot end well: [$g] (state jobs done valid active failed)"
    batch_hopeless c1 && fail "batch c1 cannot end well: [$c] (state jobs done valid active failed)"
    now=$(elapsed)
    [ $((now - wait_start)) -lt "$WAIT_S" ] || fail "not done after ${WAIT_S} s of waiting: g1 [$g] c1 [$c]"
    alive "$LOCUSD_PID" || fail "locusd died"
    alive "$CLIENT_PID" || fail "the client died"
    if [ $((now - last)) -ge 10 ]; then
        say "g1 [$g] c1 [$c] (state jobs done valid active failed); client tasks: $(client_tasks)"
        last=$now
    fi
    if [ $((now - nudged)) -ge 10 ]; then
        client_update
        nudged=$now
    fi
    sleep 2
done
exit 0
