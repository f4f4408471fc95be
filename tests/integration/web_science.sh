#!/usr/bin/env bash
# web_science: the scientists' and operators' pages (docs/web.md) against a
# real locusd whose batch two real locus-clients of bob's computed: batch
# sci of alice's (who signed up on the site, made a submitter by the
# operator) where sci_1 fails with an error that holds HTML (its stderr
# names a folder called "<b>bold</b>&amp;"), batch other of carl's.
#  - GET batches/B/progress: the series of jobs done and failed per hour
#    sums to the store's counts, with the batch's figures and ETA; bad
#    paths 404; app_versions and hosts: success and error counts against
#    the store (instances, host_app_versions), public fields without a
#    key, owners and host names for an admin's key only;
#  - headless Chromium loads every page: batches (progress bar and counts),
#    batch (figures against the store, both charts drawn), app versions,
#    hosts, campaigns; logged out, no failure and no campaign is shown;
#    alice logs in: her batch page shows the failure's stderr as text (the
#    HTML in it is not parsed) and looks a job up by its number, carl's
#    batch page shows her no failure, her campaign pages show the store's
#    figures; screenshots and DOMs are kept;
#  - a campaign of alice's on two real Slurm clusters (as root; said and
#    skipped otherwise): alpha runs its jobs, beta's exec_file is missing,
#    so an event blacklists beta; GET campaigns/ID and its events show the
#    per cluster successes, the blacklist and the event's message as the
#    store has them.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
AGENT_DIR=$TMP/agent
AGENT_LOG=$TMP/agent.log
AGENT_OPTS=(--max-cpus 1 --retry-min 1 --retry-max 4 --min-queue 60 --benchmark-seconds 0.5)
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/slurm.sh"
. "$(dirname "$0")/lib/clusters.sh"
ART=$LOCUS_BUILD_DIR/test-artifacts/web
mkdir -p "$ART"

proj=$TMP/proj
make_project "$proj" bob carl dan
KEY_C=$(submit_key_of "$proj" carl) KEY_D=$(submit_key_of "$proj" dan)
"$LOCUS" user role "$proj" dan admin || fail "locus user role dan admin failed"
set_config "$proj" web_dir "$LOCUS_SOURCE_DIR/web"
set_config "$proj" end_of_batch_replication 0
set_config "$proj" account_creation open
# the campaign's clusters: two real Slurm clusters, where this machine can run them
CLUSTERS=0
if [ "$(id -u)" != 0 ]; then
    say "SKIPPED the campaign pages' data: Slurm's daemons and the jobs' users need root"
elif ! pa=$(free_ports 1) || ! slurm_cluster_up alpha "$pa" 1 4; then
    say "SKIPPED the campaign pages' data: no Slurm cluster runs here ($(slurm_local_missing 2>/dev/null))"
else
    pb=$(free_ports 1)
    slurm_cluster_up beta "$pb" 1 2 || fail "Slurm cluster beta did not come up"
    CLUSTERS=1
    chmod 755 "$TMP"             # the jobs' user walks through it
    make_test_users
    set_config "$proj" grid_cycle_period 1
    for c in alpha beta; do
        "$LOCUS" cluster add "$proj" "$c" --driver slurm --conf "${SLURM_CONF_OF[$c]}" --partition normal \
            >/dev/null || fail "locus cluster add $c failed"
    done
fi
# the worker reads its input folder and dies naming it: the error holds HTML
BAD='<b>bold</b>&amp;'
mkdir -p "$TMP/in/$BAD"
start_locusd "$proj"
# alice signs up on the site; the operator makes her a submitter
code=$(curl -s -o "$TMP/signup" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d '{"email": "alice@example.org", "password": "correct horse", "name": "alice"}' "http://127.0.0.1:$PORT/api/v1/session/signup")
[ "$code" = 200 ] || fail "alice's sign-up: HTTP $code $(cat "$TMP/signup")"
KEY_A=$(submit_key_of "$proj" alice)
[ $CLUSTERS = 0 ] || "$LOCUS" user account "$proj" alice locusa || fail "locus user account alice failed"
cat >"$TMP/jobs.jsonl" <<JOBS
{"cmdline": "--iterations 1000 --seed 1"}
{"cmdline": "--iterations 1000 --in $TMP/in/$BAD"}
{"cmdline": "--iterations 1000 --seed 2"}
{"cmdline": "--iterations 1000 --seed 3"}
JOBS
"$LOCUS" batch create "$proj" --app worker --jobs "$TMP/jobs.jsonl" --name sci --user alice --max-error-instances 1 \
    >/dev/null || fail "locus batch create sci failed"
