"""The shared predict driver: the output frame it assembles and the values it computes once per
call (models.base), checked against the plain ways of computing the same things."""

import numpy as np
import pandas as pd
import pytest
from conftest import table

from gpuproj.catalog import resolve
from gpuproj.models import get_model
from gpuproj.models.base import _stack_labels
from gpuproj.models.common import labels, launch_configs, launch_occupancy
from gpuproj.occupancy import occupancy

SOURCE = "v100-sxm2-16gb"
TARGETS = ["a100-sxm4-40gb", "h100-sxm5-80gb", "mi250x"]


def kernels(n, seed):
    """Small random but complete profiles: every analytical method can predict them."""
    rng = np.random.default_rng(seed)
    fma = rng.lognormal(18, 1, n)
    return table(
        kernel=[f"k{i % 7}" for i in range(n)], config=[str(i) for i in range(n)],
        gpu=[SOURCE] * n, time_s=rng.lognormal(-9, 1, n),
        fp32_fma_thread_inst=fma, fp32_add_thread_inst=fma * rng.uniform(0, 1, n),
        fp32_mul_thread_inst=fma * 0.5, fp32_thread_inst=fma * 2.0, fp64_thread_inst=[0.0] * n,
        int_thread_inst=fma, ldst_thread_inst=fma * 0.5, warp_inst=fma / 8,
        thread_inst=fma * 3.0, dram_read_bytes=fma * rng.uniform(0.5, 8, n),
        dram_write_bytes=fma, l2_bytes=fma * 12, l1_bytes=fma * 30, working_set_bytes=fma * 4,
        grid_blocks=rng.integers(1, 5000, n), block_threads=rng.choice([64, 256, 1024], n),
        regs_per_thread=rng.choice([32, 64, 128], n), smem_per_block_bytes=[0.0] * n)


def test_stacked_labels_equal_one_categorical_of_all_names():
    """Categoricals with unused or unsorted categories, plain str arrays and missing values stack
    to what pd.Categorical makes of the concatenated names."""
    parts = [labels(np.array([2, 0, 2]), ("fp64", "fp32", "dram", "l2")),
             np.array(["l1", "dram", None], dtype=object),
             labels(np.array([1, 1]), ("fp64", "fp32", "dram", "l2")),
             pd.Categorical(["shared", "fp32"], categories=["shared", "fp32", "unused"])]
    want = pd.Categorical(np.concatenate([np.asarray(p, dtype=object) for p in parts]))
    got = _stack_labels(parts)
    assert list(got.categories) == list(want.categories) == ["dram", "fp32", "fp64", "l1", "shared"]
    assert np.array_equal(got.codes, want.codes)


def test_occupancy_per_distinct_launch_equals_per_row():
    df = kernels(40, seed=1).df
    gpu = resolve("a100-sxm4-40gb")
    rows, _, threads, _, _ = launch_configs(df)
    assert rows.all() and len(threads) <= 9  # 3 block sizes x 3 register counts
    occ, bps = launch_occupancy(df, gpu)
    direct = occupancy(gpu, df["block_threads"].to_numpy(np.int64),
                       df["regs_per_thread"].to_numpy(np.int64), 0)
    assert np.array_equal(occ, direct.occupancy)
    assert np.array_equal(bps, direct.blocks_per_sm)


@pytest.mark.parametrize("method", ["hierarchical", "hierarchical-ext", "quantitative",
                                    "efficiency"])
def test_values_shared_by_targets_do_not_leak_between_calls(method):
    """One instance predicting two tables in turn gives what fresh instances give: what is
    computed once per call (source occupancy, byte levels, kernel parameters) is not reused."""
    a, b = kernels(30, seed=2), kernels(20, seed=3)
    model = get_model(method)
    first, second = model.predict(a, SOURCE, TARGETS), model.predict(b, SOURCE, TARGETS)
    assert len(second.df) == 20 * len(TARGETS)
    for got, tab in ((first, a), (second, b)):
        want = get_model(method).predict(tab, SOURCE, TARGETS)
        pd.testing.assert_frame_equal(got.df, want.df)
        assert got.assumptions == want.assumptions


