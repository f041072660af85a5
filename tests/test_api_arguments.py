"""The Python API takes its arguments as a notebook user writes them: names separated by commas
are several, as on the command line (one rule, ``gpuproj.names``, for both); an argument that
takes one GPU says so when given several; a DataFrame where a ``ProfileTable`` belongs is a
``TypeError`` that says what to pass; and ``help()`` on what a user calls says what it does."""

import inspect
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli

from gpuproj import names
from gpuproj.errors import GpuprojError, UnknownGPUError
from gpuproj.evaluate import evaluate
from gpuproj.models import get_model, method_list
from gpuproj.predict import PredictionSet, predict
from gpuproj.profiles import load
from gpuproj.profiles.table import ProfileTable

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "rodinia-p100-nvprof.csv"
SUITE = ROOT / "examples" / "h100-suite-ncu.csv"
DATA = ROOT / "tests" / "data"
NINE = DATA / "amaris-9gpus-bpnn_adjust_weights.csv"


def test_names_separated_by_commas_are_several_in_predict_and_evaluate():
    # "h100-sxm5-80gb,h200" was an unknown GPU ("did you mean ..."), "bandwidth,roofline" an
    # unknown method, as the CLI's --target and --method split them
    p = load(EXAMPLE)
    r = predict(p, targets="h100-sxm5-80gb, h200", methods="bandwidth,roofline")
    assert r.targets == ["h100-sxm5-80gb", "h200-sxm-141gb"]
    assert list(r.predictions) == ["bandwidth", "roofline"]
    # a list may hold such texts, and "all" is all in a list of one too
    r = predict(p, targets=["h100*,h200"], methods=["all"])
    assert "h200-sxm-141gb" in r.targets and "hierarchical" in r.predictions
    nine = load(NINE)
    r = predict(nine, source="tesla-k40,gtx-980", targets="h200", methods="bandwidth")
    assert r.combined and r.sources == ["tesla-k40", "gtx-980"]
    assert predict(nine, source=["all"], targets="h200", methods="bandwidth").combined
    ev = evaluate(nine, methods="bandwidth,roofline", sources="tesla-k40,gtx-980",
                  targets="gtx-titan-x,tesla-p100-pcie-16gb")
    assert set(ev.pairs["method"]) == {"bandwidth", "roofline"}
    assert set(ev.pairs["source"]) == {"tesla-k40", "gtx-980"}
    assert set(ev.pairs["target"]) == {"gtx-titan-x", "tesla-p100-pcie-16gb"}


def test_names_separated_by_commas_are_several_for_models_splits_and_pictures():
    from gpuproj.plots.quadrant import quadrant_data
    from gpuproj.splits import evaluate_split, gpu_folds, kernel_folds

    p = load(EXAMPLE)
    pred = get_model("bandwidth").predict(p, "tesla-p100-pcie-16gb", "h100-sxm5-80gb,h200")
    assert list(pred.df["target"].cat.categories) == ["h100-sxm5-80gb", "h200-sxm-141gb"]
    assert method_list("bandwidth, roofline") == ["bandwidth", "roofline"]
    nine = load(NINE)
    assert [f.targets for f in gpu_folds(nine, "gtx-titan-x,gtx-980")] == [["gtx-titan-x"],
                                                                       ["gtx-980"]]
    # one method by its name was split into letters ('b', 'a', ...), unknown methods
    ev = evaluate_split(nine, "bandwidth,same", "gpu", gpus="gtx-titan-x")
    assert set(ev.pairs["method"]) == {"bandwidth", "same"}
    # a kernel's name is one test kernel, not its letters (nor split at a C++ comma)
    two = ProfileTable.from_frame(pd.DataFrame({
        "kernel": ["f<int, float>", "g"] * 2, "gpu": ["titan-v"] * 2 + ["rtx-2080-ti"] * 2,
        "time_s": [1.0, 2, 3, 4]}))
    (fold,) = kernel_folds(two, "f<int, float>")
    assert fold.test_keys == {("f<int, float>", "default")}
    q = quadrant_data("h100-sxm5-80gb,h200")
    assert [g["id"] for g in q["gpus"]] == ["h100-sxm5-80gb", "h200-sxm-141gb"]


def test_the_cli_and_the_api_split_names_alike():
    from gpuproj.cli import _common, evaluate, gpus, predict, quadrant, report

    assert names.split_list(" a, b,,c ") == ["a", "b", "c"]
    assert names.name_list({"b", "a,c"}) == ["a", "c", "b"]  # a set sorted, then split
    for mod in (_common, evaluate, predict):
        assert mod.split_lists is names.split_lists
    for mod in (gpus, predict, quadrant, report):
        assert mod.split_list is names.split_list


