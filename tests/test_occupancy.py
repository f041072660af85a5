"""Occupancy against values worked out by hand with the CUDA Occupancy Calculator's rules
(and LLVM's AMDGPU occupancy rules for AMD), using each GPU's catalog limits."""

import numpy as np
import pytest
from conftest import make_gpu

from gpuproj.catalog import load_catalog
from gpuproj.errors import InputError
from gpuproj.occupancy import occupancy, waves


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def one(occ):
    return int(occ.blocks_per_sm), int(occ.active_warps), float(occ.occupancy), str(occ.limiter)


def test_cc70_v100_shared_memory_bound(cat):
    # 128 threads = 4 warps; 37 regs: 37*32 = 1184 -> ceil to 256 = 1280 per warp;
    # 65536/1280 = 51.2 -> 51 -> floor to granularity 4 = 48 warps -> 48/4 = 12 blocks.
    # smem 12288 B (unit 256, nothing reserved on 7.0): 98304/12288 = 8 blocks.
    # warps: 64/4 = 16; block limit 32.  -> 8 blocks, 32 warps, 32/64 = 0.5.
    occ = occupancy(cat.resolve("v100-sxm2-16gb"), 128, 37, 12288)
    assert one(occ) == (8, 32, 0.5, "shared_memory")
    assert int(occ.limits["registers"]) == 12 and int(occ.limits["warps"]) == 16


def test_cc75_t4_warp_bound(cat):
    # 1024 threads = 32 warps; cc 7.5 holds 32 warps/SM -> 1 block; regs 32*32 = 1024/warp ->
    # 64 warps fit -> 2 blocks; no smem.  -> 1 block, 32 warps, occupancy 1.0.
    assert one(occupancy(cat.resolve("Tesla T4"), 1024, 32, 0)) == (1, 32, 1.0, "warps")


def test_cc60_p100_two_register_partitions(cat):
    # GP100 splits its register file in 2 (cuda_occupancy.h, cudaOccSubPartitionsPerMultiprocessor:
    # 2 for cc 6.0, 4 for 6.1). 64 threads = 2 warps; 48 regs -> 1536/warp; 65536/1536 = 42.7
    # -> 42 warps (a multiple of 2) -> 21 blocks; warps 64/2 = 32; blocks 32.  -> 21 blocks,
    # 42 warps, 42/64. With 4 partitions it would be 40 warps, 20 blocks.
    p100 = cat.resolve("tesla-p100-pcie-16gb")
    assert one(occupancy(p100, 64, 48, 0)) == (21, 42, 42 / 64, "registers")
    # 1 warp of 88 regs -> 2816/warp; 65536/2816 = 23.3 -> 22 warps (not 20) -> 22 blocks
    assert int(occupancy(p100, 32, 88, 0).blocks_per_sm) == 22


def test_cc80_a100_register_bound(cat):
    # 256 threads = 8 warps; 64 regs -> 2048/warp -> 32 warps -> 4 blocks.
    # smem 0 + 1 KB reserved -> 1024 B -> 167936/1024 = 164.  warps 64/8 = 8.  -> 4 blocks, 0.5.
    assert one(occupancy(cat.resolve("NVIDIA A100-SXM4-80GB"), 256, 64, 0)) == (
        4, 32, 0.5, "registers")


def test_cc86_rtx3090_shared_memory_with_reserved_and_unit(cat):
    # 96 threads = 3 warps; 40 regs -> 1280/warp -> 51 -> 48 warps -> 16 blocks; warps 48/3 = 16;
    # smem 6000 + 1024 reserved = 7024 -> ceil to 128 = 7040 -> 102400/7040 = 14.5 -> 14 blocks.
    # -> 14 blocks, 42 warps, 42/48 = 0.875.
    assert one(occupancy(cat.resolve("RTX 3090"), 96, 40, 6000)) == (14, 42, 0.875, "shared_memory")
    # without the reserved KB it would have been 6016 B -> 17 -> capped by 16: the 1 KB matters


def test_cc89_block_limit_24(cat):
    # 32 threads = 1 warp, few regs: warps allow 48 blocks, but cc 8.9 holds 24 blocks.
    assert one(occupancy(cat.resolve("NVIDIA L4"), 32, 16, 0)) == (24, 24, 0.5, "blocks")


def test_cc90_h100_register_bound_with_large_smem(cat):
    # 256 threads = 8 warps; 128 regs -> 4096/warp -> 16 warps -> 2 blocks;
    # smem 50000 + 1024 = 51024 -> ceil 128 = 51072 -> 233472/51072 = 4.57 -> 4; warps 8.
    assert one(occupancy(cat.resolve("NVIDIA H100 80GB HBM3"), 256, 128, 50000)) == (
        2, 16, 0.25, "registers")


def test_unlaunchable_blocks(cat):
    a100 = cat.resolve("a100-sxm4-80gb")
    assert one(occupancy(a100, 1025, 32, 0))[0::3] == (0, "block_size")
    assert one(occupancy(a100, 128, 300, 0))[0::3] == (0, "registers")  # > 255 regs/thread
    assert one(occupancy(a100, 128, 32, 170000))[0::3] == (0, "shared_memory")  # > 163 KB opt-in


