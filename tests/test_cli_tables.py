"""Terminal tables fitted to an 80-column terminal: no number or id cut to 'ab…', and no
name folded to a few letters a line where the table can be cut into narrower ones."""

import io
import json

import pytest
from conftest import run_cli
from rich.console import Console

WIDTH = 80
AMARIS = "tests/data/amaris-9gpus-bpnn_adjust_weights.csv"
GEMM = "tests/data/kerneltuner-4gpus-gemm_clblast_4096.csv"


def _fits(text: str) -> None:
    assert "…" not in text
    assert all(len(line) <= WIDTH for line in text.splitlines())


@pytest.fixture()
def narrow(monkeypatch):
    """The commands' console as a terminal of ``WIDTH`` columns (piped, it is 400 wide)."""
    import gpuproj.cli.evaluate
    import gpuproj.cli.gpus

    for module in (gpuproj.cli.evaluate, gpuproj.cli.gpus):
        monkeypatch.setattr(module, "console", lambda: Console(width=WIDTH))


def test_a_prediction_table_too_wide_is_cut_per_target_and_method():
    # two targets and two methods at 80 columns: the four name columns folded to 4
    # characters each, a kernel's name over 6 lines, a config over 9
    from gpuproj.cli.predict import print_predictions
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    r = predict(load(AMARIS), source="all", targets=["h100-pcie-80gb", "gtx-980"],
                methods=["bandwidth", "hierarchical-ext"])
    buf = io.StringIO()
    print_predictions(r, Console(file=buf, width=WIDTH))
    text = buf.getvalue()
    _fits(text)
    assert "bpnn_adjust_weights_" in text and "size=8192 grid=1x512" in text
    words = " ".join(text.split())  # the titles wrap at the width
    for target in ("h100-pcie-80gb", "gtx-980"):
        for method in ("bandwidth", "hierarchical-ext"):
            assert f"(combined) to {target} by {method}" in words
    # the totals stay one table, with both targets and methods
    assert words.count("Application total") == 1


def test_evaluate_cuts_no_number_at_80_columns(capsys, narrow):
    # every column was cut to 3 letters: '10…' for 100.0 % and 10.0 % alike
    code, out, _ = run_cli(capsys, "evaluate", GEMM, "-m", "bandwidth,same,hierarchical-ext",
                           "--ranking", "--gpu-choice", "--json")
    assert code == 0
    methods = json.loads(out)["methods"]
    code, out, _ = run_cli(capsys, "evaluate", GEMM, "-m", "bandwidth,same,hierarchical-ext",
                           "--ranking", "--gpu-choice")
    assert code == 0
    _fits(out)
    for m, row in methods.items():
        assert m in out
        for key in ("mape", "median_ape", "gmre"):
            assert f"{row[key]:.1f} %" in out
        assert f"{100 * row['band_coverage']:.1f} %" in out
    assert "hierarchical-ext │" in out  # a method's name is not folded in the first table


def test_gpus_list_keeps_every_id_whole_at_80_columns(capsys, narrow):
    # the ids, which --target takes, were cut: 'r9-fu…'
    from gpuproj.catalog import load_catalog

    code, out, _ = run_cli(capsys, "gpus", "list")
    assert code == 0
    _fits(out)
    first_words = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert {g.id for g in load_catalog()} <= first_words


def test_a_shortlist_keeps_its_configurations_whole_at_80_columns():
    # the configurations to measure, the answer, were cut: 'KWG=32,KW…'
    from gpuproj.cli.predict import print_shortlist
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    r = predict(load(GEMM), source="titan-rtx", targets=["rtx-2080-ti"],
                methods=["same", "hierarchical-ext"])
    buf = io.StringIO()
    print_shortlist(r, Console(file=buf, width=WIDTH), 3)
    text = buf.getvalue()
    _fits(text)
    # the config column's pieces, row by row, put back together
    lines = [line.split("│") for line in text.splitlines() if line.startswith("│")]
    col = next(i for i, line in enumerate(text.splitlines()) if "config" in line)
    header = text.splitlines()[col].split("┃")
    at = next(i for i, h in enumerate(header) if h.strip() == "config")
    joined = "".join(cells[at].strip() for cells in lines)
    for config in r.shortlist(3)["config"]:
        assert config in joined


def test_evaluate_totals_table_and_json(capsys, narrow):
    from gpuproj.evaluate import evaluate
    from gpuproj.profiles import load

    want = evaluate(load(GEMM), ["bandwidth", "same"]).totals().summary()
    code, out, _ = run_cli(capsys, "evaluate", GEMM, "-m", "bandwidth,same", "--totals", "--json")
    assert code == 0
    got = json.loads(out)["totals"]
    assert got["bandwidth"]["n"] == 12  # 4 GPUs: 12 ordered pairs, one total each
    assert got["bandwidth"]["mape"] == pytest.approx(want["bandwidth"]["mape"])
    code, out, _ = run_cli(capsys, "evaluate", GEMM, "-m", "bandwidth,same", "--totals")
    assert code == 0
    _fits(out)
    words = " ".join(out.split())
    assert "Application totals: 24 totals" in words
    assert f"{want['same']['mape']:.1f} %" in out
