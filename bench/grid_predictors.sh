#!/usr/bin/env bash
# grid_predictors: the four predictors (docs/grid-policies.md) on real Slurm
# with other users' load. Two clusters on loopback, alpha (one node of 8
# cores) and beta (one of 4); one campaign of N jobs (default 150) of 1 to
# 12 s (param p sleeps 1 + (7p mod 12) s: the same work in every run),
# submitted as locusa to a locusd with <grid_cycle_period>2 and the
# predictor under test, everything else default. While it runs, locusb
# submits its own jobs to both clusters from a fixed random sequence (the
# same in every run): on alpha a job of 1 to 4 cores for 5 to 25 s every
# 8 s, on beta one of 1 to 2 cores every 10 s, about 60% of each cluster,
# queued with locus's jobs (Slurm's FIFO), so that cores the poll saw free
# are often taken by the time locus's jobs arrive. Runs take the
# predictors in turn, RUNS rounds (drift of the machine's load hits each
# alike). Per run: makespan (from just before `locus campaign submit` to
# the last job's end, by the jobs' own clocks), copies submitted and those
# cancelled as excess waiting, the most of the campaign's jobs waiting in
# one cluster's queue (sampled each second), the mean wait of a job in a
# queue. Needs root; about 2 to 3 minutes a run.
#   bench/grid_predictors.sh [BUILD_DIR] [--runs N] [--jobs N] [--only PRED,...] [--json]
set -euo pipefail

build=build json=0 runs=2 N=150 preds="tap slow_start two_way_adaptive adapt_down_exp_up"
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --runs) runs=$2; shift ;;
    --jobs) N=$2; shift ;;
    --only) preds=${2//,/ }; shift ;;
    *) build=$1 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "grid_predictors: needs root (Slurm, jobs run as other users)" >&2; exit 1; }
export LOCUS_BUILD_DIR=$build
lib=$(cd "$(dirname "$0")/../tests/integration/lib" && pwd)
. "$lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' users walk through it
. "$lib/slurm.sh"
. "$lib/clusters.sh"

SLURM_EXTRA_CONF="SchedulerParameters=batch_sched_delay=0"
make_test_users
slurm_cluster_up alpha "$(free_ports 1)" 1 8 || fail "Slurm cluster alpha did not come up"
slurm_cluster_up beta "$(free_ports 1)" 1 4 || fail "Slurm cluster beta did not come up"
BIN=$TMP/bin
mkdir -p "$BIN"
cat >"$BIN/job.sh" <<'SH'
#!/bin/bash
# job.sh PARAM: sleeps 1 + (7 PARAM mod 12) s, then appends "end PARAM TIME"
sleep $(( 1 + (7 * $1) % 12 ))
echo "end $1 $(date +%s.%N)" >>"$LOCUS_WORKDIR/runs.$LOCUS_CAMPAIGN_ID"
SH
chmod 755 "$BIN/job.sh"

sq() { local c=$1; shift; SLURM_CONF=${SLURM_CONF_OF[$c]} timeout 5 "$@"; }
# background CLUSTER EVERY MAXCORES SEED: locusb's jobs, one every EVERY
# seconds, of 1..MAXCORES cores for 5 to 25 s, from the sequence of SEED.
background() {
    local c=$1 every=$2 max=$3
    RANDOM=$4
    while :; do
        sq "$c" runuser -u locusb -- sbatch -Q -p normal -n $((1 + RANDOM % max)) -o /dev/null -D /tmp \
            --wrap "sleep $((5 + RANDOM % 21))" >/dev/null 2>&1 || true
        sleep "$every"
    done
}
idle() {
    local c
    for c in alpha beta; do [ -z "$(sq "$c" squeue -h -o %i)" ] || return 1; done
}
campaign_waiting() {   # the most of locusa's jobs pending on one cluster
    local c n m=0
    for c in alpha beta; do
        n=$(sq "$c" squeue -h -u locusa -t PD -r -o %i 2>/dev/null | wc -l) || n=0
        [ "$n" -gt "$m" ] && m=$n
    done
    echo "$m"
}

