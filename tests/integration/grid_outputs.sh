#!/usr/bin/env bash
# grid_outputs: output gathering (docs/campaigns.md "Output files") on real
# clusters: one Slurm cluster reached through both drivers, "sh" (the
# Slurm commands) and "rest" (slurmrestd, which shares no disk with
# locusd), and an OAR cluster "gamma". Each campaign's jobs write a file,
# two files matched by a glob and a folder; the job wrapper sends them to
# locusd over HTTP with their SHA-256 and the job's token, and:
#  - every job reads a shared input staged in from locusd's download/,
#    fetched once into each cluster's own cache (locus cluster set
#    --cache-dir): three GETs for eight jobs on three clusters;
#  - GET /api/v1/campaigns/ID/outputs lists each with the checksum the job
#    itself computed; the tar of GET .../results and of `locus --server URL
#    campaign results` (also --job) holds the same bytes, the folder as
#    NAME-dir.tar; `locus campaign results DIR ID` and `campaign stat
#    --jobs --json` list them too;
#  - another user's key gets 404, no key 401;
#  - a job whose output is missing, and one whose output is over
#    grid_output_max_file_mib, fail with exit code 123 (their events
#    name it), their reasons on their stdout;
#  - a campaign whose destination is a folder on the cluster, and one whose
#    destination is a WebDAV collection (a real Apache with mod_dav_fs and
#    basic authentication, the password in the job user's ~/.netrc): each
#    output lands there with the job's bytes, locusd keeps its record
#    (size, checksum, location) and lists it, and its results archive
#    holds none of them; the records' bad forms are refused;
#  - PUTs with no token, a forged one, another job's (made here from
#    keys/output_key) or a valid token with a wrong checksum, a hidden
#    name or an oversize body are refused and change nothing.
# Run it under `flock /tmp/locus-oar.lock` (OAR: one instance per machine).
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
chmod 755 "$TMP"             # the jobs' users and slurmrestd (nobody) walk through it
. "$(dirname "$0")/lib/slurm.sh"     # teardowns chain before boinc.sh's
. "$(dirname "$0")/lib/oar.sh"
. "$(dirname "$0")/lib/clusters.sh"
. "$(dirname "$0")/lib/slurmrest.sh"   # its teardown before lib/slurm.sh's
[ "$(id -u)" = 0 ] || fail "needs root (Slurm, OAR, jobs of two users)"

make_test_users
slurm_install || fail "cannot install Slurm"
SLURMREST_EXTRA_CONF="SchedulerParameters=batch_sched_delay=0"
slurmrest_install || fail "slurmrestd cannot be installed"
OAR_EXTRA_CONF="SCHEDULER_MIN_TIME_BETWEEN_2_CALLS=0"
OAR_API_FASTCGI=1
slurm_cluster_up out1 "$(free_ports 1)" 1 4 || fail "Slurm cluster out1 did not come up"
slurmrest_up out1 || fail "no slurmrestd for out1"
(umask 077; slurmrest_token out1 root >"$TMP/root.jwt")
oar_up 4 "$(free_ports 0)" || fail "OAR did not come up"
say "clusters up: out1 (Slurm, slurmrestd at ${REST_URL[out1]}), gamma (OAR, $OAR_API)"

# a WebDAV store for outputs: Apache's mod_dav_fs, basic authentication
DAV_PORT=$(free_ports 0) DAV=$TMP/dav
install -d -o www-data -g www-data "$DAV/files"
htpasswd -bc "$DAV/users" alice 's3cret-dav' 2>/dev/null
{ apache_conf "$DAV" "$DAV_PORT" www-data authz_user authn_core authn_file auth_basic alias dav dav_fs; cat <<CONF
DavLockDB $DAV/lock
Alias /dav $DAV/files
<Directory $DAV/files>
  Dav On
  AuthType Basic
  AuthName outputs
  AuthUserFile $DAV/users
  Require valid-user
</Directory>
CONF
} >"$DAV/httpd.conf"
chmod 644 "$DAV/users" "$DAV/httpd.conf"
chown www-data "$DAV"
apache2 -f "$DAV/httpd.conf" -k start || fail "the WebDAV Apache does not start"
_dav_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
trap "_dav_rc=\$?; set +e; apache2 -f '$DAV/httpd.conf' -k stop; (exit \$_dav_rc); ${_dav_prev_trap:-:}" EXIT
wait_for 20 curl -s -o /dev/null "http://127.0.0.1:$DAV_PORT/" || fail "the WebDAV Apache does not answer"

