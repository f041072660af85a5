"""Learned cross-GPU predictors behind the shared model contract (``models.base.Model``).

``fit(table)`` builds every ordered pair (s, t) of GPUs that measured the same kernel
configuration in ``table`` (``pairs.make_pairs``), their features (``features``), and trains a
learner; ``predict(profiles, source, targets)`` works like the analytical methods'.

Families:

- ``PureLearner`` (``rf``, ``gb``, ``svr``, ``knn``, ``linear``, ``ridge``, ``lasso``): the
  report's set-up (Srivastava et al., Sec. "Machine Learning Model"): kernel features, GPU
  features of source and target, the source's measured time; the learner predicts the target
  time (here ln t by default; ``target="ms"`` reproduces the report's raw milliseconds).
- ``ResidualHybrid`` (``residual``): the learner predicts ln(t_true / t_phys), the log-ratio
  between the measured target time and the best analytical projection (chosen on the training
  pairs), so that physics carries the extrapolation and the learner the architecture-specific
  correction (Habitat's idea of learning on top of a physical scaling).
- ``EfficiencyHybrid`` (``bounded-efficiency``): the learner predicts the fraction e of the
  target's roofline that the kernel reaches (NeuSight-style): t = t_roof,t / e, with t_roof,t
  the largest level time (compute, DRAM, L2, L1, shared at datasheet peaks) and e = sigmoid(f)
  in (0, 1].
- ``Ensemble`` (``ensemble``): a weighted geometric mean of the physics projection, the two
  hybrids and a pure learner (gb), with weights 1 / err^4 per kernel class, err =
  mean |ln ratio| of each member's out-of-fold predictions on held-out GPUs.
- ``Conformal``: any analytical method with split-conformal intervals.

Every learned model takes ``coverage`` (e.g. 0.9): out-of-fold predictions on held-out groups
of the training data (GPUs by default, ``cv_groups``) calibrate a split-conformal interval
(``conformal.LogConformal``); ``cv_metrics_`` keeps their error.
"""

from __future__ import annotations

import copy
import inspect

import numpy as np
import pandas as pd

from ..errors import GpuprojError
from ..models.bands import OFFSET, band_of, cell, load_bands
from ..models.base import Model, NotFittedError, Projection
from ..profiles.table import ProfileTable
from .conformal import LogConformal
from .features import (
    FeatureSpec,
    PairFeatures,
    categorical_columns,
    extra_columns,
    geomean_members,
    geomean_name,
    uninformative,
)
from .learners import make_learner
from .pairs import make_pairs, subsample, table_hash

# analytical methods a hybrid may stand on, tried in this order when tied. ``same`` is not
# among them: it scales nothing, so a learner on top of it has no physics to extrapolate with
# (on the Rodinia tables it ranks first among Kepler/Maxwell GPUs and fails on the P100); it
# stays the last resort where no method can predict a pair.
PHYSICS = ("hierarchical-ext", "hierarchical", "quantitative", "quantitative-transfer",
           "efficiency", "roofline", "bandwidth", "compute")
MAX_LOG_CORRECTION = np.log(50.0)  # a learned correction beyond x50 is an extrapolation artefact


def _envelope(bands, cells) -> dict:
    """{cell: [lowest lo, highest hi]} over the ``bands`` ({cell: {lo, hi}}) that have it."""
    return {c: [min(float(b[c]["lo"]) for b in bands if c in b),
                max(float(b[c]["hi"]) for b in bands if c in b)] for c in cells}


def _lerr(pred, true):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.abs(np.log(np.asarray(pred, float) / np.asarray(true, float)))


def _metrics(pred, true) -> dict:
    from ..evaluate import metrics

    ok = np.isfinite(pred) & (pred > 0)
    m = metrics(np.asarray(pred)[ok], np.asarray(true)[ok])
    m["n_missing"] = int((~ok).sum())
    return m


_CACHE: dict = {}


def training_data(table: ProfileTable, max_pairs, seed, spec: FeatureSpec) -> PairFeatures:
    """The (sub-sampled) training pairs of ``table`` with their feature cache. The two most
    recent are kept, so that several models trained on the same table in a row (an evaluation
    fold, an ensemble) compute features and analytical projections once."""
    key = (table_hash(table), len(table.df), max_pairs, seed, tuple(spec.extras),
           tuple((k, tuple(v)) for k, v in spec.categories.items()))
    if key in _CACHE:
        data = _CACHE[key]
        return data.shared(spec)
    pairs = make_pairs(table)
    pairs = pairs.iloc[subsample(len(pairs), max_pairs, seed)]
    data = PairFeatures(pairs, spec)
    _CACHE[key] = data
    while len(_CACHE) > 2:
        _CACHE.pop(next(iter(_CACHE)))
    return data


def precompute(data: PairFeatures) -> None:
    """Compute the analytical projections and roofline times on the whole training set once,
    before cross-validation slices it."""
    for m in PHYSICS:
        try:
            data.physics(m)
        except GpuprojError:
            pass
    _ = data.roof


# GPU descriptors whose training range bounds where a learned correction is trusted, with the
# smallest range used to measure how far outside a new GPU lies (log10 units for rates)
GUARD = {"t_peak_fp32_fma_flops_per_s": 0.1, "t_peak_dram_bw_bytes_per_s": 0.1,
         "t_compute_capability": 0.5, "r_peak_fp32_fma_flops_per_s": 0.1,
         "r_peak_dram_bw_bytes_per_s": 0.1, "r_val_sm_count": 0.1}


def guard_fit(data: PairFeatures) -> dict:
    """Training range of the ``GUARD`` descriptors."""
    out = {}
    for k, floor in GUARD.items():
        v = data.column(k)
        v = v[np.isfinite(v)]
        if len(v):
            out[k] = [float(v.min()), float(v.max()), float(max(v.max() - v.min(), floor))]
    return out


