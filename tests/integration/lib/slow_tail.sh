# tests/integration/lib/slow_tail.sh - what grid_share.sh and
# bench/grid_finalize.sh share: a job script that records its runs, and a
# campaign whose last jobs are slow on one cluster (the case the grid's
# finalize stage is for), with its makespan and tail. Sourced after
# lib/boinc.sh (it uses $TMP).
#
#   tail_scripts BIN            writes BIN/job.sh, BIN/fast.sh, BIN/slow.sh
#   tail_dirs WORK              makes WORK, writable by all
#   tail_jdl FILE WORK BIN N    a campaign of N jobs: fast on alpha, slow on beta
#   tail_figures T0 N RUNS...   prints "MAKESPAN_S TAIL_S ENDED" of that campaign
#
# Both clusters share the working directory, as clusters sharing an NFS
# home do: they number their jobs alike, and the drivers' output files
# (locus.<cluster>.<job id>.stdout) must not collide (with one name, a job
# of beta would find alpha's file of the same number, another user's, and
# die "Permission denied").
#
# The campaign: alpha (8 cores in the callers) runs its jobs in TAIL_FAST_S
# seconds, beta (2 cores) in TAIL_SLOW_S. Beta takes two jobs at the start
# and holds them long after alpha has run all the others (alpha runs 1.3
# to 2 jobs a second): without finalize they are the campaign's tail. Jobs
# of 2 s or more are never near-zero successes (a sink,
# docs/grid-policies.md).
TAIL_FAST_S=${TAIL_FAST_S:-3}
TAIL_SLOW_S=${TAIL_SLOW_S:-40}

# job.sh PARAM: appends "start PARAM COPY CLUSTER SCHEDID TIME" to
# WORKDIR/runs.CAMPAIGN, sleeps LOCUS_SLEEP seconds (if unset, 2 to 4 at
# random: jobs that start together do not all end together), appends the
# same "end" line. TIME in seconds with nanoseconds; SCHEDID is the
# scheduler's id for this job (ARRAY_TASK for an array's task).
tail_scripts() {
    local bin=$1
    cat >"$bin/job.sh" <<'SH'
#!/bin/bash
s=${SLURM_ARRAY_JOB_ID:+${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}}
line="$1 $LOCUS_COPY_ID ${SLURM_CLUSTER_NAME:-unknown} ${s:-${SLURM_JOB_ID:-unknown}}"
runs=$LOCUS_WORKDIR/runs.$LOCUS_CAMPAIGN_ID
echo "start $line $(date +%s.%N)" >>"$runs"
sleep "${LOCUS_SLEEP:-$((2 + RANDOM % 2)).$((RANDOM % 10))}"
echo "end $line $(date +%s.%N)" >>"$runs"
SH
    printf '#!/bin/bash\nLOCUS_SLEEP=%s exec %s "$@"\n' "$TAIL_FAST_S" "$bin/job.sh" >"$bin/fast.sh"
    printf '#!/bin/bash\nLOCUS_SLEEP=%s exec %s "$@"\n' "$TAIL_SLOW_S" "$bin/job.sh" >"$bin/slow.sh"
    chmod 755 "$bin/job.sh" "$bin/fast.sh" "$bin/slow.sh"
}

tail_dirs() {
    mkdir -p "$1"
    chmod 777 "$1"
}

tail_jdl() {
    local file=$1 work=$2 bin=$3 n=$4
    cat >"$file" <<JSON
{"name": "slow tail", "walltime": 300, "nb_jobs": $n, "type": "normal", "exec_directory": "$work",
 "clusters": {"alpha": {"exec_file": "$bin/fast.sh"}, "beta": {"exec_file": "$bin/slow.sh"}}}
JSON
}

# The makespan runs from T0 (just before the submission) to the last job's
# first successful end. The tail runs from the moment 95% of the N jobs
# (rounded up) had ended successfully to that last end: the time the last
# few jobs add, which finalize is meant to cut. A job's end is its first
# copy's end (a finalize loser cancelled later writes none).
tail_figures() {
    local t0=$1 n=$2
    shift 2
    cat "$@" | awk '$1 == "end" && (!($2 in e) || $6 < e[$2]) { e[$2] = $6 } END { for (p in e) print e[p] }' \
        | sort -g | awk -v t0="$t0" -v n="$n" '
            { t[NR] = $1 }
            END {
                k = int(0.95 * n); if (k < 0.95 * n) k++
                if (NR < n || k < 1) { print "-1 -1 " NR; exit }
                printf "%.1f %.1f %d\n", t[NR] - t0, t[NR] - t[k], NR
            }'
}
