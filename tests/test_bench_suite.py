"""The whole benchmark suite, end to end, at quick sizes on the CPU's OpenCL device (PoCL), and
the consistency of every measured figure. On an NVIDIA GPU the same checks run on CUDA with the
datasheet thresholds of the issue (marked ``gpu``)."""

import json
import math
import re

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import opencl_unusable, run_cli

from gpuproj.bench.checks import fastest_rate, mixbench_checks
from gpuproj.bench.entry import FIELD_MAP, check
from gpuproj.catalog import read_gpu_file
from gpuproj.catalog.schema import THROUGHPUT_FIELDS


def _opencl_device_or_skip():
    why = opencl_unusable()
    if why:
        pytest.skip(why)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """`gpuproj bench --backend opencl --quick` once; (catalog file, raw result, plots dir)."""
    _opencl_device_or_skip()
    from gpuproj.cli.main import cli

    d = tmp_path_factory.mktemp("bench")
    out = d / "cpu.yaml"
    res = CliRunner().invoke(cli, ["bench", "--backend", "opencl", "--quick", "--out", str(out),
                                   "--plots", str(d / "plots"), "-q"])
    assert res.exit_code == 0, res.output + repr(res.exception)
    raw = json.loads(out.with_suffix(".json").read_text())
    return out, raw, d / "plots"


def by_name(raw):
    return {m["name"]: m for m in raw["measurements"]}


def test_result_file_loads_into_the_catalog(run):
    out, raw, _ = run
    gpu = read_gpu_file(out)
    expected = {f for f, (names, _) in FIELD_MAP.items()
                if all(n in by_name(raw) for n in names)}
    assert expected == set(gpu.measureds)
    # everything but FP16 (PoCL's CPU device has no cl_khr_fp16) is measured
    assert set(FIELD_MAP) - expected <= {"fp16_fma_flops_per_s"}
    assert set(gpu.measureds) <= set(THROUGHPUT_FIELDS)
    pat = re.compile(r"^gpuproj bench \S+.* \d{4}-\d\d-\d\d .+ median of \d+$")
    for e in gpu.measureds.values():
        assert e.kind == "measurement"
        assert pat.match(e.source), e.source
        assert e.value > 0
    assert gpu.value("sm_count") == raw["device"]["compute_units"]
    assert gpu.values["sm_count"].kind == "measurement"
    # every checked kernel computed right before it was timed
    assert raw["checks"] and all(c["ok"] for c in raw["checks"])


def test_catalog_path_and_ceilings(run, monkeypatch):
    from gpuproj import catalog

    out, raw, _ = run
    monkeypatch.setenv("GPUPROJ_GPU_PATH", str(out.parent))
    gpu = catalog.load_catalog().resolve(read_gpu_file(out).id)
    c = gpu.ceiling("dram_bw_bytes_per_s")
    assert c.kind == "measured"
    assert c.value == pytest.approx(by_name(raw)["stream_triad"]["value"])


def test_result_drives_predict(run, tmp_path):
    from gpuproj.cli.main import cli

    out, raw, _ = run
    prof = tmp_path / "p.csv"
    prof.write_text("kernel,config,gpu,time_s,flops,dram_bytes\n"
                    "stream,n=1e8,v100-sxm2-32gb,1.0e-3,2.0e8,8.0e8\n")
    res = CliRunner().invoke(cli, ["predict", str(prof), "--target", str(out), "--json"])
    assert res.exit_code == 0, res.output
    preds = json.loads(res.output)["predictions"]
    assert len(preds) == 1
    # DRAM-bound on the target: at least bytes / measured triad bandwidth
    assert preds[0]["time_s"] >= 0.99 * 8.0e8 / by_name(raw)["stream_triad"]["value"]


def test_raw_samples_and_medians(run):
    _, raw, _ = run
    reps = raw["sizes"]["reps"]
    for m in raw["measurements"]:
        s = np.array(m["samples_s"])
        assert (s > 0).all()
        assert m["summary"]["median"] == pytest.approx(float(np.median(s)))
        if m["group"] != "latency":
            assert len(s) == reps
        v = m["summary"]["median"] / m["work"] if m["per_item"] else m["work"] / m["summary"][
            "median"]
        assert m["value"] == pytest.approx(v)
    for key in ("device", "sizes", "tool", "clocks_before", "date"):
        assert key in raw
    assert raw["tool"]["backend"] == "opencl"


def test_fma_rate_is_twice_the_instruction_rate(run):
    ms = by_name(run[1])
    for name in ("fp32_fma", "fp64_fma", "int32_mad"):
        assert ms[name]["value"] == pytest.approx(2 * ms[name]["rates"]["instructions"])
    for name in ("fp32_add", "fp32_mul", "int32_add", "sfu_rsqrt"):
        assert ms[name]["value"] == pytest.approx(ms[name]["rates"]["instructions"])
    p = ms["fp32_fma"]["params"]
    inst = (p["blocks"] * p["block"] * p["vector_width"] * p["iters"] * p["chains"] * p["unroll"])
    assert ms["fp32_fma"]["counts"]["instructions"] == inst


