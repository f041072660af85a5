"""Learned models: learners, features, conformal intervals and the model contract."""

import math

import numpy as np
import pandas as pd
import pytest
from learned_helpers import synthetic_table

from gpuproj.catalog import resolve
from gpuproj.errors import GpuprojError
from gpuproj.learned import GradientBoosting
from gpuproj.learned.conformal import LogConformal
from gpuproj.learned.features import (
    PAIR_FEATURES,
    FeatureSpec,
    PairFeatures,
    extra_columns,
    kernel_features,
)
from gpuproj.learned.learners import LEARNERS, Learner, make_learner
from gpuproj.learned.pairs import make_pairs, subsample, table_hash
from gpuproj.models import MODELS, get_model, model_class
from gpuproj.models.base import NotFittedError
from gpuproj.models.common import roofline_times
from gpuproj.profiles.table import ProfileTable

LEARNED = [m for m in MODELS if getattr(model_class(m), "trained", False)]


@pytest.fixture(scope="module")
def synth():
    return synthetic_table(n_configs=16)


# learners ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(LEARNERS))
def test_learner_state_predicts_like_sklearn(kind):
    """A learner rebuilt from its plain arrays predicts what the fitted scikit-learn model
    predicts (numpy path and, for trees, scikit-learn's compiled trees)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) * 2 + np.sin(np.nan_to_num(X[:, 1]))
    params = {"rf": {"n_estimators": 20}, "gb": {"max_iter": 20}}.get(kind, {})
    m = make_learner(kind, **params).fit(X, y)
    Xt = rng.normal(size=(200, 5))
    Xt[rng.random(Xt.shape) < 0.05] = np.nan
    ref = m.predict(Xt)
    meta, arrays = m.state()
    for compiled in (False, True):
        again = Learner.from_state(meta, arrays, compiled=compiled)
        np.testing.assert_allclose(again.predict(Xt), ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("loss", ["poisson", "gamma"])
def test_gradient_boosting_on_a_log_link_loss_predicts_the_same_rebuilt(loss):
    """Gradient boosting with a loss of log link (a positive target, as the report's
    milliseconds) sums its trees to the log of the prediction: rebuilt from its arrays, as a
    saved model is, it predicts what it predicted fitted, not that log."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = np.exp(X[:, 0]) + 0.1
    m = make_learner("gb", max_iter=20, loss=loss).fit(X, y)
    ref = m.predict(X[:50])
    meta, arrays = m.state()
    for compiled in (False, True):
        again = Learner.from_state(meta, arrays, compiled=compiled)
        np.testing.assert_allclose(again.predict(X[:50]), ref, rtol=1e-9)


def test_svr_and_knn_numpy_predictions_match_sklearn():
    """SVR and kNN predict with numpy from their exported state, fitted or loaded: the values
    are scikit-learn's, on the same standardised rows."""
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.svm import SVR

    rng = np.random.default_rng(2)
    X, Xt = rng.normal(size=(400, 4)), rng.normal(size=(150, 4))
    y = X[:, 0] * 2 + np.sin(X[:, 1])
    svr = make_learner("svr", max_samples=300).fit(X, y)
    idx = np.sort(np.random.default_rng(0).choice(400, 300, replace=False))
    Z = (X[idx] - X[idx].mean(axis=0)) / X[idx].std(axis=0)
    Zt = (Xt - X[idx].mean(axis=0)) / X[idx].std(axis=0)
    ref = SVR(kernel="rbf", C=10.0, epsilon=0.01, gamma="scale").fit(Z, y[idx]).predict(Zt)
    np.testing.assert_allclose(svr.predict(Xt), ref, rtol=1e-9, atol=1e-9)
    # kNN searches the subspace its training rows span (here 4 of 6 dimensions: two features
    # are combinations of others); the queries lie off it, as a new GPU's pairs do
    X = np.column_stack([X, X[:, 0] - X[:, 1], 2 * X[:, 2]])
    Xt = np.column_stack([Xt, rng.normal(size=(150, 2))])
    Xt[0] = X[7]  # a query on a training row: distance 0
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    Zt = (Xt - X.mean(axis=0)) / X.std(axis=0)
    for weights in ("uniform", "distance"):
        knn = make_learner("knn", weights=weights).fit(X, y)
        ref = KNeighborsRegressor(n_neighbors=5, weights=weights).fit(Z, y).predict(Zt)
        np.testing.assert_allclose(knn.predict(Xt), ref, rtol=1e-9, atol=1e-9)


