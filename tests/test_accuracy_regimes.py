"""scripts/accuracy.py: errors by where the working set lies against the two GPUs' L2 sizes."""

from pathlib import Path

import numpy as np
import pytest
from conftest import load_script, table

from gpuproj.catalog import resolve
from gpuproj.evaluate import evaluate
from gpuproj.models.bands import band_of, cell, load_bands
from gpuproj.profiles import load


def working_set_table():
    """H100 PCIe (50 MiB of L2) and H200 (60 MiB): 10 MB fits both (at most half), 60 MB lies
    between, 200 MB misses both (over twice); both times equal, so `same` errs 0 %."""
    sets = [10e6, 60e6, 200e6]
    return table(kernel=["k"] * 6, config=[f"w{w:.0f}" for w in sets] * 2,
                 gpu=["h100-pcie-80gb"] * 3 + ["h200-sxm-141gb"] * 3, time_s=[1e-3] * 6,
                 l2_bytes=[1e9] * 6, working_set_bytes=sets * 2)


def test_regime_notes_split_pairs_by_working_set():
    # working_set_table's three regimes; a table without working sets gets no breakdown
    acc = load_script("accuracy")
    t = working_set_table()
    ev = evaluate(t, ["same", "bandwidth"])
    lines = acc.regime_notes(ev, t, methods=("same", "bandwidth")).splitlines()
    rows = [r.split(" | ") for r in lines if r.startswith("| NVIDIA")]
    assert [r[1] for r in rows] == ["fits both", "between", "misses both", "all"]
    assert [int(r[2]) for r in rows] == [2, 2, 2, 6]
    assert all(r[3] == "0.0 / 0.0" for r in rows)
    bw = ev.pairs[ev.pairs["method"] == "bandwidth"]
    ape = 100 * (bw["time_s"] / bw["true_s"] - 1).abs()
    assert rows[3][4].rstrip(" |") == f"{ape.mean():.1f} / {ape.median():.1f}"
    assert acc.regime_notes(ev, table(time_s=[1e-3], l2_bytes=[1e9])) == ""


def test_scoreboard_rows():
    # the best baseline and the best analytical method by MAPE on the evaluated pairs; the
    # hybrid column is learned.json's validated hybrid where the table is there, else '-';
    # the last is the method whose band-weighted combination of all sources has the lowest
    # MAPE, '-' where the table has no combination
    import json

    acc = load_script("accuracy")
    t = load(Path(__file__).parent / "data" / "amaris-2gpus-calculate_temp.csv")
    summary = evaluate(t, ["same", "bandwidth", "hierarchical", "quantitative-transfer"]).summary()
    combined = {"bandwidth": {"weighted": {"mape": 12.34, "median_ape": 5.0}},
                "hierarchical": {"weighted": {"mape": 7.5, "median_ape": 6.0}}}
    results = {"amaris-rodinia calculate_temp": {"methods": summary,
                                                 "combined": {"methods": combined}},
               "my table": {"methods": summary}}
    rows = acc.scoreboard(results).splitlines()[2:]
    # the suite's row, from docs/results/suite.json, comes last
    suite = Path(acc.ROOT) / "docs/results/suite.json"
    if suite.exists():
        ms = json.loads(suite.read_text())["summary"]["methods"]
        best = acc.best_method({m: ms[m] for m in acc.ANALYTICAL if m in ms}, False)
        last = rows.pop().split(" | ")
        assert last[0] == "| our suite, H100 <-> H200" and last[2].startswith(f"`{best}` ")
    assert len(rows) == 2
    base = min(("same", "bandwidth"), key=lambda m: summary[m]["mape"])
    ours = min(("hierarchical", "quantitative-transfer"), key=lambda m: summary[m]["mape"])
    cells = [r.split(" | ") for r in rows]
    assert all(c[1].startswith(f"`{base}` ") and c[2].startswith(f"`{ours}` ") for c in cells)
    learned = json.loads((Path(acc.ROOT) / "docs/results/learned.json").read_text())
    h = learned["logo"]["amaris calculate_temp"]["methods"]["validated hybrid"]
    assert cells[0][3] == f"{h['mape']:.1f} / {h['median_ape']:.1f}"
    assert cells[1][3] == "-"
    assert cells[0][4] == "`hierarchical` 7.5 / 6.0 |"
    assert cells[1][4] == "- |"


