#!/usr/bin/env bash
# site: how fast the web site's JSON and pages answer with a big project:
# 100,000 users, 300,000 hosts, 1,000 teams and 1,000,000 jobs done over
# the last 14 days (made with `locus batch create`, then SQL through
# sqlite3 for the rest: 5 % of them failed, 5 % still out, an instance
# each, the hosts' records of results for the science pages). Runs locusd
# on it, times each page's JSON calls (p50 and p99 of N sequential
# requests with curl, M for the science pages' (each reads the batch); the
# status route's first, uncached answer apart), then headless Chromium's
# load of each page (from navigation to the page's script done, median of 5).
#   bench/site.sh [BUILD_DIR] [--requests N] [--science-requests M] [--keep] [--json]
# BUILD_DIR defaults to build (use a release build); --json adds the
# figures (ms) as one JSON object on the last line. docs/benchmarks.md.
set -euo pipefail

build=build n=200 nsci=10 keep=0 json=0
while [ $# -gt 0 ]; do
  case $1 in
    --requests) n=$2; shift ;;
    --science-requests) nsci=$2; shift ;;
    --keep) keep=1 ;;
    --json) json=1 ;;
    *) build=$1 ;;
  esac
  shift
done
here=$(cd "$(dirname "$0")/.." && pwd)
locus=$build/bin/locus locusd=$build/bin/locusd
[ -x "$locusd" ] || { echo "site: $locusd not found: build it first" >&2; exit 1; }
. "$here/scripts/lib/boinc_client.sh"   # free_port
. "$here/tests/integration/lib/codes.sh"

