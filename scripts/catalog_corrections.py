#!/usr/bin/env python3
"""What each correction of the catalog did to the accuracy tables: every baseline and analytical
method on the tables the correction touches, scored with the GPU files as they were before it
and as they are. Writes docs/results/catalog_corrections.md, which scripts/accuracy.py includes
in docs/accuracy.md (run this first).

    python scripts/catalog_corrections.py [--data DIR]
    python scripts/catalog_corrections.py --before NAME DIR

The second form writes the GPU files as they were before correction NAME into DIR and prints
DIR, so that any script reruns with them, e.g. the learned models' numbers the notes of
docs/accuracy.md quote from before a correction (a GPU file of the same id in another folder of
the catalog's, such as ~/.config/gpuproj/gpus, is an error then: move it aside):

    GPUPROJ_GPU_PATH=$(python scripts/catalog_corrections.py --before seed-copy-rate /tmp/b) \\
        python scripts/learned_experiments.py --only table6 --out /tmp/b-results

A file in DIR replaces the bundled GPU of its id ($GPUPROJ_GPU_PATH, gpuproj.catalog). Each
correction restores the values it replaced, as they were, with their sources then; everything
else in the file is today's. The report scores the bundled catalog alone, the user's own GPU
files left out.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import (  # noqa: E402  (one table definition for every script)
    ANALYTICAL,
    BASELINES,
    DATASETS,
    DEFAULT_DATA,
    ROOT,
    fmt_pct,
    load_dataset,
)

BUNDLED = ROOT / "src" / "gpuproj" / "catalog" / "gpus"
OUT = ROOT / "docs" / "results" / "catalog_corrections.md"


def _value(value, kind, source) -> dict:
    return {"value": value, "kind": kind, "source": source}


def _gtx970_product_page(gpu: dict) -> None:
    gpu["peak"]["dram_bw_bytes_per_s"] = _value(
        2.24e11, "datasheet", "NVIDIA GeForce GTX 970 product specifications page: 224 GB/s")


def _seed_copy_rate_as_printed(gpu: dict) -> None:
    m = gpu["measured"]["dram_bw_bytes_per_s"]
    # the doubling is stated in the source; a file re-sourced since would be halved wrongly
    assert ", x 2:" in m["source"], m["source"]
    m["value"] /= 2
    m["source"] = m["source"].split(", x 2:")[0]


def _k5200_without_fp64(gpu: dict) -> None:
    del gpu["values"]["fp64_lanes_per_sm"]
    for f in ("fp64_fma_flops_per_s", "fp64_addmul_flops_per_s"):
        del gpu["peak"][f]


_GB_H200 = ("gpu-benches @1c36d50 {file}: {what} (assumed H200 SXM (the file says only "
            "'h200'))")


def _h200_gpu_benches(gpu: dict) -> None:
    # the measured section as scripts/measured_from_gpu_benches.py wrote it from gpu-benches'
    # 'h200' files before our own run (commit 787e95c^)
    old = {"dram_write_bw_bytes_per_s": (3.898e12, "gpu-stream/h200.txt",
                                         "max init over occupancy sweep = 3898 GB/s"),
           "dram_read_bw_bytes_per_s": (2.756e12, "gpu-stream/h200.txt",
                                        "max read over occupancy sweep = 2756 GB/s"),
           "dram_bw_bytes_per_s": (3.534e12, "gpu-stream/h200.txt",
                                   "max triad over occupancy sweep = 3534 GB/s"),
           "l2_bw_bytes_per_s": (1.00845e13, "gpu-l2-cache/h200.txt",
                                 "L2 plateau = median Eff. bw over the 29 data sets <= L2/2 "
                                 "(25 MiB) = 10084.5 GB/s"),
           "fp32_fma_flops_per_s": (4.2558e13, "gpu-roofline/h200.txt",
                                    "max GF/s over the arithmetic-intensity sweep = 42558 GF/s"),
           "launch_overhead_s": (2.427259259259259e-06, "gpu-small-kernels/h200.txt",
                                 "shortest time per kernel at n = 4096 doubles over the 6 "
                                 "block sizes = 2.43 us")}
    gpu["measured"] = {k: _value(v, "measurement", _GB_H200.format(file=f, what=w))
                       for k, (v, f, w) in old.items()}


_H100_TABLE3 = ("NVIDIA H100 Tensor Core GPU Architecture whitepaper, Table 3 'Comparison of "
                "NVIDIA A100 and H100 Data Center GPUs' (GH100 with 132 SMs, as H100 SXM5): ")


def _h200_l2_and_bus_as_cited_before(gpu: dict) -> None:
    # the sources as they were, verbatim (the H100 SXM5's bus is 5120 bits; 6144 is the full
    # GH100's)
    gpu["values"]["l2_size_bytes"] = _value(52428800, "whitepaper",
                                            _H100_TABLE3 + "L2 cache 51200 KB")
    gpu["values"]["memory_bus_bits"] = _value(6144, "datasheet",
                                              _H100_TABLE3 + "memory interface 6144-bit")


def _laptop_clock_upper_end(gpu: dict) -> None:
    gpu["values"]["boost_clock_hz"] = _value(
        1.703e9, "datasheet", "NVIDIA GeForce RTX 3060 Laptop GPU specifications page: boost "
        "clock range 1283-1703 MHz; the upper end is stored")
    for field, e in gpu["peak"].items():
        if field != "dram_bw_bytes_per_s":  # every other peak is derived from the clock
            e["value"] *= 1.703 / 1.478
            e["source"] = e["source"].replace("1.478 GHz", "1.703 GHz")


@dataclass(frozen=True)
class Correction:
    name: str  # for --before
    title: str  # what the catalog says now, and what it said
    commit: str  # the commit that made it
    tables: tuple  # the DATASETS it touches (substrings of their names)
    before: dict  # GPU id -> function restoring that GPU file's values before the correction


CORRECTIONS = (
    Correction("gtx970-bandwidth",
               "The GTX 970's DRAM bandwidth is 196 GB/s (NVIDIA's January 2015 statement: the "
               "3.5 GB segment), not the product page's 224 GB/s", "badf92a",
               ("amaris-rodinia",), {"gtx-970": _gtx970_product_page}),
    Correction("seed-copy-rate",
               "The seed report's measured DRAM rates are doubled: its copy reads and writes "
               "the size it divides by the time (before: as printed)", "b9ea941",
               # the RTX 2080 Ti's rate also sits in the KernelTuner tables, whose FLOP-only
               # rows no method prices by a DRAM ceiling: scored, none of them moved
               ("amaris-rodinia", "seed-report"),
               dict.fromkeys(("gtx-titan-x", "rtx-2080-ti", "rtx-4070", "titan-v"),
                             _seed_copy_rate_as_printed)),
    Correction("k5200-fp64",
               "The Quadro K5200's FP64 rate is 1:24 (TechPowerUp's database, corroborated by "
               "the Rodinia times); before, the catalog had none", "174884f",
               ("amaris-rodinia",), {"quadro-k5200": _k5200_without_fp64}),
    Correction("h200-own-run",
               "The H200 SXM's measured ceilings are our own `gpuproj bench` run, not "
               "gpu-benches' maxima for its 'h200' (STREAM triad 3.53 against 4.37 TB/s, L2 "
               "10.4 against 22.4 TB/s, FP32 FMA 42.6 against 65.1 TFLOP/s)", "787e95c",
               ("gpu-benches",), {"h200-sxm-141gb": _h200_gpu_benches}),
    Correction("h200-l2-size",
               "The H200 SXM's L2 is 60 MiB and its memory bus 6016 bits, as its CUDA driver "
               "reported in our bench run; before, 50 MiB and 6144 bits, cited from the H100 "
               "whitepaper (the H100 SXM5's L2; 6144 bits are the full GH100's)",
               "f964079", ("gpu-benches",), {"h200-sxm-141gb": _h200_l2_and_bus_as_cited_before}),
    Correction("laptop-clock",
               "The RTX 3060 Laptop's boost clock is the geometric mean of NVIDIA's 1283-1703 "
               "MHz range, 1478 MHz (the laptop's power limit sets it, and the name does not "
               "say it), and its peaks follow; before, the upper end", "52967df",
               ("kerneltuner",), {"rtx-3060-laptop": _laptop_clock_upper_end}),
)


def write_before(c: Correction, folder: Path) -> Path:
    """The GPU files of ``c`` as they were before it, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for gid, restore in c.before.items():
        gpu = yaml.safe_load((BUNDLED / f"{gid}.yaml").read_text())
        restore(gpu)
        (folder / f"{gid}.yaml").write_text(yaml.safe_dump(gpu, sort_keys=False))
    return folder


