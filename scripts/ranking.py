#!/usr/bin/env python3
"""Ranking kernel variants on a GPU one has not tuned on: writes docs/results/ranking.json and
the markdown fragment docs/results/ranking.md (included by scripts/accuracy.py).

    python scripts/ranking.py [--data DIR]

An autotuner that cannot run every configuration on the target needs their order, not their
times. The KernelTuner tables hold many configurations of one problem measured on four GPUs:
each GPU in turn is the target, left out of training entirely, and every method predicts its
times from each other GPU's measurements (`gpuproj.splits`, split "gpu"; the learned models in
the settings of scripts/learned_experiments.py). Per source -> target pair:
``gpuproj.evaluate.rank_metrics``; and per held-out GPU the candidate that ranks best on the
training GPUs alone (`validated choice`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import DATASETS, DEFAULT_DATA, with_bands  # noqa: E402
from accuracy import load_dataset as load  # noqa: E402
from learned_experiments import COVERAGE, HYBRIDS, bands_without, hybrid_params, is_big  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT_JSON = ROOT / "docs" / "results" / "ranking.json"
OUT_MD = ROOT / "docs" / "results" / "ranking.md"

# tables whose configurations are variants of one problem (same work, other tuning parameters)
TABLES = [(name, fmt, files) for name, fmt, files, _ in DATASETS
          if name in ("kerneltuner GEMM", "kerneltuner convolution")]
METHODS = ("same", "bandwidth", "roofline", "hierarchical", "hierarchical-ext", "efficiency")
LEARNERS = ("rf", "gb", "ridge", "lasso")


# candidates of the validated choice: following the source (`same`), the analytical method
# that re-ranks, and the two tree learners
CANDIDATES = ("same", "hierarchical-ext", "rf", "gb")
KEYS = ["kernel", "source", "target"]
# the shortlist drawn in turn from the source's order and the two tree learners' orders, and
# the shortlist lengths it is measured at
SHORTLIST = ("same", "gb", "rf")
SHORTLIST_K = (3, 5, 10)


def validated_loss(train, model) -> float:
    """Median top-1 loss of ``model`` on a fold's training GPUs, as a user could measure it
    without the target: out of fold for a learner (each training GPU's pairs predicted by a copy
    trained without that GPU), on the training pairs for an analytical method."""
    from gpuproj.evaluate import evaluate, rank_metrics
    from gpuproj.learned.models import training_data

    if getattr(model, "trained", False):
        data = training_data(train, model.max_pairs, model.random_state, model._spec(train))
        oof, _ = model.out_of_fold(data)
        pairs = data.pairs.assign(time_s=oof).dropna(subset=["time_s"])
    else:
        pairs = evaluate(train, [model]).pairs
    loss = rank_metrics(pairs, KEYS)["top1_loss_pct"]
    return float("inf") if loss is None else loss


def run_table(data, fmt, files) -> dict:
    import pandas as pd

    from gpuproj.evaluate import Evaluation
    from gpuproj.splits import evaluate_fold, folds

    table = load(data, fmt, files)
    max_pairs = 12000 if is_big(table) else None
    params = {m: {"max_pairs": max_pairs, "coverage": COVERAGE} for m in LEARNERS}
    params.update(hybrid_params(table, fmt))
    t0 = time.time()
    frames, chosen = [], {}
    for fold in folds(table, "gpu"):
        fitted = []
        ev = evaluate_fold(fold, list(METHODS + LEARNERS + HYBRIDS), cv_groups="gpu",
                           model_params=params, fitted=fitted)
        frames.append(ev.pairs)
        val = {m.name: validated_loss(fold.train, m) for m in fitted if m.name in CANDIDATES}
        chosen[fold.name] = min(CANDIDATES, key=lambda m: val[m])  # ties: the earlier, `same`
        frames.append(ev.pairs[ev.pairs["method"] == chosen[fold.name]]
                      .assign(method="validated choice"))
    ev = Evaluation(pd.concat(frames, ignore_index=True), [])
    # keyed by str(k): the markdown is also written from the JSON file, whose keys are text
    shortlists = {", ".join(ms): {str(k): ev.shortlist(ms, k) for k in SHORTLIST_K}
                  for ms in [SHORTLIST, *((m,) for m in SHORTLIST)]}
    rank = ev.ranking()
    per_pair = ev.ranking(by="pair")
    summary = ev.summary()
    # each held-out GPU from the other three at once: per configuration the band-weighted
    # geometric mean of the projections (a learned model's interval as its band), the bands
    # fitted without this table's data source
    held = with_bands(Evaluation(ev.pairs[ev.pairs["method"] != "validated choice"], []),
                      bands_without(fmt))
    comb = held.combined()
    crank, csummary = comb.ranking(), comb.summary()
    ctarget = comb.ranking(by="pair")
    return {
        "gpus": table.gpus, "rows": len(table.df), "configs": int(table.df["config"].nunique()),
        "seconds": round(time.time() - t0, 1), "validated_choice": chosen,
        "shortlist": shortlists,
        "methods": {m: {**_plain(rank.loc[m]), "mape": summary[m]["mape"],
                        "median_ape": summary[m]["median_ape"]} for m in rank.index},
        "per_pair": {m: {p: _plain(per_pair.loc[(m, p)]) for p in per_pair.loc[m].index}
                     for m in rank.index},
        "combined": {m: {**_plain(crank.loc[m]), "mape": csummary[m]["mape"],
                         "median_ape": csummary[m]["median_ape"],
                         "per_target": {p.split("->")[1]: ctarget.loc[(m, p)]["top1_loss_pct"]
                                        for p in ctarget.loc[m].index}}
                     for m in crank.index},
    }


def _plain(row) -> dict:
    """A ranking row as JSON values: counts as int, missing as None."""
    counts = ("groups", "predictions", "topk")
    return {k: None if v != v else (int(v) if k in counts else float(v)) for k, v in row.items()}


def f1(v):
    return "-" if v is None else f"{v:.1f}"


def markdown(results) -> str:
    L = ["## Ranking kernel variants on an unseen GPU (autotuning)", "",
         "Generated by `scripts/ranking.py`. An autotuner that cannot run every configuration "
         "on the target needs their order, not their times. The KernelTuner tables hold many "
         "configurations of one problem, measured on four GPUs; each GPU in turn is the target, "
         "left out of training entirely, and each method predicts its times from each other "
         "GPU's measurements (12 source -> target pairs). Per pair: Spearman's rank correlation "
         "of predicted and measured times, and how much longer, measured on the target, the "
         "configuration predicted fastest takes than the fastest one (top-1 loss), or the best "
         "of the 5 predicted fastest (what an autotuner that runs those 5 on the target gets). "
         "Median over the 12 pairs / the worst pair; MAPE on the same pairs for contrast. "
         "`same` is tuning on the source and running its winner on the target.", ""]
    for name, r in results.items():
        L += [f"### {name}", "",
              f"{r['configs']} configurations on {len(r['gpus'])} GPUs "
              f"({', '.join(r['gpus'])}); {r['seconds']} s.", "",
              "| method | rank corr. | top-1 loss % (median / worst) | best-of-5 loss % "
              "(median / worst) | MAPE % |", "|---|---|---|---|---|"]
        ms = r["methods"]
        for m in sorted(ms, key=lambda m: (ms[m]["top1_loss_pct"], ms[m]["top1_loss_max_pct"])):
            s = ms[m]
            L.append(f"| {m} | {s['rank_corr']:.3f} | {f1(s['top1_loss_pct'])} / "
                     f"{f1(s['top1_loss_max_pct'])} | {f1(s['topk_loss_pct'])} / "
                     f"{f1(s['topk_loss_max_pct'])} | {f1(s['mape'])} |")
        pairs = r["per_pair"]

        def top1(m):
            return [pairs[m][p]["top1_loss_pct"] for p in pairs["same"]]

        # the best method that chooses differently from `same` on some pair
        other = [m for m in ms if top1(m) != top1("same") and m != "validated choice"]
        best = min(other, key=lambda m: (ms[m]["top1_loss_pct"], ms[m]["top1_loss_max_pct"]))
        safest = min((m for m in ms if m != "validated choice"),
                     key=lambda m: (ms[m]["top1_loss_max_pct"], ms[m]["top1_loss_pct"]))
        worst_pair = max(pairs["same"], key=lambda p: pairs["same"][p]["top1_loss_pct"])
        same = [m for m in ms if m not in other and m != "validated choice"]
        v = ms["validated choice"]
        picks = ", ".join(f"{g}: `{m}`" for g, m in r["validated_choice"].items())
        L += ["", f"Methods that choose what `same` chooses on every pair: "
                  f"{', '.join(f'`{m}`' for m in same)}. The lowest worst-pair top-1 loss: "
                  f"`{safest}`, {f1(ms[safest]['top1_loss_max_pct'])} % (`same`: "
                  f"{f1(ms['same']['top1_loss_max_pct'])} %, on {worst_pair}).", "",
              "`validated choice`: for each held-out target GPU, the one of "
              f"{', '.join(f'`{m}`' for m in CANDIDATES)} with the lowest median top-1 loss on "
              "the training GPUs (a learner's out of fold, each training GPU predicted by a "
              "copy trained without it), which is what a user can measure without the target: "
              f"{picks}; top-1 loss {f1(v['top1_loss_pct'])} / {f1(v['top1_loss_max_pct'])} %.",
              "", *shortlist_table(r["shortlist"]), "", *combined_table(r), "",
              f"Top-1 loss per pair, % (`same` / `{best}`, the lowest median among the methods "
              "that choose differently" + (f" / `{safest}`" if safest != best else "") + "): "
              + "; ".join(f"{p} " + " / ".join(
                  f1(pairs[m][p]["top1_loss_pct"]) for m in dict.fromkeys(["same", best, safest]))
                  for p in pairs["same"]), ""]
    return "\n".join(L).rstrip() + "\n"


def combined_table(r) -> list[str]:
    """Each held-out GPU ranked from the other GPUs' measurements at once, against one source
    at a time."""
    if "combined" not in r:  # a ranking.json written before this table
        return []
    cs, ms = r["combined"], r["methods"]
    L = ["From all other GPUs at once: the configurations of each held-out GPU ranked by the "
         "band-weighted geometric mean of their projections from the other three GPUs "
         "(`gpuproj evaluate --combine-sources`, `gpuproj predict --source all`; bands fitted "
         "without the KernelTuner tables, a learned model's interval as its band), what a "
         "tuner who measured the variants on several GPUs can do. Median / worst over the 4 "
         "targets (one source: over the 12 pairs); `same` combined ranks by the weighted "
         "geometric mean of the other GPUs' measured times.", "",
         "| method | rank corr. (one source -> all) | top-1 loss % (median / worst) | "
         "best-of-5 loss % (median / worst) | MAPE % (one source -> all) | top-1 loss per "
         "target % |", "|---|---|---|---|---|---|"]
    for m in sorted(cs, key=lambda m: (cs[m]["top1_loss_pct"], cs[m]["top1_loss_max_pct"])):
        c, s = cs[m], ms[m]
        per = ", ".join(f"{t} {f1(v)}" for t, v in c["per_target"].items())
        L.append(f"| {m} | {s['rank_corr']:.3f} -> {c['rank_corr']:.3f} | "
                 f"{f1(c['top1_loss_pct'])} / {f1(c['top1_loss_max_pct'])} | "
                 f"{f1(c['topk_loss_pct'])} / {f1(c['topk_loss_max_pct'])} | "
                 f"{f1(s['mape'])} -> {f1(c['mape'])} | {per} |")
    one, all_ = ms["same"], cs["same"]
    worst = max(all_["per_target"], key=lambda t: all_["per_target"][t])
    each = [f"{p.split('->')[0]} {f1(v['top1_loss_pct'])}"
            for p, v in r["per_pair"]["same"].items() if p.endswith(f"->{worst}")]
    L += ["", f"Tuning on the sources (`same`): top-1 loss {f1(one['top1_loss_pct'])} / "
              f"{f1(one['top1_loss_max_pct'])} % from one GPU, {f1(all_['top1_loss_pct'])} / "
              f"{f1(all_['top1_loss_max_pct'])} % from all the others. Where the combination "
              f"misses most, on {worst} ({f1(all_['per_target'][worst])} %), each other GPU's "
              f"own winner costs there: {', '.join(each)} %."]
    return L


def shortlist_table(shortlists) -> list[str]:
    """Best-of-k loss of the shortlist taken in turn from SHORTLIST's orders, next to each of
    those orders alone."""
    ks = SHORTLIST_K
    L = [f"Shortlists: the best of k configurations measured on the target, taken in turn from "
         f"the orders of {', '.join(f'`{m}`' for m in SHORTLIST)} (`gpuproj.shortlist`), "
         "against each order alone; loss % (median / worst pair):", "",
         "| shortlist from | " + " | ".join(f"k = {k}" for k in ks) + " |",
         "|---|" + "---|" * len(ks)]
    for ms, by_k in shortlists.items():
        cells = [f"{f1(by_k[str(k)]['loss_pct'])} / {f1(by_k[str(k)]['loss_max_pct'])}"
                 for k in ks]
        L.append(f"| {ms} | " + " | ".join(cells) + " |")
    return L


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = ap.parse_args(argv)
    results = {}
    for name, fmt, files in TABLES:
        results[name] = run_table(args.data, fmt, files)
        print(f"{name}: {results[name]['seconds']} s", file=sys.stderr)
    OUT_JSON.write_text(json.dumps(results, indent=1) + "\n")
    OUT_MD.write_text(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
