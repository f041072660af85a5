"""gpuproj.evaluate: what Evaluation's summaries, GPU choice and metrics frame report."""

import numpy as np
import pandas as pd
import pytest

from gpuproj.evaluate import (
    FRAME_COLUMNS,
    MISSING_GROUP,
    TOTAL_KERNEL,
    UNITS,
    Evaluation,
    metrics,
)


def pairs(rows, **extra):
    """An Evaluation of ``rows`` (method, kernel, source, target, time_s, true_s), without
    intervals or bands."""
    d = pd.DataFrame(rows, columns=["method", "kernel", "source", "target", "time_s",
                                    "true_s"]).assign(config="c", **extra)
    return Evaluation(d.assign(source_time_s=5e-3, low_s=d["time_s"], high_s=d["time_s"],
                               band_low_s=np.nan, band_high_s=np.nan), [])


def test_summary_by_a_column_keeps_the_pairs_without_a_value():
    # k2 has no family: it was dropped, and the families added up to 2 of the 3 pairs
    ev = pairs([("bandwidth", k, "s", "t", 1.0, true) for k, true in
                (("k1", 1.0), ("k2", 2.0), ("k3", 1.0))], family=["a", None, "a"])
    by = ev.summary("family")["bandwidth"]
    assert list(by) == ["a", MISSING_GROUP]
    assert by["a"]["n"] == 2 and by[MISSING_GROUP]["n"] == 1
    assert by[MISSING_GROUP]["mape"] == 50.0
    assert sum(v["n"] for v in by.values()) == ev.summary()["bandwidth"]["n"]
    # a column with a value on every pair has no such group
    assert MISSING_GROUP not in ev.summary("kernel")["bandwidth"]


def test_gpu_choice_shares_a_predicted_tie_whatever_the_row_order():
    # t1 and t2 predicted alike and fastest, t2 measured fastest (t1 takes 2x): the choice was
    # t1 or t2 by row order (hit 0 or 1, loss 100 % or 0); a pick between them is half a hit
    # and half the loss, as gpu_choice(by="pair") counts the tie half wrong
    rows = [("bandwidth", "k", "s", t, p, true) for t, p, true in
            (("t1", 1e-3, 2e-3), ("t2", 1e-3, 1e-3), ("t3", 3e-3, 4e-3))]
    got = [pairs(r).gpu_choice().loc["bandwidth"] for r in (rows, rows[::-1])]
    for c in got:
        assert c["top1_hit"] == pytest.approx(0.5)
        assert c["top1_loss_pct"] == pytest.approx(50.0)
        assert c["top1_loss_max_pct"] == pytest.approx(50.0)
    assert pairs(rows).gpu_choice(by="pair").loc[("bandwidth", "t1", "t2"), "wrong"] == 0.5
    # times a ratio of two equal bandwidths leaves a few bits apart are one time too
    near = [r[:4] + (r[4] * (1 + 1e-12) if r[3] == "t2" else r[4], r[5]) for r in rows]
    assert pairs(near).gpu_choice().loc["bandwidth", "top1_hit"] == pytest.approx(0.5)


def test_ranking_still_breaks_a_tie_by_the_source_time():
    # configurations a floor predicts alike: the one that ran fastest on the source is the
    # autotuner's pick, not a share of the tie
    d = pd.DataFrame({"method": "m", "kernel": "k", "config": list("abc"), "source": "s",
                      "target": "t", "time_s": 1.0, "source_time_s": [3.0, 1.0, 2.0],
                      "true_s": [1.0, 2.0, 3.0]})
    r = Evaluation(d.assign(low_s=1.0, high_s=1.0, band_low_s=np.nan, band_high_s=np.nan),
                   []).ranking()
    assert r.loc["m", "top1_hit"] == 0 and r.loc["m", "top1_loss_pct"] == 100.0


