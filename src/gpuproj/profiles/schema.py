"""The canonical kernel profile: one row per (kernel configuration, GPU), SI units in the names.

Every reader produces these columns and nothing else is required by the models; each model
states which of them it needs (``Model.requires``). A quantity the input does not carry stays
missing (NaN), never zero. ``docs/profiles.md`` is generated from this table.

Counting conventions:

- ``*_flops``: floating-point operations; an FMA counts 2, ADD/MUL/special 1. Per launch.
- ``*_inst`` ending in ``_thread_inst``: instructions executed by non-predicated threads (nvprof
  ``flop_count_*`` / ``inst_fp_32`` level). ``warp_inst``: warp-level instructions executed.
- bytes: what crossed that level (reads + writes), per launch.
- All counts are per launch; ``launches`` says how many launches the row stands for and
  ``time_s`` is the mean time of one launch.
"""

# name -> (dtype, unit, description). Order is the order of ``docs/profiles.md``.
COLUMNS = {
    # identity
    "kernel": ("str", "", "kernel name (what is compared across GPUs together with config)"),
    "config": ("str", "", "problem configuration; equal kernel+config on two GPUs = same work"),
    "problem": ("str", "", "the problem a configuration solves (a size, a shape), where known: "
                "the configurations of one kernel and problem are tuning variants, which "
                "rankings and shortlists order (``evaluate --ranking``, ``predict "
                "--shortlist``); a kernel's configurations of no problem are ranked together"),
    "gpu": ("str", "", "catalog id of the GPU the row was measured on"),
    "dtype": ("str", "", "dominant compute type: fp16, bf16, fp32, fp64, int32"),
    "launches": ("float", "", "launches this row stands for (application totals multiply by it)"),
    # time
    "time_s": ("float", "s", "mean duration of one launch"),
    # floating point, per precision and kind
    "fp64_fma_thread_inst": ("float", "", "FP64 FMA thread instructions (DFMA)"),
    "fp64_add_thread_inst": ("float", "", "FP64 ADD thread instructions"),
    "fp64_mul_thread_inst": ("float", "", "FP64 MUL thread instructions"),
    "fp32_fma_thread_inst": ("float", "", "FP32 FMA thread instructions (FFMA)"),
    "fp32_add_thread_inst": ("float", "", "FP32 ADD thread instructions"),
    "fp32_mul_thread_inst": ("float", "", "FP32 MUL thread instructions"),
    "fp32_special_thread_inst": ("float", "", "FP32 special-function thread instructions (MUFU)"),
    "fp16_fma_thread_inst": ("float", "", "FP16 FMA thread instructions (an HFMA2 counts 2 "
                             "from nvprof and SASS counts, once from Nsight Compute: docs/ncu.md)"),
    "fp16_add_thread_inst": ("float", "", "FP16 ADD thread instructions"),
    "fp16_mul_thread_inst": ("float", "", "FP16 MUL thread instructions"),
    "fp64_thread_inst": ("float", "",
                         "all FP64 thread instructions incl. compare etc. (inst_fp_64)"),
    "fp32_thread_inst": ("float", "",
                         "all FP32 thread instructions incl. compare etc. (inst_fp_32)"),
    "int_thread_inst": ("float", "", "integer thread instructions (inst_integer)"),
    "ldst_thread_inst": ("float", "", "load/store thread instructions (inst_compute_ld_st)"),
    "flops": ("float", "FLOP", "total floating-point operations, FMA = 2 (all precisions)"),
    "fp64_flops": ("float", "FLOP", "FP64 operations"),
    "fp32_flops": ("float", "FLOP", "FP32 operations"),
    "fp16_flops": ("float", "FLOP", "FP16 operations"),
    "tensor_flops": ("float", "FLOP", "tensor-core / matrix-core operations"),
    "int_ops": ("float", "", "integer operations"),
    # instructions
    "warp_inst": ("float", "", "warp-level instructions executed (inst_executed)"),
    "thread_inst": ("float", "", "thread-level instructions executed (thread_inst_executed)"),
    # memory traffic
    "dram_bytes": ("float", "B", "DRAM bytes read + written"),
    "dram_read_bytes": ("float", "B", "DRAM bytes read"),
    "dram_write_bytes": ("float", "B", "DRAM bytes written"),
    "l2_bytes": ("float", "B", "bytes read + written at L2 (from L1 and other clients)"),
    "l1_bytes": ("float", "B", "bytes read + written at L1 (global and local accesses)"),
    "l2_tex_sectors": ("float", "", ("32-byte sectors the L1/TEX units requested from L2, each "
                                     "looked up once (Nsight Compute lts__t_sectors_srcunit_tex);"
                                     " on an A100, H100 or H200 l2_bytes also counts a second "
                                     "lookup of a request that crosses to the other L2 partition."
                                     " Collected, not used by the models yet (docs/ncu.md)")),
    "shared_bytes": ("float", "B", "shared-memory bytes loaded + stored"),
    "shared_requests": ("float", "", "shared-memory load/store warp requests"),
    "shared_wavefronts": ("float", "",
                          "shared-memory wavefronts (>= requests; bank conflicts add)"),
    "shared_bank_conflicts": ("float", "", "shared-memory bank conflicts"),
    # launch
    "grid_blocks": ("float", "", "blocks in the grid"),
    "block_threads": ("float", "", "threads per block"),
    "regs_per_thread": ("float", "", "registers per thread"),
    "smem_per_block_bytes": ("float", "B", "static + dynamic shared memory per block"),
    "achieved_occupancy": ("float", "", "achieved active warps / max warps per SM (0..1)"),
    "working_set_bytes": ("float", "B", "distinct bytes the kernel touches (where known)"),
    "sm_working_set_bytes": ("float", "B", ("distinct bytes the blocks on one SM re-read: what "
                                            "its L1 must hold to serve them (where known)")),
    # clock
    "sm_clock_hz": ("float", "Hz", ("SM clock the launch ran at: elapsed SM cycles / duration "
                                    "(peaks assume the boost clock; Nsight Compute locks it to "
                                    "base by default)")),
}

REQUIRED = ("kernel", "config", "gpu", "time_s")
NUMERIC = [c for c, (t, _, _) in COLUMNS.items() if t == "float"]
STRINGS = [c for c, (t, _, _) in COLUMNS.items() if t == "str"]
