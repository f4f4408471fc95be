#!/usr/bin/env bash
# grid_projects: fair-share projects (docs/grid-policies.md "Fair share")
# with locusd's grid daemon on a real Slurm cluster (alpha: 1 node of 8
# cores). The operator gives project "big" a share of 3 and "small" 1
# (`locus campaign project-share`); locusa submits a campaign in each,
# locusb one in "small". While all three still have jobs to submit,
# alpha's core-seconds (locus's record of the copies it ran) go about 3:1
# to the projects (within 10%), and "small"'s about evenly to its two
# users (within 25%): the two levels, projects first, then users within a
# project. Also: `locus campaign stat` and the API name a campaign's
# project, and bad project names or weights are refused.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' users walk through it
. "$(dirname "$0")/lib/slurm.sh"     # teardowns chain before boinc.sh's
. "$(dirname "$0")/lib/clusters.sh"
. "$(dirname "$0")/lib/slow_tail.sh"
[ "$(id -u)" = 0 ] || fail "needs root (Slurm, jobs of two users)"

make_test_users
pa=$(free_ports 1)
slurm_cluster_up alpha "$pa" 1 8 || fail "Slurm cluster alpha did not come up"
say "cluster up: alpha (port $pa, 8 cores)"

proj=$TMP/proj
make_project "$proj" locusa locusb
map_accounts "$proj" locusa locusb
# as grid_share.sh: 1 s cycles, and as many waiting jobs as alpha's cores
set_config "$proj" grid_cycle_period 1
set_config "$proj" grid_predictor adapt_down_exp_up
set_config "$proj" grid_waiting_allowed 8
"$LOCUS" cluster add "$proj" alpha --driver slurm --conf "${SLURM_CONF_OF[alpha]}" --partition normal >/dev/null \
    || fail "locus cluster add alpha failed"

WORK=$TMP/work BIN=$TMP/bin
mkdir -p "$BIN"
tail_dirs "$WORK"
tail_scripts "$BIN"

export LOCUSD_DEBUG=grid
start_locusd "$proj"
"$LOCUS" campaign project-share "$proj" big 3 | grep -q "^project big: fair-share weight 3$" \
    || fail "locus campaign project-share big failed"
"$LOCUS" campaign project-share "$proj" small 1 >/dev/null || fail "locus campaign project-share small failed"
for bad_args in "no/way 2" "big 0" "big x"; do
    # shellcheck disable=SC2086 # two words on purpose
    if "$LOCUS" campaign project-share "$proj" $bad_args >/dev/null 2>"$TMP/err"; then
        bad "project-share $bad_args was accepted"
    fi
done
grep -qi "weight" "$TMP/err" || bad "project-share big x: no reason given: $(cat "$TMP/err")"
[ "$(sql "$proj" "SELECT count(*) FROM grid_orders WHERE kind=$GO_PROJECT_SHARE")" = 2 ] \
    || bad "refused project-share orders were written"

submit_as() {
    "$LOCUS" campaign submit "$proj" "$2" --user "$1" 2>"$TMP/err.$1" \
        || fail "locus campaign submit $2 as $1 failed: $(cat "$TMP/err.$1")"
}
terminated() {
    local c
    for c in "$@"; do [ "$(sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$c")" = "$GCS_TERMINATED" ] || return 1; done
}

# Sized as the parts expected (3/4, 1/8, 1/8 of alpha) so that all three
# stay busy about as long, at 1.3 to 2 jobs a second: over a minute.
jdl() {   # NAME PROJECT JOBS
    cat <<JSON
{"name": "$1", "fairshare_project": "$2", "exec_directory": "$WORK", "exec_file": "$BIN/job.sh",
 "walltime": 300, "type": "normal", "nb_jobs": $3, "clusters": {"alpha": {}}}
JSON
}
jdl "big a" big 144 >"$TMP/big.json"
jdl "small a" small 24 >"$TMP/small_a.json"
jdl "small b" small 24 >"$TMP/small_b.json"
SUBMITTERS=()
submit_as locusa "$TMP/big.json" >"$TMP/id.big" & SUBMITTERS+=($!)
submit_as locusa "$TMP/small_a.json" >"$TMP/id.sa" & SUBMITTERS+=($!)
submit_as locusb "$TMP/small_b.json" >"$TMP/id.sb" & SUBMITTERS+=($!)
wait "${SUBMITTERS[@]}" || true
BIG=$(cat "$TMP/id.big") SA=$(cat "$TMP/id.sa") SB=$(cat "$TMP/id.sb")
[ -n "$BIG" ] && [ -n "$SA" ] && [ -n "$SB" ] || fail "a submission printed no campaign id"
say "campaigns: big $BIG (locusa), small $SA (locusa), small $SB (locusb)"
wait_for 300 terminated "$BIG" "$SA" "$SB" || bad "campaigns not all terminated: $(sql "$proj" \
    "SELECT id, state, ndone, njobs FROM grid_campaigns" | tr '\n' ' ')"

# what users see of a campaign's project
"$LOCUS" campaign stat "$proj" "$SB" | grep -q "project small" || bad "campaign stat does not name the project"
api=$(curl -s --max-time 30 -H "Authorization: Bearer $(submit_key_of "$proj" locusb)" "http://127.0.0.1:$PORT/api/v1/campaigns/$SB" || true)
grep -q '"fairshare_project": *"small"' <<<"$api" || bad "the API does not name the project: $api"

# The measure: from the moment all three campaigns exist to the first
# moment one of them has nothing left to submit, each campaign's
# core-seconds on alpha (its copies' runs, clipped to that window).
w0=$(sql "$proj" "SELECT max(done_time) FROM grid_orders WHERE kind=$GO_SUBMIT AND result IN ($BIG, $SA, $SB)")
w1=$(sql "$proj" "SELECT min(t) FROM (SELECT max(submitted_at) t FROM grid_copies
    WHERE campaign_id IN ($BIG, $SA, $SB) AND kind=$GSK_NEW AND replica=0 GROUP BY campaign_id)")
sql "$proj" "SELECT campaign_id, started_at, run_s FROM grid_copies WHERE started_at > 0
    AND campaign_id IN ($BIG, $SA, $SB)" >"$TMP/runs"
read -r window big sa sb <<<"$(awk -F'|' -v w0="$w0" -v w1="$w1" -v big="$BIG" -v sa="$SA" -v sb="$SB" '
    { s = $2; e = $2 + $3; if (s < w0) s = w0; if (e > w1) e = w1; if (e > s) use[$1] += e - s }
    END { printf "%d %d %d %d\n", w1 - w0, use[big], use[sa], use[sb] }' "$TMP/runs")"
say "projects: window ${window} s; core-seconds big $big, small (locusa) $sa, small (locusb) $sb"
echo "PROJECTS window_s=$window big_core_s=$big small_a_core_s=$sa small_b_core_s=$sb"
[ "$window" -ge 20 ] || bad "the three campaigns competed for only $window s (expected at least 20)"
awk -v b="$big" -v a="$sa" -v c="$sb" 'BEGIN { t = b + a + c; s = a + c
    exit !(t > 0 && b / t >= 0.9 * 0.75 && b / t <= 1.1 * 0.75 && s > 0 && a / s >= 0.375 && a / s <= 0.625) }' \
    || bad "parts not as shared: big $big, small $sa + $sb (expected 3:1, and 1:1 within small)"

check_sanitizers
checks_passed