# run_once PRED SEED: sets RESULT to "MAKESPAN_S COPIES EXCESS_CANCELS MAX_WAITING MEAN_WAIT_S"
run_once() {
    local pred=$1 seed=$2 proj=$TMP/proj-$1-$2 work=$TMP/work-$1-$2 id t0 i bg=() maxw=0 w
    make_project "$proj" locusa
    map_accounts "$proj" locusa
    set_config "$proj" grid_cycle_period 2
    set_config "$proj" grid_predictor "$pred"
    for c in alpha beta; do
        "$LOCUS" cluster add "$proj" "$c" --driver slurm --conf "${SLURM_CONF_OF[$c]}" --partition normal >/dev/null \
            || fail "locus cluster add $c failed"
    done
    mkdir -p "$work"
    chmod 777 "$work"
    cat >"$TMP/c.json" <<JSON
{"name": "predictors", "walltime": 300, "nb_jobs": $N, "type": "normal", "exec_directory": "$work",
 "clusters": {"alpha": {"exec_file": "$BIN/job.sh"}, "beta": {"exec_file": "$BIN/job.sh"}}}
JSON
    start_locusd "$proj"
    background alpha 8 4 "$seed" &
    bg+=($!)
    background beta 10 2 "$((seed + 1))" &
    bg+=($!)
    t0=$(date +%s.%N)
    id=$("$LOCUS" campaign submit "$proj" "$TMP/c.json" --user locusa) || fail "submission failed ($pred)"
    for i in $(seq 900); do
        [ "$(sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$id")" = "$GCS_TERMINATED" ] && break
        w=$(campaign_waiting)
        [ "$w" -gt "$maxw" ] && maxw=$w
        sleep 1
    done
    [ "$i" -lt 900 ] || fail "campaign $id ($pred) did not end in 15 minutes"
    kill "${bg[@]}" 2>/dev/null || true
    wait "${bg[@]}" 2>/dev/null || true
    stop_locusd
    for c in alpha beta; do sq "$c" scancel -u locusb >/dev/null 2>&1 || true; done
    for i in $(seq 120); do idle && break; sleep 0.5; done
    local ended makespan
    read -r ended makespan <<<"$(awk -v t0="$t0" '$1 == "end" { n++; if ($3 > m) m = $3 } END { printf "%d %.1f", n, m - t0 }' \
        "$work/runs.$id")"
    [ "$ended" -ge "$N" ] || fail "campaign $id ($pred): $ended of $N jobs ended"
    RESULT="$makespan $(sql "$proj" "SELECT count(*), sum(cancel_reason = $GK_EXCESS_WAITING) FROM grid_copies WHERE campaign_id=$id" | tr '|' ' ') $maxw $(sql "$proj" \
        "SELECT printf('%.1f', avg(started_at - submitted_at)) FROM grid_copies WHERE campaign_id=$id AND started_at > 0")"
}

declare -A MK CP EX MW WT
for r in $(seq "$runs"); do
    for p in $preds; do
        run_once "$p" "$((1000 + r))"
        read -r m c e w q <<<"$RESULT"
        MK[$p]+="$m " CP[$p]+="$c " EX[$p]+="$e " MW[$p]+="$w " WT[$p]+="$q "
        echo "round $r, $p: makespan_s $m, copies $c, excess cancels $e, most waiting $w, mean wait_s $q (load $(cut -d' ' -f1-3 /proc/loadavg))"
    done
done
mean() { echo "$1" | awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%.1f", s / NF }'; }
list() { echo "$1" | awk '{ for (i = 1; i <= NF; i++) printf "%s%s", (i > 1 ? "," : ""), $i }'; }
js=
for p in $preds; do
    echo "$p: makespan_s mean $(mean "${MK[$p]}") ($(list "${MK[$p]}")), copies $(list "${CP[$p]}"), excess cancels $(list "${EX[$p]}"), most waiting $(list "${MW[$p]}"), mean wait_s $(list "${WT[$p]}")"
    js+="${js:+,}\"${p}_makespan_s\":$(mean "${MK[$p]}"),\"${p}_makespans_s\":[$(list "${MK[$p]}")]"
done
[ "$json" = 1 ] && printf '{"grid_predictors_runs":%d,"jobs":%d,%s}\n' "$runs" "$N" "$js"
exit 0
