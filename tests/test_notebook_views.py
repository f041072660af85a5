"""What a notebook shows for the objects users hold: a one-line repr that says what is inside and
which methods to call, and an HTML table with times in readable units."""

from html.parser import HTMLParser
from pathlib import Path

import pandas as pd

from gpuproj.evaluate import evaluate
from gpuproj.predict import predict
from gpuproj.profiles import load
from gpuproj.profiles.table import ProfileTable

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rodinia-p100-nvprof.csv"


class Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.cells, self.open = [], []

    def handle_starttag(self, tag, attrs):
        self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open.pop() == tag

    def handle_data(self, data):
        if self.open and self.open[-1] in ("td", "th") and data.strip():
            self.cells.append(data.strip())


def cells(html):
    p = Cells()
    p.feed(html)
    assert not p.open  # every tag closed
    return p.cells


def test_prediction_set_in_a_notebook():
    r = predict(load(EXAMPLE), targets=["h100-sxm5-80gb", "h200"],
                methods=["hierarchical", "bandwidth"])
    assert repr(r) == ("<PredictionSet tesla-p100-pcie-16gb -> h100-sxm5-80gb, h200-sxm-141gb: "
                       "hierarchical, bandwidth, 12 predictions, 0 skipped; .table(), "
                       ".application(), .to_json()>")
    c = cells(r._repr_html_())
    assert c.count("calculate_temp") == 4  # 2 targets x 2 methods
    # times as the CLI prints them: the source time of calculate_temp, 127 us
    src = r.table().query("kernel == 'calculate_temp'")["source_time_s"].iloc[0]
    assert abs(src - 127e-6) < 1e-6 and "127 us" in c
    # the application totals come first, each method's targets fastest first
    ranked = r.ranked_application()
    assert [x for x in c if x.endswith("x") and x[:-1].replace(".", "").isdigit()][:4] == [
        f"{v:.2f}x" for v in ranked["speedup"]]
    assert list(ranked["method"]) == ["hierarchical"] * 2 + ["bandwidth"] * 2
    assert list(ranked["target"][:2]) == ["h200-sxm-141gb", "h100-sxm5-80gb"]
    assert ranked.merge(r.application()).shape[0] == 4  # the same rows, reordered


def test_printed_rows_of_one_kernel_stand_together():
    """The terminal table keeps each kernel configuration's targets and methods together, in
    the order given, with a line under each kernel, and names a kernel without the argument
    list of its C++ signature."""
    from rich.console import Console

    suite = load(Path(__file__).resolve().parents[1] / "examples" / "h100-suite-ncu.csv")
    r = predict(suite, targets=["h200", "b200"], methods=["bandwidth", "hierarchical"],
                kernel="^(saxpy|vector_add)\\(")
    console = Console(width=250, record=True)
    r.print(console)
    text = console.export_text()
    rows = [[c.strip() for c in line.split("│")[1:5]] for line in text.splitlines()
            if line.startswith("│ ")]
    assert [row[0] for row in rows][:8] == ["vector_add"] * 4 + ["saxpy"] * 4
    assert [row[2:] for row in rows[:4]] == [["h200-sxm-141gb", "bandwidth"],
                                             ["h200-sxm-141gb", "hierarchical"],
                                             ["b200", "bandwidth"], ["b200", "hierarchical"]]
    assert text.count("├") == 1  # between the two kernels, not after the last
    assert r.table()["kernel"].str.contains("(", regex=False).all()  # the data keeps them


def test_one_target_by_name():
    import pytest

    from gpuproj.errors import GpuprojError

    r = predict(load(EXAMPLE), targets="h200")  # a name, not its letters
    assert r.targets == ["h200-sxm-141gb"] and len(r.table()) == 3
    with pytest.raises(GpuprojError, match="no target GPU"):
        predict(load(EXAMPLE), targets=[])


def test_evaluate_with_names():
    t = load(Path(__file__).parent / "data" / "amaris-2gpus-calculate_temp.csv")
    ev = evaluate(t, "bandwidth", sources="gtx-680", targets="tesla-p100-pcie-16gb")
    # one configuration on both GPUs, one direction
    assert list(ev.summary()) == ["bandwidth"] and len(ev.pairs) == 1


def test_evaluation_in_a_notebook():
    rows = [("k", f"n={n}", g, t * n) for n in (1, 2) for g, t in
            (("v100-sxm2-16gb", 2e-3), ("a100-sxm4-40gb", 1e-3))]
    d = pd.DataFrame(rows, columns=["kernel", "config", "gpu", "time_s"])
    d["dram_bytes"] = [1e9 * n for n in (1, 1, 2, 2)]
    ev = evaluate(ProfileTable.from_frame(d), ["same", "bandwidth"])
    assert repr(ev) == ("<Evaluation 8 pairs, methods same, bandwidth, 0 skipped; .frame(), "
                        ".summary(), .pairs>")
    f = ev.frame()
    # the bandwidth ratio of the two (900 and 1555 GB/s) misses the measured 2x less than `same`
    assert list(f.index) == ["bandwidth", "same"] and f.loc["same", "mape"] == 75.0
    c = cells(ev._repr_html_())
    assert "mape" in c and "75" in c
