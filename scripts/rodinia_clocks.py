#!/usr/bin/env python3
"""The SM clock each GPU of the Amaris Rodinia tables ran at, from its own nvprof counters.

    python scripts/rodinia_clocks.py [--data DIR] [--min-duration-s 1e-4]

clock = elapsed_cycles_sm / (duration x SM count): nvprof's ``elapsed_cycles_sm`` sums the
elapsed cycles over the SMs. Printed per kernel table and GPU as the median over the runs longer
than ``--min-duration-s`` (short runs are dominated by the rounding of ``duration``), next to the
base and boost clocks of the catalog, whose peaks assume the boost clock. The Tesla K20 (fixed
706 MHz) and the P100 (boost 1303 MHz, reached) check the formula. docs/accuracy_analysis.md
quotes the result.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "external" / "amaris-rodinia-nvprof"
TABLES = ("calculate_temp_9gpus.csv.gz", "bpnn_layerforward_CUDA_9gpus.csv.gz",
          "bpnn_adjust_weights_cuda_9gpus.csv.gz")


def clocks(path: Path, min_duration_s: float) -> pd.DataFrame:
    from gpuproj.catalog import bundled_catalog
    from gpuproj.profiles.readers.amaris import AMARIS_GPUS

    cat = bundled_catalog()
    df = pd.read_csv(path, usecols=["gpu_name", "elapsed_cycles_sm", "duration"])
    df = df[df["duration"] > min_duration_s]
    rows = []
    for name, q in df.groupby("gpu_name"):
        gpu = cat.resolve(AMARIS_GPUS[name])
        hz = (q["elapsed_cycles_sm"] / (q["duration"] * gpu.value("sm_count"))).median()
        boost = gpu.value("boost_clock_hz")
        rows.append({"gpu": gpu.id, "runs": len(q), "clock_mhz": hz / 1e6,
                     "base_mhz": gpu.value("base_clock_hz") / 1e6, "boost_mhz": boost / 1e6,
                     "clock_over_boost": hz / boost})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--min-duration-s", type=float, default=1e-4)
    args = ap.parse_args(argv)
    for name in TABLES:
        out = clocks(args.data / name, args.min_duration_s)
        print(f"\n{name}\n" + out.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
