#!/usr/bin/env python3
"""Speed of the analytical methods, of ``gpuproj evaluate``, of ``gpuproj --help`` and of the
README's main command (``readme_predict_s``, a new process each time).

    python benchmarks/bench_predict.py [--kernels 100000] [--repeat 3] [--out FILE.json]

Predictions per second are kernel-target predictions (rows x targets) per wall-clock second
on one process; medians over ``--repeat`` runs. ``predict`` times a synthetic table of
``--kernels`` rows to 10 targets; ``predict_real`` a real one (the KernelTuner GEMM table of
``--data``, on its first GPU, to the same targets); ``shortlist`` the choice of 5
configurations per kernel and target from three methods' predictions (``gpuproj.shortlist``);
``evaluate`` every applicable method on every GPU pair of the Rodinia calculate_temp table (9
GPUs) and of the largest one, NeuSight bmm (2.4 million pairs).
Results go to stdout as JSON (and to ``--out``); docs/results/bench_predict.json holds the
last recorded run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from machine import machine

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "v100-sxm2-16gb"
TARGETS = ["a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-40gb", "h100-sxm5-80gb",
           "h100-pcie-80gb", "h200-sxm-141gb", "l40s", "a40", "mi250x", "mi300x"]
METHODS = ("same", "bandwidth", "compute", "roofline", "hierarchical", "hierarchical-ext",
           "quantitative", "quantitative-transfer", "efficiency")


def synthetic_profiles(n, seed=0):
    """Random but plausible ncu-like profiles (counts in thread instructions and bytes)."""
    from gpuproj.profiles.table import ProfileTable

    rng = np.random.default_rng(seed)
    fma = rng.lognormal(20, 2, n)
    df = pd.DataFrame({
        "kernel": [f"k{i % 1000}" for i in range(n)], "config": [str(i) for i in range(n)],
        "gpu": SOURCE, "time_s": rng.lognormal(-9, 2, n),
        "fp32_fma_thread_inst": fma, "fp32_add_thread_inst": fma * rng.uniform(0, 1, n),
        "fp32_mul_thread_inst": fma * rng.uniform(0, 1, n),
        "fp32_thread_inst": fma * 2.5, "fp64_thread_inst": 0.0, "int_thread_inst": fma,
        "ldst_thread_inst": fma * 0.5, "warp_inst": fma / 8, "thread_inst": fma * 3.5,
        "dram_read_bytes": fma * rng.uniform(0.5, 8, n), "dram_write_bytes": fma,
        "l2_bytes": fma * 12, "l1_bytes": fma * 30, "shared_bytes": fma * 2,
        "shared_wavefronts": fma / 40, "grid_blocks": rng.integers(1, 100000, n),
        "block_threads": rng.choice([64, 128, 256, 512, 1024], n),
        "regs_per_thread": rng.integers(16, 128, n), "smem_per_block_bytes": 0.0,
        "working_set_bytes": fma * 4,
    })
    return ProfileTable.from_frame(df)


def time_predict(method, table, repeat, source=SOURCE):
    """Median time of ``predict`` to ``TARGETS``; predictions = rows x targets asked for (rows a
    method cannot predict, e.g. without the counts it needs, count as done: they cost time)."""
    from gpuproj.models import get_model

    model = get_model(method)
    # one untimed call first: the first prediction of a process fills caches (catalog entries,
    # pandas' lazy imports) that would otherwise be charged to whichever method runs first
    model.predict(table, source, TARGETS)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        pred = model.predict(table, source, TARGETS)
        times.append(time.perf_counter() - t0)
    n = len(table) * len(TARGETS)
    med = float(np.median(times))
    return {"method": method, "predictions": n, "predicted": len(pred.df),
            "median_s": round(med, 4), "predictions_per_s": round(n / med)}


def time_shortlist(table, source, repeat, k=5):
    """Median time of ``gpuproj.shortlist`` choosing ``k`` configurations per kernel and target
    in turns from three methods' predictions to ``TARGETS`` (the prediction itself untimed)."""
    from gpuproj.predict import predict
    from gpuproj.shortlist import shortlist

    methods = ["same", "bandwidth", "hierarchical-ext"]
    d = predict(table, source=source, targets=TARGETS, methods=methods).table()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        shortlist(d, methods, k, ["kernel", "target"])
        times.append(time.perf_counter() - t0)
    return {"predictions": len(d), "groups": int(d.groupby(["kernel", "target"]).ngroups),
            "k": k, "median_s": round(float(np.median(times)), 4)}


