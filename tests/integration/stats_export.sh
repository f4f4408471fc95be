#!/usr/bin/env bash
# stats_export: BOINC's statistics export from a real locusd whose users
# earned credit with real BOINC clients:
#  - carol joins through create_account.php (with an e-mail, in team Owls),
#    alice is made by the CLI; each attaches a client, and they compute a
#    batch;
#  - locusd writes stats/ by itself (stats_export_hours) and serves
#    tables.xml, user.gz, host.gz, team.gz at MASTER_URL/stats/ with their
#    Content-Type, HEAD and Range; the files, gunzipped and parsed, hold the
#    store's users, hosts and teams with credit, recent credit decayed to
#    the export's time, a cpid per user and no e-mail address, host name or
#    address;
#  - `locus stats export --out` writes the same figures; it refuses a
#    folder that holds other files;
#  - anything else under stats/ is 404: other names, path tricks, a listing,
#    POST; locusd stops at once and cleanly on SIGTERM.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice
set_config "$proj" account_creation open
set_config "$proj" stats_export_hours 0.002   # every 7.2 s
"$LOCUS" team create "$proj" Owls --founder alice >/dev/null || fail "locus team create failed"
start_locusd "$proj"

email=carol@example.org
md5=$(printf '%s' "correct horse$email" | md5sum | cut -c1-32)
r=$(curl -s --max-time 10 "${URL}create_account.php?email_addr=carol%40example.org&passwd_hash=$md5&user_name=Carol&team_name=Owls")
carol_key=$(sed -n 's|.*<authenticator>\([0-9a-f]*\)</authenticator>.*|\1|p' <<<"$r")
[ -n "$carol_key" ] || fail "create_account gave no key: $r"

echo '{"cmdline": "--iterations 1000 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e10}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 6 --input-template "$TMP/tmpl.json" --name s >/dev/null \
    || fail "locus batch create failed"
start_client A "$(key_of alice)"
start_client C "$carol_key"
wait_batch_done "$proj" s 180
for n in A C; do stop_client "$n"; done
credited=$(sql "$proj" "SELECT count(*) FROM users WHERE total_credit > 0")
[ "$credited" -ge 1 ] || fail "no user has credit after the batch"
say "batch done; $credited users with credit, $(sql "$proj" "SELECT count(*) FROM hosts WHERE total_credit > 0") hosts"

# ---- made by locusd, fetched over HTTP ----
get() { curl -s --max-time 10 "$@"; }
update_time() { sed -n 's|.*<update_time>\([0-9]*\)</update_time>.*|\1|p' "$@"; }
# the export locusd made after the last credit (its update_time later than every expavg_time)
last_credit=$(sql "$proj" "SELECT CAST(max(expavg_time) AS INTEGER) FROM users")
for i in $(seq 60); do
    t=$(get "${URL}stats/tables.xml" | update_time)
    [ -n "$t" ] && [ "$t" -gt "$last_credit" ] && break
    sleep 1
done
[ -n "$t" ] && [ "$t" -gt "$last_credit" ] || fail "locusd made no export after the last credit (update_time '$t')"
grep -q "stats export: .* users" "$LOCUSD_LOG" || fail "locusd did not log its export"

mkdir "$TMP/http"
# the four files of one export: fetched again if a newer one came meanwhile
for i in $(seq 5); do
    for name in tables.xml user.gz host.gz team.gz; do
        get -D "$TMP/http/$name.h" -o "$TMP/http/$name" "${URL}stats/$name"
        grep -q "^HTTP/1.1 200" "$TMP/http/$name.h" || fail "GET stats/$name: $(head -n1 "$TMP/http/$name.h")"
    done
    [ "$(get "${URL}stats/tables.xml" | update_time)" = "$(update_time "$TMP/http/tables.xml")" ] && break
