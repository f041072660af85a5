"""What a notebook shows for the objects users hold: a one-line repr that says what is inside and
which methods to call, and an HTML table with times in readable units."""

from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from gpuproj.errors import InputError, InputWarning
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

    from gpuproj.cli.predict import print_predictions

    suite = load(Path(__file__).resolve().parents[1] / "examples" / "h100-suite-ncu.csv")
    r = predict(suite, targets=["h200", "b200"], methods=["bandwidth", "hierarchical"],
                kernel="^(saxpy|vector_add)\\(")
    console = Console(width=250, record=True)
    print_predictions(r, console)
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


def test_gpus_and_models_as_single_objects_and_names_as_runtimes_print_them():
    from gpuproj.catalog import resolve

    # a GPU object, as select() takes it; a table built in Python with a runtime's GPU name
    r = predict(load(EXAMPLE), targets=resolve("h200"), methods="bandwidth")
    assert r.targets == ["h200-sxm-141gb"]
    d = pd.DataFrame({"kernel": ["k"], "config": ["c"], "gpu": ["NVIDIA A100-SXM4-80GB"],
                      "time_s": [1e-3]})
    t = ProfileTable.from_frame(d)
    assert t.gpus == ["a100-sxm4-80gb"]
    assert predict(t, source=resolve("a100-sxm4-80gb"), targets="h200",
                   methods="bandwidth").sources == ["a100-sxm4-80gb"]
    # a name the catalog does not hold stays, for predict to report
    d["gpu"] = "my-gpu"
    assert ProfileTable.from_frame(d).gpus == ["my-gpu"]


def test_a_method_that_predicts_nothing_alone_is_an_error_beside_others_a_warning():

    import pytest

    from gpuproj.errors import GpuprojError, InputWarning

    d = pd.DataFrame({"kernel": ["k"], "config": ["c"], "gpu": ["a100-sxm4-80gb"],
                      "time_s": [1e-3]})
    t = ProfileTable.from_frame(d)
    # alone, it is an error saying why (it returned an empty result without a word)
    with pytest.raises(GpuprojError, match=r"no kernel could be predicted \(quantitative needs "
                                           r".*suit the methods same,bandwidth,compute"):
        predict(t, targets="h200", methods="quantitative")
    # beside a method that predicted, it would only be a missing line: a warning says it
    with pytest.warns(InputWarning, match="quantitative predicted none of the kernel rows"):
        r = predict(t, targets="h200", methods=["bandwidth", "quantitative"])
    assert list(r.application()["method"]) == ["bandwidth"]


def test_evaluation_without_pairs_and_gpus_it_lacks():
    # every row skipped (no instruction counts): an empty frame with the metrics' columns,
    # shown without error
    tuned = load(Path(__file__).parent / "data" / "kerneltuner-4gpus-gemm_clblast_4096.csv")
    ev = evaluate(tuned, "quantitative")
    assert ev.frame().empty and "mape_pct" in ev.frame() and "coverage_ci" not in ev.frame()
    assert "mape" in ev._repr_html_()
    t = load(Path(__file__).parent / "data" / "amaris-2gpus-calculate_temp.csv")
    assert evaluate(t).gpu_choice(by="pair").empty  # two GPUs: nothing to rank
    with pytest.raises(InputError, match="no rows measured on h100-sxm5-80gb: the table has"):
        evaluate(t, sources="h100-sxm5-80gb")
    # no GPU pair at all (one GPU; a source that is the only target) is an error, as in the
    # CLI; it was an empty evaluation of "methods none"
    with pytest.raises(InputError, match="nothing to evaluate: no kernel configuration was "
                                         "measured on two of the GPUs selected"):
        evaluate(t, sources="gtx-680", targets="gtx-680")
    assert set(evaluate(t, "all").summary()) == set(evaluate(t).summary())
    with pytest.raises(ValueError, match="summary.by='fold'.: by is None, 'pair' or a column"):
        evaluate(t, "same").summary("fold")


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
    # 2 configurations x 2 directions per method
    assert repr(ev) == ("<Evaluation pairs per method: same 4, bandwidth 4; 0 skipped; "
                        ".frame(), .summary(), .pairs>")
    f = ev.frame()
    # the bandwidth ratio of the two (900 and 1555 GB/s) misses the measured 2x less than `same`
    assert list(f.index) == ["bandwidth", "same"] and f.loc["same", "mape_pct"] == 75.0
    c = cells(ev._repr_html_())
    assert "mape_pct" in c and "75" in c


