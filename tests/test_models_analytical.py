"""The analytical models against hand-computed examples of the papers' equations."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import make_gpu, table

from gpuproj.catalog import Entry
from gpuproj.models import get_model

SRC = make_gpu(
    "src",
    values={"warp_size": 32, "sm_count": 10, "shared_banks": 32, "shared_bank_width_bytes": 4,
            "l2_size_bytes": 4e6},
    peak={"fp32_fma_flops_per_s": 10e12, "fp32_addmul_flops_per_s": 5e12,
          "fp64_fma_flops_per_s": 5e12, "fp64_addmul_flops_per_s": 2.5e12,
          "dram_bw_bytes_per_s": 1.25e12, "l2_bw_bytes_per_s": 4e12, "l1_bw_bytes_per_s": 16e12,
          "shared_bw_bytes_per_s": 16e12, "int32_fma_ops_per_s": 5e12,
          "int32_add_ops_per_s": 5e12, "ldst_inst_per_s": 2.5e12},
    measured={"dram_bw_bytes_per_s": 1e12, "dram_write_bw_bytes_per_s": 1.1e12},
)
TGT = make_gpu(
    "tgt",
    values={"warp_size": 32, "sm_count": 20, "shared_banks": 32, "shared_bank_width_bytes": 4,
            "l2_size_bytes": 40e6},
    peak={"fp32_fma_flops_per_s": 20e12, "fp32_addmul_flops_per_s": 10e12,
          "fp64_fma_flops_per_s": 10e12, "fp64_addmul_flops_per_s": 5e12,
          "dram_bw_bytes_per_s": 2.5e12, "l2_bw_bytes_per_s": 6e12, "l1_bw_bytes_per_s": 20e12,
          "shared_bw_bytes_per_s": 20e12, "int32_fma_ops_per_s": 10e12,
          "int32_add_ops_per_s": 10e12, "ldst_inst_per_s": 5e12},
    measured={"dram_bw_bytes_per_s": 2e12},
)


def hier_kernel(**over):
    cols = dict(time_s=[2e-3], fp32_fma_thread_inst=[1e9], fp32_add_thread_inst=[0.5e9],
                fp32_mul_thread_inst=[0.5e9], warp_inst=[1e8], thread_inst=[1.6e9],
                dram_bytes=[1e9], dram_read_bytes=[0.5e9], dram_write_bytes=[0.5e9],
                l2_bytes=[2e9], l1_bytes=[4e9])
    cols.update(over)
    return table(**cols)


def test_hierarchical_hand_example():
    """Van Lanker Eqs. 2-10 on one kernel, computed by hand.

    FLOP = 2*1e9 + 0.5e9 + 0.5e9 = 3e9. Eq. 2: Perf_mix,s = 10e12*0.5 + 5e12*0.5 = 7.5e12,
    target 15e12. Eq. 3: 1.6e9 / (1e8 * 32) = 0.5 active -> Perf_ceil 3.75e12 / 7.5e12.
    Hits: DRAM 1e9, L2 2e9-1e9 = 1e9, L1 4e9-2e9 = 2e9.
    Source (DRAM measured 1e12; L2, L1 peak): t_dram 1e-3, t_l2 2.5e-4, t_l1 1.25e-4.
      BW_L2,ceil = 2e9/1.25e-3 = 1.6e12, BW_L1,ceil = 4e9/1.375e-3.
    Target (DRAM measured 2e12; L2 6e12 and L1 20e12 derived = peak x (src measured/peak),
      but src has no measured L2/L1, so the peak is used): t_dram 5e-4, t_l2 1e9/6e12, t_l1 1e-4.
    OI: DRAM 3, L2 1.5, L1 0.75. Eq. 9 as time: t_t = t_s * roof_s / roof_t.
    """
    pred = get_model("hierarchical").predict(hier_kernel(), SRC, TGT).df.iloc[0]
    bw_l1_s = 4e9 / (1e-3 + 2.5e-4 + 1.25e-4)
    bw_l1_t = 4e9 / (5e-4 + 1e9 / 6e12 + 1e-4)
    bw_l2_t = 2e9 / (5e-4 + 1e9 / 6e12)
    roof_s = {"dram": min(1e12 * 3, 3.75e12), "l2": min(1.6e12 * 1.5, 3.75e12),
              "l1": min(bw_l1_s * 0.75, 3.75e12)}
    roof_t = {"dram": min(2e12 * 3, 7.5e12), "l2": min(bw_l2_t * 1.5, 7.5e12),
              "l1": min(bw_l1_t * 0.75, 7.5e12)}
    times = [2e-3 * roof_s[k] / roof_t[k] for k in ("l1", "l2", "dram")]
    assert times[2] == pytest.approx(1e-3)
    assert pred["time_s"] == pytest.approx(np.mean(times), rel=1e-12)
    assert pred["low_s"] == pytest.approx(min(times), rel=1e-12)
    assert pred["high_s"] == pytest.approx(max(times), rel=1e-12)
    # the target's time per resource (the breakdown): compute 3e9 FLOP at its Perf_ceil
    # 7.5e12 = 4e-4; DRAM 1e9 B / 2e12 = 5e-4; L2 hits 1e9 B / 6e12; L1 hits 2e9 B / 20e12 =
    # 1e-4; no shared bytes in the profile: unknown, not 0. DRAM's is the longest
    assert pred["t_compute_s"] == pytest.approx(3e9 / 7.5e12, rel=1e-12)
    assert pred["t_dram_s"] == pytest.approx(1e9 / 2e12, rel=1e-12)
    assert pred["t_l2_s"] == pytest.approx(1e9 / 6e12, rel=1e-12)
    assert pred["t_l1_s"] == pytest.approx(2e9 / 20e12, rel=1e-12)
    assert np.isnan(pred["t_shared_s"])
    assert pred["limiter"] == "dram"
    # where compute takes the longest, the limiter is the kernel's dtype
    fast = get_model("hierarchical").predict(hier_kernel(dram_bytes=[1e8], dram_read_bytes=[
        0.5e8], dram_write_bytes=[0.5e8]), SRC, TGT).df.iloc[0]
    assert fast["t_dram_s"] == pytest.approx(1e8 / 2e12)
    assert fast["t_dram_s"] < fast["t_compute_s"] == pytest.approx(4e-4)
    assert fast["limiter"] == "fp32"


def test_warp_usage_counts_the_warps_of_the_profiled_gpu():
    """Eq. 3's active threads per warp instruction come from the source's counts, in its
    32-wide warps. On a GPU of 64-wide wavefronts (CDNA) the same threads issue half as many
    instructions: the share of lanes in use, u = 1.6e9 / (1e8 x 32) = 0.5, stays (before the
    fix: 1.6e9 / (1e8 x 64) = 0.25, which halved every ceiling of the target). What changes is
    how a block fills its warps: 16 threads fill 16/32 of a warp and 16/64 of a wavefront, so
    u = 0.5 x (16/64) / (16/32) = 0.25; 256 threads fill both, u = 0.5; 48 threads fill 48/64
    of two warps and 48/64 of one wavefront, u = 0.5."""
    from dataclasses import replace

    from gpuproj.models.hierarchical import Hierarchical

    wide = replace(TGT, id="wide", values={
        **TGT.values, "warp_size": replace(TGT.values["warp_size"], value=64)})
    for name in ("hierarchical", "hierarchical-ext"):
        on_wide = get_model(name).predict(hier_kernel(), SRC, wide).df.iloc[0]
        on_tgt = get_model(name).predict(hier_kernel(), SRC, TGT).df.iloc[0]
        assert on_wide["time_s"] == pytest.approx(on_tgt["time_s"], rel=1e-12), name
    k = hier_kernel(**{c: v * 3 for c, v in hier_kernel().df.iloc[:1].to_dict("list").items()
                       if c in ("time_s", "fp32_fma_thread_inst", "fp32_add_thread_inst",
                                "fp32_mul_thread_inst", "warp_inst", "thread_inst",
                                "dram_bytes", "dram_read_bytes", "dram_write_bytes", "l2_bytes",
                                "l1_bytes")}, block_threads=[16, 256, 48])
    usage = Hierarchical().ceilings(k.df, wide, reference=SRC)["warp_usage"]
    assert usage == pytest.approx([0.25, 0.5, 0.5], rel=1e-12)
    assert Hierarchical().ceilings(k.df, SRC)["warp_usage"] == pytest.approx([0.5] * 3)
    # said once for all targets of that width, not once per target
    from gpuproj.predict import PredictionSet

    targets = [wide, replace(wide, id="wide2"), TGT]
    proj = get_model("hierarchical").predict(hier_kernel(), SRC, targets)
    lines = PredictionSet([SRC.id], [t.id for t in targets], {"hierarchical": proj}, [],
                          {}).assumption_lines()
    # (and which targets those are: the note does not name them)
    assert [x for x in lines if "warp usage" in x] == [
        f"for {wide.id}, wide2: warp usage on 64-wide targets: counts in 32-wide warps, the "
        "share of active lanes kept, the blocks' fill of the warps recomputed (hierarchical)"]


def test_hierarchical_a_missing_fp16_peak_takes_the_fp32_one_for_the_rows_that_need_it():
    """An FP16 kernel in the profile, on GPUs without FP16 peaks (nor measurements to derive
    them from): the FP32 row is projected as if alone (the FP16 term is 0 where there are no
    FP16 instructions), and the FP16 row takes the FP32 FMA ceiling in place of the missing one,
    with a note, so it projects as the same instructions in FP32 would."""
    alone = get_model("hierarchical").predict(hier_kernel(), SRC, TGT).df.iloc[0]
    extra = {"time_s": [2e-3], "warp_inst": [1e8], "thread_inst": [1.6e9], "dram_bytes": [1e9],
             "dram_read_bytes": [0.5e9], "dram_write_bytes": [0.5e9], "l2_bytes": [2e9],
             "l1_bytes": [4e9]}

    def two(fp16_fma, fp32_fma, fp16_flops, fp32_flops):
        return hier_kernel(**{c: v + [v[0]] for c, v in extra.items()},
                           fp32_fma_thread_inst=[1e9, fp32_fma], fp32_add_thread_inst=[0.5e9, 0],
                           fp32_mul_thread_inst=[0.5e9, 0.0], fp16_fma_thread_inst=[0.0, fp16_fma],
                           fp32_flops=[3e9, fp32_flops], fp16_flops=[0.0, fp16_flops],
                           flops=[3e9, 2e9])

    got = get_model("hierarchical").predict(two(1e9, 0.0, 2e9, 0.0), SRC, TGT)
    pred = got.df
    assert list(pred["row"]) == [0, 1]
    assert pred.iloc[0]["time_s"] == pytest.approx(alone["time_s"], rel=1e-12)
    as_fp32 = get_model("hierarchical").predict(two(0.0, 1e9, 0.0, 2e9), SRC, TGT).df
    assert pred.iloc[1]["time_s"] == pytest.approx(as_fp32.iloc[1]["time_s"], rel=1e-12)
    assert any("fp16_fma_flops_per_s" in a and "fp32_fma_flops_per_s used" in a
               for a in got.assumptions[TGT.id])


@pytest.mark.parametrize("method", ["compute", "roofline", "efficiency"])
def test_peak_models_give_a_gpu_without_an_fp16_peak_its_fp32_one_x_the_others_ratio(method):
    """ncu counts ptxas's HFMA2.MMA constant moves as FP16 FMAs, so an FP32 kernel without FP32
    math looks FP16 (the suite's random_access). From a source with FP16 at 40e12 (4 x its FP32
    10e12) to TGT without one: TGT's FP16 stands in as 20e12 x 4 = 80e12, so the row projects
    by the FP32 ratio, 2e-3 x 10/20 = 1e-3 s (compute bound for the rooflines: 2e9 FLOP on
    1 B), where it was skipped before; the note names the stand-in. The other way round, TGT as
    the source takes the same stand-in: 2e-3 x 80/40 = 4e-3 s."""
    src = make_gpu("src16", values={"warp_size": 32, "sm_count": 10},
                   peak={**{k: e.value for k, e in SRC.peaks.items()},
                         "fp16_fma_flops_per_s": 40e12})
    k = table(time_s=[2e-3], fp16_fma_thread_inst=[1e9], fp16_flops=[2e9], flops=[2e9],
              dram_bytes=[1.0])
    p = get_model(method).predict(k, src, TGT)
    assert p.df.iloc[0]["time_s"] == pytest.approx(1e-3)
    assert any("tgt has no FP16 peak: its FP32 peak x src16's FP16/FP32 ratio" in a
               for a in p.assumptions["tgt"])
    back = get_model(method).predict(k, TGT, src)
    assert back.df.iloc[0]["time_s"] == pytest.approx(4e-3)


def _launch(gpu="titan-v", **cols):
    """A compute-bound FP32 launch of 128-thread blocks measured on ``gpu`` (1 ms)."""
    cols = {**dict(time_s=[1e-3], fp32_flops=[2e9], flops=[2e9], block_threads=[128.0],
                   grid_blocks=[4096.0], regs_per_thread=[33.0], smem_per_block_bytes=[0.0]),
            **cols}
    return table(**cols, gpu=[gpu] * len(cols["time_s"]))


def test_efficiency_hand_example_with_the_occupancy_rules_and_the_reports_formula():
    """Algorithm 1 without bytes (Roof = C): t_tgt = t_src x (O_src C_src) / (O_tgt C_tgt).
    Titan V -> RTX 2080 Ti, 128 threads (4 warps), 33 registers. The rules: 33 x 32 = 1056 ->
    1280 registers per warp, 65536 / 1280 = 51 -> 48 warps (granularity 4) = 12 blocks on the
    Titan V, O_src = 48/64 = 0.75; the 2080 Ti holds 32 warps, 8 blocks, O_tgt = 1. The report's
    Sec. 4.0.2: B_reg = 65536 / (33 x 128) = 15 on the Titan V, O_src = 60/64 = 0.9375;
    B_threads = 1024 / 128 = 8 on the 2080 Ti, O_tgt = 1."""
    from gpuproj.catalog import load_catalog

    cat = load_catalog()
    tv, ti = cat.resolve("titan-v"), cat.resolve("rtx-2080-ti")
    c_s, c_t = tv.peak("fp32_fma_flops_per_s"), ti.peak("fp32_fma_flops_per_s")
    for formula, o_s in (("rules", 0.75), ("report", 0.9375)):
        row = get_model("efficiency", occupancy=formula).predict(_launch(), tv, ti).df.iloc[0]
        assert (row["occupancy_source"], row["occupancy_target"]) == (o_s, 1.0)
        assert row["time_s"] == pytest.approx(1e-3 * o_s * c_s / c_t)
    with pytest.raises(ValueError, match="occupancy must be 'rules' or 'report'"):
        get_model("efficiency", occupancy="paper")


def test_efficiency_roof_is_memory_on_one_gpu_and_compute_on_the_other():
    """Algorithm 1's compute-or-mixed branch with bytes, datasheet peaks. AI = 6e9 / 1e9 = 6.
    Source: Roof = min(10e12, 6 x 1.25e12) = 7.5e12 (memory). Target with 5e12 B/s: Roof =
    min(20e12, 6 x 5e12) = 20e12 (compute). P = 6e9 / 1 ms = 6e12, eta = 6e12 / 7.5e12 = 0.8
    (no launch geometry: O_src = O_tgt = 1), T_tgt = 6e9 / (0.8 x 20e12) = 0.375 ms."""
    fast_mem = make_gpu("fastmem", values={"warp_size": 32},
                        peak={"fp32_fma_flops_per_s": 20e12, "dram_bw_bytes_per_s": 5e12})
    k = table(time_s=[1e-3], fp32_flops=[6e9], flops=[6e9], dram_bytes=[1e9])
    row = get_model("efficiency").predict(k, SRC, fast_mem).df.iloc[0]
    assert row["time_s"] == pytest.approx(3.75e-4, rel=1e-12)
    assert row["limiter"] == "fp32"
    # back the other way: Roof 20e12 on fastmem, 7.5e12 on SRC, limited by DRAM there
    back = table(time_s=[3.75e-4], fp32_flops=[6e9], flops=[6e9], dram_bytes=[1e9],
                 gpu=["fastmem"])
    row = get_model("efficiency").predict(back, fast_mem, SRC).df.iloc[0]
    assert row["time_s"] == pytest.approx(1e-3, rel=1e-12) and row["limiter"] == "dram"


def test_efficiency_without_flops_transfers_the_bandwidth_efficiency():
    """Algorithm 1's FLOPs = 0 branch: eta = (Bytes / T_src) / (O_src BW_src), T_tgt = Bytes /
    (eta O_tgt BW_tgt) = 1 ms x 1.25e12 / 2.5e12 (datasheet DRAM peaks; no launch geometry,
    occupancy ratio 1)."""
    row = get_model("efficiency").predict(table(time_s=[1e-3], dram_bytes=[1e9]),
                                          SRC, TGT).df.iloc[0]
    assert row["time_s"] == pytest.approx(5e-4) and row["limiter"] == "dram"


def test_efficiency_a_block_that_fits_no_sm_of_the_target_has_no_time():
    """80 KB of shared memory per block: the A100 holds it (its opt-in limit is 163 KB), the T4
    gives a block at most 64 KB. O_tgt = 0 makes Algorithm 1's time infinite; it was taken as
    a ratio of 1 "without launch geometry". The row is skipped, saying why."""
    p = get_model("efficiency").predict(_launch("a100-sxm4-80gb", smem_per_block_bytes=[80e3]),
                                        "a100-sxm4-80gb", "tesla-t4")
    assert len(p.df) == 0
    assert p.skipped[0].reason.endswith(
        "a100-sxm4-80gb -> tesla-t4: efficiency: a block fits no SM of tesla-t4 by the "
        "occupancy rules: it cannot launch there")
    assert "1 row(s) cannot launch on tesla-t4: no time" in p.assumptions["tesla-t4"]
    assert p.skipped[0].lacks == ()  # not a ceiling the T4 lacks
    # the default method too (it gave 3.55 ms without a word); the paper's hierarchical has no
    # launch geometry, and projects it
    ext = get_model("hierarchical-ext").predict(
        _launch("a100-sxm4-80gb", smem_per_block_bytes=[80e3], dram_bytes=[1e9]),
        "a100-sxm4-80gb", "tesla-t4")
    assert len(ext.df) == 0 and ext.skipped[0].reason.endswith(
        "hierarchical-ext: a block fits no SM of tesla-t4 by the occupancy rules: it cannot "
        "launch there")


def test_efficiency_registers_above_the_targets_limit_are_taken_at_it():
    """100 registers per thread counted on a Titan V (255 allowed) on a GTX 680, which allows
    63: its compiler caps them, so the occupancy is that of 63 registers (63 x 32 = 2016 ->
    2048 per warp, 65536 / 2048 = 32 warps = 8 blocks of 4, O = 32/64 = 0.5), not 0."""
    p = get_model("efficiency").predict(_launch(regs_per_thread=[100.0]), "titan-v", "gtx-680")
    assert p.df.iloc[0]["occupancy_target"] == 0.5


def test_efficiency_says_which_occupancy_limits_it_did_not_know():
    """A block size without a register count or shared-memory size (KernelTuner's and NeuSight's
    tables) counts the limits known, and says so; a row without geometry takes ratio 1."""
    k = _launch(time_s=[1e-3] * 2, fp32_flops=[2e9] * 2, flops=[2e9] * 2,
                block_threads=[128.0, np.nan], grid_blocks=[4096.0] * 2,
                regs_per_thread=[np.nan] * 2, smem_per_block_bytes=[np.nan] * 2)
    notes = get_model("efficiency").predict(k, "titan-v", "rtx-2080-ti").assumptions
    assert {"1 row(s) without launch geometry: occupancy ratio 1",
            "1 row(s) without a register count or shared-memory size: their occupancy counts "
            "the other limits only"} <= set(notes["rtx-2080-ti"])


def test_hierarchical_a_missing_level_ceiling_leaves_the_rows_without_that_level():
    """A target without an L2 (or shared) bandwidth: the row with L2 bytes has no L2 (nor L1)
    level and its L2 time is unknown (NaN, not 0); the row without L2 (or shared) bytes keeps
    its L1 level, projected as if it were alone (before: 0 x NaN voided its L1 level next to
    the other row)."""
    nol2 = make_gpu("nol2", values={"warp_size": 32, "sm_count": 20},
                    peak={"fp32_fma_flops_per_s": 20e12, "fp32_addmul_flops_per_s": 10e12,
                          "dram_bw_bytes_per_s": 2.5e12, "l1_bw_bytes_per_s": 20e12})

    def kernels(l2):
        n = len(l2)
        return table(time_s=[2e-3] * n, flops=[3e9] * n, dtype=["fp32"] * n,
                     dram_bytes=[1e9] * n, l1_bytes=[4e9] * n, l2_bytes=l2)

    alone = get_model("hierarchical").predict(kernels([np.nan]), SRC, nol2).df.iloc[0]
    both = get_model("hierarchical").predict(kernels([2e9, np.nan]), SRC, nol2).df
    assert alone["high_s"] > alone["low_s"]  # an L1 level beside the DRAM one
    for c in ("time_s", "low_s", "high_s", "t_l1_s"):
        assert both.iloc[1][c] == pytest.approx(alone[c], rel=1e-12)
    assert np.isnan(both.iloc[0]["t_l2_s"]) and both.iloc[0]["low_s"] == both.iloc[0]["high_s"]
    # the same with shared memory: nol2 has no shared bandwidth either
    shared = table(time_s=[2e-3] * 2, flops=[3e9] * 2, dtype=["fp32"] * 2, dram_bytes=[1e9] * 2,
                   l1_bytes=[4e9] * 2, shared_bytes=[1e9, 0.0])
    pred = get_model("hierarchical").predict(shared, SRC, nol2).df
    for c in ("time_s", "low_s", "high_s", "t_l1_s"):
        assert pred.iloc[1][c] == pytest.approx(alone[c], rel=1e-12)


def test_hierarchical_no_flops_projects_on_bytes():
    """A copy kernel (FLOP = 0): t_t = t_s * BW_ceil,s / BW_ceil,t per level (Eq. 9 at OI -> 0)."""
    k = table(time_s=[1e-3], dram_bytes=[1e9], dram_read_bytes=[0.5e9], dram_write_bytes=[0.5e9])
    pred = get_model("hierarchical").predict(k, SRC, TGT).df.iloc[0]
    assert pred["time_s"] == pytest.approx(1e-3 * 1e12 / 2e12)
    assert pred["limiter"] == "dram"


def test_hierarchical_write_only_uses_write_bandwidth():
    """STREAM-init-like kernel: the source uses its measured write bandwidth 1.1e12; the target
    has none measured, so its write ceiling is derived from its DRAM ceiling (2e12 measured) and
    the source's write/triad ratio 1.1e12 / 1e12."""
    k = table(time_s=[1e-3], dram_bytes=[1e9], dram_read_bytes=[0.0], dram_write_bytes=[1e9])
    m = get_model("hierarchical")
    pred = m.predict(k, SRC, TGT)
    bw_t = 2e12 * 1.1e12 / 1e12
    assert pred.df.iloc[0]["time_s"] == pytest.approx(1e-3 * 1.1e12 / bw_t)
    assert any("derived" in a for a in pred.assumptions["tgt"])


