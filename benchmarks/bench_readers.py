#!/usr/bin/env python3
"""Speed of the profile readers on whole-application files: an Nsight Compute raw page with one
row per launch, an Nsight Systems trace and a PyTorch profiler trace.

    python benchmarks/bench_readers.py [--launches 30000] [--repeat 3] [--out FILE.json]

The files are made here from the real fixtures, their rows repeated: the H100 raw page of
tests/data (3 kernels, every metric of ncu's full set: 365 columns) with ``--launches``
launches, and the Jetson AGX Thor trace (copies around each saxpy launch) with as many kernel
launches of 300 kernel names; the V100 PyTorch profiler trace (each kernel event with the
launch call and the two flow events Kineto writes around it) with as many launches of 300
kernel names. Launches per second = launches / the median wall-clock time of
``gpuproj.profiles.load`` (one process; the first, untimed load pays the imports).
``trace_join``: a table of ``--configs`` kernel configurations (1000 templated kernels)
loaded with a trace of the same configurations under namespaced names (``trace=``), rows per
second.
docs/results/bench_readers.json holds the last recorded run.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from machine import machine

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def ncu_page(path: Path, launches: int) -> int:
    """The H100 raw page with its launches repeated up to ``launches`` (IDs renumbered)."""
    lines = (DATA / "ncu-h100-sxm5-80gb-raw-base.csv").read_text().splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    rows = [next(csv.reader([ln])) for ln in lines[start + 2:]]
    out = io.StringIO()
    out.writelines(lines[:start + 2])
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for n in range(launches):
        writer.writerow([str(n), *rows[n % len(rows)][1:]])
    path.write_text(out.getvalue())
    return launches


def nsys_trace(path: Path, launches: int) -> int:
    """The Thor trace's header, and ``launches`` saxpy-like launches of 300 kernels, a device-
    to-host copy after every ninth."""
    header = (DATA / "nsys" / "vernier-thor_cuda_gpu_trace.csv").read_text().splitlines()[0]
    rng = np.random.default_rng(0)
    kernels, durations = rng.integers(0, 300, launches), rng.integers(1000, 90000, launches)
    lines = [header]
    for i in range(launches):
        k = int(kernels[i])
        lines.append(f"{i * 1000},{durations[i]},{i},{4096 * (1 + k % 3)},1,1,256,1,1,16,0.000,"
                     f'0.000,,,,,NVIDIA Thor (0),1,,13,"void kern_{k}<float>(float *, int)"')
        if i % 9 == 8:
            lines.append(f"{i * 1000 + 500},15424,{i},,,,,,,,,,4.194,271933.506,Device,Pinned,"
                         "NVIDIA Thor (0),1,,13,[CUDA memcpy Device-to-Host]")
    path.write_text("\n".join(lines) + "\n")
    return launches


def pytorch_trace(path: Path, launches: int) -> int:
    """The V100 RMSNorm trace's header and ``launches`` of its kernel events, each with the
    launch call and flows that follow it there, under 300 kernel names, a copy after every
    ninth."""
    doc = json.loads((DATA / "pytorch" / "rmsnorm-v100-pcie-16gb.pt.trace.json").read_text())
    events = doc["traceEvents"]
    kernels = [i for i, e in enumerate(events) if e.get("cat") == "kernel"]
    copy = next(e for e in events if e.get("cat") == "gpu_memcpy")
    rng = np.random.default_rng(0)
    names, durations = rng.integers(0, 300, launches), rng.integers(1, 900, launches)
    out = []
    for i in range(launches):
        at = kernels[i % len(kernels)]
        kernel = {**events[at], "name": f"void kern_{names[i]}<float>(float *, int)",
                  "dur": int(durations[i])}
        out += [kernel, *events[at + 1:at + 4]]
        if i % 9 == 8:
            out.append(copy)
    path.write_text(json.dumps({**doc, "traceEvents": out}, indent=2))
    return launches


def join_tables(profile: Path, trace: Path, configs: int) -> int:
    """A table of ``configs`` kernel configurations with counts, and a trace of them whose
    kernel names carry a namespace and other spacing (matched at the second level)."""
    rows = [(f"k{i % 1000}<float>", f"grid={i // 1000 + 1}x1x1 block=256x1x1")
            for i in range(configs)]
    profile.write_text("kernel,config,time_s,gpu,dram_bytes\n" + "".join(
        f'"void {k}(float *, int)",{c},1e-5,h100-sxm5-80gb,1e6\n' for k, c in rows))
    trace.write_text("kernel,config,time_s,gpu,launches\n" + "".join(
        f'"ns::{k}(float*, int)",{c},2e-5,h100-sxm5-80gb,3\n' for k, c in rows))
    return configs


def time_load(path: Path, launches: int, repeat: int, **options) -> dict:
    from gpuproj.profiles import load

    load(path, **options)  # untimed: imports and the catalog
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        load(path, **options)
        times.append(time.perf_counter() - t0)
    med = float(np.median(times))
    return {"launches": launches, "megabytes": round(path.stat().st_size / 1e6, 1),
            "median_s": round(med, 3), "launches_per_s": round(launches / med)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=30_000)
    ap.add_argument("--configs", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    args = ap.parse_args()
    import pandas

    out = {"machine": {**machine(), "numpy": np.__version__, "pandas": pandas.__version__},
           "repeat": args.repeat}
    with tempfile.TemporaryDirectory() as tmp:
        ncu, nsys = Path(tmp) / "app-ncu.csv", Path(tmp) / "app-nsys_cuda_gpu_trace.csv"
        out["ncu_raw_page"] = time_load(ncu, ncu_page(ncu, args.launches), args.repeat)
        out["nsys_trace"] = time_load(nsys, nsys_trace(nsys, args.launches), args.repeat)
        torch = Path(tmp) / "app.pt.trace.json"
        out["pytorch_trace"] = time_load(torch, pytorch_trace(torch, args.launches), args.repeat)
        table, trace = Path(tmp) / "counts.csv", Path(tmp) / "times.csv"
        joined = time_load(table, join_tables(table, trace, args.configs), args.repeat,
                           trace=trace)
        out["trace_join"] = {"configs": joined.pop("launches"), "median_s": joined["median_s"],
                             "configs_per_s": joined["launches_per_s"]}
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
