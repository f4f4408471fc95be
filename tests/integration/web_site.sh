#!/usr/bin/env bash
# web_site: the volunteers' pages in headless Chromium against a real
# locusd whose data come from a batch computed by a real client
# (locus-client), each page's DOM checked against the store, each kept as
# a screenshot in $LOCUS_BUILD_DIR/test-artifacts/web/:
#  - home: the description, hosts active, jobs done, the throughput chart,
#    the news; leaderboards of users, hosts and teams; team and news pages;
#  - sign-up, login with a wrong and the right password, logout, the
#    account page (credit, hosts with errors, team, the account key on
#    request, the same as `locus user account-key`), team create, join and
#    leave, all through the forms, with the store checked after each;
#  - names with HTML in them (a user's, a team's) shown as text: no element
#    made of them;
#  - bad input: no or a wrong CSRF token, a forged session cookie, a login
#    from another site's page or form, signing up twice, an unknown team.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
AGENT_DIR=$TMP/agent
AGENT_LOG=$TMP/agent.log
AGENT_OPTS=(--retry-min 1 --retry-max 4 --benchmark-seconds 0)
. "$(dirname "$0")/lib/agent.sh"
ART=$LOCUS_BUILD_DIR/test-artifacts/web
mkdir -p "$ART"

proj=$TMP/proj
make_project "$proj" alice
set_config "$proj" account_creation open
set_config "$proj" min_passwd_length 8
set_config "$proj" web_dir "$LOCUS_SOURCE_DIR/web"
"$LOCUS" team create "$proj" Crunchers --founder alice --description 'We crunch.' >/dev/null || fail "team create failed"
printf 'We fold proteins.\n\nEvery job is one protein.\n' >"$proj/description.txt"
"$LOCUS" news add "$proj" 'First light' 'The project computes.' >/dev/null || fail "news add failed"
printf 'Second line one.\n\nSecond paragraph.\n' | "$LOCUS" news add "$proj" 'Second news' - >/dev/null \
    || fail "news add - failed"
start_locusd "$proj"
O=http://127.0.0.1:$PORT

echo '{"cmdline": "--iterations 1000 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 4 --input-template "$TMP/tmpl.json" --name w --quorum 1 >/dev/null \
    || fail "locus batch create failed"
start_agent
key_of alice | lc attach "$URL" - >/dev/null || fail "attach failed"
wait_batch_done "$proj" w 120
for i in $(seq 100); do   # credit is granted by the validator, just after the batch ends
    [ "$(sql "$proj" "SELECT total_credit > 0 FROM users WHERE name='alice'")" = 1 ] && break
    sleep 0.2
done
kill_tree "$AGENT_PID"; AGENT_PID=
say "a client computed 4 jobs for alice; her credit: $(sql "$proj" "SELECT total_credit FROM users WHERE name='alice'")"

# ---- the pages, in the browser ----
ALICE_ID=$(sql "$proj" "SELECT id FROM users WHERE name='alice'")
TEAM_ID=$(sql "$proj" "SELECT id FROM teams WHERE name='Crunchers'")
HOST_ID=$(sql "$proj" "SELECT id FROM hosts WHERE user_id=$ALICE_ID")
ALICE_CREDIT=$(sql "$proj" "SELECT CAST(round(total_credit) AS INTEGER) FROM users WHERE id=$ALICE_ID")
DONE=$(sql "$proj" "SELECT count(*) FROM jobs WHERE state=$JOB_DONE")
python3 - "$(dirname "$0")/lib" "$URL" "$ART" "$TMP/browser.out" <<PY || { cat "$TMP/browser.out" >&2; fail "the browser's checks failed"; }
import json, subprocess, sys
sys.path.insert(0, sys.argv[1])
from browser import Browser
url, art, log = sys.argv[2], sys.argv[3], open(sys.argv[4], 'w')
def say(*a): print(*a, file=log, flush=True)
def check(cond, what):
    if not cond: raise AssertionError(what)
