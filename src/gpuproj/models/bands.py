"""Error bands: how far each analytical method has been off on real cross-GPU data.

A method's own interval (the hierarchical model's spread over memory levels) says how much the
projection moves between its assumptions, not how wrong it is: with one memory level known it
has zero width. The band is measured instead. For every ordered GPU pair of the cross-GPU
tables (the public ones and our suite's, ``scripts/accuracy.py``), with p the predicted time,
s the source time and m the measured target time, the score is

    z = ln(m / p) / (C + |ln(p / s)|),   C = 1

the log error per unit of extrapolation: a projection that moves the time far from the
source's (P100 -> H100) errs more than one that moves it little (H100 -> H200), and
normalising by that distance keeps the band narrow where the projection is short (a locally
weighted split-conformal score, Lei et al. 2018). C = 1 was chosen as the offset under which
the held-out coverage of the nearest and the farthest projections, the mean over the methods,
differ least (docs/accuracy.md, "Error bands", compares the variants with the numbers); it was
chosen on the same held-out tables whose coverage is reported. The band of a new prediction is

    [p x exp(z_lo d), p x exp(z_hi d)],   d = C + |ln(p / s)|,

z_lo, z_hi the (1 - c) / 2 and (1 + c) / 2 quantiles of z, c the coverage (90 %). Each table
weighs the same (its pairs share a weight of 1 / n), so the 345,726 pairs of one PyTorch table
do not drown the 572 of another. Quantiles are kept apart for pairs within one
micro-architecture and pairs across two (Mondrian conformal): within an architecture the
errors are about half as large. How well the bands hold on tables they were not fitted on
(leave one data source out) is in docs/accuracy.md, with the variants that were compared; the
shipped file keeps those bands too (``without_source``), for checks that must not see a
table's own errors.

>>> import numpy as np
>>> float(weighted_quantile(np.array([1.0, 2.0, 3.0, 4.0]), np.ones(4), 0.5))
2.0
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

BANDS_FILE = Path(__file__).with_name("error_bands.json")
CELLS = ("same_arch", "cross_arch")
OFFSET = 1.0  # C above: the distance a projection that keeps the source time is given


def distance(time_s, source_time_s, offset=OFFSET) -> np.ndarray:
    """d = C + |ln(predicted / source time)|: how far the projection extrapolates (C =
    ``offset``; None: d = 1, the plain log error, kept for the comparison in the docs)."""
    t = np.asarray(time_s, float)
    if offset is None:
        return np.ones_like(t)
    with np.errstate(divide="ignore", invalid="ignore"):
        return offset + np.abs(np.log(t / np.asarray(source_time_s, float)))


def scores(pairs: pd.DataFrame, offset=OFFSET) -> np.ndarray:
    """z = ln(measured / predicted) / d of each pair (columns ``time_s``, ``true_s``,
    ``source_time_s``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(pairs["true_s"].to_numpy(float) / pairs["time_s"].to_numpy(float))
    return r / distance(pairs["time_s"], pairs["source_time_s"], offset)


def cell(source, target) -> str:
    """'same_arch' when both GPUs have the same micro-architecture, else 'cross_arch'."""
    a, b = (getattr(g, "architecture", "") or "" for g in (source, target))
    return "same_arch" if a and a.lower() == b.lower() else "cross_arch"


def weighted_quantile(x, w, q):
    """The smallest x_i whose cumulative weight (x sorted) reaches q of the total (a float; an
    array for an array of q, x sorted once)."""
    x, w = np.asarray(x, float), np.asarray(w, float)
    order = np.argsort(x, kind="stable")
    cum = np.cumsum(w[order])
    i = np.searchsorted(cum, np.asarray(q, float) * cum[-1] - 1e-12 * cum[-1])
    out = x[order][np.minimum(i, len(x) - 1)]
    return out if np.ndim(q) else float(out)


def fit_bands(pairs: pd.DataFrame, coverage: float = 0.9, min_sources: int = 2,
              offset=OFFSET) -> dict:
    """Band quantiles per method and cell from ``pairs`` (columns ``method``, ``table``,
    ``dataset`` (the data source a table comes from), ``cell``, ``time_s``, ``true_s``,
    ``source_time_s``): {method: {cell: {lo, hi, pairs, tables, datasets}}}, lo and hi the
    quantiles of the score z. A cell seen in fewer than ``min_sources`` data sources is left
    out: one source's spread says little about another's, and could not be checked on
    another."""
    z = scores(pairs, offset)
    d = pairs.assign(z=z)[np.isfinite(z)]
    out = {}
    for (method, c), g in d.groupby(["method", "cell"], sort=True):
        tables, sources = g["table"].nunique(), g["dataset"].nunique()
        if sources < min_sources:
            continue
        w = 1.0 / g.groupby("table")["z"].transform("size").to_numpy(float)
        zc = g["z"].to_numpy(float)
        out.setdefault(str(method), {})[str(c)] = {
            "lo": round(weighted_quantile(zc, w, (1 - coverage) / 2), 4),
            "hi": round(weighted_quantile(zc, w, (1 + coverage) / 2), 4),
            "pairs": int(len(g)), "tables": int(tables), "datasets": int(sources)}
    return out


def band_of(time_s, source_time_s, lo, hi, offset=OFFSET) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) times of predictions ``time_s`` from quantiles ``lo``, ``hi`` of z."""
    t = np.asarray(time_s, float)
    d = distance(t, source_time_s, offset)
    with np.errstate(over="ignore", invalid="ignore"):
        return t * np.exp(np.minimum(lo, 0.0) * d), t * np.exp(np.maximum(hi, 0.0) * d)


# predicted speed-up (or slow-down) factors that split the held-out pairs for the conditional
# coverage: a band should hold for near and far projections alike, not only on average
SPEEDUP_EDGES = (1.35, 2.0, 3.3)
BUCKETS = (f"<{SPEEDUP_EDGES[0]:g}x",
           *(f"{a:g}-{b:g}x" for a, b in zip(SPEEDUP_EDGES, SPEEDUP_EDGES[1:])),
           f">{SPEEDUP_EDGES[-1]:g}x")


def speedup_bucket(time_s, source_time_s) -> np.ndarray:
    """The ``BUCKETS`` label of each pair's predicted speed-up (or slow-down) factor."""
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.exp(np.abs(np.log(np.asarray(time_s, float) / np.asarray(source_time_s, float))))
    return np.array(BUCKETS, object)[np.searchsorted(SPEEDUP_EDGES, f)]


