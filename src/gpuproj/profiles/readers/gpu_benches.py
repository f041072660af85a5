"""gpu-benches L2 working-set sweeps (github te42kyfo/gpu-benches @1c36d50, GPL-3.0 data;
``shared/data/external/gpu-benches/gpu-l2-cache/<gpu>.txt``; gpuproj ships no copy).

The benchmark (``gpu-l2-cache/main.cu``) launches one kernel 100 000 blocks of 1024 threads;
each block sums one chunk of a buffer (the first ``kB`` column), and the blocks cycle through
``data set / chunk`` chunks, so the whole data set (second ``kB`` column) is read over and
over while every launch moves the same bytes: 100 000 x chunk. Each line prints the fastest
of 7 launches as a time in whole milliseconds and as an effective bandwidth (GB/s, 10^9 B/s)
with five significant digits, then four counter columns (DRAM read/write, L2 read/write
GB/s) that print 0 where the run measured no counters.

One row per line: ``kernel`` = ``gpu-l2-cache sumKernel``, ``config`` =
``chunk=<kB>kB,data_set=<kB>kB``, ``time_s`` = 100 000 x chunk / bandwidth (the bandwidth is
the precise figure; the MI210 file prints twice this time, as if its run had launched twice
the blocks, so the time is that of the launch in the benchmark's source), ``l2_bytes`` = the
bytes moved (every load reaches L2), ``working_set_bytes`` = the data set, ``dram_bytes``
from the counter columns where they are not 0 (none of the published files has them),
``block_threads`` = 1024, ``grid_blocks`` = 100 000.

The files do not name their GPU: ``gpu=`` does, else the file name (``GPU_FILES``).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import InputError
from ...files import read_text
from ..table import ProfileTable
from ._checks import split_unusable_times
from ._io import resolve_gpus

KERNEL = "gpu-l2-cache sumKernel"
BLOCKS = 100_000  # gpu-l2-cache/main.cu: blockCount
BLOCK_THREADS = 1024  # gpu-l2-cache/main.cu: blockSize
KIB = 1024  # the files print blockDV / 1024 as "kB"

# gpu-benches file stem -> (catalog id, assumption about the exact part; "" where none)
GPU_FILES = {
    "v100": ("v100-pcie-16gb", "assumed V100 PCIe 16GB: the gpu-benches README shows its example "
                               "runs on 'Tesla V100 PCIe 16GB'"),
    "a100_40": ("a100-sxm4-40gb", "assumed A100 SXM4 40GB: the roofline file is 'alex_a100_40', "
                                  "and the NHR@FAU Alex cluster has HGX A100 SXM4 nodes"),
    "alex_a100_40": ("a100-sxm4-40gb", "assumed A100 SXM4 40GB (NHR@FAU Alex cluster, HGX A100 "
                                       "SXM4 nodes)"),
    "a100_80": ("a100-sxm4-80gb", "assumed A100 SXM4 80GB (NHR@FAU Alex cluster has HGX A100 "
                                  "SXM4 80GB nodes)"),
    "a40": ("a40", ""), "alex_a40": ("a40", ""),
    "l40": ("l40", ""), "genoa_l40": ("l40", ""),
    "h100_pcie": ("h100-pcie-80gb", ""),
    "h200": ("h200-sxm-141gb", "assumed H200 SXM (the file says only 'h200')"),
    "mi100": ("mi100", ""), "mi210": ("mi210", ""),
    "rx6900xt": ("rx-6900-xt", ""),
}

# chunk, data set, time, spread, bandwidth, then DRAM read/write and L2 read/write bandwidths
_UNITS = ("kB", "kB", "ms", "%", "GB/s", "GB/s", "GB/s", "GB/s", "GB/s")
_LINE = re.compile(r"^\s*" + r"\s+".join(rf"([0-9]+(?:\.[0-9]*)?)\s*{re.escape(u)}"
                                        for u in _UNITS) + r"\s*$")


def sniff(path, head: str) -> bool:
    first = head.splitlines()[0] if head else ""
    return "data set" in first and "exec time" in first and "Eff. bw" in first


def read(path, gpu: str | None = None) -> ProfileTable:
    """Read one ``gpu-l2-cache/<gpu>.txt``; ``gpu`` names the GPU (default: from the file
    name, ``GPU_FILES``)."""
    path = Path(path)
    stem = path.name.split(".")[0]
    if gpu is None:
        if stem not in GPU_FILES:
            raise InputError(f"the file does not name its GPU and '{stem}' is not a known "
                             "gpu-benches file name; pass --source NAME (gpu=NAME in load())",
                             path=path)
        gpu = GPU_FILES[stem][0]
    rows = []
    lines = read_text(path).splitlines()
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if not m:
            raise InputError("not a gpu-l2-cache line (chunk kB, data set kB, time ms, spread "
                             "%, bandwidth GB/s, four counter GB/s)", path=path, row=lineno)
        chunk_kb, set_kb, _, _, bw_gbs, dram_rd, dram_wr, _, _ = (float(x) for x in m.groups())
        moved = chunk_kb * KIB * BLOCKS
        # 0 B/s gives time 0, which the check below skips and counts
        time_s = moved / (bw_gbs * 1e9) if bw_gbs > 0 else 0.0
        dram = (dram_rd + dram_wr) * 1e9 * time_s
        rows.append({"_row": lineno, "config": f"chunk={chunk_kb:.0f}kB,data_set={set_kb:.0f}kB",
                     "time_s": time_s, "l2_bytes": moved, "working_set_bytes": set_kb * KIB,
                     "dram_bytes": dram if dram > 0 else np.nan})
    if not rows:
        raise InputError("file has a header but no rows", path=path)
    out = pd.DataFrame(rows)
    out["kernel"] = KERNEL
    out["block_threads"] = float(BLOCK_THREADS)
    out["grid_blocks"] = float(BLOCKS)
    out, skipped = split_unusable_times(out, path, field="Eff. bw")
    out["gpu"] = resolve_gpus(pd.Series(gpu, index=out.index), path)
    return ProfileTable.from_frame(out, skipped=skipped, origin=str(path))
