#!/usr/bin/env bash
# soak: locusd under bench-rpc load for a long time, purging as it goes,
# with a job generator keeping the project full. What should stay flat
# after the first minutes does: locusd's RSS, the store's size (locus.db
# and its WAL), the rows in the store, the throughput.
#   bench/soak.sh [BUILD_DIR] [--json] [--minutes M] [--settle S] [--interval S]
#                 [--purge-days D] [--batch N] [--hosts H] [--conns C] [--threads T]
#                 [--max-send J] [--rate R] [--keep]
# BUILD_DIR defaults to build (use a release build); --json adds the
# figures as one JSON object on the last line.
#
# The project is made as bench-rpc makes it (a short `bench-rpc --upload
# --keep` run: one app, 100 users, a batch of N jobs with one output each),
# with <purge_after_days>D</purge_after_days> (default 0.0007, 60 s: locusd
# then purges every 6 s, so purging runs all along; 0 turns it off). One
# bench-rpc run of M minutes (default 30) loads it (--project, --upload:
# every job's output is uploaded before its report). The default load,
# 200 hosts on 4 connections, one job a reply, 100 RPCs a second (bench-rpc
# --rate: a fixed load, so that the throughput is expected flat too), is
# one the whole pipeline sustains on the 2-core VM: unpaced, uploads and
# reports can outrun the assimilator (one thread, three fsyncs a job), its
# backlog grows and nothing stays flat (docs/benchmarks.md).
# Meanwhile:
# - a generator adds a batch of N jobs (default 50,000) whenever fewer than
#   N jobs are active (not yet validated);
# - another loop deletes results/BATCH of each batch whose jobs all ended
#   (an operator taking the results away: otherwise results/ grows by a
#   folder per job);
# - every S seconds (default 30) a sample: locusd's VmRSS, the store's size,
#   the archive's, the job and instance rows, the jobs active and those
#   validated waiting for the assimilator, the jobs ended so far (those in
#   the store and those purged, as the batches count them), locusd's CPU
#   and open files.
# It prints the samples, then the least-squares slopes of RSS, store size,
# rows and throughput over the samples after the first --settle minutes
# (default 5), and bench-rpc's own figures. It exits 1 when bench-rpc
# failed or saw an error, or when a reply had no job (the work ran dry).
set -euo pipefail

build=build json=0 minutes=30 settle=5 interval=30 purge_days=0.0007 batch=50000
hosts=200 conns=4 threads=1 max_send=1 rate=100 keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --minutes) minutes=$2; shift ;;
    --settle) settle=$2; shift ;;
    --interval) interval=$2; shift ;;
    --purge-days) purge_days=$2; shift ;;
    --batch) batch=$2; shift ;;
    --hosts) hosts=$2; shift ;;
    --conns) conns=$2; shift ;;
    --threads) threads=$2; shift ;;
    --max-send) max_send=$2; shift ;;
    --rate) rate=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '6,8p' "$0" | sed 's/^# *//'; exit 0 ;;
    -*) echo "soak: unknown option $1" >&2; exit 2 ;;
    *) build=$1 ;;
  esac
  shift
done
locus=$build/bin/locus rpc=$build/bin/bench-rpc
for p in "$locus" "$rpc" "$build/bin/locusd"; do
  [ -x "$p" ] || { echo "soak: $p not found: build it first (make)" >&2; exit 1; }
