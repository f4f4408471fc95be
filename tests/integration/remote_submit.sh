#!/usr/bin/env bash
# remote_submit: a scientist works from their own machine (docs/guide.md,
# "Remote submission"; docs/api.md): locusd serves HTTPS with a test CA's
# certificate (as https.sh) beside plain HTTP, and alice, a submitter,
#  - uploads input files with `locus --server URL file add` over HTTPS
#    (--cacert, her key from LOCUS_KEY_FILE): the file lands where `locus
#    file add` puts it, the same bytes; again: "already registered"; other
#    content under the name: 409 and the CLI prints the server's message;
#  - creates batch rs remotely from a JSONL file, and batch tc from a
#    template, which she cancels; bob cannot cancel hers (404);
#  - locus-client computes rs; `locus batch results` downloads the archive
#    of its canonical outputs, and of one job: each file the same bytes as
#    in results/ (md5 and content);
#  - `locus --server URL sequence create | extend | end` as locally, her
#    sequences only (bob: 404);
#  - `locus --server URL campaign submit | stat | events | pause | resume |
#    add-params | cancel | fix` on an OAR cluster that answers nothing (as
#    tests/fixtures/stores/make_fixture.sh), the param_file read on her
#    side; the Python module the same; to bob hers are absent (404, reads
#    and orders), carl's volunteer key 403, a bad JDL 400
#    with the JDL's message; --user, --wait and --jobs refused remotely;
#  - the Python module (python/locus_client.py, Debian's python3) uploads,
#    creates a batch, waits for it and downloads its results, and raises
#    LocusError with the server's message and status on a refusal.
# Refused, the store and the download folder unchanged: no key (401), an
# account key and a volunteer's submit key (403), another user's batch
# (404), a file over submit_max_file_mib (413, declared or chunked), path
# tricks in names (400), a wrong SHA-256 (400), malformed JSON, an unknown
# field, an unknown app, a bad job; an upload broken off leaves nothing,
# nor does one a stop cut (removed at the next start).
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/tls.sh"
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$PYTHON" ] || PYTHON=$(command -v python3) || fail "python3 is missing"
AGENT_DIR=$TMP/agent
AGENT_LOG=$TMP/agent.log
AGENT_OPTS=(--max-cpus 2 --retry-min 1 --retry-max 4 --min-queue 60 --benchmark-seconds 0)
. "$(dirname "$0")/lib/agent.sh"

proj=$TMP/proj
make_project "$proj" alice bob carl
KEY_A=$(submit_key_of "$proj" alice) KEY_B=$(submit_key_of "$proj" bob) KEY_C=$(submit_key_of "$proj" carl)
"$LOCUS" user role "$proj" carl volunteer || fail "locus user role carl volunteer failed"
set_config "$proj" submit_max_file_mib 1
set_config "$proj" end_of_batch_replication 0
"$LOCUS" cluster add "$proj" c1 --driver oar --api http://127.0.0.1:9/oarapi --timeout-ms 1000 >/dev/null \
    || fail "locus cluster add c1 failed"

# ---- HTTPS with a test CA ----
make_ca ca
serve_https "$proj"
export CURL_CA_BUNDLE=$TMP/ca.pem
start_locusd "$proj"
HTTPS=https://127.0.0.1:$PORT HTTP=http://127.0.0.1:$HTTP_PORT
API=$HTTP/api/v1
B=$TMP/body