def guard_weight(data: PairFeatures, guard: dict | None) -> np.ndarray:
    """Trust in a learned correction per pair: 1 inside the training range of every GUARD
    descriptor, falling linearly to 0 at one training range (at least its floor) outside,
    so that for GPUs unlike any seen in training the physics carries the prediction."""
    n = len(data)
    if not guard:
        return np.ones(n)
    d = np.zeros(n)
    for k, (lo, hi, scale) in guard.items():
        v = data.column(k)
        ex = np.where(np.isfinite(v), np.maximum(np.maximum(v - hi, lo - v), 0.0), 0.0) / scale
        d = np.maximum(d, ex)
    return np.clip(1.0 - d, 0.0, 1.0)


def _blend(base, t, g):
    """base^(1 - g) x t^g: the learned prediction where trusted, the physics where not."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.exp((1 - g) * np.log(base) + g * np.log(t))
    return np.where(np.isfinite(out) & (out > 0), out, base)


class LearnedModel(Model):
    """Shared machinery: pairs, features, out-of-fold calibration, prediction."""

    trained = True
    requires = ("time_s",)
    learner_kind = "gb"
    default_gpu_features = True

    def __init__(self, learner: str | None = None, learner_params: dict | None = None,
                 coverage: float | None = None, max_pairs: int | None = 60000,
                 gpu_features: bool | None = None, cv_folds: int = 8, cv_groups: str = "gpu",
                 random_state: int = 0, point_calibration: bool | None = None,
                 physics_bands: dict | None = None):
        self.learner = learner or self.learner_kind
        self.learner_params = dict(learner_params or {})
        self.coverage = coverage
        self.max_pairs = max_pairs
        # None: the family's default (absolute GPU features for pure learners only)
        self.gpu_features = self.default_gpu_features if gpu_features is None else gpu_features
        self.cv_folds = cv_folds
        self.cv_groups = cv_groups
        self.random_state = random_state
        # None: the family's default (on for hybrids and the ensemble)
        self.point_calibration = point_calibration
        # error bands ({method: {cell: {lo, hi}}}, the layout of models/error_bands.json) the
        # interval leans on outside the training GPUs' range; None: the shipped bands
        self.physics_bands = physics_bands

    def get_params(self) -> dict:
        sig = inspect.signature(type(self).__init__)
        return {k: getattr(self, k) for k in sig.parameters if k != "self"}

    def clone(self, **changes) -> LearnedModel:
        p = self.get_params()
        p.update(changes)
        out = type(self)(**p)
        if "name" in vars(self):  # a renamed instance keeps its name
            out.name = self.name
        return out

    # hooks a family implements ---------------------------------------------------------
    def _physics_names(self) -> list:
        return []

    def _guard_chain(self) -> list:
        """The analytical chain the model gives way to outside its training GPUs' range ([]:
        none)."""
        return []

    def _prepare(self, data: PairFeatures) -> None:
        """Decisions taken on the training pairs before learning (e.g. the physics base)."""

    def _target(self, data: PairFeatures) -> np.ndarray:
        raise NotImplementedError

    def _time(self, data: PairFeatures, f: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _learner_params(self) -> dict:
        p = dict(self.learner_params)
        if self.learner in ("rf", "gb", "svr"):
            p.setdefault("random_state", self.random_state)
        return p

    # training ---------------------------------------------------------------------------
    def _spec(self, table: ProfileTable) -> FeatureSpec:
        return FeatureSpec(extras=extra_columns(table.df), categories=categorical_columns(table.df),
                           gpu=self.gpu_features, pair=True, physics=self._physics_names())

    def _fit_data(self, data: PairFeatures) -> None:
        self._prepare(data)
        self.spec_ = copy.deepcopy(data.spec)
        self.spec_.physics = self._physics_names()
        self.learner_ = None
        if not self._needs_learner():
            self.features_ = []
            return
        names = self.spec_.all_names
        X = data.matrix(names)
        y = self._target(data)
        ok = np.isfinite(y)
        self.spec_.drop = uninformative(X[ok], names)
        keep = [j for j, c in enumerate(names) if c not in set(self.spec_.drop)]
        self.features_ = [names[j] for j in keep]
        if ok.sum() >= 2:
            self.learner_ = make_learner(self.learner, **self._learner_params())
            self.learner_.fit(X[ok][:, keep], y[ok])

    def _needs_learner(self) -> bool:
        return True

    def _predict_data(self, data: PairFeatures) -> np.ndarray:
        if self.learner_ is None and self._needs_learner():
            f = np.zeros(len(data))
        elif self.learner_ is None:
            f = None
        else:
            f = self.learner_.predict(data.matrix(self.features_))
        return self._time(data, f)

    def fit(self, table: ProfileTable) -> LearnedModel:
        """Learn from every ordered GPU pair of ``table`` (at most ``max_pairs``, drawn with
        ``random_state``)."""
        data = training_data(table, self.max_pairs, self.random_state, self._spec(table))
        if len(data) == 0:
            raise GpuprojError(f"{self.name}: no kernel configuration of the training table "
                               "was measured on two GPUs")
        pairs = data.pairs
        self._fit_data(data)
        true = data.pairs["true_s"].to_numpy(float)
        self.train_info_ = {"hash": table_hash(table), "gpus": table.gpus,
                            "kernels": int(table.df["kernel"].nunique()),
                            "rows": len(table.df), "pairs": len(pairs)}
        self.post_ = None
        self.cv_metrics_ = None
        self.conformal_ = None
        calibrate = (self.point_calibration if self.point_calibration is not None
                     else self.calibrate_by_default)
        if self.coverage or calibrate:
            oof, oof_base = self.out_of_fold(data)
            if calibrate:
                self.post_ = point_calibration(oof, oof_base, true, self._fold_of(data))
                oof = self._post(oof, oof_base)
            self.cv_metrics_ = _metrics(oof, true)
            if self.coverage:
                # on every held-out training GPU, inside its fold's range or not: calibrated
                # only on those inside (the pairs the interval serves at full weight), the
                # KernelTuner over-coverage stayed and NeuSight fell to 72-78 % (conv) and
                # 86 % (bmm), its T4 fold 33-63 %: a GPU inside the range still brings a shift
                self.conformal_ = LogConformal(self.coverage, offset=OFFSET).fit(
                    oof, true, data.pairs["time_s"].to_numpy(float))
        self.outside_bands_ = self._outside_bands() if self.conformal_ is not None else {}
        self.train_metrics_ = _metrics(self._final(data), true)
        return self

    def _outside_bands(self) -> dict:
        """{method: {cell: [lo, hi]}}: the error-band quantiles of the guard chain's methods,
        kept with the model so that its intervals do not change with the shipped bands."""
        table = self.physics_bands if self.physics_bands is not None else load_bands()["methods"]
        out = {}
        for m in self._guard_chain():
            parts = geomean_members(m)
            if m in table:
                out[m] = _envelope([table[m]], set(table[m]))
            elif parts and all(p in table for p in parts):
                # a geometric mean of projections errs, pair by pair, by the mean of the
                # members' log errors, so within their range: the envelope of their bands
                out[m] = _envelope([table[p] for p in parts],
                                   set.intersection(*(set(table[p]) for p in parts)))
            elif table:
                # no band measured for this method (quantitative-transfer runs on one data
                # source): how it errs on a GPU unlike the training ones is unknown, so the
                # envelope of every method's band. Without it the intervals stayed conformal
                # there: calculate_temp's P100 fold was covered 62-74 % (100 % with it)
                out[m] = _envelope(list(table.values()), set().union(*table.values()))
        return out

    def _widen_outside(self, data, t, src, low, high, cell_name):
        """Interval of pairs outside the training GPUs' range. There the prediction gives way
        to the physics chain (guard weight g < 1), and the held-out training GPUs that
        calibrated the conformal interval did not show how that chain errs on a GPU unlike
        them; its error band, measured on the public tables, did. Each bound widens (never
        narrows) towards that of the band, around the chain's projection, of the chain method
        that predicted the pair, in proportion 1 - g of the log-bounds (the ensemble, whose
        pure-learner members are not guarded, may predict far from that projection: the
        interval then spans both). Measured on leave-one-GPU-out in
        docs/results/learned_conformal_rules.md. A conformal interval of its own instead,
        calibrated on the held-out training GPUs that lay outside the other training GPUs'
        range, was measured on the same folds and under-covered: the GPU a table leaves out lies
        further out than those (KernelTuner GEMM 97.9 -> 81.0 %, the RTX 3090 fold 39 %;
        bpnn_adjust_weights 91.0 -> 84.6 %, the P100 fold 4 %). So did the band of how the
        chain erred between the training GPUs, for the same reason, while it ended the
        KernelTuner convolution over-coverage (95.7 -> 90.9 %): KernelTuner GEMM 98.3 -> 81.5 %,
        the RTX 3090 fold 43 %; the bpnn_adjust_weights P100 fold 65 -> 24 %. Leaning to the
        band alone, without the union with the conformal bounds (only the prediction kept
        inside), changed nothing where the intervals over-cover (KernelTuner, NeuSight conv:
        the band is the wider bound there; NeuSight bmm -0.2 points) and took the seed report
        from 88.5-89.5 to 82.0-83.9 %, where the conformal bound is the wider."""
        bands = getattr(self, "outside_bands_", None)
        g = guard_weight(data, getattr(self, "guard_", None))
        if not bands or (g >= 1).all():
            return low, high
        chain = self._guard_chain()
        base, which = physics_chain(data, chain)
        # quantiles per chain method, and NaN (no band) last for pairs no method predicted
        q = np.array([bands.get(m, {}).get(cell_name, [np.nan, np.nan]) for m in chain]
                     + [[np.nan, np.nan]], float)[which]
        b_low, b_high = band_of(base, src, q[:, 0], q[:, 1])
        use = np.isfinite(b_low) & np.isfinite(b_high) & (g < 1)

        def lean(conf, band):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                # g = 0 drops the conformal bound even where it is infinite
                c = np.where(g > 0, g * np.log(conf / t), 0.0)
                return np.where(use, t * np.exp(c + (1 - g) * np.log(band / t)), conf)

        return np.fmin(low, lean(low, b_low)), np.fmax(high, lean(high, b_high))

    calibrate_by_default = False

    def _base(self, data: PairFeatures):
        """The physics projection a hybrid corrects (None for the others)."""
        return

    def _post(self, t, base):
        """Apply the point calibration: t' = base^(1 - lam) t^lam exp(delta)."""
        p = getattr(self, "post_", None)
        if not p:
            return t
        lam, delta = p["lam"], p["delta"]
        if base is not None and lam != 1.0:
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.exp((1 - lam) * np.log(base) + lam * np.log(t))
        return t * np.exp(delta)

    def _final(self, data: PairFeatures) -> np.ndarray:
        t = self._predict_data(data)
        if getattr(self, "post_", None):
            t = self._post(t, self._base(data))
        return t

    def out_of_fold(self, data: PairFeatures):
        """Prediction of each training pair by a copy of this model trained without the pair's
        group (``cv_groups``: the target GPU, leaving that GPU out entirely; or the kernel, or
        the configuration), and that copy's physics base (hybrids); NaN for pairs in no
        held-out group."""
        out = np.full(len(data), np.nan)
        base = np.full(len(data), np.nan)
        precompute(data)
        for tr, va in cv_masks(data.pairs, self.cv_groups, self.cv_folds, self.random_state):
            m = self.clone(coverage=None, point_calibration=False)
            m._fit_data(data.subset(np.flatnonzero(tr)))
            sub = data.subset(np.flatnonzero(va))
            out[va] = m._predict_data(sub)
            b = m._base(sub)
            if b is not None:
                base[va] = b
        return out, (base if np.isfinite(base).any() else None)

    def _fold_of(self, data: PairFeatures) -> np.ndarray:
        """Index of the out-of-fold split that validates each pair (-1: none)."""
        fold = np.full(len(data), -1)
        for i, (_, va) in enumerate(cv_masks(data.pairs, self.cv_groups, self.cv_folds,
                                             self.random_state)):
            fold[va] = i
        return fold

    # prediction -------------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "features_"):
            raise NotFittedError(f"{self.name} must be trained first (fit(table), or "
                                 "`gpuproj evaluate --train TABLE` / `--split`)")

    def predict_pairs(self, pairs: pd.DataFrame, gpus=()) -> np.ndarray:
        """Predicted target time (s) of each row of a pair frame (``make_pairs`` layout);
        ``gpus``: GPU objects for ids outside the catalog."""
        self._check_fitted()
        return self._final(PairFeatures(pairs, self.spec_, gpus))

    def _project(self, df, source, target):
        self._check_fitted()
        pairs = df.assign(source=source.id, target=target.id, src_row=np.arange(len(df)))
        data = PairFeatures(pairs, self.spec_, (source, target))
        t = self._final(data)
        low = high = None
        if self.conformal_ is not None:
            src = df["time_s"].to_numpy(float)
            low, high = self.conformal_.interval(t, src)
            low, high = self._widen_outside(data, t, src, low, high, cell(source, target))
        notes = [f"{self.name}: {self.describe()}; trained on {len(self.train_info_['gpus'])} "
                 f"GPUs, {self.train_info_['pairs']} pairs (data sha256 "
                 f"{self.train_info_['hash'][:12]})"]
        if target.id not in self.train_info_["gpus"]:
            notes.append(f"{target.id} was not in the training data: the prediction extrapolates")
        if self.conformal_ is not None:
            notes.append(f"interval: split-conformal, {100 * self.coverage:.0f} % requested, "
                         f"calibrated on {self.conformal_.n_} held-out pairs")
        return Projection(t, low, high, np.full(len(df), "learned", object), {}, notes)

    def describe(self) -> str:
        return f"{self.learner} learner"


