"""NeuSight operator latency tables (github trsharm25/NeuSight, MIT,
``scripts/asplos/data/dataset/train/collect``; ``shared/data/external/neusight-train``): one
row per (PyTorch 2.1 FP32 operator call, GPU) with ``OPName``, ``Latency`` (milliseconds),
``Device``, the main CUDA kernel (``Kernel Name``, ``Grid x/y/z``, ``Block x/y/z``,
``Warps per SM``, ``Blocks per SM``) and the operator's shape.

``kernel`` = ``OPName``; ``config`` = the shape parameters joined, and ``problem`` too: each
shape is a problem of its own, not a tuning variant of another; ``Kernel Name`` and the
per-SM figures are kept as extra columns (``kernel_name``, ``warps_per_sm``,
``blocks_per_sm``) for learned models. Work per call (analytic, FMA = 2 FLOP):

- ``bmm`` (``torch.bmm`` of B x M x K by B x K x N): ``flops = 2 B M N K``.
- ``conv`` (``Conv2d`` of a B x C_in x S x S input with C_out filters of k x k, stride s,
  padding p; the column is spelled ``Kernel_Szie`` in the data): output side
  ``O = floor((S + 2p - k) / s) + 1`` and ``flops = 2 B C_out O^2 C_in k^2`` (the
  multiply-adds of the convolution; bias additions and the algorithm cuDNN picked, e.g.
  Winograd, are not counted: where it did fewer, a row ran faster than the datasheet roofline
  of these FLOPs allows, and ``gpuproj predict`` and ``evaluate`` say so in a warning).

No bytes: each operator's compulsory traffic (every tensor read or written once) would make
59 % of the bmm rows memory-bound at the datasheet peaks, where they reach a median 13-40 % of
that bound and scale with neither ceiling, and every roofline method erred more with it
(docs/accuracy_analysis.md, "Tables with analytic FLOPs only").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import InputError
from ..table import ProfileTable
from ._checks import numeric, require_columns, split_unusable_times
from ._io import read_csv, resolve_gpus, whole_numbers

BMM_SHAPE = ("B", "M", "N", "K")
CONV_SHAPE = {"B": "B", "Input_Channel": "Cin", "Output_Channel": "Cout", "Kernel_Szie": "k",
              "Input_Size": "size", "Stride": "stride", "Padding": "pad"}
_EXTRA = {"Kernel Name": "kernel_name", "Warps per SM": "warps_per_sm",
          "Blocks per SM": "blocks_per_sm"}


def sniff(path, head: str) -> bool:
    first = head.splitlines()[0] if head else ""
    return first.startswith("OPName,Latency,Device")


def read(path, gpu: str | None = None) -> ProfileTable:
    """Read a NeuSight table. ``gpu`` is not used (the ``Device`` column names the GPU)."""
    path = Path(path)
    df = read_csv(path)
    require_columns(df, ["OPName", "Latency", "Device"], path)
    rows = df["_row"]
    if set(BMM_SHAPE) <= set(df.columns):
        shape = {c: c for c in BMM_SHAPE}
    elif set(CONV_SHAPE) <= set(df.columns):
        shape = CONV_SHAPE
    else:
        raise InputError("no bmm shape (B, M, N, K) or conv shape (B, Input_Channel, "
                         "Output_Channel, Kernel_Szie, Input_Size, Stride, Padding)", path=path)
    s = {short: numeric(df[col], path=path, field=col, rows=rows) for col, short in shape.items()}
    out = pd.DataFrame({"kernel": df["OPName"].astype(str), "_row": rows, "dtype": "fp32"})
    config = None
    for short, v in s.items():
        part = short + "=" + whole_numbers(v)
        config = part if config is None else config + "," + part
        out[short] = v
    out["config"] = config
    out["problem"] = config
    if shape is CONV_SHAPE:
        side = np.floor((s["size"] + 2 * s["pad"] - s["k"]) / s["stride"]) + 1
        out["flops"] = 2.0 * s["B"] * s["Cout"] * side**2 * s["Cin"] * s["k"] ** 2
    else:
        out["flops"] = 2.0 * s["B"] * s["M"] * s["N"] * s["K"]
    grid = [numeric(df[c], path=path, field=c, rows=rows) for c in ("Grid x", "Grid y", "Grid z")
            if c in df.columns]
    block = [numeric(df[c], path=path, field=c, rows=rows)
             for c in ("Block x", "Block y", "Block z") if c in df.columns]
    if grid:
        out["grid_blocks"] = np.prod(grid, axis=0)
    if block:
        out["block_threads"] = np.prod(block, axis=0)
    for col, name in _EXTRA.items():
        if col in df.columns:
            out[name] = df[col]
    out["time_s"] = numeric(df["Latency"], path=path, field="Latency", rows=rows) * 1e-3
    out, skipped = split_unusable_times(out, path, field="Latency")
    out["gpu"] = resolve_gpus(df.loc[out.index, "Device"].astype(str), path,
                             rows=out["_row"], field="Device")
    return ProfileTable.from_frame(out, skipped=skipped, origin=str(path))
