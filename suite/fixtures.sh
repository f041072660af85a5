#!/usr/bin/env bash
# Real Nsight Compute captures for the readers' tests, on a machine with an NVIDIA GPU: the
# suite's vector_add, saxpy and reduce_sum at the `small` size (2^18 floats), profiled once each
# with gpuproj's metric list, in the four forms the readers take:
#   raw-base.csv   ncu --csv --page raw --print-units base   (what `gpuproj profile` writes)
#   raw-auto.csv   ncu --csv --page raw                      (ncu's default auto-scaled units)
#   details.csv    ncu --csv --page details                  (default sections, long layout)
#   <gpu>.ncu-rep  ncu -o                                    (the report file, for ncu_report)
# and rep-read.json: `gpuproj predict` on the .ncu-rep through NVIDIA's own ncu_report module,
# when ncu ships it. Then, where Nsight Systems is installed, the same three kernels timed as
# the suite times them (no profiler replay) under nsys, exported as `nsys stats --format csv`
# writes them, for the nsys reader (src/gpuproj/profiles/readers/nsys.py):
#   <gpu>-nsys_cuda_gpu_trace.csv     one row per launch (grid, block, registers, device)
#   <gpu>-nsys_cuda_gpu_kern_sum.csv  one row per kernel (instances, mean and median time)
#   <gpu>-nsys.driver.jsonl           the suite's own event timings of the same launches
#   <gpu>-nsys.sqlite.gz              the SQLite export nsys stats made of the report, for a
#                                     reader of .sqlite files (none is public to build one on)
# Needs suite/build/srivastava (bash suite/build.sh -a sm_90).
#
#   bash suite/fixtures.sh [--out DIR]        # DIR defaults to $OUT, else out/fixtures
set -u
REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUTDIR="${OUT:-$REPO/out/fixtures}"
[ "${1:-}" = "--out" ] && OUTDIR="$2"
mkdir -p "$OUTDIR"
export PYTHONPATH="$REPO/src${PYTHONPATH:+:$PYTHONPATH}"
NCU="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)"
[ -n "$NCU" ] || { echo "fixtures.sh: no ncu" >&2; exit 2; }
GPU="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | tr 'A-Z' 'a-z' |
  sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')"
BIN="$REPO/suite/build/srivastava"
WORK_NSYS="$(mktemp -d /tmp/fixtures-nsys.XXXXXX)"  # the .nsys-rep and its .sqlite stay here
METRICS="$(python3 -c 'from gpuproj.profiles.readers.ncu_csv import NCU_METRICS; print(",".join(NCU_METRICS))')"
K='regex:^(vector_add|saxpy|reduce_sum)$'
run() {  # NAME NCU-ARGS... : one ncu run of the three kernels, its log beside it
  local name="$1"; shift
  "$NCU" --clock-control none --kernel-name "$K" "$@" "$BIN" --profile --sizes small --kernels vector_add,saxpy,reduce_sum \
    > "$OUTDIR/$name.driver.jsonl" 2> "$OUTDIR/$name.stderr.txt"
  echo "$name: rc=$?"
}
run raw-base --csv --page raw --print-units base --metrics "$METRICS" --log-file "$OUTDIR/$GPU-raw-base.csv"
run raw-auto --csv --page raw --metrics "$METRICS" --log-file "$OUTDIR/$GPU-raw-auto.csv"
run details --csv --page details --log-file "$OUTDIR/$GPU-details.csv"
run rep --metrics "$METRICS" -o "$OUTDIR/$GPU" -f
for d in "$(dirname "$(readlink -f "$NCU")")"/extras/python /opt/nvidia/nsight-compute/*/extras/python \
         /usr/local/cuda/nsight-compute*/extras/python; do
  [ -f "$d/ncu_report.py" ] && { export PYTHONPATH="$PYTHONPATH:$d"; break; }
done
python3 -m gpuproj.cli.main predict "$OUTDIR/$GPU.ncu-rep" --target h200-sxm-141gb --json \
  > "$OUTDIR/rep-read.json" 2> "$OUTDIR/rep-read.stderr.txt"
echo "rep-read: rc=$?"
"$NCU" --version > "$OUTDIR/ncu-version.txt"
NSYS="$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -n 1)"
if [ -n "$NSYS" ]; then
  "$NSYS" profile --trace=cuda --sample=none --cpuctxsw=none --cuda-graph-trace=node -f true \
    -o "$WORK_NSYS/$GPU-nsys" \
    "$BIN" --sizes small --kernels vector_add,saxpy,reduce_sum \
    > "$OUTDIR/$GPU-nsys.driver.jsonl" 2> "$OUTDIR/nsys.stderr.txt"
  echo "nsys profile: rc=$?"
  "$NSYS" stats --report cuda_gpu_trace --report cuda_gpu_kern_sum --format csv \
    --output "$OUTDIR/$GPU-nsys" "$WORK_NSYS/$GPU-nsys.nsys-rep" >> "$OUTDIR/nsys.stderr.txt" 2>&1
  echo "nsys stats: rc=$?"
  [ -f "$WORK_NSYS/$GPU-nsys.sqlite" ] && gzip -c "$WORK_NSYS/$GPU-nsys.sqlite" > "$OUTDIR/$GPU-nsys.sqlite.gz"
  "$NSYS" --version > "$OUTDIR/nsys-version.txt"
else
  echo "nsys: not installed, no timeline fixtures"
fi
ls -la "$OUTDIR"
