"""Benchmark pieces that need no device: statistics, catalog entries, gpu-benches parsing, the
quadrant-split view, the CUDA backend's argument packing, and the CUDA sources compiled by nvcc
for sm_90 (skipped without nvcc)."""

import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gpuproj.bench import checks, entry, stats
from gpuproj.bench.backend import kernel_source
from gpuproj.bench.checks import largest_drop
from gpuproj.bench.compare import compare, parse_roofline, parse_size_bw, parse_stream
from gpuproj.bench.sizes import FULL, QUICK, floor_pow2
from gpuproj.bench.suite import (
    COMPUTE,
    MIX_PRECISIONS,
    TIMER_BACK_TO_BACK,
    half2_bits,
    lane_width,
    mix_extra,
    vector_defines,
)
from gpuproj.errors import GpuprojError, InputError, MissingToolError
from tests.conftest import load_script, make_gpu

GPU_BENCHES = Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "gpu-benches"
ROOT = Path(__file__).resolve().parents[1]


def test_summary_by_hand():
    s = stats.summarize([4.0, 1.0, 3.0, 2.0])
    # sorted 1 2 3 4: median 2.5; 25th percentile at position 0.75 -> 1.75; 75th at 2.25 -> 3.25
    assert (s.median, s.q1, s.q3, s.min, s.max, s.n) == (2.5, 1.75, 3.25, 1.0, 4.0, 4)
    assert s.spread == pytest.approx(1.5 / 2.5)
    with pytest.raises(ValueError, match="^no samples$"):
        stats.summarize([])


def test_linear_fit_and_drop():
    a, b = stats.linear_fit([132, 264, 528], [1e-6 + 132 * 2e-9, 1e-6 + 264 * 2e-9,
                                              1e-6 + 528 * 2e-9])
    assert a == pytest.approx(1e-6) and b == pytest.approx(2e-9)
    assert largest_drop([1, 3, 2, 4]) == pytest.approx(1 / 3)
    assert largest_drop([5]) == 0.0


def test_mixbench_checks_by_hand():
    # FMA: 1e9 FLOP per run, runs of 1, 4 and 4 ms (a busy machine: median 4 ms, 0.25 TFLOP/s),
    # so the ceiling is 1 TFLOP/s; sweep bandwidth 50 GB/s: roof min(I x 5e10, 1e12)
    raw = {"measurements": [{"name": "fp32_fma", "value": 0.25e12, "work": 1e9,
                             "summary": {"n": 3, "median": 4e-3, "min": 1e-3}}],
           "sweeps": {"mixbench": [
               {"precision": "fp32", "flop_per_byte": i, "flops_per_s": f, "bytes_per_s": f / i}
               for i, f in [(1, 0.5e11), (10, 0.5e12), (100, 0.9e12), (1000, 0.45e12)]]}}
    c = checks.mixbench_checks(raw)["fp32"]
    # the bandwidth-bound points lie on their roof (the sweep's best bandwidth is theirs), the
    # third at 0.9 of the 1e12 ceiling; the median run's 0.25e12 would put it 3.6x above
    assert c["over_roof"] == pytest.approx(1.0)
    # the best point is 18x the first; the last falls to half of it
    assert c["rise"] == pytest.approx(18) and c["drop"] == pytest.approx(0.5)


def test_mixbench_checks_and_the_plot_read_the_sweep_alike():
    """One reading of the sweep: a precision without an FMA benchmark has the bandwidth roof
    alone in both (the checks stopped on a KeyError where the plot went on)."""
    from gpuproj.plots.mixbench import roofline_series

    raw = {"measurements": [{"name": "fp32_fma", "value": 0.25e12, "work": 1e9,
                             "summary": {"n": 3, "median": 4e-3, "min": 1e-3}}],
           "sweeps": {"mixbench": [
               {"precision": p, "flop_per_byte": i, "flops_per_s": f, "bytes_per_s": f / i}
               for p in ("fp32", "bf16") for i, f in [(10, 0.5e12), (1, 0.5e11)]]}}
    c = checks.mixbench_checks(raw)
    assert c["bf16"]["over_roof"] == pytest.approx(1.0) and c["bf16"]["rise"] == 10
    s = roofline_series(raw)
    assert list(s) == ["fp32", "bf16"] and list(s["bf16"]["oi"]) == [1, 10]
    # the plot draws the catalog's value, the checks the fastest run (1e12)
    assert s["fp32"]["compute_roof"] == 0.25e12 and np.isnan(s["bf16"]["compute_roof"])
    assert c["fp32"]["over_roof"] == pytest.approx(1.0)