def test_a_row_without_a_read_count_is_write_only_by_its_dram_bytes_less_its_writes():
    """A profile that counts DRAM bytes and writes, not reads: the reads are the rest. Taken as
    none, a row of 1 GB with 0.5 GB written was write-only, priced at the write bandwidth."""
    nan = float("nan")
    tgt = make_gpu("tgt", values={"warp_size": 32, "sm_count": 20},
                   peak={"dram_bw_bytes_per_s": 2.5e12},
                   measured={"dram_bw_bytes_per_s": 2e12, "dram_write_bw_bytes_per_s": 3e12})
    k = table(time_s=[1e-3] * 3, dram_bytes=[1e9] * 3, dram_read_bytes=[nan, nan, 0.0],
              dram_write_bytes=[0.5e9, 1e9, 1e9])
    t = get_model("hierarchical").predict(k, SRC, tgt).df["time_s"].to_numpy()
    assert t == pytest.approx([1e-3 * 1e12 / 2e12] + [1e-3 * 1.1e12 / 3e12] * 2)


def test_write_bandwidth_derived_from_a_dram_peak_takes_the_sources_write_over_its_peak():
    """An H100 (our STREAM triad and init) to a Titan V (the seed report's triad, no write
    measured): the triads of two benchmarks leave both DRAM ceilings at their peaks
    (GPU.ceiling), 3350 and 652.8 GB/s. The Titan V's write ceiling is then its peak x the
    H100's write / its peak, 3261 / 3350, below its peak, so a write-only row scales as a read
    one, 3350 / 652.8 = 5.13x. Before, that peak took the H100's write / its triad, 3261 /
    3056 = 1.07: a write ceiling 1.07x the Titan V's DRAM peak, and write rows 4.68x."""
    from gpuproj.catalog import resolve
    from gpuproj.models.common import CeilingBook

    h100, titan = resolve("h100-sxm5-80gb"), resolve("titan-v")
    book = CeilingBook(titan, reference=h100)
    peak = titan.peak("dram_bw_bytes_per_s")
    assert book("dram_bw_bytes_per_s") == peak
    write = book.relative("dram_write_bw_bytes_per_s", "dram_bw_bytes_per_s")
    assert write == pytest.approx(peak * h100.measured("dram_write_bw_bytes_per_s")
                                  / h100.peak("dram_bw_bytes_per_s"), rel=1e-12)
    assert ("titan-v dram_write_bw_bytes_per_s derived: dram_bw_bytes_per_s x h100-sxm5-80gb "
            "measured dram_write_bw_bytes_per_s / peak dram_bw_bytes_per_s = 0.973") in book.notes
    k = table(time_s=[1e-3] * 2, dram_bytes=[1e9] * 2, dram_read_bytes=[0.0, 0.5e9],
              dram_write_bytes=[1e9, 0.5e9], gpu=["h100-sxm5-80gb"] * 2)
    t = get_model("hierarchical").predict(k, h100, titan).df["time_s"].to_numpy()
    assert t == pytest.approx([1e-3 * h100.peak("dram_bw_bytes_per_s") / peak] * 2, rel=1e-12)


def test_a_missing_l1_rate_is_the_other_gpus_per_sm_and_clock():
    """A GPU without an L1 rate takes the other GPU's per SM and clock: the source's 16e12 B/s
    over 10 SMs x 1.5 GHz, on a target of 20 SMs x 1.2 GHz, 25.6e12 B/s; a row of L1 bytes
    alone goes 1 ms x 16 / 25.6 = 0.625 ms. Before, no level was priced on both GPUs and the
    row took the DRAM ratio (1 ms x 1.25 / 2.5 = 0.5 ms). Without the other's rate it stays
    missing."""
    from gpuproj.models.common import CeilingBook

    src = replace(SRC, values={**SRC.values, "boost_clock_hz": Entry(1.5e9, "user", "test")})
    tgt = replace(TGT, values={**TGT.values, "boost_clock_hz": Entry(1.2e9, "user", "test")},
                  peaks={k: v for k, v in TGT.peaks.items() if k != "l1_bw_bytes_per_s"})
    book = CeilingBook(tgt, reference=src)
    assert book.per_sm_clock("l1_bw_bytes_per_s") == pytest.approx(25.6e12, rel=1e-12)
    assert book.notes == ["tgt l1_bw_bytes_per_s derived: src's per SM and clock x SM count x "
                          "boost clock = 25.6 TB/s"]
    assert book.kinds["l1_bw_bytes_per_s"] == "derived"
    k = table(time_s=[1e-3], l1_bytes=[1e9])
    t = get_model("hierarchical").predict(k, src, tgt).df["time_s"].iloc[0]
    assert t == pytest.approx(0.625e-3, rel=1e-12)
    alone = CeilingBook(tgt, reference=replace(src, peaks={
        k: v for k, v in SRC.peaks.items() if k != "l1_bw_bytes_per_s"}))
    assert np.isnan(alone.per_sm_clock("l1_bw_bytes_per_s"))
    assert alone.notes == ["tgt has no l1_bw_bytes_per_s"]


def test_where_neither_gpu_has_an_l1_rate_one_array_serves_it_as_shared_memory():
    """Without an L1 rate on either GPU, a GPU whose L1 and shared memory are one array (the
    catalog gives the array's size, no L1 of its own) takes its shared-memory bandwidth in its
    place (its peak here, 20e12 B/s). A GPU with an L1 of its own (AMD's, Pascal's) does not,
    and its L1 stays unpriced."""
    from gpuproj.models.common import CeilingBook
    from gpuproj.models.hierarchical import l1_bandwidth

    def without_l1(g, **values):
        return replace(g, peaks={k: v for k, v in g.peaks.items() if k != "l1_bw_bytes_per_s"},
                       values={**g.values, **{k: Entry(v, "user", "test")
                                              for k, v in values.items()}})

    one = without_l1(TGT, boost_clock_hz=1.2e9, l1_shared_size_bytes_per_sm=128 * 1024)
    other = without_l1(SRC, boost_clock_hz=1.5e9)
    book = CeilingBook(one, reference=other)
    assert l1_bandwidth(book) == 20e12
    assert book.kinds["l1_bw_bytes_per_s"] == "instead"
    assert book.notes[-1] == "tgt has no l1_bw_bytes_per_s: shared_bw_bytes_per_s used"
    own = replace(one, values={**one.values,
                               "l1_cache_size_bytes_per_sm": Entry(24576.0, "user", "test")})
    assert np.isnan(l1_bandwidth(CeilingBook(own, reference=other)))


