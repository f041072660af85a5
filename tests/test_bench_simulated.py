"""The benchmark pipeline on a simulated device of known ceilings (tests/bench_helpers.py): the
suite must give back every ceiling exactly, and `gpuproj bench --from-raw` must turn the result
into a catalog file, a table and pictures, or name the field of a malformed result. Runs
everywhere; tests/test_bench_suite.py runs the same suite on a real OpenCL or CUDA device."""

import json

import pytest
from bench_helpers import (
    BLOCK_S,
    CEILINGS,
    KERNEL_S,
    L1_BYTES,
    L2_BYTES,
    LATENCY_S,
    SHARED_BANKS,
    SimulatedBackend,
)
from conftest import run_cli

from gpuproj.bench import QUICK, run_suite
from gpuproj.bench.checks import mixbench_checks
from gpuproj.bench.entry import measured_values
from gpuproj.catalog import read_gpu_file


@pytest.fixture(scope="module")
def result():
    """(raw result, backend) of the whole suite at quick sizes on the simulated device."""
    b = SimulatedBackend()
    return run_suite(b, QUICK), b


@pytest.fixture()
def raw_file(result, tmp_path):
    path = tmp_path / "sim.json"
    path.write_text(json.dumps(result[0]))
    return path


def test_the_suite_gives_back_every_ceiling(result):
    raw, backend = result
    got = {m["name"]: m["value"] for m in raw["measurements"]}
    stream = {"stream_init": "dram_write", "stream_read": "dram_read", "stream_copy": "dram",
              "stream_scale": "dram", "stream_add": "dram", "stream_triad": "dram",
              "l1_read": "l1", "l2_read": "l2"}
    want = {**{k: v for k, v in CEILINGS.items() if k in got},
            **{k: CEILINGS[v] for k, v in stream.items()},
            "smem_read": CEILINGS["shared_loads_per_s"],
            "smem_read_conflict": CEILINGS["shared_loads_per_s"] / SHARED_BANKS,
            "launch": KERNEL_S + BLOCK_S, **{f"latency_{k}": v for k, v in LATENCY_S.items()}}
    assert set(got) == set(want) and not raw["skipped"]
    assert got == pytest.approx(want, rel=1e-12)
    cost = raw["sweeps"]["block_cost"]
    assert (cost["per_block_s"], cost["intercept_s"]) == pytest.approx((BLOCK_S, KERNEL_S))
    assert not backend.live  # every buffer freed


def test_results_are_checked_before_timing(result, monkeypatch):
    """Correct first: every compute kernel, the STREAM sequence and every pointer chase is
    checked (the simulated device computes them) before it is timed; a device whose triad is
    wrong gets a failed check naming the arrays, and no STREAM kernel is timed."""
    import bench_helpers

    from gpuproj.bench.entry import check

    raw, _ = result
    checks = {c["name"]: c for c in raw["checks"]}
    assert set(checks) == {*bench_helpers.CEILINGS.keys() & {m["name"] for m in
                                                              raw["measurements"]},
                           "stream", "cache", "shared", "overhead", "latency_l1",
                           "latency_l2", "latency_dram"}
    assert all(c["ok"] for c in checks.values())
    assert checks["stream"]["expected"] == {"a": 1.25, "b": 0.5, "c": 1.5}
    assert not [f for f in check(raw) if f["problem"] == "wrong_results"]
    monkeypatch.setitem(bench_helpers.STREAM_EFFECT, "stream_triad",
                        lambda a, b, c, s: (a, b.value + c.value))  # forgets the scalar
    bad = run_suite(SimulatedBackend(), QUICK, only=["stream"])
    (c,) = bad["checks"]
    assert not c["ok"] and c["wrong"] == {"set 0 a": 2.0, "set 1 a": 2.0}
    assert bad["measurements"] == []
    assert bad["skipped"] == [{"name": "stream", "reason": "its result check failed: not timed"}]


def test_kernels_that_never_ran_are_not_timed():
    """On a device that runs no kernel (the stand-in driver's), every check fails and nothing
    is timed; only the intensity sweep, which feeds no catalog field, is left."""
    class Idle(SimulatedBackend):
        def run_many(self, kernel, blocks, block, arg_sets):
            return [self.duration(kernel, blocks, block, a) for a in arg_sets]

    raw = run_suite(Idle(), QUICK)
    assert raw["measurements"] == []
    assert len(raw["checks"]) == 17 and not any(c["ok"] for c in raw["checks"])
    assert {s["name"] for s in raw["skipped"]} == {c["name"] for c in raw["checks"]}


