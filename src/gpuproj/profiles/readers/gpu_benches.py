"""gpu-benches microbenchmark results (github te42kyfo/gpu-benches @1c36d50, GPL-3.0 data;
``shared/data/external/gpu-benches/``; gpuproj ships no copy). Two of its benchmarks are read,
told apart by the first line.

**L2 working-set sweeps** (``gpu-l2-cache/<gpu>.txt``). The benchmark
(``gpu-l2-cache/main.cu``) launches one kernel 100 000 blocks of 1024 threads;
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

**Repeated small kernels** (``gpu-small-kernels/<gpu>[_graph|_pt|_gsync].txt``). The benchmark
(``gpu-small-kernels/main.cu``) launches a stream kernel ``A[i] = B[i] * 0.25`` on ``n``
doubles thousands of times back to back, A and B swapping roles, one thread per element in
blocks of 32 to 1024 threads (``grid = n / block + 1``), for n from 4096 up (x 1.06 per
line). Each line is ``n``, the data size in kB, then per block size the bandwidth
``16 n / t`` in whole GB/s, t the median over three timed loops of the time per kernel,
launch gaps included. The block sizes double from left to right up to 1024: six columns on
most files (32 to 1024), more on older runs (the A100 80 GB file: 4 to 1024, its size column
in MB; the MI210: 16 to 1024); every line has as many as the first, except the last line of a
run cut short, which has the first columns only.
The suffix names the way the kernels were queued: none, one launch each; ``_graph``, one CUDA
/ HIP graph; ``_pt`` and ``_gsync``, one persistent kernel that synchronises its blocks
between the repetitions (with atomics or a grid sync), whose grid the file does not give.

One row per line and block size: ``kernel`` = ``gpu-small-kernels scale`` (with the queueing
in brackets for the suffixed files), ``config`` = ``n=<n>,block=<threads>``, ``time_s`` =
16 n / bandwidth, ``l2_bytes`` = ``working_set_bytes`` = 16 n (the two arrays, which stay in
the L2 between launches while they fit), one FP64 multiply per element (``fp64_mul_thread_inst``
= n, FMA and add 0), ``dtype`` = fp64, ``block_threads``,
``grid_blocks`` (unset for the persistent kernels). A whole-GB/s bandwidth rounds the time by
up to 2 % at the smallest sizes (about 20-40 GB/s).

The files do not name their GPU: ``gpu=`` does, else the file name (``GPU_FILES``, after the
suffix is taken off).
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

SMALL_KERNEL = "gpu-small-kernels scale"
SMALL_BYTES_PER_ELEMENT = 16  # one double read, one written (main.cu: size * 2 * sizeof(double))
SMALL_MAX_BLOCK = 1024  # main.cu: for (xblock = ...; xblock <= 1024; xblock *= 2)
# file-name suffix -> how the repetitions were queued, as the kernel name says it
SMALL_QUEUEING = {"": "", "graph": " (graph)", "pt": " (persistent, atomic sync)",
                  "gsync": " (persistent, grid sync)"}
# elements, size (kB; MB in older runs), then one whole GB/s per block size
_SMALL_LINE = re.compile(r"^\s*([0-9]+)\s+[0-9]+kB((?:\s+[0-9]+)+)\s*$")


def sniff(path, head: str) -> bool:
    first = head.splitlines()[0] if head else ""
    l2 = "data set" in first and "exec time" in first and "Eff. bw" in first
    return l2 or bool(_SMALL_LINE.match(first))


def _gpu_of(path, stem, gpu):
    if gpu is not None:
        return gpu
    if stem not in GPU_FILES:
        raise InputError(f"the file does not name its GPU and '{stem}' is not a known "
                         "gpu-benches file name; pass --source NAME (gpu=NAME in load())",
                         path=path)
    return GPU_FILES[stem][0]


def read(path, gpu: str | None = None) -> ProfileTable:
    """Read one ``gpu-l2-cache/<gpu>.txt`` or ``gpu-small-kernels/<gpu>[_suffix].txt``;
    ``gpu`` names the GPU (default: from the file name, ``GPU_FILES``)."""
    path = Path(path)
    lines = read_text(path).splitlines()
    if lines and _SMALL_LINE.match(lines[0]):
        out, gpu = _small_kernels(path, lines, gpu)
        field = "bandwidth"
    else:
        out, gpu = _l2_sweep(path, lines, gpu)
        field = "Eff. bw"
    out, skipped = split_unusable_times(out, path, field=field)
    out["gpu"] = resolve_gpus(pd.Series(gpu, index=out.index), path)
    return ProfileTable.from_frame(out, skipped=skipped, origin=str(path))


def _matches(path, lines, first, pattern, what):
    """(line number, match) of each non-blank line from line ``first`` on; a line that
    ``pattern`` does not match is an error naming it as not ``what``."""
    for lineno, line in enumerate(lines[first - 1:], start=first):
        if not line.strip():
            continue
        m = pattern.match(line)
        if not m:
            raise InputError(f"not a {what}", path=path, row=lineno)
        yield lineno, m


def _l2_sweep(path, lines, gpu) -> tuple[pd.DataFrame, str]:
    gpu = _gpu_of(path, path.name.split(".")[0], gpu)
    rows = []
    for lineno, m in _matches(path, lines, 2, _LINE, "gpu-l2-cache line (chunk kB, data set "
                              "kB, time ms, spread %, bandwidth GB/s, four counter GB/s)"):
        chunk_kb, set_kb, _, _, bw_gbs, dram_rd, dram_wr, _, _ = (float(x) for x in m.groups())
        moved = chunk_kb * KIB * BLOCKS
        # 0 B/s gives time 0, which the check in read skips and counts
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
    return out, gpu


def _small_kernels(path, lines, gpu) -> tuple[pd.DataFrame, str]:
    stem = path.name.split(".")[0]
    base, _, suffix = stem.rpartition("_")
    if suffix not in SMALL_QUEUEING or not base:
        base, suffix = stem, ""
    gpu = _gpu_of(path, base, gpu)
    parsed = [(lineno, int(m.group(1)), [float(v) for v in m.group(2).split()])
              for lineno, m in _matches(path, lines, 1, _SMALL_LINE, "gpu-small-kernels line "
                                        "(elements, size kB, then one whole GB/s per block "
                                        "size)")]
    # the block sizes double up to 1024 over the columns of the first line; only the last
    # line, of a run cut short, may have fewer (the first of them): any other count would shift
    # every block size of the file
    columns = len(parsed[0][2])
    blocks = [SMALL_MAX_BLOCK >> (columns - 1 - i) for i in range(columns)]
    if blocks[0] < 1:
        raise InputError(f"{columns} bandwidth columns, more than block sizes from 1 to "
                         f"{SMALL_MAX_BLOCK} threads can give", path=path, row=parsed[0][0])
    for i, (lineno, _, values) in enumerate(parsed):
        if len(values) > columns or (len(values) < columns and i < len(parsed) - 1):
            raise InputError(f"{len(values)} bandwidth columns where the first line has "
                             f"{columns} (only a run's last line may stop short)", path=path,
                             row=lineno)
    persistent = suffix in ("pt", "gsync")
    rows = []
    for lineno, n, values in parsed:
        for b, bw_gbs in zip(blocks, values):
            rows.append({"_row": lineno, "config": f"n={n},block={b}",
                         # 0 GB/s gives time 0, which the check in read skips and counts
                         "time_s": SMALL_BYTES_PER_ELEMENT * n / (bw_gbs * 1e9) if bw_gbs > 0
                         else 0.0,
                         "l2_bytes": float(SMALL_BYTES_PER_ELEMENT * n),
                         "working_set_bytes": float(SMALL_BYTES_PER_ELEMENT * n),
                         "fp64_fma_thread_inst": 0.0, "fp64_add_thread_inst": 0.0,
                         "fp64_mul_thread_inst": float(n), "block_threads": float(b),
                         "grid_blocks": np.nan if persistent else float(n // b + 1)})
    out = pd.DataFrame(rows)
    out["kernel"] = SMALL_KERNEL + SMALL_QUEUEING[suffix]
    out["dtype"] = "fp64"
    return out, gpu
