"""What a person reads of a prediction set: the text columns of the tables that the notebook
(``predict.PredictionSet._repr_html_``), the terminal (``cli.predict``) and the HTML report
show, and the notes under them. The data (``PredictionSet.table()``) keeps times in seconds
and the profile's own kernel names; these turn them into text."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .kernel_names import short_kernel_names
from .models.base import LIMITER_MEANINGS, has_width
from .units import fmt_error, fmt_time

KERNEL_KEYS = ["kernel", "config", "target", "method"]
APPLICATION_TITLE = "Application total (time x launches, summed over kernels), fastest first"


def by_kernel(d: pd.DataFrame) -> pd.DataFrame:
    """The rows of each kernel configuration together, its targets and methods in the order
    they first appear: a reader compares the times of one kernel, not of one method."""
    keys = [pd.factorize(d[c].astype(str))[0] for c in KERNEL_KEYS]  # codes by first appearance
    return d.iloc[np.lexsort(keys[::-1])].reset_index(drop=True)


def readable_rows(d: pd.DataFrame) -> pd.DataFrame:
    """``by_kernel(d)`` with the short kernel names: the rows as a person reads them (the data,
    ``table()``, keeps the names the profile gave)."""
    out = by_kernel(d)
    out["kernel"] = short_kernel_names(out["kernel"].astype(str))
    return out


def has_own_interval(d: pd.DataFrame) -> bool:
    # the methods' own intervals are shown only where one has a width (the hierarchical model
    # with more than one memory level): a column of "x - x" says nothing
    return bool(has_width(d["low_s"], d["high_s"]).any())


RANGES = ("interval", "90 % band")  # the text columns of two times, 'low - high'


def text_columns(d: pd.DataFrame, keys: list, own: bool) -> pd.DataFrame:
    """The text columns the notebook and the terminal (``cli.predict``) show: ``keys``,
    source and predicted time, the own interval (if ``own``), the 90 % band, the speed-up and,
    per kernel, the limiter; for a combined set the number of sources instead of the source's
    time and the speed-up."""
    out = d[keys].astype(str)
    if "sources" in d:  # combined: how many measured GPUs a prediction stands on
        out["sources"] = d["sources"].astype(str)
    elif "source_time_s" in d:
        out["source"] = d["source_time_s"].map(fmt_time)
    out["predicted"] = d["time_s"].map(fmt_time)
    if "measured_s" in d and d["measured_s"].notna().any():
        out["measured"] = d["measured_s"].map(fmt_time)  # '-' where not measured
        out["error"] = [fmt_error(p, m) for p, m in zip(d["time_s"], d["measured_s"])]
    if own:  # a point (a method or row without an interval) shows as '-'
        out["interval"] = [_fmt_range(lo, hi) if wide else "-" for lo, hi, wide in
                           zip(d["low_s"], d["high_s"], has_width(d["low_s"], d["high_s"]))]
    out["90 % band"] = [_fmt_range(lo, hi) for lo, hi in zip(d["band_low_s"], d["band_high_s"])]
    if "speedup" in d:
        out["speed-up"] = d["speedup"].map(lambda v: f"{v:.2f}x")
    if "rows" in d and d["rows"].nunique() > 1:  # totals over different kernel rows
        out["kernel rows"] = d["rows"].astype(str)
    if "limiter" in d:
        out["limiter"] = d["limiter"].astype(str)
    return out


def limiter_note(limiters: pd.Series) -> str:
    """What the limiters in the table mean (``models.base.LIMITER_MEANINGS``)."""
    seen = [x for x in LIMITER_MEANINGS if (limiters == x).any()]
    return ("limiter: what bounds the row on the target (of the target's ceilings, the one "
            "the projection puts it nearest, which it need not reach): "
            + "; ".join(f"{x} = {LIMITER_MEANINGS[x]}" for x in seen))


def _fmt_range(low, high) -> str:
    """'1.2 us - 3.4 us'; '-' when missing."""
    if pd.isna(low) or pd.isna(high):
        return "-"
    return f"{fmt_time(low)} - {fmt_time(high)}"


