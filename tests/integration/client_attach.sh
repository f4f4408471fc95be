#!/usr/bin/env bash
# client_attach: `locus-client attach` contacts the project at once (master
# page, then a scheduler RPC that registers the host) and, when that fails,
# exits 1 with one line saying why and attaches nothing, against real
# processes:
#  - a dead port: the URL and the system's error (connection refused);
#  - a page that is no project's (a plain page served by python3's
#    http.server): it names no scheduler;
#  - a path locusd does not serve: HTTP 404;
#  - a master page whose scheduler is a dead port: the scheduler request fails;
#  - a key locusd does not know: its message, "Invalid or missing account key";
# each time `projects` lists nothing new, and neither the state file nor the
# data folder holds anything of it. A good attach exits 0 with the host id
# locusd made. `attach --no-contact` attaches without contact (exit 0);
# `projects` then says when and why the agent's own contact failed (the bad
# key, the dead port). `--help`, `-h` and `help` print the usage (exit 0);
# an unknown command or a bad argument prints it on stderr (exit 2).
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
AGENT_DIR=$TMP/agent
AGENT_LOG=$TMP/agent.log
AGENT_OPTS=(--retry-min 1 --retry-max 4 --benchmark-seconds 0 --debug rpc)
. "$(dirname "$0")/lib/agent.sh"

# python3's http.server, stopped on any exit as the rest is
HTTPD_PID=
_attach_cleanup() {
    local rc=$?
    kill_tree "$HTTPD_PID"
    return "$rc"
}
trap '_attach_cleanup; _agent_cleanup; _cleanup' EXIT

# ---- help and usage errors: no daemon needed ----
for h in --help -h help; do
    out=$("$AGENT" "$h" 2>"$TMP/err") || fail "locus-client $h exited with $?"
    grep -q "^usage: locus-client" <<<"$out" || fail "locus-client $h printed no usage: $out"
    grep -q "attach URL KEY|- \[--share N\] \[--no-contact\]" <<<"$out" || fail "locus-client $h: attach not in the usage"
    [ ! -s "$TMP/err" ] || fail "locus-client $h wrote on stderr: $(cat "$TMP/err")"
done
usage_error() {   # usage_error MESSAGE ARG...: exit 2, MESSAGE and the usage on stderr, nothing on stdout
    local want=$1 rc=0
    shift
    "$AGENT" --dir "$AGENT_DIR" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ "$rc" -eq 2 ] || fail "locus-client $* exited with $rc, not 2"
    grep -q "^locus-client: $want" "$TMP/err" || fail "locus-client $*: unexpected message: $(head -n 1 "$TMP/err")"
    grep -q "^usage: locus-client" "$TMP/err" || fail "locus-client $*: no usage on stderr"
    [ ! -s "$TMP/out" ] || fail "locus-client $* wrote on stdout: $(cat "$TMP/out")"
}
usage_error "unknown command 'frobnicate'" frobnicate
usage_error "attach needs a project URL and an account key" attach http://127.0.0.1:1/proj/
usage_error "attach: unexpected '--bogus'" attach http://127.0.0.1:1/proj/ key --bogus
usage_error "wrong arguments to detach" detach
say "--help, -h and help print the usage; usage errors exit 2"

make_project "$proj" alice
start_locusd "$proj"
start_agent
say "locusd serves $URL; the agent runs"

# a plain page, and a master page naming a dead scheduler, served by python3
DEAD=$(port)
HTTPD_PORT=$(port)
mkdir -p "$TMP/www/fake"
echo "<html><body>Not a project</body></html>" >"$TMP/www/index.html"
echo "<html><head><link rel=\"boinc_scheduler\" href=\"http://127.0.0.1:$DEAD/cgi\"></head></html>" \
    >"$TMP/www/fake/index.html"
python3 -m http.server --bind 127.0.0.1 --directory "$TMP/www" "$HTTPD_PORT" >"$TMP/httpd.log" 2>&1 &
HTTPD_PID=$!
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$HTTPD_PORT/" && break; sleep 0.1; done
curl -sf -o /dev/null "http://127.0.0.1:$HTTPD_PORT/" || fail "python3 http.server does not serve on $HTTPD_PORT"

