#!/usr/bin/env bash
# plot_smoke.sh - tools/plot turns a locus-sim trace into one HTML page of
# inline SVG whose totals agree with what locus-sim printed; a missing file
# or a file that is not a trace fails with one line on stderr and no output.
set -euo pipefail
src=${LOCUS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${LOCUS_BUILD_DIR:-$src/build}
sim=$build/bin/locus-sim
plot=$src/tools/plot
[ -x "$sim" ] || { echo "plot_smoke: $sim not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "plot_smoke: $*" >&2; exit 1; }

"$sim" server "$src/examples/sim/small.txt" --trace "$tmp/T.csv" > "$tmp/sim.out"
jobs_done=$(awk '$1 == "jobs_done" { print $2 }' "$tmp/sim.out")
[ -n "$jobs_done" ] || fail "locus-sim printed no jobs_done line"

"$plot" "$tmp/T.csv" -o "$tmp/T.html" --title 'small <run> & co'
html=$tmp/T.html
[ -s "$html" ] || fail "no output"
grep -q '<svg' "$html" || fail "no <svg> in the page"
opened=$(grep -o '<svg' "$html" | wc -l)
closed=$(grep -o '</svg>' "$html" | wc -l)
[ "$opened" -eq "$closed" ] || fail "$opened <svg> but $closed </svg>"
grep -qF "<span>jobs done $jobs_done</span>" "$html" || fail "totals lack 'jobs done $jobs_done'"
grep -qF '<title>small &lt;run&gt; &amp; co</title>' "$html" || fail "title not escaped"
# self-contained: nothing fetched from elsewhere
if grep -qiE '<script|<link|src="http' "$html"; then fail "page refers to outside resources"; fi
# the default output name: the trace's, .csv replaced by .html
"$plot" "$tmp/T.csv" --hosts 10
[ -s "$tmp/T.html" ] || fail "default output T.html not written"

# errors: exit 1, one line on stderr, no output file (nor a stray temporary)
printf 'hosts 10\njobs 20\n' > "$tmp/notrace.csv"
for input in "$tmp/missing.csv" "$tmp/notrace.csv"; do
    base=${input%.csv}
    for out in "" "$base.out.html"; do
        args=("$input")
        [ -z "$out" ] || args+=(-o "$out")
        set +e
        "$plot" "${args[@]}" > /dev/null 2> "$tmp/err"
        rc=$?
        set -e
        [ "$rc" -eq 1 ] || fail "'${args[*]}' exited $rc, wanted 1"
        [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "'${args[*]}': stderr not one line: $(cat "$tmp/err")"
        if [ -e "$base.html" ] || [ -e "$base.out.html" ]; then fail "'${args[*]}' wrote an output file"; fi
    done
done
for f in "$tmp"/.plot*; do
    [ ! -e "$f" ] || fail "a temporary file was left behind: $f"
done

# usage errors: exit 2
set +e
"$plot" "$tmp/T.csv" --hosts zero > /dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--hosts zero exited $rc, wanted 2"
echo "plot_smoke: ok"