def test_warp_bandwidth_scales_the_bandwidth_ceilings_by_the_warp_usage():
    """The warp-bandwidth extension (on in hierarchical-ext): Eq. 3's active-thread ratio
    u = 1.6e9 / (1e8 x 32) = 0.5 scales the bandwidth ceilings as it does Perf_ceil, which
    moves the ridge point. DRAM bytes only, OI = 3e9 / 0.5e9 = 6; compute ceilings 3.75e12
    (source) and 7.5e12 (target, DRAM measured 3e12 here). Without it: source min(1e12 x 6,
    3.75e12) = 3.75e12 (compute-bound), target min(3e12 x 6, 7.5e12) = 7.5e12, t = 2 ms x
    3.75 / 7.5 = 1 ms. With it: source min(0.5e12 x 6, 3.75e12) = 3e12 (now DRAM-bound),
    target min(1.5e12 x 6, 7.5e12) = 7.5e12, t = 2 ms x 3 / 7.5 = 0.8 ms."""
    from gpuproj.models.hierarchical import Hierarchical

    tgt = replace(TGT, id="tgt3", measureds={
        **TGT.measureds, "dram_bw_bytes_per_s": Entry(3e12, "measured", "test")})
    k = table(time_s=[2e-3], fp32_fma_thread_inst=[1e9], fp32_add_thread_inst=[0.5e9],
              fp32_mul_thread_inst=[0.5e9], warp_inst=[1e8], thread_inst=[1.6e9],
              dram_bytes=[0.5e9])
    plain = Hierarchical().predict(k, SRC, tgt)
    scaled = Hierarchical(warp_bandwidth=True).predict(k, SRC, tgt)
    assert plain.df.iloc[0]["time_s"] == pytest.approx(1e-3, rel=1e-12)
    assert scaled.df.iloc[0]["time_s"] == pytest.approx(0.8e-3, rel=1e-12)
    assert ("bandwidth ceilings scaled by active threads per warp instruction"
            in scaled.assumptions["tgt3"])
    # the ceilings a roofline picture draws carry the same factor: 1e12 x 0.5 on the source
    c = Hierarchical(warp_bandwidth=True).ceilings(k.df, SRC)
    assert c["bw_dram_bytes_per_s"][0] == pytest.approx(0.5e12)


def test_hierarchical_shared_bank_conflicts_slow_the_l1_ceiling():
    """Eq. 5: 2 wavefronts per request (2-way conflicts) double t_shM."""
    base = dict(shared_bytes=[1.28e9], shared_requests=[1e7])
    free = hier_kernel(shared_wavefronts=[1e7], **base)
    conf = hier_kernel(shared_wavefronts=[2e7], **base)
    m = get_model("hierarchical")
    # the L1 ceiling only enters via the source/target ratio; check the breakdown directly
    t_free = m.predict(free, SRC, TGT).df.iloc[0]["t_shared_s"]
    t_conf = m.predict(conf, SRC, TGT).df.iloc[0]["t_shared_s"]
    assert t_free == pytest.approx(1e7 * 128 / 20e12)
    assert t_conf == pytest.approx(2 * t_free)


def test_hierarchical_shared_bytes_enter_the_l1_ceiling():
    """Eq. 6 with shared memory: BW_L1 = (N_L1 + N_shM + N_L2 + N_DRAM) / (t_L1 + t_shM + t_L2
    + t_DRAM), and N+_L1 of Eq. 10 holds the same bytes, so the L1 roof is FLOP / the summed
    times while it lies below the compute ceiling (3.75e12 on the source, 7.5e12 on the
    target). Hits: DRAM 1e9, L2 1e9, L1 2e9 B; shared 1.28e9 B in 2e7 wavefronts of 128 B.
    Source: 1e9/1e12 + 1e9/4e12 + 2e9/16e12 + 2e7 x 128/16e12 = 1.535e-3 s (roof 1.95e12);
    target: 1e9/2e12 + 1e9/6e12 + 2e9/20e12 + 2e7 x 128/20e12 = 8.9467e-4 s. The L1 level,
    the interval's high end: 2e-3 x 8.9467e-4 / 1.535e-3 = 1.1657e-3 s (1.1152e-3 without the
    shared term)."""
    k = hier_kernel(shared_bytes=[1.28e9], shared_wavefronts=[2e7], shared_requests=[1e7])
    row = get_model("hierarchical").predict(k, SRC, TGT).df.iloc[0]
    t_src = 1e9 / 1e12 + 1e9 / 4e12 + 2e9 / 16e12 + 2e7 * 128 / 16e12
    t_tgt = 1e9 / 2e12 + 1e9 / 6e12 + 2e9 / 20e12 + 2e7 * 128 / 20e12
    assert row["high_s"] == pytest.approx(2e-3 * t_tgt / t_src)
    assert row["high_s"] == pytest.approx(1.1657e-3, rel=1e-4)


def test_hierarchical_cache_capacity_extension():
    """Working set 8 MB: it misses the source's 4 MB L2 (f = 1) and fits the target's 40 MB
    (f = 0, floored at 0.02), so the target's DRAM bytes are 1e9 * 0.02 / 1 = 2e7; the other
    9.8e8 B are served by the target's L2 (6e12 B/s): DRAM-level time 2e7/2e12 + 9.8e8/6e12 s,
    and the source ran at its measured 1e12 B/s, so t_t = 1e-3 x that / 1e-3."""
    k = table(time_s=[1e-3], dram_bytes=[1e9], dram_read_bytes=[0.5e9], dram_write_bytes=[0.5e9],
              working_set_bytes=[8e6])
    plain = get_model("hierarchical").predict(k, SRC, TGT).df.iloc[0]
    ext = get_model("hierarchical", cache_capacity=True).predict(k, SRC, TGT).df.iloc[0]
    assert plain["time_s"] == pytest.approx(0.5e-3)
    assert ext["time_s"] == pytest.approx(2e7 / 2e12 + 9.8e8 / 6e12)
    # the target's L2 serves 98 % of the DRAM level's bytes: the limiter names it
    assert plain["limiter"] == "dram" and ext["limiter"] == "l2"


def test_cache_capacity_estimates_dram_traffic_from_the_working_set():
    """Timings with L2 bytes and a working set but no DRAM bytes (the gpu-benches L2 sweep):
    the share f of the L2 traffic that reaches DRAM is 0 where the set fits a GPU's L2 and 1
    where it does not, and each GPU's L2 ceiling is 1 / ((1 - f) / BW_L2 + f / BW_DRAM).
    Source: L2 4 MB, 4e12 B/s (peak), DRAM 1e12 (measured); target: 40 MB, 6e12, 2e12.
    2 MB fits both: t_s x 4/6. 8 MB misses the source only: t_s x 1/6. 80 MB misses both:
    t_s x 1/2. Without the extension every set projects on the L2 ratio, 4/6."""
    k = table(time_s=[1e-3] * 3, l2_bytes=[1e9] * 3, working_set_bytes=[2e6, 8e6, 80e6])
    ext = get_model("hierarchical", cache_capacity=True).predict(k, SRC, TGT)
    plain = get_model("hierarchical").predict(k, SRC, TGT)
    assert ext.df["time_s"].to_numpy() == pytest.approx(1e-3 * np.array([4 / 6, 1 / 6, 1 / 2]))
    assert plain.df["time_s"].to_numpy() == pytest.approx([1e-3 * 4 / 6] * 3)
    # the limiter: the level that serves the bytes on the target, DRAM past its L2
    assert list(ext.df["limiter"]) == ["l2", "l2", "dram"]
    assert list(plain.df["limiter"]) == ["l2"] * 3
    assert any("estimated on each GPU" in n for n in ext.assumptions["tgt"])


def test_cache_capacity_interval_near_a_cache_size():
    """A 44 MB set is 1.1 x the target's 40 MB L2, inside ``CAPACITY_BAND``: the step says it
    misses (t_s x (1/2e12)/(1/1e12) = 0.5 ms, the point) but the measured turn from hits to
    misses spans that ratio, so the interval reaches the target's L2 holding it
    (t_s x (1/6e12)/(1/1e12)). 80 MB (2 x) is outside the band: no interval."""
    from gpuproj.models.hierarchical import CAPACITY_BAND

    assert CAPACITY_BAND[0] < 1.1 < CAPACITY_BAND[1] < 2
    k = table(time_s=[1e-3] * 2, l2_bytes=[1e9] * 2, working_set_bytes=[44e6, 80e6])
    p = get_model("hierarchical", cache_capacity=True).predict(k, SRC, TGT)
    assert p.df["time_s"].to_numpy() == pytest.approx([0.5e-3, 0.5e-3])
    assert p.df["low_s"].to_numpy() == pytest.approx([1e-3 / 6, 0.5e-3])
    assert p.df["high_s"].to_numpy() == pytest.approx([0.5e-3, 0.5e-3])
    assert any("holding and missing" in n for n in p.assumptions["tgt"])


def l1_sweep_gpus(src_l1=None):
    """Two GPUs for the L1 rule: the source's L1 an array of its own (16 KiB, as AMD's), the
    target's one array with shared memory (128 KiB, least carve-out 16 KiB: 112 KiB of L1)."""
    src_values = {"warp_size": 32, "sm_count": 10, "l2_size_bytes": 4e6}
    if src_l1 is not None:
        src_values["l1_cache_size_bytes_per_sm"] = src_l1
    src = make_gpu("s1", values=src_values,
                   peak={"l1_bw_bytes_per_s": 16e12, "l2_bw_bytes_per_s": 4e12,
                         "dram_bw_bytes_per_s": 1e12})
    tgt = make_gpu("t1", values={"warp_size": 32, "sm_count": 20, "l2_size_bytes": 40e6,
                                 "l1_shared_size_bytes_per_sm": 131072,
                                 "smem_carveouts_bytes": [16384, 65536]},
                   peak={"l1_bw_bytes_per_s": 20e12, "l2_bw_bytes_per_s": 6e12,
                         "dram_bw_bytes_per_s": 2e12})
    return src, tgt


def test_l1_cache_bytes_own_array_or_unified_less_the_least_carveout():
    from gpuproj.catalog import resolve
    from gpuproj.models.hierarchical import l1_cache_bytes

    src, tgt = l1_sweep_gpus(src_l1=16384)
    assert l1_cache_bytes(src) == 16384
    assert l1_cache_bytes(tgt) == 131072 - 16384
    assert np.isnan(l1_cache_bytes(SRC))
    # the CUDA guide's carve-outs of cc 8.0 and 9.0 start at 0: all of the array
    assert l1_cache_bytes(resolve("a100-sxm4-80gb")) == 192 * 1024
    assert l1_cache_bytes(resolve("h100-pcie-80gb")) == 256 * 1024


def test_cache_capacity_l1_rule_serves_sets_past_an_l1_at_the_l2_rate():
    """A cache sweep (L1 bytes and each SM's working set, no L2 or DRAM bytes): the set is
    served by a GPU's L1 while it fits (source 16 KiB, target 112 KiB), by its L2 past it.
    8 KiB fits both: t_s x (1/20e12)/(1/16e12) = 0.8 t_s. 64 KiB misses the source's only:
    t_s x (1/20e12)/(1/4e12) = 0.2 t_s. 1 MiB misses both: t_s x 4/6. 100 KiB is 0.89 x the
    target's L1, inside ``CAPACITY_BAND``: the point 0.2 t_s as for 64 KiB, the interval up to
    the target's L1 missing it (4/6 t_s). Without the extension every set projects on the L1
    ratio, 0.8."""
    src, tgt = l1_sweep_gpus(src_l1=16384)
    sets = [8 * 1024, 64 * 1024, 2**20, 100 * 1024]
    k = table(time_s=[1e-3] * 4, l1_bytes=[1e9] * 4, sm_working_set_bytes=sets, gpu=["s1"] * 4)
    ext = get_model("hierarchical", cache_capacity=True).predict(k, src, tgt)
    plain = get_model("hierarchical").predict(k, src, tgt)
    assert ext.df["time_s"].to_numpy() == pytest.approx(1e-3 * np.array([0.8, 0.2, 4 / 6, 0.2]))
    assert ext.df["low_s"].to_numpy() == pytest.approx(1e-3 * np.array([0.8, 0.2, 4 / 6, 0.2]))
    assert ext.df["high_s"].to_numpy() == pytest.approx(
        1e-3 * np.array([0.8, 0.2, 4 / 6, 4 / 6]))
    assert plain.df["time_s"].to_numpy() == pytest.approx([0.8e-3] * 4)
    # the limiter names what serves the set on the target: its L2 past its 112 KiB L1
    assert list(ext.df["limiter"]) == ["l1", "l1", "l2", "l1"]
    assert list(plain.df["limiter"]) == ["l1"] * 4
    notes = ext.assumptions["t1"]
    assert any("16 KiB on s1, 112 KiB on t1" in n for n in notes)
    assert any("an L1's size" in n for n in notes)
    # the L2 rule has no row here (no L2 or DRAM bytes): it says nothing of its working set
    assert not any("no working set or L2 size" in n for n in notes)


def test_cache_capacity_l1_rule_needs_both_l1_sizes():
    """Without the source's L1 size the rule leaves the sweep on the L1 ratio and says why;
    rows with L2 bytes are the L2 rule's, not the L1's."""
    src, tgt = l1_sweep_gpus()
    k = table(time_s=[1e-3] * 2, l1_bytes=[1e9] * 2, sm_working_set_bytes=[64 * 1024] * 2,
              l2_bytes=[np.nan, 1e9], gpu=["s1"] * 2)
    p = get_model("hierarchical", cache_capacity=True).predict(k, src, tgt)
    assert p.df["time_s"].iloc[0] == pytest.approx(0.8e-3)
    assert any("s1's L1 size not in the catalog" in n for n in p.assumptions["t1"])
    src, tgt = l1_sweep_gpus(src_l1=16384)
    p = get_model("hierarchical", cache_capacity=True).predict(k, src, tgt)
    assert not any("L1 size" in n for n in p.assumptions["t1"])
    # the row with L2 bytes: its L1 hits (0 B) and L2 bytes on the L2 ratio, 4/6
    assert p.df["time_s"].iloc[1] == pytest.approx(1e-3 * 4 / 6)