def test_a_failed_check_keeps_its_fields_out_of_the_catalog(result, tmp_path, capsys):
    """An older result timed the STREAM kernels before checking them: --from-raw leaves every
    STREAM field out of the catalog entry, flags the STREAM rows and names the fields."""
    def failed(raw):
        raw["checks"] = [{"name": "stream", "ok": False, "wrong": {"set 0 a": 0.0}}]

    path = _raw_file(result, tmp_path, failed)
    out = tmp_path / "x.yaml"
    code, stdout, err = run_cli(capsys, "bench", "--from-raw", str(path), "-o", str(out))
    assert code == 0, err
    gpu = read_gpu_file(out)
    assert "dram_bw_bytes_per_s" not in gpu.measureds
    assert "fp32_fma_flops_per_s" in gpu.measureds
    rows = {r.split()[0]: r for r in stdout.splitlines()}
    assert rows["stream_triad"].endswith("wrong_results")
    assert not rows["fp32_fma"].endswith("wrong_results")
    assert ("stream: the kernels left wrong values ({'set 0 a': 0.0}): dram_bw_bytes_per_s, "
            "dram_read_bw_bytes_per_s, dram_write_bw_bytes_per_s left out of the catalog entry"
            ) in err


def test_no_catalog_file_when_every_check_failed(result, tmp_path, capsys):
    def failed(raw):
        raw["checks"] = [{"name": g, "ok": False} for g in
                         {m["group"] for m in raw["measurements"]}]

    path = _raw_file(result, tmp_path, failed)
    out = tmp_path / "x.yaml"
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "-o", str(out))
    assert code == 2 and err.startswith("gpuproj: error: no measurement passed its result "
                                        "check") and err.count("\n") == 1
    assert not out.exists()


def test_sweeps_follow_the_simulated_caches_and_roofs(result):
    raw, _ = result
    for p in raw["sweeps"]["working_set"]:
        ws = p["working_set_bytes"]
        level = "l1" if ws <= L1_BYTES else "l2" if ws <= L2_BYTES else "dram_read"
        assert p["bytes_per_s"] == pytest.approx(CEILINGS[level])
    peak = {"fp32": "fp32_fma", "fp64": "fp64_fma", "fp16x2": "fp16x2_fma"}
    mix = raw["sweeps"]["mixbench"]
    assert {q["precision"] for q in mix} == set(peak)
    for q in mix:  # roofline: min(peak, intensity x DRAM bandwidth)
        roof = min(CEILINGS[peak[q["precision"]]], q["flop_per_byte"] * CEILINGS["dram"])
        assert q["flops_per_s"] == pytest.approx(roof)
    for c in mixbench_checks(raw).values():
        assert c["drop"] == 0 and c["over_roof"] == pytest.approx(1.0)


def test_the_suite_writes_each_benchmark_in_its_group_and_unit(result):
    """suite.BENCHMARKS, which --from-raw holds a result to, is what the suite writes; each
    unit is the end of the name of the catalog field the benchmark gives."""
    from gpuproj.bench.entry import FIELD_MAP
    from gpuproj.bench.suite import BENCHMARKS

    assert {m["name"]: (m["group"], m["unit"]) for m in result[0]["measurements"]} == BENCHMARKS
    for fld, (names, how) in FIELD_MAP.items():
        units = {how.split(":")[1] + "_per_s"} if how.startswith("rate:") else \
            {BENCHMARKS[n][1] for n in names}
        assert [fld.endswith(f"_{u}") for u in units] == [True], fld


def test_catalog_fields_from_the_benchmarks(result):
    """entry.FIELD_MAP: the ADD/MUL ceiling is the lower of the two, the shared bandwidth the
    load rate x 4 bytes."""
    mv = {f: v["value"] for f, v in measured_values(result[0]).items()}
    assert mv["fp32_addmul_flops_per_s"] == CEILINGS["fp32_add"]
    assert mv["fp64_addmul_flops_per_s"] == CEILINGS["fp64_add"]
    assert mv["shared_bw_bytes_per_s"] == pytest.approx(4 * CEILINGS["shared_loads_per_s"])
    assert mv["dram_bw_bytes_per_s"] == CEILINGS["dram"]
    assert mv["launch_overhead_s"] == pytest.approx(KERNEL_S + BLOCK_S, rel=1e-12)