def test_an_argument_that_takes_one_gpu_says_so(tmp_path, capsys):
    from gpuproj.plots.roofline import roofline_data

    p = load(EXAMPLE)
    # a list was "'[...]' is a pattern where one GPU is named", a text an unknown GPU
    for several in (["h100-sxm5-80gb", "h200"], "h100-sxm5-80gb,h200"):
        with pytest.raises(UnknownGPUError, match="target takes one GPU, got 2: "
                                                  "h100-sxm5-80gb, h200"):
            roofline_data(p, target=several)
    with pytest.raises(UnknownGPUError, match="gpu takes one GPU, got 2"):
        roofline_data(p, gpu=["tesla-p100-pcie-16gb", "h200"])
    assert roofline_data(p, target=["h200"])["target"] == "h200-sxm-141gb"  # a list of one
    with pytest.raises(UnknownGPUError, match="source takes one GPU"):
        get_model("bandwidth").predict(p, ["tesla-p100-pcie-16gb", "h200"], "h200")
    f = tmp_path / "times.csv"
    f.write_text("kernel,time_s\nk,1e-3\n")
    with pytest.raises(UnknownGPUError, match=r"gpu= \(--source\) takes one GPU, got 2"):
        load(f, gpu="h200,b200")
    assert load(f, gpu=["h200"]).gpus == ["h200-sxm-141gb"]
    code, _, err = run_cli(capsys, "roofline", str(EXAMPLE), "--target", "h200,b200", "--json")
    assert code == 2 and "target takes one GPU, got 2: h200, b200" in err


def test_a_readers_options_name_gpu(capsys):
    # `gpu=` works for every reader but was left out of the list, so `source=` found no fix
    with pytest.raises(GpuprojError, match=r"reader has no option 'source' \(its options: "
                                           r"gpu \(--source\), per_launch\)"):
        load(DATA / "ncu-handbuilt-h100-raw-base.csv", source="h100")
    # the command line, which refuses gpu= as a reader option, points to its --source
    code, _, err = run_cli(capsys, "predict", str(DATA / "ncu-handbuilt-h100-raw-base.csv"),
                           "-t", "h200", "--reader-option", "source=h100")
    assert code == 2 and "its options: gpu (--source), per_launch" in err
    # load()'s own arguments are no reader options (they were a TypeError's traceback)
    for key in ("path", "format"):
        code, _, err = run_cli(capsys, "predict", str(DATA / "ncu-handbuilt-h100-raw-base.csv"),
                               "-t", "h200", "--reader-option", f"{key}=x")
        assert code == 2 and f"{key} is no reader option" in err


def test_a_frame_where_a_table_belongs_is_a_type_error_saying_what_to_pass():
    # model.predict(p.df, ...) was AttributeError: 'DataFrame' object has no attribute 'df'
    p = load(EXAMPLE)
    trained = get_model("rf", coverage=None, max_pairs=200).fit(load(NINE))
    calls = [lambda: get_model("bandwidth").predict(p.df, "tesla-p100-pcie-16gb", "h200"),
             lambda: trained.predict(p.df, "tesla-p100-pcie-16gb", "h200"),
             lambda: predict(p.df, targets="h200"), lambda: evaluate(p.df)]
    for call in calls:
        with pytest.raises(TypeError, match=r"expected a ProfileTable, got DataFrame: .*"
                                            r"ProfileTable\.from_frame\(df\)"):
            call()
    with pytest.raises(GpuprojError):  # one line on the command line, as before
        calls[0]()


def test_help_says_what_a_notebook_user_calls():
    from gpuproj.learned.models import LearnedModel
    from gpuproj.models.base import Model
    from gpuproj.splits import folds

    for f in (LearnedModel.predict, LearnedModel.fit, LearnedModel.describe,
              LearnedModel.clone, LearnedModel.get_params, Model.fit, Model.get_params,
              Model.predict, folds):
        assert len(inspect.getdoc(f) or "") > 80, f.__qualname__
    # an instance's own class (a hybrid overrides describe) shows the base's help
    assert inspect.getdoc(get_model("residual").describe) == inspect.getdoc(
        LearnedModel.describe)


def test_the_table_docstring_names_every_column_it_can_have():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = predict(load(SUITE), targets="h200", methods="all").table()
        nine = load(NINE)
        combined = predict(nine, source="all", targets="h200", methods="bandwidth").table()
        measured = predict(nine, source="gtx-titan-x", targets="gtx-980", methods="same").table()
    doc = inspect.getdoc(PredictionSet.table)
    for c in {*one.columns, *combined.columns, *measured.columns}:
        assert f"``{c}``" in doc, c


def test_the_limiter_is_the_targets():
    # a kernel whose intensity lies between the P100's ridge point (12.7 FLOP/B) and the
    # H100's (20) is compute-bound on the P100 and memory-bound on the H100: the limiter is
    # the target's, as the note under the tables says
    from gpuproj.views import limiter_note

    df = pd.DataFrame({"kernel": ["k"], "gpu": ["tesla-p100-pcie-16gb"], "time_s": [1e-2],
                       "fp32_flops": [16e9], "dram_bytes": [1e9]})
    t = ProfileTable.from_frame(df)
    for target, bound in (("h100-sxm5-80gb", "dram"), ("tesla-p100-pcie-16gb", "fp32")):
        d = predict(t, targets=target, methods=["roofline", "hierarchical"]).table()
        assert set(d["limiter"]) == {bound}, target
    assert limiter_note(d["limiter"]).startswith("limiter: what bounds the row on the target")