def test_addmul_field_is_the_lower_of_add_and_mul(run):
    out, raw, _ = run
    ms, gpu = by_name(raw), read_gpu_file(out)
    assert gpu.measured("fp32_addmul_flops_per_s") == pytest.approx(
        min(ms["fp32_add"]["value"], ms["fp32_mul"]["value"]))
    assert gpu.measured("shared_bw_bytes_per_s") == pytest.approx(
        4 * gpu.measured("ldst_inst_per_s"))


def test_triad_below_the_copy_ceiling(run):
    ms = by_name(run[1])
    assert ms["stream_triad"]["params"]["arrays_read"] == 2
    assert ms["stream_triad"]["work"] == 3 * ms["stream_triad"]["params"]["array_bytes"]
    ceiling = max(fastest_rate(ms[n]) for n in ("stream_copy", "stream_scale", "stream_read",
                                                 "stream_add", "l1_read", "l2_read"))
    assert fastest_rate(ms["stream_triad"]) <= 1.1 * ceiling


def test_stream_arrays_and_cache_working_sets(run):
    ms = by_name(run[1])
    l1 = ms["l1_read"]["params"]["working_set_bytes"]
    l2 = ms["l2_read"]["params"]["working_set_bytes"]
    assert l1 < l2 < ms["stream_triad"]["params"]["array_bytes"]
    assert ms["stream_triad"]["params"]["buffer_sets"] == 2  # inputs rotated


def test_mixbench_sweep_rises_toward_the_roof(run):
    raw = run[1]
    pts = raw["sweeps"]["mixbench"]
    for q in pts:
        assert q["flop_per_byte"] == pytest.approx(q["flops"] / q["bytes"])
    checks = mixbench_checks(raw)
    assert set(checks) == {"fp32", "fp64"}
    for p, c in checks.items():
        assert c["rise"] > 2, (p, c)          # throughput grows with intensity
        # and does not collapse: PoCL on a 2-core AMD EPYC falls 26-34 % at the highest
        # intensity (64 dependent FMAs per element: latency, not a fault), and a shared runner
        # halving that median made it 65 % once in CI, hence 0.8 (the GPU test uses 0.1)
        assert c["drop"] < 0.8, (p, c)
        # never far above min(I x bandwidth, FMA rate of the fastest FMA run): 1.0 on an idle
        # 2-core AMD EPYC, where a shared runner can halve a sweep median at random, hence the
        # factor 3 (the GPU test below uses 1.05)
        assert c["over_roof"] < 3.0, (p, c)


def test_working_set_sweep_shows_caches(run):
    raw = run[1]
    pts = raw["sweeps"]["working_set"]
    sizes = [p["working_set_bytes"] for p in pts]
    assert sizes == sorted(sizes) and len(sizes) >= 4
    # the smallest quarter of the working sets read at least about as fast as the largest
    bw = [p["bytes_per_s"] for p in pts]
    q = len(bw) // 4
    assert np.mean(bw[:q]) > 0.8 * np.mean(bw[-q:])


def test_shared_memory_bank_conflicts_do_not_help(run):
    ms = by_name(run[1])
    assert ms["smem_read_conflict"]["params"]["stride_words"] == 32
    # a CPU has no banks: only "not faster", with a noise margin wide enough for a loaded
    # 2-core machine (1.5x between medians failed once there while other work ran)
    assert fastest_rate(ms["smem_read_conflict"]) <= 2.0 * fastest_rate(ms["smem_read"])


def test_overheads_and_latencies(run):
    raw = run[1]
    ms = by_name(raw)
    assert 0 < ms["launch"]["value"] < 1e-2
    bc = raw["sweeps"]["block_cost"]
    assert math.isfinite(bc["per_block_s"]) and len(bc["points"]) >= 3
    lat = {p["level"]: p["latency_s"] for p in raw["sweeps"]["latency"]}
    assert 0 < lat["l1"] < 1e-6
    assert lat["dram"] >= 0.5 * lat["l1"]


def test_plots_are_written(run):
    d = run[2]
    for name in ("roofline.png", "working_set.png", "quadrant.png"):
        assert (d / name).stat().st_size > 5000


def test_flags_name_values_above_peak_and_wide_spread(run):
    from tests.conftest import make_gpu

    raw = json.loads(json.dumps(run[1]))
    triad = by_name(raw)["stream_triad"]["value"]
    gpu = make_gpu("t", peak={"dram_bw_bytes_per_s": triad / 2, "launch_overhead_s": 1e-12})
    raw["measurements"][0]["summary"]["spread"] = 10.0
    flags = check(raw, gpu)
    above = [f for f in flags if f["problem"] == "above_peak"]
    assert [f["field"] for f in above] == ["dram_bw_bytes_per_s"]  # never for a time
    assert any(f["problem"] == "wide_spread" and f["name"] == raw["measurements"][0]["name"]
               for f in flags)


