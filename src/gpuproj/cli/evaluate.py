"""``gpuproj evaluate``: every method's error on tables measured on several GPUs."""

from __future__ import annotations

import click

from ._common import emit_json, progress, report_skipped


def _multi(values):
    out = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out or None


@click.command()
@click.argument("tables", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--method", "-m", "methods", multiple=True,
              help="Method(s) to evaluate (repeat or comma-separate). Default: every method the "
                   "table's columns allow, baselines included.")
@click.option("--source", "sources", multiple=True, help="Only these source GPUs.")
@click.option("--target", "targets", multiple=True, help="Only these target GPUs.")
@click.option("--format", "fmt", help="Input format (default: detected from the file).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (methods, per_pair, "
              "per_kernel, skipped).")
@click.option("--plot", type=click.Path(file_okay=False), help="Write evaluation plots here.")
def evaluate(tables, methods, sources, targets, fmt, as_json, plot):
    """Predict, for every kernel configuration measured on two or more GPUs and every ordered
    pair of distinct GPUs (s, t), t's time from s's row alone, and compare with t's measurement.

    Metrics per method: n, MAPE, median APE, GMRE (geometric mean relative error), median
    pred/true, fraction within 10/25/50 %, interval coverage and width.

    \b
    Examples:
      gpuproj evaluate amaris-rodinia.csv.gz
      gpuproj evaluate gemm.csv.gz --method hierarchical,roofline --json
    """
    from ..evaluate import evaluate as run
    from ..profiles import load

    table = None
    for path in tables:
        t = load(path, format=fmt)
        table = t if table is None else table.concat(t)
    quiet = as_json
    ev = run(table, _multi(methods), _multi(sources), _multi(targets),
             progress=None if quiet else (lambda jobs: progress(jobs, description="evaluating")))
    report_skipped(ev.skipped, quiet=quiet)
    if plot:
        from ..plots.evaluation import evaluation_plots

        evaluation_plots(ev, plot)
    if as_json:
        emit_json(ev.to_json())
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{len(ev.pairs)} predictions over {table.df['gpu'].nunique()} GPUs")
    cols = ("n", "mape", "median_ape", "gmre", "median_ratio", "within_10", "within_25",
            "within_50", "coverage", "interval_width")
    t.add_column("method")
    for c in cols:
        t.add_column(c, justify="right")
    summary = ev.summary()
    for m, s in sorted(summary.items(), key=lambda kv: kv[1]["mape"] or 1e99):
        t.add_row(m, *[_cell(c, s[c]) for c in cols])
    Console().print(t)


def _cell(name, v):
    if v is None:
        return "-"
    if name == "n":
        return str(v)
    if name.startswith("within") or name == "coverage":
        return f"{100 * v:.1f} %"
    if name in ("median_ratio", "interval_width"):
        return f"{v:.3f}"
    return f"{v:.1f} %"