def test_a_small_first_fit_runs_on_one_openmp_thread():
    # the limit must hold where scikit-learn's OpenMP runtime is not loaded yet (a fresh
    # process): threadpoolctl limits only the runtimes loaded when it is entered
    import os
    import subprocess
    import sys

    code = ("from gpuproj.learned.learners import _threads_for\n"
            "with _threads_for(18):\n"
            "    from sklearn.utils._openmp_helpers import _openmp_effective_n_threads\n"
            "    print(_openmp_effective_n_threads())\n")
    env = dict(os.environ, OMP_NUM_THREADS="4")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["1"]


def test_linear_learner_exact():
    X = np.array([[1.0, 0], [2, 1], [3, 5], [4, 2]])
    y = 3 * X[:, 0] - 2 * X[:, 1] + 1
    m = make_learner("linear").fit(X, y)
    assert m.predict(np.array([[10.0, 1.0]]))[0] == pytest.approx(29.0)


def test_learner_imputes_training_median():
    X = np.array([[1.0], [np.nan], [3.0], [5.0]])
    m = make_learner("linear").fit(X, np.array([1.0, 3.0, 3.0, 5.0]))
    assert m.median_[0] == 3.0  # the NaN became 3 before fitting


# conformal -----------------------------------------------------------------------------------
def test_conformal_order_statistics():
    """n = 19 scores -1.8..1.8 (step 0.2), coverage 0.9: lo = floor(20 x 0.05) = 1st,
    hi = ceil(20 x 0.95) = 19th order statistic."""
    r = np.round(np.linspace(-1.8, 1.8, 19), 10)
    c = LogConformal(0.9).fit(np.ones(19), np.exp(r))
    assert c.lo_ == pytest.approx(-1.8) and c.hi_ == pytest.approx(1.8)
    lo, hi = c.interval(np.array([2.0]))
    assert lo[0] == pytest.approx(2 * math.exp(-1.8)) and hi[0] == pytest.approx(2 * math.exp(1.8))
    # too few scores for the requested coverage: an unbounded side
    c = LogConformal(0.99).fit(np.ones(5), np.exp(np.arange(5.0)))
    assert c.hi_ == np.inf
    # no usable pair (a time of 0, NaN): an interval without bounds, not a made-up one
    c = LogConformal(0.9).fit(np.array([1.0, np.nan]), np.array([0.0, 1.0]))
    assert c.n_ == 0 and (c.lo_, c.hi_) == (-np.inf, np.inf)
    with pytest.raises(GpuprojError, match="before calibration"):
        LogConformal(0.9).interval(np.ones(1))
    with pytest.raises(GpuprojError, match="between 0 and 1"):
        LogConformal(90)


def test_distance_scaled_conformal_divides_by_the_extrapolation():
    """offset 1: scores r / (1 + |ln(pred / source)|). Five pairs predicted 1 s from sources of
    1, e, 1, e^2, 1 s with r = 0.5, -1.0, 0.2, 1.5, -0.1 give d = 1, 2, 1, 3, 1 and scores
    0.5, -0.5, 0.2, 0.5, -0.1; at 0.6 coverage lo = floor(6 x 0.2) = 1st (-0.5),
    hi = ceil(6 x 0.8) = 5th (0.5) order statistic."""
    r = np.array([0.5, -1.0, 0.2, 1.5, -0.1])
    src = np.exp([0.0, 1.0, 0.0, 2.0, 0.0])
    c = LogConformal(0.6, offset=1.0).fit(np.ones(5), np.exp(r), src)
    assert (c.lo_, c.hi_) == pytest.approx((-0.5, 0.5))
    # a prediction of 2 s from a 2 e^3 s source: d = 4, interval 2 exp(-+2)
    lo, hi = c.interval(np.array([2.0]), np.array([2.0 * math.exp(3.0)]))
    assert lo[0] == pytest.approx(2 * math.exp(-2.0)) and hi[0] == pytest.approx(2 * math.exp(2.0))
    # the state keeps the offset; one saved before it existed reads as plain log residuals
    assert LogConformal.from_state(c.state()).offset == 1.0
    old = {k: v for k, v in c.state().items() if k != "offset"}
    assert LogConformal.from_state(old).offset is None
    with pytest.raises(GpuprojError, match="source times"):
        c.interval(np.array([2.0]))


