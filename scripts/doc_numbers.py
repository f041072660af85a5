#!/usr/bin/env python3
"""Recompute numbers that the prose of the docs quotes and no other script prints.

Each section prints what one passage rests on, where the passage names it:

- ``kerneltuner-architectures`` (docs/accuracy_analysis.md, "Several measured GPUs"): the
  bandwidth ratio's log error per configuration on KernelTuner convolution, each GPU pair's
  mean removed, correlated between two targets over the same (source, configuration), and the
  share of the log-error variance that this per-configuration part holds;
- ``launch-overhead-hidden`` (accuracy_analysis.md, "Kernels too small to fill the GPU";
  ``Hierarchical._launch_split``): `hierarchical-ext` on gpu-benches' small kernels with each
  GPU's ``launch_overhead_s`` hidden in turn, the overhead kept inside the time where only one
  GPU has it (as before the rule) and taken as the other GPU's (the rule), MAPE in % of that
  GPU's pairs as target and as source, and with both measured;
- ``bands-without-suite`` (accuracy_analysis.md, "Our suite is in the bands"): the coverage of
  the seed report's GPUs -> ours pairs by the bands fitted on the public tables alone and by
  those fitted with the suite too (in-sample), their median predicted / measured time, and
  `hierarchical-ext`'s cross-architecture band both ways;
- ``band-levels`` (accuracy_analysis.md, "The hierarchical interval collapses to a point"):
  the bands' coverage held out by data source when more than 90 % is requested, and with the
  level chosen per method on the other sources alone (nested), with the width each costs;
- ``issue-rate-interval`` (accuracy_analysis.md, "Tables with analytic FLOPs only"):
  `hierarchical` with the `issue_rate` extension alone on the KernelTuner tables, its interval
  (high / low) per pair of architectures and its coverage;
- ``boost-base-clocks`` (docs/ncu.md, `--clock-control none`): boost / base clock of the
  catalog's GPUs that list both;
- ``pocl-fp64-spills`` (docs/bench.md, `-DVW64`): FP64 vector moves to and from the stack in
  PoCL's x86 code for compute.cl's ``fp64_fma`` at 8 and 4 FP64 lanes (objdump of the kernel
  PoCL builds into a scratch cache; needs pyopencl, PoCL's CPU device and objdump);
- ``pocl-fp64-rates`` (docs/bench.md, the same passage): FP32 and FP64 FMA rates of the quick
  suite's compute kernels on the first OpenCL device at the device's vector width, FP64 at 4
  and at 8 lanes, three runs each (the rate of each run's median time, as ``gpuproj bench``);
- ``l1-sweep`` (accuracy_analysis.md, "the gpu-benches L1 sweep"): per GPU of gpu-benches'
  L1 sweep, its L1 rate, where the rate falls past the L1 and how far, and past about half its
  L2; per GPU pair, `hierarchical` and `hierarchical-ext`'s MAPE; `hierarchical-ext`'s
  capacity interval there (how many pairs, their error, its coverage);
- ``band-alone-outside`` (docs/learned.md, coverage): the hybrids' leave-one-GPU-out coverage
  with the interval outside the training GPUs' range widened towards the band (what gpuproj
  does, ``LearnedModel._widen_outside``) and with the band in place of the conformal bounds
  there (the prediction kept inside), on the seed report (``--tables`` for others; KernelTuner
  takes minutes per table);
- ``neusight-bytes`` (accuracy_analysis.md, "Tables with analytic FLOPs only"): NeuSight's
  bmm and conv with each operator's compulsory traffic (every tensor read or written once,
  FP32) added as DRAM bytes, and as L2 bytes with that working set, against FLOPs alone (what
  the reader gives): the roofline methods' MAPE / median APE, the share of rows those bytes
  make memory-bound, the median share of each datasheet bound the rows reach, and how much
  slower the memory-bound rows run on the Tesla P4 than on the A100;
- ``neusight-durations`` (accuracy_analysis.md, the same passage): per GPU of NeuSight's bmm and
  conv, how far `hierarchical-ext` projects it from its time as the target, for operators
  under 0.1 ms, 0.1-1 ms and over 1 ms on the source (fitted over the pairs, the boards of
  250-300 W at mean 1); the error of the pairs with the 70 and 75 W boards (T4, P4) and of
  their long rows; the MAPE with those two boards' six factors taken out (in-sample); and the
  compute ratio on the long compute-bound rows to the two boards;
- ``small-kernels-fitted-floors`` (docs/learned.md, "Training and evaluation"): gpu-benches'
  small kernels, leave-one-GPU-out on the catalog without gpu-benches' measurements (as the
  learned experiments), with each training GPU's launch floor, its shortest time in the
  training rows, added to the physics the hybrids stand on (the held-out GPU takes the
  source's, as ``Hierarchical._launch_split`` does where one GPU has none): the analytical
  projections' and the hybrids' MAPE / median APE with and without it, per held-out GPU, and
  `hierarchical-ext`'s median predicted / measured time with the floors by held-out GPU and
  working set.

    python scripts/doc_numbers.py [SECTION ...] [--data DIR] [--tables NAME,...]

About 2 minutes on 2 cores for every section (the band fits evaluate every public table).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import accuracy as acc  # noqa: E402  (the tables, their band pairs and our suite's)

SMALL_KERNELS = "gpu-benches small kernels"


def table_of(data_dir, name):
    _, fmt, files, _ = next(d for d in acc.DATASETS if d[0] == name)
    return acc.load_dataset(data_dir, fmt, files)


def kerneltuner_architectures(data_dir):
    from gpuproj.catalog import resolve
    from gpuproj.evaluate import evaluate

    table = table_of(data_dir, "kerneltuner convolution")
    p = evaluate(table, "bandwidth").pairs
    e = np.log(p["time_s"] / p["true_s"])
    r = e - e.groupby([p["source"], p["target"]], observed=True).transform("mean")
    print("KernelTuner convolution, bandwidth ratio: the per-configuration part (each GPU pair's "
          f"mean removed) holds {100 * r.var() / e.var():.0f} % of the log-error variance")
    w = p.assign(r=r).pivot_table(index=["source", "kernel", "config"], columns="target",
                                  values="r", observed=True)
    arch = {g: resolve(g).architecture for g in table.gpus}
    print("correlation between two targets over the same (source, configuration):")
    for a, b in itertools.combinations(table.gpus, 2):
        d = w[[a, b]].dropna()
        print(f"  {a} ({arch[a]}) / {b} ({arch[b]}): {d[a].corr(d[b]):.2f} (n = {len(d)})")


def launch_overhead_hidden(data_dir):
    from gpuproj.evaluate import evaluate, metrics
    from gpuproj.models.hierarchical import Hierarchical

    table = table_of(data_dir, SMALL_KERNELS)
    shipped = Hierarchical.__dict__["_launch_split"]
    hidden, kept_inside = [None], [False]

    def split(t_s, source, target):
        class Hide:  # the GPU whose launch overhead is hidden measured none
            def __init__(self, gpu):
                self.gpu = gpu
                self.id = gpu.id

            def measured(self, name):
                return math.nan if self.id == hidden[0] else self.gpu.measured(name)

        s, t = Hide(source), Hide(target)
        both = all(np.isfinite(g.measured("launch_overhead_s")) for g in (s, t))
        if kept_inside[0] and not both:  # before the rule: the time scales as it is
            return t_s, 0.0, "kept inside"
        return shipped.__func__(t_s, s, t)

    def mape(p, role, gpu):
        d = p[p[role] == gpu]
        return metrics(d["time_s"], d["true_s"])["mape"]

    rows = []
    try:
        Hierarchical._launch_split = staticmethod(split)
        both = evaluate(table, "hierarchical-ext").pairs
        for g in table.gpus:
            row = {"gpu": g, "both measured, as target": mape(both, "target", g),
                   "both measured, as source": mape(both, "source", g)}
            hidden[0] = g
            for inside, label in ((True, "kept inside"), (False, "taken as the other's")):
                kept_inside[0] = inside
                p = evaluate(table, "hierarchical-ext").pairs
                row[f"{label}, as target"] = mape(p, "target", g)
                row[f"{label}, as source"] = mape(p, "source", g)
            hidden[0], kept_inside[0] = None, False
            rows.append(row)
    finally:
        Hierarchical._launch_split = shipped
    d = pd.DataFrame(rows).set_index("gpu")
    print(f"{SMALL_KERNELS}, hierarchical-ext MAPE in %, each GPU's launch overhead hidden in "
          "turn:")
    print(d.round(1).T.to_string())
    print("ranges over the GPUs: " + "; ".join(
        f"{c} {d[c].min():.1f}-{d[c].max():.1f}" for c in d.columns))
    both_roles = d[["both measured, as target", "both measured, as source"]]
    print(f"both measured, either role: {both_roles.min().min():.1f}-"
          f"{both_roles.max().max():.1f}")


def public_band_pairs(data_dir) -> list:
    """The band pairs of every public table the bands are fitted on (as scripts/accuracy.py
    builds them), one frame per table."""
    from gpuproj.evaluate import applicable_methods, evaluate

    frames = []
    for name, fmt, files, _ in acc.DATASETS:
        if name in acc.NOT_IN_BANDS:
            continue
        table = acc.load_dataset(data_dir, fmt, files)
        ev = evaluate(table, applicable_methods(table, list(acc.BASELINES) + list(acc.ANALYTICAL)))
        frames.append(acc.band_pairs(ev, name))
    return frames


def bands_without_suite(data_dir):
    from gpuproj.models.bands import band_of, fit_bands, scores

    frames = public_band_pairs(data_dir)
    suite = acc.suite_band_pairs(data_dir)
    report = next((f for f in suite if f["table"].iloc[0] == acc.SUITE_TABLES[1]), None)
    if report is None:
        print("no suite collected (data/suite/): nothing to check")
        return
    public = pd.concat(frames, ignore_index=True)
    fits = {"fitted on the public tables alone": fit_bands(public),
            "fitted with the suite (in-sample)": fit_bands(pd.concat(frames + suite,
                                                                     ignore_index=True))}

    def coverage(bands, g):
        q = np.array([[bands.get(m, {}).get(c, {}).get(b, np.nan) for b in ("lo", "hi")]
                      for m, c in zip(g["method"], g["cell"])], float).reshape(len(g), 2)
        low, high = band_of(g["time_s"], g["source_time_s"], q[:, 0], q[:, 1])
        has = np.isfinite(q[:, 0]) & np.isfinite(scores(g))
        inside = has & (g["true_s"] >= low) & (g["true_s"] <= high)
        return 100 * inside.groupby(g["method"]).sum() / pd.Series(has).groupby(
            g["method"].to_numpy()).sum()

    out = pd.DataFrame({k: coverage(b, report) for k, b in fits.items()})
    out["median pred/true"] = (report["time_s"] / report["true_s"]).groupby(
        report["method"]).median()
    print(f"{acc.SUITE_TABLES[1]}: {len(report)} pairs; band coverage in %")
    print(out.round({c: 0 for c in fits} | {"median pred/true": 3}).to_string())
    for k, b in fits.items():
        q = b["hierarchical-ext"]["cross_arch"]
        facs = [band_of(1.0, s, q["lo"], q["hi"]) for s in (1.0, 4.0)]
        print(f"hierarchical-ext across architectures, {k}: "
              + ", ".join(f"at {s:g}x x{float(lo):.2f}-{float(hi):.2f}"
                          for s, (lo, hi) in zip((1, 4), facs)))


BAND_LEVELS = tuple(round(0.90 + 0.01 * i, 2) for i in range(10))  # 90 % to 99 %


def _band_quantiles(pairs, levels) -> dict:
    """{band key (method and cell, the ``key`` column): array (level, lo / hi)} of the score
    z, as ``fit_bands`` fits them (each table weighs the same; cells seen in one data source
    only left out), for every requested level at once."""
    from gpuproj.models.bands import weighted_quantile

    c = np.asarray(levels, float)
    q = np.concatenate([(1 - c) / 2, (1 + c) / 2])
    out = {}
    for key, g in pairs.groupby("key", sort=True, observed=True):
        if g["dataset"].nunique() < 2:
            continue
        w = 1.0 / g.groupby("table")["z"].transform("size").to_numpy(float)
        out[key] = weighted_quantile(g["z"].to_numpy(float), w, q).reshape(2, -1).T
    return out


def _band_check(quantiles, pairs, level) -> pd.DataFrame:
    """Coverage and median width (high / low) per method and table of the bands at level index
    ``level`` on ``pairs``. A band [p exp(lo d), p exp(hi d)] holds the measured time exactly
    where lo <= z <= hi (lo clipped to at most 0, hi to at least 0: ``band_of``)."""
    keys = pairs["key"].cat.categories
    q = np.array([quantiles[k][level] if k in quantiles else (np.nan, np.nan) for k in keys],
                 float).reshape(len(keys), 2)[pairs["key"].cat.codes]
    lo, hi = np.minimum(q[:, 0], 0.0), np.maximum(q[:, 1], 0.0)
    z, d = pairs["z"].to_numpy(float), pairs["d"].to_numpy(float)
    has = np.isfinite(lo)
    r = pd.DataFrame({"method": pairs["method"].to_numpy(), "table": pairs["table"].to_numpy(),
                      "inside": (z >= lo) & (z <= hi), "width": np.exp((hi - lo) * d)})[has]
    return r.groupby(["method", "table"], sort=True).agg(coverage=("inside", "mean"),
                                                          width=("width", "median"))


def band_levels(data_dir):
    from gpuproj.models.bands import distance, scores

    pairs = pd.concat(public_band_pairs(data_dir) + acc.suite_band_pairs(data_dir),
                      ignore_index=True)
    pairs = pairs.assign(z=scores(pairs), d=distance(pairs["time_s"], pairs["source_time_s"]),
                         key=pd.Categorical(pairs["method"] + " " + pairs["cell"]))
    pairs = pairs[np.isfinite(pairs["z"])]
    sources = sorted(pairs["dataset"].unique())

    def leave_source_out(frame):
        """The bands fitted on ``frame`` without each of its data sources in turn, checked on
        that source's pairs, per level: {level index: coverage frame}."""
        out = {i: [] for i in range(len(BAND_LEVELS))}
        for s in sorted(frame["dataset"].unique()):
            q = _band_quantiles(frame[frame["dataset"] != s], BAND_LEVELS)
            g = frame[frame["dataset"] == s]
            for i in range(len(BAND_LEVELS)):
                out[i].append(_band_check(q, g, i))
        return {i: pd.concat(f) for i, f in out.items()}

    def per_method(frame):
        """Mean and lowest coverage over the tables, and the mean of their median widths."""
        c = frame["coverage"].groupby(level="method")
        return c.mean(), c.min(), frame["width"].groupby(level="method").mean()

    print("Held out by data source (each source's tables checked with bands fitted on the "
          "others), per requested level: mean / lowest coverage over the tables in %, and the "
          "mean over the tables of the median width (high / low)")
    fixed = leave_source_out(pairs)
    for i, c in enumerate(BAND_LEVELS):
        if c in (0.90, 0.93, 0.95, 0.97):
            mean, low, width = per_method(fixed[i])
            print(f"  requested {100 * c:.0f} %: " + "; ".join(
                f"{m} {100 * mean[m]:.1f} / {100 * low[m]:.1f} (x{width[m]:.2f})"
                for m in mean.index))
    # nested: each source's level chosen on the other sources alone (the lowest level whose
    # bands, fitted without one of them in turn, cover 90 % of its tables on average)
    chosen, nested = {}, []
    for s in sources:
        inner = pairs[pairs["dataset"] != s]
        cov = {i: f["coverage"].groupby(level="method").mean()
               for i, f in leave_source_out(inner).items()}
        q = _band_quantiles(inner, BAND_LEVELS)
        g = pairs[pairs["dataset"] == s]
        for m in sorted(g["method"].unique()):
            i = next((i for i in range(len(BAND_LEVELS)) if cov[i].get(m, 0) >= 0.9),
                     len(BAND_LEVELS) - 1)
            chosen.setdefault(m, {})[s] = BAND_LEVELS[i]
            nested.append(_band_check(q, g[g["method"] == m], i))
    nested = pd.concat(nested)
    print("Level chosen per method so that the bands cover 90 % of the other sources' tables "
          "held out in turn, checked on the source left out (nested):")
    base_mean, base_low, base_width = per_method(fixed[0])
    mean, low, width = per_method(nested)
    for m in mean.index:
        levels = ", ".join(f"{s} {100 * c:.1f}" for s, c in chosen[m].items())
        print(f"  {m}: levels {levels}; coverage mean {100 * base_mean[m]:.1f} -> "
              f"{100 * mean[m]:.1f} %, lowest {100 * base_low[m]:.1f} -> {100 * low[m]:.1f} %, "
              f"width x{base_width[m]:.2f} -> x{width[m]:.2f}")
    per_table = pd.DataFrame({"at 90 %": fixed[0]["coverage"], "nested": nested["coverage"]})
    print("hierarchical-ext per table, coverage in % at 90 % requested -> nested level:")
    for t, r in per_table.loc["hierarchical-ext"].iterrows():
        print(f"  {t}: {100 * r['at 90 %']:.1f} -> {100 * r['nested']:.1f}")