def test_vector_lanes_per_element_type():
    # 4-byte types take the width, 8-byte ones half of it (the same register bits), paired FP16
    # none; GPUs (width 1) build without options
    assert [lane_width(t, 8) for t in (np.float32, np.uint32, np.float64, "half2")] == [8, 8, 4, 1]
    assert lane_width(np.float64, 1) == 1 and lane_width(np.float64, 2) == 1
    assert vector_defines(8) == {"VW": 8, "VW64": 4} and vector_defines(1) == {}


def test_sizes():
    assert floor_pow2(12_500_000) == 8 * 1024**2
    assert floor_pow2(1) == 1
    assert QUICK.reps < FULL.reps and QUICK.mix_ks[0] >= 1  # K = 0 moves no data (load = store)


def test_half2_bits_and_mix_extra():
    assert half2_bits(1.0) == np.uint32(0x3C003C00)
    assert mix_extra((1, 4), ["fp32", "fp64"]) == "MIX_FP32(1) MIX_FP32(4)\nMIX_FP64(1) MIX_FP64(4)"


def _raw(values, spreads=None, n=20):
    ms = []
    for name, v in values.items():
        ms.append({"name": name, "group": "g", "params": {}, "value": v, "work": v * 1e-3,
                   "rates": {"bytes": 4 * v},
                   "summary": {"n": n, "spread": (spreads or {}).get(name, 0.01),
                               "median": 1e-3, "min": 1e-3}})
    return {"measurements": ms, "date": "2026-01-02", "sizes": {"spread_limit": 0.05,
                                                                 "name": "full"},
            "device": {"name": "Dev X", "backend": "opencl", "vendor": "V", "device_type": "GPU",
                       "compute_units": 7, "warp_size": 32, "max_block_size": 1024,
                       "local_mem_bytes": 65536, "global_mem_bytes": 2**33, "l2_bytes": 2**22,
                       "clock_hz": 1.5e9, "isa": "gfx000", "architecture": "Arch"}}


def test_measured_section_maps_benchmarks_to_fields():
    raw = _raw({"fp32_fma": 2e13, "fp32_add": 1.1e13, "fp32_mul": 0.9e13, "stream_triad": 1e12,
                "smem_read": 1e12, "launch": 3e-6})
    sec = entry.measured_section(raw)
    assert sec["fp32_fma_flops_per_s"]["value"] == 2e13
    assert sec["fp32_addmul_flops_per_s"]["value"] == 0.9e13     # the lower of ADD and MUL
    assert sec["shared_bw_bytes_per_s"]["value"] == 4e12          # 4 bytes per load
    assert sec["ldst_inst_per_s"]["value"] == 1e12
    assert sec["launch_overhead_s"]["value"] == 3e-6
    assert sec["dram_bw_bytes_per_s"]["source"] == \
        "gpuproj bench stream_triad 2026-01-02 Dev X median of 20"
    assert "fp64_fma_flops_per_s" not in sec                      # not measured: absent
    assert all(e["kind"] == "measurement" for e in sec.values())


def test_a_host_timed_launch_is_left_out_and_said():
    """Until 2026-11-24 `launch` was the host's time per launch: the driver's pace, no property
    of the GPU. Such results (data/bench/) keep it in the raw file, not in the catalog entry."""
    raw = _raw({"stream_triad": 1e12, "launch": 7.5e-6})
    raw["measurements"][1]["params"] = {"timer": "host perf_counter"}
    assert "launch_overhead_s" not in entry.measured_section(raw)
    (flag,) = [f for f in entry.check(raw) if f["problem"] == "host_timed"]
    assert flag["name"] == "launch" and "left out of the catalog entry" in flag["text"]
    raw["measurements"][1]["params"] = {"timer": TIMER_BACK_TO_BACK}
    assert entry.measured_section(raw)["launch_overhead_s"]["value"] == 7.5e-6
    assert not [f for f in entry.check(raw) if f["problem"] == "host_timed"]


def test_new_gpu_file_is_complete_and_loads(tmp_path):
    from gpuproj.catalog import read_gpu_file

    raw = _raw({"stream_triad": 1e12})
    data = entry.gpu_file(raw, None)
    assert data["id"] == "dev-x" and data["isa"] == "gfx000"
    p = tmp_path / "dev-x.yaml"
    p.write_text(entry.dump_yaml(data))
    g = read_gpu_file(p)
    assert g.value("sm_count") == 7 and g.value("warp_size") == 32
    assert g.value("l2_size_bytes") == 2**22
    assert g.measured("dram_bw_bytes_per_s") == 1e12


