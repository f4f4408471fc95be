#!/usr/bin/env bash
# guide: docs/guide.md works as written. Its tutorial "From nothing to
# results" (the ```sh tutorial blocks, in order, in one bash with -e) runs
# literally with two real BOINC clients, only the variables of its first
# block set here (the build, free ports) and HOME pointed into $TMP, so that
# ~/locus-tutorial and ~/.local are the test's. It passes only if every job
# of the tutorial's batch is done with its output in results/ on disk, both
# clients computed, and the tutorial's last step stopped locusd cleanly and
# left nothing running. Then "Writing an application": myapp.c (its
# ```c myapp.c block) is compiled by the ```sh install-app block against a
# cmake --install of this build into $TMP, and runs.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

SRC=$(cd "${LOCUS_SOURCE_DIR:-$(dirname "$0")/../..}" && pwd)
GUIDE=$SRC/docs/guide.md
export HOME=$TMP/home
T=$HOME/locus-tutorial
proj=$T/proj
# dump_logs shows the tutorial's logs on failure
LOCUSD_LOG=$T/locusd.log
_CLIENTS=(alice bob)
CLIENT_DIR[alice]=$T/alice
CLIENT_DIR[bob]=$T/bob
CLIENT_PID[alice]=
CLIENT_PID[bob]=
mkdir -p "$HOME"

# blocks INFO: the fenced blocks of the guide whose info string is INFO, in order.
blocks() {
    awk -v open="\`\`\`$1" '$0 == open { on = 1; next } on && $0 == "```" { on = 0; next } on' "$GUIDE"
}

# tutorial_pids: every process working inside $HOME (locusd, the BOINC
# clients, the apps in their slots): started in the background by the
# tutorial, they are not this script's children, but their folders are known.
tutorial_pids() {
    local p cwd
    for p in /proc/[0-9]*; do
        cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
        case $cwd in "$HOME" | "$HOME"/*) echo "${p#/proc/}" ;; esac
    done
}

stop_tutorial() {
    local p
    for p in $(tutorial_pids); do kill_tree "$p"; done
}
# before lib/boinc.sh's own cleanup, handing it the exit status as it was
# (set +e: that (exit) must not end the trap)
trap 'rc=$?; set +e; stop_tutorial; (exit $rc); _cleanup' EXIT

blocks "sh tutorial" >"$TMP/tutorial.sh"
[ -s "$TMP/tutorial.sh" ] || fail "no \`\`\`sh tutorial block in $GUIDE"
say "the tutorial: $(grep -c '' "$TMP/tutorial.sh") lines of shell from $GUIDE"
rc=0
(cd "$SRC" && BUILD=$LOCUS_BUILD_DIR PORT=$(port) ALICE_PORT=$(port) BOB_PORT=$(port) \
    timeout 240 bash -x -euo pipefail "$TMP/tutorial.sh") >"$TMP/tutorial.out" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
    tail -n 40 "$TMP/tutorial.out" >&2
    [ "$rc" -ne 124 ] || fail "the tutorial did not end within 240 s"
    fail "the tutorial stopped with status $rc"
fi
say "the tutorial ran to its end"

# every job of its batches done, its output on disk
njobs=$(sql "$proj" "SELECT count(*) FROM jobs")
[ "$njobs" -eq "$(grep -c '' "$T/jobs.jsonl")" ] || fail "$njobs jobs in the store for $(grep -c '' "$T/jobs.jsonl") lines of jobs.jsonl"
bad=$(sql "$proj" "SELECT name||' state '||state FROM jobs WHERE state<>$JOB_DONE")
[ -z "$bad" ] || fail "jobs not done: $bad"
while read -r path; do
    [ -s "$proj/results/$path/out" ] || fail "no result $proj/results/$path/out"
done < <(sql "$proj" "SELECT b.name||'/'||j.name FROM jobs j JOIN batches b ON b.id=j.batch_id")
nhosts=$(sql "$proj" "SELECT count(DISTINCT host_id) FROM instances WHERE outcome=$OUTCOME_SUCCESS")
[ "$nhosts" -eq 2 ] || fail "$nhosts hosts computed, not the two clients"
say "$njobs jobs done by 2 hosts, each job's output in results/"

# the tutorial's last step stopped everything, locusd cleanly
left=$(tutorial_pids | tr '\n' ' ')
[ -z "$left" ] || fail "still running after the tutorial's last step: pids $left"
check_sanitizers
tail -n 1 "$LOCUSD_LOG" | grep -q 'locusd: stopped$' || fail "locusd's log does not end with 'locusd: stopped'"
say "the last step stopped the clients and locusd"

# Writing an application: the install and one compile line, from a folder
# where `build` is this build, as in the clone
mkdir "$TMP/src"
ln -s "$LOCUS_BUILD_DIR" "$TMP/src/build"
blocks "c myapp.c" >"$TMP/src/myapp.c"
blocks "sh install-app" >"$TMP/install-app.sh"
[ -s "$TMP/src/myapp.c" ] && [ -s "$TMP/install-app.sh" ] || fail "no \`\`\`c myapp.c or \`\`\`sh install-app block in $GUIDE"
(cd "$TMP/src" && bash -x -euo pipefail "$TMP/install-app.sh") >"$TMP/install-app.out" 2>&1 \
    || { cat "$TMP/install-app.out" >&2; fail "the install and compile of myapp failed"; }
(cd "$TMP/src" && ./myapp) || fail "myapp exited with status $?"
grep -qx 'hello from a locus application' "$TMP/src/out" || fail "myapp wrote no 'out'"
[ -e "$TMP/src/boinc_finish_called" ] || fail "myapp did not finish through locus_finish"
say "PASS: myapp built with pkg-config against the installed liblocus_app; total $(elapsed)s"