def issue_rate_interval(data_dir):
    from gpuproj.catalog import resolve
    from gpuproj.evaluate import evaluate
    from gpuproj.models import get_model

    for name in ("kerneltuner GEMM", "kerneltuner convolution"):
        table = table_of(data_dir, name)
        m = get_model("hierarchical", issue_rate=True)
        m.name = "hierarchical+issue_rate"
        ev = evaluate(table, [m])
        p = ev.pairs
        arch = {g: resolve(g).architecture for g in table.gpus}
        width = (p["high_s"] / p["low_s"]).groupby(
            [p["source"].astype(str).map(arch), p["target"].astype(str).map(arch)])
        s = ev.summary()[m.name]
        print(f"{name}, {m.name}: coverage {100 * s['coverage']:.0f} %; interval high / low "
              "per source -> target architecture (min-max): " + "; ".join(
                  f"{a} -> {b} x{lo:.2f}-{hi:.2f}" for (a, b), lo, hi in
                  zip(width.groups, width.min(), width.max())))


def issue_rate_fixed_f(data_dir):
    import gpuproj.models.hierarchical as hierarchical
    from gpuproj.evaluate import evaluate
    from gpuproj.models import get_model

    shipped = hierarchical.ISSUE_F_RANGE
    try:
        for name in ("kerneltuner GEMM", "kerneltuner convolution"):
            table, out = table_of(data_dir, name), []
            for f in (0.5, 0.6, 0.71, 0.8, 1.0):
                hierarchical.ISSUE_F_RANGE = (f, f)
                m = get_model("hierarchical", issue_rate=True)
                out.append(f"f = {f}: {evaluate(table, [m]).summary()[m.name]['mape']:.1f}")
            print(f"{name}, hierarchical+issue_rate with a fixed f, MAPE %: " + "; ".join(out))
    finally:
        hierarchical.ISSUE_F_RANGE = shipped