def test_cache_capacity_two_caches_of_one_design_and_size_hold_the_same_sets():
    """An H100 NVL and an H200 (one architecture, 60 MiB L2 each, as their drivers report) at a
    working set near that size: both hold it or both miss it, so the measured DRAM bytes carry
    over as they are (r = 1) and the interval stays at the point; an A100's 40 MB L2 of another
    design may hold what an H100 SXM5's 50 MiB missed (r = 0.02), and there the interval spans
    that."""
    from gpuproj.catalog import resolve

    m = get_model("hierarchical", cache_capacity=True)
    nvl, h200 = resolve("h100-nvl-94gb"), resolve("h200-sxm-141gb")
    assert nvl.value("l2_size_bytes") == h200.value("l2_size_bytes") == 60 * 2**20
    # the L2 hits are l2 - dram = 0 bytes: both levels' ceilings are the DRAM bandwidth, and a
    # row without FLOPs scales by the ceilings' ratio; the H100 NVL has no measured bandwidth,
    # so both GPUs take their datasheet peaks
    assert np.isnan(nvl.measured("dram_bw_bytes_per_s"))
    k = table(time_s=[25e-6], dram_bytes=[60e6], l2_bytes=[60e6], working_set_bytes=[60e6],
              gpu=["h100-nvl-94gb"])
    same = m.predict(k, nvl, h200).df.iloc[0]
    point = 25e-6 * nvl.peak("dram_bw_bytes_per_s") / h200.peak("dram_bw_bytes_per_s")
    assert same["time_s"] == pytest.approx(point, rel=1e-9)
    assert same["low_s"] == pytest.approx(point, rel=1e-9)
    assert same["high_s"] == pytest.approx(point, rel=1e-9)
    h100, a100 = resolve("h100-sxm5-80gb"), resolve("a100-sxm4-80gb")
    k = table(time_s=[25e-6], dram_bytes=[50e6], l2_bytes=[50e6], working_set_bytes=[50e6],
              gpu=["h100-sxm5-80gb"])
    assert h100.value("l2_size_bytes") == 50 * 2**20
    # the A100's DRAM bandwidth and L2 were measured by gpu-benches, another benchmark: both
    # GPUs take their DRAM peaks; the H100 has no L2 peak, so both keep their measured L2
    # (a peak against a measurement would not compare alike). Its 40 MB L2: the step says it
    # misses the 50 MB set, which the H100 held, so r = f_t / max(f_s, 0.02) = 50, capped by
    # l2 / dram bytes = 1: all the DRAM bytes stay at DRAM (the point, and the high end). The
    # low end: the A100 holds it and the H100 misses, r = 0.02 / 1 = 0.02 of the bytes at
    # DRAM and 0.98 at the A100's L2
    assert a100.value("l2_size_bytes") == 40 * 2**20
    assert a100.peak("l2_bw_bytes_per_s") == pytest.approx(5120 * 1.41e9)
    other = m.predict(k, h100, a100).df.iloc[0]
    dram_h100, dram_a100 = h100.peak("dram_bw_bytes_per_s"), a100.peak("dram_bw_bytes_per_s")
    high = 25e-6 * dram_h100 / dram_a100
    low = 25e-6 * dram_h100 * (0.02 / dram_a100 + 0.98 / a100.measured("l2_bw_bytes_per_s"))
    assert other["time_s"] == pytest.approx(high, rel=1e-9)
    assert other["high_s"] == pytest.approx(high, rel=1e-9)
    assert other["low_s"] == pytest.approx(low, rel=1e-9)
    assert high / low > 2  # 41.1 against 16.0 us


def test_bytes_no_level_can_price_fall_back_to_the_dram_ratio():
    """A target without an L2 bandwidth (no datasheet gives the A40's). With cache_capacity, a
    set that misses its 40 MB L2 leaves the L2 at DRAM speed, 80 MB: (1/2e12)/(1/1e12) = 1/2,
    as with an L2 bandwidth (its 6.25e7 FP64 MULs per 1e9 B put both GPUs' roofs on the
    bandwidth: 6.25e10 and 1.25e11 FLOP/s, under the FP64 MUL peaks 2.5e12 and 1e12). A set
    that fits has no L2 time there; its bytes are priced at the level below on both GPUs, the
    DRAM ratio, 1/2 too, and a note says so, where the compute ceilings alone gave 2.5e12 / 1e12
    = 2.5x the time (a stream kernel's FLOP efficiency carried across: a median 52x too slow on the
    gpu-benches small kernels from the H200 to the A40). The paper's model, which prices L2
    bytes at the L2 ceiling only, takes the DRAM ratio for both rows."""
    no_l2 = make_gpu("no-l2", values={"warp_size": 32, "l2_size_bytes": 40e6},
                     peak={"fp64_fma_flops_per_s": 2e12, "fp64_addmul_flops_per_s": 1e12,
                           "dram_bw_bytes_per_s": 2.5e12},
                     measured={"dram_bw_bytes_per_s": 2e12})
    k = table(time_s=[1e-3] * 2, l2_bytes=[1e9] * 2, working_set_bytes=[2e6, 80e6],
              fp64_fma_thread_inst=[0.0] * 2, fp64_add_thread_inst=[0.0] * 2,
              fp64_mul_thread_inst=[6.25e7] * 2)
    for name, unpriced in (("hierarchical-ext", 1), ("hierarchical", 2)):
        p = get_model(name).predict(k, SRC, no_l2)
        assert p.df["time_s"].to_numpy() == pytest.approx([0.5e-3, 0.5e-3])
        # the limiter says what priced the bytes, not the FP64 pipe: DRAM, also where the
        # set past the target's L2 is the L2 level's (cache_capacity names what serves it)
        assert list(p.df["limiter"]) == ["dram", "dram"]
        notes = p.assumptions["no-l2"]
        assert f"{unpriced} row(s) whose bytes no level with a ceiling on both GPUs serves: " \
               "priced at DRAM bandwidth" in notes
    assert not any("no L2 time for working sets that fit its L2" in n for n in notes)
    ext = get_model("hierarchical-ext").predict(k, SRC, no_l2).assumptions["no-l2"]
    assert any("no L2 time for working sets that fit its L2" in n for n in ext)


def test_bytes_no_level_can_price_keep_a_compute_bound_row_on_its_compute_ceilings():
    """Those bytes go to DRAM under its roofline, not by the bandwidth ratio alone: 1e12 FP64
    FMAs (2e12 FLOP) on 1e9 L2 bytes, OI 2000 FLOP/B, are compute-bound on both GPUs,
    min(2000 x 1e12, 5e12) = 5e12 on the source (its measured DRAM 1e12 B/s) and
    min(2000 x 2e12, 2e12) = 2e12 on the target, so t = 1 ms x 5 / 2 = 2.5 ms, limited by
    FP64, where the DRAM ratio gave 0.5 ms. The stream row beside it (OI 0.0625) keeps the DRAM
    ratio."""
    no_l2 = make_gpu("no-l2", values={"warp_size": 32, "l2_size_bytes": 40e6},
                     peak={"fp64_fma_flops_per_s": 2e12, "fp64_addmul_flops_per_s": 1e12,
                           "dram_bw_bytes_per_s": 2.5e12},
                     measured={"dram_bw_bytes_per_s": 2e12})
    k = table(time_s=[1e-3] * 2, l2_bytes=[1e9] * 2, fp64_fma_thread_inst=[1e12, 0.0],
              fp64_add_thread_inst=[0.0] * 2, fp64_mul_thread_inst=[0.0, 6.25e7])
    p = get_model("hierarchical").predict(k, SRC, no_l2)
    assert p.df["time_s"].to_numpy() == pytest.approx([2.5e-3, 0.5e-3])
    assert list(p.df["limiter"]) == ["fp64", "dram"]


def test_bytes_no_level_can_price_need_the_compute_ceilings_of_a_row_with_flops():
    """The DRAM-ratio fallback for bytes no level can price (above) is for the bytes: a row with
    FLOPs on a target without an FP64 ceiling (nor an L2 bandwidth) has no time there, as it
    would have with DRAM bytes, where the DRAM ratio gave it one (1/2, the fallback's ratio,
    while the row's compute ceiling there is unknown). A row without FLOPs needs none."""
    no_fp64 = make_gpu("no-fp64", values={"warp_size": 32, "l2_size_bytes": 40e6},
                       peak={"fp32_fma_flops_per_s": 20e12, "dram_bw_bytes_per_s": 2.5e12},
                       measured={"dram_bw_bytes_per_s": 2e12})
    k = table(time_s=[1e-3] * 2, l2_bytes=[1e9] * 2, fp64_fma_thread_inst=[0.0, np.nan],
              fp64_add_thread_inst=[0.0, np.nan], fp64_mul_thread_inst=[6.25e7, np.nan])
    for name in ("hierarchical", "hierarchical-ext"):
        p = get_model(name).predict(k, SRC, no_fp64)
        assert list(p.df["kernel"]) == ["k1"] and p.df["time_s"][0] == pytest.approx(0.5e-3)
        [why] = [s.reason for s in p.skipped]
        assert why.startswith(f"k0 [c] src -> no-fp64: {name} gave no finite positive time (")
        assert "no-fp64 has no fp64_addmul_flops_per_s" in why


def test_dram_rooflines_say_when_a_row_has_cache_bytes_only():
    """`roofline` and `efficiency` see DRAM bytes only: a row with L2 bytes and none at DRAM is
    compute-bound to them, and their assumptions say so (once per call); a row with DRAM
    bytes draws no such note."""
    from dataclasses import replace

    k = table(time_s=[1e-3] * 2, l2_bytes=[1e9, 1e9], dram_bytes=[np.nan, 1e9],
              fp32_flops=[1e6] * 2, flops=[1e6] * 2)
    for name in ("roofline", "efficiency"):
        notes = get_model(name).predict(k, SRC, [TGT, replace(TGT, id="tgt2")]).assumptions
        for tgt in ("tgt", "tgt2"):
            assert ("1 row(s) with cache-level bytes but no DRAM bytes: projected on compute "
                    "peaks alone (a DRAM roofline does not see their traffic; hierarchical "
                    "prices it)") in notes[tgt]
        clean = get_model(name).predict(table(time_s=[1e-3], dram_bytes=[1e9], flops=[1e6]),
                                         SRC, TGT).assumptions["tgt"]
        assert not any("cache-level bytes" in n for n in clean)


def test_parallelism_keeps_a_measured_launch_overhead_out_of_the_scaling():
    """With ``launch_overhead_s`` measured on both GPUs (2 us on the source, 3 us on the
    target), a time is overhead plus body and only the body scales. DRAM-bound, 1e12 -> 2e12
    B/s: 10 us gives (10 - 2) / 2 + 3 = 7 us (the bandwidth ratio alone: 5 us); 2.05 us is
    nearly all overhead, its body floored at 5 % of the time: max(0.05, 0.1025) / 2 + 3 =
    3.05125 us (alone: 1.025 us). Measured on one GPU only, the other's is taken as the same
    (10 us: (10 - 2) / 2 + 2 = 6 us); measured on neither, the whole time scales, and a note
    says which."""
    k = table(time_s=[10e-6, 2.05e-6], dram_bytes=[1e6, 1e6], dram_read_bytes=[0.5e6] * 2,
              dram_write_bytes=[0.5e6] * 2)
    src = make_gpu("ls", peak={"dram_bw_bytes_per_s": 1e12},
                   measured={"dram_bw_bytes_per_s": 1e12, "launch_overhead_s": 2e-6})
    tgt = make_gpu("lt", peak={"dram_bw_bytes_per_s": 2e12},
                   measured={"dram_bw_bytes_per_s": 2e12, "launch_overhead_s": 3e-6})
    ext = get_model("hierarchical", parallelism=True)
    p = ext.predict(k, src, tgt)
    assert p.df["time_s"].to_numpy() == pytest.approx([7e-6, 0.1025e-6 / 2 + 3e-6])
    assert any("launch overhead 2.0 us -> 3.0 us (measured)" in n for n in p.assumptions["lt"])
    plain = make_gpu("lu", peak={"dram_bw_bytes_per_s": 2e12},
                     measured={"dram_bw_bytes_per_s": 2e12})
    q = ext.predict(k, src, plain)
    assert q.df["time_s"].to_numpy() == pytest.approx([6e-6, 0.1025e-6 / 2 + 2e-6])
    assert any("launch overhead 2.0 us -> 2.0 us (measured on ls, taken as the same on lu)" in n
               for n in q.assumptions["lu"])
    back = get_model("hierarchical", parallelism=True).predict(
        table(time_s=[10e-6], dram_bytes=[1e6]), plain, src)  # 2e12 -> 1e12 B/s
    assert back.df["time_s"].to_numpy() == pytest.approx([(10e-6 - 2e-6) * 2 + 2e-6])
    assert any("measured on ls, taken as the same on lu" in n for n in back.assumptions["ls"])
    bare = make_gpu("lb", peak={"dram_bw_bytes_per_s": 1e12},
                    measured={"dram_bw_bytes_per_s": 1e12})
    r = ext.predict(k, bare, plain)
    assert r.df["time_s"].to_numpy() == pytest.approx([5e-6, 1.025e-6])
    assert any("measured on neither GPU" in n for n in r.assumptions["lu"])


# a GPU with a memory-side L3 (an AMD Infinity Cache) behind a 4 MB L2
INFINITY = make_gpu(
    "infinity", values={"warp_size": 32, "l2_size_bytes": 4e6, "l3_size_bytes": 64 * 2**20},
    peak={"l2_bw_bytes_per_s": 6e12, "dram_bw_bytes_per_s": 2.5e12},
    measured={"dram_bw_bytes_per_s": 2e12, "l3_bw_bytes_per_s": 3e12})


def test_cache_capacity_serves_sets_that_fit_an_l3_at_its_bandwidth():
    """No DRAM bytes: per L2 byte (1 - f2) / BW_L2 + f2 / BW_past, BW_past the L3's (3e12)
    where the set fits the 64 MiB L3, else DRAM's. Source SRC: 1/4e12 or 1/1e12 per byte.
    2 MB fits both L2s: 4/6. 8 MB misses both L2s, fits the L3: (1/3e12)/(1/1e12) = 1/3.
    80 MB misses the L3 too: 1/2. The other way, 8 MB: x 3."""
    k = table(time_s=[1e-3] * 3, l2_bytes=[1e9] * 3, working_set_bytes=[2e6, 8e6, 80e6])
    ext = get_model("hierarchical", cache_capacity=True)
    to_ic = ext.predict(k, SRC, INFINITY)
    assert to_ic.df["time_s"].to_numpy() == pytest.approx(1e-3 * np.array([4 / 6, 1 / 3, 1 / 2]))
    # the limiter names what serves the L2 level's bytes on the target
    assert list(to_ic.df["limiter"]) == ["l2", "l3", "dram"]
    assert any("64 MiB L3 at 3 TB/s" in n for n in to_ic.assumptions["infinity"])
    back = ext.predict(table(time_s=[1e-3], l2_bytes=[1e9], working_set_bytes=[8e6]),
                       INFINITY, SRC)
    assert back.df["time_s"].to_numpy() == pytest.approx([3e-3])


def test_cache_capacity_takes_l3_hits_at_dram_speed_without_an_l3_bandwidth():
    """An L3 size without a bandwidth cannot be priced: the bytes past the L2 go at DRAM's
    bandwidth (8 MB: (1/2e12)/(1/1e12) = 1/2), and the note says so."""
    no_bw = make_gpu("no-bw", values={"warp_size": 32, "l2_size_bytes": 4e6,
                                      "l3_size_bytes": 64e6},
                     peak={"l2_bw_bytes_per_s": 6e12}, measured={"dram_bw_bytes_per_s": 2e12})
    k = table(time_s=[1e-3], l2_bytes=[1e9], working_set_bytes=[8e6])
    out = get_model("hierarchical", cache_capacity=True).predict(k, SRC, no_bw)
    assert out.df["time_s"].to_numpy() == pytest.approx([0.5e-3])
    assert any("no L3 bandwidth" in n for n in out.assumptions["no-bw"])