def test_from_raw_writes_a_new_catalog_gpu_with_pictures(raw_file, tmp_path, capsys):
    out, plots = tmp_path / "sim.yaml", tmp_path / "plots"
    code, stdout, err = run_cli(capsys, "bench", "--from-raw", str(raw_file), "--out", str(out),
                                "--plots", str(plots), "--json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["id"] == "simulated-gpu" and not summary["flags"]
    assert summary["plots"] == [str(plots / n) for n in
                                ("roofline.png", "working_set.png", "quadrant.png")]
    for p in summary["plots"]:
        assert (tmp_path / p).stat().st_size > 5000
    gpu = read_gpu_file(out)
    assert gpu.measured("fp32_fma_flops_per_s") == CEILINGS["fp32_fma"]
    assert gpu.measured("l2_bw_bytes_per_s") == CEILINGS["l2"]
    assert gpu.value("sm_count") == 10 and gpu.value("l2_size_bytes") == L2_BYTES
    assert "(the catalog does not know 'Simulated GPU'" in err


def test_from_raw_table_against_a_catalog_gpu(raw_file, tmp_path, capsys):
    """The table puts each measurement beside the named GPU's datasheet peak."""
    code, stdout, err = run_cli(capsys, "bench", "--from-raw", str(raw_file), "--gpu",
                                "h100-sxm5-80gb", "--out", str(tmp_path / "h100.yaml"))
    assert code == 0
    row = next(r.split() for r in stdout.splitlines() if r.startswith("fp32_fma "))
    assert row[:5] == ["fp32_fma", "10", "TFLOP/s", "67", "TFLOP/s"] and row[5] == "15%"
    assert "the device reports 'Simulated GPU', which the catalog does not know" in err


def _edit(raw, dotted, value):
    obj = raw
    *parents, last = dotted.replace("[", ".").replace("]", "").split(".")
    for part in parents:
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    if value is KeyError:
        del obj[last]
    else:
        obj[last] = value


@pytest.mark.parametrize("field, value, message", [
    ("measurements[2].value", KeyError, "field 'measurements[2].value': missing"),
    ("device.compute_units", "10", "field 'device.compute_units': expected positive whole "
                                   "number, found text"),
    # values the catalog file would refuse: named in the result, no file left behind
    ("measurements[0].value", -1.0, "field 'measurements[0].value': expected positive number, "
                                    "found -1.0"),
    ("measurements[0].value", float("nan"), "expected positive number, found nan"),
    ("device.global_mem_bytes", -1, "field 'device.global_mem_bytes': expected positive whole"),
    ("format_version", 99, "field 'format_version': format_version 99: this gpuproj reads 1"),
    ("device.l2_bytes", 4.5, "expected non-negative whole number or null, found number"),
    # negative sizes would reach the catalog writer, whose error names the file not yet written
    ("device.local_mem_bytes", -1, "field 'device.local_mem_bytes': expected non-negative "
                                   "whole number, found -1"),
    ("device.warp_size", -32, "field 'device.warp_size': expected positive whole number or "
                              "null, found -32"),
    # what host_timed and the shared-memory bandwidth read
    ("measurements[20].params", "x", "field 'measurements[20].params': expected object, "
                                     "found text"),
    ("measurements[18].rates", {}, "field 'measurements[18].rates.bytes': missing"),
    ("sweeps.mixbench[0].flops_per_s", None, "expected positive number, found null"),
    ("sizes.spread_limit", True, "expected number, found true/false"),
    ("sweeps.working_set", {"points": []}, "field 'sweeps.working_set': expected list, "
                                           "found object"),
    ("checks", 1.5, "field 'checks': expected list, found number"),
    ("sweeps.mixbench[0].precision", "fp8", "field 'sweeps.mixbench[0].precision': unknown "
                                            "precision 'fp8' (known: fp32, fp64, fp16x2)"),
    # none: the catalog GPU's file would be written back unchanged, as if measured
    ("measurements", [], "field 'measurements': no measurements"),
    # what would print as nan% or draw nothing on a log axis
    ("measurements[0].summary.spread", float("nan"), "field 'measurements[0].summary.spread': "
                                                     "expected non-negative number, found nan"),
    ("measurements[0].rates.instructions", -1.0, "field 'measurements[0].rates.instructions': "
                                                 "expected positive number, found -1.0"),
    ("sweeps.mixbench[0].flop_per_byte", 0, "field 'sweeps.mixbench[0].flop_per_byte': expected "
                                            "positive number, found 0"),
    ("sweeps.working_set[1].bytes_per_s", float("inf"), "expected positive number, found inf"),
    ("checks[0].name", KeyError, "field 'checks[0].name': missing"),
    # read as a pass: the values of kernels that computed the wrong thing went into the catalog
    ("checks[0].ok", "no", "field 'checks[0].ok': expected true/false, found text"),
    ("checks[0].ok", 0, "field 'checks[0].ok': expected true/false, found whole number"),
    ("checks[0].ok", KeyError, "field 'checks[0].ok': missing"),
    # a hand edit of the unit was never read: 213.1 GFLOP/s became 213.1 FLOP/s
    ("measurements[0].unit", "GFLOP/s", "field 'measurements[0].unit': expected 'flops_per_s' "
                                        "(fp32_fma's unit: a value is in the unit its catalog "
                                        "field's name ends in, never converted), found "
                                        "'GFLOP/s'"),
    # a renamed benchmark was left out of the catalog file without a word
    ("measurements[0].name", "fp32_fmaa", "field 'measurements[0].name': unknown benchmark "
                                          "'fp32_fmaa' (did you mean fp32_fma?)"),
    ("measurements[0].name", "peak", "unknown benchmark 'peak' (gpuproj bench measures "
                                     "fp32_fma, fp32_add, "),
    # a failed check of the group would not have covered it
    ("measurements[0].group", "stream", "field 'measurements[0].group': expected 'compute' "
                                        "(fp32_fma's group), found 'stream'"),
])
def test_from_raw_names_the_field_of_a_malformed_result(result, tmp_path, capsys, field, value,
                                                        message):
    raw = json.loads(json.dumps(result[0]))
    _edit(raw, field, value)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "--out",
                           str(tmp_path / "x.yaml"))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}" in err and message in err
    assert not (tmp_path / "x.yaml").exists()


