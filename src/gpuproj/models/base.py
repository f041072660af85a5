"""The one model contract every method in gpuproj follows.

A model is constructed with its hyper-parameters (keyword arguments), may learn with
``fit(table) -> self``, and predicts with ``predict(profiles, source, targets) -> Prediction``:
for every row of ``profiles`` (measured on ``source``) and every target GPU, a point time, a
low/high interval, the limiting resource, a per-resource breakdown and the assumptions used.

Subclasses implement ``_project(df, source, target, ctx) -> Projection`` on whole columns (numpy
arrays, one element per kernel row): no Python loop per kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..catalog import GPU, resolve
from ..errors import GpuprojError
from ..profiles.table import ProfileTable, Skipped

# Limiting resources a model may name.
LIMITERS = ("dram", "l2", "l1", "shared", "fp64", "fp32", "fp16", "int", "sfu", "ldst",
            "latency", "launch", "measured")


@dataclass
class Projection:
    """What ``_project`` returns for one target: arrays aligned with the input rows."""

    time_s: np.ndarray
    low_s: np.ndarray | None = None
    high_s: np.ndarray | None = None
    limiter: np.ndarray | None = None  # array of str from LIMITERS
    breakdown: dict = field(default_factory=dict)  # "t_dram_s" -> array, ...
    assumptions: list = field(default_factory=list)  # strings, for the whole target


@dataclass
class Prediction:
    """Predictions of one method for rows x targets.

    ``df`` columns: ``kernel, config, source, target, method, source_time_s, time_s, low_s,
    high_s, limiter, launches, row`` (row = index in the source table), then breakdown columns
    ``t_<resource>_s``. ``assumptions`` maps target id to the assumptions used for it.
    """

    df: pd.DataFrame
    assumptions: dict
    skipped: list

    def application(self) -> pd.DataFrame:
        """Per target: source and predicted totals (time x launches summed over kernels)."""
        d = self.df
        w = d["launches"]
        g = pd.DataFrame({"target": d["target"], "source_time_s": d["source_time_s"] * w,
                          "time_s": d["time_s"] * w, "low_s": d["low_s"] * w,
                          "high_s": d["high_s"] * w})
        out = g.groupby("target", sort=False).sum()
        out["speedup"] = out["source_time_s"] / out["time_s"]
        return out.reset_index()

    def to_records(self) -> list:
        cols = [c for c in self.df.columns if c != "row"]
        return self.df[cols].replace({np.nan: None}).to_dict(orient="records")


class Model:
    """Base class. Class attributes describe the method; see module docstring."""

    name: str = ""
    summary: str = ""
    # columns every row needs; rows lacking one are skipped with the reason
    requires: tuple = ("time_s",)
    # at least one of these column groups must be fully present (e.g. flops or bytes)
    requires_any: tuple = ()
    trained: bool = False

    def get_params(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def fit(self, table: ProfileTable) -> "Model":  # analytical models learn nothing
        return self

    # the shared driver ------------------------------------------------------------------
    def usable(self, df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Mask of rows this model can predict, and the reason for each row it cannot."""
        ok = np.ones(len(df), bool)
        reason = np.full(len(df), "", dtype=object)
        for c in self.requires:
            miss = df[c].isna().to_numpy() & ok
            reason[miss] = f"{self.name} needs '{c}'"
            ok &= ~miss
        if self.requires_any:
            any_ok = np.zeros(len(df), bool)
            for group in self.requires_any:
                any_ok |= df[list(group)].notna().all(axis=1).to_numpy()
            miss = ~any_ok & ok
            alts = " or ".join("+".join(g) for g in self.requires_any)
            reason[miss] = f"{self.name} needs {alts}"
            ok &= any_ok
        return ok, reason

    def predict(self, profiles: ProfileTable, source, targets) -> Prediction:
        """Project every row of ``profiles`` (measured on ``source``) to each of ``targets``."""
        src = resolve(source)
        tgts = [resolve(t) for t in ([targets] if isinstance(targets, (str, GPU)) else targets)]
        df = profiles.df
        ok, reason = self.usable(df)
        skipped = [Skipped(profiles.origin, None,
                           f"{df.at[i, 'kernel']} [{df.at[i, 'config']}]: {reason[i]}")
                   for i in np.flatnonzero(~ok)]
        use = df.loc[ok].reset_index()
        from .common import dtype_codes

        use["_dtype"] = dtype_codes(use)  # computed once, shared by every target
        n = len(use)
        cols = {k: [] for k in ("time_s", "low_s", "high_s", "limiter")}
        breakdown, assumptions, done = {}, {}, []
        for t in tgts:
            if n == 0:
                break
            p = self._project(use, src, t)
            cols["time_s"].append(np.asarray(p.time_s, float))
            cols["low_s"].append(np.asarray(p.low_s if p.low_s is not None else p.time_s, float))
            cols["high_s"].append(np.asarray(p.high_s if p.high_s is not None else p.time_s, float))
            cols["limiter"].append(np.asarray(p.limiter if p.limiter is not None
                                              else np.full(n, "", object), object))
            for k, v in p.breakdown.items():
                breakdown.setdefault(k, []).append(np.broadcast_to(np.asarray(v, float), (n,)))
            assumptions[t.id] = list(p.assumptions)
            done.append(t.id)
        k = len(done)

        def tiled(col):  # per-row labels repeated for each target, as cheap categoricals
            cat = pd.Categorical(use[col].to_numpy(object))
            return pd.Categorical.from_codes(np.tile(cat.codes, k), cat.categories)

        def const(value):
            return pd.Categorical.from_codes(np.zeros(n * k, np.int8), [value])

        pred = pd.DataFrame({
            "kernel": tiled("kernel"), "config": tiled("config"), "source": const(src.id),
            "target": pd.Categorical.from_codes(np.repeat(np.arange(k, dtype=np.int16), n),
                                                done or ["-"]),
            "method": const(self.name),
            "source_time_s": np.tile(use["time_s"].to_numpy(float), k),
            "time_s": np.concatenate(cols["time_s"]) if k else np.zeros(0),
            "low_s": np.concatenate(cols["low_s"]) if k else np.zeros(0),
            "high_s": np.concatenate(cols["high_s"]) if k else np.zeros(0),
            "limiter": pd.Categorical(np.concatenate(cols["limiter"]) if k else []),
            "launches": np.tile(use["launches"].to_numpy(float), k),
            "row": np.tile(use["index"].to_numpy(), k),
            **{c: np.concatenate(v) for c, v in breakdown.items() if len(v) == k},
        })
        bad = ~np.isfinite(pred["time_s"].to_numpy()) | (pred["time_s"].to_numpy() <= 0)
        if bad.any():
            for _, r in pred[bad].iterrows():
                skipped.append(Skipped(profiles.origin, None,
                                       f"{r['kernel']} [{r['config']}] -> {r['target']}: "
                                       f"{self.name} gave no finite positive time (a ceiling is "
                                       f"missing for this GPU)"))
            pred = pred[~bad].reset_index(drop=True)
        return Prediction(pred, assumptions, skipped)

    def _project(self, df: pd.DataFrame, source: GPU, target: GPU) -> Projection:
        raise NotImplementedError


class NotFittedError(GpuprojError):
    """A learned model was asked to predict before ``fit``."""
