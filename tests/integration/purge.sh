#!/usr/bin/env bash
# purge: `locus db purge` of a project while locusd serves it, a batch's
# jobs ending under 10 hosts of bench-rpc (which runs its own locusd):
#  - a dry run counts what goes; a purge during the load takes ended jobs
#    out to archive/ (each once, with its instances), while bench-rpc sees
#    no error; a second purge, the load over, takes the rest;
#  - the batches' figures (`locus stat`) are the same before and after,
#    `locus db check` is happy, and a job keeps its number;
#  - the input of a batch all of whose jobs went leaves download/; the
#    input running jobs still read stays;
#  - locusd's own purge (purge_after_days 0.0001) runs under the load, its
#    steps written by its writer: no error, the store consistent, new
#    instances with ids past every archived one.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice bob
head -c 2000 /dev/urandom >"$TMP/early.dat"
"$LOCUS" file add "$proj" "$TMP/early.dat" >/dev/null || fail "locus file add failed"
echo '{"cmdline": "--seed {n}", "inputs": ["early.dat=in"], "flops": 1e9}' >"$TMP/early.json"
echo '{"cmdline": "--seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 300 --input-template "$TMP/early.json" --name early --priority 5 \
    >/dev/null || fail "locus batch create early failed"
"$LOCUS" batch create "$proj" --app worker --count 20000 --input-template "$TMP/tmpl.json" --name b >/dev/null \
    || fail "locus batch create b failed"
{ key_of alice; key_of bob; } >"$proj/bench_keys.txt"
chmod 600 "$proj/bench_keys.txt"

ended() { sql "$proj" "SELECT count(*) FROM jobs WHERE state IN ($JOB_DONE,$JOB_FAILED,$JOB_CANCELLED)"; }
stat_of() { "$LOCUS" stat "$proj" "$1" --json | tr ',' '\n' | grep -E '"(jobs|done|failed|cancelled|instances_success|instances_error)"' || true; }

"$LOCUS_BUILD_DIR/bin/bench-rpc" --project "$proj" --hosts 10 --conns 4 --threads 2 --seconds 10 --warmup 1 \
    --upload >"$TMP/bench.out" 2>&1 &
BENCH_PID=$!
for _ in $(seq 150); do [ "$(ended)" -ge 1000 ] && break; sleep 0.2; done
[ "$(ended)" -ge 1000 ] || fail "only $(ended) jobs ended under bench-rpc: $(tail -5 "$TMP/bench.out")"

# ---- a dry run, then a purge during the load: every job ended a second ago ----
sleep 1
"$LOCUS" db purge "$proj" --days 0.00001 --dry-run >"$TMP/dry.out" || fail "dry run failed: $(cat "$TMP/dry.out")"
grep -q "^would purge [1-9][0-9]* jobs" "$TMP/dry.out" || fail "dry run: $(cat "$TMP/dry.out")"
[ ! -e "$proj/archive" ] || fail "a dry run made archive/"
"$LOCUS" db purge "$proj" --days 0.00001 >"$TMP/purge1.out" || fail "purge under load failed: $(cat "$TMP/purge1.out")"
say "under load: $(cat "$TMP/dry.out"); $(cat "$TMP/purge1.out")"
wait "$BENCH_PID" || fail "bench-rpc failed: $(tail -5 "$TMP/bench.out")"
grep -q " 0 errors" "$TMP/bench.out" || fail "bench-rpc saw errors while purging: $(grep -o "measured.*errors" "$TMP/bench.out")"
say "bench-rpc: $(grep -o "measured.*errors" "$TMP/bench.out" | head -n 1)"

# ---- the load over, locusd idle: what ended since goes too; figures unchanged ----
start_locusd "$proj"
for _ in $(seq 50); do   # the validator and the assimilator finish what was reported
    a=$(ended); sleep 1; [ "$a" = "$(ended)" ] && break
done
stat_of early >"$TMP/early.before"
stat_of b >"$TMP/b.before"
left_before=$(sql "$proj" "SELECT count(*) FROM jobs")
inst_before=$(sql "$proj" "SELECT count(*) FROM instances")
"$LOCUS" job show "$proj" b 19999 | head -n 1 >"$TMP/last.before" || fail "locus job show b 19999 failed"
sleep 1
"$LOCUS" db purge "$proj" --days 0.00001 >"$TMP/purge2.out" || fail "second purge failed: $(cat "$TMP/purge2.out")"
say "idle: $(cat "$TMP/purge2.out")"
stat_of early | diff "$TMP/early.before" - >&2 || fail "batch early's figures changed with the purge"
stat_of b | diff "$TMP/b.before" - >&2 || fail "batch b's figures changed with the purge"
[ -s "$TMP/b.before" ] || fail "locus stat --json printed no figures"
"$LOCUS" db check "$proj" >"$TMP/check.out" || fail "locus db check after purging: $(cat "$TMP/check.out")"