printf '%s\n' "$KEY_A" >"$TMP/alice.key"
chmod 600 "$TMP/alice.key"
# R ARGS...: locus against the server as alice, over HTTPS, the key from a file
R() { LOCUS_KEY_FILE=$TMP/alice.key "$LOCUS" --server "$HTTPS/" --cacert "$TMP/ca.pem" "$@"; }
has() { grep -qF -- "$3" <<<"$2" || fail "$1: no '$3' in: $2"; }
# state: what a refusal must leave as it was: what orders write (locusd
# itself moves batches and jobs on meanwhile, so not their states)
state() {
    sql "$proj" "SELECT id, name, user_id, app_id, create_time FROM batches ORDER BY id;
                 SELECT id, name, batch_id, cmdline FROM jobs ORDER BY id;
                 SELECT * FROM files ORDER BY id; SELECT id, name, length, revision FROM sequences ORDER BY id;
                 SELECT id, user_id, njobs FROM grid_campaigns ORDER BY id"
    find "$proj/download" -type f | sort
}
# refused WHAT STATUS WANT CURL_ARGS...: curl gets STATUS and an error naming WANT; nothing changed
refused() {
    local what=$1 want_status=$2 want=$3 st
    shift 3
    state >"$TMP/before"
    st=$(curl -s -o "$B" -w '%{http_code}' --max-time 30 "$@" || true)
    [ "$st" = "$want_status" ] || fail "$what: HTTP $st, expected $want_status: $(head -c 300 "$B")"
    grep -qF -- "$want" "$B" || fail "$what: no '$want' in the answer: $(head -c 300 "$B")"
    state >"$TMP/after"
    cmp -s "$TMP/before" "$TMP/after" || fail "$what changed the store or the download folder: $(diff "$TMP/before" "$TMP/after" | head)"
}
# cli_refused WHAT WANT ARGS...: the remote CLI exits 1 printing WANT; nothing changed
cli_refused() {
    local what=$1 want=$2
    shift 2
    state >"$TMP/before"
    if R "$@" >/dev/null 2>"$TMP/err"; then fail "$what: succeeded"; fi
    grep -qF -- "$want" "$TMP/err" || fail "$what: no '$want' in: $(cat "$TMP/err")"
    state >"$TMP/after"
    cmp -s "$TMP/before" "$TMP/after" || fail "$what changed the store or the download folder: $(diff "$TMP/before" "$TMP/after" | head)"
}

# ---- input files ----
head -c 200000 /dev/urandom >"$TMP/data.bin"
OUT=$(R file add "$TMP/data.bin") || fail "remote file add failed: $(cat "$TMP/err" 2>/dev/null)"
MD5=$(md5sum <"$TMP/data.bin" | cut -d' ' -f1)
has "file add" "$OUT" "added file data.bin (200000 bytes, md5 $MD5)"
PLACED=$(find "$proj/download" -name data.bin)
cmp "$PLACED" "$TMP/data.bin" || fail "the uploaded file differs from the one sent"
[ "$(sql "$proj" "SELECT nbytes, md5 FROM files WHERE name = 'data.bin'")" = "200000|$MD5" ] \
    || fail "the store's data.bin: $(sql "$proj" "SELECT nbytes, md5 FROM files WHERE name = 'data.bin'")"
# where `locus file add` puts it: the same fan-out folder as in.dat's rule
"$LOCUS" file add "$proj" "$TMP/data.bin" --name local.bin >/dev/null || fail "local file add failed"
[ "$(dirname "$(dirname "$PLACED")")" = "$(dirname "$(dirname "$(find "$proj/download" -name local.bin)")")" ] \
    || fail "remote and local files are not in the same download tree"
has "file add again" "$(R file add "$TMP/data.bin")" "file data.bin is already registered with the same content"
mkdir "$TMP/other"
head -c 1000 /dev/urandom >"$TMP/other/data.bin"
cli_refused "other content" "a different file named data.bin is already registered (200000 bytes, md5 $MD5)" \
    file add "$TMP/other/data.bin"
has "409" "$(cat "$TMP/err")" "(HTTP 409)"
R file add --sticky "$TMP/other/data.bin" --name sticky.bin >/dev/null || fail "remote file add --sticky failed"
[ "$(sql "$proj" "SELECT sticky FROM files WHERE name = 'sticky.bin'")" = 1 ] || fail "sticky.bin is not sticky"
say "files: uploaded over HTTPS where locus file add puts them, idempotent, 409 for other content"