def test_a_damaged_block_size_is_unlaunchable_not_an_overflow(cat):
    # 1e20 threads (a damaged file) would overflow the int64 cast with a numpy warning: it is
    # past every limit, so no block fits; the rows beside it keep their occupancy
    import warnings

    import pandas as pd

    from gpuproj.models.common import launch_occupancy

    df = pd.DataFrame({"block_threads": [1e20, 256.0], "regs_per_thread": [1e30, 32.0],
                       "smem_per_block_bytes": [np.nan, 0.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        occ, blocks = launch_occupancy(df, cat.resolve("a100-sxm4-80gb"))
    assert occ[0] == 0 and blocks[0] == 0
    assert occ[1] == 1.0 and blocks[1] == 8


def test_carveout_option(cat):
    # cc 8.0 with the 100 KB carve-out: 20000 + 1024 = 21024 -> 21120 -> 102400/21120 = 4 blocks
    occ = occupancy(cat.resolve("a100-sxm4-80gb"), 128, 32, 20000, smem_carveout_bytes=100 * 1024)
    assert one(occ) == (4, 16, 0.25, "shared_memory")


def test_a_carveout_is_a_preference_the_driver_rounds_up(cat):
    """The carve-out is a hint (cudaFuncAttributePreferredSharedMemoryCarveout): the driver
    takes the smallest size the GPU supports that holds it, and one that holds a block where it
    holds none (cuda_occupancy.h, cudaOccMaxBlocksPerSMSmemLimit). A100, 20000 + 1024 B ->
    21120 B a block: 50 KB -> 64 KB, 3 blocks (not 51200 / 21120 = 2); 16 KB -> 32 KB, 1 block
    (not 0: it launches)."""
    a100 = cat.resolve("a100-sxm4-80gb")
    for kb, blocks in ((50, 3), (16, 1)):
        occ = occupancy(a100, 128, 32, 20000, smem_carveout_bytes=kb * 1024)
        assert one(occ)[0::3] == (blocks, "shared_memory"), kb
    # without a list of sizes (a GTX 1080), a preference that holds no block is the largest
    gtx = cat.resolve("gtx-1080")
    assert int(occupancy(gtx, 128, 32, 20000, smem_carveout_bytes=16384).blocks_per_sm) == 4


def test_vectorised_matches_scalar(cat):
    h100 = cat.resolve("h100-sxm5-80gb")
    T = np.array([64, 128, 256, 512, 1024, 96])
    R = np.array([32, 64, 96, 128, 40, 255])
    S = np.array([0, 4096, 30000, 100000, 0, 1000])
    occ = occupancy(h100, T, R, S)
    for i in range(len(T)):
        s = occupancy(h100, int(T[i]), int(R[i]), int(S[i]))
        assert occ.blocks_per_sm[i] == s.blocks_per_sm and occ.limiter[i] == s.limiter
    assert occ.blocks_per_sm.shape == (6,)


def test_waves(cat):
    a100 = cat.resolve("a100-sxm4-80gb")
    # 108 SMs x 4 blocks = 432 per wave: 1000 blocks -> 3 waves, 432 -> 1, 433 -> 2
    assert list(waves([1000, 432, 433], a100, 4)) == [3, 1, 2]
    assert np.isinf(waves(10, a100, 0))
    # resident blocks unknown (launch_occupancy's NaN): unknown waves, not "no block fits"
    assert np.isnan(waves(10, a100, np.nan))


def test_fill_fractions_count_waves_and_leave_unknowns_unknown(cat):
    import pandas as pd

    from gpuproj.models.common import fill_fractions

    a100 = cat.resolve("a100-sxm4-80gb")
    # 108 SMs: 54 blocks fill half of them; 433 blocks at 4 per SM take 2 waves of 432 slots
    df = pd.DataFrame({"grid_blocks": [54, 433, 433, 0, np.nan]})
    by_sm, by_slot = fill_fractions(df, a100, np.array([4, 4, 0, 4, 4]))
    assert by_sm[:2] == pytest.approx([0.5, 433 / 540]) and np.isnan(by_sm[3:]).all()
    assert by_slot[:2] == pytest.approx([54 / 432, 433 / 864]) and np.isnan(by_slot[2:]).all()
    no_sms = make_gpu("x", {"max_warps_per_sm": 64})
    assert all(np.isnan(f).all() for f in fill_fractions(df, no_sms, np.full(5, 4.0)))


def test_amd_mi210_vgpr_granules_and_lds(cat):
    # gfx90a: 4 SIMDs x 8 waves; 512 unified VGPRs/lane/SIMD, granule 8.
    # 256 work-items = 4 waves; 96 VGPRs -> 96*64 = 6144 regs/wave (multiple of 512);
    # 131072/6144 = 21.3 -> 21 -> floor to 4 = 20 waves (= 4 SIMDs x floor(512/96) = 4 x 5)
    # -> 5 WGs.
    # LDS 16384 B (512 B granules): 65536/16384 = 4 WGs. waves: 32/4 = 8. barriers: 16.
    occ = occupancy(cat.resolve("AMD Instinct MI210"), 256, 96, 16384)
    assert one(occ) == (4, 16, 0.5, "shared_memory")
    assert int(occ.limits["registers"]) == 5


def test_amd_mi100_single_wave_workgroups_escape_barrier_limit(cat):
    # gfx908: 4 SIMDs x 10 waves = 40; 24 VGPRs (granule 4) -> 1536 regs/wave -> 42 -> 40 waves.
    # one-wave workgroups use no barrier: 40 workgroups; two-wave workgroups: min(20, 20, 16) = 16.
    mi100 = cat.resolve("mi100")
    assert one(occupancy(mi100, 64, 24, 0)) == (40, 40, 1.0, "warps")
    assert one(occupancy(mi100, 128, 24, 0)) == (16, 32, 0.8, "blocks")


def test_missing_limit_names_the_field():
    g = make_gpu("bare", values={"warp_size": 32})
    with pytest.raises(InputError, match="max_warps_per_sm"):
        occupancy(g, 128)


def test_the_reports_occupancy_formulas_are_the_rules_with_units_of_one(cat):
    """Srivastava et al. Sec. 4.0.2: B_reg = floor(regs per SM / (regs per thread x threads)),
    B_smem = floor(smem per SM / smem per block), B_threads = floor(max threads / threads),
    B_hardware; the efficiency method takes NVIDIA's rules instead, which add allocation units
    (registers per warp in 256s, the register file's partitions, shared memory in 128 or 256 B
    and 1 KB reserved per block since Ampere). With every unit 1 they are the report's."""
    limits = {"warp_size": 32, "max_warps_per_sm": 64, "max_blocks_per_sm": 32,
              "max_threads_per_block": 1024, "regs_per_sm": 65536, "max_regs_per_block": 65536,
              "max_regs_per_thread": 255, "smem_per_sm_bytes": 98304,
              "smem_per_block_optin_bytes": 98304}
    units = {"reg_alloc_unit_size": 1, "warp_alloc_granularity": 1, "smem_alloc_unit_bytes": 1}
    gpu = make_gpu("paper", values={**limits, **units})
    for threads in (32, 96, 128, 256, 640, 1024):
        for regs in (1, 24, 33, 64, 100, 255):
            for smem in (1, 1000, 12288, 40000):
                paper = min(65536 // (regs * threads), 98304 // smem, 2048 // threads, 32)
                assert int(occupancy(gpu, threads, regs, smem).blocks_per_sm) == paper
    # the report's Titan V (cc 7.0) launch of 128 threads and 33 registers: 3 blocks more per
    # SM by its formula than the hardware holds (15 against 12, occupancy 0.94 against 0.75)
    assert 65536 // (33 * 128) == 15
    assert int(occupancy(cat.resolve("titan-v"), 128, 33, 0).blocks_per_sm) == 12


def test_the_reports_occupancy_by_hand():
    """Srivastava et al. Sec. 4.0.2 (``report_occupancy``) on a Titan V's limits: 64 warps,
    32 blocks, 65536 registers and 96 KB (98304 B) of shared memory per SM, warps of 32.

    - 128 threads, 33 registers: B_reg = 65536 // 4224 = 15, B_threads = 2048 // 128 = 16:
      15 blocks of 4 warps, O = 60/64 = 0.9375;
    - 128 threads, 40000 B of shared memory: B_smem = 98304 // 40000 = 2: O = 8/64 = 0.125;
    - 32 threads, nothing else: B_threads = 64, B_hardware = 32: O = 32/64 = 0.5;
    - 80 threads (3 warps): B_threads = 2048 // 80 = 25 blocks, 75 warps: O is 1, not 75/64."""
    from gpuproj.occupancy import report_occupancy

    tv = make_gpu("tv", values={"warp_size": 32, "max_warps_per_sm": 64,
                                "max_blocks_per_sm": 32, "regs_per_sm": 65536,
                                "smem_per_sm_bytes": 98304})
    got = report_occupancy(tv, [128, 128, 32, 80], [33, 0, 0, 0], [0, 40000, 0, 0])
    assert got.tolist() == [0.9375, 0.125, 0.5, 1.0]


def test_every_nvidia_gpu_has_the_occupancy_limits(cat):
    """Without one limit a GPU's occupancy is unknown and `efficiency` takes a ratio of 1 on
    it (the Jetson AGX Thor lacked its allocation units). cc 11.0 (cuda_occupancy.h, CUDA 13):
    256 threads of 64 registers = 2048 per warp, 65536 / 2048 = 32 warps = 4 blocks of 8 of
    the 48 a Thor SM holds."""
    for g in cat:
        if g.vendor == "NVIDIA":
            assert np.isfinite(occupancy(g, 128, 32, 0).occupancy), g.id
    assert one(occupancy(cat.resolve("jetson-agx-thor"), 256, 64, 0)) == (4, 32, 2 / 3,
                                                                          "registers")