echo '{"cmdline": "--iterations 1000 --fail-code 5"}' >"$TMP/other.json"
"$LOCUS" batch create "$proj" --app worker --count 1 --input-template "$TMP/other.json" --name other --user carl \
    --max-error-instances 1 >/dev/null || fail "locus batch create other failed"
start_agent
key_of bob | lc attach "$URL" - || afail "attach failed"
start_second_agent "$(key_of bob)"

# until every job of both batches ended and nothing is out
got=
for i in $(seq 240); do
    got=$(sql "$proj" "SELECT count(*) FROM jobs WHERE state NOT IN ($JOB_DONE, $JOB_FAILED)")" "$(
          sql "$proj" "SELECT count(*) FROM instances WHERE state = $INST_IN_PROGRESS")
    [ "$got" = "0 0" ] && break
    sleep 0.5
done
[ "$got" = "0 0" ] || afail "jobs not ended, instances out: '$got' after 120 s"
[ "$(sql "$proj" "SELECT state FROM jobs WHERE name = 'sci_1'")" = "$JOB_FAILED" ] || fail "sci_1 did not fail"
sql "$proj" "SELECT stderr FROM instances i JOIN jobs j ON j.id = i.job_id WHERE j.name = 'sci_1'" \
    | grep -qF "cannot read input: $TMP/in/$BAD" || fail "sci_1's stderr: $(sql "$proj" "SELECT stderr FROM instances")"
say "sci: 3 done, sci_1 failed with HTML in its stderr; other: failed"

B=$TMP/body   # api_get's answer
# jq_ EXPR [ARG]: EXPR of the answer d (python), ARG as sys.argv[2]
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$B" "${@:2}"; }

# ---- progress ----
st=$(api_get batches/sci/progress)
[ "$st" = 200 ] || fail "GET batches/sci/progress: HTTP $st $(cat "$B")"
DONE=$(sql "$proj" "SELECT count(*) FROM jobs j JOIN batches b ON b.id = j.batch_id WHERE b.name = 'sci' AND j.state = $JOB_DONE")
[ "$DONE" = 3 ] || fail "sci has $DONE jobs done in the store"
[ "$(jq_ "sum(d['done']), sum(d['failed']), d['batch']['done'], d['batch']['failed'], d['step_s']")" \
  = "3 1 3 1 3600" ] || fail "progress: $(cat "$B")"
# from the hour the batch was made in (whole hours: the store counts by the clock's), one period per hour to its end
[ "$(jq_ "d['start'] == d['batch']['create_time'] - d['batch']['create_time'] % 3600
          and len(d['done']) == (d['batch']['done_time'] - d['start']) // 3600 + 1
          and d['batch']['eta_s'] == 0 and d['batch']['name'] == 'sci'")" = True ] \
    || fail "progress's start and ETA: $(cat "$B")"
for path in batches/nosuch/progress batches/sci/x/progress batches//progress; do
    st=$(api_get "$path")
    [ "$st" = 404 ] || fail "GET $path: HTTP $st $(cat "$B")"
done
say "GET batches/sci/progress: 3 done, 1 failed in the hour's series, ETA 0"

# ---- app versions ----
st=$(api_get app_versions)
[ "$st" = 200 ] || fail "GET app_versions: HTTP $st $(cat "$B")"
IFS='|' read -r OK BAD_N <<<"$(sql "$proj" "SELECT sum(outcome = $OUTCOME_SUCCESS),
    sum(outcome NOT IN ($OUTCOME_SUCCESS, $OUTCOME_DIDNT_NEED)) FROM instances WHERE state = $INST_OVER")"
[ "$(jq_ "sum(v['success'] for v in d['app_versions']), sum(v['error'] for v in d['app_versions']), d['window_s']")" \
  = "$OK $BAD_N 86400" ] || fail "app_versions: expected $OK successes, $BAD_N errors: $(cat "$B")"
[ "$BAD_N" -ge 2 ] || fail "only $BAD_N instances in error"
[ "$(jq_ "[round(v['error_rate'], 6) for v in d['app_versions'] if v['success'] + v['error']]")" \
  = "[$(python3 -c "print(round($BAD_N / ($OK + $BAD_N), 6))")]" ] || fail "app_versions' error rate: $(cat "$B")"
