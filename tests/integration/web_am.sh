#!/usr/bin/env bash
# web_am: what account managers and volunteers do with an account besides
# making it, with real BOINC clients and boinccmd against a real locusd:
#  - the weak key (API and `locus user account-key --weak` agree) attaches a
#    client with boinccmd --project_attach, and the host computes a batch for
#    the account; the weak key opens no account call and not the API;
#  - am_get_info gives BOINC's reply (URL-encoded name, weak key, cpid,
#    team); am_set_info changes name, country, URL, flags, venue, both
#    preferences and the team (joined by id: team_lookup finds it), checked
#    in the store and read back; am_set_host_info sets a host's venue, but
#    not another account's host;
#  - bad input changes nothing: a wrong key, a malformed one, a taken name,
#    an unknown team, preferences that are no document, a bad venue, flag
#    or URL, SQL and XML in a name (kept as text, encoded in the reply);
#  - a new address and password (am_set_info) change the weak key: the old
#    one no longer attaches; lookup takes the new ones only; BOINC's rules:
#    no second change within a week, no taking an address another account
#    left;
#  - a reinstalled client (another folder, the computer's only client) of
#    the same computer, once the old one is silent, gets the old host back:
#    its id and its credit, no second host;
#  - dated global preferences set by am_set_info reach the host in its next
#    scheduler reply (and are not sent again once it holds them), the
#    project preferences' resource share too, with the address's hash;
#  - wrong keys spend the address's allowance: past it, even the right key
#    is refused for a while.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice
set_config "$proj" account_creation open
set_config "$proj" account_rpcs_per_hour 1   # a burst of 5, then one an hour
"$LOCUS" team create "$proj" Crunchers --founder alice >/dev/null || fail "locus team create failed"
start_locusd "$proj"

has() { grep -Eq "$2" <<<"$1" || fail "$3: expected /$2/ in: $1"; }
web() { curl -s --max-time 10 "${URL}$1"; }
errnum() { sed -n 's|.*<error_num>\(-[0-9]*\)</error_num>.*|\1|p' <<<"$1"; }
api() { curl -s --max-time 10 "$@"; }
md5() { printf '%s' "$1" | md5sum | cut -c1-32; }
row() { sql "$proj" "SELECT name,country,postal_code,url,send_email,show_hosts,venue,IFNULL(team_id,0) FROM users WHERE id=$carol"; }

H=$(md5 'correct horsecarol@example.org')
r=$(web "create_account.php?email_addr=carol%40example.org&passwd_hash=$H&user_name=Carol%20C")
KEY=$(sed -n 's|.*<authenticator>\([0-9a-f]\{32\}\)</authenticator>.*|\1|p' <<<"$r")
[ -n "$KEY" ] || fail "create_account gave no key: $r"
carol=$(sql "$proj" "SELECT id FROM users WHERE name='Carol C'")

