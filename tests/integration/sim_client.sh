#!/usr/bin/env bash
# sim_client.sh - acceptance test of the client policies: locus-sim client
# runs the two example scenarios of BOINC's client scheduling design
# (examples/sim/client_s1.txt and client_s2.txt) with the default policy and
# --json; no deadline may be missed, S1's share violation must be at most 0.2
# and S2's at most 0.31 (BOINC's emulator), and the work lost to preemption
# must be reported. BOINC's own policy (--policy debt, docs/sim.md) is run too
# and its figures printed, not checked. Bad input: a bad scenario exits 1
# naming the line and the key; bad options exit 2.
set -euo pipefail
src=${LOCUS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${LOCUS_BUILD_DIR:-$src/build}
sim=$build/bin/locus-sim
[ -x "$sim" ] || { echo "sim_client: $sim not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() {   # check SCENARIO MAX_SHARE_VIOLATION
    "$sim" client "$src/examples/sim/client_$1.txt" --json > "$tmp/$1.out"
    tail -n 1 "$tmp/$1.out" > "$tmp/$1.json"
    python3 - "$tmp/$1.json" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
name, max_sv = sys.argv[2], float(sys.argv[3])
for k in ["wasted_fraction", "idle_fraction", "share_violation", "monotony", "rpcs_per_job", "deadlines_met",
          "deadlines_missed", "lost_to_preemption_fraction"]:
    assert k in d, f"{name}: no {k}"
assert d["deadlines_missed"] == 0, f"{name}: {d['deadlines_missed']} deadlines missed"
assert d["deadlines_met"] > 0, f"{name}: no deadline met"
assert d["share_violation"] <= max_sv, f"{name}: share violation {d['share_violation']} > {max_sv}"
assert 0 <= d["lost_to_preemption_fraction"] < 1, d
print(f"{name}: share_violation {d['share_violation']} met {d['deadlines_met']} missed 0 "
      f"lost_to_preemption {d['lost_to_preemption_fraction']} rpcs_per_job {d['rpcs_per_job']}")
PY
}
check s1 0.2
check s2 0.31
for s in s1 s2; do
    "$sim" client "$src/examples/sim/client_$s.txt" --policy debt --json | tail -n 1 |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print("'$s' --policy debt:", {k: d[k] for k in ("share_violation", "deadlines_missed", "lost_to_preemption_fraction")})'
done

# bad input: exit 1, the error names the line and the key
printf 'ncpus: 2\nmin_buffer_days: soon\nproject: A(1, 2, 1)\n' > "$tmp/bad.txt"
set +e
"$sim" client "$tmp/bad.txt" > /dev/null 2> "$tmp/err"
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q 'line 2: min_buffer_days' "$tmp/err" || { echo "sim_client: bad scenario: rc $rc, $(cat "$tmp/err")" >&2; exit 1; }
for args in "client" "client $tmp/bad.txt --policy fair" "client $tmp/bad.txt --fetch-cap maybe"; do
    set +e
    "$sim" $args > /dev/null 2> "$tmp/err"
    rc=$?
    set -e
    [ "$rc" -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] || { echo "sim_client: '$args' exited $rc" >&2; exit 1; }
done
echo "sim_client: ok"
