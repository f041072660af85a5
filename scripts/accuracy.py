#!/usr/bin/env python3
"""Regenerate docs/accuracy.md: every analytical method on every cross-GPU table of
../shared/data/external, against the baselines and the papers' numbers, with the effect of each
hierarchical extension and where each method fails; and the measured error bands that
``gpuproj predict`` ships (src/gpuproj/models/error_bands.json) with their held-out coverage,
fitted on those tables and on our suite's (data/suite/, ``suite_band_pairs``).

    python scripts/accuracy.py [--data DIR] [--out docs/accuracy.md]
        [--json docs/results/accuracy.json] [--only NAME]

``--only`` scores the datasets whose name contains NAME and prints the report instead of
rewriting the docs (a partial report in docs/accuracy.md would drop every other table);
``--out``/``--json`` still write it where asked.

Fragments written by other scripts (calibrated case studies, learned experiments, SASS, our
H100/H200 suite, what the catalog's corrections did: scripts/catalog_corrections.py) are
included from docs/results/*.md when present.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from gpuproj.models import BASELINES

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "external"

# (name, format, files relative to the data dir, note)
DATASETS = [
    ("amaris-rodinia bpnn_layerforward", "amaris",
     ["amaris-rodinia-nvprof/bpnn_layerforward_CUDA_9gpus.csv.gz"], "nvprof counters, 9 GPUs"),
    ("amaris-rodinia bpnn_adjust_weights", "amaris",
     ["amaris-rodinia-nvprof/bpnn_adjust_weights_cuda_9gpus.csv.gz"], "nvprof counters, 9 GPUs"),
    ("amaris-rodinia calculate_temp", "amaris",
     ["amaris-rodinia-nvprof/calculate_temp_9gpus.csv.gz"], "nvprof counters, 9 GPUs"),
    ("seed-report-4gpus", "seed-report",
     [f"seed-report-4gpus/runs_{g}_final.csv" for g in ("2080ti", "4070", "titanv", "titanx")],
     "analytic FLOPs/bytes, 4 GPUs"),
    ("kerneltuner GEMM", "kerneltuner", ["kerneltuner-4gpus/gemm_clblast_4096_4gpus.csv.gz"],
     "time only + analytic FLOPs, 4 GPUs"),
    ("kerneltuner convolution", "kerneltuner", ["kerneltuner-4gpus/convolution_4gpus.csv.gz"],
     "time only + analytic FLOPs, 4 GPUs"),
    ("neusight bmm", "neusight", ["neusight-train/train_bmm_5gpus.csv.gz"],
     "PyTorch operator latency + analytic FLOPs, 5 GPUs"),
    ("neusight conv", "neusight", ["neusight-train/train_conv_5gpus.csv.gz"],
     "PyTorch operator latency + analytic FLOPs, 5 GPUs"),
    ("gpu-benches L2 sweep", "gpu-benches",
     [f"gpu-benches/gpu-l2-cache/{g}.txt"
      for g in ("a100_80", "h100_pcie", "h200", "l40", "mi210", "rx6900xt")],
     "one kernel re-reading working sets of 1.5 MB to 4.7 GB, analytic L2 bytes, 6 GPUs (the "
     "MI100 file, whose run used other chunks, pairs with none)"),
    ("gpu-benches L1 sweep", "gpu-benches",
     [f"gpu-benches/gpu-cache/{g}.txt"
      for g in ("a100_80", "a40", "h100_pcie", "l40", "mi100", "mi210", "rx6900xt", "v100")],
     "one block of 256 threads per SM re-reading one data set of 1 kB to 921 MB, analytic L1 "
     "bytes (every load; the level that serves them left to the method), 8 GPUs in three builds "
     "that pair only among themselves (double: V100, A100 80 GB, H100 PCIe; float: A40, L40; "
     "float4: MI100, MI210, RX 6900 XT); the catalog's measured L1 rates of these GPUs are the "
     "median of these very files over the data sets of at most 16 kB "
     "(scripts/measured_from_gpu_benches.py), so the L1-resident rows are in-sample"),
    ("gpu-benches small kernels", "gpu-benches",
     [f"gpu-benches/gpu-small-kernels/{g}.txt"
      for g in ("a100_80", "a40", "h200", "l40", "mi210", "rx6900xt")],
     "a stream kernel (A[i] = B[i] x 0.25 on n doubles) launched back to back, launch gaps "
     "included, 64 kB to 3 GB in blocks of 32 to 1024 threads, analytic bytes, 6 GPUs (the A100 "
     "and MI210 runs used other sizes and pair with each other, and with the others on a few "
     "sizes only)"),
    ("gpu-benches roofline sweep", "gpu-benches",
     [f"gpu-benches/gpu-roofline/{g}.txt"
      for g in ("alex_a100_40", "alex_a40", "genoa_l40", "h200")],
     "one kernel streaming two float arrays from DRAM with 0 to 512 dependent FMAs per element "
     "(0.25 to 128 FLOP/B), analytic FLOPs and bytes, the recorded SM clock, 4 GPUs"),
    ("gpu-benches stream occupancy sweep", "gpu-benches",
     [f"gpu-benches/gpu-stream/{g}.txt"
      for g in ("a100_40", "a100_80", "a40", "h100_pcie", "h200", "l40", "mi100", "mi210",
                "v100", "RX6900XT")],
     "six stream kernels over 1 GiB arrays with two blocks per SM, blocks of 32 to 1024 "
     "threads, analytic bytes, 10 GPUs (the A100 40 GB and MI210 runs without their older "
     "stencils)"),
]
# Tables left out of the error bands: the catalog's measured L1, L2, DRAM and FP32 ceilings of
# these GPUs come from gpu-benches runs on the same machines (the L1 and L2 sweeps' cache
# ceilings, the roofline sweep's compute ceilings and the stream sweep's DRAM ceilings from
# their very files, the small kernels' DRAM ceilings from the stream benchmark that this kernel
# is a part of), so the errors there understate those of other kernels
NOT_IN_BANDS = ("gpu-benches L2 sweep", "gpu-benches L1 sweep", "gpu-benches small kernels",
                "gpu-benches roofline sweep", "gpu-benches stream occupancy sweep")
FORMAT = {name: fmt for name, fmt, *_ in DATASETS}  # each table's data source
BANDLESS_FORMATS = {FORMAT[name] for name in NOT_IN_BANDS}
assert not any(FORMAT[n] in BANDLESS_FORMATS for n in FORMAT if n not in NOT_IN_BANDS)

ANALYTICAL = ("hierarchical", "hierarchical-ext", "quantitative", "quantitative-transfer",
              "efficiency")
EXTENSIONS = ("cache_capacity", "parallelism", "warp_bandwidth", "issue_rate", "roof_share",
              "roof_floor", "source_clock")
BANDS_REL = "src/gpuproj/models/error_bands.json"
# (label, offset C of the score; None: the plain log error)
BAND_VARIANTS = (("plain log error", None), ("C = 0.5", 0.5), ("C = 1", 1.0), ("C = 2", 2.0))
BANDS = ROOT / BANDS_REL

PAPERS = (
    "| paper | setting | reported |\n"
    "|---|---|---|\n"
    "| Van Lanker et al. 2024 (hierarchical) | V100 -> A100/H100, 5 mini-apps "
    "| MAPE 5.9 % (Quicksilver), 10.2 % (MiniMDock), 20.3 % (LULESH) |\n"
    "| Konstantinidis & Cotronis 2017 (quantitative) | 6 GPUs, Rodinia + SGEMM + stencils "
    "| mean APE 27.66 % overall; 28.97 % Rodinia, 15.18 % SGEMM |\n"
    "| Srivastava et al. (efficiency transfer) | 4 GPUs, 16 kernels, new GPU (TITAN V target) "
    "| MAPE 86.62 %, median pred/true 1.03 |\n"
    "| Stevens & Klöckner (calibrated) | 5 GPUs, matmul/DG/FD variants "
    "| geometric-mean relative error 6.4 % |\n"
)


def load_dataset(data_dir, fmt, files):
    from gpuproj.profiles import load

    table = None
    for f in files:
        t = load(data_dir / f, format=fmt)
        table = t if table is None else table.concat(t)
    return table


def fmt_pct(v):
    return "-" if v is None else f"{v:.1f}"


def fmt_frac(v):
    return "-" if v is None else f"{100 * v:.0f} %"


def method_table(summary, methods):
    lines = ["| method | n | MAPE % | median APE % | GMRE % | median pred/true | within 25 % "
             "| coverage | interval width |", "|---|---|---|---|---|---|---|---|---|"]
    for m in methods:
        s = summary.get(m)
        if not s or not s["n"]:
            continue
        kind = " (baseline)" if m in BASELINES else ""
        width = "-" if s["interval_width"] is None else f"{s['interval_width']:.2f}"
        lines.append(f"| {m}{kind} | {s['n']} | {fmt_pct(s['mape'])} "
                     f"| {fmt_pct(s['median_ape'])} "
                     f"| {fmt_pct(s['gmre'])} | {s['median_ratio']:.3f} "
                     f"| {fmt_frac(s['within_25'])} "
                     f"| {fmt_frac(s['coverage'])} | {width} |")
    return "\n".join(lines)


def best_method(summary, baseline: bool) -> str | None:
    """The method of ``summary`` with the lowest MAPE among the baselines (``baseline``) or
    among gpuproj's own methods; ties (``same_digits``) by name; None where there is none."""
    ms = [m for m in summary if (m in BASELINES) == baseline and summary[m]["n"]]
    return min(ms, key=mape_order(lambda m: summary[m]["mape"]), default=None)