def test_from_raw_refuses_what_is_not_a_result(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "gpuproj-bench",\n "date": }')
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(bad))
    assert code == 2 and "row 2" in err and "not valid JSON" in err
    bad.write_text('{"format": "other"}')
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(bad))
    assert code == 2 and "field 'format'" in err


def _raw_file(result, tmp_path, edit):
    raw = json.loads(json.dumps(result[0]))
    edit(raw)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(raw))
    return path


def test_from_raw_refuses_a_benchmark_measured_twice(result, tmp_path, capsys):
    """The second fp32_fma would win without a word (and be listed twice)."""
    def twice(raw):
        raw["measurements"].append({**raw["measurements"][0], "value": 1.0})

    path = _raw_file(result, tmp_path, twice)
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "--out",
                           str(tmp_path / "x.yaml"))
    n = len(result[0]["measurements"])
    assert (code, err) == (2, f"gpuproj: error: {path}, field 'measurements[{n}].name': "
                              "benchmark 'fp32_fma' is measured twice (also measurements[0]): "
                              "keep one\n")
    assert not (tmp_path / "x.yaml").exists()


@pytest.mark.parametrize("edit, message", [
    (lambda raw: [q.update(flop_per_byte=0) for q in raw["sweeps"]["mixbench"]],
     "field 'sweeps.mixbench[0].flop_per_byte': expected positive number, found 0"),
    (lambda raw: raw.pop("sweeps"),
     "field 'sweeps.mixbench': missing: --plots draws roofline.png from it (run the 'mixbench' "
     "group)"),
    (lambda raw: raw["sweeps"].pop("working_set"),
     "field 'sweeps.working_set': missing: --plots draws working_set.png from it (run the "
     "'cache' group)"),
])
def test_from_raw_plots_check_the_sweeps_before_writing(result, tmp_path, capsys, edit, message):
    path = _raw_file(result, tmp_path, edit)
    out, plots = tmp_path / "x.yaml", tmp_path / "plots"
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "--out", str(out),
                           "--plots", str(plots))
    assert (code, err) == (2, f"gpuproj: error: {path}, {message}\n")
    assert not out.exists() and not plots.exists()


def test_from_raw_json_names_the_raw_file_it_read(raw_file, tmp_path, capsys):
    out = tmp_path / "other.yaml"
    code, stdout, err = run_cli(capsys, "bench", "--from-raw", str(raw_file), "-o", str(out),
                                "--json")
    assert code == 0, err
    assert json.loads(stdout)["raw"] == str(raw_file) and not out.with_suffix(".json").exists()


@pytest.mark.parametrize("option", [["--only", "compute"], ["--quick"], ["--backend", "cuda"],
                                    ["--reps", "5"], ["--device", "0"]])
def test_from_raw_refuses_options_that_choose_what_to_measure(raw_file, tmp_path, capsys,
                                                             option):
    out = tmp_path / "x.yaml"
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(raw_file), "-o", str(out), *option)
    assert code == 2
    assert f"Error: --from-raw measures nothing: {option[0]} does not apply with it" in err
    assert not out.exists()


