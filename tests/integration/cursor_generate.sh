#!/usr/bin/env bash
# cursor_generate: a cursor batch whose jobs the project's generator makes
# on demand (docs/cursors.md), computed by two real BOINC clients
# (one CPU each). `locus batch create --cursors 2 --generate 24` plans jobs
# 1-24 over 12 small sticky files F01..F12 and makes none; locusd runs
# examples/cursor/make_jobs.sh (job k reads files (k-1)/2+1 and the next)
# whenever a cursor holds 2 jobs never sent or fewer (<cursor_cushion>4),
# which files them with `locus batch add-jobs`. With quorum 1 it proves:
#  - before locusd runs, the batch has its two cursors (1-12, 13-24) and no
#    job; the API shows the cursors' planned remaining credit;
#  - every job number 1-24 was made exactly once, in its cursor, in chunks
#    (child batches gb.K, K their first job) of at most the cushion, the
#    first of each cursor a full cushion; the generator never failed;
#  - a restart of locusd halfway loses and repeats nothing: generation goes
#    on from the store's cursors;
#  - each cursor's jobs went out in increasing job number;
#  - `locus stat`, `locus batch list` and GET /api/v1/batches show gb with
#    its chunks' jobs, and list no chunk;
#  - the batch, its chunks and its cursors end finished (every job made,
#    first_unfinished_job_num past the range, remaining_credit 0), each job
#    ran once, no sequence file is left on a client, `locus db check` is
#    happy and locusd stops cleanly.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

SRC=${LOCUS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
GEN=$SRC/examples/cursor/make_jobs.sh
[ -r "$GEN" ] || fail "$GEN is missing (set LOCUS_SOURCE_DIR)"
NFILES=12 NJOBS=24 CUSHION=4
proj=$TMP/proj

make_project "$proj" alice bob
set_config "$proj" max_wus_to_send 2
set_config "$proj" next_rpc_delay 2
set_config "$proj" cursor_cushion "$CUSHION"
# run as sh -c CMD locus-cursor-generator BATCH FIRST LAST
set_config "$proj" cursor_work_generator \
    "env LOCUS=$LOCUS NFILES=$NFILES FILES=F%02d.dat PER_FILE=2 SPAN=2 ARGS='--iterations 200000 --sleep-ms 5' FLOPS=1e9 sh $GEN \"\$1\" \"\$2\" \"\$3\""

for k in $(seq "$NFILES"); do
    f=$(printf 'F%02d.dat' "$k")
    head -c 200000 /dev/urandom >"$TMP/$f"
    "$LOCUS" file add "$proj" "$TMP/$f" --sticky --report-on-rpc >/dev/null || fail "locus file add $f failed"
done
out=$("$LOCUS" batch create "$proj" --app worker --generate "$NJOBS" --name gb --cursors 2 --flops 1e9 \
      --delay-bound 3600) || fail "locus batch create --generate failed"
case $out in *"$NJOBS jobs to generate in 2 cursors"*) ;; *) fail "batch create said: $out" ;; esac
plan=$(sql "$proj" "SELECT first_job_num||'-'||last_job_num||':'||first_ungenerated_job_num FROM cursors ORDER BY first_job_num" | tr '\n' ' ')
[ "$plan" = "1-12:1 13-24:13 " ] || fail "cursors (range:first ungenerated) $plan, expected 1-12:1 13-24:13"
n=$(sql "$proj" "SELECT count(*) FROM jobs")
[ "$n" -eq 0 ] || fail "$n jobs made before any host asked"

start_locusd "$proj"
api=$(curl -sf --max-time 5 "http://127.0.0.1:$PORT/api/v1/cursors") || fail "GET /api/v1/cursors failed"
# 12 per cursor to make, or 8 once the generator made its first chunk
tomake=$(grep -o '"jobs_to_make": *[0-9]*' <<<"$api" | grep -o '[0-9]*$' | tr '\n' ' ')
case $tomake in "12 12 " | "8 12 " | "12 8 " | "8 8 ") ;; *) fail "the API's jobs to make per cursor: $tomake ($api)" ;; esac
start_client C1 "$(key_of alice)" 1
start_client C2 "$(key_of bob)" 1
wait_first_rpc C1 C2
say "clients attached: C1 host $(client_hostid C1), C2 host $(client_hostid C2)"

# a restart halfway: the cursors, their teams and the chunks made so far load
# again, and generation goes on from where the store says
for i in $(seq 120); do
    [ "$(sql "$proj" "SELECT count(*) FROM batches WHERE parent_id<>0")" -lt 4 ] || break
    sleep 0.5
done
made=$(sql "$proj" "SELECT count(*) FROM jobs")
[ "$made" -lt "$NJOBS" ] || fail "every job was made before the restart: raise NJOBS or lower the cushion"
stop_locusd
start_locusd "$proj"
say "locusd restarted with $made of $NJOBS jobs made"

