#!/usr/bin/env bash
# tests/gpu/carry.sh OUTDIR BUILD - gathers here (Debian 12) what
# tests/gpu/gpu_check.sh needs on a machine with an NVIDIA GPU that has no
# network and no package manager: locus's release programs from BUILD, the
# BOINC client of Debian's boinc-client package, and every shared library
# they load except glibc's own (the other machine's glibc, 2.34 or newer,
# is used); also the sqlite3 shell if this machine has one, so that the
# check can read the project's store there. Layout of OUTDIR:
#     locusd locus locus-client gpu_worker worker boinc boinccmd   the programs
#     sqlite3                                          (if installed here)
#     lib/                                             their libraries (LD_LIBRARY_PATH)
#     debs/                                            the .deb files boinc came from, for the record
#     MANIFEST.txt                                     versions, sizes, sha256 of it all
# BUILD is a release build, e.g.
#     cmake -S . -B build/gpu_rel -DCMAKE_BUILD_TYPE=Release -DLOCUS_TESTS=OFF
#     make -C build/gpu_rel -j2 locusd locus locus-client example_gpu_worker example_worker
# OUTDIR is emptied first; it must stay small (the device machine gets at
# most 64 MiB with the working tree): copies are stripped, and the script
# fails above 50 MB.
set -euo pipefail

die() { echo "carry.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: carry.sh OUTDIR BUILD"
out=$1
build=$2
limit=$((50 * 1000 * 1000))

progs=("$build/bin/locusd" "$build/bin/locus" "$build/bin/locus-client" "$build/examples/gpu_worker" "$build/examples/worker"
       /usr/bin/boinc /usr/bin/boinccmd)
for p in "${progs[@]}"; do
    [ -x "$p" ] || die "$p is missing (build BUILD in Release; install boinc-client)"
done
command -v sqlite3 >/dev/null && progs+=("$(command -v sqlite3)")
for t in ldd strip objdump sha256sum; do
    command -v "$t" >/dev/null || die "$t is missing"
done

case $out in /|"") die "refusing OUTDIR '$out'" ;; esac
rm -rf "$out"
mkdir -p "$out/lib" "$out/debs"

# glibc's own libraries: the other machine's are used (and must be: they
# go with its ld.so and its libcuda)
is_glibc() {
    case $1 in
        ld-linux*.so*|libc.so.*|libm.so.*|libmvec.so.*|libpthread.so.*|libdl.so.*|librt.so.*|\
        libresolv.so.*|libutil.so.*|libanl.so.*|libnsl.so.*|libBrokenLocale.so.*|libnss_*|\
        libthread_db.so.*|libc_malloc_debug.so.*|linux-vdso.so.*) return 0 ;;
    esac
    return 1
}

for p in "${progs[@]}"; do
    cp -L "$p" "$out/$(basename "$p")"
done

# every library ldd resolves for the programs (ldd lists the whole closure),
# under the name the programs ask for (the soname), symlinks dereferenced
missing=
while read -r name path; do
    is_glibc "$name" && continue
    if [ "$path" = "not" ]; then
        missing="$missing $name"
        continue
    fi
    [ -e "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
done < <(for p in "${progs[@]}"; do ldd "$p"; done \
         | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3} $2 == "=>" && $3 == "not" {print $1, "not"}' | sort -u)
[ -z "$missing" ] || die "ldd finds no$missing"

chmod u+w "$out"/* "$out"/lib/*
for p in "${progs[@]}"; do strip "$out/$(basename "$p")" 2>/dev/null || true; done
strip --strip-unneeded "$out"/lib/* 2>/dev/null || true

# the packages boinc comes from, for the record (not needed to run)
for pkg in boinc-client libboinc7; do
    v=$(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null | sed 's/:/%3a/') || v=
    deb=$(find /var/cache/apt/archives -maxdepth 1 -name "${pkg}_${v}_*.deb" 2>/dev/null | head -n 1)
    if [ -n "$deb" ]; then
        cp "$deb" "$out/debs/"
    elif ! (cd "$out/debs" && apt-get download "$pkg" >/dev/null 2>&1); then
        echo "carry.sh: note: no .deb of $pkg here (not in apt's cache, apt-get download failed); not needed to run" >&2
    fi
done

# the newest glibc symbol version anything carried asks for
need=$( (for f in "$out"/* "$out"/lib/*; do
             objdump -T "$f" 2>/dev/null | awk '$0 ~ /\*UND\*/' | grep -o 'GLIBC_[0-9.]*' || true
         done) | sort -uV | tail -n 1)

{
    echo "carried by tests/gpu/carry.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "locus: $(git -C "$(dirname "$0")" rev-parse HEAD 2>/dev/null || echo '?') ($(git -C "$(dirname "$0")" status --porcelain 2>/dev/null | wc -l) files changed)"
    echo "build: $(cd "$build" && pwd) ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null))"
    echo "boinc: $(/usr/bin/boinc --version 2>/dev/null | head -n 1), package $(dpkg-query -W -f '${Version}' boinc-client 2>/dev/null)"
    # shellcheck disable=SC1091 # the system's file
    echo "here: $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -n 1)"
    echo "needs glibc: ${need#GLIBC_} or newer"
    echo
    (cd "$out" && find . -type f ! -name MANIFEST.txt | sort | while read -r f; do
        printf '%10d  %s  %s\n' "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -c1-16)" "${f#./}"
    done)
} >"$out/MANIFEST.txt"

total=$(du -sb "$out" | cut -f1)
nlib=$(find "$out/lib" -type f | wc -l)
echo "carry.sh: $out: ${#progs[@]} programs, $nlib libraries, $(find "$out/debs" -type f | wc -l) .deb; total $total bytes ($((total / 1024 / 1024)) MiB); needs glibc >= ${need#GLIBC_}"
[ "$total" -le "$limit" ] || die "$out is $total bytes, over the $limit limit"
