"""gpu-benches microbenchmark results (github te42kyfo/gpu-benches @1c36d50, GPL-3.0 data;
``shared/data/external/gpu-benches/``; gpuproj ships no copy). Five of its benchmarks are
read, told apart by their first lines.

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

**L1 working-set sweeps** (``gpu-cache/<gpu>.txt``). The benchmark (``gpu-cache/main.cu``:
``measure<N>``, ``sumKernel``) launches one block of 256 threads per SM (``blockCount`` =
the runtime's ``multiProcessorCount``); every block sums the same buffer of N elements (thread
t reads elements t, t + 256, ...) ``iters`` times over, so the data set (the ``data set``
column, N x the element's bytes, printed in 1024-byte kB) is each SM's working set and the
GPU's. N runs 256, 512, 768, then multiples of 512 up to 16 384, then 16 384 x 1.17^k rounded
down to a multiple of 512 (``expSeries``, k = 15 left out). A launch loads N x element bytes x
blocks x ``iters``; ``Eff. bw`` is that over the fastest of 15 launches (GB/s, 10^9 B/s, one
decimal), ``exec time`` the mean of the 13 between the fastest and the slowest in whole ms,
``spread`` (slowest - fastest) / that mean; four counter columns follow (DRAM read/write, L2
read/store GB/s). A ``clock:`` line (a clock reading taken before the runs) and
ROCm's ``Agent <n>`` lines are passed over.

The published runs come from different versions of main.cu: a ``typedef`` makes the element a
double (the V100, A100 80 GB and H100 PCIe files: first data set 2 kB), a float (A40, L40: 1 kB)
or, in the HIP build, a float4 (MI100, MI210, RX 6900 XT: 4 kB), and ``iters`` is
10^8 / N + 2 (V100, A100, H100, MI210) or 10^9 / N + 2 (A40, L40, MI100, RX 6900 XT), which the
printed times fit (the RX 6900 XT's at 40 blocks, half its 80 CUs). Their work thus differs
from GPU to GPU, so every row is scaled to the same work, ``CACHE_BYTES`` loaded, at the
printed bandwidth (as the roofline sweeps are). Upstream also has ``mi100d``, ``mi100f`` and
``mi210d`` runs (not in shared/): their stems are not in ``GPU_FILES``, so they need ``gpu=``.

One row per line: ``kernel`` = ``gpu-cache sumKernel (<element>)``, the element from the first
line's data set, which is N = 256 elements (1 kB: ``fp32``, 2 kB: ``fp64``, 4 kB: ``float4``;
another is an error): the three builds are different code (one load of 4, 8 or 16 bytes per
addition) and pair only among themselves. ``config`` = ``data_set=<kB>kB``, ``time_s`` =
``CACHE_BYTES`` / ``Eff. bw``, ``l1_bytes`` = ``CACHE_BYTES`` (every load), ``working_set_bytes``
= ``sm_working_set_bytes`` = the data set (every block re-reads all of it), ``block_threads`` =
256; no grid (each run is one block per SM of its own GPU, which the scaled work is not), no
FLOPs (as for the L2 sweeps), and no L2 or DRAM bytes: which level serves the loads (the L1
while the set fits it, the L2 past it) is what the sweep measures. The counter columns are not
read: 0 in four files, and the MI210's ``DRAM read`` equals its ``Eff. bw`` at every data set
(10.6 TB/s at 4 kB, past any DRAM), so they do not count what they are named for on every GPU.

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

**Roofline sweeps** (``gpu-roofline/<gpu>.txt``). The benchmark (``gpu-roofline/main.cu``,
one build per ``its`` by ``series.sh``) launches one full wave of resident blocks of 256
threads (the line's ``blocks``: SMs x blocks per SM) on every GPU of a node at once, 1000
times; each thread reads 4000 elements of two arrays, a and b, strided by the block size, and
on each pair runs ``v = a - b`` and then ``its`` dependent FMAs ``v = v * a - b`` (two chains
per thread), summing the results. A line is the device, blocks, its, the FLOP per byte it
prints, (2 + 2 its) / (2 x element bytes), the bandwidth (GB/s) and FLOP rate (GF/s) of the
same timing, in whole units, the median SM clock (MHz) during the run, then power and
temperature (not read). The printed Fl/B gives the element type, which a ``typedef`` in
main.cu chooses (0.25 at 0 its: 4-byte floats in every published file). The lines of
``series.sh`` itself (each ``its`` as its build starts, ``-- Finished Building --``) are
passed over.

The runs size the arrays to their GPU's wave, so their work differs from GPU to GPU: every row
is scaled to the same work, ``ROOF_ELEMENTS`` elements of each array, at the measured rate.
One row per ``its``: ``kernel`` = ``gpu-roofline testfun (fp32)``, ``config`` =
``its=<its>``, ``time_s`` = the work / the rate (whichever of the two printed rates has more
digits), the median over the node's devices (the L40 node's two GPUs ran at different clocks
from about 140 its on: device 0 at its 300 W limit), ``sm_clock_hz`` = their median clock,
``dram_bytes`` = ``l2_bytes`` = ``working_set_bytes`` = both arrays (8 GB, past every L2; the
one value per block written is left out), per element ``its`` FMA and two ADD thread
instructions (``a - b``, the sum), ``block_threads`` = 256; no grid (each run is one full wave
of its own GPU, which the scaled work is not).

**Stream kernels against occupancy** (``gpu-stream/<gpu>.txt``). The benchmark
(``gpu-stream/main.cu``) runs six kernels over arrays of ``STREAM_ELEMENTS`` doubles, one
thread per element in blocks of 32 to 1024 threads (``grid = elements / block + 1``), each
block holding a shared-memory array it never uses whose size, with the preferred carveout set
low, lets two blocks share an SM: the occupancy is two blocks per SM at every block size, so
the sweep runs from 64 threads per SM to full. A line is the block size, the threads of one
block per SM (SMs x block), the occupancy the run printed (by a formula that changed between
runs, not read), then one bandwidth per kernel in whole GB/s (10^9 B/s over the arrays each
kernel streams), in the header's order: ``init`` (a = c, 1 array), ``read`` (1), ``scale``
(a = 1.2 b, 2), ``triad`` (a = 1.2 b + c, 3), ``3pt`` and ``5pt`` (1-D stencils of 3 and 5
points, 2: the neighbours hit the caches).

One row per line and kernel: ``kernel`` = ``gpu-stream <name>``, ``config`` =
``block=<threads>``, ``time_s`` = arrays x 8 x elements / bandwidth, ``dram_bytes`` =
``l2_bytes`` = ``working_set_bytes`` = arrays x 8 x elements (1 GiB each, past every L2), FP64
thread instructions as written per element (scale one multiply, triad one FMA, 3pt three
multiplies and two adds, 5pt five and four), ``block_threads``, ``grid_blocks``, and
``achieved_occupancy`` = two blocks / the GPU's thread limit per SM (the catalog's): the
occupancy calculator cannot express the carveout, and would see more resident blocks than ran,
so the shared memory is not given.

The files do not name their GPU: ``gpu=`` does, else the file name (``GPU_FILES``, after the
suffix is taken off).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ...catalog import resolve
from ...errors import GPUNotNamedError, InputError
from ...files import read_text
from ..table import ProfileTable, Skipped
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
    "rx6900xt": ("rx-6900-xt", ""), "RX6900XT": ("rx-6900-xt", ""),
}

# chunk, data set, time, spread, bandwidth, then DRAM read/write and L2 read/write bandwidths
_UNITS = ("kB", "kB", "ms", "%", "GB/s", "GB/s", "GB/s", "GB/s", "GB/s")
_LINE = re.compile(r"^\s*" + r"\s+".join(rf"([0-9]+(?:\.[0-9]*)?)\s*{re.escape(u)}"
                                        for u in _UNITS) + r"\s*$")

CACHE_KERNEL = "gpu-cache sumKernel"
CACHE_BLOCK_THREADS = 256  # gpu-cache/main.cu: blockSize
CACHE_FIRST_ELEMENTS = 256  # gpu-cache/main.cu: the first measure<N>
CACHE_ELEMENTS = {4: "fp32", 8: "fp64", 16: "float4"}  # element bytes -> name (main.cu's dtype)
# the work every row is scaled to: 10^11 bytes loaded (the runs launch one block per SM of their
# own GPU and differ in iterations, so their work differs from GPU to GPU)
CACHE_BYTES = 1e11
_CACHE_HEAD = re.compile(r"^\s*data set\s+exec time\s+spread\s+Eff\. bw\s+DRAM read\s+"
                         r"DRAM write\s+L2 read\s+L2 store\s*$")
# data set, time, spread, bandwidth, then DRAM read/write and L2 read/store bandwidths
_CACHE_LINE = re.compile(r"^\s*" + r"\s+".join(rf"([0-9]+(?:\.[0-9]*)?)\s*{re.escape(u)}"
                                              for u in _UNITS[1:]) + r"\s*$")
# what the runs print besides: gpu-clock.cuh's clock reading, ROCm's agent lines (MI210)
_CACHE_NOISE = re.compile(r"^\s*(?:clock:(?:\s+[0-9]+)*|Agent\s+[0-9]+)\s*$")

SMALL_KERNEL = "gpu-small-kernels scale"
SMALL_BYTES_PER_ELEMENT = 16  # one double read, one written (main.cu: size * 2 * sizeof(double))
SMALL_MAX_BLOCK = 1024  # main.cu: for (xblock = ...; xblock <= 1024; xblock *= 2)
# file-name suffix -> how the repetitions were queued, as the kernel name says it
SMALL_QUEUEING = {"": "", "graph": " (graph)", "pt": " (persistent, atomic sync)",
                  "gsync": " (persistent, grid sync)"}
# elements, size (kB; MB in older runs), then one whole GB/s per block size
_SMALL_LINE = re.compile(r"^\s*([0-9]+)\s+[0-9]+kB((?:\s+[0-9]+)+)\s*$")

ROOF_KERNEL = "gpu-roofline testfun"
ROOF_BLOCK_THREADS = 256  # main.cu: BLOCKSIZE
# the work every row is scaled to: 10^9 elements of each of the two arrays (the runs size theirs
# to one full wave of their GPU's resident blocks, so their work differs from GPU to GPU)
ROOF_ELEMENTS = 1e9
ROOF_DTYPES = {4: "fp32", 8: "fp64"}  # element bytes -> dtype
# device, blocks, its, Fl/B, GB/s, GF/s, clock, power, temperature
_ROOF_LINE = re.compile(
    r"^\s*([0-9]+)\s+([0-9]+)\s+blocks\s+([0-9]+)\s+its\s+([0-9.]+)\s+Fl/B\s+([0-9.]+)\s+GB/s"
    r"\s+([0-9.]+)\s+GF/s\s+([0-9.]+)\s+Mhz\s+[0-9.]+\s+W\s+-?[0-9.]+\s*(?:°\s*)?C\s*$")
# what series.sh prints between the runs' lines: each N as it starts building, and a marker
_ROOF_NOISE = re.compile(r"^\s*(?:[0-9]+|-- Finished Building --)\s*$")

STREAM_ELEMENTS = 128 * 1024 * 1024 + 2  # gpu-stream/main.cu: max_buffer_size
STREAM_BLOCKS_PER_SM = 2  # main.cu: measureKernels(kernels, blockSize, 2)
# kernel -> (arrays streamed, FP64 (FMA, ADD, MUL) thread instructions per element as written)
STREAM_KERNELS = {"init": (1, (0, 0, 0)), "read": (1, (0, 0, 0)), "scale": (2, (0, 0, 1)),
                  "triad": (3, (1, 0, 0)), "3pt": (2, (0, 2, 3)), "5pt": (2, (0, 4, 5))}
STREAM_ONLY = ("init", "read", "scale", "triad")  # the same code in every published run
_STREAM_HEAD = re.compile(r"^\s*blockSize\s+threads\s+%occ\s*\|((?:\s+\S+)+)\s*$")
# block size, threads, occupancy %, then one whole GB/s per kernel
_STREAM_LINE = re.compile(
    r"^\s*([0-9]+)\s+[0-9]+\s+[0-9.]+\s*%\s*\|\s*GB/s:((?:\s+[0-9]+(?:\.[0-9]*)?)+)\s*$")


def sniff(path, head: str) -> bool:
    first = head.splitlines()[0] if head else ""
    l2 = "data set" in first and "exec time" in first and "Eff. bw" in first
    return (l2 or bool(_SMALL_LINE.match(first) or _STREAM_HEAD.match(first))
            or _cache_head(head.splitlines()) is not None or _roofline_head(head.splitlines()))


def _cache_head(lines) -> int | None:
    """The line number of a gpu-cache header (the gpu-l2-cache header stops at ``Eff. bw``;
    this one names the four counter columns) where the first line that is not blank or the
    runs' other output is one, else None."""
    for lineno, line in enumerate(lines, start=1):
        if line.strip() and not _CACHE_NOISE.match(line):
            return lineno if _CACHE_HEAD.match(line) else None
    return None


