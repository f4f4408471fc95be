#!/usr/bin/env bash
# upload_existence: what a running locusd tells someone who holds no upload
# certificate about the files and instances that exist. Output names are
# guessable (JOB__JOBID_SEQ_K), so an answer that differs between a name
# that exists and one that does not tells the guesser which jobs are out,
# and which outputs arrived. Compared byte for byte (status line, headers
# but Date, body) between an output of an instance out to a host and names
# that do not exist or are not out:
#  (a) its upload without a certificate, with a made-up one, with the
#      certificate of another output: the same permanent error (-1), which
#      does not echo the name; before and after the output arrived
#  (b) a size query for it once its instance was reported: 0, as for none
#  (c) a download of it (an upload is no download): the same 404, as for
#      an unsafe name
# And the host that holds the certificate is served as a BOINC client
# needs: a transient error for an upload cut short, the size held in the
# size query while its instance is out (so that it resumes; the query
# carries no certificate, so this much is told to anyone), the rest
# accepted, and a second upload of the whole file accepted too. With
# http_preauth_timeout 2, the host's upload that pauses 4 s in its data
# (its certificate checked) goes on to the end (http_idle_timeout), while
# one that pauses as long in its header is cut off.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
. "$(dirname "$0")/lib/rpc.sh"

proj=$TMP/proj
make_project "$proj" alice
set_config "$proj" http_preauth_timeout 2
echo '{"cmdline": "--iterations 1000 --seed {n}", "inputs": ["in.dat=in"], "flops": 1e9}' >"$TMP/tmpl.json"
"$LOCUS" batch create "$proj" --app worker --count 3 --input-template "$TMP/tmpl.json" --name b1 >/dev/null \
    || fail "locus batch create failed"
start_locusd "$proj"
SCHED=${URL}scheduler
UPLOAD=${URL}file_upload_handler
KEY=$(key_of alice)
R=$TMP/req.xml B=$TMP/body H=$TMP/headers

# reply_of: the last reply as compared: status line and headers (Date
# dropped, CRs removed), a blank line, the body.
reply_of() { tr -d '\r' <"$H" | grep -v -i '^Date:'; cat "$B"; }

# same_reply WHAT REF: the last reply is byte-identical to the one saved as REF.
same_reply() {
    reply_of >"$TMP/reply.now"
    cmp -s "$TMP/reply.now" "$TMP/$2" || fail "$1: the reply differs from that for a name that does not exist:
$(diff "$TMP/$2" "$TMP/reply.now" | head -n 20)"
}

# upload NAME NBYTES MD5 OFFSET CERT DATAFILE: an upload as the client
# writes it, header and data, CERT as its <xml_signature>, into $R.
upload() {
    upload_req "$R" "$1" "$2" "$3" "$4" "$5"
    cat "$6" >>"$R"
}


file_size_told() { sed -n 's|.*<file_size>\([0-9]*\)</file_size>.*|\1|p' "$B" | head -n 1; }

# ---- a host with one instance out, and its output's certificate ----
HOST=$(register "$KEY")
SEQNO=1 request "$KEY" "$HOST" 1 >"$R"
[ "$(post "$SCHED" "$R")" = 200 ] || fail "work RPC failed: $(head -c 300 "$B")"
INST=$(tr -d '\n' <"$B" | grep -o '<result>[[:space:]]*<name>[^<]*</name>' | head -n 1 \
    | sed 's|.*<name>\(.*\)</name>|\1|')
