"""KernelTuner brute-force caches as wide tables (AutoTuningAssociation/benchmark_hub, MIT),
e.g. ``shared/data/external/kerneltuner-4gpus/*.csv.gz``: one row per tuning configuration,
one column per tuning parameter, and one ``time_ms__<GPU>`` column per GPU (mean of 32 runs,
milliseconds; underscores stand for spaces in the GPU name). A blank time means the
configuration does not compile or launch on that GPU: such cells are skipped with the reason
``config invalid on <gpu>``.

The output is long: one row per (configuration, GPU), ``config`` = the tuning parameters joined
in the order of their names (``KWG=32,KWI=2,MDIMA=8,...``), so that two caches that list them in
different orders name a configuration alike; the parameters are also kept as their own columns
for learned models.
``problem``: what the configurations solve, one problem per file and kernel (a cache tunes one),
so that rankings order the tuning variants of it: ``M=N=K=4096,PRECISION=32`` for a GEMM,
``image=4096x4096,filter=15x15`` for a convolution, the file name for another kernel.
Analytic work per launch, where the problem is recognised from its parameters:

- CLBlast GEMM (parameters MWG, NWG, KWG, MDIMC, NDIMC, ...): ``flops = 2 M N K`` with
  M = N = K = the size in the file name (``gemm_clblast_4096...``; the 4 of ``4gpus`` is no
  size) or ``gemm_size=`` (``--reader-option gemm_size=4096``); without either, the FLOPs and
  grid are left empty, with an ``InputWarning`` saying how to give the size;
  ``block_threads = MDIMC x NDIMC``, ``grid_blocks = (M / MWG) x (N / NWG)`` (CLBlast xgemm:
  local size MDIMC x NDIMC, global size M MDIMC / MWG x N NDIMC / NWG).
- KernelTuner 2-D convolution (block_size_x/y, tile_size_x/y, filter_width/height):
  ``flops = 2 W H filter_width filter_height`` for a W x H output image, W = H = 4096
  (``image_size=``), as in benchmark_hub ``kernels/convolution.py`` (its GFLOP/s metric);
  ``block_threads = block_size_x x block_size_y``, ``grid_blocks = ceil(W / (block_size_x
  tile_size_x)) x ceil(H / (block_size_y tile_size_y))`` (its grid divisors).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import InputError, InputWarning
from ..table import ProfileTable
from ._checks import numeric, split_unusable_times
from ._io import read_csv, resolve_gpus, whole_numbers

PREFIX = "time_ms__"
CONV_IMAGE_SIZE = 4096  # benchmark_hub kernels/convolution.py: image_width = image_height = 4096
_GEMM = {"MWG", "NWG", "KWG", "MDIMC", "NDIMC"}
_CONV = {"block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "filter_width",
         "filter_height"}


def sniff(path, head: str) -> bool:
    first = head.splitlines()[0] if head else ""
    return PREFIX in first


def _problem(params, path, gemm_size, image_size, p):
    """(kernel name, dtype, derived columns) for the recognised problem."""
    n = len(next(iter(p.values()))) if p else 0
    nan = pd.Series(np.nan, index=range(n))
    if _GEMM <= set(params):
        if gemm_size is None:
            # the first number after "gemm", unless it counts GPUs (gemm_clblast_4gpus.csv
            # was read as a GEMM of size 4)
            m = re.search(r"gemm\D*?(\d+)(?!\d|gpu)", Path(path).name)
            gemm_size = int(m.group(1)) if m else None
        if gemm_size is None:
            # said here: downstream it shows only as a profile without counts
            warnings.warn(InputWarning(
                f"{path}: a CLBlast GEMM whose size the file name does not give (as "
                "gemm_clblast_4096.csv does): its FLOPs and grid are unknown; give the size "
                "with --reader-option gemm_size=N (gemm_size=N in load())"), stacklevel=4)
        size = float(gemm_size) if gemm_size else np.nan
        dtype = "fp32"
        if "PRECISION" in p and (p["PRECISION"] == 64).all():
            dtype = "fp64"
        problem = pd.Series(f"M=N=K={size:.0f}" if gemm_size else "M=N=K=unknown",
                            index=nan.index)
        if "PRECISION" in p:
            problem = problem + ",PRECISION=" + whole_numbers(p["PRECISION"])
        return "clblast_xgemm", dtype, {
            "problem": problem,
            "flops": pd.Series(2.0 * size**3, index=nan.index),
            "block_threads": p["MDIMC"] * p["NDIMC"],
            "grid_blocks": (size / p["MWG"]) * (size / p["NWG"]),
        }
    if _CONV <= set(params):
        w = h = float(image_size)
        filters = whole_numbers(p["filter_width"]) + "x" + whole_numbers(p["filter_height"])
        return "convolution_kernel", "fp32", {
            "problem": f"image={w:.0f}x{h:.0f},filter=" + filters,
            "flops": 2.0 * w * h * p["filter_width"] * p["filter_height"],
            "block_threads": p["block_size_x"] * p["block_size_y"],
            "grid_blocks": (np.ceil(w / (p["block_size_x"] * p["tile_size_x"]))
                            * np.ceil(h / (p["block_size_y"] * p["tile_size_y"]))),
        }
    return Path(path).name.split(".")[0], None, {
        "problem": pd.Series(Path(path).name, index=nan.index)}


def read(path, gpu: str | None = None, gemm_size: int | None = None,
         image_size: int = CONV_IMAGE_SIZE) -> ProfileTable:
    """Read a wide KernelTuner table into one row per (configuration, GPU). ``gpu`` is not used
    (the columns name the GPUs)."""
    path = Path(path)
    df = read_csv(path)
    times = [c for c in df.columns if c.startswith(PREFIX)]
    if not times:
        raise InputError(f"no '{PREFIX}<GPU>' column", path=path, field=PREFIX + "*")
    params = [c for c in df.columns if c not in times and c != "_row"]
    if not params:
        raise InputError("no tuning-parameter column", path=path)
    p = {c: numeric(df[c], path=path, field=c, rows=df["_row"], allow_negative=True)
         for c in params}
    kernel, dtype, derived = _problem(params, path, gemm_size, image_size,
                                      {k: v.reset_index(drop=True) for k, v in p.items()})
    keys = sorted(params)  # the file's column order would make one configuration two
    config = df[keys[0]].astype(str).radd(keys[0] + "=")
    for c in keys[1:]:
        config = config + "," + c + "=" + df[c].astype(str)
    base = pd.DataFrame({"kernel": kernel, "config": config, "dtype": dtype,
                         "_row": df["_row"]})
    for c in params:
        base[c] = p[c]
    for c, v in derived.items():
        base[c] = v.to_numpy()
    parts, skipped = [], []
    names = pd.Series([c[len(PREFIX):].replace("_", " ") for c in times])
    ids = resolve_gpus(names, path)
    for c, gid in zip(times, ids):
        part = base.copy()
        part["gpu"] = gid
        part["time_s"] = numeric(df[c], path=path, field=c, rows=df["_row"]) * 1e-3
        part, bad = split_unusable_times(part, path, field=c,
                                         reason_blank=f"config invalid on {gid}")
        parts.append(part)
        skipped += bad
    out = pd.concat(parts, ignore_index=True)
    return ProfileTable.from_frame(out, skipped=skipped, origin=str(path))
