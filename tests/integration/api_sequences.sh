#!/usr/bin/env bash
# api_sequences: work sequences ordered through the REST API (docs/api.md),
# as the submitter whose submit key comes in 'Authorization: Bearer KEY':
# create, list, extend, end; and every bad order refused with its HTTP
# status and a message, the store unchanged (compared with a full dump):
# no key, unknown key, an account key (it attaches hosts and orders
# nothing), a volunteer's, malformed JSON, unknown or mistyped field,
# values out of range, unknown app, a taken name, another user's sequence,
# an ended sequence, a body over the limit, an order over the per-user
# limits (sequences in one order, batches held). An order waiting on the
# store does not hold locusd's only HTTP thread: other requests are served
# meanwhile. Then locusd loads what was ordered and sends position 1 to a
# host. Stopped while an order waits, locusd answers it first.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/rpc.sh"

proj=$TMP/proj
make_project "$proj" alice bob carl
set_config "$proj" submit_max_live_batches 1
set_config "$proj" http_threads 1
start_locusd "$proj"
API=http://127.0.0.1:$PORT/api/v1
B=$TMP/body H=$TMP/headers R=$TMP/req.xml SCHED=${URL}scheduler
KEY_A=$(submit_key_of "$proj" alice) KEY_B=$(submit_key_of "$proj" bob) KEY_C=$(submit_key_of "$proj" carl)
"$LOCUS" user role "$proj" carl volunteer || fail "locus user role carl volunteer failed"

# api METHOD PATH KEY [JSON]: prints the HTTP status; body in $B.
api() {
    local auth=()
    [ -n "$3" ] && auth=(-H "Authorization: Bearer $3")
    curl -s -o "$B" -w '%{http_code}' --max-time 30 -X "$1" "${auth[@]}" \
        -H 'Content-Type: application/json' ${4+--data-binary "$4"} "$API/$2" || echo 000
}
# refused STATUS WANT METHOD PATH KEY [JSON]: the order gets STATUS, an error
# naming WANT, and the store is as it was (with ONLY=SQL, what that query
# reads: once locusd runs a sequence, it changes the store itself).
refused() {
    local want_status=$1 want=$2 st
    shift 2
    snapshot >"$TMP/before.sql"
    st=$(api "$@")
    [ "$st" = "$want_status" ] || fail "$1 $2: HTTP $st, expected $want_status: $(head -c 300 "$B")"
    grep -q '"error"' "$B" && grep -qF -- "$want" "$B" || fail "$1 $2: error without '$want': $(head -c 300 "$B")"
    snapshot >"$TMP/after.sql"
    cmp -s "$TMP/before.sql" "$TMP/after.sql" || fail "$1 $2 ($want_status) changed the store"
}

ORDERED="SELECT name, length, state, end_time, revision FROM sequences"
snapshot() {
    if [ -n "${ONLY:-}" ]; then sql "$proj" "$ONLY"; else dump_store "$proj"; fi
}

ORDER='{"name": "climate", "app": "worker", "length": 5, "max_result_time": 600, "restart_every": 2,
        "flops": 1e11, "cmdline": "--iterations 1000", "outputs": ["out:1000000"]}'

refused 401 "Authorization: Bearer" POST sequences "" "$ORDER"
refused 401 "unknown or revoked submit key" POST sequences nosuchkey "$ORDER"
refused 403 "an account key attaches hosts" POST sequences "$(key_of alice)" "$ORDER"
refused 403 "'carl' is a volunteer" POST sequences "$KEY_C" "$ORDER"
refused 400 "at most 100000 positions (submit_max_order_positions)" POST sequences "$KEY_A" \
    '{"name": "many", "app": "worker", "length": 100, "max_result_time": 9, "count": 1001}'
refused 400 "malformed JSON" POST sequences "$KEY_A" '{"name": "x",'
refused 400 "must be a JSON object" POST sequences "$KEY_A" '[1, 2]'
refused 400 "unknown field 'lenght'" POST sequences "$KEY_A" '{"name": "x", "app": "worker", "lenght": 5}'
refused 400 "length must be an integer" POST sequences "$KEY_A" '{"name": "x", "app": "worker", "length": "5"}'
refused 400 "max_result_time must be a positive" POST sequences "$KEY_A" '{"name": "x", "app": "worker", "length": 5}'
refused 400 "length must be from 1" POST sequences "$KEY_A" '{"name": "x", "app": "worker", "length": 0, "max_result_time": 9}'
refused 400 "not a safe name" POST sequences "$KEY_A" '{"name": "../x", "app": "worker", "length": 2, "max_result_time": 9}'
refused 400 "must be OPEN_NAME:MAX_BYTES" POST sequences "$KEY_A" '{"name": "x", "app": "worker", "length": 2, "max_result_time": 9, "outputs": ["out"]}'
refused 404 "unknown app 'nosuch'" POST sequences "$KEY_A" '{"name": "x", "app": "nosuch", "length": 2, "max_result_time": 9}'
refused 404 "unknown file" POST sequences "$KEY_A" '{"name": "x", "app": "worker", "length": 2, "max_result_time": 9, "initial_state": "nofile"}'
head -c 1100000 /dev/zero | tr '\0' ' ' >"$TMP/big.json"
st=$(curl -s -o "$B" -w '%{http_code}' --max-time 30 -X POST -H "Authorization: Bearer $KEY_A" \
    --data-binary "@$TMP/big.json" "$API/sequences" || echo 000)
[ "$st" = 413 ] || fail "a body over 1 MiB: HTTP $st, expected 413"
say "bad orders refused, store unchanged"

