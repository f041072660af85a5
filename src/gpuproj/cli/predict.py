"""``gpuproj predict``: project a profile to target GPUs."""

from __future__ import annotations

import sys

import click

from ._common import emit_json, report_skipped, split_list



@click.command()
@click.argument("profile", type=click.Path(dir_okay=False))
@click.option("--source", "-s", help="GPU the profile was measured on (default: named in the file).")
@click.option("--target", "-t", required=True, help="Target GPU(s), comma-separated.")
@click.option("--method", "-m", default="hierarchical", show_default=True,
              help="Method name, comma-separated names, or 'all' (see `gpuproj predict --list`).")
@click.option("--kernel", "-k", help="Only kernels whose name matches this regular expression.")
@click.option("--format", "fmt", help="Input format (default: detected from the file).")
@click.option("--sass", type=click.Path(exists=True, dir_okay=False),
              help="CUDA source / cubin / executable: estimate target FLOPs by comparing SASS.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the prediction table as CSV.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Also draw the projection bars here.")
def predict(profile, source, target, method, kernel, fmt, sass, as_json, as_csv, plot):
    """Predict each kernel's time on one or more target GPUs from a profile measured on a
    source GPU, with an interval, the speed-up and the limiting resource, and the application
    total (time x launches summed over kernels).

    \b
    Examples:
      gpuproj predict profile.csv --target H100-SXM5-80GB,H200
      gpuproj predict run.ncu-rep --source V100 --target A100 --method all --json
    """
    from .. import predict as api
    from ..profiles import load

    table = load(profile, format=fmt)
    result = api.predict(table, source=source, targets=split_list(target),
                         methods=split_list(method) if method != "all" else "all",
                         kernel=kernel, sass=sass)
    report_skipped(result.skipped, quiet=as_json)
    if plot:
        from ..plots.projection import projection_bars

        projection_bars(result, plot, measured=table)
    if as_json:
        emit_json(result.to_json())
    elif as_csv:
        result.table().to_csv(sys.stdout, index=False)
    else:
        from rich.console import Console

        result.print(Console(width=None if sys.stdout.isatty() else 160))