def test_check_flags_above_peak_and_spread():
    raw = _raw({"stream_triad": 1e12, "fp32_fma": 1e13}, spreads={"fp32_fma": 0.2})
    gpu = make_gpu("g", peak={"dram_bw_bytes_per_s": 0.9e12, "fp32_fma_flops_per_s": 2e13})
    flags = entry.check(raw, gpu)
    assert [(f.get("field") or f.get("name"), f["problem"]) for f in flags] == [
        ("dram_bw_bytes_per_s", "above_peak"), ("fp32_fma", "wide_spread")]


def test_check_flags_a_cache_slower_than_the_memory_behind_it():
    # PoCL on a 2-core AMD EPYC: the L2 working-set kernel read 8.5 GB/s, STREAM 41 GB/s
    raw = _raw({"l1_read": 5.7e10, "l2_read": 8.5e9, "stream_read": 4.1e10})
    flags = entry.check(raw)
    assert [(f["field"], f["problem"]) for f in flags] == [("l2_bw_bytes_per_s",
                                                            "below_next_level")]
    assert "8.5e+09 is below dram_read_bw_bytes_per_s = 4.1e+10" in flags[0]["text"]
    assert entry.check(_raw({"l1_read": 5e10, "l2_read": 4.2e10, "stream_read": 4.1e10})) == []


def test_slug():
    assert entry.slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"


@pytest.mark.skipif(not GPU_BENCHES.is_dir(), reason="shared gpu-benches data not present")
def test_parse_gpu_benches_files():
    st = parse_stream(GPU_BENCHES / "gpu-stream" / "h200.txt")
    # best rows, read by hand from the file (GB/s): init 3898, read 2756, scale 3165, triad 3534
    assert st["init"] == 3898e9 and st["read"] == 2756e9
    assert st["scale"] == 3165e9 and st["triad"] == 3534e9
    rows = parse_size_bw(GPU_BENCHES / "gpu-l2-cache" / "h200.txt")
    assert rows[0] == (1536 * 1024, 13526.6e9)  # "1536 kB": 1536 x 1024 B
    rows = parse_size_bw(GPU_BENCHES / "gpu-cache" / "h100_pcie.txt")
    assert rows[0] == (2 * 1024, 24476.7e9)
    rf = parse_roofline(GPU_BENCHES / "gpu-roofline" / "h200.txt")
    assert rf["flops_per_s"] == 42558e9


@pytest.mark.skipif(not GPU_BENCHES.is_dir(), reason="shared gpu-benches data not present")
def test_compare_with_the_real_h200_files():
    # a working set of 12 MB is set against the sweep's closest size: 11264 kB = 11.534 MB,
    # 0.466 MB below it (9914.4 GB/s), not 12288 kB = 12.583 MB, 0.583 MB above (read as
    # 12.288 MB, with kB taken for 1000 B, it was that one); our best FP32 mixbench point
    # against gpu-roofline's best, 42558 GF/s
    raw = {"measurements": [{"name": "stream_triad", "value": 3.5e12},
                            {"name": "l2_read", "value": 9e12,
                             "params": {"working_set_bytes": 12e6}}],
           "sweeps": {"mixbench": [{"precision": "fp32", "flops_per_s": 40e12},
                                   {"precision": "fp32", "flops_per_s": 50e12},
                                   {"precision": "fp64", "flops_per_s": 60e12}]}}
    rows = {r["metric"]: r for r in compare(raw, GPU_BENCHES, "h200")}
    assert set(rows) == {"stream_triad", "l2_read", "mixbench_best_flops"}
    assert rows["stream_triad"]["theirs"] == 3534e9
    assert rows["l2_read"]["theirs"] == 9914.4e9
    assert rows["l2_read"]["theirs_source"] == "gpu-l2-cache/h200.txt at 11.5 MB"
    assert rows["mixbench_best_flops"]["ours"] == 50e12
    assert rows["mixbench_best_flops"]["ratio"] == pytest.approx(50e12 / 42558e9)


@pytest.mark.skipif(not GPU_BENCHES.is_dir(), reason="shared gpu-benches data not present")
def test_compare_names_the_l1_sweep_size_in_kb():
    raw = {"measurements": [{"name": "l1_read", "value": 2e13,
                             "params": {"working_set_bytes": 64e3}}], "sweeps": {}}
    [row] = compare(raw, GPU_BENCHES, "h100_pcie")
    assert row["metric"] == "l1_read" and row["theirs"] == 25204.7e9
    # 64e3 B: 1536 B from the "64 kB" row (65536 B), 2560 B from "60 kB" (61440 B)
    assert row["theirs_source"] == "gpu-cache/h100_pcie.txt at 65.5 kB"


