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
