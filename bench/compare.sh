#!/usr/bin/env bash
# compare: the benchmarks of a revision and of the work tree, side by side.
#
#   bench/compare.sh REV [--rounds N] [--only NAME...] [--rpc-args 'ARGS']
#
# Builds REV (a release build, RelWithDebInfo without tests, from `git
# archive` into build/compare/SHA/) and the work tree as it is, committed or
# not (build/compare/work/). Both builds are kept and only rebuilt where
# their sources changed. It then runs each benchmark alternately with REV's
# build and the work tree's, REV first, N rounds (default 3), so that both
# sides see the same load of a shared machine. Benchmarks: rpc (bench-rpc,
# given --rpc-args, default '--seconds 15'), then each bench/NAME.sh script
# except grid_finalize, grid_placement, grid_scale and grid_predictors (they
# need root and Slurm; name them with --only) and sim_same (no benchmark: a
# check that the simulator's figures are a revision's). A
# benchmark the revision lacks is skipped. Each run's JSON last line and
# output go to build/compare/runs/.
#
# Output, per benchmark and per numeric figure: the median of REV's runs,
# the median of the work tree's, the ratio work/REV and the spread of each
# side (max/min - 1, the noise). Whether a ratio above 1 is better depends
# on the figure: for rpcs_per_s and jobs_per_s it is, for *_ms, *_s (times)
# and rss_mb it is worse. A ratio inside the spreads is noise: add rounds.
set -euo pipefail

usage() { sed -n '4p' "$0" | sed 's/^# *//' >&2; exit 2; }
[ $# -ge 1 ] || usage
rev=$1; shift
rounds=3 only=() rpc_args='--seconds 15'
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --rpc-args) rpc_args=$2; shift ;;
    --only) shift; while [ $# -gt 0 ] && [[ $1 != --* ]]; do only+=("$1"); shift; done; continue ;;
    *) usage ;;
  esac
  shift
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v python3 >/dev/null || { echo "compare: needs python3 (scripts/deps.sh installs it)" >&2; exit 1; }
sha=$(git rev-parse --short=7 "$rev^{commit}")
base=build/compare
jobs=$(nproc)

me=compare
. "$root/bench/lib/builds.sh"
rev_src=$base/$sha/src
build_both "$sha" "$root"

# The benchmarks to run, each as NAME; a script's NAME is its file name.
names=()
if [ ${#only[@]} -gt 0 ]; then
  names=("${only[@]}")
else
  names=(rpc)
  for s in bench/*.sh; do
    n=$(basename "$s" .sh)
    # not benchmarks: this script, sim_same (a check of figures); the grid ones need root and Slurm
    case $n in compare | sim_same | grid_finalize | grid_placement | grid_scale | grid_predictors) ;; *) names+=("$n") ;; esac
  done
fi

# cmd SIDE NAME: prints the command line running benchmark NAME for SIDE
cmd() {
  local src bld
  if [ "$1" = rev ]; then src=$rev_src bld=$base/$sha/build; else src=$root bld=$base/work; fi
  if [ "$2" = rpc ]; then
    [ -x "$bld/bin/bench-rpc" ] && echo "$bld/bin/bench-rpc $rpc_args --json"
  else
    [ -f "$src/bench/$2.sh" ] && echo "bash $src/bench/$2.sh $bld --json"
  fi
  return 0
}

runs=$base/runs
mkdir -p "$runs"
results=()
for name in "${names[@]}"; do
  rc=$(cmd rev "$name") wc=$(cmd work "$name")
  if [ -z "$rc" ] || [ -z "$wc" ]; then
    echo "compare: skipping $name: $([ -z "$rc" ] && echo "$sha" || echo "the work tree") lacks it" >&2
    continue
  fi
  for ((i = 1; i <= rounds; i++)); do
    for side in rev work; do
      c=$rc; [ $side = work ] && c=$wc
      log=$runs/$name.$side.$i.log
      echo "compare: $name round $i/$rounds, $side" >&2
      if ! $c >"$log" 2>&1; then
        echo "compare: $name ($side) failed; see $log" >&2
        continue
      fi
      last=$(tail -n 1 "$log")
      [[ $last == \{* ]] || { echo "compare: $name ($side) printed no JSON; see $log" >&2; continue; }
      results+=("$name $side $last")
    done
  done
done

printf '%s\n' "${results[@]}" | python3 -c '
import json, statistics, sys
rev = sys.argv[1]
runs = {}
for line in sys.stdin:
    if not line.strip():
        continue
    name, side, js = line.rstrip("\n").split(" ", 2)
    for k, v in json.loads(js).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            runs.setdefault(name, {}).setdefault(k, {"rev": [], "work": []})[side].append(float(v))
def spread(v):
    return "%.0f%%" % (100 * (max(v) / min(v) - 1)) if v and min(v) > 0 else "-"
print("%-16s %-22s %12s %12s %7s %8s %8s" % ("benchmark", "figure", rev, "work", "ratio", "spread", "spread"))
for name, figs in runs.items():
    for k, s in figs.items():
        r, w = s["rev"], s["work"]
        if not r or not w or (min(r) == max(r) == min(w) == max(w)):
            continue                       # settings, equal on both sides
        mr, mw = statistics.median(r), statistics.median(w)
        ratio = "%.3f" % (mw / mr) if mr else "-"
        print("%-16s %-22s %12.4g %12.4g %7s %8s %8s" % (name, k, mr, mw, ratio, spread(r), spread(w)))
' "$sha"
