"""Hierarchical roofline projection with kernel-specific ceilings (Van Lanker et al., Euro-Par
2024), with switchable extensions (below) for the failure cases the paper names and those the
measured tables showed.

Paper equations, per kernel k, on each GPU (source s, target t):

- Eq. 2  Perf_mix = Perf_FMA x N_FMA/N + Perf_ADDMUL x (N_ADD+N_MUL)/N, N = N_FMA+N_ADD+N_MUL
  (here summed over precisions: each precision's FMA and ADD/MUL peaks weighted by its counts.
  Physically, precisions run on pipes of their own and the busiest pipe holds the kernel; that
  form was measured on the public tables and not kept: Rodinia calculate_temp, whose FP64
  instructions dominate on the 1/24- and 1/32-rate GPUs, went from 38.7 to 108.5 % MAPE
  (hierarchical-ext 52.3 -> 79.3 %). Between two low-FP64 GPUs it projects within 0.8-1.2x,
  but the GK110 GPUs that run the kernel at full FP64 rate are held by issue and latency,
  which no ceiling here prices across architectures (the issue-rate extension does not know f
  there), so it projected them 3x too fast; taking f from the source counts there as well
  brought hierarchical-ext to 36.6 % on calculate_temp but from 11.9 to 33.7 % on
  bpnn_layerforward. The other tables were unchanged.)
- Eq. 3  Perf_ceil = active_threads_per_instruction / warp_size x Perf_mix (on a target of
  another warp width, from the source's counts as ``_active_fraction`` says)
- Eq. 4  t_mem = N_mem / BW_mem, N_mem = bytes served by level mem (hits there)
- Eq. 5  t_shM = N_shM / N_shM_pc x N_shM_pc_max / BW_shM; with N_shM_pc = bytes per wavefront,
  this is wavefronts x (banks x bank width) / BW_shM
- Eqs. 6-8  BW_L1_ceil = (N_L1+N_shM+N_L2+N_DRAM)/(t_L1+t_shM+t_L2+t_DRAM),
            BW_L2_ceil = (N_L2+N_DRAM)/(t_L2+t_DRAM), BW_DRAM_ceil = N_DRAM/t_DRAM
- Eq. 10 OI_mem = FLOP / N+_mem, N+ = bytes traversing the level (the numerators above)
- Eq. 1  roofline_mem(OI) = min(BW_mem_ceil x OI, Perf_ceil)
- Eq. 9  Perf_t(mem) = Perf_s_meas / roofline_s,mem(OI_s) x roofline_t,mem(OI_t)

giving one time FLOP_t / Perf_t(mem) per level; the interval is [min, max] over the levels the
profile has and the point is their mean. The paper's "mean point of the projection interval"
(Sec. 5) can also be read as the interval's midpoint, or as FLOP over the mean performance;
on the public tables of docs/accuracy.md the three give the same errors to 0.1 points, and on
our H100 <-> H200 suite, whose ncu profiles count the bytes of all three levels, within 0.4
(midpoint 18.3 / 19.1 %, mean of the times 18.6 / 18.8 %, FLOP over the mean performance
18.6 / 19.1 %, MAPE / median APE, @1ed6543, before the H200's L2 read was corrected), so the
choice is not one the data can make. A kernel without FLOPs is projected on bytes: the same
Eq. 9 at OI -> 0, i.e. t_t = t_s x BW_ceil_s / BW_ceil_t per level.

Ceilings: the catalog's measured value where there is one, else peak x the source GPU's
measured/peak ratio (Sec. 4.1, marked derived), else the peak; write-only kernels use the
write bandwidth (STREAM init).

Extensions (off in ``hierarchical``, on in ``hierarchical-ext`` except ``source_clock``; each
switchable):

- ``cache_capacity``: which cache level serves the working set on each GPU. The share of the
  traffic that leaves a GPU's L2 is f(C) = 1 where the working set exceeds the L2 size C, else 0
  (a cyclic sweep under LRU, ``_uncached``). The DRAM traffic on the target is rescaled,
  N_DRAM,t = N_DRAM,s x f(C_t) / f(C_s) (f floored at 0.02 here, capped by the L2 traffic where
  known), and the bytes that no longer leave its L2 are served at its L2 bandwidth, so the DRAM
  level's ceiling becomes N_DRAM,s / (N_DRAM,t / BW_DRAM + (N_DRAM,s - N_DRAM,t) / BW_L2) (a
  weighted harmonic mean, as Eq. 7), and the L2 and L1 levels' times carry the same change.
  Where a GPU has a memory-side L3 in the catalog (AMD Infinity Cache) that holds the working set,
  the bytes that leave its L2 are served at the L3's bandwidth instead of DRAM's, on the source
  as on the target. Where a profile has L2 bytes and a working set but no DRAM bytes (timings
  with analytic traffic), the DRAM traffic is estimated on both GPUs as f(C) x the L2 bytes,
  which makes Eq. 7's L2 ceiling 1 / ((1 - f) / BW_L2 + f / BW_past) on each, BW_past the L3's
  or DRAM's bandwidth. Needs the target's L2 bandwidth; without it nothing changes. The step
  sits where caches turn from hits to misses only roughly (0.8-1.3 x the size on the measured
  sweeps), so where a working set lies within ``CAPACITY_BAND`` of a cache's size, the
  interval also spans the projections with that cache holding and missing the set.
  One level up, where a profile has L1 bytes only and the working set one SM re-reads (a cache
  sweep, ``sm_working_set_bytes``), the L1 serves it while it fits the GPU's L1
  (``l1_cache_bytes``) and the L2 past it: Eq. 6's L1 ceiling becomes
  1 / ((1 - f) / BW_L1 + f / BW_L2) on each GPU, f = 1 where the set exceeds the L1, with the
  same interval near an L1's size. The limiter then names the level that serves the bytes on
  the target (the L2 past its L1; DRAM or the L3 past its L2; the L2 for DRAM bytes it now
  holds), not the profile's level they were counted at.
- ``parallelism``: wave quantisation and under-filled GPUs. The projected time is multiplied by
  u_s / u_t, u the fraction of the GPU a launch of B blocks keeps busy on S SMs. How many
  resident blocks an SM needs to reach its throughput lies between one and the b that fit (the
  occupancy calculator); the point takes one, u = B / (ceil(B / S) S), and the interval also
  spans the block-slot fill u = B / (waves S b), waves = ceil(B / (S b)). Launch overhead
  (measured, where the catalog has it for either GPU, the other's taken as the same:
  ``_launch_split``) is taken off the source time and the target's added back. A row held by
  the loads its resident threads keep in flight (Little's law: few threads per SM, the source
  well below its DRAM ceiling, and its waves of resident threads at a typical 600 ns latency
  as long as its time) is projected by the ratio of those waves instead, at least the target's
  DRAM time (``_concurrency``). The limiter of a row whose grid has fewer blocks than half the
  target's SMs is ``parallelism`` (``UNDERFILL``): its speed-up follows the busy SMs, not a
  roof; of a row held so, ``latency``.
- ``warp_bandwidth``: bandwidth ceilings are also scaled by the active-thread ratio of Eq. 3
  (the paper's MiniMDock miss), which moves the ridge point.
- ``issue_rate``: the FP pipe reaches its peak only if the schedulers issue FP instructions fast
  enough. With f the FP share of the issued warp instructions, I the warp instructions an SM
  issues per clock and P = lanes per SM / warp size the FP warp instructions its pipe retires
  per clock, the compute ceiling is Perf_ceil x min(1, f I / P). A Turing SM (P = 2, I = 4)
  reaches its FP32 peak from f = 0.5; an Ampere GA10x SM (P = 4, I = 4) only at f = 1: the
  doubled FP32 peak of the RTX 30 series that SGEMM does not follow. f comes from the counts
  (FP thread instructions of the kernel's precision / thread instructions); where no counts
  say, f is taken in [0.5, 1] (``ISSUE_F_RANGE``), the ends give the interval and their
  geometric mean the point. Counts are instructions of the source's ISA: between two
  architectures, without the target's SASS counts (``target_counts``), f is taken in that
  range on both GPUs. GPUs without the issue rate in the catalog leave both ceilings
  unchanged. The breakdown's compute time is the one at the point's issue-fed ceiling, and a
  row whose compute takes longest there, below the FP peak, names ``issue`` as its limiter.
- ``roof_share``: Eq. 9 scales the whole source time by the roofs' ratio, also the part of it
  that no roof explains (a kernel at 5 % of every ceiling is held by latencies, not by them).
  Between GPUs of one instruction set, only the share T / t that the source's roofline bound T
  explains scales so; the rest scales with the SMs' aggregate clock (``_roof_share``).
- ``roof_floor``: a level's projection may fall below the time the target's own ceilings give
  the row's work: a level that does not see a resource (the DRAM level and shared memory)
  projects by its own ratio alone, and where the target lacks a level's bandwidth (the B200's
  L2; a missing L1 rate is mostly stood in for, ``l1_bandwidth``) only the others project. No
  candidate time may lie below the target's roofline time, the longest of the row's resource
  times there (compute, each level, shared memory), times min(1, t_s / T_s), T_s the same bound
  on the source (where the source ran faster than it, its counts or ceilings overstate the
  work, and the target's bound by as much). Only the resources
  timed on both GPUs count. Our H100 suite's shared_bank_conflict, 1.96 ms with 1.95 ms of it in
  shared memory, went to a B200 at the DRAM ratio, 0.82 ms, against the 1.74 ms its shared
  memory takes there; now 1.74 ms. On the public tables (@7f9e665), only the gpu-benches
  roofline sweep moves much, and through ``issue_rate``: between architectures it takes f in
  [0.5, 1] on both GPUs, which cuts an A40's FP32 ceiling (GA10x, P = I = 4) by 1.41x at the
  point and an A100's (GA100, P = 2) not at all, so A40 -> A100 projected the compute-bound rows
  up to 29 % faster than the A100's measured FMA ceiling allows; floored, they err 0.0-0.9 %.
  The table goes from 16.5 / 14.2 to 14.3 / 11.7 % MAPE / median APE (A40 -> A100 21.7 -> 3.5 %,
  L40 -> A100 11.3 -> 4.4 %, A40 -> L40 13.2 -> 10.4 %; alone, without ``issue_rate``, the floor
  changes nothing there). NeuSight 22.8 / 18.3 -> 22.7 / 18.1 %, the seed report's median APE
  52.6 -> 52.8 %, the Rodinia, KernelTuner and our H100 <-> H200 tables unchanged.
- ``source_clock``: compute peaks assume the boost clock, and a profiled kernel may have run
  at another one: Nsight Compute locks the clocks to base unless ``--clock-control none``, and
  the Rodinia GPUs under nvprof ran at 83-99 % of their boost clock (the Tesla K40 at 724 of
  875 MHz). Where the profile records the SM clock (``sm_clock_hz``), the source's compute
  ceilings are rescaled by sm_clock / boost clock, row by row; a measured compute ceiling is
  left as measured. Only the compute ceilings move (the bandwidth ceilings are measured or
  taken at their datasheet values), and the target is taken at its boost clock. Off in
  ``hierarchical-ext`` too: on the one data set with clocks (Rodinia, where the targets ran
  below their boost clocks as well) it changes only bpnn_adjust_weights, 48.4 -> 48.1 % MAPE
  but 30.3 -> 32.7 % median APE (docs/accuracy_analysis.md). It is for profiles taken at a
  locked clock, such as an ncu export with the default ``--clock-control base``
  (``gpuproj profile`` does not lock). Without it, the notes say when a profile's clock lies
  more than 5 % from the boost clock.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd

from ..kernel_names import without_arguments
from ..units import first_of
from .base import ROW_LABEL, Model, Projection
from .common import (
    DTYPES,
    CeilingBook,
    cannot_launch,
    compute_peak_key,
    dtype_codes,
    dtype_names,
    fill_fractions,
    labels,
    launch_configs,
    launch_occupancy,
    per_dtype,
    warp_size,
)

PRECISIONS = ("fp64", "fp32", "fp16")
LEVELS = ("l1", "l2", "dram")
# FP share of the issued warp instructions assumed where no counts give it: a kernel whose FLOPs
# matter issues at least as many FP instructions as others (loads, addresses, loop control)
ISSUE_F_RANGE = (0.5, 1.0)
LANES = {"fp32": "fp32_lanes_per_sm", "fp64": "fp64_lanes_per_sm"}
# working set / cache size where the hit-to-miss turn happens on the gpu-benches L2 sweep (the
# NVIDIA L2s between about 0.8 and 1.3, the RX 6900 XT's L3 between 1.0 and 1.2;
# scripts/l2_capacity_rules.py): the step of ``_uncached`` may fall on either side there
CAPACITY_BAND = (0.75, 1.4)
# parallelism's concurrency limit (``_concurrency``): a DRAM load latency typical of the GPUs
# measured (the gpu-benches stream sweep's read kernel at 64 threads per SM implies 446-683 ns),
# how near Little's time must lie to the measured one, and the least waves and the most share of
# the DRAM ceiling a row held so has
CONCURRENCY_LATENCY_S = 600e-9
CONCURRENCY_BAND = (0.5, 2.0)
CONCURRENCY_WAVES = 4
CONCURRENCY_SHARE = 0.5
# parallelism's limiter: a launch that keeps under this share of the target's SMs busy (by SM,
# ``fill_fractions``: only a grid of fewer blocks than half the SMs does) is labelled
# ``parallelism``: more blocks, not a faster resource, would shorten it
UNDERFILL = 0.5


def _nz(a):
    """``a`` with unknown (NaN, inf) as 0: a count the profile lacks adds nothing to a sum."""
    return np.where(np.isfinite(a), a, 0.0)


def unpriced_bytes(n) -> np.ndarray:
    """The bytes of a row that no level with a ceiling on both GPUs serves, priced at DRAM
    bandwidth instead: all its traffic through the caches (N+ of the L1, else of the L2;
    ``n`` from ``level_bytes``)."""
    return np.fmax(n["nplus"]["l2"], n["nplus"]["l1"])


def level_bytes(df, dram) -> dict:
    """Bytes served by each level (hits) and traversing it (N+), Eqs. 6-8 and 10, with what
    the bandwidth ceilings need of them; none of it depends on the GPU. ``dram``: the DRAM
    bytes per row. ``nplus``: Eq. 10's N+ per level, NaN where the level is unknown (L1: its
    hits, the shared-memory bytes and all below)."""
    l1 = df["l1_bytes"].to_numpy(float)
    l2 = df["l2_bytes"].to_numpy(float)
    sh = _nz(df["shared_bytes"].to_numpy(float))
    z_dram = _nz(dram)
    n_l2 = np.maximum(l2 - z_dram, 0.0)  # NaN where l2 unknown
    below_l1 = np.where(np.isfinite(l2), l2, z_dram)
    n_l1 = np.maximum(l1 - below_l1, 0.0)  # NaN where l1 unknown
    z_l2, z_l1 = _nz(n_l2), _nz(n_l1)
    return {
        "l1": n_l1, "l2": n_l2, "dram": dram, "shared": sh,
        "z_l1": z_l1, "z_l2": z_l2, "z_dram": z_dram,  # unknown as 0
        # bytes through each level (the numerators of Eqs. 6-8)
        "sum_l2": z_l2 + z_dram, "sum_l1": z_l1 + sh + z_l2 + z_dram,
        "nplus": {  # N+ of Eq. 10, NaN where the level is unknown
            "dram": dram,
            "l2": np.where(np.isfinite(n_l2), n_l2 + z_dram, np.nan),
            "l1": np.where(np.isfinite(n_l1), n_l1 + sh + z_l2 + z_dram, np.nan),
        },
        "present": {"dram": np.isfinite(dram) & (dram > 0), "l2": np.isfinite(l2),
                    "l1": np.isfinite(l1)},
    }


def _cost(amount, per_unit):
    """amount x per_unit per row, 0 where the row has none of it even if per_unit is unknown
    (NaN): a ceiling a GPU lacks leaves the rows that do not use it alone (0 x NaN would void
    them)."""
    return np.where(amount > 0, amount * per_unit, 0.0)


def _flop_ceiling(book, p, op):
    """``book``'s GPU's ``p`` (fp64, fp32, fp16) ``op`` (fma, addmul) FLOP/s ceiling.

    Datasheets give FP16 outside the tensor cores rarely (B200, MI300X), and ptxas materialises
    constants with HFMA2.MMA -RZ, RZ, imm, which ncu counts as FP16 FMAs: the suite's FP32
    random_access has one per thread. Such rows take the FP32 ceiling x the reference GPU's
    measured FP16/FP32 ratio, else the FP32 ceiling (noted), rather than no projection.
    Another missing peak is unknown (NaN) for the rows that need it only."""
    key = f"{p}_{op}_flops_per_s"
    if p == "fp16" and np.isnan(book.gpu.peak(key)) and np.isnan(book.gpu.measured(key)):
        return book.relative(key, f"fp32_{op}_flops_per_s")
    return book(key)


def _uncached(working_set, size):
    """Fraction of the traffic of a kernel that sweeps its working set again and again which
    misses a cache (the L2, or an L3 behind it) of ``size`` bytes: 0 where the set fits, 1
    where it does not (LRU under a cyclic sweep). On the gpu-benches L2 sweep
    (scripts/l2_capacity_rules.py) the NVIDIA L2s go from hits to misses between about 0.8 and
    1.3 x their size, closer to this step than to the 1 - size / working set of uniformly
    random accesses, which gpuproj used before (NVIDIA pairs there: 8.6 against 13.6 % MAPE
    with gpu-benches' own H200 ceilings, 29.2 against 33.8 % with ours)."""
    return np.where(np.asarray(working_set, float) > size, 1.0, 0.0)


def l1_cache_bytes(gpu) -> float:
    """The largest L1 data cache one SM of ``gpu`` holds loads in: the catalog's
    ``l1_cache_size_bytes_per_sm`` where the L1 is an array of its own (AMD, NVIDIA before
    Volta), else the L1 + shared-memory array less its least shared-memory carve-out (what the
    driver leaves a kernel without shared memory; a kernel with some has less L1), NaN where
    neither is known."""
    own = gpu.value("l1_cache_size_bytes_per_sm")
    if np.isfinite(own):
        return own
    carveouts = gpu.values.get("smem_carveouts_bytes")
    if carveouts is None:
        return np.nan
    return gpu.value("l1_shared_size_bytes_per_sm") - min(carveouts.value)


def l1_bandwidth(book) -> float:
    """The L1 rate of ``book``'s GPU for the hierarchical methods, against the book's reference
    GPU: its own (measured, derived or peak); else the reference's per SM and clock
    (``CeilingBook.per_sm_clock``), so that an efficiency measured on it carries over alike;
    else, where the GPU's L1 and shared memory are one array (the catalog gives the array's
    size and no L1 of its own: NVIDIA's Fermi, Kepler and since Volta), its shared-memory
    bandwidth in its place (kind ``instead``); else NaN, and the level is not priced.

    NVIDIA states no L1 rate since Volta (docs/catalog.md), so without them a row whose bytes
    only the L1 serves had no level priced on both GPUs and took the DRAM ratio. One array
    serves both from the same banks: the measured L1 of the V100, A100, H100 and H200 is 124-127
    B per SM and clock against their shared-memory peak of 128, and the GA102 whitepaper gives
    Turing and GA10x one rate for both. An L1 of its own (AMD, NVIDIA's Maxwell and Pascal) is
    not the shared memory's: AMD's vector L1 serves 64 B per CU and clock against the LDS's 128.
    On gpu-benches' L1 sweep with the catalog without gpu-benches' measurements, where five of
    its eight GPUs have no L1 rate, `hierarchical-ext` erred 108.4 / 49.0 % MAPE / median APE;
    with the reference's rate per SM and clock 43.2 / 28.2 % (A40 <-> L40 91 and 47 -> 4 and
    5 %), and with the shared memory's where neither GPU has one 36.6 / 12.7 % (five of the six
    V100, A100 and H100 pairs from 30-68 to 15-33 %, V100 -> H100 44 -> 54 %; `compute` 52.9 /
    43.1 %, and 23.4 / 11.2 % with the measured rates, docs/accuracy.md)."""
    v = book.per_sm_clock("l1_bw_bytes_per_s")
    gpu = book.gpu
    one_array = (np.isfinite(gpu.value("l1_shared_size_bytes_per_sm"))
                 and not np.isfinite(gpu.value("l1_cache_size_bytes_per_sm")))
    if np.isfinite(v) or not one_array:
        return v
    shared = book("shared_bw_bytes_per_s")
    if np.isfinite(shared):
        book.stand_in("l1_bw_bytes_per_s", "shared_bw_bytes_per_s")
    return shared


def _capacity_ends(source, target, size_s, size_t):
    """The (source, target) held flags of the interval's ends for sets near a cache's size
    (``CAPACITY_BAND``): the target's cache holding them and the source's missing them, and the
    reverse. One cache design turns at one multiple of its size: a set that the smaller cache
    holds the larger one holds too, and two caches of one size hold the same sets (an H100 NVL
    and an H200 at their 60 MiB L2: not 23x apart)."""
    if source.architecture != target.architecture:
        return [(False, True), (True, False)]
    ends = [(True, True), (False, False)]
    if size_t > size_s:
        ends.append((False, True))
    elif size_t < size_s:
        ends.append((True, False))
    return ends


def _blend(f, hit, miss):
    """(1 - f) hit + f miss per row, where a share of 0 or 1 needs only the one side: a
    bandwidth a GPU lacks (NaN) voids only the rows that use it."""
    with np.errstate(invalid="ignore"):
        return np.where(f <= 0, hit, np.where(f >= 1, miss, (1 - f) * hit + f * miss))


class Hierarchical(Model):
    name = "hierarchical"
    summary = "hierarchical roofline with kernel-specific ceilings (Van Lanker et al.)"
    requires = ("time_s",)
    requires_any = (("flops",), ("dram_bytes",), ("l2_bytes",), ("l1_bytes",))

    def __init__(self, cache_capacity: bool = False, parallelism: bool = False,
                 warp_bandwidth: bool = False, issue_rate: bool = False,
                 target_counts: dict | None = None, source_clock: bool = False,
                 roof_share: bool = False, roof_floor: bool = False):
        self.cache_capacity = cache_capacity
        self.roof_share = roof_share
        self.roof_floor = roof_floor
        self.parallelism = parallelism
        self.warp_bandwidth = warp_bandwidth
        self.issue_rate = issue_rate
        self.source_clock = source_clock
        # {target id: DataFrame of canonical counts for that target} from gpuproj.sass
        self.target_counts = target_counts

    # kernel-specific ceilings on one GPU ------------------------------------------------
    @staticmethod
    def _mix_counts(counts):
        """Per precision with any FP instructions: (FMA, ADD+MUL) thread instructions per row."""
        out = {}
        for p in PRECISIONS:
            fma = _nz(counts[f"{p}_fma_thread_inst"].to_numpy(float))
            am = _nz(counts[f"{p}_add_thread_inst"].to_numpy(float)) + _nz(
                counts[f"{p}_mul_thread_inst"].to_numpy(float))
            if fma.any() or am.any():
                out[p] = (fma, am)
        return out

    def _perf_ceiling(self, df, book, usage, mix_counts):
        """Eqs. 2-3: FLOP/s ceiling from the FP instruction mix (``_mix_counts``) and the warp
        usage (``_warp_usage``) on the ceiling's GPU."""
        num = np.zeros(len(df))
        den = np.zeros(len(df))
        for p, (fma, am) in mix_counts.items():
            for n, op in ((fma, "fma"), (am, "addmul")):
                if n.any():  # a ceiling no row needs is not looked up, nor noted
                    num += _cost(n, _flop_ceiling(book, p, op))
            den += fma + am
        fallback = per_dtype(df["_dtype"].to_numpy(),
                             lambda d: _flop_ceiling(book, d, "fma") if d in PRECISIONS
                             else book(compute_peak_key(d)))
        with np.errstate(invalid="ignore", divide="ignore"):
            mix = np.where(den > 0, num / den, fallback)
        return mix * usage

    def _warp_usage(self, df, counted_ws, gpu_ws):
        return self._once(("warp_usage", counted_ws, gpu_ws),
                          lambda: self._active_fraction(df, counted_ws, gpu_ws))

    @staticmethod
    def _active_fraction(df, counted_ws, gpu_ws):
        """Active threads per warp instruction / warp size on a GPU of warp size ``gpu_ws``,
        from counts taken on one of warp size ``counted_ws`` (1 where unknown).

        The counts give u = thread instructions / (warp instructions x counted_ws). Their warp
        instructions are the counted GPU's: a 64-wide CDNA wavefront issues half as many for
        the same threads, so u on it is not thread_inst / (warp_inst x 64), which would halve
        every ceiling of a converged kernel (an H100 vector add projected 2x slower on an
        MI300X, 5.3 against 3.35 TB/s). The share of lanes a kernel's branches leave idle is
        kept; what changes with the width is how a block of B threads fills its warps,
        B / (ceil(B / w) w): blocks of 16 threads fill half a 32-wide warp and a quarter of a
        64-wide one."""
        with np.errstate(invalid="ignore", divide="ignore"):
            u = df["thread_inst"].to_numpy(float) / (df["warp_inst"].to_numpy(float)
                                                     * counted_ws)
            u = np.where(np.isfinite(u) & (u > 0), np.minimum(u, 1.0), 1.0)
            if gpu_ws == counted_ws:
                return u
            b = df["block_threads"].to_numpy(float)

            def fill(w):
                return b / (np.ceil(b / w) * w)

            geometry = np.where(np.isfinite(b) & (b > 0), fill(gpu_ws) / fill(counted_ws), 1.0)
        return np.minimum(u * geometry, 1.0)

    def _byte_times(self, df, n, book, write_only):
        """Seconds per byte at each level's bandwidth on one GPU (Eq. 4's 1 / BW_mem): ``dram``
        per row (write-only rows at the write bandwidth), ``l2`` and ``l1`` (0 where the profile
        has no bytes of the level, so that no ceiling is looked up for it). ``cache_capacity``
        changes them per row; ``_bw_ceilings`` turns them into ceilings."""
        bw_dram = book("dram_bw_bytes_per_s")
        if write_only.any():
            bw_dram = np.where(write_only,
                               book.relative("dram_write_bw_bytes_per_s", "dram_bw_bytes_per_s"),
                               bw_dram)
        return {
            "dram": np.broadcast_to(1.0 / np.asarray(bw_dram, float), (len(df),)).copy(),
            "l2": 1.0 / book("l2_bw_bytes_per_s") if np.isfinite(n["l2"]).any() else 0.0,
            "l1": 1.0 / l1_bandwidth(book) if np.isfinite(n["l1"]).any() else 0.0,
        }

    def _bw_ceilings(self, df, n, book, per_byte):
        """Eqs. 4-8 on one GPU: bandwidth ceiling per level (NaN where the level is absent) and
        the time of each level; ``n`` from ``level_bytes``, ``per_byte`` from ``_byte_times``."""
        t_dram = _cost(n["z_dram"], per_byte["dram"])
        t_l2 = _cost(n["z_l2"], per_byte["l2"])
        t_l1 = _cost(n["z_l1"], per_byte["l1"])
        t_sh = np.zeros(len(df))
        # Eq. 5 is 0 for a row without shared bytes: ncu counts wavefronts on the shared-memory
        # pipe of kernels that never touch shared memory (524288 for an H100 vector add), and
        # pricing them would make a row's time depend on whether another row of the table has
        # shared bytes
        uses_shared = n["shared"] > 0
        if uses_shared.any():
            wf = df["shared_wavefronts"].to_numpy(float)
            banks = book.gpu.value("shared_banks") * book.gpu.value("shared_bank_width_bytes")
            if not np.isfinite(banks):
                banks = 128.0  # 32 banks x 4 B on every NVIDIA GPU since Maxwell
            bw_sh = book("shared_bw_bytes_per_s")
            # Eq. 5: bytes / (bytes per wavefront) x (max bytes per wavefront) / BW
            t_sh = np.where(~uses_shared, 0.0,
                            np.where(np.isfinite(wf) & (wf > 0), wf * banks / bw_sh,
                                     _cost(n["shared"], 1.0 / bw_sh)))
        with np.errstate(invalid="ignore", divide="ignore"):
            bw = {
                "dram": np.where(n["z_dram"] > 0, 1.0 / per_byte["dram"], np.nan),
                "l2": n["sum_l2"] / (t_l2 + t_dram),
                "l1": n["sum_l1"] / (t_l1 + t_sh + t_l2 + t_dram),
            }
        times = {"t_dram_s": t_dram, "t_l2_s": t_l2, "t_l1_s": t_l1, "t_shared_s": t_sh}
        return {k: np.where(n["present"][k] & np.isfinite(v) & (v > 0), v, np.nan)
                for k, v in bw.items()}, times

    def _source_rows(self, df):
        """What every target shares: the source's times, counts and bytes per row."""
        t_s = df["time_s"].to_numpy(float)
        flops = df["flops"].to_numpy(float)
        dram = df["dram_bytes"].to_numpy(float)
        n = level_bytes(df, dram)
        with np.errstate(invalid="ignore", divide="ignore"):
            oi = {lvl: flops / n["nplus"][lvl] for lvl in LEVELS}
            same_bytes = {lvl: n["nplus"][lvl] / n["nplus"][lvl] for lvl in LEVELS}
            same_flops = flops / flops
        return {
            "t_s": t_s, "flops": flops, "has_flops": np.isfinite(flops) & (flops > 0),
            # global-memory traffic, which the cache levels and DRAM serve (shared memory's
            # is not)
            "has_bytes": np.logical_or.reduce([_nz(df[c].to_numpy(float)) > 0
                                               for c in ("dram_bytes", "l2_bytes", "l1_bytes")]),
            "dram": dram, "n": n, "mix": self._mix_counts(df), "oi": oi,
            # target/source ratios of FLOPs and bytes when both are the source's counts
            "same_flops": same_flops, "same_bytes": same_bytes,
            "write_only": self._write_only(df, n["z_dram"]),
        }

    @staticmethod
    def _write_only(df, z_dram):
        """Rows whose DRAM traffic is writes (reads at most 1 %), priced at the write
        bandwidth. A read count the profile lacks is the DRAM bytes less the writes: taken as
        none, it made every row with a write count write-only."""
        w = _nz(df["dram_write_bytes"].to_numpy(float))
        r = df["dram_read_bytes"].to_numpy(float)
        r = np.where(np.isfinite(r), r, z_dram - w)
        return (r <= 0.01 * z_dram) & (w > 0)

    # the projection ---------------------------------------------------------------------
    def _project(self, df, source, target):
        rows = self._once("rows", lambda: self._source_rows(df))
        bs, bt = CeilingBook(source, reference=target), CeilingBook(target, reference=source)
        tgt = self._target_counts(df, target, rows)
        notes = []
        if tgt["from_sass"]:
            notes.append("target FLOP counts from SASS comparison (gpuproj.sass)")
        if self.target_counts and target.id in self.target_counts:
            # what the comparison assumed, and the kernels it found in no listing
            notes += self.target_counts[target.id].attrs.get("notes", [])
        if "tensor_flops" in df:
            # Eq. 2's mix has no tensor pipe (nor has the paper): said, not priced
            tensor = int((_nz(df["tensor_flops"].to_numpy(float)) > 0).sum())
            if tensor:
                notes.append(f"{tensor} row(s) with tensor-core FLOPs: projected on their "
                             "other FLOPs and their bytes, the tensor cores' work unpriced "
                             "(the roofline method prices it at the tensor peak)")

        ws_s, ws_t = warp_size(source), warp_size(target)
        # the counts are the source's, in its warps (``_active_fraction``)
        usage_s, usage_t = self._warp_usage(df, ws_s, ws_s), self._warp_usage(df, ws_s, ws_t)
        if ws_s != ws_t:
            # no GPU named: the same note for every target of that width, said once
            notes.append(f"warp usage on {ws_t:g}-wide targets: counts in {ws_s:g}-wide warps, "
                         "the share of active lanes kept, the blocks' fill of the warps "
                         "recomputed")
        source_side, target_side = (source, bs, usage_s), (target, bt, usage_t)
        more, perf_s, perf_t = self._compute_ceilings(df, rows, tgt, source_side, target_side)
        notes += more
        more, bws, (times_s, times_t), dram_per_byte, served = self._bw_ceiling_variants(
            df, rows, source_side, target_side)
        notes += more

        if self.parallelism:
            t_body, launch_t, note = self._launch_split(rows["t_s"], source, target)
            notes.append(note)
        else:
            t_body, launch_t = rows["t_s"], 0.0
        # (point, low end, high end) of the issue-rate factor: one projection per variant
        variants = [(perf_s, perf_t)]
        if self.issue_rate:
            more, variants = self._issue_variants(df, rows, tgt, (source, perf_s, ws_s),
                                                  (target, perf_t, ws_t))
            notes += more
        more, projected, unpriced = self._eq9_interval(
            rows, tgt, t_body, self._roof_rate(source, target), variants, bws, dram_per_byte)
        notes += more
        unfit = underfilled = held = None
        if self.parallelism:
            more, projected, (unfit, underfilled, held) = self._parallelism_step(
                df, t_body, (source, bs), (target, bt), projected)
            notes += more

        # each resource's time at the point on either GPU (Eqs. 1 and 4-5 as times)
        with np.errstate(invalid="ignore", divide="ignore"):
            t_comp = np.where(rows["has_flops"], tgt["flops"] / perf_t, 0.0)
            t_comp_s = np.where(rows["has_flops"], rows["flops"] / perf_s, 0.0)
        res_s = {"t_compute_s": t_comp_s, **times_s}
        res_t = {"t_compute_s": t_comp, **times_t}
        lost, unbounded = self._bound_lost(df, res_s, res_t)
        if lost:
            notes.append(f"{target.id} lacks the ceiling of what bounds {lost} on "
                         f"{source.id} (its longest resource time there): projected from the "
                         "other levels alone")
        if self.roof_floor:
            more, projected = self._floored(projected, res_s, res_t, t_body, target)
            notes += more
        per_level, low, high = projected
        with np.errstate(invalid="ignore"), _quiet():
            point = np.nanmean(per_level, axis=1) + launch_t
        low, high = low + launch_t, high + launch_t

        # the breakdown and the limiter take compute at the point's issue-fed ceiling
        # (variants[0]): where the schedulers cannot feed the FP pipe, the row is held by issue,
        # not by the FP peak; the floor and the lost-ceiling check above keep the roofline's
        # own compute time, as their definitions say
        issue_t = variants[0][1]
        with np.errstate(invalid="ignore", divide="ignore"):
            t_comp = np.where(rows["has_flops"], tgt["flops"] / issue_t, 0.0)
            issue = (issue_t < perf_t * (1 - 1e-9)) if self.issue_rate else None
        n = rows["n"]
        if unpriced.any():
            # the breakdown shows what the projection used: those bytes at DRAM bandwidth
            times_t = {**times_t, "t_dram_s": np.where(unpriced,
                                                        unpriced_bytes(n) * dram_per_byte[1],
                                                        times_t["t_dram_s"])}
        breakdown, limiter = self._breakdown(df, n, {"t_compute_s": t_comp, **times_t},
                                             unpriced, underfilled, held, unbounded, issue,
                                             served)
        notes = bs.notes + bt.notes + notes
        why = None
        if unfit is not None and unfit.any():
            point, low, high = (np.where(unfit, np.nan, a) for a in (point, low, high))
            why = np.where(unfit, cannot_launch(target.id), "")
        return Projection(point, low, high, limiter, breakdown, notes, why_none=why)

    def _compute_ceilings(self, df, rows, tgt, source_side, target_side):
        """(notes, Perf_ceil on the source, Perf_ceil on the target): Eqs. 2-3 on each GPU, the
        target's from its own FP mix where ``_target_counts`` has one, the source's at the
        profiled clock under ``source_clock``. Each side is (gpu, ceiling book, warp usage)."""
        (source, bs, usage_s), (target, bt, usage_t) = source_side, target_side
        notes = []
        perf_s = self._perf_ceiling(df, bs, usage_s, rows["mix"])
        perf_t = self._perf_ceiling(df, bt, usage_t, tgt["mix"])
        scale, ran, note = self._clock_scale(df, source)
        if self.source_clock:
            perf_s = perf_s * scale
            if note:
                notes.append(note + f"; {target.id} taken at its boost clock")
        elif ran is not None and abs(ran - 1) > 0.05:
            notes.append(f"source clock: {source.id} ran at {100 * ran:.0f} % of the boost clock "
                         "its peaks assume; compute ceilings not rescaled (source_clock)")
        return notes, perf_s, perf_t

    def _bw_ceiling_variants(self, df, rows, source_side, target_side):
        """Eqs. 4-8 on each GPU, as (notes, [(source, target) bandwidth ceilings per level]: the
        point, then under ``cache_capacity`` the ends of its interval; (source, target) times
        per level at the point; (source, target) seconds per DRAM byte before
        ``cache_capacity``; ``served`` from ``_cache_capacity``, {} without it). The ceilings
        carry the warp usage under ``warp_bandwidth``. Each side is (gpu, ceiling book, warp
        usage)."""
        (source, bs, usage_s), (target, bt, usage_t) = source_side, target_side
        # the target keeps the source's bytes per level: cache_capacity changes the time a
        # byte of a level takes, not N+
        n = rows["n"]
        per_byte_s = self._byte_times(df, n, bs, rows["write_only"])
        per_byte_t = self._byte_times(df, n, bt, rows["write_only"])
        # (source, target) per-byte times: the point, then the ends of the capacity interval
        per_bytes = [(per_byte_s, per_byte_t)]
        notes, served = [], {}
        if self.cache_capacity:
            cache_notes, per_bytes, served = self._cache_capacity(
                df, n, (source, bs, per_byte_s), (target, bt, per_byte_t))
            notes.extend(cache_notes)
        bw_usage_s, bw_usage_t = 1.0, 1.0
        if self.warp_bandwidth:
            bw_usage_s, bw_usage_t = usage_s, usage_t
            notes.append("bandwidth ceilings scaled by active threads per warp instruction")
        bws = []
        for i, (p_s, p_t) in enumerate(per_bytes):
            bw_s, level_s = self._bw_ceilings(df, n, bs, p_s)
            bw_t, level_t = self._bw_ceilings(df, n, bt, p_t)
            if i == 0:  # the breakdown and the roofline floor are the point's
                times = (level_s, level_t)
            bws.append(({k: v * bw_usage_s for k, v in bw_s.items()},
                        {k: v * bw_usage_t for k, v in bw_t.items()}))
        return notes, bws, times, (per_byte_s["dram"], per_byte_t["dram"]), served

    def _eq9_interval(self, rows, tgt, t_body, rate, variants, bws, dram_per_byte):
        """Eq. 9 per level under every compute variant (``variants``, from ``issue_rate``) and
        bandwidth variant (``bws``, from ``cache_capacity``), the point first, as (notes,
        (times per level at the point, low end, high end), mask of the rows priced at DRAM
        bandwidth): the interval spans every level of every variant. ``rate``: from
        ``_roof_rate``; ``dram_per_byte``: as ``_bw_ceiling_variants`` gives it."""
        notes = []
        # the interval: every level under every compute and capacity variant, the point first
        combos = list(itertools.product(variants, bws))
        per_level, no_level, unpriced, share = self._eq9_times(rows, tgt, t_body, rate,
                                                               *combos[0], dram_per_byte)
        if rate:
            notes.append(f"roof share: only the share of the source time its roofline bound "
                         f"explains (median {np.median(share):.0%}) scales with the roofs, the "
                         f"rest with the SMs' aggregate clock (x {rate:.2f})")
        if no_level:
            notes.append(f"{no_level} row(s) without byte counts: compute ceiling only")
        if unpriced.any():
            notes.append(f"{unpriced.sum()} row(s) whose bytes no level with a ceiling on both "
                         "GPUs serves: priced at DRAM bandwidth")
        # the interval's ends, kept as the lowest and highest time of any level and variant
        # (fmin/fmax skip NaN; a row with no time at all stays NaN)
        low, high = np.fmin.reduce(per_level, axis=1), np.fmax.reduce(per_level, axis=1)
        for perf, bw in combos[1:]:
            variant = self._eq9_times(rows, tgt, t_body, rate, perf, bw, dram_per_byte)[0]
            low = np.fmin(low, np.fmin.reduce(variant, axis=1))
            high = np.fmax(high, np.fmax.reduce(variant, axis=1))
        return notes, (per_level, low, high), unpriced

    def _eq9_times(self, rows, tgt, t_body, rate, perf, bw, dram_per_byte):
        """Eq. 9 per level (columns ``LEVELS``) for one (source, target) pair of compute
        ceilings ``perf`` and of bandwidth ceilings ``bw``, NaN where a level is unknown, with
        the share of the time the roofs scale (``_roof_share``), as (times, rows without byte
        counts, mask of the rows priced at DRAM bandwidth, share)."""
        (perf_s, perf_t), (bw_s, bw_t), (dram_s, dram_t) = perf, bw, dram_per_byte
        has_flops, has_bytes = rows["has_flops"], rows["has_bytes"]
        out = np.full((len(t_body), len(LEVELS)), np.nan, order="F")  # reduced across levels
        share = self._roof_share(rows, t_body, perf_s, bw_s) if rate else 1.0
        rest = (1.0 - share) * rate
        with np.errstate(invalid="ignore", divide="ignore"):
            t_flop_scale = t_body * tgt["flop_ratio"]
            for j, lvl in enumerate(LEVELS):
                roof_s = np.minimum(bw_s[lvl] * rows["oi"][lvl], perf_s)
                roof_t = np.minimum(bw_t[lvl] * tgt["oi"][lvl], perf_t)
                # Eq. 9, as a time: t_t = FLOP_t / (Perf_s / roof_s x roof_t)
                if rate:
                    by_flops = share * roof_s / roof_t + rest
                    by_bytes = share * bw_s[lvl] / bw_t[lvl] + rest
                else:  # Eq. 9 as written: the whole time scales with the roofs
                    by_flops, by_bytes = roof_s / roof_t, bw_s[lvl] / bw_t[lvl]
                out[:, j] = np.where(has_flops, t_flop_scale * by_flops,
                                     t_body * rows["same_bytes"][lvl] * by_bytes)
            out[~np.isfinite(out) | (out <= 0)] = np.nan
            no_level = np.isnan(out).all(axis=1)
            # no byte counts at all (tables with analytic FLOPs only): the roofline at
            # OI -> inf, i.e. the ratio of the kernel-specific compute ceilings
            none = no_level & has_flops & ~has_bytes
            out[none, 0] = (t_body * (tgt["flops"] / rows["flops"]) * perf_s / perf_t)[none]
            # bytes only at levels without a bandwidth ceiling on one of the GPUs (an
            # L2-resident kernel, the L2 bandwidths the catalog lacks; a missing compute
            # ceiling still voids a row): priced at the level below, DRAM, whose
            # bandwidth every GPU has. Their compute ceilings alone carried a stream
            # kernel's tiny FP64 efficiency across (the gpu-benches small kernels, H200 ->
            # A40: a median 52x too slow). On the 64 Rodinia calculate_temp pairs from a row
            # without DRAM bytes (Kepler and Maxwell L2s, no bandwidth in the catalog) the
            # DRAM ratio took `hierarchical` from 25.6 to 35.5 % MAPE and `-ext` from 23.2
            # to 20.9 %
            priced = np.logical_or.reduce([np.isfinite(bw_s[lvl]) & np.isfinite(bw_t[lvl])
                                           for lvl in LEVELS])
            # a row with FLOPs needs both compute ceilings: the DRAM ratio alone would give
            # a time where the compute ceiling bounding the row is unknown
            timed = ~has_flops | (np.isfinite(perf_s) & np.isfinite(perf_t))
            unpriced = no_level & has_bytes & ~priced & timed  # none's rows have no bytes
            # under the DRAM roofline of those bytes where the row has FLOPs: the DRAM ratio
            # alone projected a compute-bound row by bandwidth (NeuSight's conv, its tensors
            # counted as L2 bytes: `hierarchical` 61.8 % MAPE with the ratio, 22.2 % so, 22.0 %
            # with FLOPs alone; docs/accuracy_analysis.md)
            through = unpriced_bytes(rows["n"])
            at_dram = (np.minimum(rows["flops"] / through / dram_s, perf_s)
                       / np.minimum(tgt["flops"] / through / dram_t, perf_t))
            out[unpriced, 0] = np.where(has_flops, t_flop_scale * at_dram,
                                        t_body * dram_t / dram_s)[unpriced]
        return out, int(none.sum()), unpriced, share

    def _parallelism_step(self, df, t_body, source_side, target_side, projected):
        """``parallelism`` after Eq. 9, on ``projected`` (times per level, low end, high end):
        (notes, those times x the busy SMs' ratio, the interval also spanning the busy block
        slots' (``_fill_ratios``), and at the time of their waves for the rows held by the
        loads in flight (``_concurrency``); the masks of the rows whose block fits no SM of
        the target, whose grid under-fills it (``UNDERFILL``), and held so). Each side is
        (gpu, ceiling book)."""
        (source, bs), (target, bt) = source_side, target_side
        per_level, low, high = projected
        resident = self._resident_blocks(df, source, target)
        # a block that ran on the source and fits no SM of the target (more threads or
        # shared memory than it gives a block) has no time there
        unfit = (resident[0] > 0) & (resident[1] == 0)
        by_sm, by_slot, fill_t = self._fill_ratios(df, source, target, *resident)
        underfilled = fill_t < UNDERFILL
        per_level = per_level * by_sm[:, None]
        # both factors are positive: the ends of every time scaled are the ends scaled
        low, high = (np.fmin(low * by_sm, low * by_slot),
                     np.fmax(high * by_sm, high * by_slot))
        notes = ["parallelism: time x busy SMs source / target; the interval also spans busy "
                 "block slots (occupancy) source / target"]
        held, t_held = self._concurrency(df, t_body, bs, bt, source, target, *resident)
        if held.any():
            per_level = np.where(held[:, None] & np.isfinite(per_level), t_held[:, None],
                                 per_level)
            held_t = np.where(held, t_held, np.nan)
            low, high = np.fmin(low, held_t), np.fmax(high, held_t)
            notes.append(f"concurrency: {held.sum()} row(s) held by the loads their "
                         "resident threads keep in flight (Little's law): time x waves of "
                         "resident threads target / source, at least the target's DRAM "
                         "time; the interval also spans the bandwidth projection")
        return notes, (per_level, low, high), (unfit, underfilled, held)

    def _floored(self, projected, times_s, times_t, t_body, target):
        """``roof_floor`` on ``projected`` (times per level, low end, high end): (notes, those
        times raised to the target's roofline time, ``_roof_floor``, where below it)."""
        per_level, low, high = projected
        floor = self._roof_floor(times_s, times_t, t_body)
        raised = np.isfinite(per_level) & (per_level < floor[:, None])
        # the low end too, row by row: an interval's alternatives (the block-slot fill) can
        # lie below the floor where every level's time does not
        rows = raised.any(axis=1) | (low < floor)
        if not rows.any():
            return [], projected
        per_level = np.where(raised, floor[:, None], per_level)
        low, high = np.fmax(low, floor), np.fmax(high, floor)
        # a row that ran faster than the source's roofline has its floor scaled down by as
        # much: its prediction can end below the target's resource time the table shows, which
        # "raised to it" alone left unexplained
        with np.errstate(invalid="ignore"):
            scaled = rows & (t_body < self._roof_times(times_s, times_t)[0])
        how = (f" ({scaled.sum()} of them to that time x source time / source roofline time, "
               f"as {'it' if scaled.sum() == 1 else 'they'} ran faster than the source's "
               "roofline: below the target's longest resource time)" if scaled.any() else "")
        return ([f"roofline floor: {rows.sum()} row(s) projected below {target.id}'s own "
                 f"roofline time raised to it{how}"], (per_level, low, high))

    def _roof_rate(self, source, target) -> float:
        """What the time outside the roofs becomes on the target, per second on the source:
        the SMs' aggregate clock, SM count x boost clock, source / target; 0 (Eq. 9 as written)
        where ``roof_share`` is off, the GPUs are of two instruction sets, or a clock or SM
        count is unknown (``_roof_share``)."""
        if not self.roof_share or source.isa != target.isa:
            return 0.0
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = (source.value("sm_count") * source.value("boost_clock_hz")
                    / (target.value("sm_count") * target.value("boost_clock_hz")))
        return float(rate) if np.isfinite(rate) and rate > 0 else 0.0

    def _roof_share(self, rows, t_body, perf_s, bw_s):
        """The share of each row's source time that Eq. 9 scales by the roofs' ratio; the other
        1 - share scales by ``_roof_rate``.

        ``roof_share`` between GPUs of one instruction set (one SM design): the share is the
        time the source's roofline bound explains, T / t (T the largest time over the levels
        and the compute ceiling, at most 1); the other 1 - share, which no ceiling explains
        (latencies, dependencies, synchronisation), scales with the SMs' aggregate clock
        (``parallelism`` moves it with the busy SMs like the rest). On our suite, H100 -> H200
        (the same SMs, 1.43x the DRAM bandwidth), the speed-up follows the DRAM share: 1.01x
        below 10 % of the DRAM ceiling, 1.15x at 30-50 %, 1.33x above 90 %, where Eq. 9 gave
        every row 1.43x; `hierarchical-ext` went from 14.7 to 4.2 % MAPE there. Across designs
        the SMs' latencies and issue limits differ and nothing here prices them: scaling the
        rest by the SMs' clock there takes Rodinia bpnn_layerforward from 10.2 to 41.4 % MAPE and
        calculate_temp from 39.4 to 58.2 % (docs/accuracy_analysis.md)."""
        n = rows["n"]
        with np.errstate(invalid="ignore", divide="ignore"):
            bound = [np.where(rows["has_flops"], rows["flops"] / perf_s, np.nan)]
            bound += [n["nplus"][lvl] / bw_s[lvl] for lvl in LEVELS]
            with _quiet():
                t_roof = np.nanmax(np.vstack(bound), axis=0)
            return np.where(np.isfinite(t_roof) & (t_roof > 0),
                            np.minimum(t_roof / t_body, 1.0), 1.0)

    @staticmethod
    def _bound_lost(df, times_s, times_t) -> tuple:
        """The rows whose longest resource time on the source (``times_*``: the breakdown's
        times per resource) has no counterpart on the target, a ceiling the target's
        description lacks: as "N row(s) (resource: kernel, ...)" ("" where there is none), and
        as a mask of the rows."""
        keys = list(times_s)
        s = np.column_stack([_nz(times_s[k]) for k in keys])
        t = np.column_stack([times_t[k] for k in keys])
        top = np.argmax(s, axis=1)
        mask = (s.max(axis=1) > 0) & np.isnan(t[np.arange(len(t)), top])
        rows = np.flatnonzero(mask)
        if not len(rows):
            return "", mask
        # whole columns: a table of 100000 rows may lose them all (an L2-bound sweep to a GPU
        # without an L2 bandwidth)
        lost = pd.DataFrame({"resource": np.asarray(keys, object)[top[rows]],
                             "kernel": df["kernel"].astype(str).to_numpy()[rows]})
        parts = []
        for r, ks in lost.groupby("resource", sort=False)["kernel"]:
            ks = list(dict.fromkeys(map(without_arguments, ks.unique())))
            parts.append(f"{r[2:-2]}: {first_of(ks, 4)}")
        return f"{len(rows)} row(s) ({'; '.join(parts)})", mask

    @staticmethod
    def _roof_floor(times_s, times_t, t_body):
        """The least time a row can take on the target (``roof_floor``): the longest of its
        resource times there (compute, each level, shared memory; Eqs. 1 and 4-5 as times),
        x min(1, t_s / T_s) where the source ran faster than its own such bound T_s (counts
        or ceilings that overstate the work carry over). Only the resources timed on both GPUs
        count; NaN where there is none."""
        roof_s, roof_t, timed = Hierarchical._roof_times(times_s, times_t)
        with np.errstate(invalid="ignore", divide="ignore"):
            floor = roof_t * np.minimum(1.0, t_body / roof_s)
        return np.where(timed & np.isfinite(floor), floor, np.nan)

    @staticmethod
    def _roof_times(times_s, times_t):
        """(T_s, T_t, whether any resource is timed on both GPUs) per row: the longest of the
        resource times timed on both GPUs, on the source and on the target (``_roof_floor``)."""
        with np.errstate(invalid="ignore"):
            s = np.vstack([times_s[k] for k in times_t])
            t = np.vstack([times_t[k] for k in times_t])
            both = np.isfinite(s) & np.isfinite(t) & (s > 0)
        return (np.where(both, s, 0.0).max(axis=0), np.where(both, t, 0.0).max(axis=0),
                both.any(axis=0))

    def _target_counts(self, df, target, rows):
        """The target's side of the counts: the target's SASS counts where ``target_counts``
        has them for this target (the source's where a count is missing), else the source's
        own ``rows``; as counts, whether they are the target's SASS counts (``from_sass``), FP
        mix, FLOPs, OI per level and FLOP ratio target / source."""
        over = (self.target_counts[target.id].reindex(df[ROW_LABEL])
                if self.target_counts and target.id in self.target_counts else None)
        # none, or a comparison that found no kernel in both listings
        if over is None or not np.isfinite(over.to_numpy(float)).any():
            return {"counts": df, "from_sass": False, "mix": rows["mix"], "flops": rows["flops"],
                    "oi": rows["oi"], "flop_ratio": rows["same_flops"]}
        counts = df.copy()
        for c in over.columns:
            v = over[c].to_numpy(float)
            counts[c] = np.where(np.isfinite(v), v, counts[c].to_numpy(float))
        flops = counts["flops"].to_numpy(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return {"counts": counts, "from_sass": True, "mix": self._mix_counts(counts),
                    "flops": flops, "oi": {lvl: flops / rows["n"]["nplus"][lvl] for lvl in LEVELS},
                    "flop_ratio": flops / rows["flops"]}

    def _issue_variants(self, df, rows, tgt, source_side, target_side):
        """(notes, [(source, target) compute ceilings]) under the issue-rate extension: the
        point and the two ends of f, or the ceilings unchanged where the catalog lacks the
        issue rate of either GPU. Each side is (gpu, compute ceiling, warp size)."""
        (source, perf_s, ws_s), (target, perf_t, ws_t) = source_side, target_side
        notes = []
        if not tgt["from_sass"] and source.architecture != target.architecture:
            # instruction counts belong to the source's ISA: another architecture's compiler
            # issues other instructions (Rodinia under nvprof: Maxwell 2.1x Kepler's), so
            # without the target's SASS counts f is unknown on both
            f_s = f_t = self._fp_issue_share(df, {}, ws_s)
            notes.append(f"issue rate: counts are {source.architecture} instructions; on "
                         f"another architecture f is taken in {ISSUE_F_RANGE}")
        else:
            f_s = self._once(("issue_f", ws_s),
                             lambda: self._fp_issue_share(df, rows["mix"], ws_s))
            f_t = (self._fp_issue_share(tgt["counts"], tgt["mix"], ws_t) if tgt["from_sass"]
                   else f_s)
        i_s, i_t = (g.value("warp_issue_per_sm_per_clock") for g in (source, target))
        if not (np.isfinite(i_s) and np.isfinite(i_t)):
            lack = " and ".join(g.id for g, i in ((source, i_s), (target, i_t))
                                if not np.isfinite(i))
            notes.append(f"issue rate: {lack} without warp_issue_per_sm_per_clock in the "
                         "catalog, compute ceilings unchanged (a target with it has its FP "
                         "ceiling cut where f I < P: compare such targets with care)")
            return notes, [(perf_s, perf_t)]
        notes.append(f"issue rate: FP ceiling x min(1, f I / P), I = {i_s:g} -> {i_t:g} "
                     "warp instructions per SM per clock")
        return notes, [(perf_s * self._issue_factor(df, source, ws_s, a),
                        perf_t * self._issue_factor(df, target, ws_t, b))
                       for a, b in zip(f_s, f_t)]

    @staticmethod
    def _breakdown(df, n, times, at_dram, underfilled, latency, unbounded, issue=None,
                   served=None):
        """The target's time per resource (``times``: compute and per level) as the
        projection's breakdown, and the limiter: the kernel's dtype where compute takes the
        longest (``issue`` where that mask says the issue rate, not the FP pipe, sets the
        compute ceiling: ``issue_rate``), else that level; ``parallelism`` where that mask
        says so (grids that leave
        most of the target's SMs idle, ``UNDERFILL``), and ``latency`` where that one does
        (rows held by the loads their threads keep in flight, ``_concurrency``); else
        ``unknown`` where ``unbounded`` says the target lacks the ceiling of what bounds the
        row on the source (``_bound_lost``) and the row's bytes were not priced at DRAM
        bandwidth instead: the longest time left would name a resource the projection could
        not weigh against it. ``at_dram``: rows whose bytes were priced at DRAM bandwidth,
        their DRAM time counted. ``underfilled`` and ``latency`` are None without
        ``parallelism``. ``served`` (``_cache_capacity``): where the target's bytes of a
        level are served by another (a set past its L1 by its L2), the limiter names that one;
        the breakdown keeps the profile's levels."""
        # NaN, not 0, where the profile does not count a quantity: "unknown" is not "no time"
        counted = {"t_compute_s": np.isfinite(df["flops"].to_numpy(float)),
                   "t_dram_s": np.isfinite(n["dram"]) | at_dram,
                   "t_l2_s": n["present"]["l2"], "t_l1_s": n["present"]["l1"],
                   "t_shared_s": np.isfinite(df["shared_bytes"].to_numpy(float))
                   | np.isfinite(df["shared_wavefronts"].to_numpy(float))}
        # NaN also where the GPU lacks the ceiling of a level the row uses
        breakdown = {k: np.where(counted[k], v, np.nan) for k, v in times.items()}
        stack = np.column_stack([_nz(breakdown[k]) for k in
                                 ("t_compute_s", "t_dram_s", "t_l2_s", "t_l1_s", "t_shared_s")])
        names = DTYPES + ("dram", "l2", "l1", "shared", "parallelism", "latency", "unknown",
                          "issue", "l3")
        largest = np.argmax(stack, axis=1)
        # compute (column 0) is named by the row's dtype, each other column by its resource
        codes = np.where(largest == 0, df["_dtype"].to_numpy(), len(DTYPES) + largest - 1)
        if issue is not None:
            codes = np.where((largest == 0) & issue, names.index("issue"), codes)
        for level, by in (served or {}).items():
            for other in ("l1", "l2", "l3", "dram"):
                codes = np.where((codes == names.index(level)) & (by == other),
                                 names.index(other), codes)
        for name, mask in (("unknown", unbounded & ~at_dram), ("parallelism", underfilled),
                           ("latency", latency)):
            if mask is not None:  # a later mask wins
                codes = np.where(mask, names.index(name), codes)
        return breakdown, labels(codes, names)

    # the ceilings, for pictures and reports -----------------------------------------------
    def ceilings(self, df, gpu, reference=None, counted_on=None) -> dict:
        """Kernel-specific roofline of every row of ``df`` (canonical profile columns) on
        ``gpu``, with the same ceilings ``_project`` uses (``reference``: the GPU whose
        measured/peak ratios derive missing values, i.e. the source when ``gpu`` is a target,
        and the target when it is the source; ``counted_on``: the GPU that counted ``df``,
        by default the reference, else ``gpu``).

        Returns arrays aligned with the rows: ``dtype``; ``fma_flops_per_s`` and
        ``addmul_flops_per_s`` (the dominant precision's FMA and ADD/MUL ceilings);
        ``mix_flops_per_s`` (Eq. 2); ``warp_usage`` (active threads / warp size);
        ``perf_ceil_flops_per_s`` (Eq. 3; with ``issue_rate``, at the point of f); per level L
        in l1, l2, dram: ``bw_L_bytes_per_s`` (Eqs. 6-8), ``nplus_L_bytes`` (bytes traversing
        L), ``oi_L_flop_per_byte`` (Eq. 10) and ``roof_L_flops_per_s`` (Eq. 1 at that OI);
        ``notes`` (non-measured values used) and ``kinds`` (ceiling name -> where its value
        came from: measured, derived, peak, missing or instead). Missing levels are NaN.
        """
        if "_dtype" not in df.columns:  # Model.predict adds it; callers here pass plain rows
            df = df.assign(_dtype=dtype_codes(df))
        book = CeilingBook(gpu, reference=reference)
        ws = warp_size(gpu)
        counted_ws = warp_size(counted_on or reference or gpu)
        usage = self._warp_usage(df, counted_ws, ws)
        rows = self._source_rows(df)
        perf = self._perf_ceiling(df, book, usage, rows["mix"])
        if self.source_clock and "gpu" in df.columns:
            # the clock a row ran at is that of its own GPU, not of one it is projected to
            scale, _, note = self._clock_scale(df, gpu)
            perf = perf * np.where(df["gpu"].to_numpy() == gpu.id, scale, 1.0)
            if note:
                book.notes.append(note)
        mix = perf / usage
        if self.issue_rate:
            # as in the projection: a reference of another architecture means the counts are
            # not this GPU's instructions
            own = reference is None or reference.architecture == gpu.architecture
            f = self._fp_issue_share(df, rows["mix"] if own else {}, ws)[0]
            perf = perf * self._issue_factor(df, gpu, ws, f)
        per_byte = self._byte_times(df, rows["n"], book, rows["write_only"])
        bw, _ = self._bw_ceilings(df, rows["n"], book, per_byte)
        if self.warp_bandwidth:
            bw = {k: v * usage for k, v in bw.items()}
        codes = df["_dtype"].to_numpy()
        out = {
            "dtype": dtype_names(codes),
            "fma_flops_per_s": per_dtype(codes, lambda d: _flop_ceiling(book, d, "fma")
                                         if d in PRECISIONS else book(compute_peak_key(d))),
            "addmul_flops_per_s": per_dtype(codes, lambda d: _flop_ceiling(book, d, "addmul")
                                            if d in PRECISIONS else np.nan),
            "mix_flops_per_s": mix,
            "warp_usage": usage,
            "perf_ceil_flops_per_s": perf,
        }
        for lvl in LEVELS:
            nplus = rows["n"]["nplus"][lvl]
            with np.errstate(invalid="ignore", divide="ignore"):
                oi = np.where(nplus > 0, rows["flops"] / nplus, np.nan)
            out[f"bw_{lvl}_bytes_per_s"] = bw[lvl]
            out[f"nplus_{lvl}_bytes"] = nplus
            out[f"oi_{lvl}_flop_per_byte"] = oi
            out[f"roof_{lvl}_flops_per_s"] = np.minimum(bw[lvl] * oi, perf)
        out["notes"] = list(book.notes)
        out["kinds"] = dict(book.kinds)
        return out

    # extensions --------------------------------------------------------------------------
    @staticmethod
    def _clock_scale(df, gpu):
        """(sm_clock / boost clock per row, 1 where the profile has no clock; the median of
        that ratio over the rows with a clock, or None; a note or None). The scale is 1
        everywhere when ``gpu`` has a measured compute ceiling: measured at its own clock."""
        n = len(df)
        clock = df["sm_clock_hz"].to_numpy(float) if "sm_clock_hz" in df.columns \
            else np.full(n, np.nan)
        boost = gpu.value("boost_clock_hz")
        known = np.isfinite(clock) & (clock > 0)
        if not known.any() or not np.isfinite(boost):
            return np.ones(n), None, None
        ran = float(np.median(clock[known])) / boost
        if any(np.isfinite(gpu.measured(f"{p}_{k}_flops_per_s"))
               for p in PRECISIONS for k in ("fma", "addmul")):
            return np.ones(n), ran, (f"source clock: {gpu.id}'s compute ceilings are measured, "
                                     "not rescaled to the profiled clock")
        return np.where(known, clock / boost, 1.0), ran, (
            f"source clock: {gpu.id} ran at {ran * boost / 1e6:.0f} MHz (median), "
            f"{100 * ran:.0f} % of the {boost / 1e6:.0f} MHz boost clock its peaks assume: its "
            "compute ceilings rescaled")

    def _cache_capacity(self, df, n, *gpus):
        """``cache_capacity``: which cache level serves the working set on each GPU, as per-byte
        times: the L2 rule (``_l2_capacity``) and the L1 rule (``_l1_capacity``), which cover
        different rows (those with L2 or DRAM bytes, those with L1 bytes only). Returns (notes,
        variants, served) as ``_l2_capacity``: the point with both rules, then the ends of each
        rule's interval with the other at its point; per level, what serves the target's bytes
        of each row where a rule moved them to another level ("" where none did)."""
        notes, variants, served = self._l2_capacity(df, n, *gpus)
        l1_notes, l1 = self._l1_capacity(df, n, *gpus)
        notes += l1_notes
        if l1 is None:
            return notes, variants, served
        rows, times, ends, served["l1"] = l1

        def with_l1(pair, held):
            (p_s, p_t), (t_s, t_t) = pair, times(held)
            return ({**p_s, "l1": np.where(rows, t_s, p_s["l1"])},
                    {**p_t, "l1": np.where(rows, t_t, p_t["l1"])})

        return notes, ([with_l1(v, (None, None)) for v in variants]
                       + [with_l1(variants[0], e) for e in ends]), served

    def _l1_capacity(self, df, n, *gpus):
        """The L1 rule of ``cache_capacity``: rows with L1 bytes, no L2 or DRAM bytes and the
        working set one SM re-reads (``sm_working_set_bytes``: a cache sweep, whose level is
        what it measures) are served by a GPU's L1 while the set fits it (``l1_cache_bytes``)
        and by its L2 past it: per L1 byte (1 - f) / BW_L1 + f / BW_L2, f = ``_uncached``
        (set, L1 size). The L2's own capacity is not applied after it: a set that every SM
        re-reads is fetched into the L2 once for them all, so past the L2 the rate stays near
        the L2's (gpu-benches' V100 L1 sweep: 2.33 TB/s past 0.6 x its 6 MiB L2, 2.9x its
        measured DRAM's 0.81; ``scripts/doc_numbers.py l1-sweep``). Needs
        both GPUs' L1 sizes and L2 bandwidths; without them nothing changes. Returns (notes,
        None) where no row is covered, else (notes, (rows, times, ends, served)): ``times(held)``
        the (source, target) seconds per L1 byte of the rows, ``held`` as in ``_l2_capacity``,
        ``ends`` the ``held`` pairs of the interval (empty where no set lies near an L1's
        size), ``served`` "l2" for the rows whose set the target's L1 misses at the point (its
        L2 serves them), "" elsewhere."""
        ws = df["sm_working_set_bytes"].to_numpy(float)
        present = n["present"]
        rows = (np.isfinite(ws) & (ws > 0) & present["l1"] & ~present["l2"]
                & ~present["dram"])
        if not rows.any():
            return [], None
        sizes = [l1_cache_bytes(g) for g, _, _ in gpus]
        per_l2 = [1.0 / book("l2_bw_bytes_per_s") for _, book, _ in gpus]
        lacking = [f"{g.id}'s {what}" for (g, _, _), size, l2 in zip(gpus, sizes, per_l2)
                   for what, v in (("L1 size", size), ("L2 bandwidth", l2)) if np.isnan(v)]
        if lacking:
            return ([f"cache capacity: {' and '.join(lacking)} not in the catalog: L1 traffic "
                     "of the working sets per SM taken at L1 bandwidth on both GPUs"], None)

        def near(size):
            return rows & (ws > CAPACITY_BAND[0] * size) & (ws < CAPACITY_BAND[1] * size)

        def times(held):
            out = []
            for (_, _, per), size, l2, h in zip(gpus, sizes, per_l2, held):
                f = _uncached(ws, size)
                if h is not None:
                    f = np.where(near(size), 0.0 if h else 1.0, f)
                out.append(_blend(f, per["l1"], l2))
            return tuple(out)

        notes = [f"cache capacity: L1 traffic of working sets per SM past the L1 "
                 f"({sizes[0] / 1024:g} KiB on {gpus[0][0].id}, {sizes[1] / 1024:g} KiB on "
                 f"{gpus[1][0].id}) served at the L2's bandwidth"]
        ends = []
        if any(near(c).any() for c in sizes):
            ends = _capacity_ends(gpus[0][0], gpus[1][0], *sizes)
            notes.append(f"cache capacity: working sets per SM within {CAPACITY_BAND[0]:g}-"
                         f"{CAPACITY_BAND[1]:g} x an L1's size projected with that L1 holding "
                         "and missing them: the ends of the interval")
        served = np.where(rows & (_uncached(ws, sizes[1]) > 0), "l2", "")
        return notes, (rows, times, ends, served)

    def _l2_capacity(self, df, n, *gpus):
        """The L2 rule of ``cache_capacity``: which cache level past the L1 serves the working
        set on each GPU, as per-byte times. ``gpus``: (GPU, ceiling book, ``_byte_times``
        dict) of the source and the target. Returns (notes, variants, served): (source,
        target) per-byte dicts for the point and, where a working set lies within
        ``CAPACITY_BAND`` of a cache's size (where the measured hit-to-miss turn happens, so
        the step's side is uncertain), for the two ends: the target's caches holding the set
        and the source's missing it, and the reverse; ``served``: per level ("l2", "dram"),
        the level that serves the target's bytes at the point where that is another one
        ("l3", "dram", "l2"; "" elsewhere).

        Per GPU, f = ``_uncached`` (working set, L2 size) is the share of the traffic that
        leaves the L2; a byte that leaves it takes 1 / BW_L3 where the GPU has a memory-side L3
        (AMD Infinity Cache) that holds the working set, else 1 / BW_DRAM. A profile's DRAM
        bytes are the bytes that left the source's L2 (what ncu counts at DRAM on NVIDIA GPUs;
        on AMD ones with an L3, Infinity Cache hits included). Rows with DRAM bytes: the
        target's share of them is r = f_t / f_s (floored at 0.02, capped by the L2 bytes), the
        rest served by its L2: per DRAM byte r t_past + (1 - r) / BW_L2. Rows with L2 bytes and
        a working set but no DRAM bytes: per L2 byte (1 - f) / BW_L2 + f t_past, on each GPU
        (Eq. 7's L2 ceiling as a weighted harmonic mean)."""
        (_, _, per_byte_s), (_, _, per_byte_t) = gpus
        ws = df["working_set_bytes"].to_numpy(float)
        sizes = [g.value("l2_size_bytes") for g, _, _ in gpus]
        if not np.isfinite(ws).any() or not all(np.isfinite(c) for c in sizes):
            # said only where the rule had rows to change: a cache sweep's L1 bytes are the
            # L1 rule's
            below_l1 = (n["present"]["dram"] | n["present"]["l2"]).any()
            return (["cache capacity: no working set or L2 size known, DRAM bytes unchanged"]
                    if below_l1 else [], [(per_byte_s, per_byte_t)], {})
        notes = []
        known = np.isfinite(ws) & (ws > 0)
        l3s = [self._l3(g, book, size, notes) for (g, book, _), size in zip(gpus, sizes)]
        per_l2 = [1.0 / book("l2_bw_bytes_per_s") for _, book, _ in gpus]
        dram = known & n["present"]["dram"]
        if dram.any() and np.isnan(per_l2[1]):
            notes.append("cache capacity: target L2 bandwidth unknown, DRAM traffic unchanged")
            dram = np.zeros_like(dram)
        est = known & ~n["present"]["dram"] & n["present"]["l2"]
        if est.any():
            for (g, _, per), size, l2 in zip(gpus, sizes, per_l2):
                # a step share needs only the bandwidth of the side the set falls on: only
                # the rows on a side without one lose their L2 time
                fits, misses = est & ~(ws > size), est & (ws > size)
                if np.isnan(l2) and fits.any():
                    notes.append(f"cache capacity: {g.id} has no L2 bandwidth in the catalog: "
                                 "no L2 time for working sets that fit its L2")
                if not np.isfinite(per["dram"][misses]).all():
                    notes.append(f"cache capacity: {g.id} has no DRAM bandwidth in the "
                                 "catalog: no L2 time for working sets that exceed its L2")

        def near(size):
            return known & (ws > CAPACITY_BAND[0] * size) & (ws < CAPACITY_BAND[1] * size)

        def share(f_s, f_t):
            """r, the target's share of the source's DRAM bytes: a floor of 2 % (the source
            measured DRAM bytes, so some traffic missed its L2), at most the L2 bytes."""
            r = np.maximum(f_t, 0.02) / np.maximum(f_s, 0.02)
            with np.errstate(invalid="ignore", divide="ignore"):
                cap = df["l2_bytes"].to_numpy(float) / n["dram"]
            return np.where(np.isfinite(cap), np.minimum(r, np.maximum(cap, 1.0)), r)

        def times(held):
            """Per-byte dicts of both GPUs; ``held[i]``: None for the step, True / False for
            every set near one of GPU i's cache sizes held / missed there."""
            out = []
            for (_, _, per), size, l3, h in zip(gpus, sizes, l3s, held):
                f2 = _uncached(ws, size)
                past = per["dram"]
                if l3 is not None:
                    f3 = _uncached(ws, l3[0])
                    if h is not None:
                        f3 = np.where(near(l3[0]), 0.0 if h else 1.0, f3)
                    past = np.where(f3 > 0, per["dram"], 1.0 / l3[1])
                if h is not None:
                    f2 = np.where(near(size), 0.0 if h else 1.0, f2)
                out.append((dict(per), f2, past))
            (p_s, f_s, past_s), (p_t, f_t, past_t) = out
            if dram.any():
                r = share(f_s, f_t)
                p_t["dram"] = np.where(dram, r * past_t + np.maximum(1 - r, 0) * per_l2[1],
                                       p_t["dram"])
                p_s["dram"] = np.where(dram, past_s, p_s["dram"])
            if est.any():
                p_s["l2"] = np.where(est, _blend(f_s, per_l2[0], past_s), p_s["l2"])
                p_t["l2"] = np.where(est, _blend(f_t, per_l2[1], past_t), p_t["l2"])
            return p_s, p_t

        variants = [times((None, None))]
        if dram.any():
            notes.append(f"cache capacity: DRAM bytes x f(L2 {sizes[1] / 1e6:.1f} MB)/f(L2 "
                         f"{sizes[0] / 1e6:.1f} MB), f = 1 where the working set exceeds the "
                         "L2, else 0.02")
        if est.any():
            notes.append("cache capacity: DRAM traffic not in the profile, estimated on each "
                         "GPU: all of the L2 traffic where the working set exceeds its L2, "
                         "none where it fits")
        caches = sizes + [l3[0] for l3 in l3s if l3 is not None]
        if any((near(c) & (dram | est)).any() for c in caches):
            variants += [times(e) for e in _capacity_ends(gpus[0][0], gpus[1][0], *sizes)]
            notes.append(f"cache capacity: working sets within {CAPACITY_BAND[0]:g}-"
                         f"{CAPACITY_BAND[1]:g} x a cache's size projected with that cache "
                         "holding and missing them: the ends of the interval")
        # what serves the target's bytes at the point where the rule moved them off the
        # profile's level, which the limiter names: past its L2, DRAM or its L3; DRAM bytes
        # that its L2 now mostly holds, the L2
        f_s, f_t = (_uncached(ws, c) for c in sizes)
        beyond = "dram" if l3s[1] is None else np.where(_uncached(ws, l3s[1][0]) > 0, "dram",
                                                         "l3")
        served = {"l2": np.where(est & (f_t > 0), beyond, ""),
                  "dram": np.where(dram & (share(f_s, f_t) < 0.5), "l2",
                                   np.where(dram & (f_t > 0) & (beyond == "l3"), "l3", ""))}
        return notes, variants, served

    @staticmethod
    def _l3(gpu, book, l2_size, notes):
        """(size, bandwidth) of ``gpu``'s memory-side cache behind the L2 (AMD's Infinity Cache,
        "L3" in AMD's CDNA tables), or None where it has none larger than its L2 or the catalog
        lacks its bandwidth (then its hits are taken at DRAM bandwidth, as before it existed)."""
        size = gpu.value("l3_size_bytes")
        if not (np.isfinite(size) and size > l2_size):
            return None
        bw = book("l3_bw_bytes_per_s")
        if not np.isfinite(bw):
            notes.append(f"cache capacity: {gpu.id} has a {size / 2**20:g} MiB L3 but no L3 "
                         "bandwidth in the catalog: traffic past its L2 taken at DRAM bandwidth")
            return None
        notes.append(f"cache capacity: traffic past {gpu.id}'s L2 served by its "
                     f"{size / 2**20:g} MiB L3 at {bw / 1e12:.3g} TB/s where the working set "
                     "fits it")
        return size, bw

    @staticmethod
    def _fp_issue_share(counts, mix, warp_size):
        """(point, low, high) of f, the FP share of issued warp instructions, per row: from the
        FP instructions of the row's precision (``mix``, from ``_mix_counts(counts)``) where
        there are some (low = high = point), else ``ISSUE_F_RANGE`` with its geometric mean as
        the point."""
        names = dtype_names(counts["_dtype"].to_numpy())
        fp = np.zeros(len(counts))
        for p, (fma, am) in mix.items():
            if p in LANES:
                fp = np.where(names == p, fma + am, fp)
        thread = counts["thread_inst"].to_numpy(float)
        # without thread instructions, whole warps: a lower bound on f when warps diverge
        thread = np.where(np.isfinite(thread) & (thread > 0), thread,
                          counts["warp_inst"].to_numpy(float) * warp_size)
        with np.errstate(invalid="ignore", divide="ignore"):
            f = np.clip(fp / thread, 0.0, 1.0)
        known = np.isfinite(f) & (fp > 0)
        lo, hi = ISSUE_F_RANGE
        return (np.where(known, f, np.sqrt(lo * hi)), np.where(known, f, lo),
                np.where(known, f, hi))

    @staticmethod
    def _issue_factor(df, gpu, warp_size, f):
        """min(1, f I / P) per row on ``gpu``: the share of the compute ceiling its schedulers
        can feed at FP share ``f`` (P = lanes per SM / warp size of the row's precision; 1 for
        precisions without a lane count, and everywhere when the GPU has no issue rate)."""
        issue = gpu.value("warp_issue_per_sm_per_clock")
        if not np.isfinite(issue):
            return np.ones(len(df))
        pipe = per_dtype(df["_dtype"].to_numpy(),
                         lambda d: gpu.value(LANES[d]) / warp_size if d in LANES else np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(pipe > 0, np.minimum(1.0, f * issue / pipe), 1.0)

    @staticmethod
    def _launch_split(t_s, source, target):
        """(the source time less the source's launch overhead, the target's overhead to add
        back, a note). Where the catalog has it measured on one GPU only, the other's is taken
        as the same: launches cost 1.6 to 3.3 us on the six GPUs (two vendors) gpu-benches
        measured, whose DRAM bandwidths differ up to 9x. On its small kernels, each
        GPU's value hidden in turn, that beats keeping the overhead inside the time for every
        GPU as target (MAPE of `hierarchical-ext` 27.2-165.7 -> 22.2-73.5 %) and as source
        (27.1-243.7 -> 15.9-125.3 %; both measured: 15.2-94.6 %; scripts/doc_numbers.py
        launch-overhead-hidden). Measured on neither, the
        time scales as it is. The body keeps at least 5 % of the time: an overhead measured on
        an empty kernel may exceed a short kernel's time, and a time of 0 would not scale."""
        ls, lt = source.measured("launch_overhead_s"), target.measured("launch_overhead_s")
        if not (np.isfinite(ls) or np.isfinite(lt)):
            return t_s, 0.0, "launch overhead measured on neither GPU: kept inside the time"
        how = "measured"
        if not np.isfinite(ls):
            ls, how = lt, f"measured on {target.id}, taken as the same on {source.id}"
        elif not np.isfinite(lt):
            lt, how = ls, f"measured on {source.id}, taken as the same on {target.id}"
        body = np.maximum(t_s - ls, 0.05 * t_s)
        return body, lt, f"launch overhead {ls * 1e6:.1f} us -> {lt * 1e6:.1f} us ({how})"

    def _resident_blocks(self, df, source, target):
        """The occupancy calculator's resident blocks per SM of each row on the source and on
        the target (NaN where unknown)."""
        configs = self._once("launch_configs", lambda: launch_configs(df))
        return (self._once("resident_source", lambda: launch_occupancy(df, source, configs)[1]),
                launch_occupancy(df, target, configs)[1])

    def _concurrency(self, df, t_body, bs, bt, source, target, calc_s, calc_t):
        """(rows whose time is that of their waves of resident threads, their projected time).

        With few threads per SM a memory-bound kernel runs at the loads it keeps in flight over
        the memory latency, not at the DRAM bandwidth (Little's law): its time is its waves of
        resident threads x the latency (its limiter: ``latency``). A row counts as held so
        where its source ran below ``CONCURRENCY_SHARE`` of the DRAM ceiling, in at least
        ``CONCURRENCY_WAVES`` waves, and those waves at ``CONCURRENCY_LATENCY_S`` take within
        ``CONCURRENCY_BAND`` of its time.
        The target, with the same threads in flight and the same latency (the catalog's idle
        pointer-chase latencies, tried in its place, lost: docs/accuracy_analysis.md), takes
        time x its waves / the source's, and at least its DRAM time. Resident
        blocks per SM: on the source from the profile's achieved occupancy where it has one,
        else the occupancy calculator's (``calc_s``); on the target as many, within its
        calculator's limit (``calc_t``). On the gpu-benches stream sweep (two blocks per SM)
        this takes `hierarchical-ext` from 34.5 / 14.2 to 20.3 / 11.6 % MAPE / median APE; no row
        of the other tables qualifies (docs/accuracy_analysis.md). Each test alone flags rows it
        should not: the share alone, Rodinia's latency-bound kernels at full occupancy (far
        slower than their waves); Little's time alone, the seed report's bandwidth-bound kernels
        at full occupancy, where the waves take about as long as the bytes."""
        block = df["block_threads"].to_numpy(float)
        threads = df["grid_blocks"].to_numpy(float) * block

        def resident(gpu, blocks_per_sm):
            return np.minimum(gpu.value("sm_count") * blocks_per_sm * block, threads)

        with np.errstate(invalid="ignore", divide="ignore"):
            achieved = (df["achieved_occupancy"].to_numpy(float)
                        * source.value("max_threads_per_sm") / block)
            per_sm_s = np.where(np.isfinite(achieved) & (achieved > 0), achieved, calc_s)
            per_sm_t = np.fmin(per_sm_s, calc_t)
            waves_s = threads / resident(source, per_sm_s)
            waves_t = threads / resident(target, per_sm_t)
            dram = df["dram_bytes"].to_numpy(float)
            share = dram / t_body / bs("dram_bw_bytes_per_s")
            little = waves_s * CONCURRENCY_LATENCY_S / t_body
            lo, hi = CONCURRENCY_BAND
            held = (np.isfinite(waves_t) & (waves_s >= CONCURRENCY_WAVES)
                    & (share < CONCURRENCY_SHARE) & (little >= lo) & (little <= hi))
            t_held = np.maximum(t_body * waves_t / waves_s, dram / bt("dram_bw_bytes_per_s"))
        return held, t_held

    def _fill_ratios(self, df, source, target, calc_s, calc_t):
        """u_s / u_t per row by SM (the point) and by block slot (the interval's other end; the
        SM ratio where the occupancy is unknown), 1 where a row has no grid, and u_t by SM (NaN
        without a grid). Measured on the tables, the SM is the better unit: a block slot per
        resident block made NeuSight bmm 61.4 % MAPE against 33.3 %
        (docs/accuracy_analysis.md). ``calc_s``, ``calc_t``: the resident blocks per SM of
        ``_resident_blocks``."""
        u_s = self._once("fill_source", lambda: fill_fractions(df, source, calc_s))
        u_t = fill_fractions(df, target, calc_t)
        with np.errstate(invalid="ignore", divide="ignore"):
            by_sm, by_slot = (s / t for s, t in zip(u_s, u_t))
        by_sm = np.where(np.isfinite(by_sm) & (by_sm > 0), by_sm, 1.0)
        return by_sm, np.where(np.isfinite(by_slot) & (by_slot > 0), by_slot, by_sm), u_t[0]


class HierarchicalExtended(Hierarchical):
    name = "hierarchical-ext"
    summary = ("hierarchical roofline + cache-capacity, parallelism, warp-bandwidth, "
               "issue-rate, roof-share and roofline-floor extensions")

    def __init__(self, cache_capacity: bool = True, parallelism: bool = True,
                 warp_bandwidth: bool = True, issue_rate: bool = True,
                 target_counts: dict | None = None, source_clock: bool = False,
                 roof_share: bool = True, roof_floor: bool = True):
        super().__init__(cache_capacity=cache_capacity, parallelism=parallelism,
                         warp_bandwidth=warp_bandwidth, issue_rate=issue_rate,
                         target_counts=target_counts, source_clock=source_clock,
                         roof_share=roof_share, roof_floor=roof_floor)


def _quiet():
    """Silence numpy's 'mean of empty slice' and 'All-NaN slice' for rows with no level or
    no bound (they become NaN)."""
    return warnings.catch_warnings(action="ignore", category=RuntimeWarning)