def test_target_blocks_follow_the_targets():
    """Rows come target by target; each target's times equal a prediction to it alone."""
    t = kernels(25, seed=4)
    both = get_model("hierarchical-ext").predict(t, SOURCE, TARGETS).df
    assert list(both.columns[:14]) == ["kernel", "config", "source", "target", "method",
                                       "source_time_s", "time_s", "low_s", "high_s",
                                       "band_low_s", "band_high_s", "limiter", "launches", "row"]
    for tgt in TARGETS:
        alone = get_model("hierarchical-ext").predict(t, SOURCE, [tgt]).df
        part = both[both["target"] == tgt].reset_index(drop=True)
        assert np.array_equal(part["time_s"].to_numpy(), alone["time_s"].to_numpy())
        assert list(part["limiter"].astype(str)) == list(alone["limiter"].astype(str))
        assert np.array_equal(part["row"].to_numpy(), np.arange(25))


@pytest.mark.parametrize("method", ["bandwidth", "hierarchical-ext"])
def test_row_is_the_profiles_row_whatever_its_columns(method):
    # a table with its own "index" column (a user's row counter) gave its values as each
    # prediction's row, which the totals and a target's SASS counts are keyed by
    t = kernels(6, seed=5)
    want = get_model(method).predict(t, SOURCE, TARGETS[:1]).df
    t.df["index"] = np.arange(100, 106)
    got = get_model(method).predict(t, SOURCE, TARGETS[:1]).df
    assert np.array_equal(got["row"].to_numpy(), np.arange(6))
    assert np.array_equal(got["time_s"].to_numpy(), want["time_s"].to_numpy())


def test_rows_faster_than_the_datasheet_roofline_are_said():
    """On an A100 SXM4 80GB (FP32 FMA peak 19.5e12 FLOP/s, DRAM 2.039e12 B/s): 1.95e10 FLOPs
    need 1 ms at the peak, measured in 0.5 ms: 2x faster than any A100 can run them. 2.039e9
    DRAM bytes need 1 ms, measured in 1.25 ms: possible. 1.95e10 FLOPs in 0.995 ms lies within
    the 1 % a tabulated time's rounding gives."""
    import warnings

    from gpuproj.predict import RooflineWarning, beyond_roofline, predict

    a100 = resolve("a100-sxm4-80gb")
    assert a100.peak("fp32_fma_flops_per_s") == pytest.approx(19.5e12, rel=1e-3)
    nan = float("nan")
    rows = table(kernel=["gemm", "copy", "near"], config=["n=1", "n=2", "n=3"],
                 gpu=["a100-sxm4-80gb"] * 3, time_s=[0.5e-3, 1.25e-3, 0.995e-3],
                 flops=[1.95e10, nan, 1.95e10], fp32_flops=[1.95e10, nan, 1.95e10],
                 dram_bytes=[nan, a100.peak("dram_bw_bytes_per_s") * 1e-3, nan])
    ratio = 1.95e10 / a100.peak("fp32_fma_flops_per_s") / 0.5e-3
    said = beyond_roofline({a100.id: rows})
    assert said == (f"1 of 3 rows measured on a100-sxm4-80gb ran faster than its datasheet "
                    f"roofline allows (FLOPs at the FMA peak, DRAM bytes at the bandwidth), by "
                    f"up to {ratio:.3g}x (gemm [n=1]): their counts overstate the work (a "
                    "cheaper algorithm, bytes a cache served) or the GPU is not the catalog's "
                    "(its clock, its model); projections from the counts inherit that error")
    with pytest.warns(RooflineWarning, match="1 of 3 rows"):
        predict(rows, targets="h100-sxm5-80gb", methods="roofline")
    fine = table(kernel=["copy"], gpu=["a100-sxm4-80gb"], time_s=[1.25e-3],
                 dram_bytes=[a100.peak("dram_bw_bytes_per_s") * 1e-3])
    assert beyond_roofline({a100.id: fine}) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", RooflineWarning)
        predict(fine, targets="h100-sxm5-80gb", methods="roofline")


