"""``gpuproj evaluate``: every method's error on tables measured on several GPUs."""

from __future__ import annotations

import click

from ..names import split_lists
from ._common import (
    WrittenPath,
    console,
    emit_json,
    format_option,
    print_fitted,
    progress,
    reader_option,
    report_skipped,
)


@click.command()
@click.argument("tables", nargs=-1, required=True, type=click.Path())
@click.option("--method", "-m", "methods", multiple=True,
              help="Method(s) to evaluate (repeat or comma-separate), or 'all'. Default: every "
                   "method the table's columns allow, baselines included (with --train or "
                   "--split, also the default learned ones).")
@click.option("--source", "-s", "sources", multiple=True,
              help="Only these source GPUs of the table (comma-separated or repeated; by "
                   "name, not pattern). Default: every GPU.")
@click.option("--target", "-t", "targets", multiple=True,
              help="Only these target GPUs of the table (as --source).")
@format_option()
@reader_option()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (methods, per_pair, "
              "per_kernel, per_fold for a split of several folds, skipped, units); mape, "
              "median_ape, gmre and *_pct are in %, within_*, coverage and band_coverage "
              "fractions ('units' says each).")
@click.option("--ranking", is_flag=True,
              help="Also say how well each method ranks the configurations of a kernel on a "
                   "target that solve one problem (autotuning variants; a table's problem "
                   "column, where it has one, says which: configurations that are problem "
                   "sizes are not ranked): Spearman's rank correlation, and how much "
                   "longer the configuration predicted fastest (the best of the 5 predicted "
                   "fastest) takes than the fastest; JSON key 'ranking', losses in %.")
@click.option("--shortlist", "shortlist", metavar="METHODS",
              help="With --ranking (implied): also the best of 5 configurations taken in turn "
                   "from these methods' predicted orders (comma-separated, e.g. same,gb,rf; "
                   "as `predict --shortlist` chooses them); JSON key 'shortlist'.")
@click.option("--gpu-choice", "gpu_choice", is_flag=True,
              help="Also say how well each method orders the GPUs: each kernel configuration "
                   "measured on a source ranks the 3 or more other GPUs that measured it; "
                   "Spearman's rank correlation, how often the GPU predicted fastest is the "
                   "fastest (n GPUs predicted alike count 1/n each), and how much longer it "
                   "takes, against a GPU taken at random, and "
                   "the two GPUs each orders wrongly most often; JSON key 'gpu_choice', "
                   "losses in %.")
@click.option("--totals", is_flag=True,
              help="Also evaluate applications: each source -> target pair's kernel "
                   "configurations added up (each run once), per method the error of that total "
                   "and whether its interval and band (the pairs' bounds added up) hold it; "
                   "errors of one sign add up, of opposite signs they cancel. JSON key 'totals'.")
@click.option("--combine-sources", "combine", is_flag=True,
              help="Predict each target from all the other GPUs that measured the kernel "
                   "configuration at once: the geometric mean of their projections, each "
                   "weighted by 1 / (log-width of its 90 % band)^2, so that a source of the "
                   "target's architecture and a short projection count more; every metric, the "
                   "ranking and the JSON read the combined predictions.")
@click.option("--plots", "plots_dir", type=WrittenPath(file_okay=False), metavar="DIR",
              help="Also draw the evaluation pictures into DIR.")
@click.option("--train", "train_tables", multiple=True, type=click.Path(),
              help="Fit the learned methods on this table (repeatable), then evaluate on TABLES; "
                   "JSON key 'train_overlap' (the test rows also in training, the test "
                   "table's kernels and GPUs training never saw).")
@click.option("--split", type=click.Choice(["gpu", "config", "kernel"]),
              help="Train and test on TABLES by folds: gpu = leave one GPU out (the --target "
                   "GPUs, default all), config = largest size of each kernel, kernel = the "
                   "report's Experiment 3 kernels (else leave one kernel out).")
