#!/usr/bin/env bash
# Build the suite drivers with nvcc, one binary per kernel family, plus the host-only self
# test of the CPU references (g++).
#
#   suite/build.sh [-a sm_90[,sm_80,...]] [-j JOBS] [-o OUTDIR] [--require] [--force]
#
# -a   target architectures (default sm_90, i.e. H100/H200); each becomes
#      -gencode arch=compute_XY,code=sm_XY
# -j   parallel nvcc jobs (default: number of CPUs)
# -o   output folder (default suite/build; ignored by git)
# --require  fail (exit 2) when nvcc is missing instead of skipping with exit 0
# --force    rebuild even when a binary is newer than its sources
#
# Writes OUTDIR/<family> and OUTDIR/<family>.ptxas.txt (registers, shared memory, spills per
# kernel from ptxas -v). Exit status: 0 all built (or skipped without nvcc), 1 a build failed.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
archs="sm_90"
jobs="$(nproc 2>/dev/null || echo 2)"
outdir="$here/build"
require=0
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    -a) archs="$2"; shift 2 ;;
    -j) jobs="$2"; shift 2 ;;
    -o) outdir="$2"; shift 2 ;;
    --require) require=1; shift ;;
    --force) force=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
FAMILIES="srivastava polybench hydro1d stencil special divergent"
# NVCC, when set, is used as given; else nvcc on PATH, else /usr/local/cuda/bin/nvcc
if [ -z "${NVCC:-}" ]; then
  NVCC=nvcc
  command -v nvcc >/dev/null 2>&1 || NVCC=/usr/local/cuda/bin/nvcc
fi
if ! command -v "$NVCC" >/dev/null 2>&1; then
  echo "build.sh: SKIP: nvcc not found (set NVCC or put the CUDA toolkit on PATH)" >&2
  [ "$require" = 1 ] && exit 2
  exit 0
fi
mkdir -p "$outdir"
gencode=()
IFS=',' read -r -a arr <<< "$archs"
for a in "${arr[@]}"; do
  num="${a#sm_}"; num="${num#compute_}"
  gencode+=("-gencode" "arch=compute_${num},code=sm_${num}")
done
flags=(-O3 -std=c++17 -lineinfo -Xptxas -v "${gencode[@]}")
echo "build.sh: $("$NVCC" --version | tail -n 2 | head -n 1); archs=$archs; jobs=$jobs; out=$outdir"

build_one() {  # family
  local f="$1" src="$here/$1.cu" bin="$outdir/$1"
  if [ "$force" = 0 ] && [ -x "$bin" ] && [ "$bin" -nt "$src" ] && [ "$bin" -nt "$here/common.cuh" ] \
     && [ "$bin" -nt "$here/ref.h" ] && [ "$(cat "$bin.archs" 2>/dev/null)" = "$archs" ]; then
    echo "  $f: up to date"; return 0
  fi
  local t0=$SECONDS
  if "$NVCC" "${flags[@]}" -o "$bin" "$src" > "$bin.ptxas.txt" 2>&1; then
    echo "$archs" > "$bin.archs"
    echo "  $f: built in $((SECONDS - t0)) s"
  else
    echo "  $f: FAILED (see $bin.ptxas.txt)"; tail -n 20 "$bin.ptxas.txt"; return 1
  fi
}

fail=0
pids=()
for f in $FAMILIES; do
  build_one "$f" & pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
if command -v "${CXX:-g++}" >/dev/null 2>&1; then
  "${CXX:-g++}" -std=c++17 -O1 -Wall -o "$outdir/selftest" "$here/selftest.cpp" || fail=1
fi
exit $fail
