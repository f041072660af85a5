#!/usr/bin/env bash
# Everything a lent GPU machine is wanted for, in one call of the device tool (600 s at most),
# in order of worth; each step gets the time the ones before it left:
#   suite      the benchmark suite: checks, timed runs, ncu profiles, SASS (suite/collect.sh)
#   bench      the micro-benchmarks: the catalog entry's measured ceilings (scripts/bench_on_gpu.sh)
#   calibrate  the Stevens & Kloeckner case studies through CuPy (scripts/calibrate_on_gpu.sh)
#
#   bash scripts/gpu_session.sh --prepare        # here, with nvcc and pip: what the call carries
#   bash scripts/gpu_session.sh [--budget-s 585] [--suite-s 360] [--steps suite,bench,calibrate]
#
# The device call: command `bash scripts/gpu_session.sh`, carry suite/build, build/bench-cubins
# and .whl (all ignored by git). Results in $OUT (default out/session), at most 7 files:
# suite-<gpu>.tar.gz, summary-, measurements-, collect-<gpu> (suite/collect.sh), bench-<gpu>.tar.gz,
# calibrated-<gpu>.tar.gz and session.log. docs/suite.md says what to do with them.
set -u
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
BUDGET=585
SUITE_S=360
STEPS="suite,bench,calibrate"
PREPARE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --budget-s) BUDGET="$2"; shift 2 ;;
    --suite-s) SUITE_S="$2"; shift 2 ;;
    --steps) STEPS="$2"; shift 2 ;;
    --prepare) PREPARE=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "gpu_session.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ "$PREPARE" = 1 ]; then
  set -e
  bash suite/build.sh -a sm_90 --require
  PYTHONPATH="$REPO/src" python3 -m gpuproj.bench.cuda --arch sm_90 --out build/bench-cubins
  # loopy and its helpers as wheels for the machine's Python 3.12, which cannot reach PyPI; the
  # pins are pyproject.toml's `calibrate` extra. numpy, markupsafe and typing_extensions are
  # left out: the machine has them, and a second copy would shadow its own.
  rm -rf .whl && mkdir -p .whl
  python3 -m pip wheel -q -w .whl "loopy==2025.2" "islpy<2026.2"
  rm -f .whl/numpy-* .whl/markupsafe-* .whl/typing_extensions-*
  for w in .whl/*.whl; do
    case "$w" in *-none-any.whl) continue ;; esac
    name_ver="$(basename "$w" | cut -d- -f1,2 | sed 's/-/==/')"
    rm -f "$w"
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "$name_ver"
  done
  ls -la suite/build build/bench-cubins .whl
  exit 0
fi

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu_session.sh: no nvidia-smi: this script needs a machine with an NVIDIA GPU" >&2
  exit 2
fi
OUTDIR="${OUT:-$REPO/out/session}"
mkdir -p "$OUTDIR"
exec > >(tee -a "$OUTDIR/session.log") 2>&1
T0=$SECONDS
left() { echo $((BUDGET - (SECONDS - T0))); }
want() { case ",$STEPS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
WORK="$(mktemp -d /tmp/gpu-session.XXXXXX)"
echo "gpu_session.sh: steps $STEPS, budget ${BUDGET}s, $(nvidia-smi -L | head -n 1)"

if want suite; then
  bash suite/collect.sh --budget-s "$SUITE_S" --out "$OUTDIR"
  echo "== suite: rc=$? at $((SECONDS - T0)) s"
fi
GPU_ID="$(ls "$OUTDIR"/summary-*.txt 2>/dev/null | head -n 1 | sed 's/.*summary-//; s/\.txt$//')"
[ -n "$GPU_ID" ] || GPU_ID="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 |
  tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')"

# the calibration (114 kernels at GPU sizes, about a minute) gets a 100-s share when asked
# for; the bench (tens of seconds) the rest
reserve=0
want calibrate && reserve=100
if want bench; then
  if [ "$(( $(left) - reserve ))" -ge 60 ]; then
    OUT="$WORK/bench" timeout "$(( $(left) - reserve ))" bash scripts/bench_on_gpu.sh
    echo "== bench: rc=$? at $((SECONDS - T0)) s"
    tar -czf "$OUTDIR/bench-$GPU_ID.tar.gz" -C "$WORK" bench
  else
    echo "== bench: skipped, $(left) s left"
  fi
fi
if want calibrate; then
  if [ "$(left)" -ge 45 ]; then
    timeout "$(( $(left) - 5 ))" bash scripts/calibrate_on_gpu.sh --out-dir "$WORK/calibrated"
    echo "== calibrate: rc=$? at $((SECONDS - T0)) s"
    [ -d "$WORK/calibrated" ] && tar -czf "$OUTDIR/calibrated-$GPU_ID.tar.gz" -C "$WORK" calibrated
  else
    echo "== calibrate: skipped, $(left) s left"
  fi
fi
echo "== done in $((SECONDS - T0)) s"
ls -la "$OUTDIR"
