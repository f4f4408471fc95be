#!/usr/bin/env bash
# batch_create: how fast `locus batch create` stores a big batch. Makes a
# project in a temporary folder and times one batch of a million jobs made
# from a template ("--seed {n}", one shared input file).
#   bench/batch_create.sh [BUILD_DIR] [--json] [--count N]
# BUILD_DIR defaults to build (use a release build); --json adds the
# figures as one JSON object on the last line.
set -euo pipefail

build=build json=0 count=1000000
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --count) count=$2; shift ;;
    *) build=$1 ;;
  esac
  shift
done
locus=$build/bin/locus
[ -x "$locus" ] || { echo "batch_create: $locus not found: build it first (make)" >&2; exit 1; }

work=$(mktemp -d /tmp/locus-bench-batch-XXXXXX)
trap 'rm -rf "$work"' EXIT
proj=$work/proj
"$locus" init "$proj" --url http://127.0.0.1:8125/bench/ >/dev/null
head -c 4096 /dev/urandom >"$work/shared.dat"
"$locus" file add "$proj" "$work/shared.dat" >/dev/null
printf '#!/bin/sh\nexit 0\n' >"$work/app.sh"
"$locus" app add "$proj" bench --platform x86_64-pc-linux-gnu --exe "$work/app.sh" --version 1 >/dev/null
echo '{"cmdline": "--seed {n}", "inputs": ["shared.dat"]}' >"$work/template.json"

start=$(date +%s.%N)
"$locus" batch create "$proj" --app bench --name bench --count "$count" --input-template "$work/template.json" >/dev/null
end=$(date +%s.%N)

seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
rate=$(awk -v n="$count" -v s="$seconds" 'BEGIN { print n / s }')
printf 'jobs        %d\nseconds     %.2f\njobs_per_s  %.0f\n' "$count" "$seconds" "$rate"
if [ "$json" -eq 1 ]; then
  printf '{"batch_create_jobs":%d,"batch_create_s":%.3f,"batch_create_jobs_per_s":%.0f}\n' "$count" "$seconds" "$rate"
fi