# refused URL KEY MESSAGE: attach exits 1 with one line matching MESSAGE,
# lists nothing new in projects, and leaves nothing of URL in the state
# file or the data folder.
refused() {
    local url=$1 key=$2 want=$3 rc=0 before dir
    before=$(lc projects | cut -d ' ' -f 1)
    lc attach "$url" "$key" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ "$rc" -eq 1 ] || afail "attach $url exited with $rc, not 1: $(cat "$TMP/out" "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || afail "attach $url: not one line on stderr: $(cat "$TMP/err")"
    grep -q "^locus-client: attach $url: .*$want" "$TMP/err" || afail "attach $url: unexpected message: $(cat "$TMP/err")"
    [ ! -s "$TMP/out" ] || afail "attach $url wrote on stdout: $(cat "$TMP/out")"
    [ "$(lc projects | cut -d ' ' -f 1)" = "$before" ] || afail "attach $url changed projects: $(lc projects)"
    ! grep -qF "\"$url\"" "$AGENT_DIR/client_state.json" || afail "attach $url left it in the state file"
    dir=${url#http://}
    dir=${dir%/}
    dir=${dir//[:\/]/_}
    [ ! -e "$AGENT_DIR/projects/$dir" ] || afail "attach $url left its folder"
    [ -z "$(find "$AGENT_DIR" -maxdepth 1 -name "sched_*_$dir.xml")" ] || afail "attach $url left a request or reply copy"
    say "attach $url: exit 1, $(cut -c 1-160 "$TMP/err")"
}
[ -z "$(lc projects)" ] || afail "projects is not empty at first: $(lc projects)"
refused "http://127.0.0.1:$DEAD/proj/" "$(key_of alice)" "cannot read the master page: .*Connection refused"
refused "http://127.0.0.1:$HTTPD_PORT/" "$(key_of alice)" "not a BOINC or locus project: its page names no scheduler"
refused "http://127.0.0.1:$PORT/nothing/" "$(key_of alice)" "cannot read the master page: .*: HTTP 404"
refused "http://127.0.0.1:$HTTPD_PORT/fake/" "$(key_of alice)" \
    "scheduler request failed: http://127.0.0.1:$DEAD/cgi: .*Connection refused"
refused "$URL" "not-a-key" "the project refused: Invalid or missing account key"
[ "$(sql "$proj" "SELECT count(*) FROM hosts")" -eq 0 ] || afail "a refused attach made a host in locusd's store"
grep -q "attach $URL failed: the project refused" "$AGENT_LOG" || afail "the agent's log does not say why attach failed"

# ---- --no-contact: attached as given; projects says why the contacts fail ----
lc attach "$URL" not-a-key --no-contact >"$TMP/out" || afail "attach --no-contact $URL failed"
grep -q "^attached to $URL, not contacted yet" "$TMP/out" || afail "attach --no-contact said: $(cat "$TMP/out")"
lc attach "http://127.0.0.1:$DEAD/proj/" key --no-contact >/dev/null || afail "attach --no-contact to a dead port failed"
for _ in $(seq 40); do
    [ "$(lc projects | grep -c ' last_error=')" -eq 2 ] && break
    sleep 0.25
done
line=$(lc projects | grep "^$URL " || true)
grep -q ' hostid=0 .* last_error_at=[0-9-]*T[0-9:]*Z last_error="the project refused: Invalid or missing account key' \
    <<<"$line" || afail "projects does not say why $URL was refused: $line"
line=$(lc projects | grep "^http://127.0.0.1:$DEAD/proj/ " || true)
grep -q ' last_error=".*Connection refused' <<<"$line" || afail "projects does not say why the dead port fails: $line"
say "attach --no-contact: exit 0; projects says why: $(lc projects | grep -o 'last_error=.*' | head -n 1)"
lc detach "$URL" || afail "detach $URL failed"
lc detach "http://127.0.0.1:$DEAD/proj/" || afail "detach of the dead port failed"

# ---- a good attach: exit 0 with the host id; projects shows it, no error ----
key_of alice | lc attach "$URL" - --share 50 >"$TMP/out" 2>"$TMP/err" || afail "attach failed: $(cat "$TMP/err")"
hostid=$(sql "$proj" "SELECT id FROM hosts")
[ -n "$hostid" ] || afail "no host in locusd's store after a good attach"
grep -q "^attached to $URL: name=\"Locus client_attach\" hostid=$hostid tasks=0$" "$TMP/out" \
    || afail "attach said: $(cat "$TMP/out") (locusd made host $hostid)"
line=$(lc projects | grep "^$URL " || true)
[ "$(field hostid "$line")" = "$hostid" ] || afail "projects does not show host $hostid: $line"
grep -q "share=50 " <<<"$line" || afail "projects does not show share 50: $line"
! grep -q "last_error" <<<"$line" || afail "projects shows an error after a good attach: $line"
[ -d "$AGENT_DIR/projects/127.0.0.1_${PORT}_proj" ] || afail "no project folder after a good attach"
say "attach $URL: exit 0, $(cat "$TMP/out")"
# a failure now leaves the attached project as it is
refused "http://127.0.0.1:$DEAD/other/" "$(key_of alice)" "Connection refused"
[ "$(field hostid "$(lc projects | grep "^$URL ")")" = "$hostid" ] || afail "a failed attach changed $URL: $(lc projects)"
if lc attach "${URL/http:/https:}" "$(key_of alice)" 2>"$TMP/err"; then afail "attach of $URL over https too succeeded"; fi
grep -q "would share the folder projects/127.0.0.1_${PORT}_proj of $URL" "$TMP/err" \
    || afail "the same folder twice: unexpected message: $(cat "$TMP/err")"

# ---- the state after a restart: the good project, nothing else ----
stop_agent
start_agent
[ "$(lc projects | cut -d ' ' -f 1)" = "$URL" ] || afail "after a restart, projects is not just $URL: $(lc projects)"
stop_agent
stop_locusd
say "PASS: each failed attach exits 1 with its reason and attaches nothing; a good one says host $hostid; total $(elapsed)s"