head -c 2000000 /dev/urandom >"$TMP/big.bin"
SHA=$(sha256sum <"$TMP/data.bin" | cut -d' ' -f1)
refused "no key" 401 "Authorization: Bearer" -T "$TMP/data.bin" "$API/files/x.bin"
refused "account key" 403 "an account key attaches hosts" -H "Authorization: Bearer $(key_of alice)" \
    -T "$TMP/data.bin" "$API/files/x.bin"
refused "volunteer" 403 "'carl' is a volunteer" -H "Authorization: Bearer $KEY_C" -T "$TMP/data.bin" "$API/files/x.bin"
refused "oversize" 413 "over 1 MiB (submit_max_file_mib)" -H "Authorization: Bearer $KEY_A" -T "$TMP/big.bin" \
    "$API/files/big.bin"
refused "oversize, chunked" 413 "over 1 MiB" -H "Authorization: Bearer $KEY_A" -H "Transfer-Encoding: chunked" \
    -T - "$API/files/big.bin" <"$TMP/big.bin"
for name in ..%2Fescape ../x .hidden a%2Fb "a%20b" "%2E%2E"; do
    refused "name $name" 400 "is not safe" -H "Authorization: Bearer $KEY_A" -T "$TMP/data.bin" --path-as-is \
        "$API/files/$name"
done
refused "wrong sha" 400 "X-Locus-SHA256 says" -H "Authorization: Bearer $KEY_A" \
    -H "X-Locus-SHA256: $(sha256sum <"$TMP/big.bin" | cut -d' ' -f1)" -T "$TMP/data.bin" "$API/files/y.bin"
refused "malformed sha" 400 "64 hex digits" -H "Authorization: Bearer $KEY_A" -H "X-Locus-SHA256: zz" \
    -T "$TMP/data.bin" "$API/files/y.bin"
# broken off: half a file sent slowly, then the connection cut
state >"$TMP/before"
curl -s -o /dev/null --max-time 2 --limit-rate 100K -H "Authorization: Bearer $KEY_A" -H "Content-Length: 900000" \
    -T - "$API/files/cut.bin" < <(head -c 900000 /dev/urandom) || true
sleep 1
state >"$TMP/after"
cmp -s "$TMP/before" "$TMP/after" || fail "a broken-off upload left something: $(diff "$TMP/before" "$TMP/after")"
[ -z "$(find "$proj/download" -name '.upload-*')" ] || fail "temporary files left: $(find "$proj/download" -name '.upload-*')"
st=$(curl -s -o "$B" -w '%{http_code}' -H "Authorization: Bearer $KEY_A" -H "X-Locus-SHA256: $SHA" \
    -T "$TMP/data.bin" "$API/files/data2.bin")
[ "$st" = 201 ] || fail "a PUT with the right SHA-256: HTTP $st: $(cat "$B")"
has "PUT answer" "$(cat "$B")" "\"name\":\"data2.bin\",\"nbytes\":200000,\"md5\":\"$MD5\""
say "files: 401, 403 (account key, volunteer), 413 (declared, chunked), 400 (names, digests), broken off: nothing left"

# ---- batches ----
cat >"$TMP/jobs.jsonl" <<'JOBS'
{"cmdline": "--iterations 1000 --seed 1", "inputs": ["data.bin=in"]}
{"cmdline": "--iterations 1000 --seed 2", "inputs": ["data.bin=in"]}

{"cmdline": "--iterations 1000 --seed 3", "inputs": ["in.dat=in"], "name": "rs_third"}
JOBS
OUT=$(R batch create --app worker --jobs "$TMP/jobs.jsonl" --name rs --quorum 1 --delay-bound 3600) \
    || fail "remote batch create rs failed: $OUT"
has "batch create" "$OUT" "created batch rs (id "
has "batch create" "$OUT" "): 3 jobs"
UID_A=$(sql "$proj" "SELECT id FROM users WHERE name = 'alice'")
[ "$(sql "$proj" "SELECT user_id, state FROM batches WHERE name = 'rs'")" = "$UID_A|$BATCH_ACTIVE" ] \
    || fail "batch rs is not alice's and active"
