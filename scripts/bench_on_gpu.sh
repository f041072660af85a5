#!/usr/bin/env bash
# Run gpuproj's full micro-benchmark suite on this machine's NVIDIA GPU, in one call, and write
# everything into $OUT (default ./out): the catalog file <id>.yaml, the raw samples <id>.json,
# the plots, nvidia-smi's report, and the comparison with gpu-benches where its data is present.
#
#   OUT=/path/to/results bash scripts/bench_on_gpu.sh            # from the repository root
#
# Needs: the NVIDIA driver, python3 with numpy, pyyaml, click, matplotlib, and either nvcc or
# cubins built beforehand on a machine with nvcc and carried along:
#   python -m gpuproj.bench.cuda --arch sm_90 --out build/bench-cubins   (H100 and H200: sm_90)
# RUN_GPU_TESTS=1 also runs the GPU-marked tests (they run the suite a second time).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$ROOT/out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
export MPLBACKEND=Agg
if [ -d "$ROOT/build/bench-cubins" ]; then
    export GPUPROJ_BENCH_CUBIN_DIR="$ROOT/build/bench-cubins"
fi
PY="${PYTHON:-python3}"

{
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    echo "python: $("$PY" --version 2>&1)"
    echo "nvcc: $(command -v nvcc >/dev/null && nvcc --version | tail -1 || echo 'not found')"
    echo "cubin dir: ${GPUPROJ_BENCH_CUBIN_DIR:-none}"
} > "$OUT/environment.txt"
nvidia-smi -q > "$OUT/nvidia-smi-q.txt" 2>&1 || echo "nvidia-smi failed" >> "$OUT/environment.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit \
    --format=csv >> "$OUT/environment.txt" 2>&1 || true

cd "$OUT"
start=$(date +%s)
# --gpu is left out: the device's own name resolves to its catalog entry (H100 SXM5 / H200)
"$PY" -m gpuproj.cli.main bench --backend cuda --plots plots --json > summary.json \
    2> bench.log || { cat bench.log; exit 1; }
end=$(date +%s)
echo "wall_s_including_compile: $((end - start))" >> "$OUT/environment.txt"
cat bench.log | tail -5

raw="$("$PY" -c 'import json,sys; print(json.load(open("summary.json"))["raw"])')"
"$PY" -m gpuproj.cli.main bench --from-raw "$raw" --out "$OUT/table-check.yaml" > table.txt 2>&1 || true
rm -f "$OUT/table-check.yaml"
cat table.txt

GB="${GPU_BENCHES:-$ROOT/../shared/data/external/gpu-benches}"
if [ -d "$GB" ]; then
    "$PY" "$ROOT/scripts/compare_gpu_benches.py" "$raw" --gpu-benches "$GB" --out compare.md || true
else
    echo "gpu-benches data not found at $GB: run scripts/compare_gpu_benches.py $OUT/$raw later" \
        >> "$OUT/environment.txt"
fi

if [ "${RUN_GPU_TESTS:-0}" = "1" ]; then
    (cd "$ROOT" && "$PY" -m pytest -q -m gpu tests/test_bench_suite.py) > gpu-tests.txt 2>&1 || true
fi
ls -la "$OUT"
