"""Measured error bands (models.bands): the quantiles on hand-made residuals, the shipped file,
and the band columns of predict, evaluate and the CLI."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import table

from gpuproj.catalog import resolve
from gpuproj.cli.main import cli
from gpuproj.evaluate import evaluate, metrics
from gpuproj.models import get_model
from gpuproj.models.bands import (
    BANDS_FILE,
    BUCKETS,
    CELLS,
    OFFSET,
    band_of,
    band_quantiles,
    cell,
    fit_bands,
    held_out,
    load_bands,
    speedup_bucket,
    weighted_quantile,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rodinia-p100-nvprof.csv"


def test_weighted_quantile_takes_the_first_value_whose_cumulative_weight_reaches_q():
    x = np.array([2.0, -1.0, 1.0, 0.0])  # unsorted on purpose
    w = np.array([5.0, 1.0, 1.0, 1.0])   # sorted: -1 (1), 0 (1), 1 (1), 2 (5); total 8
    assert weighted_quantile(x, w, 0.05) == -1.0   # 0.4 of 8 -> first value
    assert weighted_quantile(x, w, 0.25) == 0.0    # 2 of 8 -> cumulative 2 at the second
    assert weighted_quantile(x, w, 0.375) == 1.0   # 3 of 8 -> cumulative 3 at the third
    assert weighted_quantile(x, w, 0.5) == 2.0     # 4 of 8 -> only the last reaches it
    assert weighted_quantile(x, np.ones(4), 0.5) == 0.0


def pairs_frame(r_by_table: dict, method="m", cell_name="cross_arch") -> pd.DataFrame:
    """Pairs with measured = source = 1 s and predicted = exp(-r): ln(measured / predicted)
    = r and the distance d = C + |r|."""
    rows = []
    for (dataset, tab), rs in r_by_table.items():
        for r in rs:
            rows.append((method, tab, dataset, cell_name, float(np.exp(-r)), 1.0, 1.0))
    return pd.DataFrame(rows, columns=["method", "table", "dataset", "cell", "time_s", "true_s",
                                       "source_time_s"])


def test_each_table_weighs_the_same_whatever_its_size():
    # plain log error (offset None): table A has 10 pairs at r = 0.1, table B 2 pairs at
    # r = -0.5 and 0.9. Weights: A's pairs 1/10 each (total 1), B's 1/2 each (total 1).
    # Sorted: -0.5 (0.5), 0.1 x 10 (1.0), 0.9 (0.5), total 2. 5 % of 2 = 0.1 -> -0.5;
    # 95 % = 1.9 -> 0.9 (the cumulative weight before it is 1.5 < 1.9).
    p = pairs_frame({("s1", "A"): [0.1] * 10, ("s2", "B"): [-0.5, 0.9]})
    b = fit_bands(p, coverage=0.9, offset=None)["m"]["cross_arch"]
    assert (b["lo"], b["hi"]) == (-0.5, 0.9)
    assert (b["pairs"], b["tables"], b["datasets"]) == (12, 2, 2)
    # at 50 %, the 25 % quantile (0.5 of 2) is reached by -0.5 itself
    b50 = fit_bands(p, coverage=0.5, offset=None)["m"]["cross_arch"]
    assert (b50["lo"], b50["hi"]) == (-0.5, 0.1)


def test_scores_are_log_errors_per_unit_of_extrapolation():
    # the same pairs scored z = r / (0.5 + |r|) (source = measured, so |ln(p/s)| = |r|):
    # -0.5 -> -0.5, 0.1 -> 0.1/0.6, 0.9 -> 0.9/1.4; the same order, so the same picks
    p = pairs_frame({("s1", "A"): [0.1] * 10, ("s2", "B"): [-0.5, 0.9]})
    b = fit_bands(p, coverage=0.9, offset=0.5)["m"]["cross_arch"]
    assert b["lo"] == -0.5 and b["hi"] == pytest.approx(0.9 / 1.4, abs=1e-4)
    # a prediction of 1 s from a 2 s source: d = 0.5 + ln 2
    low, high = band_of(1.0, 2.0, b["lo"], b["hi"], offset=0.5)
    d = 0.5 + np.log(2.0)
    assert float(low) == pytest.approx(np.exp(-0.5 * d))
    assert float(high) == pytest.approx(np.exp(b["hi"] * d))


def test_a_cell_from_one_data_source_gets_no_band():
    p = pairs_frame({("s1", "A"): [0.1, 0.2], ("s1", "B"): [0.3, 0.4]})
    assert fit_bands(p) == {}


def test_held_out_coverage_fits_without_the_tables_own_source():
    # plain log errors; sources s1, s2, s3 spread +-0.2, +-0.2 and +-1.0: held out, s3 is
    # fitted on the first two (band [-0.2, 0.2]) and only its pair at 0 lies inside
    p = pairs_frame({("s1", "A"): [-0.2, 0.0, 0.2], ("s2", "B"): [-0.2, 0.0, 0.2],
                     ("s3", "C"): [-1.0, 0.0, 1.0]})
    h = held_out(p, coverage=0.9, offset=None)
    h = h[h["bucket"] == "all"].set_index("table")
    assert h.at["C", "n"] == 3 and h.at["C", "covered"] == 1
    assert h.at["C", "width"] == pytest.approx(np.exp(0.4))
    # A is fitted on B and C: 5 % of the weight is reached at -1.0, 95 % at 1.0
    assert h.at["A", "covered"] == 3 and h.at["A", "width"] == pytest.approx(np.exp(2.0))


def test_held_out_counts_the_pairs_of_a_cell_no_other_source_has_a_band_for():
    # s3's same-architecture pairs: only s3 has that cell, so held out they have no band,
    # and are counted, not dropped unsaid; its cross-architecture pair is checked
    p = pd.concat([pairs_frame({("s1", "A"): [-0.2, 0.0, 0.2], ("s2", "B"): [-0.2, 0.0, 0.2],
                                ("s3", "C"): [0.0]}),
                   pairs_frame({("s3", "C"): [0.1, 0.3]}, cell_name="same_arch")])
    h = held_out(p, coverage=0.9, offset=None)
    c = h[(h["table"] == "C") & (h["bucket"] == "all")].iloc[0]
    assert (c["covered"], c["n"], c["no_band"]) == (1, 1, 2)
    assert (h[h["bucket"] != "all"]["no_band"] == 0).all()
    assert (h[h["table"] != "C"]["no_band"] == 0).all()


def test_held_out_coverage_per_predicted_speed_up():
    # r = 0 and +-1 in source s3: predicted = source x exp(-r), so the pair at 0 predicts 1x
    # and the pairs at +-1 predict a factor e = 2.72 (bucket 2-3.3x)
    p = pairs_frame({("s1", "A"): [-0.2, 0.0, 0.2], ("s2", "B"): [-0.2, 0.0, 0.2],
                     ("s3", "C"): [-1.0, 0.0, 1.0]})
    h = held_out(p, coverage=0.9, offset=None).set_index(["table", "bucket"])
    assert h.loc[("C", "<1.35x"), ["covered", "n"]].tolist() == [1, 1]
    assert h.loc[("C", "2-3.3x"), ["covered", "n"]].tolist() == [0, 2]
    assert speedup_bucket([1.0, 1.0, 1.0, 1.0], [1.2, 0.5, 2.5, 10.0]).tolist() == list(BUCKETS)


def test_same_architecture_is_read_from_the_catalog():
    h100, h200, p100 = (resolve(g) for g in ("h100-sxm5-80gb", "h200-sxm-141gb",
                                             "tesla-p100-pcie-16gb"))
    assert cell(h100, h200) == "same_arch"
    assert cell(p100, h100) == "cross_arch"


def test_the_shipped_bands_cover_the_analytical_methods_from_two_sources_or_more():
    bands = json.loads(BANDS_FILE.read_text())
    assert bands["coverage"] == 0.9 and len(bands["tables"]) >= 8
    assert bands["offset"] == OFFSET  # the file was fitted with the score predict uses
    for m in ("same", "bandwidth", "compute", "roofline", "hierarchical", "hierarchical-ext",
              "efficiency"):
        for c in CELLS:
            b = bands["methods"][m][c]
            assert b["lo"] < 0 < b["hi"] and b["datasets"] >= 2 and b["pairs"] > 1000


def test_the_shipped_bands_say_what_they_held_on_sources_they_were_not_fitted_on():
    """``held_out`` of the bands file is the mean, lowest and highest of the held-out coverage
    per table that docs/accuracy.md prints (docs/results/accuracy.json, the same run)."""
    bands = json.loads(BANDS_FILE.read_text())
    rows = json.loads((BANDS_FILE.parents[3] / "docs" / "results" / "accuracy.json")
                      .read_text())["error_bands_held_out"]
    for m, h in bands["held_out"].items():
        cov = [r["covered"] / r["n"] for r in rows
               if r["method"] == m and r["bucket"] == "all" and r["n"]]
        assert h["tables"] == len(cov) >= 8
        assert h["mean"] == pytest.approx(np.mean(cov), abs=1e-4)
        assert (h["lowest"], h["highest"]) == pytest.approx((min(cov), max(cov)), abs=1e-4)
    assert {"bandwidth", "hierarchical", "hierarchical-ext"} <= set(bands["held_out"])


def test_the_band_note_says_what_each_band_held_on_other_sources(monkeypatch):
    from gpuproj import predict as pr

    fake = {"held_out": {"hierarchical": {"mean": 0.872, "lowest": 0.58, "highest": 1.0,
                                          "tables": 10}}}
    monkeypatch.setattr(pr, "load_bands", lambda: fake)
    fake["held_out"]["bandwidth"] = {"mean": 0.8734, "lowest": 0.521, "highest": 1.0,
                                     "tables": 10}
    assert pr.held_out_note(["hierarchical", "same", "bandwidth"]) == (
        "; on the tables of data sources it was not fitted on, the band held the measured time "
        "in 87 % of the pairs (mean over the tables, 58-100 % per table) for hierarchical, 87 % "
        "(52-100 %) "
        "for bandwidth")
    assert pr.held_out_note(["same"]) == ""  # no check, nothing said
    r = CliRunner().invoke(cli, ["predict", str(EXAMPLE), "--target", "h100-sxm5-80gb",
                                 "--method", "hierarchical"])
    assert ("the band held the measured time in 87 % of the pairs (mean over the tables, "
            "58-100 % per table) for hierarchical") in " ".join(r.output.split())


def test_predict_gives_the_band_of_each_prediction_and_its_distance():
    src = "tesla-p100-pcie-16gb"
    p = table(kernel=["k", "k2"], config=["a", "b"], gpu=[src] * 2,
              time_s=[1e-3, 2e-3], dram_read_bytes=[4e8, 1e8], dram_write_bytes=[1e8, 1e8])
    pred = get_model("bandwidth").predict(p, src, ["h100-sxm5-80gb", "v100-sxm2-16gb"])
    b = load_bands()["methods"]["bandwidth"]["cross_arch"]
    d = pred.df
    dist = OFFSET + np.abs(np.log(d["time_s"] / d["source_time_s"]))
    assert np.allclose(d["band_low_s"], d["time_s"] * np.exp(b["lo"] * dist))
    assert np.allclose(d["band_high_s"], d["time_s"] * np.exp(b["hi"] * dist))
    # the further the projection goes, the wider the band: H100 is further from a P100
    h100 = d[d["target"] == "h100-sxm5-80gb"].iloc[0]
    v100 = d[d["target"] == "v100-sxm2-16gb"].iloc[0]
    assert h100["band_high_s"] / h100["band_low_s"] > v100["band_high_s"] / v100["band_low_s"]
    app = pred.application().set_index("target")
    h = d[d["target"] == "h100-sxm5-80gb"]
    assert app.at["h100-sxm5-80gb", "band_high_s"] == pytest.approx(h["band_high_s"].sum())


def test_a_method_without_a_band_leaves_the_columns_empty():
    p = table(kernel=["k"], config=["a"], gpu=["tesla-p100-pcie-16gb"], time_s=[1e-3],
              dram_read_bytes=[4e8], dram_write_bytes=[1e8])
    m = get_model("bandwidth")
    m.name = "bandwidth-variant"  # not in the shipped file
    pred = m.predict(p, "tesla-p100-pcie-16gb", ["h100-sxm5-80gb"])
    assert pred.df["band_low_s"].isna().all()
    assert pred.application()["band_low_s"].isna().all()
    assert band_quantiles("no-such-method", resolve("h100-sxm5-80gb"),
                          resolve("h200-sxm-141gb")) is None


def test_band_coverage_in_the_metrics():
    m = metrics(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0]),
                band_low=np.array([0.5, 0.5, np.nan]), band_high=np.array([2.5, 1.5, np.nan]))
    # the third pair has no band; of the other two the first is inside
    assert m["band_coverage"] == 0.5 and m["band_width"] == pytest.approx(1.5)
    assert m["band_n"] == 2  # of n = 3: the coverage says of how many pairs it is
    assert metrics(np.ones(2), np.ones(2))["band_coverage"] is None


def test_point_metrics_by_hand():
    # metrics(pred, true): APE |p - t| / t = 0.1, 0.2, 0.5, 0.7; ratios p / t = 1.1, 0.8, 1.5,
    # 1.7
    m = metrics([1.1, 0.8, 3.0, 1.7], [1.0, 1.0, 2.0, 1.0])
    assert m["n"] == 4
    assert m["mape"] == pytest.approx(100 * (0.1 + 0.2 + 0.5 + 0.7) / 4)  # 37.5
    assert m["median_ape"] == pytest.approx(100 * (0.2 + 0.5) / 2)  # 35
    # the geometric mean of the APEs, not their mean: (0.1 x 0.2 x 0.5 x 0.7)^(1/4) = 0.28925
    assert m["gmre"] == pytest.approx(100 * 0.007 ** 0.25) == pytest.approx(28.925, abs=1e-3)
    # the median of pred / true (1.1 and 1.5 in the middle), not of true / pred
    assert m["median_ratio"] == pytest.approx(1.3)
    # 10 % and 50 % exactly count as within (1.1 vs 1.0 is 10.000000000000009 % in binary)
    assert (m["within_10"], m["within_25"], m["within_50"]) == (0.25, 0.5, 0.75)
    # an exact prediction's APE is floored at 1e-6 for the log: sqrt(1e-6 x 1) = 1e-3
    assert metrics([1.0, 2.0], [1.0, 1.0])["gmre"] == pytest.approx(100 * 1e-3)


def test_within_counts_an_error_of_exactly_the_threshold_either_way():
    # 1.1 against 1.0 is 10.000000000000009 % off in binary, 0.9 exactly 10 %: both within
    m = metrics(np.array([1.1, 0.9, 2.2]), np.array([1.0, 1.0, 2.0]))
    assert m["within_10"] == 1.0


def test_interval_coverage_only_where_there_is_an_interval():
    pred, true = np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])
    # point intervals (low = high = pred): no interval, so no coverage, not 0 or 1/3
    m = metrics(pred, true, low=pred, high=pred)
    assert m["coverage"] is None and m["interval_width"] is None
    # one real interval: the points count as intervals that miss unless they hit exactly
    m = metrics(pred, true, low=np.array([1.0, 1.0, 1.0]), high=np.array([1.0, 2.5, 1.0]))
    assert m["coverage"] == pytest.approx(2 / 3) and m["interval_width"] == 0.0


def test_evaluate_reports_band_coverage():
    p = table(kernel=["k"] * 2, config=["a"] * 2, gpu=["tesla-p100-pcie-16gb", "h100-sxm5-80gb"],
              time_s=[1e-3, 3e-4], dram_read_bytes=[4e8] * 2, dram_write_bytes=[1e8] * 2)
    s = evaluate(p, ["bandwidth"]).summary()["bandwidth"]
    # P100 -> H100 predicts 1e-3 x 732 / 3350 = 0.219 ms against 0.3 ms measured (x 1.37),
    # H100 -> P100 1.37 ms against 1 ms (x 0.73): both inside the cross-architecture band,
    # whose factors at d = 1 + ln(3350 / 732) are about 0.28 and 5.0
    assert s["n"] == 2 and s["band_n"] == 2 and s["band_coverage"] == 1.0


def test_evaluate_band_coverage_counts_the_times_inside_their_bands():
    """P100 <-> H100 (Pascal, Hopper: the cross-architecture band). The bandwidth method
    predicts t_s x 732 / 3350 GB/s (datasheet peaks) or its inverse, so d = 1 + ln(3350 /
    732) = 2.521 for both directions, and the shipped quantiles give the band
    [p exp(lo d), p exp(hi d)]. Kernel e: the H100 time is exactly the projection, inside
    both bands; m: 3x slower on the H100 than projected, inside (1/3 and 3 within the band's
    factors); x: 20x slower, outside both directions' bands: 4 of 6 pairs are covered."""
    lo, hi = band_quantiles("bandwidth", resolve("tesla-p100-pcie-16gb"),
                            resolve("h100-sxm5-80gb"))
    r = 732e9 / 3350e9
    assert resolve("tesla-p100-pcie-16gb").peak("dram_bw_bytes_per_s") == 732e9
    assert resolve("h100-sxm5-80gb").peak("dram_bw_bytes_per_s") == 3350e9
    d = 1 + np.log(1 / r)
    assert np.exp(lo * d) < 1 / 3 and 3 < np.exp(hi * d) < 20 and np.exp(lo * d) > 1 / 20
    p = table(kernel=["e", "e", "m", "m", "x", "x"], config=["a"] * 6,
              gpu=["tesla-p100-pcie-16gb", "h100-sxm5-80gb"] * 3,
              time_s=[1e-3, 1e-3 * r, 1e-3, 3e-3 * r, 1e-3, 20e-3 * r],
              dram_read_bytes=[4e8] * 6, dram_write_bytes=[1e8] * 6)
    s = evaluate(p, ["bandwidth"]).summary()["bandwidth"]
    assert s["n"] == 6 and s["band_n"] == 6
    assert s["band_coverage"] == pytest.approx(4 / 6)
    # the band's width over the prediction is the same for every pair: exp(hi d) - exp(lo d)
    assert s["band_width"] == pytest.approx(np.exp(hi * d) - np.exp(lo * d), rel=1e-9)


