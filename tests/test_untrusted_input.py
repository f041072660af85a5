"""Files from a stranger: each crafted input below once crashed gpuproj (a segmentation fault, a
traceback) or held it for seconds to hours (regular expressions that backtrack, an expression
that expands exponentially); each is now one `gpuproj: error:` line and exit code 2, read in
milliseconds. Times are checked against a limit far above what the fix takes and far below what
the input took before it."""

import gzip
import io
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli as run

from gpuproj.errors import InputError

DATA = Path(__file__).resolve().parent / "data"
EXAMPLE = str(Path(__file__).resolve().parents[1] / "examples" / "rodinia-p100-nvprof.csv")
KERNEL = str(DATA / "calibrated-matmul-kernel.yaml")
FAST_S = 1.0  # each crafted input took from 3 s to hours before its fix


def one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuproj: error: "), err
    return lines[0]


def timed(f, *args):
    t = time.perf_counter()
    out = f(*args)
    return out, time.perf_counter() - t


# --- YAML (GPU, model and kernel files) --------------------------------------------------------


def test_deeply_nested_yaml_is_an_error_not_a_crash(tmp_path):
    # 100,000 '[' crashed libyaml's composer (a segmentation fault): run in its own process
    code = ("from gpuproj.files import parse_yaml\nfrom gpuproj.errors import InputError\n"
            "for t in ['[' * 100000 + ']' * 100000, '- ' * 50000 + 'x']:\n"
            "    try:\n        parse_yaml(t, 'x.yaml')\n"
            "    except InputError as e:\n        print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-500:]
    assert r.stdout.count("nested over 50 deep") == 2, r.stdout


def test_yaml_nested_deep_enough_to_break_messages(tmp_path, capsys):
    # 3,000 levels: no crash, but a RecursionError printing the value in the GPU file's error
    g = (DATA.parent.parent / "src/gpuproj/catalog/gpus/h100-sxm5-80gb.yaml").read_text()
    f = tmp_path / "deep.yaml"
    f.write_text(g.replace("kind: whitepaper", "kind: " + "[" * 3000 + "]" * 3000, 1))
    code, _, err = run(capsys, "gpus", "show", str(f))
    assert code == 2 and "nested over 50 deep" in one_error(err)


@pytest.mark.parametrize("value, says", [("9" * 5000, "4300 digits"),
                                         ("2022-13-45", "month must be in 1..12")],
                         ids=["int-of-5000-digits", "date-of-month-13"])
def test_yaml_values_python_cannot_build(tmp_path, capsys, value, says):
    f = tmp_path / "gpu.yaml"
    f.write_text(f"schema_version: 1\nid: x\nrelease_year: {value}\n")
    code, _, err = run(capsys, "gpus", "show", str(f))
    assert code == 2 and says in one_error(err)


def test_gpu_value_beyond_any_float(tmp_path, capsys):
    g = (DATA.parent.parent / "src/gpuproj/catalog/gpus/h100-sxm5-80gb.yaml").read_text()
    f = tmp_path / "big.yaml"
    f.write_text(g.replace("value: 132", "value: " + "9" * 400, 1))  # an OverflowError
    code, _, err = run(capsys, "gpus", "show", str(f))
    assert code == 2 and "is not a finite non-negative number" in one_error(err)


def test_gpu_name_too_long_for_a_file_name(tmp_path, capsys):
    from gpuproj.catalog import resolve
    from gpuproj.errors import UnknownGPUError

    # a profile's GPU column, or --target: stat() raised ENAMETOOLONG, an OSError
    with pytest.raises(UnknownGPUError):
        resolve("/" + "a" * 5000)
    f = tmp_path / "t.csv"
    f.write_text("kernel,time_s,gpu\nk,1e-3,/" + "a" * 5000 + "\n")
    code, _, err = run(capsys, "predict", str(f), "-t", "h100-sxm5-80gb")
    assert code == 2 and "field 'gpu'" in one_error(err)


def test_gpu_name_of_many_digits_resolves_at_once():
    from gpuproj.catalog import normalize_name

    _, t = timed(normalize_name, "1" * 50000 + "x")  # 25 s before
    assert t < FAST_S


@pytest.mark.parametrize("option, value", [
    ("write_code", "overwritten"), ("write_wrapper", "wrapper.py"), ("edit_code", True),
    ("build_options", ["-I/etc"])])
def test_kernel_file_may_not_set_options_that_write_files(tmp_path, option, value):
    # loopy writes the kernel's code or its Python wrapper to that path, starts $EDITOR, or
    # passes the flags to the compiler, when the kernel runs; an option that only changes the
    # code generated is allowed
    pytest.importorskip("loopy")
    import yaml

    from gpuproj.calibrated.modelfile import load_kernel_file

    d = yaml.safe_load(Path(KERNEL).read_text())
    f = tmp_path / "k.yaml"
    f.write_text(yaml.safe_dump({**d, "transforms": d["transforms"] + [
        ["set_options", {option: str(tmp_path / value) if isinstance(value, str) else value}]]}))
    with pytest.raises(InputError, match=f"{option} not allowed"):
        load_kernel_file(f)
    f.write_text(yaml.safe_dump({**d, "transforms": d["transforms"] + [
        ["set_options", {"enforce_variable_access_ordered": False}]]}))
    load_kernel_file(f)


# --- cost-model expressions ------------------------------------------------------------------


def _overlaps(n):
    e = "p_a * f_x"
    for _ in range(n):
        e = f"overlap({e}, p_b * f_y, p_e)"
    return e


@pytest.mark.parametrize("text, says", [
    ("(" * 5000 + "p_a" + ")" * 5000, "nested over 100 deep"),  # RecursionError
    ("-" * 5000 + "p_a", "nested over 100 deep"),
    (" + ".join(["p_a * f_x"] * 500), "nests 501 deep"),  # RecursionError in params()
    (_overlaps(40), "nodes, over the"),  # 2^40 nodes: never finished
], ids=["parentheses", "signs", "sum-of-500", "nested-overlaps"])
def test_expression_bombs(text, says):
    from gpuproj.calibrated.expression import parse

    t = time.perf_counter()
    with pytest.raises(InputError, match=says):
        parse(text)
    assert time.perf_counter() - t < 2 * FAST_S


# --- regular expressions over a crafted 50 kB field ------------------------------------------


def test_nvprof_value_of_many_e():
    from gpuproj.profiles.readers.nvprof import metric_value

    t = time.perf_counter()
    with pytest.raises(InputError, match="is not a number"):
        metric_value("e" * 50000 + "!", path="x", row=2, field="f")  # 47 s
    assert time.perf_counter() - t < FAST_S


def test_nsys_header_and_device_names():
    from gpuproj.profiles.readers import nsys
    from gpuproj.profiles.readers._io import strip_device_index

    # the old patterns backtracked quadratically: 50,000 spaces took 3.4 s and 5.3 s on one
    # machine, 17 s and 23 s on a 2-core one, so a machine 4x faster than the first would
    # have passed them under FAST_S; 200,000 spaces take 16x that (54 s, 85 s there), the
    # fixed patterns milliseconds
    (m, t) = timed(nsys._UNIT.match, " " * 200_000 + "(a")
    assert t < FAST_S and m is None
    assert nsys._UNIT.match("Start" + " " * 9 + "((a)").groups() == ("Start" + " " * 9 + "(", "a")
    assert nsys._UNIT.match("Duration (ns)").groups() == ("Duration", "ns")
    (s, t) = timed(strip_device_index, "Tesla" + " " * 200_000 + "x")
    assert t < FAST_S and s.endswith("x")
    assert strip_device_index("Tesla V100-PCIE-16GB (0)") == "Tesla V100-PCIE-16GB"


def test_trace_kernel_name_of_one_long_word():
    from gpuproj.profiles.trace_times import name_keys

    (keys, t) = timed(name_keys, "a" * 50000 + "!")  # 17 s
    assert t < FAST_S and keys[3] == "a" * 50000 + "!"
    assert name_keys("void ns::~k<int>(float)")[3] == "~k"


def test_sass_line_without_semicolon(tmp_path, capsys):
    f = tmp_path / "k.sass"
    f.write_text('\t.target sm_90\n.section .text.k,"ax",@progbits\n        /*0000*/ '
                 + " " * 50000 + "\n")  # cubic: 6 s for 2,000 spaces, hours for 50,000
    (r, t) = timed(run, capsys, "predict", EXAMPLE, "-t", "h100-sxm5-80gb", "--sass", str(f))
    # the line is named: skipped, a damaged line took its instruction out of every count
    assert r[0] == 2 and f"{f}, row 3: '/*0000*/' is no instruction" in one_error(r[2])
    assert t < 5 * FAST_S


def test_sass_branch_target_of_many_backticks():
    from gpuproj.sass.parse import _targets

    (ref, t) = timed(_targets, "BRA", "`(" * 25000)  # 8.8 s
    assert t < FAST_S and ref == (None, None, None)
    assert _targets("BRA", "`(.L_x_3)")[0] == ("label", ".L_x_3")


# --- JSON (saved models, nvdisasm -json, PyTorch traces) and binary arrays --------------------


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    from learned_helpers import synthetic_table

    from gpuproj.learned.persistence import save_model
    from gpuproj.models import get_model

    m = get_model("ridge").fit(synthetic_table(n_configs=10))
    return save_model(m, tmp_path_factory.mktemp("model") / "ridge")


@pytest.mark.parametrize("bad, says", [("[" * 100000 + "]" * 100000, "nested too deep"),
                                       ("9" * 5000, "4300 digits")], ids=["deep", "long-int"])
def test_saved_model_json(tmp_path, saved_model, bad, says):
    from gpuproj.learned.persistence import load_model

    jpath, npath = saved_model
    j = tmp_path / "m.json"
    j.write_text(jpath.read_text().replace('"format_version": 2', f'"format_version": {bad}'))
    (tmp_path / "m.npz").write_bytes(npath.read_bytes())
    with pytest.raises(InputError, match=says):
        load_model(j)


def test_saved_model_array_of_a_huge_shape(tmp_path, saved_model):
    from gpuproj.learned.persistence import load_model

    jpath, npath = saved_model
    (tmp_path / "m.json").write_text(jpath.read_text())
    arrays = np.load(npath)
    with zipfile.ZipFile(tmp_path / "m.npz", "w") as z:
        for k in arrays.files:
            a, b = arrays[k], io.BytesIO()
            hdr = np.lib.format.header_data_from_array_1_0(a)
            if k == "learner/coef":  # 128 TiB in the header, 71 values in the file
                hdr["shape"] = (2**44,)
            np.lib.format.write_array_header_1_0(b, hdr)
            z.writestr(f"{k}.npy", b.getvalue() + a.tobytes())
    with pytest.raises(InputError, match="cannot read the model arrays"):  # a MemoryError
        load_model(tmp_path / "m.json")


@pytest.mark.parametrize("bad, says", [("[" * 100000 + "]" * 100000, "nested too deep"),
                                       ("9" * 5000, "4300 digits")], ids=["deep", "long-int"])
def test_nvdisasm_json(bad, says):
    from gpuproj.sass.parse import parse_json

    with pytest.raises(InputError, match=says):
        parse_json(f'[{{"SM": 1}}, [{bad}]]', "x.json")


@pytest.mark.parametrize("command", [["predict", "--loopy", KERNEL, "--params"],
                                     ["bench", "--gpu", "h100-sxm5-80gb", "--from-raw"]],
                         ids=["calibrated-params", "bench-raw"])
def test_json_parameter_and_bench_files_nested_too_deep(tmp_path, capsys, command):
    # the calibrated parameters and a bench result go through the same JSON reading as a saved
    # model: a RecursionError traceback before
    f = tmp_path / "p.json"
    f.write_text("[" * 100000 + "]" * 100000)
    code, _, err = run(capsys, *command, str(f))
    assert code == 2 and "nested too deep" in one_error(err)


@pytest.mark.parametrize("field, value, says", [
    ("dur", "9" * 5000, "4300 digits"),  # a ValueError
    ("dur", "9" * 400, "is not a finite number"),  # an OverflowError
    ("grid", "[" + "9" * 400 + ", 1, 1]", "is not three whole numbers"),  # one in pandas
], ids=["dur-5000-digits", "dur-400-digits", "grid-400-digits"])
def test_pytorch_trace_numbers(tmp_path, capsys, field, value, says):
    import re

    text = (DATA / "pytorch" / "rmsnorm-v100-pcie-16gb.pt.trace.json").read_text()
    pattern = r'"dur": ?[0-9.]+' if field == "dur" else r'"grid": ?\[[^\]]*\]'
    f = tmp_path / "t.pt.trace.json"
    f.write_text(re.sub(pattern, lambda _: f'"{field}": {value}', text, count=1))
    code, _, err = run(capsys, "predict", str(f), "-t", "h100-sxm5-80gb")
    assert code == 2 and says in one_error(err)


@pytest.mark.parametrize("count, says", [("1e400", "'1e400' is not a count"),
                                         ("-10", "'-10' is not a count"),
                                         ("nan", "'nan' is not a count"),
                                         ("FADD " + "R1" * 100000, "field larger than")],
                         ids=["inf", "negative", "nan", "field-of-200-kB"])
def test_ncu_source_page_counts(tmp_path, count, says):
    from gpuproj.sass import load_sass

    head = ('"Kernel Name","k"\n"Address","Source","Instructions Executed","Thread Instructions '
            'Executed","Predicated-On Thread Instructions Executed"\n')
    rows = ['"0x7f00","FADD R1, R2, R3 ;","10","320","320"\n',
            '"0x7f10","EXIT ;","10","320","320"\n', '"0x7f20","BRA 0x7f20 ;","0","0","0"\n']
    rows[0] = (rows[0].replace('"10"', f'"{count}"') if "FADD " not in count
               else rows[0].replace("FADD R1, R2, R3", count))
    f = tmp_path / "src.csv"
    f.write_text(head + "".join(rows))
    with pytest.raises(InputError, match=says):
        load_sass(f, "sm_90")


# --- files that are no files, and files that expand ------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_pipe_or_device_given_as_a_model_or_parameter_file(tmp_path, capsys):
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)  # opening it waited for a writer forever; /dev/zero read without end
    for params in (str(fifo), "/dev/zero"):
        code, _, err = run(capsys, "predict", "--loopy", KERNEL, "--params", params)
        assert code == 2 and "not a regular file" in one_error(err)
    code, _, err = run(capsys, "predict", EXAMPLE, "-t", "h200", "--model", str(fifo))
    assert code == 2 and "not a regular file" in one_error(err)
    code, _, err = run(capsys, "bench", "--gpu", "h100-sxm5-80gb", "--from-raw", str(fifo))
    assert code == 2 and "not a regular file" in one_error(err)
    code, _, err = run(capsys, "sass", "diff", "/dev/zero", "/dev/zero")
    assert code == 2 and "not a regular file" in one_error(err)