# pure learners (the report's set-up) --------------------------------------------------------
class PureLearner(LearnedModel):
    """Learner on kernel, GPU and source-time features predicting the target time directly.

    ``target``: ``"log"`` (ln seconds; default) or ``"ms"`` (raw milliseconds, as the report's
    scripts do; negative outputs are clipped to 1 ns)."""

    def __init__(self, learner: str | None = None, learner_params: dict | None = None,
                 coverage: float | None = None, max_pairs: int | None = 60000,
                 gpu_features: bool | None = None, cv_folds: int = 8, cv_groups: str = "gpu",
                 random_state: int = 0, point_calibration: bool | None = None,
                 target: str = "log", pair_features: bool = True):
        super().__init__(learner, learner_params, coverage, max_pairs, gpu_features, cv_folds,
                         cv_groups, random_state, point_calibration)
        if target not in ("log", "ms"):
            raise GpuprojError(f"target must be 'log' or 'ms' (got {target!r})")
        self.target = target
        self.pair_features = pair_features

    def _spec(self, table):
        s = super()._spec(table)
        s.pair = self.pair_features
        return s

    def _target(self, data):
        y = data.pairs["true_s"].to_numpy(float)
        return np.log(y) if self.target == "log" else y * 1e3

    def _time(self, data, f):
        if self.target == "log":
            return np.exp(np.clip(f, -60, 20))
        return np.maximum(f / 1e3, 1e-9)

    def describe(self):
        return f"{self.learner} on {'ln time' if self.target == 'log' else 'time in ms'}"


