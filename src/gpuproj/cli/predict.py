"""``gpuproj predict``: project a profile to target GPUs (analytical methods and saved learned
models), or, with ``--loopy``, predict a loopy kernel's time from calibrated parameters."""

from __future__ import annotations

import sys

import click

from ..names import split_list, split_lists
from ..plots import MAX_PANELS
from ._common import (
    FOLDED_NAME_CHARS,
    WrittenPath,
    console,
    emit_json,
    format_option,
    load_profile,
    names_or_all,
    print_fitted,
    reader_option,
    report_skipped,
    source_option,
    trace_option,
)

# options that only make sense for one of the two inputs (profile / --loopy)
PROFILE_ONLY = ("source", "target", "method", "model_paths", "kernel", "fmt", "reader_options",
                "trace", "sass", "target_sass", "plot", "shortlist")
LOOPY_ONLY = ("params_files", "sizes")


@click.command()
@click.argument("profile", required=False, type=click.Path())
@source_option(several=True)
@click.option("--target", "-t",
              help="Target GPU(s), comma-separated (needed with a PROFILE): names as `gpuproj "
                   "gpus resolve` reads them, wildcards on catalog ids ('h100*,mi3*') or "
                   "'all'.")
@click.option("--method", "-m", multiple=True,
              help="Method(s) (repeat or comma-separate), or 'all'. Default: hierarchical-ext "
                   "(the most accurate on the public data, docs/accuracy.md); bandwidth for a "
                   "profile with times but no counts (a timeline); none when --model is "
                   "given.")
@click.option("--model", "model_paths", multiple=True, type=click.Path(dir_okay=False),
              help="A learned model saved by `gpuproj evaluate --train TABLE -m residual "
                   "--save-model PATH` (PATH or PATH.json; repeat or comma-separate): one more "
                   "method, with the model's own calibrated interval (unless it was trained "
                   "with --coverage 0).")
@click.option("--kernel", "-k", help="Only kernels whose name matches this regular expression.")
@format_option()
@reader_option()
@trace_option()
@click.option("--sass", type=click.Path(exists=True, dir_okay=False),
              help="CUDA source (.cu), cubin, fatbin or executable with code for the source's "
                   "and the NVIDIA targets' architectures, or a SASS listing (one "
                   "architecture): the targets' FLOPs from comparing their SASS "
                   "(docs/sass.md).")
@click.option("--target-sass", type=click.Path(exists=True, dir_okay=False),
              help="The targets' code (a binary with their architectures, or a listing of "
                   "one), where --sass is the source's alone: an Nsight Compute source page "
                   "(`ncu --page source --csv --print-source sass`), whose measured counts "
                   "the comparison carries to the targets.")
@click.option("--loopy", "loopy_file", type=click.Path(dir_okay=False),
              help="Instead of a PROFILE: a loopy kernel file (YAML/TOML, see "
                   "docs/calibrated.md) to predict with the calibrated models of --params.")
@click.option("--params", "params_files", multiple=True,
              help="With --loopy: parameter file(s) written by `gpuproj calibrate`, one per "
                   "device (repeat or comma-separate).")
@click.option("--sizes", multiple=True,
              help="With --loopy: size parameters, e.g. n=1024,m=512; repeat for several "
                   "sets (default: the sizes in the kernel file).")
@click.option("--shortlist", type=click.IntRange(min=1), metavar="K",
              help="For a table of tuned variants (one kernel, many configurations of one "
                   "problem; a profile's problem column, where it has one, says which): show "
                   "instead the K configurations of each kernel to measure on each target, "
                   "taken in turn from each method's predicted order (fastest first; methods "
                   "in the order given, --model ones last); --json adds key 'shortlist'.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: 'predictions' and the 'application' totals (times "
                   "in s), 'interval': whether each method has an interval of its own (else "
                   "low_s = high_s = time_s), 'limiters': what those named mean, the "
                   "assumptions, bands and skipped rows.")
@click.option("--csv", "as_csv", is_flag=True,
              help="Print the prediction table (or the --shortlist) as CSV.")
@click.option("--plot", type=WrittenPath(dir_okay=False),
              help=f"Also draw a picture here (.png, .svg, .pdf): per kernel and target, the "
                   f"projection bars; for more than {MAX_PANELS} targets, their application "
                   f"totals side by side, fastest first.")
