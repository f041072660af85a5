#!/usr/bin/env python3
"""How the share of a working set's traffic that misses the L2 grows with the working set, on the
gpu-benches L2 sweep, and which rule of ``cache_capacity`` follows it.

    python scripts/l2_capacity_rules.py [--data DIR]

1. The share of the traffic that leaves the L2 on each GPU: with the sweep's bandwidth B at
   working set W, its L2 plateau B_L2 and the plateau past it B_P (the catalog's measured
   ceilings, which come from these files: the L3's where the GPU has one, else DRAM's),
   1 / B = (1 - f) / B_L2 + f / B_P gives f = (1/B - 1/B_L2) / (1/B_P - 1/B_L2), printed at the
   working sets nearest 0.6 to 2 x the GPU's L2 size; the same for the L3 (B_L3 and DRAM) on the
   GPUs that have one.
2. ``hierarchical`` + ``cache_capacity`` with the rule gpuproj uses (``_uncached``: a step at the
   L2 size, LRU under a cyclic sweep) and with the rule it used before (1 - L2 / W, uniformly
   random accesses), over all pairs and over the NVIDIA pairs (the MI210 keeps much of its L2
   bandwidth to about 3 x its size, which neither rule follows; docs/accuracy_analysis.md).

3. ``hierarchical-ext`` by the GPU at either end of a pair, with and without the L3 level, and
   how its interval does where a working set lies near a cache's size.

Writes docs/results/l2_capacity_rules.md (included in docs/accuracy.md). A few seconds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import DATASETS, DEFAULT_DATA, load_dataset  # noqa: E402  (one table definition)

ROOT = Path(__file__).resolve().parents[1]
TABLE = "gpu-benches L2 sweep"
POINTS = (0.6, 0.8, 1.0, 1.2, 1.4, 2.0)  # working set / L2 size
RULES = {
    "step at the L2 size (gpuproj)": None,  # the shipped _uncached
    "1 - L2 / working set (before)": lambda w, c: np.clip(1 - c / np.asarray(w, float), 0, 1),
}


def shares(table, level) -> list[str]:
    """The share of the traffic that leaves ``level`` ("l2" or "l3") at multiples of its size,
    one line per GPU that has the level and measured plateaus for it and the one past it."""
    from gpuproj.catalog import resolve

    lines = [f"| GPU | {level.upper()} | " + " | ".join(f"{x:g} x {level.upper()}" for x in POINTS)
             + " |", "|---|---|" + "---|" * len(POINTS)]
    for gid, q in table.df.groupby("gpu"):
        gpu = resolve(gid)
        size, b_in = gpu.value(f"{level}_size_bytes"), gpu.measured(f"{level}_bw_bytes_per_s")
        b_past = gpu.measured("dram_bw_bytes_per_s")
        if level == "l2" and np.isfinite(gpu.measured("l3_bw_bytes_per_s")):
            b_past = gpu.measured("l3_bw_bytes_per_s")
        if not np.isfinite([size, b_in, b_past]).all():
            continue
        q = q.sort_values("working_set_bytes")
        bw = q["l2_bytes"] / q["time_s"]
        f = (1 / bw - 1 / b_in) / (1 / b_past - 1 / b_in)
        cells = []
        for x in POINTS:
            i = int(np.argmin(np.abs(q["working_set_bytes"].to_numpy() / size - x)))
            w = q["working_set_bytes"].iloc[i] / size
            cells.append(f"{f.iloc[i]:.2f} ({w:.2f})")
        lines.append(f"| {gid} | {size / 2**20:.0f} MiB | {' | '.join(cells)} |")
    return lines


def _ape(p):
    return 100 * (p["time_s"] / p["true_s"] - 1).abs()


def _nvidia_pairs(p) -> np.ndarray:
    """Mask of the pairs with an NVIDIA GPU at both ends."""
    from gpuproj.catalog import resolve

    nvidia = {g: resolve(g).vendor == "NVIDIA" for g in set(p["source"]) | set(p["target"])}
    return (p["source"].map(nvidia) & p["target"].map(nvidia)).to_numpy()


def rule_errors(table) -> list[str]:
    import gpuproj.models.hierarchical as hier
    from gpuproj.evaluate import evaluate
    from gpuproj.models import get_model

    lines = ["| rule | all pairs: MAPE / median APE % | NVIDIA pairs |", "|---|---|---|"]
    for name, rule in RULES.items():
        with mock.patch.object(hier, "_uncached", rule or hier._uncached):
            model = get_model("hierarchical", cache_capacity=True)
            p = evaluate(table, [model]).pairs
        ape = _ape(p)
        cells = [f"{ape[m].mean():.1f} / {ape[m].median():.1f} (n = {int(m.sum())})"
                 for m in (np.ones(len(p), bool), _nvidia_pairs(p))]
        lines.append(f"| {name} | {' | '.join(cells)} |")
    return lines


def by_gpu(table) -> list[str]:
    """MAPE over the pairs with each GPU as the target and as the source: the bandwidth
    baseline, ``hierarchical-ext`` without the L3 level (``_l3`` off) and with it."""
    import gpuproj.models.hierarchical as hier
    from gpuproj.evaluate import evaluate

    base = evaluate(table, ["bandwidth"]).pairs
    with mock.patch.object(hier.Hierarchical, "_l3", staticmethod(lambda *a: None)):
        no_l3 = evaluate(table, ["hierarchical-ext"]).pairs
    ext = evaluate(table, ["hierarchical-ext"]).pairs
    runs = [(p, _ape(p)) for p in (base, no_l3, ext)]
    lines = ["| pairs | n | bandwidth | hierarchical-ext without the L3 | hierarchical-ext |",
             "|---|---|---|---|---|"]
    groups = [("all", lambda p: np.ones(len(p), bool))]
    for g in sorted(set(ext["target"])):
        groups.append((f"to {g}", lambda p, g=g: (p["target"] == g).to_numpy()))
        groups.append((f"from {g}", lambda p, g=g: (p["source"] == g).to_numpy()))
    groups.append(("without the MI210", lambda p: ((p["source"] != "mi210")
                                                   & (p["target"] != "mi210")).to_numpy()))
    for name, pick in groups:
        cells = [f"{a[pick(p)].mean():.1f}" for p, a in runs]
        lines.append(f"| {name} | {int(pick(ext).sum())} | {' | '.join(cells)} |")
    return lines


def interval_rows(table) -> list[str]:
    """How ``hierarchical-ext``'s interval does where it is wider than a point: the working
    sets within ``CAPACITY_BAND`` of a cache's size on either GPU."""
    from gpuproj.evaluate import evaluate

    p = evaluate(table, ["hierarchical-ext"]).pairs
    ape = _ape(p)
    wide = (p["high_s"] > p["low_s"] * (1 + 1e-6)).to_numpy()
    inside = ((p["true_s"] >= p["low_s"] * (1 - 1e-9))
              & (p["true_s"] <= p["high_s"] * (1 + 1e-9))).to_numpy()
    nv = _nvidia_pairs(p)
    lines = ["| pairs | n | interval holds the measured time | MAPE % |", "|---|---|---|---|"]
    for name, m in (("with an interval (set near a cache size)", wide),
                    ("with an interval, NVIDIA pairs", wide & nv),
                    ("the others (a point: one level, L2 bytes only)", ~wide)):
        lines.append(f"| {name} | {int(m.sum())} | {100 * inside[m].mean():.1f} % | "
                     f"{ape[m].mean():.1f} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "l2_capacity_rules.md")
    args = ap.parse_args(argv)
    fmt, files = next((f, fs) for n, f, fs, _ in DATASETS if n == TABLE)
    table = load_dataset(args.data, fmt, files)
    doc = ["## L2 capacity: how fast a working set falls out of the L2", "",
           ("Generated by `scripts/l2_capacity_rules.py` on the gpu-benches L2 sweep. The share "
            "f of the traffic that leaves the L2, from the sweep's bandwidth B and the GPU's "
            "measured plateaus (1/B = (1 - f)/B_L2 + f/B_P, B_P the L3's where the GPU has one in "
            "the catalog, else DRAM's), at the working sets nearest a multiple of the L2 size (the "
            "multiple reached in brackets). The DRAM plateau is the catalog's STREAM triad; this "
            "kernel only reads, a little faster, so f stays under 1 where every access misses:"),
           "", *shares(table, "l2"), "",
           "The same for the L3 (Infinity Cache) and DRAM, on the GPUs with one:", "",
           *shares(table, "l3"), "",
           ("`hierarchical` with `cache_capacity` under each rule for f (the rule applies at the "
            "L3 as at the L2):"), "",
           *rule_errors(table), "",
           ("MAPE % of `hierarchical-ext` by the GPU at either end, with and without the "
            "L3 (Infinity Cache) level, against the bandwidth baseline:"), "",
           *by_gpu(table), "",
           ("Where a working set lies within `CAPACITY_BAND` of a cache's size on either GPU, "
            "the interval of `hierarchical-ext` spans the cache holding and missing it:"), "",
           *interval_rows(table), ""]
    args.out.write_text("\n".join(doc))
    print("\n".join(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
