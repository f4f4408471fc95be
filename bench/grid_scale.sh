#!/usr/bin/env bash
# grid_scale: a campaign of 100,000 short jobs (`true`) over the three
# clusters the integration tests use (tests/integration/grid_campaigns.sh):
# two Slurm clusters (alpha, two nodes; beta, one) and OAR (gamma), arrays
# where the scheduler takes them (Slurm and OAR both do: the cycle marks
# every submission of more than one job an array). Prints, per phase of
# the run: the grid cycle's wall time (locusd's own per-cycle log line,
# "grid: cycle N phases: ..."), split into its phases (poll, decide, save,
# cancel, submit, notify); locusd's peak RSS (VmHWM) and the store's size
# (locus.db and its WAL); jobs done and jobs/s over the whole run. The
# nodes declare more CPUs than a small machine has (--cpus per node): the
# jobs do nothing, so the scheduler's launch rate, not the cores, bounds
# the throughput. Needs root (Slurm, OAR, a job user); OAR is one per
# machine, so the run takes /tmp/locus-oar.lock as the OAR tests do.
#   bench/grid_scale.sh [BUILD_DIR] [--jobs N] [--minutes M] [--cycle S]
#                       [--cpus C] [--oar-cores C] [--predictor P] [--no-oar]
#                       [--csv FILE] [--json]
# --minutes bounds the run after the submission (default 40): when the
# campaign has not ended by then, the figures are those of the jobs done.
set -euo pipefail

args=("$@")
build=build json=0 jobs=100000 minutes=40 cycle=2 cpus=64 oar_cores=16 predictor='' oar=1 csv=''
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --jobs) jobs=$2; shift ;;
    --minutes) minutes=$2; shift ;;
    --cycle) cycle=$2; shift ;;
    --cpus) cpus=$2; shift ;;
    --oar-cores) oar_cores=$2; shift ;;
    --predictor) predictor=$2; shift ;;
    --no-oar) oar=0 ;;
    --csv) csv=$2; shift ;;
    *) build=$1 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "grid_scale: needs root (Slurm, OAR, jobs run as another user)" >&2; exit 1; }
if [ "$oar" = 1 ] && [ -z "${_GRID_SCALE_LOCKED:-}" ]; then
    # OAR allows one instance per machine: wait for the other users of it
    # -o: the lock stays with flock, not with the daemons the run starts
    _GRID_SCALE_LOCKED=1 exec flock -o /tmp/locus-oar.lock "$0" "${args[@]}"
fi
export LOCUS_BUILD_DIR=$build
lib=$(cd "$(dirname "$0")/../tests/integration/lib" && pwd)
. "$lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' user walks through it
. "$lib/slurm.sh"
[ "$oar" = 1 ] && . "$lib/oar.sh"
. "$lib/clusters.sh"

# Schedulers that start jobs as soon as they can (as in grid_campaigns.sh),
# and Slurm that keeps finished jobs 60 s (the driver reads them from squeue,
# then from the jobcomp log) with room for a minute of them.
SLURM_EXTRA_CONF=$'SchedulerParameters=batch_sched_delay=0,sched_min_interval=0\nMaxJobCount=100000\nMaxArraySize=4001'
SLURM_MIN_JOB_AGE=60
OAR_EXTRA_CONF="SCHEDULER_MIN_TIME_BETWEEN_2_CALLS=0"
OAR_API_FASTCGI=1

make_test_users
slurm_cluster_up alpha "$(free_ports 2)" 2 "$cpus" || fail "Slurm cluster alpha did not come up"
slurm_cluster_up beta "$(free_ports 1)" 1 "$cpus" || fail "Slurm cluster beta did not come up"
[ "$oar" = 1 ] && { oar_up "$oar_cores" "$(free_ports 0)" || fail "OAR did not come up"; }
WORK=$TMP/work
mkdir -p "$WORK"
chmod 777 "$WORK"

proj=$TMP/proj
make_project "$proj" locusa
map_accounts "$proj" locusa
set_config "$proj" grid_cycle_period "$cycle"
# `true` ends in no time everywhere: not the sign of a sink here
set_config "$proj" grid_sink_seconds 0
[ -n "$predictor" ] && set_config "$proj" grid_predictor "$predictor"
for c in alpha beta; do
    "$LOCUS" cluster add "$proj" "$c" --driver slurm --conf "${SLURM_CONF_OF[$c]}" --partition normal >/dev/null \
        || fail "locus cluster add $c failed"
done
clusters='"alpha": {"exec_file": "/bin/true"}, "beta": {"exec_file": "/bin/true"}'
if [ "$oar" = 1 ]; then
    "$LOCUS" cluster add "$proj" gamma --driver oar --api "$OAR_API" >/dev/null || fail "locus cluster add gamma failed"
    clusters+=', "gamma": {"exec_file": "/bin/true"}'
fi
cat >"$TMP/scale.json" <<JSON
{"name": "scale", "walltime": 600, "nb_jobs": $jobs, "type": "normal", "exec_directory": "$WORK",
 "clusters": {$clusters}}
JSON