def test_cli_predict_shows_the_band():
    r = CliRunner().invoke(cli, ["predict", str(EXAMPLE), "--target", "h100-sxm5-80gb",
                                 "--method", "hierarchical"])
    assert r.exit_code == 0, r.output
    assert "90 % band" in r.output and "interval" not in r.output  # no method here has one
    # beside a method with an interval, a method without one shows '-', not 'x - x'
    r = CliRunner().invoke(cli, ["predict", str(EXAMPLE), "--target", "h200",
                                 "--method", "bandwidth,hierarchical-ext"])
    rows = [ln for ln in r.output.splitlines() if "│ bandwidth" in ln and "size=" in ln]
    assert "interval" in r.output and len(rows) == 3
    # the one target is in the title, not in a column of its own
    assert "Projected from tesla-p100-pcie-16gb to h200-sxm-141gb" in r.output
    assert all(ln.split("│")[6].strip() == "-" for ln in rows)
    r = CliRunner().invoke(cli, ["predict", str(EXAMPLE), "--target", "h100-sxm5-80gb",
                                 "--method", "hierarchical", "--json"])
    out = json.loads(r.stdout)
    rec = out["predictions"][0]
    assert rec["band_low_s"] < rec["time_s"] < rec["band_high_s"]
    # where the band comes from travels with it
    assert out["bands"]["coverage"] == 0.9 and out["bands"]["offset"] == OFFSET
    assert "hierarchical" in out["bands"]["methods"] and len(out["bands"]["tables"]) >= 8
    assert out["bands"]["held_out"]["hierarchical"]["tables"] >= 8