def test_gpu_choice_ranks_the_targets_of_each_source():
    # one configuration measured on s and on three targets taking 1, 2 and 4 ms: `bandwidth`
    # predicts their order (rho 1, the fastest chosen), `compute` the reverse (rho -1, the
    # 4 ms GPU chosen: +300 %); a target at random is the fastest one time in three and
    # takes (0 + 100 + 300) / 3 % longer on average; `same` cannot rank and is left out
    import pandas as pd
    import pytest

    from gpuproj.evaluate import RANDOM_PICK, Evaluation

    acc = load_script("accuracy")
    true = [1e-3, 2e-3, 4e-3]
    rows = [(m, "k", "c", "s", t, p, tr) for m, pred in
            (("same", [1e-3] * 3), ("bandwidth", [1e-3, 2e-3, 3e-3]),
             ("compute", [3e-3, 2e-3, 1e-3]))
            for t, p, tr in zip(("t1", "t2", "t3"), pred, true)]
    # a second source with two targets only: too few to rank, left out of every row
    rows += [("bandwidth", "k", "c", "s2", t, 1e-3, 1e-3) for t in ("t1", "t2")]
    d = pd.DataFrame(rows, columns=["method", "kernel", "config", "source", "target", "time_s",
                                    "true_s"])
    ev = Evaluation(d.assign(low_s=d["time_s"], high_s=d["time_s"], band_low_s=float("nan"),
                             band_high_s=float("nan")), [])
    c = ev.gpu_choice()
    assert list(c.index) == ["bandwidth", "compute", RANDOM_PICK]
    assert c.loc["bandwidth", "rank_corr"] == pytest.approx(1.0)
    assert c.loc["bandwidth", "top1_hit"] == 1 and c.loc["bandwidth", "groups"] == 1
    assert c.loc["compute", "rank_corr"] == pytest.approx(-1.0)
    assert c.loc["compute", "top1_hit"] == 0
    assert c.loc["compute", "top1_loss_pct"] == pytest.approx(300.0)
    rnd = c.loc[RANDOM_PICK]
    assert rnd["top1_hit"] == pytest.approx(1 / 3) and rnd["targets"] == "3"
    assert rnd["top1_loss_pct"] == pytest.approx(400 / 3) and rnd["groups"] == 1
    # by pair: `compute` orders every two targets the wrong way round, `bandwidth` none
    pairs = ev.gpu_choice(by="pair")
    assert list(pairs.loc["compute"].index) == [("t1", "t2"), ("t1", "t3"), ("t2", "t3")]
    assert (pairs.loc["compute", "swapped"] == 1).all()
    assert (pairs.loc["bandwidth", "swapped"] == 0).all()
    assert pairs.loc[("bandwidth", "t1", "t3"), "measured_ratio"] == pytest.approx(0.25)
    assert (pairs["groups"] == 1).all()  # the two-target source s2 is no ranking
    # `same` predicts every target alike: tied, not reversed
    assert (pairs.loc["same", "tied"] == 1).all() and (pairs.loc["same", "swapped"] == 0).all()
    assert (pairs.drop(index="same")["tied"] == 0).all()
    # wrong: a tie is a coin toss for whoever chooses
    assert pairs["wrong"].to_dict() == {k: {"same": 0.5, "compute": 1.0}.get(k[0], 0.0)
                                        for k in pairs.index}
    got = ev.to_json(gpu_choice=True)["gpu_choice"]
    assert got[RANDOM_PICK]["rank_corr"] is None and got["compute"]["top1_loss_max_pct"] == 300
    row = acc.choice_table({"t": {"gpu_choice": got}}).splitlines()[2].split(" | ")
    assert row[1:3] == ["1 (3)", "33 %"] and "**1.00 / 100 %**" in row
    assert "-1.00 / 0 %" in row


