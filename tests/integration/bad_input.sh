#!/usr/bin/env bash
# bad_input: a running locusd gets bad scheduler requests, uploads and
# download names, and answers each with a clear error while its store stays
# exactly as it was (compared with a full `sqlite3 .dump` before and after;
# only what a case means to change may differ). Two hosts are registered
# first with hand-written requests (protocol notes 2.2), each holding one
# instance. Cases:
#  (a) malformed XML                      -> HTTP 400, one-line message
#  (b) truncated XML; truncated transfer  -> 400; nothing done
#  (c) oversized request, by Content-Length and chunked -> 413
#  (d) unknown account key                -> 200, <message> about the key,
#                                            <request_delay>, no host created
#  (e) upload of a file nobody asked for  -> <status>-1</status>, no file kept
#  (f) '..' and '/' in download names     -> 404, nothing leaked; in uploads -> -1
#  (g) upload beyond its declared size, beyond max_nbytes, bad MD5
#                                         -> error, no partial file left;
#      of a host's output without its certificate, with another host's,
#      with a made-up one                 -> -1, nothing kept
#  (h) reports of another host's instance, of unknown names, duplicates
#                                         -> acknowledged, store unchanged
# Then locusd must still be alive, serve its master page, and stop cleanly.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/rpc.sh"

proj=$TMP/proj
make_project "$proj" alice bob
echo '{"cmdline": "--iterations 1000 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 4 --input-template "$TMP/tmpl.json" --name b1 \
    --quorum 2 --delay-bound 3600 >/dev/null || fail "locus batch create failed"
start_locusd "$proj"
SCHED=${URL}scheduler
UPLOAD=${URL}file_upload_handler
KEY_A=$(key_of alice)
KEY_B=$(key_of bob)

passed=0 failed=0
R=$TMP/req.xml B=$TMP/body H=$TMP/headers

# ---- requests ----

# get PATH: GET $URL$PATH as is (no dot-segment folding); body in $B; prints the status.
get() { curl -s -o "$B" -w '%{http_code}' --max-time 30 --path-as-is "$URL$1" || echo "000"; }

# acked NAME: the last reply acknowledges NAME.
acked() { tr -d ' \n\t' <"$B" | grep -qF "<result_ack><name>$1</name></result_ack>"; }


# ---- cases ----

CASE=
BEFORE=$TMP/before.sql
AFTER=$TMP/after.sql
IGNORE_HOST=     # a host row a valid RPC of the case updates (rpc_time, rpc_seqno)
UPLOADS_BEFORE=

uploads_list() { (cd "$proj" && find upload -type f 2>/dev/null | sort); }

# begin NAME: the state before a case.
begin() {
    CASE=$1
    IGNORE_HOST=
    dump_store "$proj" >"$BEFORE"
    UPLOADS_BEFORE=$(uploads_list)
    CASE_ERR=
    NOTE=
}

# bad MSG: records why the current case failed (the case goes on).
bad() { CASE_ERR="${CASE_ERR:+$CASE_ERR; }$*"; }