st=$(api_get app_versions/hours/1)
[ "$st" = 200 ] && [ "$(jq_ "d['window_s']")" = 3600 ] || fail "GET app_versions/hours/1: $st $(cat "$B")"
for path in app_versions/hours/0 app_versions/hours/-1 app_versions/hours/8785 app_versions/hours/1x \
            app_versions/days/1 app_versionsx; do
    st=$(api_get "$path")
    case $path in
        app_versionsx) [ "$st" = 404 ] || fail "GET $path: HTTP $st" ;;
        *) [ "$st" = 404 ] && grep -q "app_versions/hours/H" "$B" || fail "GET $path: HTTP $st $(cat "$B")" ;;
    esac
done
say "GET app_versions: successes and errors as in the store, windows checked"

# ---- hosts ----
st=$(api_get hosts)
[ "$st" = 200 ] || fail "GET hosts: HTTP $st $(cat "$B")"
HERR=$(sql "$proj" "SELECT sum(nerror) FROM host_app_versions")
[ "$(jq_ "d['total'], sum(h['errors'] for h in d['hosts']), d['details'], any('domain_name' in h or 'user' in h for h in d['hosts'])")" \
  = "2 $HERR False False" ] || fail "GET hosts (public): $HERR errors expected: $(cat "$B")"
HID=$(jq_ "d['hosts'][0]['id']")
st=$(api_get hosts "$KEY_D")
DOM=$(sql "$proj" "SELECT domain_name FROM hosts WHERE id = $HID")
[ "$st" = 200 ] && [ "$(jq_ "d['details'], d['hosts'][0]['user'], d['hosts'][0]['domain_name']")" = "True bob $DOM" ] \
    || fail "GET hosts (admin): $st $(cat "$B")"
st=$(api_get hosts "$KEY_A")
[ "$st" = 200 ] && [ "$(jq_ "d['details']")" = False ] || fail "GET hosts (alice, a submitter): $st $(cat "$B")"
st=$(api_get "hosts/$HID")
[ "$st" = 200 ] && [ "$(jq_ "d['id'], 'domain_name' in d")" = "$HID False" ] || fail "GET hosts/$HID: $st $(cat "$B")"
for path in hosts/999 hosts/0 hosts/1x hosts/-1 "hosts/$HID/x"; do
    st=$(api_get "$path")
    [ "$st" = 404 ] || fail "GET $path: HTTP $st $(cat "$B")"
done
st=$(api_get hosts nosuchkey)
[ "$st" = 401 ] || fail "GET hosts with an unknown key: HTTP $st"
say "GET hosts: errors as in host_app_versions; owner and host name for admins only"

# ---- a campaign: per cluster progress, events, blacklists ----
CAMP=
if [ $CLUSTERS = 1 ]; then
    # jobs of 3 s: a cluster whose successes take under 2 s is taken for a sink
    WORK=$TMP/work BIN=$TMP/bin
    mkdir -p "$WORK" "$BIN"
    chmod 777 "$WORK"
    printf '#!/bin/bash\nsleep 3\necho "$1" >"$LOCUS_WORKDIR/out.$1"\n' >"$BIN/job.sh"
    chmod 755 "$BIN" "$BIN/job.sh"
    cat >"$TMP/scan.json" <<JSON
{"name": "scan", "exec_directory": "$WORK", "exec_file": "$BIN/job.sh", "walltime": 300,
 "params": ["p0", "p1", "p2", "p3", "p4", "p5"],
 "clusters": {"alpha": {}, "beta": {"exec_file": "$BIN/missing.sh"}}}