def test_several_sources_table_uses_held_out_bands():
    # with_bands puts the given band quantiles around each pair (band_of); the section scores
    # one source, equal weights and band weights on the bands fitted without the table's source
    acc = load_script("accuracy")
    data = Path(__file__).parent / "data" / "kerneltuner-4gpus-convolution.csv"
    ev = evaluate(load(data), ["same", "bandwidth"])
    fitted = {"bandwidth": {"same_arch": {"lo": -0.1, "hi": 0.2},
                            "cross_arch": {"lo": -0.3, "hi": 0.4}}}
    d = acc.with_bands(ev, fitted).pairs
    bw = d[d["method"] == "bandwidth"]
    same = np.array([cell(resolve(a), resolve(b)) == "same_arch"
                     for a, b in zip(bw["source"], bw["target"])])
    assert same.any() and not same.all()
    lo = np.where(same, -0.1, -0.3)
    hi = np.where(same, 0.2, 0.4)
    want = band_of(bw["time_s"], bw["source_time_s"], lo, hi)
    assert np.allclose(bw["band_low_s"], want[0]) and np.allclose(bw["band_high_s"], want[1])
    assert d.loc[d["method"] == "same", "band_low_s"].isna().all()
    held = load_bands()["without_source"]["kerneltuner"]
    c = acc.combined_sources(acc.held_out_evaluation(ev, "kerneltuner convolution"))
    assert set(c["methods"]) == {m for m in ("same", "bandwidth") if m in held}
    comb = acc.with_bands(ev, held).combined().summary()["bandwidth"]
    assert c["methods"]["bandwidth"]["weighted"]["mape"] == comb["mape"]
    row = acc.combined_table({"kt": {"combined": c}}).splitlines()[2]
    assert row.startswith("| kt | 80 (3) | ") and "`bandwidth`" in row


def test_intensity_notes_split_pairs_by_ridge_point():
    # H100 PCIe and H200, FP32: 0.1 FLOP/B lies under half of both ridge points, the H200's
    # own ridge between, 10^4 FLOP/B over twice both; equal times, so `same` errs 0 %; a table
    # with a row without DRAM bytes, or on one side of the ridges only, gets no breakdown
    from gpuproj.models.common import compute_peak_key

    acc = load_script("accuracy")
    h100, h200 = resolve("h100-pcie-80gb"), resolve("h200-sxm-141gb")
    key = compute_peak_key("fp32")
    ridge = (h200.ceiling(key, h100).value / h200.ceiling("dram_bw_bytes_per_s", h100).value)
    ois = [0.1, ridge, 1e4]
    t = table(kernel=["k"] * 6, config=[f"oi{i}" for i in range(3)] * 2,
              gpu=["h100-pcie-80gb"] * 3 + ["h200-sxm-141gb"] * 3, time_s=[1e-3] * 6,
              dram_bytes=[1e9] * 6, fp32_flops=[1e9 * x for x in ois] * 2, dtype=["fp32"] * 6)
    ev = evaluate(t, ["same", "bandwidth"])
    lines = acc.intensity_notes(ev, t, methods=("same", "bandwidth")).splitlines()
    rows = [r.split(" | ") for r in lines if r.startswith("| ") and "---" not in r][1:]
    assert [r[0].lstrip("| ") for r in rows] == ["memory-bound on both", "near a ridge",
                                                 "compute-bound on both", "all"]
    assert [int(r[1]) for r in rows] == [2, 2, 2, 6]
    assert all(r[2] == "0.0 / 0.0" for r in rows)
    one_side = table(kernel=["k"] * 2, config=["c"] * 2, gpu=["h100-pcie-80gb", "h200-sxm-141gb"],
                     time_s=[1e-3] * 2, dram_bytes=[1e9] * 2, fp32_flops=[1e8] * 2)
    assert acc.intensity_notes(evaluate(one_side, ["same"]), one_side, ("same",)) == ""
    no_bytes = table(kernel=["k"] * 2, config=["c"] * 2, gpu=["h100-pcie-80gb", "h200-sxm-141gb"],
                     time_s=[1e-3] * 2, fp32_flops=[1e8] * 2)
    assert acc.intensity_notes(evaluate(no_bytes, ["same"]), no_bytes, ("same",)) == ""



