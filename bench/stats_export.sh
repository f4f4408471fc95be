#!/usr/bin/env bash
# stats_export: what the statistics export costs. A project whose store
# holds U users (with an e-mail, credit, a team of T), H hosts with credit
# and T teams, made with SQL; then `locus stats export` (the writer locusd's
# thread runs), timed, with its peak RSS (python3's getrusage). Prints
# the wall time, the peak RSS and the files' sizes; memory is meant not to grow with the store (streamed),
# so run it with --hosts 1000000 too.
#   bench/stats_export.sh [BUILD_DIR] [--json] [--users U] [--hosts H] [--teams T]
# BUILD_DIR defaults to build (use a release build); --json adds the figures
# as one JSON object on the last line.
set -euo pipefail

build=build json=0 users=100000 hosts=300000 teams=1000
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --users) users=$2; shift ;;
    --hosts) hosts=$2; shift ;;
    --teams) teams=$2; shift ;;
    *) build=$1 ;;
  esac
  shift
done
locus=$build/bin/locus
[ -x "$locus" ] || { echo "stats_export: $locus not found: build it first (make)" >&2; exit 1; }

work=$(mktemp -d /tmp/locus-bench-stats-XXXXXX)
trap 'rm -rf "$work"' EXIT
proj=$work/proj
"$locus" init "$proj" --url http://127.0.0.1:31000/bench/ >/dev/null
sqlite3 -batch "$proj/locus.db" "
  BEGIN;
  INSERT INTO users(id, name, authenticator, create_time, total_credit, expavg_credit, expavg_time, email)
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $users)
    SELECT i, 'volunteer ' || i, 'key' || i, 1700000000 + i, i * 1.5, i % 97, 1790000000 - i * 10,
           'v' || i || '@example.org' FROM k;
  INSERT INTO teams(id, name, founder_id, create_time, url, description, total_credit, expavg_credit, expavg_time)
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $teams)
    SELECT i, 'team ' || i, i, 1700000000, 'https://team' || i || '.example/', 'we & <our> machines', i * 100,
           i % 50, 1790000000 FROM k;
  UPDATE users SET team_id = 1 + id % $teams;
  INSERT INTO hosts(id, user_id, create_time, rpc_time, host_cpid, domain_name, platform, os_name, os_version,
                    p_ncpus, p_fpops, m_nbytes, d_free, total_credit, expavg_credit, expavg_time)
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $hosts)
    SELECT i, 1 + i % $users, 1700000000, 1790000000, printf('%032x', i), 'host' || i, 'x86_64-pc-linux-gnu',
           'Linux', '6.1.0', 1 + i % 64, 3e9 + i, 1.6e10, 1e11, i * 0.5, i % 13, 1790000000 - i FROM k;
  COMMIT;"
db_mb=$(( $(stat -c %s "$proj/locus.db") / 1048576 ))

# wall seconds and peak RSS (MB) of the command, on one line
python3 -c 'import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[2:], check=True, stdout=open(sys.argv[1], "w"))
print("%.2f %.1f" % (time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))' \
    "$work/out" "$locus" stats export "$proj" >"$work/time"
read -r wall rss_mb <"$work/time"
size() { stat -c %s "$proj/stats/$1"; }
echo "store: $users users, $hosts hosts, $teams teams ($db_mb MB)"
echo "locus stats export: $(cat "$work/out")"
echo "wall $wall s, peak RSS $rss_mb MB"
echo "files: user.gz $(size user.gz) B, host.gz $(size host.gz) B, team.gz $(size team.gz) B, tables.xml $(size tables.xml) B"
if [ "$json" = 1 ]; then
  printf '{"users": %d, "hosts": %d, "teams": %d, "export_s": %s, "rss_mb": %s, "user_gz_bytes": %d, "host_gz_bytes": %d}\n' \
    "$users" "$hosts" "$teams" "$wall" "$rss_mb" "$(size user.gz)" "$(size host.gz)"
fi
