#!/usr/bin/env bash
# package_install: the Debian package that `make deb` makes, built here
# from this tree (scripts/deb.sh, into the test's own folder, so that a
# fresh clone needs nothing made before) and extracted into a scratch root
# with dpkg -x: no maintainer script runs, nothing outside the test's
# folder changes. Checks what the package holds (programs, units, the
# sysusers and tmpfiles files, configuration, docs), its dependencies and
# maintainer scripts (users made, no unit enabled or started), the units
# with systemd-analyze verify and the users and folders with
# systemd-sysusers and systemd-tmpfiles --root on the scratch root, where
# those tools are. Then the installed `locus init` makes a project in the
# scratch root's /var/lib/locus and the installed `locusd --check` says it
# would start; with config.xml damaged, that it would not and why; with
# the folder another user's, that it must be checked as that user; and its
# warnings carry the journal's priority when stderr is the journal.
set -euo pipefail

src=${LOCUS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d /tmp/locus-package-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
T0=$(date +%s)
say() { echo "[package_install +$(( $(date +%s) - T0 ))s] $*"; }
fail() { echo "[package_install] FAIL: $*" >&2; exit 1; }
for t in dpkg-buildpackage dh dpkg-deb; do
    command -v "$t" >/dev/null || fail "$t is missing; run scripts/deps.sh"
done

say "building the package"
deb=$(bash "$src/scripts/deb.sh" "$work/deb" 2) || fail "the package did not build"
root=$work/root
mkdir "$root"
dpkg -x "$deb" "$root"
say "built $(basename "$deb") ($(stat -c %s "$deb") bytes), extracted"

# ---- what it holds ----
for f in usr/bin/locusd usr/bin/locus usr/bin/locus-client usr/bin/locus-sim; do
    [ -x "$root/$f" ] || fail "no program /$f"
done
for f in lib/systemd/system/locusd@.service lib/systemd/system/locus-client.service \
         usr/lib/sysusers.d/locus.conf usr/lib/tmpfiles.d/locus.conf \
         etc/locus/locusd.conf etc/locus/locus-client.conf usr/share/doc/locus/copyright \
         usr/share/locus/web/index.html usr/share/locus/web/static/site.js \
         usr/lib/python3/dist-packages/locus_client.py; do
    [ -f "$root/$f" ] || fail "no file /$f"
done
for f in README.md operations.md guide.md client.md; do   # compressed when large (dh_compress)
    [ -f "$root/usr/share/doc/locus/$f" ] || [ -f "$root/usr/share/doc/locus/$f.gz" ] ||
        fail "no document /usr/share/doc/locus/$f"
done
depends=$(dpkg-deb -f "$deb" Depends)
for d in libsqlite3 libmicrohttpd libsodium liblua5.4 libjs-chart.js "systemd | systemd-standalone-sysusers"; do
    grep -qF "$d" <<<"$depends" || fail "Depends lacks $d: $depends"
done
ctl=$work/control
dpkg-deb -e "$deb" "$ctl"
grep -qx /etc/locus/locusd.conf "$ctl/conffiles" || fail "/etc/locus/locusd.conf is no conffile"
grep -q "systemd-sysusers .*locus.conf" "$ctl/postinst" || fail "postinst makes no user"
grep -q "systemd-tmpfiles .*--create locus.conf" "$ctl/postinst" || fail "postinst makes no /var/lib/locus"
# Units are started only through deb-systemd-invoke, which starts none
# that is not enabled, and enabled only in debhelper's form that enables
# locus-client.service again where the operator had (on a new install, not).
if grep -E "systemctl .*(start|enable)" "$ctl/postinst"; then fail "postinst starts or enables a unit"; fi
grep -q "deb-systemd-helper debian-installed 'locus-client.service'" "$ctl/postinst" ||
    fail "postinst enables locus-client.service on installation"
grep -q "locusd@" "$ctl/postinst" && fail "postinst acts on locusd@.service"
unit=$root/lib/systemd/system/locusd@.service
grep -qx "ExecStart=/usr/bin/locusd /var/lib/locus/%i \$LOCUSD_OPTS" "$unit" || fail "locusd@.service: $(grep ExecStart "$unit")"
grep -qx "User=locus" "$unit" || fail "locusd@.service runs as another user"
grep -qx "EnvironmentFile=-/etc/locus/locusd.conf" "$unit" || fail "locusd@.service reads no /etc/locus/locusd.conf"
grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$unit" || fail "locusd@.service: $(grep ExecReload "$unit")"
grep -q "^ExecReload" "$root/lib/systemd/system/locus-client.service" && fail "locus-client.service has ExecReload"
say "the package holds the programs, units, users, configuration and docs"

# ---- the units and users, by systemd's own tools ----
if command -v systemd-analyze >/dev/null; then
    # verify wants the programs where ExecStart says: the scratch root's
    units=$work/units
    mkdir "$units"
    for u in locus-client.service locusd@.service; do
        sed "s|=/usr/bin/|=$root/usr/bin/|; s|=-/etc/|=-$root/etc/|" "$root/lib/systemd/system/$u" >"$units/$u"
    done
    cp "$units/locusd@.service" "$units/locusd@demo.service"   # a template is verified as an instance
    out=$(systemd-analyze verify --man=no "$units/locus-client.service" "$units/locusd@demo.service" 2>&1) ||
        fail "systemd-analyze verify: $out"
    [ -z "$out" ] || fail "systemd-analyze verify complains: $out"
    say "systemd-analyze verify: both units are clean"
else
    say "systemd-analyze is not here: the units are not verified"
fi
if command -v systemd-sysusers >/dev/null && command -v systemd-tmpfiles >/dev/null; then
    mkdir -p "$root/etc"
    systemd-sysusers --root="$root" locus.conf 2>"$work/sysusers.err" ||
        fail "systemd-sysusers: $(cat "$work/sysusers.err")"
    for u in locus locus-client; do
        grep -q "^$u:x:[0-9]*:[0-9]*:[^:]*:/var/lib/$u:/usr/sbin/nologin$" "$root/etc/passwd" ||
            fail "no system user $u in the scratch root: $(cat "$root/etc/passwd")"
    done
    grep -q "^render:.*locus-client" "$root/etc/group" || fail "locus-client is not in the group render"
    systemd-tmpfiles --root="$root" --create locus.conf 2>"$work/tmpfiles.err" ||
        fail "systemd-tmpfiles: $(cat "$work/tmpfiles.err")"
    [ "$(stat -c %a "$root/var/lib/locus")" = 750 ] || fail "/var/lib/locus is not 0750"
    say "systemd-sysusers and systemd-tmpfiles made the users and /var/lib/locus in the scratch root"
else
    mkdir -p "$root/var/lib/locus"
    say "systemd-sysusers or systemd-tmpfiles is not here: the users and folders are not made"
fi

# ---- the installed programs ----
bin=$root/usr/bin
proj=$root/var/lib/locus/demo
"$bin/locusd" --help | grep -q -- "--check" || fail "locusd --help does not mention --check"
"$bin/locus" init "$proj" --url http://127.0.0.1:8126/demo/ >/dev/null
"$bin/locusd" --check "$proj" >"$work/out" 2>"$work/err" || fail "locusd --check failed: $(cat "$work/err")"
grep -qx "OK: locusd would start" "$work/out" || fail "locusd --check said: $(cat "$work/out")"
grep -q "^store .*, schema [0-9]*$" "$work/out" || fail "locusd --check names no schema: $(cat "$work/out")"
say "locusd --check on a new project: $(tr '\n' ';' <"$work/out")"
PYTHONPATH=$root/usr/lib/python3/dist-packages python3 -c 'import locus_client; locus_client.Client' ||
    fail "the installed locus_client.py does not import"
say "the installed Python module imports"

# a warning, in the journal's form where stderr is the journal
chmod 0755 "$proj"
: >"$work/journal"
JOURNAL_STREAM=$(stat -c %d:%i "$work/journal") "$bin/locusd" --check "$proj" >/dev/null 2>>"$work/journal" ||
    fail "locusd --check failed: $(cat "$work/journal")"
grep -q "^<4>.*was readable by others" "$work/journal" || fail "no journal warning: $(cat "$work/journal")"
say "its warning to the journal: $(head -n 1 "$work/journal")"

cp "$proj/config.xml" "$work/config.xml"
printf '<locus><config><project_name>demo' >"$proj/config.xml"
status=0
"$bin/locusd" --check "$proj" >"$work/out" 2>"$work/err" || status=$?
[ "$status" -eq 1 ] || fail "locusd --check on a damaged config.xml: exit status $status"
[ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "^locusd: .* would not start: .*config.xml" "$work/err" ||
    fail "locusd --check on a damaged config.xml said: $(cat "$work/err")"
[ -s "$work/out" ] && fail "locusd --check on a damaged config.xml printed: $(cat "$work/out")"
say "locusd --check on a damaged config.xml: $(cat "$work/err")"
cp "$work/config.xml" "$proj/config.xml"

if [ "$(id -u)" = 0 ]; then
    chown -R nobody "$proj"
    status=0
    "$bin/locusd" --check "$proj" >/dev/null 2>"$work/err" || status=$?
    [ "$status" -eq 1 ] && grep -q "belongs to nobody .*sudo -u nobody locusd --check" "$work/err" ||
        fail "locusd --check as root on nobody's project: status $status, $(cat "$work/err")"
    say "locusd --check as root on nobody's project: $(cat "$work/err")"
fi
say "passed"