def _pure(kind, cls_name, doc):
    cls = type(cls_name, (PureLearner,), {"name": kind, "learner_kind": kind, "summary": doc,
                                          "__doc__": doc, "__module__": __name__})
    return cls


RandomForest = _pure("rf", "RandomForest",
                     "Random Forest on kernel + GPU features (Srivastava et al. Table 6)")
GradientBoosting = _pure("gb", "GradientBoosting",
                         "gradient boosting (HistGradientBoosting) on kernel + GPU features")
SupportVector = _pure("svr", "SupportVector", "SVR with RBF kernel on kernel + GPU features")
NearestNeighbours = _pure("knn", "NearestNeighbours",
                          "k nearest neighbours on kernel + GPU features")
LinearModel = _pure("linear", "LinearModel", "linear regression on kernel + GPU features")
RidgeModel = _pure("ridge", "RidgeModel", "ridge regression on kernel + GPU features")
LassoModel = _pure("lasso", "LassoModel", "lasso regression on kernel + GPU features")


# physics ------------------------------------------------------------------------------------
def _physics_scores(data: PairFeatures, candidates, min_coverage: float, mask=None) -> list:
    """(covers under ``min_coverage`` of the pairs, mean |ln ratio| over the pairs it predicts,
    candidate index, method) of each candidate that predicts any pair of ``data`` (of those
    in ``mask``), best first."""
    true = data.pairs["true_s"].to_numpy(float)
    mask = np.ones(len(true), bool) if mask is None else mask
    scored = []
    for i, m in enumerate(candidates):
        try:
            p = data.physics(m)[mask]
        except GpuprojError:
            continue
        ok = np.isfinite(p)
        if ok.any():
            err = float(np.mean(_lerr(p[ok], true[mask][ok])))
            scored.append((ok.mean() < min_coverage, err, i, m))
    return sorted(scored)


