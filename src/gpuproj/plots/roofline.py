"""Rooflines with kernel-specific ceilings (Van Lanker et al., Fig. 2): per GPU the bandwidth
ceilings of L1, L2 and DRAM (Eqs. 6-8) and the shared-memory bandwidth, the FMA and ADD/MUL
peaks, the kernel's instruction-mix ceiling (Eq. 2) and warp-usage ceiling (Eq. 3); the kernel
as one point per memory level at its operational intensity (Eq. 10). With a target GPU, a second
panel shows the target's ceilings, the projected performance per level (Eq. 9) and the projected
interval as a shaded region.

``roofline_data`` computes everything as plain numbers (``gpuproj roofline --json`` prints it);
``roofline_figure`` / ``roofline`` draw it.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..models.hierarchical import LEVELS, Hierarchical
from ..names import one_gpu
from ..profiles.table import ProfileTable
from . import _style as st
from . import drawn_gpu

_SCALARS = ("fma_flops_per_s", "addmul_flops_per_s", "mix_flops_per_s", "warp_usage",
            "perf_ceil_flops_per_s")


def _row(ceil: dict, i: int) -> dict:
    out = {k: _f(ceil[k][i]) for k in _SCALARS}
    out["dtype"] = str(ceil["dtype"][i])
    for lvl in LEVELS:
        for k in ("bw_{}_bytes_per_s", "nplus_{}_bytes", "oi_{}_flop_per_byte",
                  "roof_{}_flops_per_s"):
            out[k.format(lvl)] = _f(ceil[k.format(lvl)][i])
    return out


def _f(v):
    v = float(v)
    return v if np.isfinite(v) else None


def _nan(v):
    return np.nan if v is None else float(v)


def roofline_data(table: ProfileTable, gpu=None, target=None, kernel: str | None = None,
                  model: Hierarchical | None = None) -> dict:
    """The roofline of every kernel row of ``table`` measured on ``gpu`` (None: the table's
    only GPU) and its projection to ``target`` (one GPU each: a name, a GPU file or a
    ``GPU``), as plain numbers in SI units.

    Returns ``{"gpu", "target", "hardware", "kernels", "skipped"}``: ``hardware`` holds the
    GPUs' shared-memory bandwidth ceilings (B/s); each entry of ``kernels`` has ``kernel``,
    ``config``, ``flops``, ``time_s`` (per launch), ``launches``, ``perf_flops_per_s``
    (measured, FLOP / time),
    ``source`` (the ceilings and OIs of ``Hierarchical.ceilings``) and, with a target,
    ``target`` (the target's ceilings), ``projected_flops_per_s`` per level (Eq. 9),
    ``projected_time_s`` per level, ``low_s``/``high_s``/``point_s`` (the interval and its
    mean, as ``gpuproj predict`` with method ``hierarchical``) and ``measured_target_time_s``
    when ``table`` also holds the target's measurement of the same kernel and configuration.
    Rows without FLOPs, or without bytes at every memory level (DRAM, L2, L1: tables of
    analytic FLOPs such as KernelTuner's), have no operational intensity and are listed in
    ``skipped``.
    """
    model = model or Hierarchical()
    src = drawn_gpu(table, gpu, "gpu")
    tgt = one_gpu(target, "target") if target is not None else None
    rows = table.on(src.id) if src.id in table.gpus else None
    if rows is None or len(rows) == 0:
        raise InputError(f"no rows measured on {src.id} (the file has "
                         f"{', '.join(table.gpus) or 'no rows'})", path=table.origin or None)
    rows = rows.select(kernel)
    df = rows.df
    flops = df["flops"].to_numpy(float)
    nbytes = df[["dram_bytes", "l2_bytes", "l1_bytes"]].to_numpy(float)
    has_flops = np.isfinite(flops) & (flops > 0)
    has = has_flops & (np.isfinite(nbytes) & (nbytes > 0)).any(axis=1)
    skipped = [f"{st.short(st.kernel_name(k), 80)} [{c}]: no {'byte' if f else 'FLOP'} count, "
               "so no operational intensity"
               for k, c, f in zip(df.loc[~has, "kernel"], df.loc[~has, "config"], has_flops[~has])]
    df = df.loc[has].reset_index(drop=True)
    flops = flops[has]
    # each GPU's missing measured ceilings derive from the other's measured/peak ratio, as
    # in the projection: the source's ceilings differ with the target
    out = {"gpu": src.id, "gpu_name": src.name, "target": tgt.id if tgt else None,
           "target_name": tgt.name if tgt else None, "kernels": [], "skipped": skipped,
           "hardware": {src.id: _hardware(src, tgt)}}
    if tgt is not None:
        out["hardware"][tgt.id] = _hardware(tgt, src)
    if len(df) == 0:
        return out
    cs = model.ceilings(df, src, reference=tgt, counted_on=src)
    ct = model.ceilings(df, tgt, reference=src) if tgt is not None else None
    for gpu, c in ((src, cs), (tgt, ct)):
        if c is not None:  # a ceiling the model found another way (an FP16 rate from FP32)
            kinds = out["hardware"][gpu.id]["kinds"]
            kinds.update({f: k for f, k in c["kinds"].items() if f in kinds})
    measured = _measured(table, tgt, df) if tgt is not None else {}
    out["notes"] = {src.id: cs["notes"], **({tgt.id: ct["notes"]} if tgt else {})}
    t_s = df["time_s"].to_numpy(float)
    for i in range(len(df)):
        k = {"kernel": df.at[i, "kernel"], "config": df.at[i, "config"], "flops": float(flops[i]),
             "time_s": float(t_s[i]), "launches": _f(df.at[i, "launches"]),
             "perf_flops_per_s": float(flops[i] / t_s[i]),
             "source": _row(cs, i)}
        # checked before the projection, which divides by the source's roofs
        why = _undrawable(k, "source")
        if tgt is not None and why is None:
            k["target"] = _row(ct, i)
            k.update(_project(k))
            key = (k["kernel"], k["config"])
            if key in measured:
                (k["measured_target_time_s"], k["measured_target_oi"],
                 k["measured_target_flops"]) = measured[key]
            why = _undrawable(k, "target")
        if why is None:
            out["kernels"].append(k)
        else:
            skipped.append(f"{st.short(st.kernel_name(k['kernel']), 80)} [{k['config']}]: "
                           f"{why}")
    return out


# the log axes pad the values they show by up to 300x: beyond these a limit is 0 or infinite
_DRAWABLE = (np.finfo(float).tiny * 1e3, np.finfo(float).max / 1e3)


def _undrawable(k: dict, side: str) -> str | None:
    """Why kernel entry ``k`` cannot be drawn on the log axes of ``side``'s panel (a
    FLOP rate or an intensity of 0, infinity or near either, from absurd counts or times), or
    None."""
    values = {f"{st.LEVEL_NAMES[lvl]} operational intensity": k[side][f"oi_{lvl}_flop_per_byte"]
              for lvl in LEVELS}
    if side == "source":
        values["FLOP/s"] = k["perf_flops_per_s"]
    else:
        values.update({f"projected FLOP/s via {st.LEVEL_NAMES[lvl]}": v
                       for lvl, v in k["projected_flops_per_s"].items()})
        if k["point_s"]:
            values["projected FLOP/s"] = k["flops"] / k["point_s"]
        if k.get("measured_target_time_s"):
            values["FLOP/s measured on the target"] = ((k.get("measured_target_flops")
                                                        or k["flops"])
                                                       / k["measured_target_time_s"])
    lo, hi = _DRAWABLE
    for what, v in values.items():
        if v is not None and not lo < v < hi:
            return f"its {what} ({v:.3g}) is too {'small' if v <= lo else 'large'} to draw"
    return None


def _hardware(gpu, reference) -> dict:
    """The GPU's shared-memory bandwidth, and whether each ceiling drawn is a datasheet
    peak, measured, or derived from ``reference``'s measured/peak ratio (``kinds``)."""
    c = gpu.ceiling("shared_bw_bytes_per_s", reference)
    fields = [f"{lvl}_bw_bytes_per_s" for lvl in LEVELS] + [
        f"{p}_{op}_flops_per_s" for p in ("fp64", "fp32", "fp16") for op in ("fma", "addmul")]
    return {"shared_bw_bytes_per_s": _f(c.value), "shared_bw_kind": c.kind,
            "kinds": {f: gpu.ceiling(f, reference).kind for f in fields}}


def _project(k: dict) -> dict:
    """Eq. 9 per level: Perf_t = Perf_s,meas / roof_s(OI_s) x roof_t(OI_t), with the source's
    FLOP count on the target; the interval is [min, max] of the level times and the point their
    mean, exactly as ``Hierarchical`` without extensions."""
    perf, times = {}, {}
    for lvl in LEVELS:
        rs = _nan(k["source"][f"roof_{lvl}_flops_per_s"])
        rt = _nan(k["target"][f"roof_{lvl}_flops_per_s"])
        p = k["perf_flops_per_s"] / rs * rt
        if np.isfinite(p) and p > 0:
            perf[lvl] = p
            times[lvl] = k["flops"] / p
    if not times:
        return {"projected_flops_per_s": {}, "projected_time_s": {}, "low_s": None,
                "high_s": None, "point_s": None}
    t = np.array(list(times.values()))
    return {"projected_flops_per_s": perf, "projected_time_s": times, "low_s": float(t.min()),
            "high_s": float(t.max()), "point_s": float(t.mean())}


def _measured(table, tgt, src_df) -> dict:
    """(kernel, config) -> (time on the target, its OIs per level where it has byte counts, its
    FLOP count there, None where it has none)."""
    if tgt.id not in table.gpus:
        return {}
    d = table.on(tgt.id).df
    keys = set(zip(src_df["kernel"], src_df["config"]))
    d = d.loc[np.fromiter((k in keys for k in zip(d["kernel"], d["config"])), bool,
                          len(d))].reset_index(drop=True)
    if len(d) == 0:
        return {}
    c = Hierarchical().ceilings(d, tgt)
    out = {}
    for i in range(len(d)):
        oi = {lvl: _f(c[f"oi_{lvl}_flop_per_byte"][i]) for lvl in LEVELS}
        out[(d.at[i, "kernel"], d.at[i, "config"])] = (float(d.at[i, "time_s"]), oi,
                                                        _f(d.at[i, "flops"]))
    return out


# drawing ------------------------------------------------------------------------------------
def roofline(table: ProfileTable, path, gpu, target=None, kernel: str | None = None,
             max_kernels: int = 4) -> dict:
    """Draw the rooflines of ``table``'s kernels on ``gpu`` (and ``target``) into ``path``
    (.png, .svg or .pdf). Returns the data drawn (``roofline_data``) with ``shown`` (rows
    drawn) added."""
    st.check_path(path)
    data = roofline_data(table, gpu, target, kernel)
    fig = roofline_figure(data, max_kernels=max_kernels)
    st.save(fig, path)
    return data


def roofline_figure(data: dict, max_kernels: int = 4):
    """One row of panels per kernel (the ``max_kernels`` longest-running, by time x launches,
    as the projection bars choose them): the source GPU, and the target GPU when ``data`` has
    one."""
    ks = data["kernels"]
    if not ks:
        raise InputError("nothing to draw: every kernel row was skipped "
                         f"({len(data['skipped'])} row(s); the first: {data['skipped'][0]})")
    # a kernel launched 1000 times runs longer than one launched once at twice its time
    order = sorted(range(len(ks)),
                   key=lambda i: -ks[i]["time_s"] * (ks[i]["launches"] or 1))[:max_kernels]
    data["shown"] = [(ks[i]["kernel"], ks[i]["config"]) for i in order]
    ncol = 2 if data["target"] else 1
    with st.rc():
        fig = st.figure(6.6 * ncol, 6.9 * len(order) + (0.4 if len(ks) > len(order) else 0))
        axes = fig.subplots(len(order), ncol, squeeze=False)
        unit = _perf_unit(data, order)
        configs = {k["kernel"] for k in ks}
        hw_s = data["hardware"][data["gpu"]]
        hw_t = data["hardware"][data["target"]] if ncol == 2 else None
        for r, i in enumerate(order):
            k = ks[i]
            name = st.short(st.kernel_name(k["kernel"]), 48)
            if len(configs) < len(ks):  # the same kernel in several configurations
                name += f"\n{st.short(k['config'], 48)}"
            # both panels share the x range, so each ceiling line spans the whole panel
            xr = [_xrange(k["source"], hw_s)]
            if ncol == 2:
                # the target's own counts place its measured star, at OIs of their own
                xr.append(_xrange(k["target"], hw_t, (k.get("measured_target_oi") or {}).values()))
            xlim = (min(a for a, _ in xr), max(b for _, b in xr))
            _panel(axes[r][0], k, "source", hw_s, unit,
                   f"{name}\non {data['gpu_name']} (measured time)", xlim)
            if ncol == 2:
                _panel(axes[r][1], k, "target", hw_t, unit,
                       f"{name}\nprojected to {data['target_name']}", xlim)
                _share_limits(axes[r][0], axes[r][1])
        if len(ks) > len(order):
            fig.suptitle(f"{len(order)} of {len(ks)} kernel rows (the longest-running); "
                         "select others with --kernel", fontsize=11)
    return fig


def _perf_unit(data, order):
    vals = []
    for i in order:
        k = data["kernels"][i]
        vals += [k["source"]["fma_flops_per_s"], k.get("target", {}).get("fma_flops_per_s")]
    return st.rate_unit([v for v in vals if v], "FLOP/s")


def _share_limits(a, b):
    x0, x1 = a.get_xlim(), b.get_xlim()
    y0, y1 = a.get_ylim(), b.get_ylim()
    for ax in (a, b):
        ax.set_xlim(min(x0[0], x1[0]), max(x0[1], x1[1]))
        ax.set_ylim(min(y0[0], y1[0]), max(y0[1], y1[1]))


def _top(c):
    v = np.array([_nan(c["fma_flops_per_s"]), _nan(c["mix_flops_per_s"]),
                  _nan(c["perf_ceil_flops_per_s"])])
    if not np.isfinite(v).any():  # a GPU file without this precision's peak
        raise InputError(f"no {c['dtype']} compute ceiling to draw: a GPU has no "
                         f"{c['dtype']}_fma_flops_per_s (--kernel draws the others)")
    return float(np.nanmax(v))


def _bandwidths(c, hw):
    bws = {lvl: c[f"bw_{lvl}_bytes_per_s"] for lvl in LEVELS if c[f"bw_{lvl}_bytes_per_s"]}
    if hw.get("shared_bw_bytes_per_s"):
        bws["shared"] = hw["shared_bw_bytes_per_s"]
    return bws


def _xrange(c, hw, more=()):
    """OI range (FLOP/byte) that shows the kernel's points, every ridge point and the OIs
    ``more``."""
    ois = [c[f"oi_{lvl}_flop_per_byte"] for lvl in LEVELS if c[f"oi_{lvl}_flop_per_byte"]]
    ois += [x for x in more if x]
    ridges = [_top(c) / b for b in _bandwidths(c, hw).values()]
    xs = [x for x in ois + ridges if x and np.isfinite(x) and x > 0] or [1.0]
    return min(xs) / 6, max(xs) * 6


def _panel(ax, k, side, hw, unit, title, xlim):
    uname, uf = unit
    c = k[side]
    fma = _nan(c["fma_flops_per_s"])
    top = _top(c)
    bws = _bandwidths(c, hw)
    xlo, xhi = xlim
    x = np.geomspace(xlo, xhi, 200)

    # bandwidth ceilings (kernel-specific for L1/L2/DRAM, the GPU's for shared memory)
    for lvl in ("l1", "l2", "dram", "shared"):
        if lvl not in bws:
            continue
        b = bws[lvl]
        if lvl == "shared":
            lab = f"shared memory: {st.fmt_rate(b, 'B/s')} ({hw['shared_bw_kind']})"
            style = {"ls": (0, (4, 2)), "lw": 1.6}
        else:
            eq = {"l1": 6, "l2": 7, "dram": 8}[lvl]
            lab = (f"{st.LEVEL_NAMES[lvl]} ceiling (Eq. {eq}): {st.fmt_rate(b, 'B/s')} "
                   f"({hw['kinds'][f'{lvl}_bw_bytes_per_s']})")
            style = {"ls": "-", "lw": 2.0}
        ax.plot(x, np.minimum(b * x, top) / uf, color=st.COLORS[lvl], label=lab, **style)

    # say why a level the kernel uses has no line (and no projection): no bandwidth of its
    # own, or (Eqs. 6-7) none of a level below it, whose bytes pass through it
    missing = [lvl for lvl in LEVELS if lvl not in bws and c[f"nplus_{lvl}_bytes"]]
    none = [lvl for lvl in missing if hw["kinds"].get(f"{lvl}_bw_bytes_per_s") == "missing"]
    for levels, why in ((none, "no bandwidth in the catalog"),
                        ([lvl for lvl in missing if lvl not in none],
                         "no ceiling without the bandwidth of a level below")):
        if levels:
            names = ", ".join(st.LEVEL_NAMES[lvl] for lvl in levels)
            ax.plot([], [], " ", label=f"{names}: {why}")

    # compute ceilings
    p = c["dtype"].upper()
    kind = {op: hw["kinds"].get(f"{c['dtype']}_{op}_flops_per_s", "") for op in ("fma", "addmul")}
    kind = {op: "FP32's, none known" if k == "instead" else k for op, k in kind.items()}
    lines = [("fma", fma, f"{p} FMA: {st.fmt_rate(fma, 'FLOP/s')} ({kind['fma']})", "-", 2.0),
             ("addmul", _nan(c["addmul_flops_per_s"]),
              f"{p} ADD/MUL: {st.fmt_rate(_nan(c['addmul_flops_per_s']), 'FLOP/s')} "
              f"({kind['addmul']})", "--", 1.6),
             ("mix", _nan(c["mix_flops_per_s"]),
              f"kernel's mix (Eq. 2): {st.fmt_rate(_nan(c['mix_flops_per_s']), 'FLOP/s')}",
              "-.", 1.8),
             ("warp", _nan(c["perf_ceil_flops_per_s"]),
              (f"warp usage {c['warp_usage']:.2f} (Eq. 3): "
               f"{st.fmt_rate(_nan(c['perf_ceil_flops_per_s']), 'FLOP/s')}"), ":", 2.6)]
    for role, v, lab, ls, lw in lines:
        if np.isfinite(v):
            ax.axhline(v / uf, color=st.COLORS[role], ls=ls, lw=lw, label=lab)

    ys = []
    if side == "source":
        perf = k["perf_flops_per_s"]
        for lvl in LEVELS:
            oi = c[f"oi_{lvl}_flop_per_byte"]
            if oi:
                ax.plot(oi, perf / uf, st.LEVEL_MARKERS[lvl], ms=10, color=st.COLORS[lvl],
                        mec="black", mew=1.2, zorder=5,
                        label=f"kernel at {st.LEVEL_NAMES[lvl]} OI = {oi:.3g} FLOP/B")
        ys.append(perf)
    else:
        proj = k.get("projected_flops_per_s") or {}
        # where the measured star goes without the target's own OIs: the projected levels',
        # else every level's OI of the kernel (a target without a finite roof projects none)
        xo = [c[f"oi_{lvl}_flop_per_byte"] for lvl in (proj or LEVELS)
              if c[f"oi_{lvl}_flop_per_byte"]]
        for lvl, pf in proj.items():
            oi = c[f"oi_{lvl}_flop_per_byte"]
            ax.plot(oi, pf / uf, st.LEVEL_MARKERS[lvl], ms=10, mfc="white", color=st.COLORS[lvl],
                    mew=2, zorder=5, label=f"projected via {st.LEVEL_NAMES[lvl]} (Eq. 9)")
            ys.append(pf)
        if proj:
            lo, hi = min(proj.values()), max(proj.values())
            span = np.geomspace(min(xo) / 2, max(xo) * 2, 20)
            if len(proj) > 1:  # one level: no interval to shade (the point is the interval)
                ax.fill_between(span, lo / uf, hi / uf, color=st.COLORS["dram"], alpha=0.18,
                                lw=0, zorder=1, label=f"projected interval: "
                                f"{st.fmt_rate(lo, 'FLOP/s')} - {st.fmt_rate(hi, 'FLOP/s')}")
            mean = k["flops"] / k["point_s"]
            ax.plot(span, np.full_like(span, mean / uf), color=st.COLORS["point"], lw=2.2,
                    label=f"projected point (mean time): {st.fmt_rate(mean, 'FLOP/s')}", zorder=4)
        if k.get("measured_target_time_s"):
            # the target's own counts where its profile has them: its OIs place the star
            own = k.get("measured_target_flops")
            mp = (own or k["flops"]) / k["measured_target_time_s"]
            moi = [v for v in (k.get("measured_target_oi") or {}).values() if v] or xo
            if moi:  # no OI at all (no bytes anywhere): nowhere on the x axis to put it
                ax.plot(moi, np.full(len(moi), mp / uf), "*", ms=15, color="black", mec="white",
                        zorder=6, label=f"measured on target ({'its' if own else 'source'} "
                                        f"FLOPs, each level's OI): {st.fmt_rate(mp, 'FLOP/s')}")
                ys.append(mp)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ys = [y for y in ys if y and np.isfinite(y)] or [top / 100]
    ax.set_xlim(xlo, xhi)
    # a row faster than its ceilings (counts in doubt) projects above them too: still shown
    ax.set_ylim(min(min(ys) / 5, top / 300) / uf, max(max(ys), top) * 2.5 / uf)
    ax.set_xlabel("Operational intensity (FLOP/byte)")
    ax.set_ylabel(f"Performance ({uname})")
    ax.set_title(st.literal(title))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1, frameon=False,
              handlelength=2.6)
