# builds.sh - sourced by bench/compare.sh and bench/sim_same.sh: release
# builds (RelWithDebInfo, without the tests) of a revision and of the work
# tree under build/compare/, each kept and rebuilt only where its sources
# changed. The caller sets base (build/compare), jobs (make's -j) and me
# (its name, for errors).

# build SRC BUILD [TARGET]: SRC's programs, or only TARGET, built into BUILD
build() {
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCUS_TESTS=OFF >/dev/null
  cmake --build "$2" -j "$jobs" ${3:+--target "$3"} >"$2.log" 2>&1 ||
    { echo "$me: building $1 failed (see $2.log)" >&2; exit 1; }
}

# build_both SHA ROOT [TARGET]: SHA's files (extracted once into
# $base/SHA/src) built into $base/SHA/build, and the work tree ROOT, as it
# is, into $base/work
build_both() {
  local src=$base/$1/src
  if [ ! -d "$src" ]; then
    mkdir -p "$src.tmp"
    git archive "$1" | tar -x -C "$src.tmp"
    mv "$src.tmp" "$src"
  fi
  echo "$me: building $1 and the work tree" >&2
  build "$src" "$base/$1/build" "${3:-}"
  build "$2" "$base/work" "${3:-}"
}