echo '{"cmdline": "--iterations 1000 --seed {n}", "inputs": ["in.dat=in"]}' >"$TMP/tmpl.json"
has "template" "$(R batch create --app worker --count 4 --input-template "$TMP/tmpl.json" --name tc)" "): 4 jobs"
# the same refusals as locally, with the same message
cli_refused "taken name" "a batch named rs exists: choose another --name" batch create --app worker \
    --jobs "$TMP/jobs.jsonl" --name rs
cli_refused "unknown app" "unknown app 'nosuch'" batch create --app nosuch --jobs "$TMP/jobs.jsonl" --name x1
echo '{"cmdline": "x", "inputs": ["nosuch.dat"]}' >"$TMP/bad.jsonl"
LOCAL_ERR=$("$LOCUS" batch create "$proj" --app worker --jobs "$TMP/bad.jsonl" --name x2 2>&1 >/dev/null || true)
cli_refused "unknown input" "${LOCAL_ERR#*line 1: }" batch create --app worker --jobs "$TMP/bad.jsonl" --name x2
cli_refused "bad quorum" "$("$LOCUS" batch create "$proj" --app worker --jobs "$TMP/jobs.jsonl" --name x3 --quorum 0 \
    2>&1 >/dev/null | sed 's/^locus: //')" batch create --app worker --jobs "$TMP/jobs.jsonl" --name x3 --quorum 0
H=(-H "Authorization: Bearer $KEY_A" -H "Content-Type: application/json")
refused "malformed JSON" 400 "malformed JSON" "${H[@]}" --data-binary '{"app": ' "$API/batches"
refused "unknown field" 400 "unknown field 'colour'" "${H[@]}" --data-binary '{"app": "worker", "colour": 1,
    "jobs": [{}]}' "$API/batches"
refused "unknown app" 404 "unknown app 'nosuch'" "${H[@]}" --data-binary '{"app": "nosuch", "jobs": [{}]}' "$API/batches"
refused "bad job" 400 "jobs[1]: unknown key 'flop'" "${H[@]}" --data-binary '{"app": "worker",
    "jobs": [{"cmdline": "a"}, {"flop": 1}]}' "$API/batches"
refused "no jobs" 400 "or \\\"template\\\"" "${H[@]}" --data-binary '{"app": "worker"}' "$API/batches"
refused "volunteer batch" 403 "volunteer" -H "Authorization: Bearer $KEY_C" --data-binary '{"app": "worker",
    "jobs": [{}]}' "$API/batches"
refused "no key batch" 401 "Authorization" --data-binary '{"app": "worker", "jobs": [{}]}' "$API/batches"
refused "bob cancels alice's" 404 "no batch named or numbered 'tc'" -X POST -H "Authorization: Bearer $KEY_B" \
    "$API/batches/tc/cancel"
has "cancel" "$(R batch cancel tc)" "batch tc: cancelling; the server (locusd) cancels its jobs and instances"
[ "$(sql "$proj" "SELECT state FROM batches WHERE name = 'tc'")" != "$BATCH_ACTIVE" ] || fail "tc is still active"
has "cancel again" "$(R batch cancel tc)" "batch tc is already"
has "stat" "$(R stat rs)" '"name":"rs","state":"active","app":"worker"'
# (locusd is cancelling tc meanwhile: the store is not compared)
if R batch list 2>"$TMP/err"; then fail "batch list ran against a server"; fi
has "local only" "$(cat "$TMP/err")" "batch list works on the server's folder only: run it there, without --server"
say "batches: created remotely (JSONL, template), the local refusals, tc cancelled by its owner only"

# ---- computed, then the results ----
start_agent --ca-file "$TMP/ca.pem"
key_of bob | lc attach "$URL" - >/dev/null || afail "attach failed"
for i in $(seq 240); do
    [ "$(sql "$proj" "SELECT count(*) FROM jobs j JOIN batches b ON b.id = j.batch_id
                      WHERE b.name = 'rs' AND j.state = $JOB_DONE")" = 3 ] && break
    sleep 0.5
done
[ "$(sql "$proj" "SELECT count(*) FROM jobs WHERE name LIKE 'rs%' AND state = $JOB_DONE")" = 3 ] \
    || afail "rs is not done after 120 s"