def kerneltuner_clocks(data_dir):
    from gpuproj.catalog import resolve

    def sm_clock(g):
        return g.value("sm_count") * g.value("boost_clock_hz")

    laptop, big = resolve("rtx-3060-laptop"), resolve("rtx-3090")
    titan, ti = resolve("titan-rtx"), resolve("rtx-2080-ti")
    for name in ("kerneltuner GEMM", "kerneltuner convolution"):
        t = table_of(data_dir, name).df.pivot_table(index=["kernel", "config"], columns="gpu",
                                                      values="time_s", observed=True)
        text = {}
        for a, b in ((laptop, big), (titan, ti)):
            r = (t[a.id] / t[b.id]).dropna()
            text[a.id] = (r.median(), f"{a.id} / {b.id} time, median {r.median():.3f} (10-90 %: "
                          f"{r.quantile(0.1):.2f}-{r.quantile(0.9):.2f}, n = {len(r)})")
        # same architecture and kernel: time x SMs x clock alike on both GPUs
        median, line = text[laptop.id]
        clock = sm_clock(big) / (laptop.value("sm_count") * median)
        print(f"{name}: {line}: as {laptop.value('sm_count'):.0f} SMs at {clock / 1e6:.0f} MHz "
              f"against {big.value('sm_count'):.0f} at {big.value('boost_clock_hz') / 1e6:.0f}")
        print(f"{name}: {text[titan.id][1]}; SM counts give "
              f"{ti.value('sm_count') / titan.value('sm_count'):.3f}, SMs x rated boost clocks "
              f"{sm_clock(ti) / sm_clock(titan):.3f}")


