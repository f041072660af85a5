"""The three experiments' splits: no test row may influence training; CLI training options."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from learned_helpers import synthetic_table

from gpuproj.cli.main import cli
from gpuproj.errors import GpuprojError
from gpuproj.learned.models import LearnedModel
from gpuproj.profiles.table import ProfileTable
from gpuproj.splits import (
    REPORT_TEST_KERNELS,
    config_folds,
    config_size,
    evaluate_fold,
    folds,
    gpu_folds,
    kernel_folds,
)


class Spy(LearnedModel):
    """Records the table it was trained on; predicts the mean training time ratio."""

    name = "spy"
    summary = "test double"

    def fit(self, table):
        self.seen_ = table.df.copy()
        d = table.df
        self.scale_ = float(d["time_s"].mean())
        self.features_ = []
        return self

    def _project(self, df, source, target):
        from gpuproj.models.base import Projection

        return Projection(df["time_s"].to_numpy() * 0 + self.scale_)


@pytest.fixture(scope="module")
def synth():
    t = synthetic_table(n_configs=8, kernels=("stream", "gemm", "stencil", "scan"))
    d = t.df.copy()
    # sizes grow with the config index, so that the config split has a largest size
    return ProfileTable(d)


def _keys(df):
    return set(zip(df["kernel"], df["config"], df["gpu"]))


def test_gpu_split_leaves_the_gpu_out_entirely(synth):
    folds = list(gpu_folds(synth))
    assert len(folds) == synth.df["gpu"].nunique() == 4  # one fold per GPU
    for fold in folds:
        g = fold.targets[0]
        assert g not in set(fold.train.df["gpu"])
        fitted = []
        ev = evaluate_fold(fold, [Spy()], fitted=fitted)
        assert g not in set(fitted[0].seen_["gpu"])
        assert set(ev.pairs["target"].astype(str)) == {g}
        assert g not in set(ev.pairs["source"].astype(str))


def test_config_split_holds_out_the_largest_sizes(synth):
    (fold,) = config_folds(synth)
    train_keys = set(zip(fold.train.df["kernel"], fold.train.df["config"]))
    assert not (train_keys & fold.test_keys)
    sizes = synth.df.groupby(["kernel", "config"])["working_set_bytes"].max()
    for k, c in fold.test_keys:
        assert sizes[(k, c)] == sizes[k].max()
    fitted = []
    ev = evaluate_fold(fold, [Spy()], fitted=fitted)
    assert not (_keys(fitted[0].seen_) & _keys(fold.test.df))
    assert set(zip(ev.pairs["kernel"], ev.pairs["config"])) <= fold.test_keys


def test_kernel_split(synth):
    each = kernel_folds(synth)
    assert len(each) == 4  # leave-one-kernel-out without the report's kernels
    for f in each:
        assert not set(f.train.df["kernel"]) & set(f.test.df["kernel"])
    d = synth.df.copy()
    d["kernel"] = d["kernel"].map(dict(zip(["stream", "gemm", "stencil", "scan"],
                                           list(REPORT_TEST_KERNELS))))
    extra = synth.df.assign(kernel="vector_add")
    (f,) = kernel_folds(ProfileTable(pd.concat([d, extra], ignore_index=True)))
    assert set(f.test.df["kernel"]) == set(REPORT_TEST_KERNELS)


def test_test_truth_cannot_change_predictions(synth):
    """Leave-one-GPU-out: scrambling every time measured on the held-out GPU leaves the
    predictions for it unchanged (its rows reach neither the fit nor the source side)."""
    params = {"residual": {"learner_params": {"max_iter": 15}}}
    g = "rtx-4070"
    d = synth.df.copy()
    mask = d["gpu"] == g
    d.loc[mask, "time_s"] *= np.random.default_rng(5).uniform(0.1, 10, mask.sum())
    cols = ["kernel", "config", "source", "target"]
    runs = []
    for t in (synth, ProfileTable(d)):
        (fold,) = gpu_folds(t, [g])
        ev = evaluate_fold(fold, ["residual"], model_params=params)
        runs.append(ev.pairs.sort_values(cols).reset_index(drop=True))
    a, b = runs
    assert len(a) == len(b) > 0
    np.testing.assert_allclose(a["time_s"].to_numpy(), b["time_s"].to_numpy(), rtol=1e-12)
    assert not np.allclose(a["true_s"].to_numpy(), b["true_s"].to_numpy())


@pytest.mark.parametrize("which", ["config", "kernel"])
def test_test_rows_never_reach_training(synth, which):
    """Config and kernel splits: the fitted model is the same whatever the test rows hold."""
    from gpuproj.learned.hybrids import ResidualHybrid
    from gpuproj.learned.pairs import make_pairs

    fold = (config_folds if which == "config" else kernel_folds)(synth)[0]
    d = synth.df.copy()
    test = pd.Series(list(zip(d["kernel"], d["config"])), index=d.index).isin(fold.test_keys)
    d.loc[test, "time_s"] *= 7.0
    fold2 = (config_folds if which == "config" else kernel_folds)(ProfileTable(d))[0]
    probe = make_pairs(fold.test)
    preds = [ResidualHybrid(learner_params={"max_iter": 15}).fit(f.train)._predict_pairs(probe)
             for f in (fold, fold2)]
    np.testing.assert_allclose(preds[0], preds[1], rtol=1e-12)


def test_split_needs_enough_gpus(synth):
    two = ProfileTable(synth.df[synth.df["gpu"].isin(["titan-v", "rtx-4070"])])
    with pytest.raises(GpuprojError, match="three or more GPUs"):
        gpu_folds(two)


def test_splits_say_what_the_table_lacks(synth):
    with pytest.raises(GpuprojError, match=r"GPU a100-sxm4-40gb is not in the table \(GPUs: "):
        gpu_folds(synth, ["a100-sxm4-40gb"])
    one_size = ProfileTable(synth.df[synth.df["config"] == synth.df["config"].iloc[0]])
    with pytest.raises(GpuprojError, match="two or more sizes on two or more GPUs"):
        config_folds(one_size)
    with pytest.raises(GpuprojError, match="two or more kernels"):
        kernel_folds(ProfileTable(synth.df[synth.df["kernel"] == "gemm"]))
    with pytest.raises(GpuprojError, match=r"kernel\(s\) nbody not in the table"):
        kernel_folds(synth, ["gemm", "nbody"])
    with pytest.raises(GpuprojError, match="unknown split 'random' \\(known: "):
        folds(synth, "random")


def test_config_size_from_the_config_text():
    """Without counts that tell the sizes apart, a configuration's size is the product of the
    numbers in its text: '64x128' (8192) is larger than '96x64' (6144)."""
    d = pd.DataFrame({"kernel": ["k"] * 4, "config": ["64x128", "96x64"] * 2,
                      "gpu": ["titan-v"] * 2 + ["rtx-4070"] * 2, "time_s": [1.0, 2.0, 3.0, 4.0]})
    t = ProfileTable.from_frame(d)
    assert config_size(t).to_dict() == {("k", "64x128"): 8192.0, ("k", "96x64"): 6144.0}
    (fold,) = config_folds(t)
    assert fold.test_keys == {("k", "64x128")}


# CLI -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def csv_path(tmp_path_factory, synth):
    p = tmp_path_factory.mktemp("learned") / "synth.csv"
    synth.df.drop(columns=["_row"], errors="ignore").to_csv(p, index=False)
    return p


def test_cli_split_gpu_json(csv_path):
    r = CliRunner().invoke(cli, ["evaluate", str(csv_path), "--format", "measurement",
                                 "--split", "gpu", "--target", "rtx-4070",
                                 "-m", "roofline,linear", "--coverage", "0.8", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert {"methods", "per_pair", "per_kernel", "skipped"} <= set(out)
    assert set(out["methods"]) == {"roofline", "linear"}
    assert out["methods"]["linear"]["coverage"] is not None
    # one held-out GPU: no interval of the coverage over held-out GPUs
    assert out["methods"]["linear"]["coverage_ci"] is None
    assert all(k.endswith("->rtx-4070") for k in out["per_pair"]["linear"])


def test_cli_learned_intervals_are_90_percent_unless_told(csv_path):
    """Without --coverage the learned methods calibrate 90 % intervals and the analytical ones
    keep their own (none for roofline); --coverage 0 turns the learned ones off."""
    def run(*extra):
        r = CliRunner().invoke(cli, ["evaluate", str(csv_path), "--format", "measurement",
                                     "--split", "gpu", "--target", "rtx-4070",
                                     "-m", "roofline,linear", *extra, "--json"])
        assert r.exit_code == 0, r.output
        return json.loads(r.output)["methods"]

    default, off = run(), run("--coverage", "0")
    assert default["linear"]["coverage"] is not None
    assert default["roofline"]["coverage"] is None
    assert off["linear"]["coverage"] is None
    # the interval changes nothing else
    assert off["linear"]["mape"] == default["linear"]["mape"]
    # the default is --coverage 0.9 exactly; 0.8 takes nearer quantiles of the same
    # out-of-fold errors: narrower intervals, which cover no more of the held-out times
    ninety, eighty = run("--coverage", "0.9"), run("--coverage", "0.8")
    assert ninety["linear"] == default["linear"]
    assert eighty["linear"]["interval_width"] < default["linear"]["interval_width"]
    assert eighty["linear"]["coverage"] <= default["linear"]["coverage"]
    assert eighty["linear"]["mape"] == default["linear"]["mape"]
    from gpuproj.models import get_model
    assert get_model("residual").coverage == 0.9 and get_model("rf").coverage == 0.9


def test_cli_split_reports_each_held_out_gpu(csv_path, synth):
    args = ["evaluate", str(csv_path), "--format", "measurement", "--split", "gpu",
            "-m", "roofline,ridge"]
    r = CliRunner().invoke(cli, args + ["--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    for m in ("roofline", "ridge"):
        per = out["per_fold"][m]
        assert set(per) == {f"target {g}" for g in synth.gpus}
        # the pooled MAPE is the pair-weighted mean of the folds'
        n = sum(v["n"] for v in per.values())
        assert n == out["methods"][m]["n"]
        assert sum(v["n"] * v["mape"] for v in per.values()) / n == pytest.approx(
            out["methods"][m]["mape"])
    text = CliRunner(env={"COLUMNS": "200"}).invoke(cli, args).output  # no header cut
    assert "per held-out GPU" in text
    assert all(g in text for g in synth.gpus)
    # how often the lowest pooled MAPE is the lower one per held-out GPU
    top, other = sorted(("roofline", "ridge"), key=lambda m: out["methods"][m]["mape"])
    wins = sum(out["per_fold"][top][f]["mape"] < out["per_fold"][other][f]["mape"]
               for f in out["per_fold"][top])
    assert (f"{top} has the lowest MAPE; per fold it is lower than {other} on {wins} of "
            f"{len(synth.gpus)}") in text


def test_cli_learned_needs_training(csv_path, capsys):
    from gpuproj.cli.main import main

    with pytest.raises(SystemExit) as e:
        main(["evaluate", str(csv_path), "--format", "measurement", "-m", "rf"])
    assert e.value.code == 2 and "--train" in capsys.readouterr().err


def test_cli_train_and_save(csv_path, tmp_path):
    out = tmp_path / "model"
    r = CliRunner().invoke(cli, ["evaluate", str(csv_path), "--format", "measurement",
                                 "--train", str(csv_path), "-m", "ridge", "--save-model",
                                 str(out), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "model.json").read_text())
    assert doc["method"] == "ridge" and doc["train"]["hash"]
    assert (tmp_path / "model.npz").exists()
    # tested on its own training table: every test row was trained on, which the JSON says
    rows = len(pd.read_csv(csv_path))
    assert json.loads(r.output)["train_overlap"] == {
        "shared_rows": rows, "test_rows": rows, "new_kernels": [], "new_gpus": []}


def test_cli_train_names_what_the_test_table_shares_with_it(csv_path, synth, tmp_path):
    # training without one GPU and one kernel, tested on the whole table: the rows of the
    # rest are training rows, and the GPU and the kernel are new to the learned model
    df = pd.read_csv(csv_path)
    gpu, kernel = synth.gpus[-1], sorted(df["kernel"].unique())[-1]
    train = tmp_path / "train.csv"
    df[(df["gpu"] != gpu) & (df["kernel"] != kernel)].to_csv(train, index=False)
    shared = int(((df["gpu"] != gpu) & (df["kernel"] != kernel)).sum())
    r = CliRunner().invoke(cli, ["evaluate", str(csv_path), "--format", "measurement",
                                 "--train", str(train), "-m", "ridge"])
    assert r.exit_code == 0, r.output
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("gpuproj: ")]
    assert notes == [
        f"gpuproj: warning: {shared} of {len(df)} test rows were also in the training table: "
        "the learned methods' errors there are training errors (--split gpu|config|kernel keeps "
        "the test rows out)",
        f"gpuproj: warning: test kernels not in the training table: {kernel} (the learned "
        "methods extrapolate to them)",
        f"gpuproj: warning: test GPUs not in the training table: {gpu} (the learned methods "
        "extrapolate to them)"]


def test_coverage_interval_resamples_whole_groups():
    from itertools import product

    from gpuproj.evaluate import Evaluation, coverage_interval, metrics

    # three held-out GPUs: 10 pairs all inside, 30 pairs a third inside, 60 pairs none
    groups = np.repeat(["a", "b", "c"], [10, 30, 60])
    inside = np.concatenate([np.ones(10), np.arange(30) % 3 == 0, np.zeros(60)]).astype(bool)
    hits, sizes = {"a": 10, "b": 10, "c": 0}, {"a": 10, "b": 30, "c": 60}
    # the 27 equally likely resamples of three groups, enumerated by hand
    exact = np.sort([sum(hits[g] for g in r) / sum(sizes[g] for g in r)
                     for r in product("abc", repeat=3)])
    lo, hi = coverage_interval(inside, groups, n_boot=20000)
    # the 5th and 95th percentiles of that exact distribution, within bootstrap noise
    assert lo == pytest.approx(np.percentile(exact, 5), abs=0.02)
    assert hi == pytest.approx(np.percentile(exact, 95), abs=0.02)
    assert lo < inside.mean() < hi
    # all covered: no spread; one group: no interval
    assert coverage_interval(np.ones(6, bool), ["a", "a", "b", "b", "c", "c"]) == [1.0, 1.0]
    assert coverage_interval(inside, ["a"] * 100) is None
    m = metrics(np.ones(4), np.ones(4), low=np.full(4, 0.5), high=np.full(4, 2.0),
                groups=["x", "x", "y", "y"])
    assert m["coverage"] == 1.0 and m["coverage_ci"] == [1.0, 1.0]
    assert metrics(np.ones(4), np.ones(4), low=np.ones(4), high=np.ones(4))["coverage_ci"] is None
    # a split's summary takes the groups from the pairs' fold
    pairs = pd.DataFrame({"method": "m", "source": "s", "target": "t", "kernel": "k",
                          "time_s": 1.0, "true_s": 1.0, "band_low_s": np.nan,
                          "band_high_s": np.nan, "low_s": [0.5, 0.5, 2.0, 2.0],
                          "high_s": 3.0, "fold": ["g1", "g1", "g2", "g2"]})
    s = Evaluation(pairs, []).summary()["m"]
    assert s["coverage"] == 0.5 and s["coverage_ci"] == [0.0, 1.0]



def test_cv_masks_leave_each_gpu_out_entirely():
    """The learned models' out-of-fold splits (``learned.pairs.cv_masks``): a fold of GPU g
    validates the pairs whose target is g and trains on the pairs that touch g on neither
    side, so that no validated prediction saw g's times as a source or as a target."""
    from gpuproj.learned.pairs import GROUP_FOLDS, cv_masks

    gpus = ["a", "b", "c"]
    pairs = pd.DataFrame([(s, t, "k", "n=1") for s in gpus for t in gpus if s != t],
                         columns=["source", "target", "kernel", "config"])

    def rows(mask):
        return set(zip(pairs["source"][mask], pairs["target"][mask]))

    folds = list(cv_masks(pairs, "gpu", 8, 0))
    assert len(folds) == 3  # one per GPU, in order a, b, c
    (tr, va), *_ = folds
    assert rows(va) == {("b", "a"), ("c", "a")} and rows(tr) == {("b", "c"), ("c", "b")}
    assert [rows(va) for _, va in folds] == [{(x, g) for x in gpus if x != g} for g in gpus]
    assert [rows(tr) for tr, _ in folds] == [
        {(x, y) for x in gpus for y in gpus if len({x, y, g}) == 3} for g in gpus]

    # five GPUs, three folds (three of the GPUs, drawn): each fold's validation rows are the
    # pairs into one GPU, which no training row of that fold has on either side
    gpus = ["a", "b", "c", "d", "e"]
    pairs = pd.DataFrame([(s, t, k, "n=1") for s in gpus for t in gpus if s != t
                          for k in ("k1", "k2")], columns=["source", "target", "kernel", "config"])
    held = []
    for tr, va in cv_masks(pairs, "gpu", 3, 0):
        (g,) = set(pairs["target"][va])
        held.append(g)
        assert va.sum() == 4 * 2 and not (pairs["source"][va] == g).any()
        assert tr.sum() == 4 * 3 * 2  # every pair among the four other GPUs
        assert not (pairs["source"][tr] == g).any() and not (pairs["target"][tr] == g).any()
    assert len(held) == len(set(held)) == 3
    # fewer than three GPUs: leaving one out leaves nothing to train on, so no fold
    two = pairs[pairs["source"].isin(["a", "b"]) & pairs["target"].isin(["a", "b"])]
    assert list(cv_masks(two, "gpu", 8, 0)) == []
    # by kernel: each fold validates whole kernels that its training rows do not have
    seen = np.zeros(len(pairs), int)
    for tr, va in cv_masks(pairs, "kernel", 8, 0):
        assert not set(pairs["kernel"][va]) & set(pairs["kernel"][tr]) and (tr | va).all()
        seen += va
    assert (seen == 1).all()
    # by default (None) every one of ten GPUs is held out, where a cap of 8 dropped two
    gpus = list("abcdefghij")
    ten = pd.DataFrame([(s, t, "k", "n=1") for s in gpus for t in gpus if s != t],
                       columns=["source", "target", "kernel", "config"])
    assert [set(ten["target"][va]) for _, va in cv_masks(ten, "gpu", None, 0)] == [
        {g} for g in gpus]
    # kernels and configurations: GROUP_FOLDS folds by default
    configs = ten.assign(config=[f"n={i % 20}" for i in range(len(ten))])
    assert len(list(cv_masks(configs, "config", None, 0))) == GROUP_FOLDS == 8