say "rs computed by locus-client"

mkdir "$TMP/got" "$TMP/one"
has "results" "$(R batch results rs --output-file "$TMP/rs.tar")" "results of rs in $TMP/rs.tar"
tar -xf "$TMP/rs.tar" -C "$TMP/got" || fail "the archive does not unpack"
[ "$(tar -tf "$TMP/rs.tar" | sort)" = "$(cd "$proj/results" && find rs -type f | sort)" ] \
    || fail "the archive holds $(tar -tf "$TMP/rs.tar" | tr '\n' ' '), results/ $(cd "$proj/results" && find rs -type f)"
[ "$(tar -tf "$TMP/rs.tar" | wc -l)" -ge 3 ] || fail "the archive has fewer than 3 files"
(cd "$proj/results" && find rs -type f -exec md5sum {} +) | sort >"$TMP/want.md5"
(cd "$TMP/got" && md5sum -c --quiet "$TMP/want.md5") || fail "downloaded results differ from results/"
diff -r "$proj/results/rs" "$TMP/got/rs" || fail "downloaded results differ from results/"
(cd "$TMP/one" && R batch results rs --job rs_third >/dev/null) || fail "results of one job failed"
[ "$(tar -tf "$TMP/one/rs-rs_third.tar")" = "$(cd "$proj/results" && find rs/rs_third -type f)" ] \
    || fail "one job's archive: $(tar -tf "$TMP/one/rs-rs_third.tar")"
refused "bob's results" 404 "no such batch" -H "Authorization: Bearer $KEY_B" "$API/batches/rs/results"
refused "volunteer results" 403 "volunteer" -H "Authorization: Bearer $KEY_C" "$API/batches/rs/results"
refused "no key results" 401 "Authorization" "$API/batches/rs/results"
refused "other batch's job" 404 "no such job in this batch" -H "Authorization: Bearer $KEY_A" \
    "$API/batches/tc/jobs/rs_third/results"
# a job called "results" is the job view's, not an archive
refused "job view" 404 "no such job in this batch" -H "Authorization: Bearer $KEY_A" "$API/batches/rs/jobs/results"
say "results: the archive of rs and of one job, the same bytes as results/; 404 to bob, 403, 401"

# ---- the Python module ----
cd "$LOCUS_SOURCE_DIR/python"
export PYTHONDONTWRITEBYTECODE=1   # nothing written in the source tree
LOCUS_KEY=$KEY_A "$PYTHON" - "$HTTPS/" "$TMP" <<'PY' || fail "the Python client failed"
import hashlib, os, sys, tarfile
from locus_client import Client, LocusError
url, tmp = sys.argv[1], sys.argv[2]
c = Client(url, cafile=os.path.join(tmp, "ca.pem"))
r = c.upload("py.bin", os.path.join(tmp, "data.bin"))
assert r["existed"] is False and r["nbytes"] == 200000, r
assert c.upload("py.bin", os.path.join(tmp, "data.bin"))["existed"] is True
try:
    c.upload("py.bin", os.path.join(tmp, "other", "data.bin"))
    raise SystemExit("other content was taken")
except LocusError as e:
    assert e.status == 409 and "a different file named py.bin" in e.message, e
try:
    c.create_batch(app="nosuch", jobs=[{}])
    raise SystemExit("an unknown app was taken")
except LocusError as e:
    assert e.status == 404 and e.message == "unknown app 'nosuch': register it with locus app add", e
b = c.create_batch(app="worker", name="py", quorum=1,
                   jobs=[{"cmdline": "--iterations 500 --seed %d" % i, "inputs": ["py.bin=in"]} for i in range(2)])
assert b["jobs"] == 2 and b["batch"] == "py", b
done = c.wait("py", timeout=120, poll=0.5)
assert done["done"] == 2, done
dest = c.download_results("py", os.path.join(tmp, "py.tar"))
with tarfile.open(dest) as t:
    names = sorted(m.name for m in t.getmembers())
    assert names and all(n.startswith("py/py_") for n in names), names
    for m in t.getmembers():
        with open(os.path.join(tmp, "proj", "results", m.name), "rb") as f:
            assert t.extractfile(m).read() == f.read(), m.name