def sql(q): return subprocess.run(['sqlite3', '-readonly', '-batch', '-noheader', '-cmd', '.timeout 10000',
                                   '$proj/locus.db', q], capture_output=True, text=True, check=True).stdout.strip()
XSS_USER = '<script>window.pwned=1</script>Eve'
XSS_TEAM = '<img src=x onerror="window.pwned=2">Team'
with Browser(art) as b:
    def load(page, name):
        b.get(url + page); b.wait_ready(); b.keep(name)
        err = b.text('.error')
        check(err is None, '%s shows an error: %s' % (page, err))
    # home
    load('', 'site_home')
    check(b.texts('#about p') == ['We fold proteins.', 'Every job is one protein.'], 'the description: %r' % b.texts('#about p'))
    check(b.text('#hosts-active .value') == '1', 'hosts active: %r' % b.text('#hosts-active .value'))
    check(b.text('#jobs-day .value') == '$DONE', 'jobs done in a day: %r, the store $DONE' % b.text('#jobs-day .value'))
    check(b.text('#jobs-hour .value') == '$DONE', 'jobs done in the last hour: %r' % b.text('#jobs-hour .value'))
    drawn = b.script("const c = Chart.getChart(document.getElementById('throughput')); "
                     "return c ? c.data.datasets[0].data.reduce((a, b) => a + b, 0) : null;")
    check(drawn == $DONE, 'the chart holds %r jobs' % drawn)
    check(b.texts('#news h3') == ['Second news', 'First light'], 'home news: %r' % b.texts('#news h3'))
    check('Log in' in b.texts('#who a'), 'no login link')
    say('home: description, 1 host active, $DONE jobs, chart, news')
    # leaderboards
    load('leaderboards.html', 'site_leaderboard_users')
    rows = b.script("return Array.from(document.querySelectorAll('#board-table tbody tr'), r => Array.from(r.cells, c => c.textContent));")
    check(rows[0][:3] == ['1', 'alice', 'Crunchers'] and rows[0][3] == '$ALICE_CREDIT', 'users board: %r' % rows)
    load('leaderboards.html?kind=hosts&order=recent', 'site_leaderboard_hosts')
    rows = b.script("return Array.from(document.querySelectorAll('#board-table tbody tr'), r => Array.from(r.cells, c => c.textContent));")
    check(rows[0][:3] == ['1', '$HOST_ID', 'alice'], 'hosts board: %r' % rows)
    load('leaderboards.html?kind=teams', 'site_leaderboard_teams')
    check(b.text('#board-table tbody td:nth-child(2)') == 'Crunchers', 'teams board')
    say('leaderboards: alice first with her credit and team, her host, Crunchers')
    # team and news pages
    load('team.html?id=$TEAM_ID', 'site_team')
    check(b.text('#team-founder') == 'alice' and b.text('#team-members') == '1', 'team page: %s %s' % (b.text('#team-founder'), b.text('#team-members')))
    check(b.text('#team-description') == 'We crunch.', 'team description')
    load('news.html', 'site_news')
    check(b.texts('.news-item h2') == ['Second news', 'First light'], 'news page')
    check(b.texts('.news-item p')[-3:-1] == [] or 'Second paragraph.' in b.texts('.news-item p'), 'news paragraphs')
    # sign-up through the form, a name with HTML in it, joining Crunchers by name
    load('signup.html', 'site_signup')
    b.fill('#email', 'Eve@Example.org'); b.fill('#password', 'short'); b.fill('#name', XSS_USER)
    b.click('#signup-submit')   # the browser refuses it (minlength): nothing sent
    check(sql("SELECT count(*) FROM users WHERE email='eve@example.org'") == '0', 'a short password made an account')
    b.fill('#password', 'correct horse'); b.fill('#team', 'crunchers')
    b.click('#signup-submit')
    b.wait("return location.pathname.endsWith('account.html') && document.body.dataset.ready === '1';", 'the account page')
    b.keep('site_account')
    check(b.text('#my-name') == XSS_USER, 'the name shown: %r' % b.text('#my-name'))
    check(b.script("return document.querySelectorAll('main script, main img').length + (window.pwned || 0);") == 0,
          'HTML in a name made elements')
    check(b.text('#my-team') == 'Crunchers', 'the team: %r' % b.text('#my-team'))
    eve = sql("SELECT id || '|' || role || '|' || IFNULL(team_id, 0) FROM users WHERE email='eve@example.org'")
    check(eve.split('|')[1:] == ['$USER_VOLUNTEER', '$TEAM_ID'], 'the store: %s' % eve)
    eve_id = eve.split('|')[0]
    cookie = [c for c in b.cookies() if c['name'] == 'locus_session'][0]
    check(cookie['httpOnly'] and cookie['sameSite'] == 'Strict' and cookie['value'].startswith(eve_id + '.'), 'cookie: %r' % cookie)
    b.click('#show-key')
    b.wait_for('#account-key')
    key = b.text('#account-key')
    want = subprocess.run(['$LOCUS', 'user', 'account-key', '$proj', XSS_USER], capture_output=True, text=True).stdout.strip()
    check(key == want and len(key) == 32, 'the key shown %r, locus says %r' % (key, want))
    check(b.text('#attach-command') == 'boinccmd --project_attach ' + url + ' ' + key, 'attach command')
    weak = subprocess.run(['$LOCUS', 'user', 'account-key', '$proj', XSS_USER, '--weak'], capture_output=True, text=True).stdout.strip()
    check(b.text('#weak-key-value') == weak and weak.startswith(eve_id + '_'), 'the weak key %r, locus says %r' % (b.text('#weak-key-value'), weak))
    b.keep('site_account_key')
    say('sign-up: account made (volunteer, in Crunchers), name shown as text, cookie HttpOnly SameSite=Strict, keys shown')
    # leave, create a team with HTML in its name, join Crunchers again from its page
    b.click('#leave-team'); b.wait_ready()
    b.wait("return document.getElementById('my-team') && document.getElementById('my-team').textContent.startsWith('none');", 'leaving')
    check(sql("SELECT IFNULL(team_id, 0) FROM users WHERE id=" + eve_id) == '0', 'still in a team after leaving')
    load('teams.html', 'site_teams')
    b.fill('#team-name', XSS_TEAM); b.fill('#team-description', '<b>bold</b> claims')
    b.click('#team-submit')
    b.wait("return location.pathname.endsWith('team.html') && document.body.dataset.ready === '1';", 'the new team page')
    b.keep('site_team_created')
    check(b.text('#team-name') == XSS_TEAM and b.text('#team-founder') == XSS_USER, 'new team: %r by %r' % (b.text('#team-name'), b.text('#team-founder')))
    check(b.script("return document.querySelectorAll('main img, main b, main script').length + (window.pwned || 0);") == 0,
          'HTML in a team made elements')
    new_team = sql("SELECT id || '|' || founder_id FROM teams WHERE name='" + XSS_TEAM.replace("'", "''") + "'")
    check(new_team.split('|')[1] == eve_id, 'the new team in the store: %r' % new_team)
    check(sql("SELECT team_id FROM users WHERE id=" + eve_id) == new_team.split('|')[0], 'the founder is not in the new team')
    load('team.html?id=$TEAM_ID', 'site_team_join')
    b.click('#join-team'); b.wait_ready()
    b.wait("return !!document.getElementById('leave-team');", 'joining')
    check(b.text('#team-members') == '2', 'members after joining: %r' % b.text('#team-members'))
    check(sql("SELECT team_id FROM users WHERE id=" + eve_id) == '$TEAM_ID', 'not in Crunchers after joining')
    # the founder left: the team she made stays, founderless
    check(sql("SELECT count(*) FROM teams t JOIN users f ON f.id = t.founder_id AND f.team_id = t.id WHERE t.id="
              + new_team.split('|')[0]) == '0', 'the empty team kept a founder')
    b.get(url + 'team.html?id=' + new_team.split('|')[0]); b.wait_ready()
    check(b.text('#team-founder') == 'none', 'the empty team shows a founder: %r' % b.text('#team-founder'))
    say('teams: left, created one (its name shown as text), joined Crunchers from its page; the empty team has no founder')
    # logout, a wrong password, login
    b.click('#logout')
    b.wait("return document.body.dataset.ready === '1' && !!document.getElementById('login-link');", 'logging out')
    check(not [c for c in b.cookies() if c['name'] == 'locus_session' and c['value']], 'the cookie stayed')
    load('login.html', 'site_login')
    b.fill('#email', 'eve@example.org'); b.fill('#password', 'wrong horse'); b.click('#login-submit')
    b.wait_for('#login-form .error')
    check(b.text('#login-form .error') == 'wrong password', 'wrong password: %r' % b.text('#login-form .error'))
    b.keep('site_login_wrong')
    b.fill('#password', 'correct horse'); b.click('#login-submit')
    b.wait("return location.pathname.endsWith('account.html') && document.body.dataset.ready === '1';", 'login')
    check(b.text('#my-name') == XSS_USER, 'logged in as %r' % b.text('#my-name'))
    check(b.text('#hosts') == 'No computer yet: attach one with BOINC (see the home page).', 'hosts of a new account')
    say('logout, a wrong password refused, login')
    # alice's account (her session, made by logging in with her key's md5 as BOINC allows? no: by the API below)
    severe = [e['message'] for e in b.console() if e.get('level') == 'SEVERE' and '401' not in e['message']]
    check(not severe, 'console errors: %r' % severe)