def boost_base_clocks(data_dir):
    from gpuproj.catalog import bundled_catalog

    rows = [(g.value("boost_clock_hz") / g.value("base_clock_hz"), g.id, g.vendor)
            for g in bundled_catalog()
            if np.isfinite(g.value("base_clock_hz")) and np.isfinite(g.value("boost_clock_hz"))]
    for vendor in sorted({v for *_, v in rows}):
        r = sorted((x, i) for x, i, v in rows if v == vendor)
        print(f"{vendor}: boost / base clock on the {len(r)} catalog GPUs that list both: "
              f"{r[0][0]:.2f} ({r[0][1]}) to {r[-1][0]:.2f} ({r[-1][1]})")


def pocl_fp64_spills(data_dir):
    try:
        import pyopencl as cl
    except ImportError:
        print("no pyopencl: skipped")
        return
    if not shutil.which("objdump"):
        print("no objdump: skipped")
        return
    from gpuproj.bench.sizes import QUICK

    devices = [d for p in cl.get_platforms() for d in p.get_devices()
               if "pocl" in p.name.lower() + p.vendor.lower()
               and d.type & cl.device_type.CPU]
    if not devices:
        print("no PoCL CPU device: skipped")
        return
    d = devices[0]
    print(f"{d.platform.version}, {d.name}")
    code = ("import sys, numpy as np, pyopencl as cl\n"
            "from gpuproj.bench.opencl import kernel_source\n"
            "p, i, w, n = (int(a) for a in sys.argv[1:])\n"
            "ctx = cl.Context(devices=[cl.get_platforms()[p].get_devices()[i]])\n"
            "q = cl.CommandQueue(ctx)\n"
            "prog = cl.Program(ctx, kernel_source('compute', 'cl')).build("
            "options=['-DVW=8', f'-DVW64={w}'])\n"
            "buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size=n * 8 * w)\n"
            "cl.enqueue_copy(q, buf, np.ones(n * w))\n"
            "prog.fp64_fma(q, (n,), (n,), buf, np.uint32(1), np.float64(1), np.float64(0))\n"
            "q.finish()\n")
    platforms = cl.get_platforms()
    where = next((pi, platforms[pi].get_devices().index(d)) for pi in range(len(platforms))
                 if d in platforms[pi].get_devices())
    for lanes in (8, 4):
        with tempfile.TemporaryDirectory() as cache:
            # a fresh cache: PoCL builds the kernel (for the quick suite's block size) there
            env = dict(os.environ, POCL_CACHE_DIR=cache, PYTHONPATH=os.pathsep.join(
                [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]))
            subprocess.run([sys.executable, "-c", code, *map(str, where), str(lanes),
                            str(QUICK.block)], env=env, check=True, capture_output=True)
            so = sorted(Path(cache).rglob("fp64_fma.so"))
            if not so:
                print(f"{lanes} lanes: no fp64_fma.so in PoCL's cache")
                continue
            asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(so[0])],
                                 capture_output=True, text=True, check=True).stdout
            moves = [ln for ln in asm.splitlines()
                     if re.search(r"\bvmov[au]pd\b.*\(%rsp\)", ln)]
            stack = [ln for ln in asm.splitlines() if "(%rsp)" in ln or "(%rbp)" in ln]
            print(f"{lanes} FP64 lanes (VW = 8): {len(moves)} vmovapd / vmovupd to and from the "
                  f"stack ({len(stack)} instructions with a stack operand in all)")