def _top_two(scored) -> list:
    """The two best methods of ``_physics_scores`` (fewer where fewer cover enough)."""
    return [m for low, _, _, m in scored if not low][:2]


def _averaging_validates(data, candidates, min_coverage, groups) -> bool:
    """Whether the geometric mean of the best two methods, both chosen without a held-out group
    (``cv_masks``), errs less on that group than the best one alone, over all held-out groups
    (on the pairs the mean predicts)."""
    true = data.pairs["true_s"].to_numpy(float)
    err_one, err_mean = [], []
    for tr, va in cv_masks(data.pairs, groups, 8, 0):
        top = _top_two(_physics_scores(data, candidates, min_coverage, tr))
        if len(top) < 2:
            continue
        one, mean = data.physics(top[0])[va], data.physics(geomean_name(top))[va]
        ok = np.isfinite(mean)
        err_one.append(_lerr(one[ok], true[va][ok]))
        err_mean.append(_lerr(mean[ok], true[va][ok]))
    if not err_one:
        return False
    return float(np.mean(np.concatenate(err_mean))) < float(np.mean(np.concatenate(err_one)))


def rank_physics(data: PairFeatures, candidates=PHYSICS, min_coverage: float = 0.5,
                 groups: str = "gpu") -> list:
    """Analytical methods ordered by their error on the pairs of ``data`` (mean |ln ratio| over
    the pairs each can predict; those covering under ``min_coverage`` of the pairs last).

    The geometric mean of the best two heads the list where choosing it validates better than
    choosing the best alone, with each ``groups`` (GPUs by default) held out in turn. Where
    two methods are about equally good, the training GPUs cannot tell which will be better
    on a new GPU: on KernelTuner GEMM (``hierarchical-ext`` against the bandwidth ratio) the
    one with the lower training error was the worse one on each of the four held-out GPUs,
    and their mean, whose errors partly cancel, was better than either (docs/results/
    learned.md). The choice is validated, not taken on training error: there the best method
    is the best by construction."""
    scored = _physics_scores(data, candidates, min_coverage)
    ranked = [m for *_, m in scored]
    top = _top_two(scored)
    if len(top) == 2 and _averaging_validates(data, candidates, min_coverage, groups):
        ranked.insert(0, geomean_name(top))
    return ranked


def physics_chain(data: PairFeatures, chain) -> tuple[np.ndarray, np.ndarray]:
    """Projection of each pair by the first method of ``chain`` that can predict it, and the
    index of that method (-1: none; the source time is used)."""
    n = len(data)
    out = np.full(n, np.nan)
    which = np.full(n, -1)
    for i, m in enumerate(chain):
        p = data.physics(m)
        fill = ~np.isfinite(out) & np.isfinite(p)
        out[fill] = p[fill]
        which[fill] = i
    t_s = data.pairs["time_s"].to_numpy(float)
    out = np.where(np.isfinite(out), out, t_s)
    return out, which


class _PhysicsBased(LearnedModel):
    """Hybrids: pick the best analytical chain on the training pairs.

    The learner sees the GPUs through target/source ratios only (``gpu_features=False``).
    Absolute GPU features as well, measured on leave-one-GPU-out (scripts/learned_experiments.py
    settings): bounded-efficiency gains on the Rodinia tables, nine similar GPUs (MAPE
    bpnn_layerforward 7.3 -> 6.9 %, adjust_weights 38.6 -> 34.3 %, calculate_temp 16.4 -> 14.5
    %) and loses where the GPUs differ more (NeuSight conv 19.3 -> 19.5 %, bmm 23.4 -> 24.7 %,
    the seed report 132.7 -> 140.1 %); residual is mixed on Rodinia (7.0 -> 7.2, 40.2 -> 37.7,
    14.9 -> 16.1 %) and on the seed report (127.3 -> 124.1 %) and loses on NeuSight (18.4 ->
    19.4 %, 24.3 -> 25.4 %); KernelTuner is unchanged (its correction is dropped): with them
    the learner tells the training GPUs apart instead of learning how a ratio shifts the time.
    Choosing between the two per fit by the out-of-fold MAPE on held-out training GPUs kept
    most of both the gains and the losses (bounded-efficiency: Rodinia 7.2 / 35.0 / 15.0 %,
    the seed report 140.5 %, NeuSight bmm 24.5 %; residual: calculate_temp 14.9 -> 16.0 %,
    bmm 24.3 -> 25.2 %), and so did both absolute-feature hybrids as extra ensemble members
    (adjust_weights 49.0 -> 45.2 %, the seed report 107.4 -> 111.9 %, KernelTuner GEMM 22.0 ->
    23.5 %, convolution 28.8 -> 29.8 %, NeuSight within 0.1 point).
    A linear correction (``learner="ridge"`` or ``"lasso"``) instead of gradient boosting lost
    on Rodinia (residual bpnn_layerforward 7.0 -> 9.0 / 9.2 %, adjust_weights 40.2 -> 42.3 /
    50.3 %, calculate_temp 14.9 -> 19.2 / 18.4 %)."""

    n_physics = 3
    calibrate_by_default = True

    def _base(self, data):
        return physics_chain(data, self.chain_)[0]

    def _physics_names(self):
        return list(getattr(self, "chain_", []))

    def _guard_chain(self):
        return list(self.chain_) if getattr(self, "guard_", None) else []

    def _fit_data(self, data):
        super()._fit_data(data)
        self.guard_ = guard_fit(data) if self._needs_learner() else None

    def _predict_data(self, data):
        t = super()._predict_data(data)
        if getattr(self, "guard_", None):
            t = _blend(self._base(data), t, guard_weight(data, self.guard_))
        return t

    def _prepare(self, data):
        ranked = rank_physics(data, groups=self.cv_groups)
        chain = ranked[: self.n_physics] or ["same"]
        # the best method that predicts (nearly) every pair closes the chain, so that pairs
        # the better methods cannot predict do not fall back to the source time
        full = [m for m in ranked if np.isfinite(data.physics(m)).mean() >= 0.999]
        if full and full[0] not in chain:
            chain.append(full[0])
        self.chain_ = chain

    def describe(self):
        return f"{self.learner} correction on {' > '.join(self.chain_)}"


