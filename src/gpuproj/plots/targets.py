"""The picture for choosing a GPU: the application total predicted on each target, one row per
target, fastest at the top, each method's point with its own interval (thick) and its measured
90 % band (thin, pale); the source's measured total as a vertical line (none for predictions
combined from several sources), and the total measured on a target where the input holds every
kernel's time there."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from . import _style as st
from .projection import MARKERS, METHOD_COLORS, gpu_name


def targets_frame(result) -> pd.DataFrame:
    """``result.ranked_application()`` (``gpuproj.predict.PredictionSet``) with
    ``measured_s``: the total measured on the target where the profile holds every row of the
    method's total there, else NaN."""
    a = result.ranked_application()
    if a.empty:
        raise InputError("nothing to draw: no kernel was predicted (see the skipped rows)")
    return a if "measured_s" in a else a.assign(measured_s=np.nan)


def targets_figure(result):
    """The figure and the frame behind it (``targets_frame``); targets in the order of the
    first method's prediction, fastest at the top."""
    d = targets_frame(result)
    methods = list(dict.fromkeys(d["method"]))
    order = list(d[d["method"] == methods[0]]["target"])
    order += [t for t in dict.fromkeys(d["target"]) if t not in order]
    # a combined set has no source total (each target's is a weighted mean over the GPUs)
    # and no speed-up
    combined = result.combined
    first = (None if combined else
             d[d["method"] == methods[0]].set_index("target")["speedup"])
    # a method that skipped rows totals fewer of them (``PredictionSet.partial_totals``): the
    # source line is the total over the most rows, and such a method's legend says its count
    rows = d.groupby("method", sort=False)["rows"].max()
    src_total = (np.nan if combined else
                 float(d.loc[d["rows"] == rows.max(), "source_time_s"].iloc[0]))
    vals = np.concatenate([d[c].to_numpy(float) for c in
                           ("time_s", "low_s", "high_s", "band_low_s", "band_high_s",
                            "measured_s")] + [[src_total]])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    uname, uf = st.time_unit(vals)
    n = len(order)
    step = min(0.18, 0.7 / max(len(methods), 1))  # between two methods' rows, in target rows
    with st.rc():
        fig = st.figure(10.0, 1.6 + n * max(0.32, 0.16 * len(methods)))
        ax = fig.subplots()
        y = {t: n - 1 - i for i, t in enumerate(order)}  # fastest at the top
        if not combined:
            ax.axvline(src_total / uf, color=st.COLORS["source"], lw=2.0,
                       label=st.literal(f"measured on {gpu_name(result.source)} (source)"))
        band_label = "thin pale bar: the method's measured 90 % error band"
        for j, m in enumerate(methods):
            h = d[d["method"] == m]
            ys = h["target"].map(y).to_numpy(float) + ((len(methods) - 1) / 2 - j) * step
            col = METHOD_COLORS[j % len(METHOD_COLORS)]
            t = h["time_s"].to_numpy(float)
            band = np.vstack([t - h["band_low_s"].to_numpy(float),
                              h["band_high_s"].to_numpy(float) - t]) / uf
            if np.isfinite(band).any():
                ax.errorbar(t / uf, ys, xerr=np.nan_to_num(np.maximum(band, 0)), fmt="none",
                            ecolor=col, alpha=0.35, elinewidth=1.0, capsize=3, zorder=4,
                            label=band_label)
                band_label = None  # one legend entry for the bands of all methods
            own = np.vstack([t - h["low_s"].to_numpy(float),
                             h["high_s"].to_numpy(float) - t]) / uf
            # a method without an interval of its own (low = high) draws none: say so
            drawn = (np.nan_to_num(own) > 0).any()
            ax.errorbar(t / uf, ys, xerr=np.nan_to_num(np.maximum(own, 0)),
                        fmt=MARKERS[j % len(MARKERS)], ms=7, mfc=st.COLORS["point"], mec=col,
                        mew=1.3, ecolor=col, elinewidth=2.4, capsize=4, zorder=5,
                        label=st.literal(f"{m}: predicted total"
                                         + (" and interval" if drawn else "")) + (
                            f" ({rows[m]} of {rows.max()} kernel rows)"
                            if rows[m] < rows.max() else ""))
        # the measured total over the most rows, as the source line
        meas = (d.sort_values("rows", ascending=False, kind="stable").drop_duplicates("target")
                .set_index("target")["measured_s"])
        has = meas[np.isfinite(meas)]
        if len(has):
            ax.scatter(has.to_numpy(float) / uf, [y[t] for t in has.index], marker="*", s=140,
                       color="black", zorder=6, label="measured on the target")
        ax.set_xscale("log")
        ax.set_xlim(vals.min() / uf / 1.6, vals.max() / uf * 1.6)
        ax.set_yticks([y[t] for t in order],
                      [st.literal(st.short(gpu_name(t), 28)) + (
                          "" if combined else f"  {first.get(t, np.nan):.2f}x")
                       for t in order])
        ax.set_ylim(-0.7, n - 0.3)
        ax.set_ylabel("target GPU" + ("" if combined else ", speed-up"))
        ax.set_xlabel(f"Application total ({uname}), time × launches summed over kernels")
        many = len(result.sources) > 3  # a title line names up to three
        ax.set_title(st.literal(
            f"Projected from {len(result.sources) if many else result.source_label}"
            f"{' GPUs at once' if many else ''}; ordered by {methods[0]}" if combined else
            f"Projected from {gpu_name(result.source)}; speed-up by {methods[0]}"))
        ax.grid(True, axis="x", which="major", alpha=0.3)
        fig.legend(loc="outside upper center", ncol=2, frameon=False)
    return fig, d


def targets_chart(result, path) -> pd.DataFrame:
    """Draw ``targets_figure`` into ``path`` (.png, .svg, .pdf); returns the frame drawn."""
    st.check_path(path)
    fig, d = targets_figure(result)
    st.save(fig, path)
    return d
