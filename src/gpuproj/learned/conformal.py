"""Split-conformal prediction intervals on the log time ratio.

Scores are the signed log residuals r = ln(true / predicted) of calibration pairs that the
model did not train on (for learned models: out-of-fold predictions on GPUs held out in turn;
for analytical models: their training pairs, since they learn nothing). With n scores and
requested coverage 1 - a, the interval of a new prediction p is

    [p x exp(r_(lo)), p x exp(r_(hi))],  lo = floor((n + 1) a / 2),  hi = ceil((n + 1)(1 - a / 2))

(order statistics, 1-based; a bound on the wrong side of 0 is taken as 0, so that the interval
always holds its own prediction), which covers the true time with probability >= 1 - a when the new
pair is exchangeable with the calibration pairs (Vovk et al.; Lei et al. 2018, split conformal,
here with equal tails). The learned models' out-of-fold scores come from copies trained
without each group, their intervals are centred on the model trained on all: Barber et al.
2021's cross-validation interval, without that guarantee (docs/learned.md, "Intervals").

With ``offset`` C (the learned models use ``models.bands.OFFSET``), the scores are
r / d, d = C + |ln(predicted / source time)|, and the interval is [p exp(r_(lo) d),
p exp(r_(hi) d)] (with the same clamp at 0): a prediction that moves the time far from the
source's gets a wider interval, as the analytical methods' error bands do. On
leave-one-GPU-out this brought every hybrid's coverage within 3 points of 90 % on 7 of the 12
public tables instead of 3 (docs/results/learned_conformal_rules.md). Outside their training
GPUs' range, learned models calibrated on fewer than 9 GPUs widen this interval further
(``LearnedModel._widen_outside``, ``LearnedModel._gpus_enough``).

>>> import numpy as np
>>> c = LogConformal(coverage=0.8).fit(np.ones(9), np.exp(np.linspace(-0.4, 0.4, 9)))
>>> lo, hi = c.interval(np.array([2.0]))
>>> round(float(lo[0]), 4), round(float(hi[0]), 4)
(1.3406, 2.9836)
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import GpuprojError
from ..models.bands import distance


class LogConformal:
    """Equal-tailed split-conformal interval on ln(true / predicted)."""

    def __init__(self, coverage: float = 0.9, offset: float | None = None):
        if not 0 < coverage < 1:
            raise GpuprojError(f"coverage must be between 0 and 1 (got {coverage})")
        self.coverage = coverage
        self.offset = offset

    def _scale(self, pred, source):
        if self.offset is None:
            return np.ones(len(pred))
        if source is None:
            raise GpuprojError("a distance-scaled conformal interval needs the source times")
        return distance(pred, source, self.offset)

    def fit(self, pred, true, source=None) -> LogConformal:
        """Calibrate on predictions ``pred`` of times ``true`` (``source``: the source times,
        needed with an ``offset``)."""
        pred, true = np.asarray(pred, float), np.asarray(true, float)
        d = self._scale(pred, source)
        ok = np.isfinite(pred) & np.isfinite(true) & (pred > 0) & (true > 0) & np.isfinite(d)
        r = np.sort(np.log(true[ok] / pred[ok]) / d[ok])
        n = len(r)
        self.n_ = n
        a = 1.0 - self.coverage
        if n == 0:
            self.lo_, self.hi_ = -np.inf, np.inf
            return self
        # the 1e-9 keeps e.g. 20 x 0.05 from rounding to 0.99999...
        k_lo = math.floor((n + 1) * a / 2 + 1e-9)
        k_hi = math.ceil((n + 1) * (1 - a / 2) - 1e-9)
        self.lo_ = -np.inf if k_lo < 1 else float(r[k_lo - 1])
        self.hi_ = np.inf if k_hi > n else float(r[k_hi - 1])
        return self

    def interval(self, pred, source=None) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) in the units of ``pred`` (``source``: as in ``fit``)."""
        if not hasattr(self, "lo_"):
            raise GpuprojError("conformal interval used before calibration")
        pred = np.asarray(pred, float)
        d = self._scale(pred, source)
        with np.errstate(over="ignore", invalid="ignore"):
            return pred * np.exp(min(self.lo_, 0.0) * d), pred * np.exp(max(self.hi_, 0.0) * d)

    def state(self) -> dict:
        return {"coverage": self.coverage, "offset": self.offset, "n": self.n_, "lo": self.lo_,
                "hi": self.hi_}

    @classmethod
    def from_state(cls, d) -> LogConformal:
        # models saved before the distance scaling have no offset: plain log residuals (and a
        # "symmetric": false that no model ever set true)
        c = cls(d["coverage"], d.get("offset"))
        c.n_, c.lo_, c.hi_ = int(d["n"]), float(d["lo"]), float(d["hi"])
        return c