def test_conformal_reaches_coverage_on_exchangeable_data():
    rng = np.random.default_rng(0)
    cal = rng.lognormal(0.2, 0.5, 2000)
    test = rng.lognormal(0.2, 0.5, 20000)
    c = LogConformal(0.9).fit(np.ones(2000), cal)
    lo, hi = c.interval(np.ones(20000))
    assert abs(np.mean((test >= lo) & (test <= hi)) - 0.9) < 0.02


# pairs and features --------------------------------------------------------------------------
def test_make_pairs_and_exclude(synth):
    p = make_pairs(synth)
    assert len(p) == 48 * 12  # 48 configs x 4 x 3 ordered pairs
    assert (p["source"] != p["target"]).all()
    q = make_pairs(synth, exclude=["titan-v"])
    assert "titan-v" not in set(q["source"]) | set(q["target"])
    row = p.iloc[0]
    truth = synth.df[(synth.df["kernel"] == row["kernel"]) & (synth.df["config"] == row["config"])
                     & (synth.df["gpu"] == row["target"])]["time_s"].iloc[0]
    assert row["true_s"] == truth


def test_table_hash_ignores_row_order(synth):
    shuffled = ProfileTable(synth.df.sample(frac=1, random_state=1), (), "")
    assert table_hash(shuffled) == table_hash(synth)
    changed = synth.df.copy()
    changed.loc[0, "time_s"] *= 2
    assert table_hash(ProfileTable(changed)) != table_hash(synth)
    # nor where its files lie: the same rows read from two files elsewhere are the same data
    first = synth.df["gpu"] == synth.gpus[0]
    a, b = synth.subset(first), synth.subset(~first)
    a.origin, b.origin = "/here/a.csv", "/here/b.csv"
    moved = a.concat(b)
    a.origin, b.origin = "/there/a.csv", "/there/b.csv"
    assert "_path" in moved.df and table_hash(a.concat(b)) == table_hash(moved)
    assert table_hash(moved) == table_hash(ProfileTable(moved.df.drop(columns="_path")))


def test_a_table_with_other_counters_is_other_training_data(synth):
    # the hash covered the identity and time columns only: a second fit on a table with the
    # same times and other counters took the first table's features from the cache
    other = synth.df.assign(dram_bytes=synth.df["dram_bytes"] * 100)
    assert table_hash(ProfileTable(other)) != table_hash(synth)
    a = GradientBoosting(coverage=None).fit(synth)
    b = GradientBoosting(coverage=None).fit(ProfileTable(other))
    assert b.train_info_["hash"] != a.train_info_["hash"]
    rows, src, tgt = synth.on(synth.gpus[0]), synth.gpus[0], synth.gpus[1]
    assert not np.allclose(b.predict(rows, src, tgt).df["time_s"],
                           a.predict(rows, src, tgt).df["time_s"])


def test_subsample_deterministic():
    assert list(subsample(5, None, 0)) == [0, 1, 2, 3, 4]
    a, b = subsample(1000, 10, 3), subsample(1000, 10, 3)
    assert list(a) == list(b) and len(set(a)) == 10


def test_kernel_features_by_hand():
    df = pd.DataFrame({"flops": [2e9], "dram_bytes": [1e9], "thread_inst": [64.0],
                       "warp_inst": [4.0], "fp32_thread_inst": [16.0], "tile": [8.0]})
    t = ProfileTable.from_frame(df.assign(kernel="k", config="c", gpu="titan-v", time_s=1e-3))
    f = kernel_features(t.df, extras=extra_columns(t.df))
    assert f["ai_dram"][0] == pytest.approx(math.log10(2.0))
    assert f["log_flops"][0] == pytest.approx(math.log10(1 + 2e9))
    assert f["warp_efficiency"][0] == pytest.approx(64 / (4 * 32))
    # counted on a CDNA GPU, a warp instruction is a 64-wide wavefront's: the pair features
    # take the width of each pair's source
    pairs = pd.concat([t.df, t.df.assign(gpu="mi250")]).rename(columns={"gpu": "source"})
    pf = PairFeatures(pairs.assign(target="rtx-4070", true_s=1e-3), FeatureSpec())
    assert pf.column("warp_efficiency").tolist() == pytest.approx([64 / (4 * 32), 64 / (4 * 64)])
    assert f["mix_fp32"][0] == pytest.approx(0.25)
    assert f["x_tile"][0] == 8.0