@pytest.mark.skipif(not GPU_BENCHES.is_dir(), reason="shared gpu-benches data not present")
def test_compare_script_writes_the_table(tmp_path, capsys):
    # what scripts/bench_on_gpu.sh runs after `gpuproj bench` on the GPU machine, on the
    # H200's raw result in data/bench
    raw = ROOT / "data" / "bench" / "h200-sxm-141gb" / "h200-sxm-141gb.json"
    out = tmp_path / "compare.md"
    script = load_script("compare_gpu_benches")
    script.main([str(raw), "--gpu-benches", str(GPU_BENCHES), "--out", str(out)])
    text = out.read_text()
    assert text in capsys.readouterr().out
    assert text.startswith("### NVIDIA H200 (2026-11-24) against gpu-benches h200")
    assert "| stream_triad | 4.369e+12 | 3.534e+12 | 1.236 | gpu-stream/h200.txt best triad |" \
        in text
    with pytest.raises(SystemExit, match="gpu-benches has no data for tesla-t4"):
        script.main([str(raw), "--gpu", "t4"])
    # bad input: one line, not a traceback
    with pytest.raises(SystemExit, match="compare: .*no gpu-benches file for 'h200' here"):
        script.main([str(raw), "--gpu-benches", str(tmp_path)])
    bad = tmp_path / "raw.json"
    bad.write_text("{}")
    with pytest.raises(SystemExit, match="compare: .*raw.json"):
        script.main([str(bad)])


# Hand-made files in gpu-benches' layouts (the columns and spacing of its gpu-l2-cache/h200.txt,
# gpu-cache/h100_pcie.txt and gpu-roofline/h200.txt; the values are invented), so the
# comparison is tested where ../shared is absent. gpu-l2-cache: per-block size, total data set
# (the size the parser reads), time, spread, bandwidth, four more GB/s columns.
HAND_L2 = ("     data set   exec time     spread       Eff. bw\n"
           "       512 kB      6144 kB         5ms       0.1%    9000.0 GB/s        0 GB/s"
           "      0 GB/s      0 GB/s      0 GB/s \n"
           "       512 kB     12288 kB         5ms       0.2%    8000.0 GB/s        0 GB/s"
           "      0 GB/s      0 GB/s      0 GB/s \n"
           "       512 kB     24576 kB         6ms       0.1%    5000.0 GB/s       12 GB/s"
           "      0 GB/s      3 GB/s      0 GB/s \n")
HAND_L1 = ("     data set   exec time     spread        Eff. bw       DRAM read      DRAM write"
           "         L2 read       L2 store\n"
           "        32 kB         4ms       0.1%   20000.0 GB/s         0 GB/s          0 GB/s"
           "          0 GB/s          0 GB/s \n"
           "        64 kB         4ms       0.3%   25000.0 GB/s         0 GB/s          0 GB/s"
           "          0 GB/s          0 GB/s \n"
           "       128 kB         4ms       0.2%   15000.0 GB/s         0 GB/s          0 GB/s"
           "          1 GB/s          0 GB/s \n")
# gpu-roofline: a list of block counts, then a line per intensity between blank lines; the
# best GB/s (3759, at 0.25 Fl/B) and the best GF/s (42558, at 100.25 Fl/B) are on different
# lines
HAND_ROOFLINE = ("8\n16\n\n"
                 "0 1056 blocks     0 its      0.250 Fl/B       3759 GB/s       940 GF/s"
                 "   1980 Mhz   572 W   57°C\n\n"
                 "0 1056 blocks   400 its      100.250 Fl/B        425 GB/s     42558 GF/s"
                 "   1980 Mhz   398 W   63°C\n\n")


def _hand_gpu_benches(root, stem):
    for folder, text in (("gpu-l2-cache", HAND_L2), ("gpu-cache", HAND_L1),
                         ("gpu-roofline", HAND_ROOFLINE)):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / f"{stem}.txt").write_text(text)