def pocl_fp64_rates(data_dir, runs=3):
    try:
        from gpuproj.bench import suite
        from gpuproj.bench.opencl import OpenCLBackend
        from gpuproj.bench.sizes import QUICK

        backend = OpenCLBackend()
    except Exception as e:  # no pyopencl, no device
        print(f"no OpenCL device: skipped ({e})")
        return
    vw = int(backend.compute_vector_width)
    print(f"{backend.info.name}: vector width {vw}")
    lane_width, defines = suite.lane_width, suite.vector_defines
    for lanes in (4, 8):
        suite.lane_width = lambda dt, w, n=lanes: (
            n if not isinstance(dt, str) and np.dtype(dt) == np.float64 else lane_width(dt, w))
        suite.vector_defines = lambda w, n=lanes: {"VW": w, "VW64": n}
        try:
            rates = []
            for _ in range(runs):
                r = suite.Runner(backend, QUICK)
                r.compute()
                rates.append({m.name: m.value / 1e9 for m in r.measurements})
        finally:
            suite.lane_width, suite.vector_defines = lane_width, defines
        print(f"FP64 at {lanes} lanes: " + "; ".join(
            f"{k} " + ", ".join(f"{x[k]:.1f}" for x in rates) + " GFLOP/s"
            for k in ("fp32_fma", "fp64_fma")))


def band_alone_outside(data_dir, tables=("seed-report-4gpus",)):
    import learned_experiments as le

    from gpuproj.learned import models as lm
    from gpuproj.splits import evaluate_fold, gpu_folds

    widen = lm.LearnedModel._widen_outside

    def band_alone(self, data, t, src, low, high, cell_name):
        """``LearnedModel._widen_outside`` with the band in place of the conformal bound
        outside the range (leaning to it by 1 - g as there), not their union; the prediction
        kept inside."""
        leaned_low, leaned_high = self._leaned_bounds(data, t, src, low, high, cell_name)
        return np.fmin(t, leaned_low), np.fmax(t, leaned_high)

    for label, fmt, files in le.TABLES:
        if label not in tables:
            continue
        table = le.load(data_dir, fmt, files)
        params = le.hybrid_params(table, fmt)
        for variant, rule in (("widened towards the band (gpuproj)", widen),
                              ("the band in place of the conformal bounds", band_alone)):
            t0 = time.time()
            lm.LearnedModel._widen_outside = rule
            try:
                pairs = pd.concat([evaluate_fold(f, list(le.HYBRIDS), model_params=params).pairs
                                   for f in gpu_folds(table)])
            finally:
                lm.LearnedModel._widen_outside = widen
            inside = (pairs["true_s"] >= pairs["low_s"]) & (pairs["true_s"] <= pairs["high_s"])
            cov = 100 * inside.groupby(pairs["method"].astype(str)).mean()
            print(f"{label}, leave-one-GPU-out, outside the training range {variant}: "
                  + ", ".join(f"{m} {c:.1f} %" for m, c in cov.items())
                  + f" ({time.time() - t0:.0f} s)")