def test_from_raw_says_absurd_values_and_failed_checks_in_few_words(result, tmp_path, capsys):
    """A broken timer's 1e17 FLOP/s is 1.49e+05 % of the peak, not a 6-digit number; a
    failed result check without its values says so without 'None'. (1e300 FLOP/s, which would
    print 300 digits, is now outside the catalog's plausible range: no catalog file.)"""
    def broken(raw):
        raw["measurements"][0]["value"] = 1e17
        raw["checks"] = [{"name": "stream", "ok": False}]

    path = _raw_file(result, tmp_path, broken)
    code, stdout, err = run_cli(capsys, "bench", "--from-raw", str(path), "--gpu",
                                "h100-sxm5-80gb", "--out", str(tmp_path / "h100.yaml"))
    assert code == 0, err
    row = next(r.split() for r in stdout.splitlines() if r.startswith("fp32_fma "))
    assert row[5] == "1.49e+05%"
    assert ("gpuproj: warning: fp32_fma_flops_per_s = 1e+17 is 1.49e+05% of the datasheet "
            "peak 6.7e+13") in err
    assert ("gpuproj: warning: stream: the kernels left wrong values: dram_bw_bytes_per_s, "
            "dram_read_bw_bytes_per_s, dram_write_bw_bytes_per_s left out of the catalog "
            "entry\n") in err and "None" not in err


@pytest.mark.parametrize("only, message", [
    ("compute", "--plots draws roofline.png from the mixbench group and working_set.png from "
                "the cache group: add mixbench,cache to --only"),
    # the working-set picture is the cache group's, which the refusal did not say
    ("compute,mixbench", "--plots draws working_set.png from the cache group: add cache to "
                         "--only"),
])
def test_plots_without_the_sweep_groups_stop_before_measuring(tmp_path, capsys, only, message):
    out = tmp_path / "x.yaml"
    code, _, err = run_cli(capsys, "bench", "--only", only, "--plots", str(tmp_path / "p"),
                           "-o", str(out))
    assert code == 2 and f"Error: {message}\n" in err
    assert not out.exists()


def test_plots_say_why_the_quadrant_is_not_drawn(result, tmp_path, capsys):
    """Without the compute group a new GPU has no FP32 rate to place in the quadrant: the
    picture was left out without a word; now one line says which and why."""
    def no_compute(raw):
        raw["measurements"] = [m for m in raw["measurements"] if m["group"] != "compute"]

    path = _raw_file(result, tmp_path, no_compute)
    plots = tmp_path / "plots"
    code, stdout, err = run_cli(capsys, "bench", "--from-raw", str(path), "-o",
                                str(tmp_path / "x.yaml"), "--plots", str(plots), "--json")
    assert code == 0, err
    assert json.loads(stdout)["plots"] == [str(plots / "roofline.png"),
                                           str(plots / "working_set.png")]
    assert sorted(p.name for p in plots.iterdir()) == ["roofline.png", "working_set.png"]
    assert ("gpuproj: warning: quadrant.png not drawn: Simulated GPU (simulated-gpu): the "
            "catalog has no fp32_fma_flops_per_s (the compute group measures "
            "fp32_fma_flops_per_s, the stream group measures dram_bw_bytes_per_s)\n") in err
    # a catalog GPU is placed by its datasheet without measurements
    code, stdout, err = run_cli(capsys, "bench", "--from-raw", str(path), "--gpu",
                                "h100-sxm5-80gb", "-o", str(tmp_path / "h.yaml"), "--plots",
                                str(tmp_path / "h"), "--json")
    assert code == 0 and "quadrant.png not drawn" not in err
    assert (tmp_path / "h" / "quadrant.png").exists()


@pytest.mark.parametrize("args, message", [
    # -o NAME.json: the raw result would overwrite the catalog file, which was then deleted
    (["-o", "{d}/res.json"], "-o {d}/res.json and the raw result's default name"),
    (["-o", "{d}/r.yaml", "--raw", "{d}/r.yaml"], "-o {d}/r.yaml and --raw name the same file"),
    (["-o", "{raw}"], "-o {raw} would overwrite the --from-raw input"),
    (["-o", "{d}/x.yaml", "--raw", "{raw}"], "--raw {raw} would overwrite the --from-raw input"),
])
def test_outputs_never_overwrite_an_input_or_each_other(raw_file, tmp_path, capsys, args,
                                                        message, monkeypatch):
    from gpuproj import bench

    monkeypatch.setattr(bench, "open_backend", lambda *a: pytest.fail("measured"))
    before = raw_file.read_bytes()
    fill = {"d": tmp_path, "raw": raw_file}
    # a measuring run is refused before the backend is opened
    from_raw = [] if args[1].endswith(("res.json", "r.yaml")) else ["--from-raw", str(raw_file)]
    code, _, err = run_cli(capsys, "bench", *from_raw, *[a.format(**fill) for a in args])
    assert code == 2 and message.format(**fill) in err
    assert raw_file.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [raw_file.name]