def test_compare_with_hand_made_gpu_benches_files(tmp_path):
    _hand_gpu_benches(tmp_path, "x")
    # kB = 1024 B (gpu-l2-cache/main.cu and gpu-cache/main.cu print blockDV / 1024 as "kB"),
    # GB/s = 1e9 B/s; the total data set, not the 512 kB per block
    assert parse_size_bw(tmp_path / "gpu-l2-cache" / "x.txt") == [
        (6144 * 1024, 9000e9), (12288 * 1024, 8000e9), (24576 * 1024, 5000e9)]
    assert parse_size_bw(tmp_path / "gpu-cache" / "x.txt") == [
        (32 * 1024, 20000e9), (64 * 1024, 25000e9), (128 * 1024, 15000e9)]
    # the best of each column over all lines, not the last line's
    assert parse_roofline(tmp_path / "gpu-roofline" / "x.txt") == {
        "flops_per_s": 42558e9, "bytes_per_s": 3759e9}
    raw = {"measurements": [{"name": "l2_read", "value": 9e12,
                             "params": {"working_set_bytes": 11e6}},
                            {"name": "l1_read", "value": 2e13,
                             "params": {"working_set_bytes": 60e3}}],
           "sweeps": {"mixbench": [{"precision": "fp32", "flops_per_s": 40e12},
                                   {"precision": "fp32", "flops_per_s": 50e12},
                                   {"precision": "fp64", "flops_per_s": 60e12}]}}
    rows = compare(raw, tmp_path, "x")
    assert [r["metric"] for r in rows] == ["l2_read", "l1_read", "mixbench_best_flops"]
    l2, l1, mix = rows
    # 11 MB lies 4.709 MB above 6144 kB = 6.291 MB, 1.583 MB below 12288 kB = 12.583 MB,
    # 14.166 MB below 24576 kB = 25.166 MB
    assert (l2["ours"], l2["theirs"]) == (9e12, 8000e9)
    assert l2["ratio"] == pytest.approx(9e12 / 8000e9)  # 1.125
    assert l2["theirs_source"] == "gpu-l2-cache/x.txt at 12.6 MB"
    # 9.3 MB lies 3.009 MB above 6291456 B and 3.283 MB below 12582912 B: the 6144 kB row
    # (read as 6.144 and 12.288 MB it was the other one, 2.988 MB away against 3.156)
    raw["measurements"][0]["params"]["working_set_bytes"] = 9.3e6
    near = compare(raw, tmp_path, "x")[0]
    assert (near["theirs"], near["theirs_source"]) == (9000e9, "gpu-l2-cache/x.txt at 6.29 MB")
    raw["measurements"][0]["params"]["working_set_bytes"] = 11e6
    # 60 kB: 27.2 kB from 32 x 1024 B, 5.5 kB from 64 x 1024 = 65.5 kB, 71.1 kB from 131.1 kB
    assert (l1["ours"], l1["theirs"]) == (2e13, 25000e9)
    assert l1["ratio"] == pytest.approx(2e13 / 25000e9)  # 0.8
    assert l1["theirs_source"] == "gpu-cache/x.txt at 65.5 kB"
    # the best FP32 point (the FP64 one, higher, is not FP32) against the best GF/s
    assert (mix["ours"], mix["theirs"]) == (50e12, 42558e9)
    assert mix["ratio"] == pytest.approx(50e12 / 42558e9)
    assert mix["theirs_source"] == "gpu-roofline/x.txt best GF/s"


def test_compare_script_on_hand_made_files(tmp_path, capsys):
    """scripts/compare_gpu_benches.py with --gpu-benches on the hand-made files, named for the
    H200 (the stem the script looks up for the catalog's h200-sxm-141gb), and the committed
    H200 raw result with the cache and mixbench figures of the test above."""
    import json

    bench = tmp_path / "gpu-benches"
    _hand_gpu_benches(bench, "h200")
    raw = json.loads((ROOT / "data" / "bench" / "h200-sxm-141gb" / "h200-sxm-141gb.json")
                     .read_text())
    ms = {m["name"]: m for m in raw["measurements"]}
    ms["l2_read"]["value"], ms["l2_read"]["params"]["working_set_bytes"] = 9e12, 11_000_000
    ms["l1_read"]["value"], ms["l1_read"]["params"]["working_set_bytes"] = 2e13, 60_000
    fp32 = next(p for p in raw["sweeps"]["mixbench"] if p["precision"] == "fp32")
    fp64 = next(p for p in raw["sweeps"]["mixbench"] if p["precision"] == "fp64")
    raw["sweeps"]["mixbench"] = [{**fp32, "flops_per_s": 40e12}, {**fp32, "flops_per_s": 50e12},
                                 {**fp64, "flops_per_s": 60e12}]
    path = tmp_path / "h200.json"
    path.write_text(json.dumps(raw))
    out = tmp_path / "compare.md"
    script = load_script("compare_gpu_benches")
    script.main([str(path), "--gpu-benches", str(bench), "--out", str(out)])
    text = out.read_text()
    assert text in capsys.readouterr().out
    # no gpu-stream file here: no stream row although the raw result has stream_triad
    assert text == (
        "### NVIDIA H200 (2026-11-24) against gpu-benches h200\n\n"
        "| metric | gpuproj | gpu-benches | ratio | gpu-benches row |\n"
        "|---|---|---|---|---|\n"
        "| l2_read | 9e+12 | 8e+12 | 1.125 | gpu-l2-cache/h200.txt at 12.6 MB |\n"
        "| l1_read | 2e+13 | 2.5e+13 | 0.800 | gpu-cache/h200.txt at 65.5 kB |\n"
        "| mixbench_best_flops | 5e+13 | 4.256e+13 | 1.175 | gpu-roofline/h200.txt best GF/s |\n")
    # files of another GPU's stem only: one line naming what it looked for, no table
    other = tmp_path / "other"
    _hand_gpu_benches(other, "x")
    with pytest.raises(SystemExit, match=r"^compare: .*no gpu-benches file for 'h200' here "
                                         r"\(looked for gpu-stream/h200.txt, "):
        script.main([str(path), "--gpu-benches", str(other)])
    # a file that is not gpu-benches' layout
    (bench / "gpu-l2-cache" / "h200.txt").write_text("hello\n")
    with pytest.raises(SystemExit, match=r"^compare: .*h200.txt: no '<size> kB <time>ms "
                                         r"<spread>% <bw> GB/s' rows$"):
        script.main([str(path), "--gpu-benches", str(bench)])