def test_an_unknown_fma_count_is_unknown_not_none():
    # fma_share read a missing FMA count as no FMA (0), which no learner imputes
    df = pd.DataFrame({"kernel": "k", "config": ["a", "b", "c"], "gpu": "titan-v",
                       "time_s": 1e-3, "fp32_flops": 1e9,
                       "fp32_fma_thread_inst": [np.nan, 4e8, 0.0]})
    f = kernel_features(ProfileTable.from_frame(df).df)
    assert np.isnan(f["fma_share"][0]) and f["fma_share"][1:].tolist() == [0.8, 0.0]


def test_gpu_features_are_in_the_units_their_names_say():
    from gpuproj.learned.features import gpu_vector

    g = resolve("a100-sxm4-80gb")
    v = gpu_vector(g)
    assert v["meas_launch_overhead_s"] == g.measured("launch_overhead_s")  # seconds, not us
    assert v["meas_dram_bw_bytes_per_s"] == pytest.approx(
        math.log10(1 + g.measured("dram_bw_bytes_per_s")))


def test_a_target_without_a_guarded_descriptor_is_outside_the_training_range(synth):
    # an AMD GPU has no compute capability: read as inside, a model trained on NVIDIA GPUs
    # applied its full correction to it
    from gpuproj.learned.features import PairFeatures
    from gpuproj.learned.hybrids import ResidualHybrid
    from gpuproj.learned.physics import guard_weight

    model = ResidualHybrid(learner_params={"max_iter": 20}, coverage=None).fit(synth)
    src = synth.on("titan-v").df
    pairs = src.assign(source="titan-v", target="rx-6900-xt", src_row=np.arange(len(src)))
    data = PairFeatures(pairs, model.spec_)
    assert np.isnan(data.column("t_compute_capability")).all()
    assert (guard_weight(data, model.guard_) == 0).all()


def test_a_value_no_learner_can_hold_is_missing(synth):
    # a tuning parameter of 1e300 (a damaged table) became inf in the trees' float32 input
    # and stopped the fit with a ValueError traceback
    df = synth.df.copy()
    df.loc[df["config"] == df.at[3, "config"], "tile"] = 1e300
    pairs = make_pairs(ProfileTable(df))
    x = PairFeatures(pairs, FeatureSpec(extras=("tile",))).matrix(["x_tile"])[:, 0]
    damaged = (pairs["config"] == df.at[3, "config"]).to_numpy()
    assert np.isnan(x[damaged]).all() and np.isfinite(x[~damaged]).all()
    m = get_model("rf", learner_params={"n_estimators": 20}).fit(ProfileTable(df))
    d = m.predict(synth.on("titan-v"), "titan-v", ["rtx-4070"]).df
    assert len(d) == len(synth.on("titan-v")) and np.isfinite(d["time_s"]).all()


def test_roofline_and_ratio_features_from_catalog():
    s, t = resolve("titan-v"), resolve("rtx-4070")
    df = pd.DataFrame({"kernel": ["k"], "config": ["c"], "gpu": ["titan-v"], "time_s": [1e-3],
                       "fp32_flops": [1e12], "flops": [1e12], "dram_bytes": [1e9]})
    t_df = ProfileTable.from_frame(df).df
    r = roofline_times(t_df, t)
    assert r["compute"][0] == pytest.approx(1e12 / t.peak("fp32_fma_flops_per_s"))
    assert r["dram"][0] == pytest.approx(1e9 / t.peak("dram_bw_bytes_per_s"))
    assert r["roof"][0] == pytest.approx(max(r["compute"][0], r["dram"][0]))
    pairs = t_df.rename(columns={"gpu": "source"}).assign(target=t.id, true_s=1e-3)
    pf = PairFeatures(pairs, FeatureSpec())
    ratio = math.log10(t.peak("dram_bw_bytes_per_s") / s.peak("dram_bw_bytes_per_s"))
    assert pf.column("r_peak_dram_bw_bytes_per_s")[0] == pytest.approx(ratio, rel=1e-9)
    rs = roofline_times(t_df, s)
    assert pf.column("src_eff_roof")[0] == pytest.approx(rs["roof"][0] / 1e-3)
    assert pf.column("log_roof_ratio")[0] == pytest.approx(math.log10(r["roof"][0] / rs["roof"][0]))