[ -n "$INST" ] || fail "no instance sent"
cert_of() {  # cert_of NAME: the upload certificate of output NAME in the last reply
    tr -d '\n' <"$B" | sed 's|<file_info>|\n<file_info>|g' | grep -F "<name>$1</name>" \
        | sed -n 's|.*<xml_signature>[[:space:]]*\([0-9a-f]*\)[[:space:]]*</xml_signature>.*|\1|p' | head -n 1
}
OUT=${INST}_0
CERT=$(cert_of "$OUT")
[ ${#CERT} = 64 ] || fail "output $OUT came without an upload certificate"
stem=${INST%_*}                    # JOBNAME__JOBID
job=${stem##*_}
NONE=${stem%_*}_$((job + 1000))_0_0   # no such job
NOT_OUT=${stem}_7_0                # a job that exists, an instance that does not
say "instance $INST out to host $HOST; comparing $OUT with $NONE and $NOT_OUT"

head -c 10000 /dev/urandom >"$TMP/data"
MD5=$(md5sum <"$TMP/data" | cut -c1-32)
head -c 100 "$TMP/data" >"$TMP/first100"

# ---- (a) uploads without the certificate ----
upload "$NONE" 10000 "$MD5" 0 "" "$TMP/data"
[ "$(post "$UPLOAD" "$R")" = 200 ] && [ "$(upload_status)" = -1 ] || fail "upload of $NONE: $(head -c 300 "$B")"
if grep -q "$NONE" "$B"; then fail "the error echoes the name: $(cat "$B")"; fi
reply_of >"$TMP/ref.upload"
a_cases() {  # a_cases WHEN: each upload of OUT without its certificate answers as for NONE
    upload "$NOT_OUT" 10000 "$MD5" 0 "" "$TMP/data"
    post "$UPLOAD" "$R" >/dev/null
    same_reply "$1: upload of $NOT_OUT" ref.upload
    upload "$OUT" 10000 "$MD5" 0 "" "$TMP/data"
    post "$UPLOAD" "$R" >/dev/null
    same_reply "$1: upload of $OUT without a certificate" ref.upload
    upload "$OUT" 10000 "$MD5" 0 "$(printf '%064d' 7)" "$TMP/data"
    post "$UPLOAD" "$R" >/dev/null
    same_reply "$1: upload of $OUT with a made-up certificate" ref.upload
    upload "${INST}_1" 10000 "$MD5" 0 "$CERT" "$TMP/data"
    post "$UPLOAD" "$R" >/dev/null
    same_reply "$1: upload of ${INST}_1 with the certificate of $OUT" ref.upload
    upload "$NONE" 10000 "$MD5" 0 "$CERT" "$TMP/data"
    post "$UPLOAD" "$R" >/dev/null
    same_reply "$1: upload of $NONE with the certificate of $OUT" ref.upload
}
a_cases "before the output arrived"
[ -z "$(find "$proj/upload" -type f 2>/dev/null)" ] || fail "an upload without a certificate left a file"

# ---- the host itself: cut short, resumed, whole, sent again ----
upload "$OUT" 10000 "$MD5" 0 "$CERT" "$TMP/first100"
[ "$(post "$UPLOAD" "$R")" = 200 ] && [ "$(upload_status)" = 1 ] \
    || fail "an upload cut short is not a transient error: $(head -c 300 "$B")"
size_req "$R" "$OUT"
post "$UPLOAD" "$R" >/dev/null
[ "$(file_size_told)" = 100 ] || fail "size query for $OUT while out: '$(file_size_told)', not the 100 bytes held"
tail -c +101 "$TMP/data" >"$TMP/rest"
upload "$OUT" 10000 "$MD5" 100 "$CERT" "$TMP/rest"
[ "$(post "$UPLOAD" "$R")" = 200 ] && [ "$(upload_status)" = 0 ] || fail "resumed upload: $(head -c 300 "$B")"
# slow_post FILE AT: POSTs FILE to the upload handler, pausing 4 s after
# its first AT bytes; the answer's body into $B (empty when the server
# closed the connection).
slow_post() {
    python3 - "$PORT" "$1" "$2" "${URL#http://*/}" >"$B" <<'PY'
import socket, sys, time
port, body, at, prefix = int(sys.argv[1]), open(sys.argv[2], "rb").read(), int(sys.argv[3]), sys.argv[4]
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"POST /%sfile_upload_handler HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
          b"Content-Length: %d\r\n\r\n" % (prefix.encode(), len(body)) + body[:at])
time.sleep(4)
try:
    s.sendall(body[at:])
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk: break
        data += chunk
except OSError:
    data = b""
sys.stdout.write(data.partition(b"\r\n\r\n")[2].decode(errors="replace"))
PY
}
upload "$OUT" 10000 "$MD5" 0 "$CERT" "$TMP/data"
slow_post "$R" 60
[ -z "$(cat "$B")" ] || fail "an upload paused 4 s in its header (before its certificate) was not cut off: $(head -c 300 "$B")"
slow_post "$R" $(( $(stat -c %s "$R") - 5000 ))
[ "$(upload_status)" = 0 ] \
    || fail "the whole file sent again (the client lost the reply), paused 4 s in its data: $(head -c 300 "$B")"
[ -n "$(upload_path "$proj" "$OUT")" ] || fail "$OUT is not in the upload folder"
a_cases "after the output arrived"
say "uploads without the certificate answered alike, before and after the output arrived"

# ---- (c) downloads ----
get() { curl -s -o "$B" -D "$H" --max-time 30 --path-as-is "$URL$1" >/dev/null || true; }
get "download/$NONE"
grep -q '^HTTP/1.1 404' "$H" || fail "download of $NONE: $(head -n 1 "$H")"
reply_of >"$TMP/ref.download"
for p in "download/$OUT" "download/$NOT_OUT" "download/..%2Fupload%2F$OUT" "download/%2e%2e%2fupload%2f$OUT" \
         "download/$OUT%00"; do
    get "$p"
    same_reply "GET $p" ref.download
done
get download/in.dat
grep -q '^HTTP/1.1 200' "$H" && cmp -s "$B" "$TMP/in.dat" || fail "download of in.dat does not work"
say "downloads of an upload's name answered as for none"

# ---- (b) size queries once the instance is reported ----
size_req "$R" "$NONE"
post "$UPLOAD" "$R" >/dev/null
[ "$(file_size_told)" = 0 ] || fail "size query for $NONE: '$(file_size_told)'"
reply_of >"$TMP/ref.size"
size_req "$R" "$NOT_OUT"
post "$UPLOAD" "$R" >/dev/null
same_reply "size query for $NOT_OUT" ref.size
report="<result>
    <name>$INST</name>
    <final_cpu_time>1.000000</final_cpu_time>
    <final_elapsed_time>1.000000</final_elapsed_time>
    <exit_status>0</exit_status>
    <state>5</state>
    <platform>x86_64-pc-linux-gnu</platform>
    <version_num>100</version_num>
    <app_version_num>100</app_version_num>
    <stderr_out>done</stderr_out>
    <file_info>
        <name>$OUT</name>
        <nbytes>10000.000000</nbytes>
        <max_nbytes>67108864.000000</max_nbytes>
        <md5_cksum>$MD5</md5_cksum>
        <url>$UPLOAD</url>
    </file_info>
</result>"
SEQNO=2 request "$KEY" "$HOST" 0 "$report" >"$R"
[ "$(post "$SCHED" "$R")" = 200 ] || fail "report RPC failed: $(head -c 300 "$B")"
tr -d ' \n\t' <"$B" | grep -qF "<result_ack><name>$INST</name></result_ack>" || fail "$INST not acknowledged"
size_req "$R" "$OUT"
post "$UPLOAD" "$R" >/dev/null
same_reply "size query for $OUT once its instance was reported" ref.size
say "size queries answered alike once the instance was reported"

stop_locusd
say "passed"
