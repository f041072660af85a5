"""Mistakes a user makes on the command line: one `gpuproj: error:` line on stderr, exit code 2,
no traceback; and what a command does with input it can still use."""

import csv
import json
import re
from pathlib import Path

import pytest
from conftest import run_cli as run

EXAMPLE = str(Path(__file__).resolve().parents[1] / "examples" / "rodinia-p100-nvprof.csv")
DATA = Path(__file__).resolve().parent / "data"


def one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuproj: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("regex, says", [("[", "is not a regular expression"),
                                         ("nomatch", "no kernel matches --kernel 'nomatch'")])
def test_kernel_regex_that_is_wrong_or_matches_nothing(tmp_path, capsys, regex, says):
    for cmd in (["predict", EXAMPLE, "-t", "h200"],
                ["report", EXAMPLE, "-t", "h200", "-o", str(tmp_path / "r.html")]):
        code, out, err = run(capsys, *cmd, "-k", regex)
        assert code == 2 and says in one_error(err) and out == ""
    assert not (tmp_path / "r.html").exists()


def test_sass_diff_says_a_wrong_regex_before_anything_else(capsys):
    # one listing of one architecture was "need at least two architectures to compare"
    listing = str(Path(__file__).parent / "data" / "sass" / "nvdisasm-sm_80-fixture_kernels.sass")
    code, out, err = run(capsys, "sass", "diff", listing, "-k", "(")
    assert code == 2 and "--kernel '(' is not a regular expression" in one_error(err)


def test_a_target_named_twice_is_predicted_once(capsys):
    code, out, _ = run(capsys, "predict", EXAMPLE, "-t", "h200,H200", "--json")
    d = json.loads(out)
    assert code == 0 and d["targets"] == ["h200-sxm-141gb"] and len(d["predictions"]) == 3


def test_a_source_the_file_does_not_have(capsys):
    code, _, err = run(capsys, "predict", EXAMPLE, "-s", "v100-pcie-16gb", "-t", "h200")
    assert code == 2 and "no rows measured on v100-pcie-16gb" in one_error(err)


def test_no_usable_row(tmp_path, capsys):
    lines = Path(EXAMPLE).read_text().splitlines()
    col = lines[0].split(",").index("duration")
    zero = [lines[0]] + [",".join(v if i != col else "0" for i, v in enumerate(r.split(",")))
                         for r in lines[1:]]
    p = tmp_path / "zero.csv"
    p.write_text("\n".join(zero) + "\n")
    code, _, err = run(capsys, "predict", str(p), "-t", "h200")
    assert code == 2 and "no row has a usable duration" in one_error(err)
    q = tmp_path / "m.csv"
    q.write_text("kernel,config,gpu,time_s\nk,a,h100-sxm5-80gb,0\n")
    code, _, err = run(capsys, "predict", str(q), "-t", "h200")
    assert code == 2 and "row 2, field 'time_s': no row has a usable time_s" in one_error(err)
    q.write_text("kernel,config,gpu,time_s,flops\nk,a,h100-sxm5-80gb,1e-3,xyz\n")
    code, _, err = run(capsys, "predict", str(q), "-t", "h200")  # a typo is not a missing value
    assert code == 2 and "row 2, field 'flops': 'xyz' is not a number" in one_error(err)
    q.write_text("kernel,config,gpu,time_s,dram_bytes\nk,a,h100-sxm5-80gb,1e-3,5\n"
                 "k,b,h100-sxm5-80gb,1e-3,inf\n")  # no profiler prints an infinite count
    code, _, err = run(capsys, "predict", str(q), "-t", "h200")
    assert code == 2 and "row 3, field 'dram_bytes': 'inf' is not a finite number" in one_error(err)
    q.write_text("kernel,config,gpu,time_s\nk,a,h100-sxm5-80gb,1e-3\nk,a,Voodoo 5,2e-3\n")
    code, _, err = run(capsys, "evaluate", str(q))
    assert code == 2 and "row 3, field 'gpu': unknown GPU 'Voodoo 5'" in one_error(err)
    (tmp_path / "empty.csv").write_text("")
    code, _, err = run(capsys, "predict", str(tmp_path / "empty.csv"), "-t", "h200")
    assert code == 2 and "the file is empty" in one_error(err)


def test_rows_are_named_by_their_file_line(tmp_path, capsys):
    # past a blank line, a whitespace line and a kernel name with a line break in quotes
    q = tmp_path / "m.csv"
    q.write_text('kernel,config,gpu,time_s\n"k\nx",a,h100-sxm5-80gb,1e-3\n\n  \n'
                 "k,b,h100-sxm5-80gb,fast\n")
    code, _, err = run(capsys, "predict", str(q), "-t", "h200")
    assert code == 2 and "m.csv, row 6, field 'time_s': 'fast' is not a number" in one_error(err)


def test_a_measurement_table_short_of_a_column(tmp_path, capsys):
    q = tmp_path / "m.csv"
    q.write_text("name,gpu,time_s\nk,h100-sxm5-80gb,1e-3\n")
    code, _, err = run(capsys, "predict", str(q), "-t", "h200")
    assert code == 2 and "m.csv: missing required column 'kernel'" in one_error(err)
    # one column of a measurement table, or a near miss of one, is enough to tell which column
    # is missing (it was "cannot tell the format of this file"), in evaluate as in predict
    for head, missing, near in [("kernel,time_ms,dram_bytes", "time_s", "time_ms"),
                                ("kernel,time", "time_s", None), ("name,time_s", "kernel", None),
                                ("kernel,tme_s", "time_s", "tme_s")]:
        q.write_text(f"{head}\nk,1.0,1e9\n")
        for cmd in (["predict", str(q), "-t", "h200", "-s", "a100-sxm4-80gb"],
                    ["evaluate", str(q)]):
            code, _, err = run(capsys, *cmd)
            assert code == 2 and err.strip().splitlines()[-1].startswith(
                f"gpuproj: error: {q}: missing required column '{missing}' of a measurement "
                "table (or pass --format: "), err
            assert ("did you mean 'time_s'?" in err) == (near is not None)
            # time_ms holds milliseconds: renamed alone it would be read as seconds
            assert ("It is in seconds: convert the values, not the name alone" in err) == (
                near == "time_ms")
    q.write_text("kernel,time_s\nk,1e-3\n")  # no GPU in the file, none on the command line
    code, _, err = run(capsys, "predict", str(q), "-t", "h200")
    assert code == 2 and "no 'gpu' column" in one_error(err) and "--source" in one_error(err)
    # evaluate's --source picks among the GPUs the files name: it cannot name one (it was the
    # advice evaluate gave); the file can, and so can Python, where a format cannot
    code, _, err = run(capsys, "evaluate", str(q), "--source", "a100-sxm4-80gb")
    assert code == 2 and one_error(err) == (
        f"gpuproj: error: {q}: no 'gpu' column: add one naming each row's GPU; evaluate reads "
        "each row's GPU from its file (its --source only picks among them)")
    ncu = DATA / "ncu-sm100-superbench-cublaslt-details.csv"  # names no GPU
    code, _, err = run(capsys, "evaluate", str(ncu), str(ncu))
    assert code == 2 and "in Python, load(PATH, gpu=NAME) each file" in one_error(err)
    assert "pass --source" not in err
    q.write_text("name,value\nk,1\n")  # nothing of a measurement table: no guess
    code, _, err = run(capsys, "predict", str(q), "-t", "h200")
    assert code == 2 and "cannot tell the format of this file" in one_error(err)



def test_a_profilers_file_without_a_profile_says_what_it_is(tmp_path, capsys):
    # both seen committed in projects' repositories under a profile's name: an ncu run that
    # failed (its log saved as the CSV) and rocprof's per-kernel summary; each was "cannot
    # tell the format of this file"
    log = tmp_path / "ncu.csv"
    log.write_text("==PROF== Connected to process 4242\n"
                   "==ERROR== Option '--section Foo' did not match any section.\n"
                   "==ERROR== Use --list-sections to see the list of available sections.\n")
    code, out, err = run(capsys, "predict", str(log), "-t", "h200")
    assert code == 2 and out == "" and one_error(err) == (
        f"gpuproj: error: {log}: Nsight Compute wrote no results, only errors: ==ERROR== "
        "Option '--section Foo' did not match any section.")
    stats = tmp_path / "results.stats.csv"
    stats.write_text('"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n'
                     '"k(float*)",3,3000,1000,100.0\n')
    code, _, err = run(capsys, "predict", str(stats), "-t", "h200")
    assert code == 2 and "a rocprof --stats summary" in one_error(err)
    assert "results.csv" in err

def test_skipped_rows_are_named(tmp_path, capsys):
    q = tmp_path / "m.csv"
    q.write_text("kernel,config,gpu,time_s\nk,a,h100-sxm5-80gb,1e-3\nk,b,h100-sxm5-80gb,-1\n")
    code, _, err = run(capsys, "predict", str(q), "-t", "h200", "-m", "bandwidth")
    assert code == 0 and "skipped 1 row(s) (m.csv row 3): time_s = -1" in err
    # an empty name is the reason given, not the time it has (it said "time_s = 0.001 is not
    # positive")
    q.write_text("kernel,config,gpu,time_s\nk,a,h100-sxm5-80gb,1e-3\nk,b,,1e-3\n,c, ,1e-3\n")
    code, _, err = run(capsys, "predict", str(q), "-t", "h200", "-m", "bandwidth")
    assert code == 0 and "skipped 1 row(s) (m.csv row 3): gpu empty\n" in err
    assert "skipped 1 row(s) (m.csv row 4): kernel and gpu empty\n" in err