c2 = Client(url, key="nosuchkey", cafile=os.path.join(tmp, "ca.pem"))
try:
    c2.cancel("py")
    raise SystemExit("an unknown key cancelled")
except LocusError as e:
    assert e.status == 401, e
print("python ok:", names)
PY
cd - >/dev/null
say "python: upload, create, wait, download over HTTPS; LocusError with the server's message and status"

# ---- campaigns, on a cluster that answers nothing ----
printf 'a 1\nb 2\n# a comment\n\nc 3\n' >"$TMP/params.txt"
echo '{"name": "rc", "param_file": "params.txt", "exec_file": "~/run.sh", "walltime": "00:10:00",
       "clusters": {"c1": {}}}' >"$TMP/camp.json"
CAMP=$(cd / && R campaign submit "$TMP/camp.json") || fail "remote campaign submit failed"
[[ $CAMP =~ ^[0-9]+$ ]] || fail "campaign submit printed '$CAMP'"
[ "$(sql "$proj" "SELECT user_id, njobs FROM grid_campaigns WHERE id = $CAMP")" = "$UID_A|3" ] \
    || fail "campaign $CAMP is not alice's with 3 jobs: $(sql "$proj" "SELECT * FROM grid_campaigns")"
has "campaign stat" "$(R campaign stat)" "\"id\":$CAMP,\"name\":\"rc\""
has "campaign stat ID" "$(R campaign stat "$CAMP" -f)" "\"clusters\":"
has "campaign events" "$(R campaign events "$CAMP")" "{\"campaign_id\":$CAMP,\"events\":"
camp_state() { sql "$proj" "SELECT state FROM grid_campaigns WHERE id = $CAMP"; }
has "campaign pause" "$(R campaign pause "$CAMP")" "campaign $CAMP: paused"
[ "$(camp_state)" = "$GCS_PAUSED" ] || fail "campaign $CAMP is not paused"
has "campaign resume" "$(R campaign resume "$CAMP")" "campaign $CAMP: resumed"
[ "$(camp_state)" = "$GCS_RUNNING" ] || fail "campaign $CAMP is not running again"
printf '# more\nd 4\n' >"$TMP/more.txt"
has "campaign add-params" "$(R campaign add-params "$CAMP" "$TMP/more.txt")" "campaign $CAMP: params added, 4 jobs in all"
# refusals, the campaign as it was
cli_refused "bob's stat" "no campaign $CAMP of yours (HTTP 404)" --key "$KEY_B" campaign stat "$CAMP"
cli_refused "bob's pause" "no campaign $CAMP (HTTP 404)" --key "$KEY_B" campaign pause "$CAMP"
cli_refused "carl's submit" "(HTTP 403)" --key "$KEY_C" campaign submit "$TMP/camp.json"
echo '{"name": "bad", "nb_jobs": 1, "exec_file": "~/run.sh", "clusters": {"c1": {"waltime": 60}}}' >"$TMP/bad.json"
cli_refused "bad JDL" 'clusters.c1.waltime: unknown key (did you mean "walltime"?) (HTTP 400)' campaign submit "$TMP/bad.json"
cli_refused "--user" "--user is for the server's own command line" campaign pause "$CAMP" --user bob
cli_refused "--wait" "--wait is for the server's own command line" campaign cancel "$CAMP" --wait 3
cli_refused "--jobs" "--jobs, --state and --users read the server's folder" campaign stat "$CAMP" --jobs
cli_refused "fix" "(HTTP 404)" campaign fix 999999 --resubmit
cli_refused "share" "campaign share works on the server's folder only" campaign share bob 2
[ "$(camp_state)" = "$GCS_RUNNING" ] || fail "a refusal changed campaign $CAMP"
has "campaign cancel" "$(R campaign cancel "$CAMP")" "campaign $CAMP: cancelled"
[ "$(camp_state)" = "$GCS_CANCELLED" ] || fail "campaign $CAMP is not cancelled"
cd "$LOCUS_SOURCE_DIR/python"
LOCUS_KEY=$KEY_A "$PYTHON" - "$HTTPS/" "$TMP" "$KEY_B" "$KEY_C" <<'PY' || fail "the Python client's campaigns failed"
import json, os, sys
from locus_client import Client, LocusError
url, tmp, key_b, key_c = sys.argv[1:]
ca = os.path.join(tmp, "ca.pem")
c = Client(url, cafile=ca)
jdl = {"name": "pc", "param_file": "p.txt", "exec_file": "~/run.sh", "walltime": "00:10:00", "clusters": {"c1": {}}}
cid = c.submit_campaign(jdl, params_text="x 1\ny 2\n")
assert [x["name"] for x in c.campaigns() if x["id"] == cid] == ["pc"], c.campaigns()
assert c.campaign(cid)["jobs"] == 2
assert isinstance(c.campaign_events(cid), list)
assert c.pause_campaign(cid)["state"] == "paused"
assert c.resume_campaign(cid)["state"] == "running"
assert c.add_params(cid, ["z 3"])["jobs"] == 3
def refused(status, want, call, *args):
    try:
        call(*args)
    except LocusError as e:
        assert e.status == status and want in e.message, (status, want, e)
        return
    raise SystemExit("%s%r was not refused" % (call.__name__, args))
