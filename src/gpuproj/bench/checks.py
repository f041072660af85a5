"""Consistency checks of a benchmark result against itself (no datasheet needed).

>>> largest_drop([1.0, 2.0, 4.0, 3.0, 4.5])
0.25
>>> largest_drop([1.0, 2.0, 3.0])
0.0
"""

from __future__ import annotations

import math

import numpy as np


def largest_drop(values) -> float:
    """Largest relative fall of a series below its running maximum (0 for a monotone series)."""
    best, drop = -math.inf, 0.0
    for v in values:
        if best > 0:
            drop = max(drop, (best - v) / best)
        best = max(best, v)
    return drop


def fastest_rate(m) -> float:
    """The rate of a result measurement's fastest run (``work`` per shortest sample): other
    work on the machine can only slow a run down, so this is the one nearest the ceiling; on a
    busy machine the median run can lie several times below it."""
    return m["work"] / m["summary"]["min"]


# mixbench precision -> the compute benchmark whose FMA rate is its roof
MIX_FMA_BENCH = {"fp32": "fp32_fma", "fp64": "fp64_fma", "fp16x2": "fp16x2_fma"}


def mixbench_series(raw) -> dict:
    """precision -> {"oi", "flops_per_s", "bw_roof", "fma"} of a result's mixbench sweep
    (empty without one): the points' intensities and achieved rates ordered by intensity, the
    sweep's own memory ceiling (its highest bytes/s, reached at low intensity) and the
    precision's FMA measurement, the compute ceiling (None where not measured, or for a
    precision without one)."""
    pts = (raw.get("sweeps") or {}).get("mixbench") or []
    ms = {m["name"]: m for m in raw.get("measurements", [])}
    out = {}
    for p in dict.fromkeys(q["precision"] for q in pts):
        qs = sorted((q for q in pts if q["precision"] == p), key=lambda q: q["flop_per_byte"])
        out[p] = {"oi": np.array([q["flop_per_byte"] for q in qs]),
                  "flops_per_s": np.array([q["flops_per_s"] for q in qs]),
                  "bw_roof": max(q["bytes_per_s"] for q in qs),
                  "fma": ms.get(MIX_FMA_BENCH.get(p, ""))}
    return out


def mixbench_checks(raw) -> dict:
    """Per precision: ``drop`` (largest fall below the running maximum, points ordered by
    intensity), ``rise`` (the highest throughput / that at the lowest intensity), and
    ``over_roof`` (largest achieved / min(I x sweep bandwidth, the ``fastest_rate`` of the
    FMA measurement))."""
    out = {}
    for p, s in mixbench_series(raw).items():
        f = s["flops_per_s"]
        roof = s["oi"] * s["bw_roof"]
        if s["fma"] is not None:
            # the fastest run, not the catalog's median: a roof a point may not pass, whatever
            # the noise in either measurement
            roof = np.minimum(roof, fastest_rate(s["fma"]))
        out[p] = {"drop": largest_drop(f), "rise": float(f.max() / f[0]),
                  "over_roof": float(np.max(f / roof))}
    return out
