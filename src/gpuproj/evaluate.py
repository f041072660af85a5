"""Cross-GPU evaluation: every kernel configuration measured on two or more GPUs gives, for each
ordered pair (s, t), one prediction of t's time from s's row alone (plus the catalog), compared
with t's measurement.

>>> from gpuproj.evaluate import metrics
>>> m = metrics(np.array([1.05, 0.8]), np.array([1.0, 1.0]))
>>> round(m["mape"], 6), m["within_10"]
(12.5, 0.5)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import GpuprojWarning, InputError
from .models.base import complete_sums, has_width
from .names import gpu_list
from .profiles.table import (
    ProfileTable,
    Skipped,
    count_causes,
    problem_labels,
    problem_per_row,
    problems_of,
    require_table,
)


class NothingToEvaluate(InputError):
    """A table (or the GPUs selected of it) without a kernel configuration measured on two GPUs:
    no pair to predict."""


def metrics(pred, true, low=None, high=None, band_low=None, band_high=None,
            groups=None) -> dict:
    """Error metrics of predictions ``pred`` against measurements ``true`` (same units).

    mape, median_ape, gmre (geometric mean of |pred-true|/true) in %, median_ratio (pred/true),
    within_10/25/50 (fractions), coverage (fraction of ``true`` inside [low, high]) and
    interval_width (median of (high-low)/pred), both None where every interval is a point (a
    method without one: a coverage of 0 would read as a failed interval); band_coverage and
    band_width the same for the measured error band [band_low, band_high] (``models.bands``),
    over the band_n pairs that have one (a pair of architectures the band was never measured
    on has none). gmre floors each error at 1e-6 (0.0001 %): one exact prediction would send
    the log to -inf, and even so pulls the mean of a few pairs far down.
    With ``groups`` (the fold of each pair, e.g. its held-out GPU) and two or more groups,
    coverage_ci is a 90 % bootstrap interval of the coverage over those groups
    (``coverage_interval``), else None.
    """
    pred = np.asarray(pred, float)
    true = np.asarray(true, float)
    n = len(pred)
    if n == 0:
        return {"n": 0, "mape": None, "median_ape": None, "gmre": None, "median_ratio": None,
                "within_10": None, "within_25": None, "within_50": None, "coverage": None,
                "interval_width": None, "coverage_ci": None, "band_coverage": None,
                "band_width": None, "band_n": 0}
    ape = np.abs(pred - true) / true
    out = {
        "n": int(n),
        "mape": float(100 * ape.mean()),
        "median_ape": float(100 * np.median(ape)),
        # APE of exactly 0 would send the log to -inf; floor at 1e-6 (0.0001 %)
        "gmre": float(100 * np.exp(np.log(np.maximum(ape, 1e-6)).mean())),
        "median_ratio": float(np.median(pred / true)),
        # + 1e-12: 1.1 against 1.0 is 10 % off in decimal, 10.000000000000009 % in binary
        **{f"within_{p}": float((ape <= p / 100 + 1e-12).mean()) for p in (10, 25, 50)},
    }
    if low is not None and high is not None and has_width(low, high).any():
        low, high = np.asarray(low, float), np.asarray(high, float)
        inside = (true >= low) & (true <= high)
        out["coverage"] = float(inside.mean())
        out["interval_width"] = float(np.median((high - low) / pred))
        out["coverage_ci"] = None if groups is None else coverage_interval(inside, groups)
    else:
        out["coverage"] = out["interval_width"] = out["coverage_ci"] = None
    out["band_coverage"] = out["band_width"] = None
    out["band_n"] = 0
    if band_low is not None and band_high is not None:
        bl, bh = np.asarray(band_low, float), np.asarray(band_high, float)
        has = np.isfinite(bl) & np.isfinite(bh)
        out["band_n"] = int(has.sum())
        if has.any():
            out["band_coverage"] = float(((true[has] >= bl[has]) & (true[has] <= bh[has])).mean())
            out["band_width"] = float(np.median((bh[has] - bl[has]) / pred[has]))
    return out


def coverage_interval(inside, groups, n_boot: int = 2000) -> list | None:
    """The 90 % percentile interval [low, high] of the pooled coverage (fraction of
    ``inside``) over ``n_boot`` bootstrap resamples of whole ``groups`` (seeded: the same
    table gives the same interval); None with fewer than two groups.

    The pairs of one held-out GPU share its shift, so they are not independent draws: the
    coverage of a leave-one-GPU-out evaluation varies with which GPUs happened to be in the
    table, and resampling GPUs (not pairs) shows by how much. With few groups (4 GPUs give 35
    distinct resamples) the percentile interval is itself rough, and narrower than it should
    be.

    >>> coverage_interval(np.array([1, 1, 0, 0], bool), np.array(["a", "a", "b", "b"]))
    [0.0, 1.0]
    """
    inside = np.asarray(inside, float)
    # a pair without a group (NaN, None) is a group of its own: the sentinel -1 of missing
    # values would stop np.bincount
    codes, groups = pd.factorize(np.asarray(groups, object), use_na_sentinel=False)
    if len(groups) < 2:
        return None
    hits = np.bincount(codes, weights=inside, minlength=len(groups))
    sizes = np.bincount(codes, minlength=len(groups)).astype(float)
    draw = np.random.default_rng(0).integers(0, len(groups), (n_boot, len(groups)))
    pooled = hits[draw].sum(axis=1) / sizes[draw].sum(axis=1)
    return [float(np.percentile(pooled, 5)), float(np.percentile(pooled, 95))]


# what each number of ``to_json`` measures: the error metrics keep their names from the
# literature (MAPE is a percentage), so the JSON says their units once instead
UNITS = {
    "n": "pairs", "mape": "%", "median_ape": "%",
    "gmre": "% (geometric mean of |predicted - measured| / measured, each floored at 1e-6)",
    "median_ratio": "predicted / measured",
    **{f"within_{p}": f"fraction of pairs within {p} %" for p in (10, 25, 50)},
    "coverage": "fraction of pairs inside the method's own interval (an analytical method's: "
                "its range over memory levels, not a probability)",
    "coverage_ci": "fraction, 90 % bootstrap interval over held-out groups",
    "interval_width": "median (high - low) / predicted; null where there is no interval or "
                      "the median one is unbounded (JSON has no infinity)",
    "band_coverage": "fraction of the band_n pairs with a band inside the 90 % error band",
    "band_n": "pairs with a measured error band",
    "band_width": "median (band high - band low) / predicted",
    "groups": "rankings",
    "predictions": "predictions ranked, one per configuration, source and target (per pair: "
                   "the configurations ranked)",
    "targets": "GPUs per ranking",
    "rank_corr": "Spearman's rho", "top1_hit": "fraction of rankings",
    "topk": "configurations", "*_pct": "%",
}
# ``Evaluation.frame``'s column of each metric: (name with its unit, factor from the metric's
# value, what it is). A frame carries no ``units`` as the JSON does, so each name says its
# unit, and its shares are in % as the errors are (the printed table shows them so too)
FRAME_COLUMNS = {
    "n": ("pairs", 1, "pairs predicted"),
    "mape": ("mape_pct", 1, "mean |predicted - measured| / measured, %"),
    "median_ape": ("median_ape_pct", 1, "its median, %"),
    "gmre": ("gmre_pct", 1, "its geometric mean (each floored at 1e-6), %"),
    "median_ratio": ("median_ratio", 1, "median predicted / measured"),
    **{f"within_{p}": (f"within_{p}_pct", 100, f"% of pairs within {p} %")
       for p in (10, 25, 50)},
    "coverage": ("coverage_pct", 100, "% of pairs inside the method's own interval (an "
                 "analytical method's: its range over memory levels, not a probability)"),
    "interval_width": ("interval_width_ratio", 1, "median (high - low) / predicted"),
    "band_coverage": ("band_coverage_pct", 100,
                      "% of the band_pairs pairs inside the 90 % error band"),
    "band_width": ("band_width_ratio", 1, "median (band high - band low) / predicted"),
    "band_n": ("band_pairs", 1, "pairs with a measured error band"),
}
TOP_K = 5  # configurations an autotuner would run on the target (ranking's topk_loss_pct)
MIN_CONFIGS = 3  # a ranking of two configurations is a coin toss, not a ranking
CHOICE_KEYS = ["kernel", "config", "source"]  # gpu_choice: one ranking of the targets per group
RANDOM_PICK = "random pick"  # gpu_choice's reference row
# predicted times this close (relative) are one time: a ratio of two equal bandwidths differs
# in its last bits
TIE_RTOL = 1e-9
MISSING_GROUP = "(missing)"  # summary(by=column): the pairs without a value in that column
TOTAL_KERNEL = "(all kernels)"  # totals(): the kernel of a total over every kernel
_METRIC_COLUMNS = ("time_s", "true_s", "low_s", "high_s", "band_low_s", "band_high_s")
_PAIR_COLUMNS = ["method", "kernel", "config", "source", "target", "source_time_s", "time_s",
                 "low_s", "high_s", "band_low_s", "band_high_s", "limiter"]


@dataclass(eq=False)  # frames do not compare as one truth value
class Evaluation:
    """All pairs of one evaluation: ``pairs`` has one row per (method, kernel, config, source,
    target) with ``source_time_s``, ``time_s`` (predicted), ``low_s``, ``high_s``,
    ``band_low_s``, ``band_high_s``, ``true_s`` and, from a table of the canonical columns,
    ``problem`` (what rankings group by); ``skipped`` lists what could not be predicted and
    why."""

    pairs: pd.DataFrame
    skipped: list

    @classmethod
    def empty(cls, skipped=()) -> Evaluation:
        """An evaluation of no pair, with the columns of one."""
        return cls(pd.DataFrame(columns=_PAIR_COLUMNS + ["true_s"]), list(skipped))

    def summary(self, by: str | None = None) -> dict:
        """Metrics per method (and per ``by``: 'pair', or a column such as 'kernel' or
        'fold'; pairs whose ``by`` is missing are the group MISSING_GROUP, so that the groups
        add up to every pair)."""
        out = {}
        d = self.pairs
        if by not in (None, "pair") and by not in d:
            raise ValueError(f"summary(by={by!r}): by is None, 'pair' or a column of the pairs "
                             f"({', '.join(d.columns)})")
        for m, g in d.groupby("method", sort=False):
            if by is None:
                # a split's pairs carry their fold: the coverage gets its interval over folds
                out[m] = metrics(*(g[c] for c in _METRIC_COLUMNS), groups=g.get("fold"))
            elif by == "pair":
                # grouped on the two columns and named after: "source->target" built row by
                # row took a third of the time on a table of millions of pairs
                at = {f"{s}->{t}": idx for (s, t), idx in
                      g.groupby(["source", "target"], sort=False).indices.items()}
                cols = [g[c].to_numpy(float) for c in _METRIC_COLUMNS]
                out[m] = {k: metrics(*(a[at[k]] for a in cols)) for k in sorted(at)}
            else:
                # pairs without a value of ``by`` (a kernel of no known family) are a group of
                # their own, MISSING_GROUP, last: left out, the groups would add up to fewer
                # pairs than the method's total without a word
                key = g[by]
                out[m] = {k: metrics(*(h[c] for c in _METRIC_COLUMNS))
                          for k, h in g[key.notna()].groupby(key[key.notna()], sort=True)}
                if key.isna().any():
                    out[m][MISSING_GROUP] = metrics(*(g.loc[key.isna(), c]
                                                      for c in _METRIC_COLUMNS))
        return out

    def per_fold(self) -> dict:
        """Metrics per method and fold of a split of two or more folds (e.g. per held-out
        GPU), else {}."""
        if "fold" not in self.pairs or self.pairs["fold"].nunique() < 2:
            return {}
        return self.summary("fold")

    def frame(self) -> pd.DataFrame:
        """One row per method with its metrics (``summary()``), lowest MAPE first, each
        column's unit in its name (``FRAME_COLUMNS``): counts of pairs (``pairs``,
        ``band_pairs``), percentages (``*_pct``: the errors, and the shares within 10/25/50 %
        and inside the interval and the band, which ``summary()`` and the JSON give as
        fractions) and ratios (``*_ratio``)."""
        d = pd.DataFrame.from_dict(self.summary(), orient="index").reindex(
            columns=list(FRAME_COLUMNS))
        # a metric a method has not (None) is missing, as in every other frame
        d = d.apply(pd.to_numeric)
        for k, (name, scale, _) in FRAME_COLUMNS.items():
            d[k] = d[k] * scale
        return (d.rename(columns={k: v[0] for k, v in FRAME_COLUMNS.items()})
                .sort_values("mape_pct").rename_axis("method"))

    def __repr__(self) -> str:
        # pairs per method: each method predicts the same source -> target pairs (a method
        # without a projection for some leaves those out), so the total would count them again
        # per method
        counts = self.pairs["method"].value_counts(sort=False)
        per = ", ".join(f"{m} {n}" for m, n in counts.items()) or "none"
        return (f"<Evaluation pairs per method: {per}; {len(self.skipped)} skipped; "
                ".frame(), .summary(), .pairs>")

    def _repr_html_(self) -> str:
        """What a notebook shows: ``frame()`` to three significant digits, its units and what
        was skipped."""
        import html

        from .profiles.table import skipped_lines

        d = self.frame()
        units = "; ".join(f"{name}: {what}" for name, _, what in FRAME_COLUMNS.values())
        return (d.to_html(float_format=lambda v: f"{v:.3g}")
                + f"<p><small>{html.escape(units)}</small></p>"
                + "".join(f"<p><small>{html.escape(ln)}</small></p>"
                          for ln in skipped_lines(self.skipped)))

    def combined(self, weighted: bool = True) -> Evaluation:
        """The same targets predicted from all their sources at once: per method, kernel
        configuration and target, the inverse-variance weighted geometric mean of the
        projections from every other GPU that measured it (``gpuproj.combine``), with
        ``source`` "combined" and ``sources`` the number combined (``weighted=False``: equal
        weights). Every metric and ranking of the result reads the combined predictions; its
        GPU choice does not answer a centre's question, each target having been predicted from
        the other candidates' measurements."""
        from .combine import combine_sources

        return Evaluation(combine_sources(self.pairs, weighted), list(self.skipped))

    def totals(self, by: str | None = None) -> Evaluation:
        """Each source -> target pair's kernel configurations added up as one application (each
        run once): per method (and value of the column ``by``, e.g. 'kernel' for the total of
        each kernel's configurations), the sums of the source, predicted and measured times,
        and of each bound where every pair added has one (a bound over fewer pairs would bound
        less than the total; ``PredictionSet.application`` adds a profile's rows alike). An
        ``Evaluation`` of these totals: its ``summary()`` gives the error and the interval and
        band coverage of an application's total, which the kernels' do not tell (errors of one
        sign add up, of opposite signs they cancel, and the longest kernels weigh most).
        ``kernel`` is TOTAL_KERNEL (or the ``by='kernel'`` value), ``config`` the number of
        pairs added: a method that predicted fewer of them adds fewer."""
        d = self.pairs
        if by is not None and by not in d:
            raise ValueError(f"totals(by={by!r}): by is None or a column of the pairs "
                             f"({', '.join(d.columns)})")
        keys = ["method", "source", "target", *([by] if by else []),
                # a split's folds stay apart (the held-out GPU's pairs are one fold)
                *(["fold"] if "fold" in d and by != "fold" else [])]
        g = d.groupby(keys, sort=False, observed=True, dropna=False)
        times = ["source_time_s", "time_s", "true_s"]
        bounds = ["low_s", "high_s", "band_low_s", "band_high_s"]
        out = complete_sums(g[times + bounds]).reset_index()
        out["config"] = g.size().to_numpy().astype(str)
        if by != "kernel":
            out["kernel"] = TOTAL_KERNEL
        return Evaluation(out[out["time_s"].notna()].reset_index(drop=True), list(self.skipped))

    def ranking(self, by: str | None = None, top: int = TOP_K) -> pd.DataFrame:
        """How well each method ranks the configurations of a kernel on a target: the question
        of an autotuner that would run only the predicted best on a GPU it has not tuned on.
        Only configurations of one problem are ranked together (``_rank_groups``); where
        none ranks, ``why_no_ranking`` says why.
        ``by='pair'`` gives one row per method and source -> target pair (``rank_metrics``)."""
        if by not in (None, "pair"):
            raise ValueError(f"ranking(by={by!r}): by is None or 'pair'")
        d = self._ranked_pairs()
        keys = self._rank_groups()
        fastest = d.groupby(keys, sort=False)["true_s"].min()
        rows = {}
        for m, g in d.groupby("method", sort=False):
            if by is None:
                rows[m] = rank_metrics(g, keys, top, fastest)
            else:
                for pair, h in g.groupby(g["source"] + "->" + g["target"], sort=True):
                    rows[(m, pair)] = rank_metrics(h, keys, top, fastest)
        # numbers, NaN where no group ranks (None made object columns)
        out = pd.DataFrame.from_dict(rows, orient="index").apply(pd.to_numeric)
        out.index.names = ["method"] if by is None else ["method", "pair"]
        return out

    def shortlist(self, methods, top: int = TOP_K) -> dict:
        """How much longer, measured on the target, the best of the ``top`` configurations
        taken in turn from ``methods``' predicted orders (``gpuproj.shortlist``) takes than the
        fastest: ``shortlist_metrics``. ``methods`` as ``evaluate`` takes them: a list, or names
        separated by commas (``"same,gb"``)."""
        from .models import method_list

        methods = method_list(methods)
        missing = [m for m in methods if m not in set(self.pairs["method"])]
        if missing:
            raise ValueError(f"shortlist: no pairs of {', '.join(missing)}")
        return shortlist_metrics(self._ranked_pairs(), methods, self._rank_groups(), top)

    def why_no_ranking(self) -> str | None:
        """Why no method ranks a group of ``ranking()``, None where one does
        (``why_no_variants``)."""
        return why_no_variants(self._ranked_pairs(), ["method", *self._rank_groups()],
                               "measured on a source and a target", "a ranking orders")

    def gpu_choice(self, by: str | None = None) -> pd.DataFrame:
        """How well each method orders the target GPUs, the question of a centre choosing one:
        each kernel configuration measured on one source GPU ranks the other GPUs that measured
        it (at least MIN_CONFIGS), ``rank_metrics`` over CHOICE_KEYS with the predicted fastest
        as the choice. One row per method: ``groups`` (rankings), ``targets`` (GPUs per ranking,
        "3" or "3-8"), ``rank_corr``, ``top1_hit``, ``top1_loss_pct`` and
        ``top1_loss_max_pct``; then RANDOM_PICK, the expected hit rate and loss of a target
        taken at random. Targets predicted alike (within TIE_RTOL, e.g. by a ratio of two
        equal bandwidths) share the choice: each of n tied counts 1/n of the hit and the loss,
        whatever the order of the pairs (``rank_metrics``). A method that predicts every
        target alike (``same``) cannot rank and gets no row. In a split by GPU each target's
        prediction comes from the fold that held it out, by a model that saw the other
        targets.

        ``by='pair'``: which GPUs a method confuses, one row per method and pair of target
        GPUs (a, b) ranked together: ``groups``, ``swapped`` (the fraction of those rankings
        that order a and b the other way round than measured), ``tied`` (predicted equal,
        e.g. by a ratio of two equal bandwidths, where the measured times differ), ``wrong``
        (swapped + tied / 2: a predicted tie is a coin toss for the one choosing),
        ``measured_ratio`` (median measured time of a / b) and ``error_corr``, the correlation
        of the log errors ln(predicted / measured) on a and on b over those rankings: an error
        the two share (a projection from the same source profile) leaves their order as it
        is."""
        if by == "pair":
            return self._gpu_swaps()
        if by is not None:
            raise ValueError(f"gpu_choice(by={by!r}): by is None or 'pair'")
        cols = ["groups", "targets", "rank_corr", "top1_hit", "top1_loss_pct",
                "top1_loss_max_pct"]
        rows = {}
        fastest = self.pairs.groupby(CHOICE_KEYS, sort=False)["true_s"].min()
        for m, g in self.pairs.groupby("method", sort=False):
            r = rank_metrics(g, CHOICE_KEYS, top=1, fastest=fastest)
            if r["rank_corr"] is not None:
                rows[m] = {**r, "targets": _spread(g, CHOICE_KEYS)}
        truth = _rankable(self.pairs.drop_duplicates(CHOICE_KEYS + ["target"]), CHOICE_KEYS)
        if len(truth):
            by = [truth[k] for k in CHOICE_KEYS]
            loss = truth["true_s"] / truth.groupby(by, sort=False)["true_s"].transform("min") - 1
            per_group = loss.groupby(by, sort=False).mean()
            rows[RANDOM_PICK] = {
                "groups": len(per_group), "targets": _spread(truth, CHOICE_KEYS),
                "rank_corr": None,
                "top1_hit": float((loss <= 0).groupby(by, sort=False).mean().mean()),
                "top1_loss_pct": float(100 * per_group.median()),
                "top1_loss_max_pct": float(100 * per_group.max())}
        return (pd.DataFrame.from_dict(rows, orient="index", columns=cols)
                .astype({c: float for c in cols if c not in ("groups", "targets")})
                .rename_axis("method"))

    def _gpu_swaps(self) -> pd.DataFrame:
        """``gpu_choice(by='pair')``."""
        import itertools

        rows = {}
        for m, g in self.pairs.groupby("method", sort=False):
            g = _rankable(g, CHOICE_KEYS)
            if g.empty:
                continue
            wide = (g.set_index(CHOICE_KEYS + ["target"])
                    [["time_s", "true_s"]].unstack("target"))
            pred, true = wide["time_s"], wide["true_s"]
            for a, b in itertools.combinations(sorted(pred.columns), 2):
                both = (pred[a].notna() & pred[b].notna() & true[a].notna()
                        & true[b].notna()).to_numpy()
                if not both.any():
                    continue
                pa, pb, ta, tb = (x.to_numpy(float)[both]
                                  for x in (pred[a], pred[b], true[a], true[b]))
                ea, eb = np.log(pa / ta), np.log(pb / tb)
                shared = len(ea) > 1 and ea.std() > 0 and eb.std() > 0
                tie = np.isclose(pa, pb, rtol=TIE_RTOL, atol=0.0)
                swapped = float((~tie & (np.sign(pa - pb) * np.sign(ta - tb) < 0)).mean())
                tied = float((tie & (ta != tb)).mean())
                rows[(m, a, b)] = {
                    "groups": int(both.sum()), "swapped": swapped, "tied": tied,
                    "wrong": swapped + tied / 2,
                    "measured_ratio": float(np.median(ta / tb)),
                    "error_corr": float(np.corrcoef(ea, eb)[0, 1]) if shared else None}
        out = pd.DataFrame.from_dict(rows, orient="index",
                                     columns=["groups", "swapped", "tied", "wrong",
                                              "measured_ratio", "error_corr"])
        out.index = pd.MultiIndex.from_tuples(out.index, names=["method", "gpu_a", "gpu_b"])
        return out.sort_index()  # sorted, so that .loc[method] does not warn

    def _rank_groups(self) -> list:
        """The columns whose groups a ranking orders within: kernel, problem (where the pairs
        carry it: only the configurations of one problem are variants to rank; the problem
        sizes of a NeuSight or Rodinia table are not), source and target (and a split's
        fold)."""
        return (["kernel", *(["problem"] if "problem" in self.pairs else []), "source",
                 "target"] + (["fold"] if "fold" in self.pairs else []))

    def _ranked_pairs(self) -> pd.DataFrame:
        """``pairs``, their problems labelled (``problem_labels``) where they carry them."""
        if "problem" not in self.pairs:
            return self.pairs
        return self.pairs.assign(problem=problem_labels(self.pairs["problem"]))

    def to_json(self, ranking: bool = False, gpu_choice: bool = False,
                totals: bool = False) -> dict:
        """Metrics as plain data, with ``units`` (``UNITS``); a split adds ``per_fold()``,
        ``ranking`` adds ``ranking()``, ``gpu_choice`` ``gpu_choice()``, ``totals`` the
        metrics of ``totals()``."""
        out = {"methods": self.summary(), "per_pair": self.summary("pair"),
               "per_kernel": self.summary("kernel"),
               **({"per_fold": folds} if (folds := self.per_fold()) else {}),
               "skipped": count_causes(self.skipped), "units": UNITS}
        for key, wanted, frame in (("ranking", ranking, self.ranking),
                                   ("gpu_choice", gpu_choice, self.gpu_choice)):
            if wanted:
                out[key] = records(frame())
        if totals:
            out["totals"] = self.totals().summary()
        return out


