#!/usr/bin/env bash
# Everything a lent GPU machine is wanted for, in one call of the device tool, in order of
# worth; each step gets the time the ones before it left:
#   suite      the benchmark suite: checks, timed runs, ncu profiles, SASS (suite/collect.sh)
#   bench      the micro-benchmarks: the catalog entry's measured ceilings (scripts/bench_on_gpu.sh)
#   calibrate  the Stevens & Kloeckner case studies through CuPy (scripts/calibrate_on_gpu.sh)
#
#   bash scripts/gpu_session.sh --prepare        # here, with nvcc and pip: what the call carries
#   bash scripts/gpu_session.sh [--budget-s 405] [--suite-s 260] [--steps suite,bench,calibrate]
#
# --budget-s  seconds the whole script may take (default 405); the device call's timeout_s is
#             set 15 s above it (the kill 10 s after a step's timeout, the last packing)
# --suite-s   the suite's share of the budget (suite/collect.sh --budget-s; default 260)
#
# The call: first `bash scripts/gpu_session.sh --prepare` in the session's own checkout (the
# device tool sends that checkout), and commit; then one device `run` with command
# `bash scripts/gpu_session.sh --budget-s 405 --suite-s 260`, carry
# ["suite/build", "build/bench-cubins", ".whl"] (all ignored by git) and timeout_s 420, which
# leaves device time to rerun it within a 15-minute budget, machine start included; then
# `give_back`. Results in $OUT (default out/session), at most 8 files: suite-<gpu>.tar.gz,
# summary-, measurements-, collect-<gpu> (suite/collect.sh), bench-<gpu>.tar.gz,
# calibrated-<gpu>.tar.gz, session.log, and a *.part where a kill cut a packing short. Each
# reaches $OUT as soon as its step has it: the suite packs after its timed runs and at its end,
# the bench and calibration archives are packed again within 2 s of a file of theirs changing
# (the bench's raw JSON, each case study's results), so a kill at the call's limit keeps what
# was measured. docs/suite.md says what to do with them.
set -u
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
BUDGET=405
SUITE_S=260
STEPS="suite,bench,calibrate"
PREPARE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --budget-s) BUDGET="$2"; shift 2 ;;
    --suite-s) SUITE_S="$2"; shift 2 ;;
    --steps) STEPS="$2"; shift 2 ;;
    --prepare) PREPARE=1; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
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

# pack NAME: $WORK/NAME as $OUTDIR/NAME-<gpu>.tar.gz, replaced whole (a kill mid-tar leaves the
# last complete one); keep_packed NAME: pack again within 2 s of a file there changing, in the
# background while a step runs, so that what it wrote reaches $OUT before the call's limit
pack() {
  [ -d "$WORK/$1" ] || return 0
  touch "$WORK/.$1.stamp"
  tar -czf "$OUTDIR/$1-$GPU_ID.tar.gz.part" -C "$WORK" "$1" &&
    mv -f "$OUTDIR/$1-$GPU_ID.tar.gz.part" "$OUTDIR/$1-$GPU_ID.tar.gz"
}
keep_packed() {
  trap 'exit 0' TERM  # taken after the tar or sleep in hand: no half-written archive is left
  while sleep 2; do
    [ -d "$WORK/$1" ] || continue
    if [ ! -e "$WORK/.$1.stamp" ] || [ -n "$(find "$WORK/$1" -newer "$WORK/.$1.stamp" | head -n 1)" ]; then
      pack "$1"
    fi
  done
}
# run_packed NAME SECONDS CMD...: CMD under timeout (killed 10 s after a TERM it ignores),
# its folder $WORK/NAME kept packed while it runs and packed once more after it
run_packed() {
  local name="$1" lim="$2" rc watcher
  shift 2
  keep_packed "$name" &
  watcher=$!
  timeout -k 10 "$lim" "$@"
  rc=$?
  kill "$watcher" 2>/dev/null
  wait "$watcher" 2>/dev/null
  pack "$name"
  return $rc
}

# the calibration (114 kernels at GPU sizes, about a minute) gets a 100-s share when asked
# for; the bench (tens of seconds) the rest
reserve=0
want calibrate && reserve=100
if want bench; then
  if [ "$(( $(left) - reserve ))" -ge 60 ]; then
    OUT="$WORK/bench" run_packed bench "$(( $(left) - reserve ))" bash scripts/bench_on_gpu.sh
    echo "== bench: rc=$? at $((SECONDS - T0)) s"
  else
    echo "== bench: skipped, $(left) s left"
  fi
fi
if want calibrate; then
  if [ "$(left)" -ge 45 ]; then
    run_packed calibrated "$(( $(left) - 5 ))" bash scripts/calibrate_on_gpu.sh --out-dir "$WORK/calibrated"
    echo "== calibrate: rc=$? at $((SECONDS - T0)) s"
  else
    echo "== calibrate: skipped, $(left) s left"
  fi
fi
echo "== done in $((SECONDS - T0)) s"
ls -la "$OUTDIR"