def test_verdict_compares_on_the_pairs_both_methods_predict():
    # hierarchical skips pair k3, where bandwidth errs 50 %: on all their pairs hierarchical
    # (10 %) would beat bandwidth (20 %), on the two pairs both predict it loses (10 against 5 %)
    import pandas as pd

    from gpuproj.evaluate import Evaluation

    acc = load_script("accuracy")
    rows = [("hierarchical", "k1", 1.1), ("hierarchical", "k2", 1.1), ("bandwidth", "k1", 1.05),
            ("bandwidth", "k2", 0.95), ("bandwidth", "k3", 1.5)]
    pairs = pd.DataFrame([{"method": m, "kernel": k, "config": "c", "source": "a", "target": "b",
                           "time_s": t, "true_s": 1.0, **dict.fromkeys(
                               ("low_s", "high_s", "band_low_s", "band_high_s"), float("nan"))}
                          for m, k, t in rows])
    ev = Evaluation(pairs, [])
    summary = ev.summary()
    assert summary["hierarchical"]["mape"] < summary["bandwidth"]["mape"]
    line = acc.verdict_line(ev, summary, "hierarchical", "bandwidth")
    assert line == ("Best gpuproj method `hierarchical` (10.0 % MAPE) does NOT beat the best "
                    "baseline `bandwidth` (20.0 %); they predict 2 and 3 pairs, and on the 2 both "
                    "predict `hierarchical` errs 10.0 %, `bandwidth` 5.0 %.")
    # as many pairs, other ones: compared on the pairs both predict (k1 alone)
    other = Evaluation(ev.pairs[~((ev.pairs["method"] == "bandwidth")
                                 & (ev.pairs["kernel"] == "k2"))], [])
    assert acc.verdict_line(other, other.summary(), "hierarchical", "bandwidth").endswith(
        "they predict 2 and 2 pairs, and on the 1 both predict `hierarchical` errs 10.0 %, "
        "`bandwidth` 5.0 %.")
    same_pairs = ev.pairs[ev.pairs["kernel"] != "k3"]
    ev2 = Evaluation(same_pairs, [])
    assert acc.verdict_line(ev2, ev2.summary(), "hierarchical", "bandwidth") == (
        "Best gpuproj method `hierarchical` (10.0 % MAPE) does NOT beat the best baseline "
        "`bandwidth` (5.0 %).")

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external"


def test_best_method_ties_go_by_name_not_by_float_rounding():
    # two methods making the same projection (efficiency and compute on NeuSight conv) differ
    # in the last bit of their MAPE: a tie, broken by name, not by the rounding
    acc = load_script("accuracy")
    s = {"hierarchical": {"n": 1, "mape": 21.999999999999996},
         "efficiency": {"n": 1, "mape": 22.0}}
    assert acc.best_method(s, baseline=False) == "efficiency"
    s["hierarchical"]["mape"] = 21.9
    assert acc.best_method(s, baseline=False) == "hierarchical"


def test_suite_band_pairs_are_our_two_tables_with_their_data_sources():
    # the committed H100 / H200 collections: H100 <-> H200 pairs of their own source within
    # one architecture, and the seed report's GPUs -> ours counted as the report's source
    if not (EXTERNAL / "seed-report-4gpus").is_dir():
        pytest.skip("shared/data/external not present")
    load_script("suite_crossval")  # what suite_band_pairs imports (scripts/ is no package)
    acc = load_script("accuracy")
    suite, report = acc.suite_band_pairs(EXTERNAL)
    assert set(suite["table"]) == {acc.SUITE_TABLES[0]}
    assert set(suite["dataset"]) == {"gpuproj-suite"} and set(suite["cell"]) == {"same_arch"}
    assert (suite["method"] == "hierarchical-ext").sum() == 418  # both directions
    assert set(report["table"]) == {acc.SUITE_TABLES[1]}
    assert set(report["dataset"]) == {"seed-report-4gpus"}
    assert set(report["cell"]) == {"cross_arch"}
    assert len(report) and np.isfinite(report["true_s"]).all()