@click.option("--coverage", type=click.FloatRange(0, 1, max_open=True),
              help="Split-conformal intervals with this coverage (e.g. 0.8) for every method, "
                   "analytical ones included. Without it the learned methods have 90 % "
                   "intervals and the analytical ones their own; 0: no learned intervals (a "
                   "pure learner then trains without its out-of-fold fits).")
@click.option("--save-model", "save_model", type=WrittenPath(dir_okay=False),
              help="With --train: save each fitted learned model as PATH.json + PATH.npz "
                   "(PATH-<method> when several).")
def evaluate(tables, methods, sources, targets, fmt, reader_options, as_json, ranking, shortlist,
             gpu_choice, totals, combine, plots_dir, train_tables, split, coverage, save_model):
    """Predict, for every kernel configuration measured on two or more GPUs and every ordered
    pair of distinct GPUs (s, t), t's time from s's row alone, and compare with t's measurement.

    Metrics per method: n, MAPE, median APE, GMRE (geometric mean relative error), median
    pred/true, fraction within 10/25/50 %, interval coverage and width, and the coverage and
    width of the measured 90 % error bands (in-sample on the public tables they were fitted on;
    docs/accuracy.md has them held out).

    Learned methods (rf, gb, svr, knn, linear, ridge, lasso, physics-best, residual,
    bounded-efficiency, ensemble) need --train or --split; no test row is used to train them.

    \b
    Examples:
      gpuproj evaluate ../shared/data/external/amaris-rodinia-nvprof/calculate_temp_9gpus.csv.gz
      gpuproj evaluate ../shared/data/external/kerneltuner-4gpus/gemm_clblast_4096_4gpus.csv.gz -m hierarchical,roofline --json
      gpuproj evaluate my_gemm_cache.csv --reader-option gemm_size=4096 -m roofline
      gpuproj evaluate ../shared/data/external/kerneltuner-4gpus/gemm_clblast_4096_4gpus.csv.gz -m same,hierarchical-ext --ranking
      gpuproj evaluate gemm_4096.csv --split gpu -m same,gb,rf --shortlist same,gb,rf
      gpuproj evaluate ../shared/data/external/amaris-rodinia-nvprof/calculate_temp_9gpus.csv.gz -m bandwidth,quantitative --gpu-choice
      gpuproj evaluate ../shared/data/external/amaris-rodinia-nvprof/bpnn_adjust_weights_cuda_9gpus.csv.gz -m bandwidth --combine-sources
      gpuproj evaluate ../shared/data/external/kerneltuner-4gpus/gemm_clblast_4096_4gpus.csv.gz --split gpu -m gb,residual --coverage 0.8
      gpuproj evaluate test.csv --train train.csv -m residual --save-model models/residual
    """  # noqa: E501 (examples with the public tables' paths)
    from ..errors import GpuprojError
    from ..models import method_list

    table = _read_tables(tables, fmt, reader_options)
    quiet = as_json
    shortlist = split_lists((shortlist,)) if shortlist else None
    ranking = ranking or bool(shortlist)
    names = method_list(split_lists(methods))
    sources, targets = split_lists(sources), split_lists(targets)
    if methods and not names:
        raise GpuprojError("no method named (--method NAME[,NAME], or all)")
    training = bool(train_tables or split)
    _check_options(shortlist=shortlist, train_tables=train_tables, split=split,
                   coverage=coverage, combine=combine, gpu_choice=gpu_choice, sources=sources,
                   targets=targets, save_model=save_model, training=training)
    names = _method_names(table, names, training=training, save_model=save_model,
                          shortlist=shortlist)
    _check_gpus(table, sources, "--source")
    _check_gpus(table, targets, "--target")
    _warn_beyond_roofline(table)

    def bar(jobs, description="evaluating"):  # a progress bar unless the output is JSON
        return jobs if quiet else progress(jobs, description=description)

    fitted = []
    shared = None
    if split:
        from ..splits import evaluate_split

        ev = evaluate_split(table, names, split, coverage=coverage, progress=bar,
                            gpus=targets if split == "gpu" else None)
    elif train_tables:
        from ..splits import evaluate_trained, overlap

        train = _read_tables(train_tables, fmt, reader_options)
        shared = overlap(train, table)
        if not quiet:
            for line in _overlap_notes(shared):
                click.echo(f"gpuproj: warning: {line}", err=True)
        ev = evaluate_trained(train, table, names, coverage=coverage, sources=sources,
                              targets=targets, fitted=fitted,
                              progress=lambda methods: bar(methods, "training"))
    else:
        from ..evaluate import evaluate as run

        ev = run(table, names, sources, targets, progress=bar)
    if save_model:
        _save_models(fitted, save_model, quiet)
    report_skipped(ev.skipped, quiet=quiet)
    # the GPUs the pairs predicted from and to (the table may hold more than --source/--target)
    # unique() first: a set of millions of pairs' names walks every string
    n_gpus = (len(set(ev.pairs["source"].unique()) | set(ev.pairs["target"].unique()))
              if len(ev.pairs) else 0)
    if combine and len(ev.pairs):
        ev = ev.combined()
    if len(ev.pairs) == 0:
        # the methods' own skips (the table's are in ev.skipped too): pairs there were, but
        # no method could predict one, e.g. a table without the counts a method needs
        from ..profiles.table import top_cause

        why = top_cause(ev.skipped, besides=table.skipped)
        if why:
            raise GpuprojError(f"nothing to evaluate: no pair could be predicted ({why})")
        raise GpuprojError("nothing to evaluate: no kernel configuration was measured on two "
                           f"of the GPUs selected (the table has {', '.join(table.gpus)})")
    short = None
    if shortlist:
        try:
            short = {"methods": shortlist, **ev.shortlist(shortlist)}
        except ValueError as e:  # a method that was not evaluated
            raise GpuprojError(f"--{e} (add it to --method)") from None
    if plots_dir:
        from ..plots.evaluation import evaluation_plots

        paths = evaluation_plots(ev, plots_dir)
        if not quiet:  # on stderr as roofline's -o: stdout holds the tables alone
            click.echo(f"wrote {len(paths)} pictures to {plots_dir}", err=True)
    if as_json:
        out = ev.to_json(ranking=ranking, gpu_choice=gpu_choice, totals=totals)
        if gpu_choice:
            out["gpu_choice"] = _choice_json(out["gpu_choice"], _most_confused(ev))
        emit_json({**out, "units": _json_units(out["units"]),
                   **({"shortlist": short} if short else {}),
                   **({"train_overlap": shared} if shared else {})})
        return
    order = _print_summary(ev, n_gpus, coverage, combined_from=(
        ("the --source GPUs" if sources else "all other GPUs") if combine else None))
    per_fold = ev.per_fold()
    if per_fold:
        _print_folds(per_fold, order)
    if ranking:
        _print_ranking(ev, short)
    if gpu_choice:
        _print_gpu_choice(ev)
    if totals:
        whole = ev.totals()
        _print_summary(whole, n_gpus, coverage, None, title=(
            f"Application totals: {len(whole.pairs)} totals (source -> target pairs, each "
            "adding every kernel configuration the method predicted for it)"))