# ---- the weak key ----
acct=$(api -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/api/v1/account")
WEAK=$(sed -n 's|.*"weak_key":"\([0-9]*_[0-9a-f]\{32\}\)".*|\1|p' <<<"$acct")
[ -n "$WEAK" ] || fail "the account's view has no weak key: $acct"
[ "${WEAK%%_*}" = "$carol" ] || fail "the weak key does not start with the user's id: $WEAK"
[ "$("$LOCUS" user account-key "$proj" 'Carol C' --weak)" = "$WEAK" ] || fail "locus user account-key --weak differs"
has "$(api -H "Authorization: Bearer $WEAK" "http://127.0.0.1:$PORT/api/v1/account")" "send your account key" \
    "the API with the weak key"
[ "$(errnum "$(web "am_get_info.php?account_key=$WEAK")")" = -136 ] || fail "am_get_info took the weak key"
say "weak key $WEAK: in the API to the key's owner and from the CLI; the API and am_get_info refuse it"

echo '{"cmdline": "--iterations 1000 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 3 --input-template "$TMP/tmpl.json" --name w >/dev/null \
    || fail "locus batch create failed"
boinc_client_start "$TMP/cA" "$(port)" || fail "client A did not start"
CLIENT_DIR[A]=$TMP/cA; CLIENT_PID[A]=$(cat "$TMP/cA/client.pid"); _CLIENTS+=(A)
out=$(bcmd A --project_attach "$URL" "$WEAK" 2>&1) || fail "boinccmd --project_attach with the weak key: $out"
boinc_client_key_ok "$TMP/cA" "$URL" || fail "client A did not attach with the weak key"
wait_batch_done "$proj" w 120
n=$(sql "$proj" "SELECT count(*) FROM instances WHERE user_id=$carol AND outcome=$OUTCOME_SUCCESS")
[ "$n" -ge 3 ] || fail "the weak key's host computed $n jobs of 3"
hostA=$(client_hostid A)
[ "$(sql "$proj" "SELECT user_id FROM hosts WHERE id=$hostA")" = "$carol" ] || fail "host A is not Carol's"
say "client A attached with the weak key (boinccmd --project_attach) and computed the batch for Carol ($n results)"

# ---- am_get_info ----
r=$(web "am_get_info.php?account_key=$KEY")
has "$r" "<success/>" "am_get_info"
has "$r" "<id>$carol</id>" "am_get_info id"
has "$r" "<name>Carol\+C</name>" "am_get_info name (URL-encoded, as BOINC's)"
has "$r" "<weak_auth>$WEAK</weak_auth>" "am_get_info weak key"
has "$r" "<cpid>[0-9a-f]{32}</cpid>" "am_get_info cpid"
has "$r" "<teamid>0</teamid>" "am_get_info team"
has "$r" "<send_email>1</send_email>" "am_get_info send_email"
say "am_get_info: BOINC's reply"

# ---- team_lookup, and am_set_info ----
team=$(sql "$proj" "SELECT id FROM teams WHERE name='Crunchers'")
r=$(web "team_lookup.php?team_name=crunch&format=xml")
has "$r" "<teams>" "team_lookup by name"
has "$r" "<id>$team</id>" "team_lookup by name"
has "$(web "team_lookup.php?team_id=$team")" "<name>Crunchers</name>" "team_lookup by id"
[ "$(errnum "$(web "team_lookup.php?team_id=999")")" = -136 ] || fail "team_lookup of an unknown id"
has "$(web "team_lookup.php?team_ids=999,$team,x")" "<id>$team</id>" "team_lookup by ids"
[ "$(web "team_lookup.php?team_name=zzz" | grep -c '<team>')" = 0 ] || fail "team_lookup found a team for zzz"
say "team_lookup: by name (a part of it), id and ids"

GP=$(printf '<global_preferences>\n<run_on_batteries>0</run_on_batteries>\n</global_preferences>' | sed 's/</%3C/g; s/>/%3E/g; s/ /%20/g' | sed ':a;N;$!ba;s/\n/%0A/g')
PP='%3Cproject_preferences%3E%3Cresource_share%3E50%3C%2Fresource_share%3E%3C%2Fproject_preferences%3E'
r=$(web "am_set_info.php?account_key=$KEY&name=Carol%20Two&country=France&postal_code=75001&url=https%3A%2F%2Fcarol.example.org%2F&send_email=0&show_hosts=1&venue=home&teamid=$team&global_prefs=$GP&project_prefs=$PP")
has "$r" "<am_set_info_reply>" "am_set_info"
has "$r" "<success/>" "am_set_info"
[ "$(row)" = "Carol Two|France|75001|https://carol.example.org/|0|1|home|$team" ] || fail "am_set_info's changes: $(row)"
r=$(web "am_get_info.php?account_key=$KEY")
has "$r" "<name>Carol\+Two</name>" "the new name"
has "$r" "<url>https%3A%2F%2Fcarol.example.org%2F</url>" "the URL"
has "$r" "<teamid>$team</teamid>" "the team"
has "$r" "<run_on_batteries>0</run_on_batteries>" "the global preferences"
has "$r" "<resource_share>50</resource_share>" "the project preferences"
has "$r" "<venue>home</venue>" "the venue"
! grep -q "<teamfounder/>" <<<"$r" || fail "Carol is no founder"
has "$(api "http://127.0.0.1:$PORT/api/v1/teams")" '"name":"Crunchers","founder":"alice","members":2' "the team's members"
say "am_set_info: name, country, postal code, URL, flags, venue, preferences and team (joined) changed and read back"

# ---- bad input: each refused, nothing changed ----
before=$(row)
BADKEY=${KEY:0:31}$([ "${KEY:31}" = 0 ] && echo 1 || echo 0)
r=$(web "am_set_info.php?account_key=$KEY&name=alice")
[ "$(errnum "$r")" = -188 ] || fail "a taken name: $r"
for bad in "account_key=$BADKEY&country=Peru:-136" "account_key=${KEY:0:31}:-136" "account_key=$WEAK&country=Peru:-136" \
           "account_key=$KEY&teamid=999:-136" "account_key=$KEY&teamid=x:-1" "account_key=$KEY&venue=attic:-1" \
           "account_key=$KEY&send_email=2:-1" "account_key=$KEY&url=javascript%3Aalert(1):-1" \
           "account_key=$KEY&global_prefs=%3Cglobal_preferences%3E%3Cx%3E%3C%2Fglobal_preferences%3E:-112" \
           "account_key=$KEY&project_prefs=%3Cglobal_preferences%2F%3E:-112" \
           "account_key=$KEY&email_addr=not-an-address:-205" "account_key=$KEY&password_hash=123:-206" \
           "account_key=$KEY&email_addr=carol2%40example.org:-206" "account_key=$KEY&name=tab%09name:-1"; do
    r=$(web "am_set_info.php?${bad%:*}")
    [ "$(errnum "$r")" = "${bad##*:}" ] || fail "am_set_info.php?${bad%:*}: expected ${bad##*:}, got: $r"
done
[ "$(row)" = "$before" ] || fail "a refused am_set_info changed the account: $(row)"
# SQL and XML in a name: kept as text, encoded in the reply
r=$(web "am_set_info.php?account_key=$KEY&name=x%27%29%3B%20DROP%20TABLE%20users%3B--%20%3Cb%3E%26")
has "$r" "<success/>" "a name with SQL and XML in it"
[ "$(sql "$proj" "SELECT name FROM users WHERE id=$carol")" = "x'); DROP TABLE users;-- <b>&" ] || fail "the name was not kept as text"
has "$(web "am_get_info.php?account_key=$KEY")" "<name>x%27%29%3B\+DROP\+TABLE\+users%3B--\+%3Cb%3E%26</name>" "the name encoded"
web "am_set_info.php?account_key=$KEY&name=Carol%20Two" >/dev/null
say "bad input refused with BOINC's errors, nothing changed; SQL and XML in a name kept as text, encoded in the reply"

# ---- am_set_host_info ----
has "$(web "am_set_host_info.php?account_key=$KEY&hostid=$hostA&venue=work")" "<am_set_host_info_reply>" "am_set_host_info"
[ "$(sql "$proj" "SELECT venue FROM hosts WHERE id=$hostA")" = work ] || fail "the host's venue"
H2=$(md5 'dave passdave@example.org')
r=$(web "create_account.php?email_addr=dave%40example.org&passwd_hash=$H2&user_name=Dave")
DKEY=$(sed -n 's|.*<authenticator>\([0-9a-f]\{32\}\)</authenticator>.*|\1|p' <<<"$r")
[ -n "$DKEY" ] || fail "Dave's account: $r"
[ "$(errnum "$(web "am_set_host_info.php?account_key=$DKEY&hostid=$hostA&venue=home")")" = -136 ] \
    || fail "Dave set Carol's host's venue"
[ "$(errnum "$(web "am_set_host_info.php?account_key=$KEY&hostid=$hostA&venue=attic")")" = -1 ] || fail "a bad venue"
[ "$(sql "$proj" "SELECT venue FROM hosts WHERE id=$hostA")" = work ] || fail "a refused am_set_host_info changed the venue"
say "am_set_host_info: Carol's host's venue set; another account's key or a bad venue changes nothing"

# ---- a reinstalled client: the old host again, once it is silent ----
credit=$(sql "$proj" "SELECT total_credit FROM hosts WHERE id=$hostA")
stop_client A
stop_locusd
# two hours pass for the old host (locusd is stopped: the store is the only copy)
sqlite3 -batch "$proj/locus.db" "UPDATE hosts SET rpc_time = rpc_time - 7200 WHERE id=$hostA"
start_locusd "$proj"
BOINC_CLIENT_SINGLE=1 boinc_client_start "$TMP/cA2" "$(port)" || fail "client A2 did not start"
CLIENT_DIR[A2]=$TMP/cA2; CLIENT_PID[A2]=$(cat "$TMP/cA2/client.pid"); _CLIENTS+=(A2)
boinc_client_attach "$TMP/cA2" "$URL" "$KEY" || fail "client A2 could not attach"
wait_first_rpc A2
[ "$(client_hostid A2)" = "$hostA" ] || fail "the reinstalled client got host $(client_hostid A2), not $hostA"
[ "$(sql "$proj" "SELECT count(*) FROM hosts WHERE user_id=$carol")" = 1 ] || fail "Carol has a second host"
[ "$(sql "$proj" "SELECT total_credit FROM hosts WHERE id=$hostA")" = "$credit" ] || fail "the host's credit changed"
say "the reinstalled client (another folder, its computer's only client) is host $hostA again, credit $credit kept"

# ---- preferences set through an account manager reach the host in its next reply ----
now=$(date +%s)
GP2=$(printf '<global_preferences>\n<mod_time>%s</mod_time>\n<work_buf_min_days>0.37</work_buf_min_days>\n</global_preferences>' "$now" \
      | sed 's/</%3C/g; s/>/%3E/g; s/ /%20/g' | sed ':a;N;$!ba;s/\n/%0A/g')
has "$(web "am_set_info.php?account_key=$KEY&global_prefs=$GP2")" "<success/>" "am_set_info with dated preferences"
prefs=${CLIENT_DIR[A2]}/global_prefs.xml
for i in $(seq 30); do
    grep -q "<work_buf_min_days>0.37</work_buf_min_days>" "$prefs" 2>/dev/null && break
    [ $((i % 5)) -ne 1 ] || client_update A2
    sleep 1
done
grep -q "<work_buf_min_days>0.37</work_buf_min_days>" "$prefs" 2>/dev/null ||
    fail "the account's preferences did not reach client A2: $(cat "$prefs" 2>/dev/null)"
grep -q "<source_project>$URL</source_project>" "$prefs" || fail "client A2's preferences name another source: $(cat "$prefs")"
grep -q "<email_hash>$(md5 carol@example.org)</email_hash>" "${CLIENT_DIR[A2]}/client_state.xml" ||
    fail "client A2 holds no e-mail hash of Carol's address"
bcmd A2 --get_project_status | grep -q "resource share: 50" || fail "the project preferences' share did not reach client A2"
# the host now holds them, dated: the next reply carries them no more
rm -f "${CLIENT_DIR[A2]}"/sched_reply_*.xml   # the client writes each reply there
client_update A2
for i in $(seq 30); do ls "${CLIENT_DIR[A2]}"/sched_reply_*.xml >/dev/null 2>&1 && break; sleep 1; done
reply=$(ls "${CLIENT_DIR[A2]}"/sched_reply_*.xml) || fail "client A2 made no scheduler RPC"
sleep 1   # written as it arrives: let it end
grep -q "</scheduler_reply>" "$reply" || fail "client A2's reply is cut: $(cat "$reply")"
grep -q "<global_preferences>" "$reply" && fail "the reply sent the preferences again, though the host holds them"
say "dated global preferences (am_set_info) reached the host with its next reply, its source this project; the share of the project preferences too; not sent again"

# ---- a new address and password: a new weak key; the old one attaches nothing ----
H3=$(md5 'new horsecarol.new@example.org')
has "$(web "am_set_info.php?account_key=$KEY&email_addr=Carol.New%40example.org&password_hash=$H3")" "<success/>" \
    "a new address and password"
[ "$(sql "$proj" "SELECT email, prev_email, email_time > 0 FROM users WHERE id=$carol")" = \
  "carol.new@example.org|carol@example.org|1" ] || fail "the address change in the store"
acct=$(api -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/api/v1/account")
WEAK2=$(sed -n 's|.*"weak_key":"\([0-9]*_[0-9a-f]\{32\}\)".*|\1|p' <<<"$acct")
[ -n "$WEAK2" ] && [ "$WEAK2" != "$WEAK" ] || fail "the weak key did not change with the password: $WEAK2"
has "$(web "lookup_account.php?email_addr=carol.new%40example.org&passwd_hash=$H3")" "<authenticator>$KEY</authenticator>" \
    "lookup with the new address and password"
[ "$(errnum "$(web "lookup_account.php?email_addr=carol%40example.org&passwd_hash=$H")")" = -136 ] \
    || fail "the old address still finds the account"
r=$(web "am_set_info.php?account_key=$KEY&email_addr=carol3%40example.org&password_hash=$(md5 'xcarol3@example.org')")
[ "$(errnum "$r")" = -205 ] || fail "a second change of address within 7 days: $r"
[ "$(errnum "$(web "am_set_info.php?account_key=$DKEY&email_addr=carol%40example.org&password_hash=$H")")" = -137 ] \
    || fail "Dave took the address Carol left"
[ "$(errnum "$(web "am_set_info.php?account_key=$(key_of alice)&password_hash=$H")")" = -205 ] \
    || fail "a password for the operator's user, who has no address"
boinc_client_start "$TMP/cB" "$(port)" || fail "client B did not start"
CLIENT_DIR[B]=$TMP/cB; CLIENT_PID[B]=$(cat "$TMP/cB/client.pid"); _CLIENTS+=(B)
boinc_client_attach "$TMP/cB" "$URL" "$WEAK" || true
if boinc_client_key_ok "$TMP/cB" "$URL" 2>/dev/null; then fail "the old weak key still attaches"; fi
grep -q "request with unknown account key" "$LOCUSD_LOG" || fail "locusd did not refuse the old weak key"
say "a new address and password: a new weak key, the old one refused by the scheduler; BOINC's rules for addresses"

# ---- wrong keys spend the allowance (a restarted locusd: a whole one) ----
stop_locusd
start_locusd "$proj"
for i in 1 2 3 4 5; do   # the burst: 5
    has "$(web "am_get_info.php?account_key=$KEY")" "<success/>" "the right key within the allowance"
    r=$(web "am_get_info.php?account_key=0123456789abcdef0123456789abcde$i")
    [ "$(errnum "$r")" = -136 ] || fail "wrong key $i within the allowance: $r"
done
has "$(web "am_get_info.php?account_key=0123456789abcdef0123456789abcde6")" \
    "too many account requests from your address" "wrong keys past the allowance"
has "$(web "am_get_info.php?account_key=$KEY")" "too many account requests" "the right key past the allowance"
say "5 wrong keys spent the allowance (right keys in between did not): then even the right key waits"

stop_client A2
stop_client B
stop_locusd
say "PASS"