def _roofline_head(lines) -> bool:
    """Whether the first line that is not blank or series.sh's noise is a gpu-roofline run."""
    line = next((x for x in lines if x.strip() and not _ROOF_NOISE.match(x)), "")
    return bool(_ROOF_LINE.match(line))


def _gpu_of(path, stem, gpu):
    if gpu is not None:
        return gpu
    if stem not in GPU_FILES:
        raise GPUNotNamedError(f"the file does not name its GPU and '{stem}' is not a known "
                               "gpu-benches file name", path=path)
    return GPU_FILES[stem][0]


def read(path, gpu: str | None = None) -> ProfileTable:
    """Read one ``gpu-l2-cache/<gpu>.txt``, ``gpu-cache/<gpu>.txt``,
    ``gpu-small-kernels/<gpu>[_suffix].txt``, ``gpu-roofline/<gpu>.txt`` or
    ``gpu-stream/<gpu>.txt``; ``gpu`` names the GPU (default: from the file name,
    ``GPU_FILES``)."""
    path = Path(path)
    lines = read_text(path).splitlines()
    first = next((line for line in lines if line.strip()), "")
    if (head := _cache_head(lines)) is not None:
        out, gpu, skipped = _cache_sweep(path, lines, head, gpu)
    elif _SMALL_LINE.match(first):
        out, gpu, skipped = _small_kernels(path, lines, gpu)
    elif _STREAM_HEAD.match(first):
        out, gpu, skipped = _stream(path, lines, gpu)
    elif _roofline_head(lines):
        out, gpu, skipped = _roofline(path, lines, gpu)
    else:
        out, gpu, skipped = _l2_sweep(path, lines, gpu)
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
    out, skipped = split_unusable_times(out, path, field="Eff. bw")
    return out, gpu, skipped


