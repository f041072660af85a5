"""The one model contract every method in gpuproj follows.

A model is constructed with its hyper-parameters (keyword arguments), may learn with
``fit(table) -> self``, and predicts with ``predict(profiles, source, targets) -> Prediction``:
for every row of ``profiles`` (measured on ``source``) and every target GPU, a point time, a
low/high interval, the limiting resource, a per-resource breakdown and the assumptions used.

Subclasses implement ``_project(df, source, target) -> Projection`` on whole columns (numpy
arrays, one element per kernel row): no Python loop per kernel. They describe themselves in
class attributes: ``name`` (the method's name, as ``--method`` takes it), ``summary`` (one line
saying what it does), ``requires`` (columns every row needs: rows lacking one are skipped with
the reason), ``requires_any`` (column groups of which at least one must be fully present, such
as FLOPs or bytes) and ``trained`` (whether it must be fitted on measured data before it
predicts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..catalog import GPU, CeilingNote
from ..errors import GpuprojError
from ..names import gpu_list, one_gpu
from ..profiles.table import ProfileTable, Skipped, require_table
from .bands import band_of, band_quantiles
from .common import dtype_codes


def has_width(low, high) -> np.ndarray:
    """Which intervals [low, high] are more than a point: a method without an interval of its
    own gives low = high = its prediction (up to rounding)."""
    return np.asarray(high, float) > np.asarray(low, float) * (1 + 1e-9)


# the column of the frame a model's ``_project`` gets that holds each row's label in the profile
ROW_LABEL = "_index"

# Limiting resources a model may name; "unknown" where the target lacks the ceiling of what
# limits the row on the source; "learned" for a learned model's prediction, which names none.
LIMITERS = ("dram", "l3", "l2", "l1", "shared", "fp64", "fp32", "fp16", "int", "sfu", "ldst",
            "issue", "parallelism", "latency", "launch", "measured", "unknown", "learned")
# What each names, for the notes under a table (a ceiling is the one the projection puts the
# row nearest on the target, the longest of its resource times there, which it need not reach:
# a kernel of atomics far below every ceiling still names the nearest)
LIMITER_MEANINGS = {
    "dram": "DRAM bandwidth", "l3": "L3 (AMD Infinity Cache) bandwidth",
    "l2": "L2 bandwidth", "l1": "L1 bandwidth",
    "shared": "shared-memory bandwidth", "fp64": "FP64 throughput", "fp32": "FP32 throughput",
    "fp16": "FP16 throughput", "int": "integer throughput", "sfu": "special functions",
    "ldst": "load/store issue",
    "issue": "instruction issue: the schedulers feed the FP pipe below its peak",
    "parallelism": "too few blocks to fill the target",
    "latency": "memory latency, too few loads in flight", "launch": "launch overhead",
    "measured": "the source's own time", "unknown": "the target lacks that ceiling",
    "learned": "a learned model's, which names none"}


@dataclass
class Projection:
    """What ``_project`` returns for one target: arrays aligned with the input rows."""

    time_s: np.ndarray
    low_s: np.ndarray | None = None
    high_s: np.ndarray | None = None
    limiter: np.ndarray | None = None  # array of str from LIMITERS
    breakdown: dict = field(default_factory=dict)  # "t_dram_s" -> array, ...
    assumptions: list = field(default_factory=list)  # strings, for the whole target
    # what the user must not miss (projections the method itself doubts): strings, which
    # ``gpuproj.predict`` turns into warnings; evaluations keep them out of sight
    cautions: list = field(default_factory=list)
    # per row, why it has no time where the method knows ("" elsewhere): the skipped row's
    # reason, in place of the general one
    why_none: np.ndarray | None = None


@dataclass
class Prediction:
    """Predictions of one method for rows x targets.

    ``df`` columns: ``kernel, config, source, target, method, source_time_s, time_s, low_s,
    high_s, band_low_s, band_high_s, limiter, launches, row`` (row = index in the source
    table), then breakdown columns ``t_<resource>_s``. ``low_s``/``high_s`` is the method's own
    interval, ``band_low_s``/``band_high_s`` the error band measured on real cross-GPU data
    (``models.bands``; NaN where none was measured for the method). ``assumptions`` maps
    target id to the assumptions used for it; ``cautions``: the projections' cautions
    (``Projection.cautions``), each once.
    """

    df: pd.DataFrame
    assumptions: dict
    skipped: list
    cautions: list = field(default_factory=list)

    def __repr__(self) -> str:
        methods = ", ".join(dict.fromkeys(self.df["method"].astype(str))) if len(self.df) \
            else "no method"
        return (f"<Prediction by {methods}: {len(self.df)} row(s) x target(s), "
                f"{len(self.skipped)} skipped; .df, .application()>")

    def application(self) -> pd.DataFrame:
        """Per target: source and predicted totals (time x launches summed over kernels) and
        ``rows``, the kernel rows they add (fewer than the table's where rows were skipped)."""
        d = self.df
        w = d["launches"]
        g = pd.DataFrame({"target": d["target"], "source_time_s": d["source_time_s"] * w,
                          **{c: d[c] * w for c in ("time_s", "low_s", "high_s", "band_low_s",
                                                   "band_high_s")}})
        # a total has a bound only where every row has one: a band is measured per method and
        # GPU pair, and a row combined from several sources may have it from some of them,
        # another row from none; a sum over fewer rows would bound less than the total
        by = g.groupby("target", sort=False, observed=True)
        out = by.sum(min_count=1)
        bounds = ["low_s", "high_s", "band_low_s", "band_high_s"]
        out[bounds] = complete_sums(by[bounds])
        out["speedup"] = out["source_time_s"] / out["time_s"]
        out["rows"] = by.size()
        return out.reset_index()


def complete_sums(grouped) -> pd.DataFrame:
    """Per group and column of ``grouped`` (a pandas groupby), the sum of its values where every
    row of the group has one, else NaN: a total over fewer rows (a time or a bound a row
    lacks) is no total, and would read as one."""
    return grouped.sum(min_count=1).where(grouped.count().eq(grouped.size(), axis=0))


class Model:
    """Base class. Class attributes describe the method (see the module docstring)."""

    name: str = ""
    summary: str = ""
    # columns every row needs; rows lacking one are skipped with the reason
    requires: tuple = ("time_s",)
    # at least one of these column groups must be fully present (e.g. flops or bytes)
    requires_any: tuple = ()
    trained: bool = False

    def get_params(self) -> dict:
        """The model's hyper-parameters, {name: value}: its attributes except those ending in
        ``_`` (what a fit or a predict call sets)."""
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def fit(self, table: ProfileTable) -> Model:
        """Learn from ``table`` (a ``ProfileTable`` measured on several GPUs) and return the
        model itself, so that ``get_model(name).fit(table).predict(...)`` chains. The
        analytical methods and baselines learn nothing: theirs returns them as they are; the
        learned ones (``trained``, ``gpuproj.learned``) must be fitted before they predict."""
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
            for group in self.requires_any:  # column by column: a sub-frame costs more
                any_ok |= np.logical_and.reduce([df[c].notna().to_numpy() for c in group])
            miss = ~any_ok & ok
            alts = " or ".join("+".join(g) for g in self.requires_any)
            reason[miss] = f"{self.name} needs {alts}"
            ok &= any_ok
        return ok, reason

    def predict(self, profiles: ProfileTable, source, targets) -> Prediction:
        """Project every row of ``profiles`` (a ``ProfileTable``; a DataFrame goes through
        ``ProfileTable.from_frame(df)`` first), measured on ``source`` (one GPU: a name, a GPU
        file or a ``GPU``), to each of ``targets`` (a name, a list, or names separated by
        commas; ``all`` and wildcards as ``catalog.select`` reads them).

        Returns a ``Prediction`` (see its ``df`` columns); rows the method cannot predict (a
        count it needs is missing, no finite time) are in its ``skipped``, with why. A profile
        of several GPUs is projected as if every row were measured on ``source``: select them
        first (``profiles.on(gpu)``), as ``gpuproj.predict.predict`` does."""
        require_table(profiles)
        src = one_gpu(source, "source")
        tgts = gpu_list(targets)  # a GPU named twice is predicted once
        df = profiles.df
        ok, reason = self.usable(df)
        # labels as arrays once: per-row .at lookups cost seconds when a whole table is skipped
        skip = np.flatnonzero(~ok)
        kernels = df["kernel"].to_numpy(object)[skip]
        configs = df["config"].to_numpy(object)[skip]
        skipped = [Skipped(profiles.origin, None, f"{k} [{c}]: {r}")
                   for k, c, r in zip(kernels, configs, reason[skip])]
        # each row's label in the profile, under a name no profile column takes (a user's table may
        # have an "index" column); a frame from another call (a learned model's physics) brings
        # that call's labels, replaced by this one's
        use = df.loc[ok].drop(columns=ROW_LABEL, errors="ignore").reset_index(names=ROW_LABEL)
        use["_dtype"] = dtype_codes(use)  # computed once, shared by every target
        n = len(use)
        cols = {k: [] for k in ("time_s", "low_s", "high_s", "band_low_s", "band_high_s",
                                "limiter", "why_none")}
        breakdown, assumptions, cautions, done = {}, {}, {}, []
        self._memo_ = {}  # values that do not depend on the target, see _once
        try:
            for t in tgts:
                if n == 0:
                    break
                p = self._project(use, src, t)
                cols["time_s"].append(np.asarray(p.time_s, float))
                cols["low_s"].append(np.asarray(p.low_s if p.low_s is not None else p.time_s,
                                                float))
                cols["high_s"].append(np.asarray(p.high_s if p.high_s is not None else p.time_s,
                                                 float))
                cols["limiter"].append(p.limiter if p.limiter is not None
                                       else np.full(n, "", object))
                cols["why_none"].append(p.why_none)  # arrays only where skips are told
                q = band_quantiles(self.name, src, t)
                low, high = (band_of(cols["time_s"][-1], use["time_s"].to_numpy(float), *q)
                             if q else (np.full(n, np.nan),) * 2)
                cols["band_low_s"].append(low)
                cols["band_high_s"].append(high)
                for k, v in p.breakdown.items():
                    breakdown.setdefault(k, []).append(np.broadcast_to(np.asarray(v, float), (n,)))
                assumptions[t.id] = list(p.assumptions)
                cautions.update(dict.fromkeys(p.cautions))
                done.append(t.id)
        finally:
            self._memo_ = None
        k = len(done)

        def tiled(col):  # per-row labels repeated for each target, as cheap categoricals
            s = use[col]
            # a string column factorises several times faster than the same values as objects
            # (an empty one would give str rather than object categories, so it takes the other way)
            fast = isinstance(s.dtype, pd.StringDtype) and len(s)
            cat = pd.Categorical(s if fast else s.to_numpy(object))
            return pd.Categorical.from_codes(np.tile(cat.codes, k), cat.categories)

        def const(value):
            return pd.Categorical.from_codes(np.zeros(n * k, np.int8), [value])

        # the float columns are concatenated straight into one 2-D block, which the frame keeps
        # as its storage: a frame built from separate arrays copies them all once more
        floats = {"source_time_s": [use["time_s"].to_numpy(float)] * k,
                  "time_s": cols["time_s"], "low_s": cols["low_s"], "high_s": cols["high_s"],
                  "band_low_s": cols["band_low_s"], "band_high_s": cols["band_high_s"],
                  "launches": [use["launches"].to_numpy(float)] * k,
                  **{c: v for c, v in breakdown.items() if len(v) == k}}
        block = np.empty((len(floats), n * k))
        for i, parts in enumerate(floats.values()):
            if k:
                np.concatenate(parts, out=block[i])
        pred = pd.DataFrame(block.T, columns=list(floats), copy=False)
        labels = {
            "kernel": tiled("kernel"), "config": tiled("config"), "source": const(src.id),
            "target": pd.Categorical.from_codes(np.repeat(np.arange(k, dtype=np.int16), n),
                                                done or ["-"]),
            "method": const(self.name),
        }
        for loc, (c, v) in enumerate(labels.items()):
            pred.insert(loc, c, v)
        at = pred.columns.get_loc("launches")
        pred.insert(at, "limiter", _stack_labels(cols["limiter"]))
        pred.insert(at + 2, "row", np.tile(use[ROW_LABEL].to_numpy(), k))  # after launches
        time_s = pred["time_s"].to_numpy()
        bad = ~np.isfinite(time_s) | (time_s <= 0)
        if bad.any():
            why, lacks = {}, {}
            for t, notes in assumptions.items():  # the values the GPUs lack, where said
                lacks[t] = tuple(a for a in notes
                                 if isinstance(a, CeilingNote) and a.kind == "missing")
                why[t] = (f"{self.name} gave no finite positive time ("
                          + ("; ".join(lacks[t]) if lacks[t]
                             else "the counts it times are zero or lack a ceiling on one "
                             "of the GPUs") + ")")
            own = np.concatenate([np.full(n, "", object) if w is None else np.asarray(w, object)
                                  for w in cols["why_none"]])[bad]
            for kern, conf, tgt, reason in zip(*(pred[c].to_numpy(object)[bad]
                                                 for c in ("kernel", "config", "target")), own):
                # a row's own reason is not a ceiling the GPU lacks
                lack = () if reason else lacks[tgt]
                reason = f"{self.name}: {reason}" if reason else why[tgt]
                skipped.append(Skipped(profiles.origin, None,
                                       f"{kern} [{conf}] {src.id} -> {tgt}: {reason}",
                                       lack, (kern, conf, tgt)))
            pred = pred[~bad].reset_index(drop=True)
        return Prediction(pred, assumptions, skipped, list(cautions))

    def _once(self, key, compute):
        """``compute()``, evaluated once per ``predict`` call and shared by all its targets:
        for values that depend on the rows and the source GPU only (``key`` names the value).
        Outside ``predict`` (``_project`` called directly) it is simply evaluated."""
        memo = getattr(self, "_memo_", None)
        if memo is None:
            return compute()
        if key not in memo:
            memo[key] = compute()
        return memo[key]

    def _project(self, df: pd.DataFrame, source: GPU, target: GPU) -> Projection:
        raise NotImplementedError


def _stack_labels(parts) -> pd.Categorical:
    """One categorical of the per-target limiter arrays (each a ``pd.Categorical`` or an array
    of str), equal to ``pd.Categorical(np.concatenate(parts))``: categories sorted, unused ones
    dropped. Models return categoricals built from codes so that no million-element object array
    has to be hashed here."""
    if not parts:
        return pd.Categorical([])
    cats = [p if isinstance(p, pd.Categorical) else pd.Categorical(np.asarray(p, object))
            for p in parts]
    # the targets of one model share their categories: each distinct set is looked at once
    shared = {}  # id of a categories Index -> (its names, which of them occur)
    for c in cats:
        names, occur = shared.setdefault(id(c.categories), (c.categories.to_numpy(object),
                                                            np.zeros(len(c.categories), bool)))
        occur |= np.bincount(c.codes + 1, minlength=len(names) + 1)[1:] > 0  # code -1: missing
    categories = pd.Index(sorted({v for names, occur in shared.values() for v in names[occur]}))
    remap = {k: np.append(categories.get_indexer(names), -1)  # -1 stays missing
             for k, (names, _) in shared.items()}
    codes = np.concatenate([remap[id(c.categories)][c.codes] for c in cats])
    return pd.Categorical.from_codes(codes, categories)


class NotFittedError(GpuprojError):
    """A learned model was asked to predict before ``fit``."""
