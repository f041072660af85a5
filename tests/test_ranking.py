"""Ranking kernel configurations on a target (evaluate --ranking): the autotuner's question."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from gpuproj.evaluate import MIN_CONFIGS, evaluate, rank_metrics
from gpuproj.profiles import load

DATA = Path(__file__).parent / "data"
GEMM = DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv"


def test_rank_metrics_by_hand():
    p = pd.DataFrame({
        "kernel": ["a"] * 4 + ["b"] * 3 + ["c"] * 2,
        # a: the predicted order 1 2 3 4 is the measured one reversed
        # b: the predicted fastest is measured fastest; two configurations tie in the prediction
        # c: two configurations only, left out
        "time_s": [1.0, 2.0, 3.0, 4.0, 1.0, 5.0, 5.0, 1.0, 2.0],
        "true_s": [4.0, 3.0, 2.0, 1.0, 1.0, 2.0, 3.0, 2.0, 1.0],
    })
    assert MIN_CONFIGS == 3
    m = rank_metrics(p, ["kernel"], top=2)
    assert m["groups"] == 2 and m["configs"] == 7
    # a: rho = -1; b: ranks (1, 2.5, 2.5) against (1, 2, 3), centred (-1, .5, .5) and
    # (-1, 0, 1): rho = 1.5 / sqrt(1.5 x 2) = sqrt(3) / 2
    assert m["rank_corr"] == pytest.approx((-1 + np.sqrt(3) / 2) / 2)
    # a: the predicted fastest takes 4 where 1 was possible, +300 %; b: 0 %; median 150 %
    assert m["top1_loss_pct"] == pytest.approx(150.0) and m["top1_loss_max_pct"] == 300.0
    assert m["top1_hit"] == 0.5  # b's predicted fastest is its fastest, a's is not
    # best of the two predicted fastest: a: min(4, 3) / 1 -> +200 %; b: 0 %
    assert m["topk_loss_pct"] == pytest.approx(100.0) and m["topk_loss_max_pct"] == 200.0
    assert rank_metrics(p[p["kernel"] == "c"], ["kernel"])["groups"] == 0


def test_same_ranks_as_tuning_on_the_source():
    # `same` predicts the source's time, so its top-1 loss is that of tuning on the source and
    # running the winner on the target, computed here directly from the table
    t = load(GEMM)
    ev = evaluate(t, ["same"])
    r = ev.ranking(by="pair").loc["same"]
    d = t.df.pivot_table(index="config", columns="gpu", values="time_s")
    for pair, row in r.iterrows():
        s, g = pair.split("->")
        both = d[[s, g]].dropna()
        chosen = both[g][both[s].idxmin()]
        assert row["top1_loss_pct"] == pytest.approx(100 * (chosen / both[g].min() - 1))
        assert row["rank_corr"] == pytest.approx(both[s].corr(both[g], method="spearman"))
        assert row["configs"] == len(both)


def test_cli_ranking(capsys):
    code, out, _ = run_cli(capsys, "evaluate", str(GEMM), "-m", "same,roofline", "--ranking",
                           "--json")
    assert code == 0
    rank = json.loads(out)["ranking"]
    assert set(rank) == {"same", "roofline"} and rank["same"]["groups"] == 12
    assert 0 < rank["same"]["rank_corr"] <= 1 and rank["same"]["topk"] == 5
    # every number the JSON holds says its unit in 'units' (a key or its *_pct suffix)
    j = json.loads(out)
    for name in [*j["methods"]["same"], *j["ranking"]["same"]]:
        assert name in j["units"] or name.endswith("_pct"), name
    code, out, _ = run_cli(capsys, "evaluate", str(GEMM), "-m", "same", "--json")
    assert "ranking" not in json.loads(out)
    code, out, _ = run_cli(capsys, "evaluate", str(GEMM), "-m", "same", "--ranking")
    assert code == 0 and "best-of-5 loss" in out


def test_ranking_fragment_is_its_json_rendered():
    # docs/results/ranking.md is what scripts/ranking.py renders from the JSON it wrote
    from conftest import load_script

    results = Path(__file__).resolve().parents[1] / "docs" / "results"
    rk = load_script("ranking")
    assert rk.markdown(json.loads((results / "ranking.json").read_text())) == \
        (results / "ranking.md").read_text()


def test_cli_gpu_choice(capsys):
    # 9 GPUs: each configuration measured on a source ranks the 8 others; the bandwidth
    # ratio's order is the order of the targets' bandwidths, whatever the source
    table = DATA / "amaris-9gpus-bpnn_adjust_weights.csv"
    code, out, _ = run_cli(capsys, "evaluate", str(table), "-m", "same,bandwidth",
                           "--gpu-choice", "--json")
    assert code == 0
    choice, units = json.loads(out)["gpu_choice"], json.loads(out)["units"]
    assert set(choice) == {"bandwidth", "random pick"}  # `same` cannot rank
    assert all(k in units or k.endswith("_pct") for k in choice["bandwidth"])
    ev = evaluate(load(table), ["bandwidth"])
    d = ev.pairs
    one = d[(d["config"] == d["config"].iloc[0]) & (d["source"] == d["source"].iloc[0])]
    assert len(one) == 8 and choice["bandwidth"]["targets"] == "8"
    rhos = [g["time_s"].corr(g["true_s"], method="spearman")
            for _, g in d.groupby(["kernel", "config", "source"])]
    assert choice["bandwidth"]["rank_corr"] == pytest.approx(np.mean(rhos))
    assert choice["bandwidth"]["groups"] == choice["random pick"]["groups"] == len(rhos)
    assert choice["random pick"]["top1_hit"] == pytest.approx(1 / 8)
    code, out, _ = run_cli(capsys, "evaluate", str(table), "-m", "bandwidth", "--gpu-choice")
    assert code == 0 and "fastest chosen" in out and "random pick" in out
    # the pair the bandwidth ratio orders wrongly most often, from gpu_choice(by="pair")
    pairs = ev.gpu_choice(by="pair").loc["bandwidth"]
    a, b = pairs["wrong"].idxmax()
    assert f"{a} / {b}" in out


def test_a_method_without_the_fastest_configuration_loses_against_it():
    """A method that could not predict the fastest measured configuration (a) and picks b
    loses 100 %, as one that predicts a slower and picks b; its loss was measured against the
    fastest configuration it predicted (0 %, a perfect score). A ranking the prediction
    leaves all tied orders nothing: rho 0 in the mean, not left out of it."""
    true = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    full = pd.DataFrame({"method": "full", "kernel": "k", "config": list("abcd"),
                         "time_s": [3.0, 1.0, 2.0, 4.0], "true_s": list(true.values())})
    partial = full[full["config"] != "a"].assign(method="partial")
    from gpuproj.evaluate import Evaluation

    ev = Evaluation(pd.concat([full, partial], ignore_index=True).assign(
        source="s", target="t", limiter="dram"), [])
    r = ev.ranking()
    assert r.loc["partial", "top1_loss_pct"] == r.loc["full", "top1_loss_pct"] == 100.0
    assert r.loc["partial", "top1_hit"] == 0.0
    assert ev.shortlist(["partial"], top=1)["loss_pct"] == 100.0
    tied = pd.DataFrame({"kernel": ["x"] * 3 + ["y"] * 3, "time_s": [1.0, 2, 3] + [5.0] * 3,
                         "true_s": [1.0, 2, 3] * 2})
    m = rank_metrics(tied, ["kernel"])
    assert m["groups"] == 2 and m["rank_corr"] == 0.5
    # a prediction that ties every group cannot rank at all: no correlation to report
    assert rank_metrics(tied[tied["kernel"] == "y"], ["kernel"])["rank_corr"] is None
