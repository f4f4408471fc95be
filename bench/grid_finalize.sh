#!/usr/bin/env bash
# grid_finalize: what the grid daemon's finalize stage does to a campaign's
# end on real Slurm. Two clusters on loopback (alpha: 8 cores, beta: 2), a
# campaign of 40 jobs that take 3 s on alpha and 40 s on beta
# (tests/integration/lib/slow_tail.sh), run by locusd with finalize on and
# with <grid_no_finalize/>, alternately, RUNS times each. Prints each run's
# makespan (from just before the submission to the last job's first
# success) and tail (from the moment 95% of the jobs had succeeded to the
# last success), and the replicas finalize made. Needs root (Slurm, a job
# user); about 4 minutes with 3 runs.
#   bench/grid_finalize.sh [BUILD_DIR] [--json] [--runs N]
set -euo pipefail

build=build json=0 runs=3
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --runs) runs=$2; shift ;;
    *) build=$1 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "grid_finalize: needs root (Slurm, jobs run as another user)" >&2; exit 1; }
export LOCUS_BUILD_DIR=$build
lib=$(cd "$(dirname "$0")/../tests/integration/lib" && pwd)
. "$lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' user walks through it
. "$lib/slurm.sh"
. "$lib/clusters.sh"
. "$lib/slow_tail.sh"
N=40

make_test_users
pa=$(free_ports 1)
pb=$(free_ports 1)
slurm_cluster_up alpha "$pa" 1 8 || fail "Slurm cluster alpha did not come up"
slurm_cluster_up beta "$pb" 1 2 || fail "Slurm cluster beta did not come up"
BIN=$TMP/bin
mkdir -p "$BIN"
tail_scripts "$BIN"

# one project per setting; the same clusters, used by one at a time
declare -A URL_OF
for mode in on off; do
    proj=$TMP/proj-$mode
    make_project "$proj" locusa
    map_accounts "$proj" locusa
    URL_OF[$mode]=$URL
    set_config "$proj" grid_cycle_period 1
    set_config "$proj" grid_predictor adapt_down_exp_up
    # as many waiting jobs allowed as alpha's cores, the setting the
    # figures of docs/benchmarks.md were measured with
    set_config "$proj" grid_waiting_allowed 8
    [ "$mode" = off ] && set_config "$proj" grid_no_finalize /
    for c in alpha beta; do
        "$LOCUS" cluster add "$proj" "$c" --driver slurm --conf "${SLURM_CONF_OF[$c]}" --partition normal >/dev/null \
            || fail "locus cluster add $c failed"
    done
    tail_dirs "$TMP/work-$mode"
    tail_jdl "$TMP/tail-$mode.json" "$TMP/work-$mode" "$BIN" "$N"
done

idle() {
    local c
    for c in alpha beta; do
        [ -z "$(SLURM_CONF=${SLURM_CONF_OF[$c]} timeout 5 squeue -h -o %i)" ] || return 1
    done
}
# run_once MODE: one campaign under that project's locusd; sets RESULT to
# "MAKESPAN_S TAIL_S REPLICAS"
run_once() {
    local mode=$1 proj=$TMP/proj-$1 id t0 i
    URL=${URL_OF[$mode]}
    start_locusd "$proj"
    t0=$(date +%s.%N)
    id=$("$LOCUS" campaign submit "$proj" "$TMP/tail-$mode.json" --user locusa) || fail "submission failed ($mode)"
    for i in $(seq 600); do
        [ "$(sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$id")" = 3 ] && break
        sleep 0.5
    done
    [ "$i" -lt 600 ] || fail "campaign $id ($mode) did not end in 300 s"
    stop_locusd
    for i in $(seq 60); do idle && break; sleep 0.5; done
    read -r makespan tail_s ended <<<"$(tail_figures "$t0" "$N" "$TMP/work-$mode/runs.$id")"
    [ "$ended" = "$N" ] || fail "campaign $id ($mode): $ended of $N jobs ended"
    RESULT="$makespan $tail_s $(sql "$proj" "SELECT count(*) FROM grid_copies WHERE campaign_id=$id AND replica=1")"
}

declare -A MK TL RP
for r in $(seq "$runs"); do
    for mode in on off; do
        run_once "$mode"
        read -r m t n <<<"$RESULT"
        MK[$mode]+="$m " TL[$mode]+="$t " RP[$mode]+="$n "
        echo "run $r, finalize $mode: makespan_s $m, tail_s $t, replicas $n"
    done
done
mean() { echo "$1" | awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%.1f", s / NF }'; }
list() { echo "$1" | awk '{ for (i = 1; i <= NF; i++) printf "%s%s", (i > 1 ? "," : ""), $i }'; }
for mode in on off; do
    echo "finalize $mode: makespan_s mean $(mean "${MK[$mode]}") ($(list "${MK[$mode]}")), tail_s mean $(mean "${TL[$mode]}") ($(list "${TL[$mode]}"))"
done
[ "$json" = 1 ] && printf '{"grid_finalize_runs":%d,"on_makespan_s":%s,"on_tail_s":%s,"off_makespan_s":%s,"off_tail_s":%s,"on_makespans_s":[%s],"off_makespans_s":[%s],"on_tails_s":[%s],"off_tails_s":[%s],"on_replicas":[%s]}\n' \
    "$runs" "$(mean "${MK[on]}")" "$(mean "${TL[on]}")" "$(mean "${MK[off]}")" "$(mean "${TL[off]}")" \
    "$(list "${MK[on]}")" "$(list "${MK[off]}")" "$(list "${TL[on]}")" "$(list "${TL[off]}")" "$(list "${RP[on]}")"
exit 0
