#!/usr/bin/env bash
# sim_smoke.sh - locus-sim runs the small example workload and prints, as
# its last line, one JSON object with every figure of merit; a three-batch
# file sequence under --policy cursor reports each batch's completion; bad
# command lines fail with one line on stderr.
set -euo pipefail
src=${LOCUS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${LOCUS_BUILD_DIR:-$src/build}
sim=$build/bin/locus-sim
[ -x "$sim" ] || { echo "sim_smoke: $sim not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$sim" server "$src/examples/sim/small.txt" --json --trace "$tmp/trace.csv" > "$tmp/out"
tail -n 1 "$tmp/out" > "$tmp/last.json"
python3 - "$tmp/last.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["makespan_s", "ideal_s", "makespan_ratio", "bytes_downloaded", "bytes_lower_bound", "bytes_ratio",
        "transfers_per_file", "jobs_per_transfer", "wasted_flops_fraction", "timeouts", "turnaround_p50_s",
        "turnaround_p99_s", "sim_jobs_per_s", "events", "wall_s"]
missing = [k for k in keys if k not in d]
assert not missing, f"missing keys: {missing}"
assert d["makespan_s"] > 0 and d["bytes_downloaded"] >= d["bytes_lower_bound"], d
PY
head -n 1 "$tmp/trace.csv" | grep -qx 'time,kind,host,job,file'
[ "$(wc -l < "$tmp/trace.csv")" -gt 100 ]

# a file sequence of three batches under cursors: each batch's completion,
# as text lines and as a JSON array whose last entry is the makespan
printf '%s\n' "hosts 30" "host_speed_spread 10" "batches 3" "jobs 600" "flops_per_job 3.6e13" "min_quorum 2" \
    "target_nresults 2" "files 60" "file_size_min 1e6" "file_size_max 1e7" "jobs_per_file 10" "job_files_min 1" \
    "job_files_max 5" "density_variation 0.5" > "$tmp/seq.txt"
"$sim" server "$tmp/seq.txt" --policy cursor --json > "$tmp/seq.out"
[ "$(grep -c '^batch_makespan_s\[[123]\] ' "$tmp/seq.out")" -eq 3 ] || { echo "sim_smoke: no batch_makespan_s lines" >&2; exit 1; }
tail -n 1 "$tmp/seq.out" > "$tmp/seq.json"
python3 - "$tmp/seq.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["batch_makespans_s"]
assert len(b) == 3 and min(b) > 0 and max(b) == d["makespan_s"], d
assert d["jobs_done"] == 600 and d["cursor_joins"] >= 30 and d["bytes_ratio"] >= 1, d
PY

# usage errors: exit 2, one line on stderr
for args in "" "nosuch x" "client" "grid" "server" "server $src/examples/sim/small.txt --policy nope" \
            "server $src/examples/sim/small.txt --bogus"; do
  set +e
  "$sim" $args > /dev/null 2> "$tmp/err"
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || { echo "sim_smoke: '$args' exited $rc, wanted 2" >&2; exit 1; }
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || { echo "sim_smoke: '$args' stderr not one line" >&2; exit 1; }
done
# a bad workload: exit 1, the error names the line and the key
printf 'hosts 10\njobs many\n' > "$tmp/bad.txt"
set +e
"$sim" server "$tmp/bad.txt" > /dev/null 2> "$tmp/err"
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q 'line 2: jobs' "$tmp/err" || { echo "sim_smoke: bad workload: rc $rc, $(cat "$tmp/err")" >&2; exit 1; }
echo "sim_smoke: ok"
