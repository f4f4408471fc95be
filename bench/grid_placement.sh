#!/usr/bin/env bash
# grid_placement: the bytes locusd's data placement saves on real Slurm
# (docs/grid-policies.md "Data"). Two clusters on loopback (alpha and
# beta, 4 cores each), each with its input cache folder of its own
# (locus cluster set --cache-dir). A first campaign of 8 params, each
# reading its own input of SIZE_MB, runs on beta alone: beta's cache holds
# those 8 files. Then a campaign of 16 params (the same 8 inputs and 8 new
# ones) may use both clusters. Run by locusd with placement on and with
# <grid_no_data_placement/>, each in a project and cache folders of its
# own. Prints, for the second campaign, the bytes its jobs fetched (the
# wrappers' `locus-stage fetched` lines), the lower bound (the 8 files
# beta lacks, once) and where its params ran. Finalize is off (a replica
# runs a job twice). Needs root (Slurm, a job user); about 3 minutes.
#   bench/grid_placement.sh [BUILD_DIR] [--json] [--size-mb N]
set -euo pipefail

build=build json=0 size_mb=4
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --size-mb) size_mb=$2; shift ;;
    *) build=$1 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "grid_placement: needs root (Slurm, jobs run as another user)" >&2; exit 1; }
export LOCUS_BUILD_DIR=$build
lib=$(cd "$(dirname "$0")/../tests/integration/lib" && pwd)
. "$lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' user walks through it
. "$lib/slurm.sh"
. "$lib/clusters.sh"

make_test_users
pa=$(free_ports 1)
pb=$(free_ports 1)
slurm_cluster_up alpha "$pa" 1 4 || fail "Slurm cluster alpha did not come up"
slurm_cluster_up beta "$pb" 1 4 || fail "Slurm cluster beta did not come up"

IN=$TMP/in
mkdir -p "$IN"
entry() { printf '"%s": {"size": %s, "sha256": "%s"}' "$1" "$(stat -c %s "$2")" "$(sha256sum <"$2" | cut -d' ' -f1)"; }
table=
for i in $(seq 0 15); do
    head -c $((size_mb * 1000000)) /dev/urandom >"$IN/p$i.dat"
    table="$table${table:+, }$(entry "p$i.dat" "$IN/p$i.dat")"
done
cat >"$TMP/job.sh" <<'SH'
#!/bin/bash
cmp -s "$1.dat" "$1.dat" && sleep 3   # reads its input; not a sink's instant success
SH
chmod 755 "$TMP/job.sh"
# jdl NAME N CLUSTERS WORKDIR: params p0..p(N-1), each reading p<i>.dat
jdl() {
    local params= i
    for i in $(seq 0 $(($2 - 1))); do params="$params${params:+, }\"p$i\""; done
    printf '{"name": "%s", "params": [%s], "exec_file": "%s", "exec_directory": "%s", "clusters": %s,
 "inputs": ["{name}.dat"], "input_files": {%s}}\n' "$1" "$params" "$TMP/job.sh" "$4" "$3" "$table"
}

declare -A URL_OF
for mode in on off; do
    proj=$TMP/proj-$mode
    make_project "$proj" locusa
    map_accounts "$proj" locusa
    URL_OF[$mode]=$URL
    set_config "$proj" grid_cycle_period 1
    set_config "$proj" grid_no_finalize /
    [ "$mode" = off ] && set_config "$proj" grid_no_data_placement /
    for f in "$IN"/*.dat; do "$LOCUS" file add "$proj" "$f" >/dev/null || fail "locus file add $f failed"; done
    mkdir -p "$TMP/cache-$mode" "$TMP/work-$mode-warm" "$TMP/work-$mode-main"
    chmod 777 "$TMP/cache-$mode" "$TMP/work-$mode-warm" "$TMP/work-$mode-main"
    for c in alpha beta; do
        "$LOCUS" cluster add "$proj" "$c" --driver slurm --conf "${SLURM_CONF_OF[$c]}" --partition normal >/dev/null \
            || fail "locus cluster add $c failed"
        "$LOCUS" cluster set "$proj" "$c" --cache-dir "$TMP/cache-$mode/$c" >/dev/null \
            || fail "locus cluster set $c --cache-dir failed"
    done
    jdl warm 8 '{"beta": {}}' "$TMP/work-$mode-warm" >"$TMP/warm-$mode.json"
    jdl main 16 '{"alpha": {}, "beta": {}}' "$TMP/work-$mode-main" >"$TMP/main-$mode.json"
done

# run_campaign MODE FILE: submits it under that project's running locusd, waits for its end
run_campaign() {
    local proj=$TMP/proj-$1 id i
    id=$("$LOCUS" campaign submit "$proj" "$2" --user locusa) || fail "submission of $2 failed"
    for i in $(seq 600); do
        [ "$(sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$id")" = "$GCS_TERMINATED" ] && break
        sleep 0.5
    done
    [ "$i" -lt 600 ] || fail "campaign $id ($1) did not end in 300 s"
    CAMPAIGN=$id
}

declare -A MOVED ALPHA BETA
for mode in on off; do
    URL=${URL_OF[$mode]}
    start_locusd "$TMP/proj-$mode"
    run_campaign "$mode" "$TMP/warm-$mode.json"
    run_campaign "$mode" "$TMP/main-$mode.json"
    stop_locusd
    MOVED[$mode]=$(cat "$TMP/work-$mode-main"/locus.*.stdout | awk '$1 == "locus-stage" && $2 == "fetched" { s += $4 } END { print s + 0 }')
    runs() { sql "$TMP/proj-$mode" "SELECT count(*) FROM grid_copies c JOIN grid_clusters k ON k.id = c.cluster_id
                 WHERE c.campaign_id=$CAMPAIGN AND c.end_reason = $GE_SUCCESS AND k.name = '$1'"; }
    ALPHA[$mode]=$(runs alpha)
    BETA[$mode]=$(runs beta)
    echo "placement $mode: bytes moved ${MOVED[$mode]}, params run on alpha ${ALPHA[$mode]}, on beta ${BETA[$mode]}"
done
bound=$((8 * size_mb * 1000000))
echo "lower bound: $bound bytes (the 8 inputs beta lacks, once)"
[ "$json" = 1 ] && printf '{"grid_placement_size_mb":%d,"bound_bytes":%d,"on_bytes":%d,"off_bytes":%d,"on_alpha":%d,"on_beta":%d,"off_alpha":%d,"off_beta":%d}\n' \
    "$size_mb" "$bound" "${MOVED[on]}" "${MOVED[off]}" "${ALPHA[on]}" "${BETA[on]}" "${ALPHA[off]}" "${BETA[off]}"
exit 0