class PhysicsBest(_PhysicsBased):
    """The analytical method with the lowest training error (falling back to the next where it
    cannot predict); learns nothing else. Used as an ensemble member."""

    name = "physics-best"
    summary = "best analytical method on the training pairs"
    calibrate_by_default = False

    def _needs_learner(self):
        return False

    def _target(self, data):
        return data.pairs["true_s"].to_numpy(float)

    def _time(self, data, f):
        return physics_chain(data, self.chain_)[0]

    def describe(self):
        return f"analytical chain {' > '.join(self.chain_)}"


class ResidualHybrid(_PhysicsBased):
    """Learner predicts ln(t_true / t_phys) on top of the best analytical projection."""

    name = "residual"
    summary = "learned log-ratio correction on the best analytical projection (hybrid)"
    default_gpu_features = False

    def _target(self, data):
        base, _ = physics_chain(data, self.chain_)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(data.pairs["true_s"].to_numpy(float) / base)

    def _time(self, data, f):
        base, _ = physics_chain(data, self.chain_)
        return base * np.exp(np.clip(f, -MAX_LOG_CORRECTION, MAX_LOG_CORRECTION))


class EfficiencyHybrid(_PhysicsBased):
    """Learner predicts the fraction e in (0, 1] of the target's roofline the kernel reaches;
    t = t_roof,t / e. Pairs without a roofline (no FLOPs and no bytes) use the analytical
    chain."""

    name = "bounded-efficiency"
    summary = "learned fraction of the target roofline, clipped to (0, 1] (NeuSight-style hybrid)"
    eps = 1e-6
    default_gpu_features = False

    def _target(self, data):
        roof = data.roof["t_roof"]
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.clip(roof / data.pairs["true_s"].to_numpy(float), self.eps, 1 - self.eps)
            return np.log(e / (1 - e))  # logit

    def _time(self, data, f):
        roof = data.roof["t_roof"]
        e = 1.0 / (1.0 + np.exp(-np.clip(f, -40, 40)))
        e = np.clip(e, self.eps, 1.0)
        base, _ = physics_chain(data, self.chain_)
        return np.where(np.isfinite(roof) & (roof > 0), roof / e, base)


# ensemble -----------------------------------------------------------------------------------
MEMBERS = {"physics": PhysicsBest, "residual": ResidualHybrid,
           "bounded-efficiency": EfficiencyHybrid, "gb": GradientBoosting, "lasso": LassoModel}


def kernel_class(data: PairFeatures, known=()) -> np.ndarray:
    """Kernel class of each pair: the kernel name where it is in ``known``, else the bound of
    the source roofline (``bound:compute``, ``bound:memory`` or ``bound:unknown``)."""
    r = data.roof
    mem = np.fmax(np.fmax(r["s_dram"], r["s_l2"]), np.fmax(r["s_l1"], r["s_shared"]))
    comp = r["s_compute"]
    bound = np.where(np.isfinite(comp) & ~(mem > comp), "bound:compute",
                     np.where(np.isfinite(mem), "bound:memory", "bound:unknown")).astype(object)
    k = data.pairs["kernel"].astype(str).to_numpy(object)
    return np.where(np.isin(k, list(known)), k, bound)


