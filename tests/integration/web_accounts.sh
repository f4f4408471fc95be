#!/usr/bin/env bash
# web_accounts: a volunteer joins as BOINC's "Add project" wizard does,
# with real BOINC clients and boinccmd against a real locusd:
#  - boinccmd --get_project_config shows the project's name and password
#    length; --create_account makes an account and prints its key; the
#    client attaches with that key and computes jobs for that account;
#  - a second client finds the account with --lookup_account (the e-mail in
#    other letter case: the client lower-cases it), gets the same key and
#    attaches as the same user; `locus user account-key` prints that key;
#  - creating it again with the same password gives the key again, and
#    with a team's name (any letter case) joins that team; a wrong password
#    at lookup and an unknown address give BOINC's errors and no key;
#  - the API shows the account to its key (credit, team, both hosts) and
#    lists the teams with their members;
#  - the store holds neither the key nor the client's password hash: the
#    key's SHA-256 and an Argon2id string;
#  - malformed arguments (curl): BOINC's error numbers, nothing created;
#  - one address past its allowance is refused, and nothing is created;
#  - sign-up closed: the config says so, creation is refused, lookup works;
#    by invitation: refused without the code or with a wrong one, made with it.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice
set_config "$proj" account_creation open
set_config "$proj" min_passwd_length 8
set_config "$proj" account_rpcs_per_hour 1   # a burst of 5, then one an hour
"$LOCUS" team create "$proj" Crunchers --founder alice >/dev/null || fail "locus team create failed"
start_locusd "$proj"

# has TEXT PATTERN WHAT: TEXT holds a line matching PATTERN (grep -E)
has() { grep -Eq "$2" <<<"$1" || fail "$3: expected /$2/ in: $1"; }
no_key() { ! grep -q "account key:" <<<"$1" || fail "$2: a key was given: $1"; }
key_in() { sed -n 's/^account key: \([0-9a-f]\{32\}\)$/\1/p' <<<"$1"; }
users() { sql "$proj" "SELECT count(*) FROM users"; }

boinc_client_start "$TMP/cA" "$(port)" || fail "client A did not start"
CLIENT_DIR[A]=$TMP/cA; CLIENT_PID[A]=$(cat "$TMP/cA/client.pid"); _CLIENTS+=(A)
boinc_client_start "$TMP/cB" "$(port)" || fail "client B did not start"
CLIENT_DIR[B]=$TMP/cB; CLIENT_PID[B]=$(cat "$TMP/cB/client.pid"); _CLIENTS+=(B)

# ---- the wizard's calls, from boinccmd ----
out=$(bcmd A --get_project_config "$URL" 2>&1)
has "$out" "^name: Locus $TEST_NAME$" "get_project_config"
has "$out" "^min_passwd_length: 8$" "get_project_config"
say "get_project_config: $(tr '\n' ' ' <<<"$out")"

out=$(bcmd A --create_account "$URL" carol@example.org 'correct horse' 'Carol C' 2>&1)
KEY=$(key_in "$out")
[ -n "$KEY" ] || fail "create_account gave no key: $out"
say "create_account: key $KEY"
row=$(sql "$proj" "SELECT name, role, email, key_gen, substr(passwd, 1, 10) FROM users WHERE email='carol@example.org'")
[ "$row" = "Carol C|$USER_VOLUNTEER|carol@example.org|1|\$argon2id\$" ] || fail "the account's row: $row"
# the network it was made from, for one_result_per_signup_batch: 127.0.0.0/24, tagged IPv4 (core/cidr.h)
[ "$(sql "$proj" "SELECT signup_net = ((4 << 56) | 0x7f0000) FROM users WHERE email='carol@example.org'")" = 1 ] \
    || fail "the account's signup network: $(sql "$proj" "SELECT signup_net FROM users WHERE email='carol@example.org'")"
md5=$(printf '%s' 'correct horsecarol@example.org' | md5sum | cut -c1-32)
if dump_store "$proj" | grep -q -e "$KEY" -e "$md5"; then fail "the store holds the key or the client's password hash"; fi
[ "$("$LOCUS" user account-key "$proj" 'Carol C')" = "$KEY" ] || fail "locus user account-key prints another key"
say "the store keeps the key's hash and an Argon2id string; locus user account-key prints the key"

echo '{"cmdline": "--iterations 1000 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 4 --input-template "$TMP/tmpl.json" --name w >/dev/null \
    || fail "locus batch create failed"
boinc_client_attach "$TMP/cA" "$URL" "$KEY" && boinc_client_key_ok "$TMP/cA" "$URL" \
    || fail "client A could not attach with the key create_account gave"
wait_batch_done "$proj" w 120
carol=$(sql "$proj" "SELECT id FROM users WHERE name='Carol C'")
n=$(sql "$proj" "SELECT count(*) FROM instances WHERE user_id=$carol AND outcome=$OUTCOME_SUCCESS")
[ "$n" -ge 4 ] || fail "Carol's host computed $n jobs of 4"
say "client A attached with that key and computed the batch for Carol ($n results)"

out=$(bcmd B --lookup_account "$URL" Carol@Example.ORG 'correct horse' 2>&1)
[ "$(key_in "$out")" = "$KEY" ] || fail "lookup_account gave another key: $out"
boinc_client_attach "$TMP/cB" "$URL" "$KEY" && boinc_client_key_ok "$TMP/cB" "$URL" \
    || fail "client B could not attach with the key lookup_account gave"
wait_first_rpc B
[ "$(sql "$proj" "SELECT count(DISTINCT id) FROM hosts WHERE user_id=$carol")" -eq 2 ] \
    || fail "Carol does not have both hosts"
say "lookup_account from client B: the same key; B attached as Carol"