L1_SWEEP = "gpu-benches L1 sweep"


def l1_sweep(data_dir):
    from gpuproj.catalog import resolve
    from gpuproj.evaluate import evaluate
    from gpuproj.models.hierarchical import l1_cache_bytes

    table = table_of(data_dir, L1_SWEEP)
    print(f"{L1_SWEEP}, per GPU: the median rate (TB/s) over the data sets in each span of "
          "multiples of its L1 size, then up to 4 MB and past 0.6 x its L2; the set from which "
          "on every larger one runs under 0.9 x the rate of the sets <= 16 kB (the turn):")
    spans = [(0, 0.5), (0.5, 1), (1, 2), (2, 8)]
    for gpu, d in table.df.groupby("gpu"):
        d = d.sort_values("sm_working_set_bytes")
        ws = d["sm_working_set_bytes"].to_numpy()
        rate = (d["l1_bytes"] / d["time_s"]).to_numpy() / 1e12
        g = resolve(gpu)
        l1, l2 = l1_cache_bytes(g), g.value("l2_size_bytes")

        def median(inside):
            return f"{np.median(rate[inside]):.2f}" if inside.any() else "-"

        cells = [f"{a:g}-{b:g} x {median((ws > a * l1) & (ws <= b * l1))}" for a, b in spans]
        cells.append(f"to 4 MB {median((ws > spans[-1][1] * l1) & (ws <= 4 * 2**20))}")
        cells.append(f"past 0.6 x the {l2 / 2**20:g} MiB L2 {median(ws > 0.6 * l2)}")
        slow = rate < 0.9 * np.median(rate[ws <= 16 * 1024])
        turn = ws[np.argmax(np.logical_and.accumulate(slow[::-1])[::-1])]
        print(f"  {gpu} (L1 {l1 / 1024:g} KiB; L2 {g.measured('l2_bw_bytes_per_s') / 1e12:.2f} "
              f"TB/s measured, {g.peak('l2_bw_bytes_per_s') / 1e12:.2f} peak): "
              + "; ".join(cells) + f"; turn {turn / 1024:g} kB ({turn / l1:.2f} x the L1)")
    both = evaluate(table, ["hierarchical", "hierarchical-ext"]).pairs
    ape = 100 * (both["time_s"] / both["true_s"] - 1).abs()
    per_pair = ape.groupby([both["source"], both["target"], both["method"]]).mean().unstack()
    print("MAPE in % per GPU pair, hierarchical (the L1 ratio) -> hierarchical-ext (the L1 rule):")
    for (s, t), r in per_pair.iterrows():
        print(f"  {s} -> {t}: {r['hierarchical']:.1f} -> {r['hierarchical-ext']:.1f}")
    p = both[both["method"] == "hierarchical-ext"]
    ape = ape[p.index]
    wide = p["high_s"] > p["low_s"] * (1 + 1e-9)
    inside = (p["true_s"] >= p["low_s"] * (1 - 1e-9)) & (p["true_s"] <= p["high_s"] * (1 + 1e-9))
    print(f"hierarchical-ext: an interval (the L1 capacity rule's, sets near an L1's size) on "
          f"{int(wide.sum())} of {len(p)} pairs, MAPE {ape[wide].mean():.1f} % there against "
          f"{ape[~wide].mean():.1f} % on the others; it holds the measured time on "
          f"{100 * inside[wide].mean():.1f} % of them")


def _neusight_compulsory_bytes(df) -> pd.Series:
    """Each NeuSight operator's compulsory traffic: every FP32 tensor read or written once."""
    if "M" in df.columns:  # B x M x K by B x K x N, the B x M x N result
        return 4.0 * df["B"] * (df["M"] * df["K"] + df["K"] * df["N"] + df["M"] * df["N"])
    # input, filters, output (the reader's output side)
    side = np.floor((df["size"] + 2 * df["pad"] - df["k"]) / df["stride"]) + 1
    return 4.0 * (df["B"] * df["Cin"] * df["size"] ** 2 + df["Cout"] * df["Cin"] * df["k"] ** 2
                  + df["B"] * df["Cout"] * side ** 2)


def neusight_bytes(data_dir):
    from gpuproj.catalog import resolve
    from gpuproj.evaluate import evaluate
    from gpuproj.profiles.table import ProfileTable

    methods = ["roofline", "hierarchical", "hierarchical-ext"]
    for name in ("neusight bmm", "neusight conv"):
        table = table_of(data_dir, name)
        df = table.df
        nbytes = _neusight_compulsory_bytes(df)
        variants = {"FLOPs only": df,
                    "+ DRAM bytes": df.assign(dram_bytes=nbytes),
                    "+ L2 bytes and working set": df.assign(l2_bytes=nbytes,
                                                            working_set_bytes=nbytes)}
        for label, d in variants.items():
            s = evaluate(ProfileTable.from_frame(d), methods).summary()
            print(f"{name}, {label}: " + "; ".join(
                f"{m} {s[m]['mape']:.1f} / {s[m]['median_ape']:.1f} %" for m in methods))
        gpus = {g: resolve(g) for g in table.gpus}
        mem = nbytes / df["gpu"].map({g: x.peak("dram_bw_bytes_per_s") for g, x in gpus.items()})
        comp = df["flops"] / df["gpu"].map({g: x.peak("fp32_fma_flops_per_s")
                                            for g, x in gpus.items()})
        bound = mem > comp
        on = [bound & (df["gpu"] == g) for g in table.gpus]
        print(f"  memory-bound by these bytes at the datasheet peaks: {100 * bound.mean():.0f} % "
              "of the rows; the share of the DRAM / FP32 bound those rows reach, median per "
              "GPU: " + "; ".join(f"{g} {(mem / df['time_s'])[m].median():.2f} / "
                                  f"{(comp / df['time_s'])[m].median():.2f}"
                                  for g, m in zip(table.gpus, on)))
        a100, p4 = next(g for g in table.gpus if g.startswith("a100")), "tesla-p4"
        t = df.pivot_table(index="config", columns="gpu", values="time_s")
        slower = (t[p4] / t[a100]).reindex(df.loc[df["gpu"] == a100, "config"])
        on_a100 = bound[df["gpu"] == a100].to_numpy()
        dram, fp32 = ([gpus[g].peak(k) for g in (a100, p4)]
                      for k in ("dram_bw_bytes_per_s", "fp32_fma_flops_per_s"))
        print(f"  {a100} -> {p4}, median time ratio: memory-bound rows "
              f"{slower[on_a100].median():.2f}, the others {slower[~on_a100].median():.2f}; "
              f"DRAM bandwidth ratio {dram[0] / dram[1]:.2f}, FP32 peak ratio "
              f"{fp32[0] / fp32[1]:.2f}")


