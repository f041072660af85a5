#!/usr/bin/env python3
"""Training and prediction time of the learned models on the largest public table.

    python benchmarks/bench_learned.py [--data DIR] [--method residual,...] [--repeat N]
                                       [--json out.json]

Trains each ``--method`` (default: every learned method, each with a 90 % conformal interval,
which also fits one copy per held-out GPU; the ensemble fits its members once per
cross-validation fold) on neusight-train/train_bmm_5gpus (87,623 rows, 345,726 ordered GPU
pairs; a model draws ``max_pairs`` of them) with at most 2 threads, then predicts 10^5
kernel-target pairs through ``Model.predict`` (25,000 rows x 4 targets), in memory and after a
save/load round trip (``--repeat``: the median of N predictions each). Targets (issue):
training < 120 s, prediction < 5 s.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")  # before numpy/sklearn start their pools

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "external"


def _timed(predict, repeat):
    """(last prediction, median seconds of ``repeat`` calls of ``predict()``)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        pred = predict()
        times.append(time.perf_counter() - t0)
    return pred, statistics.median(times)


def bench(method, table, probe, src, targets, repeat=1) -> dict:
    """Train ``method`` on ``table``; predict ``probe`` (rows measured on ``src``) on
    ``targets`` before and after a save/load round trip."""
    from gpuproj.learned.persistence import load_model, save_model
    from gpuproj.models import get_model
    from gpuproj.profiles.table import ProfileTable

    model = get_model(method, coverage=0.9)
    t0 = time.perf_counter()
    model.fit(table)
    train_s = time.perf_counter() - t0
    warm_up = ProfileTable(probe.df.iloc[:100].reset_index(drop=True))
    model.predict(warm_up, src, targets)
    pred, predict_s = _timed(lambda: model.predict(probe, src, targets), repeat)
    with tempfile.TemporaryDirectory() as d:
        save_model(model, Path(d) / "m")
        loaded = load_model(Path(d) / "m")
    pred2, predict_loaded_s = _timed(lambda: loaded.predict(probe, src, targets), repeat)
    run = {
        "method": method, "training_pairs": model.train_info_["pairs"],
        "train_s": round(train_s, 2), "predicted_pairs": len(pred.df),
        "predict_s": round(predict_s, 3), "predict_loaded_s": round(predict_loaded_s, 3),
        "max_abs_rel_diff_loaded": float(((pred2.df["time_s"] - pred.df["time_s"]).abs()
                                          / pred.df["time_s"]).max()),
        "targets_met": {"train_under_120_s": train_s < 120, "predict_under_5_s": predict_s < 5},
    }
    print(json.dumps(run), flush=True)
    return run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--method", default="residual,bounded-efficiency,ensemble,rf,gb,svr,knn,"
                    "linear,ridge,lasso",
                    help="comma-separated learned methods")
    ap.add_argument("--rows", type=int, default=25000, help="source rows to predict")
    ap.add_argument("--repeat", type=int, default=1,
                    help="predictions timed per model (their median is reported)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")

    import pandas as pd

    from gpuproj.profiles import load
    from gpuproj.profiles.table import ProfileTable

    table = load(a.data / "neusight-train" / "train_bmm_5gpus.csv.gz", format="neusight")
    src = "v100-pcie-32gb"
    rows = table.on(src)
    reps = -(-a.rows // len(rows.df))
    df = pd.concat([rows.df] * reps, ignore_index=True).iloc[: a.rows]
    probe = ProfileTable(df.reset_index(drop=True), (), "")
    targets = [g for g in table.gpus if g != src]
    runs = [bench(m, table, probe, src, targets, a.repeat) for m in a.method.split(",")]
    out = {"table": "neusight-train/train_bmm_5gpus.csv.gz", "rows": len(table.df),
           "threads": os.environ.get("OMP_NUM_THREADS"), **machine(), "runs": runs}
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