# host_row ID: a host's row without rpc_time and rpc_seqno.
host_row() { sql "$proj" "SELECT id, user_id, create_time, host_cpid, domain_name, platform, os_name, os_version,
                                 p_ncpus, p_fpops, m_nbytes, d_free, total_credit FROM hosts WHERE id=$1"; }

# end: compares the store (and the upload folder) with the state before.
end() {
    alive "$LOCUSD_PID" || { bad "locusd died"; }
    dump_store "$proj" >"$AFTER"
    if [ -n "$IGNORE_HOST" ]; then
        # a valid RPC updates its own host's rpc_time and rpc_seqno, nothing else of it
        grep -v "^INSERT INTO hosts VALUES($IGNORE_HOST," "$BEFORE" >"$BEFORE.f"
        grep -v "^INSERT INTO hosts VALUES($IGNORE_HOST," "$AFTER" >"$AFTER.f"
    else
        cp "$BEFORE" "$BEFORE.f"
        cp "$AFTER" "$AFTER.f"
    fi
    if ! diff -q "$BEFORE.f" "$AFTER.f" >/dev/null; then
        bad "the store changed: $(diff "$BEFORE.f" "$AFTER.f" | grep '^[<>]' | head -n 4 | tr '\n' ' ' | cut -c1-600)"
    fi
    [ "$(uploads_list)" = "$UPLOADS_BEFORE" ] || bad "upload folder changed: now $(uploads_list | tr '\n' ' ')"
    if [ -z "$CASE_ERR" ]; then
        passed=$((passed + 1))
        echo "ok   $CASE${NOTE:+ -> $(echo "$NOTE" | tr -s '\n\t ' ' ' | cut -c1-110)}"
    else
        failed=$((failed + 1))
        echo "FAIL $CASE: $CASE_ERR" >&2
    fi
    alive "$LOCUSD_PID" || fail "locusd died during case $CASE"
}

# one_line_400 STATUS: a 400 with a one-line, non-empty text.
expect_one_line() {
    local want=$1 st=$2
    [ "$st" = "$want" ] || bad "HTTP $st, expected $want (body: $(head -c 200 "$B"))"
    NOTE="$st $(head -c 200 "$B")"
    [ -s "$B" ] || { bad "empty body"; return; }
    [ "$(wc -l <"$B")" -eq 1 ] && [ "$(tail -c 1 "$B" | od -An -c | tr -d ' ')" = '\n' ] \
        || bad "body is not one line: $(head -c 300 "$B" | tr '\n' '|')"
}

# ---- setup: two registered hosts, each with one instance ----

# fetch_work KEY HOSTID: an RPC asking for work; prints the first result name sent.
fetch_work() {
    SEQNO=1 request "$1" "$2" 1 >"$R"
    local st
    st=$(post "$SCHED" "$R")
    [ "$st" = 200 ] || fail "work RPC: HTTP $st: $(head -c 300 "$B")"
    tr -d '\n' <"$B" | grep -o '<result>[[:space:]]*<name>[^<]*</name>' | head -n 1 | sed 's|.*<name>\(.*\)</name>|\1|'
}

HA=$(register "$KEY_A")
HB=$(register "$KEY_B")
[ -n "$HA" ] && [ -n "$HB" ] && [ "$HA" != "$HB" ] || fail "registration gave hostids '$HA' and '$HB'"
INST_A=$(fetch_work "$KEY_A" "$HA")
# file_cert NAME: the upload certificate of output NAME in the last reply
file_cert() {
    tr -d '\n' <"$B" | sed 's|<file_info>|\n<file_info>|g' | grep -F "<name>$1</name>" \
        | sed -n 's|.*<xml_signature>[[:space:]]*\([0-9a-f]*\)[[:space:]]*</xml_signature>.*|\1|p' | head -n 1
}
CERT_A=$(file_cert "${INST_A}_0")
INST_B=$(fetch_work "$KEY_B" "$HB")
CERT_B=$(file_cert "${INST_B}_0")
[ -n "$INST_A" ] && [ -n "$INST_B" ] || fail "hosts got no instance: A='$INST_A' B='$INST_B'"
[ ${#CERT_A} = 64 ] && [ ${#CERT_B} = 64 ] || fail "outputs without upload certificates: A='$CERT_A' B='$CERT_B'"
OUT_A=${INST_A}_0     # the instance's output, as named in the reply's file_info
say "hosts $HA (alice) and $HB (bob) registered; instances $INST_A and $INST_B out"

# ---- (a) malformed XML -> 400 ----
malformed() {
    begin "a: malformed XML ($1)"
    printf '%s' "$2" >"$R"
    expect_one_line 400 "$(post "$SCHED" "$R")"
    end
}
malformed "not XML" 'hello, scheduler'
malformed "unclosed elements" "<scheduler_request><authenticator>$KEY_A</authenticator><hostid>$HA"
malformed "mismatched tags" "<scheduler_request><authenticator>$KEY_A</hostid></scheduler_request>"
malformed "wrong root element" "<scheduler_reply><authenticator>$KEY_A</authenticator></scheduler_reply>"
malformed "empty body" ''
malformed "bad number" "$(request "$KEY_A" "$HA" 0 | sed 's|<hostid>[0-9]*</hostid>|<hostid>12abc</hostid>|')"
malformed "result without name" "$(request "$KEY_A" "$HA" 0 '<result><state>5</state></result>')"
laughs='<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a0 "lollollollol">'
for i in 1 2 3 4 5 6 7 8 9; do
    laughs="$laughs<!ENTITY a$i \"$(printf "&a$((i - 1));%.0s" 1 2 3 4 5 6 7 8 9 10)\">"
done
malformed "entity expansion (billion laughs)" "$laughs]><scheduler_request><authenticator>&a9;</authenticator></scheduler_request>"

# ---- (b) truncated ----
begin "b: truncated XML (a valid request cut in the middle)"
request "$KEY_A" 0 0 >"$TMP/full.xml"
head -c $(( $(wc -c <"$TMP/full.xml") / 2 )) "$TMP/full.xml" >"$R"
expect_one_line 400 "$(post "$SCHED" "$R")"
end

begin "b: truncated transfer (Content-Length larger than the bytes sent, then close)"
# The bytes sent are a whole valid first RPC: acted on, it would create a host.
len=$(wc -c <"$TMP/full.xml")
{
    exec 3<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'POST /proj/scheduler HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n' \
        "$PORT" $((len + 1000)) >&3
    cat "$TMP/full.xml" >&3
    sleep 0.5
    exec 3>&-
} 2>/dev/null || true
sleep 0.5
end

# ---- (c) oversized -> 413 ----
{ printf '<scheduler_request>\n<authenticator>%s</authenticator>\n<!-- ' "$KEY_A"
  head -c $((9 * 1024 * 1024)) /dev/zero | tr '\0' 'x'
  printf ' -->\n</scheduler_request>\n'; } >"$TMP/big.xml"
begin "c: oversized request (9 MiB, Content-Length)"
st=$(post "$SCHED" "$TMP/big.xml")
[ "$st" = 413 ] || bad "HTTP $st, expected 413"
end
begin "c: oversized request (9 MiB, chunked)"
st=$(post "$SCHED" "$TMP/big.xml" -H 'Transfer-Encoding: chunked')
[ "$st" = 413 ] || bad "HTTP $st, expected 413"
grep -qi '^Transfer-Encoding: chunked' "$H" 2>/dev/null || true
end
begin "c: oversized request (Content-Length claims 9 MiB, nothing sent)"
{
    exec 3<>"/dev/tcp/127.0.0.1/$PORT"
    printf 'POST /proj/scheduler HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\nConnection: close\r\n\r\n' \
        $((9 * 1024 * 1024)) >&3
    timeout 10 head -n 1 <&3 >"$B" || true
    exec 3>&-
} 2>/dev/null || true
grep -q '^HTTP/1.[01] 413' "$B" || bad "status line '$(head -c 100 "$B")', expected 413"
end

# ---- (d) unknown account key ----
unknown_key() {
    begin "d: unknown account key ($1)"
    request "$2" "$3" 1 >"$R"
    local st
    st=$(post "$SCHED" "$R")
    [ "$st" = 200 ] || bad "HTTP $st, expected 200"
    grep -q '<scheduler_reply>' "$B" || bad "no <scheduler_reply>"
    grep -qi '<message[^>]*>[^<]*account key' "$B" || bad "no <message> about the account key: $(head -c 300 "$B")"
    grep -q '<request_delay>' "$B" || bad "no <request_delay>"
    ! grep -q '<hostid>' "$B" || bad "a hostid was given"
    ! grep -q '<result>' "$B" || bad "work was sent"
    NOTE=$(grep -o '<message[^>]*>[^<]*</message>' "$B")
    end
}
unknown_key "new host" "0123456789abcdef0123456789abcdef" 0
unknown_key "hostid of a registered host" "0123456789abcdef0123456789abcdef" "$HA"
unknown_key "empty key" "" 0
unknown_key "key with markup" "$KEY_A&lt;x&gt;" 0

# ---- (e) upload of a file the server did not ask for ----
upload_case() {  # upload_case CASE NAME NBYTES MD5 DATAFILE WANT_STATUS [CERT]
    begin "$1"
    upload_req "$R" "$2" "$3" "$4" 0 "${7:-}"
    cat "$5" >>"$R"
    local st
    st=$(post "$UPLOAD" "$R")
    [ "$st" = 200 ] || bad "HTTP $st, expected 200"
    local s
    s=$(upload_status)
    [ "$s" = "$6" ] || bad "status '$s', expected $6: $(head -c 300 "$B")"
    if [ "$6" = -1 ]; then grep -q '<message>..*</message>' "$B" || bad "no <message>"; fi
    NOTE="status $s $(sed -n 's|.*<message>\(.*\)</message>.*|\1|p' "$B")"
    end
}
head -c 100 /dev/urandom >"$TMP/d100"
md5_100=$(md5sum <"$TMP/d100" | cut -c1-32)
upload_case "e: upload of an unknown file" "nosuch_file.dat" 100 "$md5_100" "$TMP/d100" -1
upload_case "e: upload of an unknown instance's output" "b1_999_0_0" 100 "$md5_100" "$TMP/d100" -1
upload_case "e: upload of an output index the batch does not have" "${INST_A}_7" 100 "$md5_100" "$TMP/d100" -1
upload_case "e: upload of an input file's name" "in.dat" 100 "$md5_100" "$TMP/d100" -1

# ---- (f) '..' and '/' in names ----
download_case() {
    begin "f: download $1"
    local st
    st=$(get "$1")
    [ "$st" = 404 ] || bad "HTTP $st, expected 404"
    if grep -qa -e 'SQLite format' -e '<master_url>' -e 'root:' -e 'PRIVATE KEY' "$B"; then bad "content leaked"; fi
    end
}
download_case "download/..%2Fconfig.xml"
download_case "download/../locus.db"
download_case "download/..%2F..%2Fproj%2Flocus.db"
download_case "download/%2e%2e%2fconfig.xml"
download_case "download/..%2Fkeys%2Fcode_sign_private"
download_case "download/..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd"
download_case "download/%2Fetc%2Fpasswd"
download_case "download/.."
download_case "download/"
download_case "download/in.dat%00.txt"
# the good name still works
[ "$(get download/in.dat)" = 200 ] && cmp -s "$B" "$TMP/in.dat" || fail "download of in.dat does not work"

upload_case "f: upload named ../config.xml" "../config.xml" 100 "$md5_100" "$TMP/d100" -1
upload_case "f: upload named ..%2Fconfig.xml" "..%2Fconfig.xml" 100 "$md5_100" "$TMP/d100" -1
upload_case "f: upload named a/b" "a/b" 100 "$md5_100" "$TMP/d100" -1
upload_case "f: upload named /tmp/x" "/tmp/locus-bad-input-x" 100 "$md5_100" "$TMP/d100" -1
upload_case "f: upload named .." ".." 100 "$md5_100" "$TMP/d100" -1
upload_case "f: upload named ../${OUT_A}" "../${OUT_A}" 100 "$md5_100" "$TMP/d100" -1
[ ! -e /tmp/locus-bad-input-x ] || { rm -f /tmp/locus-bad-input-x; fail "an upload wrote /tmp/locus-bad-input-x"; }
[ -z "$(find "$proj" -newer "$BEFORE" -name 'config.xml')" ] || fail "config.xml was rewritten by an upload"

size_query() {  # size_query NAME: no size of a file outside the upload folder is told
    begin "f: size query for $1"
    size_req "$R" "$1"
    local st s
    st=$(post "$UPLOAD" "$R")
    [ "$st" = 200 ] || bad "HTTP $st, expected 200"
    s=$(sed -n 's|.*<file_size>\([0-9]*\)</file_size>.*|\1|p' "$B")
    [ -z "$s" ] || [ "$s" = 0 ] || bad "told a size of $s bytes"
    end
}
size_query "../locus.db"
size_query "../config.xml"
size_query "../../proj/locus.db"

# ---- (g) upload of a real expected output beyond its declared size ----
# (end() also checks that nothing new, not even NAME.part, is left under upload/)
head -c 200 /dev/urandom >"$TMP/d200"
md5_first=$(head -c 100 "$TMP/d200" | md5sum | cut -c1-32)
upload_case "g: upload of $OUT_A with 200 bytes sent for nbytes 100" "$OUT_A" 100 "$md5_first" "$TMP/d200" -1 "$CERT_A"
# the same with the excess arriving in a later packet
head -c 300000 /dev/urandom >"$TMP/d300k"
md5_300k=$(md5sum <"$TMP/d300k" | cut -c1-32)
upload_case "g: upload of $OUT_A with 300000 bytes sent for nbytes 1000" "$OUT_A" 1000 "$md5_300k" "$TMP/d300k" -1 "$CERT_A"
upload_case "g: upload of $OUT_A with nbytes 0 and 100 bytes sent" "$OUT_A" 0 "d41d8cd98f00b204e9800998ecf8427e" "$TMP/d100" -1 "$CERT_A"
upload_case "g: upload of $OUT_A beyond its max_nbytes (nbytes 10^12)" "$OUT_A" 1000000000000 "$md5_100" "$TMP/d100" -1 "$CERT_A"
upload_case "g: upload of $OUT_A with a wrong MD5" "$OUT_A" 100 "0123456789abcdef0123456789abcdef" "$TMP/d100" 1 "$CERT_A"
upload_case "g: upload of $OUT_A with a negative nbytes" "$OUT_A" -100 "$md5_100" "$TMP/d100" -1 "$CERT_A"
# ---- (g') someone else's upload of A's output: its name is easy to guess ----
upload_case "g: upload of $OUT_A without its certificate" "$OUT_A" 100 "$md5_100" "$TMP/d100" -1
upload_case "g: upload of $OUT_A with B's certificate" "$OUT_A" 100 "$md5_100" "$TMP/d100" -1 "$CERT_B"
upload_case "g: upload of $OUT_A with a made-up certificate" "$OUT_A" 100 "$md5_100" "$TMP/d100" -1 \
    "$(printf '%064d' 7)"
begin "g: upload header over 64 KiB without <data>"
{ printf '<data_server_request>\n<file_upload>\n<file_info>\n<name>%s</name>\n' "$OUT_A"
  head -c 70000 /dev/zero | tr '\0' ' '; } >"$R"
st=$(post "$UPLOAD" "$R")
[ "$(upload_status)" = -1 ] || bad "status '$(upload_status)', expected -1 (HTTP $st)"
end

# ---- (h) reports ----
# report_xml NAME...: <result> elements reporting success, as the client writes them.
report_xml() {
    local n
    for n in "$@"; do cat <<XML
<result>
    <name>$n</name>
    <final_cpu_time>1.000000</final_cpu_time>
    <final_elapsed_time>1.000000</final_elapsed_time>
    <exit_status>0</exit_status>
    <state>5</state>
    <platform>x86_64-pc-linux-gnu</platform>
    <version_num>100</version_num>
    <app_version_num>100</app_version_num>
    <stderr_out>
<core_client_version>7.20.5</core_client_version>
<![CDATA[
<stderr_txt>
done
</stderr_txt>
]]>
    </stderr_out>
    <file_info>
        <name>${n}_0</name>
        <nbytes>100.000000</nbytes>
        <max_nbytes>67108864.000000</max_nbytes>
        <md5_cksum>$md5_100</md5_cksum>
        <url>${UPLOAD}</url>
    </file_info>
</result>
XML
    done
}
SEQ_A=2
report_case() {  # report_case CASE NAME...: host A reports NAME...; all acked, store unchanged
    local c=$1
    shift
    begin "$c"
    IGNORE_HOST=$HA
    local before_row
    before_row=$(host_row "$HA")
    SEQNO=$SEQ_A request "$KEY_A" "$HA" 0 "$(report_xml "$@")" >"$R"
    SEQ_A=$((SEQ_A + 1))
    local st n
    st=$(post "$SCHED" "$R")
    [ "$st" = 200 ] || bad "HTTP $st, expected 200: $(head -c 200 "$B")"
    for n in "$@"; do acked "$n" || bad "$n not acknowledged"; done
    [ "$(host_row "$HA")" = "$before_row" ] || bad "host $HA changed beyond rpc_time/rpc_seqno"
    end
}
report_case "h: host $HA reports host $HB's instance $INST_B" "$INST_B"
report_case "h: host $HA reports unknown instances" "nosuch_1_0" "b1_999_0" "${INST_A%_*}_7" "b1_0_0" "other_${INST_A#*_}"
report_case "h: host $HA reports a name with markup" "b1_1_0&amp;x" "b1_1_0&lt;/name&gt;"

# Host A's own instance, really uploaded and reported: this one changes the
# store (the instance is over, successful); then every duplicate must not.
begin "h: host $HA uploads and reports its own instance $INST_A (twice in one request)"
upload_req "$R" "$OUT_A" 100 "$md5_100" 0 "$CERT_A"
cat "$TMP/d100" >>"$R"
st=$(post "$UPLOAD" "$R")
[ "$(upload_status)" = 0 ] || bad "the real upload failed: $(head -c 300 "$B")"
[ -n "$(upload_path "$proj" "$OUT_A")" ] || bad "the uploaded file is not kept"
SEQNO=$SEQ_A request "$KEY_A" "$HA" 0 "$(report_xml "$INST_A" "$INST_A")" >"$R"
SEQ_A=$((SEQ_A + 1))
st=$(post "$SCHED" "$R")
[ "$st" = 200 ] || bad "HTTP $st"
acked "$INST_A" || bad "$INST_A not acknowledged"
jid=$(echo "$INST_A" | sed 's|^.*_\([0-9]*\)_\([0-9]*\)$|\1|')
seq=${INST_A##*_}
row=$(sql "$proj" "SELECT state, outcome, host_id FROM instances WHERE job_id=$jid AND seq=$seq")
[ "$row" = "5|1|$HA" ] || bad "instance $INST_A is '$row' in the store, expected 5|1|$HA (over, success)"
# the intended change: that instance's row (and host A's rpc fields, and its batch's instance counts, which
# must still be a full count's); nothing else
bid=$(sql "$proj" "SELECT batch_id FROM jobs WHERE id=$jid")
dump_store "$proj" >"$AFTER"
diff "$BEFORE" "$AFTER" | grep '^[<>]' | grep -v -e "^[<>] INSERT INTO hosts VALUES($HA," \
    -e "^[<>] INSERT INTO instances VALUES([0-9]*,$jid,$seq," -e "^[<>] INSERT INTO batch_insts VALUES($bid," \
    >"$TMP/unexpected" || true
[ ! -s "$TMP/unexpected" ] || bad "other changes: $(head -c 400 "$TMP/unexpected")"
"$LOCUS" db check "$proj" >"$TMP/check" 2>&1 || bad "locus db check after the report: $(head -c 400 "$TMP/check")"
if [ -z "$CASE_ERR" ]; then passed=$((passed + 1)); echo "ok   $CASE"; else failed=$((failed + 1)); echo "FAIL $CASE: $CASE_ERR" >&2; fi

report_case "h: host $HA reports $INST_A again (duplicate report)" "$INST_A"
report_case "h: host $HA reports $INST_A and $INST_B twice each" "$INST_A" "$INST_B" "$INST_A" "$INST_B"
begin "h: host $HB (bob) reports host $HA's finished instance $INST_A"
IGNORE_HOST=$HB
SEQNO=2 request "$KEY_B" "$HB" 0 "$(report_xml "$INST_A")" >"$R"
st=$(post "$SCHED" "$R")
[ "$st" = 200 ] || bad "HTTP $st"
acked "$INST_A" || bad "$INST_A not acknowledged"
end

# ---- the server is still fine ----
locusd_alive || fail "locusd is not serving its master page after the bad input"
curl -sf --max-time 5 "$URL" | grep -q 'boinc_scheduler' || fail "master page lost its scheduler link"
stop_locusd
say "locusd stopped cleanly"
echo "bad_input: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
