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
    assert m["groups"] == 2 and m["predictions"] == 7
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
    assert len(r) == 12  # 4 GPUs, each the source of the 3 others
    for pair, row in r.iterrows():
        s, g = pair.split("->")
        both = d[[s, g]].dropna()
        chosen = both[g][both[s].idxmin()]
        assert row["top1_loss_pct"] == pytest.approx(100 * (chosen / both[g].min() - 1))
        assert row["rank_corr"] == pytest.approx(both[s].corr(both[g], method="spearman"))
        assert row["predictions"] == len(both)


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
    assert len(one) == 8
    assert (choice["bandwidth"]["targets_min"], choice["bandwidth"]["targets_max"]) == (8, 8)
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
    assert f"{a} / {b} {100 * pairs['wrong'].max():.0f} %" in out
    # the JSON has the pair the text shows
    assert choice["bandwidth"]["most_confused"] == {"gpus": [a, b],
                                                   "wrong_share": pairs["wrong"].max()}
    assert choice["random pick"]["most_confused"] is None


def test_cli_gpu_choice_gives_the_targets_per_ranking_as_numbers(tmp_path, capsys):
    """The text says "of 5-8 target GPUs each"; the JSON had that text, now two integers."""
    rows = pd.read_csv(DATA / "amaris-9gpus-bpnn_adjust_weights.csv")
    # the second input size measured on 6 of the 9 GPUs: its rankings have 5 targets
    fewer = (rows["input.size.1"] == rows["input.size.1"].max()) & rows["gpu_name"].isin(
        sorted(rows["gpu_name"].unique())[:3])
    table = tmp_path / "t.csv"
    rows[~fewer].to_csv(table, index=False)
    code, out, _ = run_cli(capsys, "evaluate", str(table), "-m", "bandwidth", "--gpu-choice")
    assert code == 0 and "of 5-8 target GPUs each" in out
    code, out, _ = run_cli(capsys, "evaluate", str(table), "-m", "bandwidth", "--gpu-choice",
                           "--json")
    d = json.loads(out)
    for row in d["gpu_choice"].values():
        assert "targets" not in row and (row["targets_min"], row["targets_max"]) == (5, 8)
    assert {"targets_min", "targets_max", "most_confused"} <= set(d["units"])
    assert "targets" not in d["units"]


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


NEUSIGHT = DATA / "neusight-5gpus-bmm.csv"


def test_problem_sizes_are_not_ranked_as_variants(capsys):
    """Each NeuSight shape is a problem of its own (the reader's ``problem``): its
    configurations were ranked as the variants of one kernel, a rank correlation over
    different matrix sizes, and ``predict --shortlist`` listed the smallest shapes as the
    configurations to measure."""
    t = load(NEUSIGHT)
    assert (t.df["problem"] == t.df["config"]).all()
    ev = evaluate(t, ["same", "bandwidth"])
    assert (ev.ranking()["groups"] == 0).all() and ev.shortlist(["same"])["groups"] == 0
    assert (ev.combined().ranking()["groups"] == 0).all()  # combined, the problems stay
    why = ev.why_no_ranking()
    assert why.startswith("no kernel has 3 or more configurations of one problem measured on "
                          "a source and a target: the configurations are problem sizes")
    # as one kernel's configurations, as a table without problems ranks them, they would rank
    from gpuproj.evaluate import Evaluation

    as_one = Evaluation(ev.pairs.drop(columns="problem"), [])
    assert (as_one.ranking()["groups"] > 0).all() and as_one.why_no_ranking() is None
    code, out, err = run_cli(capsys, "evaluate", str(NEUSIGHT), "-m", "bandwidth", "--ranking")
    assert code == 0 and f"ranking: {why}\n" in err and "Ranking the variants" not in out
    code, out, err = run_cli(capsys, "predict", str(NEUSIGHT), "-s", "v100-pcie-32gb", "-t",
                             "a100-pcie-40gb", "-m", "bandwidth", "--shortlist", "5")
    assert code == 2 and out == "" and err.strip().splitlines() == [
        "gpuproj: error: nothing to shortlist: no kernel has 3 or more configurations of one "
        "problem predicted for a target: the configurations are problem sizes or shapes, each "
        "its own problem (the profile's problem column), not tuning variants of one, which a "
        "shortlist chooses among"]


def test_a_table_ranks_the_variants_of_each_problem(tmp_path, capsys):
    """A measurement table's problem column splits a kernel's configurations into the
    variants of each problem; without it, all of a kernel's rank together, as before."""
    rows = [("k", c, p, g, t * (2 if g == "h200" else 1))
            for g in ("h100-sxm5-80gb", "h200")
            for c, p, t in [("a", "n=1", 1e-3), ("b", "n=1", 2e-3), ("c", "n=1", 3e-3),
                            ("d", "n=2", 4e-3), ("e", "n=2", 5e-3)]]
    with_problem = tmp_path / "variants.csv"
    with_problem.write_text("kernel,config,problem,gpu,time_s\n"
                            + "".join(f"{k},{c},{p},{g},{t}\n" for k, c, p, g, t in rows))
    without = tmp_path / "plain.csv"
    without.write_text("kernel,config,gpu,time_s\n"
                       + "".join(f"{k},{c},{g},{t}\n" for k, c, _, g, t in rows))
    r = evaluate(load(with_problem), ["same"]).ranking().loc["same"]
    assert (r["groups"], r["predictions"]) == (2, 6)  # n=1 on each of the two pairs
    r = evaluate(load(without), ["same"]).ranking().loc["same"]
    assert (r["groups"], r["predictions"]) == (2, 10)  # a..e on each pair
    h200 = "h200-sxm-141gb"
    args = ["-s", "h100-sxm5-80gb", "-t", "h200", "-m", "same", "--shortlist", "2", "--csv"]
    code, out, _ = run_cli(capsys, "predict", str(with_problem), *args)
    assert code == 0 and [ln.split(",")[:5] for ln in out.splitlines()] == [
        ["kernel", "problem", "target", "rank", "config"], ["k", "n=1", h200, "1", "a"],
        ["k", "n=1", h200, "2", "b"], ["k", "n=2", h200, "1", "d"],
        ["k", "n=2", h200, "2", "e"]]
    code, out, _ = run_cli(capsys, "predict", str(without), *args)
    assert code == 0 and [ln.split(",")[:4] for ln in out.splitlines()] == [
        ["kernel", "target", "rank", "config"], ["k", h200, "1", "a"], ["k", h200, "2", "b"]]