# NeuSight's two boards of 70 and 75 W; its A100, P100 and V100 PCIe boards draw 250-300 W
LOW_POWER = ("tesla-t4", "tesla-p4")
DURATIONS = ((0.0, 1e-4, "under 0.1 ms"), (1e-4, 1e-3, "0.1-1 ms"), (1e-3, np.inf, "over 1 ms"))


def _gpu_factors(pairs, gpus) -> dict:
    """{gpu: exp(x_g)} from the pair medians of the log error, log(pred / true) = x_t - x_s,
    by least squares with the other boards' x at mean 0: how much faster (> 1) or slower than
    its projection each GPU runs as the target."""
    m = pairs.groupby(["source", "target"], observed=True)["log_error"].median().reset_index()
    a = np.zeros((len(m) + 1, len(gpus)))
    for i, (s, t) in enumerate(zip(m["source"], m["target"])):
        a[i, gpus.index(t)] += 1
        a[i, gpus.index(s)] -= 1
    big = [gpus.index(g) for g in gpus if g not in LOW_POWER]
    a[-1, big] = 1 / len(big)
    x = np.linalg.lstsq(a, np.r_[m["log_error"].to_numpy(), 0.0], rcond=None)[0]
    return dict(zip(gpus, np.exp(x)))


def neusight_durations(data_dir):
    from gpuproj.evaluate import evaluate

    for name in ("neusight bmm", "neusight conv"):
        table = table_of(data_dir, name)
        p = evaluate(table, ["hierarchical-ext", "compute"]).pairs
        p = p.assign(log_error=np.log(p["time_s"] / p["true_s"]))
        gpus = sorted(table.gpus)
        ext = p[p["method"] == "hierarchical-ext"]
        oracle = np.zeros(len(ext))
        factors = {}
        for lo, hi, label in DURATIONS:
            on = ((ext["source_time_s"] > lo) & (ext["source_time_s"] <= hi)).to_numpy()
            factors[label] = f = _gpu_factors(ext[on], gpus)
            shift = {g: np.log(f[g]) if g in LOW_POWER else 0.0 for g in gpus}
            oracle[on] = (ext["target"].map(shift) - ext["source"].map(shift)).to_numpy(float)[on]
        print(f"{name}, hierarchical-ext, each GPU as the target: projected / measured time "
              "(the other boards' mean 1), source time " + " / ".join(factors) + ": "
              + "; ".join(f"{g} " + " / ".join(f"{f[g]:.2f}" for f in factors.values())
                          for g in gpus))
        ape = np.abs(np.exp(ext["log_error"]) - 1)
        fixed = np.abs(np.exp(ext["log_error"] - oracle) - 1)
        low = (ext["source"].isin(LOW_POWER) | ext["target"].isin(LOW_POWER)).to_numpy()
        long = (ext["source_time_s"] > 1e-3).to_numpy()
        print(f"  MAPE {100 * ape.mean():.1f} %: pairs with a low-power board "
              f"{100 * ape[low].mean():.1f} % ({100 * low.mean():.0f} % of the pairs), their "
              f"rows over 1 ms {100 * ape[low & long].mean():.1f} % "
              f"({100 * ape[low & long].sum() / ape.sum():.0f} % of the summed error), the "
              f"other pairs {100 * ape[~low].mean():.1f} %; with the two boards' six factors "
              f"above (in-sample) {100 * fixed.mean():.1f} / {100 * np.median(fixed):.1f} % "
              f"MAPE / median APE, against {100 * ape.mean():.1f} / {100 * np.median(ape):.1f}")
        # not the bytes: the compute-bound rows (at least 16 FLOP per compulsory byte) over 1 ms
        comp = p[p["method"] == "compute"]
        flops_per_byte = table.df["flops"] / _neusight_compulsory_bytes(table.df)
        dense = comp["config"].map(dict(zip(table.df["config"], flops_per_byte))) >= 16
        sel = comp[dense & (comp["source_time_s"] > 1e-3)]
        med = np.exp(sel.groupby(["source", "target"], observed=True)["log_error"].median())
        print("  compute ratio, rows of at least 16 FLOP per compulsory byte over 1 ms on the "
              "source, median projected / measured: " + "; ".join(
                  f"{s} -> {t} {med[(s, t)]:.2f}" for s, t in med.index
                  if t in LOW_POWER and s not in LOW_POWER))