proj=$TMP/proj
make_project "$proj" locusa locusb
map_accounts "$proj" locusa locusb
set_config "$proj" grid_cycle_period 1
set_config "$proj" grid_output_max_file_mib 1
"$LOCUS" cluster add "$proj" sh --driver slurm --conf "${SLURM_CONF_OF[out1]}" --partition normal >/dev/null \
    || fail "locus cluster add sh failed"
"$LOCUS" cluster add "$proj" rest --driver slurmrest --api "${REST_URL[out1]}" --api-user root \
    --token-file "$TMP/root.jwt" >/dev/null || fail "locus cluster add rest failed"
"$LOCUS" cluster add "$proj" gamma --driver oar --api "$OAR_API" >/dev/null || fail "locus cluster add gamma failed"
KEY_A=$(submit_key_of "$proj" locusa) KEY_B=$(submit_key_of "$proj" locusb)
# each cluster its own input cache (they share this machine's homes): a shared input moves once to each
home_a=$(getent passwd locusa | cut -d: -f6)
for c in sh rest gamma; do
    rm -rf "$home_a/.locus-cache-o$c"
    "$LOCUS" cluster set "$proj" "$c" --cache-dir "~/.locus-cache-o$c" >/dev/null || fail "locus cluster set $c --cache-dir failed"
done
head -c 200000 /dev/urandom >"$TMP/shared.dat"
SHARED_SUM=$(sha256sum <"$TMP/shared.dat" | cut -d' ' -f1)
"$LOCUS" file add "$proj" "$TMP/shared.dat" >/dev/null || fail "locus file add shared.dat failed"

WORK=$TMP/work
mkdir -p "$WORK"
chmod 777 "$WORK"
# job.sh NAME: its outputs in the working directory, and their checksums
# (the test's reference) in sums.NAME; "miss" writes none, "big" one over
# the limit
cat >"$TMP/job.sh" <<'SH'
#!/bin/bash
n=$1
sha256sum <shared.dat | cut -d' ' -f1 >"seen.$n"   # the staged input, as this job read it
case $n in
    miss) exit 0 ;;
    big) head -c 2000000 /dev/urandom >big.out; echo x >big-1.csv; mkdir -p big-dir; exit 0 ;;
esac
head -c $((100000 + RANDOM)) /dev/urandom >"$n.out"
echo "first csv of $n" >"$n-1.csv"
echo "second csv of $n" >"$n-2.csv"
mkdir -p "$n-dir/sub"
echo "deep in $n" >"$n-dir/sub/f.txt"
sha256sum "$n.out" "$n-1.csv" "$n-2.csv" >"sums.$n"
sleep 3   # not a sink's instant success
SH
chmod 755 "$TMP/job.sh"
# jdl NAME CLUSTER [DEST] PARAM...: a campaign gathering each job's outputs (to locusd: DEST "server")
jdl() {
    local name=$1 cluster=$2 dest=$3 params
    shift 3
    params=$(printf '"%s",' "$@")
    cat >"$TMP/$name.json" <<JSON
{"name": "$name", "params": [${params%,}], "exec_file": "$TMP/job.sh", "exec_directory": "$WORK",
 "walltime": 300, "clusters": {"$cluster": {}}, "output_files": ["{name}.out", "{name}-*.csv"],
 "output_folder": "{name}-dir", "output_destination": "$dest",
 "inputs": ["shared.dat"], "input_files": {"shared.dat": {"size": 200000, "sha256": "$SHARED_SUM"}}}
JSON
}
jdl on_sh sh server s1 s2 s3
jdl on_rest rest server r1 r2 r3
jdl on_oar gamma server o1 o2
# elsewhere: a folder on the cluster (made by the job), a WebDAV collection (its collections made by MKCOL)
install -d -m 777 "$TMP/kept"
jdl to_folder sh "$TMP/kept/{campaign}/{name}" k1 k2
jdl to_dav gamma "http://127.0.0.1:$DAV_PORT/dav/{campaign}/{name}/" w1 w2
(umask 077; echo "machine 127.0.0.1 login alice password s3cret-dav" >"$home_a/.netrc")
chown locusa "$home_a/.netrc"
# locusb's password is wrong: the store refuses its outputs (401), the job's fault
home_b=$(getent passwd locusb | cut -d: -f6)
(umask 077; echo "machine 127.0.0.1 login alice password wrong" >"$home_b/.netrc")
chown locusb "$home_b/.netrc"
cat >"$TMP/dav_denied.json" <<JSON
{"name": "dav_denied", "params": ["d1"], "exec_file": "$TMP/job.sh", "exec_directory": "$WORK", "walltime": 300,
 "clusters": {"gamma": {}}, "output_files": ["{name}.out"],
 "output_destination": "http://127.0.0.1:$DAV_PORT/dav/{campaign}/{name}"}