def test_frame_columns_say_their_units():
    # mape in % beside within_10 as a fraction, both without a unit in the name
    ev = pairs([("bandwidth", "k", "s", "t", 1.1, 1.0), ("bandwidth", "k2", "s", "t", 2.0, 1.0)])
    f = ev.frame()
    assert list(f.columns) == ["pairs", "mape_pct", "median_ape_pct", "gmre_pct",
                               "median_ratio", "within_10_pct", "within_25_pct",
                               "within_50_pct", "coverage_pct", "interval_width_ratio",
                               "band_coverage_pct", "band_width_ratio", "band_pairs"]
    assert all(c.endswith(("_pct", "_ratio", "pairs")) for c in f.columns)
    row, s = f.loc["bandwidth"], ev.summary()["bandwidth"]
    assert row["mape_pct"] == pytest.approx(s["mape"]) == pytest.approx(55.0)
    assert row["within_10_pct"] == pytest.approx(100 * s["within_10"]) == pytest.approx(50.0)
    assert row["pairs"] == 2 and np.isnan(row["coverage_pct"])  # no interval: no coverage
    # every metric but the bootstrap interval has its column
    assert set(FRAME_COLUMNS) == set(metrics([], [])) - {"coverage_ci"} <= set(UNITS)
    assert "within_10_pct: % of pairs within 10 %" in ev._repr_html_()


def test_totals_add_each_gpu_pairs_configurations_and_their_bounds():
    # s -> t: k1 predicted 1 for 2 (-50 %), k2 3 for 2 (+50 %): each 50 % off, the total 4 for
    # 4 exact. t -> s: 2 for 1 and 1 for 1, total 3 for 2 (+50 %). Bands: s -> t both have one,
    # [0.5 + 1.5, 1.5 + 4.5] = [2, 6] holds 4; t -> s k1 has none, so its total has none
    d = pd.DataFrame({
        "method": "m", "kernel": ["k1", "k2", "k1", "k2"], "config": "c",
        "source": ["s", "s", "t", "t"], "target": ["t", "t", "s", "s"],
        "source_time_s": [1.0, 2.0, 2.0, 2.0], "time_s": [1.0, 3.0, 2.0, 1.0],
        "true_s": [2.0, 2.0, 1.0, 1.0], "low_s": [1.0, 3.0, 2.0, 1.0],
        "high_s": [1.0, 3.0, 2.0, 1.0], "band_low_s": [0.5, 1.5, np.nan, 0.5],
        "band_high_s": [1.5, 4.5, np.nan, 1.5]})
    ev = Evaluation(d, [])
    assert ev.summary()["m"]["mape"] == pytest.approx(50.0)
    t = ev.totals()
    got = t.pairs.set_index(["source", "target"])
    assert got.loc[("s", "t"), ["source_time_s", "time_s", "true_s"]].tolist() == [3, 4, 4]
    assert got.loc[("s", "t"), ["band_low_s", "band_high_s"]].tolist() == [2, 6]
    assert got.loc[("t", "s"), "time_s"] == 3 and np.isnan(got.loc[("t", "s"), "band_low_s"])
    assert (got["config"] == "2").all() and (got["kernel"] == TOTAL_KERNEL).all()
    s = t.summary()["m"]
    assert (s["n"], s["mape"], s["band_n"], s["band_coverage"]) == (2, 25.0, 1, 1.0)
    # per kernel: each kernel's configurations (here one) on each GPU pair
    k = ev.totals("kernel")
    assert len(k.pairs) == 4 and k.summary()["m"]["mape"] == pytest.approx(50.0)
    # a pair the method could not predict leaves its total out: a total of fewer is none
    part = Evaluation(d.assign(time_s=[1.0, np.nan, 2.0, 1.0]), [])
    assert part.totals().pairs[["source", "target"]].values.tolist() == [["t", "s"]]
    with pytest.raises(ValueError, match="totals"):
        ev.totals("nope")
