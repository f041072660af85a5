"""Konstantinidis & Cotronis's quadrant-split view.

The horizontal axis is memory bandwidth (not operational intensity as in a roofline): each GPU
is one point (DRAM bandwidth B, compute throughput P). A kernel of operational intensity I
(FLOP per DRAM byte) is the half-line P = I * B through the origin. GPUs above the line
(P > I * B, ridge point right of I) are memory-bound for that kernel, GPUs below it
compute-bound; each GPU's dashed arrow ends at its roofline performance min(P, I * B) on the
line (straight down for memory-bound, straight left for compute-bound).

>>> classify(3.35e12, 6.7e13, 5.0)
'memory'
>>> classify(3.35e12, 6.7e13, 40.0)
'compute'
>>> attainable(3.35e12, 6.7e13, 5.0) == 5.0 * 3.35e12
True
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import GpuprojError


def classify(bw_bytes_per_s: float, compute_per_s: float, oi: float) -> str:
    """``'memory'`` when the GPU point lies above the kernel's line (P > I B), else
    ``'compute'``."""
    return "memory" if compute_per_s > oi * bw_bytes_per_s else "compute"


def attainable(bw_bytes_per_s: float, compute_per_s: float, oi: float) -> float:
    """Roofline performance of a kernel of intensity ``oi`` on the GPU: min(P, I * B)."""
    return min(compute_per_s, oi * bw_bytes_per_s)


def _rates(point: dict) -> tuple[float, float]:
    """A point's (DRAM bytes/s, compute ops/s), as ``classify`` and ``attainable`` take them."""
    return point["dram_bw_bytes_per_s"], point["compute_ops_per_s"]


def points_from_gpus(gpus, precision: str = "fp32", which: str = "peak") -> tuple[list, list]:
    """(one point per GPU: ``{"label", "dram_bw_bytes_per_s", "compute_ops_per_s", "kind",
    "id"}``, the compute rate in FLOP or integer operations per second of ``precision``; one
    line per GPU left out saying which number it lacks).

    ``which`` is ``peak`` (datasheet, as the paper draws it; the measured value where a GPU has
    no peak) or ``measured`` (the measured value, else the peak). ``gpus``: GPU objects or
    names the catalog resolves (a list, or names separated by commas).
    """
    from ..names import gpu_list

    bw_f, c_f = "dram_bw_bytes_per_s", f"{precision}_fma_flops_per_s"
    if precision.startswith("int"):
        c_f = f"{precision}_fma_ops_per_s"
    out, skipped = [], []
    if not gpus:
        raise GpuprojError("no GPU named to place (--gpus NAME[,NAME])")
    for g in gpu_list(gpus):  # a GPU named twice is one
        get = {"peak": g.peak, "measured": g.measured}
        first, second = ("peak", "measured") if which == "peak" else ("measured", "peak")
        vals, kinds = [], []
        for f in (bw_f, c_f):
            v, k = get[first](f), first
            if math.isnan(v):
                v, k = get[second](f), second
            vals.append(v)
            kinds.append(k)
        lacks = [f for f, v in zip((bw_f, c_f), vals) if not (np.isfinite(v) and v > 0)]
        if lacks:
            skipped.append(f"{g.name} ({g.id}): the catalog has no {' and no '.join(lacks)}")
            continue
        kind = kinds[0] if kinds[0] == kinds[1] else "+".join(kinds)
        label = g.name if kind == "peak" else f"{g.name} ({kind})"
        out.append({"label": label, "dram_bw_bytes_per_s": vals[0],
                    "compute_ops_per_s": vals[1], "kind": kind, "id": g.id})
    return out, skipped


