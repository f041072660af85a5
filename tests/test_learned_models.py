"""Point calibration and the physics base of the learned models (hand-computed cases)."""

import numpy as np
import pytest


def test_point_calibration_keeps_a_shift_only_if_every_group_gains():
    from gpuproj.learned.models import point_calibration

    true = np.full(40, 1e-3)
    groups = np.repeat([0, 1], 20)
    # both held-out groups predicted e^0.2 too slow: the shift -0.2 helps each
    both = point_calibration(true * np.exp(0.2), None, true, groups)
    assert both["lam"] == 1.0 and both["delta"] == pytest.approx(-0.2)
    # only group 0 too slow: -0.2 lowers the pooled score (mean + median APE: 0.221 -> 0.181,
    # hand-computed) but makes group 1 worse, so no shift is kept; without groups it is
    one = true * np.exp(np.where(groups == 0, 0.2, 0.0))
    assert point_calibration(one, None, true, groups)["delta"] == 0.0
    assert point_calibration(one, None, true)["delta"] == pytest.approx(-0.2)


def _pairs_with_physics(projections: dict, true):
    """PairFeatures over four GPUs (every ordered pair, one kernel) whose analytical projections
    are the given arrays, one per pair."""
    import pandas as pd

    from gpuproj.learned.features import FeatureSpec, PairFeatures

    gpus = ["a", "b", "c", "d"]
    pairs = pd.DataFrame([(s, t) for s in gpus for t in gpus if s != t],
                         columns=["source", "target"])
    pairs = pairs.assign(kernel="k", config="x", time_s=1.0, true_s=true)
    data = PairFeatures(pairs, FeatureSpec())
    data._phys.update(projections)
    return data


def test_physics_geomean_is_the_geometric_mean_of_its_members():
    from gpuproj.learned.features import geomean_members, geomean_name

    true = np.ones(12)
    a = np.full(12, 2.0)
    b = np.full(12, 8.0)
    b[3] = np.nan
    data = _pairs_with_physics({"A": a, "B": b}, true)
    name = geomean_name(["A", "B"])
    assert name == "geomean(A,B)" and geomean_members(name) == ["A", "B"]
    assert geomean_members("bandwidth") == []
    got = data.physics(name)
    np.testing.assert_allclose(np.delete(got, 3), 4.0)  # sqrt(2 x 8)
    assert np.isnan(got[3])  # a member that cannot predict the pair


def test_rank_physics_averages_two_methods_only_where_that_validates():
    from gpuproj.learned.physics import rank_physics

    rng = np.random.default_rng(0)
    true = np.exp(rng.normal(0, 1, 12))
    # A is x1.3 too slow and B x1.3 too fast on every pair (a tie, kept in candidate order):
    # their geometric mean is exact on every held-out GPU
    data = _pairs_with_physics({"A": true * 1.3, "B": true / 1.3}, true)
    assert rank_physics(data, candidates=("A", "B")) == ["geomean(A,B)", "A", "B"]
    # A exact, B twice too slow: the mean is worse than A on every held-out GPU
    data = _pairs_with_physics({"A": true.copy(), "B": 2 * true}, true)
    assert rank_physics(data, candidates=("A", "B")) == ["A", "B"]


def test_guard_range_weight_and_blend_by_hand():
    """The range guard (physics.guard_fit, guard_weight) and the blend it feeds, on descriptor
    columns given by hand (log10 units, as the GPU columns are): trust 1 inside every
    training range, falling linearly to 0 one range (at least its floor) outside, the worst
    descriptor deciding; the prediction base^(1 - g) x t^g."""
    from gpuproj.learned.physics import GUARD, blend, guard_fit, guard_weight

    nan = np.nan
    data = _pairs_with_physics({}, np.ones(12))
    fp32, sms = "t_peak_fp32_fma_flops_per_s", "r_val_sm_count"
    cols = {k: np.full(12, nan) for k in GUARD}  # a descriptor no pair has is not guarded
    # training: FP32 peaks 10^13 .. 10^14 (range 1), SM-count ratios 1.90 .. 1.92 (range
    # 0.02, raised to its floor 0.1)
    cols[fp32] = np.array([13.0, 13.5, 14.0] * 4)
    cols[sms] = np.array([1.9, 1.92, 1.91] * 4)
    data._cols.update(cols)
    guard = guard_fit(data)
    assert guard == {fp32: [13.0, 14.0, 1.0], sms: [1.9, 1.92, GUARD[sms]]}
    assert GUARD[sms] == 0.1

    # new pairs: distance outside / range, the larger of the two, 1 - that clipped to [0, 1]
    #   FP32 13.5 inside, SMs 1.91 inside                   -> 1
    #   FP32 14.25: 0.25 / 1 above                          -> 0.75
    #   FP32 12.5: 0.5 / 1 below                            -> 0.5
    #   FP32 15.5: 1.5 / 1 above                            -> 0 (clipped)
    #   FP32 missing (an AMD GPU's compute capability)      -> 0: counted as outside
    #   FP32 inside, SMs 1.97: 0.05 / 0.1 (the floor)       -> 0.5
    #   FP32 14.25 (0.25) and SMs 1.95 (0.03 / 0.1 = 0.3)   -> 1 - 0.3 = 0.7: the worst one
    new = _pairs_with_physics({}, np.ones(12))
    new._cols.update({k: np.full(12, nan) for k in GUARD})
    new._cols[fp32] = np.array([13.5, 14.25, 12.5, 15.5, nan, 13.5, 14.25] + [13.5] * 5)
    new._cols[sms] = np.array([1.91] * 5 + [1.97, 1.95] + [1.91] * 5)
    g = guard_weight(new, guard)
    np.testing.assert_allclose(g[:7], [1.0, 0.75, 0.5, 0.0, 0.0, 0.5, 0.7], atol=1e-12)
    assert (guard_weight(new, None) == 1).all()  # no guard fitted: full trust

    # blend: base^(1 - g) t^g. 1^0.5 x 4^0.5 = 2; g = 0 keeps the base, g = 1 takes t; a
    # learned time that is no positive number falls back to the base
    got = blend(np.array([1.0, 1.0, 1.0, 2.0, 2.0, 8.0]),
                np.array([4.0, 4.0, 4.0, 0.0, nan, 2.0]),
                np.array([0.5, 0.0, 1.0, 0.5, 0.5, 0.25]))
    # last: 8^0.75 x 2^0.25 = 2^2.25 x 2^0.25 = 2^2.5
    np.testing.assert_allclose(got, [2.0, 1.0, 4.0, 2.0, 2.0, 2 ** 2.5], rtol=1e-12)


