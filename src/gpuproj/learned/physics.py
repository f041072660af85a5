"""The analytical side of the hybrids: the methods a hybrid may stand on, ranked on the
training pairs (headed by the geometric mean of the best two where that validates on held-out
training GPUs), the chain that projects each pair with the first of them that can, and the
range guard that hands a GPU unlike the training ones back to that chain."""

from __future__ import annotations

import numpy as np

from ..errors import GpuprojError
from .features import PairFeatures, geomean_name
from .pairs import cv_masks

# analytical methods a hybrid may stand on, tried in this order when tied. ``same`` is not
# among them: it scales nothing, so a learner on top of it has no physics to extrapolate with
# (on the Rodinia tables it ranks first among Kepler/Maxwell GPUs and fails on the P100); it
# stays the last resort where no method can predict a pair.
PHYSICS = ("hierarchical-ext", "hierarchical", "quantitative", "quantitative-transfer",
           "efficiency", "roofline", "bandwidth", "compute")


def log_error(pred, true):
    """|ln(pred / true)| per element (NaN where either is missing)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.abs(np.log(np.asarray(pred, float) / np.asarray(true, float)))



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
    so that for GPUs unlike any seen in training the physics carries the prediction. A pair
    without a descriptor the training range has (an AMD GPU's compute capability, a peak its
    catalog file lacks) counts as outside: nothing says it is like the training GPUs.

    Wider guards (falling to 0 at 3 training ranges, or none) were measured on
    leave-one-GPU-out (residual and bounded-efficiency): on gpu-benches' small kernels, whose
    physics lacks the launch times, no guard validated far better on the training GPUs (the
    residual's out-of-fold MAPE 101-115 -> 45-78 % on four of six folds) but on the held-out
    GPU won on two folds (RX 6900 XT 206 -> 59 %, A100 34 -> 29 %) and lost on two (L40 160 ->
    181 %, MI210 30 -> 36 %); the width chosen per fold by that out-of-fold error lost on
    both hybrids (the bounded-efficiency hybrid's A100 fold 34 -> 78 %). On Rodinia's
    bpnn_adjust_weights this guard validated best on every fold, and the P100 fold needs it
    (193 % against 206-251 % with the wider ones)."""
    n = len(data)
    if not guard:
        return np.ones(n)
    d = np.zeros(n)
    for k, (lo, hi, scale) in guard.items():
        v = data.column(k)
        with np.errstate(invalid="ignore"):
            ex = np.maximum(np.maximum(v - hi, lo - v), 0.0) / scale
        d = np.maximum(d, np.where(np.isfinite(v), ex, 1.0))
    return np.clip(1.0 - d, 0.0, 1.0)


def blend(base, t, g):
    """base^(1 - g) x t^g: the learned prediction where trusted, the physics where not."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.exp((1 - g) * np.log(base) + g * np.log(t))
    return np.where(np.isfinite(out) & (out > 0), out, base)



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
            err = float(np.mean(log_error(p[ok], true[mask][ok])))
            scored.append((ok.mean() < min_coverage, err, i, m))
    return sorted(scored)


def _top_two(scored) -> list:
    """The two best methods of ``_physics_scores`` (fewer where fewer cover enough)."""
    return [m for low, _, _, m in scored if not low][:2]


def _averaging_validates(data, candidates, min_coverage, groups, folds, seed) -> bool:
    """Whether the geometric mean of the best two methods, both chosen without a held-out group
    (``cv_masks``), errs less on that group than the best one alone, over all held-out groups
    (on the pairs the mean predicts)."""
    true = data.pairs["true_s"].to_numpy(float)
    err_one, err_mean = [], []
    for tr, va in cv_masks(data.pairs, groups, folds, seed):
        top = _top_two(_physics_scores(data, candidates, min_coverage, tr))
        if len(top) < 2:
            continue
        one, mean = data.physics(top[0])[va], data.physics(geomean_name(top))[va]
        ok = np.isfinite(mean)
        err_one.append(log_error(one[ok], true[va][ok]))
        err_mean.append(log_error(mean[ok], true[va][ok]))
    if not err_one:
        return False
    return float(np.mean(np.concatenate(err_mean))) < float(np.mean(np.concatenate(err_one)))


def rank_physics(data: PairFeatures, candidates=PHYSICS, min_coverage: float = 0.5,
                 groups: str = "gpu", folds: int | None = None, seed: int = 0) -> list:
    """Analytical methods ordered by their error on the pairs of ``data`` (mean |ln ratio| over
    the pairs each can predict; those covering under ``min_coverage`` of the pairs last).

    The geometric mean of the best two heads the list where choosing it validates better than
    choosing the best alone, with each ``groups`` (GPUs by default) held out in turn (up to
    ``folds`` of them, drawn with ``seed``: ``cv_masks``, as the model's own validation). Where
    two methods are about equally good, the training GPUs cannot tell which will be better
    on a new GPU: on KernelTuner GEMM (``hierarchical-ext`` against the bandwidth ratio) the
    one with the lower training error was the worse one on each of the four held-out GPUs,
    and their mean, whose errors partly cancel, was better than either (docs/results/
    learned.md). The choice is validated, not taken on training error: there the best method
    is the best by construction."""
    scored = _physics_scores(data, candidates, min_coverage)
    ranked = [m for *_, m in scored]
    top = _top_two(scored)
    if len(top) == 2 and _averaging_validates(data, candidates, min_coverage, groups, folds,
                                              seed):
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