def records(frame: pd.DataFrame) -> dict:
    """The rows of a metrics frame as plain data, {index: {column: value}}, with None where
    a value is missing (JSON has no NaN)."""
    r = frame.astype(object)
    return r.where(r.notna(), None).to_dict(orient="index")


def why_no_variants(rows: pd.DataFrame, keys, where: str, use: str) -> str | None:
    """Why no group of ``keys`` (method, kernel, problem, ...: ``rows`` has one row per
    configuration of a group) has MIN_CONFIGS configurations, None where one has. Where the
    groups of a kernel without its problem would have them, the configurations are problems
    of their own (the ``problem`` column: sizes, shapes, as a NeuSight or Rodinia table's), not
    tuning variants of one problem, which ``use`` needs ("a ranking orders"); ``where``: on
    what the configurations were measured or predicted."""
    def ranks(by):
        return len(rows) and rows.groupby(by, sort=False, observed=True).size().max() >= MIN_CONFIGS

    keys = list(keys)
    if ranks(keys):
        return None
    if "problem" in keys and ranks([k for k in keys if k != "problem"]):
        return (f"no kernel has {MIN_CONFIGS} or more configurations of one problem {where}: "
                "the configurations are problem sizes or shapes, each its own problem (the "
                f"profile's problem column), not tuning variants of one, which {use}")
    return f"no kernel has {MIN_CONFIGS} or more configurations {where}"


