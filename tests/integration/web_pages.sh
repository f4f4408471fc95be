#!/usr/bin/env bash
# web_pages: the web site's framework (docs/web.md) against a real locusd:
#  - the home page is the master page, with what BOINC clients read (the
#    rel="boinc_scheduler" link and the <scheduler> comment) and the
#    project's name filled in; PREFIX without its '/' is home too;
#  - pages, scripts, the style sheet and Debian's Chart.js are served with
#    their types, an ETag (304 on If-None-Match), Last-Modified,
#    Cache-Control and the security headers (CSP 'self', no framing, no
#    sniffing, Referrer-Policy), for GET and HEAD;
#  - no folder is listed, no path leads out of the site (.., escapes,
#    hidden files, the project's own files), a file of a type not served
#    is not served, POST to a page is refused;
#  - a <web_dir> missing, or a home page without the scheduler link, stops
#    locusd at start with the reason;
#  - headless Chromium loads the home page: the shared layout is filled in
#    (header, navigation, footer), Chart.js runs under the CSP, nothing is
#    refused in the console; its screenshot is kept.
set -euo pipefail
. "$(dirname "$0")/lib/boinc.sh"
ART=$LOCUS_BUILD_DIR/test-artifacts/web
mkdir -p "$ART"

proj=$TMP/proj
make_project "$proj" alice
cp -r "$LOCUS_SOURCE_DIR/web" "$TMP/web"
echo 'not served' >"$TMP/web/notes.md"
echo 'hidden' >"$TMP/web/.secret.html"
set_config "$proj" web_dir "$TMP/web"
start_locusd "$proj"
PREFIX=/proj/
ORIGIN=http://127.0.0.1:$PORT

# get PATH [CURL ARGS]: status, then headers, then body in $TMP/body
get() {
    local path=$1
    shift
    rm -f "$TMP/body"; : >"$TMP/body"
    curl -s --path-as-is -D "$TMP/headers" -o "$TMP/body" -w '%{http_code}' "$@" "$ORIGIN$path"
}
header() { grep -i "^$1:" "$TMP/headers" | head -n 1 | sed 's/^[^:]*: *//; s/\r$//'; }
expect() { [ "$2" = "$3" ] || fail "$1: expected '$3', got '$2'"; }
secure_headers() {
    has_header "$1" Content-Security-Policy "default-src 'self'"
    has_header "$1" Content-Security-Policy "frame-ancestors 'none'"
    has_header "$1" X-Content-Type-Options nosniff
    has_header "$1" Referrer-Policy same-origin
}
has_header() { header "$2" | grep -qF -- "$3" || fail "$1: header $2 lacks '$3': $(header "$2")"; }

# ---- the home page, the master page ----
expect "GET $PREFIX" "$(get $PREFIX)" 200
expect "home's type" "$(header Content-Type)" "text/html; charset=utf-8"
grep -qF "<link rel=\"boinc_scheduler\" href=\"${URL}scheduler\">" "$TMP/body" || fail "home lacks the scheduler link"
grep -qF "<!-- <scheduler>${URL}scheduler</scheduler> -->" "$TMP/body" || fail "home lacks the scheduler comment"
grep -qF "<title>Locus web_pages</title>" "$TMP/body" || fail "home's title is not the project's name"
grep -qF "<base href=\"$PREFIX\">" "$TMP/body" || fail "home's base is not the prefix"
! grep -q '{{' "$TMP/body" || fail "home holds a {{token}} not filled in: $(grep '{{' "$TMP/body")"
secure_headers "home"
home_etag=$(header ETag)
[[ $home_etag =~ ^\"[0-9a-f]{16}\"$ ]] || fail "home's ETag: $home_etag"
[ -n "$(header Last-Modified)" ] || fail "home has no Last-Modified"
expect "home's Cache-Control" "$(header Cache-Control)" no-cache
cp "$TMP/body" "$TMP/home.html"
expect "GET ${PREFIX%/}" "$(get ${PREFIX%/})" 200
cmp -s "$TMP/body" "$TMP/home.html" || fail "${PREFIX%/} is not the home page"
expect "GET ${PREFIX}index.html" "$(get ${PREFIX}index.html)" 200
cmp -s "$TMP/body" "$TMP/home.html" || fail "index.html is not the home page"
expect "If-None-Match" "$(get $PREFIX -H "If-None-Match: $home_etag")" 304
[ ! -s "$TMP/body" ] || fail "a 304 has a body"
expect "304's ETag" "$(header ETag)" "$home_etag"
expect "If-None-Match among others" "$(get $PREFIX -H "If-None-Match: \"0000000000000000\", $home_etag")" 304
expect "If-None-Match of another version" "$(get $PREFIX -H 'If-None-Match: "0123456789abcdef"')" 200
say "home: the master page with the scheduler link and comment, ETag and 304, security headers"

# ---- static files: types, HEAD, Chart.js ----
for f in static/site.js:text/javascript static/site.css:text/css static/vendor/chart.min.js:text/javascript; do
    path=${f%%:*} type=${f#*:}
    expect "GET $path" "$(get "$PREFIX$path")" 200
    expect "$path's type" "$(header Content-Type)" "$type; charset=utf-8"
    secure_headers "$path"
    len=$(stat -c %s "$TMP/body")
    expect "HEAD $path" "$(get "$PREFIX$path" -I)" 200
    expect "HEAD $path's length" "$(header Content-Length)" "$len"
    cmp -s "$TMP/body" "$TMP/headers" || fail "HEAD $path has a body"   # curl -I writes the headers alone
done
get ${PREFIX}static/vendor/chart.min.js >/dev/null
cmp -s "$TMP/body" /usr/share/javascript/chart.js/chart.min.js || fail "Chart.js is not Debian's file"
expect "Chart.js's Cache-Control" "$(header Cache-Control)" "public, max-age=86400"
get ${PREFIX}static/site.js >/dev/null
cmp -s "$TMP/body" "$TMP/web/static/site.js" || fail "site.js is not the file of web/"
say "static files: types, HEAD with the length and no body, Chart.js from libjs-chart.js"

# ---- nothing else: folders, path tricks, types not served, other methods ----
for p in static static/ static/vendor/ "static/./site.js" "static//site.js" "static/../index.html" \
         "static/%2e%2e/index.html" "%2e%2e/proj/config.xml" "../proj/config.xml" "static/..%2fconfig.xml" \
         config.xml locus.db keys/upload_key .secret.html notes.md "index.html%00.txt" "static/site.js/" \
         "STATIC/site.js" "static\\site.js" "index.html?x=1/../config.xml"; do
    code=$(get "$PREFIX$p")
    case "$p" in
        "index.html?x=1/../config.xml")   # the query string is no part of the path: the home page
            expect "GET $PREFIX$p" "$code" 200; cmp -s "$TMP/body" "$TMP/home.html" || fail "$p: not home" ;;
        *) expect "GET $PREFIX$p" "$code" 404
           ! grep -q -e '<config>' -e 'SQLite' -e 'PRIVATE' -e 'hidden' -e 'not served' "$TMP/body" \
               || fail "$p leaked a file: $(head -c 200 "$TMP/body")" ;;
    esac