work=$(mktemp -d /tmp/locus-bench-site-XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [ "$keep" = 1 ] && echo "site: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
port=$(free_port)
url=http://127.0.0.1:$port/bench/
proj=$work/proj
t0=$(date +%s.%N)
"$locus" init "$proj" --url "$url" --name "Bench site" >/dev/null
printf '#!/bin/sh\nexit 0\n' >"$work/app.sh"
"$locus" app add "$proj" bench --platform x86_64-pc-linux-gnu --exe "$work/app.sh" --version 1 >/dev/null
echo '{"cmdline": "--seed {n}"}' >"$work/template.json"
"$locus" batch create "$proj" --app bench --count 1000000 --input-template "$work/template.json" --name big \
    --no-output >/dev/null
me=$("$locus" user create "$proj" benchme)
now=$(date +%s)
sqlite3 "$proj/locus.db" >/dev/null <<SQL
PRAGMA journal_mode=WAL;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
INSERT INTO users(name, authenticator, create_time, total_credit, expavg_credit, expavg_time, role, key_gen)
SELECT 'volunteer' || i, lower(hex(randomblob(32))), $now - i * 60, abs(random() % 10000000) / 10.0,
       abs(random() % 100000) / 10.0, $now, $USER_VOLUNTEER, 0 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
INSERT INTO teams(name, founder_id, create_time, total_credit, expavg_credit, expavg_time)
SELECT 'Team ' || i, i + 1, $now - i * 3600, abs(random() % 100000000) / 10.0, abs(random() % 1000000) / 10.0, $now
FROM n;
UPDATE users SET team_id = (id % 1000) + 1 WHERE id % 5 <> 0;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
INSERT INTO hosts(user_id, create_time, rpc_time, platform, os_name, p_ncpus, p_fpops, total_credit, expavg_credit,
                  expavg_time)
SELECT (i % 100000) + 1, $now - 90 * 86400, $now - abs(random() % (3 * 86400)), 'x86_64-pc-linux-gnu', 'Linux',
       1 + i % 16, 3e9, abs(random() % 1000000) / 10.0, abs(random() % 10000) / 10.0, $now FROM n;
UPDATE jobs SET state = $JOB_DONE, done_time = $now - abs(random() % (14 * 86400));
COMMIT;
SQL
# the science pages' data: the batch began 15 days ago; 5 % of its jobs failed,
# 5 % are still out; each job has an instance on a host (the failed ones
# with a stderr), each host a record of its results for the app's version
sqlite3 "$proj/locus.db" >/dev/null <<SQL
BEGIN;
UPDATE batches SET create_time = $now - 15 * 86400 WHERE name = 'big';
UPDATE jobs SET state = $JOB_FAILED WHERE id % 20 = 0;
UPDATE jobs SET state = $JOB_ACTIVE, done_time = 0 WHERE id % 20 = 1;
INSERT INTO instances(job_id, seq, host_id, user_id, app_version_id, state, outcome, validate_state, sent_time,
                      deadline, received_time, exit_status, stderr)
SELECT id, 0, 1 + id % 300000, 1 + (1 + id % 300000) % 100000, 1,
       CASE state WHEN $JOB_ACTIVE THEN $INST_IN_PROGRESS ELSE $INST_OVER END,
       CASE state WHEN $JOB_DONE THEN $OUTCOME_SUCCESS WHEN $JOB_FAILED THEN $OUTCOME_CLIENT_ERROR ELSE $OUTCOME_INIT END,
       CASE state WHEN $JOB_DONE THEN $VALIDATE_VALID ELSE $VALIDATE_INIT END,
       CASE state WHEN $JOB_ACTIVE THEN $now - 3600 ELSE done_time - 3600 END, $now + 86400, done_time,
       CASE state WHEN $JOB_FAILED THEN 3 ELSE 0 END,
       CASE state WHEN $JOB_FAILED THEN '<stderr_txt>' || char(10) || 'bench: cannot open input' || char(10)
                                        || '</stderr_txt>' END FROM jobs;
INSERT INTO host_app_versions(host_id, app_version_id, daily_max, nvalid, nerror, ninvalid)
SELECT id, 1, 100, 50 + id % 50, id % 7, id % 3 FROM hosts;
COMMIT;
SQL
"$locus" user role "$proj" benchme admin
skey=$("$locus" user key "$proj" benchme)
made=$(echo "$(date +%s.%N) - $t0" | bc)
me_id=$(sqlite3 "$proj/locus.db" "SELECT id FROM users WHERE name='benchme'")
counts=$(sqlite3 "$proj/locus.db" "SELECT (SELECT count(*) FROM users) || ' users, ' || (SELECT count(*) FROM hosts)
  || ' hosts, ' || (SELECT count(*) FROM teams) || ' teams, ' || (SELECT count(*) FROM jobs) || ' jobs'")
echo "store: $counts, made in ${made%.*} s ($(du -sh "$proj/locus.db" | cut -f1))"

sed -i "s|</config>|  <web_dir>$here/web</web_dir>\n</config>|" "$proj/config.xml"
t0=$(date +%s.%N)
"$locusd" "$proj" >"$work/locusd.log" 2>&1 &
pid=$!
for i in $(seq 600); do curl -sf -o /dev/null "$url" && break; sleep 0.1; done
echo "locusd: serving after $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-4) s"
o=http://127.0.0.1:$port/api/v1

figures=$work/figures   # "name": value lines, for --json
# time PATH [CURL ARGS]: p50 and p99 of n GETs, in ms
time_route() {
  local path=$1
  shift
  for i in $(seq "$n"); do curl -s -o /dev/null -w '%{time_total}\n' "$@" "$o/$path"; done | sort -n |
    awk -v path="$path" -v figures="$figures" '{ t[NR] = $1 * 1000 } END {
      p50 = t[int(NR * 0.5 + 0.5)]; p99 = t[int(NR * 0.99 + 0.5)]
      printf "  %-34s p50 %6.2f ms  p99 %6.2f ms\n", path, p50, p99
      printf "\"%s_p50_ms\": %.2f,\n\"%s_p99_ms\": %.2f,\n", path, p50, path, p99 >> figures }'
}
first=$(curl -s -o /dev/null -w '%{time_total}' "$o/status")
echo "JSON ($n requests each, one at a time):"
printf "  %-34s first (computed) %.1f ms\n" status "$(echo "$first * 1000" | bc)"
printf '"status_first_ms": %.1f,\n' "$(echo "$first * 1000" | bc)" >>"$figures"
for p in site status news teams/1 teams \
         leaderboard/users/total/1 leaderboard/users/recent/1 leaderboard/users/total/2000 \
         leaderboard/hosts/total/1 leaderboard/hosts/recent/6000 leaderboard/teams/total/1 leaderboard/teams/recent/20; do
  time_route "$p"
done
time_route account -H "Authorization: Bearer $me"
time_route session
# the science pages' JSON: fewer requests, as the batch's read its million jobs
for p in batches batches/big batches/big/progress app_versions app_versions/hours/720 hosts hosts/1000; do
  n=$nsci time_route "$p"
done
# the batch page's other calls: its failures and a job looked up by number (the owner's)
for p in batches/big/failures batches/big/jobs/500000; do
  n=$nsci time_route "$p" -H "Authorization: Bearer $skey"
done

echo "pages in Chromium (navigation to the page's script done; median of 5):"
python3 - "$here/tests/integration/lib" "$url" "$work" "$figures" <<'PY'
import statistics, sys
sys.path.insert(0, sys.argv[1])
from browser import Browser
url = sys.argv[2]
pages = ['', 'leaderboards.html', 'leaderboards.html?kind=hosts&order=recent&page=6000', 'leaderboards.html?kind=teams',
         'teams.html', 'team.html?id=1', 'news.html', 'signup.html', 'login.html',
         'batches.html', 'batch.html?b=big', 'app_versions.html', 'hosts.html']
with Browser(sys.argv[3] + '/shots') as b:
    for p in pages:
        t = []
        for _ in range(5):
            b.get(url + p)
            b.wait_ready()
            err = b.text('.error')
            if err: raise SystemExit('%s: %s' % (p, err))
            t.append(b.script('return locus.readyAt;'))
        print('  %-52s %6.0f ms' % (p or '(home)', statistics.median(t)))
        with open(sys.argv[4], 'a') as f:
            f.write('"page %s_ms": %.0f,\n' % (p or 'home', statistics.median(t)))
PY
if [ "$json" = 1 ]; then
  echo "{$(tr -d '\n' <"$figures" | sed 's/,$//')}"
fi