def test_api_arguments_a_notebook_user_passes():
    # a file name where a table belongs was an AttributeError; a set of targets or methods
    # came out in another order each run; a GPU object or a GPU's name in load(gpu=) and
    # ProfileTable.on was a TypeError or an empty table; a GPU could not be a dict key;
    # Evaluation.shortlist("x") split the name into letters; two Evaluations did not compare
    import pytest

    from gpuproj.catalog import resolve
    from gpuproj.errors import GpuprojError
    from gpuproj.models import get_model

    data = Path(__file__).parent / "data"
    example = Path(__file__).parents[1] / "examples" / "rodinia-p100-nvprof.csv"
    for call in (lambda: predict(str(example), targets="h200"), lambda: evaluate(example),
                 lambda: get_model("rf").fit(pd.DataFrame())):
        with pytest.raises(GpuprojError, match="expected a ProfileTable, got .*profiles.load"):
            call()
    p = load(example)
    r = predict(p, targets={"mi300x", "h200", "h100-sxm5-80gb"}, methods={"roofline", "same"})
    assert r.targets == ["h100-sxm5-80gb", "h200-sxm-141gb", "mi300x"]
    assert list(r.predictions) == ["roofline", "same"]
    k40 = resolve("tesla-k40")
    assert {k40: 1}[resolve("Tesla K40")] == 1
    t = load(data / "amaris-2gpus-calculate_temp.csv")
    assert len(t.on("GTX 680")) == len(t.on(resolve("gtx-680"))) == len(t.on("gtx-680")) > 0
    one = load(example, gpu=resolve("tesla-p100-pcie-16gb"))
    assert one.gpus == ["tesla-p100-pcie-16gb"]
    ev = evaluate(t, ["same", "bandwidth"])
    assert ev.shortlist("bandwidth") == ev.shortlist(["bandwidth"])
    assert ev == ev and ev != evaluate(t, ["same", "bandwidth"])


def test_frames_hold_numbers_and_reprs_stay_short():
    # ranking() had object columns of None where no group ranks; a set predicted to every
    # catalog GPU printed a paragraph of ids; the notebook view left out what the 90 % band is
    t = load(Path(__file__).parent / "data" / "amaris-9gpus-bpnn_adjust_weights.csv")
    ev = evaluate(t, "bandwidth")
    assert all(str(dt) != "object" for dt in ev.ranking().dtypes)
    assert ev.gpu_choice()["rank_corr"].dtype == float
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = predict(load(Path(__file__).parents[1] / "examples" / "rodinia-p100-nvprof.csv"),
                    targets="all", methods="bandwidth")
    assert len(r.targets) > 50 and f"-> {len(r.targets)} targets (" in repr(r)
    assert len(repr(r)) < 250 and "90 % band: how far the method has been off" in r._repr_html_()


def test_an_unknown_model_parameter_names_the_ones_there_are():
    import pytest

    from gpuproj.errors import GpuprojError
    from gpuproj.models import get_model

    with pytest.raises(GpuprojError, match=r"^residual has no parameter foo \(it has learner, "):
        get_model("residual", foo=1)
    with pytest.raises(GpuprojError, match=r"^hierarchical has no parameter foo \(it has "):
        predict(load(Path(__file__).parents[1] / "examples" / "rodinia-p100-nvprof.csv"),
                targets="h200", methods="hierarchical", model_params={"hierarchical": {"foo": 1}})


def test_a_row_skipped_from_a_frame_names_its_index():
    # Skipped(path='', row=None, reason='time_s = 0.0 is not positive'): which row?
    d = pd.DataFrame({"kernel": ["a", "b"], "config": "c", "time_s": [0.0, 1e-3],
                      "gpu": "h100-sxm5-80gb"}, index=[10, 11])
    (s,) = ProfileTable.from_frame(d).skipped
    assert s.row is None and s.reason == "index 10: time_s = 0.0 is not positive"