def kernels_from_rows(rows) -> tuple[list, list]:
    """(``(label, intensity)`` of every profile row with FLOPs and DRAM bytes, the longest
    first (``time_s`` x ``launches``, as the projection bars; a picture draws the first
    ``MAX_KERNELS``), one line per other row saying which count it lacks); ``rows``: a
    ``ProfileTable`` or a DataFrame with ``kernel``, ``flops``, ``dram_bytes`` (``config``,
    ``time_s``, ``launches`` optional)."""
    from . import _style as st

    df = getattr(rows, "df", rows)
    need = {"kernel", "flops", "dram_bytes"}
    if df is None or not need <= set(df.columns):
        raise GpuprojError("the quadrant-split view needs kernel rows with flops and dram_bytes")
    out, skipped = [], []
    for _, r in df.iterrows():
        f, b = float(r["flops"]), float(r["dram_bytes"])
        cfg = r.get("config", "")
        has_cfg = cfg not in (None, "", "nan") and len(df) > 1
        if np.isfinite(f) and np.isfinite(b) and f > 0 and b > 0:
            launches = float(r.get("launches", np.nan))
            out.append((str(r["kernel"]) + (f" [{cfg}]" if has_cfg else ""), f / b,
                        -float(r.get("time_s", np.nan))
                        * (launches if np.isfinite(launches) else 1.0)))
        else:
            # as `gpuproj roofline` says it
            skipped.append(f"{st.short(st.kernel_name(r['kernel']), 80)} [{cfg}]: no "
                           f"{'DRAM byte' if np.isfinite(f) and f > 0 else 'FLOP'} count, so no "
                           "operational intensity")
    if not out:
        origin = getattr(rows, "origin", None)
        why = (f"no kernel row has both flops and dram_bytes (its operational intensity is "
               f"unknown; the first: {skipped[0]})" if skipped else "no kernel row to draw")
        raise GpuprojError((f"{origin}: " if origin else "") + why)
    # the longest first (a row without a time last); the skipped in the file's order
    out.sort(key=lambda k: (not np.isfinite(k[2]), k[2] if np.isfinite(k[2]) else 0.0))
    return [(label, oi) for label, oi, _ in out], skipped


def dominant_dtype(rows) -> str:
    """The compute type of most of ``rows``' FLOPs, each row's being its dominant one
    (``dtype_of``: the ``dtype`` column, else the precision with the most FLOPs); fp32 for no
    rows."""
    from ..models.common import dtype_of

    df = getattr(rows, "df", rows)
    if df is None or len(df) == 0:
        return "fp32"
    f = df["flops"].to_numpy(float)
    weight = np.where(np.isfinite(f) & (f > 0), f, 0.0)
    if not weight.any():  # no FLOP counts: the type of most rows
        weight = np.ones(len(df))
    return str(pd.Series(weight).groupby(dtype_of(df)).sum().idxmax())


KERNEL_LINES = ("-", "--", ":", "-.", (0, (6, 2, 1, 2, 1, 2)), (0, (1, 3)))
MAX_KERNELS = len(KERNEL_LINES)  # kernel lines a picture tells apart, one dash pattern each


def quadrant_data(gpus, rows=None, *, kernels=(), precision: str | None = None,
                  which: str = "peak") -> dict:
    """The quadrant-split view of ``gpus`` (GPU objects or names) as plain numbers (``gpuproj
    quadrant --json`` prints them): ``precision`` (the compute axis; default: the rows'
    ``dominant_dtype``, else fp32), ``values`` (``which``), ``gpus`` (``points_from_gpus``),
    ``kernels`` (the rows' with FLOPs and DRAM bytes, then ``kernels`` [(label, I)]: each
    ``label``, ``intensity_flop_per_byte``, ``from_profile`` (a row's, not one of
    ``kernels``) and, per GPU id, ``bound`` and ``attainable_flops_per_s``) and ``skipped`` (a
    line per GPU or row left out, with why)."""
    found, skipped = kernels_from_rows(rows) if rows is not None else ([], [])
    precision = precision or (dominant_dtype(rows) if rows is not None else "fp32")
    points, left_out = points_from_gpus(gpus, precision, which)
    if not points:
        raise GpuprojError(f"no GPU has both a DRAM bandwidth and a {precision} compute "
                           "throughput" + (f" ({'; '.join(left_out)})" if left_out else ""))
    return {"precision": precision, "values": which, "gpus": points,
            "kernels": [{"label": lb, "intensity_flop_per_byte": oi,
                         "from_profile": i < len(found),
                         "bound": {p["id"]: classify(*_rates(p), oi) for p in points},
                         "attainable_flops_per_s": {p["id"]: attainable(*_rates(p), oi)
                                                    for p in points}}
                        for i, (lb, oi) in enumerate([*found, *kernels])],
            "skipped": left_out + skipped}


