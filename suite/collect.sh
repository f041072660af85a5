#!/usr/bin/env bash
# Collect the suite's data on a GPU machine in one go: build, SASS, result checks and timed
# runs, ncu profiles with gpuproj's metric list, machine description, manifest; pack it all.
#
#   suite/collect.sh [--budget-s 510] [--out DIR] [--quick] [--no-ncu] [--no-build] [--seed N]
#
# --budget-s  wall-clock seconds the whole script may take (default 510, for a 600 s call);
#             ncu steps are skipped once the budget runs low, the packing always happens
# --out       where the packed results go (default: $OUT, else ./out/suite)
# --quick     smallest size of each family only (a smoke test of the whole pipeline)
# --no-ncu    timed runs and SASS only
# --no-build  use the binaries already in suite/build
# --seed      input seed of every driver run, timed and ncu (default 20261124, the same on
#             every GPU, so that "the same (kernel, config)" is the same work everywhere)
#
# Results: DIR/suite-<gpu>.tar.gz holding data/suite/<gpu>/ (unpack it in the repository
# root), plus DIR/summary-<gpu>.txt, DIR/measurements-<gpu>.csv and DIR/collect-<gpu>.log
# for a quick look: 4 files, none in sub-folders. Layout and manifest: docs/suite.md.
# Leaves the GPU's settings alone: no clock locking by this script, and ncu runs with
# --clock-control none (its default would lock the clocks to base; see docs/suite.md).
set -u
START=$SECONDS
BUDGET=510
OUTDIR="${OUT:-}"
QUICK=0
NCU_ON=1
BUILD=1
SEED=20261124  # one fixed seed for the whole collection, on every GPU (docs/suite.md)
while [ $# -gt 0 ]; do
  case "$1" in
    --budget-s) BUDGET="$2"; shift 2 ;;
    --out) OUTDIR="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --no-ncu) NCU_ON=0; shift ;;
    --no-build) BUILD=0; shift ;;
    --seed) SEED="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "collect.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
REPO="$(cd "$(dirname "$0")/.." && pwd)"
SUITE="$REPO/suite"
BIN="$SUITE/build"
[ -n "$OUTDIR" ] || OUTDIR="$REPO/out/suite"
mkdir -p "$OUTDIR"
export PYTHONPATH="$REPO/src${PYTHONPATH:+:$PYTHONPATH}"
PY="$(command -v python3 || command -v python)"
left() { echo $((BUDGET - (SECONDS - START))); }

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "collect.sh: no nvidia-smi: this script needs a machine with an NVIDIA GPU" >&2
  exit 2
fi
GPU_NAME="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | sed 's/ *$//')"
GPU_ID="$("$PY" - "$GPU_NAME" <<'EOF' 2>/dev/null
import re, sys
name = sys.argv[1]
try:
    from gpuproj.catalog import load_catalog
    print(load_catalog().resolve(name).id)
except Exception:
    print(re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "unknown-gpu")
EOF
)"
[ -n "$GPU_ID" ] || GPU_ID="unknown-gpu"
WORK="$(mktemp -d /tmp/suite-collect.XXXXXX)"
D="$WORK/data/suite/$GPU_ID"
mkdir -p "$D/env" "$D/ncu" "$D/sass" "$D/ptxas" "$D/logs"
LOG="$D/logs/collect.log"
exec > >(tee -a "$LOG") 2>&1
echo "collect.sh: GPU '$GPU_NAME' -> $GPU_ID; budget ${BUDGET}s; work $WORK; out $OUTDIR"
printf '%s\n' "$GPU_ID" > "$D/env/catalog_id.txt"

# step NAME CMD...: run, log status and seconds to steps.tsv
step() {
  local name="$1" t0=$SECONDS rc
  shift
  echo "== $name ($(left)s left)" >&2
  "$@"
  rc=$?
  local st=ok
  [ $rc = 0 ] || st="failed(rc=$rc)"
  [ $rc = 124 ] && st="timeout"
  printf '%s\t%s\t%s\t%s\n' "$name" "$st" "$((SECONDS - t0))" "${STEP_DETAIL:-}" >> "$D/steps.tsv"
  STEP_DETAIL=""
  return $rc
}
skip_step() { printf '%s\tskipped\t0\t%s\n' "$1" "$2" >> "$D/steps.tsv"; echo "== $1 skipped: $2"; }