wait_batch_done "$proj" gb 300
wait_clients_idle 60

# every job number made once, in the cursor whose range holds it
made=$(sql "$proj" "SELECT count(*), count(DISTINCT job_num), min(job_num), max(job_num) FROM jobs j
                    JOIN cursors c ON c.id=j.cursor_id WHERE j.job_num BETWEEN c.first_job_num AND c.last_job_num")
[ "$made" = "$NJOBS|$NJOBS|1|$NJOBS" ] || fail "jobs (count, distinct numbers, min, max) $made, expected $NJOBS|$NJOBS|1|$NJOBS"
n=$(sql "$proj" "SELECT count(*) FROM jobs")
[ "$n" -eq "$NJOBS" ] || fail "$n jobs in the store for $NJOBS"

# in chunks: child batches gb.K of at most the cushion, the first of each cursor full
chunks=$(sql "$proj" "SELECT b.name||':'||min(j.job_num)||':'||count(*) FROM batches b JOIN jobs j ON j.batch_id=b.id
                      WHERE b.parent_id=(SELECT id FROM batches WHERE name='gb') GROUP BY b.id ORDER BY min(j.job_num)" \
         | tr '\n' ' ')
say "chunks (name:first job:jobs): $chunks"
nchunks=0
for c in $chunks; do
    IFS=: read -r name first count <<<"$c"
    [ "$name" = "gb.$first" ] || fail "chunk $name holds jobs from $first"
    [ "$count" -le "$CUSHION" ] || fail "chunk $name made $count jobs, more than the cushion $CUSHION"
    case $first in 1 | 13) [ "$count" -eq "$CUSHION" ] || fail "a cursor's first chunk $name made $count jobs, not $CUSHION" ;; esac
    nchunks=$((nchunks + 1))
done
[ "$nchunks" -ge $((2 * 12 / CUSHION)) ] || fail "$nchunks chunks for 2 cursors of 12 jobs and a cushion of $CUSHION"
other=$(sql "$proj" "SELECT count(*) FROM batches WHERE name<>'gb' AND parent_id=0")
[ "$other" -eq 0 ] || fail "$other batches that are neither gb nor its chunks"
notdone=$(sql "$proj" "SELECT name||'='||state FROM batches WHERE state<>$BATCH_DONE")
[ -z "$notdone" ] || fail "batches not done: $notdone"
! grep -q 'cursor generator .* failed' "$LOCUSD_LOG" || fail "the generator failed: $(grep 'cursor generator' "$LOCUSD_LOG" | head -5)"

# users see one batch: its chunks' jobs count in it, and no chunk is listed
st=$("$LOCUS" stat "$proj" gb --json) || fail "locus stat gb failed"
grep -q "\"jobs\": *$NJOBS,.*\"done\": *$NJOBS," <<<"$st" || fail "locus stat gb does not count the chunks' jobs: $st"
list=$("$LOCUS" batch list "$proj") || fail "locus batch list failed"
! grep -q ' gb\.[0-9]' <<<"$list" || fail "locus batch list shows chunks: $list"
api=$(curl -sf --max-time 5 "http://127.0.0.1:$PORT/api/v1/batches") || fail "GET /api/v1/batches failed"
! grep -q '"gb\.[0-9]' <<<"$api" || fail "the API lists chunks: $api"
grep -q "\"name\": *\"gb\".*\"jobs\": *$NJOBS," <<<"$api" || fail "the API does not count gb's chunks' jobs: $api"

n=$(sql "$proj" "SELECT count(*) FROM instances")
[ "$n" -eq "$NJOBS" ] || fail "$n instances for $NJOBS jobs of quorum 1"
for c in $(sql "$proj" "SELECT id FROM cursors"); do
    order=$(sql "$proj" "SELECT j.job_num FROM instances i JOIN jobs j ON j.id=i.job_id WHERE j.cursor_id=$c ORDER BY i.id" | tr '\n' ' ')
    sorted=$(tr ' ' '\n' <<<"$order" | sed '/^$/d' | sort -n | tr '\n' ' ')
    [ "$order" = "$sorted" ] || fail "cursor $c's jobs went out in the order $order"
done

bad=$(sql "$proj" "SELECT id FROM cursors WHERE first_unfinished_job_num<>last_job_num+1 OR remaining_credit<>0
                   OR first_ungenerated_job_num<>last_job_num+1")
[ -z "$bad" ] || fail "cursors not finished in the store: $(sql "$proj" "SELECT * FROM cursors")"
for c in C1 C2; do
    left=$(ls "$(client_project_dir "$c")" 2>/dev/null | grep -c '^F[0-9]*\.dat$' || true)
    [ "$left" -eq 0 ] || fail "$left sequence files left on $c: $(ls "$(client_project_dir "$c")")"
done

stop_locusd
"$LOCUS" db check "$proj" >/dev/null || fail "locus db check failed"
say "ok"