def same_digits(v: float) -> float:
    """An error to 9 significant digits, the key methods are ordered by: two methods making the
    same projection tie (then go by name) instead of being ordered by float rounding."""
    return float(f"{v:.9g}")


def mape_order(mape_of):
    """The sort key of method names by ``mape_of(name)`` (``same_digits``), ties by name."""
    return lambda m: (same_digits(mape_of(m)), m)


def verdict_line(ev, summary, ours: str, base: str) -> str:
    """Whether the best gpuproj method beats the best baseline, in MAPE. Where one of them
    cannot predict some pairs (a kernel whose only counted level has no ceiling in the catalog)
    the two are compared on the pairs both predict: a method that skips its hardest pairs would
    otherwise win by skipping."""
    from gpuproj.evaluate import metrics

    key = ["kernel", "config", "source", "target"]
    p = ev.pairs
    a, b = p[p["method"] == ours], p[p["method"] == base]
    n_a, n_b = summary[ours]["n"], summary[base]["n"]
    line = (f"Best gpuproj method `{ours}` ({summary[ours]['mape']:.1f} % MAPE) {{}} the best "
            f"baseline `{base}` ({summary[base]['mape']:.1f} %)")
    both = a[key].merge(b[key])
    if len(both) == n_a == n_b:
        mape_a, mape_b = summary[ours]["mape"], summary[base]["mape"]
    else:
        mape_a, mape_b = (metrics(*(d.merge(both)[c] for c in ("time_s", "true_s")))["mape"]
                          for d in (a, b))
        line += (f"; they predict {n_a} and {n_b} pairs, and on the {len(both)} both predict "
                 f"`{ours}` errs {mape_a:.1f} %, `{base}` {mape_b:.1f} %")
    verdict = ("ties with" if same_digits(mape_a) == same_digits(mape_b) else
               "beats" if mape_a < mape_b else "does NOT beat")
    return line.format(verdict) + "."


def scoreboard_rows(results) -> list:
    """One row per table: the best baseline and the best analytical gpuproj method (both on all
    pairs, as the sections below, each as (method, summary)), from docs/results/learned.json
    where the table is there the hybrid chosen on the training GPUs alone with each GPU held
    out (a summary), and the best band-weighted combination of all other GPUs ((method,
    summary)); None where a table has no such entry. Our suite (docs/results/suite.json) last."""
    path = ROOT / "docs" / "results" / "learned.json"
    logo = json.loads(path.read_text()).get("logo", {}) if path.exists() else {}

    def best(summary, baseline):
        m = best_method(summary, baseline)
        return m, summary[m]

    rows = []
    for name, r in results.items():
        summary = r["methods"]
        hybrid = logo.get(name.replace("amaris-rodinia", "amaris"), {}).get("methods", {})
        comb = (r.get("combined") or {}).get("methods", {})
        both = (min(comb, key=mape_order(lambda m: comb[m]["weighted"]["mape"]))
                if comb else None)
        rows.append({"table": name, "baseline": best(summary, True),
                     "analytical": best(summary, False),
                     "hybrid": hybrid.get("validated hybrid"),
                     "combined": None if both is None else (both, comb[both]["weighted"])})
    # our own suite (scripts/suite_crossval.py): two GPUs, so no GPU can be held out
    suite = ROOT / "docs" / "results" / "suite.json"
    if suite.exists():
        summary = json.loads(suite.read_text())["summary"]["methods"]
        summary = {m: s for m, s in summary.items() if m in BASELINES + ANALYTICAL}
        rows.append({"table": "our suite, H100 <-> H200", "baseline": best(summary, True),
                     "analytical": best(summary, False), "hybrid": None, "combined": None})
    return rows


def scoreboard(results) -> str:
    """The scoreboard as a markdown table (``scoreboard_rows``)."""
    def errors(s):
        return f"{fmt_pct(s['mape'])} / {fmt_pct(s['median_ape'])}"

    def cell(named):
        return "-" if named is None else f"`{named[0]}` {errors(named[1])}"

    lines = ["| table | best baseline | best analytical method | hybrid, target GPU held out "
             "(chosen on the others) | from all other GPUs at once |", "|---|---|---|---|---|"]
    for r in scoreboard_rows(results):
        lines.append(f"| {r['table']} | {cell(r['baseline'])} | {cell(r['analytical'])} | "
                     + ("-" if r["hybrid"] is None else errors(r["hybrid"])) + " | "
                     + cell(r["combined"]) + " |")
    return "\n".join(lines)


SCOREBOARD_FIGURE = ROOT / "docs" / "img" / "scoreboard.png"
# (row key, legend, marker, colour): the colour-blind-safe palette of gpuproj's pictures
SCOREBOARD_MARKS = (("baseline", "best baseline", "o", "#7F7F7F"),
                    ("analytical", "best analytical method", "s", "#0072B2"),
                    ("hybrid", "hybrid, target GPU held out", "D", "#009E73"),
                    ("combined", "from all other GPUs at once", "^", "#E69F00"))


# an arrow shorter than this (natural log of the MAPEs' ratio, about 10 %) would hide under its
# two markers
SCOREBOARD_ARROW_MIN_LOG_RATIO = 0.1


def scoreboard_figure(rows):
    """The scoreboard as a picture: per table, each column's MAPE on a log axis, an arrow from
    the best baseline to the best analytical method (pointing left where gpuproj wins) where
    the two differ by more than about 10 % (``SCOREBOARD_ARROW_MIN_LOG_RATIO``)."""
    from gpuproj.plots import _style as st

    fig = st.figure(8.5, 0.38 * len(rows) + 1.2)
    with st.rc():
        ax = fig.add_subplot()
        y = np.arange(len(rows))[::-1]
        for yi, r in zip(y, rows):
            base, ours = r["baseline"][1]["mape"], r["analytical"][1]["mape"]
            if min(base, ours) <= 0 or abs(np.log(ours / base)) < SCOREBOARD_ARROW_MIN_LOG_RATIO:
                continue  # a MAPE of 0 has no place on the log axis
            ax.annotate("", xy=(ours, yi), xytext=(base, yi),
                        arrowprops={"arrowstyle": "->", "color": "#0072B2", "lw": 1.2,
                                    "shrinkA": 4, "shrinkB": 4})
        for key, label, marker, color in SCOREBOARD_MARKS:
            pts = [(yi, r[key] if key == "hybrid" else r[key] and r[key][1])
                   for yi, r in zip(y, rows)]
            pts = [(yi, s["mape"]) for yi, s in pts if s]
            ax.scatter([m for _, m in pts], [yi for yi, _ in pts], marker=marker, s=42,
                       color=color, label=label, zorder=3)
        ax.set_xscale("log")
        lo, hi = ax.get_xlim()
        ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500) if lo <= t <= hi]
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_yticks(y, [r["table"] for r in rows])
        ax.set_xlabel("MAPE % (log scale; lower is better)")
        ax.grid(axis="x", alpha=0.3)
        fig.legend(loc="outside upper center", ncol=2, frameon=False)
    return fig


