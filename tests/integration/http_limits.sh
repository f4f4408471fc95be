#!/usr/bin/env bash
# http_limits: what one address, and everyone together, may hold of a
# real locusd (issue 18, item 11). With max_connections_per_ip 4, six idle
# connections from one address leave four open; with http_preauth_timeout
# 2, those are closed within seconds, while a download that stalls longer
# (its reader pauses 6 s) goes on to the end (http_idle_timeout, 30); with
# max_body_mib_in_flight 1, a
# scheduler request whose body would pass it while another's body is held
# gets 503 (it would have held up to 8 MiB each before authentication),
# the held one is answered as usual, and the next request is served. At
# start locusd raises its open-file limit to fit max_connections (from a
# soft limit of 1024), and with a hard limit too low it serves fewer
# connections and says so. The project's store is unchanged by the refused
# requests, and no sanitizer report.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"

proj=$TMP/proj
make_project "$proj" alice
set_config "$proj" max_connections_per_ip 4
set_config "$proj" http_preauth_timeout 2
head -c $((64 << 20)) /dev/urandom >"$TMP/big.dat"
"$LOCUS" file add "$proj" "$TMP/big.dat" >/dev/null || fail "locus file add big.dat failed"
set_config "$proj" max_body_mib_in_flight 1
ulimit -Sn 1024
start_locusd "$proj"
soft=$(awk '/^Max open files/ {print $4}' "/proc/$LOCUSD_PID/limits")
[ "$soft" -ge $((4096 + 256)) ] || fail "locusd's open-file limit is $soft, below 4096 connections"
say "open-file limit raised from 1024 to $soft"

# six idle connections from 127.0.0.1: the server closes all but four at
# once, and those after the idle timeout
python3 - "$PORT" <<'PY' || fail "per-address connections or idle timeout not enforced"
import socket, sys, time
port = int(sys.argv[1])
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
time.sleep(1)
def closed(s):
    s.settimeout(0.2)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True
shut = [closed(s) for s in socks]
print("closed at once:", sum(shut))
assert sum(shut) == 2, shut
t0 = time.time()
while time.time() - t0 < 15 and not all(closed(s) for s in socks):
    time.sleep(0.5)
print("all closed after %.1f s" % (time.time() - t0))
assert all(closed(s) for s in socks)
PY
say "four connections per address, idle ones closed"

# a download whose reader pauses: the server's sends stall (the socket
# buffers, a few MiB, are full) longer than http_preauth_timeout
python3 - "$PORT" "$TMP/big.dat" <<'PY' || fail "a stalled download was cut off"
import hashlib, os, socket, sys, time
port, path = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"GET /proj/download/big.dat HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
data = s.recv(65536)
time.sleep(6)
while True:
    chunk = s.recv(1 << 20)
    if not chunk: break
    data += chunk
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode(), len(body), "bytes")
assert head.startswith(b"HTTP/1.1 200"), head[:100]
assert len(body) == os.path.getsize(path), len(body)
assert hashlib.sha256(body).digest() == hashlib.sha256(open(path, "rb").read()).digest()
PY
say "a download stalled 6 s went on to its end"

# two scheduler requests whose bodies together pass 1 MiB
snapshot() { dump_store "$proj"; }
snapshot >"$TMP/before.sql"
python3 - "$PORT" <<'PY' || fail "bodies in flight not bounded"
import socket, sys, time
port = int(sys.argv[1])
def start(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /proj/scheduler HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % n)
    return s
def answer(s):
    s.settimeout(10)
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk: break
        data += chunk
    return data.split(b"\r\n")[0].decode()
held, late = start(800000), start(800000)
held.sendall(b"x" * 700000)
time.sleep(0.5)
late.sendall(b"y" * 800000)
a = answer(late)
print("second:", a)
assert " 503 " in a, a
held.sendall(b"x" * 100000)
b = answer(held)
print("first:", b)
assert " 503 " not in b, b
PY
snapshot >"$TMP/after.sql"
cmp -s "$TMP/before.sql" "$TMP/after.sql" || fail "the refused requests changed the store"
curl -sf -o /dev/null --max-time 5 "$URL" || fail "locusd does not serve after the refusals"
say "a body past the bound in flight refused with 503, the one held answered, the server serving"
stop_locusd
check_sanitizers

# a hard limit too low for max_connections: fewer connections, and the log says so
(
    ulimit -Hn 1500
    start_locusd "$proj"
    soft=$(awk '/^Max open files/ {print $4}' "/proc/$LOCUSD_PID/limits")
    [ "$soft" = 1500 ] || fail "soft limit $soft, expected the hard limit 1500"
    grep -q "open files are limited to 1500 (ulimit -n; the hard limit): 1244 connections" "$LOCUSD_LOG" \
        || fail "locusd did not say it serves fewer connections"
    stop_locusd
)
check_sanitizers
say "PASS"