def real_table(data):
    """The KernelTuner GEMM table (CLBlast, 17,956 configurations per GPU) on its first GPU."""
    from gpuproj.profiles import load

    path = data / "kerneltuner-4gpus" / "gemm_clblast_4096_4gpus.csv.gz"
    if not path.exists():
        return None, None, None
    table = load(path, format="kerneltuner")
    gpu = table.gpus[0]
    return table.on(gpu), gpu, path.name


# the README's main command: what a user waits for, start-up and catalog included
README_PREDICT = ["predict", "examples/h100-suite-ncu.csv", "--target",
                  "h200-sxm-141gb,mi300x,b200", "--method", "all"]


def time_cli(args, repeat):
    """Median wall time of ``gpuproj ARGS`` in a new process."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gpuproj.cli.main", *args], check=True,
                       capture_output=True, cwd=ROOT)
        times.append(time.perf_counter() - t0)
    return round(float(np.median(times)), 3)


def time_evaluate(path, fmt, repeat):
    from gpuproj.evaluate import evaluate
    from gpuproj.profiles import load

    table = load(path, format=fmt)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        ev = evaluate(table)
        times.append(time.perf_counter() - t0)
    return {"table": str(path.name), "pairs": len(ev.pairs),
            "median_s": round(float(np.median(times)), 2)}


def speedups(before, after):
    """Per table and method: predictions per second after / before."""
    def rates(run):
        real = run.get("predict_real", {}).get("methods", [])
        return {"synthetic": {r["method"]: r["predictions_per_s"] for r in run["predict"]},
                "real": {r["method"]: r["predictions_per_s"] for r in real}}

    b, a = rates(before), rates(after)
    return {t: {m: round(a[t][m] / b[t][m], 2) for m in a[t] if m in b[t]} for t in a}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "external")
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    ap.add_argument("--before", type=Path,
                    help="results of an earlier run (e.g. an older commit) to compare with: kept "
                         "under 'before', with after/before ratios of predictions per second")
    args = ap.parse_args()
    import pandas

    from gpuproj.catalog import resolve

    for gpu in (SOURCE, *TARGETS):  # load the catalog before timing: predict does not reload it
        resolve(gpu)
    table = synthetic_profiles(args.kernels)
    out = {"machine": {**machine(), "numpy": np.__version__, "pandas": pandas.__version__},
           "kernels": args.kernels, "targets": len(TARGETS), "repeat": args.repeat,
           "predict": [time_predict(m, table, args.repeat) for m in METHODS]}
    out["shortlist"] = time_shortlist(table, SOURCE, args.repeat)
    real, gpu, name = real_table(args.data)
    if real is not None:
        out["predict_real"] = {"table": name, "source": gpu, "kernels": len(real),
                               "methods": [time_predict(m, real, args.repeat, gpu)
                                           for m in METHODS],
                               "shortlist": time_shortlist(real, gpu, args.repeat)}
    out["help_s"] = time_cli(["--help"], args.repeat)
    out["readme_predict_s"] = time_cli(README_PREDICT, args.repeat)
    tables = [(args.data / "amaris-rodinia-nvprof" / "calculate_temp_9gpus.csv.gz", "amaris"),
              (args.data / "neusight-train" / "train_bmm_5gpus.csv.gz", "neusight")]
    out["evaluate"] = [time_evaluate(path, fmt, args.repeat) for path, fmt in tables
                       if path.exists()]
    if args.before:
        out["before"] = json.loads(args.before.read_text())
        out["speedup"] = speedups(out["before"], out)
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