def test_only_prints_the_partial_report_and_leaves_the_docs_alone(tmp_path, monkeypatch, capsys):
    # a report of one dataset written over docs/accuracy.md would drop every other table
    if not (EXTERNAL / "seed-report-4gpus").is_dir():
        pytest.skip("shared/data/external not present")
    acc = load_script("accuracy")
    written = []
    monkeypatch.setattr(Path, "write_text", lambda self, *a, **k: written.append(self))
    acc.main(["--data", str(EXTERNAL), "--only", "seed-report"])
    assert written == []
    out = capsys.readouterr().out
    assert out.startswith("# Accuracy") and "seed-report-4gpus" in out


def test_one_gpu_notes_name_the_gpu_whose_pairs_carry_the_error():
    # four GPUs, one configuration, all taking 1 ms but the GTX TITAN X, 4 ms: `same` errs
    # 75 % on the 3 pairs into the TITAN X and 300 % on the 3 out of it, 0 on the other 6;
    # the TITAN X is in half the pairs and carries all the error. Its row of 1e13 FP32 FLOPs
    # in 4 ms runs beyond its datasheet FP32 peak (6.1 TFLOP/s), which the note says.
    acc = load_script("accuracy")
    gpus = ["rtx-2080-ti", "titan-v", "rtx-4070", "gtx-titan-x"]
    t = table(kernel=["k"] * 4, config=["c"] * 4, gpu=gpus, time_s=[1e-3] * 3 + [4e-3],
              fp32_flops=[1e9] * 3 + [1e13], dtype=["fp32"] * 4)
    ev = evaluate(t, ["same"])
    note = acc.one_gpu_notes(ev, t, methods=("same",), by="same")
    assert note.startswith("One GPU: gtx-titan-x is in 50 % of the pairs and carries 100 % of "
                           "`same`'s summed error.")
    assert "`same` 93.8 / 37.5 -> 0.0 / 0.0." in note  # (3 x 75 + 3 x 300) / 12; median
    assert "1 of 1 rows measured on gtx-titan-x ran faster than its datasheet roofline" in note
    # evenly spread error: no note
    even = table(kernel=["k"] * 3, config=["c"] * 3, gpu=gpus[:3], time_s=[1e-3, 2e-3, 4e-3])
    assert acc.one_gpu_notes(evaluate(even, ["same"]), even, ("same",), by="same") == ""


def test_size_notes_split_a_size_sweep_by_working_set_and_architecture_notes_by_design():
    # a size sweep (n=..,block=..) at 0.5, 8 and 100 MB on an H100 PCIe and an H200 whose times
    # are equal: `same` errs 0 % in every band
    acc = load_script("accuracy")
    sets = [0.5e6, 8e6, 100e6]
    cfg = [f"n={int(w / 16)},block=256" for w in sets]
    t = table(kernel=["k"] * 6, config=cfg * 2,
              gpu=["h100-pcie-80gb"] * 3 + ["h200-sxm-141gb"] * 3, time_s=[1e-3] * 6,
              dram_bytes=sets * 2, working_set_bytes=sets * 2)
    ev = evaluate(t, ["same", "bandwidth"])
    lines = acc.size_notes(ev, t, methods=("same", "bandwidth")).splitlines()
    rows = [r.split(" | ") for r in lines if r.startswith("| ") and "---" not in r][1:]
    assert [r[0].lstrip("| ") for r in rows] == ["under 1 MB", "1-16 MB", "over 64 MB", "all"]
    assert [int(r[1]) for r in rows] == [2, 2, 2, 6]
    assert all(r[2] == "0.0 / 0.0" for r in rows)
    # a table of other configurations gets no breakdown
    assert acc.size_notes(ev, table(time_s=[1e-3], working_set_bytes=[1e6])) == ""
    # one Hopper design on both sides: no pair across two, so no line
    assert acc.architecture_notes(ev, ("same", "bandwidth")) == ""
    t2 = table(kernel=["k"] * 3, config=["c"] * 3, time_s=[1e-3] * 3, dram_bytes=[1e6] * 3,
               gpu=["h100-pcie-80gb", "h200-sxm-141gb", "a100-sxm4-80gb"])
    line = acc.architecture_notes(evaluate(t2, ["same"]), ("same",))
    assert line.startswith("Within one micro-architecture (2 of 6 pairs) against")
    assert "`same` 0.0 / 0.0 against 0.0 / 0.0" in line


