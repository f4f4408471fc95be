#!/usr/bin/env bash
# sequence_hook: the back end steers an open-ended work sequence through
# <sequence_result_cmd>, run by locusd for each validated position with
# LOCUS_SEQUENCE, LOCUS_POSITION, LOCUS_LENGTH and LOCUS_STATE (the
# restartable state file, else empty). The sequence starts 2 positions
# long; the hook answers "extend 1" until position 4, then "end". A real
# BOINC client computes it: the sequence ends 4 positions long, every
# position validated, the hook ran once per position with the right
# environment, and a hook answering nonsense or failing is logged without
# failing the job.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice
set_config "$proj" next_rpc_delay 2
cat >"$TMP/hook.sh" <<'SH'
#!/bin/sh
echo "$LOCUS_SEQUENCE $LOCUS_POSITION $LOCUS_LENGTH ${LOCUS_STATE:+state} $(cat "${LOCUS_STATE:-/dev/null}" | wc -c)" >>"$HOOK_LOG"
case $LOCUS_POSITION in
  1) echo "bogus answer" ;;
  2|3) echo "extend 1" ;;
  *) echo end ;;
esac
SH
chmod +x "$TMP/hook.sh"
set_config "$proj" sequence_result_cmd "HOOK_LOG=$TMP/hook.log $TMP/hook.sh"
CMD="--iterations 20000 --sleep-ms 5 --seed 7 --in state_in --state state"
"$LOCUS" sequence create "$proj" --app worker --name steer --length 2 --open --restart-every 2 \
    --max-result-time 20 --delay-bound 120 --flops 1e9 --state-max-bytes 100000 --cmdline "$CMD" >/dev/null \
    || fail "locus sequence create failed"
seqcol() { sql "$proj" "SELECT $1 FROM sequences WHERE name='steer'"; }

start_locusd "$proj"
start_client C1 "$(key_of alice)" 1
wait_first_rpc C1
# ended by the hook, and (written by locusd's next pass) position 4 validated
for i in $(seq 180); do
    [ "$(seqcol state)" = "$SEQ_ENDED" ] && [ "$(seqcol first_unvalidated_pos)" = 5 ] && break
    [ $((i % 5)) -ne 0 ] || client_update C1
    sleep 1
done
[ "$(seqcol state)" = "$SEQ_ENDED" ] || fail "the sequence did not end within 180 s: $(seqcol '*'); hook log: $(cat "$TMP/hook.log" 2>/dev/null)"
[ "$(seqcol length)" = 4 ] || fail "length $(seqcol length), expected 4 (2, then extended twice)"
[ "$(seqcol first_unvalidated_pos)" = 5 ] || fail "not every position validated: $(seqcol '*')"
# once per position (two reported together may be assimilated in either
# order); the state of the restartable positions handed over: 2 (every 2nd),
# 3 and 4 (each the last when it was sent), not 1
positions=$(awk '{print $2}' "$TMP/hook.log" | sort -n | tr '\n' ' ')
[ "$positions" = "1 2 3 4 " ] || fail "hook ran for positions '$positions', expected 1 2 3 4"
awk '$2 >= 2 { if ($4 != "state" || $5 == 0) exit 1 } $2 == 1 { if ($4 == "state") exit 1 }' \
    "$TMP/hook.log" || fail "LOCUS_STATE wrong: $(cat "$TMP/hook.log")"
awk '$1 != "steer" { exit 1 }' "$TMP/hook.log" || fail "LOCUS_SEQUENCE wrong: $(cat "$TMP/hook.log")"
grep -q "answered neither" "$LOCUSD_LOG" || fail "the bogus answer of position 1 was not logged"
[ "$(sql "$proj" "SELECT count(*) FROM jobs WHERE sequence_id IS NOT NULL AND state=$JOB_DONE")" = 4 ] \
    || fail "not all 4 positions are done (the bogus answer must not fail a job)"
say "hook steered the sequence: $(sort -n -k2 "$TMP/hook.log" | awk '{print $2": len "$3}' | tr '\n' ';')"
stop_locusd
check_sanitizers
say "PASS"
