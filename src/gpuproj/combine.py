"""Predicting a target from several source GPUs at once.

A kernel configuration measured on several GPUs gives one projection of a target's time from
each. Their errors are partly their own (the source's clock, cache behaviour, how far the
projection reaches), so their combination errs less than the average single projection. Each
projection p_i comes with its 90 % band [b_lo,i, b_hi,i] (measured on the public tables,
``gpuproj.models.bands``; a learned model's conformal interval where it has no band), whose
log-width w_i = ln(b_hi,i / b_lo,i) is its spread: narrow for a source of the target's own
architecture and for a short projection (H100 -> H200), wide for a long one (K40 -> H100). The
combination is the inverse-variance weighted geometric mean

    ln p = sum_i a_i ln p_i,   a_i = w_i^-2 / sum_j w_j^-2,

equal weights where a projection has neither band nor interval (or every one's interval is
open), weight 0 for one whose interval is open at an end. The band and the interval of
the combination are the same weighted geometric means of the sources' bounds: the sources'
errors share the target's own deviation from its datasheet, so a combined band does not
narrow as 1 / sqrt(n) would for independent errors (its coverage is measured in
docs/accuracy.md, "Several source GPUs").

>>> import pandas as pd
>>> p = pd.DataFrame({"method": "bandwidth", "kernel": "k", "config": "c",
...                   "source": ["a", "b"], "target": "t", "source_time_s": [2.0, 1.0],
...                   "time_s": [1.0, 4.0], "low_s": [1.0, 4.0], "high_s": [1.0, 4.0],
...                   "band_low_s": [0.5, 1.0], "band_high_s": [2.0, 16.0],
...                   "limiter": ["dram", "compute"], "true_s": 2.0})
>>> c = combine_sources(p)  # widths ln 4 and ln 16: weights 4/5 and 1/5
>>> round(float(c["time_s"].iloc[0]), 4), c["source"].iloc[0], int(c["sources"].iloc[0])
(1.3195, 'combined', 2)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

COMBINED = "combined"  # the source of a combined prediction
# what identifies one prediction target: the rows that are combined share these
KEYS = ("method", "kernel", "config", "target", "fold")
BOUNDS = ("low_s", "high_s", "band_low_s", "band_high_s")


def _log(x: pd.Series, bound: bool = False) -> np.ndarray:
    """ln x, NaN where x is no positive finite number; a ``bound`` keeps an interval's open
    ends, 0 and inf, as -inf and inf, so that a source without a finite interval leaves the
    combination without one, not without an interval."""
    v = x.to_numpy(float)
    keep = (v >= 0) if bound else (np.isfinite(v) & (v > 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(keep, np.log(v), np.nan)


def _spread(pairs: pd.DataFrame) -> np.ndarray:
    """Log-width of each prediction's band, else of its interval; inf for an interval open at
    an end (0 or inf: a learned model with too few calibration scores), whose weight is then 0;
    NaN where it has neither (or a point)."""
    out = np.full(len(pairs), np.nan)
    for lo, hi in (("low_s", "high_s"), ("band_low_s", "band_high_s")):
        if lo in pairs and hi in pairs:
            with np.errstate(invalid="ignore"):  # inf - inf: a point at infinity, no spread
                w = _log(pairs[hi], bound=True) - _log(pairs[lo], bound=True)
            out = np.where(w > 0, w, out)
    return out


def combine_sources(pairs: pd.DataFrame, weighted: bool = True) -> pd.DataFrame:
    """One row per (method, kernel, config, target) of an evaluation's ``pairs`` (per fold as
    well in a split): the inverse-variance weighted geometric mean of the projections from
    every source that predicted it (module docstring; ``weighted=False``: equal weights, the
    reference the weights are measured against). ``source`` is "combined",
    ``sources`` the number of projections combined, ``source_time_s`` and every bound the same
    weighted geometric mean, ``limiter`` and ``launches`` those of the heaviest source,
    ``true_s`` the target's measurement. Rows a method could not predict (no finite time) are
    left out; a target no source predicted keeps a NaN time."""
    keys = [k for k in KEYS if k in pairs.columns]
    d = pairs.reset_index(drop=True)
    lt = _log(d["time_s"])
    ok = np.isfinite(lt)
    w = 1.0 / _spread(d) ** 2 if weighted else np.ones(len(d))
    by_target = [d[k] for k in keys]
    # equal weights within a target where any projection has no spread to weigh it by, or
    # where every one is open (all weights 0)
    def per_target(values, how):
        return pd.Series(values).groupby(by_target, sort=False, dropna=False).transform(
            how).to_numpy()

    equal = per_target(~np.isfinite(w) & ok, "any") | (per_target(np.where(ok, w, 0.0),
                                                                   "sum") == 0)
    w = np.where(~ok, 0.0, np.where(equal, 1.0, w))
    cols = {"_w": w, "_n": ok.astype(int)}
    logs = {"time_s": lt, "source_time_s": _log(d["source_time_s"])}
    logs.update({b: _log(d[b], bound=True) for b in BOUNDS if b in d.columns})
    for c, v in logs.items():
        # a bound missing for one source leaves the combination without it (NaN); a source of
        # weight 0 adds nothing, its open bound included
        with np.errstate(invalid="ignore"):  # 0 x inf where the row does not count
            cols[f"_s_{c}"] = np.where(ok & ~np.isnan(v) & (w > 0),
                                       w * np.where(np.isnan(v), 0.0, v), 0.0)
        cols[f"_m_{c}"] = (ok & np.isnan(v)).astype(int)
    work = d[keys].assign(**cols)
    g = work.groupby(keys, sort=False, dropna=False)
    sums = g.sum()
    out = pd.DataFrame(index=sums.index)
    with np.errstate(divide="ignore", invalid="ignore"):
        for c in logs:
            v = np.exp(sums[f"_s_{c}"] / sums["_w"])
            out[c] = v.where((sums[f"_m_{c}"] == 0) & (sums["_w"] > 0))
    out["sources"] = sums["_n"]
    heaviest = d.loc[g["_w"].idxmax().to_numpy()].set_index(keys)
    # the problem, a configuration's on every source, keeps the rankings' groups
    for c in ("limiter", "launches", "true_s", "problem"):
        if c in d.columns:
            out[c] = heaviest[c]
    out = out.reset_index()
    out.insert(out.columns.get_loc("target"), "source", COMBINED)
    front = [c for c in pairs.columns if c in out.columns]
    return out[front + [c for c in out.columns if c not in front]]