def _cache_sweep(path, lines, head, gpu) -> tuple[pd.DataFrame, str, list]:
    gpu = _gpu_of(path, path.name.split(".")[0], gpu)
    rows, element = [], None
    for lineno, line in enumerate(lines[head:], start=head + 1):
        if not line.strip() or _CACHE_NOISE.match(line):
            continue
        m = _CACHE_LINE.match(line)
        if not m:
            raise InputError("not a gpu-cache line (data set kB, time ms, spread %, bandwidth "
                             "GB/s, four counter GB/s)", path=path, row=lineno)
        set_kb, _, _, bw_gbs = (float(x) for x in m.groups()[:4])
        if element is None:
            # the first run is N = 256 elements: its data set gives the element's size
            size = set_kb * KIB / CACHE_FIRST_ELEMENTS
            if size not in CACHE_ELEMENTS:
                raise InputError(f"first data set {set_kb:g} kB is not {CACHE_FIRST_ELEMENTS} "
                                 "elements of 4, 8 or 16 bytes (the first run of gpu-cache/"
                                 "main.cu)", path=path, row=lineno)
            element = CACHE_ELEMENTS[size]
        rows.append({"_row": lineno, "config": f"data_set={set_kb:.0f}kB",
                     # 0 GB/s gives time 0, which split_unusable_times skips and counts
                     "time_s": CACHE_BYTES / (bw_gbs * 1e9) if bw_gbs > 0 else 0.0,
                     "working_set_bytes": set_kb * KIB, "sm_working_set_bytes": set_kb * KIB})
    if not rows:
        raise InputError("file has a header but no rows", path=path)
    out = pd.DataFrame(rows)
    out["kernel"] = f"{CACHE_KERNEL} ({element})"
    out["l1_bytes"] = CACHE_BYTES
    out["block_threads"] = float(CACHE_BLOCK_THREADS)
    out, skipped = split_unusable_times(out, path, field="Eff. bw")
    return out, gpu, skipped


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
    out, skipped = split_unusable_times(out, path, field="bandwidth")
    return out, gpu, skipped


