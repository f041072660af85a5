"""`gpuproj gpus list|show|resolve`: output, --json and exit codes."""

import json

import pytest
from conftest import run_cli as run


def test_list_table_and_vendor_filter(capsys):
    code, out, _ = run(capsys, "gpus", "list")
    assert code == 0
    assert "h100-sxm5-80gb" in out and "mi250x" in out and "max-1550" in out
    code, out, _ = run(capsys, "gpus", "list", "--vendor", "amd")
    assert code == 0 and "mi300x" in out and "a100" not in out
    code, out, _ = run(capsys, "gpus", "list", "gtx-680")
    header, row = out.splitlines()[:2]
    assert header.split()[-4:] == ["memory", "GiB", "L2", "MiB"]
    # FP64 and FP32 TFLOP/s, DRAM TB/s (none measured), 2 GiB, a 512 KiB L2
    assert row.split()[-5:] == ["0.1", "3.3", "0.19", "2", "0.5"] and "FP64" in header


def test_list_selects_as_predict_target_does(capsys):
    code, out, _ = run(capsys, "gpus", "list", "h100*,H200,mi3*", "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)] == [
        "h100-pcie-80gb", "h100-sxm5-80gb", "h100-nvl-94gb", "h200-sxm-141gb", "mi300a", "mi300x",
        "mi325x", "mi350x", "mi355x"]
    code, out, _ = run(capsys, "gpus", "list", "h100*,mi3*", "--vendor", "amd", "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)] == [
        "mi300a", "mi300x", "mi325x", "mi350x", "mi355x"]
    code, out, err = run(capsys, "gpus", "list", "zz*")
    assert code == 2 and "no GPU id matches 'zz*'" in err


def test_list_json(capsys):
    code, out, _ = run(capsys, "gpus", "list", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) >= 60
    h100 = next(r for r in rows if r["id"] == "h100-pcie-80gb")
    assert h100["dram_bw_peak_bytes_per_s"] == 2.0e12
    assert h100["dram_bw_measured_bytes_per_s"] == 1832e9
    # what an HPC centre compares first: FP64 beside FP32, memory and L2 sizes (binary units)
    assert (h100["fp64_peak_flops_per_s"], h100["fp32_peak_flops_per_s"]) == (26e12, 51e12)
    assert (h100["memory_size_bytes"], h100["l2_size_bytes"]) == (80 * 2**30, 50 * 2**20)
    assert type(h100["sm_count"]) is int and type(h100["l2_size_bytes"]) is int
    b200 = next(r for r in rows if r["id"] == "b200")
    assert b200["dram_bw_measured_bytes_per_s"] is None  # nan -> null, never 0


def test_show_text_has_peak_measured_and_sources(capsys):
    code, out, _ = run(capsys, "gpus", "show", "NVIDIA A100-SXM4-80GB")
    assert code == 0
    assert "A100 SXM4 80GB" in out and "dram_bw_bytes_per_s" in out
    assert "gpu-stream/a100_80.txt" in out and "datasheet" in out
    # values in the units people read them in (--json keeps SI): the datasheet's 2039 GB/s,
    # 80 GiB of memory, the boost clock, the launch overhead gpu-benches measured
    assert all(v in out for v in ("2.04 TB/s", "80 GiB", "1.41 GHz", "2.62 us"))


def test_show_json_round_trips_the_file(capsys):
    code, out, _ = run(capsys, "gpus", "show", "mi250x", "--json")
    d = json.loads(out)
    assert code == 0 and d["id"] == "mi250x" and d["schema_version"] == 1
    assert "GCD" in d["runtime_device"]
    assert d["values"]["warp_size"] == {"value": 64.0, "kind": "documentation",
                                        "source": d["values"]["warp_size"]["source"]}
    # counts and sizes as their file writes them: 64, not 64.0; a clock stays a float
    assert type(d["values"]["warp_size"]["value"]) is int
    assert type(d["values"]["boost_clock_hz"]["value"]) is float
    # the whole file, as the catalog's safe YAML loader reads it: every section, field, value,
    # kind and source; --json adds only the keys mi250x.yaml leaves out, empty
    from gpuproj.catalog import BUNDLED_DIR
    from gpuproj.files import parse_yaml

    path = BUNDLED_DIR / "mi250x.yaml"
    file = parse_yaml(path.read_text(), path)
    assert {k: d[k] for k in set(d) - set(file)} == {"measured": {}, "notes": None}
    assert {k: d[k] for k in file} == file
    assert len(d["values"]) == len(file["values"]) > 10 and d["peak"] == file["peak"]


@pytest.mark.parametrize("name,gid", [("Tesla V100-PCIE-32GB", "v100-pcie-32gb"),
                                      ("NVIDIA Thor", "jetson-agx-thor"),
                                      ("Thor", "jetson-agx-thor")])