def test_cache_capacity_dram_bytes_through_an_l3_and_the_l2_level():
    """DRAM bytes 1e9 (the bytes that left the source's 4 MB L2), set 8 MB.
    To INFINITY: the set misses its L2 too (r = 1) and fits its L3: t_s x (1/3e12)/(1/1e12).
    To TGT (40 MB L2) with 2e9 L2 bytes: r = 0.02, a DRAM byte takes 0.02/2e12 + 0.98/6e12 on
    the target against 1/1e12: DRAM level x 0.17333; the L2 level carries the same change,
    (1e9/6e12 + 1e9 x that) / (1e9/4e12 + 1e9/1e12) = 0.272; the point is their mean."""
    k = table(time_s=[1e-3], dram_bytes=[1e9], dram_read_bytes=[0.5e9],
              dram_write_bytes=[0.5e9], working_set_bytes=[8e6])
    ext = get_model("hierarchical", cache_capacity=True)
    assert ext.predict(k, SRC, INFINITY).df["time_s"].to_numpy() == pytest.approx([1e-3 / 3])
    k2 = table(time_s=[1e-3], dram_bytes=[1e9], dram_read_bytes=[0.5e9],
               dram_write_bytes=[0.5e9], l2_bytes=[2e9], working_set_bytes=[8e6])
    row = ext.predict(k2, SRC, TGT).df.iloc[0]
    per_t = 0.02 / 2e12 + 0.98 / 6e12
    dram_level, l2_level = per_t / 1e-12, (1 / 6e12 + per_t) / (1 / 4e12 + 1 / 1e12)
    assert row["time_s"] == pytest.approx(1e-3 * (dram_level + l2_level) / 2)
    assert (row["low_s"], row["high_s"]) == pytest.approx((1e-3 * dram_level, 1e-3 * l2_level))


def test_roofline_baseline():
    """Eq. 1 + 9 with DRAM only and datasheet peaks: OI = 2; roof_s = min(1.25e12*2, 10e12),
    roof_t = min(2.5e12*2, 20e12) -> t_t = t_s / 2."""
    k = table(time_s=[1e-3], flops=[2e9], dram_bytes=[1e9])
    assert get_model("roofline").predict(k, SRC, TGT).df.iloc[0]["time_s"] == pytest.approx(0.5e-3)


def test_scaling_baselines():
    k = table(time_s=[1e-3], flops=[2e9], dram_bytes=[1e9], dtype=["fp64"])
    assert get_model("same").predict(k, SRC, TGT).df.iloc[0]["time_s"] == 1e-3
    assert get_model("bandwidth").predict(k, SRC, TGT).df.iloc[0]["time_s"] == pytest.approx(0.5e-3)
    assert get_model("compute").predict(k, SRC, TGT).df.iloc[0]["time_s"] == pytest.approx(0.5e-3)


def test_quantitative_hand_example():
    """Konstantinidis Eqs. 2-19. fp32 kernel: M_fp32 = 1e9, M_fma32 = 0.6e9, M_inst = 1e8
    (I_total = 3.2e9), M_ldst = 0.8e9, DRAM 1e9 B.
    W_comp = 1.6e9; E_mix = 1.6/2 = 0.8; D_ops = 1/3.2, D_ldst = 0.8/3.2, D_other = 1.4/3.2.
    Target (peaks; DRAM measured 2e12): T_SP 20e12, T_ldst 5e12, T_add 10e12.
    W_op 1, W_ldst 10/5 = 2, W_other 10/10 = 1. C: 1/3.2, 1.6/3.2, 1.4/3.2 -> E_instr = 1/4.
    T'_op = 0.8 * 0.25 * 20e12 = 4e12; O_krn = 1.6, O_dev = 4e12 / 2e12 = 2 -> memory bound:
    T = 1.6 * 2e12 = 3.2e12 -> time = 1.6e9 / 3.2e12 = 5e-4 s."""
    k = table(time_s=[1e-3], fp32_thread_inst=[1e9], fp32_fma_thread_inst=[0.6e9],
              fp64_thread_inst=[0.0], int_thread_inst=[0.0], warp_inst=[1e8],
              ldst_thread_inst=[0.8e9], dram_bytes=[1e9])
    m = get_model("quantitative")
    p = m.kernel_parameters(k.df)
    assert p["K_type"][0] == "fp32" and p["E_mix"][0] == pytest.approx(0.8)
    pred = m.predict(k, SRC, TGT).df.iloc[0]
    assert pred["time_s"] == pytest.approx(5e-4)
    assert pred["limiter"] == "dram"
    # a fifth of the DRAM bytes: O_krn = 8 > 2
    k2 = table(time_s=[1e-3], fp32_thread_inst=[1e9], fp32_fma_thread_inst=[0.6e9],
               fp64_thread_inst=[0.0], int_thread_inst=[0.0], warp_inst=[1e8],
               ldst_thread_inst=[0.8e9], dram_bytes=[0.2e9])
    # O_krn = 8 > 2: compute bound at T'_op = 4e12 -> 1.6e9 / 4e12 = 4e-4 s
    pred2 = m.predict(k2, SRC, TGT).df.iloc[0]
    assert pred2["time_s"] == pytest.approx(4e-4) and pred2["limiter"] == "fp32"


def test_quantitative_fp64_kernel_and_one_without_beneficial_operations():
    """K_type: M_fp64 > 0 makes the kernel fp64 even with FP32 instructions (0.5e9). M_fp64 =
    1e9, M_fma64 = 0.6e9: W_comp = 1.6e9, E_mix = 0.8, D_ops = 1/3.2, D_ldst = 0.8/3.2, D_other
    = 1.4/3.2. On TGT: T_op = T_DP = 10e12, W_op = 20/10 = 2, W_ldst = 10/5 = 2, W_other =
    10/10 = 1; C = 2, 1.6, 1.4 (/3.2) -> E_instr = 0.4; T'_op = 0.8 x 0.4 x 10e12 = 3.2e12;
    O_krn = 1.6e9 / 0.2e9 = 8 > O_dev = 1.6: compute bound, 1.6e9 / 3.2e12 = 5e-4 s.
    Without beneficial operations (W_comp = 0) the kernel moves bytes only: 1e9 B / 2e12."""
    cols = dict(time_s=[1e-3], fp32_thread_inst=[0.5e9], fp64_thread_inst=[1e9],
                fp64_fma_thread_inst=[0.6e9], int_thread_inst=[0.0], warp_inst=[1e8],
                ldst_thread_inst=[0.8e9], dram_bytes=[0.2e9])
    m = get_model("quantitative")
    p = m.kernel_parameters(table(**cols).df)
    assert p["K_type"][0] == "fp64" and p["W_comp"][0] == pytest.approx(1.6e9)
    row = m.predict(table(**cols), SRC, TGT).df.iloc[0]
    assert row["time_s"] == pytest.approx(5e-4) and row["limiter"] == "fp64"
    none = {**cols, "fp32_thread_inst": [0.0], "fp64_thread_inst": [0.0],
            "fp64_fma_thread_inst": [0.0], "dram_bytes": [1e9]}
    row = m.predict(table(**none), SRC, TGT).df.iloc[0]
    assert row["time_s"] == pytest.approx(5e-4) and row["limiter"] == "dram"


def test_quantitative_counts_a_wavefront_as_64_threads():
    """Eq. 9's I_total = 32 M_inst counts NVIDIA warps: a CDNA profile's M_inst counts 64-wide
    wavefronts, so the same threads' mix is half as many instructions, and I_total = 64 M_inst
    gives the hand example's D_ops = 1/3.2, D_ldst = 0.8/3.2 and time again."""
    k = table(time_s=[1e-3], fp32_thread_inst=[1e9], fp32_fma_thread_inst=[0.6e9],
              fp64_thread_inst=[0.0], int_thread_inst=[0.0], warp_inst=[0.5e8],
              ldst_thread_inst=[0.8e9], dram_bytes=[1e9])
    cdna = replace(SRC, id="cdna", values={**SRC.values, "warp_size": replace(
        SRC.values["warp_size"], value=64)})
    m = get_model("quantitative")
    p = m.kernel_parameters(k.df, counted_warp_size=64)
    assert p["D_ops"][0] == pytest.approx(1 / 3.2) and p["D_ldst"][0] == pytest.approx(0.25)
    assert m.predict(k, cdna, TGT).df.iloc[0]["time_s"] == pytest.approx(5e-4)
    # counts whose D_ops + D_ldst exceed 1 (3e9 FP32 and 2e9 LD/ST of I_total = 4e9): no
    # other instructions, not -0.25 of them
    odd = m.kernel_parameters(table(time_s=[1e-3], fp32_thread_inst=[3e9],
                                    fp32_fma_thread_inst=[2e9], fp64_thread_inst=[0.0],
                                    int_thread_inst=[0.0], warp_inst=[1.25e8],
                                    ldst_thread_inst=[2e9], dram_bytes=[1e9]).df)
    assert odd["D_ops"][0] + odd["D_ldst"][0] == pytest.approx(1.25) and odd["D_other"][0] == 0


def test_quantitative_transfer_hand_example():
    """The hand example above, measured at 3 ms on the source. On the source itself (T_SP
    10e12, T_ldst 2.5e12, T_add 5e12: the same W and E_instr = 1/4; T'_op = 2e12, DRAM measured
    1e12, O_dev = 2 > O_krn = 1.6: memory bound) Q_s = 1.6e9 / (1.6 x 1e12) = 1 ms, so the
    kernel ran at 1/3 of its quantitative roofline; Q_t = 0.5 ms -> t_t = 3 ms x 0.5 / 1 =
    1.5 ms. Compute bound (DRAM 0.2e9 B): Q_s = 1.6e9 / 2e12 = 0.8 ms, Q_t = 0.4 ms -> 1.5 ms."""
    cols = dict(time_s=[3e-3], fp32_thread_inst=[1e9], fp32_fma_thread_inst=[0.6e9],
                fp64_thread_inst=[0.0], int_thread_inst=[0.0], warp_inst=[1e8],
                ldst_thread_inst=[0.8e9], dram_bytes=[1e9])
    m = get_model("quantitative-transfer")
    pred = m.predict(table(**cols), SRC, TGT).df.iloc[0]
    assert pred["time_s"] == pytest.approx(1.5e-3) and pred["limiter"] == "dram"
    # the breakdown carries the same efficiency: 1.6e9 / 4e12 x 3 = 1.2 ms of compute
    assert pred["t_compute_s"] == pytest.approx(1.2e-3)
    pred = m.predict(table(**{**cols, "dram_bytes": [0.2e9]}), SRC, TGT).df.iloc[0]
    assert pred["time_s"] == pytest.approx(1.5e-3) and pred["limiter"] == "fp32"
    # to the source itself: its own time
    assert m.predict(table(**cols), SRC, SRC).df.iloc[0]["time_s"] == pytest.approx(3e-3)
    # a source with datasheet values only, a target with a measured DRAM bandwidth (2e12 of
    # 2.5e12): the source's is derived at the same 80 % (1e12), never its peak set against
    # the target's measurement (that would give 3 ms x 1.25 / 2 = 1.875 ms)
    bare = make_gpu("bare", values={"warp_size": 32},
                    peak={k: e.value for k, e in SRC.peaks.items()})
    assert m.predict(table(**cols), bare, TGT).df.iloc[0]["time_s"] == pytest.approx(1.5e-3)


def test_quantitative_transfer_counts_warps_of_the_source_on_every_target():
    """Eq. 9's width is that of the GPU that counted M_inst, the source, for Q_source and
    Q_target alike, and the order of the targets changes nothing. Before, Q_source took the
    first target's width, and every other target of the call reused it.
    The compute-bound hand example (DRAM 0.2e9 B, 3 ms; Q_s = 0.8 ms) to TGT with 20e12 LD/ST
    inst/s: W_ldst = 0.5 x 20/20 = 0.5, C = 1, 0.4, 1.4 (/3.2) -> E_instr = 1/2.8, T'_op =
    0.8/2.8 x 20e12 = 5.71e12, Q_t = 1.6e9 / 5.71e12 = 0.28 ms -> 3 ms x 0.28 / 0.8 = 1.05 ms,
    on a 32- and a 64-wide target alike (with 64 for both Qs: 1.25 ms)."""
    cols = dict(time_s=[3e-3], fp32_thread_inst=[1e9], fp32_fma_thread_inst=[0.6e9],
                fp64_thread_inst=[0.0], int_thread_inst=[0.0], warp_inst=[1e8],
                ldst_thread_inst=[0.8e9], dram_bytes=[0.2e9])
    peak = {k: e.value for k, e in TGT.peaks.items()} | {"ldst_inst_per_s": 20e12}
    nv = make_gpu("nv", values={"warp_size": 32}, peak=peak,
                  measured={"dram_bw_bytes_per_s": 2e12})
    cdna = make_gpu("cdna", values={"warp_size": 64}, peak=peak,
                    measured={"dram_bw_bytes_per_s": 2e12})
    m = get_model("quantitative-transfer")
    for targets in ([cdna, nv], [nv, cdna]):
        got = m.predict(table(**cols), SRC, targets).df.set_index("target")["time_s"]
        assert got.to_dict() == pytest.approx({"cdna": 1.05e-3, "nv": 1.05e-3})


def test_quantitative_says_how_far_its_absolute_time_is_on_the_source_itself():
    """The transfer example's kernel: on the source the model predicts Q_s = 1 ms, against
    3 ms measured (0.33x, beyond a factor 2: the note says the absolute times miss what limits
    the kernel, and points to the transfer); measured at 1.5 ms, 0.67x, only the ratio. Two
    rows give the range and the median; the transfer, which divides by Q_s, says nothing."""
    cols = dict(time_s=[3e-3], fp32_thread_inst=[1e9], fp32_fma_thread_inst=[0.6e9],
                fp64_thread_inst=[0.0], int_thread_inst=[0.0], warp_inst=[1e8],
                ldst_thread_inst=[0.8e9], dram_bytes=[1e9])
    q = get_model("quantitative")

    def said(**kw):
        notes = q.predict(table(**{**cols, **kw}), SRC, TGT).assumptions["tgt"]
        return [n for n in notes if "itself" in n]

    assert said() == ["on src itself the model predicts 0.33x the measured time: its absolute "
                      "times miss what limits these kernels there"]
    # beyond a factor 2 the user is warned (``gpuproj.predict`` turns cautions into warnings)
    assert q.predict(table(**cols), SRC, TGT).cautions == [
        "on src itself it predicts 1 of 1 rows outside 0.5-2x the measured time (k0: 0.33x): "
        "its projections of them are as far off; quantitative-transfer keeps the measured level"]
    assert said(time_s=[1.5e-3]) == ["on src itself the model predicts 0.67x the measured time"]
    assert q.predict(table(**{**cols, "time_s": [1.5e-3]}), SRC, TGT).cautions == []
    two = {c: v * 2 for c, v in cols.items()}
    assert said(**{**two, "time_s": [1.5e-3, 1e-3]}) == [
        "on src itself the model predicts 0.67x to 1x (median 0.83x) the measured time"]
    notes = get_model("quantitative-transfer").predict(table(**cols), SRC, TGT).assumptions
    assert not [n for n in notes["tgt"] if "itself" in n]


def test_quantitative_transfer_on_real_profiles():
    # Rodinia calculate_temp (FP64 instructions) measured by nvprof on a GTX 680 and a Tesla
    # P100: every prediction is the source time x the absolute model's target / source ratio
    from pathlib import Path

    from gpuproj.profiles import load

    t = load(Path(__file__).parent / "data" / "amaris-2gpus-calculate_temp.csv")
    s, g = t.gpus
    rows = t.on(s)
    q = get_model("quantitative")
    ratio = (q.predict(rows, s, g).df["time_s"].to_numpy()
             / q.predict(rows, s, s).df["time_s"].to_numpy())
    got = get_model("quantitative-transfer").predict(rows, s, g).df
    assert len(got) == len(rows.df) > 0
    assert np.allclose(got["time_s"], rows.df["time_s"].to_numpy() * ratio)