def test_parse_rejects_other_files(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("hello\n")
    with pytest.raises(InputError, match=r"x.txt, row 1: not a gpu-stream file \(no blockSize "
                                         r"header\)"):
        parse_stream(p)
    with pytest.raises(InputError, match=r"x.txt: no '<size> kB <time>ms <spread>% <bw> GB/s' "
                                         r"rows"):
        parse_size_bw(p)


def test_compare_rows(tmp_path):
    (tmp_path / "gpu-stream").mkdir()
    (tmp_path / "gpu-stream" / "x.txt").write_text(
        "blockSize   threads       %occ  |                init       read       scale     triad\n"
        "       32        4224      3 %  |  GB/s:         100        200        300       400\n"
        "       64        8448    6.2 %  |  GB/s:         150        100        300       500\n")
    raw = {"measurements": [{"name": "stream_triad", "value": 450e9}], "sweeps": {}}
    rows = compare(raw, tmp_path, "x")
    assert rows == [{"metric": "stream_triad", "ours": 450e9, "theirs": 500e9, "ratio": 0.9,
                     "theirs_source": "gpu-stream/x.txt best triad"}]


def test_quadrant_split_geometry(tmp_path):
    from gpuproj.plots import quadrant

    a = make_gpu("a", peak={"dram_bw_bytes_per_s": 2e12, "fp32_fma_flops_per_s": 20e12})
    b = make_gpu("b", peak={"dram_bw_bytes_per_s": 1e12, "fp32_fma_flops_per_s": 40e12},
                 measured={"dram_bw_bytes_per_s": 0.9e12})
    pts, _ = quadrant.points_from_gpus([a, b])
    assert [(p["dram_bw_bytes_per_s"], p["compute_ops_per_s"], p["kind"]) for p in pts] == [
        (2e12, 20e12, "peak"), (1e12, 40e12, "peak")]
    m = quadrant.points_from_gpus([b], which="measured")[0][0]
    assert (m["dram_bw_bytes_per_s"], m["kind"]) == (0.9e12, "measured+peak")
    # ridge points 10 and 40 FLOP/B: a kernel at I = 20 is compute-bound on a, memory on b
    assert quadrant.classify(2e12, 20e12, 20) == "compute"
    assert quadrant.classify(1e12, 40e12, 20) == "memory"
    assert quadrant.attainable(1e12, 40e12, 20) == 20e12
    from tests.conftest import table

    rows = table(time_s=[1e-3, 1e-3], flops=[4e9, 1e9], dram_bytes=[2e8, 0.0])
    assert quadrant.kernels_from_rows(rows)[0] == [("k0 [c]", 20.0)]
    fig = quadrant.data_figure(quadrant.quadrant_data([a, b], rows))
    from gpuproj.plots import _style

    assert _style.save(fig, tmp_path / "q.png").stat().st_size > 5000
    with pytest.raises(GpuprojError, match=r"no GPU has both a DRAM bandwidth and a fp32 "
                                           r"compute throughput \(C \(c\): the catalog has no "
                                           r"dram_bw_bytes_per_s and no fp32_fma_flops_per_s\)"):
        quadrant.quadrant_data([make_gpu("c")], rows)


def test_cuda_argument_packing():
    from gpuproj.bench.cuda import CudaBackend, DeviceBuffer

    _store, ptrs = CudaBackend._params((DeviceBuffer(0x1234, 8), np.float32(2.5), np.uint32(7)))
    assert ctypes.cast(ptrs[0], ctypes.POINTER(ctypes.c_uint64)).contents.value == 0x1234
    assert ctypes.cast(ptrs[1], ctypes.POINTER(ctypes.c_float)).contents.value == 2.5
    assert ctypes.cast(ptrs[2], ctypes.POINTER(ctypes.c_uint32)).contents.value == 7
    with pytest.raises(TypeError):
        CudaBackend._params((2.5,))


def test_no_device_message(monkeypatch):
    from gpuproj.bench import backend, cuda, opencl

    def no_cuda(*a, **k):
        raise MissingToolError("no NVIDIA driver (libcuda) found")
    monkeypatch.setattr(cuda, "CudaBackend", no_cuda)
    monkeypatch.setattr(opencl, "list_devices", list)
    with pytest.raises(MissingToolError, match="no device to benchmark.*pip install"):
        backend.open_backend("auto")
    with pytest.raises(GpuprojError, match="no OpenCL device found"):
        backend.open_backend("opencl")


def test_a_backend_that_is_there_but_fails_gets_no_install_advice(monkeypatch):
    """A bad --device (or a compiler failure) on an installed OpenCL is said as it is, not as
    'install pyopencl'."""
    from gpuproj.bench import backend, cuda, opencl

    def no_cuda(*a, **k):
        raise MissingToolError("no NVIDIA driver (libcuda) found")
    monkeypatch.setattr(cuda, "CudaBackend", no_cuda)
    monkeypatch.setattr(opencl, "_import_cl", lambda: None)
    monkeypatch.setattr(opencl, "list_devices", lambda: [_Dev("PoCL", "pthread-CPU", 2)])
    with pytest.raises(GpuprojError) as e:
        backend.open_backend("auto", "7")
    assert not isinstance(e.value, MissingToolError) and "pip install" not in str(e.value)
    assert "OpenCL: OpenCL device 7 does not exist (there are 1)" in str(e.value)


class _Dev:
    def __init__(self, platform, name, type_):
        self.platform = type("P", (), {"name": platform})()
        self.name, self.type = name, type_


def test_a_simulator_is_measured_only_when_named():
    from gpuproj.bench.opencl import pick_device

    sim = _Dev("Oclgrind", "Oclgrind Simulator", 0xFFFFFFFF)  # it reports every device type
    cpu = _Dev("Portable Computing Language", "pthread-AMD EPYC", 2)
    assert pick_device([sim, cpu]) is cpu
    assert pick_device([sim, cpu], "oclgrind") is sim and pick_device([sim, cpu], "0") is sim
    assert pick_device([sim, cpu], "portable") is cpu  # the platform's name matches too
    with pytest.raises(GpuprojError, match="the only OpenCL device is a simulator"):
        pick_device([sim])
    with pytest.raises(GpuprojError, match="no OpenCL device matches 'nvidia'"):
        pick_device([sim, cpu], "nvidia")


def test_sources_define_the_same_kernels():
    names = {}
    for ext, pat in (("cl", r"__kernel void (\w+)\("),
                     ("cu", r'extern "C" __global__ void (\w+)\(')):
        text = kernel_source("compute", ext) + kernel_source("memory", ext)
        found = set(re.findall(pat, text))
        # macro-generated kernels: FLOAT_KERNEL(name, ...)
        found |= set(re.findall(r"^FLOAT_KERNEL\((\w+),", text, flags=re.MULTILINE))
        names[ext] = found - {"NAME"}
    assert names["cl"] == names["cu"]
    assert set(COMPUTE) <= names["cu"]
    for p in MIX_PRECISIONS:
        for ext in ("cl", "cu"):
            assert f"MIX_{p.upper()}(K)" in kernel_source("mixbench", ext)


def test_opencl_sources_get_the_shared_header_inlined():
    header = kernel_source("vector_width", "h")
    for source in ("compute", "mixbench"):
        text = kernel_source(source, "cl")
        assert header in text
        assert '#include "' not in text.replace(header, "")


NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                if Path("/usr/local/cuda/bin/nvcc").is_file() else None)


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize("source", ["compute", "memory", "mixbench", "hold"])
def test_cuda_sources_compile_for_sm90(source, tmp_path):
    text = kernel_source(source, "cu")
    if source == "mixbench":
        text += "\n" + mix_extra(FULL.mix_ks, MIX_PRECISIONS) + "\n"
    src = tmp_path / f"{source}.cu"
    src.write_text(text)
    obj = tmp_path / f"{source}.o"
    proc = subprocess.run([NVCC, "-arch=sm_90", "-c", "-o", str(obj), str(src)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert obj.stat().st_size > 0
    if source != "compute":
        return
    # the FP32 FMA loop is FFMA and nothing else of note (SASS, where cuobjdump is installed)
    try:
        import nvidia.cu13 as cu
        dump = Path(cu.__path__[0]) / "bin" / "cuobjdump"
    except ImportError:
        dump = Path(shutil.which("cuobjdump") or "/nonexistent")
    if not dump.is_file():
        return
    sass = subprocess.run([str(dump), "-sass", "-fun", "fp32_fma", str(obj)],
                          capture_output=True, text=True, check=False).stdout
    ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9]+)", sass)
    # cuobjdump is here: no instructions read means no fp32_fma in the object or a listing
    # the pattern no longer reads, either way a failure, never a pass without a check
    assert ops, f"no SASS instructions of fp32_fma read from cuobjdump:\n{sass[:2000]}"
    assert ops.count("FFMA") >= 128          # 16 steps x 8 chains per loop iteration
    assert ops.count("FFMA") >= 0.7 * len(ops)