def test_occupancy_differences_counts_rows_where_the_reports_formula_differs():
    """On the Titan V, 128 threads of 33 registers: 12 blocks by the rules, 15 by the report's
    formula; of 64 registers: 8 blocks by both (64 x 32 = 2048 a warp, 32 warps; 65536 /
    (64 x 128) = 8). A row without a block size is not counted."""
    acc = load_script("accuracy")
    t = table(time_s=[1e-3] * 3, block_threads=[128.0, 128.0, np.nan],
              regs_per_thread=[33.0, 64.0, 33.0], smem_per_block_bytes=[0.0] * 3,
              gpu=["titan-v"] * 3)
    assert acc.occupancy_differences(t) == "1 of 2"


def test_scoreboard_figure_draws_each_column_present():
    # three tables: one with every column, one without hybrid and combination, one where the
    # best analytical method ties the baseline within 10 % (no arrow, it would hide under its
    # markers); one tick per table, top to bottom in the given order
    acc = load_script("accuracy")

    def s(mape):
        return {"mape": mape, "median_ape": mape / 2}

    rows = [{"table": "a", "baseline": ("bandwidth", s(40.0)), "analytical": ("h", s(20.0)),
             "hybrid": s(15.0), "combined": ("h", s(10.0))},
            {"table": "b", "baseline": ("same", s(8.0)), "analytical": ("h", s(4.0)),
             "hybrid": None, "combined": None},
            {"table": "c", "baseline": ("compute", s(22.0)), "analytical": ("h", s(21.0)),
             "hybrid": None, "combined": None}]
    ax = acc.scoreboard_figure(rows).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    xs = {c.get_label(): sorted(c.get_offsets()[:, 0]) for c in ax.collections}
    assert xs == {"best baseline": [8.0, 22.0, 40.0], "best analytical method": [4.0, 20.0, 21.0],
                  "hybrid, target GPU held out": [15.0], "from all other GPUs at once": [10.0]}
    arrows = [(a.xyann[0], a.xy[0]) for a in ax.texts]
    assert sorted(arrows) == [(8.0, 4.0), (40.0, 20.0)]


def test_breakdowns_show_the_pairs_of_a_method_that_predicts_fewer():
    # a method that skips pairs is scored on others than its neighbours in a breakdown's row:
    # its cell says how many it has (the seed report's `hierarchical` predicts 566 of 572);
    # the row's n is that of the method that predicts the most, whatever the methods' order
    acc = load_script("accuracy")
    t = working_set_table()
    ev = evaluate(t, ["same", "bandwidth"])
    p = ev.pairs
    drop = p.index[(p["method"] == "bandwidth") & (p["config"] == "w10000000")][:1]
    ev = type(ev)(p.drop(drop).reset_index(drop=True), [])
    lines = acc.regime_notes(ev, t, methods=("bandwidth", "same")).splitlines()
    rows = {r.split(" | ")[1]: r.split(" | ") for r in lines if r.startswith("| NVIDIA")}
    assert rows["fits both"][2] == "2" and rows["fits both"][3].endswith("(n = 1)")
    assert rows["all"][2] == "6" and rows["all"][3].endswith("(n = 5)")
    assert "(n = " not in rows["all"][4] and "(n = " not in rows["between"][3]
    d = ev.pairs.assign(band=np.where(ev.pairs["config"] == "w10000000", "small", "large"))
    out = acc._ape_rows(d, "band", ["small", "large"], ["bandwidth", "same"])
    assert out[0].startswith("| small | 2 | ") and "(n = 1)" in out[0]
    assert out[2].startswith("| all | 6 | ") and "(n = 5)" in out[2]