def test_cache_fit_features_by_hand():
    """How a working set fits each GPU's caches: log10 of the set over the L2 size, and of one
    SM's set over the L1 the SM holds loads in (MI100: 16 KiB of its own; A100: 192 KiB of L1
    and shared memory less the least carve-out, none)."""
    df = pd.DataFrame({"kernel": ["k"], "config": ["c"], "gpu": ["mi100"], "time_s": [1e-5],
                       "l1_bytes": [1e9], "working_set_bytes": [64 * 1024],
                       "sm_working_set_bytes": [64 * 1024]})
    pairs = ProfileTable.from_frame(df).df.rename(columns={"gpu": "source"}).assign(
        target="a100-sxm4-80gb", true_s=1e-5)
    pf = PairFeatures(pairs, FeatureSpec())
    assert pf.column("l1_fit_s")[0] == pytest.approx(math.log10(4))
    assert pf.column("l1_fit_t")[0] == pytest.approx(math.log10(1 / 3))
    assert pf.column("l2_fit_s")[0] == pytest.approx(math.log10(64 / (8 * 1024)))
    assert pf.column("l2_fit_t")[0] == pytest.approx(math.log10(64 / (40 * 1024)))


def test_a_feature_no_training_row_has_is_left_out(synth):
    """No table but a cache sweep has one SM's working set: its L1 fit is then empty in
    training, and the model leaves it out rather than learn from a constant."""
    assert synth.df["sm_working_set_bytes"].isna().all()
    m = get_model("rf", learner_params={"n_estimators": 5}, coverage=None).fit(synth)
    assert "l1_fit_s" in m.spec_.drop and "l1_fit_s" not in m.features_
    assert "l2_fit_s" in m.features_


def test_the_report_set_up_takes_the_source_time_in_ms_as_its_only_pair_feature(synth):
    """The report's scripts' features end with T_src_ms, the source's measured time in ms;
    their set-up used to leave it out with the rest of the pair features."""
    m = get_model("rf", target="ms", pair_features="source_time",
                  learner_params={"n_estimators": 5}, coverage=None).fit(synth)
    pair = [c for c in m.features_ if c in PAIR_FEATURES or c == "source_time_ms"]
    assert pair == ["source_time_ms"]
    pairs = make_pairs(synth)
    x = PairFeatures(pairs, FeatureSpec(pair="source_time")).column("source_time_ms")
    np.testing.assert_allclose(x, pairs["time_s"].to_numpy() * 1e3)
    with pytest.raises(GpuprojError, match="pair_features must be True, False or "
                                           "'source_time'"):
        get_model("rf", pair_features="time")


# the model contract for every learned model --------------------------------------------------
@pytest.mark.parametrize("name", LEARNED)
def test_learned_models_follow_the_contract(name, synth):
    small = {"learner_params": {"max_iter": 20}}
    params = {"ensemble": {"cv_folds": 2, **small}, "residual": small, "gb": small,
              "bounded-efficiency": small, "rf": {"learner_params": {"n_estimators": 20}},
              "svr": {"learner_params": {"max_samples": 300}}}.get(name, {})
    model = get_model(name, coverage=0.8, **params)
    assert model.trained
    with pytest.raises(NotFittedError):
        model.predict(synth.on("titan-v"), "titan-v", ["rtx-4070"])
    train = ProfileTable(synth.df[synth.df["gpu"] != "rtx-4070"].reset_index(drop=True))
    assert model.fit(train) is model
    pred = model.predict(synth.on("titan-v"), "titan-v", ["rtx-4070", "rtx-2080-ti"])
    d = pred.df
    assert len(d) == 2 * len(synth.on("titan-v"))
    assert np.isfinite(d["time_s"]).all() and (d["time_s"] > 0).all()
    assert (d["low_s"] <= d["time_s"] * (1 + 1e-12)).all()
    assert (d["high_s"] >= d["time_s"] * (1 - 1e-12)).all()
    notes = " ".join(pred.assumptions["rtx-4070"])
    assert "not in the training data" in notes and "calibrated on the out-of-fold errors" in notes
    # out of fold: every (kernel, config) of the three training GPUs' is validated once per
    # held-out GPU that its fold count reaches (three of three GPUs; the ensemble's 2 folds,
    # two), each time as the target of the two other GPUs
    configs = train.df[["kernel", "config"]].drop_duplicates()
    assert len(configs) == 3 * 16 and len(train.gpus) == 3
    held_out = min(model.cv_folds or 3, 3)  # None: every GPU
    assert held_out == (2 if name == "ensemble" else 3)
    assert model.cv_metrics_["n"] == len(configs) * 2 * held_out
    assert model.cv_metrics_["n_missing"] == len(configs) * 2 * (3 - held_out)