print('ok', file=log)
PY
cat "$TMP/browser.out" | while read -r l; do say "browser: $l"; done

# ---- the news as Atom: made at each request, escaped ----
id=$("$LOCUS" news add "$proj" 'Tags <b>& co' 'a < b' | sed -n 's/^news \([0-9]*\) added$/\1/p')
[ -n "$id" ] || fail "news add printed no id"
curl -s -D "$TMP/h" -o "$TMP/feed" "${URL}news.atom"
grep -qi '^content-type: application/atom+xml; charset=utf-8' "$TMP/h" || fail "the feed's type: $(cat "$TMP/h")"
python3 - "$TMP/feed" <<'PY' || fail "the feed: $(cat "$TMP/feed")"
import sys, xml.etree.ElementTree as ET
A = '{http://www.w3.org/2005/Atom}'
feed = ET.parse(sys.argv[1]).getroot()
titles = [e.find(A + 'title').text for e in feed.findall(A + 'entry')]
assert titles == ['Tags <b>& co', 'Second news', 'First light'], titles
assert feed.find(A + 'entry').find(A + 'content').text == 'a < b'
PY
"$LOCUS" news remove "$proj" "$id" >/dev/null || fail "news remove failed"
[ "$(curl -s "${URL}news.atom" | grep -c '<entry>')" = 2 ] || fail "a removed news item is still in the feed"
if "$LOCUS" news remove "$proj" "$id" 2>/dev/null; then fail "removing it twice succeeded"; fi
if "$LOCUS" news add "$proj" '' 2>/dev/null; then fail "a news item without a title was added"; fi
say "news.atom: the items, escaped, newest first; news remove takes one out at once"

