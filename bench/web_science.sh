#!/usr/bin/env bash
# web_science: how fast the scientists' and operators' pages answer on a
# big store (docs/web.md): 100,000 users, 300,000 hosts with their host
# app version records, 10 batches of 1,000,000 jobs in all (one of
# 500,000), each job with an instance (80 % done over 30 days, 5 % failed
# with a stderr, the rest in progress), made with SQL. locusd serves the
# store; each JSON route the pages read is timed (best and worst of 5
# runs, curl), then Chromium loads each page and the time to its
# data-ready mark is printed. With --indexes, all of it again after adding
# the index that a batch's series would use (jobs_batch_ended below, not
# in the schema: what it saves against what it costs each ended job).
#   bench/web_science.sh [BUILD_DIR] [--keep] [--indexes]   (BUILD_DIR: a release build, default build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/integration/lib/codes.sh"   # $JOB_DONE...: the store's codes by name
build=build keep=0 indexes=0
for a in "$@"; do case $a in --keep) keep=1 ;; --indexes) indexes=1 ;; *) build=$a ;; esac; done
bin=$build/bin
for b in locus locusd; do
  [ -x "$bin/$b" ] || { echo "web_science: $bin/$b not found: build it first" >&2; exit 1; }
done
work=$(mktemp -d /tmp/locus-bench-science-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; [ $keep = 1 ] || rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
proj=$work/proj
"$bin/locus" init "$proj" --url "http://127.0.0.1:$port/proj/" --name "Bench" >/dev/null
"$bin/locus" app add "$proj" worker --platform x86_64-pc-linux-gnu --exe "$bin/locus" --version 100 >/dev/null
echo '{"cmdline": "--seed {n}"}' >"$work/t.json"
"$bin/locus" user create "$proj" alice >/dev/null
"$bin/locus" user role "$proj" alice admin
key=$("$bin/locus" user key "$proj" alice)
for k in $(seq 0 9); do
  "$bin/locus" batch create "$proj" --app worker --count 1 --input-template "$work/t.json" --name "b$k" --user alice \
      --no-output >/dev/null
done
now=$(date +%s)
t0=$(date +%s%N)
sqlite3 -batch "$proj/locus.db" <<SQL
PRAGMA journal_mode=WAL;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < 100001)
  INSERT INTO users(id, name, authenticator, create_time) SELECT i, 'u' || i, 'k' || i, $now - 86400 * 60 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
  INSERT INTO hosts(id, user_id, create_time, rpc_time, domain_name, platform, os_name, p_ncpus, p_fpops, total_credit)
  SELECT i, 2 + i % 100000, $now - 86400 * 60, $now - i % 86400, 'host' || i, 'x86_64-pc-linux-gnu', 'Linux', 1 + i % 16,
         3e9, i % 1000 FROM n;
INSERT INTO host_app_versions(host_id, app_version_id, daily_max, nvalid, nerror, ninvalid)
  SELECT id, 1, 100, 50 + id % 50, id % 7, id % 3 FROM hosts;
UPDATE batches SET create_time = $now - 86400 * 30 - id * 3600;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
  INSERT INTO jobs(batch_id, name, cmdline, flops_est, flops_bound, mem_bound, disk_bound, target_nresults, state, done_time)
  SELECT CASE WHEN i <= 500000 THEN 1 ELSE 2 + i % 9 END, 'j' || i, '--seed ' || i, 1e12, 1e13, 1e8, 1e8, 1,
         CASE WHEN i % 20 = 0 THEN $JOB_FAILED WHEN i % 20 < 17 THEN $JOB_DONE ELSE $JOB_ACTIVE END,
         CASE WHEN i % 20 < 17 THEN $now - 86400 * 30 + (i * 2593) % (86400 * 30) ELSE 0 END FROM n;