def leave_one_source_out(pairs: pd.DataFrame, coverage: float = 0.9, offset=OFFSET) -> dict:
    """{data source: the bands fitted on the other sources' pairs}: what a check on that
    source's tables may use (``held_out`` here, the learned models' held-out GPUs in
    ``scripts/learned_experiments.py``)."""
    return {str(s): fit_bands(pairs[pairs["dataset"] != s], coverage, offset=offset)
            for s in sorted(pairs["dataset"].unique())}


def held_out(pairs: pd.DataFrame, coverage: float = 0.9, offset=OFFSET) -> pd.DataFrame:
    """Coverage of the bands on each data source's tables when fitted without that source
    (leave one source out): one row per method, table and speed-up bucket (``bucket``: 'all'
    and the ``speedup_bucket`` labels) with ``covered`` and ``n`` (pairs inside the band,
    pairs with a band), ``width`` (median band high / low) and ``no_band`` (pairs of a cell,
    same or cross architecture, that the other sources fitted no band for: counted on the
    'all' row, so that a check on fewer pairs says so)."""
    d = pairs[np.isfinite(scores(pairs, offset))]
    rows = []
    for source, fitted in leave_one_source_out(d, coverage, offset).items():
        for (m, t), g in d[d["dataset"] == source].groupby(["method", "table"], sort=True):
            cells = fitted.get(m, {})
            lo = np.array([cells.get(c, {}).get("lo", np.nan) for c in g["cell"]], float)
            hi = np.array([cells.get(c, {}).get("hi", np.nan) for c in g["cell"]], float)
            has = np.isfinite(lo)
            g = g[has]
            low, high = band_of(g["time_s"], g["source_time_s"], lo[has], hi[has], offset)
            true = g["true_s"].to_numpy(float)
            inside, width = (true >= low) & (true <= high), high / low
            bucket = speedup_bucket(g["time_s"], g["source_time_s"])
            for b in ["all", *sorted(set(bucket))]:
                k = np.ones(len(g), bool) if b == "all" else bucket == b
                rows.append((m, t, b, int(inside[k].sum()), int(k.sum()),
                             float(np.median(width[k])) if k.any() else np.nan,
                             int((~has).sum()) if b == "all" else 0))
    return pd.DataFrame(rows, columns=["method", "table", "bucket", "covered", "n", "width",
                                       "no_band"])


@lru_cache(maxsize=1)
def load_bands() -> dict:
    """The shipped bands (``error_bands.json``, written by ``scripts/accuracy.py``)."""
    if not BANDS_FILE.exists():
        return {"coverage": None, "methods": {}}
    return json.loads(BANDS_FILE.read_text())


def bands_without_source(source: str, bands: dict | None = None) -> dict | None:
    """The bands (``{method: {cell: {lo, hi}}}``) fitted without the tables of data source
    ``source`` (a reader's format: ``amaris``, ``kerneltuner``, ``neusight``, ``seed-report``),
    for an evaluation on one of those tables that must not see its own errors through them;
    None where the bands file (``bands``, as ``load_bands`` returns it; None: the shipped one)
    has none for it (a table of no public data source)."""
    bands = load_bands() if bands is None else bands
    for name, fitted in bands.get("without_source", {}).items():
        if name.startswith(source):
            return fitted
    return None


def band_quantiles(method: str, source, target) -> tuple[float, float] | None:
    """(lo, hi) quantiles of the score z for ``method`` on this GPU pair (see ``band_of``), or
    None when no band was measured for it."""
    b = load_bands()["methods"].get(method, {}).get(cell(source, target))
    return None if b is None else (float(b["lo"]), float(b["hi"]))