pack() {  # copy the current state to OUTDIR (called after the timed runs and at the end)
  "$PY" "$SUITE/manifest.py" "$D" --suite-dir "$SUITE" || echo "manifest failed"
  tar -czf "$OUTDIR/suite-$GPU_ID.tar.gz" -C "$WORK" data
  [ -f "$D/measurements.csv" ] && cp "$D/measurements.csv" "$OUTDIR/measurements-$GPU_ID.csv"
  {
    echo "GPU: $GPU_NAME ($GPU_ID)   elapsed: $((SECONDS - START)) s"
    cat "$D/steps.tsv" 2>/dev/null
    "$PY" - "$D/manifest.json" <<'EOF' 2>/dev/null
import json, sys
m = json.load(open(sys.argv[1]))
c = m["checks"]
print(f"checks: {c['passed']} passed, {c['failed']} failed, {len(c['skipped'])} configs skipped")
for f in c["failures"]:
    print("  FAILED", f)
for s in c["skipped"]:
    print("  skipped", s)
print(f"files: {len(m['files'])}, {sum(f['bytes'] for f in m['files']) / 1e6:.2f} MB")
EOF
  } > "$OUTDIR/summary-$GPU_ID.txt"
  cp "$LOG" "$OUTDIR/collect-$GPU_ID.log" 2>/dev/null
  return 0
}