st=$(api POST sequences "$KEY_A" "$ORDER")
[ "$st" = 201 ] || fail "create: HTTP $st: $(cat "$B")"
grep -q '"batch":"climate"' "$B" || fail "create: unexpected answer $(cat "$B")"
[ "$(sql "$proj" "SELECT COUNT(*) FROM jobs j JOIN batches b ON b.id = j.batch_id JOIN users u ON u.id = b.user_id
                  WHERE b.name = 'climate' AND u.name = 'alice' AND j.sequence_id > 0")" = 5 ] \
    || fail "create: the store does not hold 5 positions of alice's sequence"
refused 409 "a batch named climate exists" POST sequences "$KEY_B" "$ORDER"   # bob: under his limit
refused 429 "submit_max_live_batches" POST sequences "$KEY_A" '{"name": "second", "app": "worker", "length": 2, "max_result_time": 9}'
st=$(api GET sequences/climate "")
[ "$st" = 200 ] && grep -q '"length":5' "$B" && grep -q '"state":"active"' "$B" || fail "GET sequence: $st $(cat "$B")"
say "alice created sequence climate of 5 positions"

# An order runs its transaction off the HTTP threads: while another
# writer holds the store, bob's order waits for it, and locusd's one HTTP
# thread goes on serving (on an HTTP thread, the order would hold it
# until the store was free, and this GET with it).
(echo "BEGIN IMMEDIATE;"; sleep 8; echo "COMMIT;") | sqlite3 "$proj/locus.db" &
locker=$!
sleep 1
curl -s -o "$TMP/held.json" -w '%{http_code}' --max-time 60 -X POST -H "Authorization: Bearer $KEY_B" \
    --data-binary '{"name": "held", "app": "worker", "length": 2, "max_result_time": 9}' \
    "$API/sequences" >"$TMP/held.status" &
order=$!
sleep 1
st=$(api GET sequences/climate "")
[ "$st" = 200 ] || fail "GET while an order waits on the store: HTTP $st"
kill -0 "$order" 2>/dev/null || fail "bob's order was answered while the store was held: $(cat "$TMP/held.status")"
kill -0 "$locker" 2>/dev/null || fail "the store lock ended before the GET was answered (the test needs it held)"
wait "$locker"
wait "$order"
[ "$(cat "$TMP/held.status")" = 201 ] || fail "bob's order once the store was free: HTTP $(cat "$TMP/held.status")"
say "a GET was served while an order waited on the store; the order was carried out after"

refused 404 "no sequence named 'climate'" POST sequences/climate/extend "$KEY_B" '{"positions": 3}'
refused 400 "positions" POST sequences/climate/extend "$KEY_A" '{"positions": 0}'
refused 404 "no sequence named 'nosuch'" POST sequences/nosuch/extend "$KEY_A" '{"positions": 3}'
st=$(api POST sequences/climate/extend "$KEY_A" '{"positions": 3}')
[ "$st" = 200 ] && grep -q '"length":8' "$B" || fail "extend: HTTP $st: $(cat "$B")"
say "bob may not extend it; alice extended it to 8"

# locusd loads the sequence and sends position 1 to a host that asks
HOST=$(register "$(key_of bob)")
got=
for i in $(seq 30); do
    SEQNO=$i request "$(key_of bob)" "$HOST" 3600 >"$R"
    [ "$(post "$SCHED" "$R")" = 200 ] || fail "RPC: HTTP error"
    got=$(tr -d '\n' <"$B" | grep -o '<workunit>[[:space:]]*<name>climate_1</name>' || true)
    [ -n "$got" ] && break
    sleep 1
done
[ -n "$got" ] || fail "locusd never sent position 1 of the ordered sequence"
say "locusd sent position 1 to a host"

ONLY="$ORDERED" refused 404 "no sequence named 'climate'" POST sequences/climate/end "$KEY_B" ''
st=$(api POST sequences/climate/end "$KEY_A" '')
[ "$st" = 200 ] && grep -q '"state":"ended"' "$B" || fail "end: HTTP $st: $(cat "$B")"
ONLY="$ORDERED" refused 409 "has ended" POST sequences/climate/end "$KEY_A" ''
ONLY="$ORDERED" refused 409 "has ended" POST sequences/climate/extend "$KEY_A" '{"positions": 1}'
say "alice ended it; a second end and an extension are refused"

# Stopped while an order waits on the store for longer than locusd once
# waited for suspended requests (10 s): locusd awaits it, answers it and
# exits cleanly (stopping libmicrohttpd with it suspended aborted).
(echo "BEGIN IMMEDIATE;"; sleep 14; echo "COMMIT;") | sqlite3 "$proj/locus.db" &
locker=$!
sleep 1
curl -s -o "$TMP/late.json" -w '%{http_code}' --max-time 60 -X POST -H "Authorization: Bearer $KEY_B" \
    --data-binary '{"positions": 1}' "$API/sequences/held/extend" >"$TMP/late.status" &
order=$!
sleep 1
stop_locusd
wait "$locker"
wait "$order" || true
[ "$(cat "$TMP/late.status")" = 200 ] || fail "an order awaited through the stop: HTTP $(cat "$TMP/late.status")"
[ "$(sql "$proj" "SELECT length FROM sequences WHERE name = 'held'")" = 3 ] || fail "the extension answered 200 is not in the store"
say "stopped with an order waiting on the store: the order was carried out and answered, locusd exited cleanly"
check_sanitizers
say "PASS"