def _only(result, tmp_path, group, name):
    """A result file of ``result``'s measurements of ``group`` only."""
    raw = json.loads(json.dumps(result[0]))
    raw["measurements"] = [m for m in raw["measurements"] if m["group"] == group]
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return path


def test_a_gpu_file_named_by_its_path_is_updated_as_its_id_is(result, tmp_path, capsys,
                                                               monkeypatch):
    """--gpu ./gpus/sim.yaml was a new GPU named './gpus/sim.yaml' (id '.-gpus-sim.yaml'),
    without the file's values; now the file's entry gets the new measurements, as it does
    where its id names it, and a path that is no file is an error."""
    monkeypatch.chdir(tmp_path)
    compute, stream = (_only(result, tmp_path, g, f"{g}.json") for g in ("compute", "stream"))
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(compute), "-o", "gpus/sim.yaml")
    assert code == 0, err
    code, stdout, err = run_cli(capsys, "bench", "--from-raw", str(stream), "--gpu",
                                "./gpus/sim.yaml", "-o", "by-path.yaml")
    assert code == 0, err
    # the file answers to the device's name: no "check that the measurements are ..."
    assert "warning: the device" not in err and "(the catalog does not know" not in err
    gpu = read_gpu_file("by-path.yaml")
    assert (gpu.id, gpu.name) == ("simulated-gpu", "Simulated GPU")
    assert gpu.measured("fp32_fma_flops_per_s") == CEILINGS["fp32_fma"]  # the file's
    assert gpu.measured("dram_bw_bytes_per_s") == CEILINGS["dram"]  # measured now
    assert stdout.splitlines()[-1].startswith("wrote by-path.yaml (simulated-gpu, 11 measured")
    monkeypatch.setenv("GPUPROJ_GPU_PATH", "gpus")
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(stream), "--gpu", "simulated-gpu",
                           "-o", "by-id.yaml")
    assert code == 0, err
    assert (tmp_path / "by-id.yaml").read_text() == (tmp_path / "by-path.yaml").read_text()
    for missing in ("./gpus/none.yaml", "none.yaml"):
        code, _, err = run_cli(capsys, "bench", "--from-raw", str(stream), "--gpu", missing,
                               "-o", "x.yaml")
        assert (code, err) == (2, f"gpuproj: error: {missing}: no such file\n")
        assert not (tmp_path / "x.yaml").exists()


def test_a_gpu_file_updated_in_place_is_kept_if_the_update_would_not_load(
        raw_file, tmp_path, capsys, monkeypatch):
    """-o naming the GPU's own file (by its id on GPUPROJ_GPU_PATH, or by its path) updates
    it; a catalog file that would not load was written, read back and deleted, which deleted
    the user's GPU file with it."""
    from gpuproj.bench import entry

    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(raw_file), "-o", "sim.yaml")
    assert code == 0, err
    before = (tmp_path / "sim.yaml").read_text()
    good = entry.gpu_file
    monkeypatch.setattr(entry, "gpu_file", lambda *a, **k: {"schema_version": 1, "id": "x"})
    with monkeypatch.context() as m:
        m.setenv("GPUPROJ_GPU_PATH", str(tmp_path))
        code, _, err = run_cli(capsys, "bench", "--from-raw", str(raw_file), "--gpu",
                               "simulated-gpu", "-o", "sim.yaml")
    assert (code, err) == (2, "gpuproj: error: sim.yaml, field 'vendor': is required (nothing "
                           "written to it)\n")
    assert (tmp_path / "sim.yaml").read_text() == before
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(raw_file), "--gpu", "./sim.yaml",
                           "-o", "sim.yaml")
    assert code == 2 and (tmp_path / "sim.yaml").read_text() == before
    monkeypatch.setattr(entry, "gpu_file", good)
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(raw_file), "--gpu", "./sim.yaml",
                           "-o", "sim.yaml")
    assert code == 0, err
    assert read_gpu_file("sim.yaml").id == "simulated-gpu"


def test_gpu_is_resolved_before_measuring(tmp_path, capsys, monkeypatch):
    """An ambiguous --gpu stops before a backend is opened, not after minutes of measuring."""
    from gpuproj import bench

    monkeypatch.setattr(bench, "open_backend", lambda *a: pytest.fail("measured"))
    code, _, err = run_cli(capsys, "bench", "--gpu", "H100", "-o", str(tmp_path / "a.yaml"))
    assert code == 2 and "ambiguous" in err