def _read_tables(paths, fmt, reader_options):
    """The tables at ``paths``, one under the other."""
    from ..errors import GPUNotNamedError, InputError
    from ..profiles import load

    table = None
    for path in paths:
        try:
            t = load(path, format=fmt, **reader_options)
        except GPUNotNamedError as e:
            # its advice, --source, is predict's: here --source picks among the GPUs the
            # files name, and no option names the GPU of one file
            fix = e.in_file or ("in Python, load(PATH, gpu=NAME) each file and evaluate() "
                                "the tables joined with concat()")
            raise InputError(f"{e.reason}: {fix}; evaluate reads each row's GPU from its "
                             "file (its --source only picks among them)", path=e.path,
                             row=e.row, field=e.field) from None
        table = t if table is None else table.concat(t)
    return table


def _check_options(*, shortlist, train_tables, split, coverage, combine, gpu_choice, sources,
                   targets, save_model, training) -> None:
    """Refuse options that do not go together, before any work."""
    from ..errors import GpuprojError

    if shortlist is not None and not shortlist:
        raise GpuprojError("no method named for --shortlist (--shortlist NAME[,NAME])")
    if train_tables and split:
        raise GpuprojError("give either --train or --split, not both")
    if coverage is not None and not training:
        raise GpuprojError("--coverage needs --train or --split: intervals are calibrated on "
                           "pairs that are not tested")
    if combine and gpu_choice:
        raise GpuprojError("--gpu-choice and --combine-sources do not go together: choosing "
                           "ranks GPUs one has not measured, and the combined prediction of "
                           "each uses the measurements of the others")
    if split and sources:
        raise GpuprojError("--source does not go with --split: each fold predicts its test "
                           "pairs from every GPU that measured them")
    if split and targets and split != "gpu":
        raise GpuprojError(f"--target goes with --split gpu (the GPUs to leave out), not "
                           f"--split {split}")
    if save_model and not train_tables:
        raise GpuprojError("--save-model needs --train (a split trains one model per fold)")


