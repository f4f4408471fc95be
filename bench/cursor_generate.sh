#!/usr/bin/env bash
# cursor_generate: the cost of making a cursor batch's jobs on demand.
# Makes a project in a temporary folder with a sequence of 1,000 sticky
# files, plans a batch of a million jobs in 100 cursors (`locus batch create
# --generate`), files one chunk of 10,000 jobs (`locus batch add-jobs`),
# then times examples/cursor/make_jobs.sh making 20 chunks of 100 jobs (a
# cushion of 200: what locusd's generator thread runs per cursor).
#   bench/cursor_generate.sh [BUILD_DIR] [--json]
# BUILD_DIR defaults to build (use a release build); --json adds the
# figures as one JSON object on the last line.
set -euo pipefail

build=build json=0
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    *) build=$1 ;;
  esac
  shift
done
locus=$build/bin/locus
src=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$locus" ] || { echo "cursor_generate: $locus not found: build it first (make)" >&2; exit 1; }

work=$(mktemp -d /tmp/locus-bench-gen-XXXXXX)
trap 'rm -rf "$work"' EXIT
proj=$work/proj
"$locus" init "$proj" --url http://127.0.0.1:8125/bench/ >/dev/null
printf '#!/bin/sh\nexit 0\n' >"$work/app.sh"
"$locus" app add "$proj" bench --platform x86_64-pc-linux-gnu --exe "$work/app.sh" --version 1 >/dev/null
for k in $(seq 1000); do
  f=$(printf 'F%04d.dat' "$k")
  printf '%d\n' "$k" >"$work/$f"
  "$locus" file add "$proj" "$work/$f" --sticky >/dev/null
done
sed -i 's|</config>|  <cursor_work_generator>true</cursor_work_generator>\n</config>|' "$proj/config.xml"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

t=$(now)
"$locus" batch create "$proj" --app bench --name big --generate 1000000 --cursors 100 >/dev/null
plan_s=$(since "$t")

# job k reads files (k-1)/1000+1 and the next, as make_jobs.sh with PER_FILE=1000 makes them
awk 'BEGIN { for (k = 1; k <= 10000; k++) { f = int((k - 1) / 1000) + 1;
  printf "{\"cmdline\": \"--seed %d\", \"inputs\": [\"F%04d.dat=in\", \"F%04d.dat=in2\"]}\n", k, f, f + 1 } }' \
  >"$work/chunk.jsonl"
t=$(now)
"$locus" batch add-jobs "$proj" big --first 1 --jobs "$work/chunk.jsonl" >/dev/null
chunk_s=$(since "$t")

t=$(now)
for i in $(seq 0 19); do
  first=$((10001 + 100 * i))
  env LOCUS="$locus" LOCUS_PROJECT_DIR="$proj" NFILES=1000 PER_FILE=1000 SPAN=2 \
    sh "$src/examples/cursor/make_jobs.sh" big "$first" $((first + 99))
done
gen_s=$(since "$t")
made=$(sqlite3 "$proj/locus.db" "SELECT count(*) FROM jobs")
[ "$made" -eq 12000 ] || { echo "cursor_generate: $made jobs made, expected 12000" >&2; exit 1; }

per_chunk=$(awk -v s="$gen_s" 'BEGIN { printf "%.3f", s / 20 }')
rate=$(awk -v s="$chunk_s" 'BEGIN { printf "%.0f", 10000 / s }')
printf 'plan_1M_jobs_100_cursors_s  %s\nadd_jobs_10000_s            %s\nadd_jobs_per_s              %s\nexample_chunk_of_100_s      %s\n' \
  "$plan_s" "$chunk_s" "$rate" "$per_chunk"
if [ "$json" -eq 1 ]; then
  printf '{"generate_plan_s":%s,"add_jobs_10000_s":%s,"add_jobs_per_s":%s,"example_chunk_100_s":%s}\n' \
    "$plan_s" "$chunk_s" "$rate" "$per_chunk"
fi