done
expect "POST a page" "$(get ${PREFIX}index.html -X POST -d x=1)" 404
expect "PUT a page" "$(get ${PREFIX}static/site.js -X PUT -d x=1)" 404
expect "GET outside the prefix" "$(get /static/site.js)" 404
say "no folder listed, no path trick, no hidden or unserved file, no other method"

# ---- the browser: layout, Chart.js under the CSP ----
python3 - "$(dirname "$0")/lib" "$URL" "$ART" <<'PY' || fail "the browser's checks failed"
import sys
sys.path.insert(0, sys.argv[1])
from browser import Browser
url, art = sys.argv[2], sys.argv[3]
with Browser(art) as b:
    b.get(url)
    b.wait_ready()
    brand = b.text('header.site .brand')
    assert brand == 'Locus web_pages', 'the header names %r' % brand
    nav = b.texts('header.site nav a')
    assert 'Home' in nav, 'the navigation: %r' % nav
    assert 'runs on locus' in b.text('footer.site'), 'no footer'
    assert b.text('#join-url') == url, 'the join URL: %r' % b.text('#join-url')
    assert b.script("return document.querySelector('link[rel=boinc_scheduler]').href") == url + 'scheduler'
    # Chart.js runs under the CSP (style-src 'self'): a chart is drawn on a canvas
    drawn = b.script("""
        const s = document.createElement('script'); s.src = 'static/vendor/chart.min.js';
        return new Promise((ok) => { s.onload = () => {
            const c = document.createElement('canvas'); document.getElementById('main').append(c);
            const ch = new Chart(c, {type: 'line', data: {labels: [1, 2], datasets: [{data: [1, 2]}]},
                                      options: {animation: false}});
            ok(ch.getDatasetMeta(0).data.length); }; document.head.append(s); });""")
    assert drawn == 2, 'Chart.js drew %r points' % drawn
    severe = [e['message'] for e in b.console() if e.get('level') == 'SEVERE']
    assert not severe, 'console errors: %r' % severe
    b.keep('home')
print('browser: layout filled, Chart.js drew under the CSP, no console error')
PY
say "Chromium: the layout is filled in, Chart.js draws under the CSP; screenshot in $ART/home.png"

# ---- a web_dir missing, or a home page without the scheduler link: no start ----
stop_locusd
set_config "$proj" web_dir "$TMP/nowhere"
out=$("$LOCUSD" "$proj" 2>&1) && fail "locusd started with a missing web_dir"
grep -q "web_dir.*nowhere: no such folder" <<<"$out" || fail "missing web_dir: $out"
sed -i 's/rel="boinc_scheduler"/rel="stylesheet"/' "$TMP/web/index.html"
set_config "$proj" web_dir "$TMP/web"
out=$("$LOCUSD" "$proj" 2>&1) && fail "locusd started with a home page without the scheduler link"
grep -q "lacks <link rel=\"boinc_scheduler\"" <<<"$out" || fail "home without the link: $out"
say "a missing web_dir and a home page without the scheduler link stop locusd at start"
say "PASS"