def _method_names(table, names: list, *, training: bool, save_model, shortlist) -> list:
    """The methods to evaluate: ``names`` as given (``all`` or none: every method the table's
    columns allow, and the default learned ones when training), checked against the other
    options."""
    from ..errors import GpuprojError
    from ..models import model_class

    def trained(m):
        return getattr(model_class(m), "trained", False)

    if names == ["all"] or (training and not names):
        from ..evaluate import applicable_methods
        from ..learned.models import DEFAULT_LEARNED

        names = applicable_methods(table) + (list(DEFAULT_LEARNED) if training else [])
    elif names and "all" in names:
        raise GpuprojError("--method all stands alone, not beside other names")
    if save_model and names and not any(trained(m) for m in names):
        raise GpuprojError(f"--save-model saves learned models, and {', '.join(names)} "
                           f"{'learns' if len(names) == 1 else 'learn'} nothing: add one "
                           "(-m residual, see `gpuproj evaluate --help`)")
    if names and not training:
        learned = [m for m in names if trained(m)]
        if learned:
            raise GpuprojError(f"{', '.join(learned)} must be trained: add --train TABLE or "
                               "--split gpu|config|kernel")
    if shortlist:
        for m in shortlist:  # an unknown name: model_class's error lists the known ones
            if trained(m) and not training:
                raise GpuprojError(f"--shortlist {m}: {m} must be trained: add --train TABLE "
                                   "or --split gpu|config|kernel")
        absent = [m for m in shortlist if names and m not in names]
        if absent:
            raise GpuprojError(f"--shortlist {', '.join(absent)}: not among the methods "
                               "evaluated (add to --method)")
    return names


def _save_models(fitted: list, save_model, quiet: bool) -> None:
    """Save the learned models among ``fitted`` as ``save_model`` (``save_model-<method>``
    when several)."""
    from ..learned.persistence import save_model as save
    from ..models import model_class

    # the learned methods named, not the Conformal wrappers of analytical ones (which
    # --coverage fits beside them, and which saved would rename the one learned model)
    trained = [m for m in fitted if getattr(model_class(m.name), "trained", False)
               and hasattr(m, "features_")]
    for m in trained:
        path = save_model if len(trained) == 1 else f"{save_model}-{m.name}"
        jpath, _ = save(m, path)
        if not quiet:
            click.echo(f"gpuproj: saved {m.name} to {jpath} (+ .npz)", err=True)


def _print_summary(ev, n_gpus: int, coverage, combined_from: str | None,
                   title: str | None = None) -> list:
    """The table of every method's metrics, lowest MAPE first; returns the methods in that
    order. ``coverage``: the --coverage given (None without)."""
    how = f" (each from {combined_from}, combined)" if combined_from else ""
    summary = ev.summary()
    title = title or (f"{len(ev.pairs)} predictions by {len(summary)} method(s) over {n_gpus} "
                      f"GPUs{how}")
    caption = _summary_caption(summary, coverage)
    # a split's coverage gets its bootstrap interval over the held-out folds beside it
    ci = ("coverage_ci",) if any(s["coverage_ci"] for s in summary.values()) else ()
    cols = ("n", "mape", "median_ape", "gmre", "median_ratio", "within_10", "within_25",
            "within_50", "coverage", *ci, "interval_width", "band_coverage", "band_width")
    # lowest MAPE first (0 % too); a method without one last
    order = sorted(summary, key=lambda m: (summary[m]["mape"] is None, summary[m]["mape"] or 0))
    print_fitted(console(), [METHOD, *((HEADERS[c], "right", False) for c in cols)],
                 [[m, *(_cell(c, summary[m][c], summary[m]) for c in cols)] for m in order],
                 title=title, caption=caption, caption_justify="left")
    return order