def test_residual_hybrid_learns_the_correction(synth):
    """The generating model has a compute-capability-dependent efficiency for 'gemm' that no
    analytical method knows; the residual hybrid, trained without rtx-4070, must beat its own
    physics base on rtx-4070."""
    from gpuproj.learned.hybrids import ResidualHybrid
    from gpuproj.learned.physics import physics_chain

    train = ProfileTable(synth.df[synth.df["gpu"] != "rtx-4070"].reset_index(drop=True))
    model = ResidualHybrid(learner_params={"max_iter": 60}).fit(train)
    test = make_pairs(synth, targets=["rtx-4070"])
    pred = model._predict_pairs(test)
    from gpuproj.learned.features import PairFeatures

    base, _ = physics_chain(PairFeatures(test, model.spec_), model.chain_)
    true = test["true_s"].to_numpy()
    def err(p):
        return np.mean(np.abs(p - true) / true)

    assert err(pred) < err(base)


def test_efficiency_hybrid_stays_bounded(synth):
    from gpuproj.learned.features import PairFeatures
    from gpuproj.learned.hybrids import EfficiencyHybrid

    model = EfficiencyHybrid(learner_params={"max_iter": 30}).fit(synth)
    test = make_pairs(synth)
    pf = PairFeatures(test, model.spec_)
    t = model._predict_pairs(test)
    # never faster than the target roofline: efficiency <= 1
    assert (t >= pf.roof["t_roof"] * (1 - 1e-12)).all()


def test_ensemble_weights_sum_to_one(synth):
    from gpuproj.learned.hybrids import Ensemble

    m = Ensemble(cv_folds=2, learner_params={"max_iter": 20},
                 members=("physics", "residual", "bounded-efficiency", "gb", "lasso")).fit(synth)
    for w in m.weights_.values():
        assert sum(w) == pytest.approx(1.0) and min(w) >= 0
    assert set(m.known_kernels_) == {"stream", "gemm", "stencil"}
    # each member is its own kind: the ensemble's learner settings go to the hybrids only
    kinds = {name: mm.learner_.kind for name, mm in zip(m.members, m.members_)
             if mm.learner_ is not None}
    assert kinds == {"residual": "gb", "bounded-efficiency": "gb", "gb": "gb", "lasso": "lasso"}
    assert m.members_[m.members.index("lasso")].learner_params == {}
    assert m.members_[m.members.index("residual")].learner_params == {"max_iter": 20}


def test_ensemble_calibration_predictions_do_not_see_their_own_group(synth):
    """The out-of-fold predictions the ensemble calibrates on combine each held-out group's
    member predictions with weights fitted on the other groups: changing one group's measured
    times leaves that group's predictions as they were."""
    from gpuproj.learned.hybrids import Ensemble
    from gpuproj.learned.models import training_data

    m = Ensemble(cv_folds=3, learner_params={"max_iter": 20})
    data = training_data(synth, m.max_pairs, m.random_state, m._spec(synth))
    m._fit_data(data)
    before, _ = m.out_of_fold(data)
    fold = m._fold_of(data)
    k = fold.max()
    assert k >= 1 and np.isfinite(before[fold == k]).all()
    true = data.pairs["true_s"].to_numpy(float).copy()
    true[fold == k] *= np.random.default_rng(0).uniform(0.2, 5.0, (fold == k).sum())
    data.pairs = data.pairs.assign(true_s=true)
    after, _ = m.out_of_fold(data)
    np.testing.assert_allclose(after[fold == k], before[fold == k], rtol=1e-12)
    assert not np.allclose(after[fold != k], before[fold != k], rtol=1e-6, equal_nan=True)