refused(404, "of yours", Client(url, key=key_b, cafile=ca).campaign, cid)
refused(404, "no campaign %d" % cid, Client(url, key=key_b, cafile=ca).cancel_campaign, cid)
refused(403, "volunteer", Client(url, key=key_c, cafile=ca).campaigns)
refused(400, "waltime: unknown key", c.submit_campaign, dict(jdl, clusters={"c1": {"waltime": 60}}), "x 1\n")
refused(404, "", c.fix_event, 999999, True)
assert c.cancel_campaign(cid)["state"] == "cancelled"
print("python campaigns ok:", cid)
PY
cd - >/dev/null
say "campaigns: submitted (param_file sent), listed, paused, resumed, extended, cancelled remotely, by the CLI and Python; refusals"

# ---- sequences, the orders the API has for them ----
has "sequence create" "$(R sequence create --app worker --name sq --length 2 --max-result-time 600 --count 2)" \
    "created batch sq (id "
has "sequence create" "$(R sequence create --app worker --name sq1 --length 2 --max-result-time 600)" \
    "): 1 sequence of 2 positions"
has "sequence extend" "$(R sequence extend sq-1 3)" "sequence sq-1: 5 positions"
has "sequence end" "$(R sequence end sq-2)" "sequence sq-2: ended"
[ "$(sql "$proj" "SELECT b.user_id, q.length, q.state FROM sequences q JOIN batches b ON b.id = q.batch_id
                  WHERE q.name = 'sq-1'")" = "$UID_A|5|$SEQ_ACTIVE" ] || fail "sq-1 is not alice's with 5 positions"
printf '%s\n' "$KEY_B" >"$TMP/bob.key"
if LOCUS_KEY_FILE=$TMP/bob.key "$LOCUS" --server "$HTTPS/" --cacert "$TMP/ca.pem" sequence end sq-1 2>"$TMP/err"; then
    fail "bob ended alice's sequence"
fi
has "bob ends sq-1" "$(cat "$TMP/err")" "no sequence named 'sq-1' (HTTP 404)"
say "sequences: created, extended and ended remotely"

stop_agent
# what a stop in the middle of an upload would leave goes at the next start
stop_locusd
echo partial >"$proj/download/.upload-Ab12Cd"
start_locusd "$proj"
[ ! -e "$proj/download/.upload-Ab12Cd" ] || fail "an unfinished upload outlived a restart"
grep -q "removed 1 unfinished uploads of input files from download/" "$LOCUSD_LOG" || fail "locusd did not say so"
stop_locusd
check_sanitizers
say "a restart removes unfinished uploads; ok"