def test_the_raw_result_is_written_before_the_catalog_file(tmp_path, capsys, monkeypatch):
    """A catalog file that cannot be written after measuring (a folder unwritable from the
    start is refused before: tests/test_cli_output_paths.py) leaves the samples in the raw
    result."""
    from gpuproj import bench
    from gpuproj.cli import bench as cli_bench
    from gpuproj.errors import InputError

    monkeypatch.setattr(bench, "open_backend", lambda *a: SimulatedBackend())
    real = cli_bench.write_text

    def fail_yaml(path, text):
        if str(path).endswith(".yaml"):
            raise InputError("cannot write: disk full", path=path)
        return real(path, text)

    monkeypatch.setattr(cli_bench, "write_text", fail_yaml)
    raw = tmp_path / "keep.json"
    code, _, err = run_cli(capsys, "bench", "--quick", "--only", "compute", "-q",
                           "-o", str(tmp_path / "x.yaml"), "--raw", str(raw))
    assert code == 2 and "x.yaml" in err and "Traceback" not in err
    assert json.loads(raw.read_text())["measurements"]


def test_the_raw_result_is_written_before_the_plots_are_checked(tmp_path, capsys, monkeypatch):
    """A measured result that --plots cannot draw (the cache group's result check failed, so
    no working-set sweep: as on the stand-in driver) still leaves every sample in the raw
    result; only the catalog file and the pictures are not written."""
    from gpuproj import bench

    def no_cache_sweep(*args, **kw):
        raw = real_run_suite(*args, **kw)
        raw["sweeps"].pop("working_set")
        return raw

    real_run_suite = bench.run_suite
    monkeypatch.setattr(bench, "open_backend", lambda *a: SimulatedBackend())
    monkeypatch.setattr(bench, "run_suite", no_cache_sweep)
    out, raw, plots = tmp_path / "x.yaml", tmp_path / "keep.json", tmp_path / "plots"
    code, _, err = run_cli(capsys, "bench", "--quick", "-q", "-o", str(out), "--raw", str(raw),
                           "--plots", str(plots))
    assert (code, err) == (2, "gpuproj: error: field 'sweeps.working_set': missing: --plots "
                              "draws working_set.png from it (run the 'cache' group); the "
                              f"samples are in {raw}\n")
    kept = json.loads(raw.read_text())
    assert kept["measurements"] and "mixbench" in kept["sweeps"]
    assert not out.exists() and not plots.exists()


def test_an_ambiguous_device_name_needs_gpu(result, tmp_path, capsys):
    """'NVIDIA H100' is three catalog GPUs: an error without --gpu, a warning that says
    ambiguous (not unknown) with it."""
    path = _raw_file(result, tmp_path, lambda raw: raw["device"].update(name="NVIDIA H100"))
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "-o", str(tmp_path / "a.yaml"))
    assert code == 2 and "is ambiguous: it matches" in err and "name it with --gpu" in err
    assert not (tmp_path / "a.yaml").exists()
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "--gpu", "h100-sxm5-80gb",
                           "-o", str(tmp_path / "b.yaml"))
    assert code == 0 and ("the device reports 'NVIDIA H100', which several catalog GPUs "
                          "answer to: check that the measurements are h100-sxm5-80gb's") in err


def test_a_cpu_is_not_measured_as_a_shipped_gpu(result, tmp_path, capsys, monkeypatch):
    """`--backend auto` without a GPU finds the OpenCL CPU: its rates written over the
    named GPU's measured ones would change every projection to it. Refused before measuring;
    a CPU's own file, from an earlier run, takes new measurements."""
    from gpuproj import bench
    from gpuproj.bench.backend import DeviceInfo

    cpu = SimulatedBackend()
    cpu.info = DeviceInfo(**{**cpu.info.to_dict(), "name": "pthread-Intel(R) Xeon(R) Processor",
                             "device_type": "CPU"})
    monkeypatch.setattr(bench, "open_backend", lambda *a: cpu)
    monkeypatch.setattr(bench, "run_suite", lambda *a, **k: pytest.fail("measured"))
    code, _, err = run_cli(capsys, "bench", "--gpu", "h100-sxm5-80gb", "-o",
                           str(tmp_path / "h100.yaml"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "the device is a CPU ('pthread-Intel(R) Xeon(R) Processor'), not h100-sxm5-80gb" in err
    path = _raw_file(result, tmp_path, lambda raw: raw["device"].update(
        name="pthread-Intel(R) Xeon(R) Processor", device_type="CPU"))
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "--gpu", "h100-sxm5-80gb",
                           "-o", str(tmp_path / "h100.yaml"))
    assert code == 2 and "the device is a CPU" in err and not (tmp_path / "h100.yaml").exists()
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "-o",
                           str(tmp_path / "cpu.yaml"))
    assert code == 0, err
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "--gpu",
                           str(tmp_path / "cpu.yaml"), "-o", str(tmp_path / "cpu2.yaml"))
    assert code == 0, err


