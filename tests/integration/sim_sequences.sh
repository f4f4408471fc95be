#!/usr/bin/env bash
# sim_sequences.sh - locus-sim runs the work-sequence workloads
# examples/sim/climate.txt and folding.txt (docs/sim.md), cut down to a few
# sequences and hosts (the files' own keys, later lines overriding them),
# and prints the sequence figures in its last JSON line: every sequence
# ends; climate-like hosts that vanish cause relocations that lose fewer
# than 7 validated results each, and about 1/7 of the state bytes are
# uploaded; the folding-like back end extends its sequences; a sequence
# workload with a bad key fails naming it.
set -euo pipefail
src=${LOCUS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${LOCUS_BUILD_DIR:-$src/build}
sim=$build/bin/locus-sim
[ -x "$sim" ] || { echo "sim_sequences: $sim not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# $1: example name, then override lines; prints the JSON figures to $tmp/$1.json
small() {
  local name=$1
  shift
  { cat "$src/examples/sim/$name.txt"; printf '%s\n' "$@"; } > "$tmp/$name.txt"
  "$sim" server "$tmp/$name.txt" --json > "$tmp/$name.out"
  tail -n 1 "$tmp/$name.out" > "$tmp/$name.json"
}

small climate "sequences 12" "hosts 18" "churn_arrival_rate 2.3e-6"
python3 - "$tmp/climate.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ["makespan_s", "state_bytes_uploaded", "state_bytes_every_result", "relocations",
          "results_lost_per_relocation", "work_lost_flops"]:
    assert k in d, f"missing {k}"
assert d["sequences"] == 12 and d["sequences_ended"] == 12, d
assert d["positions_final"] == 12 * 60, d
assert d["relocations"] > 0 and d["results_lost_max"] <= 6, d
assert 0.12 < d["state_bytes_ratio"] < 0.2, d
assert d["state_bytes_every_result"] == d["results_computed"] * 5e8, d
assert d["makespan_s"] >= d["sequence_ideal_s"] > 0, d
assert d["work_lost_flops"] > 0 and d["state_files_held_max"] <= 4, d
PY

small folding "sequences 12" "hosts 18" "churn_arrival_rate 2.3e-6"
python3 - "$tmp/folding.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["sequences"] == 12 and d["sequences_ended"] == 12, d
assert d["extensions"] >= 12 and d["positions_final"] > 12 * 3, d
assert d["results_lost_max"] <= 4, d
assert d["state_bytes_uploaded"] < d["state_bytes_every_result"], d
PY

# a workload error names the key, exit 1
printf 'jobs 0\nsequences 2\nsequence_open 1\n' > "$tmp/bad.txt"
set +e
"$sim" server "$tmp/bad.txt" > /dev/null 2> "$tmp/err"
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q 'true_length_min' "$tmp/err" || { echo "sim_sequences: bad workload: rc $rc, $(cat "$tmp/err")" >&2; exit 1; }
echo "sim_sequences: ok"