def _rankable(pairs: pd.DataFrame, keys) -> pd.DataFrame:
    """The rows of ``pairs`` in groups of ``keys`` with at least MIN_CONFIGS rows, the groups
    that make a ranking."""
    return pairs[pairs.groupby(keys, sort=False)["true_s"].transform("size") >= MIN_CONFIGS]


def _spread(pairs: pd.DataFrame, keys) -> str:
    """How many rows the groups of ``keys`` with at least MIN_CONFIGS rows have: "3", or
    "3-8" where they differ."""
    n = _rankable(pairs, keys).groupby(keys, sort=False)["true_s"].size()
    return "0" if n.empty else str(n.min()) if n.min() == n.max() else f"{n.min()}-{n.max()}"


def rank_metrics(pairs: pd.DataFrame, keys, top: int = TOP_K, fastest=None) -> dict:
    """Ranking quality of ``pairs`` (one method's rows; ``time_s`` predicted, ``true_s``
    measured), over the groups of ``keys`` (kernel, problem, source, target) that have at least
    MIN_CONFIGS configurations. ``fastest`` (a Series over the groups of ``keys``): the fastest
    measured time of each group among all the pairs evaluated, where this method may lack the
    row (a configuration it could not predict: its loss is still against that one).

    groups: how many; predictions: the rows ranked (one per configuration and group: over
    several source -> target pairs, many more than the configurations);
    rank_corr: Spearman's rank correlation of predicted and measured times,
    mean over groups (a group the prediction leaves all tied counts as 0: it orders nothing;
    None where it leaves every group tied, a method that cannot rank);
    top1_loss_pct: how much longer, measured on the target, the configuration
    predicted fastest takes than the fastest measured one, in % (median over groups;
    top1_loss_max_pct the worst group), top1_hit the fraction of groups where it is the fastest
    measured (or as fast); topk_loss_pct / topk_loss_max_pct the same for the best
    of the ``top`` configurations predicted fastest (an autotuner that runs those ``top`` on
    the target). Ties in the prediction are broken by the source's time (``source_time_s``,
    where given: a floor such as hierarchical-ext's ``roof_floor`` gives many configurations
    one time, and among those an autotuner takes the one that ran fastest where it measured).
    Rows tied on both (predicted times within TIE_RTOL; in ``gpu_choice`` every target of a
    ranking shares the source row, so any tie in the prediction) share the first place: each
    of n counts 1/n of the group's hit and loss, the expected result of a pick among them, as
    ``gpu_choice(by='pair')`` counts a predicted tie as half wrong. The top ``top``, where
    rows tied so straddle its last place, take them in row order.

    >>> p = pd.DataFrame({"kernel": "k", "time_s": [1.0, 2.0, 3.0], "true_s": [2.0, 1.0, 3.0]})
    >>> m = rank_metrics(p, ["kernel"], top=2)
    >>> m["groups"], m["rank_corr"], m["top1_loss_pct"], m["top1_hit"], m["topk_loss_pct"]
    (1, 0.5, 100.0, 0.0, 0.0)
    """
    d = _rankable(pairs, keys)[keys + ["time_s", "true_s"]
                               + (["source_time_s"] if "source_time_s" in pairs else [])]
    empty = {"groups": 0, "predictions": 0, "rank_corr": None, "top1_loss_pct": None,
             "top1_loss_max_pct": None, "top1_hit": None, "topk": top, "topk_loss_pct": None,
             "topk_loss_max_pct": None}
    if d.empty:
        return empty
    by = [d[k] for k in keys]
    g = d.groupby(by, sort=False)
    # Spearman = Pearson correlation of the ranks (ties take their mean rank)
    rp, rt = g["time_s"].rank(), g["true_s"].rank()
    rp = rp - rp.groupby(by, sort=False).transform("mean")
    rt = rt - rt.groupby(by, sort=False).transform("mean")
    cov = (rp * rt).groupby(by, sort=False).sum()
    var = (rp * rp).groupby(by, sort=False).sum() * (rt * rt).groupby(by, sort=False).sum()
    rho = cov / np.sqrt(var.where(var > 0))  # undefined where a ranking is all ties
    # a prediction of all ties orders nothing (0); measured ties leave rho undefined
    tied = (rp * rp).groupby(by, sort=False).sum() == 0
    measured = (rt * rt).groupby(by, sort=False).sum() > 0
    ranks = rho.where(~(tied & measured), 0.0)
    order = _order(d, by)
    best = g["true_s"].transform("min")
    if fastest is not None:
        known = d[keys].merge(fastest.rename("_best").reset_index(), on=keys, how="left")
        best = np.fmin(best, known["_best"].to_numpy())
    loss = d["true_s"] / best - 1
    # the rows tied for first place share it (weights 1/n summing to 1 per group): the hit and
    # the loss of a pick among them, whatever their order in the frame
    share = _first_place(d, by)
    top1 = (loss * share).groupby(by, sort=False).sum()
    hit = ((loss <= 0) * share).groupby(by, sort=False).sum()
    topk = loss[order <= top].groupby(by, sort=False).min()
    return {"groups": int(g.ngroups), "predictions": int(len(d)),
            "rank_corr": None if rho.isna().all() else float(ranks.mean()),
            "top1_loss_pct": float(100 * top1.median()),
            "top1_loss_max_pct": float(100 * top1.max()), "top1_hit": float(hit.mean()),
            "topk": int(top),
            "topk_loss_pct": float(100 * topk.median()),
            "topk_loss_max_pct": float(100 * topk.max())}


