#!/usr/bin/env bash
# grid_staging: a campaign's inputs staged in on a real Slurm cluster
# (docs/grid-policies.md "Data", docs/campaigns.md "Input files"): ten
# params, each reading a shared input and one of its own, all served by
# locusd's download/; every job sees the right bytes under the inputs'
# names, the shared input is fetched once into the cluster's cache (one
# "locus-stage fetched" line among the jobs' outputs, the others "cached",
# one GET of it in locusd's log), as a hard link of the cached file; in a
# campaign of twelve params, the job whose input does not match its
# checksum exits 122 with "locus-stage bad INPUT checksum mismatch" and
# never runs its program, the daemon opens an input_error event naming the
# file (the campaign's fault: `locus campaign events` and the API show it)
# and the cluster stays usable: the campaign's other eleven jobs run
# there, and two params added after the event opened run there too; and
# the cluster's cache folder is its setting (locus cluster set --cache-dir).
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
# the cache folder is the cluster's setting, here in the jobs' user's home
cache=$(getent passwd locusa | cut -d: -f6)/.locus-cache-stg
rm -rf "$cache"
"$LOCUS" cluster set "$proj" stg --cache-dir '~/.locus-cache-stg' | grep -qF 'input cache: ~/.locus-cache-stg, unbounded' \
    || fail "locus cluster set --cache-dir failed"

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
# the corrupt campaign: bad.dat's checksum is wrong, g0..g10 read shared.dat and their own
gtable="\"bad.dat\": {\"size\": $(stat -c %s "$IN/bad.dat"), \"sha256\": \"$(printf '%064d' 0)\"}"
gparams='"bad"'
for i in $(seq 0 12); do   # g11 and g12: params added later
    echo "the input of g$i" >"$IN/g$i.dat"
    "$LOCUS" file add "$proj" "$IN/g$i.dat" >/dev/null || fail "locus file add g$i.dat failed"
    gtable="$gtable, $(entry "g$i.dat" "$IN/g$i.dat")"
    [ "$i" -gt 10 ] || gparams="$gparams, \"g$i\""
done
cat >"$TMP/bad.json" <<JSON
{"name": "corrupt", "params": [$gparams], "exec_file": "$WORK/job.sh", "exec_directory": "$WORK",
 "clusters": {"stg": {}}, "inputs": ["shared.dat", "{name}.dat"],
 "input_files": {$(entry shared.dat "$IN/shared.dat"), $gtable}}
JSON

# a param whose input is not in the table: refused at submission
sed 's/"p0"/"q0"/' "$TMP/ok.json" >"$TMP/missing.json"
out=$("$LOCUS" campaign submit "$proj" "$TMP/missing.json" --user locusa 2>&1) && fail "missing input accepted: $out"
echo "$out" | grep -qF 'params[0] (job "q0"): inputs[1]: "q0.dat" is not in input_files' \
    || fail "missing input: $out"

LOCUSD_DEBUG=http start_locusd "$proj"
ok=$("$LOCUS" campaign submit "$proj" "$TMP/ok.json" --user locusa) || fail "submit staged failed"
bad=$("$LOCUS" campaign submit "$proj" "$TMP/bad.json" --user locusa) || fail "submit corrupt failed"
say "campaigns $ok (10 params) and $bad (12 params, one with a corrupted input) submitted"

seen_all() { [ "$(ls "$WORK"/seen.p* 2>/dev/null | wc -l)" = 10 ]; }
wait_for 180 seen_all || fail "only $(ls "$WORK"/seen.p* 2>/dev/null | wc -l) of 10 jobs ran in 180 s"
want_sum=$(sha256sum <"$IN/shared.dat" | cut -d' ' -f1)
for i in $(seq 0 9); do
    [ "$(cat "$WORK/seen.p$i")" = "p$i $want_sum the input of p$i" ] || bad "p$i saw: $(cat "$WORK/seen.p$i")"
