"""``gpuproj report``: one self-contained HTML file with a projection's tables and pictures."""

from __future__ import annotations

import click

from ..names import split_list
from ._common import (
    format_option,
    load_profile,
    names_or_all,
    output_option,
    progress,
    reader_option,
    report_skipped,
    source_option,
    trace_option,
)


@click.command()
@click.argument("profile", type=click.Path())
@source_option()
@click.option("--target", "-t", required=True, help="Target GPU(s), comma-separated.")
@click.option("--method", "-m", multiple=True,
              help="Method(s) (repeat or comma-separate), or 'all'. Default: hierarchical-ext, "
                   "as `gpuproj predict`.")
@click.option("--kernel", "-k", help="Only kernels whose name matches this regular expression.")
@format_option()
@reader_option()
@trace_option()
@click.option("--max-kernels", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Kernel rows drawn in each roofline picture (the longest-running).")
@click.option("--title", help="Title of the page.")
@output_option("HTML file to write (needed).")
def report(profile, source, target, method, kernel, fmt, reader_options, trace, max_kernels,
           title, output):
    """Write one self-contained HTML file (pictures embedded, nothing fetched from the network):
    the prediction table, the application total, the projection bars, the rooflines of source
    and targets, the quadrant-split view, the assumptions, and the catalog values used (each
    GPU's note, peak and measured values with their sources). The numbers are those of
    `gpuproj predict --json` for the same arguments (report takes the analytical methods and
    one source GPU: no --model, --sass or --source all).

    \b
    Examples:
      gpuproj report examples/rodinia-p100-nvprof.csv --target a100-sxm4-80gb,h200 -o report.html
      gpuproj report run.csv --target H200 --method all -o run.html
    """
    from ..plots import drawn_gpu
    from ..plots._style import short
    from ..predict import predict
    from ..report import write_report

    if output is None:  # said as roofline says it, where click's would name the option alone
        raise click.UsageError("give -o FILE: the HTML file to write")
    if source is not None and ("," in source or source == "all"):
        raise click.BadParameter("a report draws one source's profile: give one GPU (`gpuproj "
                                 "predict --source a,b` combines several)",
                                 param_hint="--source")
    table = load_profile(profile, fmt, source, trace, reader_options)
    if source is None:
        # a profile of several GPUs: say that a report takes one (predict's message offers
        # 'all', which a report refuses)
        drawn_gpu(table)
    methods = names_or_all(method)
    result = predict(table, source=source, targets=split_list(target), methods=methods,
                     kernel=kernel)
    report_skipped(result.skipped)
    path = write_report(output, table, result.source, result.targets, kernel=kernel,
                        max_kernels=max_kernels, title=title, result=result, progress=progress)
    n = len(result.table())
    click.echo(f"wrote {short(str(path), 80)} ({n} prediction(s), "
               f"{path.stat().st_size / 1e6:.1f} MB)", err=True)
