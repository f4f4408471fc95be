#!/usr/bin/env bash
# durable_files: an fsync audit of what locusd writes before its store says
# it is there. locusd runs under strace while a real BOINC client computes
# a small batch: every output it takes in (an upload, linked from NAME.part
# to NAME) and every output it keeps (copied to results/, renamed from
# NAME.tmp) must have had its own bytes fsynced before the link or rename,
# and the folder that gained the name fsynced after it; every folder made on
# the way is synced into its parent. On 1a3bc37 none was: after a power
# loss the store could say "success" for an output whose bytes were lost.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
command -v strace >/dev/null || { echo "$TEST_NAME: strace is missing; run scripts/deps.sh" >&2; exit 1; }

proj=$TMP/proj
make_project "$proj" alice
echo '{"cmdline": "--iterations 1000 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 4 --input-template "$TMP/tmpl.json" --name d1 >/dev/null \
    || fail "batch d1"

# locusd under strace: the wrapper is what start_locusd runs
trace=$TMP/strace.log
real=$LOCUSD
LOCUSD=$TMP/locusd-traced
# one file per thread (-ff): no call is split across lines
printf '#!/bin/sh\nexec strace -f -ff -qq -o %s -e trace=openat,fsync,fdatasync,link,linkat,rename,renameat,renameat2,mkdir,mkdirat %s "$@"\n' \
    "$trace" "$real" >"$LOCUSD"
chmod +x "$LOCUSD"
start_locusd "$proj"
start_client A "$(key_of alice)"
wait_batch_done "$proj" d1 180
wait_clients_idle 60
stop_client A
# stop locusd itself (strace ends with it)
pid=$(descendants "$LOCUSD_PID" | head -n 1)
kill -TERM "${pid:-$LOCUSD_PID}"
wait "$LOCUSD_PID" || true
LOCUSD_PID=
check_sanitizers

# Every link or rename of an upload or a result: the source's bytes synced
# before (its fd fsynced in the same thread after it was opened), the
# target's folder synced after (opened O_DIRECTORY and fsynced). Prints one
# line per fault and a count of what it checked.
audit=$(awk -v proj="$proj" '
function dirof(p) { sub(/\/[^\/]*$/, "", p); return p }
{
    tid = FILENAME
    if (match($0, /^openat\(AT_FDCWD, "[^"]*"/)) {
        path = substr($0, RSTART + 18, RLENGTH - 19)
        if (match($0, /= [0-9]+$/)) {
            fd = substr($0, RSTART + 2)
            open[tid, fd] = path; isdir[tid, fd] = $0 ~ /O_DIRECTORY/
            if ($0 ~ /O_WRONLY|O_RDWR/) synced[tid, path] = 0   # written from here on
        }
    } else if ($0 ~ /^f(data)?sync\([0-9]+\)/) {
        s = $0; sub(/^f(data)?sync\(/, "", s); sub(/\).*/, "", s)
        p = open[tid, s]
        if (p != "") { synced[tid, p] = 1; if (isdir[tid, s]) dirsync[tid, p] = NR }
    } else if ($0 ~ /^(link|rename)(at2?)?\(/ && $0 ~ /= 0$/ && ($0 ~ /\/upload\// || $0 ~ /\/results\//)) {
        split($0, q, "\"")
        from = q[2]; to = q[4]
        if (from ~ /\.(part|tmp)$/) {
            checked++
            if (!synced[tid, from]) print "not synced before it was named: " from
            want[++nw] = tid SUBSEP dirof(to); wline[nw] = NR; wname[nw] = to
        }
    } else if (match($0, /^mkdir\("[^"]*"/) && $0 ~ /= 0$/ && index($0, proj)) {
        d = substr($0, RSTART + 7, RLENGTH - 8)
        made++; want[++nw] = tid SUBSEP dirof(d); wline[nw] = NR; wname[nw] = d
    }
}
END {
    for (i = 1; i <= nw; i++) if (!(want[i] in dirsync) || dirsync[want[i]] < wline[i]) print "folder not synced after: " wname[i]
    printf "checked %d names, %d folders made\n", checked, made
}' "$trace".*)
say "fsync audit: $(tail -n 1 <<<"$audit")"
faults=$(grep -v '^checked ' <<<"$audit" || true)
[ -z "$faults" ] || fail "files named before they were durable: $(head -n 5 <<<"$faults")"
n=$(sed -n 's/^checked \([0-9]*\) names.*/\1/p' <<<"$audit")
[ "${n:-0}" -ge 8 ] || fail "the audit saw $n uploads and results, expected 8 (4 jobs)"
"$LOCUS" db check "$proj" >/dev/null || fail "locus db check found problems"
say "PASS"