done
for c in sqlite3 python3; do
  command -v $c >/dev/null || { echo "soak: needs $c (scripts/deps.sh installs it)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/locus-bench-soak-XXXXXX)
rpcwork= rpcpid= genpid= colpid= tailpid= pid=
cleanup() {
  touch "$work/stop"
  for p in $genpid $colpid $tailpid; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  [ -n "$rpcpid" ] && kill "$rpcpid" 2>/dev/null && wait "$rpcpid" 2>/dev/null
  if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then   # bench-rpc stopped before it stopped locusd
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ "$keep" -eq 1 ]; then
    echo "soak: kept $work and $rpcwork (project $rpcwork/proj)" >&2
  else
    for d in $(sed -n 's/^bench-rpc: kept \(\/tmp\/locus-bench-rpc-[A-Za-z0-9]*\) .*/\1/p' "$work/rpc.out" 2>/dev/null); do
      rm -rf "$d"
    done
    [ -n "$rpcwork" ] && rm -rf "$rpcwork"
    rm -rf "$work"
  fi
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The project, as bench-rpc makes it: a short run that keeps it.
echo "soak: making the project (bench-rpc --keep, a batch of $batch jobs)" >&2
"$rpc" --hosts 1 --threads 1 --conns 1 --upload --jobs "$batch" --seconds 0.5 --warmup 0 --keep \
  >"$work/setup.out" 2>&1 || { cat "$work/setup.out" >&2; exit 1; }
rpcwork=$(sed -n 's/^bench-rpc: kept \([^ ]*\) .*/\1/p' "$work/setup.out")
proj=$rpcwork/proj
[ -f "$proj/config.xml" ] || { echo "soak: no project from bench-rpc:" >&2; cat "$work/setup.out" >&2; exit 1; }
sed -i "s|</config>|  <purge_after_days>$purge_days</purge_after_days>\n</config>|" "$proj/config.xml"
echo '{"cmdline": "--seed {n}"}' >"$work/template.json"

sq() { sqlite3 -readonly -cmd '.timeout 10000' "$proj/locus.db" "$@"; }

# The generator: a batch of N jobs whenever fewer than N are active.
generate() {
  local k=0 active b
  while [ ! -e "$work/stop" ]; do
    active=$(sq "SELECT count(*) FROM jobs WHERE state = 0") || active=
    if [ -n "$active" ] && [ "$active" -lt "$batch" ]; then
      k=$((k + 1))
      if "$locus" batch create "$proj" --app bench --name "soak$k" --count "$batch" \
          --input-template "$work/template.json" --quorum 1 --output out:65536 >/dev/null 2>>"$work/gen.err"; then
        echo "$(date +%s) $active soak$k" >>"$work/batches.log"
      else
        echo "$(date +%s) $active soak$k FAILED" >>"$work/batches.log"
      fi
    fi
    sleep 1
  done
}
# The results of the batches done, in a loop of their own: removing tens of
# thousands of folders takes seconds the generator cannot wait.
collect() {
  local b
  while [ ! -e "$work/stop" ]; do
    for b in $(sq "SELECT name FROM batches WHERE state = 1" 2>/dev/null); do
      [ -d "$proj/results/$b" ] && rm -rf "$proj/results/$b"
    done
    sleep 10
  done
}
generate &
genpid=$!
collect &
colpid=$!

seconds=$((minutes * 60)) warmup=5
echo "soak: $minutes min of bench-rpc --hosts $hosts --conns $conns --threads $threads --max-send $max_send --rate $rate --upload;" \
  "purge_after_days $purge_days, batches of $batch" >&2
"$rpc" --project "$proj" --hosts "$hosts" --conns "$conns" --threads "$threads" --max-send "$max_send" --rate "$rate" --upload \
  --seconds "$seconds" --warmup "$warmup" --keep --json >"$work/rpc.out" 2>&1 &
rpcpid=$!

# locusd, as bench-rpc started it
for _ in $(seq 100); do
  pid=$(pgrep -f "locusd $proj --log" | head -n 1 || true)
  [ -n "$pid" ] && break
  sleep 0.1
done
[ -n "$pid" ] || { echo "soak: locusd did not start:" >&2; cat "$work/rpc.out" >&2; exit 1; }
hz=$(getconf CLK_TCK)
# its log, copied as it grows (bench-rpc's folder goes when it ends)
runlog=$(tr '\0' '\n' <"/proc/$pid/cmdline" | sed -n '/^--log$/{n;p}')
tail -n +1 -F "$runlog" >"$work/locusd.log" 2>/dev/null &
tailpid=$!
t0=$(date +%s.%N)

sample() {
  local t rss store arch cpu fds rows
  t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || return 1
  cpu=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null) || return 1
  fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
  store=$(stat -c %s "$proj/locus.db" "$proj/locus.db-wal" 2>/dev/null | awk '{ n += $1 } END { print n + 0 }')
  arch=$(stat -c %s "$proj"/archive/* 2>/dev/null | awk '{ n += $1 } END { print n + 0 }')
  rows=$(sq "SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM instances),
      (SELECT count(*) FROM jobs WHERE state = 0), (SELECT count(*) FROM jobs WHERE state = 1),
      (SELECT count(*) FROM jobs WHERE state IN (2, 3, 4))
        + (SELECT coalesce(sum(purged_done + purged_failed + purged_cancelled), 0) FROM batches),
      (SELECT count(*) FROM batches)" | tr '|' ' ') || return 1
  echo "$t $rss $store $arch $rows $cpu $fds" >>"$work/samples"
}

k=0
touch "$work/samples"
end=$(awk -v w="$warmup" -v s="$seconds" 'BEGIN { print w + s }')
while kill -0 "$rpcpid" 2>/dev/null; do
  at=$(awk -v k="$k" -v i="$interval" 'BEGIN { print k * i }')
  awk -v a="$at" -v e="$end" 'BEGIN { exit !(a > e) }' && break
  now=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  wait_s=$(awk -v a="$at" -v n="$now" 'BEGIN { d = a - n; print (d > 0 ? d : 0) }')
  sleep "$wait_s"
  kill -0 "$rpcpid" 2>/dev/null || break
  sample || break
  k=$((k + 1))
done
rc=0
wait "$rpcpid" || rc=$?
echo "soak: bench-rpc ended ($(date +%T))" >&2
rpcpid=
touch "$work/stop"
wait "$genpid" "$colpid" 2>/dev/null || true
genpid= colpid=
sleep 1
kill "$tailpid" 2>/dev/null; wait "$tailpid" 2>/dev/null || true
tailpid=

log_errors=$(grep -c '\[error\]' "$work/locusd.log" || true)
purge_lines=$(grep -c 'purged ' "$work/locusd.log" || true)

touch "$work/batches.log"
python3 - "$work/samples" "$work/rpc.out" "$work/batches.log" "$settle" "$hz" "$json" "$rc" \
  "${log_errors:-0}" "${purge_lines:-0}" "$minutes" "$purge_days" "$batch" <<'EOF'
import json, sys
samples_path, rpc_path, batches_path = sys.argv[1:4]
settle, hz = float(sys.argv[4]), float(sys.argv[5])
want_json, rc, log_errors, purge_lines = sys.argv[6] == "1", int(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9])
minutes, purge_days, batch = float(sys.argv[10]), float(sys.argv[11]), int(sys.argv[12])
S = []
for line in open(samples_path):
    f = line.split()
    if len(f) < 12:
        continue
    t, rss, store, arch, jobs, inst, active, valid, ended, nbatch, cpu, fds = map(float, f[:12])
    S.append(dict(t=t, rss=rss / 1024, store=store / 1e6, arch=arch / 1e6, jobs=jobs, inst=inst,
                  active=active, valid=valid, ended=ended, batches=nbatch, cpu=cpu / hz, fds=fds,
                  ended_rows=jobs - active - valid))
for a, b in zip(S, S[1:]):
    dt = b["t"] - a["t"]
    b["rate"] = (b["ended"] - a["ended"]) / dt
    b["cores"] = (b["cpu"] - a["cpu"]) / dt
rpc_lines = open(rpc_path).read().splitlines()
try:
    rpc = json.loads(rpc_lines[-1])
except (ValueError, IndexError):
    rpc = {}
gen = [l.split() for l in open(batches_path) if l.strip()]
gen_failed = sum(1 for g in gen if len(g) > 3)
min_active = min((int(g[1]) for g in gen), default=None)

print("%6s %7s %8s %8s %8s %9s %7s %8s %9s %7s %5s %4s" % ("min", "rss_MB", "store_MB", "arch_MB", "job_rows",
      "inst_rows", "active", "to_assim", "ended", "jobs/s", "cores", "fds"))
for s in S:
    print("%6.1f %7.1f %8.1f %8.1f %8d %9d %7d %8d %9d %7s %5s %4d" % (
        s["t"] / 60, s["rss"], s["store"], s["arch"], s["jobs"], s["inst"], s["active"], s["valid"], s["ended"],
        "%.0f" % s["rate"] if "rate" in s else "-", "%.2f" % s["cores"] if "cores" in s else "-", s["fds"]))

def slope(key):
    pts = [(s["t"] / 60, s[key]) for s in S if s["t"] >= settle * 60 and key in s]
    if len(pts) < 3:
        return None
    n = len(pts)
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else None

def mean(key):
    v = [s[key] for s in S if s["t"] >= settle * 60 and key in s]
    return sum(v) / len(v) if v else None

sl = {k: slope(k) for k in ("rss", "store", "jobs", "inst", "valid", "ended_rows", "rate", "fds")}
fmt = lambda v, f="%.3f": "-" if v is None else f % v
after = [s for s in S if s["t"] >= settle * 60]
print("slopes after the first %g min (%d samples), least squares:" % (settle, len(after)))
print("  rss        %s MB/min   (mean %s MB)" % (fmt(sl["rss"]), fmt(mean("rss"), "%.1f")))
print("  store      %s MB/min   (mean %s MB)" % (fmt(sl["store"]), fmt(mean("store"), "%.1f")))
print("  job rows   %s /min     (mean %s)" % (fmt(sl["jobs"], "%.0f"), fmt(mean("jobs"), "%.0f")))
print("  inst rows  %s /min     (mean %s)" % (fmt(sl["inst"], "%.0f"), fmt(mean("inst"), "%.0f")))
print("  ended rows %s /min     (jobs ended still in the store, what purging bounds; mean %s)" % (
    fmt(sl["ended_rows"], "%.0f"), fmt(mean("ended_rows"), "%.0f")))
print("  to_assim   %s /min     (validated jobs waiting for the assimilator; mean %s)" % (
    fmt(sl["valid"], "%.0f"), fmt(mean("valid"), "%.0f")))
print("  jobs/s     %s /min     (mean %s jobs/s)" % (fmt(sl["rate"], "%.2f"), fmt(mean("rate"), "%.0f")))
print("  open fds   %s /min" % fmt(sl["fds"], "%.2f"))
for l in rpc_lines:
    if not l.startswith("{") and not l.startswith("bench-rpc: kept"):
        print(l)
errors = rpc.get("errors")
no_work = rpc.get("rpcs_no_work")
print("bench-rpc: exit %d, %s errors, %s replies without a job; generator: %d batches of %d jobs added "
      "(%d failed), fewest active jobs seen %s; locusd's log: %d error lines, %d purges that took rows"
      % (rc, errors, no_work, len(gen), batch, gen_failed, min_active, log_errors, purge_lines))
ok = rc == 0 and errors == 0 and no_work == 0 and gen_failed == 0 and len(S) >= 2
if want_json:
    out = {"soak_minutes": minutes, "purge_after_days": purge_days, "samples": len(S), "settle_min": settle,
           "jobs_per_s": mean("rate"), "rss_mb": S[-1]["rss"] if S else None,
           "rss_mb_first": S[0]["rss"] if S else None, "rss_mb_settled": after[0]["rss"] if after else None,
           "rss_slope_mb_per_min": sl["rss"],
           "store_mb_first": S[0]["store"] if S else None, "store_mb_settled": after[0]["store"] if after else None,
           "store_mb_last": S[-1]["store"] if S else None, "store_slope_mb_per_min": sl["store"],
           "archive_mb_last": S[-1]["arch"] if S else None,
           "job_rows_last": S[-1]["jobs"] if S else None, "job_rows_slope_per_min": sl["jobs"],
           "instance_rows_last": S[-1]["inst"] if S else None, "instance_rows_slope_per_min": sl["inst"],
           "to_assimilate_last": S[-1]["valid"] if S else None, "to_assimilate_slope_per_min": sl["valid"],
           "ended_rows_last": S[-1]["ended_rows"] if S else None, "ended_rows_slope_per_min": sl["ended_rows"],
           "jobs_per_s_slope_per_min": sl["rate"], "fds_slope_per_min": sl["fds"],
           "jobs_ended": S[-1]["ended"] - S[0]["ended"] if S else None,
           "batches_added": len(gen), "min_active_jobs": min_active, "log_errors": log_errors,
           "rpc_errors": errors, "rpcs_no_work": no_work, "rpcs_per_s": rpc.get("rpcs_per_s"),
           "p50_ms": rpc.get("p50_ms"), "p99_ms": rpc.get("p99_ms"), "rss_mb_peak": rpc.get("rss_mb"),
           "server_cpu_cores": rpc.get("server_cpu_cores"), "ok": ok}
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()},
                     separators=(",", ":")))
sys.exit(0 if ok else 1)
EOF
