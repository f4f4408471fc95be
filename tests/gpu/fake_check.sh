#!/usr/bin/env bash
# tests/gpu/fake_check.sh BUILD [OUTDIR] - a dry run of tests/gpu/gpu_check.sh
# on a machine without a GPU: tests/gpu/fake_libcuda.c stands for the NVIDIA
# driver (one "GPU" that runs gpu_worker's kernel on the CPU with fmaf), so
# the real BOINC client detects a CUDA device, reports it to locusd and runs
# the GPU jobs through it. The sizes are small (4096 threads, 2000
# iterations: the fake is a CPU). BUILD is a release build (see carry.sh);
# OUTDIR (default BUILD/gpu_fake_out) gets gpu_check.sh's files. When BUILD's
# locus has no --plan-class yet, gpu_worker is added without one
# (GPU_CHECK_PLAN_CLASS=0): then it runs as a CPU app, still on the fake.
# GPU_CHECK_CLIENT=locus runs locus-client instead of the BOINC client.
# Exit status: gpu_check.sh's.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then echo "usage: fake_check.sh BUILD [OUTDIR]" >&2; exit 2; fi
build=$(cd "$1" && pwd)
out=${2:-$build/gpu_fake_out}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/gpu_fake.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cc -std=c17 -O2 -Wall -Wextra -Werror -shared -fPIC -o "$tmp/libcuda.so.1" "$here/fake_libcuda.c" -lm
bash "$here/carry.sh" "$tmp/carry" "$build"

if ! "$build/bin/locus" --help 2>&1 | grep -q -e '--plan-class'; then
    echo "fake_check: $build/bin/locus has no --plan-class: gpu_worker goes in as a CPU app" >&2
    export GPU_CHECK_PLAN_CLASS=0
fi
export GPU_CHECK_LIBCUDA=$tmp/libcuda.so.1
export GPU_CHECK_GPU_CMDLINE="--threads 4096 --iterations 2000"
# computed here by the fake and by an OpenMP loop of the x86 FMA instruction
export GPU_CHECK_EXPECT="gpu_worker threads=4096 iterations=2000 sum=749.04841212928295"
export GPU_CHECK_WAIT=${GPU_CHECK_WAIT:-120}
rc=0
bash "$here/gpu_check.sh" "$tmp/carry" "$out" || rc=$?
echo "fake_check: gpu_check.sh exited $rc; its files are in $out"
exit "$rc"
