#!/usr/bin/env bash
# The Stevens & Kloeckner case studies on this machine's NVIDIA GPU (loopy's CUDA code, timed
# through CuPy) at GPU sizes (scripts/case_studies.py --sizes gpu: 1-10 ms kernels), then the GPU
# test of the CUDA runner.
#
#   bash scripts/calibrate_on_gpu.sh [--out-dir DIR] [other scripts/case_studies.py options]
#   DEVICE=nvidia bash scripts/calibrate_on_gpu.sh      # NVIDIA's OpenCL driver instead of CuPy
#
# Results: DIR/calibrated_<gpu>.{json,md} and the per-model parameter files (DIR: docs/results
# unless --out-dir), rewritten after each study. loopy and its helpers: installed already, or
# the wheels in .whl/ (`bash scripts/gpu_session.sh --prepare` fetches them; carry `.whl`): a
# lent GPU machine cannot reach PyPI, so without either the script stops (exit 2).
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICE="${DEVICE:-cuda}"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
if ! python3 -c "import loopy" 2>/dev/null; then
  if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/gpuproj-site .whl/*.whl
    export PYTHONPATH="$PYTHONPATH:/tmp/gpuproj-site"
  else
    echo "calibrate_on_gpu.sh: no loopy and no wheels in .whl/: run \`bash scripts/gpu_session.sh --prepare\` where pip works and carry .whl (or pip install -e '.[calibrate]')" >&2
    exit 2
  fi
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv || true
python3 scripts/case_studies.py --device "$DEVICE" --sizes gpu --repetitions "${REPETITIONS:-21}" "$@"
python3 -m pytest -q -p no:cacheprovider tests/test_calibrated_loopy.py::test_cuda_runner_times_kernels || true