done
grep -qi '^Content-Type: text/xml' "$TMP/http/tables.xml.h" || fail "tables.xml's Content-Type: $(cat "$TMP/http/tables.xml.h")"
grep -qi '^Content-Type: application/gzip' "$TMP/http/user.gz.h" || fail "user.gz's Content-Type: $(cat "$TMP/http/user.gz.h")"
grep -qi '^Content-Encoding' "$TMP/http/user.gz.h" && fail "user.gz sent with a Content-Encoding: clients would unzip it"
head_status=$(curl -s -I --max-time 10 -o /dev/null -w '%{http_code} %{content_type}' "${URL}stats/team.gz")
[ "$head_status" = "200 application/gzip" ] || fail "HEAD stats/team.gz: $head_status"
range=$(get -r 0-9 -o "$TMP/range" -w '%{http_code} %{size_download}' "${URL}stats/user.gz")
[ "$range" = "206 10" ] || fail "Range of stats/user.gz: $range"
say "served: tables.xml, user.gz, host.gz, team.gz (types, HEAD, Range)"

# check DIR WHAT: parses DIR's four files and compares them with the store.
check() {
    local dir=$1 what=$2
    sqlite3 -readonly -json "$proj/locus.db" \
        "SELECT 'user' AS t, id, total_credit, expavg_credit, expavg_time, IFNULL(team_id, 0) AS team FROM users
         WHERE total_credit > 0 UNION ALL
         SELECT 'host', id, total_credit, expavg_credit, expavg_time, user_id FROM hosts WHERE total_credit > 0
         UNION ALL SELECT 'team', id, total_credit, expavg_credit, expavg_time, founder_id FROM teams
         WHERE total_credit > 0" >"$TMP/store.json"
    sql "$proj" "SELECT domain_name FROM hosts" >"$TMP/private"
    echo "$email" >>"$TMP/private"
    python3 - "$dir" "$TMP/store.json" "$TMP/private" <<'PY' || fail "$what: the export does not match the store"
import gzip, json, math, sys, xml.etree.ElementTree as ET
d, store, private = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read().split()
tables = ET.parse(d + "/tables.xml").getroot()
now = float(tables.findtext("update_time"))
ok = True
def bad(msg):
    global ok
    ok = False
    print("stats_export:", msg, file=sys.stderr)
for kind, link in (("user", "teamid"), ("host", "userid"), ("team", "userid")):
    raw = gzip.open("%s/%s.gz" % (d, kind)).read()
    root = ET.fromstring(raw)
    # neither an e-mail address nor a host's name, in any element
    texts = {(e.text or "").strip() for e in root.iter()}
    if b"@" in raw or b"domain_name" in raw or texts & set(private): bad("%s.gz holds something private" % kind)
    want = {r["id"]: r for r in store if r["t"] == kind}
    got = {int(e.findtext("id")): e for e in root.findall(kind)}
    if set(got) != set(want): bad("%s ids %s, store %s" % (kind, sorted(got), sorted(want)))
    if int(tables.findtext("n%ss_total" % kind)) != len(want): bad("n%ss_total" % kind)
    for i, e in got.items():
        w = want.get(i)
        if not w: continue
        decayed = w["expavg_credit"] * math.exp(-max(0, now - w["expavg_time"]) * math.log(2) / (7 * 86400))
        if abs(float(e.findtext("total_credit")) - w["total_credit"]) > 1e-5: bad("%s %d total_credit" % (kind, i))
        if abs(float(e.findtext("expavg_credit")) - decayed) > 1e-5 * max(1, decayed): bad("%s %d expavg" % (kind, i))
        if float(e.findtext("expavg_time")) != now: bad("%s %d expavg_time" % (kind, i))
        if int(e.findtext(link) or 0) != w["team"]: bad("%s %d %s" % (kind, i, link))
        if kind == "user" and len(e.findtext("cpid") or "") != 32: bad("user %d cpid" % i)
        if kind == "host" and len(e.findtext("host_cpid") or "") != 32: bad("host %d host_cpid" % i)
users = [r for r in store if r["t"] == "user"]
if abs(float(tables.findtext("total_credit")) - sum(r["total_credit"] for r in users)) > 1e-4: bad("total_credit")
if [a.findtext("name") for a in tables.iter("application")] != ["worker"]: bad("applications")
sys.exit(0 if ok else 1)
PY
}
check "$TMP/http" "locusd's export"
zcat "$TMP/http/user.gz" | grep -o '<cpid>[0-9a-f]*</cpid>' | sort >"$TMP/cpids.http"
say "locusd's export matches the store: $(tr -d '\n' <"$TMP/http/tables.xml" | grep -o '<nusers_total>.*<total_credit>[0-9.]*')"

