"""Predicting a target from several source GPUs at once (gpuproj.combine, evaluate
--combine-sources)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from gpuproj.combine import combine_sources
from gpuproj.evaluate import evaluate
from gpuproj.profiles import load

DATA = Path(__file__).parent / "data"


def _pairs(**cols):
    base = {"method": "bandwidth", "kernel": "k", "config": "c", "target": "t", "true_s": 2.0,
            "limiter": "dram"}
    n = len(next(iter(cols.values())))
    return pd.DataFrame({**{k: [v] * n for k, v in base.items()}, **cols})


def test_inverse_variance_weights_by_hand():
    # bands of log-width ln 2, ln 4 and ln 8 (around each prediction): weights 1, 1/4, 1/9
    # (normalised 36/49, 9/49, 4/49)
    p = _pairs(source=["a", "b", "c"], source_time_s=[1.0, 2.0, 4.0], time_s=[1.0, 2.0, 4.0],
               low_s=[1.0, 2.0, 4.0], high_s=[1.0, 2.0, 4.0],
               band_low_s=[1 / np.sqrt(2), 1.0, 4 / np.sqrt(8)],
               band_high_s=[np.sqrt(2), 4.0, 4 * np.sqrt(8)])
    p.loc[2, "limiter"] = "compute"
    c = combine_sources(p)
    assert len(c) == 1 and c.loc[0, "source"] == "combined" and c.loc[0, "sources"] == 3
    a = np.array([36, 9, 4]) / 49
    ln2 = np.log(2)
    assert c.loc[0, "time_s"] == pytest.approx(np.exp(a @ [0, ln2, 2 * ln2]))
    # every bound: the same weighted geometric mean of the sources' bounds
    lows = np.log([1 / np.sqrt(2), 1.0, 4 / np.sqrt(8)])
    assert c.loc[0, "band_low_s"] == pytest.approx(np.exp(a @ lows))
    assert c.loc[0, "source_time_s"] == pytest.approx(c.loc[0, "time_s"])
    assert c.loc[0, "limiter"] == "dram" and c.loc[0, "true_s"] == 2.0
    # equal weights: the plain geometric mean, 2
    assert combine_sources(p, weighted=False).loc[0, "time_s"] == pytest.approx(2.0)


def test_a_source_without_band_makes_the_weights_equal_and_misses_are_left_out():
    p = _pairs(source=["a", "b", "c"], source_time_s=[1.0, 1.0, 1.0], time_s=[1.0, 4.0, np.nan],
               low_s=[1.0, 4.0, np.nan], high_s=[1.0, 4.0, np.nan],
               band_low_s=[0.5, np.nan, np.nan], band_high_s=[2.0, np.nan, np.nan])
    c = combine_sources(p)
    # c predicted nothing: out; b has no band: a and b weigh the same
    assert c.loc[0, "sources"] == 2 and c.loc[0, "time_s"] == pytest.approx(2.0)
    assert np.isnan(c.loc[0, "band_low_s"])  # b has none, so the combination has none
    # a learned model's interval stands in for a band
    q = p.iloc[:2].assign(band_low_s=np.nan, band_high_s=np.nan,
                          low_s=[0.5, 1.0], high_s=[2.0, 16.0])
    assert combine_sources(q).loc[0, "time_s"] == pytest.approx(4 ** 0.2)


def test_folds_and_targets_stay_apart():
    p = pd.concat([_pairs(source=["a", "b"], source_time_s=1.0, time_s=[1.0, 4.0],
                          low_s=np.nan, high_s=np.nan).assign(fold=f, target=t)
                   for f, t in (("f1", "t"), ("f2", "t"), ("f1", "u"))], ignore_index=True)
    c = combine_sources(p)
    assert sorted(zip(c["fold"], c["target"])) == [("f1", "t"), ("f1", "u"), ("f2", "t")]
    assert list(c["time_s"]) == pytest.approx([2.0] * 3) and (c["sources"] == 2).all()


def test_combining_beats_one_source_on_real_tables():
    """Amaris Rodinia (nvprof, 9 GPUs), KernelTuner convolution and NeuSight bmm excerpts:
    every target from all the others errs less than the mean single-source projection, and
    the band weights do better than equal weights."""
    for name in ("amaris-9gpus-bpnn_adjust_weights.csv", "kerneltuner-4gpus-convolution.csv",
                 "neusight-5gpus-bmm.csv"):
        ev = evaluate(load(DATA / name), ["bandwidth", "hierarchical-ext"])
        one, equal = ev.summary(), ev.combined(weighted=False).summary()
        both = ev.combined().summary()
        for m in one:
            assert both[m]["mape"] < equal[m]["mape"] < one[m]["mape"], (name, m)
        targets = ev.pairs[np.isfinite(ev.pairs["time_s"])].drop_duplicates(
            ["method", "kernel", "config", "target"])
        assert sum(s["n"] for s in both.values()) == len(targets)


def test_cli_combine_sources(capsys):
    table = DATA / "kerneltuner-4gpus-convolution.csv"
    code, out, _ = run_cli(capsys, "evaluate", str(table), "-m", "bandwidth",
                           "--combine-sources", "--json")
    assert code == 0
    got = json.loads(out)
    want = evaluate(load(table), ["bandwidth"]).combined().summary()["bandwidth"]
    assert got["methods"]["bandwidth"]["mape"] == pytest.approx(want["mape"])
    assert list(got["per_pair"]["bandwidth"]) == [f"combined->{g}" for g in sorted(
        load(table).gpus)]
    code, _, err = run_cli(capsys, "evaluate", str(table), "-m", "bandwidth",
                           "--combine-sources", "--gpu-choice")
    assert code == 2 and "--gpu-choice" in err and "Traceback" not in err


def test_cli_combine_sources_says_which_gpus_and_draws_one_row(capsys, tmp_path):
    # the title named the table's 4 GPUs and "all other GPUs" where one source was given; the
    # pair map was a 5 x 5 grid, empty but for its "combined" row
    table = DATA / "kerneltuner-4gpus-convolution.csv"
    code, out, _ = run_cli(capsys, "evaluate", str(table), "-m", "bandwidth", "--source",
                           "titan-rtx", "--target", "rtx-3090", "--combine-sources",
                           "--plots", str(tmp_path))
    assert code == 0
    assert "predictions by 1 method(s) over 2 GPUs (each from the --source GPUs, combined)" in out
    from gpuproj.plots.evaluation import heatmap_figure

    ev = evaluate(load(table), ["bandwidth"]).combined()
    ax = heatmap_figure(ev.pairs, "bandwidth").axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["combined"]
    assert len(ax.get_xticklabels()) == 4


# --- predict from several sources --------------------------------------------------------

def _nine():
    return load(DATA / "amaris-9gpus-bpnn_adjust_weights.csv")


def test_predict_from_two_sources_is_their_band_weighted_combination():
    from gpuproj.errors import GpuprojError
    from gpuproj.predict import predict

    t, target = _nine(), "tesla-p100-pcie-16gb"
    one = {s: predict(t, source=s, targets=[target], methods="bandwidth").table()
           for s in ("gtx-980", "tesla-k40")}
    both = predict(t, source=["gtx-980", "Tesla K40"], targets=[target], methods="bandwidth")
    assert both.combined and both.sources == ["gtx-980", "tesla-k40"]
    d = both.table()
    assert list(d["source"].unique()) == ["combined"] and (d["sources"] == 2).all()
    assert "speedup" not in d and len(d) == 2  # two configurations
    for _, r in d.iterrows():
        rows = [o[o["config"] == r["config"]].iloc[0] for o in one.values()]
        w = np.array([np.log(x["band_high_s"] / x["band_low_s"]) ** -2 for x in rows])
        w /= w.sum()
        assert r["time_s"] == pytest.approx(np.exp(w @ np.log([x["time_s"] for x in rows])))
        assert r["band_low_s"] == pytest.approx(
            np.exp(w @ np.log([x["band_low_s"] for x in rows])))
    # the application total adds the combined kernel rows; no source total, no speed-up
    a = both.application()
    assert "speedup" not in a and "source_time_s" not in a
    assert a["time_s"].iloc[0] == pytest.approx((d["time_s"] * d["launches"]).sum())
    # gpuproj's own error, which the CLI prints as one line (any Exception let a KeyError or
    # an AttributeError that happened to quote the names pass)
    with pytest.raises(GpuprojError, match="combine gtx-980, tesla-k40: give one"):
        both.source
    j = both.to_json()
    assert j["source"] == "combined" and j["sources"] == ["gtx-980", "tesla-k40"]
    # what the band held held out was checked on one source's projections: the note says so
    assert "(of one source's projections; combined, as often or more)" in both.bands_note(d)
    assert "of one source's" not in predict(t, source="gtx-980", targets=[target],
                                            methods="bandwidth").bands_note(one["gtx-980"])


def test_all_sources_predict_a_measured_target_from_the_others():
    from gpuproj.predict import predict

    t = _nine()
    r = predict(t, source="all", targets=["gtx-titan-x", "h100-pcie-80gb"], methods="bandwidth")
    d = r.table()
    assert len(r.sources) == 9
    # the TITAN X is one of the nine: its own measurement is not one of its projections
    assert (d.loc[d["target"] == "gtx-titan-x", "sources"] == 8).all()
    assert (d.loc[d["target"] == "h100-pcie-80gb", "sources"] == 9).all()
    assert "combined" in repr(r)


def test_a_configuration_only_the_target_measured_is_skipped_and_named():
    # k2 ran on the A100 alone: predicted from the others, the A100 has no projection of it,
    # which the skipped rows and the note on totals say (its total would look 50x faster)
    from gpuproj.predict import predict
    from gpuproj.profiles.table import ProfileTable

    rows = [("k1", "a100-sxm4-80gb", 1e-3), ("k1", "h100-sxm5-80gb", 6e-4),
            ("k2", "a100-sxm4-80gb", 5e-2)]
    t = ProfileTable.from_frame(pd.DataFrame(
        [{"kernel": k, "config": "c", "gpu": g, "time_s": s, "dram_bytes": 1e9}
         for k, g, s in rows]))
    r = predict(t, source="all", targets=["a100-sxm4-80gb", "h100-sxm5-80gb"],
                methods="bandwidth")
    assert [s.reason for s in r.skipped] == [
        "k2 [c] -> a100-sxm4-80gb: no other source GPU measured it (the target is a source)"]
    a = r.application().set_index("target")["rows"]
    assert a.to_dict() == {"a100-sxm4-80gb": 1, "h100-sxm5-80gb": 2}
    assert r.partial_totals().startswith(
        "application totals add 2 kernel rows, those of bandwidth -> a100-sxm4-80gb 1 ")


def test_a_total_has_a_band_only_where_every_row_has_one():
    # quantitative-transfer has bands within one architecture only: combined, k1 takes the
    # A100's band-less projection and the H100's, k2 only the A100's; a total band over k1
    # alone would end below the total
    from gpuproj.predict import predict
    from gpuproj.profiles.table import ProfileTable

    counts = {"warp_inst": 1e7, "ldst_thread_inst": 1e8, "dram_bytes": 1e9,
              "fp32_thread_inst": 1e9, "flops": 1e9}
    rows = [("k1", "a100-sxm4-80gb", 1e-3), ("k1", "h100-sxm5-80gb", 6e-4),
            ("k2", "h100-sxm5-80gb", 6e-4)]
    t = ProfileTable.from_frame(pd.DataFrame(
        [{"kernel": k, "config": "c", "gpu": g, "time_s": s, **counts} for k, g, s in rows]))
    r = predict(t, source="all", targets=["h200"], methods="quantitative-transfer")
    d = r.table()
    assert d["band_low_s"].notna().sum() == 1  # one row has a band, the other none
    a = r.application().iloc[0]
    assert a["rows"] == 2 and np.isnan(a["band_low_s"]) and np.isnan(a["band_high_s"])


def test_combining_needs_one_row_per_configuration_and_names_the_duplicate():
    from gpuproj.errors import InputError
    from gpuproj.predict import predict
    from gpuproj.profiles.table import ProfileTable

    t = _nine()
    dup = ProfileTable(pd.concat([t.df, t.df.iloc[[0]]], ignore_index=True), [], "x.csv")
    gpu = t.df["gpu"].iloc[0]
    with pytest.raises(InputError, match=f"{gpu} has several rows of kernel "
                                         "bpnn_adjust_weights_cuda with config"):
        predict(dup, source="all", targets=["h100-pcie-80gb"], methods="bandwidth")
    # one source alone keeps its rows as they are
    assert len(predict(dup, source=gpu, targets=["h100-pcie-80gb"],
                       methods="bandwidth").table()) == 3
    with pytest.raises(InputError, match="several, or 'all', to combine them"):
        predict(t, targets=["h100-pcie-80gb"])


def test_cli_predict_source_all(capsys, tmp_path):
    f = str(DATA / "amaris-9gpus-bpnn_adjust_weights.csv")
    code, out, err = run_cli(capsys, "predict", f, "--source", "gtx-980,tesla-k40", "-t",
                             "tesla-p100-pcie-16gb", "-m", "bandwidth,hierarchical", "--json")
    assert code == 0, err
    j = json.loads(out)
    assert j["sources"] == ["gtx-980", "tesla-k40"]
    assert {p["sources"] for p in j["predictions"]} == {2}
    code, out, err = run_cli(capsys, "predict", f, "--source", "all", "-t", "h100-pcie-80gb,l4",
                             "-m", "bandwidth", "--plot", str(tmp_path / "bars.png"))
    assert code == 0, err
    assert "sources" in out and "speed-up" not in out
    assert (tmp_path / "bars.png").stat().st_size > 0
    # more targets than panels: the chart of application totals, without a source line
    code, _, err = run_cli(capsys, "predict", f, "--source", "all", "-t", "h100*,a100*,v100*",
                           "-m", "bandwidth", "--plot", str(tmp_path / "targets.png"))
    assert code == 0, err
    assert (tmp_path / "targets.png").stat().st_size > 0


def test_cli_report_takes_one_source(capsys):
    code, _, err = run_cli(capsys, "report", str(DATA / "amaris-9gpus-bpnn_adjust_weights.csv"),
                           "--source", "gtx-980,tesla-k40", "-t", "h100-pcie-80gb", "-o", "x.html")
    assert code == 2 and "a report draws one source's profile" in err


def test_an_unbounded_interval_stays_unbounded_when_combined():
    # conformal intervals from too few calibration scores end at inf: the combined interval
    # became NaN, "no interval", where it is one without an upper end
    d = pd.DataFrame({"method": "m", "kernel": "k", "config": "c", "target": "t",
                      "source": ["a", "b"], "time_s": [1.0, 4.0], "true_s": 2.0,
                      "source_time_s": [1.0, 1.0], "low_s": [0.5, 0.0],
                      "high_s": [2.0, np.inf]})
    out = combine_sources(d, weighted=False)
    assert out["time_s"].iloc[0] == pytest.approx(2.0)
    assert out["high_s"].iloc[0] == np.inf and out["low_s"].iloc[0] == 0.0


def test_an_open_interval_weighs_nothing():
    """Inverse-variance weights give a source whose interval is open (infinite spread) weight
    0: sources 1, 4 and 8 with intervals [0.5, 2], [1, 16] and [0, inf] combine as the first
    two, weights 4/5 and 1/5 (1.3195), where the open one switched the target to equal weights
    (3.175); its bounds add nothing. All open: equal weights, the interval open."""
    d = pd.DataFrame({"method": "m", "kernel": "k", "config": "c", "target": "t",
                      "source": ["a", "b", "c"], "time_s": [1.0, 4.0, 8.0], "true_s": 2.0,
                      "source_time_s": [1.0, 1.0, 1.0], "low_s": [0.5, 1.0, 0.0],
                      "high_s": [2.0, 16.0, np.inf]})
    out = combine_sources(d).iloc[0]
    assert out["time_s"] == pytest.approx(4 ** 0.2)
    assert (out["low_s"], out["high_s"]) == pytest.approx((0.5 ** 0.8, 2 ** 0.8 * 16 ** 0.2))
    allopen = combine_sources(d.assign(low_s=0.0, high_s=np.inf)).iloc[0]
    assert allopen["time_s"] == pytest.approx(32 ** (1 / 3))
    assert (allopen["low_s"], allopen["high_s"]) == (0.0, np.inf)