# ------------------------------------------------------------------ 1. the machine
env_capture() {
  date -u +%Y-%m-%dT%H:%M:%SZ > "$D/env/date.txt"
  uname -a > "$D/env/uname.txt"
  nvidia-smi > "$D/env/nvidia-smi.txt" 2>&1
  nvidia-smi -q > "$D/env/nvidia-smi-q.txt" 2>&1
  nvcc --version > "$D/env/nvcc.txt" 2>&1 || /usr/local/cuda/bin/nvcc --version > "$D/env/nvcc.txt" 2>&1
  (cd "$REPO" && git rev-parse HEAD 2>/dev/null) > "$D/env/git.txt" || echo "unknown" > "$D/env/git.txt"
  # whether the sources that run differ from that commit: describe --dirty, and the changed
  # files (an empty git-status.txt is a clean tree; absent when git or .git is missing)
  (cd "$REPO" && git describe --always --dirty 2>/dev/null) > "$D/env/git-describe.txt" || rm -f "$D/env/git-describe.txt"
  (cd "$REPO" && git status --porcelain 2>/dev/null) > "$D/env/git-status.txt" || rm -f "$D/env/git-status.txt"
  echo "$SEED" > "$D/env/seed.txt"
  echo "sm_90" > "$D/env/archs.txt"
  return 0
}
# clocks and state; a field this driver does not know makes the query fail: fall back
SMI_FIELDS="name,driver_version,pci.bus_id,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,clocks.applications.graphics,clocks.applications.memory,power.draw,power.limit,temperature.gpu,pstate,persistence_mode,compute_mode,mig.mode.current,ecc.mode.current"
smi_query() {  # FILE
  nvidia-smi --query-gpu="$SMI_FIELDS" --format=csv,nounits > "$1" 2>/dev/null ||
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem --format=csv,nounits > "$1" 2>&1
}
find_ncu() {
  local c
  for c in "$(command -v ncu 2>/dev/null)" /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu /usr/local/NVIDIA-Nsight-Compute*/ncu; do
    [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
  done
  return 1
}
step env env_capture
smi_query "$D/env/smi-before.csv"
NCU="$(find_ncu || true)"
if [ -n "$NCU" ]; then
  echo "$NCU" > "$D/env/ncu_path.txt"
  "$NCU" --version > "$D/env/ncu.txt" 2>&1
else
  echo "ncu not found" > "$D/env/ncu.txt"
fi

# ------------------------------------------------------------------ 2. build and SASS
if [ "$BUILD" = 1 ]; then
  STEP_DETAIL="sm_90" step build timeout -k 10 "$(left)" "$SUITE/build.sh" -a sm_90 -j "$(nproc)" -o "$BIN" --require
fi
FAMILIES="srivastava polybench hydro1d stencil special divergent"
sass_capture() {
  local f cuo
  local -  # pipefail for this function only: a failed cuobjdump is no empty .sass.gz
  set -o pipefail
  cuo="$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)"
  for f in $FAMILIES; do
    [ -x "$BIN/$f" ] || continue
    cp "$BIN/$f.ptxas.txt" "$D/ptxas/$f.ptxas.txt" 2>/dev/null
    "$cuo" -sass "$BIN/$f" | gzip -9 > "$D/sass/$f.sm_90.sass.gz" ||
      { rm -f "$D/sass/$f.sm_90.sass.gz"; return 1; }
  done
}
step sass sass_capture

# ------------------------------------------------------------------ 3. checks and timed runs
# sizes timed per family (all of each family's timed sizes unless --quick)
declare -A TSIZES=([srivastava]="small,medium,large,xlarge" [polybench]="under,mid,paper"
                   [hydro1d]="small,medium,paper" [stencil]="small,medium,large"
                   [special]="small,large" [divergent]="p50,p5,p1,lanes8,lanes2")
declare -A TLIMIT=([srivastava]=90 [polybench]=180 [hydro1d]=60 [stencil]=40 [special]=40 [divergent]=40)
if [ "$QUICK" = 1 ]; then
  TSIZES=([srivastava]="small" [polybench]="under" [hydro1d]="small" [stencil]="small"
          [special]="small" [divergent]="p5,lanes8")
fi
DMON_PID=""
if nvidia-smi dmon -h >/dev/null 2>&1; then
  nvidia-smi dmon -s pc -d 1 > "$D/env/dmon-timing.txt" 2>&1 &
  DMON_PID=$!
fi
for f in $FAMILIES; do
  lim=${TLIMIT[$f]}
  [ "$(left)" -lt $((lim + 60)) ] && lim=$(( $(left) - 60 ))
  if [ "$lim" -lt 10 ]; then skip_step "time:$f" "budget"; continue; fi
  if [ ! -x "$BIN/$f" ]; then skip_step "time:$f" "no binary"; continue; fi
  STEP_DETAIL="sizes=${TSIZES[$f]}" step "time:$f" timeout -k 10 "$lim" "$BIN/$f" --sizes "${TSIZES[$f]}" --seed "$SEED" \
    >> "$D/measurements.jsonl" 2> >(tee -a "$D/logs/$f.stderr.txt" >&2)
done
# the report's kernels again, back to back without an L2 flush, as the Srivastava report timed
# them: what its four GPUs are compared with (scripts/suite_crossval.py); checked above already
if [ -x "$BIN/srivastava" ] && [ "$(left)" -gt 100 ]; then
  STEP_DETAIL="no-flush" step "time:srivastava-warm" timeout -k 10 40 "$BIN/srivastava" \
    --sizes "${TSIZES[srivastava]}" --no-flush --no-check --seed "$SEED" \
    > "$D/measurements-warm.jsonl" 2>> "$D/logs/srivastava.stderr.txt"
  "$PY" "$SUITE/to_table.py" "$D/measurements-warm.jsonl" -o "$D/measurements-warm.csv" || true
else
  skip_step "time:srivastava-warm" "budget or no binary"
fi
[ -n "$DMON_PID" ] && kill "$DMON_PID" 2>/dev/null
smi_query "$D/env/smi-after.csv"
step table "$PY" "$SUITE/to_table.py" "$D/measurements.jsonl" -o "$D/measurements.csv"
pack  # a first complete package, in case a later step overruns the call

# ------------------------------------------------------------------ 4. ncu profiles
# One ncu run per (family, sizes): small runs, so a timeout loses one chunk only. Priority
# order: the report's kernels at all four sizes first, then one size of every other family,
# then the larger sizes. PolyBench "paper" sizes are not profiled (minutes under replay).
CHUNKS="srivastava:small srivastava:medium srivastava:large srivastava:xlarge hydro1d:small
polybench:under polybench:mid stencil:small special:small divergent:p5,lanes8 stencil:medium
hydro1d:medium special:large divergent:p50,p1,lanes2 stencil:large hydro1d:paper"
[ "$QUICK" = 1 ] && CHUNKS="srivastava:small special:small"
# ncu result IDs count only the measured kernels: every helper kernel is named aux_*
KFILTER='^[^a].*|^a[^u].*|^au[^x].*'
profile_cmd() {  # OUTCSV BINARY ARGS... : gpuproj profile, else ncu with gpuproj's metric list
  local out="$1"
  shift
  if "$PY" -m gpuproj.cli.main profile --help >/dev/null 2>&1; then
    "$PY" -m gpuproj.cli.main profile --out "$out" --ncu "$NCU" --kernel "$KFILTER" -- "$@"
  else
    local metrics
    metrics="$("$PY" -c 'from gpuproj.profiles.readers.ncu_csv import NCU_METRICS; print(",".join(NCU_METRICS))' 2>/dev/null)"
    [ -n "$metrics" ] || metrics="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_tex.sum,l1tex__t_bytes.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,launch__grid_size,launch__block_size,launch__registers_per_thread"
    "$NCU" --csv --page raw --print-units base --clock-control none --metrics "$metrics" --kernel-name "regex:$KFILTER" \
      --log-file "$out" "$@"
  fi
}
ncu_chunk() {  # FAMILY SIZES
  local f="$1" s="$2" tag="$1-${2//,/_}"
  timeout -k 10 "$(( $(left) - 45 ))" bash -c 'profile_cmd "$@"' _ "$D/ncu/$tag.csv" "$BIN/$f" --profile --sizes "$s" --seed "$SEED" \
    > "$D/ncu/$tag.jsonl" 2> "$D/logs/ncu-$tag.stderr.txt"
  local rc=$?
  "$PY" "$SUITE/to_table.py" --ncu-map "$D/ncu/$tag.jsonl" -o "$D/ncu/$tag.map.csv" || true
  if grep -q "ERR_NVGPUCTRPERM\|permission" "$D/logs/ncu-$tag.stderr.txt" "$D/ncu/$tag.csv" 2>/dev/null; then
    echo "ncu: no permission to read the GPU counters"; NCU_ON=0
  elif grep -q "LibraryNotLoaded\|Failed to initialize the profiler" "$D/logs/ncu-$tag.stderr.txt" "$D/ncu/$tag.csv" 2>/dev/null; then
    # seen under gVisor: no chunk can profile, so none is tried again
    echo "ncu: the profiler cannot start here (LibraryNotLoaded or failed to initialize)"; NCU_ON=0
  fi
  return $rc
}
export -f profile_cmd
export PY NCU KFILTER
if [ "$NCU_ON" = 1 ] && [ -z "$NCU" ]; then skip_step ncu "ncu not found"; NCU_ON=0; fi
for c in $CHUNKS; do
  f="${c%%:*}"; s="${c#*:}"
  if [ "$NCU_ON" = 0 ]; then skip_step "ncu:$c" "ncu off or unavailable"; continue; fi
  if [ "$(left)" -lt 75 ]; then skip_step "ncu:$c" "budget"; continue; fi
  [ -x "$BIN/$f" ] || { skip_step "ncu:$c" "no binary"; continue; }
  STEP_DETAIL="gpuproj metric list" step "ncu:$c" ncu_chunk "$f" "$s"
done
# per-instruction SASS counts (Van Lanker Sec. 4.2) for the special-function kernels
source_counters() {
  timeout -k 10 "$(( $(left) - 45 ))" "$NCU" --section SourceCounters --clock-control none \
    --kernel-name "regex:$KFILTER" \
    -o "$WORK/special-src" -f "$BIN/special" --profile --sizes small --seed "$SEED" > "$D/ncu/special-small-src.jsonl" || return 1
  "$NCU" --import "$WORK/special-src.ncu-rep" --page source --csv --print-source sass \
    > "$D/ncu/special-small.source.csv" 2> "$D/logs/ncu-source.stderr.txt"
  local rc=$?
  # keep the report itself when small (the ncu_rep reader reads it)
  [ "$(stat -c %s "$WORK/special-src.ncu-rep" 2>/dev/null || echo 99999999)" -lt 8000000 ] &&
    cp "$WORK/special-src.ncu-rep" "$D/ncu/special-small-src.ncu-rep"
  return $rc
}
if [ "$NCU_ON" = 1 ] && [ "$(left)" -gt 90 ]; then step ncu-source source_counters
else skip_step ncu-source "budget or ncu unavailable"; fi

# ------------------------------------------------------------------ 5. pack
echo "== done in $((SECONDS - START)) s"
pack
cat "$OUTDIR/summary-$GPU_ID.txt"
ls -la "$OUTDIR"
exit 0