def predict(profile, source, target, method, model_paths, kernel, fmt, reader_options, trace, sass,
            target_sass, loopy_file, params_files, sizes, shortlist, as_json, as_csv, plot):
    """Predict each kernel's time on one or more target GPUs from a PROFILE measured on a
    source GPU, with a 90 % band, the speed-up and the limiting resource, and the application
    total (time x launches summed over kernels), each method's targets fastest first.

    The 90 % band is how far the method has been off on real cross-GPU data, widening with
    how far the projection moves the time from the source's (docs/accuracy.md, "Error
    bands"); the note under the table says how often it held on data sources it was not
    fitted on (under 90 % on average, much less on some tables). Learned models (--model)
    give their own calibrated interval instead (90 % unless they were trained with another
    --coverage).

    A PROFILE measured on several GPUs (a sweep, a table of cross-GPU timings) predicts each
    target from several of them at once with --source a,b,c or --source all: the projections
    of each configuration, weighted by the inverse square of their band's log-width, which
    errs less than one source's (docs/accuracy.md, "Several source GPUs"); a target that is
    also a source is predicted from the others. Where the PROFILE also holds a target's own
    rows (the same kernel and configuration measured there), each prediction and total shows
    that measured time and its error.

    With --loopy KERNEL_FILE instead of a PROFILE: predict the loopy kernel's time from the
    calibrated cost models (Stevens & Kloeckner) whose parameters `gpuproj calibrate` wrote,
    one prediction per --params file (device) and --sizes set.

    \b
    Examples:
      gpuproj predict examples/rodinia-p100-nvprof.csv --target H100-SXM5-80GB,H200
      gpuproj predict run.ncu-rep --target a100-sxm4-80gb --method all --json
      gpuproj predict run.csv --target 'h100*,h200*,mi3*' --method hierarchical-ext
      gpuproj predict app.csv --source p100-pcie-16gb -t h100-sxm5-80gb  # kernel,time_s,dram_bytes
      gpuproj predict run.csv -t a100-sxm4-80gb --model models/residual --method hierarchical
      gpuproj predict gemm_4096.csv -s titan-rtx -t rtx-3090 -m same,hierarchical-ext --shortlist 5
      gpuproj predict ../shared/data/external/amaris-rodinia-nvprof/bpnn_adjust_weights_cuda_9gpus.csv.gz --source all -t h100-pcie-80gb
      gpuproj predict gemm_4096.csv --source all -t rtx-4090 -m same,hierarchical-ext --shortlist 5
      gpuproj predict --loopy kernel.yaml --params calibrated-matmul-a100.json --sizes n=1024
    """  # noqa: E501 (examples with the public tables' paths)
    given = {k for k, v in locals().items() if v not in (None, (), {}, False)}
    if as_json and as_csv:
        raise click.UsageError("--json or --csv: stdout takes one format")
    if loopy_file is not None:
        if profile is not None:
            raise click.UsageError("give either a PROFILE or --loopy KERNEL_FILE, not both")
        wrong = sorted(given & set(PROFILE_ONLY))
        if wrong:
            verb = "applies" if len(wrong) == 1 else "apply"
            raise click.UsageError(f"--loopy predicts from calibrated parameters; "
                                   f"{', '.join(_opt(w) for w in wrong)} {verb} to profiles")
        if not split_lists(params_files):
            raise click.UsageError("--loopy needs --params PARAMS.json (from `gpuproj calibrate`)")
        return _predict_loopy(loopy_file, split_lists(params_files), sizes, as_json, as_csv)
    if given & set(LOOPY_ONLY):
        raise click.UsageError("--params and --sizes go with --loopy KERNEL_FILE")
    if target_sass is not None and sass is None:
        raise click.UsageError("--target-sass goes with --sass (the source's code, e.g. an "
                               "Nsight Compute source page)")
    if profile is None:
        raise click.UsageError("give a PROFILE, or --loopy KERNEL_FILE --params PARAMS.json")
    if target is None:
        raise click.UsageError("Missing option '--target' / '-t'.")
    _predict_profile(profile, source, target, method, split_lists(model_paths), kernel, fmt,
                     {**reader_options, "trace": trace}, sass, target_sass, shortlist, as_json,
                     as_csv, plot)


def _opt(name: str) -> str:
    return {"model_paths": "--model", "fmt": "--format", "reader_options": "--reader-option"
            }.get(name, f"--{name}")


