"""Resident blocks per SM (theoretical occupancy) from a launch configuration and a GPU.

The rules are the CUDA Occupancy Calculator's (``CUDA_Occupancy_Calculator.xls``, the same
arithmetic as ``cudaOccupancyMaxActiveBlocksPerMultiprocessor``), with every constant read from
the GPU's catalog file:

- warps per block = ceil(threads / warp size);
- warp limit = floor(max warps per SM / warps per block);
- register limit: registers per warp = ceil(regs per thread x warp size / allocation unit) x unit;
  warps that fit = floor(floor(max regs per block / regs per warp) / warp allocation
  granularity) x granularity (the register file is split into that many partitions: 2 on
  GP100 and Fermi, 4 elsewhere; ``cuda_occupancy.h`` also refuses on GP100 a block that
  GP10x's 4 could not hold, a forward-compatibility rule left out here);
  blocks = floor(warps that fit / warps per block) x floor(regs per SM / max regs per block);
- shared-memory limit: per-block footprint = ceil((smem + reserved smem per block) /
  allocation unit) x unit; blocks = floor(carve-out / footprint);
- block limit = max resident blocks per SM.

The same rules hold for AMD CUs with wavefronts for warps and VGPRs for registers: registers per
wave in granules, each of the 4 SIMDs holding its own VGPR file (the granularity-4 floor makes the
pooled count equal 4 x the per-SIMD count), LDS for shared memory; and one AMD-specific rule:
the 16 workgroup barriers of a CU limit multi-wave workgroups only, so single-wave workgroups are
limited by waves alone (LLVM ``getMaxWorkGroupsPerCU``).

>>> from gpuproj.catalog import load_catalog
>>> a100 = load_catalog().resolve("a100-sxm4-80gb")
>>> occ = occupancy(a100, block_threads=256, regs_per_thread=64, smem_per_block_bytes=0)
>>> int(occ.blocks_per_sm), int(occ.active_warps), float(occ.occupancy), str(occ.limiter)
(4, 32, 0.5, 'registers')
>>> int(waves(1000, a100, occ.blocks_per_sm))
3
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import InputError

# Reported when two limits give the same block count: the earlier name wins.
LIMITS = ("block_size", "warps", "registers", "shared_memory", "blocks")


@dataclass(frozen=True)
class Occupancy:
    """Per launch (element-wise over the input arrays).

    ``blocks_per_sm``: resident blocks per SM (0 when the block cannot launch);
    ``active_warps``: resident warps per SM; ``occupancy``: active warps / max warps per SM (0..1);
    ``limiter``: which limit binds (one of ``LIMITS``); ``limits``: blocks per SM allowed by each
    limit on its own (``block_size`` is 0 or the block limit).
    """

    blocks_per_sm: np.ndarray
    active_warps: np.ndarray
    occupancy: np.ndarray
    limiter: np.ndarray
    limits: dict


def _need(gpu, name):
    v = gpu.value(name)
    if math.isnan(v):
        raise InputError(f"is needed for occupancy but {gpu.id} does not give it",
                         path=gpu.path, field=f"values.{name}")
    return v


def occupancy(gpu, block_threads, regs_per_thread=0, smem_per_block_bytes=0, *,
              smem_carveout_bytes=None) -> Occupancy:
    """Theoretical occupancy of a kernel launch on ``gpu`` (a catalog ``GPU``).

    ``block_threads``: threads per block; ``regs_per_thread``: 32-bit registers per thread (0 = not
    known, no register limit); ``smem_per_block_bytes``: static + dynamic shared memory per block in
    bytes; ``smem_carveout_bytes``: the preferred shared-memory carve-out per SM, which the driver
    rounds up (``_carveout``; default: the largest, ``smem_per_sm_bytes``). Arrays broadcast
    against each other.
    """
    T = np.asarray(block_threads, dtype=np.int64)
    R = np.asarray(regs_per_thread, dtype=np.int64)
    S = np.asarray(smem_per_block_bytes, dtype=np.int64)
    if np.any(T <= 0) or np.any(R < 0) or np.any(S < 0):
        raise InputError("block_threads must be > 0, registers and shared memory >= 0")
    T, R, S = np.broadcast_arrays(T, R, S)

    ws = int(_need(gpu, "warp_size"))
    max_warps = int(_need(gpu, "max_warps_per_sm"))
    max_blocks = int(_need(gpu, "max_blocks_per_sm"))
    max_tpb = int(_need(gpu, "max_threads_per_block"))
    regs_sm = int(_need(gpu, "regs_per_sm"))
    regs_block = int(_need(gpu, "max_regs_per_block"))
    regs_thread = int(_need(gpu, "max_regs_per_thread"))
    reg_unit = int(_need(gpu, "reg_alloc_unit_size"))
    gran = int(_need(gpu, "warp_alloc_granularity"))
    smem_unit = int(_need(gpu, "smem_alloc_unit_bytes"))
    smem_block_max = int(_need(gpu, "smem_per_block_optin_bytes"))
    reserved = gpu.value("reserved_smem_per_block_bytes")
    reserved = 0 if math.isnan(reserved) else int(reserved)
    smem_sm = int(_need(gpu, "smem_per_sm_bytes"))

    wpb = -(-T // ws)  # warps per block
    big = np.iinfo(np.int64).max // 4

    lim_size = np.where(T <= max_tpb, big, 0)
    lim_warps = max_warps // wpb

    regs_per_warp = -(-(R * ws) // reg_unit) * reg_unit
    safe = np.maximum(regs_per_warp, 1)
    warps_fit = (regs_block // safe) // gran * gran
    lim_regs = np.where(R == 0, big,
                        np.where(R > regs_thread, 0, (warps_fit // wpb) * (regs_sm // regs_block)))

    footprint = -(-(S + reserved) // smem_unit) * smem_unit
    carve = (smem_sm if smem_carveout_bytes is None
             else _carveout(gpu, smem_carveout_bytes, footprint, smem_sm))
    lim_smem = np.where(S > smem_block_max, 0,
                        np.where(footprint == 0, big, carve // np.maximum(footprint, 1)))

    lim_blocks = np.full(T.shape, max_blocks, dtype=np.int64)
    if gpu.vendor.upper() == "AMD":
        # single-wave workgroups use no barrier slot (LLVM getMaxWorkGroupsPerCU)
        lim_blocks = np.where(wpb == 1, max_warps, lim_blocks)

    stack = np.stack([lim_size, lim_warps, lim_regs, lim_smem, lim_blocks])
    blocks = stack.min(axis=0)
    limiter = np.asarray(LIMITS)[np.argmin(stack, axis=0)]
    active = blocks * wpb
    limits = {"block_size": np.where(lim_size == 0, 0, max_blocks), "warps": lim_warps,
              "registers": np.minimum(lim_regs, big), "shared_memory": lim_smem,
              "blocks": lim_blocks}
    return Occupancy(blocks_per_sm=blocks, active_warps=active, occupancy=active / max_warps,
                     limiter=limiter, limits=limits)


def _carveout(gpu, preferred, footprint, largest):
    """The carve-out a launch gets for a ``preferred`` one, a hint
    (``cudaFuncAttributePreferredSharedMemoryCarveout``): the smallest size the GPU supports
    (``smem_carveouts_bytes``) that holds it and a block; without the list of sizes, the
    preference where it holds a block, else the largest (``cuda_occupancy.h``,
    ``cudaOccMaxBlocksPerSMSmemLimit``)."""
    entry = gpu.values.get("smem_carveouts_bytes")
    if entry is None:
        return np.where(preferred >= footprint, min(preferred, largest), largest)
    sizes = np.sort(np.asarray(entry.value, dtype=np.int64))
    i = np.searchsorted(sizes, np.maximum(preferred, footprint))
    return np.where(i < len(sizes), sizes[np.minimum(i, len(sizes) - 1)], largest)


def report_occupancy(gpu, block_threads, regs_per_thread=0, smem_per_block_bytes=0):
    """Occupancy by Srivastava et al.'s Sec. 4.0.2 as written: O = active warps / max warps per
    SM, active warps = B_active x warps per block, B_active = min(B_reg, B_smem, B_threads,
    B_hardware), B_reg = floor(regs per SM / (regs per thread x threads)), B_smem = floor(smem
    per SM / smem per block), B_threads = floor(max threads per SM / threads); a count of 0 is
    no limit, as in ``occupancy``. Without allocation units, register-file partitions, reserved
    shared memory or per-block limits: `efficiency` uses ``occupancy``'s rules unless told
    otherwise (``EfficiencyTransfer(occupancy="report")``). One departure: O is at most 1, as
    the report defines it (0 to 1). B_threads counts threads, the warps count whole warps, so
    a block whose threads are not a multiple of the warp size would count more warps than the
    SM holds (80 threads on a Titan V: 25 blocks of 3 warps, 75 of 64).

    >>> from gpuproj.catalog import load_catalog
    >>> titan_v = load_catalog().resolve("titan-v")
    >>> float(report_occupancy(titan_v, 128, 33, 0))  # 15 blocks of 4 warps; the rules hold 12
    0.9375
    """
    T = np.asarray(block_threads, dtype=np.int64)
    R = np.asarray(regs_per_thread, dtype=np.int64)
    S = np.asarray(smem_per_block_bytes, dtype=np.int64)
    if np.any(T <= 0) or np.any(R < 0) or np.any(S < 0):
        raise InputError("block_threads must be > 0, registers and shared memory >= 0")
    ws = int(_need(gpu, "warp_size"))
    max_warps = int(_need(gpu, "max_warps_per_sm"))
    big = np.iinfo(np.int64).max // 4
    b_reg = np.where(R == 0, big, int(_need(gpu, "regs_per_sm")) // np.maximum(R * T, 1))
    b_smem = np.where(S == 0, big, int(_need(gpu, "smem_per_sm_bytes")) // np.maximum(S, 1))
    b_threads = (max_warps * ws) // T
    b_active = np.minimum.reduce([b_reg, b_smem, b_threads,
                                  np.full(T.shape, int(_need(gpu, "max_blocks_per_sm")))])
    return np.minimum(b_active * -(-T // ws), max_warps) / max_warps


def waves(grid_blocks, gpu, blocks_per_sm) -> np.ndarray:
    """Number of waves: ceil(grid blocks / (SMs x resident blocks per SM)); ``inf`` where no block
    fits (blocks_per_sm == 0), NaN where that is unknown (``launch_occupancy``'s NaN)."""
    grid = np.asarray(grid_blocks, dtype=np.float64)
    bps = np.asarray(blocks_per_sm, dtype=np.float64)
    per_wave = _need(gpu, "sm_count") * bps
    none = np.where(np.isnan(per_wave), np.nan, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(per_wave > 0, np.ceil(grid / np.where(per_wave > 0, per_wave, 1)), none)
