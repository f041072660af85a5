"""Error bands: how far each analytical method has been off on real cross-GPU data.

A method's own interval (the hierarchical model's spread over memory levels) says how much the
projection moves between its assumptions, not how wrong it is: with one memory level known it
has zero width. The band is measured instead. For every ordered GPU pair of the public
cross-GPU tables (``scripts/accuracy.py``), r = ln(measured / predicted); the band of a new
prediction p is

    [p x exp(q_lo), p x exp(q_hi)],   q_lo, q_hi = the (1 - c) / 2 and (1 + c) / 2 quantiles of r

with c the coverage (90 %). Each table weighs the same (its pairs share a weight of 1 / n), so
the 345,726 pairs of one PyTorch table do not drown the 572 of another. Quantiles are kept
apart for pairs within one micro-architecture and pairs across two (Mondrian conformal): on
these tables the errors within an architecture are about half as large. How well the bands hold
on a table they were not fitted on (leave one data source out) is in docs/accuracy.md.

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


def cell(source, target) -> str:
    """'same_arch' when both GPUs have the same micro-architecture, else 'cross_arch'."""
    a, b = (getattr(g, "architecture", "") or "" for g in (source, target))
    return "same_arch" if a and a.lower() == b.lower() else "cross_arch"


def weighted_quantile(x, w, q) -> float:
    """The smallest x_i whose cumulative weight (x sorted) reaches q of the total."""
    x, w = np.asarray(x, float), np.asarray(w, float)
    order = np.argsort(x, kind="stable")
    cum = np.cumsum(w[order])
    i = np.searchsorted(cum, q * cum[-1] - 1e-12 * cum[-1])
    return float(x[order][min(i, len(x) - 1)])


def fit_bands(pairs: pd.DataFrame, coverage: float = 0.9, min_sources: int = 2) -> dict:
    """Band quantiles per method and cell from ``pairs`` (columns ``method``, ``table``,
    ``dataset`` (the data source a table comes from), ``cell``, ``time_s``, ``true_s``):
    {method: {cell: {lo, hi, pairs, tables, datasets}}}, lo and hi in ln(measured /
    predicted). A cell seen in fewer than ``min_sources`` data sources is left out: one
    source's spread says little about another's, and could not be checked on another."""
    d = pairs[(pairs["time_s"] > 0) & (pairs["true_s"] > 0)]
    r_all = np.log(d["true_s"].to_numpy(float) / d["time_s"].to_numpy(float))
    d = d.assign(r=r_all)[np.isfinite(r_all)]
    out = {}
    for (method, c), g in d.groupby(["method", "cell"], sort=True):
        n_per_table = g.groupby("table")["r"].transform("size").to_numpy(float)
        tables, sources = g["table"].nunique(), g["dataset"].nunique()
        if sources < min_sources:
            continue
        w = 1.0 / n_per_table
        r = g["r"].to_numpy(float)
        out.setdefault(str(method), {})[str(c)] = {
            "lo": round(weighted_quantile(r, w, (1 - coverage) / 2), 4),
            "hi": round(weighted_quantile(r, w, (1 + coverage) / 2), 4),
            "pairs": int(len(g)), "tables": int(tables), "datasets": int(sources)}
    return out


def held_out(pairs: pd.DataFrame, coverage: float = 0.9) -> pd.DataFrame:
    """Coverage of the bands on each data source's tables when fitted without that source
    (leave one source out): one row per method and table with ``covered`` and ``n`` (pairs
    inside the band, pairs with a band) and ``width`` (median band high / low)."""
    d = pairs[(pairs["time_s"] > 0) & (pairs["true_s"] > 0)]
    d = d.assign(r=np.log(d["true_s"].to_numpy(float) / d["time_s"].to_numpy(float)))
    rows = []
    for source in sorted(d["dataset"].unique()):
        test = (d["dataset"] == source).to_numpy()
        fitted = fit_bands(d[~test], coverage)
        for (m, t), g in d[test].groupby(["method", "table"], sort=True):
            cells = fitted.get(m, {})
            lo = np.array([cells.get(c, {}).get("lo", np.nan) for c in g["cell"]], float)
            hi = np.array([cells.get(c, {}).get("hi", np.nan) for c in g["cell"]], float)
            has = np.isfinite(lo)
            lo, hi, r = np.minimum(lo[has], 0), np.maximum(hi[has], 0), g["r"].to_numpy()[has]
            rows.append((m, t, int(((r >= lo) & (r <= hi)).sum()), int(has.sum()),
                         float(np.median(np.exp(hi - lo))) if has.any() else np.nan))
    return pd.DataFrame(rows, columns=["method", "table", "covered", "n", "width"])


@lru_cache(maxsize=1)
def load_bands() -> dict:
    """The shipped bands (``error_bands.json``, written by ``scripts/accuracy.py``)."""
    if not BANDS_FILE.exists():
        return {"coverage": None, "methods": {}}
    return json.loads(BANDS_FILE.read_text())


def band_factors(method: str, source, target) -> tuple[float, float] | None:
    """(low, high) multipliers of ``method``'s point prediction for this GPU pair, or None
    when no band was measured for it."""
    b = load_bands()["methods"].get(method, {}).get(cell(source, target))
    if b is None:
        return None
    return float(np.exp(min(b["lo"], 0.0))), float(np.exp(max(b["hi"], 0.0)))