def _first_place(d: pd.DataFrame, by) -> pd.Series:
    """Per row of ``d``, its share of its group's first place: 1/n for each of the n rows
    predicted fastest (``time_s`` within TIE_RTOL of the group's least, as
    ``gpu_choice(by='pair')`` calls a tie) and, among those, of the least ``source_time_s``
    where ``d`` has it (``shortlist.by_prediction``'s tie-break); 0 for the others."""
    t = d["time_s"]
    first = t <= t.groupby(by, sort=False).transform("min") * (1 + TIE_RTOL)
    if "source_time_s" in d:  # a group of no source time (combined sets) ties on the time
        src = d["source_time_s"].where(first)
        least = src.groupby(by, sort=False).transform("min")
        first &= src.eq(least) | least.isna()
    first = first.astype(float)
    return first / first.groupby(by, sort=False).transform("sum")


def _order(d: pd.DataFrame, by) -> pd.Series:
    """1, 2, ... per group of ``by``: the rows of ``d`` in ``shortlist.by_prediction``'s
    order."""
    from .shortlist import by_prediction

    group = pd.MultiIndex.from_arrays(by).factorize()[0] if len(by) > 1 else \
        pd.factorize(by[0])[0]
    at = np.lexsort((*by_prediction(d), group))
    order = np.empty(len(d))
    counts = np.bincount(group)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    order[at] = np.arange(len(d)) - np.repeat(starts, counts) + 1
    return pd.Series(order, index=d.index)


