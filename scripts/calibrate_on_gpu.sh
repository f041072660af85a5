#!/usr/bin/env bash
# Run the Stevens & Kloeckner case studies on a GPU machine (for a later GPU session).
#   bash scripts/calibrate_on_gpu.sh            # NVIDIA GPU through CuPy (loopy's CUDA code)
#   DEVICE=nvidia bash scripts/calibrate_on_gpu.sh   # the NVIDIA OpenCL driver instead
# Results: docs/results/calibrated_<gpu>.{json,md} and the per-model parameter files.
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICE="${DEVICE:-cuda}"
python -c "import gpuproj.calibrated" 2>/dev/null || pip install -e '.[calibrate]'
if [[ "$DEVICE" == cuda* ]]; then
  python -c "import cupy" 2>/dev/null || pip install cupy-cuda12x
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv || true
fi
# GPUs are fast: more repetitions cost little and the paper's sizes would give 1-1000 ms
# kernels; the model files' sizes are CI-sized, so pass larger ones via the model files if needed.
python scripts/case_studies.py --device "$DEVICE" --repetitions "${REPETITIONS:-21}" "$@"
python -m pytest -q tests/test_calibrated*.py -m gpu || true