def test_an_opencl_build_that_fails_on_an_unknown_cpu_says_so_in_one_line():
    # PoCL 3.0 (LLVM 14) on AMD Zen 5: LLVM names the CPU 'generic', its compiler refuses it
    from gpuproj.bench.opencl import build_failure

    log = ("clBuildProgram failed: BUILD_PROGRAM_FAILURE\n\nBuild on <pyopencl.Device "
           "'pthread-AMD EPYC'>:\n\nerror: unknown target CPU 'generic'\nDevice failed\n")
    text = build_failure(RuntimeError(log))
    assert "\n" not in text and "does not know this CPU (it calls it 'generic')" in text
    assert build_failure(RuntimeError("syntax error")) == "syntax error"


def test_an_opencl_cpu_measures_at_the_widest_vector_width_that_builds(monkeypatch):
    # PoCL 3.0 on an AVX-512 Zen 4 reports width 16 but compiles for a Zen 3: at VW = 16 it
    # gives compute.cl no kernels, and the process that built it aborts when it exits, so each
    # width is tried in a child process, narrowest last
    from gpuproj.bench import opencl

    tried = []

    def child(cmd, **kw):
        w = int(cmd[-1])
        tried.append(w)
        return subprocess.CompletedProcess(cmd, 134, stdout="9\n" if w <= 4 else "0\n")

    b = object.__new__(opencl.OpenCLBackend)
    b.device = "cpu"
    monkeypatch.setattr(opencl, "list_devices", lambda: ["gpu", "cpu"])
    monkeypatch.setattr(subprocess, "run", child)
    assert b._widest_vector(16) == 4 and tried == [16, 8, 4]
    assert b._widest_vector(1) == 1 and tried == [16, 8, 4]  # width 1 needs no probe