def test_the_physics_choice_holds_out_the_models_own_groups(monkeypatch):
    """Averaging the best two methods is validated on the GPUs the model itself holds out:
    its ``cv_folds`` and ``random_state``, not a fixed 8 and 0."""
    from learned_helpers import synthetic_table

    from gpuproj.learned import physics
    from gpuproj.learned.hybrids import ResidualHybrid

    seen = []

    def recording(pairs, groups, folds, seed):
        seen.append((groups, folds, seed))
        return iter(())

    monkeypatch.setattr(physics, "cv_masks", recording)
    ResidualHybrid(coverage=None, point_calibration=False, cv_folds=3, random_state=7,
                   learner_params={"max_iter": 5}).fit(synthetic_table(n_configs=4))
    assert seen == [("gpu", 3, 7)]


def test_outside_band_of_a_geomean_is_the_envelope_of_its_members():
    from gpuproj.learned.hybrids import ResidualHybrid

    bands = {"A": {"cross_arch": {"lo": -0.4, "hi": 0.3}, "same_arch": {"lo": -0.1, "hi": 0.1}},
             "B": {"cross_arch": {"lo": -0.2, "hi": 0.5}}}
    model = ResidualHybrid(physics_bands=bands)
    model.chain_ = ["geomean(A,B)", "A", "B"]
    model.guard_ = {"on": True}  # any guard: the chain is the guard chain
    got = model._outside_bands()
    assert got["geomean(A,B)"] == {"cross_arch": [-0.4, 0.5]}  # cells both members have
    assert got["A"]["same_arch"] == [-0.1, 0.1]
    # a chain method without a measured band gets the envelope of every method's band, per
    # cell: how it errs where the guard hands a GPU back to it is not known
    model.chain_ = ["C", "A"]
    got = model._outside_bands()
    assert got["C"] == {"cross_arch": [-0.4, 0.5], "same_arch": [-0.1, 0.1]}
    assert got["A"] == {"cross_arch": [-0.4, 0.3], "same_arch": [-0.1, 0.1]}


def test_a_profile_without_the_columns_the_model_learned_from_is_said():
    # a model trained on tuning parameters (KernelTuner's tile sizes) predicted a Rodinia
    # profile, which has none, without a word
    from pathlib import Path

    from gpuproj.learned import RandomForest
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    root = Path(__file__).resolve().parents[1]
    model = RandomForest(max_pairs=200, coverage=None)
    model.fit(load(root / "tests" / "data" / "kerneltuner-4gpus-convolution.csv"))
    lines = predict(load(root / "examples" / "rodinia-p100-nvprof.csv"), targets="h200",
                    models=[model]).assumption_lines()
    said = [ln for ln in lines if ln.startswith("columns the model learned from are not in")]
    assert len(said) == 1 and "tile_size_x" in said[0]