def test_an_unknown_source_is_not_the_files_fault(capsys):
    code, _, err = run(capsys, "predict", str(DATA / "nvprof-v100-pcie-32gb-trace.csv"),
                       "-s", "Voodoo 5", "-t", "h200")
    assert code == 2 and one_error(err).startswith("gpuproj: error: unknown GPU 'Voodoo 5'")


def test_json_and_csv_exclude_each_other(capsys):
    code, out, err = run(capsys, "predict", EXAMPLE, "-t", "h200", "--json", "--csv")
    assert code == 2 and out == "" and "--json or --csv" in err


def test_nothing_evaluated_says_why(tmp_path, capsys):
    # a KernelTuner GEMM table whose name does not give the size: no FLOPs, no roofline
    p = tmp_path / "gemm.csv"
    p.write_bytes((DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv").read_bytes())
    code, out, err = run(capsys, "evaluate", str(p), "-m", "roofline", "--json")
    assert code == 2 and out == ""
    warning, error = err.strip().splitlines()  # the reader says why, and the fix
    assert "no pair could be predicted (roofline needs flops or dram_bytes" in one_error(error)
    assert warning == (f"gpuproj: warning: {p}: a CLBlast GEMM whose size the file name does "
                       "not give (as gemm_clblast_4096.csv does): its FLOPs and grid are "
                       "unknown; give the size with --reader-option gemm_size=N (gemm_size=N "
                       "in load())")
    q = tmp_path / "one.csv"
    q.write_text("kernel,config,gpu,time_s\nk,a,h100-sxm5-80gb,1e-3\nk,b,h200,1e-3\n")
    code, _, err = run(capsys, "evaluate", str(q))
    assert code == 2 and "no kernel configuration was measured on two" in one_error(err)


def test_reader_options(tmp_path, capsys):
    p = tmp_path / "cache.csv"  # a KernelTuner GEMM table named without its size
    p.write_bytes((DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv").read_bytes())
    args = ["predict", str(p), "-s", "rtx-3090", "-t", "h200", "-m", "roofline", "--json"]
    code, out, _ = run(capsys, *args, "--reader-option", "gemm_size=4096")
    assert code == 0 and json.loads(out)["predictions"]
    code, _, err = run(capsys, *args, "--reader-option", "gemm_size=big")
    assert code == 2 and "gemm_size: 'big' is not a positive integer" in one_error(err)
    code, _, err = run(capsys, *args, "--reader-option", "gemm_size")
    assert code == 2 and "'gemm_size' is not KEY=VALUE" in err
    code, _, err = run(capsys, *args, "--reader-option", "gpu=h100-sxm5-80gb")
    assert code == 2 and "the GPU is no reader option: `predict` takes it with --source" in err


def test_nothing_predicted_says_why(capsys, tmp_path):
    # a trace has times but no counts; with --json no skipped lines are printed, so the error
    # itself names the cause, and the methods the profile's columns suit
    code, out, err = run(capsys, "predict", str(DATA / "nvprof-v100-pcie-32gb-trace.csv"),
                         "-t", "h200", "-m", "roofline", "--json")
    assert code == 2 and out == ""
    assert one_error(err) == ("gpuproj: error: no kernel could be predicted (roofline needs "
                              "flops or dram_bytes: 2 rows); the profile's columns suit the "
                              "methods same,bandwidth,compute")
    code, _, err = run(capsys, "predict", str(DATA / "nvprof-v100-pcie-32gb-trace.csv"),
                       "-t", "h200", "-m", "roofline,hierarchical", "--json")
    assert "(roofline needs flops or dram_bytes: 2 rows; 1 other cause)" in one_error(err)
    # a report of nothing is the same error, not an empty page
    out_file = tmp_path / "r.html"
    code, _, err = run(capsys, "report", str(DATA / "nvprof-v100-pcie-32gb-trace.csv"),
                       "-t", "h200", "-m", "roofline", "-o", str(out_file))
    assert code == 2 and not out_file.exists()
    assert err.strip().splitlines()[-1].endswith("the profile's columns suit the methods "
                                                 "same,bandwidth,compute")


def test_a_profile_of_times_only_is_predicted_with_bandwidth_by_default(capsys, tmp_path):
    # the default method needs counts a trace lacks: bandwidth instead, with one warning line;
    # asked for by name, it is the error above
    trace = str(DATA / "nvprof-v100-pcie-32gb-trace.csv")
    code, out, err = run(capsys, "predict", trace, "-t", "h200", "--json")
    assert code == 0 and {p["method"] for p in json.loads(out)["predictions"]} == {"bandwidth"}
    assert err.strip().splitlines() == [
        "gpuproj: warning: the profile has times but no counts (hierarchical-ext needs flops or "
        "dram_bytes or l2_bytes or l1_bytes): predicted with bandwidth, the best baseline on the "
        "public data; an Nsight Compute profile (gpuproj profile) has the counts"]
    code, _, err = run(capsys, "predict", trace, "-t", "h200", "-m", "hierarchical-ext")
    assert code == 2 and "no kernel could be predicted" in err
    out_file = tmp_path / "r.html"
    code, _, err = run(capsys, "report", trace, "-t", "h200", "-o", str(out_file))
    assert code == 0 and "<code>bandwidth</code>" in out_file.read_text()


def test_nvprof_metrics_with_their_trace(capsys):
    code, out, _ = run(capsys, "predict", str(DATA / "nvprof-v100-pcie-32gb-metrics.csv"),
                       "--trace", str(DATA / "nvprof-v100-pcie-32gb-trace.csv"),
                       "-t", "h200", "--json")
    assert code == 0 and json.loads(out)["source"] == "v100-pcie-32gb"
    code, _, err = run(capsys, "predict", str(DATA / "nvprof-v100-pcie-32gb-metrics.csv"),
                       "-t", "h200")
    assert code == 2 and "--trace FILE" in one_error(err)


def test_evaluate_all_methods_and_gpus_it_cannot_use(capsys):
    table = str(DATA / "amaris-2gpus-calculate_temp.csv")
    code, out, _ = run(capsys, "evaluate", table, "-m", "all", "--json")
    assert code == 0 and {"hierarchical", "bandwidth", "same"} <= set(json.loads(out)["methods"])
    code, _, err = run(capsys, "evaluate", table, "--source", "h200")
    assert code == 2 and "--source h200: the table has no row measured" in one_error(err)
    code, _, err = run(capsys, "evaluate", str(DATA / "ncu-handbuilt-h100-raw-base.csv"))
    assert code == 2 and "nothing to evaluate" in one_error(err)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_quadrant_intensity_must_be_positive_and_finite(tmp_path, capsys, value):
    code, _, err = run(capsys, "quadrant", "-g", "h200", "--intensity", value,
                       "-o", str(tmp_path / "q.png"))
    assert code == 2 and "positive, finite" in err and not (tmp_path / "q.png").exists()


def test_unknown_vendor(capsys):
    code, _, err = run(capsys, "gpus", "list", "--vendor", "foo")
    assert code == 2 and "vendors: AMD, Intel, NVIDIA" in one_error(err)


def test_assumptions_are_listed_once(capsys):
    code, out, _ = run(capsys, "predict", EXAMPLE, "-t", "a100-sxm4-80gb,mi250x", "-m", "all")
    lines = [ln.strip() for ln in out.splitlines() if "peak (no measured value)" in ln]
    assert code == 0 and lines and len(lines) == len(set(lines))
    assert "Assumptions (of the methods in brackets):" in out
    # one line per GPU lists its ceilings at peak, with every method that used one of them;
    # the source's DRAM ceiling is derived against the A100 (measured) and at peak only for
    # the MI250X, which its own line says
    gpus = [ln.split(":")[0] for ln in lines]
    assert sorted(gpus) == sorted(set(gpus)) and gpus == [
        "tesla-p100-pcie-16gb at peak (no measured value)",
        "a100-sxm4-80gb at peak (no measured value)",
        "tesla-p100-pcie-16gb at peak (no measured value) for mi250x",
        "mi250x at peak (no measured value)"]
    assert lines[2].startswith("tesla-p100-pcie-16gb at peak (no measured value) for mi250x: "
                               "dram_bw_bytes_per_s (")
    a100 = lines[1]
    assert "fp64_fma_flops_per_s, " in a100 and a100.endswith(", quantitative-transfer)")


def test_one_method_names_itself_once_above_its_assumptions(capsys):
    code, out, _ = run(capsys, "predict", EXAMPLE, "-t", "h200")
    # the assumptions' lines, up to the totals table that follows them
    notes = out[out.index("Assumptions of hierarchical-ext:"):].splitlines()[1:]
    notes = notes[:next(i for i, n in enumerate(notes) if not n.startswith("  "))]
    assert code == 0 and len(notes) > 3 and all(n.startswith("  ") for n in notes)
    assert not any(n.endswith("(hierarchical-ext)") for n in notes)


def test_targets_by_wildcard_and_their_assumptions_grouped(capsys):
    code, out, _ = run(capsys, "predict", EXAMPLE, "-t", "mi3*,h1*,h200", "--json")
    targets = json.loads(out)["targets"]
    assert code == 0 and targets == ["mi300a", "mi300x", "mi325x", "mi350x", "mi355x",
                                     "h100-pcie-80gb", "h100-sxm5-80gb", "h100-nvl-94gb",
                                     "h200-sxm-141gb"]
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    result = predict(load(EXAMPLE), targets="all", methods="hierarchical")
    lines = result.assumption_lines()
    # every GPU a target: the GPUs with the same ceilings at peak share one line, and a source
    # ceiling derived against several targets lists their ratios on one line; where it is at
    # peak for the others, the line says for how many
    peak = [ln for ln in lines if "at peak (no measured value):" in ln]
    gpus = [g for ln in peak for g in ln.split(" at peak")[0].split(", ")]
    # one line per set of ceilings at peak: 6 sets over the 71 GPUs the P100 projects to
    assert len(gpus) == len(set(gpus)) and "mi300x" in gpus and len(peak) <= 6
    some = [ln.split(":")[0] for ln in lines if "at peak (no measured value) for" in ln]
    n = len(result.targets) - 1  # the source is a target too
    # FP64 and FP32 ADD/MUL measured on the H100 SXM5 and H200 alone, FP32 FMA on 9 GPUs, DRAM
    # on 15
    # at most 3 GPUs with a measured value are named, more are counted
    assert len(some) == 3 and all(re.fullmatch(
        rf"tesla-p100-pcie-16gb at peak \(no measured value\) for \d+ of {n} targets", s)
        for s in some[1:])
    assert some[0] == ("tesla-p100-pcie-16gb at peak (no measured value) for every target "
                       "but h100-sxm5-80gb, h200-sxm-141gb")
    derived = [ln for ln in lines if "dram_bw_bytes_per_s derived" in ln]
    assert len(derived) == 1 and "h200-sxm-141gb 0.910" in derived[0]


def test_a_target_wildcard_that_matches_nothing(capsys):
    code, out, err = run(capsys, "predict", EXAMPLE, "-t", "h200,zz*")
    assert code == 2 and "no GPU id matches 'zz*'" in one_error(err) and out == ""


def test_every_command_names_its_output_file_and_input_format_alike():
    from gpuproj.cli.main import COMMANDS, cli
    from gpuproj.profiles import FORMATS

    writers, readers = [], []
    for name in COMMANDS:
        params = {p.name: p for p in cli.get_command(None, name).params}
        if "output" in params:
            writers.append(name)
            assert set(params["output"].opts) == {"-o", "--output", "--out"}, name
        if "fmt" in params:
            readers.append(name)
            assert list(params["fmt"].type.choices) == list(FORMATS), name
    assert sorted(writers) == ["bench", "calibrate", "profile", "quadrant", "report", "roofline"]
    assert sorted(readers) == ["evaluate", "predict", "quadrant", "report", "roofline"]


def test_an_unknown_format_lists_the_known_ones(capsys):
    code, _, err = run(capsys, "predict", EXAMPLE, "-t", "h200", "--format", "csv")
    assert code == 2 and "'csv' is not one of 'ncu-rep', 'ncu-csv'" in err


def test_json_output_is_strict_json(capsys):
    # JSON has no NaN or Infinity: they are written as null, numpy scalars as numbers
    import json

    import numpy as np

    from gpuproj.cli._common import emit_json

    emit_json({"a": float("nan"), "b": [np.float32("inf"), np.float64(2.5), np.int64(3)],
               "c": (1.0, -np.inf)})
    out = capsys.readouterr().out
    assert "NaN" not in out and "Infinity" not in out
    assert json.loads(out) == {"a": None, "b": [None, 2.5, 3], "c": [1.0, None]}


def test_a_total_over_fewer_kernel_rows_is_named(capsys, tmp_path):
    # quantitative needs instruction counts, which the gemm row lacks: its totals add 2 of the
    # 3 rows, which the application view and the note say (its smaller source total alone would)
    table = tmp_path / "mix.csv"
    table.write_text("kernel,config,gpu,time_s,dram_bytes,fp32_flops,warp_inst,"
                     "ldst_thread_inst,fp32_thread_inst\n"
                     "triad,n=1e8,a100-sxm4-80gb,1.0e-3,1.2e9,2e8,2e7,3e8,1e8\n"
                     "gemm,n=4096,a100-sxm4-80gb,8.0e-3,1e9,1.37e11,,,\n"
                     "copy,n=1e8,a100-sxm4-80gb,0.6e-3,8e8,,1e7,2e8,1e6\n")
    code, out, _ = run(capsys, "predict", str(table), "-t", "h200", "-m",
                       "roofline,quantitative", "--json")
    got = json.loads(out)
    assert code == 0 and {a["method"]: a["rows"] for a in got["application"]} == {
        "roofline": 3, "quantitative": 2}
    assert got["skipped"] == [{"row": None,
                               "reason": "gemm [n=4096]: quantitative needs 'warp_inst'"}]
    # on stderr, a row the file numbers is named by its line, a row a method skipped by its
    # kernel and configuration
    _, _, err = run(capsys, "predict", str(table), "-t", "h200", "-m", "roofline,quantitative")
    assert "skipped 1 row(s) (gemm [n=4096]): quantitative needs 'warp_inst'" in err
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    result = predict(load(table), targets=["h200"], methods=["roofline", "quantitative"])
    assert result.partial_totals().startswith("application totals add 3 kernel rows, those of "
                                              "quantitative 2 (rows skipped)")
    assert predict(load(table), targets=["h200"], methods=["roofline"]).partial_totals() is None
    shown = result._repr_html_()
    assert "<th>kernel rows</th>" in shown
    # the note and the assumptions, as print() shows them
    assert "application totals add 3 kernel rows" in shown
    assert "<p>Assumptions (of the methods in brackets):</p><ul><li>" in shown
    assert "kernel rows" not in predict(load(EXAMPLE), targets=["h200"])._repr_html_()


def test_a_stand_in_ceiling_is_one_note_not_two():
    # quantitative takes the INT32 add rate for a GPU without a load/store issue rate: one
    # note says so, without a second one saying the rate is missing
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    lines = predict(load(EXAMPLE), targets=["a100-sxm4-80gb"],
                    methods=["quantitative"]).assumption_lines()
    ldst = [ln for ln in lines if "ldst_inst_per_s" in ln]
    assert ldst == ["a100-sxm4-80gb has no ldst_inst_per_s: "
                    "int32_add_ops_per_s used (quantitative)"]


def _predictions(capsys, table) -> list:
    """The roofline predictions of the two-kernel ``table`` for an H100, as JSON records."""
    code, stdout, err = run(capsys, "predict", str(table), "--target", "h100-sxm5-80gb",
                            "--method", "roofline", "--json")
    assert code == 0, err
    records = json.loads(stdout)["predictions"]
    assert len(records) == 2
    return records


def test_a_parquet_measurement_table(tmp_path, capsys):
    """The same table as CSV and as Parquet gives the same predictions; in Parquet, a text
    that is not a number is named by its record number, and a file that is not Parquet says
    so in one line."""
    import pandas as pd

    df = pd.DataFrame({"kernel": ["k1", "k2"], "config": ["a", "b"],
                       "gpu": ["a100-sxm4-40gb"] * 2, "time_s": [1e-3, 2e-3],
                       "flops": [1e9, 2e9], "dram_bytes": [1e8, 2e8], "tile": [16, 32]})
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_parquet(tmp_path / "t.parquet")
    assert _predictions(capsys, tmp_path / "t.parquet") == _predictions(capsys, tmp_path / "t.csv")
    df.assign(time_s=["1e-3", "fast"]).to_parquet(tmp_path / "bad.parquet")
    code, _, err = run(capsys, "predict", str(tmp_path / "bad.parquet"), "--target",
                       "h100-sxm5-80gb")
    assert code == 2 and "row 2, field 'time_s': 'fast' is not a number" in err
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 but nothing else")
    code, _, err = run(capsys, "predict", str(tmp_path / "junk.parquet"), "--target",
                       "h100-sxm5-80gb")
    assert code == 2 and err.count("\n") == 1 and "not a readable Parquet file" in err


def test_a_binary_file_where_a_text_file_belongs(tmp_path, capsys):
    """Every file a user names (profile, GPU file, saved model, calibrated parameters, loopy
    kernel) that is not text fails in one line naming it; a Python UnicodeDecodeError was the
    traceback for all but the profile."""
    junk = bytes([0x80, 0xFF, 0x00, 0x13]) * 64
    gpu, model, params, kernel = (tmp_path / n for n in ("g.yaml", "m.json", "p.json", "k.yaml"))
    for p in (gpu, model, params, kernel):
        p.write_bytes(junk)
    for cmd, bad in ((["predict", EXAMPLE, "-t", str(gpu)], gpu),
                     (["predict", EXAMPLE, "-t", "h200", "--model", str(model)], model),
                     (["predict", "--loopy", str(kernel), "--params", str(params), "--sizes",
                       "n=1024"], params)):
        code, out, err = run(capsys, *cmd)
        assert code == 2 and out == "", err
        assert one_error(err) == f"gpuproj: error: {bad}: not a UTF-8 text file (byte 0x80 at " \
                                  "offset 0)"
    from gpuproj.calibrated.modelfile import read_mapping
    from gpuproj.errors import InputError

    with pytest.raises(InputError, match=r"k\.yaml: not a UTF-8 text file"):
        read_mapping(kernel)
    # a profile with such bytes still reads: a kernel name in another encoding is no reason to
    # refuse the file
    q = tmp_path / "latin1.csv"
    q.write_bytes(b"kernel,config,gpu,time_s\nk\xe9rnel,a,h100-sxm5-80gb,1e-3\n")
    code, out, err = run(capsys, "predict", str(q), "-t", "h200", "-m", "bandwidth", "--csv")
    assert code == 0 and "k\ufffdrnel" in out, err
    # and says so, once
    assert err.splitlines() == [f"gpuproj: warning: {q}: not UTF-8 (byte 0xe9 at offset 26, "
                                "e.g. a Latin-1 or Windows encoding): 1 character(s) read as "
                                "\ufffd"]


def test_an_output_file_that_cannot_be_written(tmp_path, capsys):
    """A picture or report whose folder is a file: one line naming the output (the report was a
    FileNotFoundError traceback, a picture matplotlib's)."""
    (tmp_path / "f").write_text("")
    blocked = tmp_path / "f"
    for cmd, out in ((["roofline", EXAMPLE], "x.png"),
                     (["report", EXAMPLE, "-t", "h200"], "r.html"),
                     (["predict", EXAMPLE, "-t", "h200", "--plot"], "p.svg")):
        code, _, err = run(capsys, *cmd, *([] if cmd[-1] == "--plot" else ["-o"]),
                           str(blocked / out))
        assert code == 2 and one_error(err) == (f"gpuproj: error: {blocked / out}: cannot write: "
                                                "a file stands where its folder would be"), err
    from gpuproj.errors import InputError
    from gpuproj.files import write_text

    folder = tmp_path / "d"
    folder.mkdir()
    with pytest.raises(InputError, match=r"/d: cannot write: Is a directory"):
        write_text(folder, "x")  # an existing folder where the file should be


def test_a_measurement_table_from_a_spreadsheet_with_decimal_commas(tmp_path, capsys):
    """Semicolons between fields and decimal commas, as a spreadsheet exports CSV under a
    German or French locale: the same predictions as the comma-separated table. A text in a
    numeric column is still named by its row."""
    import pandas as pd

    df = pd.DataFrame({"kernel": ["k1", "k2"], "config": ["a", "b"],
                       "gpu": ["a100-sxm4-40gb"] * 2, "time_s": [1.25e-3, 2.5e-3],
                       "flops": [1e9, 2e9], "dram_bytes": [1.5e8, 2e8]})
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_csv(tmp_path / "eu.csv", index=False, sep=";", decimal=",")
    assert "0,00125" in (tmp_path / "eu.csv").read_text()
    assert _predictions(capsys, tmp_path / "eu.csv") == _predictions(capsys, tmp_path / "t.csv")
    df.assign(flops=["1e9", "many"]).to_csv(tmp_path / "bad.csv", index=False, sep=";",
                                            decimal=",")
    code, _, err = run(capsys, "predict", str(tmp_path / "bad.csv"), "--target", "h200")
    assert code == 2 and "bad.csv, row 3, field 'flops': 'many' is not a number" in one_error(err)


def test_a_spreadsheet_table_with_decimal_commas_and_points_is_refused(tmp_path, capsys):
    """A time of "0,5" can only be written with a decimal comma and one of "0.25" only with a
    decimal point: no reading of the file is right, so it is a one-line error naming a row of
    each."""
    path = tmp_path / "mixed.csv"
    path.write_text("kernel;config;gpu;time_s;dram_bytes\n"
                    "k1;a;a100-sxm4-40gb;0,5;1.234\nk2;a;a100-sxm4-40gb;0.25;2\n")
    code, _, err = run(capsys, "predict", str(path), "--target", "h200")
    assert code == 2 and one_error(err) == (
        f"gpuproj: error: {path}, row 3: numbers written with a decimal comma ('0,5', row 2, "
        "field 'time_s') and with a decimal point ('0.25', row 3, field 'time_s'): export the "
        "file again under one locale"), err


def test_repeated_runs_in_a_measurement_table_become_one_row(tmp_path, capsys):
    """Three timings of one configuration (one under the GPU's marketing name) are one source
    row with their median time and spread, so it is predicted once, not three times; repeated
    rows that differ in a column gpuproj does not know are refused by row."""
    from gpuproj.profiles import load

    path = tmp_path / "runs.csv"
    path.write_text("kernel,config,gpu,time_s,dram_bytes,tile\n"
                    "k,n=1,Tesla V100 SXM2 16GB,1e-3,4e8,8\n"
                    "k,n=1,v100-sxm2-16gb,3e-3,6e8,8\n"
                    "k,n=2,v100-sxm2-16gb,5e-3,9e8,8\n"
                    "k,n=1,v100-sxm2-16gb,2e-3,5e8,8\n")
    df = load(path).df.set_index("config")
    assert list(df.index) == ["n=1", "n=2"]
    assert df.loc["n=1", ["time_s", "dram_bytes", "runs", "time_s_min", "time_s_max",
                          "tile", "_row"]].tolist() == [2e-3, 5e8, 3, 1e-3, 3e-3, 8, 2]
    assert df.loc["n=2", ["time_s", "runs", "_row"]].tolist() == [5e-3, 1, 4]
    # every row a repeat: nothing else appears, nothing is skipped
    only = tmp_path / "only.csv"
    only.write_text("kernel,config,gpu,time_s\nk,n=1,v100-sxm2-16gb,1e-3\n"
                    "k,n=1,v100-sxm2-16gb,3e-3\n")
    t = load(only)
    assert (len(t), t.skipped, t.df["time_s"].tolist()) == (1, [], [2e-3])
    code, out, _ = run(capsys, "predict", str(path), "-t", "h100-sxm5-80gb", "--json")
    assert code == 0 and len(json.loads(out)["predictions"]) == 2
    path.write_text(path.read_text().replace("3e-3,6e8,8", "3e-3,6e8,16"))
    code, _, err = run(capsys, "predict", str(path), "-t", "h100-sxm5-80gb")
    assert code == 2 and one_error(err).endswith(
        "runs.csv: rows 2 and 3 repeat kernel, config and gpu but differ in 'tile': put it in "
        "config, or drop it")


def test_a_measurement_table_of_kernels_and_times_needs_no_gpu_or_config_column(tmp_path,
                                                                               capsys):
    """An application's own timings (kernel, time, counts) with the GPU named by --source: the
    table a user writes first. It predicts what the same table with gpu and config columns
    predicts; a kernel timed three times is three runs of it."""
    from gpuproj.profiles import load

    short = tmp_path / "app.csv"
    short.write_text("kernel,time_s,fp32_flops,dram_bytes\nstencil,1e-3,1e9,4e8\n"
                     "reduce,2e-4,1e6,2e8\nreduce,4e-4,1e6,2e8\nreduce,3e-4,1e6,2e8\n")
    full = tmp_path / "full.csv"
    full.write_text("kernel,config,gpu,time_s,fp32_flops,dram_bytes\n"
                    "stencil,default,a100-sxm4-40gb,1e-3,1e9,4e8\n"
                    "reduce,default,a100-sxm4-40gb,3e-4,1e6,2e8\n")
    t = load(short, gpu="A100 SXM4 40GB").df.set_index("kernel")
    assert t.loc["reduce", ["config", "gpu", "time_s", "runs"]].tolist() == [
        "default", "a100-sxm4-40gb", 3e-4, 3]
    args = ("-t", "h100-sxm5-80gb", "-m", "all", "--json")
    code, out, _ = run(capsys, "predict", str(short), "--source", "a100-sxm4-40gb", *args)
    assert code == 0
    code, out_full, _ = run(capsys, "predict", str(full), *args)
    assert code == 0
    assert json.loads(out)["predictions"] == json.loads(out_full)["predictions"]
    # a canonical name with its words swapped is kept, but said: no model would read it
    short.write_text(short.read_text().replace("fp32_flops", "flops_fp32"))
    code, _, err = run(capsys, "predict", str(short), "--source", "a100-sxm4-40gb", *args)
    assert code == 0 and ("app.csv: column 'flops_fp32' is not a canonical column and no model "
                          "reads it; did you mean 'fp32_flops'?") in err


def test_rows_that_already_merged_runs_keep_their_spread_and_count(tmp_path):
    """A table gpuproj wrote (runs, time_s_min, time_s_max per row), or two of them joined: a
    row keeps its own spread, and repeats add their runs (before, every row's spread became
    its time once any row of the file repeated, and joined tables were refused for differing
    in time_s_min)."""
    from gpuproj.profiles import load

    path = tmp_path / "joined.csv"
    path.write_text("kernel,config,gpu,time_s,time_s_min,time_s_max,runs\n"
                    "a,n=1,h100-sxm5-80gb,5e-6,4e-6,7e-6,50\n"
                    "b,n=1,h100-sxm5-80gb,2e-6,1e-6,3e-6,50\n"
                    "b,n=1,h100-sxm5-80gb,4e-6,3e-6,9e-6,20\n"
                    "c,n=1,h100-sxm5-80gb,8e-6,,,\n")
    df = load(path).df.set_index("kernel")[["time_s", "time_s_min", "time_s_max", "runs"]]
    assert df.loc["a"].tolist() == [5e-6, 4e-6, 7e-6, 50]
    assert df.loc["b"].tolist() == [3e-6, 1e-6, 9e-6, 70]
    assert df.loc["c"].tolist() == [8e-6, 8e-6, 8e-6, 1]


def test_configurations_are_kept_as_written(tmp_path):
    """A numeric configuration stays the text it was: an empty cell elsewhere made pandas read
    the column as floats ("1024.0", matching no "1024" of another table), and "0.10" and "0.1"
    became one configuration."""
    from gpuproj.profiles import load

    path = tmp_path / "sizes.csv"
    path.write_text("kernel,config,gpu,time_s\nk,1024,h100-sxm5-80gb,1e-3\n"
                    "k,0.10,h100-sxm5-80gb,2e-3\nk,0.1,h100-sxm5-80gb,3e-3\n"
                    "k,,h100-sxm5-80gb,4e-3\n")
    t = load(path)
    assert t.df["config"].tolist() == ["1024", "0.10", "0.1"] and len(t.skipped) == 1


def test_a_repeated_line_in_a_cross_gpu_table_is_named_where_gpus_are_matched(tmp_path,
                                                                            capsys):
    """A public table's reader does not merge repeats (its format has none), so a line
    repeated is a damaged file: every command that matches configurations across GPUs names
    it (gpu_choice's pivot was a pandas ValueError), and a prediction from one GPU, which
    matches nothing, keeps the rows."""
    from gpuproj.errors import InputError
    from gpuproj.learned import ResidualHybrid
    from gpuproj.profiles import load

    lines = (DATA / "neusight-5gpus-bmm.csv").read_text().splitlines(keepends=True)
    path = tmp_path / "bmm.csv"
    path.write_text("".join(lines[:16] + [lines[15]] + lines[16:]))
    said = ("bmm.csv, row 17: tesla-p4 has several rows of kernel bmm with config "
            "B=6,M=19,N=24,K=13 (the first: row 16): configurations are matched across GPUs, "
            "so each must be one row (a line repeated, a file read twice, a column lost, or an "
            "ncu profile read with per_launch?)")
    for args in (["evaluate", str(path), "--gpu-choice"],
                 ["evaluate", str(path), "--split", "gpu", "-m", "ridge", "--coverage", "0"],
                 ["predict", str(path), "--source", "all", "-t", "h100-sxm5-80gb"]):
        code, _, err = run(capsys, *args)
        assert code == 2 and one_error(err).endswith(said), args
    with pytest.raises(InputError, match="tesla-p4 has several rows"):
        ResidualHybrid().fit(load(path))
    code, out, _ = run(capsys, "predict", str(path), "--source", "tesla-p4", "-t",
                       "h100-sxm5-80gb", "-m", "compute", "--json")
    assert code == 0 and len(json.loads(out)["predictions"]) == 6


def test_a_table_of_several_files_names_the_file_each_row_came_from(tmp_path, capsys):
    """Files read together (one per GPU, as the seed report's) kept the first file's name for
    every row: a repeated line in the second was reported at the first file's row 3, and a
    model's skips of the second GPU's rows named the first file."""
    import pandas as pd

    from gpuproj.evaluate import evaluate
    from gpuproj.predict import predict
    from gpuproj.profiles import load
    from gpuproj.profiles.table import ProfileTable

    head = "kernel,config,gpu,time_s,flops,dram_bytes,shared_bytes,working_set_bytes\n"
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(head + "k,1,rtx-2080-ti,1e-3,1e6,1e6,0,1e6\nj,1,rtx-2080-ti,1e-6,0,0,4096,4096\n")
    b.write_text(head + "k,1,titan-v,1e-3,1e6,1e6,0,1e6\nj,1,titan-v,1e-6,0,0,4096,4096\n")
    t = load(a).concat(load(b))
    assert t.origin == f"{a}, {b}"
    assert t.on("titan-v").origin == str(b) and t.on("rtx-2080-ti").origin == str(a)
    assert t.select("k").origin == t.origin
    assert t.subset(t.df["gpu"] == "titan-v").origin == str(b)
    assert t.subset(t.df["gpu"] == "none").origin == t.origin  # no row: the table's files
    # rows joined by hand, one without a file
    by_hand = ProfileTable(pd.concat([t.df, load(a).df], ignore_index=True), [], "mine")
    assert by_hand.on("rtx-2080-ti").origin == str(a)
    # a table built without the canonical problem column evaluates and predicts as one of
    # no problems
    bare = ProfileTable(t.df.drop(columns="problem"), [], t.origin)
    assert evaluate(bare, ["same"]).summary()["same"]["n"] == 4
    assert len(predict(bare.on("titan-v"), targets=["h200"], methods="same").table()) == 2
    # j has shared-memory bytes alone, which hierarchical-ext cannot time without L2 ceilings
    ev = evaluate(t, ["hierarchical-ext"])
    assert sorted((Path(s.path).name, s.what) for s in ev.skipped) == [
        ("a.csv", "j [1] rtx-2080-ti -> titan-v"), ("b.csv", "j [1] titan-v -> rtx-2080-ti")]
    # a configuration of one problem in a and of another in b (each file alone is sound)
    pa, pb = tmp_path / "pa.csv", tmp_path / "pb.csv"
    pa.write_text("kernel,config,problem,gpu,time_s\nk,1,n=8,rtx-2080-ti,1e-3\n")
    pb.write_text("kernel,config,problem,gpu,time_s\nk,1,n=9,titan-v,1e-3\n")
    code, _, err = run(capsys, "evaluate", str(pa), str(pb))
    assert code == 2 and (f"error: {pb}, row 2, field 'problem': kernel k with config 1 has "
                          f"problem 'n=9' here and 'n=8' in row 2 of {pa}: a configuration "
                          "solves one problem on every GPU") in one_error(err)
    # a configuration of a's GPU again in b: a reader merges repeats within its file only
    b.write_text(head + "k,1,titan-v,1e-3,1e6,1e6,0,1e6\nk,1,rtx-2080-ti,2e-3,1e6,1e6,0,1e6\n")
    code, _, err = run(capsys, "evaluate", str(a), str(b))
    assert code == 2 and (f"error: {b}, row 3: rtx-2080-ti has several rows of kernel k with "
                          f"config 1 (the first: row 2 of {a}): ") in one_error(err)

@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("fmt", ["--json", "--csv", None])
def test_a_full_disk_under_the_output_is_one_line(fmt):
    """Standard output on a full device (``> /dev/full``): one error line and exit 1, not a
    traceback from inside pandas or json."""
    import subprocess
    import sys

    args = [sys.executable, "-m", "gpuproj.cli.main", "predict",
            "examples/rodinia-p100-nvprof.csv", "-t", "h100-sxm5-80gb"] + ([fmt] if fmt else [])
    with open("/dev/full", "w") as full:
        q = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, text=True,
                           cwd=Path(__file__).resolve().parents[1])
    assert q.returncode == 1
    assert q.stderr.strip().splitlines() == ["gpuproj: error: cannot write: No space left on "
                                             "device"]


NCU = DATA / "ncu-h100-sxm5-80gb-raw-base.csv"
NSYS = DATA / "nsys" / "vernier-thor_cuda_gpu_trace.csv"
NVPROF_METRICS = DATA / "nvprof-v100-pcie-32gb-metrics.csv"
NVPROF_TRACE = DATA / "nvprof-v100-pcie-32gb-trace.csv"
A100 = ["--source", "a100-sxm4-80gb", "-t", "h100-sxm5-80gb"]


def _edit_line(path, contains, old, new):
    """``path``'s text with ``old`` replaced by ``new`` in the first line holding
    ``contains``, and that line's number."""
    lines = Path(path).read_text().splitlines(keepends=True)
    i = next(i for i, ln in enumerate(lines) if contains in ln)
    lines[i] = lines[i].replace(old, new, 1)
    return "".join(lines), i + 1


def _damaged(name):
    """(file name, text, extra arguments, what the error says) for damage found by fuzzing
    the commands: each was a traceback or a misread without a word."""
    if name == "long field":  # the csv module's 128 KiB field limit
        text, row = _edit_line(NCU, '"1","', '"1","', f'"1","{"k" * 200_000}')
        return "ncu.csv", text, ["-t", "h200"], f"row {row}: not a readable CSV line"
    if name == "nsys column twice":
        text = NSYS.read_text().replace("Start (ns)", "Duration (ns)", 1)
        return "trace.csv", text, ["-t", "h200"], "column 'Duration (ns)' appears twice"
    if name == "column twice":
        return ("t.csv", "kernel,time_s,time_s\na,1e-3,2e-3\n", A100,
                "row 1, field 'time_s': column 'time_s' appears twice in the header")
    if name == "first row with a field more":  # pandas took it for row names, shifting all
        return ("t.csv", "kernel,time_s,dram_bytes\na,1e-3,1e9,9\nb,2e-3,1e9\n", A100,
                "row 2: 4 fields where the header has 3")
    if name == "a row short in the middle":  # pandas filled it in with empty values
        return ("t.csv", "kernel,time_s,dram_bytes\na,1e-3,1e9\nb,2e-3\nc,1e-3,1e9\n", A100,
                "row 3: 2 fields where the header has 3")
    if name == "cut inside a row":
        return ("t.csv", "kernel,time_s,dram_bytes\na,1e-3,1e9\nb,2e-3", A100,
                "row 3: the file ends inside a row (2 of the header's 3 fields)")
    if name == "blanks without a line break":  # was a StopIteration in the cut-row check
        return "t.csv", "   ", [*A100, "--format", "measurement"], "file is empty"
    if name == "quote left open":
        text = NSYS.read_text()
        return ("trace.csv", text[:text.index('"', text.index("\n") + 1) + 5], ["-t", "h200"],
                "a quoted field is not closed: the line is cut short?")
    if name in ("negative count", "overflowing count"):
        value = "-5" if name == "negative count" else "1e400"
        text, row = _edit_line(NVPROF_METRICS, '"dram_read_transactions"', '"',
                               "\x00")  # a marker to find the three values after the name
        head, tail = text.split("\x00", 1)
        fields = tail.split("\n", 1)[0].split(",")
        fields[-3:] = [value] * 3
        text = head + '"' + ",".join(fields) + "\n" + tail.split("\n", 1)[1]
        return ("m.csv", text, ["--trace", str(NVPROF_TRACE), "-t", "h200"],
                f"row {row}, field 'dram_read_transactions': "
                + ("-5 is negative" if value == "-5" else "'1e400' is not a finite number"))
    if name == "infinite ncu time":
        lines = NCU.read_text().splitlines(keepends=True)
        h = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
        col = next(csv.reader([lines[h]])).index("gpu__time_duration.sum")
        fields = next(csv.reader([lines[h + 2]]))  # under the units row
        fields[col] = "inf"
        lines[h + 2] = ",".join(f'"{f}"' for f in fields) + "\n"
        return ("ncu.csv", "".join(lines), ["-t", "h200"], f"row {h + 3}, field "
                "'gpu__time_duration.sum': 'inf' is not a finite number")
    if name == "markup in a kernel name":
        return ("t.csv", "kernel,time_s,dram_bytes\nf[/i],1e-3,1e8\n", A100, None)
    raise AssertionError(name)


@pytest.mark.parametrize("name", ["long field", "nsys column twice", "column twice",
                                  "first row with a field more", "a row short in the middle",
                                  "cut inside a row",
                                  "blanks without a line break",
                                  "quote left open", "negative count", "overflowing count",
                                  "infinite ncu time", "markup in a kernel name"])
def test_damaged_inputs_found_by_fuzzing(name, tmp_path, capsys):
    file, text, args, says = _damaged(name)
    path = tmp_path / file
    path.write_text(text)
    code, out, err = run(capsys, "predict", str(path), *args)
    if says is None:  # read as written: brackets are not rich markup
        assert code == 0 and "f[/i]" in out and "Traceback" not in err
    else:
        assert code == 2 and says in one_error(err), err


def test_a_byte_order_mark_and_a_cut_gzip(tmp_path, capsys):
    # Excel's "CSV UTF-8" starts with a BOM: still a measurement table
    bom = tmp_path / "bom.csv"
    bom.write_text("\ufeffkernel,time_s,dram_bytes\na,1e-3,1e9\n", encoding="utf-8")
    code, out, _ = run(capsys, "predict", str(bom), *A100, "--json")
    assert code == 0 and json.loads(out)["predictions"][0]["kernel"] == "a"
    # a gzip file cut short says so, not that its format is unknown
    import gzip

    cut = tmp_path / "t.csv.gz"
    whole = gzip.compress(NVPROF_TRACE.read_bytes())
    cut.write_bytes(whole[:len(whole) // 2])
    code, _, err = run(capsys, "predict", str(cut), "-t", "h200")
    assert code == 2 and "Compressed file ended" in one_error(err)


def test_empty_source_missing_trace_and_absurd_times(tmp_path, capsys):
    code, _, err = run(capsys, "predict", EXAMPLE, "--source", ",", "-t", "h200")
    assert code == 2 and "no source GPU named" in one_error(err)
    code, _, err = run(capsys, "predict", EXAMPLE, "-t", "h200", "--trace",
                       str(tmp_path / "none.csv"))
    assert code == 2 and "Invalid value for '--trace'" in one_error(err)
    # a trace of no known kind: its kinds named, not --format, which applies to the profile
    odd = tmp_path / "odd.csv"
    odd.write_text("a,b\n1,2\n")
    code, _, err = run(capsys, "predict", EXAMPLE, "-t", "h200", "--trace", str(odd))
    assert code == 2 and one_error(err) == (
        f"gpuproj: error: {odd}: cannot tell the format of this file; a trace is an nsys "
        "timeline (cuda_gpu_trace CSV), a PyTorch profiler trace, a rocprofv3 kernel trace or a "
        "kernel,time_s table")
    # 1e308 s read (and two launches of it overflowed to an infinite mean, 1e10 launches of
    # it to an infinite total); no time, size or count comes near 1e100
    huge = tmp_path / "huge.csv"
    huge.write_text("kernel,time_s\na,1e-3\na,1e308\nb,1e-3\n")
    code, _, err = run(capsys, "predict", str(huge), *A100)
    assert code == 2 and one_error(err) == (
        f"gpuproj: error: {huge}, row 3, field 'time_s': '1e308' is beyond any count, size or "
        "time (over 1e+100)")


def _mini_gpu(tmp_path):
    """A user GPU file with an id the catalog lacks, a DRAM bandwidth, an FP32 peak and SMs
    only (docs/catalog.md: only the fields a model needs are required)."""
    path = tmp_path / "mini.yaml"
    path.write_text("schema_version: 1\nid: mygpu\nname: My GPU\nvendor: NVIDIA\n"
                    "architecture: Hopper\nisa: sm_90\n"
                    "values:\n  sm_count: {value: 100, kind: user, source: me}\n"
                    "peak:\n  dram_bw_bytes_per_s: {value: 2.0e12, kind: user, source: me}\n"
                    "  fp32_fma_flops_per_s: {value: 5.0e13, kind: user, source: me}\n")
    return path


def test_a_gpu_file_as_source_and_as_a_target_without_a_precision(tmp_path, capsys):
    gpu = _mini_gpu(tmp_path)
    app = tmp_path / "app.csv"
    app.write_text("kernel,time_s,dram_bytes,flops\nk1,1e-3,1e9,1e9\n")
    code, out, _ = run(capsys, "predict", str(app), "-s", str(gpu), "-t", "h200", "-m",
                       "bandwidth", "--json")
    assert code == 0 and json.loads(out)["source"] == "mygpu"
    # the Rodinia rows with FP64 FLOPs have no ceiling on it to draw: one line, not a crash
    code, _, err = run(capsys, "roofline", EXAMPLE, "-t", str(gpu), "-o",
                       str(tmp_path / "r.png"))
    assert code == 2 and "no fp64 compute ceiling to draw" in one_error(err)


def test_calibration_and_model_options_that_cannot_work(tmp_path, capsys):
    code, _, err = run(capsys, "evaluate", str(DATA / "amaris-2gpus-calculate_temp.csv"),
                       "--train", str(DATA / "amaris-9gpus-bpnn_adjust_weights.csv"), "-m",
                       "bandwidth", "--save-model", str(tmp_path / "m"))
    assert code == 2 and "--save-model saves learned models, and bandwidth learns nothing" \
        in one_error(err)
    code, _, err = run(capsys, "calibrate", str(DATA / "calibrated-pocl-tiny-model.yaml"),
                       "--repetitions", "0")
    assert code == 2 and "Invalid value for '--repetitions'" in one_error(err)
    kernel = DATA / "calibrated-matmul-kernel.yaml"
    params = json.loads((Path(__file__).resolve().parents[1] / "docs" / "results"
                         / "calibrated_pocl-cpu_matmul_params.json").read_text())
    for bad, says in ((None, "expected a JSON object"),
                      ({**params, "device": None}, "field 'device': expected the device's"),
                      ({**params, "model": {**params["model"], "features": {
                          "f_x": "f_y * 2", "f_y": "f_x"}, "expression":
                          params["model"]["expression"] + " + p_madd * f_x"}},
                       "cycle: f_x -> f_y -> f_x")):
        p = tmp_path / "p.json"
        p.write_text(json.dumps(bad))
        code, _, err = run(capsys, "predict", "--loopy", str(kernel), "--params", str(p))
        assert code == 2 and says in one_error(err), err
    # sizes past isl's integers (a traceback), a name given twice (the first dropped) and a
    # name the kernel does not have (taken without a word)
    p.write_text(json.dumps(params))
    for sizes, says in (("n=9223372036854775808", "'n=9223372036854775808' is too large"),
                        ("n=1024,n=2048", "n given twice in 'n=1024,n=2048'"),
                        ("n=16,m=32", "field 'sizes': kernel 'matmul_pf' has no size parameter "
                                      "m (it has n)")):
        code, _, err = run(capsys, "predict", "--loopy", str(kernel), "--params", str(p),
                           "--sizes", sizes)
        assert code == 2 and says in one_error(err), err


def test_a_file_named_cubin_that_is_no_elf(tmp_path, capsys):
    from gpuproj.sass.tools import cubin_arch

    assert cubin_arch(b"\x7fELF\x02\x01\x01garbage") is None  # was a struct.error
    # and the architecture of a real cubin is still read (a cubin_arch that always said None
    # passed the line above): the two cubins of the committed fatbin (nvcc 13.0, MANIFEST.txt)
    # start at the two ELF magics in it; their headers are CUDA 12.8+'s (OS ABI 0x41, ABI
    # version 8), the architecture in e_flags bits 8..15: 0x6005a04 -> 0x5a = 90,
    # 0x6006402 -> 0x64 = 100
    fat = (DATA / "sass" / "fixture_kernels-sm_90-sm_100.fatbin").read_bytes()
    starts = [i for i in range(len(fat)) if fat.startswith(b"\x7fELF", i)]
    assert [cubin_arch(fat[i:]) for i in starts] == [90, 100]

    def header(osabi, abi_version, machine, flags):
        h = bytearray(64)
        h[:9] = b"\x7fELF\x02\x01\x01" + bytes([osabi, abi_version])
        h[0x12:0x14] = machine.to_bytes(2, "little")
        h[0x30:0x34] = flags.to_bytes(4, "little")
        return bytes(h)

    # before CUDA 12.8 (OS ABI 0x33, ABI version 7) the architecture is e_flags' low byte, the
    # virtual one bits 16..23: sm_80 is 0x500550, sm_70 0x460546, as cuobjdump's headerflags
    # "EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"; read as the new layout they would be 5
    assert cubin_arch(header(0x33, 7, 190, 0x500550)) == 80
    assert cubin_arch(header(0x33, 7, 190, 0x460546)) == 70
    assert cubin_arch(header(0x41, 8, 190, 0x6005a04)) == 90
    assert cubin_arch(header(0x41, 8, 62, 0x6005a04)) is None  # EM_X86_64: no CUDA ELF
    assert cubin_arch(header(0x41, 8, 190, 0x6005a04)[:63]) is None  # header cut short


def test_rows_a_model_skips_for_one_missing_ceiling_are_one_line(tmp_path, capsys):
    """Three GPUs without an L2 bandwidth in the catalog give six GPU pairs on which
    hierarchical-ext cannot time a row of shared-memory bytes alone (the seed report's
    shared_bank_conflict): one line naming the ceiling and the GPUs, not one per pair."""
    q = tmp_path / "m.csv"
    q.write_text("kernel,config,gpu,time_s,flops,dram_bytes,shared_bytes,working_set_bytes\n"
                 + "".join(f"k,a,{g},1e-6,0,0,4096,4096\n"
                           for g in ("rtx-2080-ti", "titan-v", "gtx-titan-x")))
    code, _, err = run(capsys, "evaluate", str(q), "-m", "hierarchical-ext")
    cause = ("hierarchical-ext gave no finite positive time (no l2_bw_bytes_per_s on "
             "gtx-titan-x, rtx-2080-ti, titan-v)")
    assert [ln for ln in err.splitlines() if "skipped" in ln] == [
        f"gpuproj: skipped 6 projection(s) (k [a] gtx-titan-x -> rtx-2080-ti, "
        f"k [a] gtx-titan-x -> titan-v, k [a] rtx-2080-ti -> gtx-titan-x, ...): {cause}"]
    assert code == 2 and f"({cause}: 6 projections)" in one_error(err.splitlines()[-1])


def test_a_gpu_named_twice_is_one_gpu_in_evaluate(capsys):
    # --target a,A crashed (duplicate categories); --source a,a counted every pair twice
    t = str(DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv")

    def pairs(*opts):
        code, out, _ = run(capsys, "evaluate", t, "-m", "bandwidth", "--json", *opts)
        assert code == 0
        return json.loads(out)["methods"]["bandwidth"]["n"]

    assert pairs("--target", "rtx-3090,RTX-3090") == pairs("--target", "rtx-3090") > 0
    assert pairs("--source", "rtx-3090", "--source", "rtx-3090") == pairs("--source", "rtx-3090")


def test_a_method_named_twice_is_one_method(capsys):
    # evaluate -m bandwidth,bandwidth counted every pair twice; predict -s all counted every
    # source twice
    t = str(DATA / "amaris-9gpus-bpnn_adjust_weights.csv")
    code, out, _ = run(capsys, "evaluate", t, "-m", "bandwidth,bandwidth", "-m", "same",
                       "--json")
    once = run(capsys, "evaluate", t, "-m", "bandwidth,same", "--json")[1]
    assert code == 0 and json.loads(out)["methods"] == json.loads(once)["methods"]
    code, out, _ = run(capsys, "predict", t, "-s", "all", "-t", "h100-pcie-80gb", "-m",
                       "bandwidth,bandwidth", "--json")
    assert code == 0 and {r["sources"] for r in json.loads(out)["predictions"]} == {9}


def test_evaluate_lists_a_method_without_error_first(tmp_path, capsys):
    # a MAPE of 0 % sorted last, as if it were missing
    t = tmp_path / "same.csv"
    t.write_text("kernel,config,gpu,time_s,dram_bytes\nk,c,a100-sxm4-80gb,1e-3,1e6\n"
                 "k,c,h100-sxm5-80gb,1e-3,1e6\n")
    code, out, _ = run(capsys, "evaluate", str(t), "-m", "bandwidth,same")
    rows = [ln.split()[1] for ln in out.splitlines() if ln.startswith("│ ")]
    assert code == 0 and rows[:2] == ["same", "bandwidth"]


def test_a_kernel_from_the_sources_that_measured_it(tmp_path, capsys):
    # -s all -k kB said no kernel matches (listing one source's kernels) when another source
    # had kB
    t = tmp_path / "m.csv"
    t.write_text("kernel,config,gpu,time_s,dram_bytes\nkA,c,a100-sxm4-80gb,1e-3,1e8\n"
                 "kA,c,h100-sxm5-80gb,5e-4,1e8\nkB,c,a100-sxm4-80gb,1e-3,1e8\n")
    code, out, _ = run(capsys, "predict", str(t), "-s", "all", "-t", "h200", "-m", "bandwidth",
                       "-k", "kB", "--json")
    got = json.loads(out)["predictions"]
    assert code == 0 and [(r["kernel"], r["sources"]) for r in got] == [("kB", 1)]
    code, _, err = run(capsys, "predict", str(t), "-s", "all", "-t", "a100-sxm4-80gb", "-m",
                       "bandwidth", "-k", "kB")
    assert code == 2 and "only a100-sxm4-80gb measured these kernels" in one_error(err)
    code, _, err = run(capsys, "predict", str(t), "-s", "h100-sxm5-80gb,a100-sxm4-80gb", "-t",
                       "h200", "-k", "zz")
    assert code == 2 and "no kernel matches --kernel 'zz' (kernels: kA, kB)" in one_error(err)


def test_empty_or_repeated_gpu_lists(tmp_path, capsys):
    # -t '' said "Missing option '--target'" (it was given), -t ' ' named the API's argument;
    # quadrant -g , said no GPU had a bandwidth, and drew a GPU named twice twice
    for empty in ("", " ", ","):
        code, _, err = run(capsys, "predict", EXAMPLE, "-t", empty)
        assert code == 2 and one_error(err) == (
            "gpuproj: error: no target GPU named (--target NAME[,NAME], targets=[...] in the API)")
    png = str(tmp_path / "q.png")
    code, _, err = run(capsys, "quadrant", "-g", ",", "-o", png, "--intensity", "1")
    assert code == 2 and one_error(err) == (
        "gpuproj: error: no GPU named to place (--gpus NAME[,NAME])")
    code, out, _ = run(capsys, "quadrant", "-g", "h200,H200-SXM-141GB", "-o", png,
                       "--intensity", "1", "--json")
    assert code == 0 and [g["id"] for g in json.loads(out)["gpus"]] == ["h200-sxm-141gb"]


def test_split_options_that_it_would_ignore_are_errors(capsys, tmp_path):
    # --split config|kernel dropped --target, every split --source, without a word
    t = str(DATA / "amaris-2gpus-calculate_temp.csv")
    for opts, says in ((["--split", "config", "--target", "gtx-680"],
                        "--target goes with --split gpu (the GPUs to leave out), not --split "
                        "config"),
                       (["--split", "gpu", "--source", "gtx-680"],
                        "--source does not go with --split")):
        code, _, err = run(capsys, "evaluate", t, "-m", "ridge", *opts)
        assert code == 2 and says in one_error(err), err


def test_an_empty_output_path_is_an_error(capsys):
    # `predict --plot ''` and `evaluate --save-model ''` wrote nothing and said nothing; `-o ''`
    # blamed a file named '.'
    t = str(DATA / "amaris-2gpus-calculate_temp.csv")
    p = str(DATA.parents[1] / "examples" / "rodinia-p100-nvprof.csv")
    for args, option in ((["predict", p, "-t", "h200", "--plot", ""], "'--plot'"),
                         (["report", p, "-t", "h200", "-o", " "], "'-o' / '--output'"),
                         (["evaluate", t, "--plots", ""], "'--plots'"),
                         (["evaluate", t, "--train", t, "-m", "ridge", "--save-model", ""],
                          "'--save-model'"),
                         (["bench", "--raw", ""], "'--raw'")):
        code, _, err = run(capsys, *args)
        assert code == 2 and option in one_error(err) and "the path is empty" in err, err


def test_a_warning_quoting_a_line_break_stays_one_line(capsys):
    # a device name with a line break (from a driver or a raw bench file) split the warning
    from gpuproj.cli.main import _one_line
    from gpuproj.errors import GpuprojWarning

    _one_line(None)("device 'cpu\nfast' measured nothing", GpuprojWarning, "f.py", 1)
    err = capsys.readouterr().err
    assert err == "gpuproj: warning: device 'cpu fast' measured nothing\n"


def test_sources_named_twice_an_amd_source_for_sass_and_empty_api_inputs(tmp_path, capsys):
    # a table without a gpu column and one --source given twice was told to name its GPU with
    # --source; --sass from an AMD source blamed the 'arch' field of gfx908
    t = tmp_path / "t.csv"
    t.write_text("kernel,time_s\nk1,1e-3\n")
    code, _, _ = run(capsys, "predict", str(t), "-s", "a100-sxm4-80gb,A100-SXM4-80GB",
                     "-t", "h200")
    assert code == 0
    code, _, err = run(capsys, "predict", str(DATA / "rocprof" / "omniperf-vcopy-mi100"), "-t",
                       "h100-sxm5-80gb", "--sass", str(DATA / "sass" / "nvdisasm-sm_90-"
                                                            "fixture_kernels.sass"))
    assert code == 2 and one_error(err) == (
        "gpuproj: error: --sass compares NVIDIA machine code: the source GPU mi100 is AMD "
        "(gfx908)")
    listing = DATA / "sass" / "nvdisasm-sm_90-fixture_kernels.sass"
    code, _, err = run(capsys, "predict", str(DATA / "ncu-h100-sxm5-80gb-raw-auto.csv"), "-t",
                       "b200", "--sass", str(listing), "-m", "hierarchical")
    assert code == 2 and one_error(err) == (
        f"gpuproj: error: {listing}: listing is for sm_90, not sm_100 (the target b200)")
    # the API: an empty table was 'several GPUs ()', targets=None a TypeError
    from gpuproj.errors import GpuprojError, InputError
    from gpuproj.predict import predict
    from gpuproj.profiles import load
    from gpuproj.profiles.table import ProfileTable

    table = load(t, gpu="a100-sxm4-80gb")
    with pytest.raises(InputError, match="the profile has no rows"):
        predict(ProfileTable(table.df.iloc[:0], [], ""), targets="h200")
    with pytest.raises(GpuprojError, match="no target GPU named"):
        predict(table, targets=None)


def test_options_that_would_be_ignored_or_run_everything(tmp_path, capsys):
    # evaluate -m '' ran every method, --shortlist ',' nothing; --shortlist of a method not
    # evaluated or unknown failed only after the whole evaluation; quadrant -k / -s without a
    # profile were dropped
    t = str(DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv")
    for opts, says in ((["-m", ""], "no method named (--method NAME[,NAME], or all)"),
                       (["--shortlist", ","], "no method named for --shortlist"),
                       (["--shortlist", "nonsense"], "unknown method 'nonsense'"),
                       (["-m", "same", "--shortlist", "same,bandwidth"],
                        "--shortlist bandwidth: not among the methods evaluated"),
                       (["--shortlist", "same,gb"],
                        "--shortlist gb: gb must be trained: add --train TABLE")):
        code, _, err = run(capsys, "evaluate", t, *opts)
        assert code == 2 and says in one_error(err), err
    code, _, err = run(capsys, "quadrant", "-g", "h200", "--intensity", "1", "-k", "foo",
                       "-s", "h100-sxm5-80gb", "-o", str(tmp_path / "q.png"))
    assert code == 2 and one_error(err) == (
        "gpuproj: error: --source and --kernel without --profile: they select among its rows")


def test_gpu_choice_names_the_methods_it_cannot_rank(capsys):
    code, out, _ = run(capsys, "evaluate", str(DATA / "amaris-9gpus-bpnn_adjust_weights.csv"),
                       "-m", "bandwidth,same", "--gpu-choice")
    assert code == 0 and ("not in the table: same, which predicts every GPU of a ranking alike"
                          in " ".join(out.split()))


def test_roofline_numbers_need_no_picture(capsys):
    # --json alone asked for a picture file (-o was required)
    code, out, _ = run(capsys, "roofline", EXAMPLE, "-t", "h200", "--json")
    assert code == 0 and len(json.loads(out)["kernels"]) == 3
    code, _, err = run(capsys, "roofline", EXAMPLE, "-t", "h200")
    assert code == 2 and "give -o FILE for the picture, or --json for the numbers" in err


def test_quadrant_and_report_say_what_to_give_without_o(capsys):
    """Without -o, click said only "Missing option '-o' / '--output' / '--out'"; they say what
    to give as roofline does, and quadrant's --json, as roofline's, needs no picture."""
    code, out, _ = run(capsys, "quadrant", "-g", "h200", "--intensity", "1", "--json")
    assert code == 0 and json.loads(out)["kernels"][0]["bound"] == {"h200-sxm-141gb": "memory"}
    code, _, err = run(capsys, "quadrant", "-g", "h200", "--intensity", "1")
    assert code == 2 and "give -o FILE for the picture, or --json for the numbers" in err
    code, _, err = run(capsys, "report", EXAMPLE, "-t", "h200")
    assert code == 2 and "give -o FILE: the HTML file to write" in err


def test_a_pipe_is_refused_before_it_is_read(tmp_path):
    """A named pipe (as `<(cmd)` gives) reads once, and the readers read a file more than
    once: the second read began mid-stream and gave 'the file is empty' or a header seen
    twice. Refused before anything opens it (which would block on a pipe nobody writes)."""
    import os

    from gpuproj.errors import InputError
    from gpuproj.profiles import load

    fifo = tmp_path / "profile.csv"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file .*save it to a file first"):
        load(fifo)


def test_a_short_option_means_one_thing_and_every_kernel_option_has_one():
    """-g was --source of roofline and --gpus of quadrant; profile and sass diff took only
    --kernel, which every other command also takes as -k."""
    import click

    from gpuproj.cli.main import COMMANDS, cli

    def walk(name, cmd):
        yield name, cmd
        if isinstance(cmd, click.Group):
            for n in cmd.list_commands(None):
                yield from walk(f"{name} {n}", cmd.get_command(None, n))

    meaning, without_k = {}, []
    for n in COMMANDS:
        for name, cmd in walk(n, cli.get_command(None, n)):
            for p in cmd.params:
                first = next((o for o in p.opts if o.startswith("--")), p.name)
                for short in (o for o in p.opts if not o.startswith("--")):
                    meaning.setdefault(short, set()).add(first)
                if first == "--kernel" and "-k" not in p.opts:
                    without_k.append(name)
    assert {s: m for s, m in meaning.items() if len(m) > 1} == {} and without_k == []
    assert meaning["-g"] == {"--gpus"} and meaning["-s"] == {"--source"}


def test_roofline_takes_its_source_as_s_not_g(capsys):
    code, out, _ = run(capsys, "roofline", EXAMPLE, "-s", "p100-pcie-16gb", "--json")
    assert code == 0 and json.loads(out)["gpu"] == "tesla-p100-pcie-16gb"
    code, _, err = run(capsys, "roofline", EXAMPLE, "-g", "p100-pcie-16gb", "--json")
    assert code == 2 and "No such option '-g'" in err


def test_debug_after_the_command_says_where_it_goes(capsys):
    code, _, err = run(capsys, "predict", EXAMPLE, "-t", "h200", "--debug")
    assert code == 2 and ("No such option '--debug': it is gpuproj's own option, given before "
                          "the command (gpuproj --debug COMMAND ...).") in err


@pytest.mark.parametrize("json_out", [False, True], ids=["table", "json"])
def test_a_reader_that_closes_the_output_early_is_no_error(json_out):
    """`gpuproj predict ... | head -1`: rich (a table) and click (the JSON) ended a closed
    pipe with status 1, as an error; the reader has what it wanted: status 0, nothing on
    stderr. The pipe is closed before the command writes, as a reader that has its line."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    p = subprocess.Popen([sys.executable, "-c",
                          "import sys; from gpuproj.cli.main import main; sys.exit(main())",
                          "predict", EXAMPLE, "-t", "h200", *(["--json"] if json_out else [])],
                         stdout=write, stderr=subprocess.PIPE)
    os.close(write)
    os.close(read)
    _, err = p.communicate(timeout=300)
    assert (p.returncode, err.decode()) == (0, "")


def test_evaluate_says_what_the_widths_measure(capsys):
    from gpuproj.evaluate import UNITS

    # hierarchical-ext: the one with an interval on this table (hierarchical has none there)
    code, out, _ = run(capsys, "evaluate", str(DATA / "amaris-9gpus-bpnn_adjust_weights.csv"),
                       "-m", "bandwidth,hierarchical-ext")
    text = " ".join(out.split())  # the caption wraps at the table's width
    assert code == 0 and "interval width" in text and "band width" in text
    assert ("interval width: median (high - low) / predicted; band width: median (band high - "
            "band low) / predicted" in text)
    # the JSON's units, less what they say of JSON's nulls
    assert UNITS["interval_width"].startswith("median (high - low) / predicted; null")


def test_evaluate_explains_only_the_intervals_its_table_shows(capsys):
    """The footnote explained hierarchical's and --coverage's intervals under a table of
    methods without any (its interval columns all '-')."""
    from gpuproj.cli.evaluate import _summary_caption

    code, out, _ = run(capsys, "evaluate", str(DATA / "amaris-9gpus-bpnn_adjust_weights.csv"),
                       "-m", "bandwidth,roofline")
    caption = " ".join(out.split("┘")[-1].split())  # below the table
    assert code == 0 and caption == ("band: its measured 90 % error band (docs/accuracy.md); "
                                     "band width: median (band high - band low) / predicted")

    def row(interval, band=True):
        return {"coverage": 0.9 if interval else None, "band_coverage": 0.9 if band else None}

    caption = _summary_caption({"gb": row(True, False), "same": row(False)}, None)
    assert caption.startswith("interval: the method's own (learned: calibrated on out-of-fold "
                              "errors); band: ")
    assert _summary_caption({"gb": row(True, False), "bandwidth": row(True)}, 0.8).startswith(
        "interval: the method's own (learned: calibrated on out-of-fold errors; analytical "
        "with --coverage: split-conformal); band: ")
    assert _summary_caption({"hierarchical-ext": row(True)}, None).startswith(
        "interval: the method's own (hierarchical: its spread over memory levels, not a "
        "probability); band: ")
    assert _summary_caption({"gb": row(False, False)}, None) is None


def test_progress_bars_go_to_stderr_with_stdout_redirected(capsys, monkeypatch):
    """`gpuproj evaluate ... > out.txt` on a terminal: the bar on stderr, where it was drawn
    on stdout and so hidden (rich draws nothing on a stdout that is not a terminal)."""
    import sys

    from gpuproj.cli._common import progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    assert list(progress(range(3), description="folds")) == [0, 1, 2]
    out = capsys.readouterr()
    assert out.out == "" and "folds" in out.err
    # stderr piped: no bar at all
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert list(progress(range(3), description="folds")) == [0, 1, 2]
    assert capsys.readouterr().err == ""
