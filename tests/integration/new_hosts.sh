#!/usr/bin/env bash
# new_hosts: an account may add max_new_hosts_per_day hosts a day (issue
# 18: each new host CPID made a host row and a cache entry for ever, so one
# key could make them by the thousand). With the bound at 2 against a real
# locusd: two requests with new CPIDs get host ids; a third new CPID is
# refused with a message saying why and adds no host; the known hosts are
# still served, and another account may still add its own.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/rpc.sh"

proj=$TMP/proj
make_project "$proj" alice bob
set_config "$proj" max_new_hosts_per_day 2
start_locusd "$proj"
B=$TMP/body H=$TMP/headers R=$TMP/req.xml SCHED=${URL}scheduler

h1=$(CPID=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa register "$(key_of alice)")
h2=$(CPID=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb register "$(key_of alice)")
[ -n "$h1" ] && [ -n "$h2" ] && [ "$h1" != "$h2" ] || fail "two new hosts: ids '$h1' '$h2'"
h3=$(CPID=cccccccccccccccccccccccccccccccc register "$(key_of alice)")
[ -z "$h3" ] || fail "a third new host got id $h3"
grep -q "added as many new hosts today as the project allows" "$B" || fail "the refusal does not say why: $(head -c 400 "$B")"
n=$(sql "$proj" "SELECT count(*) FROM hosts h JOIN users u ON u.id=h.user_id WHERE u.name='alice'")
[ "$n" = 2 ] || fail "alice has $n hosts, expected 2"
say "a third new host of alice refused, with the reason"

# a known host is served as usual, by its id or its CPID
CPID=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa request "$(key_of alice)" "$h1" 0 >"$R"
[ "$(post "$SCHED" "$R")" = 200 ] && ! grep -q "as many new hosts" "$B" || fail "known host $h1 refused: $(head -c 300 "$B")"
[ "$(CPID=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb register "$(key_of alice)")" = "$h2" ] || fail "host $h2 not found again by its CPID"
[ -n "$(CPID=dddddddddddddddddddddddddddddddd register "$(key_of bob)")" ] || fail "bob could not add his first host"
say "known hosts served, another account adds its own"
stop_locusd
check_sanitizers
say "PASS"