def test_a_profile_without_the_counters_the_model_learned_from_is_said():
    # a model trained on nvprof counters predicted a profile of times alone from its training
    # medians, without a word
    from pathlib import Path

    from gpuproj.learned import Ensemble
    from gpuproj.predict import predict
    from gpuproj.profiles import load
    from gpuproj.profiles.table import ProfileTable

    table = load(Path(__file__).resolve().parent / "data" / "amaris-9gpus-bpnn_adjust_weights.csv")
    model = Ensemble(max_pairs=200, coverage=None, cv_folds=2).fit(table)
    # the counters reach the ensemble through its members: it has no features of its own
    assert model.features_ == [] and "log_dram_bytes" in model._all_features()
    one = table.df[table.df["gpu"] == table.df["gpu"].iloc[0]]

    def said(df):
        lines = predict(ProfileTable.from_frame(df), targets="h200",
                        models=[model]).assumption_lines()
        return [ln for ln in lines if ln.startswith("columns the model learned from are not in")]

    assert said(one) == []
    lines = said(one.drop(columns=["dram_bytes", "dram_read_bytes"]))
    assert len(lines) == 1 and "dram_bytes, dram_read_bytes" in lines[0]


def test_scoring_a_model_on_its_own_training_table_warns():
    # a notebook's evaluate(T, methods=[model fitted on T]) reported training errors (3 %
    # MAPE against the bandwidth ratio's 46 %) as if they were a new GPU's
    import warnings
    from pathlib import Path

    import pytest

    from gpuproj.errors import GpuprojWarning
    from gpuproj.evaluate import evaluate
    from gpuproj.learned import RandomForest
    from gpuproj.profiles import load

    data = Path(__file__).resolve().parent / "data"
    train = load(data / "kerneltuner-4gpus-convolution.csv")
    model = RandomForest(max_pairs=200, coverage=None).fit(train)
    with pytest.warns(GpuprojWarning, match="rf was trained on this table"):
        evaluate(train, methods=[model])
    other = load(data / "kerneltuner-4gpus-gemm_clblast_4096.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error", GpuprojWarning)
        evaluate(other, methods=[model])


def test_a_hybrid_predicts_the_rows_after_a_skipped_one():
    # the rows handed to the physics kept the labels of the profile's rows, and the model
    # counted its rows by them: a row without a time before others raised IndexError
    from pathlib import Path

    from gpuproj.learned import ResidualHybrid
    from gpuproj.profiles import load
    from gpuproj.profiles.table import ProfileTable

    table = load(Path(__file__).resolve().parent / "data" / "neusight-5gpus-conv.csv")
    model = ResidualHybrid(max_pairs=200, coverage=None).fit(table)
    src = table.gpus[0]
    rows = table.df[table.df["gpu"] == src].reset_index(drop=True)
    targets = [g for g in table.gpus if g != src][:2]
    whole = model.predict(ProfileTable(rows, (), ""), src, targets).df
    gap = rows.copy()
    gap.loc[0, "time_s"] = np.nan
    got = model.predict(ProfileTable(gap, (), ""), src, targets).df
    # every other row predicted as without the gap, and under its own label
    assert sorted(set(got["row"])) == list(range(1, len(rows)))
    want = whole[whole["row"] != 0].reset_index(drop=True)
    assert np.allclose(got["time_s"].to_numpy(), want["time_s"].to_numpy(), rtol=1e-12)


def test_an_interval_calibrated_on_nine_gpus_does_not_widen_outside_the_range():
    """With K held-out GPUs the 90 % quantile over GPUs is finite from K = 9 on (ceil((K + 1)
    x 0.9) <= K): the interval then needs no band outside the training range. A model of
    ten GPUs holds out all ten; capped at 8 (``cv_folds``), or at 95 %, the band stays."""
    from learned_helpers import synthetic_table

    from gpuproj.learned.hybrids import ResidualHybrid

    ten = ("titan-v", "rtx-2080-ti", "rtx-4070", "gtx-titan-x", "tesla-t4", "v100-pcie-16gb",
           "a100-pcie-40gb", "rtx-3090", "gtx-1080-ti", "l4")
    table = synthetic_table(n_configs=3, kernels=("stream", "gemm"), gpus=ten)
    m = ResidualHybrid(learner_params={"max_iter": 5}).fit(table)
    assert m.outside_bands_ == {} and m.conformal_ is not None
    assert m.clone(cv_folds=8).fit(table).outside_bands_ != {}
    assert m.clone(coverage=0.95).fit(table).outside_bands_ != {}  # needs K >= 19


def test_a_prediction_says_where_its_interval_widened_outside_the_training_range():
    from learned_helpers import synthetic_table

    from gpuproj.learned.hybrids import ResidualHybrid

    synth = synthetic_table(n_configs=10)
    m = ResidualHybrid(learner_params={"max_iter": 20}).fit(synth)
    p = m.predict(synth.on("titan-v"), "titan-v", ["rtx-4070", "h100-sxm5-80gb"])
    inside, outside = (next(a for a in p.assumptions[g] if a.startswith("interval: "))
                       for g in ("rtx-4070", "h100-sxm5-80gb"))
    assert "widened" not in inside  # a training GPU
    n = len(synth.on("titan-v"))
    assert (f"; for {n} row(s) outside the training GPUs' range widened towards the error band "
            "of the analytical methods the prediction gives way to there (") in outside
    assert ", ".join(m._guard_chain()) in outside