def small_kernels_fitted_floors(data_dir):
    import learned_experiments as le

    from gpuproj.evaluate import metrics
    from gpuproj.learned import features, models
    from gpuproj.learned.pairs import make_pairs
    from gpuproj.splits import evaluate_fold, gpu_folds

    shipped = features.project_rows
    floors = {}

    def floored(rows, method, source, targets):
        """The analytical projections with the launch floors of ``floors`` (none: as shipped):
        t_t = max(t_s - L_s, 0.05 t_s) x projection / t_s + L_t (``_launch_split``'s rule)."""
        out = shipped(rows, method, source, targets)
        ls = floors.get(source.id, math.nan)
        if not np.isfinite(ls):
            return out
        t_s = rows["time_s"].to_numpy(float)
        body = np.maximum(t_s - ls, 0.05 * t_s)
        return {g: body * p / t_s + floors.get(g, ls) for g, p in out.items()}

    def per_fold(with_floors):
        """Each fold, with ``floors`` set to its training GPUs' shortest times or empty."""
        for f in folds:
            floors.clear()
            if with_floors:
                floors.update(f.train.df.groupby("gpu")["time_s"].min().to_dict())
            yield f

    def score(d):
        r = metrics(d["time_s"], d["true_s"])
        return f"{r['mape']:.1f} / {r['median_ape']:.1f} %"

    variants = (("as shipped", False), ("with fitted floors", True))
    features.project_rows = models.project_rows = floored
    try:
        with le.catalog_for(SMALL_KERNELS):
            fmt, files = next((f, fl) for name, f, fl in le.TABLES if name == SMALL_KERNELS)
            table = le.load(data_dir, fmt, files)
            folds = gpu_folds(table)
            projected = {}  # (method, with floors) -> the folds' pairs, projected
            for m in ("bandwidth", "hierarchical-ext"):
                for _, with_floors in variants:
                    projected[m, with_floors] = pd.concat([
                        make_pairs(table, sources=f.sources, targets=f.targets).pipe(
                            lambda p: p.assign(time_s=features.analytical_projection(p, m)))
                        for f in per_fold(with_floors)])
                print(f"{SMALL_KERNELS}, leave-one-GPU-out, {m}: "
                      f"{score(projected[m, False])} as shipped, "
                      f"{score(projected[m, True])} with fitted floors")
            # where the floors leave it wrong: by the held-out GPU and the arrays' size
            d = projected["hierarchical-ext", True]
            size = pd.cut(d["working_set_bytes"] / 2**20, [0, 1, 16, 64, np.inf],
                          labels=["< 1", "1-16", "16-64", "> 64"])
            ratio = (d["time_s"] / d["true_s"]).groupby([d["target"], size], observed=True)
            print("  hierarchical-ext with fitted floors, median predicted / measured time per "
                  "held-out GPU and MiB of the two arrays: " + "; ".join(
                      f"{g} " + ", ".join(f"{b} {r:.2f}" for (_, b), r in x.items())
                      for g, x in ratio.median().groupby(level=0)))
            params = le.hybrid_params(table, fmt)
            for label, with_floors in variants:
                t0 = time.time()
                pairs = pd.concat([evaluate_fold(f, list(le.HYBRIDS), model_params=params).pairs
                                   for f in per_fold(with_floors)])
                for m, d in pairs.groupby(pairs["method"].astype(str)):
                    print(f"  {m}, {label}: {score(d)} (per held-out GPU: " + ", ".join(
                        f"{fold.split()[-1]} {metrics(x['time_s'], x['true_s'])['mape']:.0f}"
                        for fold, x in d.groupby("fold")) + f" %; {time.time() - t0:.0f} s)")
    finally:
        features.project_rows = models.project_rows = shipped


SECTIONS = {"kerneltuner-architectures": kerneltuner_architectures,
            "launch-overhead-hidden": launch_overhead_hidden,
            "bands-without-suite": bands_without_suite,
            "band-levels": band_levels,
            "issue-rate-interval": issue_rate_interval,
            "issue-rate-fixed-f": issue_rate_fixed_f,
            "kerneltuner-clocks": kerneltuner_clocks,
            "boost-base-clocks": boost_base_clocks,
            "pocl-fp64-spills": pocl_fp64_spills,
            "pocl-fp64-rates": pocl_fp64_rates,
            "band-alone-outside": band_alone_outside,
            "l1-sweep": l1_sweep,
            "neusight-bytes": neusight_bytes,
            "neusight-durations": neusight_durations,
            "small-kernels-fitted-floors": small_kernels_fitted_floors}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sections", nargs="*", metavar="SECTION",
                    help=f"any of {', '.join(SECTIONS)} (default: all)")
    ap.add_argument("--data", type=Path, default=acc.DEFAULT_DATA)
    ap.add_argument("--tables", default="seed-report-4gpus",
                    help="band-alone-outside: the learned experiments' tables, comma-separated")
    args = ap.parse_args(argv)
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        ap.error(f"unknown section {', '.join(unknown)}: any of {', '.join(SECTIONS)}")
    for name in args.sections or SECTIONS:
        print(f"## {name}", flush=True)
        if name == "band-alone-outside":
            band_alone_outside(args.data, tuple(args.tables.split(",")))
        else:
            SECTIONS[name](args.data)
        print(flush=True)


if __name__ == "__main__":
    main()