# ---- made by the CLI ----
"$LOCUS" stats export "$proj" --out "$TMP/cli" >"$TMP/cli.out" || fail "locus stats export failed"
grep -q "^exported $credited users, " "$TMP/cli.out" || fail "locus stats export said: $(cat "$TMP/cli.out")"
check "$TMP/cli" "the CLI's export"
zcat "$TMP/cli/user.gz" | grep -o '<cpid>[0-9a-f]*</cpid>' | sort >"$TMP/cpids.cli"
cmp -s "$TMP/cpids.http" "$TMP/cpids.cli" || fail "the CLI's cpids differ from locusd's"
[ "$(ls "$TMP" | grep -c '^cli\.new-')" = 0 ] || fail "a temporary folder was left beside the export: $(ls "$TMP")"
mkdir "$TMP/site" && echo mine >"$TMP/site/index.html"
if "$LOCUS" stats export "$proj" --out "$TMP/site" 2>"$TMP/err"; then fail "an export replaced a folder of other files"; fi
grep -q "not a statistics export folder" "$TMP/err" || fail "refusal message: $(cat "$TMP/err")"
[ "$(cat "$TMP/site/index.html")" = mine ] || fail "the foreign folder was changed"
say "locus stats export: the same figures and cpids; a foreign folder refused"

# ---- nothing else under stats/ ----
for path in "stats/" "stats" "stats/db_dump.xml" "stats/user_deleted.gz" "stats/USER.GZ" "stats/user.gz/" \
    "stats/./user.gz" "stats/..%2flocus.db" "stats/%2e%2e/locus.db" "stats/../config.xml" "stats/user.gz%00" \
    "stats/.%2e/keys/account_key" "stats/tables.xml.tmp"; do
    code=$(get -o /dev/null -w '%{http_code}' --path-as-is "${URL}$path")
    [ "$code" = 404 ] || fail "GET $path: $code, wanted 404"
done
code=$(get -o /dev/null -w '%{http_code}' -X POST --data x "${URL}stats/user.gz")
[ "$code" = 404 ] || fail "POST stats/user.gz: $code, wanted 404"
say "other names, path tricks, a listing and POST under stats/: 404"

t0=$(date +%s)
stop_locusd
[ $(( $(date +%s) - t0 )) -le 5 ] || fail "locusd took more than 5 s to stop"
[ -z "$(ls "$proj" | grep '^stats\.new-')" ] || fail "a temporary export folder was left: $(ls "$proj")"
say "locusd stopped at once"

# ---- recent credit a week old: half of it is exported ----
sqlite3 "$proj/locus.db" "UPDATE users SET expavg_time = expavg_time - 7 * 86400 WHERE total_credit > 0;
             UPDATE hosts SET expavg_time = expavg_time - 7 * 86400 WHERE total_credit > 0;
             UPDATE teams SET expavg_time = expavg_time - 7 * 86400 WHERE total_credit > 0"
"$LOCUS" stats export "$proj" >/dev/null || fail "locus stats export failed"
check "$proj/stats" "the export of week-old credit"
half=$(sqlite3 "$proj/locus.db" "SELECT printf('%.6f', expavg_credit / 2) FROM users WHERE id = 1")
zcat "$proj/stats/user.gz" | grep -q "<expavg_credit>$half" || fail "alice's recent credit is not half of the store's $half"
say "a week-old recent credit is exported halved ($half)"
say "PASS"
