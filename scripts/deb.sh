#!/usr/bin/env bash
# deb.sh OUT [JOBS]: builds the Debian package locus (debian/) from this
# source tree into OUT (the Makefile's `make deb`: build/deb). dpkg-buildpackage
# works in the tree it is given and writes the packages beside it, in its
# parent: so it is given a copy of the tree under OUT (the files git tracks
# or would track, as they are now), and the source folder is left alone.
# Prints the path of the package on stdout.
set -euo pipefail
out=${1:?usage: deb.sh OUT [JOBS]}
jobs=${2:-$(nproc)}
root=$(cd "$(dirname "$0")/.." && pwd)
for t in dpkg-buildpackage dh dpkg-parsechangelog; do
    command -v "$t" >/dev/null || { echo "deb.sh: $t is missing; run scripts/deps.sh" >&2; exit 1; }
done
version=$(cd "$root" && dpkg-parsechangelog -S Version)
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/locus-$version
rm -rf "$src"
mkdir "$src"
trap 'rm -rf "$src"' EXIT

# The copy: from git when the tree is a checkout (build folders and other
# ignored files stay out; a file deleted but not committed is skipped),
# else everything but build/.
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$root" && git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
        tar --null -T - -cf -) | tar -xf - -C "$src"
else
    tar -C "$root" --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$src"
fi

rm -f "$out"/locus_"$version"_*.deb "$out"/locus-dbgsym_"$version"_*.deb
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
    dpkg-buildpackage -b -us -uc >"$out/build.log" 2>&1) || {
    echo "deb.sh: dpkg-buildpackage failed; the end of $out/build.log:" >&2
    tail -n 30 "$out/build.log" >&2
    exit 1
}
ls "$out"/locus_"$version"_*.deb