def test_ensemble_calibration_weights_do_not_see_the_held_out_gpus_own_times(synth):
    """Leave-one-GPU-out within the training table: the pairs predicted from the held-out GPU's
    own measured times (it as the source) belong to other groups, but no copy trained without
    that GPU sees them, and the weights its group's predictions are combined with must not
    either: changing the members' predictions of those pairs leaves the group's as they were."""
    from gpuproj.learned.hybrids import Ensemble
    from gpuproj.learned.models import training_data

    m = Ensemble(learner_params={"max_iter": 20})
    data = training_data(synth, m.max_pairs, m.random_state, m._spec(synth))
    m._fit_data(data)
    before, _ = m.out_of_fold(data)
    fold = m._fold_of(data)
    g = "rtx-4070"
    va = (data.pairs["target"] == g).to_numpy()
    from_g = (data.pairs["source"] == g).to_numpy()
    assert np.isfinite(before[va]).all() and (fold[from_g] >= 0).all()
    rng = np.random.default_rng(0)
    m.oof_members_[from_g] *= rng.uniform(0.2, 5.0, m.oof_members_[from_g].shape)
    after, _ = m.out_of_fold(data)
    np.testing.assert_allclose(after[va], before[va], rtol=1e-12)
    assert not np.allclose(after[~va], before[~va], rtol=1e-6, equal_nan=True)


def test_conformal_wrapper_around_analytical(synth):
    from gpuproj.learned.models import Conformal

    m = Conformal("roofline", coverage=0.8).fit(synth)
    d = m.predict(synth.on("titan-v"), "titan-v", ["rtx-4070"]).df
    base = get_model("roofline").predict(synth.on("titan-v"), "titan-v", ["rtx-4070"]).df
    np.testing.assert_allclose(d["time_s"], base["time_s"])
    assert (d["high_s"] > d["low_s"]).all()
    assert m.name == "roofline"
    # the interval is scaled by each prediction's distance from its source time
    src = synth.on("titan-v").df["time_s"].to_numpy(float)
    dist = m.conformal_.offset + np.abs(np.log(d["time_s"].to_numpy(float) / src))
    np.testing.assert_allclose(d["high_s"], d["time_s"] * np.exp(max(m.conformal_.hi_, 0) * dist))
    np.testing.assert_allclose(d["low_s"], d["time_s"] * np.exp(min(m.conformal_.lo_, 0) * dist))
    assert m.conformal_.lo_ < 0 < m.conformal_.hi_  # both ends move: neither is the point


