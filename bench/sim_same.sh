#!/usr/bin/env bash
# sim_same: whether the work tree's locus-sim gives the very figures of a
# revision's, to the last digit, on the workloads docs/benchmarks.md
# measures: a change meant only to make the simulator (or the shared
# scheduling code) faster must change none of them.
#
#   bench/sim_same.sh REV [--seeds 'S...'] [--quick]
#
# Builds REV and the work tree as bench/compare.sh does (release builds of
# locus-sim under build/compare/, bench/lib/builds.sh), then runs
# `locus-sim server W --policy P --seed S` with each build, two at a time,
# for every workload and policy below and each seed (default 1 2), and
# compares their whole output, the wall time (wall_s) left out. --quick
# leaves out the big ones (einstein, einstein_harsh, volunteer). Prints one
# line per run, SAME or DIFF with the figures that differ; exits 1 if any
# differs or fails.
set -euo pipefail

usage() { sed -n '7p' "$0" | sed 's/^# *//' >&2; exit 2; }
[ $# -ge 1 ] || usage
rev=$1; shift
seeds="1 2" quick=0
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) seeds=$2; shift ;;
    --quick) quick=1 ;;
    *) usage ;;
  esac
  shift
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
sha=$(git rev-parse --short=7 "$rev^{commit}")
base=build/compare

me=sim_same jobs=2
. "$root/bench/lib/builds.sh"
build_both "$sha" "$root" locus-sim

# workload:policy, as docs/benchmarks.md runs them (default: the plain policy)
runs=(small:fifo small:locality gpu:fifo climate:fifo folding:fifo sequence:cursor sequence:locality
      sequence:fifo)
[ "$quick" = 1 ] || runs+=(einstein:fifo einstein:locality einstein_harsh:locality volunteer:fifo
                            volunteer:locality)

out=$(mktemp -d /tmp/sim_same-XXXXXX)
trap 'rm -rf "$out"' EXIT
# run BUILD W P S FILE: the run's output without its wall time
run() {
  "$1/bin/locus-sim" server "examples/sim/$2.txt" --policy "$3" --seed "$4" --json 2>&1 |
    sed -e '/^wall_s /d' -e 's/"wall_s": [0-9.e+-]*, //' >"$5" || echo "exit status ${PIPESTATUS[0]}" >>"$5"
}
bad=0
for r in "${runs[@]}"; do
  w=${r%%:*} p=${r##*:}
  for s in $seeds; do
    run "$base/$sha/build" "$w" "$p" "$s" "$out/rev" &
    run "$base/work" "$w" "$p" "$s" "$out/work"
    wait
    if cmp -s "$out/rev" "$out/work"; then
      echo "SAME $w $p seed $s ($(grep -c . "$out/work") lines)"
    else
      echo "DIFF $w $p seed $s:"
      diff "$out/rev" "$out/work" | sed 's/^/  /' | head -20
      bad=1
    fi
  done
done
exit $bad