n1=$(sed -n 's/^purged \([0-9]*\) jobs.*/\1/p' "$TMP/purge1.out")
n2=$(sed -n 's/^purged \([0-9]*\) jobs.*/\1/p' "$TMP/purge2.out")
i2=$(sed -n 's/^purged [0-9]* jobs (\([0-9]*\) instances.*/\1/p' "$TMP/purge2.out")
[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] || fail "purges took $n1 and $n2 jobs"
[ $((left_before - n2)) -eq "$(sql "$proj" "SELECT count(*) FROM jobs")" ] || fail "the second purge's count is not what left"
[ $((inst_before - i2)) -eq "$(sql "$proj" "SELECT count(*) FROM instances")" ] || fail "its instance count is not what left"
zcat "$proj"/archive/jobs-*.jsonl.gz >"$TMP/archive.jsonl" || fail "the archive does not decompress"
[ "$(wc -l <"$TMP/archive.jsonl")" -eq $((n1 + n2)) ] \
    || fail "the archive holds $(wc -l <"$TMP/archive.jsonl") lines for $((n1 + n2)) jobs purged"
[ "$(grep -o '"name":"[^"]*"' "$TMP/archive.jsonl" | sort | uniq -d | wc -l)" -eq 0 ] || fail "a job is archived twice"
ok=$(grep -c '"outcome":"success"' "$TMP/archive.jsonl" || true)
[ "$ok" -gt 0 ] || fail "the archived jobs have no instance"
in_store=$(sql "$proj" "SELECT count(*) FROM jobs WHERE state IN ($JOB_DONE,$JOB_FAILED,$JOB_CANCELLED)")
say "archive: $((n1 + n2)) jobs, each once; $in_store ended jobs stay (the newest, or with a spare out)"

"$LOCUS" job show "$proj" b 19999 | head -n 1 | diff "$TMP/last.before" - >&2 \
    || fail "b's job number 19999 is another job after the purge"
if "$LOCUS" job show "$proj" b 0 >/dev/null 2>&1; then fail "b's first job, purged, is still shown"; fi

# ---- files: early's input went with its jobs, in.dat stays ----
left_early=$(sql "$proj" "SELECT count(*) FROM jobs j JOIN batches b ON b.id=j.batch_id WHERE b.name='early'")
if [ "$left_early" -eq 0 ]; then
    [ "$(sql "$proj" "SELECT count(*) FROM files WHERE name='early.dat'")" = 0 ] || fail "early.dat is still registered"
    [ -z "$(find "$proj/download" -name early.dat)" ] || fail "early.dat is still in download/"
    say "early.dat, read by no job left, left the store and download/"
else
    say "$left_early jobs of early stay (the newest ids): early.dat stays"
fi
[ -n "$(find "$proj/download" -name in.dat)" ] || fail "in.dat, read by running jobs, was deleted"

# ---- locusd's own purge, under load; ids are never given twice ----
stop_locusd
check_sanitizers
max_archived=$(grep -o '"instances":\[.*' "$TMP/archive.jsonl" | grep -o '"id":[0-9]*' | cut -d: -f2 | sort -n | tail -n 1)
set_config "$proj" purge_after_days 0.0001   # 8.6 s: locusd purges every 5 s
"$LOCUS_BUILD_DIR/bin/bench-rpc" --project "$proj" --hosts 10 --conns 4 --threads 1 --seconds 20 --warmup 1 --upload \
    >"$TMP/bench2.out" 2>&1 || fail "bench-rpc with locusd purging: $(tail -5 "$TMP/bench2.out")"
grep -q " 0 errors" "$TMP/bench2.out" || fail "bench-rpc saw errors while locusd purged"
say "bench-rpc, locusd purging: $(grep -o "measured.*errors" "$TMP/bench2.out" | head -n 1)"
n3=$(( $(zcat "$proj"/archive/jobs-*.jsonl.gz | wc -l) - n1 - n2 ))
[ "$n3" -gt 0 ] || fail "locusd purged nothing in 20 s with purge_after_days 0.0001"
"$LOCUS" db check "$proj" >"$TMP/check.out" || fail "locus db check after locusd's purge: $(cat "$TMP/check.out")"
newest=$(sql "$proj" "SELECT max(id) FROM instances")
[ "$newest" -gt "$max_archived" ] || fail "new instance ids ($newest) not past the archived ones ($max_archived)"
say "locusd purged $n3 jobs as it served; instance ids up to $newest, past the $max_archived archived before"