def test_interval_outside_the_training_range_leans_on_the_physics_band(synth):
    """A target unlike the training GPUs (rtx-4070: FP32 peak and compute capability above
    those of the three training GPUs) gets a guard weight g in (0, 1): the interval's
    bounds widen to g x the conformal log-bounds + (1 - g) x those of the chain method's error
    band around its projection p, p exp(z d), d = 1 + |ln(p / s)| (hand-computed from the given
    quantiles), where that is wider. Inside the range the conformal interval stays."""
    from gpuproj.learned.features import PairFeatures
    from gpuproj.learned.hybrids import ResidualHybrid
    from gpuproj.learned.physics import guard_weight, physics_chain

    bands = {m: {"cross_arch": {"lo": -0.4, "hi": 0.7}, "same_arch": {"lo": -0.1, "hi": 0.1}}
             for m in ("hierarchical-ext", "hierarchical", "quantitative", "efficiency",
                       "roofline", "bandwidth", "compute")}
    train = ProfileTable(synth.df[synth.df["gpu"] != "rtx-4070"].reset_index(drop=True))
    model = ResidualHybrid(learner_params={"max_iter": 20}, coverage=0.8,
                           physics_bands=bands).fit(train)
    assert set(model.outside_bands_) == set(model.chain_)
    src = synth.on("titan-v")
    s = src.df["time_s"].to_numpy()
    pairs = src.df.assign(source="titan-v", target="rtx-4070", src_row=np.arange(len(s)))
    g = guard_weight(PairFeatures(pairs, model.spec_), model.guard_)
    assert ((g > 0) & (g < 1)).all()
    d = model.predict(src, "titan-v", ["rtx-4070"]).df
    t = d["time_s"].to_numpy()
    lo_c, hi_c = model.conformal_.interval(t, s)
    # the band lies around the physics chain's projection
    base, _ = physics_chain(PairFeatures(pairs, model.spec_), model.chain_)
    dist = 1 + np.abs(np.log(base / s))
    b_lo, b_hi = base * np.exp(-0.4 * dist), base * np.exp(0.7 * dist)
    lean_lo = t * np.exp(g * np.log(lo_c / t) + (1 - g) * np.log(b_lo / t))
    lean_hi = t * np.exp(g * np.log(hi_c / t) + (1 - g) * np.log(b_hi / t))
    np.testing.assert_allclose(d["low_s"], np.minimum(lo_c, lean_lo), rtol=1e-9)
    np.testing.assert_allclose(d["high_s"], np.maximum(hi_c, lean_hi), rtol=1e-9)
    assert (lean_hi > hi_c).any()  # the band widens some intervals here
    # inside the range: the split-conformal interval, untouched by the bands
    inside = model.predict(src, "titan-v", ["rtx-2080-ti"]).df
    lo_c, hi_c = model.conformal_.interval(inside["time_s"].to_numpy(), s)
    np.testing.assert_allclose(inside["low_s"], lo_c, rtol=1e-12)
    np.testing.assert_allclose(inside["high_s"], hi_c, rtol=1e-12)


def test_ensemble_validates_a_held_out_kernel_as_an_unseen_one(synth, monkeypatch):
    """In a kernel split a held-out kernel is new to the model: its pairs take the weights of
    their source bound. Its out-of-fold pairs, which the intervals are calibrated on, took the
    '*' weights (its name, known to the whole training set, has none in the other folds)."""
    from gpuproj.learned.hybrids import Ensemble

    classes, during = [], []
    real_oof, real_combine = Ensemble.out_of_fold, Ensemble._combine

    def out_of_fold(self, data):
        during.append(True)
        try:
            return real_oof(self, data)
        finally:
            during.pop()

    def combine(self, preds, cls, weights=None):
        if during:
            classes.append(set(cls))
        return real_combine(self, preds, cls, weights)

    monkeypatch.setattr(Ensemble, "out_of_fold", out_of_fold)
    monkeypatch.setattr(Ensemble, "_combine", combine)
    get_model("ensemble", cv_groups="kernel", cv_folds=2, coverage=0.8,
              learner_params={"max_iter": 20}).fit(synth)
    assert classes and all(c <= {"bound:compute", "bound:memory", "bound:unknown"}
                           for c in classes)


def test_a_changed_catalog_is_other_training_data(synth, tmp_path, monkeypatch):
    """The cached training features come from the catalog's GPUs: a fit after
    $GPUPROJ_GPU_PATH changed one of the table's GPUs sees the changed GPU."""
    from gpuproj.learned.models import training_data

    m = GradientBoosting(coverage=None)
    col = "t_val_sm_count"
    before = training_data(synth, m.max_pairs, m.random_state, m._spec(synth)).column(col)
    raw = (resolve("titan-v").path).read_text()
    assert "  sm_count:\n    value: 80\n" in raw
    (tmp_path / "titan-v.yaml").write_text(raw.replace("  sm_count:\n    value: 80\n",
                                                       "  sm_count:\n    value: 800\n"))
    monkeypatch.setenv("GPUPROJ_GPU_PATH", str(tmp_path))
    after = training_data(synth, m.max_pairs, m.random_state, m._spec(synth)).column(col)
    on_titan_v = (training_data(synth, m.max_pairs, m.random_state, m._spec(synth))
                  .pairs["target"] == "titan-v").to_numpy()
    assert on_titan_v.any()
    assert (before[on_titan_v] == 80).all() and (after[on_titan_v] == 800).all()
    np.testing.assert_array_equal(after[~on_titan_v], before[~on_titan_v])