def test_resolve_prints_id(capsys, name, gid):
    code, out, _ = run(capsys, "gpus", "resolve", name)
    assert (code, out.strip()) == (0, gid)


@pytest.mark.parametrize("name,msg", [("V100", "ambiguous"), ("Voodoo 5", "unknown GPU")])
def test_resolve_errors_exit_2(capsys, name, msg):
    code, out, err = run(capsys, "gpus", "resolve", name)
    assert code == 2 and out == ""
    assert msg in err and err.count("\n") == 1


def test_show_unknown_exits_2(capsys):
    code, _, err = run(capsys, "gpus", "show", "RTX 4909")
    assert code == 2 and "rtx-4090" in err


def test_show_user_file_by_path(capsys, tmp_path):
    p = tmp_path / "x1.yaml"
    p.write_text("schema_version: 1\nid: x1\nvendor: Acme\nname: Acme X1\n"
                 "architecture: Hypo\nisa: x\n"
                 "peak:\n  dram_bw_bytes_per_s: "
                 "{value: 1.0e+12, kind: user, source: my planning figure}\n")
    code, out, _ = run(capsys, "gpus", "show", str(p))
    assert code == 0 and "Acme X1" in out and "my planning figure" in out


BASE = ("schema_version: 1\nid: mygpu\nvendor: NVIDIA\nname: My GPU\narchitecture: Hopper\n"
        "isa: sm_90\nrelease_year: 2024\n"
        "peak:\n  dram_bw_bytes_per_s: {value: 3.0e+12, kind: user, source: mine}\n")


def test_user_text_is_printed_as_written_not_as_markup(capsys, tmp_path):
    """Square brackets in a GPU's name or a source are the user's text: an unmatched [/bold]
    was a rich MarkupError, [red]X[/red] lost its brackets."""
    p = tmp_path / "m.yaml"
    p.write_text(BASE.replace("My GPU", '"Foo [/bold] [red]x"')
                 .replace("source: mine", 'source: "Table [bold]3[/bold] :smile:"'))
    code, out, err = run(capsys, "gpus", "show", str(p))
    assert code == 0, err
    assert "Foo [/bold] [red]x" in out and "Table [bold]3[/bold] :smile:" in out
    code, out, err = run(capsys, "gpus", "list", str(p))
    assert code == 0 and "Foo [/bold] [red]x" in out


@pytest.mark.parametrize("line, field", [
    ("memory_type: {a: 1}\n", "field 'memory_type': expected text"),
    ("release_year: soon\n", "field 'release_year': expected a year"),
])
def test_a_user_file_of_the_wrong_kinds_is_a_one_line_error(capsys, tmp_path, monkeypatch,
                                                             line, field):
    p = tmp_path / "mygpu.yaml"
    p.write_text(BASE.replace("release_year: 2024\n", line))
    code, _, err = run(capsys, "gpus", "show", str(p))
    assert code == 2 and err.startswith(f"gpuproj: error: {p}, {field}")
    assert err.count("\n") == 1
    # the same file on the GPU path stops `gpus list` alike
    monkeypatch.setenv("GPUPROJ_GPU_PATH", str(tmp_path))
    code, _, err = run(capsys, "gpus", "list")
    assert code == 2 and f"{p}, {field}" in err and err.count("\n") == 1


def test_names_that_name_nothing(capsys):
    code, _, err = run(capsys, "gpus", "list", ",")
    assert code == 2 and "None" not in err and "holds no GPU name" in err
    code, _, err = run(capsys, "gpus", "show", "/nonexistent.yaml")
    assert (code, err) == (2, "gpuproj: error: /nonexistent.yaml: no such file\n")
    code, _, err = run(capsys, "gpus", "resolve", "./gpus/x1")
    assert code == 2 and err.startswith("gpuproj: error: ./gpus/x1: no such file; unknown GPU")


@pytest.mark.parametrize("command", ["show", "resolve"])
def test_help_says_name_may_be_a_gpu_file_and_gives_examples(capsys, command):
    code, out, _ = run(capsys, "gpus", command, "--help")
    assert code == 0 and "path of a GPU YAML file" in " ".join(out.split())
    assert f"Examples:\n    gpuproj gpus {command} " in out


def test_a_pattern_where_one_gpu_is_named(capsys):
    # 'h200*' resolved as h200 (the '*' dropped as punctuation), 'rtx-40*' was unknown
    from gpuproj.cli.main import main

    for pattern in ("h200*", "rtx-40*"):
        with pytest.raises(SystemExit) as e:
            main(["gpus", "resolve", pattern])
        assert e.value.code == 2 and capsys.readouterr().err == (
            f"gpuproj: error: '{pattern}' is a pattern where one GPU is named (`gpuproj gpus "
            f"list '{pattern}'` lists the GPUs it matches)\n")