def test_a_fold_without_a_pair_is_empty_not_an_error():
    # evaluate() raises where no GPU pair measured a configuration; a held-out kernel that
    # one GPU alone measured leaves its fold empty and the split goes on
    from gpuproj.splits import evaluate_split

    rows = [("k", f"n={n}", g, t * n, 1e8 * n) for n in (1, 2, 3)
            for g, t in (("v100-sxm2-16gb", 2e-3), ("a100-sxm4-40gb", 1e-3))]
    rows += [("j", f"n={n}", "h100-sxm5-80gb", 1e-3 * n, 1e8 * n) for n in (1, 2)]
    t = ProfileTable.from_frame(pd.DataFrame(rows, columns=["kernel", "config", "gpu", "time_s",
                                                            "dram_bytes"]))
    ev = evaluate_split(t, ["bandwidth"], "kernel")
    assert len(ev.pairs) == 6 and set(ev.pairs["fold"]) == {"kernel k"}


def test_cli_saves_the_learned_model_alone_beside_conformal_wrappers(csv_path, tmp_path):
    # --coverage wraps bandwidth in a fitted Conformal: saved too, it renamed the one learned
    # model to PATH-ridge, and --model PATH found nothing
    out = tmp_path / "m"
    r = CliRunner().invoke(cli, ["evaluate", str(csv_path), "--format", "measurement",
                                 "--train", str(csv_path), "-m", "ridge,bandwidth",
                                 "--coverage", "0.8", "--save-model", str(out), "--json"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "m.npz"]
    assert json.loads((tmp_path / "m.json").read_text())["method"] == "ridge"


def test_a_split_of_a_public_table_widens_to_bands_fitted_without_it(monkeypatch):
    """The shipped bands were fitted on the public tables, held-out GPUs included: a split of
    one of them takes the bands fitted without its data source, a table of no public source
    the shipped ones, and a separate test table its own source's held-out bands."""
    import gpuproj.splits as sp
    from gpuproj.evaluate import Evaluation
    from gpuproj.models import get_model
    from gpuproj.models.bands import bands_without_source, load_bands
    from gpuproj.profiles import load

    kt = load(Path(__file__).parent / "data" / "kerneltuner-4gpus-gemm_clblast_4096.csv")
    held = bands_without_source("kerneltuner")
    assert held is not None and held != load_bands()["methods"]
    assert sp.held_out_bands(kt) is held
    assert sp.held_out_bands(ProfileTable(kt.df)) is None  # no file: no public source
    # two files of one source read as one table (its origin 'a.csv, b.csv', no file): the same
    # held-out bands, where it fell back to the shipped ones; two sources have none
    data = Path(__file__).parent / "data"
    both = kt.concat(load(data / "kerneltuner-4gpus-convolution.csv"))
    assert sp.held_out_bands(both) is held
    assert sp.held_out_bands(kt.concat(load(data / "amaris-2gpus-calculate_temp.csv"))) is None
    seen = []

    def fold_bands(fold, methods, **kw):
        seen.append(kw["bands"])
        return Evaluation.empty()

    monkeypatch.setattr(sp, "evaluate_fold", fold_bands)
    sp.evaluate_split(kt, ["residual"], "gpu")
    assert seen and all(b is held for b in seen)
    seen.clear()
    sp.evaluate_trained(kt, kt, ["residual"])  # in-sample: the shipped bands
    assert seen == [None]
    model = sp.make_method("residual", bands=held)
    assert model.physics_bands is held
    # a user's instance at the shipped bands is trained, fold by fold, with the held-out ones
    monkeypatch.undo()
    fitted = []
    fold = sp.folds(kt, "gpu")[0]
    sp.evaluate_fold(fold, [get_model("residual", learner_params={"max_iter": 5})],
                     bands=held, fitted=fitted)
    assert fitted[0].physics_bands is held
    assert sp.make_method("bandwidth", bands=held).name == "bandwidth"  # analytical: no bands


def test_evaluate_help_names_every_method_that_must_be_trained():
    from gpuproj.models import MODELS, model_class

    text = " ".join(CliRunner().invoke(cli, ["evaluate", "--help"]).output.split())
    listed = text.split("Learned methods (")[1].split(")")[0].split(", ")
    assert sorted(listed) == sorted(m for m in MODELS if model_class(m).trained)


def test_is_analytical_is_what_needs_no_training():
    from gpuproj.models import MODELS, is_analytical, model_class

    assert all(is_analytical(m) == (not model_class(m).trained) for m in MODELS)
    assert not is_analytical("no-such-method")


def test_a_split_counts_the_tables_own_skipped_rows_once():
    """The KernelTuner fixture has 10 configurations invalid on the RTX 3060 laptop: every one
    of the 4 folds' test tables carried them, and --split gpu reported 40."""
    from gpuproj.profiles import load
    from gpuproj.splits import evaluate_split

    table = load(Path(__file__).parent / "data" / "kerneltuner-4gpus-gemm_clblast_4096.csv")
    assert len(table.skipped) == 10
    ev = evaluate_split(table, ["same"], "gpu")
    assert set(ev.skipped) == set(table.skipped) and len(ev.skipped) == 10


def test_coverage_interval_takes_a_missing_group_as_one_of_its_own():
    # the sentinel of a missing group (-1) stopped np.bincount with a ValueError
    from gpuproj.evaluate import coverage_interval

    inside = np.array([1, 1, 0, 0, 1, 1], bool)
    got = coverage_interval(inside, np.array(["a", "a", None, None, "b", "b"], object))
    assert got == coverage_interval(inside, ["a", "a", "x", "x", "b", "b"])
    assert coverage_interval(inside, [np.nan] * 6) is None
