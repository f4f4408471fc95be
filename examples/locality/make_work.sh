#!/bin/sh
# make_work.sh - an on-demand work generator for locality scheduling.
#
# locusd runs it as <locality_work_generator> with the name of a large file
# a host holds and has no work for (it also touched need_work/FILE). locusd
# runs the setting as `sh -c CMD locus-work-generator FILE`, so CMD passes
# the file on as "$1" (LOCUS_FILE also holds it):
#   <locality_work_generator>/path/to/make_work.sh "$1"</locality_work_generator>
# It makes the next chunk of jobs for that file, named FILE__gN_K, as one
# batch, and exits 0; locusd then loads them, wakes the waiting host and
# removes the trigger. When the file has no more chunks it touches
# no_work_available/FILE, so hosts are told to delete the file at once.
#
# Settings (environment, with defaults): LOCUS (the locus command: locus),
# APP (the app: worker), JOBS (jobs per chunk: 10), CHUNKS (chunks per file:
# 3), FLOPS (flops per job: 1e10), DELAY (delay bound in seconds: 86400).
# locusd sets LOCUS_PROJECT_DIR and runs it in the project's folder.
set -eu
file=${1:-${LOCUS_FILE:-}}
[ -n "$file" ] || { echo "usage: make_work.sh FILE (or LOCUS_FILE set, as locusd does)" >&2; exit 2; }
proj=${LOCUS_PROJECT_DIR:?run by locusd, which sets LOCUS_PROJECT_DIR}
locus=${LOCUS:-locus} app=${APP:-worker} jobs=${JOBS:-10} chunks=${CHUNKS:-3}
flops=${FLOPS:-1e10} delay=${DELAY:-86400}
state=$proj/locality_scheduling/generator.$file   # chunks made so far

made=$(cat "$state" 2>/dev/null || echo 0)
if [ "$made" -ge "$chunks" ]; then
    touch "$proj/locality_scheduling/no_work_available/$file"
    exit 0
fi
n=$((made + 1))
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
k=1
while [ "$k" -le "$jobs" ]; do
    printf '{"name": "%s__g%d_%d", "cmdline": "--iterations 1000000 --seed %d", "inputs": ["%s=in"], "flops": %s}\n' \
        "$file" "$n" "$k" "$k" "$file" "$flops" >> "$tmp"
    k=$((k + 1))
done
"$locus" batch create "$proj" --app "$app" --jobs "$tmp" --name "gen_${file}_$n" --delay-bound "$delay" >/dev/null
echo "$n" > "$state"