def _predict_profile(profile, source, target, method, model_paths, kernel, fmt, options, sass,
                     target_sass, shortlist, as_json, as_csv, plot):
    from .. import predict as api
    from ..catalog import select

    # several sources (or all of the file's GPUs) are combined; a file that names no GPU
    # takes its one source from --source
    sources = names_or_all(source)
    one = isinstance(sources, list) and len({g.id for g in select(sources)}) == 1
    table = load_profile(profile, fmt, sources[0] if one else None, options=options)
    methods = names_or_all(method)
    result = api.predict(table, source=sources, targets=split_list(target), methods=methods,
                         kernel=kernel, sass=sass, target_sass=target_sass, models=model_paths)
    if methods == "all" and not as_json:
        _report_left_out(table, result)
    report_skipped(result.skipped, quiet=as_json)
    if shortlist:
        result.shortlist(shortlist)  # a profile of no variants to choose among: before a plot
    if plot and len(result.targets) > MAX_PANELS:
        from ..plots.targets import targets_chart

        targets_chart(result, plot)
        drawn = f"the application totals of {len(result.targets)} targets"
    elif plot:
        from ..plots.projection import projection_bars

        d = projection_bars(result, plot)
        rows = len(result.table().drop_duplicates(["kernel", "config"]))
        drawn = f"{len(d.drop_duplicates(['kernel', 'config']))} of {rows} kernel rows"
    if plot and not as_json:  # on stderr as roofline's -o: stdout holds the table or CSV alone
        click.echo(f"wrote {plot} ({drawn})", err=True)
    if as_json:
        emit_json(result.to_json(shortlist=shortlist))
    elif as_csv:
        (result.shortlist(shortlist) if shortlist else result.table()).to_csv(sys.stdout,
                                                                              index=False)
    elif shortlist:
        print_shortlist(result, console(), shortlist)
    else:
        print_predictions(result, console())


# configurations of one kernel from which the printed table suggests a shortlist: more than an
# application launches (a few grid sizes), as many as a sweep or a tuning run measures
MANY_CONFIGS = 20


def print_predictions(result, con) -> None:
    """A ``PredictionSet`` as rich tables: per kernel and target with the notes and
    assumptions, then the application totals."""
    from rich.table import Table
    from rich.text import Text

    from ..views import (
        APPLICATION_TITLE,
        KERNEL_KEYS,
        RANGES,
        has_own_interval,
        limiter_note,
        readable_rows,
        text_columns,
    )

    d = result.with_problems(result.table())
    if d.empty:
        con.print("no predictions (see the skipped rows above)")
        return
    own = has_own_interval(d)
    # a target or method shared by every row goes in the title: a terminal's width is
    # better spent on the kernel names
    one = [k for k in ("target", "method") if d[k].nunique() == 1]
    title = (f"Projected from {result.source_label}"
             + (f" to {d['target'].iloc[0]}" if "target" in one else "")
             + (f" by {d['method'].iloc[0]}" if "method" in one else ""))
    keys = [k for k in KERNEL_KEYS if k not in one]
    d = readable_rows(d)
    totals = (text_columns(result.ranked_application(), ["method", "target"], own), None,
              APPLICATION_TITLE)
    # a terminal too narrow for a whole table shows the answers (times, speed-up,
    # limiter) without the ranges, which JSON and a wider window keep: rich would cut
    # every column to a few letters
    frames = _kernel_tables(d, keys, own, title, [])
    narrowed = any(_text_width(f) > con.width for f, _, _ in (*frames, totals))
    # still too wide, the kernel table is cut into one per target, then per target and
    # method, each named in its title: else rich folds four name columns to a few letters
    # each, a kernel's name over dozens of lines
    for by in ([], ["target"], ["target", "method"]):
        if by:
            frames = _kernel_tables(d, keys, own, title, [k for k in by if k in keys])
        if narrowed:
            frames = [(_without_ranges(f), e, t) for f, e, t in frames]
        if all(_text_width(f) <= con.width for f, _, _ in frames):
            break
    if narrowed:
        totals = (_without_ranges(totals[0]), *totals[1:])

    def table(frame, ends, title):
        # Text, not str: rich would read brackets in kernel names (f[i]) as markup
        t = Table(title=Text(title), show_lines=False)
        for c in frame.columns:
            left = c in (*KERNEL_KEYS, "limiter")
            # names fold onto more lines and a range breaks after its dash; a time, a
            # speed-up or an error is never cut
            whole = c not in (*KERNEL_KEYS, *RANGES)
            t.add_column(c, justify="left" if left else "right", no_wrap=whole,
                         overflow="fold", min_width=_widest(frame, c) if whole else None)
        for i, row in enumerate(frame.itertuples(index=False)):
            t.add_row(*map(Text, row), end_section=ends is not None and bool(ends[i]))
        con.print(t)

    def dim(text):
        con.print(text, style="dim", markup=False)

    # the kernels, what they rest on, then the answer, the totals, last: on a terminal
    # what stays on the screen
    for frame in frames:
        table(*frame)
    dim(result.bands_note(d))
    dim(limiter_note(d["limiter"]))
    if narrowed:
        dim("intervals and 90 % bands left out for the terminal's width: a wider window or "
            "--json shows them")
    lines = result.assumption_lines()
    if lines:
        if len(result.predictions) == 1:  # one method: its name once, not after every line
            (m,) = result.predictions
            head, lines = f"Assumptions of {m}:", [ln.removesuffix(f" ({m})") for ln in lines]
        else:
            head = "Assumptions (of the methods in brackets):"
        dim("\n".join([head] + ["  " + ln for ln in lines]))
    # variants of one problem, where the profile names the problems: a kernel measured at
    # many sizes is no tuned kernel
    keys = ["kernel", "target", "method", *(["problem"] if "problem" in d else [])]
    configs = d.groupby(keys)["config"].nunique()
    many = configs.groupby(level="kernel").max()
    many = many[many >= MANY_CONFIGS]
    if len(many):
        names = ", ".join(f"{k} ({n})" for k, n in many.items())
        dim(f"many configurations of {names}: the application total adds them all; if they "
            "are variants of a tuned kernel, --shortlist K lists the ones to measure on each "
            "target")
    table(*totals)
    for note in (result.partial_totals(), result.unbounded_totals()):
        if note:
            dim(note)


