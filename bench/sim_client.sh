#!/usr/bin/env bash
# sim_client: how long `locus-sim client` takes to simulate a 16-CPU host
# attached to 10 projects for 365 days (examples/sim/client_10x16.txt; issue
# 4's target: at most 10 s). Prints the wall time and the figures; never
# asserts on time.
#   bench/sim_client.sh [BUILD_DIR] [--json]
set -euo pipefail
build=${1:-build}
json=0
[ "${2:-}" = --json ] && json=1
root=$(cd "$(dirname "$0")/.." && pwd)
sim=$build/bin/locus-sim
[ -x "$sim" ] || { echo "sim_client: $sim is not built (run make)" >&2; exit 1; }
last=$("$sim" client "$root/examples/sim/client_10x16.txt" --json | tail -n 1)
field() { printf '%s' "$last" | sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p"; }
echo "client_10x16: 10 projects, 16 CPUs, 365 days: wall_s $(field wall_s), events $(field events)," \
     "share_violation $(field share_violation), deadlines_missed $(field deadlines_missed)"
[ "$json" = 1 ] && echo "{\"sim_client_days\":365,\"sim_client_wall_s\":$(field wall_s),\"sim_client_events\":$(field events)}"
exit 0
