"""Shortlists of configurations to measure on a target, taken in turn from several predicted
orders (gpuproj.shortlist), their best-of-k loss (Evaluation.shortlist) and the CLI."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from gpuproj.evaluate import evaluate, rank_metrics, shortlist_metrics
from gpuproj.profiles import load
from gpuproj.shortlist import shortlist

GEMM = Path(__file__).parent / "data" / "kerneltuner-4gpus-gemm_clblast_4096.csv"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rodinia-p100-nvprof.csv"


def orders(**by_method):
    """Rows of one kernel: each method's predicted times of configurations a..e."""
    return pd.DataFrame([{"kernel": "k", "config": c, "method": m, "time_s": t}
                         for m, times in by_method.items() for c, t in zip("abcde", times)])


def test_orders_interleaved_without_repeats():
    # same: a b c d e; gb: c a e b d (ties: d and b at 4.0 keep row order, b first)
    p = orders(same=[1, 2, 3, 4, 5], gb=[2, 4, 1, 4, 3])
    picked = shortlist(p, ["same", "gb"], 4, ["kernel"])
    # turns: same a, gb c, same b, gb a (taken), same c (taken), gb e
    assert picked["config"].tolist() == ["a", "c", "b", "e"]
    assert picked["method"].tolist() == ["same", "gb", "same", "gb"]
    assert picked["rank"].tolist() == [1, 2, 3, 4]
    assert picked["time_s"].tolist() == [1, 1, 2, 3]  # the proposing method's prediction
    # the order of the methods decides who goes first
    assert shortlist(p, ["gb", "same"], 2, ["kernel"])["config"].tolist() == ["c", "a"]
    # a method whose best is taken proposes its next best in the same turn: with both orders
    # starting at a, gb's turn adds its second, d, before same's second, b
    q = orders(same=[1, 2, 3, 4, 5], gb=[1, 4, 3, 2, 5])
    assert shortlist(q, ["same", "gb"], 3, ["kernel"])["config"].tolist() == ["a", "d", "b"]
    # one method: its own top k
    assert shortlist(p, ["gb"], 3, ["kernel"])["config"].tolist() == ["c", "a", "e"]


def test_short_groups_missing_predictions_and_bad_k():
    p = orders(same=[1, 2, np.nan, 4, 5], gb=[5, 4, 3, 2, 1])
    p = pd.concat([p, pd.DataFrame({"kernel": "j", "config": ["x"], "method": ["same"],
                                    "time_s": [1.0]})], ignore_index=True)
    picked = shortlist(p, ["same", "gb", "rf"], 10, ["kernel"])  # rf has no rows: no turns
    assert picked[picked["kernel"] == "k"]["config"].tolist() == ["a", "e", "b", "d", "c"]
    assert picked[picked["kernel"] == "j"]["config"].tolist() == ["x"]
    with pytest.raises(ValueError, match="at least 1"):
        shortlist(p, ["same"], 0, ["kernel"])
    # no time from the methods named (none of theirs, or every one missing): no rows, where
    # the groups' walk indexed the first of none
    for methods, q in ((["rf"], p), (["same"], p.assign(time_s=np.nan))):
        none = shortlist(q, methods, 3, ["kernel"])
        assert none.empty and {"config", "method", "rank"} <= set(none.columns)


def test_loss_by_hand():
    p = orders(same=[1, 2, 3, 4, 5], gb=[2, 4, 1, 4, 3]).assign(true_s=[4.0, 3, 2, 1, 5] * 2)
    # best of 2: same's a (4) and gb's c (2) against the fastest d (1): +100 %
    m = shortlist_metrics(p, ["same", "gb"], ["kernel"], top=2)
    assert (m["groups"], m["topk"], m["loss_pct"], m["loss_max_pct"]) == (1, 2, 100.0, 100.0)
    # best of 4 (a, c, b, e): c at 2 is still the best of them, +100 %
    assert shortlist_metrics(p, ["same", "gb"], ["kernel"], top=4)["loss_pct"] == 100.0
    # all five: the fastest is in
    assert shortlist_metrics(p, ["same", "gb"], ["kernel"], top=5)["loss_pct"] == 0.0
    # fewer than 3 configurations: not ranked
    assert shortlist_metrics(p[p["config"] < "c"], ["same"], ["kernel"])["groups"] == 0


def test_one_order_is_the_best_of_k_of_rank_metrics():
    # on real data: a shortlist from one method is that method's best-of-k, per pair
    ev = evaluate(load(GEMM), ["same", "hierarchical-ext"])
    keys = ["kernel", "source", "target"]
    for m in ("same", "hierarchical-ext"):
        for k in (1, 3, 5):
            one = rank_metrics(ev.pairs[ev.pairs["method"] == m], keys, top=k)
            got = ev.shortlist([m], k)
            assert got["groups"] == one["groups"] == 12
            assert got["loss_pct"] == pytest.approx(one["topk_loss_pct"])
            assert got["loss_max_pct"] == pytest.approx(one["topk_loss_max_pct"])
    # a shortlist of 4 from two orders holds the first order's top 2 (its turns 1 and 3), so
    # in no group does it do worse than that
    both = ev.shortlist(["same", "hierarchical-ext"], 4)
    first = rank_metrics(ev.pairs[ev.pairs["method"] == "same"], keys, top=2)
    assert both["loss_max_pct"] <= first["topk_loss_max_pct"] + 1e-9
    with pytest.raises(ValueError, match="no pairs of rf"):
        ev.shortlist(["same", "rf"])