def test_several_sources_weigh_by_the_bands_this_run_fitted():
    # the shipped file is written at the end of a run, so it holds the previous run's bands:
    # the section takes the bands it is given; a table the bands leave out (gpu-benches')
    # takes the bands themselves, fitted without it, as scripts/learned_experiments.py does
    acc = load_script("accuracy")
    data = Path(__file__).parent / "data" / "kerneltuner-4gpus-convolution.csv"
    ev = evaluate(load(data), ["same", "bandwidth"])
    fitted = {"bandwidth": {"same_arch": {"lo": -0.1, "hi": 0.2},
                            "cross_arch": {"lo": -0.3, "hi": 0.4}}}
    other = {"bandwidth": {"same_arch": {"lo": -1.0, "hi": 1.0},
                           "cross_arch": {"lo": -2.0, "hi": 0.1}}}
    bands = {"methods": other, "without_source": {"kerneltuner": fitted}}
    want = acc.with_bands(ev, fitted).combined().summary()["bandwidth"]
    c = acc.combined_sources(acc.held_out_evaluation(ev, "kerneltuner convolution", bands))
    assert set(c["methods"]) == {"bandwidth"}
    assert c["methods"]["bandwidth"]["weighted"] == want
    leave_out = acc.NOT_IN_BANDS[0]
    assert acc.bands_without_format(acc.FORMAT[leave_out], bands) is other
    assert acc.bands_without_format("neusight", bands) is None
    g = acc.combined_sources(acc.held_out_evaluation(ev, leave_out, bands))
    assert g["methods"]["bandwidth"]["weighted"] == \
        acc.with_bands(ev, other).combined().summary()["bandwidth"]
    results = {"kerneltuner convolution": {"combined": None}}
    acc.add_held_out(results, {"kerneltuner convolution": ev}, bands)
    r = results["kerneltuner convolution"]
    assert r["combined"]["methods"]["bandwidth"]["weighted"] == want
    # the totals with the same held-out bands: one per ordered GPU pair
    held = acc.with_bands(ev, fitted)
    assert r["totals"]["bandwidth"]["totals"] == held.totals().summary()["bandwidth"]
    assert r["totals"]["bandwidth"]["kernels"] == held.summary()["bandwidth"]
    pairs = ev.pairs[ev.pairs["method"] == "bandwidth"]
    assert r["totals"]["bandwidth"]["totals"]["n"] == len(pairs.groupby(["source", "target"]))
    text = acc.totals_table(results)
    assert "| kerneltuner convolution | " in text
    # the words under the table are computed from it: one table, bandwidth alone
    lower = r["totals"]["bandwidth"]["totals"]["mape"] < r["totals"]["bandwidth"]["kernels"]["mape"]
    assert f"errs less on the totals on {int(lower)} of 1 tables" in text
    assert "another method is best on the totals on none" in text

    # the words: every number computed from the results
    dep = r["totals"]["bandwidth"]
    assert f"{acc.fmt_frac(dep['between_pairs'])} to " in text
    assert f"would hold {acc.fmt_frac(dep['independent_band_coverage'])} to " in text


def test_pair_dependence_by_hand():
    # two kernels on each of two GPU pairs, each predicted at its source time (d = 1, so the
    # band score is ln(measured / predicted)) with the band [0.5, 1.5] s around 1 s
    import pandas as pd

    acc = load_script("accuracy")

    def pairs(true):
        return pd.DataFrame({"method": "m", "source": ["a", "a", "b", "b"],
                             "target": ["b", "b", "a", "a"], "time_s": 1.0,
                             "source_time_s": 1.0, "true_s": true, "band_low_s": 0.5,
                             "band_high_s": 1.5})

    # errors set by the pair alone (x1.4 on a -> b, x0.6 on b -> a): all variance between pairs
    d = acc.pair_dependence(pairs([1.4, 1.4, 0.6, 0.6]))["m"]
    assert d["between_pairs"] == pytest.approx(1.0)
    # summed, the bands of the totals are [1, 3] s: both 2.8 and 1.2 s inside; as independent
    # errors, 2 -/+ sqrt(0.5^2 + 0.5^2) = [1.29, 2.71] s: both outside
    assert d["independent_band_coverage"] == 0.0
    # opposite errors within each pair, the same on both pairs: no variance between them,
    # and the totals (2 s) inside either band
    d = acc.pair_dependence(pairs([1.4, 1 / 1.4, 1.4, 1 / 1.4]))["m"]
    assert d["between_pairs"] == pytest.approx(0.0, abs=1e-12)
    assert d["independent_band_coverage"] == 1.0


