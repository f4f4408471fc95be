#!/usr/bin/env bash
# purge: what purging costs the scheduler. A project of bench-rpc's (a
# batch of 2.5 million jobs) gets a batch of N jobs ended long ago (made so
# with SQL: one valid instance each); then bench-rpc (200 hosts, 20 s) runs
# three ways, side by side: nothing purging; `locus db purge` beside it;
# locusd's own purge (purge_after_days 0.0005: every 5 s). Rounds alternate
# the three, a fresh batch ended before each purge. Prints, per run, RPCs/s,
# jobs/s, latencies, and what the purge took out and how fast.
#   bench/purge.sh [BUILD_DIR] [--json] [--jobs N] [--rounds R]
# BUILD_DIR defaults to build (use a release build); --json adds the
# figures of the last round as one JSON object on the last line.
set -euo pipefail
. "$(dirname "$0")/../tests/integration/lib/codes.sh"   # $JOB_DONE...: the store's codes by name

build=build json=0 n=200000 rounds=1
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --jobs) n=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    *) build=$1 ;;
  esac
  shift
done
bin=$build/bin
for b in locus bench-rpc; do
  [ -x "$bin/$b" ] || { echo "purge: $bin/$b not found: build it first (make)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/locus-bench-purge-XXXXXX)
proj=
trap 'rm -rf "$work" ${proj:+"$(dirname "$proj")"}' EXIT
"$bin/bench-rpc" --seconds 2 --warmup 1 --keep --hosts 200 --jobs 2500000 >"$work/first.out" 2>&1
proj=$(sed -n "s/.*(project \([^ ,]*\),.*/\1/p" "$work/first.out" | head -n 1)
[ -d "$proj" ] || { echo "purge: bench-rpc made no project: $(tail -3 "$work/first.out")" >&2; exit 1; }
db=$proj/locus.db
q() { sqlite3 -batch -noheader -cmd '.timeout 30000' "$db" "$1"; }
app=$(q 'SELECT name FROM apps LIMIT 1')
echo '{"cmdline": "--seed {n}", "flops": 1e9}' >"$work/t.json"
k=0
# a batch of n jobs ended at time 3000 (long before any cut), one valid instance each
make_ended() {
  k=$((k + 1))
  "$bin/locus" batch create "$proj" --app "$app" --count "$n" --input-template "$work/t.json" --name "ended$k" \
      --no-output >/dev/null
  q "BEGIN;
     INSERT INTO instances(job_id,seq,host_id,user_id,app_version_id,state,outcome,validate_state,sent_time,deadline,
                           received_time,cpu_time,elapsed_time,credit)
       SELECT j.id, 0, h.id, h.user_id, 1, $INST_OVER, $OUTCOME_SUCCESS, $VALIDATE_VALID, 1000, 90000, 2000, 10, 11, 1
       FROM jobs j JOIN batches b ON b.id = j.batch_id, (SELECT id, user_id FROM hosts ORDER BY id LIMIT 1) h
       WHERE b.name = 'ended$k';
     UPDATE jobs SET state = $JOB_DONE, done_time = 3000, canonical_id = (SELECT i.id FROM instances i WHERE i.job_id = jobs.id)
       WHERE batch_id = (SELECT id FROM batches WHERE name = 'ended$k');
     UPDATE batches SET state = $BATCH_DONE, done_time = 3000 WHERE name = 'ended$k';
     COMMIT;" >/dev/null
}
left() { q 'SELECT count(*) FROM jobs WHERE done_time = 3000'; }
run() { "$bin/bench-rpc" --project "$proj" --seconds 20 --warmup 2 --hosts 200 --json >"$work/$1.out" 2>&1; tail -n 1 "$work/$1.out"; }
show() {   # NAME JSON [NOTE]
  python3 -c 'import json,sys; d=json.loads(sys.argv[2]); print("%-16s rpcs/s %7.1f  jobs/s %8.1f  p50 %6.2f ms  p99 %7.2f ms  max %7.1f ms  %s" % (sys.argv[1], d["rpcs_per_s"], d["jobs_per_s"], d["p50_ms"], d["p99_ms"], d["max_ms"], sys.argv[3]))' "$@"
}
for r in $(seq "$rounds"); do
  idle=$(run "idle$r")
  show "none" "$idle" ""
  make_ended
  ( sleep 4; t0=$(date +%s%N); "$bin/locus" db purge "$proj" --days 1 >"$work/cli$r.txt" 2>&1 || true
    echo $(( ($(date +%s%N) - t0) / 1000000 )) >"$work/cli$r.ms" ) &
  cli=$(run "cli$r")
  wait
  cli_jobs=$(sed -n 's/^purged \([0-9]*\) jobs.*/\1/p' "$work/cli$r.txt")
  cli_ms=$(cat "$work/cli$r.ms")
  show "locus db purge" "$cli" "[$(head -n 1 "$work/cli$r.txt") in $cli_ms ms]"
  make_ended
  before=$(left)
  sed -i 's|</config>|  <purge_after_days>0.0005</purge_after_days>\n</config>|' "$proj/config.xml"
  own=$(run "own$r")
  sed -i '/purge_after_days/d' "$proj/config.xml"
  own_jobs=$((before - $(left)))
  show "locusd's purge" "$own" "[$own_jobs of $before ended jobs purged during the run]"
done
echo "archive: $(du -cb "$proj"/archive/* | tail -n 1 | cut -f1) bytes for $(zcat "$proj"/archive/jobs-* | wc -l) jobs"
if [ "$json" -eq 1 ]; then
  python3 -c 'import json,sys
i, c, o = (json.loads(a) for a in sys.argv[1:4])
print(json.dumps({"idle_rpcs_per_s": i["rpcs_per_s"], "idle_p99_ms": i["p99_ms"],
                  "cli_rpcs_per_s": c["rpcs_per_s"], "cli_p99_ms": c["p99_ms"],
                  "cli_purged_jobs_per_s": round(int(sys.argv[4]) * 1000 / max(int(sys.argv[5]), 1)),
                  "own_rpcs_per_s": o["rpcs_per_s"], "own_p99_ms": o["p99_ms"], "own_purged_jobs": int(sys.argv[6])}))' \
    "$idle" "$cli" "$own" "${cli_jobs:-0}" "$cli_ms" "$own_jobs"
fi
