"""Hybrids: learned models bounded by an analytical projection (``physics``).

- ``ResidualHybrid`` (``residual``) learns the log-ratio between the measured target time and
  the projection; ``EfficiencyHybrid`` (``bounded-efficiency``) the fraction of the target's
  roofline the kernel reaches; both give way to the projection outside the training GPUs'
  range (``physics.guard_weight``).
- ``PhysicsBest`` is the projection alone; ``Ensemble`` weighs it, the hybrids and a pure
  learner by their validated error per kernel class.
"""

from __future__ import annotations

import copy

import numpy as np

from ..errors import GpuprojError
from .features import PairFeatures
from .models import GradientBoosting, LassoModel, LearnedModel, PureLearner
from .pairs import cv_masks
from .physics import (
    blend,
    guard_fit,
    guard_weight,
    log_error,
    physics_chain,
    precompute,
    rank_physics,
)

MAX_LOG_CORRECTION = np.log(50.0)  # a learned correction beyond x50 is an extrapolation artefact


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
    (adjust_weights 49.0 -> 45.2 %, the seed report 107.4 -> 111.9 % @96d6cf0, KernelTuner
    GEMM 22.0 -> 23.5 %, convolution 28.8 -> 29.8 %, NeuSight within 0.1 point).
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
            t = blend(self._base(data), t, guard_weight(data, self.guard_))
        return t

    def _prepare(self, data):
        ranked = rank_physics(data, groups=self.cv_groups, folds=self.cv_folds,
                              seed=self.random_state)
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
    chain. The point calibration and the range guard then move t towards that chain, which no
    roofline bounds, so a prediction may lie below t_roof,t: the roofline of catalog ceilings
    is no hard bound either (24 of the 88 pairs of the NeuSight conv excerpt in tests/data ran
    faster than it)."""

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
    the forest alone, 83.7 %; @96d6cf0), 6.6 -> 8.5 % on bpnn_layerforward and 13.1 -> 14.4 % on
    calculate_temp.

    The hybrid members predict without the point calibration each has alone (lam, the share
    of its learned correction kept). With it (lam fitted on the same out-of-fold
    predictions), measured on leave-one-GPU-out: KernelTuner GEMM 22.0 -> 21.2 % MAPE (the
    RTX 2080 Ti fold 24.2 -> 16.5 %: the bounded-efficiency member, 63.5 % there
    uncalibrated, drops its correction, which the training GPUs' folds, mostly outside each
    other's range and so guarded, had not shown), convolution 28.8 -> 27.2 %, but
    calculate_temp 13.0 -> 13.9 %, bpnn_layerforward 6.6 -> 6.8 %, the seed report 107.4 ->
    108.9 % (@96d6cf0) and NeuSight +0.2 points: a correction that lam = 0 rejects on the pool of
    held-out training GPUs still helps some held-out GPUs (KernelTuner GEMM's TITAN RTX fold
    11.7 -> 16.5 %). The validated hybrid beat both other families on the same number of
    tables either way (MAPE 5, median APE 4, both 3), on different ones. Nor can the weights
    tell inside from outside the range there: weights of their own for pairs inside the
    training GPUs' range were tried, but with three training GPUs no held-out one lies inside
    the range of the other two (every out-of-fold pair of KernelTuner GEMM is guarded), so a
    member's correction is validated only where the guard damps it.

    ``power`` stays fixed: choosing it from (1, 2, 4, 8, 16) per fit by nested held-out error
    was measured on leave-one-GPU-out and helped calculate_temp (30.9 -> 27.3 % MAPE) but hurt
    bpnn_layerforward (8.6 -> 9.3 %) and the seed report's median (46.6 -> 48.5 %), NeuSight
    conv unchanged (measured when the experiments validated on three inner GPU folds, where
    the nested errors that rank the powers are noisy)."""

    name = "ensemble"
    summary = "hybrids + physics + pure learners weighted by validated error per kernel class"
    default_gpu_features = False

    def __init__(self, learner: str | None = None, learner_params: dict | None = None,
                 coverage: float | None = 0.9, max_pairs: int | None = 60000,
                 gpu_features: bool | None = None, cv_folds: int | None = None,
                 cv_groups: str = "gpu", random_state: int = 0,
                 point_calibration: bool | None = None,
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
        # every member trains on the ensemble's features (``_fit_data`` shares one
        # PairFeatures), a pure learner too, so without the absolute GPU features it has
        # alone; each keeps its own kind and defaults (``learner`` and ``learner_params`` are
        # the hybrid members')
        if issubclass(cls, PureLearner):
            return cls(**kw, gpu_features=self.gpu_features)
        return cls(learner=self.learner, learner_params=self.learner_params, **kw,
                   gpu_features=self.gpu_features)

    def _weights(self, preds: np.ndarray, true, classes) -> dict:
        """class -> weight per member, from predictions (pairs x members)."""
        err = np.stack([log_error(preds[:, j], true) for j in range(preds.shape[1])], axis=1)

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
        # the intervals are calibrated on optimistic. Only on the other groups' pairs that the
        # group's copies trained on: with GPUs held out, those predicted from the held-out
        # GPU's own times belong to other groups too, and carried its measurements into the
        # weights its group's calibration predictions were combined with (the members that
        # predicted the other groups still trained on the group: only a nested validation
        # would keep it out of them)
        oof, true = self.oof_members_, data.pairs["true_s"].to_numpy(float)
        classes, bound = kernel_class(data, self.known_kernels_), kernel_class(data, ())
        kernels = data.pairs["kernel"].astype(str).to_numpy(object)
        fold = self._fold_of(data)
        pred = np.full(len(data), np.nan)  # pairs in no held-out group, or no member: NaN
        for tr, va in cv_masks(data.pairs, self.cv_groups, self.cv_folds, self.random_state):
            other = tr & (fold >= 0)
            w = self._class_weights(oof[other], true[other], classes[other], bound[other])
            # classed as a model trained without the group classes them: a kernel only the
            # group has (a kernel split) is an unseen kernel, of its source bound's weights
            seen = np.isin(kernels[va], kernels[tr])
            pred[va] = self._combine(oof[va], np.where(seen, classes[va], bound[va]), w)
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