class Ensemble(LearnedModel):
    """Weighted geometric mean of members; weights per kernel class from out-of-fold error.

    ``lasso`` is not a default member: with it, leave-one-GPU-out MAPE rose on 4 of the 5
    tables tried (validated on every training GPU, before the Quadro K5200's FP64 rate was in
    the catalog: Rodinia bpnn_layerforward 9.8 -> 10.4 %, calculate_temp 27.2 -> 29.6 %,
    adjust_weights 48.0 -> 51.7 %, NeuSight conv 17.7 -> 18.7 %; the seed report 109.8 ->
    106.5 %): linear in the GPU features, it extrapolates to a held-out GPU worse than its
    validation on the training GPUs promises. Nor is ``rf``, the seed report's best pure
    learner: with it, leave-one-GPU-out MAPE went 107.4 -> 96.6 % on the seed report (behind
    the forest alone, 83.7 %), 6.6 -> 8.5 % on bpnn_layerforward and 13.1 -> 14.4 % on
    calculate_temp.

    ``power`` stays fixed: choosing it from (1, 2, 4, 8, 16) per fit by nested held-out error
    was measured on leave-one-GPU-out and helped calculate_temp (30.9 -> 27.3 % MAPE) but hurt
    bpnn_layerforward (8.6 -> 9.3 %) and the seed report's median (46.6 -> 48.5 %), NeuSight
    conv unchanged (measured when the experiments validated on three inner GPU folds, where
    the nested errors that rank the powers are noisy)."""

    name = "ensemble"
    summary = "hybrids + physics + pure learners weighted by validated error per kernel class"
    default_gpu_features = False

    def __init__(self, learner: str | None = None, learner_params: dict | None = None,
                 coverage: float | None = None, max_pairs: int | None = 60000,
                 gpu_features: bool | None = None, cv_folds: int = 8, cv_groups: str = "gpu",
                 random_state: int = 0, point_calibration: bool | None = None,
                 members: tuple = ("physics", "residual", "bounded-efficiency", "gb"),
                 power: float = 4.0, min_class_pairs: int = 30,
                 physics_bands: dict | None = None):
        super().__init__(learner, learner_params, coverage, max_pairs, gpu_features, cv_folds,
                         cv_groups, random_state, point_calibration, physics_bands)
        unknown = [m for m in members if m not in MEMBERS]
        if unknown:
            raise GpuprojError(f"unknown ensemble member(s) {unknown} (known: {list(MEMBERS)})")
        self.members = tuple(members)
        self.power = power
        self.min_class_pairs = min_class_pairs

    def _member(self, name):
        kw = dict(coverage=None, max_pairs=None, cv_folds=self.cv_folds,
                  cv_groups=self.cv_groups, random_state=self.random_state)
        cls = MEMBERS[name]
        if issubclass(cls, PureLearner):
            # a pure learner is its own kind with its defaults (``learner`` and
            # ``learner_params`` are the hybrid members'), on absolute GPU features as in the
            # report's set-up
            return cls(**kw, gpu_features=True)
        return cls(learner=self.learner, learner_params=self.learner_params, **kw,
                   gpu_features=self.gpu_features)

    def _weights(self, preds: np.ndarray, true, classes) -> dict:
        """class -> weight per member, from predictions (pairs x members)."""
        err = np.stack([_lerr(preds[:, j], true) for j in range(preds.shape[1])], axis=1)

        def w_of(mask):
            e = np.array([np.nanmean(err[mask, j]) if np.isfinite(err[mask, j]).any() else np.inf
                          for j in range(err.shape[1])])
            w = 1.0 / (e + 1e-3) ** self.power
            w[~np.isfinite(w)] = 0.0
            return (w / w.sum()).tolist() if w.sum() > 0 else [1.0 / len(w)] * len(w)

        out = {"*": w_of(np.ones(len(true), bool))}
        for c in np.unique(classes):
            m = classes == c
            if m.sum() >= self.min_class_pairs:
                out[str(c)] = w_of(m)
        return out

    def _class_weights(self, oof, true, classes, bound) -> dict:
        """Weights per kernel class and per source bound (the classes of unseen kernels) from
        the members' out-of-fold predictions ``oof``; equal weights where none exists."""
        have = np.isfinite(oof).any(axis=1)
        if not have.any():  # no held-out group (a single GPU pair)
            return {"*": [1.0 / len(self.members)] * len(self.members)}
        out = self._weights(oof[have], true[have], classes[have])
        for c, w in self._weights(oof[have], true[have], bound[have]).items():
            if c != "*":
                out[c] = w
        return out

    def _combine(self, preds, classes, weights=None) -> np.ndarray:
        weights = self.weights_ if weights is None else weights
        W = np.array([weights.get(str(c), weights["*"]) for c in classes]) if len(
            classes) else np.zeros((0, preds.shape[1]))
        with np.errstate(divide="ignore", invalid="ignore"):
            lp = np.log(preds)
        ok = np.isfinite(lp)
        W = np.where(ok, W, 0.0)
        s = W.sum(axis=1)
        val = np.where(ok, lp, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.exp((W * val).sum(axis=1) / s)

    def _fit_data(self, data):
        self.spec_ = copy.deepcopy(data.spec)
        self.features_ = []
        true = data.pairs["true_s"].to_numpy(float)
        self.known_kernels_ = sorted(data.pairs["kernel"].astype(str).unique())
        oof = np.full((len(data), len(self.members)), np.nan)
        precompute(data)
        for tr, va in cv_masks(data.pairs, self.cv_groups, self.cv_folds, self.random_state):
            sub_tr, sub_va = data.subset(np.flatnonzero(tr)), data.subset(np.flatnonzero(va))
            for j, name in enumerate(self.members):
                m = self._member(name)
                m._fit_data(sub_tr)
                oof[va, j] = m._predict_data(sub_va)
        self.oof_members_ = oof
        self.weights_ = self._class_weights(oof, true, kernel_class(data, self.known_kernels_),
                                            kernel_class(data, ()))
        self.guard_ = guard_fit(data)
        self.members_ = []
        for name in self.members:
            m = self._member(name)
            m._fit_data(data)
            self.members_.append(m)
        self.learner_ = None

    calibrate_by_default = True

    def _base(self, data):
        return None

    def _guard_chain(self):
        # outside the training range the interval leans on the physics member's chain
        if "physics" not in self.members or not hasattr(self, "members_"):
            return []
        return list(self.members_[self.members.index("physics")].chain_)

    def out_of_fold(self, data):
        # the members' out-of-fold predictions of each held-out group, combined with weights
        # fitted on the other groups: weights fitted on the same predictions made the errors
        # the intervals are calibrated on optimistic
        oof, true = self.oof_members_, data.pairs["true_s"].to_numpy(float)
        classes, bound = kernel_class(data, self.known_kernels_), kernel_class(data, ())
        fold = self._fold_of(data)
        pred = np.full(len(data), np.nan)  # pairs in no held-out group, or no member: NaN
        for k in np.unique(fold[fold >= 0]):
            va, other = fold == k, (fold >= 0) & (fold != k)
            w = self._class_weights(oof[other], true[other], classes[other], bound[other])
            pred[va] = self._combine(oof[va], classes[va], w)
        return pred, None

    def _predict_data(self, data):
        preds = np.column_stack([m._predict_data(data) for m in self.members_])
        # no range guard at this level: the hybrids guard themselves, and the weights were
        # validated on held-out GPUs, extrapolation included. Guarding the pure learners here
        # too was measured on leave-one-GPU-out (with the members of that time): Rodinia
        # adjust_weights MAPE 56.1 -> 43.1 % (the P100 fold), but the seed report 105.1 ->
        # 121.5 %, the others within 1 point.
        return self._combine(preds, kernel_class(data, self.known_kernels_))

    def describe(self):
        w = ", ".join(f"{m} {v:.2f}" for m, v in zip(self.members, self.weights_["*"]))
        return f"ensemble ({w} overall)"


# conformal wrapper for any analytical method ------------------------------------------------
class Conformal(LearnedModel):
    """Analytical method ``base`` with split-conformal intervals calibrated on the training
    pairs (the method learns nothing, so its errors there are out-of-sample)."""

    summary = "analytical method with split-conformal intervals"

    def __init__(self, base: str = "hierarchical", coverage: float | None = 0.9,
                 max_pairs: int | None = 200000, random_state: int = 0):
        super().__init__("none", None, coverage, max_pairs, False, 1, "gpu", random_state)
        self.base = base
        from ..models import model_class

        cls = model_class(base)
        if getattr(cls, "trained", False):
            raise GpuprojError(f"Conformal wraps analytical methods; '{base}' is trained (give it "
                               "coverage= instead)")
        self.name = base
        self.requires, self.requires_any = cls.requires, cls.requires_any

    def get_params(self):
        return {"base": self.base, "coverage": self.coverage, "max_pairs": self.max_pairs,
                "random_state": self.random_state}

    def _needs_learner(self):
        return False

    def _target(self, data):
        return data.pairs["true_s"].to_numpy(float)

    def _time(self, data, f):
        return data.physics(self.base)

    def out_of_fold(self, data):
        return data.physics(self.base), None

    def describe(self):
        return f"analytical {self.base}"


LAMBDAS = (0.0, 0.25, 0.5, 0.75, 1.0)
DELTAS = tuple(np.round(np.arange(-0.30, 0.101, 0.05), 2))


def point_calibration(oof, base, true, groups=None) -> dict | None:
    """Shrinkage lam of the learned correction towards the physics base (hybrids) and a common
    log shift delta, chosen on out-of-fold predictions (held-out GPUs) to minimise MAPE +
    median APE: t' = base^(1 - lam) t^lam exp(delta). A correction that does not carry over to
    unseen GPUs gets lam -> 0. A shift delta < 0 lowers the MAPE of right-skewed errors, but
    a shift is a per-GPU bias as often as a property of the method, so one is kept only if it
    lowers the score on every held-out group (``groups``: the out-of-fold split of each pair,
    e.g. its held-out GPU) and not just on the pool."""
    oof, true = np.asarray(oof, float), np.asarray(true, float)
    ok = np.isfinite(oof) & (oof > 0) & np.isfinite(true) & (true > 0)
    if base is not None:
        ok &= np.isfinite(base) & (base > 0)
    if ok.sum() < 20:
        return None
    lo, lt = np.log(oof[ok]), np.log(true[ok])
    lb = np.log(base[ok]) if base is not None else lo
    g = np.zeros(ok.sum(), int) if groups is None else np.unique(
        np.asarray(groups)[ok], return_inverse=True)[1].ravel()
    members = [g == k for k in range(g.max() + 1)]

    def scores(lp):
        """pooled score and the score of each group"""
        ape = np.abs(np.exp(lp - lt) - 1)
        return (ape.mean() + np.median(ape),
                np.array([ape[m].mean() + np.median(ape[m]) for m in members]))

    lams = LAMBDAS if base is not None else (1.0,)
    lam = min(lams, key=lambda x: scores((1 - x) * lb + x * lo)[0])
    lp = (1 - lam) * lb + lam * lo
    ref_pool, ref_groups = scores(lp)
    best = (ref_pool, 0.0)
    for d in DELTAS:
        pool, per = scores(lp + d)
        if pool < best[0] - 1e-12 and np.all(per <= ref_groups + 1e-12):
            best = (pool, d)
    return {"lam": float(lam), "delta": float(best[1]), "n": int(ok.sum())}


# cross-validation groups --------------------------------------------------------------------
def cv_masks(pairs: pd.DataFrame, groups: str, folds: int, seed: int):
    """(train mask, validation mask) pairs for out-of-fold predictions.

    ``gpu``: each of up to ``folds`` GPUs in turn is left out entirely (neither source nor
    target in training) and its pairs as target are validated; ``kernel``/``config``: kernels
    or (kernel, config) keys split into ``folds`` groups.
    """
    if groups == "gpu":
        src = pairs["source"].astype(str).to_numpy()
        tgt = pairs["target"].astype(str).to_numpy()
        gpus = sorted(set(src) | set(tgt))
        if len(gpus) < 3:  # leaving one out leaves no pair to train on
            return
        if len(gpus) > folds:
            pick = np.random.default_rng(seed).choice(len(gpus), folds, replace=False)
            gpus = [gpus[i] for i in sorted(pick)]
        for g in gpus:
            tr = (src != g) & (tgt != g)
            va = (tgt == g) & (src != g)
            if tr.any() and va.any():
                yield tr, va
        return
    if groups == "kernel":
        key = pairs["kernel"].astype(str).to_numpy()
    elif groups == "config":
        key = (pairs["kernel"].astype(str) + "\x1f" + pairs["config"].astype(str)).to_numpy()
    else:
        raise GpuprojError(f"cv_groups must be gpu, kernel or config (got {groups!r})")
    uniq = np.unique(key)
    if len(uniq) < 2:
        return
    rng = np.random.default_rng(seed)
    fold_of = dict(zip(uniq, rng.permutation(len(uniq)) % min(folds, len(uniq))))
    f = np.array([fold_of[k] for k in key])
    for i in range(min(folds, len(uniq))):
        va = f == i
        if va.any() and (~va).any():
            yield ~va, va


# methods `gpuproj evaluate --train/--split` adds when no --method is given
DEFAULT_LEARNED = ("rf", "gb", "residual", "bounded-efficiency", "ensemble")