def test_a_frame_is_checked_as_a_file_is():
    # text in a count became NaN (the row then projected by the bandwidth baseline, "times but
    # no counts"), a negative count or an infinite one passed, and `config` was required
    # where a measurement table may leave it out
    d = pd.DataFrame({"kernel": ["a", "b"], "time_s": [1e-3, 2e-3], "gpu": "h100-sxm5-80gb",
                      "dram_bytes": [1e9, 2e9]}, index=[10, 11])
    assert list(ProfileTable.from_frame(d).df["config"]) == ["default"] * 2
    for column, value, says in (("dram_bytes", "lots", "'lots' is not a number"),
                                ("dram_bytes", -5e9, "-5000000000.0 is negative"),
                                ("fp32_flops", float("inf"), "'inf' is not a finite number"),
                                ("time_s", "fast", "'fast' is not a number")):
        bad = d.assign(**{column: [1e9, value]})
        with pytest.raises(InputError) as e:
            ProfileTable.from_frame(bad, origin="nb")
        assert str(e.value) == f"nb, field '{column}': index 11: {says}"
    # a column named nearly as a canonical one, which no model would read, is said
    with pytest.warns(InputWarning, match="the frame: column 'dram_byte' is not a canonical "
                                          "column and no model reads it; did you mean "
                                          "'dram_bytes'"):
        ProfileTable.from_frame(d.rename(columns={"dram_bytes": "dram_byte"}))
    # a file's row, where a reader gives it
    with pytest.raises(InputError, match=r"^nb, row 3, field 'dram_bytes': 'lots' is not"):
        ProfileTable.from_frame(d.assign(dram_bytes=[1e9, "lots"], _row=[2, 3]), origin="nb")


def test_the_views_say_what_was_skipped():
    # a row without counts is skipped by the roofline methods: the notebook's view said
    # nothing of it (the command line prints it on stderr), and hid a method that predicted
    # nothing
    t = ProfileTable.from_frame(pd.DataFrame({
        "kernel": ["counted", "timed"], "config": "c", "gpu": "tesla-p100-pcie-16gb",
        "time_s": [1e-3, 2e-3], "flops": [1e9, None], "dram_bytes": [1e8, None]}))
    r = predict(t, targets=["h100-sxm5-80gb"], methods=["hierarchical", "same"])
    assert r.skipped
    text = " ".join(cells(r._repr_html_()) + [r._repr_html_()])
    assert "skipped 1 row(s) (timed" in text
    assert "limiter: what bounds the row" in text  # and what the limiters shown mean
    ev = evaluate(load(Path(__file__).parent / "data" / "amaris-2gpus-calculate_temp.csv"),
                  methods=["bandwidth"])
    page = ev._repr_html_()
    assert "mape_pct: mean |predicted - measured| / measured, %" in page
    assert "within_10_pct: % of pairs within 10 %" in page


def test_a_gpu_the_catalog_and_a_models_prediction_read_in_a_notebook():
    from gpuproj.catalog import load_catalog, resolve
    from gpuproj.models import get_model

    cat = load_catalog()
    assert repr(cat).startswith(f"<Catalog of {len(cat)} GPUs (")
    h200 = resolve("h200-sxm-141gb")
    page = cells(h200._repr_html_())
    # the DRAM bandwidth, peak next to measured (our own bench run), each with its source
    at = page.index("dram_bw_bytes_per_s")
    assert page[at + 1] == "4.8 TB/s" and page[at + 2].endswith("TB/s")
    assert page[at + 3].startswith("datasheet: ") and page[at + 4].startswith("measurement: ")
    assert "sm_count" in page
    p = get_model("bandwidth").predict(load(EXAMPLE), resolve("tesla-p100-pcie-16gb"), [h200])
    assert repr(p) == ("<Prediction by bandwidth: 3 row(s) x target(s), 0 skipped; .df, "
                       ".application()>")


def test_a_roofline_of_a_one_gpu_profile_needs_no_gpu_named():
    from gpuproj.plots.roofline import roofline_data

    d = roofline_data(load(EXAMPLE), target="h100-sxm5-80gb")
    assert d["gpu"] == "tesla-p100-pcie-16gb" and len(d["kernels"]) == 3


def test_a_frame_without_its_gpu_is_told_how_to_name_it():
    with pytest.raises(InputError, match=r"missing required column\(s\) gpu \(the GPU of the "
                                         r"rows: frame.assign\(gpu="):
        ProfileTable.from_frame(pd.DataFrame({"kernel": ["k"], "time_s": [1e-3]}))


def test_kernel_selects_by_the_name_the_tables_show():
    # the table shows `vector_add`; -k '^vector_add$' found nothing, the profile's name being
    # the whole signature
    t = load(Path(__file__).resolve().parents[1] / "examples" / "h100-suite-ncu.csv")
    got = t.select("^vector_add$").df["kernel"].unique()
    assert list(got) == ["vector_add(const float *, const float *, float *, int)"]
    assert len(t.select(r"vector_add\(").df["kernel"].unique()) == 1  # the full name still
