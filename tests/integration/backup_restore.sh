#!/usr/bin/env bash
# backup_restore: `locus db backup` of a project while locusd serves 20
# hosts of bench-rpc (each RPC uploads its outputs and reports its jobs,
# hundreds a second), then `locus db restore` of it into a new folder:
#  - every report committed before the backup began (so every one
#    acknowledged to a host) is in the restored store;
#  - the restored project holds every file its store names: the upload of
#    each reported instance of a job not yet ended, the results of each
#    ended job, every registered input; `locus db check` is happy;
#  - a restored locusd serves it: a host registers and gets work;
#  - refusals change nothing: a backup into a folder that exists, a restore
#    of a folder that is no backup or into a project that exists.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice bob
echo '{"cmdline": "--seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 20000 --input-template "$TMP/tmpl.json" --name b >/dev/null \
    || fail "locus batch create failed"
{ key_of alice; key_of bob; } >"$proj/bench_keys.txt"
chmod 600 "$proj/bench_keys.txt"

# reported PROJ: the ids of the instances the store holds as reported, in
# the order comm(1) needs (text, not numbers)
reported() { sql "$1" "SELECT id FROM instances WHERE received_time > 0" | LC_ALL=C sort; }

"$LOCUS_BUILD_DIR/bin/bench-rpc" --project "$proj" --hosts 20 --conns 8 --threads 2 --seconds 8 --warmup 1 \
    --upload >"$TMP/bench.out" 2>&1 &
BENCH_PID=$!
for _ in $(seq 100); do [ "$(reported "$proj" | wc -l)" -ge 200 ] && break; sleep 0.2; done
reported "$proj" >"$TMP/before"
[ "$(wc -l <"$TMP/before")" -ge 200 ] || fail "bench-rpc reported $(wc -l <"$TMP/before") jobs, not 200: $(tail -5 "$TMP/bench.out")"
t0=$(date +%s%N)
"$LOCUS" db backup "$proj" "$TMP/backup" >"$TMP/backup.out" || fail "locus db backup failed"
t1=$(date +%s%N)
n_during=$(( $(reported "$proj" | wc -l) - $(wc -l <"$TMP/before") ))
say "backup under load in $(( (t1 - t0) / 1000000 )) ms: $(cat "$TMP/backup.out"); $n_during more reports meanwhile"
wait "$BENCH_PID" || fail "bench-rpc failed: $(tail -5 "$TMP/bench.out")"
say "bench-rpc: $(grep -o "measured.*errors" "$TMP/bench.out" | head -n 1)"

# ---- refusals ----
if "$LOCUS" db backup "$proj" "$TMP/backup" 2>"$TMP/err"; then fail "a backup into an existing folder succeeded"; fi
grep -q "exists already" "$TMP/err" || fail "backup into an existing folder: $(cat "$TMP/err")"
if "$LOCUS" db restore "$proj" "$TMP/r0" 2>"$TMP/err"; then fail "a project restored as a backup"; fi
grep -q "is no backup of locus" "$TMP/err" || fail "restore of a non-backup: $(cat "$TMP/err")"
[ ! -e "$TMP/r0" ] || fail "a refused restore left $TMP/r0"
mkdir "$TMP/r1"
if "$LOCUS" db restore "$TMP/backup" "$TMP/r1" 2>"$TMP/err"; then fail "a restore into an existing folder succeeded"; fi
[ -z "$(ls -A "$TMP/r1")" ] || fail "a refused restore wrote into $TMP/r1"
say "refused: a backup into a folder that exists, a restore of no backup or into a folder that exists"

# ---- the restored project ----
restored=$TMP/restored
"$LOCUS" db restore "$TMP/backup" "$restored" >"$TMP/restore.out" || fail "locus db restore failed"
say "$(cat "$TMP/restore.out")"
reported "$restored" >"$TMP/after"
missing=$(LC_ALL=C comm -23 "$TMP/before" "$TMP/after" | wc -l)
[ "$missing" -eq 0 ] || fail "$missing reports committed before the backup are not in it"
say "all $(wc -l <"$TMP/before") reports committed before the backup are in it ($(wc -l <"$TMP/after") in all)"

"$LOCUS" db check "$restored" >"$TMP/check.out" || fail "locus db check of the restored project: $(cat "$TMP/check.out")"
n_up=0
while read -r name; do
    [ -n "$(upload_path "$restored" "$name")" ] || fail "the restored store names the upload $name, not in the backup"
    n_up=$((n_up + 1))
done < <(sql "$restored" "SELECT $INSTANCE_NAME||'_0' FROM instances i JOIN jobs j ON j.id=i.job_id
                          JOIN batches b ON b.id=j.batch_id WHERE i.outcome=$OUTCOME_SUCCESS
                          AND j.state IN ($JOB_ACTIVE, $JOB_VALIDATED)")
n_res=0
while read -r job; do
    [ -s "$restored/results/b/$job/out" ] || fail "job $job is done in the restored store but its results are not"
    n_res=$((n_res + 1))
done < <(sql "$restored" "SELECT name FROM jobs WHERE state=$JOB_DONE")
[ "$n_res" -gt 0 ] || fail "no job done in the restored store"
say "its files: the $n_up uploads of reported jobs not ended, the results of the $n_res jobs done, the inputs"

proj=$restored start_locusd "$restored"
R=$TMP/req.xml B=$TMP/body H=$TMP/headers SCHED=${URL}scheduler
. "$(dirname "$0")/lib/rpc.sh"
hostid=$(register "$(key_of alice)")
[ "${hostid:-0}" -gt 0 ] || fail "no host id from the restored locusd"
request "$(key_of alice)" "$hostid" 100 >"$R"
[ "$(post "$SCHED" "$R")" = 200 ] && grep -q "<result>" "$B" || fail "no work from the restored locusd: $(head -c 300 "$B")"
stop_locusd
say "the restored locusd serves: host $hostid registered and got work"
say "PASS"