def test_nominal_convolution_flops_beyond_the_roofline_on_real_data(capsys):
    """NeuSight's conv rows count the convolution's nominal FLOPs; cuDNN ran 3 x 3 filters
    with fewer (Winograd), faster than those FLOPs allow on the P100 in 2 of the fixture's 5
    rows. The command line says it in one warning line, and predicts all the same; `evaluate`
    says it for every GPU of the table in one line."""
    from pathlib import Path

    from conftest import run_cli

    conv = str(Path(__file__).parent / "data" / "neusight-5gpus-conv.csv")
    code, out, err = run_cli(capsys, "predict", conv, "-s", "tesla-p100-pcie-16gb", "-t",
                             "v100-pcie-32gb", "-m", "compute", "--json")
    warned = [x for x in err.splitlines() if x.startswith("gpuproj: warning: ")]
    assert code == 0 and out and len(warned) == 1
    assert warned[0].startswith("gpuproj: warning: 2 of 5 rows measured on tesla-p100-pcie-16gb "
                                "ran faster than its datasheet roofline allows")
    assert "k=3" in warned[0]
    code, out, err = run_cli(capsys, "evaluate", conv, "-m", "compute", "--json")
    warned = [x for x in err.splitlines() if x.startswith("gpuproj: warning: ")]
    assert code == 0 and out and len(warned) == 1
    assert warned[0].startswith("gpuproj: warning: 1 of 5 rows measured on a100-pcie-80gb, "
                                "2 of 5 on tesla-p100-pcie-16gb, ")
    assert "ran faster than their GPU's datasheet roofline allows" in warned[0]


def test_a_method_that_doubts_its_projections_warns(capsys):
    """The bundled H100 suite profile: `quantitative` predicts the H100's own atomic_hotspot
    (19 ms of contended atomics on one address) at 0.0022x its measured time, and 3 more rows
    outside 0.5-2x, so its "464x faster on an H200" is a warning line, not only a note among
    the assumptions. An evaluation, which scores such projections, prints none."""
    from pathlib import Path

    from conftest import run_cli

    from gpuproj.evaluate import evaluate
    from gpuproj.predict import MethodWarning, predict
    from gpuproj.profiles import load

    path = Path(__file__).resolve().parents[1] / "examples" / "h100-suite-ncu.csv"
    with pytest.warns(MethodWarning, match=r"^quantitative: on h100-sxm5-80gb itself it "
                      r"predicts 4 of 16 rows outside 0.5-2x the measured time "
                      r"\(atomic_hotspot: 0.0022x\)"):
        predict(load(path), targets=["h200-sxm-141gb", "b200"], methods="quantitative")
    code, _, err = run_cli(capsys, "predict", str(path), "--target", "h200-sxm-141gb,b200",
                           "--method", "quantitative,quantitative-transfer")
    assert code == 0
    assert err.count("gpuproj: warning: quantitative: on h100-sxm5-80gb itself") == 1
    assert "quantitative-transfer:" not in err
    import warnings

    # the profile again as an H200's (same counts, times 0.7x): a pair to score
    from gpuproj.profiles.table import ProfileTable

    h100 = load(path)
    h200 = h100.df.assign(gpu="h200-sxm-141gb", time_s=0.7 * h100.df["time_s"])
    both = h100.concat(ProfileTable(h200, (), h100.origin))
    with warnings.catch_warnings():
        warnings.simplefilter("error", MethodWarning)
        assert len(evaluate(both, ["quantitative"]).pairs) > 0


