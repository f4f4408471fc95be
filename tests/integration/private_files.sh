#!/usr/bin/env bash
# private_files: what a local user of the server machine could take from a
# project. `locus init` makes the project folder its owner's alone, and
# locusd and locus create everything in it so (the store and its journal,
# keys, uploads, results); account keys are not in the store, only their
# SHA-256, yet they still let their users in. Attacks that worked on
# 1a3bc37: another local user reads locus.db (0644 in a 0755 folder) and
# finds every key in clear; a key copied from a backup of the store works.
# A project loosened by hand (or made by an earlier locus) is made private
# again when locusd starts, and says so. A damaged code-signing public key
# (every new host would trust it for good) stops locusd at start.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/rpc.sh"

proj=$TMP/proj
make_project "$proj" alice
KEY=$(key_of alice)
SCHED=${URL}scheduler
R=$TMP/req.xml B=$TMP/body H=$TMP/headers
echo '{"cmdline": "--iterations 1000 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 2 --input-template "$TMP/tmpl.json" --name p1 >/dev/null \
    || fail "batch p1"
start_locusd "$proj"

# the key lets its user in: one RPC gets a host and work
request "$KEY" 0 100 >"$R"
code=$(post "$SCHED" "$R")
[ "$code" = 200 ] || fail "RPC with alice's key: HTTP $code"
grep -q "<hostid>" "$B" || fail "no host for alice's key: $(head -c 300 "$B")"
grep -q "<result>" "$B" || fail "no work for alice's key"

mode() { stat -c %a "$1"; }
for p in "$proj" "$proj/keys" "$proj/download" "$proj/upload" "$proj/results"; do
    [ "$(mode "$p")" = 700 ] || fail "$p is $(mode "$p"), not 700"
done
for f in "$proj/locus.db" "$proj/locus.db-wal" "$proj/locus.db-shm" "$proj/config.xml" "$proj/keys/upload_key" \
         "$proj/keys/account_key"; do
    [ ! -e "$f" ] || [ "$(mode "$f")" = 600 ] || fail "$f is $(mode "$f"), not 600"
done
# every file locus and locusd made in the project, whatever it is
loose=$(find "$proj" -perm /077 -printf '%m %p\n' | head -n 5)
[ -z "$loose" ] || fail "readable by others: $loose"

# the key is nowhere in the store, its journal or a dump of it
if grep -a -q -F "$KEY" "$proj"/locus.db*; then fail "alice's key is in the store's files"; fi
if dump_store "$proj" | grep -q -F "$KEY"; then fail "alice's key is in a dump of the store"; fi
hash=$(printf '%s' "$KEY" | sha256sum | cut -d' ' -f1)
[ "$(sql "$proj" "SELECT count(*) FROM users WHERE name='alice' AND authenticator='$hash'")" = 1 ] \
    || fail "the store does not hold SHA-256 of alice's key"
# what the store holds is no key: sent as one, it is refused
request "$hash" 0 100 >"$R"
code=$(post "$SCHED" "$R")
grep -q "Invalid or missing account key" "$B" || fail "the stored hash was taken as a key (HTTP $code)"

# another local user cannot read the store (root only can switch users)
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    if runuser -u nobody -- cat "$proj/locus.db" >/dev/null 2>&1; then fail "user nobody read locus.db"; fi
    if runuser -u nobody -- ls "$proj" >/dev/null 2>&1; then fail "user nobody listed the project folder"; fi
    say "user nobody can neither list the project nor read its store"
fi
stop_locusd

# a project loosened by hand is made private again at start, with a warning
chmod 755 "$proj"
chmod 644 "$proj/locus.db"
start_locusd "$proj"
[ "$(mode "$proj")" = 700 ] && [ "$(mode "$proj/locus.db")" = 600 ] \
    || fail "locusd left the project $(mode "$proj") and its store $(mode "$proj/locus.db")"
grep -q "was readable by others (mode 755): now 700" "$LOCUSD_LOG" || fail "locusd did not say it closed the project"
stop_locusd
check_sanitizers

cp "$proj/keys/code_sign_public" "$TMP/code_sign_public"
head -c 100 "$TMP/code_sign_public" >"$proj/keys/code_sign_public"
rc=0
timeout 20 "$LOCUSD" "$proj" >"$TMP/start.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "locusd with a cut code-signing key exited $rc, not 1: $(cat "$TMP/start.log")"
grep -q "code_sign_public is damaged" "$TMP/start.log" || fail "no clear message for a cut key: $(cat "$TMP/start.log")"
cp "$TMP/code_sign_public" "$proj/keys/code_sign_public"
say "a damaged code-signing public key stops locusd at start"
say "PASS"
