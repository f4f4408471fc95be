#!/usr/bin/env bash
# grid_staging: a campaign's inputs staged in on a real Slurm cluster
# (docs/grid-policies.md "Data", docs/campaigns.md "Input files"): ten
# params, each reading a shared input and one of its own, all served by
# locusd's download/; every job sees the right bytes under the inputs'
# names, the shared input is fetched once into the cluster's cache (one
# "locus-stage fetched" line among the jobs' outputs, the others "cached",
# one GET of it in locusd's log); a job whose input does not match its
# checksum exits 122 with "locus-stage error INPUT checksum mismatch" and
# never runs its program (the daemon does not read that line yet: the copy
# ends as an exit error, its event naming exit code 122).
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' user walks through it
. "$(dirname "$0")/lib/slurm.sh"
. "$(dirname "$0")/lib/clusters.sh"
[ "$(id -u)" = 0 ] || fail "needs root (Slurm, jobs of another user)"

make_test_users
slurm_cluster_up stg "$(free_ports 2)" 1 4 || fail "Slurm cluster stg did not come up"
proj=$TMP/proj
make_project "$proj" locusa
map_accounts "$proj" locusa
set_config "$proj" grid_cycle_period 1
"$LOCUS" cluster add "$proj" stg --driver slurm --conf "${SLURM_CONF_OF[stg]}" --partition normal >/dev/null \
    || fail "locus cluster add stg failed"
cache=$(getent passwd locusa | cut -d: -f6)/.locus-cache
rm -rf "$cache"

# ---- inputs: one shared, one per param; one corrupted ----
IN=$TMP/in WORK=$TMP/work
mkdir -p "$IN" "$WORK"
chmod 777 "$WORK"
head -c 300000 /dev/urandom >"$IN/shared.dat"
entry() { printf '"%s": {"size": %s, "sha256": "%s"}' "$1" "$(stat -c %s "$2")" "$(sha256sum <"$2" | cut -d' ' -f1)"; }
table=$(entry shared.dat "$IN/shared.dat")
params=
for i in $(seq 0 9); do
    echo "the input of p$i" >"$IN/p$i.dat"
    table="$table, $(entry "p$i.dat" "$IN/p$i.dat")"
    params="$params${params:+, }\"p$i\""
done
for f in "$IN"/*.dat; do "$LOCUS" file add "$proj" "$f" >/dev/null || fail "locus file add $f failed"; done
cat >"$WORK/job.sh" <<'SH'
#!/bin/bash
echo "$1 $(sha256sum <shared.dat | cut -d' ' -f1) $(cat "$1.dat")" >"$LOCUS_WORKDIR/seen.$1"
sleep 3   # not a sink's instant success (docs/grid-policies.md)
SH
chmod 755 "$WORK/job.sh"
cat >"$TMP/ok.json" <<JSON
{"name": "staged", "params": [$params], "exec_file": "$WORK/job.sh", "exec_directory": "$WORK",
 "clusters": {"stg": {}}, "inputs": ["shared.dat", "{name}.dat"], "input_files": {$table}}
JSON
echo "not what the table says" >"$IN/bad.dat"
"$LOCUS" file add "$proj" "$IN/bad.dat" >/dev/null || fail "locus file add bad.dat failed"
cat >"$TMP/bad.json" <<JSON
{"name": "corrupt", "params": ["bad"], "exec_file": "$WORK/job.sh", "exec_directory": "$WORK",
 "clusters": {"stg": {}}, "inputs": ["{name}.dat"],
 "input_files": {"bad.dat": {"size": $(stat -c %s "$IN/bad.dat"), "sha256": "$(printf '%064d' 0)"}}}
JSON

# a param whose input is not in the table: refused at submission
sed 's/"p0"/"q0"/' "$TMP/ok.json" >"$TMP/missing.json"
out=$("$LOCUS" campaign submit "$proj" "$TMP/missing.json" --user locusa 2>&1) && fail "missing input accepted: $out"
echo "$out" | grep -qF 'params[0] (job "q0"): inputs[1]: "q0.dat" is not in input_files' \
    || fail "missing input: $out"

LOCUSD_DEBUG=http start_locusd "$proj"
ok=$("$LOCUS" campaign submit "$proj" "$TMP/ok.json" --user locusa) || fail "submit staged failed"
bad=$("$LOCUS" campaign submit "$proj" "$TMP/bad.json" --user locusa) || fail "submit corrupt failed"
say "campaigns $ok (10 params) and $bad (a corrupted input) submitted"

seen_all() { [ "$(ls "$WORK"/seen.p* 2>/dev/null | wc -l)" = 10 ]; }
wait_for 180 seen_all || fail "only $(ls "$WORK"/seen.p* 2>/dev/null | wc -l) of 10 jobs ran in 180 s"
want_sum=$(sha256sum <"$IN/shared.dat" | cut -d' ' -f1)
for i in $(seq 0 9); do
    [ "$(cat "$WORK/seen.p$i")" = "p$i $want_sum the input of p$i" ] || bad "p$i saw: $(cat "$WORK/seen.p$i")"
done
outs() { cat "$WORK"/locus.stg.*.stdout 2>/dev/null || true; }
fetched=$(outs | grep -c '^locus-stage fetched shared.dat 300000 ' || true)
cached=$(outs | grep -c '^locus-stage cached shared.dat 300000$' || true)
[ "$fetched" = 1 ] && [ "$cached" = 9 ] || bad "shared.dat fetched $fetched times, cached $cached times"
gets=$(grep -c 'GET download/shared.dat: 200' "$LOCUSD_LOG" || true)
[ "$gets" = 1 ] || bad "locusd served shared.dat $gets times"
[ -f "$cache/sha256-$want_sum" ] || bad "shared.dat is not in the cache $cache"
say "10 jobs saw their inputs; shared.dat fetched $fetched time(s), served $gets time(s)"

errored() { outs | grep -q '^locus-stage error bad.dat checksum mismatch: sha256 '; }
wait_for 120 errored || bad "no checksum mismatch line for bad.dat: $(outs | grep 'bad.dat' || true)"
[ ! -e "$WORK/seen.bad" ] || bad "the job with a corrupted input ran"
code() { sql "$proj" "SELECT exit_code FROM grid_copies WHERE campaign_id=$bad AND state<>$GC_LAUNCHING AND exit_code<>0 LIMIT 1" 2>/dev/null; }
wait_for 180 test "$(code)" = 122 || bad "the corrupted job's copy ended with '$(code)', not 122"
stop_locusd
rm -rf "$cache"   # in the test user's home, outside $TMP
checks_passed