def test_a_target_the_profile_measured_shows_its_measured_time(capsys):
    """A Rodinia calculate_temp row measured on a GTX 680 and on a P100 (Amaris et al.):
    projected from the GTX 680 to the P100 and to an H100, the P100's row and total carry the
    file's P100 time, the H100's none; the table shows it with the error, `same` being the
    source's time, 8.016 us against 3.0 us measured, +167 %."""
    from pathlib import Path

    from conftest import run_cli

    from gpuproj.predict import predict
    from gpuproj.profiles import load

    path = Path(__file__).parent / "data" / "amaris-2gpus-calculate_temp.csv"
    t = load(path)
    measured = t.on("tesla-p100-pcie-16gb").df["time_s"].iloc[0]
    source = t.on("gtx-680").df["time_s"].iloc[0]
    r = predict(t, source="gtx-680", targets=["tesla-p100-pcie-16gb", "h100-sxm5-80gb"],
                methods="same")
    d = r.table().set_index("target")
    assert d.loc["tesla-p100-pcie-16gb", "measured_s"] == measured
    assert np.isnan(d.loc["h100-sxm5-80gb", "measured_s"])
    a = r.application().set_index("target")
    assert a.loc["tesla-p100-pcie-16gb", "measured_s"] == pytest.approx(measured)
    assert np.isnan(a.loc["h100-sxm5-80gb", "measured_s"])
    assert (source, measured) == (pytest.approx(8.016e-6), pytest.approx(3.0e-6))
    code, out, _ = run_cli(capsys, "predict", str(path), "--source", "gtx-680", "--target",
                           "tesla-p100-pcie-16gb,h100-sxm5-80gb", "--method", "same")
    assert code == 0
    lines = [ln for ln in out.splitlines() if "tesla-p100" in ln]
    assert lines and all("3 us" in ln and "+167 %" in ln for ln in lines)
    # a profile of the source alone has no such column
    alone = predict(t.on("gtx-680"), targets=["tesla-p100-pcie-16gb"], methods="same")
    assert "measured_s" not in alone.table()


def test_configurations_predicted_alike_are_ranked_by_the_source_time():
    """Three configurations a floor predicts alike (1 ms) and a fourth predicted slower: the
    ranking and the shortlist take, among the three, the one the source ran fastest (c,
    0.4 ms), not the first row (a); the top-1 loss is that of c on the target."""
    import pandas as pd

    from gpuproj.evaluate import rank_metrics
    from gpuproj.shortlist import shortlist

    p = pd.DataFrame({"kernel": "k", "config": list("abcd"), "method": "m",
                      "time_s": [1e-3, 1e-3, 1e-3, 2e-3],
                      "source_time_s": [0.9e-3, 0.6e-3, 0.4e-3, 1e-3],
                      "true_s": [3e-3, 2e-3, 1e-3, 4e-3]})
    assert shortlist(p, ["m"], 2, ["kernel"])["config"].tolist() == ["c", "b"]
    m = rank_metrics(p, ["kernel"], top=1)
    assert (m["top1_loss_pct"], m["top1_hit"]) == (0.0, 1.0)
    # without the source's time the three share the pick, whatever their order: losses of
    # 200, 100 and 0 % against the best 1 ms, a third each: 100 %, a hit in one of three
    for rows in (p, p.iloc[::-1]):
        m = rank_metrics(rows.drop(columns="source_time_s"), ["kernel"], top=1)
        assert m["top1_loss_pct"] == pytest.approx(100.0)
        assert m["top1_hit"] == pytest.approx(1 / 3)


def test_the_users_frames_hold_labels_as_strings():
    """``table()`` and ``application()`` give plain string labels: grouping one target's rows
    of a categorical (pandas 2) listed the other targets too, with 0 s totals."""
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    r = predict(load("examples/h100-suite-ncu.csv"), targets=["h200-sxm-141gb", "b200"],
                methods=["bandwidth"])
    for d in (r.table(), r.application(), r.ranked_application()):
        assert not any(isinstance(t, pd.CategoricalDtype) for t in d.dtypes)
    t = r.table()
    totals = t[t["target"] == "b200"].groupby("target")["time_s"].sum()
    assert list(totals.index) == ["b200"]


@pytest.mark.parametrize("args", [("-m", "bandwidth", "-m", "compute"),
                                  ("-m", "bandwidth,compute")])
def test_predict_takes_methods_repeated_or_comma_separated(capsys, args):
    # as `evaluate` does; a repeated -m kept the last one alone, without a word
    import json

    from conftest import run_cli

    code, out, _ = run_cli(capsys, "predict", "examples/rodinia-p100-nvprof.csv", "-t",
                           "h100-sxm5-80gb", *args, "--json")
    assert code == 0
    assert {r["method"] for r in json.loads(out)["predictions"]} == {"bandwidth", "compute"}


