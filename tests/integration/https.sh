#!/usr/bin/env bash
# https: locusd serves HTTPS with a certificate of a test CA (made here
# with openssl, for 127.0.0.1) beside plain HTTP, its master URL
# https://127.0.0.1:PORT/proj/, the certificate and key given relative to
# the project folder.
#  - locus-client trusting another CA (--ca-file) cannot attach: attach
#    exits 1 saying TLS and which CAs it trusted, nothing is attached, and
#    locusd sees no host; a --ca-file that does not exist stops it at start;
#  - a real BOINC client (the test CA as ca-bundle.crt in its data folder,
#    as BOINC reads it) and locus-client (the CA as ca-bundle.crt in its
#    data folder too) attach over https and compute a small batch, both;
#  - every scheduler RPC, download and upload came over TLS (locusd's log
#    says the scheme of each request), the client was handed https URLs,
#    and plain HTTP still answers on its own port;
#  - a key file every user may read stops locusd at start, with the reason
#    and nothing served on either port.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/tls.sh"

NJOBS=8
BATCH=tls
proj=$TMP/proj
AGENT_DIR=$TMP/agent
AGENT_LOG=$TMP/agent.log
AGENT_OPTS=(--max-cpus 1 --retry-min 1 --retry-max 4 --min-queue 60 --benchmark-seconds 0 --debug rpc,http)
. "$(dirname "$0")/lib/agent.sh"

# ---- a test CA, another CA, and the server's certificate ----

make_ca ca
make_ca other
make_project "$proj" alice bob
serve_https "$proj"
set_config "$proj" max_wus_in_progress 1   # one task per CPU at a time: both hosts get work
set_config "$proj" account_creation open    # the site's session cookie, below
# no end-of-batch spares: the agent, idle at the end, would race the BOINC
# client for its last task, and the test wants a result from each
set_config "$proj" end_of_batch_replication 0
# curl (start_locusd's probe, the checks below) trusts the test CA only
export CURL_CA_BUNDLE=$TMP/ca.pem
echo '{"cmdline": "--iterations 200000 --sleep-ms 8 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count "$NJOBS" --input-template "$TMP/tmpl.json" --name "$BATCH" \
    --quorum 1 --delay-bound 3600 >/dev/null || fail "locus batch create failed"
start_locusd "$proj"
grep -q "HTTP on 127.0.0.1:$HTTP_PORT, HTTPS on 127.0.0.1:$PORT" "$LOCUSD_LOG" \
    || fail "locusd does not say it serves HTTP on $HTTP_PORT and HTTPS on $PORT"
say "locusd serves $URL, and plain HTTP on port $HTTP_PORT"

# ---- the master page: on both ports, its URLs https ----
curl -sf "$URL" | grep -q "href=\"${URL}scheduler\"" || fail "the https master page does not name ${URL}scheduler"
curl -sf "http://127.0.0.1:$HTTP_PORT/proj/" | grep -q "href=\"${URL}scheduler\"" \
    || fail "plain HTTP on port $HTTP_PORT does not answer with the master page"
if curl -sf -o /dev/null --cacert "$TMP/other.pem" "$URL"; then fail "curl trusting another CA got the page"; fi
say "master page on both ports, naming the https scheduler; refused by a client of another CA"

# ---- the web site's session cookie: Secure over HTTPS, not over plain HTTP ----
J='Content-Type: application/json'
h=$(curl -s -D - -o /dev/null -H "$J" -d '{"email":"tls@example.org","password":"correct horse","name":"Tls"}' \
    "https://127.0.0.1:$PORT/api/v1/session/signup")
grep -qi '^set-cookie: locus_session=[0-9].*; HttpOnly; SameSite=Strict; Secure' <<<"$h" \
    || fail "the session cookie over HTTPS: $h"
h=$(curl -s -D - -o /dev/null -H "$J" -d '{"email":"tls@example.org","password":"correct horse"}' \
    "http://127.0.0.1:$HTTP_PORT/api/v1/session/login")