def _roofline(path, lines, gpu) -> tuple[pd.DataFrame, str, list]:
    gpu = _gpu_of(path, path.name.split(".")[0], gpu)
    rows = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip() or _ROOF_NOISE.match(line):
            continue
        m = _ROOF_LINE.match(line)
        if not m:
            raise InputError("not a gpu-roofline line (device, blocks, its, Fl/B, GB/s, GF/s, "
                             "Mhz, W, °C)", path=path, row=lineno)
        blocks, its = int(m.group(2)), int(m.group(3))  # group 1: the node's device
        fl_b, gb_s, gf_s, mhz = (float(x) for x in m.groups()[3:])
        # main.cu prints (2 + 2 its) / (2 sizeof(T)) as Fl/B: it tells the element type
        size = (2 + 2 * its) / (2 * fl_b) if fl_b > 0 else np.nan
        element = min(ROOF_DTYPES, key=lambda b: abs(b - size))
        if not abs(size - element) < 0.01 * element:
            raise InputError(f"Fl/B {fl_b:g} fits neither 4- nor 8-byte elements at {its} its",
                             path=path, row=lineno)
        nbytes, flops = 2 * element * ROOF_ELEMENTS, (2 + 2 * its) * ROOF_ELEMENTS
        # both rates come from one timing, printed in whole GB/s and GF/s: the larger has
        # more digits; a 0 gives time 0, which split_unusable_times skips and counts
        rate, work = (gb_s, nbytes) if gb_s >= gf_s else (gf_s, flops)
        rows.append({"_row": lineno, "blocks": blocks, "its": its,
                     "element": element, "time_s": work / (rate * 1e9) if rate > 0 else 0.0,
                     "sm_clock_hz": mhz * 1e6 if mhz > 0 else np.nan})
    if not rows:
        raise InputError("no gpu-roofline line in the file", path=path)
    d, skipped = split_unusable_times(pd.DataFrame(rows), path, field="GB/s and GF/s")
    for col, what in (("blocks", "block count"), ("element", "element size")):
        # the devices of one node run the same grid on the same data type
        other = d[d[col] != d[col].iloc[0]]
        if len(other):
            raise InputError(f"{what} {other[col].iloc[0]} where the file's first line has "
                             f"{d[col].iloc[0]}", path=path, row=int(other["_row"].iloc[0]))
    # one row per its: the median over the node's devices (the L40 node's two GPUs ran at
    # different clocks), with their median clock
    g = d.groupby("its", sort=True)
    out = g.agg(_row=("_row", "min"), time_s=("time_s", "median"),
                sm_clock_hz=("sm_clock_hz", "median")).reset_index()
    element = int(d["element"].iloc[0])
    p = ROOF_DTYPES[element]
    out["kernel"] = f"{ROOF_KERNEL} ({p})"
    out["config"] = "its=" + out["its"].astype(str)
    out["dtype"] = p
    out["dram_bytes"] = out["l2_bytes"] = out["working_set_bytes"] = (
        2 * element * ROOF_ELEMENTS)
    # per element: its FMAs, one subtraction (v = a - b) and one addition to the sum
    out[f"{p}_fma_thread_inst"] = out["its"] * ROOF_ELEMENTS
    out[f"{p}_add_thread_inst"] = 2 * ROOF_ELEMENTS
    out[f"{p}_mul_thread_inst"] = 0.0
    out["block_threads"] = float(ROOF_BLOCK_THREADS)
    return out.drop(columns="its"), gpu, skipped


