#!/usr/bin/env bash
# sim_grid.sh - locus-sim grid runs the small grid workload (two loaded
# clusters, a sink, a broken cluster, two users and a test campaign) under
# two predictors and checks what must hold: every job done (or dropped by
# the test campaign), nothing given up, waiting jobs of a campaign on a
# cluster never above the allowed number once nikita acted, the sink and
# the broken cluster detected, best-effort jobs preempted and resubmitted,
# the users' fair share within 10%; --no-finalize makes no replica; a
# trace is written; bad command lines and workloads fail with one line.
set -euo pipefail
src=${LOCUS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${LOCUS_BUILD_DIR:-$src/build}
sim=$build/bin/locus-sim
[ -x "$sim" ] || { echo "sim_grid: $sim not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for pred in tap two_way_adaptive; do
  "$sim" grid "$src/examples/sim/grid_small.txt" --predictor "$pred" --json --trace "$tmp/trace.csv" > "$tmp/out"
  tail -n 1 "$tmp/out" > "$tmp/last.json"
  python3 - "$tmp/last.json" "$pred" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pred = sys.argv[2]
def check(cond, what):
    if not cond:
        sys.exit(f"sim_grid ({pred}): {what}: {d}")
check(d["complete"] == 1, "not complete")
check(d["jobs"] == 610 and d["jobs_done"] + d["jobs_dropped"] == d["jobs"], "jobs not all done")
check(d["jobs_dropped"] == 8, "the test campaign should drop 8 of its 10 params (one test on each of 2 clusters)")
check(d["jobs_given_up"] == 0, "jobs given up")
check(d["max_waiting_pair_after_cycle"] <= d["waiting_allowed"], "more waiting jobs than allowed")
check(d["sink_events"] == 2, "the sink not detected for both campaigns")
check(d["fatal_events"] == 2, "the broken cluster not blacklisted for both campaigns")
check(d["preempted"] > 0 and d["jobs_resubmitted"] >= d["preempted"], "preempted jobs not resubmitted")
check(d["contended_s"] > 3600 and d["fairshare_error"] <= 0.10, "fair share off by more than 10%")
check(0 < d["utilisation_idle"] <= 1 and d["makespan_s"] > d["tail_s"] >= 0, "figures out of range")
PY
done
head -n 1 "$tmp/trace.csv" | grep -qx 'time,cluster,cores,background_cores,campaign_cores,campaign_waiting'
[ "$(wc -l < "$tmp/trace.csv")" -gt 100 ]

"$sim" grid "$src/examples/sim/grid_small.txt" --no-finalize --json | tail -n 1 > "$tmp/nf.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["replicas"] == 0 and d["complete"] == 1, d' "$tmp/nf.json"

# usage errors: exit 2, one line on stderr
for args in "grid" "grid $src/examples/sim/grid_small.txt --predictor nope" \
            "grid $src/examples/sim/grid_small.txt --bogus" "grid a b"; do
  set +e
  "$sim" $args > /dev/null 2> "$tmp/err"
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || { echo "sim_grid: '$args' exited $rc, wanted 2" >&2; exit 1; }
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || { echo "sim_grid: '$args' stderr not one line" >&2; exit 1; }
done
# bad workloads: exit 1, the error names the line and what is wrong
check_bad() {
  printf '%b' "$1" > "$tmp/bad.txt"
  set +e
  "$sim" grid "$tmp/bad.txt" > /dev/null 2> "$tmp/err"
  rc=$?
  set -e
  [ "$rc" -eq 1 ] && grep -q "$2" "$tmp/err" || { echo "sim_grid: bad workload: rc $rc, $(cat "$tmp/err")" >&2; exit 1; }
}
check_bad 'cluster a nodes=2 cores=4\ncampaign c jobs=many clusters=a\n' 'line 2: campaign: jobs: expected an integer'
check_bad 'cluster a nodes=2 cores=4\ncampaign c clusters=b\n' "line 2: campaign: clusters: unknown cluster 'b'"
check_bad 'cluster a nodes=2 cores=4 colour=red\n' "line 1: cluster: unknown key 'colour'"
check_bad 'cluster a nodes=2 cores=4\n' 'needs a cluster and a campaign'
echo "sim_grid: ok"