def test_the_json_totals_come_fastest_first_as_printed(capsys):
    # the text's totals are fastest first per method; the JSON's followed --target's order
    import json

    from conftest import run_cli

    code, out, _ = run_cli(capsys, "predict", "examples/h100-suite-ncu.csv", "-t",
                           "h100-pcie-80gb,b200,h200-sxm-141gb", "-m", "bandwidth", "--json")
    times = [a["time_s"] for a in json.loads(out)["application"]]
    assert code == 0 and len(times) == 3 and times == sorted(times)


def test_the_json_says_which_methods_have_an_interval_and_what_limiters_mean(capsys):
    # low_s = high_s = time_s for a method without an interval and for a one-level
    # hierarchical row alike: 'interval' tells them apart per method; the limiters named are
    # explained, as the printed table's notes explain them
    import json

    from conftest import run_cli

    from gpuproj.models.base import LIMITER_MEANINGS

    code, out, _ = run_cli(capsys, "predict", "examples/h100-suite-ncu.csv", "-t", "h200",
                           "-m", "bandwidth,hierarchical-ext", "--json")
    d = json.loads(out)
    assert code == 0 and d["interval"] == {"bandwidth": False, "hierarchical-ext": True}
    named = {r["limiter"] for r in d["predictions"]}
    assert d["limiters"] == {x: LIMITER_MEANINGS[x] for x in LIMITER_MEANINGS if x in named}
    assert "issue" in named  # the suite's reductions and convolutions on the H200


@pytest.mark.parametrize("width", [80, 130, 400])
def test_a_narrow_terminal_cuts_no_number(width):
    # at 80 columns rich cut every column to a few letters ('4.4…' for a speed-up); now the
    # names fold, and where even that does not fit the ranges are left out, and said so
    import io
    import re

    from rich.console import Console

    from gpuproj.cli.predict import print_predictions
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    r = predict(load("examples/rodinia-p100-nvprof.csv"), targets=["h100-sxm5-80gb", "h200"],
                methods=["hierarchical-ext", "bandwidth"])
    buf = io.StringIO()
    print_predictions(r, Console(file=buf, width=width))
    text = buf.getvalue()
    assert "…" not in text
    speedups = {f"{v:.2f}x" for v in r.table()["speedup"]}
    assert speedups <= set(re.findall(r"\d+\.\d\dx", text))
    assert all(len(line) <= width for line in text.splitlines())
    narrowed = "intervals and 90 % bands left out" in text
    assert narrowed == (width == 80) and ("90 % band ┃" in text) != narrowed
    words = " ".join(text.split())  # the notes wrap at the width
    assert "limiter: what bounds the row" in words and "dram = DRAM bandwidth" in words


def test_the_totals_come_last_where_a_terminal_keeps_them(capsys):
    # with many targets the totals were followed by hundreds of lines of assumptions
    from conftest import run_cli

    code, out, _ = run_cli(capsys, "predict", "examples/rodinia-p100-nvprof.csv", "-t",
                           "h100-sxm5-80gb,h200")
    assert code == 0
    at = {k: out.index(k) for k in ("Projected from", "Assumptions of", "Application total")}
    assert at["Projected from"] < at["Assumptions of"] < at["Application total"]
    assert "Assumptions" not in out[at["Application total"]:]


def test_a_note_made_for_some_targets_names_them():
    # the issue rates differ by target: with the target left out of the printed line, two
    # lines 'I = 4 -> 8' and 'I = 4 -> 4' did not say which target had which
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    result = predict(load("examples/rodinia-p100-nvprof.csv"),
                     targets=["gtx-980", "h100-sxm5-80gb"], methods=["hierarchical-ext"])
    per_target = result.predictions["hierarchical-ext"].assumptions
    lines = result.assumption_lines()
    for t, other in (("gtx-980", "h100-sxm5-80gb"), ("h100-sxm5-80gb", "gtx-980")):
        (issue,) = [n for n in per_target[t] if n.startswith("issue rate: FP ceiling")]
        assert issue not in per_target[other]
        assert f"for {t}: {issue} (hierarchical-ext)" in lines
    # a note made for every target, and one that names its target, keep their line
    shared = [n for n in per_target["gtx-980"] if n in per_target["h100-sxm5-80gb"]
              and getattr(n, "kind", None) is None]  # not a note on a ceiling
    assert shared and all(f"{n} (hierarchical-ext)" in lines for n in shared)
