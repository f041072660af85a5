"""Summaries of repeated timings: median and spread, with numpy's percentile (linear
interpolation between order statistics, as ``numpy.percentile`` defines it).

>>> s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
>>> s.median, s.q1, s.q3, s.spread
(3.0, 2.0, 4.0, 0.6666666666666666)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    q1: float       # 25th percentile
    q3: float       # 75th percentile
    min: float
    max: float
    spread: float   # (q3 - q1) / median: the relative inter-quartile range

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(samples) -> Summary:
    """Median, quartiles, extremes and relative IQR of ``samples`` (at least one value)."""
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        raise ValueError("no samples")
    med = float(np.median(x))
    q1, q3 = (float(v) for v in np.percentile(x, [25, 75]))
    spread = (q3 - q1) / med if med > 0 else float("inf")
    return Summary(int(x.size), med, q1, q3, float(x.min()), float(x.max()), spread)


def linear_fit(x, y) -> tuple:
    """Least-squares ``y = a + b x``; returns ``(a, b)``.

    >>> [round(v, 9) for v in linear_fit([1, 2, 3], [3, 5, 7])]
    [1.0, 2.0]
    """
    b, a = np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)
    return float(a), float(b)