def test_cli_predict_shortlist(capsys):
    args = ["predict", str(GEMM), "-s", "titan-rtx", "-t", "rtx-3090,rtx-2080-ti",
            "-m", "same,hierarchical-ext", "--shortlist", "3"]
    code, out, _ = run_cli(capsys, *args, "--json")
    assert code == 0
    got = pd.DataFrame(json.loads(out)["shortlist"])
    assert len(got) == 6 and got.groupby("target")["rank"].apply(list).tolist() == [[1, 2, 3]] * 2
    assert set(got["method"]) <= {"same", "hierarchical-ext"}
    # `same` goes first: its pick is the configuration fastest on the source
    src = pd.read_csv(GEMM).dropna(subset=["time_ms__RTX_Titan"])
    first = got[got["rank"] == 1].iloc[0]
    assert first["method"] == "same"
    assert first["source_time_s"] == pytest.approx(src["time_ms__RTX_Titan"].min() / 1e3)
    code, out, _ = run_cli(capsys, *args, "--csv")
    # the GEMM's problem (its size) beside the kernel: what the variants are variants of
    # and, the table holding the targets' times, what each pick takes there
    assert code == 0 and out.splitlines()[0] == \
        "kernel,problem,target,rank,config,method,time_s,source_time_s,measured_s"
    assert len(out.splitlines()) == 7
    on_3090 = src.dropna(subset=["time_ms__RTX_3090"])
    cfg = on_3090.filter(regex=r"^[A-Z]+$").astype(int).astype(str)
    keys = cfg.apply(lambda r: ",".join(f"{k}={v}" for k, v in sorted(r.items())), axis=1)
    measured = dict(zip(keys, on_3090["time_ms__RTX_3090"] / 1e3))
    picks = got[got["target"] == "rtx-3090"]
    assert picks["measured_s"].tolist() == pytest.approx([measured[c] for c in picks["config"]])
    code, out, _ = run_cli(capsys, *args)
    assert code == 0 and "Configurations to measure on rtx-3090" in out and "proposed by" in out
    best, fastest = picks["measured_s"].min(), min(measured.values())
    assert (f"the shortlist's best measured {best * 1e3:.3g} ms, the fastest of the "
            f"{len(measured)} configurations measured {fastest * 1e3:.3g} ms "
            f"(+{100 * (best / fastest - 1):.1f} %)") in " ".join(out.split())
    # a target the table did not measure has no such column
    code, out, _ = run_cli(capsys, *args[:5], "h100-sxm5-80gb", *args[6:], "--csv")
    assert code == 0 and out.splitlines()[0].endswith(",source_time_s")
    code, _, err = run_cli(capsys, *args[:-1], "0")
    assert code == 2 and "--shortlist" in err


def test_evaluation_shortlist_takes_names_separated_by_commas():
    # as every other list argument of the API: "same,gb" is two methods, not one unknown
    ev = evaluate(load(GEMM), "same,hierarchical-ext")
    assert ev.shortlist("same,hierarchical-ext") == ev.shortlist(["same", "hierarchical-ext"])
    with pytest.raises(ValueError, match="no pairs of roofline$"):
        ev.shortlist("same,roofline")


def test_cli_evaluate_shortlist(capsys):
    base = ["evaluate", str(GEMM), "-m", "same,hierarchical-ext"]
    code, out, _ = run_cli(capsys, *base, "--shortlist", "same,hierarchical-ext", "--json")
    assert code == 0
    d = json.loads(out)
    assert "ranking" in d and d["shortlist"]["methods"] == ["same", "hierarchical-ext"]
    assert d["shortlist"]["groups"] == 12 and d["shortlist"]["topk"] == 5
    code, out, _ = run_cli(capsys, *base, "--shortlist", "same,hierarchical-ext")
    assert code == 0 and "shortlist (same, hierarchical-ext)" in out
    code, _, err = run_cli(capsys, *base, "--shortlist", "same,roofline")
    # said before the evaluation runs
    assert code == 2 and "--shortlist roofline: not among the methods evaluated (add to " \
                         "--method)" in err


def test_evaluate_help_names_every_json_key(capsys):
    # each top-level key of --json is named in --help: in --json's own text, or in that of the
    # option that adds it ('ranking', 'train_overlap', ...)
    _, help_text, _ = run_cli(capsys, "evaluate", "--help")
    help_text = " ".join(help_text.split())
    keys = set()
    for extra in (["--shortlist", "same", "--gpu-choice"], ["--train", str(GEMM)]):
        code, out, _ = run_cli(capsys, "evaluate", str(GEMM), "-m", "same", "--json", *extra)
        assert code == 0
        keys |= set(json.loads(out))
    assert {"shortlist", "ranking", "gpu_choice", "train_overlap"} <= keys
    assert [k for k in sorted(keys) if k not in help_text] == []


def test_predict_suggests_a_shortlist_for_many_configurations(capsys):
    from gpuproj.cli.predict import MANY_CONFIGS

    code, out, _ = run_cli(capsys, "predict", str(GEMM), "-s", "titan-rtx", "-t", "rtx-3090",
                           "-m", "same")
    n = pd.read_csv(GEMM)["time_ms__RTX_Titan"].notna().sum()
    assert code == 0 and (f"clblast_xgemm ({n})" in out) == (n >= MANY_CONFIGS)
    code, out, _ = run_cli(capsys, "predict", str(EXAMPLE), "-t", "h200")
    assert code == 0 and "--shortlist" not in out

