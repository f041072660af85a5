"""Per-kernel projection bars (Van Lanker et al., Figs. 4-9): for each target GPU a panel with,
per kernel, the time measured on the source (bar), the predicted interval (segment) with the
predicted point marked, the method's measured 90 % error band (thin pale segment,
``models.bands``), and the time measured on the target (bar) where the input holds it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..catalog import resolve
from ..errors import InputError, UnknownGPUError
from ..models.base import has_width
from . import _style as st

# `-m all` draws up to ten methods side by side: ten colours and twelve markers give every method
# its own pair (method j: colour j % 10, marker j % 12, distinct up to 60 methods)
METHOD_COLORS = ("#000000", "#7B3294", "#1B7837", "#B35806", "#2166AC", "#C51B7D", "#4D4D4D",
                 "#01665E", "#8C510A", "#313695")
MARKERS = ("o", "D", "s", "^", "v", "P", "X", "<", ">", "h", "p", "*")
BAND_LABEL = "thin pale bar: the method's measured 90 % error band"


def gpu_name(gid: str) -> str:
    """The catalog name of ``gid``, or ``gid`` itself for a GPU the catalog does not hold."""
    try:
        return resolve(gid).name
    except UnknownGPUError:
        return str(gid)


def projection_frame(result, max_kernels: int = 30) -> tuple[pd.DataFrame, int]:
    """The rows drawn: the prediction table (``PredictionSet.table()``) of the ``max_kernels``
    kernel rows with the largest source time x launches, in input order, with
    ``measured_s`` (the time the profile holds of the target, or NaN). Returns (frame, kernel
    rows in all)."""
    d = result.table()
    if d.empty:
        raise InputError("nothing to draw: no kernel was predicted (see the skipped rows)")
    keys = list(dict.fromkeys(zip(d["kernel"], d["config"])))
    weight = (d["source_time_s"] * d["launches"].fillna(1)).groupby(
        [d["kernel"], d["config"]], sort=False).max()
    keep = set(weight.sort_values(ascending=False).index[:max_kernels])
    keys = [k for k in keys if k in keep]
    d = d.loc[np.fromiter((k in keep for k in zip(d["kernel"], d["config"])), bool,
                          len(d))].copy()
    if "measured_s" not in d:  # (a column only where the profile holds a target's rows)
        d["measured_s"] = np.nan
    d["_x"] = [keys.index(k) for k in zip(d["kernel"], d["config"])]
    return d, len(weight)


def projection_bars(result, path) -> pd.DataFrame:
    """Draw the projection bars of ``result`` (a ``gpuproj.predict.PredictionSet``) into
    ``path`` (.png, .svg, .pdf), with the targets' times where the profile held them. Returns
    the frame drawn (times in seconds)."""
    st.check_path(path)
    fig, d = projection_figure(result)
    st.save(fig, path)
    return d


def projection_figure(result, max_kernels: int = 30, targets=None):
    """The figure and the frame behind it (see ``projection_bars``); ``targets``: the panels
    to draw (default: every target of ``result``)."""
    d, total = projection_frame(result, max_kernels)
    targets = [t for t in (targets or result.targets) if (d["target"] == t).any()]
    d = d[d["target"].isin(targets)]
    methods = list(dict.fromkeys(d["method"]))
    # a method without an interval of its own (low = high) draws none: its legend says so
    wide = {m: bool(has_width(d.loc[d["method"] == m, "low_s"],
                              d.loc[d["method"] == m, "high_s"]).any()) for m in methods}
    keys = list(dict.fromkeys(zip(d["kernel"], d["config"])))
    n = len(keys)
    repeated = len({k for k, _ in keys}) < n
    uname, uf = st.time_unit(np.concatenate([d["source_time_s"], d["time_s"]]))
    # a combined set's "source time" is a weighted mean over GPUs, not a measurement: no bar
    src_name = None if result.combined else gpu_name(result.source)
    # each kernel's slot holds the two bars and one interval per method side by side
    width = min(max(8.0, (0.3 + 0.22 * max(len(methods), 1)) * n + 3.5), 26.0)
    step = min(0.12, 0.6 / max(len(methods), 1))  # between two methods' intervals, in slots
    # rotated labels need room; two-line labels (kernel + config) more
    with st.rc():
        fig = st.figure(width, 3.9 * len(targets) + (2.3 if repeated else 1.8))
        axes = fig.subplots(len(targets), 1, squeeze=False, sharex=True)[:, 0]
        x = np.arange(n)
        bw = 0.36
        half = bw / 2 if src_name else 0.0  # the target's slot, right of the source's bar
        # one scale for every panel, decided on all of them: a linear panel above a log one
        # read as two kinds of difference
        every = np.concatenate([d[c].to_numpy(float) for c in (
            ["source_time_s"] if src_name else []) + [
            "measured_s", "low_s", "high_s", "time_s", "band_low_s", "band_high_s"]])
        log = st.log_needed(every)
        for ti, (ax, t) in enumerate(zip(axes, targets)):
            g = d[d["target"] == t]
            first = g.drop_duplicates("_x").set_index("_x").reindex(x)
            src_t = first["source_time_s"].to_numpy(float)
            meas = first["measured_s"].to_numpy(float)
            vals = np.concatenate([src_t if src_name else [], meas, g["low_s"], g["high_s"],
                                   g["time_s"], g["band_low_s"], g["band_high_s"]])
            if log:
                ax.set_yscale("log")
            tname = gpu_name(t)
            if src_name:
                ax.bar(x - bw / 2, src_t / uf, bw, color=st.COLORS["source"], edgecolor="black",
                       lw=0.6, label=st.literal(f"measured on {src_name} (source)"))
            if np.isfinite(meas).any():
                ax.bar(x + half, meas / uf, bw, color=st.TARGET_COLORS[ti % 7],
                       edgecolor="black", lw=0.6, label=st.literal(f"measured on {tname}"))
            for j, m in enumerate(methods):
                h = g[g["method"] == m]
                # several methods share the target slot side by side
                off = half + (j - (len(methods) - 1) / 2) * step
                xs = h["_x"].to_numpy() + off
                col = METHOD_COLORS[j % len(METHOD_COLORS)]
                t_pt = h["time_s"].to_numpy(float)
                band = np.vstack([t_pt - h["band_low_s"].to_numpy(float),
                                  h["band_high_s"].to_numpy(float) - t_pt]) / uf
                if np.isfinite(band).any():  # the measured 90 % band, thin and pale behind
                    ax.errorbar(xs, t_pt / uf, yerr=np.nan_to_num(np.maximum(band, 0)), fmt="none",
                                ecolor=col, alpha=0.35, elinewidth=1.0, capsize=3, zorder=4,
                                label=BAND_LABEL)
                yerr = np.vstack([t_pt - h["low_s"].to_numpy(float),
                                  h["high_s"].to_numpy(float) - t_pt]) / uf
                ax.errorbar(xs, t_pt / uf, yerr=np.maximum(yerr, 0), fmt=MARKERS[j % len(MARKERS)],
                            ms=8, mfc=st.COLORS["point"], mec=col, mew=1.4, ecolor=col,
                            elinewidth=2.4, capsize=5, capthick=2, zorder=5,
                            label=st.literal(f"{m}: predicted point"
                                             + (" and interval" if wide[m] else "")))
            fin = vals[np.isfinite(vals) & (vals > 0)] / uf
            if fin.max() > np.finfo(float).max / 2.5:  # near the largest float: no axis holds it
                raise InputError(f"times up to {fin.max() * uf:.3g} s cannot be drawn")
            if log:
                ax.set_ylim(fin.min() / 2.5, fin.max() * 2.5)
            else:
                ax.set_ylim(0, fin.max() * 1.15)
            ax.set_ylabel(f"Time per launch ({uname})")
            ax.set_title(st.literal(f"{src_name or result.source_label} → {tname}"))
            ax.grid(True, axis="y", which="major", alpha=0.3)
        handles = {}
        for ax in axes:  # one legend for all panels, each entry once
            for hd, lb in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lb, hd)
        if BAND_LABEL in handles:  # one entry for the bands of all methods, last
            handles[BAND_LABEL] = handles.pop(BAND_LABEL)
        fig.legend(list(handles.values()), list(handles), loc="outside upper center",
                   ncol=max(1, min(len(handles), int(width / 3.6))), frameon=False)
        names = {st.kernel_name(k) for k, _ in keys}
        if len(names) == 1 and repeated:  # one kernel at many sizes: the configs tell apart
            labels = [st.literal(st.short(c, 40)) for _, c in keys]
            xlabel = st.literal(f"configuration of {st.short(names.pop(), 40)}")
        else:
            labels = [st.label_of(k, c, repeated, 30) for k, c in keys]
            xlabel = "kernel" + (" [configuration]" if repeated else "")
        axes[-1].set_xticks(x, labels, rotation=35, ha="right", rotation_mode="anchor")
        axes[-1].set_xlim(-0.6, n - 0.4)
        axes[-1].set_xlabel(xlabel)
        if total > n:
            axes[0].annotate(f"{n} of {total} kernel rows shown (largest source time × launches)",
                             (0, 1), xycoords="axes fraction", xytext=(0, 22),
                             textcoords="offset points", fontsize=10, color="#444444")
    return fig, d