JSON
# each alone: the first exit error blacklists its campaign on the cluster
jdl missing sh server miss
jdl oversize sh server big

start_locusd "$proj"
submit() { "$LOCUS" campaign submit "$proj" "$TMP/$1.json" --user locusa | grep -o '[0-9]\+' | head -n 1; }
SH_C=$(submit on_sh) REST_C=$(submit on_rest) OAR_C=$(submit on_oar) MISS_C=$(submit missing) BIG_C=$(submit oversize)
FOLDER_C=$(submit to_folder) DAV_C=$(submit to_dav)
DENIED_C=$("$LOCUS" campaign submit "$proj" "$TMP/dav_denied.json" --user locusb | grep -o '[0-9]\+' | head -n 1)
say "campaigns: on_sh $SH_C, on_rest $REST_C, on_oar $OAR_C, missing $MISS_C, oversize $BIG_C, to_folder $FOLDER_C," \
    "to_dav $DAV_C, dav_denied $DENIED_C"

ended() { [ "$(sql "$proj" "SELECT state FROM grid_campaigns WHERE id=$1")" = "$GCS_TERMINATED" ]; }
for c in "$SH_C" "$REST_C" "$OAR_C" "$FOLDER_C" "$DAV_C"; do
    wait_for 300 ended "$c" || fail "campaign $c not ended after 300 s: $(sql "$proj" "SELECT state, ndone, njobs
        FROM grid_campaigns WHERE id=$c")"
done
say "the five campaigns ended"
# staged: every job read the shared input's bytes; each cluster's cache fetched it once
for n in s1 s2 s3 r1 r2 r3 o1 o2 k1 k2 w1 w2; do
    [ "$(cat "$WORK/seen.$n" 2>/dev/null)" = "$SHARED_SUM" ] || bad "job $n read shared.dat as '$(cat "$WORK/seen.$n" 2>/dev/null)'"
done
for c in sh rest gamma; do
    [ -f "$home_a/.locus-cache-o$c/sha256-$SHARED_SUM" ] || bad "cluster $c's cache does not hold shared.dat"
done
gets=$(grep -c 'GET download/shared.dat: 200' "$LOCUSD_LOG" || true)
[ "$gets" = 3 ] || bad "locusd served shared.dat $gets times, not once per cluster (3)"
say "shared.dat staged: read right by the 12 jobs, fetched once into each of the 3 clusters' caches"

# ---- what the API lists and sends ----