def shortlist_metrics(pairs: pd.DataFrame, methods, keys, top: int = TOP_K) -> dict:
    """Over the groups of ``keys`` with at least MIN_CONFIGS configurations: how much longer,
    measured on the target (``true_s``), the best of the ``top`` configurations that
    ``gpuproj.shortlist.shortlist`` takes in turn from ``methods``' orders takes than the
    fastest, in % (``loss_pct`` the median over groups, ``loss_max_pct`` the worst).

    >>> p = pd.DataFrame({"kernel": "k", "config": list("abcabc"),
    ...                   "method": ["same"] * 3 + ["gb"] * 3, "true_s": [2.0, 1.0, 3.0] * 2,
    ...                   "time_s": [1.0, 2.0, 3.0, 3.0, 3.0, 1.0]})
    >>> m = shortlist_metrics(p, ["same", "gb"], ["kernel"], top=2)
    >>> m["groups"], m["loss_pct"]
    (1, 100.0)
    """
    from .shortlist import shortlist

    keys = list(keys)
    d = pairs[pairs["method"].isin(list(methods))]
    best = _rankable(d.drop_duplicates(keys + ["config"]), keys).groupby(
        keys, sort=False)["true_s"].min()
    # the fastest measured among all the pairs, where the methods shortlisted lack its row
    best = np.fmin(best, pairs.groupby(keys, sort=False)["true_s"].min().reindex(best.index))
    empty = {"groups": 0, "topk": top, "loss_pct": None, "loss_max_pct": None}
    if best.empty:
        return empty
    got = shortlist(d, methods, top, keys).groupby(keys, sort=False)["true_s"].min()
    loss = 100 * (got.reindex(best.index) / best - 1)
    return {"groups": int(len(best)), "topk": int(top), "loss_pct": float(loss.median()),
            "loss_max_pct": float(loss.max())}