def test_from_raw_rewrites_an_existing_catalog_gpu(run, tmp_path):
    from gpuproj.cli.main import cli

    out, raw, _ = run
    target = tmp_path / "h100.yaml"
    # the run is PoCL's CPU, which bench does not write into a shipped GPU's file: the raw
    # result said as the H100's
    as_gpu = json.loads(out.with_suffix(".json").read_text())
    as_gpu["device"].update(name="NVIDIA H100 80GB HBM3", device_type="GPU")
    raw_path = tmp_path / "as-h100.json"
    raw_path.write_text(json.dumps(as_gpu))
    res = CliRunner().invoke(cli, ["bench", "--from-raw", str(raw_path),
                                   "--gpu", "h100-sxm5-80gb", "--out", str(target), "--json"])
    assert res.exit_code == 0, res.output
    gpu = read_gpu_file(target)
    assert gpu.id == "h100-sxm5-80gb"
    assert gpu.peak("fp32_fma_flops_per_s") == 6.7e13         # datasheet section kept
    assert gpu.measured("dram_bw_bytes_per_s") == pytest.approx(by_name(raw)["stream_triad"]
                                                                ["value"])
    assert json.loads(res.stdout)["id"] == "h100-sxm5-80gb"


@pytest.mark.gpu
def test_cuda_suite_reaches_datasheet_fractions(tmp_path):
    """On an H100/H200: full suite under 3 minutes, triad >= 85 % and FP32 FMA >= 90 % of peak,
    shared-memory conflicts >= 8x slower, sweep monotone within 10 %."""
    from gpuproj.bench import FULL, open_backend, run_suite
    from gpuproj.catalog import load_catalog

    b = open_backend("cuda")
    try:
        raw = run_suite(b, FULL)
    finally:
        b.close()
    gpu = load_catalog().resolve(raw["device"]["name"])
    ms = by_name(raw)
    assert raw["elapsed_s"] < 180
    assert all(c["ok"] for c in raw["checks"])  # every checked kernel computed right
    assert ms["stream_triad"]["value"] >= 0.85 * gpu.peak("dram_bw_bytes_per_s")
    assert ms["fp32_fma"]["value"] >= 0.90 * gpu.peak("fp32_fma_flops_per_s")
    assert ms["smem_read_conflict"]["value"] < ms["smem_read"]["value"] / 8
    assert not [f for f in check(raw, gpu) if f["problem"] == "above_peak"]
    for c in mixbench_checks(raw).values():
        assert c["drop"] < 0.1 and c["over_roof"] < 1.05


def test_from_raw_refuses_an_ambiguous_gpu_name_and_warns_of_another_device(run, tmp_path,
                                                                             capsys):
    out, raw, _ = run
    src = str(out.with_suffix(".json"))
    # H100 is three catalog GPUs: no new entry "h100" that would take the name over
    code, _, err = run_cli(capsys, "bench", "--from-raw", src, "--gpu", "H100",
                           "--out", str(tmp_path / "a.yaml"))
    assert code == 2 and "ambiguous" in err and not (tmp_path / "a.yaml").exists()
    # PoCL's CPU is no shipped GPU: refused (tests/test_bench_simulated.py has the why)
    code, _, err = run_cli(capsys, "bench", "--from-raw", src, "--gpu", "h100-sxm5-80gb",
                           "--out", str(tmp_path / "b.yaml"))
    assert code == 2 and "the device is a CPU" in err and not (tmp_path / "b.yaml").exists()
    # another GPU's run: written, with a warning
    other = json.loads(out.with_suffix(".json").read_text())
    other["device"].update(name="NVIDIA A100-SXM4-80GB", device_type="GPU")
    (tmp_path / "a100.json").write_text(json.dumps(other))
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(tmp_path / "a100.json"), "--gpu",
                           "h100-sxm5-80gb", "--out", str(tmp_path / "b.yaml"))
    assert code == 0 and ("the device reports 'NVIDIA A100-SXM4-80GB', which the catalog knows "
                          "as a100-sxm4-80gb: check that the measurements are "
                          "h100-sxm5-80gb's") in err


def test_the_width_probe_counts_kernels_on_the_opencl_device(capsys):
    _opencl_device_or_skip()
    from gpuproj.bench.opencl import list_devices, pick_device, probe_width

    devs = list_devices()
    for width in (1, 2):  # at 2 the FP64 chains are scalar, the others 2-wide vectors
        probe_width(devs.index(pick_device(devs)), width)
        assert int(capsys.readouterr().out) == 9, width  # every kernel of compute.cl