def test_gzip_that_expands_too_far(tmp_path, monkeypatch):
    from gpuproj import files

    f = tmp_path / "t.csv.gz"
    f.write_bytes(gzip.compress(b"kernel,time_s\n" + b"k,1\n" * 1000))
    monkeypatch.setattr(files, "MAX_GUNZIPPED_CHARS", 1000)  # 1 GiB as shipped
    with pytest.raises(InputError, match="expands to over 1,000 characters"):
        files.read_text(f)
    assert files.read_text(f, 10) == "kernel,tim"  # sniffing its head still works


def test_nvprof_invocations_that_are_text(tmp_path, capsys):
    f = tmp_path / "m.csv"
    f.write_text((DATA / "nvprof-v100-pcie-32gb-metrics.csv").read_text()
                 .replace('",2,"flop_count_sp_fma"', '",abc,"flop_count_sp_fma"', 1))
    code, _, err = run(capsys, "predict", str(f), "--trace",
                       str(DATA / "nvprof-v100-pcie-32gb-trace.csv"), "-t", "h100-sxm5-80gb")
    assert code == 2 and "field 'Invocations': 'abc' is not a number" in one_error(err)


def test_a_message_quoting_a_huge_value_is_shortened(tmp_path, capsys):
    # a measurement table whose time is a 50 kB word: the error names the file, row and field
    # first and what was wrong last, with the middle of the quoted value left out
    f = tmp_path / "t.csv"
    f.write_text("kernel,time_s,gpu\nk," + "x" * 50000 + ",h100-sxm5-80gb\n")
    code, _, err = run(capsys, "predict", str(f), "-t", "h200")
    line = one_error(err)
    assert code == 2 and len(line) < 1100
    assert str(f) in line and "row 2" in line and "characters left out" in line


