#!/usr/bin/env python3
"""The SM clock each GPU of the Amaris Rodinia tables ran at, from its own nvprof counters.

    python scripts/rodinia_clocks.py [--data DIR]

clock = elapsed_cycles_sm / (duration x SM count), the ``sm_clock_hz`` of the Amaris reader
(nvprof's ``elapsed_cycles_sm`` sums the elapsed cycles over the SMs; missing for runs under
100 us, which read high). Printed per kernel table and GPU as the median over the
configurations (each the median of its runs), next to the base and boost clocks of the
catalog, whose peaks assume the boost clock. The Tesla K20 (fixed 706 MHz) and the P100 (boost
1303 MHz, reached) check the formula.

Then, per table, what the clock is worth: between two GPUs of one architecture (same
configuration, same compiled code), the target time predicted as t_s x R_s / R_t with R the DRAM
bandwidth, or the issue rate (SMs x warp instructions per SM per clock x clock) at the boost, the
base or the profiled clock of each GPU (the last knows the target's clock, which a prediction
does not). docs/accuracy_analysis.md quotes both results.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import DEFAULT_DATA as EXTERNAL  # noqa: E402  (one data location for all scripts)

DEFAULT_DATA = EXTERNAL / "amaris-rodinia-nvprof"
TABLES = ("calculate_temp_9gpus.csv.gz", "bpnn_layerforward_CUDA_9gpus.csv.gz",
          "bpnn_adjust_weights_cuda_9gpus.csv.gz")


def _load(path: Path) -> tuple[pd.DataFrame, dict]:
    """The table's rows and its GPUs (id -> catalog GPU)."""
    from gpuproj.catalog import resolve
    from gpuproj.profiles import load

    df = load(path, format="amaris").df
    return df, {g: resolve(g) for g in df["gpu"].unique()}


def clocks(path: Path) -> pd.DataFrame:
    df, gpus = _load(path)
    df = df[df["sm_clock_hz"].notna()]
    rows = []
    for gid, q in df.groupby("gpu"):
        gpu = gpus[gid]
        hz = q["sm_clock_hz"].median()
        boost = gpu.value("boost_clock_hz")
        rows.append({"gpu": gid, "configs": len(q), "clock_mhz": hz / 1e6,
                     "base_mhz": gpu.value("base_clock_hz") / 1e6, "boost_mhz": boost / 1e6,
                     "clock_over_boost": hz / boost})
    return pd.DataFrame(rows)


def within_architecture(path: Path) -> pd.DataFrame:
    """MAPE and median APE (%) of the ratios above over the same-architecture GPU pairs."""
    import numpy as np

    df, gpus = _load(path)
    t = df.pivot_table(index="config", columns="gpu", values="time_s").dropna()
    # NaN for a GPU without runs of 100 us (the P100 on the bpnn tables; it has no sibling)
    clock = df.groupby("gpu")["sm_clock_hz"].median().reindex(t.columns)
    gpus = {g: gpus[g] for g in t.columns}

    def issue(g, hz):
        return gpus[g].value("sm_count") * gpus[g].value("warp_issue_per_sm_per_clock") * hz

    rates = {"DRAM bandwidth": {g: gpus[g].peak("dram_bw_bytes_per_s") for g in gpus},
             "issue rate, boost clock": {g: issue(g, gpus[g].value("boost_clock_hz"))
                                         for g in gpus},
             "issue rate, base clock": {g: issue(g, gpus[g].value("base_clock_hz"))
                                        for g in gpus},
             "issue rate, profiled clock": {g: issue(g, clock[g]) for g in gpus}}
    rows = []
    for label, r in rates.items():
        ape = [(t[s] * r[s] / r[d] / t[d] - 1).abs() * 100 for s in gpus for d in gpus
               if s != d and gpus[s].architecture == gpus[d].architecture]
        ape = np.concatenate([a.to_numpy() for a in ape])
        ape = ape[np.isfinite(ape)]
        rows.append({"ratio": label, "pairs": len(ape),
                     "mape": ape.mean() if len(ape) else np.nan,
                     "median_ape": np.median(ape) if len(ape) else np.nan})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = ap.parse_args(argv)
    for name in TABLES:
        out = clocks(args.data / name)
        print(f"\n{name}\n" + out.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    print("\nwithin one architecture: target time = source time x ratio (MAPE, median APE %)")
    for name in TABLES:
        out = within_architecture(args.data / name)
        print(f"\n{name}\n" + out.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
