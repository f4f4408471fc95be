#!/usr/bin/env bash
# Runs every benchmark with --json and keeps the figures: each program
# BUILD_DIR/bin/bench-NAME and each script bench/NAME.sh (given BUILD_DIR as
# its first argument); the last line of its output, a JSON object, goes to
# BUILD_DIR/bench/NAME.json. A benchmark that fails does not stop the
# others; the script then exits 1 and names it.
#   scripts/bench.sh [BUILD_DIR]        (what `make bench` runs)
set -uo pipefail

build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$build/bench
mkdir -p "$out"
failed=()

# run NAME COMMAND...: runs it, shows its output, keeps its JSON line
run() {
  local name=$1; shift
  local log=$out/$name.log
  echo "== $name" >&2
  if ! "$@" --json 2>&1 | tee "$log"; then
    failed+=("$name (see $log)")
    return
  fi
  local last
  last=$(tail -n 1 "$log")
  if [[ $last != \{* ]]; then
    failed+=("$name (its last line is not a JSON object; see $log)")
    return
  fi
  printf '%s\n' "$last" >"$out/$name.json"
}

shopt -s nullglob
for prog in "$build"/bin/bench-*; do
  [ -x "$prog" ] && run "$(basename "$prog" | sed 's/^bench-//')" "$prog"
done
for script in "$root"/bench/*.sh; do
  run "$(basename "$script" .sh)" bash "$script" "$build"
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "bench: failed: ${failed[*]}" >&2
  exit 1
fi
echo "bench: figures in $out/*.json" >&2