@contextlib.contextmanager
def bundled_catalog_and(folder=None):
    """The bundled GPUs (and ``folder``'s, replacing those of their ids) while the block runs:
    neither $GPUPROJ_GPU_PATH nor ~/.config/gpuproj/gpus, so that a user's own GPU files
    change neither column of the report."""
    import gpuproj.catalog as catalog

    old_path, old_dir = os.environ.get("GPUPROJ_GPU_PATH"), catalog.USER_DIR
    os.environ["GPUPROJ_GPU_PATH"] = str(folder) if folder else ""
    catalog.USER_DIR = Path(tempfile.gettempdir()) / "gpuproj-no-user-gpus"
    try:
        yield
    finally:
        catalog.USER_DIR = old_dir
        if old_path is None:
            del os.environ["GPUPROJ_GPU_PATH"]
        else:
            os.environ["GPUPROJ_GPU_PATH"] = old_path


def scores(data: Path, c: Correction) -> dict:
    """{table: {method: (MAPE, median APE, pairs)}} of the tables ``c`` touches, with the catalog
    as it is loaded now (inside ``bundled_catalog_and``: the bundled one)."""
    from gpuproj.evaluate import applicable_methods, evaluate

    out = {}
    for name, fmt, files, _ in DATASETS:
        if not any(t in name for t in c.tables):
            continue
        table = load_dataset(data, fmt, files)
        methods = applicable_methods(table, list(BASELINES) + list(ANALYTICAL))
        out[name] = {m: (s["mape"], s["median_ape"], s["n"])
                     for m, s in evaluate(table, methods).summary().items() if s["n"]}
    return out


