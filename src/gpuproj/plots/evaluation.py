"""Evaluation pictures (Stevens & Klöckner Figs. 1, 7-9 style): predicted against measured time
per method on log-log axes with ±10 % and ±25 % bands, the cumulative distribution of the
absolute percentage error of all methods on one chart, and the error per (source, target) GPU
pair as a heat map."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from . import _style as st

METHOD_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
                 "#8C564B", "#7F7F7F", "#BCBD22")
# above this many points a scatter becomes a density (hexbin): 10^5 dots hide each other
DENSE = 4000


def _methods(pairs: pd.DataFrame) -> list:
    """Methods ordered by median absolute percentage error, best first."""
    ape = (pairs["time_s"] - pairs["true_s"]).abs() / pairs["true_s"]
    return list(ape.groupby(pairs["method"]).median().sort_values().index)


def _ape_pct(g):
    return 100 * np.abs(g["time_s"].to_numpy(float) - g["true_s"].to_numpy(float)) / g[
        "true_s"].to_numpy(float)


def evaluation_plots(ev, outdir) -> list[Path]:
    """Write the evaluation pictures of ``ev`` (a ``gpuproj.evaluate.Evaluation``) into the
    directory ``outdir`` (created if needed): ``predicted_vs_measured.png``, ``error_cdf.png``
    and ``pair_error_<method>.png`` per method. Returns the paths."""
    pairs = _clean(ev.pairs)
    outdir = Path(outdir)
    if outdir.exists() and not outdir.is_dir():
        raise InputError("is a file; --plots needs a directory", path=outdir)
    paths = [st.save(scatter_figure(pairs), outdir / "predicted_vs_measured.png"),
             st.save(cdf_figure(pairs), outdir / "error_cdf.png")]
    for m in _methods(pairs):
        g = pairs[pairs["method"] == m]
        if g["source"].nunique() * g["target"].nunique() > 1:
            slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", m)
            paths.append(st.save(heatmap_figure(g, m), outdir / f"pair_error_{slug}.png"))
    return paths


def _clean(pairs: pd.DataFrame) -> pd.DataFrame:
    if pairs is None or len(pairs) == 0:
        raise InputError("nothing to draw: the evaluation has no predicted pair")
    ok = np.isfinite(pairs["time_s"]) & (pairs["time_s"] > 0) & np.isfinite(pairs["true_s"]) & (
        pairs["true_s"] > 0)
    return pairs[ok]


def scatter_figure(pairs: pd.DataFrame):
    """Predicted against measured time, one panel per method, log-log, y = x with ±10 % and
    ±25 % bands."""
    methods = _methods(pairs)
    ncol = min(3, len(methods))
    nrow = -(-len(methods) // ncol)
    allv = np.concatenate([pairs["time_s"], pairs["true_s"]])
    uname, uf = st.time_unit(allv)
    lo, hi = allv.min() / uf / 1.6, allv.max() / uf * 1.6
    # square panels need their width in height plus room for the two-line title and the
    # x label, and a colour bar its own width beside the panel
    bar = any((pairs["method"] == m).sum() > DENSE for m in methods)
    with st.rc():
        fig = st.figure((5.6 if bar else 4.6) * ncol + 0.6, 5.3 * nrow + 0.2)
        axes = fig.subplots(nrow, ncol, squeeze=False)
        line = np.geomspace(lo, hi, 50)
        for i, ax in enumerate(axes.flat):
            if i >= len(methods):
                ax.set_visible(False)
                continue
            m = methods[i]
            g = pairs[pairs["method"] == m]
            x, y = g["true_s"].to_numpy(float) / uf, g["time_s"].to_numpy(float) / uf
            ax.fill_between(line, line / 1.25, line * 1.25, color="#BBBBBB", alpha=0.35, lw=0)
            ax.fill_between(line, line / 1.1, line * 1.1, color="#888888", alpha=0.45, lw=0)
            ax.plot(line, line, color="black", lw=1, label="predicted = measured", zorder=4)
            # band edges drawn over the points too, so they stay visible under dense data
            for f, ls in ((1.1, "--"), (1.25, ":")):
                for e in (f, 1 / f):
                    ax.plot(line, line * e, color="#333333", lw=0.9, ls=ls, zorder=4,
                            label=f"±{round(100 * (f - 1))} %" if e > 1 else None)
            col = "#0072B2"  # one colour: the panel's title names the method (a black
            # method colour hid its points on the black diagonal)
            if len(g) > DENSE:
                hb = ax.hexbin(x, y, xscale="log", yscale="log", gridsize=45, mincnt=1,
                               bins="log", cmap="viridis", extent=np.log10([lo, hi, lo, hi]))
                fig.colorbar(hb, ax=ax, label="pairs per cell", shrink=0.8)
            else:
                ax.scatter(x, y, s=14 if len(g) < 500 else 5, color=col, alpha=0.7, lw=0,
                           label="kernel × GPU pair", rasterized=len(g) > 500)
            ape = _ape_pct(g)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
            ax.set_aspect("equal")
            ax.set_title(st.literal(m) + f"\nn = {len(g)}, median APE {np.median(ape):.1f} %, "
                         f"within 25 %: {100 * np.mean(ape <= 25):.0f} %", fontsize=10.5)
            ax.set_xlabel(f"Measured time ({uname})")
            ax.set_ylabel(f"Predicted time ({uname})")
            ax.grid(True, which="major", alpha=0.3)
            if i == 0:
                ax.legend(loc="upper left", fontsize=9, framealpha=0.9)
    return fig


def cdf_figure(pairs: pd.DataFrame):
    """Share of pairs whose absolute percentage error is at most x, all methods together."""
    methods = _methods(pairs)
    with st.rc():
        fig = st.figure(10.5, 5.2)
        ax = fig.subplots()
        hi = 1.0
        for i, (names, ape) in enumerate(_same_curves(pairs, methods)):
            y = np.arange(1, len(ape) + 1) / len(ape)
            ax.step(np.maximum(ape, 1e-2), 100 * y, where="post", lw=2,
                    color=METHOD_COLORS[i % len(METHOD_COLORS)],
                    ls=("-", "--", "-.", ":")[i // len(METHOD_COLORS) % 4],
                    label=" = ".join(st.literal(m) for m in names)
                    + f" (median {np.median(ape):.1f} %)")
            hi = max(hi, np.percentile(ape, 99))
        for v in (10, 25):
            ax.axvline(v, color="#666666", lw=1, ls=":")
            # labelled above the axes, where no curve or legend can be
            ax.annotate(f"{v} %", (v, 1.0), xycoords=("data", "axes fraction"), xytext=(0, 3),
                        textcoords="offset points", ha="center", va="bottom", fontsize=9.5,
                        color="#444444")
        ax.set_xscale("log")
        ax.set_xlim(0.1, max(hi * 1.5, 100))
        ax.set_ylim(0, 100)
        ax.set_xlabel("Absolute percentage error |predicted − measured| / measured (%)")
        ax.set_ylabel("Pairs with at most this error (%)")
        ax.set_title("Error distribution per method", pad=20)
        ax.grid(True, which="major", alpha=0.3)
        # beside the axes: inside, it hid the curves of the methods that err least
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    return fig


def _same_curves(pairs: pd.DataFrame, methods: list) -> list:
    """``[(method names, sorted APE)]`` in ``methods``' order, methods whose errors have the same
    distribution as one entry: drawn apart, the later curve hides the earlier one exactly (the
    roofline and efficiency methods agree wherever the two GPUs' occupancies do)."""
    curves = []
    for m in methods:
        ape = np.sort(_ape_pct(pairs[pairs["method"] == m]))
        same = next((c for c in curves if len(c[1]) == len(ape)
                     and np.allclose(c[1], ape, rtol=1e-9, atol=0)), None)
        if same is None:
            curves.append(([m], ape))
        else:
            same[0].append(m)
    return curves


def pair_errors(g: pd.DataFrame) -> pd.DataFrame:
    """Median absolute percentage error per (source, target): sources as rows, targets as
    columns (NaN where no pair was predicted)."""
    d = g.assign(ape=_ape_pct(g))
    return d.pivot_table(index="source", columns="target", values="ape", aggfunc="median")


def heatmap_figure(g: pd.DataFrame, method: str):
    """Median APE per GPU pair of one method, with the value written in each cell."""
    from matplotlib.colors import LogNorm

    tab = pair_errors(g)
    # square over every GPU, where the sources are GPUs; one row where they were combined
    square = bool(set(tab.index) & set(tab.columns))
    rows = sorted(set(tab.index) | set(tab.columns)) if square else sorted(tab.index)
    cols = rows if square else sorted(tab.columns)
    tab = tab.reindex(index=rows, columns=cols)
    n = max(len(rows), len(cols))
    v = tab.to_numpy(float)
    fin = v[np.isfinite(v)]
    with st.rc():
        size = min(max(5.5, 0.62 * n + 3.2), 20)
        fig = st.figure(size + 1.4, size if square else max(3.0, 0.62 * len(rows) + 2.6))
        ax = fig.subplots()
        norm = LogNorm(vmin=max(min(fin.min(), 5), 0.5), vmax=max(fin.max(), 50))
        im = ax.imshow(np.ma.masked_invalid(v), cmap="magma_r", norm=norm)
        cb = fig.colorbar(im, ax=ax, shrink=0.85, label="median absolute percentage error (%)"
                          if square else "median APE (%)")  # a row's bar is short
        ticks = [t for t in (0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
                 if norm.vmin <= t <= norm.vmax]
        cb.set_ticks(ticks, labels=[f"{t:g}" for t in ticks])
        cb.minorticks_off()
        # the figure grows with n, so a cell holds an 8-pt number up to about 40 GPUs; beyond,
        # the colour alone tells (the size stops at 20 in)
        fs = 10 if n <= 8 else 8
        written = [(r, c) for r in range(len(rows)) for c in range(len(cols))
                   if np.isfinite(v[r, c]) and n <= 40]
        for r, c in written:
            ax.text(c, r, f"{v[r, c]:.0f}" if v[r, c] >= 10 else f"{v[r, c]:.1f}",
                    ha="center", va="center", fontsize=fs,
                    color="white" if norm(v[r, c]) > 0.45 else "black")
        ax.set_xticks(range(len(cols)), [st.literal(st.short(x, 22)) for x in cols],
                      rotation=45, ha="right", rotation_mode="anchor")
        ax.set_yticks(range(len(rows)), [st.literal(st.short(x, 22)) for x in rows])
        ax.set_xlabel("target GPU (predicted)")
        ax.set_ylabel("source GPU (measured)")
        ax.set_title(st.literal(method) + ": median APE per GPU pair (%)")
    return fig