def _kernel_tables(d, keys: list, own: bool, title: str, by: list) -> list:
    """(text columns, section ends, title) of the kernel table ``d``, or of one table per
    value of the ``by`` keys (target, method), which leave the columns for the title."""
    from ..views import text_columns

    words = {"target": "to", "method": "by"}
    groups = d.groupby(by, sort=False) if by else [((), d)]
    out = []
    for values, g in groups:
        values = values if isinstance(values, tuple) else (values,)
        # a line under each kernel configuration where it has several rows (targets, methods)
        last = ~g.duplicated(["kernel", "config"], keep="last").to_numpy()
        if last.all():
            last[:] = False
        out.append((text_columns(g, [k for k in keys if k not in by], own), last,
                    title + "".join(f" {words[k]} {v}" for k, v in zip(by, values))))
    return out


def _without_ranges(frame):
    from ..views import RANGES

    return frame.drop(columns=list(RANGES), errors="ignore")


def _widest(frame, column: str) -> int:
    """The characters of ``column``'s longest cell or its header."""
    return max(map(len, (column, *frame[column])))


def _text_width(frame) -> int:
    """The narrowest ``frame`` prints as a rich table without cutting a number: the names
    folded to ``FOLDED_NAME_CHARS``, a range on two lines, every other cell whole (plus the
    borders and padding: 3 characters a column, 1 at the end)."""
    from ..views import KERNEL_KEYS, RANGES

    def least(c):
        n = _widest(frame, c)
        return (min(n, FOLDED_NAME_CHARS) if c in KERNEL_KEYS else
                max(len(c), n // 2 + 1) if c in RANGES else n)
    return sum(least(c) + 3 for c in frame.columns) + 1


def print_shortlist(result, con, k: int) -> None:
    """``result.shortlist(k)`` as one rich table per target."""
    from rich.text import Text

    from ..units import fmt_time

    d = result.shortlist(k)
    for target, g in d.groupby("target", sort=False):
        last = "sources" if result.combined else "source"
        problem = ("problem",) if "problem" in d else ()
        measured = ("measured",) if "measured_s" in g and g["measured_s"].notna().any() \
            else ()
        # the configurations are the answer: every column folds or stays whole, none is cut
        columns = [(c, "right" if c in ("rank", "its prediction", last, "measured") else "left",
                    c in ("kernel", "problem", "config", "proposed by"))
                   for c in ("kernel", *problem, "rank", "config", "proposed by",
                             "its prediction", last, *measured)]
        rows = [[Text(r.kernel), *(Text(r.problem) for _ in problem), str(r.rank),
                 Text(r.config), r.method, fmt_time(r.time_s),
                 str(r.sources) if result.combined else fmt_time(r.source_time_s),
                 *(fmt_time(r.measured_s) if r.measured_s == r.measured_s else "-"
                   for _ in measured)] for r in g.itertuples(index=False)]
        print_fitted(con, columns, rows, keys=len(columns),
                     title=f"Configurations to measure on {target} (shortlist of {k}, from "
                           f"{', '.join(result.predictions)} in turn)",
                     caption=_fastest_measured(result, g, target))


def _fastest_measured(result, short, target: str) -> str | None:
    """What the shortlist ``short`` of ``target`` would lose there, where the profile holds
    the target's times: per kernel (and problem), the fastest configuration measured on
    it against the best of the shortlist's."""
    import pandas as pd

    from ..units import fmt_time

    if "measured_s" not in short or result.measured is None:
        return None
    m = result.with_problems(result.measured[result.measured["target"] == target])
    keys = [c for c in ("kernel", "problem") if c in short]
    fastest = m.groupby(keys, sort=False)["measured_s"].agg(fastest="min", n="size")
    picked = short.groupby(keys, sort=False)["measured_s"].min().rename("picked")
    both = pd.concat([picked, fastest], axis=1, join="inner").dropna()
    lines = [f"{' '.join(map(str, k if isinstance(k, tuple) else (k,)))}: the shortlist's "
             f"best measured {fmt_time(r['picked'])}, the fastest of the {int(r['n'])} "
             f"configurations measured {fmt_time(r['fastest'])} "
             f"(+{100 * (r['picked'] / r['fastest'] - 1):.1f} %)"
             for k, r in both.iterrows()]
    return "\n".join(lines) or None


def _report_left_out(table, result) -> None:
    """One stderr line naming the methods ``--method all`` left out and the columns they lack
    (a profile with times only, such as ncu's default details page, suits the baselines
    alone)."""
    from ..evaluate import method_gaps

    gaps = [method_gaps(table.on(s)) for s in result.sources]
    left = {n: why for n, why in gaps[0].items() if all(g[n] for g in gaps)}
    if left:
        click.echo("gpuproj: --method all left out " + "; ".join(left.values()), err=True)


def _parse_sizes(text: str) -> dict:
    """'n=1024,m=512' -> {'n': 1024, 'm': 512}."""
    out = {}
    for item in split_list(text):
        name, eq, value = item.partition("=")
        try:
            if not eq or not name.strip():
                raise ValueError
            v = int(value)
        except ValueError:
            raise click.BadParameter(f"{item!r} is not NAME=INTEGER", param_hint="--sizes"
                                     ) from None
        if name.strip() in out:
            raise click.BadParameter(f"{name.strip()} given twice in {text!r} (one set of "
                                     "sizes per --sizes)", param_hint="--sizes")
        if abs(v) >= 2**62:  # isl's integers end at 2^63
            raise click.BadParameter(f"{item!r} is too large", param_hint="--sizes")
        out[name.strip()] = v
    return out


def _predict_loopy(kernel_file, params_files, sizes, as_json, as_csv):
    from ..calibrated import predict_loopy
    from ..calibrated.model import load_params

    size_sets = [_parse_sizes(s) for s in sizes] or [{}]
    rows = []
    for pf in params_files:
        _, _, record = load_params(pf)
        for s in size_sets:
            p = predict_loopy(kernel_file, pf, s)
            rows.append({"params_file": str(pf), "device": p["device"],
                         "model": record.get("model", {}).get("name", ""),
                         "kernel": p["kernel"], "sizes": p["sizes"], "time_s": p["time_s"],
                         "terms": p["terms"], "term_labels": p["term_labels"],
                         "features": p["features"]})
    if as_json:
        emit_json({"kernel_file": str(kernel_file), "predictions": rows})
        return
    if as_csv:
        import csv

        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["params_file", "device", "model", "kernel", "sizes", "time_s"])
        for r in rows:
            w.writerow([r["params_file"], r["device"], r["model"], r["kernel"],
                        _sizes_text(r["sizes"]), repr(r["time_s"])])
        return
    from rich.table import Table
    from rich.text import Text

    from ..units import fmt_time

    t = Table(title=Text(f"Calibrated prediction of {rows[0]['kernel']}"))
    for c, j in (("params", "left"), ("device", "left"), ("sizes", "left"),
                 ("predicted", "right"), ("largest term", "left")):
        t.add_column(c, justify=j)
    for r in rows:
        term, v = max(r["terms"].items(), key=lambda kv: kv[1])
        share = f" ({100 * v / r['time_s']:.0f} %)" if r["time_s"] > 0 else ""
        t.add_row(Text(r["params_file"]), Text(r["device"]), _sizes_text(r["sizes"]),
                  fmt_time(r["time_s"]), f"{r['term_labels'][term]}{share}")
    console().print(t)


def _sizes_text(sizes: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sizes.items())
