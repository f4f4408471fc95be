#!/bin/sh
# make_jobs.sh - an on-demand job generator for a cursor batch made with
# `locus batch create --cursors N --generate M` (docs/cursors.md).
#
# locusd runs it as <cursor_work_generator> with the batch's name and the
# numbers of the jobs to make, FIRST to LAST, when a cursor's jobs never
# sent fall to half of <cursor_cushion>:
#   <cursor_work_generator>sh /path/to/make_jobs.sh "$1" "$2" "$3"</cursor_work_generator>
# It writes one job description per number, in order, and files them with
# `locus batch add-jobs`, which puts them in their cursor; locusd then loads
# them. A real project would also make each job's own input files here.
#
# The file sequence: NFILES files named after FILES, a printf pattern of the
# file's number from 1 (registered with locus file add --sticky). Job k
# starts at file (k - 1) / PER_FILE + 1 and reads SPAN consecutive files,
# fewer at the end of the sequence.
# Settings (environment, with defaults): LOCUS (locus), FILES (F%04d.dat),
# NFILES (required), PER_FILE (10), SPAN (2), ARGS (--iterations 1000000;
# each job adds --seed k), FLOPS (1e10).
# locusd sets LOCUS_PROJECT_DIR and runs it in the project's folder.
set -eu
batch=${1:?usage: make_jobs.sh BATCH FIRST LAST}
first=${2:?usage: make_jobs.sh BATCH FIRST LAST}
last=${3:?usage: make_jobs.sh BATCH FIRST LAST}
proj=${LOCUS_PROJECT_DIR:?run by locusd, which sets LOCUS_PROJECT_DIR}
locus=${LOCUS:-locus} files=${FILES:-F%04d.dat} nfiles=${NFILES:?set NFILES, the files in the sequence}
per_file=${PER_FILE:-10} span=${SPAN:-2} args=${ARGS:---iterations 1000000} flops=${FLOPS:-1e10}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
k=$first
while [ "$k" -le "$last" ]; do
    f=$(( (k - 1) / per_file + 1 ))
    [ "$f" -le "$nfiles" ] || f=$nfiles
    end=$(( f + span - 1 ))
    [ "$end" -le "$nfiles" ] || end=$nfiles
    inputs="" i=$f open=in   # the app opens the first as "in", the others as in2, in3...
    while [ "$i" -le "$end" ]; do
        name=$(printf "$files" "$i")
        inputs="$inputs${inputs:+, }\"$name=$open\""
        i=$((i + 1)) open=in$((i - f + 1))
    done
    printf '{"cmdline": "%s --seed %d", "inputs": [%s], "flops": %s}\n' "$args" "$k" "$inputs" "$flops" >> "$tmp"
    k=$((k + 1))
done
"$locus" batch add-jobs "$proj" "$batch" --first "$first" --jobs "$tmp" >/dev/null