def _summary_caption(summary: dict, coverage) -> str | None:
    """What the metrics table's interval and band columns mean, said only of what it shows: a
    kind of interval no method in it has, or a column of dashes, is left unexplained (it read
    as if the table had them)."""
    from ..evaluate import UNITS
    from ..models import model_class

    # the widths' unit as the JSON's 'units' gives it, less what it says of JSON's nulls
    # (the table shows "-")
    width = {c: UNITS[c].split("; ")[0] for c in ("interval_width", "band_width")}
    with_interval = [m for m, s in summary.items() if s["coverage"] is not None]
    learned = [m for m in with_interval if getattr(model_class(m), "trained", False)]
    analytical = [m for m in with_interval if m not in learned]
    kinds = ["learned: calibrated on out-of-fold errors"] if learned else []
    if analytical and coverage:
        kinds.append("analytical with --coverage: split-conformal")
    elif any(m.startswith("hierarchical") for m in analytical):  # --coverage 0 keeps its own
        kinds.append("hierarchical: its spread over memory levels, not a probability")
    banded = any(s["band_coverage"] is not None for s in summary.values())
    parts = []
    if with_interval:
        parts.append("interval: the method's own" + (f" ({'; '.join(kinds)})" if kinds else ""))
    if banded:
        parts.append("band: its measured 90 % error band (docs/accuracy.md)")
    if with_interval:
        parts.append(f"interval width: {width['interval_width']}")
    if banded:
        parts.append(f"band width: {width['band_width']}")
    return "; ".join(parts) or None


def _overlap_notes(shared: dict) -> list[str]:
    """What ``splits.overlap`` found, in words: the learned methods' errors on rows they were
    trained on say nothing of a new GPU or kernel, and on kernels and GPUs they never saw
    they extrapolate."""
    from ..units import first_of

    out = []
    n, total = shared["shared_rows"], shared["test_rows"]
    if n:
        out.append(f"{n} of {total} test rows were also in the training table: the learned "
                   "methods' errors there are training errors (--split gpu|config|kernel "
                   "keeps the test rows out)")
    for what, names in (("kernels", shared["new_kernels"]), ("GPUs", shared["new_gpus"])):
        if names:
            out.append(f"test {what} not in the training table: {first_of(names, 6)} (the "
                       "learned methods extrapolate to them)")
    return out


def _print_folds(per, methods) -> None:
    """MAPE per fold of a split (``Evaluation.per_fold()``, e.g. per held-out GPU): where a
    method loses."""
    folds = sorted({f for m in methods for f in per.get(m, {})})
    print_fitted(console(),
                 [METHOD, *((str(f).removeprefix("target "), "right", False) for f in folds)],
                 [[m, *(_cell("mape", per[m][f]["mape"]) if f in per.get(m, {}) else "-"
                        for f in folds)] for m in methods],
                 title="MAPE per fold (with --split gpu: per held-out GPU)")
    lead = _lead(per, methods)
    if lead:
        console().print(lead)