grep -qi '^set-cookie: locus_session=[0-9]' <<<"$h" && ! grep -qi 'Secure' <<<"$h" \
    || fail "the session cookie over plain HTTP: $h"
say "the site's session cookie is Secure over HTTPS, and not over plain HTTP"

# ---- locus-client with the wrong CA, or a CA file that is not there ----
if "$AGENT" --dir "$TMP/agent-none" --ca-file "$TMP/none.pem" 2>"$TMP/err"; then fail "locus-client started with a missing CA file"; fi
grep -q "CA file $TMP/none.pem: No such file" "$TMP/err" || fail "missing --ca-file: unexpected message: $(cat "$TMP/err")"
start_agent --ca-file "$TMP/other.pem"
if key_of bob | lc attach "$URL" - 2>"$TMP/err"; then afail "attach succeeded trusting another CA"; fi
grep -q "^locus-client: attach $URL: .*TLS: .*trusting $TMP/other.pem" "$TMP/err" \
    || afail "the failed attach does not say TLS and the CA trusted: $(cat "$TMP/err")"
[ -z "$(lc projects)" ] || afail "a failed attach left a project: $(lc projects)"
[ "$(sql "$proj" "SELECT count(*) FROM hosts")" -eq 0 ] || afail "an agent that trusts another CA made a host"
say "locus-client trusting another CA: $(grep -o 'TLS: .*' "$TMP/err")"
stop_agent

# ---- both clients trust the test CA through ca-bundle.crt, as BOINC does ----
cp "$TMP/ca.pem" "$AGENT_DIR/ca-bundle.crt"
start_agent
grep -q "checked against the CAs of $AGENT_DIR/ca-bundle.crt" "$AGENT_LOG" || afail "the agent does not use its ca-bundle.crt"
key_of bob | lc attach "$URL" - || afail "attach failed"
mkdir -p "$TMP/client-A"
cp "$TMP/ca.pem" "$TMP/client-A/ca-bundle.crt"
start_client A "$(key_of alice)" 1
say "locus-client and a BOINC client attached over https"
wait_batch_done "$proj" "$BATCH" 240
for _ in $(seq 60); do [ "$(lc status | grep -o 'tasks=[0-9]*')" = tasks=0 ] && break; sleep 1; lc update >/dev/null || true; done
wait_clients_idle 60

# ---- both computed, every request over TLS ----
nhosts=$(sql "$proj" "SELECT count(DISTINCT host_id) FROM instances WHERE outcome=$OUTCOME_SUCCESS")
[ "$nhosts" -eq 2 ] || fail "$nhosts hosts returned results, expected the BOINC client and locus-client"
grep -q "<scheduler_url>${URL}scheduler</scheduler_url>" "$TMP/client-A/client_state.xml" \
    || fail "the BOINC client does not hold the https scheduler URL"
for what in "POST /proj/scheduler" "GET /proj/download/" "POST /proj/file_upload_handler"; do
    grep -q "\[http\] $what.* (https)$" "$LOCUSD_LOG" || fail "no '$what' over https in locusd's log"
done
plain=$(grep -E '\[http\] (POST|GET) /proj/(scheduler|download/|file_upload_handler).* \(http\)$' "$LOCUSD_LOG" || true)
[ -z "$plain" ] || fail "requests over plain HTTP: $(head -n 3 <<<"$plain")"
say "$(grep -c '(https)$' "$LOCUSD_LOG") requests over https, none of the hosts' over plain HTTP"
stop_client A
stop_agent
stop_locusd

# ---- a key every user may read: no start, nothing served ----
chmod 644 "$proj/tls/server.key"
rc=0
timeout 20 "$LOCUSD" "$proj" >"$TMP/start.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "locusd with a world-readable key exited $rc, not 1: $(cat "$TMP/start.log")"
grep -q "tls/server.key is readable by every user (mode 644)" "$TMP/start.log" \
    || fail "no clear message for a world-readable key: $(cat "$TMP/start.log")"
if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$HTTP_PORT/proj/"; then fail "plain HTTP served with a bad key"; fi
say "a world-readable key stops locusd at start: $(tail -n 1 "$TMP/start.log")"
say "PASS"