INSERT INTO instances(job_id, seq, host_id, user_id, app_version_id, state, outcome, validate_state, sent_time,
                      deadline, received_time, exit_status, stderr)
  SELECT j.id, 0, 1 + j.id % 300000, 2 + (1 + j.id % 300000) % 100000, 1,
         CASE WHEN j.state = $JOB_ACTIVE THEN $INST_IN_PROGRESS ELSE $INST_OVER END,
         CASE j.state WHEN $JOB_DONE THEN $OUTCOME_SUCCESS WHEN $JOB_FAILED THEN $OUTCOME_CLIENT_ERROR ELSE $OUTCOME_INIT END,
         CASE WHEN j.state = $JOB_DONE THEN $VALIDATE_VALID ELSE $VALIDATE_INIT END,
         max(j.done_time - 3600, $now - 86400 * 31), $now + 86400, j.done_time,
         CASE WHEN j.state = $JOB_FAILED THEN 3 ELSE 0 END,
         CASE WHEN j.state = $JOB_FAILED THEN '<stderr_txt>' || char(10) || 'worker: cannot open input' || char(10)
              || '</stderr_txt>' END
  FROM jobs j WHERE j.name LIKE 'j%';
UPDATE jobs SET canonical_id = (SELECT id FROM instances i WHERE i.job_id = jobs.id) WHERE state = $JOB_DONE;
COMMIT;
ANALYZE;
SQL
echo "store made in $(( ($(date +%s%N) - t0) / 1000000 )) ms: $(sqlite3 "$proj/locus.db" "SELECT (SELECT count(*) FROM users) || ' users, ' || (SELECT count(*) FROM hosts) || ' hosts, ' || (SELECT count(*) FROM jobs) || ' jobs, ' || (SELECT count(*) FROM instances) || ' instances'"), $(du -m "$proj/locus.db" | cut -f1) MB"
[ $keep = 1 ] && echo "store kept in $proj"
sed -i "s|</config>|  <web_dir>$here/../web</web_dir>\n</config>|" "$proj/config.xml"
api=http://127.0.0.1:$port/api/v1
# time PATH [KEY]: the best and worst of 5 answers, in ms, and the answer's size
timed() {
  local auth=() ms=() s code
  [ -n "${2:-}" ] && auth=(-H "Authorization: Bearer $2")
  for r in 1 2 3 4 5; do
    s=$(curl -s -o "$work/out" -w '%{http_code} %{time_total}' "${auth[@]}" "$api/$1")
    code=${s% *}
    ms+=("$(python3 -c "print(round(${s#* } * 1000, 1))")")
  done
  printf '%-32s HTTP %s  best %7s ms  worst %7s ms  %7d bytes\n' "$1" "$code" \
    "$(printf '%s\n' "${ms[@]}" | sort -n | head -n 1)" "$(printf '%s\n' "${ms[@]}" | sort -n | tail -n 1)" \
    "$(stat -c %s "$work/out")"
}
measure() {
"$bin/locusd" "$proj" >>"$work/locusd.log" 2>&1 &
pid=$!
for i in $(seq 600); do curl -sf "http://127.0.0.1:$port/proj/" >/dev/null && break; sleep 0.2; done
timed batches
timed batches/b0
timed batches/b0/progress
timed batches/b5/progress
timed batches/b0/failures "$key"
timed batches/b0/jobs/j20 "$key"
timed app_versions
timed app_versions/hours/720
timed hosts
timed hosts "$key"
timed hosts/12345
timed campaigns "$key"
python3 - "$here/../tests/integration/lib" "http://127.0.0.1:$port/proj/" "$work/art" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
from browser import Browser
url, art = sys.argv[2], sys.argv[3]
with Browser(art, timeout=120) as b:
    for page in ('batches.html', 'batch.html?b=b0', 'batch.html?b=b0&job=j20', 'app_versions.html', 'hosts.html',
                 'campaigns.html'):
        best = None
        for _ in range(3):
            t = time.time()
            b.get(url + page)
            b.wait_ready()
            ms = (time.time() - t) * 1000
            best = ms if best is None else min(best, ms)
        print('page %-28s ready in %7.1f ms (best of 3, Chromium, no login)' % (page, best))
PY
kill "$pid"
wait "$pid" || true
pid=
}
measure
if [ $indexes = 1 ]; then
  t0=$(date +%s%N)
  sqlite3 "$proj/locus.db" "CREATE INDEX jobs_batch_ended ON jobs(batch_id, done_time, state)
                            WHERE state IN ($JOB_DONE, $JOB_FAILED)"
  echo "---- with jobs_batch_ended (made in $(( ($(date +%s%N) - t0) / 1000000 )) ms) ----"
  measure
fi