def test_quantitative_int_kernel():
    """K_type int: W_comp = M_int, E_mix = 50 %, T_op = T_int."""
    k = table(time_s=[1e-3], fp32_thread_inst=[0.0], fp64_thread_inst=[0.0],
              int_thread_inst=[3.2e9], warp_inst=[1e8], ldst_thread_inst=[0.0], dram_bytes=[1e6])
    pred = get_model("quantitative").predict(k, SRC, TGT).df.iloc[0]
    # D_ops = 1, E_instr = 1 (W_op = 20/10 = 2, C_op = 2), T' = 0.5 * 10e12; compute bound
    assert pred["time_s"] == pytest.approx(3.2e9 / 5e12)


def test_quantitative_without_the_targets_integer_rates():
    """The hand example of Eqs. 2-19 on a target whose catalog has no INT32 rates (AMD):
    T_add falls to the FP32 add rate (10e12) and T_ldst to T_add, so W_other = 1, W_ldst = 1,
    E_instr = (1/3.2) / (3.2/3.2) = 0.3125, T'_op = 0.8 x 0.3125 x 20e12 = 5e12; O_dev 2.5 >
    O_krn 1.6: memory bound, 1.6e9 / (1.6 x 2e12) = 5e-4 s. An int kernel takes T_int = half
    the FP32 FMA rate, 10e12 (noted): D_ops = 3.2e9 / (32 x 1e8) = 1, W_op = 20e12 / 10e12 = 2,
    E_instr = 1, T'_op = 0.5 x 1 x 10e12 = 5e12, O_krn = 3200 > O_dev = 2.5: compute bound,
    3.2e9 / 5e12 = 6.4e-4 s."""
    rates = {k: v for k, v in TGT.peaks.items() if not k.startswith(("int32", "ldst"))}
    amd = make_gpu("amd", values={"warp_size": 64}, peak={k: e.value for k, e in rates.items()},
                   measured={"dram_bw_bytes_per_s": 2e12})
    k = table(time_s=[1e-3], fp32_thread_inst=[1e9], fp32_fma_thread_inst=[0.6e9],
              fp64_thread_inst=[0.0], int_thread_inst=[0.0], warp_inst=[1e8],
              ldst_thread_inst=[0.8e9], dram_bytes=[1e9])
    p = get_model("quantitative").predict(k, SRC, amd)
    assert p.df.iloc[0]["time_s"] == pytest.approx(5e-4)
    assert "amd has no int32_add_ops_per_s: fp32_addmul_flops_per_s used" in p.assumptions["amd"]
    ik = table(time_s=[1e-3], fp32_thread_inst=[0.0], fp64_thread_inst=[0.0],
               int_thread_inst=[3.2e9], warp_inst=[1e8], ldst_thread_inst=[0.0], dram_bytes=[1e6])
    p = get_model("quantitative").predict(ik, SRC, amd)
    assert p.df.iloc[0]["time_s"] == pytest.approx(6.4e-4)
    assert "amd has no int32_fma_ops_per_s: fp32_fma_flops_per_s / 2 used" in p.assumptions["amd"]


def test_quantitative_prices_load_stores_like_the_reference_that_measured_them():
    """A target without an LD/ST rate, projected from a reference that measured one: its T_ldst
    is its T_add x the reference's measured T_ldst / T_add, not T_add itself (an LSU rate on one
    GPU against an add rate 2-5x larger on the other). Reference: add measured 4e12 (peak 5e12),
    ldst measured 1e12 -> ratio 0.25. Target (add peak 20e12): T_add derived 20e12 x 4/5 =
    16e12, T_ldst = 4e12.
    The compute-bound row of the hand example (O_krn = 8): W_ldst = 10/4 = 2.5, W_other =
    10/16 = 0.625, C = (1, 2, 0.875) / 3.2 -> E_instr = 1/3.875, T'_op = 0.8 x 20e12 / 3.875,
    time = 1.6e9 / T'_op = 3.875e-4 s (T_ldst = T_add would give E_instr 0.4 and 2.5e-4 s)."""
    ref = replace(SRC, id="ref", measureds={
        **SRC.measureds,
        **{k: Entry(v, "measured", "test") for k, v in (("int32_add_ops_per_s", 4e12),
                                                         ("ldst_inst_per_s", 1e12))}})
    tgt = replace(TGT, id="tgt-no-ldst",
                  peaks={**{k: e for k, e in TGT.peaks.items() if k != "ldst_inst_per_s"},
                         "int32_add_ops_per_s": Entry(20e12, "datasheet", "test")})
    k = table(time_s=[1e-3], fp32_thread_inst=[1e9], fp32_fma_thread_inst=[0.6e9],
              fp64_thread_inst=[0.0], int_thread_inst=[0.0], warp_inst=[1e8],
              ldst_thread_inst=[0.8e9], dram_bytes=[0.2e9])
    p = get_model("quantitative").predict(k, ref, tgt)
    assert p.df.iloc[0]["time_s"] == pytest.approx(3.875e-4)
    notes = p.assumptions["tgt-no-ldst"]
    assert ("tgt-no-ldst ldst_inst_per_s derived: int32_add_ops_per_s x ref measured "
            "ldst_inst_per_s/int32_add_ops_per_s = 0.250") in notes
    assert not any("has no ldst_inst_per_s" in n for n in notes)


def test_quantitative_derives_load_stores_on_the_footing_of_the_targets_adds():
    """The H100's compiled integer adds ran at 1.95x its peak, which a derived ceiling does not
    carry over (at most the peak, GPU.ceiling): an A100's T_add is its peak, 64 per SM and
    clock. Its T_ldst took that peak x the H100's LD/ST / *measured* add ratio (31.7 / 124.5),
    16 per SM and clock, half the 32 shared-memory lanes both GPUs have (and half the B200's 31
    from the same ratio). On the footing of the A100's add, the ratio is the H100's LD/ST over
    its add at its peak: 64 x 31.7 / 64 (examples/h100-suite-ncu.csv on the A100: 0.63x to 1x
    the time it had, median 0.88x)."""
    from gpuproj.catalog import load_catalog
    from gpuproj.models.common import CeilingBook
    from gpuproj.models.quantitative import Quantitative

    cat = load_catalog()
    h100, a100 = cat.resolve("h100-sxm5-80gb"), cat.resolve("a100-sxm4-80gb")
    book = CeilingBook(a100, reference=h100)
    d = Quantitative.device_parameters(book)

    def per_sm_clock(gpu, rate):
        return rate / (gpu.value("sm_count") * gpu.value("boost_clock_hz"))

    assert per_sm_clock(a100, d["T_add"]) == pytest.approx(64)
    assert per_sm_clock(a100, d["T_ldst"]) == pytest.approx(
        per_sm_clock(h100, h100.measured("ldst_inst_per_s")), rel=1e-3)
    assert ("a100-sxm4-80gb ldst_inst_per_s derived: int32_add_ops_per_s x h100-sxm5-80gb "
            "measured ldst_inst_per_s / peak int32_add_ops_per_s = 0.495") in book.notes
    # a target whose add is measured (the H200) or a stand-in (the B200's FP32 add rate) keeps
    # the measured ratio: its own LD/ST rate, 31 per clock and SM
    b200 = cat.resolve("b200")
    t = Quantitative.device_parameters(CeilingBook(b200, reference=h100))
    assert per_sm_clock(b200, t["T_ldst"]) == pytest.approx(31.0, abs=0.1)


def test_hierarchical_breakdown_is_unknown_not_zero_where_the_profile_has_no_count():
    """t_l1_s is NaN when the profile has no L1 bytes (0 would read as 'no time spent there');
    the limiter still comes from the levels that are known."""
    k = hier_kernel(l1_bytes=[np.nan])
    row = get_model("hierarchical").predict(k, SRC, TGT).df.iloc[0]
    assert np.isnan(row["t_l1_s"]) and np.isnan(row["t_shared_s"])
    assert row["t_dram_s"] == pytest.approx(1e9 / 2e12) and row["limiter"] == "dram"


def test_hierarchical_flops_only_uses_compute_ceiling():
    """Analytic FLOPs and no bytes (KernelTuner-like tables): the roofline at OI -> infinity,
    t_t = t_s x Perf_s / Perf_t with the FMA peaks of the dtype (10e12 -> 20e12)."""
    k = table(time_s=[1e-3], flops=[2e9], dtype=["fp32"])
    pred = get_model("hierarchical").predict(k, SRC, TGT).df.iloc[0]
    assert pred["time_s"] == pytest.approx(0.5e-3)
    assert pred["limiter"] == "fp32"



def test_parallelism_point_by_sm_interval_to_block_slots():
    """A100 (108 SMs) -> V100 (80 SMs), 256-thread blocks without registers or shared memory:
    b = 2048 / 256 = 8 resident blocks per SM on both. Point x u_s / u_t by SM, interval to the
    ratio by block slot.
    100 blocks: by SM 100/108 -> 100/(2 x 80): x 160/108; by slot 100/864 -> 100/640: x 640/864.
    2592 blocks: by SM 1 -> 32.4/33: x 33/32.4; by slot 1 (3 waves of 864) -> 2592/(5 x 640):
    x 3200/2592. No grid: unchanged."""
    from gpuproj.catalog import resolve

    # the 40 GB A100: the 80 GB one has a launch overhead measured (gpu-benches), which would
    # come off the time before the scaling and back after it
    a100, v100 = resolve("a100-sxm4-40gb"), resolve("v100-sxm2-16gb")
    k = table(time_s=[1e-3] * 3, flops=[2e9] * 3, dtype=["fp32"] * 3,
              grid_blocks=[100, 2592, np.nan], block_threads=[256, 256, np.nan])
    base = get_model("hierarchical").predict(k, a100, v100).df["time_s"].to_numpy()
    got = get_model("hierarchical", parallelism=True).predict(k, a100, v100).df
    by_sm, by_slot = np.array([160 / 108, 33 / 32.4, 1]), np.array([640 / 864, 3200 / 2592, 1])
    assert got["time_s"].to_numpy() == pytest.approx(base * by_sm)
    assert got["low_s"].to_numpy() == pytest.approx(base * np.minimum(by_sm, by_slot))
    assert got["high_s"].to_numpy() == pytest.approx(base * np.maximum(by_sm, by_slot))


def test_parallelism_names_a_grid_that_leaves_most_sms_idle():
    """A100 40 GB (108 SMs) -> V100 SXM2 (80 SMs), DRAM-bound rows. 39 blocks keep 39 / 80 of
    the V100's SMs busy, under half: more blocks, not more bandwidth, would shorten the kernel,
    and its limiter says so; 40 blocks (half) and 2592 blocks (waves of every SM) keep the
    roof's name. A grid without blocks has no fill."""
    from gpuproj.catalog import resolve

    a100, v100 = resolve("a100-sxm4-40gb"), resolve("v100-sxm2-16gb")
    k = table(time_s=[1e-3] * 4, dram_bytes=[1e9] * 4, flops=[1e6] * 4, dtype=["fp32"] * 4,
              grid_blocks=[39, 40, 2592, np.nan], block_threads=[256, 256, 256, np.nan])
    got = get_model("hierarchical", parallelism=True).predict(k, a100, v100).df
    assert got["limiter"].astype(str).tolist() == ["parallelism", "dram", "dram", "dram"]
    # the label changes no time: the rows differ by their fill ratio alone
    base = get_model("hierarchical").predict(k, a100, v100).df["time_s"].to_numpy()
    by_sm = np.array([(39 / 108) / (39 / 80), (40 / 108) / (40 / 80), 2592 / (24 * 108)
                      / (2592 / (33 * 80)), 1])
    assert got["time_s"].to_numpy() == pytest.approx(base * by_sm)
    # without the extension the grid is not looked at
    assert set(get_model("hierarchical").predict(k, a100, v100).df["limiter"]) == {"dram"}