def _lead(per, methods) -> str:
    """How often the method of lowest pooled MAPE (``methods[0]``) is also lower on a fold
    than each other method, where both predicted it. A lead held on few of the held-out GPUs
    is one a new GPU can overturn: on the public tables two hybrids a point apart on the
    training GPUs were 7.5 points apart, the other way, on the held-out one
    (docs/results/learned.md, "What the choice on the training GPUs costs")."""
    top, parts = methods[0], []
    for m in methods[1:]:
        both = [f for f in per.get(top, {}) if f in per.get(m, {})
                and per[top][f]["mape"] is not None and per[m][f]["mape"] is not None]
        if both:
            wins = sum(per[top][f]["mape"] < per[m][f]["mape"] for f in both)
            parts.append(f"{m} on {wins} of {len(both)}")
    if not parts:
        return ""
    return f"{top} has the lowest MAPE; per fold it is lower than " + ", ".join(parts)


def _print_ranking(ev, short=None) -> None:
    """The ranking table; ``short``: the --shortlist result (``Evaluation.shortlist`` and its
    methods), one more row."""
    import pandas as pd
    r = ev.ranking()
    if not r["groups"].any():
        click.echo(f"ranking: {ev.why_no_ranking()}", err=True)
        return
    k = int(r["topk"].iloc[0])
    title = (f"Ranking the variants of each kernel on each target "
             f"({int(r['groups'].max())} kernel x problem x source x target groups)")
    caption = ("variants: the configurations of one kernel and problem (all of a "
               "kernel's where the table names no problem); loss: how much longer "
               "(measured on the target) the configuration predicted fastest, or the "
               f"best of the {k} predicted fastest, takes than the fastest; median over "
               "groups / the worst group")

    def pct(a, b):
        return "-" if pd.isna(a) else f"{a:.1f} / {b:.1f} %"

    rows = [[m, "-" if pd.isna(row["rank_corr"]) else f"{row['rank_corr']:.3f}",
             pct(row["top1_loss_pct"], row["top1_loss_max_pct"]),
             pct(row["topk_loss_pct"], row["topk_loss_max_pct"])]
            for m, row in r.sort_values("top1_loss_pct").iterrows()]
    if short:
        rows.append([f"shortlist ({', '.join(short['methods'])})", "-", "-",
                     pct(short["loss_pct"], short["loss_max_pct"])])
    print_fitted(console(), [METHOD, *((c, "right", False) for c in
                                       ("rank corr.", "top-1 loss", f"best-of-{k} loss"))],
                 rows, title=title, caption=caption)


def _print_gpu_choice(ev) -> None:
    """The ``Evaluation.gpu_choice`` table, best rank correlation first, the random pick
    last."""
    import pandas as pd

    from ..evaluate import RANDOM_PICK

    r = ev.gpu_choice()
    if RANDOM_PICK not in r.index:
        click.echo("gpu choice: no kernel configuration was measured on a source and 3 or more "
                   "other GPUs", err=True)
        return
    rnd = r.loc[RANDOM_PICK]
    worst = _most_confused(ev)
    title = (f"Choosing a GPU: {rnd['groups']} rankings (kernel configuration x source) "
             f"of {rnd['targets']} target GPUs each")
    caption = ("fastest chosen: how often the GPU predicted fastest is the fastest "
               "measured; loss: how much longer (measured) it takes than the fastest, "
               "median over rankings / the worst; most confused: the two GPUs ordered "
               "the wrong way round most often (a predicted tie counts half)")
    rows = []
    for m, row in pd.concat([r.drop(index=RANDOM_PICK).sort_values("rank_corr", ascending=False),
                             r.loc[[RANDOM_PICK]]]).iterrows():
        w = worst.get(m)
        rows.append([m, "-" if pd.isna(row["rank_corr"]) else f"{row['rank_corr']:.3f}",
                     f"{100 * row['top1_hit']:.0f} %",
                     f"{row['top1_loss_pct']:.1f} / {row['top1_loss_max_pct']:.1f} %",
                     "-" if w is None else f"{w['gpus'][0]} / {w['gpus'][1]} "
                                           f"{100 * w['wrong_share']:.0f} %"])
    print_fitted(console(), [METHOD, ("rank corr.", "right", False),
                             ("fastest chosen", "right", False), ("loss", "right", False),
                             ("most confused", "left", True)], rows, title=title,
                 caption=caption)
    unranked = [m for m in ev.pairs["method"].unique() if m not in r.index]
    if unranked:
        verb = "predicts" if len(unranked) == 1 else "predict"
        console().print(f"not in the table: {', '.join(map(str, unranked))}, which {verb} "
                        "every GPU of a ranking alike (no rank correlation)")