def choice_table(results) -> str:
    """The ``Evaluation.gpu_choice`` of every table: Spearman's rho / fastest chosen %, per
    method; the highest rho of each table in bold."""
    from gpuproj.evaluate import RANDOM_PICK

    methods = [m for m in (*BASELINES, *ANALYTICAL) if m != "same"]
    lines = ["| table | rankings (GPUs each) | random pick | "
             + " | ".join(methods) + " |", "|---" * (3 + len(methods)) + "|"]
    for name, r in results.items():
        c = r.get("gpu_choice", {})
        rnd = c.get(RANDOM_PICK)
        if not rnd:
            continue
        rho = {m: c[m]["rank_corr"] for m in methods if c.get(m) and c[m]["groups"]}
        top = max(rho.values(), key=lambda v: -1 if v is None else v, default=None)
        cells = []
        for m in methods:
            if m not in rho:
                cells.append("-")
                continue
            v = rho[m]
            txt = f"{'-' if v is None else f'{v:.2f}'} / {100 * c[m]['top1_hit']:.0f} %"
            cells.append(f"**{txt}**" if v is not None and v == top else txt)
        lines.append(f"| {name} | {rnd['groups']} ({rnd['targets']}) | "
                     f"{100 * rnd['top1_hit']:.0f} % | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def failure_notes(ev, method, top=4):
    """Where ``method`` errs most: per GPU pair and per kernel, with the sign of the bias."""
    d = ev.pairs[ev.pairs["method"] == method]
    if d.empty:
        return ""
    d = d.assign(ape=(d["time_s"] - d["true_s"]).abs() / d["true_s"],
                 lr=np.log(d["time_s"] / d["true_s"]))
    by_pair = d.groupby(["source", "target"]).agg(mape=("ape", "mean"), bias=("lr", "median"),
                                                  n=("ape", "size"))
    worst = by_pair.sort_values("mape", ascending=False).head(top)
    out = [f"Worst GPU pairs for `{method}` (MAPE, median pred/true):"]
    for (s, t), r in worst.iterrows():
        out.append(f"- {s} -> {t}: {100 * r['mape']:.0f} %, pred/true {np.exp(r['bias']):.2f} "
                   f"(n = {int(r['n'])})")
    if d["kernel"].nunique() > 1:
        by_k = d.groupby("kernel").agg(mape=("ape", "mean"), bias=("lr", "median"))
        worst_k = by_k.sort_values("mape", ascending=False).head(top)
        out.append(f"Worst kernels for `{method}`:")
        for k, r in worst_k.iterrows():
            out.append(f"- {k}: {100 * r['mape']:.0f} %, pred/true {np.exp(r['bias']):.2f}")
    return "\n".join(out)


def band_pairs(ev, table_name) -> pd.DataFrame:
    """The columns ``fit_bands`` needs, for the methods that get a shipped band."""
    from gpuproj.catalog import resolve
    from gpuproj.models.bands import cell

    d = ev.pairs[ev.pairs["method"].isin(BASELINES + ANALYTICAL)]
    st = d[["source", "target"]].astype(str)
    cells = {(s, t): cell(resolve(s), resolve(t)) for s, t in set(zip(st["source"], st["target"]))}
    return pd.DataFrame({
        "method": d["method"].astype(str).to_numpy(), "table": table_name,
        "dataset": table_name.split(" ")[0],
        "cell": [cells[k] for k in zip(st["source"], st["target"])],
        "time_s": d["time_s"].to_numpy(float), "true_s": d["true_s"].to_numpy(float),
        "source_time_s": d["source_time_s"].to_numpy(float)})


def point_interval_methods(results, methods=("hierarchical", "hierarchical-ext")) -> tuple:
    """(those of ``methods`` whose own interval is a point on every table of ``results``
    that scores them, those with an interval on some table)."""
    scored = {m: [r["methods"][m] for r in results.values() if r["methods"].get(m)]
              for m in methods}
    point = tuple(m for m in methods if scored[m]
                  and all(s["coverage"] is None for s in scored[m]))
    return point, tuple(m for m in methods if scored[m] and m not in point)


def variant_sentence(variants, methods, near, far) -> str:
    """Each band variant's held-out coverage of the nearest (``near`` bucket) and farthest
    (``far``) projections, the mean over ``methods`` of their mean over tables, in %: what
    the comparison of the variants rests on, from the numbers, not said once and left to go
    stale."""
    cells = []
    for name, h in variants.items():
        h = h[h["method"].isin(methods) & (h["n"] > 0)]
        cov = (h["covered"] / h["n"]).groupby([h["method"], h["bucket"]]).mean()
        by = cov.groupby(level="bucket").mean()
        if near in by.index and far in by.index:
            cells.append(f"{name} {100 * by[near]:.0f} / {100 * by[far]:.0f}")
    return ("Coverage of the nearest (" + near + ") / farthest (" + far + ") projections, "
            "mean over the methods below: " + "; ".join(cells) + " %.") if cells else ""


def error_bands(pairs: pd.DataFrame, coverage=0.9, results=None):
    """Bands fitted on every table (shipped), and their coverage on each data source's tables
    when fitted without that source (leave one source out): (bands file dict, markdown,
    held-out coverage frame). ``results`` (``run``'s): what the prose says of the methods'
    own intervals is taken from them (left unsaid without)."""
    from gpuproj.models.bands import (
        BUCKETS,
        CELLS,
        OFFSET,
        band_of,
        fit_bands,
        held_out,
        leave_one_source_out,
    )

    bands = fit_bands(pairs, coverage)
    held = held_out(pairs, coverage)
    methods = [m for m in BASELINES + ANALYTICAL if m in bands]
    tables = list(dict.fromkeys(pairs["table"]))

    def fac(b, speedup):
        low, high = band_of(1.0, speedup, b["lo"], b["hi"])
        return f"x{low[()]:.2f}-{high[()]:.2f}"

    pct = f"{100 * coverage:g} %"
    point, spread = point_interval_methods(results) if results else ((), ())
    own_interval = (f", which is the case for {' and '.join(f'`{m}`' for m in point)} on every "
                    "public table here (no coverage above; our suite's ncu rows give several "
                    "levels, docs/results/suite.md)" if point else "")
    if "hierarchical-ext" in spread:
        own_interval += ("; `hierarchical-ext`'s also spans the alternatives of its extensions "
                         "(the issue-rate range, the block-slot fill, a working set near a "
                         "cache's size), hence its coverage above, a spread of the model, not a "
                         "probability")
    lines = [
        f"## Error bands (measured, {pct})", "",
        f"Every prediction of an analytical method comes with a *{pct} band*: the range its "
        "errors spanned on the tables above, scaled by how far the projection extrapolates "
        f"(score z = ln(measured / predicted) / ({OFFSET} + |ln(predicted / source time)|); "
        "`gpuproj.models.bands` has the formulas). Bands for pairs within one "
        "micro-architecture and across two are kept apart. The method's own interval (the "
        "hierarchical spread over memory levels) has zero width wherever a profile or the "
        "catalog gives one memory level only" + own_interval + "; the band is what to read as "
        "uncertainty. Shipped bands, fitted on all "
        f"tables, each table weighing the same (`{BANDS_REL}`), as factors on the predicted "
        "time for a predicted speed-up of 1x and of 4x (or 1/4x). The tables are those above "
        "that the bands do not leave out, plus our suite (docs/results/suite.md): H100 <-> H200, "
        "and the seed report's four GPUs -> ours, counted as the report's data source:", "",
        "| method | same architecture: 1x | 4x | tables, pairs | across architectures: 1x "
        "| 4x | tables, pairs |", "|---|---|---|---|---|---|---|"]
    for m in methods:
        cells = []
        for c in CELLS:
            b = bands[m].get(c)
            # `same` always predicts a speed-up of 1x
            cells += ["-"] * 3 if b is None else [fac(b, 1.0), "-" if m == "same" else fac(b, 4.0),
                                                  f"{b['tables']}, {b['pairs']}"]
        lines.append(f"| {m} | {' | '.join(cells)} |")
    missing = [m for m in BASELINES + ANALYTICAL if m not in bands]
    if missing:
        lines += ["", f"No band for {', '.join(missing)}: the tables it runs on come from one "
                  "data source, and a band could not be checked on another."]
    # a band from two data sources is shipped, but leaving one out leaves one: no check
    unchecked = [m for m in methods if not ((held["method"] == m) & (held["n"] > 0)).any()]
    methods = [m for m in methods if m not in unchecked]
    if unchecked:
        lines += ["", f"{' and '.join(unchecked)}: bands from two data sources (where the "
                  "tables carry the counters they need), so no held-out check below: leaving "
                  "one source out leaves one."]
    lines += ["", "Coverage on each table with the band fitted without that table's data source "
              f"(leave one source out: {', '.join(dict.fromkeys(pairs['dataset']))}), in %, "
              "and the median band width (high / low):", "",
              "| method | " + " | ".join(tables) + " | mean |",
              "|---" * (len(tables) + 2) + "|"]
    for m in methods:
        h = held[(held["method"] == m) & (held["bucket"] == "all")].set_index("table")
        row, covs = [], []
        for t in tables:
            if t in h.index and h.at[t, "n"]:
                c = 100 * h.at[t, "covered"] / h.at[t, "n"]
                covs.append(c)
                row.append(f"{c:.0f} (x{h.at[t, 'width']:.1f})")
            else:
                row.append("-")
        mean = f"{np.mean(covs):.0f}" if covs else "-"
        lines.append(f"| {m} | {' | '.join(row)} | {mean} |")
    lines += ["", "`gpuproj predict` and `gpuproj report` print each method's mean and range "
              "of this coverage beside its band (`held_out` in the bands file), which a band "
              f"named {pct} would not say."]
    skipped = held[held["method"].isin(methods) & (held["no_band"] > 0)]
    if len(skipped):
        lines += ["", "Pairs left out of this check, of a cell (same or cross architecture) that "
                  "the other sources fitted no band for: " + "; ".join(
                      f"{r.method} on {r.table} {r.no_band}" for r in skipped.itertuples()) + "."]
    lines += ["", "Variants compared on the same held-out split: coverage in % (mean over the "
              "tables) overall and per predicted speed-up (or slow-down), with the median band "
              f"width; the shipped form is C = {OFFSET:g}, chosen by this comparison on these "
              "same held-out tables (so the coverage above is not independent of that choice). "
              "A band should hold for near and far projections alike. @VARIANTS@", "",
              "| method | variant | all (lowest table) | " + " | ".join(BUCKETS) + " |",
              "|---|---|---|" + "---|" * len(BUCKETS)]
    variants = {name: (held if off == OFFSET else held_out(pairs, coverage, offset=off))
                for name, off in BAND_VARIANTS}
    at = lines.index(next(ln for ln in lines if "@VARIANTS@" in ln))
    lines[at] = lines[at].replace("@VARIANTS@", variant_sentence(
        variants, [m for m in methods if m != "same"], BUCKETS[0], BUCKETS[-1])).rstrip()

    def cov_mean(h):
        return (h["covered"] / h["n"]).mean()

    for m in methods:
        if m == "same":  # always 1x: every variant is the same band
            continue
        for name, _ in BAND_VARIANTS:
            h = variants[name]
            h = h[(h["method"] == m) & (h["n"] > 0)]
            a = h[h["bucket"] == "all"]
            row = [f"{100 * cov_mean(a):.0f} ({100 * (a['covered'] / a['n']).min():.0f})"]
            for b in BUCKETS:
                hb = h[h["bucket"] == b]
                row.append(f"{100 * cov_mean(hb):.0f} (x{hb['width'].median():.1f})"
                           if len(hb) else "-")
            lines.append(f"| {m} | {name} | {' | '.join(row)} |")
    lines.append("")
    # what a band held on tables it was not fitted on, per method: `predict` says it beside
    # the band, which reads as 90 % otherwise
    a = held[held["bucket"].eq("all") & held["method"].isin(methods) & (held["n"] > 0)]
    cov = (a["covered"] / a["n"]).groupby(a["method"])
    out_of_source = {m: {"mean": round(float(c.mean()), 4), "lowest": round(float(c.min()), 4),
                         "highest": round(float(c.max()), 4), "tables": int(len(c))}
                     for m, c in cov}
    out = {"coverage": coverage, "offset": OFFSET, "generated_by": "scripts/accuracy.py",
           "weighting": "each table weighs the same; quantiles of z = ln(measured / predicted)"
                        " / (offset + |ln(predicted / source time)|)",
           "tables": {t: int((pairs["table"] == t).sum()) for t in tables}, "methods": bands,
           # for checks on one source's tables that must not see them (the learned models'
           # held-out GPUs fall back to these outside their training range)
           "without_source": leave_one_source_out(pairs, coverage),
           # coverage of the bands fitted without each table's data source, on that table:
           # mean, lowest and highest over the tables
           "held_out": out_of_source}
    return out, "\n".join(lines), held


def regime_notes(ev, table, methods=("same", "bandwidth", "hierarchical", "hierarchical-ext")):
    """Errors by where the working set lies against the two GPUs' cache sizes, for tables whose
    every row has a working set: where it fits both caches (at most half of each: the measured
    cache ceilings are plateaus over such sets), misses both (over twice each), or lies
    between. The cache is the L1 (``l1_cache_bytes``) where every row has the set one SM
    re-reads (a cache sweep), else the L2."""
    from gpuproj.catalog import resolve
    from gpuproj.models.hierarchical import l1_cache_bytes

    level, column, size_of = "L2", "working_set_bytes", lambda g: g.value("l2_size_bytes")
    if table.df["sm_working_set_bytes"].notna().all():
        level, column, size_of = "L1", "sm_working_set_bytes", l1_cache_bytes
    ws = table.df.groupby(["kernel", "config", "gpu"])[column].median()
    if not np.isfinite(ws.to_numpy(float)).all():
        return ""
    d = ev.pairs[ev.pairs["method"].isin(methods)].copy()
    size = {g: size_of(resolve(g)) for g in set(d["source"]) | set(d["target"])}
    vendor = {g: resolve(g).vendor for g in size}
    w = ws.reindex(pd.MultiIndex.from_arrays([d["kernel"], d["config"], d["source"]])).to_numpy()
    lo = np.minimum(w / d["source"].map(size), w / d["target"].map(size))
    hi = np.maximum(w / d["source"].map(size), w / d["target"].map(size))
    d["regime"] = np.select([hi <= 0.5, lo > 2], ["fits both", "misses both"], "between")
    same = d["source"].map(vendor) == d["target"].map(vendor)
    d["pairs"] = np.where(same, d["source"].map(vendor) + " pairs", "mixed pairs")
    d["ape"] = 100 * (d["time_s"] / d["true_s"] - 1).abs()
    d = pd.concat([d, d.assign(regime="all")])
    g = d.groupby(["pairs", "regime", "method"])["ape"].agg(["size", "mean", "median"])
    lines = [f"By working set against the two GPUs' {level} sizes (fits both: at most half of "
             "each; misses both: over twice each), MAPE / median APE in %:", "",
             "| pairs | working set | n | " + " | ".join(methods) + " |",
             "|---|---|---|" + "---|" * len(methods)]
    order = {"fits both": 0, "between": 1, "misses both": 2, "all": 3}
    for pairs, regime in sorted({k[:2] for k in g.index}, key=lambda k: (k[0], order[k[1]])):
        r = g.loc[(pairs, regime)]
        # the pairs of the method that predicts the most, a method with fewer says its own
        most = int(r["size"].max())
        cells = [ape_cell(r.at[m, "mean"], r.at[m, "median"], int(r.at[m, "size"]), most)
                 if m in r.index else "-" for m in methods]
        lines.append(f"| {pairs} | {regime} | {most} | {' | '.join(cells)} |")
    return "\n".join(lines)


def architecture_notes(ev, methods):
    """Each method's error on the pairs within one micro-architecture and across two, where a
    table has both: the error bands keep the two apart, and a method's losses across
    architectures are where a ceiling or a count does not carry over."""
    from gpuproj.catalog import resolve

    d = ev.pairs[ev.pairs["method"].isin(methods)]
    arch = {g: resolve(g).architecture for g in set(d["source"]) | set(d["target"])}
    within = d["source"].map(arch) == d["target"].map(arch)
    if within.all() or not within.any():
        return ""
    ape = 100 * (d["time_s"] / d["true_s"] - 1).abs()
    g = ape.groupby([d["method"], within.rename("within")]).agg(["size", "mean", "median"])
    cells, counts = [], {}
    for m in methods:
        if (m, True) in g.index and (m, False) in g.index:
            a, b = g.loc[(m, True)], g.loc[(m, False)]
            cells.append(f"`{m}` {a['mean']:.1f} / {a['median']:.1f} against "
                         f"{b['mean']:.1f} / {b['median']:.1f}")
            counts[m] = (int(a["size"]), int(a["size"] + b["size"]))
    if not cells:
        return ""
    # the pairs of the method that predicts the most; a method that leaves pairs out says so
    most = max(counts.values(), key=lambda c: c[1])
    fewer = [f"`{m}` {c[0]} of {c[1]}" for m, c in counts.items() if c != most]
    return (f"Within one micro-architecture ({most[0]} of {most[1]} pairs"
            + (f"; {', '.join(fewer)}" if fewer else "") + ") against across two, MAPE / "
            "median APE in %: " + "; ".join(cells) + ".")


def one_gpu_notes(ev, table, methods=("same", "bandwidth", "hierarchical", "hierarchical-ext"),
                  by="hierarchical"):
    """The GPU whose pairs carry the largest share of ``by``'s summed error, where that share
    is at least 1.5x its share of the pairs: each method's error without its pairs, and what
    its rows say no GPU can do (``predict.beyond_roofline``). A table's MAPE can be one GPU's."""
    from gpuproj.predict import beyond_roofline

    d = ev.pairs[ev.pairs["method"].isin(methods)]
    d = d.assign(ape=100 * (d["time_s"] / d["true_s"] - 1).abs())
    ref = d[d["method"] == by]
    if ref.empty or ref["source"].nunique() < 3:
        return ""
    gpus = sorted(set(ref["source"]) | set(ref["target"]))
    share = {g: ref["ape"][(ref["source"] == g) | (ref["target"] == g)].sum() / ref["ape"].sum()
             for g in gpus}
    g = max(share, key=share.get)
    pair_share = ((ref["source"] == g) | (ref["target"] == g)).mean()
    if share[g] < 1.5 * pair_share:
        return ""
    out = (d["source"] == g) | (d["target"] == g)
    cells = []
    for m in methods:
        a, b = d.loc[d["method"] == m, "ape"], d.loc[(d["method"] == m) & ~out, "ape"]
        if len(a) and len(b):
            cells.append(f"`{m}` {a.mean():.1f} / {a.median():.1f} -> "
                         f"{b.mean():.1f} / {b.median():.1f}")
    said = beyond_roofline({g: table.on(g)})
    return (f"One GPU: {g} is in {100 * pair_share:.0f} % of the pairs and carries "
            f"{100 * share[g]:.0f} % of `{by}`'s summed error. MAPE / median APE in %, all "
            f"pairs -> without {g}'s: " + "; ".join(cells) + "."
            + (f" Of its rows, {said}." if said else ""))


def intensity_notes(ev, table, methods=("roofline", "hierarchical", "hierarchical-ext")):
    """Errors by where a row's FLOP per DRAM byte lies against the two GPUs' ridge points
    (compute ceiling of the row's type / DRAM ceiling, each against the other GPU as
    ``hierarchical`` takes them), for tables whose every row has both counts and that reach
    both sides of the ridges: under half of each ridge, over twice each, or between."""
    from gpuproj.catalog import resolve
    from gpuproj.models.common import DTYPES, compute_peak_key, dtype_codes

    # the type the models price a row at: named, else the precision with the most FLOPs
    df = table.df.assign(dtype=np.asarray(DTYPES, dtype=object)[dtype_codes(table.df)])
    counts = df.groupby(["kernel", "config", "gpu"])[["flops", "dram_bytes", "dtype"]].first()
    if not (np.isfinite(counts[["flops", "dram_bytes"]].to_numpy(float)).all()
            and (counts["dram_bytes"] > 0).all()):
        return ""
    d = ev.pairs[ev.pairs["method"].isin(methods)].copy()
    c = counts.reindex(pd.MultiIndex.from_arrays([d["kernel"], d["config"], d["source"]]))
    oi = (c["flops"] / c["dram_bytes"]).to_numpy()

    def ridge(gpu, other, dtype):
        g, o = resolve(gpu), resolve(other)
        return (g.ceiling(compute_peak_key(dtype), o).value
                / g.ceiling("dram_bw_bytes_per_s", o).value)

    ridges = {k: ridge(*k) for k in set(zip(d["source"], d["target"], c["dtype"]))
              | set(zip(d["target"], d["source"], c["dtype"]))}
    r_s = np.array([ridges[k] for k in zip(d["source"], d["target"], c["dtype"])])
    r_t = np.array([ridges[k] for k in zip(d["target"], d["source"], c["dtype"])])
    lo, hi = oi / np.maximum(r_s, r_t), oi / np.minimum(r_s, r_t)
    d["side"] = np.select([hi <= 0.5, lo > 2], ["memory-bound on both", "compute-bound on both"],
                          "near a ridge")
    if d["side"].nunique() < 2:
        return ""
    lines = ["By FLOP per DRAM byte against the two GPUs' ridge points (compute / DRAM ceiling; "
             "memory-bound: under half of each ridge, compute-bound: over twice each), MAPE / "
             "median APE in %:", "",
             "| FLOP per byte | n | " + " | ".join(methods) + " |",
             "|---|---|" + "---|" * len(methods)]
    lines += _ape_rows(d, "side", ["memory-bound on both", "near a ridge",
                                   "compute-bound on both"], methods)
    return "\n".join(lines)


def ape_cell(mean, median, n, most) -> str:
    """'MAPE / median APE' of a breakdown's cell, with its pairs where a method predicts fewer
    than the row's ``most`` (a method that skips pairs is scored on others than its
    neighbours, and says so)."""
    return f"{mean:.1f} / {median:.1f}" + (f" (n = {n})" if n != most else "")


def _ape_rows(d, column, order, methods):
    """Markdown rows of a breakdown: per value of ``column`` (those of ``order`` present, then
    all pairs), the pairs (of the method that predicts the most) and each method's MAPE /
    median APE ('-' for a method without pairs there, its own pairs where fewer)."""
    d = d.assign(ape=100 * (d["time_s"] / d["true_s"] - 1).abs())
    rows = []
    for value in [o for o in order if (d[column] == o).any()] + ["all"]:
        g = d if value == "all" else d[d[column] == value]
        ape = [g.loc[g["method"] == m, "ape"] for m in methods]
        most = max(len(a) for a in ape)
        cells = [ape_cell(a.mean(), a.median(), len(a), most) if len(a) else "-" for a in ape]
        rows.append(f"| {value} | {most} | {' | '.join(cells)} |")
    return rows


BLOCK_BANDS = ((32, 64), (96, 192), (224, 448), (480, 1024))  # threads per block
# working sets of a size sweep (bytes): launch-bound, L2-resident on the larger L2s, between,
# DRAM on every GPU
SIZE_BANDS = (("under 1 MB", 0, 1e6), ("1-16 MB", 1e6, 16e6),
              ("16-64 MB", 16e6, 64e6), ("over 64 MB", 64e6, float("inf")))


def size_notes(ev, table, methods=("same", "bandwidth", "hierarchical", "hierarchical-ext")):
    """Errors by working set, for tables that sweep one kernel's size (``n=<elements>,
    block=<threads>``: the gpu-benches small kernels), where the time goes from the launch
    floor through the L2 to DRAM."""
    if not table.df["config"].str.fullmatch(r"n=\d+,block=\d+").fillna(False).all():
        return ""
    ws = table.df.groupby(["kernel", "config"])["working_set_bytes"].median()
    d = ev.pairs[ev.pairs["method"].isin(methods)]
    w = ws.reindex(pd.MultiIndex.from_arrays([d["kernel"], d["config"]])).to_numpy()
    d = d.assign(band=np.select([(w >= lo) & (w < hi) for _, lo, hi in SIZE_BANDS],
                                [label for label, _, _ in SIZE_BANDS], ""))
    d = d[d["band"] != ""]  # no working set: in no band, so not in "all" either
    lines = ["By working set (MB = 10^6 B), MAPE / median APE in %:", "",
             "| working set | n | " + " | ".join(methods) + " |",
             "|---|---|" + "---|" * len(methods)]
    lines += _ape_rows(d, "band", [label for label, _, _ in SIZE_BANDS], list(methods))
    return "\n".join(lines)


def block_size_notes(ev, table, methods=("same", "bandwidth", "hierarchical",
                                         "hierarchical-ext", "efficiency")):
    """Errors by block size, for tables whose configurations differ in the block size only
    (``block=<threads>``: the gpu-benches stream sweep, two blocks per SM), with the ratio of
    the GPUs' SM counts as a reference: Little's law with the same threads in flight per SM
    and the same memory latency on both GPUs."""
    from gpuproj.catalog import resolve

    if not table.df["config"].str.fullmatch(r"block=\d+").all():
        return ""
    d = ev.pairs[ev.pairs["method"].isin(methods)]
    sm = {g: resolve(g).value("sm_count") for g in set(d["source"]) | set(d["target"])}
    same = d[d["method"] == "same"]
    little = same.assign(method="SM count ratio", time_s=same["time_s"]
                         * same["source"].map(sm) / same["target"].map(sm))
    d = pd.concat([d, little])
    block = d["config"].str.slice(len("block=")).astype(int)
    bands = {f"{lo}-{hi}": (block >= lo) & (block <= hi) for lo, hi in BLOCK_BANDS}
    d = d.assign(band=np.select(list(bands.values()), list(bands), ""))
    cols = list(methods) + ["SM count ratio"]
    lines = ["By threads per block (two blocks per SM), MAPE / median APE in %; `SM count ratio`: "
             "source time x source SMs / target SMs, Little's law with the same threads in "
             "flight per SM and the same memory latency on both GPUs:", "",
             "| threads per block | n | " + " | ".join(cols) + " |",
             "|---|---|" + "---|" * len(cols)]
    lines += _ape_rows(d, "band", list(bands), cols)
    return "\n".join(lines)


def with_bands(ev, fitted):
    """``ev`` with each pair's band from ``fitted`` ({method: {cell: {lo, hi}}}, e.g. the
    bands fitted without the table's data source, ``without_source`` of the shipped bands),
    so that weighing and scoring by them does not see the table's own errors; NaN for methods
    without a band."""
    from gpuproj.catalog import resolve
    from gpuproj.evaluate import Evaluation
    from gpuproj.models.bands import band_of, cell

    d = ev.pairs.copy()
    st = list(zip(d["source"].astype(str), d["target"].astype(str)))
    cells = {k: cell(resolve(k[0]), resolve(k[1])) for k in set(st)}
    q = np.array([[fitted.get(m, {}).get(cells[k], {}).get(b, np.nan) for b in ("lo", "hi")]
                  for m, k in zip(d["method"], st)], float).reshape(len(d), 2)
    d["band_low_s"], d["band_high_s"] = band_of(d["time_s"], d["source_time_s"], q[:, 0], q[:, 1])
    return Evaluation(d, list(ev.skipped))


def bands_without_format(fmt, bands=None) -> dict | None:
    """The band quantiles ({method: {cell: {lo, hi}}}) fitted without the tables of data source
    ``fmt`` (a reader's format), from ``bands`` (a bands file as ``error_bands`` makes it; None:
    the shipped file): its ``without_source`` entry, or, for gpu-benches, whose tables the bands
    leave out (``NOT_IN_BANDS``), the bands themselves, fitted on other tables only; None where
    there is none. The one rule that every script evaluating a table against bands follows."""
    from gpuproj.models.bands import bands_without_source, load_bands

    bands = load_bands() if bands is None else bands
    if fmt in BANDLESS_FORMATS:
        return bands.get("methods") or None
    return bands_without_source(fmt, bands)


def held_out_evaluation(ev, table_name, bands=None):
    """``ev`` with the bands fitted without the table's data source (``with_bands`` of
    ``bands_without_format`` of ``bands``, the bands this run fitted; None: the shipped file,
    which a run writes only at its end, so that it holds the previous run's bands); None where
    there are none."""
    fitted = bands_without_format(FORMAT[table_name], bands)
    return None if fitted is None else with_bands(ev, fitted)


def combined_sources(held) -> dict:
    """Each target predicted from all other GPUs at once (``Evaluation.combined``), per method
    with a band: MAPE, median APE and band coverage from one source (the mean over sources, as
    everywhere else), combined with equal weights, and combined with the band weights; ``held``
    as ``held_out_evaluation`` returns it."""
    single = held.summary()
    equal = held.combined(weighted=False).summary()
    comb = held.combined()
    weighted = comb.summary()
    keep = [m for m, v in single.items() if v["band_coverage"] is not None]
    per_target = comb.pairs.drop_duplicates(["kernel", "config", "target"])["sources"]
    return {"sources_median": float(per_target.median()), "targets": len(per_target),
            "methods": {m: {"single": single[m], "equal": equal[m], "weighted": weighted[m]}
                        for m in keep},
            # no band to weigh them by: combined with equal weights only
            "left_out": {m: {"single": single[m], "equal": equal[m]}
                         for m in single if m not in keep and single[m]["mape"] is not None}}


def combined_table(results) -> str:
    """The best method of each table by one source, by all sources with equal weights and with
    the band weights (MAPE / median APE, band coverage)."""
    lines = ["| table | targets (sources each, median) | best from one source | all sources, "
             "equal weights | all sources, band weights | band coverage one / all |",
             "|---|---|---|---|---|---|"]
    for name, r in results.items():
        c = r.get("combined")
        if not c or not c["methods"]:
            continue
        cells = []
        for how in ("single", "equal", "weighted"):
            m = min(c["methods"], key=mape_order(lambda k: c["methods"][k][how]["mape"]))
            v = c["methods"][m][how]
            cells.append(f"`{m}` {v['mape']:.1f} / {v['median_ape']:.1f}")
        best = min(c["methods"], key=mape_order(lambda k: c["methods"][k]["weighted"]["mape"]))
        cov = " / ".join(fmt_frac(c["methods"][best][h]["band_coverage"])
                         for h in ("single", "weighted"))
        lines.append(f"| {name} | {c['targets']} ({c['sources_median']:g}) | "
                     + " | ".join(cells) + f" | {cov} (`{best}`) |")
    left = []
    for name, r in results.items():
        c = r.get("combined")
        if not c or not c["methods"]:
            continue
        best = min(v["single"]["mape"] for v in c["methods"].values()
                   if v["single"]["mape"] is not None)
        for m, v in c["left_out"].items():
            if v["single"]["mape"] < best:
                left.append(f"{name} `{m}` {v['single']['mape']:.1f} / "
                            f"{v['single']['median_ape']:.1f} -> {v['equal']['mape']:.1f} / "
                            f"{v['equal']['median_ape']:.1f} %")
    if left:
        lines += ["", "Left out for want of a band fitted without the table's data source, yet "
                  "better from one source than every method above (one source -> all sources, "
                  "equal weights): " + "; ".join(left) + "."]
    return "\n".join(lines)


def _has_occupancy_inputs(table) -> bool:
    """Whether some row gives a register count or a shared-memory size."""
    return bool(table.df[["regs_per_thread", "smem_per_block_bytes"]].notna().any(axis=None))


def occupancy_differences(table) -> str:
    """'N of M': the rows whose occupancy on their own GPU differs between NVIDIA's rules and
    the report's formula (M: the rows with a block size)."""
    from gpuproj.catalog import resolve
    from gpuproj.models.common import theoretical_occupancy

    differ = known = 0
    for gpu in table.gpus:
        df = table.on(gpu).df
        rules = theoretical_occupancy(df, resolve(gpu))
        report = theoretical_occupancy(df, resolve(gpu), formula="report")
        ok = np.isfinite(rules) & np.isfinite(report)
        known += int(ok.sum())
        differ += int((ok & ~np.isclose(rules, report)).sum())
    return f"{differ} of {known}"


# what the JSON's band numbers are measured against, which its keys alone do not say
JSON_NOTES = {
    "band_coverage": "per table and method (tables.*.methods): with the bands shipped when the "
                     "run started, fitted on every table but gpu-benches' (NOT_IN_BANDS), so "
                     "in-sample for the others",
    "error_bands_held_out": "per method, table and speed-up bucket: the bands fitted without "
                            "the table's data source (out of sample); no_band counts the pairs "
                            "of a cell no other source has a band for, left out of covered/n",
    "combined": "per table (tables.*.combined): bands fitted without the table's data source "
                "(bands_without_format)",
    "totals": "per table and method (tables.*.totals): kernel pairs and application totals "
              "(Evaluation.totals), both with the bands fitted without the table's data source"}


def run(data_dir, only=None):
    """Every table of ``DATASETS`` (those whose name contains ``only``) evaluated: (results by
    table, markdown sections, the band pairs or None, the evaluations by table). Each result's
    ``combined`` and ``totals`` are None until ``add_held_out`` fills them in, once the bands
    are fitted."""
    from gpuproj.evaluate import applicable_methods, evaluate, records

    results, evs = {}, {}
    sections = []
    band_frames = []
    for name, fmt, files, note in DATASETS:
        if only and only not in name:
            continue
        t0 = time.perf_counter()
        table = load_dataset(data_dir, fmt, files)
        methods = applicable_methods(table, list(BASELINES) + list(ANALYTICAL))
        ev = evaluate(table, methods)
        if name not in NOT_IN_BANDS:
            band_frames.append(band_pairs(ev, name))
        summary = ev.summary()
        # per-extension effect: the paper's model with one extension switched on
        ext = {}
        if "hierarchical" in methods:
            from gpuproj.models import get_model

            for e in EXTENSIONS:
                m = get_model("hierarchical", **{e: True})
                m.name = f"hierarchical+{e}"
                ev_e = evaluate(table, [m])
                ext[e] = ev_e.summary().get(m.name)
        # the report's own occupancy formula (Sec. 4.0.2 as written), where `efficiency` takes
        # NVIDIA's occupancy rules
        report_occ = None
        if "efficiency" in methods:
            from gpuproj.models import get_model

            m = get_model("efficiency", occupancy="report")
            m.name = "efficiency (report's occupancy)"
            report_occ = evaluate(table, [m]).summary().get(m.name)
        secs = time.perf_counter() - t0
        results[name] = {"note": note, "rows": len(table), "gpus": table.gpus,
                         "skipped_rows": len(table.skipped), "methods": summary,
                         "extensions": ext, "efficiency_report_occupancy": report_occ,
                         "gpu_choice": records(ev.gpu_choice()),
                         "combined": None, "totals": None, "totals_fitted_band": None,
                         "seconds": round(secs, 1)}
        evs[name] = ev
        best_base, best_ours = best_method(summary, True), best_method(summary, False)
        lines = [f"### {name}", "",
                 f"{note}; {len(table)} rows on {len(table.gpus)} GPUs ({', '.join(table.gpus)}), "
                 f"{len(table.skipped)} input rows skipped; evaluated in {secs:.1f} s.", "",
                 method_table(summary, list(BASELINES) + list(ANALYTICAL)), ""]
        if best_base and best_ours:
            lines += [verdict_line(ev, summary, best_ours, best_base), ""]
        if ext and summary.get("hierarchical"):
            lines.append("Effect of each hierarchical extension alone (MAPE / median APE / "
                         "coverage):")
            lines.append("")
            base = summary.get("hierarchical")
            lines.append(f"- none: {fmt_pct(base['mape'])} % / {fmt_pct(base['median_ape'])} % / "
                         f"{fmt_frac(base['coverage'])}")
            for e, s in ext.items():
                if s:
                    lines.append(f"- {e}: {fmt_pct(s['mape'])} % / {fmt_pct(s['median_ape'])} % / "
                                 f"{fmt_frac(s['coverage'])}")
            lines.append("")
        if report_occ and summary.get("efficiency"):
            e = summary["efficiency"]
            lines += [f"`efficiency` with the report's occupancy formula (Sec. 4.0.2 as written; "
                      f"`EfficiencyTransfer(occupancy=\"report\")`) in place of NVIDIA's "
                      f"occupancy rules: {fmt_pct(report_occ['mape'])} % / "
                      f"{fmt_pct(report_occ['median_ape'])} % MAPE / median APE (the rules: "
                      f"{fmt_pct(e['mape'])} % / {fmt_pct(e['median_ape'])} %). The two "
                      f"occupancies differ on {occupancy_differences(table)} rows, each on "
                      "the GPU it ran on; a projection takes the ratio O_src / O_tgt of the "
                      "source's configuration, which changes only where the two formulas "
                      "part on one GPU of the pair and not on the other"
                      + ("" if _has_occupancy_inputs(table) else
                         " (the table gives no register count or shared-memory size: they "
                         "differ only in how they count threads)") + ".", ""]
        for m in ("hierarchical", "quantitative", "quantitative-transfer", "efficiency"):
            if m in summary:
                lines.append(failure_notes(ev, m))
                lines.append("")
        for notes in (architecture_notes(ev, methods), one_gpu_notes(ev, table),
                      regime_notes(ev, table),
                      intensity_notes(ev, table), block_size_notes(ev, table),
                      size_notes(ev, table)):
            if notes:
                lines += [notes, ""]
        sections.append("\n".join(lines))
        print(f"{name}: {secs:.1f} s", file=sys.stderr)
    if not only or any(only in t for t in SUITE_TABLES):
        band_frames += suite_band_pairs(data_dir)
    return results, sections, (pd.concat(band_frames, ignore_index=True) if band_frames
                               else None), evs


def add_held_out(results, evs, bands=None) -> None:
    """Fill in each result's ``combined`` (``combined_sources``) and ``totals``
    (``application_totals``) from the bands this run fitted (``bands``; None: the shipped
    file, for a partial run that does not refit them), None where a table has none; and
    ``totals_fitted_band`` (``totals_fitted_bands``), which needs every table's totals."""
    for name, ev in evs.items():
        # one held-out evaluation for both: with_bands walks every pair in Python
        held = held_out_evaluation(ev, name, bands)
        results[name]["combined"] = None if held is None else combined_sources(held)
        results[name]["totals"] = None if held is None else application_totals(held)
    for name, fitted in totals_fitted_bands(evs).items():
        results[name]["totals_fitted_band"] = fitted


def application_totals(held) -> dict:
    """Each ordered GPU pair's kernel configurations added up as one application
    (``Evaluation.totals``): per method, the metrics of its kernel pairs and of its totals,
    both with the held-out bands of ``held`` (``held_out_evaluation``), and how far the
    kernels' errors on a pair move together (``pair_dependence``)."""
    kernels, totals = held.summary(), held.totals().summary()
    dependence = pair_dependence(held.pairs)
    return {m: {"kernels": kernels[m], "totals": totals[m], **dependence.get(m, {})}
            for m in totals}


def pair_dependence(pairs) -> dict:
    """Per method with a band on every pair of some GPU pair: ``between_pairs``, the share of
    the variance of the band score z (``bands.scores``) that lies between the ordered GPU
    pairs (1 - within-pair sum of squares / total sum of squares: 1 where a pair's kernels
    all err alike, near 0 where the pair says nothing of a kernel's error), and
    ``independent_band_coverage``, how often the band of a total would hold it were the
    kernels' errors independent: the total's prediction -/+ the root of the summed squares of
    its pairs' distances to their band bounds, in place of their sum (the rule
    ``Evaluation.totals`` follows, which assumes they move as one)."""
    from gpuproj.models.bands import scores

    d = pairs[pairs["band_low_s"].notna() & pairs["band_high_s"].notna()]
    d = d.assign(z=scores(d), down=(d["time_s"] - d["band_low_s"]) ** 2,
                 up=(d["band_high_s"] - d["time_s"]) ** 2)
    d = d[np.isfinite(d["z"])]
    out = {}
    for m, g in d.groupby("method", sort=True, observed=True):
        by_pair = g.groupby(["source", "target"], sort=False, observed=True)
        within = ((g["z"] - by_pair["z"].transform("mean")) ** 2).sum()
        total = ((g["z"] - g["z"].mean()) ** 2).sum()
        t = by_pair[["time_s", "true_s", "down", "up"]].sum()
        low, high = t["time_s"] - np.sqrt(t["down"]), t["time_s"] + np.sqrt(t["up"])
        out[str(m)] = {"between_pairs": float(1 - within / total) if total > 0 else None,
                       "independent_band_coverage":
                           float(((t["true_s"] >= low) & (t["true_s"] <= high)).mean())}
    return out


def totals_fitted_bands(evs) -> dict:
    """The alternative to adding the kernels' bands: a band fitted on application totals
    themselves (the bands' own rule, ``fit_bands``, on every table's ``Evaluation.totals``),
    without the table's data source, as the kernels' held-out bands are (the gpu-benches
    tables, which the bands leave out: fitted on all the others; our suite's totals are not
    in it). Per table and method: the coverage, median width ((high - low) / predicted) and
    number of the totals it holds."""
    from gpuproj.models.bands import band_of, fit_bands, leave_one_source_out

    frames = {name: band_pairs(ev.totals(), name) for name, ev in evs.items()}
    fit_on = [f for n, f in frames.items() if n not in NOT_IN_BANDS]
    # none: --only on tables the bands leave out (pd.concat takes no empty list)
    fit_on = pd.concat(fit_on, ignore_index=True) if fit_on else pd.DataFrame()
    if fit_on.empty:
        return {}
    held, everything = leave_one_source_out(fit_on), fit_bands(fit_on)
    out = {}
    for name, f in frames.items():
        fitted = everything if name in NOT_IN_BANDS else held.get(name.split(" ")[0], {})
        for m, g in f.groupby("method", sort=True):
            q = np.array([[fitted.get(m, {}).get(c, {}).get(b, np.nan) for b in ("lo", "hi")]
                          for c in g["cell"]], float).reshape(len(g), 2)
            has = np.isfinite(q[:, 0])
            if not has.any():
                continue
            low, high = band_of(g["time_s"][has], g["source_time_s"][has], q[has, 0], q[has, 1])
            true = g["true_s"].to_numpy(float)[has]
            out.setdefault(name, {})[str(m)] = {
                "coverage": float(((true >= low) & (true <= high)).mean()),
                # as Evaluation.summary's band_width, so that the two compare
                "width": float(np.median((high - low) / g["time_s"].to_numpy(float)[has])),
                "n": int(has.sum())}
    return out


def totals_table(results) -> str:
    """Per table: the method of lowest kernel MAPE, its MAPE / median APE over the kernel
    pairs and over the application totals, the method of lowest MAPE on the totals, the band
    coverage of the first on kernels and on totals, how far its kernels' errors on a pair
    move together and what the band of a total would hold were they independent
    (``pair_dependence``); then what the table shows, in words computed from it."""
    lines = ["| table | totals | best on kernels: kernels -> totals | best on totals | "
             "band coverage kernels -> totals | score variance between GPU pairs | "
             "band coverage of totals, errors taken as independent |",
             "|---|---|---|---|---|---|---|"]
    rows = []  # (table, the best on kernels' metrics, whether another is best on totals)
    for name, r in results.items():
        t = r.get("totals")
        if not t:
            continue

        def best(level):
            return min(t, key=mape_order(lambda m: t[m][level]["mape"]))

        def errors(m, level):
            v = t[m][level]
            return f"{fmt_pct(v['mape'])} / {fmt_pct(v['median_ape'])}"

        k, a = best("kernels"), best("totals")
        cov = " -> ".join(fmt_frac(t[k][lv]["band_coverage"]) for lv in ("kernels", "totals"))
        lines.append(f"| {name} | {t[k]['totals']['n']} | `{k}` {errors(k, 'kernels')} -> "
                     f"{errors(k, 'totals')} | `{a}` {errors(a, 'totals')} | {cov} | "
                     f"{fmt_frac(t[k].get('between_pairs'))} | "
                     f"{fmt_frac(t[k].get('independent_band_coverage'))} |")
        rows.append((name, t[k], k != a))
    if not rows:
        return "\n".join(lines)
    lower = [n for n, v, _ in rows if v["totals"]["mape"] < v["kernels"]["mape"]]
    other = [n for n, _, differs in rows if differs]
    short = [f"{n} ({fmt_frac(v['totals']['band_coverage'])})" for n, v, _ in rows
             if v["totals"]["band_coverage"] is not None
             and v["totals"]["band_coverage"] < 0.9]
    banded = [v for _, v, _ in rows if v.get("between_pairs") is not None]
    lines += ["", f"The best method on the kernels errs less on the totals on {len(lower)} "
              f"of {len(rows)} tables"
              + (f" (more on {', '.join(n for n, *_ in rows if n not in lower)})"
                 if len(lower) < len(rows) else "")
              + "; another method is best on the totals on "
              + (", ".join(other) if other else "none")
              + ". The band of the total holds it on at least 90 % of the GPU pairs on "
              + ("every table" if not short else "every table but " + ", ".join(short))
              + "."]
    if banded:
        share = [v["between_pairs"] for v in banded]
        indep = [v["independent_band_coverage"] for v in banded]
        lines[-1] += (
            f" Adding the kernels' bands assumes that their errors on a GPU pair move as one. "
            f"They share a part: {fmt_frac(min(share))} to {fmt_frac(max(share))} of the band "
            f"score's variance lies between the GPU pairs (the pair sets part of the error, "
            f"the kernel the rest), and in a total of many kernels the shared part is what "
            f"remains, as the kernels' own parts cancel. Taken as independent (the root of the "
            f"summed squares of the kernels' distances to their bounds), the band of the total "
            f"would hold {fmt_frac(min(indep))} to {fmt_frac(max(indep))} of the totals, not "
            f"90 %."
            + fitted_band_sentence(results))
    return "\n".join(lines)


def fitted_band_sentence(results) -> str:
    """The totals' bands added up against bands fitted on totals (``totals_fitted_bands``),
    over every method and table that has both: mean coverage and mean median width."""
    both = [(f, r["totals"][m]["totals"]) for r in results.values()
            for m, f in (r.get("totals_fitted_band") or {}).items()
            if (r.get("totals") or {}).get(m, {}).get("totals", {}).get("band_coverage")
            is not None]
    if not both:
        return ""
    fitted = np.mean([(f["coverage"], f["width"]) for f, _ in both], axis=0)
    summed = np.mean([(s["band_coverage"], s["band_width"]) for _, s in both], axis=0)
    return (f" Nor does a band fitted on the totals themselves, the bands' rule applied to "
            f"every table's totals without the table's data source (our suite's totals not "
            f"among them), serve them better: over the {len(both)} (method, table) cells that "
            f"have both, it holds {fmt_frac(fitted[0])} of the totals with a median width "
            f"of {fitted[1]:.2f} x the prediction (high - low; the mean over them), the summed "
            f"bands {fmt_frac(summed[0])} with {summed[1]:.2f}. Its scores come from one "
            f"application per GPU pair and table, the kernels' bands from every kernel. "
            f"`gpuproj predict` adds the bounds.")


# our own collections in the bands (their accuracy tables are scripts/suite_crossval.py's)
SUITE_TABLES = ("gpuproj-suite H100 <-> H200", "seed-report-4gpus -> ours")


def suite_band_pairs(data_dir) -> list:
    """Band pairs of our suite (data/suite/): every analytical method between the collected
    GPUs, and the seed report's four GPUs -> ours on the report's kernels (Srivastava et al.'s
    Experiment 1 with a Hopper target, where every method misses most: 1.9-5.5x too fast). The
    latter belong to the seed report's data source, so that leaving the report out of a fit
    leaves them out too. None where nothing is collected."""
    from suite_crossval import collected, pair_table, report_to_ours

    from gpuproj.evaluate import applicable_methods, evaluate

    dirs = collected(ROOT / "data" / "suite")
    out = []
    if len(dirs) >= 2:
        table, _ = pair_table(dirs)
        ev = evaluate(table, applicable_methods(table, list(BASELINES) + list(ANALYTICAL)))
        out.append(band_pairs(ev, SUITE_TABLES[0]))
    if dirs:
        name, fmt, files, _ = next(d for d in DATASETS if d[0] == "seed-report-4gpus")
        ev, _ = report_to_ours(load_dataset(data_dir, fmt, files), dirs, trained=())
        if ev is not None:
            out.append(band_pairs(ev, SUITE_TABLES[1]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, help="default docs/accuracy.md; stdout with --only")
    ap.add_argument("--json", type=Path,
                    help="default docs/results/accuracy.json; none with --only")
    ap.add_argument("--only", help="only datasets whose name contains this")
    args = ap.parse_args(argv)
    if not args.only:
        args.out = args.out or ROOT / "docs" / "accuracy.md"
        args.json = args.json or ROOT / "docs" / "results" / "accuracy.json"
    results, sections, band_frame, evs = run(args.data, args.only)
    if band_frame is None:  # --only on tables the bands leave out
        bands_md, held = "", pd.DataFrame()
    else:
        bands, bands_md, held = error_bands(band_frame, results=results)
    if args.only:
        print("--only: the shipped error bands are left as they are (and weigh the several "
              "sources)", file=sys.stderr)
        add_held_out(results, evs)
    else:
        # the bands just fitted, not the shipped file's: that holds the previous run's
        add_held_out(results, evs, bands)
        BANDS.write_text(json.dumps(bands, indent=1) + "\n")
    del evs
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        # a method without held-out pairs has no width: null, not NaN (which JSON has not)
        held = held.astype(object).where(held.notna(), None)
        args.json.write_text(json.dumps({"tables": results,
                                         "error_bands_held_out": held.to_dict(orient="records"),
                                         "notes": JSON_NOTES},
                                        indent=1, default=float, allow_nan=False))
    analysis = ROOT / "docs" / "accuracy_analysis.md"
    fragments = sorted((ROOT / "docs" / "results").glob("*.md"))
    doc = ["# Accuracy", "",
           "Generated by `python scripts/accuracy.py` from the public data in "
           "`../shared/data/external` (provenance and licences in its README). "
           "Do not edit by hand: "
           "edit the script or `docs/accuracy_analysis.md` (included below) and rerun.", "",
           "Every ordered pair of distinct GPUs (s, t) that measured the same kernel configuration "
           "gives one prediction of t's time from s's row alone plus the catalog. MAPE, median "
           "APE and GMRE are in %; coverage is the fraction of measured times inside the "
           "predicted [low, high], `-` where every interval is a point (no interval).", "",
           "## The papers' own numbers", "", PAPERS, "",
           "## Scoreboard", "",
           "MAPE / median APE in %. The best baseline and the best analytical method are chosen "
           "on the pairs they are scored on (as in the sections below; where the two predict "
           "different pairs, the verdict under the table's section compares them on the pairs "
           "both predict); the hybrid column is "
           "leave-one-GPU-out with the hybrid chosen on the training GPUs alone "
           "(`scripts/learned_experiments.py`, section \"Leave-one-GPU-out\" below), what a "
           "user without the target can get; on the five gpu-benches tables its models see a "
           "catalog without gpu-benches' own measurements of their GPUs (the methods beside it "
           "use them: the section compares all three families on that catalog). The last "
           "column predicts each GPU from all the others that measured the configuration at "
           "once (section \"Several source GPUs\"), "
           "a different question: what a centre with several GPUs measured can get.", "",
           scoreboard(results), "",
           "![scoreboard: each table's MAPE per column above](img/scoreboard.png)", "",
           "## Choosing a GPU", "",
           "A centre choosing among GPUs needs their order more than their times. Each kernel "
           "configuration measured on one source GPU ranks the other GPUs of the table that "
           "measured it (at least three): Spearman's rank correlation of predicted and measured "
           "times, mean over the rankings, / how often the GPU predicted fastest is the fastest "
           "measured (n GPUs predicted alike share the pick, 1/n each). `same` cannot rank "
           "(every target gets the source time); a target taken at random is the reference. "
           "The highest correlation of each table in bold. The per-table figures "
           "(`gpu_choice` in docs/results/accuracy.json) add how "
           "much longer the GPU chosen takes than the fastest (top-1 loss, median and worst "
           "ranking); `gpuproj evaluate --gpu-choice` gives them for any table. The learned "
           "models, each GPU predicted by a model that has not seen it, are scored in the table "
           "\"Choosing a GPU among unseen ones\" below.", "",
           choice_table(results), "",
           "## Several source GPUs", "",
           "A kernel configuration measured on several GPUs gives one projection of a target "
           "from each; `gpuproj evaluate --combine-sources` (`Evaluation.combined()`, "
           "`gpuproj.combine`) predicts each target from all the other GPUs of the table at "
           "once, as `gpuproj predict --source a,b,c` (or `--source all`) does for a GPU not "
           "in the table: the geometric mean of their projections, each weighted by the "
           "inverse square of its 90 % band's log-width, so that a source of the target's "
           "architecture and a short projection count more. The bands here are those this run "
           "fitted without the table's data source (for the gpu-benches tables, which the "
           "bands leave out, the bands themselves), and only the methods with such a band are "
           "in the table (the command weighs by the shipped bands, fitted on every table, so "
           "its numbers differ a little, and it combines every method). One source: the "
           "mean over single-source projections, as in every other table; the best method "
           "of each column chosen on its own pairs. Band coverage: of the best band-weighted "
           "method, from one source / combined (the combined band is the same weighted mean "
           "of the sources' bounds; the sources share the target's own deviation, so it is "
           "not narrowed).", "",
           combined_table(results), "",
           "## Application totals", "",
           "An application runs many kernels, and the error of its total is not its kernels' "
           "MAPE: errors of one sign add up, errors of opposite signs cancel, and the longest "
           "kernels weigh most. Here each ordered GPU pair of a table is one application that "
           "runs every kernel configuration both GPUs measured once (`gpuproj evaluate "
           "--totals`, `Evaluation.totals()`; `gpuproj predict` adds a profile's rows, times "
           "launches, the same way). The band of a total is its pairs' bands added up, which "
           "is exact where the kernels' errors move together and wider than needed where they "
           "are independent; bands fitted without the table's data source, as in the previous "
           "section. A table is one kernel's configurations for Rodinia, KernelTuner and "
           "gpu-benches, 16 kernels at several sizes for the seed report, and many operators "
           "for NeuSight. MAPE / median APE in %, over the kernel pairs and over the totals "
           "(one per ordered GPU pair).", "",
           totals_table(results), "",
           "## Analytical methods and baselines, per table", "", *sections]
    doc += [bands_md]
    if analysis.exists():
        doc += ["## Why methods win and lose", "", analysis.read_text()]
    for f in fragments:
        doc += ["", f.read_text()]
    if args.out:
        args.out.write_text("\n".join(doc) + "\n")
        print(f"wrote {args.out}", file=sys.stderr)
        if not args.only:
            from gpuproj.plots._style import save

            save(scoreboard_figure(scoreboard_rows(results)), SCOREBOARD_FIGURE)
            print(f"wrote {SCOREBOARD_FIGURE}", file=sys.stderr)
    else:
        sys.stdout.write("\n".join(doc) + "\n")


if __name__ == "__main__":
    main()