def test_escape_sequences_in_a_file_do_not_reach_the_terminal(tmp_path, capsys, monkeypatch):
    # a kernel name set the terminal's title and coloured what followed, in the table and in
    # an error line quoting it
    import gpuproj.cli.predict
    from gpuproj.cli._common import console

    evil = "evil\x1b[31mRED\x1b[0m\x1b]0;pwned\x07\x9b2J"
    f = tmp_path / "esc.csv"
    f.write_text("kernel,time_s,dram_bytes,gpu\n"
                 f"{evil},1e-3,1e6,h100-sxm5-80gb\n", encoding="utf-8")
    # the table as on a terminal, which keeps rich's own escape sequences for its styles
    monkeypatch.setattr(gpuproj.cli.predict, "console",
                        lambda: type(console())(force_terminal=True, width=200))
    code, out, _ = run(capsys, "predict", str(f), "-t", "h200", "-m", "bandwidth")
    assert code == 0 and "evil?[31mRED?[0m?]0;pw" in out
    assert not any(c in out for c in "\x07\x9b") and "\x1b]" not in out and "\x1b[31m" not in out
    code, _, err = run(capsys, "predict", str(f), "-t", "h200", "-k", "nomatch")
    assert code == 2 and "evil?[31mRED?[0m?]0;pwned??2J" in one_error(err)