def test_a_pattern_names_no_new_gpu(result, tmp_path, capsys):
    """--gpu 'h100*' is an error, as in every command that takes one GPU, not a new GPU file
    named 'h100*'."""
    path = _raw_file(result, tmp_path, lambda raw: None)
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "--gpu", "h100*",
                           "-o", str(tmp_path / "a.yaml"))
    assert code == 2 and "'h100*' is a pattern where one GPU is named" in err
    assert not (tmp_path / "a.yaml").exists()


def test_a_new_gpu_file_does_not_take_another_gpus_name(result, tmp_path, capsys, monkeypatch):
    """--gpu 'My GPU' on a device the catalog knows: the file must not answer to the device's
    name, which would then be ambiguous in every command."""
    path = _raw_file(result, tmp_path,
                     lambda raw: raw["device"].update(name="NVIDIA H100 80GB HBM3"))
    out = tmp_path / "gpus" / "my-gpu.yaml"
    out.parent.mkdir()
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "--gpu", "My GPU",
                           "-o", str(out))
    assert code == 0 and "a name of the catalog" not in err
    assert "which the catalog knows as h100-sxm5-80gb: the new GPU file does not take it" in err
    assert "aliases" not in out.read_text()
    monkeypatch.setenv("GPUPROJ_GPU_PATH", str(out.parent))
    code, stdout, err = run_cli(capsys, "gpus", "show", "NVIDIA H100 80GB HBM3")
    assert code == 0, err


@pytest.mark.parametrize("args, message", [
    (["--list-devices", "--json"], "--list-devices only lists the devices: --json does not "
                                   "apply with it"),
    (["--list-devices", "--backend", "cuda", "--quick"], "--backend, --quick do not apply"),
    (["--only", ""], "--only: no group given"),
    (["--only", " , "], "--only: no group given"),
])
def test_options_that_would_be_ignored_are_refused(capsys, monkeypatch, args, message):
    from gpuproj import bench

    monkeypatch.setattr(bench, "open_backend", lambda *a: pytest.fail("measured"))
    code, _, err = run_cli(capsys, "bench", *args)
    assert code == 2 and message in err


def test_a_value_no_gpu_can_have_writes_no_catalog_file_and_says_so(result, tmp_path, capsys):
    # a broken timer's 1e300 FLOP/s is outside the catalog's plausible range: the error named
    # the catalog file, which was not written, and not the raw result, which was
    def broken(raw):
        raw["measurements"][0]["value"] = 1e300

    path = _raw_file(result, tmp_path, broken)
    out, raw_out = tmp_path / "h100.yaml", tmp_path / "again.json"
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(path), "--gpu", "h100-sxm5-80gb",
                           "--out", str(out), "--raw", str(raw_out))
    assert code == 2 and not out.exists() and raw_out.exists()
    assert (f"gpuproj: error: {out}, field 'measured.fp32_fma_flops_per_s': value 1e+300 is "
            "outside the plausible range 1e+08 to 1e+18 FLOP/s (nothing written to it; the "
            f"samples are in {raw_out})") in err


def test_json_holds_the_benchmark_table_the_text_prints(raw_file, tmp_path, capsys):
    # the JSON had the catalog values alone: not the per-benchmark measurements, their peaks,
    # shares of the peak and spreads that the text table shows
    code, stdout, err = run_cli(capsys, "bench", "--from-raw", str(raw_file), "-o",
                                str(tmp_path / "j.yaml"), "--gpu", "h100-sxm5-80gb", "--json")
    assert code == 0, err
    rows = json.loads(stdout)["benchmarks"]
    assert sum(r["peak"] is not None for r in rows) >= 5  # the H100's datasheet peaks
    raw = json.loads(raw_file.read_text())
    assert [r["name"] for r in rows] == [m["name"] for m in raw["measurements"]]
    for r, m in zip(rows, raw["measurements"]):
        assert (r["value"], r["unit"], r["spread"]) == (m["value"], m["unit"],
                                                        m["summary"]["spread"])
        assert (r["of_peak"] is None) == (r["peak"] is None)
        if r["peak"] is not None:
            assert r["of_peak"] == pytest.approx(r["value"] / r["peak"])
    code, text, _ = run_cli(capsys, "bench", "--from-raw", str(raw_file), "-o",
                            str(tmp_path / "t.yaml"))
    assert code == 0 and all(r["name"] in text for r in rows)
