#!/usr/bin/env bash
# make demo: a real locusd serving a small batch (20 jobs, each computed twice
# and compared bitwise), computed by two real BOINC clients of two users.
# Everything runs on loopback under build/demo/ and is stopped at the end.
set -euo pipefail
BUILD=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/boinc_client.sh"
BIN=$(cd "$BUILD/bin" && pwd)
WORKER=$(cd "$BUILD/examples" && pwd)/worker
DEMO=$(mkdir -p "$BUILD/demo" && cd "$BUILD/demo" && pwd)
rm -rf "${DEMO:?}"/*
PROJ=$DEMO/proj
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/demo/
locus() { "$BIN/locus" "$@"; }

cleanup() {
    boinc_client_stop "$DEMO/alice" || true
    boinc_client_stop "$DEMO/bob" || true
    [ -n "${LOCUSD:-}" ] && kill "$LOCUSD" 2>/dev/null && wait "$LOCUSD" 2>/dev/null
    true
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }

step "a project at $URL"
locus init "$PROJ" --url "$URL" --name "locus demo" >/dev/null
sed -i 's|<request_delay>5</request_delay>|<request_delay>1</request_delay><next_rpc_delay>5</next_rpc_delay>|' "$PROJ/config.xml"
locus app add "$PROJ" worker --platform x86_64-pc-linux-gnu --exe "$WORKER" --version 100
head -c 100000 /dev/urandom > "$DEMO/input.dat"
locus file add "$PROJ" "$DEMO/input.dat"
ALICE=$(locus user create "$PROJ" alice)
BOB=$(locus user create "$PROJ" bob)
echo '{"cmdline": "--iterations 3000000 --sleep-ms 10 --seed {n}", "inputs": ["input.dat=in"], "flops": 3e10}' > "$DEMO/job.json"
locus batch create "$PROJ" --app worker --count 20 --input-template "$DEMO/job.json" --name demo --quorum 2 --delay-bound 3600

step "locusd (log: $DEMO/locusd.log)"
"$BIN/locusd" "$PROJ" --debug rpc,sched,valid --log "$DEMO/locusd.log" &
LOCUSD=$!
for _ in $(seq 50); do curl -sf "$URL" >/dev/null && break; sleep 0.1; done
curl -sf "$URL" >/dev/null || { echo "locusd did not start; see $DEMO/locusd.log" >&2; exit 1; }

step "two real BOINC clients attach (logs: $DEMO/alice/client.log, $DEMO/bob/client.log)"
boinc_client_start "$DEMO/alice" "$(free_port)"
boinc_client_start "$DEMO/bob" "$(free_port)"
boinc_client_attach "$DEMO/alice" "$URL" "$ALICE"
boinc_client_attach "$DEMO/bob" "$URL" "$BOB"
boinc_client_key_ok "$DEMO/alice" "$URL"
boinc_client_key_ok "$DEMO/bob" "$URL"

step "computing"
field() { printf '%s' "$state" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }   # a number from the API's JSON
deadline=$((SECONDS + 600))
while :; do
    state=$(curl -sf "http://127.0.0.1:$PORT/api/v1/batches/demo" || echo '{}')
    echo "  done $(field done)/$(field jobs), results out $(field instances_in_progress), results back $(field instances_success)"
    case $state in *'"state":"done"'*) break ;; esac
    [ $SECONDS -lt $deadline ] || { echo "demo: the batch did not finish in 10 minutes; see $DEMO" >&2; exit 1; }
    boinc_client_update "$DEMO/alice" "$URL"
    boinc_client_update "$DEMO/bob" "$URL"
    sleep 5
done

step "result"
locus stat "$PROJ"
echo "canonical outputs are in $PROJ/results/demo/, e.g. $(ls "$PROJ/results/demo" | head -1)/out:"
sed 's/^/  /' "$PROJ/results/demo/$(ls "$PROJ/results/demo" | head -1)/out"
locus db check "$PROJ"
echo "the project stays in $PROJ; run '$BIN/locusd $PROJ' to serve it again"