def applicable_methods(table: ProfileTable, names=None) -> list[str]:
    """Methods whose required columns at least some rows of ``table`` carry."""
    return [name for name, why in method_gaps(table, names).items() if not why]


def method_gaps(table: ProfileTable, names=None) -> dict[str, str]:
    """Each analytical method of ``names`` (default: all) -> why no row of ``table`` suits it,
    e.g. "roofline needs flops or dram_bytes"; "" where some row does."""
    from .models import MODELS, model_class

    out = {}
    for name in names or MODELS:
        cls = model_class(name)
        if getattr(cls, "trained", False):
            continue
        ok, reason = cls.__new__(cls).usable(table.df)
        out[name] = "" if ok.any() else (reason[0] if len(reason) else f"{name}: no rows")
    return out


def truth_index(table: ProfileTable) -> pd.Series:
    """Measured time per (kernel, config, gpu)."""
    return table.df.set_index(["kernel", "config", "gpu"])["time_s"]


def _stack_pairs(frames) -> pd.DataFrame:
    """``pd.concat(frames, ignore_index=True)``, its label columns str. A prediction holds its
    labels as categoricals of its own categories, which ``pd.concat`` would turn into strings
    row by row; joining their codes and taking each string from the joint categories is cheap."""
    from pandas.api.types import union_categoricals

    out = {}
    for c in frames[0].columns:
        parts = [f[c] for f in frames]
        if all(isinstance(p.dtype, pd.CategoricalDtype) for p in parts):
            joint = union_categoricals([pd.Categorical.from_codes(
                p.cat.codes, p.cat.categories.astype(str)) for p in parts])
            out[c] = joint.categories.take(joint.codes, fill_value=np.nan)  # code -1: missing
        else:
            out[c] = pd.concat(parts, ignore_index=True)
    return pd.DataFrame(out)


