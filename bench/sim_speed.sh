#!/usr/bin/env bash
# sim_speed: how long locus-sim takes to simulate 10,000 hosts computing
# 1,000,000 jobs to completion (the target: at most 60 s on 2 cores).
# The workload is einstein.txt scaled up 10x in hosts and 5x in jobs, run
# with the plain and the locality policy.
#   bench/sim_speed.sh [BUILD_DIR] [--json]
set -euo pipefail
build=${1:-build}
json=0
[ "${2:-}" = --json ] && json=1
root=$(cd "$(dirname "$0")/.." && pwd)
sim=$build/bin/locus-sim
[ -x "$sim" ] || { echo "sim_speed: $sim is not built (run make)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -e 's/^hosts .*/hosts 10000/' -e 's/^jobs .*/jobs 1000000/' -e 's/^files .*/files 10000/' \
    -e 's/^churn_arrival_rate .*/churn_arrival_rate 0.001272/' \
    "$root/examples/sim/einstein.txt" > "$work/big.txt"
# both policies: locality keeps per-file and per-host state the plain one does not
json_out=""
for policy in fifo locality; do
    out=$("$sim" server "$work/big.txt" --policy $policy --json)
    last=$(printf '%s\n' "$out" | tail -n 1)
    wall=$(printf '%s' "$last" | sed -n 's/.*"wall_s": *\([0-9.]*\).*/\1/p')
    events=$(printf '%s' "$last" | sed -n 's/.*"events": *\([0-9]*\).*/\1/p')
    echo "$policy: hosts 10000, jobs 1000000, events $events, wall_s $wall"
    json_out="$json_out\"sim_${policy}_events\":$events,\"sim_${policy}_wall_s\":$wall,"
done
[ "$json" = 1 ] && echo "{\"sim_hosts\":10000,\"sim_jobs\":1000000,${json_out%,}}"
exit 0