def _stream(path, lines, gpu) -> tuple[pd.DataFrame, str, list]:
    gpu = _gpu_of(path, path.name.split(".")[0], gpu)
    head_row = next(i for i, line in enumerate(lines, start=1) if line.strip())
    names = _STREAM_HEAD.match(lines[head_row - 1]).group(1).split()
    # older runs name their stencils 1pt and 3pt, whose code is not the 3pt and 5pt kernels of
    # the source read here: a header with a name it does not know reads the four stream
    # kernels only, and each stencil cell is skipped and counted
    current = all(n in STREAM_KERNELS for n in names)
    rows, skipped = [], []
    for lineno, m in _matches(path, lines, head_row + 1, _STREAM_LINE, "gpu-stream line "
                              "(block size, threads, occupancy %, then one whole GB/s per "
                              "kernel)"):
        block = int(m.group(1))
        values = [float(v) for v in m.group(2).split()]
        if block < 1:
            raise InputError("block size 0", path=path, row=lineno)
        if len(values) != len(names):
            raise InputError(f"{len(values)} bandwidths for the header's {len(names)} kernels",
                             path=path, row=lineno)
        for name, bw_gbs in zip(names, values):
            if not current and name not in STREAM_ONLY:
                skipped.append(Skipped(str(path), lineno, f"'{name}' of an older gpu-stream "
                                       "run, whose code is not known"))
                continue
            arrays, (fma, add, mul) = STREAM_KERNELS[name]
            nbytes = float(arrays * 8 * STREAM_ELEMENTS)
            rows.append({"_row": lineno, "kernel": f"gpu-stream {name}",
                         "config": f"block={block}",
                         # 0 GB/s gives time 0, which split_unusable_times skips and counts
                         "time_s": nbytes / (bw_gbs * 1e9) if bw_gbs > 0 else 0.0,
                         "dram_bytes": nbytes, "l2_bytes": nbytes, "working_set_bytes": nbytes,
                         "fp64_fma_thread_inst": float(fma * STREAM_ELEMENTS),
                         "fp64_add_thread_inst": float(add * STREAM_ELEMENTS),
                         "fp64_mul_thread_inst": float(mul * STREAM_ELEMENTS),
                         "block_threads": float(block),
                         "grid_blocks": float(STREAM_ELEMENTS // block + 1)})
    if not rows:
        raise InputError("the header names none of the kernels an older run is read for ("
                         f"{', '.join(STREAM_ONLY)})" if skipped
                         else "file has a header but no rows", path=path)
    out = pd.DataFrame(rows)
    out["dtype"] = "fp64"
    # the occupancy the carveout set, which the calculator cannot see (NaN where the catalog
    # lacks the GPU's thread limit)
    out["achieved_occupancy"] = np.minimum(
        STREAM_BLOCKS_PER_SM * out["block_threads"] / resolve(gpu).value("max_threads_per_sm"),
        1.0)
    out, unusable = split_unusable_times(out, path, field="GB/s")
    return out, gpu, skipped + unusable