r=$(curl -s --max-time 10 "${URL}create_account.php?email_addr=carol%40example.org&passwd_hash=$md5&user_name=Carol%20C&team_name=CRUNCHERS")
grep -q "<authenticator>$KEY</authenticator>" <<<"$r" || fail "creating Carol again with her password: $r"
[ "$(sql "$proj" "SELECT t.name FROM users u JOIN teams t ON t.id=u.team_id WHERE u.id=$carol")" = Crunchers ] \
    || fail "Carol did not join the team she named"
out=$(bcmd A --lookup_account "$URL" carol@example.org 'wrong horse' 2>&1)
no_key "$out" "lookup with a wrong password"; has "$out" "poll status: bad password" "wrong password"
out=$(bcmd A --lookup_account "$URL" nobody@example.org 'correct horse' 2>&1)
no_key "$out" "lookup of an unknown address"; has "$out" "^poll status: " "unknown address"
say "again with the same password: the key, and the team named joined; a wrong password or unknown address: BOINC's errors"

api() { curl -s --max-time 10 "$@"; }
acct=$(api -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/api/v1/account")
has "$acct" '"user":\{"id":'"$carol"',"name":"Carol C","role":"volunteer","team":"Crunchers","hosts":2,"credit":(0\.0*[1-9]|[1-9])' \
    "the account's view"
[ "$(grep -o '"domain_name"' <<<"$acct" | wc -l)" -eq 2 ] || fail "the account's view has not 2 hosts: $acct"
has "$(api "http://127.0.0.1:$PORT/api/v1/account")" "send your account key" "the account's view without a key"
has "$(api "http://127.0.0.1:$PORT/api/v1/teams")" '"name":"Crunchers","founder":"alice","members":2' "the teams"
say "the API: Carol's account (credit, team, 2 hosts) to her key, 401 without; the teams with their members"

# ---- malformed arguments: refused before any allowance is spent ----
before=$(users)
web() { curl -s --max-time 10 "${URL}$1"; }
errnum() { sed -n 's|.*<error_num>\(-[0-9]*\)</error_num>.*|\1|p' <<<"$1"; }
H=$(printf '%s' 'pw123456x@y.org' | md5sum | cut -c1-32)
for bad in "email_addr=not-an-address&passwd_hash=$H&user_name=x:-205" \
           "email_addr=a%3Cb%3E%40y.org&passwd_hash=$H&user_name=x:-205" \
           "passwd_hash=$H&user_name=x:-205" \
           "email_addr=x%40y.org&passwd_hash=12345&user_name=x:-206" \
           "email_addr=x%40y.org&passwd_hash=${H}00&user_name=x:-206" \
           "email_addr=x%40y.org&passwd_hash=$H:-188" \
           "email_addr=x%40y.org&passwd_hash=$H&user_name=tab%09name:-188"; do
    r=$(web "create_account.php?${bad%:*}")
    [ "$(errnum "$r")" = "${bad##*:}" ] || fail "create_account.php?${bad%:*}: expected ${bad##*:}, got: $r"
done
[ "$(users)" = "$before" ] || fail "a malformed creation made a user"
say "malformed e-mail, password hash or user name: -205, -206, -188, nothing made"

# ---- five account requests made so far: the sixth is past the allowance ----
out=$(bcmd A --create_account "$URL" dave@example.org 'dave pass' Dave 2>&1)
no_key "$out" "a creation past the allowance"
r=$(web "create_account.php?email_addr=dave%40example.org&passwd_hash=$H&user_name=Dave")
has "$r" "too many account requests from your address" "past the allowance"
[ "$(users)" = "$before" ] || fail "a creation past the allowance made a user"
say "past its allowance an address is refused: $(sed -n 's|.*<error_msg>\(.*\)</error_msg>.*|\1|p' <<<"$r")"

# ---- sign-up closed, then by invitation ----
stop_locusd
set_config "$proj" account_creation closed
start_locusd "$proj"
has "$(web get_project_config.php)" "<account_creation_disabled/>" "closed sign-up's config"
out=$(bcmd A --create_account "$URL" erin@example.org 'erin pass' Erin 2>&1)
no_key "$out" "creation with sign-up closed"
[ "$(errnum "$(web "create_account.php?email_addr=erin%40x.org&passwd_hash=$H&user_name=Erin")")" = -208 ] \
    || fail "closed sign-up: not -208"
out=$(bcmd B --lookup_account "$URL" carol@example.org 'correct horse' 2>&1)
[ "$(key_in "$out")" = "$KEY" ] || fail "lookup with sign-up closed: $out"
say "sign-up closed: the config says so, creation gets -208, lookup works"

stop_locusd
set_config "$proj" account_creation invitation
set_config "$proj" invitation_code open-sesame-42
start_locusd "$proj"
has "$(web get_project_config.php)" "<invite_code_required/>" "invitation sign-up's config"
q="email_addr=erin%40x.org&passwd_hash=$H&user_name=Erin"
[ "$(errnum "$(web "create_account.php?$q")")" = -208 ] || fail "invitation without a code: not -208"
r=$(web "create_account.php?$q&invite_code=open-sesame-43")
[ "$(errnum "$r")" = -208 ] || fail "a wrong code: not -208: $r"
has "$r" "wrong invitation code" "a wrong code"
[ "$(users)" = "$before" ] || fail "a refused invitation made a user"
has "$(web "create_account.php?$q&invite_code=open-sesame-42")" "<authenticator>[0-9a-f]{32}</authenticator>" \
    "creation with the invitation code"
[ "$(users)" = "$((before + 1))" ] || fail "the invitation made no user"
say "by invitation: -208 without the code or with a wrong one, an account with it"

stop_locusd
say "PASS"