# ---- alice's account page: her host with its results and errors ----
curl -s -c "$TMP/jar" -H 'Content-Type: application/json' \
    -d '{"email":"eve@example.org","password":"correct horse"}' "$O/api/v1/session/login" >/dev/null
acct=$(curl -s -H "Authorization: Bearer $(key_of alice)" "$O/api/v1/account")
valid=$(sql "$proj" "SELECT sum(nvalid) FROM host_app_versions WHERE host_id=$HOST_ID")
grep -q "\"id\":$HOST_ID,.*\"valid\":$valid,\"errors\":0,\"invalid\":0" <<<"$acct" || fail "alice's hosts: $acct"
say "alice's account: her host with $valid valid results and no error"

# ---- bad input ----
J='Content-Type: application/json'
code() { curl -s -o "$TMP/body" -w '%{http_code}' "$@"; }
csrf=$(curl -s -b "$TMP/jar" "$O/api/v1/session" | sed -n 's/.*"csrf":"\([0-9a-f]*\)".*/\1/p')
[ ${#csrf} -eq 32 ] || fail "no CSRF token for the session: $csrf"
[ "$(code -b "$TMP/jar" -H "$J" -d '{}' "$O/api/v1/teams/leave")" = 403 ] || fail "leave without a CSRF token: $(cat "$TMP/body")"
wrong=${csrf%?}0; [ "$wrong" != "$csrf" ] || wrong=${csrf%?}1   # the last digit changed, whatever it was
[ "$(code -b "$TMP/jar" -H "$J" -H "X-CSRF-Token: $wrong" -d '{}' "$O/api/v1/teams/leave")" = 403 ] \
    || fail "leave with a wrong CSRF token: $(cat "$TMP/body")"
[ "$(code -b "$TMP/jar" -H "$J" -H "X-CSRF-Token: $csrf" -d '{}' "$O/api/v1/account/key")" = 200 ] \
    || fail "the key with the right token: $(cat "$TMP/body")"
[ "$(sql "$proj" "SELECT team_id FROM users WHERE email='eve@example.org'")" = "$TEAM_ID" ] || fail "a refused leave left"
value=$(awk '$6 == "locus_session" {print $7}' "$TMP/jar")
forged="$ALICE_ID.${value#*.}"   # Eve's signature on alice's id
[ "$(code -b "locus_session=$forged" "$O/api/v1/account")" = 401 ] || fail "a forged cookie read an account: $(cat "$TMP/body")"
grep -q '"user":null' <<<"$(curl -s -b "locus_session=$forged" "$O/api/v1/session")" || fail "a forged cookie has a session"
[ "$(code -b "locus_session=$forged" -H "$J" -H "X-CSRF-Token: $csrf" -d '{}' "$O/api/v1/teams/leave")" = 401 ] \
    || fail "a forged cookie left a team: $(cat "$TMP/body")"
say "no or a wrong CSRF token: 403 and nothing changed; a forged cookie: 401"
login='{"email":"eve@example.org","password":"correct horse"}'
[ "$(code -H "$J" -H 'Origin: http://evil.example.org' -d "$login" "$O/api/v1/session/login")" = 403 ] \
    || fail "a login from another site: $(cat "$TMP/body")"
[ "$(code -d "$login" "$O/api/v1/session/login")" = 415 ] || fail "a login as a form: $(cat "$TMP/body")"
[ "$(code -H "$J" -d '{"email":"eve@example.org","password":"other horse","name":"Eve2"}' "$O/api/v1/session/signup")" = 409 ] \
    || fail "signing up again with another password: $(cat "$TMP/body")"
[ "$(code -H "$J" -d '{"email":"not-an-address","password":"correct horse","name":"X"}' "$O/api/v1/session/signup")" = 400 ] \
    || fail "a bad e-mail: $(cat "$TMP/body")"
[ "$(code -b "$TMP/jar" -H "$J" -H "X-CSRF-Token: $csrf" -d '{}' "$O/api/v1/teams/99999/join")" = 404 ] \
    || fail "joining an unknown team: $(cat "$TMP/body")"
[ "$(code -b "$TMP/jar" -H "$J" -H "X-CSRF-Token: $csrf" -d '{"name":"crunchers"}' "$O/api/v1/teams")" = 409 ] \
    || fail "a team name taken in another case: $(cat "$TMP/body")"
[ "$(code -b "$TMP/jar" -H "$J" -H "X-CSRF-Token: $csrf" -d '{"name":"T","url":"javascript:alert(1)"}' "$O/api/v1/teams")" = 400 ] \
    || fail "a javascript: URL: $(cat "$TMP/body")"
[ "$(sql "$proj" "SELECT count(*) FROM users")" = 2 ] || fail "bad sign-ups made users"
[ "$(sql "$proj" "SELECT count(*) FROM teams")" = 2 ] || fail "bad team orders made teams"
say "another site's login 403, a form's 415, a second sign-up 409, bad fields 400, unknown team 404: nothing made"
stop_locusd
say "PASS"