def _most_confused(ev) -> dict:
    """Method -> the two GPUs it orders the wrong way round most often, {"gpus": [a, b],
    "wrong_share": the fraction of the rankings of both that do, a predicted tie counting
    half} (``Evaluation.gpu_choice(by="pair")``): the text's "most confused" column and the
    JSON's ``most_confused``."""
    wrong = ev.gpu_choice(by="pair")["wrong"].reset_index()
    worst = wrong.loc[wrong.groupby("method")["wrong"].idxmax()]
    return {r.method: {"gpus": [r.gpu_a, r.gpu_b], "wrong_share": float(r.wrong)}
            for r in worst.itertuples()}


def _choice_json(choice: dict, confused: dict) -> dict:
    """``to_json``'s gpu_choice rows with its ``targets`` text ("3", "3-8") as the integers
    ``targets_min`` and ``targets_max``, and each method's ``most_confused`` (``None`` for the
    random pick)."""
    out = {}
    for m, row in choice.items():
        out[m] = {}
        for k, v in row.items():
            if k == "targets":
                low, _, high = str(v).partition("-")
                out[m].update(targets_min=int(low), targets_max=int(high or low))
            else:
                out[m][k] = v
        out[m]["most_confused"] = confused.get(m)
    return out


def _json_units(units: dict) -> dict:
    """``units`` as the command's JSON needs them: ``targets`` as ``_choice_json`` gives it."""
    out = {}
    for k, v in units.items():
        if k == "targets":
            out.update(targets_min=f"{v}, the fewest", targets_max=f"{v}, the most",
                       most_confused="the two GPUs a method orders the wrong way round most "
                                     "often; wrong_share: fraction of the rankings of both "
                                     "(a predicted tie counts half)")
        else:
            out[k] = v
    return out


def _check_gpus(table, names, option) -> None:
    """An error for a GPU of ``option`` that the table has no row of."""
    from ..catalog import resolve
    from ..errors import GpuprojError

    for n in names:
        gid = resolve(n).id
        if gid not in table.gpus:
            raise GpuprojError(f"{option} {n}: the table has no row measured on {gid} (it has "
                               f"{', '.join(table.gpus)})")


def _warn_beyond_roofline(table) -> None:
    """One warning line for the rows that ran faster than their GPU's datasheet roofline
    allows (``predict.beyond_roofline``): their errors are the counts' as much as a method's."""
    import warnings

    from ..predict import RooflineWarning, beyond_roofline

    said = beyond_roofline({g: table.on(g) for g in table.gpus})
    if said:
        warnings.warn(said, RooflineWarning, stacklevel=2)


# the first column of every table: a method's name, which may fold to fit a terminal
METHOD = ("method", "left", True)

# the printed table's column of each --json key
HEADERS = {"n": "pairs", "mape": "MAPE", "median_ape": "median APE", "gmre": "GMRE",
           "median_ratio": "median pred/true", "within_10": "within 10 %",
           "within_25": "within 25 %", "within_50": "within 50 %",
           "coverage": "interval coverage", "coverage_ci": "coverage 90 % CI",
           "interval_width": "interval width", "band_coverage": "band coverage",
           "band_width": "band width"}


def _cell(name, v, row=None):
    if v is None:
        return "-"
    if name == "n":
        return str(v)
    if name == "band_coverage" and row and row["band_n"] != row["n"]:
        # the band of a pair of architectures none was measured on is missing: say of how many
        return f"{100 * v:.1f} % of {row['band_n']}"
    if name == "coverage_ci":
        return f"{100 * v[0]:.0f}-{100 * v[1]:.0f} %"
    if name.startswith("within") or name.endswith("coverage"):
        return f"{100 * v:.1f} %"
    if name in ("median_ratio", "interval_width", "band_width"):
        return f"{v:.3f}"
    return f"{v:.1f} %"