done
outs() { cat "$WORK"/locus.stg.*.stdout 2>/dev/null || true; }
seen_g() { [ "$(ls "$WORK"/seen.g* 2>/dev/null | wc -l)" = "$1" ]; }
wait_for 180 seen_g 11 || fail "only $(ls "$WORK"/seen.g* 2>/dev/null | wc -l) of the corrupt campaign's 11 good jobs ran in 180 s"
[ -f "$cache/sha256-$want_sum" ] || bad "shared.dat is not in the cache $cache"
# the job's name is a hard link of the cached file: its data is its own even if the cache's name goes
[ "$WORK/shared.dat" -ef "$cache/sha256-$want_sum" ] || bad "shared.dat in the working directory is not the cached file"
[ ! -L "$WORK/shared.dat" ] || bad "shared.dat is a symbolic link, not a hard link"
say "21 jobs saw their inputs, as hard links of the cache $cache"

errored() { outs | grep -q '^locus-stage bad bad.dat checksum mismatch: sha256 '; }
wait_for 120 errored || bad "no checksum mismatch line for bad.dat: $(outs | grep 'bad.dat' || true)"
[ ! -e "$WORK/seen.bad" ] || bad "the job with a corrupted input ran"
code() { sql "$proj" "SELECT exit_code FROM grid_copies WHERE campaign_id=$bad AND state<>$GC_LAUNCHING AND exit_code<>0 LIMIT 1" 2>/dev/null; }
code_is() { [ "$(code)" = "$1" ]; }
wait_for 180 code_is 122 || bad "the corrupted job's copy ended with '$(code)', not 122"
# the campaign's fault, not the cluster's: an input_error event naming the file, no blacklist
ev() { sql "$proj" "SELECT kind || '|' || blacklists || '|' || jobs FROM grid_events WHERE campaign_id=$bad" 2>/dev/null; }
ev_is() { [ "$(ev)" = "$1" ]; }
wait_for 60 ev_is "$GEV_INPUT_ERROR|0|1" || bad "the corrupt campaign's events: '$(ev)'"
events=$("$LOCUS" campaign events "$proj" "$bad" 2>&1) || bad "locus campaign events failed: $events"
echo "$events" | grep -q 'input_error' || bad "locus campaign events does not show input_error: $events"
echo "$events" | grep -qF "was not run: input bad.dat: checksum mismatch: sha256 " \
    || bad "the event does not name the file: $events"
echo "$events" | grep -q 'cluster blacklisted' && bad "the cluster was blacklisted for a bad input: $events"
# 22 jobs staged shared.dat (the corrupt one too, before bad.dat), one fetched it
fetched=$(outs | grep -c '^locus-stage fetched shared.dat 300000 ' || true)
cached=$(outs | grep -c '^locus-stage cached shared.dat 300000$' || true)
[ "$fetched" = 1 ] && [ "$cached" = 21 ] || bad "shared.dat fetched $fetched times, cached $cached times"
gets=$(grep -c 'GET download/shared.dat: 200' "$LOCUSD_LOG" || true)
[ "$gets" = 1 ] || bad "locusd served shared.dat $gets times"
say "shared.dat fetched $fetched time(s) for 22 jobs, served $gets time(s)"
# after the event, the cluster still takes the campaign's jobs: two params added run there
printf 'g11\ng12\n' | "$LOCUS" campaign add-params "$proj" "$bad" - --user locusa --wait 30 >/dev/null \
    || bad "add-params to the corrupt campaign failed"
wait_for 120 seen_g 13 || bad "the params added after the input_error event did not run on stg"
for i in $(seq 0 12); do
    [ "$(cat "$WORK/seen.g$i" 2>/dev/null)" = "g$i $want_sum the input of g$i" ] || bad "g$i saw: $(cat "$WORK/seen.g$i" 2>/dev/null)"
done
say "bad.dat: an input_error event naming it, stg not blacklisted; 11 good jobs ran there, and 2 added after it"
stop_locusd
rm -rf "$cache"   # in the test user's home, outside $TMP
checks_passed