def test_the_cubin_prebuild_helper_says_bad_input_in_one_line(tmp_path, capsys, monkeypatch):
    from gpuproj.bench import cuda

    with pytest.raises(SystemExit) as e:
        cuda.main(["--sizes", "fast", "--out", str(tmp_path)])
    assert e.value.code == 2 and "invalid choice: 'fast'" in capsys.readouterr().err
    monkeypatch.setenv("GPUPROJ_NVCC", str(tmp_path / "nvcc"))
    monkeypatch.setattr(cuda, "CACHE_DIR", tmp_path / "cache")
    (tmp_path / "nvcc").write_text("#!/bin/sh\necho \"nvcc fatal : Unsupported gpu "
                                   "architecture 'sm_999'\" >&2\nexit 1\n")
    (tmp_path / "nvcc").chmod(0o755)
    with pytest.raises(SystemExit) as e:
        cuda.main(["--arch", "sm_999", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err == ("gpuproj: error: nvcc failed for sm_999: nvcc fatal : "
                                         "Unsupported gpu architecture 'sm_999'\n")


def test_an_nvcc_named_in_the_environment_that_does_not_exist_is_an_error(tmp_path,
                                                                          monkeypatch):
    """A typo in $GPUPROJ_NVCC once compiled with the nvcc on PATH instead, without a word."""
    from gpuproj.bench import cuda

    path_nvcc = tmp_path / "bin" / "nvcc"
    path_nvcc.parent.mkdir()
    path_nvcc.write_text('#!/bin/sh\n[ "$1" = --version ] && exit 0\n'
                         'for a; do out=$b; b=$a; done; echo cubin > "$out"\n')
    path_nvcc.chmod(0o755)
    monkeypatch.setenv("PATH", f"{path_nvcc.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GPUPROJ_NVCC", str(tmp_path / "nvvc"))
    monkeypatch.delenv("GPUPROJ_BENCH_CUBIN_DIR", raising=False)
    monkeypatch.setattr(cuda, "CACHE_DIR", tmp_path / "cache")
    with pytest.raises(MissingToolError, match=r"GPUPROJ_NVCC=.*nvvc is not an executable"):
        cuda.compile_cubin("__global__ void k() {}", "sm_90")


def test_compare_refuses_a_folder_without_gpu_benches_files(tmp_path):
    raw = {"measurements": [{"name": "stream_triad", "value": 450e9}], "sweeps": {}}
    with pytest.raises(InputError, match="no gpu-benches file for 'h200' here"):
        compare(raw, tmp_path, "h200")
