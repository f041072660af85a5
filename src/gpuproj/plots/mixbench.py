"""Pictures of a ``gpuproj bench`` result (the raw JSON, never text): the measured roofline
(mixbench-style: achieved throughput against operational intensity, one series per precision,
with the measured and the datasheet roofs) and the bandwidth-versus-working-set sweep."""

from __future__ import annotations

import math

import numpy as np

from ..bench.checks import mixbench_series
from ..errors import GpuprojError

PREC_FIELD = {"fp32": "fp32_fma_flops_per_s", "fp64": "fp64_fma_flops_per_s",
              "fp16x2": "fp16_fma_flops_per_s"}
PREC_COLOR = {"fp32": "#0072B2", "fp64": "#D55E00", "fp16x2": "#009E73"}


def roofline_series(raw) -> dict:
    """precision -> {"oi", "flops_per_s", "bw_roof", "compute_roof"} from the mixbench sweep
    (``bench.checks.mixbench_series``); ``compute_roof`` is the precision's FMA measurement,
    the catalog's value (nan where not measured).
    """
    series = mixbench_series(raw)
    if not series:
        raise GpuprojError("the result has no mixbench sweep (run the 'mixbench' group)")
    return {p: {"oi": s["oi"], "flops_per_s": s["flops_per_s"], "bw_roof": s["bw_roof"],
                "compute_roof": s["fma"]["value"] if s["fma"] else math.nan}
            for p, s in series.items()}


def roofline_figure(raw, gpu=None):
    """The measured roofline: markers = achieved FLOP/s per intensity, solid = measured roof
    (sweep bandwidth, FMA benchmark), dashed = datasheet roof of ``gpu`` where it has peaks."""
    from . import _style as st

    series = roofline_series(raw)
    fig = st.figure(7.5, 5.0)
    with st.rc():
        ax = fig.add_subplot()
        allx = np.concatenate([s["oi"] for s in series.values()])
        x = np.geomspace(allx.min() / 2, allx.max() * 2, 200)
        # TFLOP/s or GFLOP/s, as every other picture
        unit, uf = st.rate_unit(np.concatenate([s["flops_per_s"] for s in series.values()]),
                                "FLOP/s")
        for i, (p, s) in enumerate(series.items()):
            c = PREC_COLOR.get(p, "#444444")
            # a marker shape each, hollow: at low intensity every precision reaches the same
            # bandwidth and the points lie on each other
            ax.plot(s["oi"], s["flops_per_s"] / uf, "osD^v"[i % 5], color=c, mfc="none",
                    mew=1.6, ms=7 + 2 * (i % 3), label=f"{p} achieved")
            roof = s["bw_roof"] * x
            if np.isfinite(s["compute_roof"]):
                roof = np.minimum(roof, s["compute_roof"])
            ax.plot(x, roof / uf, "-", color=c, lw=1.2, alpha=0.8, label=f"{p} measured roof")
            if gpu is not None:
                pk_c, pk_b = gpu.peak(PREC_FIELD.get(p, "")), gpu.peak("dram_bw_bytes_per_s")
                if np.isfinite(pk_c) and np.isfinite(pk_b):
                    ax.plot(x, np.minimum(pk_b * x, pk_c) / uf, "--", color=c, lw=1.0,
                            label=f"{p} datasheet roof")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("operational intensity (FLOP/byte)")
        ax.set_ylabel(f"throughput ({unit})")
        ax.set_title(st.literal(f"Measured roofline: {raw['device']['name']} ({raw['date']})"))
        ax.grid(alpha=0.3, which="both")
        ax.legend(frameon=False, fontsize=8.5)
    return fig


def plot_roofline(raw, path, gpu=None):
    from . import _style as st

    return st.save(roofline_figure(raw, gpu), path)


def working_set_figure(raw):
    """Read bandwidth against working-set size (log-log), with the device's L2 size marked."""
    from . import _style as st

    pts = (raw.get("sweeps") or {}).get("working_set") or []
    if not pts:
        raise GpuprojError("the result has no working-set sweep (run the 'cache' group)")
    ws = np.array([p["working_set_bytes"] for p in pts], float)
    bw = np.array([p["bytes_per_s"] for p in pts], float)
    unit, f = st.rate_unit(bw, "B/s")
    fig = st.figure(7.5, 4.5)
    with st.rc():
        ax = fig.add_subplot()
        ax.plot(ws, bw / f, "o-", color=st.COLORS["dram"])
        l2 = raw["device"].get("l2_bytes")
        if l2 and raw["device"].get("device_type") == "GPU":
            ax.axvline(l2, color=st.COLORS["l2"], ls="--", lw=1, label="L2 size")
            ax.legend(frameon=False)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("working set (bytes)")
        ax.set_ylabel(f"read bandwidth ({unit})")
        ax.set_title(st.literal(f"Bandwidth vs working set: {raw['device']['name']}"))
        ax.grid(alpha=0.3, which="both")
    return fig


def plot_working_set(raw, path):
    from . import _style as st

    return st.save(working_set_figure(raw), path)