def scores_before(data: Path, c: Correction) -> dict:
    """``scores`` with the bundled GPU files, those of ``c`` as they were before it."""
    with tempfile.TemporaryDirectory() as tmp, bundled_catalog_and(write_before(c, Path(tmp))):
        return scores(data, c)


def markdown(results) -> str:
    lines = ["## What the catalog's corrections did", "",
             "Each correction of a catalog value, undone: the tables it touches scored with the "
             "GPU files as they were before it, then as they are (MAPE / median APE in %, "
             "`before -> now`, `=` where neither moved by 0.05). `python "
             "scripts/catalog_corrections.py` measures them; `--before NAME DIR` writes the "
             "files as they were, for any other script to rerun with (`GPUPROJ_GPU_PATH=DIR`). "
             "Why each correction is right is in the GPU file's sources and in the points of "
             "\"Why methods win and lose\".", ""]
    for c, before, now in results:
        lines += [f"### {c.title}", "",
                  f"`{c.name}`, commit {c.commit}; "
                  f"GPU files: {', '.join(c.before)}.", "",
                  "| method | " + " | ".join(now) + " |",
                  "|---|" + "---|" * len(now)]
        methods = [m for m in (*BASELINES, *ANALYTICAL) if any(m in now[t] for t in now)]
        for m in methods:
            cells = []
            for t in now:
                b, n = before[t].get(m), now[t].get(m)
                if n is None and b is None:
                    cells.append("-")
                elif b is None or n is None:
                    cells.append(f"{_pair(b)} -> {_pair(n)}")
                elif b[2] != n[2]:  # pairs a missing value had left out
                    cells.append(f"{_pair(b)} ({b[2]} pairs) -> {_pair(n)} ({n[2]})")
                elif all(abs(x - y) < 0.05 for x, y in zip(b[:2], n[:2])):
                    cells.append(f"{_pair(n)} =")
                else:
                    cells.append(f"{_pair(b)} -> {_pair(n)}")
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _pair(s) -> str:
    return "none" if s is None else f"{fmt_pct(s[0])} / {fmt_pct(s[1])}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="corrections: " + ", ".join(c.name for c in CORRECTIONS))
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--before", nargs=2, metavar=("NAME", "DIR"),
                    help="write the GPU files as they were before correction NAME into DIR")
    args = ap.parse_args(argv)
    if args.before:
        name, folder = args.before
        by_name = {c.name: c for c in CORRECTIONS}
        if name not in by_name:
            ap.error(f"unknown correction '{name}' (one of: {', '.join(by_name)})")
        print(write_before(by_name[name], Path(folder)))
        return
    results = []
    for c in CORRECTIONS:
        with bundled_catalog_and():
            now = scores(args.data, c)
        results.append((c, scores_before(args.data, c), now))
        print(f"{c.name}: done", file=sys.stderr)
    OUT.write_text(markdown(results))
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