LOCUSD_DEBUG=grid start_locusd "$proj"
samples=${csv:-$TMP/samples.csv}
echo "t_s,done,rss_kb,hwm_kb,store_bytes,load1" >"$samples"
store_bytes() { stat -c %s "$proj/locus.db" "$proj/locus.db-wal" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
done_jobs() { sql "$proj" "SELECT count(*) FROM grid_jobs WHERE state=$GJ_TERMINATED"; }

t0=$(date +%s.%N)
id=$("$LOCUS" campaign submit "$proj" "$TMP/scale.json" --user locusa) || fail "submission failed"
t_sub=$(date +%s.%N)
end=$(( $(date +%s) + minutes * 60 ))
state=
while [ "$(date +%s)" -lt "$end" ]; do
    state=$(sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$id")
    printf '%s,%s,%s,%s,%s,%s\n' "$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }')" "$(done_jobs)" \
        "$(awk '/^VmRSS/ { print $2 }' "/proc/$LOCUSD_PID/status")" \
        "$(awk '/^VmHWM/ { print $2 }' "/proc/$LOCUSD_PID/status")" "$(store_bytes)" \
        "$(cut -d' ' -f1 /proc/loadavg)" >>"$samples"
    [ "$state" = "$GCS_TERMINATED" ] && break
    sleep 5
done
t_end=$(date +%s.%N)
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$LOCUSD_PID/status")
ndone=$(done_jobs)
bytes=$(store_bytes)
stop_locusd
errors=$(sql "$proj" "SELECT count(*) FROM grid_jobs WHERE state=$GJ_ERROR")
arrays=$(sql "$proj" "SELECT count(DISTINCT submission) FROM grid_copies WHERE array_job=1")
subs=$(sql "$proj" "SELECT count(DISTINCT submission) FROM grid_copies")
per_cluster=$(sql "$proj" "SELECT c.name || ' ' || count(*) FROM grid_copies p JOIN grid_clusters c ON c.id = p.cluster_id
                           WHERE p.state=$GC_ENDED GROUP BY c.name" | paste -sd, -)

# the cycles: "grid: cycle N phases: poll P s, decide D s, ..., notify F s; J jobs, C copies"
grep -o 'grid: cycle [0-9]* phases: .*' "$LOCUSD_LOG" \
    | sed -E 's/grid: cycle ([0-9]+) phases: poll ([0-9.]+) s, decide ([0-9.]+) s, save ([0-9.]+) s, cancel ([0-9.]+) s, submit ([0-9.]+) s, notify ([0-9.]+) s; ([0-9]+) jobs, ([0-9]+) copies/\1 \2 \3 \4 \5 \6 \7 \8 \9/' \
    >"$TMP/cycles.txt"
ncycles=$(wc -l <"$TMP/cycles.txt")
# mean and max of each phase and of the whole cycle over cycles FROM..TO (1-based lines)
phases() {
    awk -v from="$1" -v to="$2" 'NR >= from && NR <= to {
            n++; tot = 0
            for (i = 2; i <= 7; i++) { s[i] += $i; tot += $i; if ($i > m[i]) m[i] = $i }
            st += tot; if (tot > mt) mt = tot; c = $9
        }
        END { if (!n) { print "no cycles"; exit }
              printf "%d cycles, copies up to %d: cycle mean %.3f s (max %.3f); poll %.3f, decide %.3f, save %.3f, cancel %.3f, submit %.3f, notify %.3f (means, s)\n",
                     n, c, st / n, mt, s[2] / n, s[3] / n, s[4] / n, s[5] / n, s[6] / n, s[7] / n }' "$TMP/cycles.txt"
}
wall=$(echo "$t_end $t0" | awk '{ printf "%.1f", $1 - $2 }')
submit_s=$(echo "$t_sub $t0" | awk '{ printf "%.2f", $1 - $2 }')
rate=$(echo "$ndone $wall" | awk '{ printf "%.1f", $1 / $2 }')
echo "grid_scale: $jobs jobs of \`true\` on alpha (2 x $cpus cpus), beta ($cpus)$([ "$oar" = 1 ] && echo ", gamma (OAR, $oar_cores)"), cycle ${cycle} s, predictor ${predictor:-default}"
echo "submission (locus campaign submit): $submit_s s"
echo "run: $wall s, campaign state ${state:-?}, $ndone jobs done ($errors given up), $rate jobs/s; done per cluster: $per_cluster"
echo "submissions: $subs, of which arrays: $arrays"
echo "locusd peak RSS: $((hwm / 1024)) MiB; store: $((bytes / 1048576)) MiB"
echo "first 10 cycles: $(phases 1 10)"
echo "all cycles:      $(phases 1 "$ncycles")"
echo "last 10 cycles:  $(phases $((ncycles > 10 ? ncycles - 9 : 1)) "$ncycles")"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$json" = 1 ]; then
    mean_all=$(awk '{ t = 0; for (i = 2; i <= 7; i++) t += $i; s += t } END { printf "%.3f", NR ? s / NR : 0 }' "$TMP/cycles.txt")
    max_all=$(awk '{ t = 0; for (i = 2; i <= 7; i++) t += $i; if (t > m) m = t } END { printf "%.3f", m }' "$TMP/cycles.txt")
    printf '{"grid_scale_jobs":%d,"jobs_done":%d,"run_s":%s,"jobs_per_s":%s,"submit_s":%s,"cycles":%d,"cycle_mean_s":%s,"cycle_max_s":%s,"rss_peak_mb":%d,"store_mb":%d}\n' \
        "$jobs" "$ndone" "$wall" "$rate" "$submit_s" "$ncycles" "$mean_all" "$max_all" $((hwm / 1024)) $((bytes / 1048576))
fi
exit 0