class TrainedOnWarning(GpuprojWarning):
    """A fitted learned model scored on the table it was trained on (``splits`` evaluates
    its folds without it: they report what test and training rows share, ``splits.overlap``)."""


def _warn_if_trained_on(table: ProfileTable, models) -> None:
    """Warn where a fitted learned model is scored on the very table it was trained on: its
    errors are then training errors, far below what it does on a GPU it has not seen."""
    trained = [m for m in models if getattr(m, "train_info_", None)]
    if not trained:
        return
    import warnings

    from .learned.pairs import table_hash

    h = table_hash(table)
    for m in trained:
        if m.train_info_.get("hash") == h:
            warnings.warn(f"{m.name} was trained on this table: its errors are training errors; "
                          "score it on held-out GPUs with gpuproj.splits.evaluate_split, or on "
                          "another table with gpuproj.splits.evaluate_trained",
                          TrainedOnWarning, stacklevel=3)


def evaluate(table: ProfileTable, methods=None, sources=None, targets=None, *,
             model_params: dict | None = None, progress=None) -> Evaluation:
    """Predict every (source, target) pair of ``table`` with each of ``methods`` (names or model
    instances) and compare with the measurements.

    ``sources``/``targets`` restrict the GPUs (names resolved by the catalog; each must have
    rows in the table). Each of the three may be one name instead of a list, or names
    separated by commas as on the command line (``methods="bandwidth,roofline"``;
    ``gpuproj.names``); ``methods`` may be "all" (every method the table's columns allow, the
    default). Each source's rows are predicted for all targets in one vectorised call per
    method. A table where no kernel configuration was measured on two of the GPUs selected is
    an ``InputError``; pairs no method could predict leave an empty evaluation, their reasons
    in ``skipped``.
    """
    from .models import get_model, method_list

    require_table(table)
    table.require_unique_configs()
    gpus = table.gpus
    # a GPU named twice (or by two of its names) is one GPU: each pair once
    srcs = [g.id for g in gpu_list(sources)] if sources else gpus
    tgts = [g.id for g in gpu_list(targets)] if targets else gpus
    absent = [g for g in (*srcs, *tgts) if g not in gpus]
    if absent:
        raise InputError(f"no rows measured on {', '.join(dict.fromkeys(absent))}: the table has "
                         f"{', '.join(gpus) or 'no rows'}", path=table.origin or None)
    names = method_list(methods or [])
    if names in ([], ["all"]):
        names = applicable_methods(table)
    models = [m if not isinstance(m, str) else get_model(m, **(model_params or {}).get(m, {}))
              for m in names]
    _warn_if_trained_on(table, models)
    truth = truth_index(table)
    problems = problems_of(table.df)
    if problems is not None:  # a configuration's problem, where any GPU's row names it
        table = ProfileTable(table.df.assign(problem=problem_per_row(table.df, problems)),
                             table.skipped, table.origin, table.launches_assumed)
    source_targets, source_rows, truth_at = {}, {}, {}
    for s in srcs:
        ts = [t for t in tgts if t != s and t in gpus]
        if s not in gpus or not ts:  # a GPU of the table has rows
            continue
        rows = table.on(s)
        # where each (target, row) is measured in ``truth`` (-1: not measured), looked up once
        # for every method: a join per method on the string labels took a third of the time
        n = len(rows.df)
        at = truth.index.get_indexer(pd.MultiIndex.from_arrays(
            [np.tile(rows.df["kernel"].to_numpy(object), len(ts)),
             np.tile(rows.df["config"].to_numpy(object), len(ts)), np.repeat(ts, n)]))
        at = at.reshape(len(ts), n)
        measured = (at >= 0).any(axis=0)  # only rows that exist on some target are worth predicting
        source_targets[s] = ts
        source_rows[s] = ProfileTable(rows.df[measured].reset_index(drop=True), (), rows.origin)
        truth_at[s] = at[:, measured]
    true_s = truth.to_numpy(float)
    if not source_rows:
        raise NothingToEvaluate(f"nothing to evaluate: no kernel configuration was measured on "
                                f"two of the GPUs selected (the table has "
                                f"{', '.join(gpus) or 'no rows'})", path=table.origin or None)
    frames, skipped = [], list(table.skipped)
    jobs = [(m, s) for m in models for s in srcs if s in source_rows]
    it = progress(jobs) if progress else jobs
    for model, s in it:
        pred = model.predict(source_rows[s], s, source_targets[s])
        # a projection left out to a target that did not measure the row loses no pair (looked
        # up at once: a whole table may be left out on a pair)
        lost = [k for k in pred.skipped if k.projection]
        measured = (truth.index.get_indexer(pd.MultiIndex.from_tuples(
            [k.projection for k in lost], names=truth.index.names)) >= 0) if lost else []
        skipped.extend([k for k in pred.skipped if not k.projection]
                       + [k for k, m in zip(lost, measured) if m])
        d = pred.df
        target = d["target"].array  # a categorical (Model.predict), its categories the targets
        at = truth_at[s][pd.Index(source_targets[s]).get_indexer(target.categories)[target.codes],
                         d["row"].to_numpy()]
        # rankings group by the problem (_rank_groups); a table built without the column has
        # none
        problem = source_rows[s].df.get("problem")
        p = d.loc[at >= 0, _PAIR_COLUMNS].assign(
            problem=None if problem is None
            else problem.to_numpy(object)[d.loc[at >= 0, "row"]])
        frames.append(p.assign(true_s=true_s[at[at >= 0]]))
    return Evaluation(_stack_pairs(frames), skipped) if frames else Evaluation.empty(skipped)


__all__ = ["metrics", "rank_metrics", "shortlist_metrics", "evaluate", "Evaluation", "Skipped",
           "applicable_methods", "method_gaps"]