# outputs_of C: "JOB NAME SIZE SHA256" lines of GET campaigns/C/outputs as locusa
outputs_of() {
    [ "$(api_get "campaigns/$1/outputs" "$KEY_A")" = 200 ] || { cat "$TMP/body" >&2; return 1; }
    python3 -c 'import json,sys
for o in json.load(open(sys.argv[1]))["outputs"]: print(o["job_id"], o["name"], o["size"], o["sha256"])' "$TMP/body"
}
# check_campaign C NAME...: every job's files listed with the job's own checksums, and the same bytes in the
# tar of the API and of the remote CLI
check_campaign() {
    local c=$1 n sum f job x
    shift
    outputs_of "$c" >"$TMP/list.$c" || { bad "campaign $c: GET outputs failed"; return; }
    [ "$(wc -l <"$TMP/list.$c")" = $(($# * 4)) ] || bad "campaign $c lists $(wc -l <"$TMP/list.$c") outputs, not $(($# * 4))"
    curl -sf -o "$TMP/all.$c.tar" -H "Authorization: Bearer $KEY_A" "http://127.0.0.1:$PORT/api/v1/campaigns/$c/results" \
        || bad "campaign $c: GET results failed"
    mkdir -p "$TMP/x.$c" && tar -xf "$TMP/all.$c.tar" -C "$TMP/x.$c" || bad "campaign $c: the archive does not unpack"
    for n in "$@"; do
        while read -r sum f; do
            grep -q " $f [0-9]* $sum\$" "$TMP/list.$c" || bad "campaign $c: $f is not listed with sha256 $sum"
            job=$(grep " $f " "$TMP/list.$c" | cut -d' ' -f1)
            x=$(sha256sum <"$TMP/x.$c/campaign-$c/$job/$f" 2>/dev/null | cut -d' ' -f1)
            [ "$x" = "$sum" ] || bad "campaign $c: $f in the archive has sha256 '$x', not $sum"
        done <"$WORK/sums.$n"
        job=$(grep " $n.out " "$TMP/list.$c" | cut -d' ' -f1)
        x=$(tar -xOf "$TMP/x.$c/campaign-$c/$job/$n-dir.tar" "$n-dir/sub/f.txt" 2>/dev/null || true)
        [ "$x" = "deep in $n" ] || bad "campaign $c: $n-dir.tar holds '$x'"
    done
    # one job's through the remote CLI
    n=$1
    job=$(grep " $n.out " "$TMP/list.$c" | cut -d' ' -f1)
    LOCUS_KEY=$KEY_A "$LOCUS" --server "http://127.0.0.1:$PORT/" campaign results "$c" --job "$job" \
        --output-file "$TMP/one.$c.tar" >/dev/null || bad "campaign $c: locus campaign results --job failed"
    sum=$(grep " $n.out\$" "$WORK/sums.$n" | cut -d' ' -f1)
    x=$(tar -xOf "$TMP/one.$c.tar" "campaign-$c/$job/$n.out" 2>/dev/null | sha256sum | cut -d' ' -f1)
    [ "$x" = "$sum" ] || bad "campaign $c: $n.out through the CLI has sha256 '$x', not $sum"
    [ "$(tar -tf "$TMP/one.$c.tar" | wc -l)" = 4 ] || bad "campaign $c: the job's archive holds $(tar -tf "$TMP/one.$c.tar")"
}
check_campaign "$SH_C" s1 s2 s3
check_campaign "$REST_C" r1 r2 r3
check_campaign "$OAR_C" o1 o2
say "outputs listed and downloaded with their checksums: Slurm, slurmrestd, OAR"

# the local CLI lists the same
"$LOCUS" campaign results "$proj" "$REST_C" | grep -q " r2.out .* $(grep ' r2.out$' "$WORK/sums.r2" | cut -d' ' -f1)\$" \
    || bad "locus campaign results DIR: $("$LOCUS" campaign results "$proj" "$REST_C")"
"$LOCUS" campaign stat "$proj" "$REST_C" --jobs --json | python3 -c 'import json,sys
jobs = json.load(sys.stdin)["jobs"]
assert all(len(j["outputs"]) == 4 for j in jobs), jobs' || bad "campaign stat --jobs --json: not 4 outputs per job"

# ---- outputs stored elsewhere: a folder on the cluster, a WebDAV collection ----

# check_elsewhere C DIR URL NAME...: each job's outputs in DIR/C/NAME/ with the job's bytes, listed by locusd
# with their checksums at URL/C/NAME/FILE, and none of them in the campaign's results archive
check_elsewhere() {
    local c=$1 dir=$2 url=$3 n sum f x
    shift 3
    [ "$(api_get "campaigns/$c/outputs" "$KEY_A")" = 200 ] || { bad "campaign $c: GET outputs failed"; return; }
    python3 -c 'import json,sys
for o in json.load(open(sys.argv[1]))["outputs"]: print(o["name"], o["size"], o["sha256"], o.get("location", "-"))' \
        "$TMP/body" >"$TMP/list.$c"
    [ "$(wc -l <"$TMP/list.$c")" = $(($# * 4)) ] || bad "campaign $c lists $(wc -l <"$TMP/list.$c") outputs, not $(($# * 4))"
    for n in "$@"; do
        while read -r sum f; do
            x=$(sha256sum <"$dir/$c/$n/$f" 2>/dev/null | cut -d' ' -f1)
            [ "$x" = "$sum" ] || bad "campaign $c: $dir/$c/$n/$f has sha256 '$x', not $sum"
            grep -qx "$f $(stat -c %s "$dir/$c/$n/$f" 2>/dev/null) $sum $url/$c/$n/$f" "$TMP/list.$c" \
                || bad "campaign $c: $f not listed at $url/$c/$n/$f with its size and sha256 $sum: $(grep "^$f " "$TMP/list.$c")"
        done <"$WORK/sums.$n"
        x=$(tar -xOf "$dir/$c/$n/$n-dir.tar" "$n-dir/sub/f.txt" 2>/dev/null || true)
        [ "$x" = "deep in $n" ] || bad "campaign $c: $dir/$c/$n/$n-dir.tar holds '$x'"
        sum=$(sha256sum <"$dir/$c/$n/$n-dir.tar" | cut -d' ' -f1)
        grep -q "^$n-dir.tar [0-9]* $sum $url/$c/$n/$n-dir.tar\$" "$TMP/list.$c" || bad "campaign $c: $n-dir.tar not listed as stored"
    done
    curl -sf -o "$TMP/all.$c.tar" -H "Authorization: Bearer $KEY_A" "http://127.0.0.1:$PORT/api/v1/campaigns/$c/results" \
        || bad "campaign $c: GET results failed"
    [ -z "$(tar -tf "$TMP/all.$c.tar" 2>&1)" ] || bad "campaign $c: its results archive holds $(tar -tf "$TMP/all.$c.tar" | head -3)"
}
check_elsewhere "$FOLDER_C" "$TMP/kept" "$TMP/kept" k1 k2
check_elsewhere "$DAV_C" "$DAV/files" "http://127.0.0.1:$DAV_PORT/dav" w1 w2
"$LOCUS" campaign results "$proj" "$DAV_C" | grep -q " w1.out .* http://127.0.0.1:$DAV_PORT/dav/$DAV_C/w1/w1.out\$" \
    || bad "locus campaign results DIR does not show where w1.out is: $("$LOCUS" campaign results "$proj" "$DAV_C")"
say "outputs stored in a folder on the cluster and in a WebDAV collection, each recorded with locusd"

# another's key, no key
[ "$(api_get "campaigns/$SH_C/outputs" "$KEY_B")" = 404 ] || bad "locusb read locusa's outputs list"
[ "$(api_get "campaigns/$SH_C/results" "$KEY_B")" = 404 ] || bad "locusb read locusa's outputs"
[ "$(api_get "campaigns/$SH_C/results")" = 401 ] || bad "outputs read without a key"

# ---- missing and oversize outputs ----

# code_of CAMPAIGN: the exit code its job ended with
code_of() { sql "$proj" "SELECT exit_code FROM grid_copies WHERE campaign_id=$1 AND state<>$GC_LAUNCHING
    AND exit_code<>0 LIMIT 1" 2>/dev/null; }
code_is() { [ "$(code_of "$1")" = "$2" ]; }
wait_for 120 code_is "$MISS_C" 123 || bad "the job missing its outputs ended with '$(code_of "$MISS_C")', not 123"
wait_for 60 code_is "$BIG_C" 123 || bad "the job over the size limit ended with '$(code_of "$BIG_C")', not 123"
outs() { cat "$WORK"/locus.sh.*.stdout 2>/dev/null || true; }
outs | grep -q '^locus-output error miss.out no file matches' || bad "no error line for miss.out"
outs | grep -q '^locus-output error big.out 2000000 bytes, over the limit of 1048576' || bad "no error line for big.out"
wait_for 120 code_is "$DENIED_C" 123 || bad "the job refused by the store ended with '$(code_of "$DENIED_C")', not 123"
cat "$WORK"/locus.gamma.*.stdout 2>/dev/null |
    grep -q "^locus-output error d1.out refused by http://127.0.0.1:$DAV_PORT/dav/$DENIED_C/d1/d1.out: HTTP 401" \
    || bad "no error line for d1.out refused by the store"
[ ! -e "$DAV/files/$DENIED_C/d1/d1.out" ] || bad "the store took d1.out with a wrong password"
for c in "$MISS_C" "$BIG_C" "$DENIED_C"; do
    events=$(sql "$proj" "SELECT count(*) FROM grid_events WHERE campaign_id=$c AND exit_code=123")
    [ "$events" = 1 ] || bad "campaign $c: $events events name exit code 123"
    [ -z "$(find "$proj/grid_results/$c" -type f 2>/dev/null)" ] \
        || bad "campaign $c's failing job sent outputs or records: $(find "$proj/grid_results/$c" -type f)"
done
say "missing, oversize and refused outputs: exit 123"

# ---- forged, other jobs' and bad uploads change nothing ----

before=$(find "$proj/grid_results" -type f | sort | xargs sha256sum)
J1=$(grep ' s1.out ' "$TMP/list.$SH_C" | cut -d' ' -f1) J2=$(grep ' s2.out ' "$TMP/list.$SH_C" | cut -d' ' -f1)
key=$(sed -n 2p "$proj/keys/output_key")
# token C J: a valid token of job J of campaign C, made as the grid daemon does
token() {
    local exp=$(( $(date +%s) + 3600 ))
    printf '%s-%s' "$exp" "$(printf 'locus grid output token v1\n%s %s %s' "$1" "$2" "$exp" |
        openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" -r | cut -d' ' -f1)"
}
echo "evil" >"$TMP/evil"
head -c 2000000 /dev/zero >"$TMP/evil.big"
# put STATUS JOB NAME TOKEN [SUM] [FILE]: a PUT of FILE ($TMP/evil) with SUM (its own) answered STATUS
put() {
    local want=$1 job=$2 name=$3 tok=$4 file=${6:-$TMP/evil} sum got
    sum=${5:-$(sha256sum <"$file" | cut -d' ' -f1)}
    got=$(curl -s --max-time 30 -o "$TMP/body" -w '%{http_code}' -T "$file" -H "X-Locus-Output-Token: $tok" \
        -H "X-Locus-SHA256: $sum" "http://127.0.0.1:$PORT/api/v1/campaigns/$SH_C/jobs/$job/outputs/$name")
    [ "$got" = "$want" ] || bad "PUT $job/$name: $got, not $want: $(cat "$TMP/body")"
}
put 403 "$J2" s2.out "1-$(printf '%064d' 0)"
put 403 "$J2" s2.out "$(token "$SH_C" "$J1")"                 # job 1's token for job 2
put 403 "$J2" s2.out "$(token "$OAR_C" "$J2")"                # another campaign's
put 400 "$J2" s2.out "$(token "$SH_C" "$J2")" "$(printf '%064d' 0)"   # its own, but not the file's checksum
put 400 "$J2" .hidden "$(token "$SH_C" "$J2")"
put 413 "$J2" s2.out "$(token "$SH_C" "$J2")" "" "$TMP/evil.big"   # over grid_output_max_file_mib
# a record (an output stored elsewhere): no body, a location ending in its name, a size
# record STATUS NAME LOCATION SIZE [FILE]
record() {
    local got body=(--data-binary "")
    [ -z "${5:-}" ] || body=(-T "$5")
    got=$(curl -s --max-time 30 -o "$TMP/body" -w '%{http_code}' -X PUT "${body[@]}" \
        -H "X-Locus-Output-Token: $(token "$SH_C" "$J2")" -H "X-Locus-SHA256: $(printf '%064d' 0)" \
        -H "X-Locus-Output-Location: $3" -H "X-Locus-Output-Size: $4" \
        "http://127.0.0.1:$PORT/api/v1/campaigns/$SH_C/jobs/$J2/outputs/$2")
    [ "$got" = "$1" ] || bad "record $2 at $3: $got, not $1: $(cat "$TMP/body")"
}
record 400 s2.out "/elsewhere/other.out" 3            # not this output's location
record 400 s2.out "ftp://host/s2.out" 3                # not a folder nor a URL
record 400 s2.out "/elsewhere/s2.out" "-3"             # a size that is not one
record 400 s2.out "/elsewhere/s2.out" 3 "$TMP/evil"    # a body
code=$(curl -s -o "$TMP/body" -w '%{http_code}' -T "$TMP/evil" \
    "http://127.0.0.1:$PORT/api/v1/campaigns/$SH_C/jobs/$J2/outputs/s2.out")
[ "$code" = 401 ] || bad "a PUT without a token: $code"
after=$(find "$proj/grid_results" -type f | sort | xargs sha256sum)
[ "$before" = "$after" ] || bad "refused PUTs changed the outputs: $(diff <(echo "$before") <(echo "$after"))"
say "forged, other jobs' and bad uploads refused, nothing changed"

stop_locusd
checks_passed