JSON
    CAMP=$("$LOCUS" campaign submit "$proj" "$TMP/scan.json" --user alice 2>"$TMP/err") \
        || fail "locus campaign submit failed: $(cat "$TMP/err")"
    CAMP=$(grep -o '[0-9]*' <<<"$CAMP" | head -n 1)
    got=
    for i in $(seq 240); do
        got=$(sql "$proj" "SELECT count(*) FROM grid_jobs WHERE campaign_id = $CAMP AND state = $GJ_TERMINATED")" "$(
              sql "$proj" "SELECT count(*) FROM grid_events WHERE campaign_id = $CAMP")
        [ "${got% *}" = 6 ] && [ "${got#* }" -ge 1 ] && break
        sleep 0.5
    done
    [ "${got% *}" = 6 ] && [ "${got#* }" -ge 1 ] || fail "campaign $CAMP: jobs terminated and events '$got' after 120 s: $(
        sql "$proj" "SELECT cluster_id, message FROM grid_events")"
    BETA=$(sql "$proj" "SELECT id FROM clusters WHERE name = 'beta'")
    IFS='|' read -r EV EXIT MSG <<<"$(sql "$proj" "SELECT id, exit_code, message FROM grid_events
        WHERE campaign_id = $CAMP AND cluster_id = $BETA ORDER BY id LIMIT 1")"
    [ -n "$EV" ] && [ -n "$MSG" ] || fail "no event with a message on beta"
    st=$(api_get "campaigns/$CAMP" "$KEY_A")
    [ "$st" = 200 ] || fail "GET campaigns/$CAMP: HTTP $st $(cat "$B")"
    OK_ALPHA=$(sql "$proj" "SELECT count(*) FROM grid_jobs j JOIN grid_copies c ON c.id = j.success_copy
        JOIN clusters k ON k.id = c.cluster_id WHERE j.campaign_id = $CAMP AND k.name = 'alpha'")
    [ "$OK_ALPHA" = 6 ] || fail "alpha ran $OK_ALPHA of the 6 jobs"
    [ "$(jq_ "[(k['cluster'], k['successes'], k['blacklisted'], k.get('blacklist', {}).get('event_id')) for k in d['clusters']]")" \
      = "[('alpha', $OK_ALPHA, False, None), ('beta', 0, True, $EV)]" ] || fail "campaign $CAMP's clusters: $(cat "$B")"
    st=$(api_get "campaigns/$CAMP/events" "$KEY_A")
    [ "$st" = 200 ] && [ "$(jq_ "[e['message'] for e in d['events'] if e['id'] == $EV] == [sys.argv[2]]" "$MSG")" = True ] \
        || fail "campaign $CAMP's events: $(cat "$B")"
    st=$(api_get "campaigns/$CAMP" "$KEY_C")
    [ "$st" = 404 ] || fail "carl's GET campaigns/$CAMP: HTTP $st"
    say "campaign $CAMP: 6 jobs on alpha, beta blacklisted by event $EV ($MSG)"
fi

# ---- the pages in Chromium ----
export JOB_DONE JOB_FAILED INST_OVER OUTCOME_SUCCESS OUTCOME_DIDNT_NEED   # the store's codes, for the SQL below
python3 - "$(dirname "$0")/lib" "$URL" "$ART" "$BAD" "$CAMP" "$proj/locus.db" <<'PY' || fail "the browser's checks failed"
import os, sqlite3, sys
sys.path.insert(0, sys.argv[1])
from browser import Browser
url, art, bad, camp, db = sys.argv[2:7]
def sql(q):   # {NAME}: the store's code of that name (lib/codes.sh)
    with sqlite3.connect(db, timeout=10) as c:
        return c.execute(q.format(**os.environ)).fetchall()
def no_errors(b):
    assert not b.texts('p.error'), b.texts('p.error')
with Browser(art) as b:
    # ---- logged out: open figures, no failure, no campaign ----
    b.get(url + 'batches.html'); b.wait_ready(); no_errors(b)
    names = b.texts('a.batch-link')
    assert names == ['sci', 'other'], names
    rows = b.script("return [...document.querySelectorAll('table.list tbody tr')].map(r => r.innerText)")
    assert '4 / 4' in rows[0] and '1 / 1' in rows[1], rows
    assert b.script("return document.querySelector('progress').value") == 4, 'the progress bar'
    assert 'Batches' in b.texts('header.site nav a')
    b.keep('science-batches')

    b.get(url + 'batch.html?b=sci'); b.wait_ready(); no_errors(b)
    assert b.text('h1') == 'Batch sci'
    done, failed = sql("SELECT sum(state = {JOB_DONE}), sum(state = {JOB_FAILED}) FROM jobs WHERE batch_id = 1")[0]
    figs = {k: b.text('#fig-' + k) for k in ('jobs', 'done', 'failed', 'active', 'eta')}
    assert figs == {'jobs': '4', 'done': str(done), 'failed': str(failed), 'active': '0', 'eta': 'finished'}, figs
    bars = b.script("return Chart.getChart('chart-throughput').data.datasets.map(d => d.data.reduce((a, x) => a + x, 0))")
    assert bars == [done, failed], bars
    assert b.script("return Chart.getChart('chart-eta').getDatasetMeta(0).data.length") >= 1
    assert 'owner only' in b.text('#failures'), b.text('#failures')
    assert 'cannot read input' not in b.dom()
    b.keep('science-batch-logged-out')

    b.get(url + 'app_versions.html'); b.wait_ready(); no_errors(b)
    ok, err = sql("SELECT sum(outcome = {OUTCOME_SUCCESS}), sum(outcome NOT IN ({OUTCOME_SUCCESS}, {OUTCOME_DIDNT_NEED}))"
                  " FROM instances WHERE state = {INST_OVER}")[0]
    cells = b.script("return [...document.querySelectorAll('main table tbody tr')][0].innerText.split('\\t')")
    assert cells[0] == 'worker' and cells[4:6] == [str(ok), str(err)], cells
    b.keep('science-app-versions')

    b.get(url + 'hosts.html'); b.wait_ready(); no_errors(b)
    assert b.text('#hosts-total').startswith('2 hosts'), b.text('#hosts-total')
    assert 'Owner' not in b.texts('main th'), b.texts('main th')
    b.keep('science-hosts')

    b.get(url + 'campaigns.html'); b.wait_ready()
    assert 'owner only' in b.text('main'), b.text('main')

    # ---- alice logs in ----
    b.get(url + 'login.html'); b.wait_ready()
    b.fill('#email', 'alice@example.org'); b.fill('#password', 'correct horse'); b.click('#login-submit')
    b.wait("return location.pathname.endsWith('account.html') && document.body.dataset.ready === '1';", 'login')
    b.get(url + 'batch.html?b=sci'); b.wait_ready(); no_errors(b)
    pre = b.texts('#failures pre.stderr')
    assert len(pre) == 1 and ('cannot read input: ' in pre[0]) and pre[0].rstrip().endswith(bad), pre
    # shown as text: no element made of it
    assert b.script("return document.querySelectorAll('#failures pre.stderr *').length") == 0
    assert '1 jobs failed (too many errors: 1)' in b.text('#failures'), b.text('#failures')
    b.keep('science-batch')
    b.get(url + 'batch.html?b=sci&job=1'); b.wait_ready(); no_errors(b)
    assert b.text('#job-state') == 'failed', b.text('#job')
    insts = sql("SELECT count(*) FROM instances WHERE job_id = (SELECT id FROM jobs WHERE name = 'sci_1')")[0][0]
    assert len(b.texts('#job tbody tr')) == insts, b.text('#job')
    assert all(t.rstrip().endswith(bad) for t in b.texts('#job pre.stderr')), b.texts('#job pre.stderr')
    b.keep('science-batch-job')
    # carl's batch: no failure shown to alice
    b.get(url + 'batch.html?b=other'); b.wait_ready(); no_errors(b)
    assert 'owner only' in b.text('#failures') and 'failing with code 5' not in b.dom(), b.text('#failures')
    b.keep('science-batch-of-another')

    b.get(url + 'campaigns.html'); b.wait_ready(); no_errors(b)
    if camp:
        assert b.texts('a.campaign-link') == ['scan'], b.texts('a.campaign-link')
        b.get(url + 'campaign.html?id=' + camp); b.wait_ready(); no_errors(b)
        assert b.text('h1') == 'Campaign scan'
        rows = b.script("return [...document.querySelectorAll('#clusters tbody tr')].map(r => r.innerText.split('\\t'))")
        ok_alpha = sql("SELECT count(*) FROM grid_jobs j JOIN grid_copies c ON c.id = j.success_copy JOIN clusters k"
                       " ON k.id = c.cluster_id WHERE k.name = 'alpha' AND j.campaign_id = " + camp)[0][0]
        assert rows[0][0] == 'alpha' and rows[0][3] == str(ok_alpha) and rows[0][6] == 'no', rows
        ev, msg = sql("SELECT id, message FROM grid_events WHERE campaign_id = %s ORDER BY id LIMIT 1" % camp)[0]
        assert rows[1][0] == 'beta' and rows[1][6].startswith('exit error (event %d' % ev), rows
        assert msg in b.texts('#events .message'), b.texts('#events .message')
        assert b.text('#fig-terminated') == str(ok_alpha), b.text('main .figures')
        b.keep('science-campaign')
    else:
        assert 'No campaign yet.' in b.text('main'), b.text('main')
    b.keep('science-campaigns')
    severe = [e['message'] for e in b.console() if e.get('level') == 'SEVERE' and '/api/v1/' not in e['message']]
    assert not severe, 'console errors: %r' % severe
print('browser: batches, batch, app versions, hosts and campaigns pages, logged out and as alice')
PY
say "Chromium: every page shows the store's figures; alice sees her failures, escaped, not carl's; screenshots in $ART"
say "PASS"