def draw(ax, points, kernels, max_kernels: int = MAX_KERNELS) -> None:
    """Draw GPU points, kernel half-lines and each GPU's arrow to its roofline point on ``ax``
    (the first kernel gets the arrows)."""
    from . import _style as st

    if not points:
        raise GpuprojError("no GPU has both a DRAM bandwidth and a compute throughput")
    bws, cs = (np.array(v) for v in zip(*map(_rates, points)))
    bu, bf = st.rate_unit(bws, "B/s")
    cu, cf = st.rate_unit(cs, "FLOP/s")
    xmax = bws.max() * 1.3 / bf
    ymax = cs.max() * 1.3 / cf
    ks = list(kernels)[:max_kernels]
    for i, (label, oi) in enumerate(ks):
        # the half-line y = oi x in plot units (x in bf B/s, y in cf FLOP/s)
        slope = oi * bf / cf
        x_end = min(xmax, ymax / slope) if slope > 0 else xmax
        # the first kernel solid black, the others grey, each with its own dash pattern (the
        # GPUs have the colours)
        ax.plot([0, x_end], [0, slope * x_end], color="#111111" if i == 0 else "#777777",
                lw=1.8 if i == 0 else 1.2, ls=KERNEL_LINES[i % len(KERNEL_LINES)],
                label=st.literal(st.short(label, 36) + ("" if "FLOP/B" in label
                                                        else f" (I = {oi:.3g} FLOP/B)")))
    for j, p in enumerate(points):
        x, y = (v / f for v, f in zip(_rates(p), (bf, cf)))
        color = st.TARGET_COLORS[j % len(st.TARGET_COLORS)]
        # GPUs are named in the legend: labels next to the points collide where GPUs are close
        ax.plot([x], [y], "o", color=color, ms=8, zorder=3,
                label=st.literal(st.short(p["label"], 30)))
        if ks:
            oi = ks[0][1]
            bw, compute = _rates(p)
            if classify(bw, compute, oi) == "memory":
                tx, ty = x, oi * bw / cf
            else:
                tx, ty = compute / oi / bf, y
            ax.annotate("", xy=(tx, ty), xytext=(x, y),
                        arrowprops={"arrowstyle": "->", "ls": "--", "color": color, "lw": 1.2})
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, ymax)
    ax.set_xlabel(f"DRAM bandwidth ({bu})")
    ax.set_ylabel(f"compute throughput ({cu})")
    if ks:
        # one note along the top: the GPU points lie at most at 1 / 1.3 of the height and their
        # arrows only go down or left, so nothing crosses it (a note in the compute-bound
        # corner, under the lines, ran into the arrows of high-bandwidth GPUs)
        # on a white ground: the steep lines of high-intensity kernels cross it
        ax.text(0.03, 0.95, "above a kernel's line: memory-bound; below it: compute-bound",
                transform=ax.transAxes, va="top", fontsize=9, color="#444444", zorder=4,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 2})
        # beside the axes: inside, it covers GPU points; below, kernel labels with their
        # intensities were wider than the figure
        ax.plot([], [], ls="--", color="#666666", label=f"to the roofline point for "
                f"{st.literal(st.short(ks[0][0], 24))}")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    ax.grid(alpha=0.3)


def data_figure(data: dict):
    """The picture of ``quadrant_data``'s GPUs and first ``MAX_KERNELS`` kernels; adds
    ``shown``, the labels of the kernels drawn, to ``data``."""
    rows = [(k["label"], k["intensity_flop_per_byte"]) for k in data["kernels"]
            if k["from_profile"]]
    asked = [(k["label"], k["intensity_flop_per_byte"]) for k in data["kernels"]
             if not k["from_profile"]][:MAX_KERNELS]
    # the intensities asked for are drawn, the longest rows in the lines left: rows first
    # pushed them out of the picture unsaid
    room = MAX_KERNELS - len(asked)
    kernels = rows[:room] + asked
    data["shown"] = [lb for lb, _ in kernels]
    few = (f"; the {room} longest of {len(rows)} kernel rows" if len(rows) > room else "")
    return _figure(data["gpus"], kernels, f"Quadrant-split view ({data['precision']} FMA, "
                                          f"{data['values']} values{few})")


def plot_quadrant(points, kernels, path, title: str = "Quadrant-split view"):
    """Draw precomputed ``points`` (``points_from_gpus``) and ``kernels`` [(label, I)] to
    ``path`` (PNG, SVG or PDF); returns the path."""
    from . import _style as st

    return st.save(_figure(points, kernels, title), path)


def _figure(points, kernels, title):
    from . import _style as st

    fig = st.figure(10.0, 5.2)
    with st.rc():
        ax = fig.add_subplot()
        draw(ax, points, kernels)
        # over the figure: over the axes alone, a long title was cut at both ends
        fig.suptitle(st.literal(title))
    return fig