def test_totals_fitted_band_is_fitted_without_the_tables_source():
    # a table's totals band comes from the other data sources' totals alone: scaling its own
    # measured times changes its coverage, not its band, and changes the others' bands
    acc = load_script("accuracy")
    data = Path(__file__).parent / "data"
    evs = {"kerneltuner convolution": evaluate(load(data / "kerneltuner-4gpus-convolution.csv"),
                                               ["same", "bandwidth"]),
           "neusight conv": evaluate(load(data / "neusight-5gpus-conv.csv"), ["same", "bandwidth"]),
           "amaris-rodinia bpnn_adjust_weights": evaluate(
               load(data / "amaris-9gpus-bpnn_adjust_weights.csv"), ["same", "bandwidth"])}
    before = acc.totals_fitted_bands(evs)
    ev = evs["neusight conv"]
    evs["neusight conv"] = type(ev)(ev.pairs.assign(true_s=ev.pairs["true_s"] * 3), [])
    after = acc.totals_fitted_bands(evs)
    for m in ("same", "bandwidth"):
        assert after["neusight conv"][m]["width"] == before["neusight conv"][m]["width"]
        assert after["kerneltuner convolution"][m]["width"] != \
            before["kerneltuner convolution"][m]["width"]
    assert after["neusight conv"]["same"]["coverage"] != before["neusight conv"]["same"]["coverage"]


def _band_pairs(seed=0):
    """Synthetic band pairs: three data sources of two tables each, two methods."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n = 400
    src = rng.uniform(1e-4, 1e-2, n)
    pred = src * np.exp(rng.normal(0, 1.0, n))
    frames = []
    for i, ds in enumerate(("a", "b", "c")):
        for tb in (1, 2):
            for m in ("bandwidth", "hierarchical"):
                true = pred * np.exp(rng.normal(0, 0.2 + 0.1 * i, n))
                frames.append(pd.DataFrame({
                    "method": m, "table": f"{ds} t{tb}", "dataset": ds,
                    "cell": np.where(np.arange(n) % 2, "same_arch", "cross_arch"),
                    "time_s": pred, "true_s": true, "source_time_s": src}))
    return pd.concat(frames, ignore_index=True)


def test_error_bands_prose_says_what_the_numbers_say():
    # the comparison of the band variants is the numbers of the held-out split, not a sentence
    # written once; the choice of C on that split is said; what the prose says of the methods'
    # own intervals follows the results (nothing without them)
    from gpuproj.models.bands import BUCKETS, held_out

    acc = load_script("accuracy")
    pairs = _band_pairs()
    _, md, held = acc.error_bands(pairs)
    assert "over-covers" not in md and "chosen by this comparison" in md
    line = next(ln for ln in md.splitlines() if "Coverage of the nearest" in ln)
    h = held_out(pairs, 0.9, offset=None)
    h = h[h["n"] > 0]
    cov = (h["covered"] / h["n"]).groupby([h["method"], h["bucket"]]).mean()
    near = cov.xs(BUCKETS[0], level="bucket").mean()
    far = cov.xs(BUCKETS[-1], level="bucket").mean()
    assert f"plain log error {100 * near:.0f} / {100 * far:.0f}" in line
    assert "hierarchical` on every public table" not in md
    point = {"coverage": None}
    spread = {"coverage": 0.5}
    res = {"t": {"methods": {"hierarchical": point, "hierarchical-ext": spread}}}
    _, md, _ = acc.error_bands(pairs, results=res)
    assert "the case for `hierarchical` on every public table" in md and "hence its coverage" in md
    res = {"t": {"methods": {"hierarchical": spread, "hierarchical-ext": point}}}
    _, md, _ = acc.error_bands(pairs, coverage=0.8, results=res)
    assert "the case for `hierarchical-ext` on every public table" in md
    assert "hence its coverage" not in md and "## Error bands (measured, 80 %)" in md