def test_parallelism_projects_a_kernel_held_by_its_loads_in_flight_by_its_waves():
    """H200 -> A100 80 GB, a stream read of 2^27 threads in 32-thread blocks, 8 B each, 8.73 ms
    (123 GB/s, 2.6 % of the H200's 4.8 TB/s: the two GPUs were measured by different
    benchmarks, so both take their datasheet bandwidth). Two blocks per SM (the achieved occupancy,
    2 x 32 / 2048): 132 x 64 threads resident, 15888 waves, which at 600 ns take 9.5 ms, within
    2x of the time: held by its loads in flight. On the A100 the same two blocks per SM on 108
    SMs: time x 132 / 108 (launch overheads of both GPUs taken off and put back), above its
    DRAM time (0.6 ms). At full occupancy (or the calculator's 32 blocks) the waves at 600 ns
    take 0.3 ms (0.6 ms), far below the time: not held, the bandwidth projection as before
    (4.8 / 2.039 = 2.35x), which the held row's interval spans."""
    from gpuproj.catalog import resolve

    h200, a100 = resolve("h200-sxm-141gb"), resolve("a100-sxm4-80gb")
    n = 2 ** 27
    k = table(time_s=[8.73e-3] * 3, dram_bytes=[8.0 * n] * 3, grid_blocks=[n // 32] * 3,
              block_threads=[32] * 3, achieved_occupancy=[2 * 32 / 2048, 1.0, np.nan])
    got = get_model("hierarchical-ext").predict(k, h200, a100)
    t = got.df["time_s"].to_numpy()
    ls, lt = (g.measured("launch_overhead_s") for g in (h200, a100))
    assert t[0] == pytest.approx((8.73e-3 - ls) * 132 / 108 + lt)
    # the bandwidth projection: 4.8 / 2.039 = 2.35x the time, where the waves say 1.22x
    assert t[1] == pytest.approx(t[2]) and t[1] == pytest.approx(4.8 / 2.039 * 8.73e-3, rel=0.01)
    # what holds the first row is the latency of its loads, not the DRAM bandwidth
    assert got.df["limiter"].astype(str).tolist() == ["latency", "dram", "dram"]
    assert got.df["low_s"].iloc[0] == pytest.approx(t[0])
    assert got.df["high_s"].iloc[0] >= t[1]  # and its block-slot end, 0.03 % above
    assert any(a.startswith("concurrency: 1 row(s) held") for a in got.assumptions[a100.id])


def test_roof_share_scales_only_the_time_a_roof_explains():
    """H100 SXM5 -> H200 (both sm_90, 132 SMs at 1.98 GHz; DRAM measured by `gpuproj bench`
    on both, 3.056 and 4.369 TB/s). A stream of 1 ms at 10 % of the H100's DRAM ceiling: the
    0.1 ms its bytes take at the ceiling scale by 3.056 / 4.369, the other 0.9 ms (latency, no
    ceiling explains it) by the SMs' aggregate clock, 1: 0.1 x 0.699 + 0.9 = 0.970 ms, where
    Eq. 9 gives 0.699 ms. At the ceiling both give 0.699 ms. The H200's launch overhead L
    (gpu-benches), taken as the H100's too, comes off the time and back: the first row's rest
    still scales by 1, so it is unchanged; a row at the ceiling scales its time less L. Across
    designs (H100 -> A100, sm_90 -> sm_80) nothing here prices the rest: Eq. 9 as written."""
    from gpuproj.catalog import resolve
    from gpuproj.models.hierarchical import HierarchicalExtended

    h100, h200, a100 = (resolve(g) for g in ("h100-sxm5-80gb", "h200-sxm-141gb",
                                              "a100-sxm4-80gb"))
    bs = h100.ceiling("dram_bw_bytes_per_s", reference=h200).value
    bt = h200.ceiling("dram_bw_bytes_per_s", reference=h100).value
    assert (bs, bt) == (h100.measured("dram_bw_bytes_per_s"), h200.measured("dram_bw_bytes_per_s"))
    k = table(time_s=[1e-3, 1e-3], dram_bytes=[0.1 * bs * 1e-3, bs * 1e-3])
    got = HierarchicalExtended().predict(k, h100, h200)
    share = got.df["time_s"].to_numpy()
    assert any(a.startswith("roof share: ") and a.endswith("(x 1.00)")
               for a in got.assumptions[h200.id])
    eq9 = HierarchicalExtended(roof_share=False).predict(k, h100, h200).df["time_s"].to_numpy()
    L = h200.measured("launch_overhead_s")
    assert share == pytest.approx([1e-3 * (0.1 * bs / bt + 0.9), (1e-3 - L) * bs / bt + L])
    assert eq9 == pytest.approx([(1e-3 - L) * bs / bt + L] * 2)
    across = HierarchicalExtended().predict(k, h100, a100)
    assert not any(a.startswith("roof share") for a in across.assumptions[a100.id])
    assert across.df["time_s"].to_numpy() == pytest.approx(
        HierarchicalExtended(roof_share=False).predict(k, h100, a100).df["time_s"].to_numpy())


# issue-rate extension: a Turing-like source (64 FP32 lanes, 4 warp instructions per SM per
# clock: P = 2, I = 4) and an Ampere-GA10x-like target (128 lanes: P = 4, I = 4), FP32 peaks 10
# and 20 TFLOP/s
TURING = make_gpu("turing", values={"warp_size": 32, "fp32_lanes_per_sm": 64,
                                    "warp_issue_per_sm_per_clock": 4},
                  peak={"fp32_fma_flops_per_s": 10e12, "fp32_addmul_flops_per_s": 5e12})
AMPERE = make_gpu("ampere", values={"warp_size": 32, "fp32_lanes_per_sm": 128,
                                    "warp_issue_per_sm_per_clock": 4},
                  peak={"fp32_fma_flops_per_s": 20e12, "fp32_addmul_flops_per_s": 10e12})

# an Ampere-like target of another architecture than TURING's (whose counts are not its own)
OTHER_ARCH = make_gpu("ampere-other", values={"warp_size": 32, "fp32_lanes_per_sm": 128,
                                              "warp_issue_per_sm_per_clock": 4},
                      peak={"fp32_fma_flops_per_s": 20e12, "fp32_addmul_flops_per_s": 10e12},
                      architecture="Other")


def low_fp_share_kernel():
    """0.16e9 FP32 FMA of 1.6e9 thread instructions (f = 0.1), all threads active, no bytes."""
    return table(time_s=[1e-3], fp32_fma_thread_inst=[0.16e9], fp32_add_thread_inst=[0.0],
                 fp32_mul_thread_inst=[0.0], thread_inst=[1.6e9], warp_inst=[0.05e9])


def test_issue_rate_without_counts_spans_the_fp_share():
    """No instruction counts: f in [0.5, 1]. Factor min(1, f I / P): Turing min(1, 2f) = 1
    throughout, Ampere f. So t_t = t_s x 10e12 / (20e12 f): 1e-3 s at f = 0.5 (high end),
    0.5e-3 s at f = 1 (low end), 0.5e-3 / sqrt(0.5) at the point f = sqrt(0.5)."""
    k = table(time_s=[1e-3], flops=[2e9], dtype=["fp32"])
    plain = get_model("hierarchical").predict(k, TURING, AMPERE).df.iloc[0]
    p = get_model("hierarchical", issue_rate=True).predict(k, TURING, AMPERE).df.iloc[0]
    assert plain["time_s"] == pytest.approx(0.5e-3)
    assert p["time_s"] == pytest.approx(0.5e-3 / np.sqrt(0.5))
    assert p["low_s"] == pytest.approx(0.5e-3)
    assert p["high_s"] == pytest.approx(1e-3)
    # the other direction mirrors it
    back = get_model("hierarchical", issue_rate=True).predict(k, AMPERE, TURING).df.iloc[0]
    assert back["time_s"] == pytest.approx(2e-3 * np.sqrt(0.5))


def test_issue_rate_from_counts():
    """FP share from the counts: 0.6e9 FP32 FMA + 0.2e9 ADD thread instructions of 1.6e9 thread
    instructions, f = 0.5. Turing factor 1, Ampere 0.5. The Eq. 2 mix (FMA 3/4, ADD 1/4) gives
    Perf_mix 8.75e12 and 17.5e12, warp usage 1.6e9 / (0.05e9 x 32) = 1: t_t = t_s x 8.75e12 /
    (17.5e12 x 0.5) = t_s, a point interval."""
    k = table(time_s=[1e-3], fp32_fma_thread_inst=[0.6e9], fp32_add_thread_inst=[0.2e9],
              fp32_mul_thread_inst=[0.0], thread_inst=[1.6e9], warp_inst=[0.05e9])
    p = get_model("hierarchical", issue_rate=True).predict(k, TURING, AMPERE).df.iloc[0]
    assert p["time_s"] == pytest.approx(1e-3)
    assert p["low_s"] == pytest.approx(p["high_s"])
    # without thread instructions f counts whole warps: 0.8e9 / (0.05e9 x 32) = 0.5 again
    k2 = table(time_s=[1e-3], fp32_fma_thread_inst=[0.6e9], fp32_add_thread_inst=[0.2e9],
               fp32_mul_thread_inst=[0.0], warp_inst=[0.05e9])
    p2 = get_model("hierarchical", issue_rate=True).predict(k2, TURING, AMPERE).df.iloc[0]
    assert p2["time_s"] == pytest.approx(1e-3)


def test_issue_held_rows_name_issue_as_their_limiter():
    """f = 0.1 from the counts (low_fp_share_kernel) on the GA10x-like target: factor
    min(1, 0.1 x 4 / 4) = 0.1. Its compute time: 0.32e9 FLOPs / 20e12 = 16 us at the FP peak,
    160 us at the issue-fed ceiling; 5e7 DRAM bytes / 1e12 B/s = 50 us. The plain model names
    DRAM; with the issue rate compute at 160 us takes longest, and the schedulers, not the FP
    pipe, set that ceiling: the limiter is `issue`, the breakdown shows the 160 us."""
    src, tgt = (make_gpu(name, values={"warp_size": 32, "fp32_lanes_per_sm": lanes,
                                       "warp_issue_per_sm_per_clock": 4},
                         peak={"fp32_fma_flops_per_s": fma, "fp32_addmul_flops_per_s": fma / 2,
                               "dram_bw_bytes_per_s": 1e12})
                for name, lanes, fma in (("turing", 64, 10e12), ("ampere", 128, 20e12)))
    k = low_fp_share_kernel()
    k = table(**{c: k.df[c].tolist() for c in ("time_s", "fp32_fma_thread_inst",
                                               "fp32_add_thread_inst", "fp32_mul_thread_inst",
                                               "thread_inst", "warp_inst")}, dram_bytes=[5e7])
    plain = get_model("hierarchical").predict(k, src, tgt).df.iloc[0]
    held = get_model("hierarchical", issue_rate=True).predict(k, src, tgt).df.iloc[0]
    assert plain["limiter"] == "dram" and plain["t_compute_s"] == pytest.approx(16e-6)
    assert held["limiter"] == "issue" and held["t_compute_s"] == pytest.approx(160e-6)
    assert held["t_dram_s"] == pytest.approx(50e-6)


def test_issue_rate_counts_of_another_architecture():
    """Counts are the source ISA's instructions: to a target of another architecture (without
    its SASS counts) f is taken in [0.5, 1] on both GPUs, as without counts; ``ceilings`` on
    that target (the source as reference) does the same."""
    from gpuproj.models.hierarchical import Hierarchical

    # f = 0.1 from the counts: on the same architecture both issue roofs bind (Turing factor
    # 0.2, Ampere 0.1: 2e12 FLOP/s each), and the time stays 1e-3 s
    k = low_fp_share_kernel()
    pred = get_model("hierarchical", issue_rate=True).predict(k, TURING, OTHER_ARCH)
    p = pred.df.iloc[0]
    assert p["time_s"] == pytest.approx(0.5e-3 / np.sqrt(0.5))
    assert (p["low_s"], p["high_s"]) == pytest.approx((0.5e-3, 1e-3))
    assert any("counts are Test instructions" in n for n in pred.assumptions["ampere-other"])
    same = get_model("hierarchical", issue_rate=True).predict(k, TURING, AMPERE).df.iloc[0]
    assert same["time_s"] == pytest.approx(1e-3)
    c = Hierarchical(issue_rate=True).ceilings(k.df, OTHER_ARCH, reference=TURING)
    assert c["perf_ceil_flops_per_s"][0] == pytest.approx(20e12 * np.sqrt(0.5))


def test_issue_rate_needs_both_gpus_in_the_catalog():
    """A GPU without the issue rate leaves both ceilings as they were, with a note."""
    k = table(time_s=[1e-3], flops=[2e9], dtype=["fp32"])
    pred = get_model("hierarchical", issue_rate=True).predict(k, TURING, TGT)
    assert pred.df.iloc[0]["time_s"] == pytest.approx(0.5e-3)
    assert any(n.startswith("issue rate: tgt without warp_issue_per_sm_per_clock")
               for n in pred.assumptions["tgt"])


def sass_counts(k, **cols):
    """``target_counts`` for target ``tgt``/``ampere-other`` as gpuproj.sass gives them: the FP
    columns per profile row, NaN where the target's SASS says nothing (the source count stays)."""
    import pandas as pd

    from gpuproj.sass.counts import CANONICAL

    over = pd.DataFrame(np.nan, index=k.df.index, columns=list(CANONICAL))
    for c, v in cols.items():
        over[c] = v
    return over


def test_hierarchical_takes_the_targets_sass_counts():
    """Van Lanker Sec. 4.2: the target's SASS counts 2e9 FMA where the source ran 1e9, so
    FLOP_t = 5e9 against FLOP_s = 3e9 and Eq. 9 reads t_t = t_s x FLOP_t / FLOP_s x roof_s(OI_s)
    / roof_t(OI_t). On the target, Eq. 2 weighs FMA 2/3 and ADD/MUL 1/3: Perf_mix 50e12 / 3, x
    0.5 active threads (the source's warps) = 8.33e12; OI_t = 5, 2.5, 1.25 at DRAM, L2, L1,
    with the hand example's target ceilings (2e12, 3e12, 4e9 / 7.67e-4 B/s)."""
    k = hier_kernel()
    counts = {"tgt": sass_counts(k, fp32_fma_thread_inst=2e9, fp32_flops=5e9, flops=5e9)}
    pred = get_model("hierarchical", target_counts=counts).predict(k, SRC, TGT)
    p = pred.df.iloc[0]
    bw_l1_s = 4e9 / (1e-3 + 2.5e-4 + 1.25e-4)
    bw_l1_t = 4e9 / (5e-4 + 1e9 / 6e12 + 1e-4)
    roof_s = {"dram": min(1e12 * 3, 3.75e12), "l2": min(1.6e12 * 1.5, 3.75e12),
              "l1": min(bw_l1_s * 0.75, 3.75e12)}
    perf_t = 50e12 / 3 * 0.5
    roof_t = {"dram": min(2e12 * 5, perf_t), "l2": min(3e12 * 2.5, perf_t),
              "l1": min(bw_l1_t * 1.25, perf_t)}
    times = [2e-3 * 5 / 3 * roof_s[lvl] / roof_t[lvl] for lvl in ("l1", "l2", "dram")]
    assert p["time_s"] == pytest.approx(np.mean(times), rel=1e-12)
    assert (p["low_s"], p["high_s"]) == pytest.approx((min(times), max(times)), rel=1e-12)
    assert p["t_compute_s"] == pytest.approx(5e9 / perf_t)
    assert "target FLOP counts from SASS comparison (gpuproj.sass)" in pred.assumptions["tgt"]


def test_issue_rate_with_the_targets_sass_counts_of_another_architecture():
    """With the target's SASS counts, f is known on both sides even across architectures: the
    source's from its counts (0.16e9 FMA of 1.6e9 thread instructions, f = 0.1, Turing factor
    min(1, 0.1 x 4 / 2) = 0.2), the target's from its own (0.8e9 FMA, f = 0.5, Ampere factor
    0.5). No bytes: t_t = t_s x FLOP_t / FLOP_s x Perf_s / Perf_t = 1e-3 x 5 x 2e12 / 10e12,
    a point interval; without the extension 1e-3 x 5 x 10e12 / 20e12."""
    k = low_fp_share_kernel()
    counts = {"ampere-other": sass_counts(k, fp32_fma_thread_inst=0.8e9, fp32_flops=1.6e9,
                                          flops=1.6e9)}
    p = get_model("hierarchical", issue_rate=True, target_counts=counts).predict(
        k, TURING, OTHER_ARCH).df.iloc[0]
    assert p["time_s"] == pytest.approx(1e-3)
    assert (p["low_s"], p["high_s"]) == pytest.approx((1e-3, 1e-3))
    plain = get_model("hierarchical", target_counts=counts).predict(
        k, TURING, OTHER_ARCH).df.iloc[0]
    assert plain["time_s"] == pytest.approx(2.5e-3)


def test_issue_rate_catalog_values():
    """Dispatch per SM and clock from the vendors' documents: dual-issue Kepler/Maxwell/Pascal,
    single-issue since Volta."""
    from gpuproj.catalog import resolve

    got = {g: resolve(g).value("warp_issue_per_sm_per_clock")
           for g in ("tesla-k40", "gtx-980", "tesla-p100-pcie-16gb", "tesla-p4", "v100-pcie-32gb",
                     "rtx-2080-ti", "rtx-3090", "a100-pcie-40gb", "h100-sxm5-80gb")}
    assert got == {"tesla-k40": 8, "gtx-980": 8, "tesla-p100-pcie-16gb": 4, "tesla-p4": 8,
                   "v100-pcie-32gb": 4, "rtx-2080-ti": 4, "rtx-3090": 4, "a100-pcie-40gb": 4,
                   "h100-sxm5-80gb": 4}


def test_issue_rate_in_the_ceilings():
    """``ceilings`` reports the issue-limited compute ceiling at f's point: 20e12 x sqrt(0.5) on
    the Ampere-like GPU without counts; the Eq. 2 mix stays the peak."""
    from gpuproj.models.hierarchical import Hierarchical

    k = table(time_s=[1e-3], flops=[2e9], dtype=["fp32"]).df
    c = Hierarchical(issue_rate=True).ceilings(k, AMPERE)
    assert c["perf_ceil_flops_per_s"][0] == pytest.approx(20e12 * np.sqrt(0.5))
    assert c["mix_flops_per_s"][0] == pytest.approx(20e12)
    assert Hierarchical().ceilings(k, AMPERE)["perf_ceil_flops_per_s"][0] == pytest.approx(20e12)


# source-clock extension: the source's compute peaks assume its 2 GHz boost clock
CLOCKED = make_gpu("clocked", values={"warp_size": 32, "boost_clock_hz": 2e9},
                   peak={"fp32_fma_flops_per_s": 10e12, "fp32_addmul_flops_per_s": 5e12,
                         "dram_bw_bytes_per_s": 1e12})
FAST = make_gpu("fast", values={"warp_size": 32, "boost_clock_hz": 2e9},
                peak={"fp32_fma_flops_per_s": 20e12, "fp32_addmul_flops_per_s": 10e12,
                      "dram_bw_bytes_per_s": 2e12})


def test_source_clock_rescales_the_source_compute_ceiling():
    """A compute-bound FMA kernel (2e9 FLOP, OI 2000) that ran at 1.5 GHz: its source ceiling was
    10e12 x 1.5 / 2 = 7.5e12, so it reached 2e9 / 1e-3 / 7.5e12 = 26.7 % of it, and the target
    (taken at its boost clock, 20e12) runs it in 1e-3 x 7.5e12 / 20e12 = 0.375 ms instead of the
    0.5 ms of the peak ratio. The memory-bound kernel (OI 0.02) does not move."""
    k = table(time_s=[1e-3, 1e-3], fp32_fma_thread_inst=[1e9, 1e9], flops=[2e9, 2e9],
              dram_bytes=[1e6, 1e11],
              sm_clock_hz=[1.5e9, 1.5e9], gpu=["clocked", "clocked"])
    plain = get_model("hierarchical").predict(k, CLOCKED, FAST)
    clock = get_model("hierarchical", source_clock=True).predict(k, CLOCKED, FAST)
    assert plain.df["time_s"].tolist() == pytest.approx([0.5e-3, 0.5e-3])
    assert clock.df["time_s"].tolist() == pytest.approx([0.375e-3, 0.5e-3])
    assert any("ran at 1500 MHz (median), 75 % of the 2000 MHz boost" in n
               for n in clock.assumptions["fast"])
    # off: the notes say how far the clock was from the boost, nothing is rescaled
    assert any("ran at 75 %" in n and "not rescaled" in n for n in plain.assumptions["fast"])
    # the source's roofline in pictures and reports is drawn at the clock it ran at; a target's
    # (the rows are not on it) at its boost
    h = get_model("hierarchical", source_clock=True)
    assert h.ceilings(k.df, CLOCKED)["perf_ceil_flops_per_s"] == pytest.approx([7.5e12] * 2)
    assert h.ceilings(k.df, FAST, reference=CLOCKED)["perf_ceil_flops_per_s"] == \
        pytest.approx([20e12] * 2)


def test_source_clock_leaves_measured_ceilings_and_unclocked_rows():
    measured = make_gpu("measured", values={"warp_size": 32, "boost_clock_hz": 2e9},
                        peak={"fp32_fma_flops_per_s": 10e12, "fp32_addmul_flops_per_s": 5e12,
                              "dram_bw_bytes_per_s": 1e12},
                        measured={"fp32_fma_flops_per_s": 9e12})
    k = table(time_s=[1e-3, 1e-3], fp32_fma_thread_inst=[1e9, 1e9], flops=[2e9, 2e9],
              dram_bytes=[1e6, 1e6],
              sm_clock_hz=[1.5e9, np.nan], gpu=["measured", "measured"])
    p = get_model("hierarchical", source_clock=True).predict(k, measured, FAST)
    # measured 9e12 -> target peak 20e12 (no measured/peak ratio for FAST's own peak: the
    # derived value is 20e12 x 9/10 = 18e12)
    assert p.df["time_s"].tolist() == pytest.approx([1e-3 * 9 / 18] * 2)
    assert any("measured, not rescaled" in n for n in p.assumptions["fast"])
    k2 = table(time_s=[1e-3, 1e-3], fp32_fma_thread_inst=[1e9, 1e9], flops=[2e9, 2e9],
               dram_bytes=[1e6, 1e6],
               sm_clock_hz=[1.5e9, np.nan], gpu=["clocked", "clocked"])
    p2 = get_model("hierarchical", source_clock=True).predict(k2, CLOCKED, FAST)
    assert p2.df["time_s"].tolist() == pytest.approx([0.375e-3, 0.5e-3])


@pytest.mark.parametrize("fixture", ["ncu-handbuilt-h100-raw-base.csv",
                                     "amaris-2gpus-calculate_temp.csv",
                                     "kerneltuner-4gpus-gemm_clblast_4096.csv",
                                     "neusight-5gpus-bmm.csv"])
@pytest.mark.filterwarnings("ignore::gpuproj.predict.MethodWarning")  # quantitative's, per row
def test_every_limiter_is_one_the_contract_names(fixture):
    """models.base.LIMITERS is the vocabulary of the `limiter` column (the report and the
    pictures colour by it): every method on real profiles, to NVIDIA and AMD targets."""
    from gpuproj.models.base import LIMITERS
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    t = load(Path(__file__).parent / "data" / fixture)
    res = predict(t.on(t.gpus[0]), targets=["h200", "mi300x", "a100-sxm4-80gb"], methods="all")
    got = set(res.table()["limiter"].dropna().astype(str))
    assert got and got <= set(LIMITERS) | {""}


@pytest.mark.parametrize("example,targets", [
    ("h100-suite-ncu.csv", ["a100-sxm4-80gb", "mi300x"]),
    ("rodinia-p100-nvprof.csv", ["h100-sxm5-80gb"])])
@pytest.mark.filterwarnings("ignore::gpuproj.predict.MethodWarning")  # quantitative's, per row
def test_a_rows_projection_does_not_depend_on_the_other_rows(example, targets):
    """Every analytical method projects each row on its own: predicting a row alone gives what
    it gets in the whole table (the H100 suite's vector add, whose ncu profile counts
    shared-pipe wavefronts but no shared bytes, was once charged Eq. 5's shared-memory time
    only when another row of the table had shared bytes)."""
    from gpuproj.models import MODELS, is_analytical
    from gpuproj.predict import predict
    from gpuproj.profiles import load
    from gpuproj.profiles.table import ProfileTable

    methods = [m for m in MODELS if is_analytical(m)]
    prof = load(Path(__file__).parents[1] / "examples" / example)
    keys = ["kernel", "config", "target", "method"]
    whole = predict(prof, targets=targets, methods=methods).table().set_index(keys)
    for i in range(len(prof.df)):
        alone = predict(ProfileTable.from_frame(prof.df.iloc[[i]]), targets=targets,
                        methods=methods).table().set_index(keys)
        assert len(alone)
        for col in ("time_s", "low_s", "high_s"):
            np.testing.assert_allclose(alone[col], whole.loc[alone.index, col], rtol=1e-12,
                                       err_msg=f"{col} of row {i}")


def test_roof_floor_keeps_a_projection_above_the_targets_own_roofline():
    """A kernel held by shared memory (Eq. 5 on the source: 1.125e8 wavefronts x 128 B /
    16e12 B/s = 0.9 ms of its 1 ms), projected to a target that has no L1 or L2 bandwidth in
    its description: the L1 and L2 levels, which serve 1e8 bytes each, do not project, and the
    DRAM level gives t_s x 1e12 / 2e12 = 0.5 ms, below the
    1.125e8 x 128 / 20e12 = 0.72 ms the target's shared memory alone takes. ``roof_floor``
    raises it to 0.72 ms. A source that ran in half its own bound (0.45 ms against 0.9 ms:
    counts that overstate the work) lowers the floor by as much: 0.36 ms against the DRAM
    level's 0.225 ms."""
    no_caches = replace(TGT, peaks={k: v for k, v in TGT.peaks.items()
                                    if k not in ("l1_bw_bytes_per_s", "l2_bw_bytes_per_s")})
    wavefronts = 1.125e8
    k = table(time_s=[1e-3, 0.45e-3], dram_bytes=[1e8] * 2, l2_bytes=[2e8] * 2,
              l1_bytes=[3e8] * 2, shared_bytes=[wavefronts * 128] * 2,
              shared_wavefronts=[wavefronts] * 2)
    plain = get_model("hierarchical").predict(k, SRC, no_caches).df
    floored = get_model("hierarchical", roof_floor=True).predict(k, SRC, no_caches)
    assert plain["time_s"].to_numpy() == pytest.approx([0.5e-3, 0.225e-3], rel=1e-12)
    assert floored.df["time_s"].to_numpy() == pytest.approx([0.72e-3, 0.36e-3], rel=1e-12)
    assert floored.df["t_shared_s"].to_numpy() == pytest.approx([0.72e-3] * 2, rel=1e-12)
    assert (floored.df["low_s"] == floored.df["time_s"]).all()
    # the second row's floor, 0.36 ms, lies below its 0.72 ms shared-memory time: the note
    # says why, where "raised to it" read as if no time could end below the one shown
    assert ("roofline floor: 2 row(s) projected below tgt's own roofline time raised to it (1 "
            "of them to that time x source time / source roofline time, as it ran faster than "
            "the source's roofline: below the target's longest resource time)"
            in floored.assumptions["tgt"])
    # shared memory, which bounds both rows on the source, is timed on the target too
    assert not any("lacks the ceiling" in a for a in floored.assumptions["tgt"])
    # an L2-bound row (3.9e9 L2 hits / 4e12 B/s = 0.975 ms of 1 ms) is projected from DRAM
    # alone, and the notes say so
    l2_bound = table(time_s=[1e-3], dram_bytes=[1e8], l2_bytes=[4e9], kernel=["gather(int*)"])
    lost = get_model("hierarchical").predict(l2_bound, SRC, no_caches)
    assert "tgt lacks the ceiling of what bounds 1 row(s) (l2: gather) on src (its longest " \
        "resource time there): projected from the other levels alone" in lost.assumptions["tgt"]
    # and its limiter is unknown, not the DRAM the projection was left with; the shared-bound
    # rows, timed on both GPUs, keep theirs
    assert list(lost.df["limiter"].astype(str)) == ["unknown"]
    assert set(floored.df["limiter"].astype(str)) == {"shared"}
    # a projection already above the target's roofline is left alone
    both = get_model("hierarchical", roof_floor=True).predict(hier_kernel(), SRC, TGT).df
    assert both["time_s"].iloc[0] == pytest.approx(
        get_model("hierarchical").predict(hier_kernel(), SRC, TGT).df["time_s"].iloc[0])


def test_a_row_no_time_can_be_given_says_which_values_the_gpu_lacks():
    """The hand example's kernel adds and multiplies in FP32: on a target whose description
    has no FP32 ADD/MUL peak Eq. 2 has no ceiling, and the skipped row names the field."""
    no_addmul = replace(TGT, peaks={k: v for k, v in TGT.peaks.items()
                                    if k != "fp32_addmul_flops_per_s"})
    got = get_model("hierarchical").predict(hier_kernel(), SRC, no_addmul)
    assert got.df.empty
    assert [s.reason for s in got.skipped] == [
        "k0 [c] src -> tgt: hierarchical gave no finite positive time (tgt has no "
        "fp32_addmul_flops_per_s)"]


def test_roof_floor_holds_the_low_end_of_every_row(monkeypatch):
    """An FP32 kernel of the Tesla K40 (4.47 ms, 7.07 GFLOP, 69 registers a thread) projected
    to a V100: every level's time lies above the target's roofline floor, but the block-slot
    alternative of the interval did not (1.07 ms against the floor's 1.29 ms), and it was
    raised only when another row of the table was floored. Each row's low end is floored now,
    alone or in any table."""
    import pandas as pd

    from gpuproj.models import hierarchical as H
    from gpuproj.profiles.table import ProfileTable

    floors = []
    rf = H.Hierarchical._roof_floor
    monkeypatch.setattr(H.Hierarchical, "_roof_floor",
                        staticmethod(lambda *a: floors.append(rf(*a)) or floors[-1]))
    row = pd.DataFrame([{
        "kernel": "k59", "gpu": "tesla-k40", "time_s": 4.472617e-3, "flops": 7.0718898e9,
        "fp32_flops": 7.0718898e9, "fp32_fma_thread_inst": 2.7042277e9,
        "fp32_add_thread_inst": 1.6634344e9, "thread_inst": 6.0364842e9,
        "warp_inst": 3.8895385e8, "dram_bytes": 2.4528422e7, "dram_read_bytes": 1.2264211e7,
        "dram_write_bytes": 1.2264211e7, "l2_bytes": 4.3216953e7, "l1_bytes": 1.6762358e8,
        "grid_blocks": 73100, "block_threads": 128, "regs_per_thread": 69,
        "smem_per_block_bytes": 4096, "working_set_bytes": 7.1042897e6}])
    p = get_model("hierarchical-ext").predict(ProfileTable.from_frame(row), "tesla-k40",
                                              ["v100-pcie-16gb"])
    floor = floors[-1][0]
    # by hand: the V100's longest resource time is its compute time, Eqs. 2-3 as a time: the
    # FMA FLOPs at the FP32 FMA peak (14e12) plus the add FLOPs at the ADD/MUL peak (7e12),
    # over the warp usage 6.0364842e9 / (32 x 3.8895385e8) = 0.485: (3.863e-4 + 2.376e-4) /
    # 0.485 = 1.2865e-3 s (DRAM 2.45e7 / 8.14e11 and L2 4.3e7 / 2.8e12 B/s take ~0.03 ms).
    # The K40 ran slower than its own such bound (5e12 and 2.5e12: 3.6 ms < 4.47 ms), so the
    # floor is not scaled down (min(1, t_s / T_s) = 1)
    usage = 6.0364842e9 / (32 * 3.8895385e8)
    by_hand = (2 * 2.7042277e9 / 14e12 + 1.6634344e9 / 7e12) / usage
    k40_bound = (2 * 2.7042277e9 / 5e12 + 1.6634344e9 / 2.5e12) / usage
    assert k40_bound < 4.472617e-3
    assert floor == pytest.approx(by_hand, rel=1e-9) and by_hand == pytest.approx(1.2865e-3,
                                                                                 rel=1e-4)
    assert p.df["low_s"].iat[0] == pytest.approx(floor, rel=1e-12)
    assert p.df["time_s"].iat[0] > floor
    assert ("roofline floor: 1 row(s) projected below v100-pcie-16gb's own roofline time "
            "raised to it" in p.assumptions["v100-pcie-16gb"])  # its floor is not scaled down


def test_hierarchical_says_it_leaves_tensor_core_flops_unpriced():
    """Eq. 2's instruction mix has no tensor pipe: a row's tensor-core FLOPs are not priced,
    and the assumptions say so (they said nothing)."""
    k = table(time_s=[1e-3] * 2, fp32_flops=[1e9] * 2, tensor_flops=[1e12, 0.0],
              dram_bytes=[1e9] * 2)
    for method in ("hierarchical", "hierarchical-ext"):
        notes = get_model(method).predict(k, SRC, TGT).assumptions["tgt"]
        assert [n for n in notes if "tensor" in str(n)] == [
            "1 row(s) with tensor-core FLOPs: projected on their other FLOPs and their bytes, "
            "the tensor cores' work unpriced (the roofline method prices it at the tensor peak)"]
