"""``gpuproj quadrant``: the quadrant-split view of GPUs and kernels (Konstantinidis &
Cotronis)."""

from __future__ import annotations

import click

from ..names import split_list
from ._common import (
    emit_json,
    format_option,
    load_profile,
    output_option,
    reader_option,
    report_dropped,
    report_skipped,
    source_option,
)


@click.command()
@click.option("--gpus", "-g", "gpu_names", required=True,
              help="GPUs to place, comma-separated (catalog names).")
@click.option("--profile", "-p", type=click.Path(),
              help="Profile whose kernels are drawn (intensity = FLOP / DRAM bytes).")
@source_option()
@click.option("--kernel", "-k", help="Only kernels whose name matches this regular expression.")
@click.option("--intensity", "intensities", type=float, multiple=True,
              help="Draw a kernel of this operational intensity (FLOP/byte); repeatable.")
@click.option("--precision", type=click.Choice(["fp64", "fp32", "fp16"]),
              help="Compute axis (default: the kernels' dominant type, else fp32).")
@click.option("--measured", is_flag=True, help="Use measured (sustained) catalog values where "
              "there are any, instead of datasheet peaks.")
@format_option()
@reader_option()
@output_option("Picture to write: .png, .svg or .pdf (needed unless --json).")
@click.option("--json", "as_json", is_flag=True, help="Print the points, intensities and the "
              "bound of each kernel on each GPU as JSON (with -o: as well as the picture).")
def quadrant(gpu_names, profile, source, kernel, intensities, precision, measured, fmt,
             reader_options, output, as_json):
    """Draw the quadrant-split view: each GPU as a point (DRAM bandwidth, compute throughput),
    each kernel as a half-line from the origin whose slope is its operational intensity. GPUs
    above a kernel's line are memory-bound for it, GPUs below compute-bound; dashed arrows end
    at each GPU's roofline performance for the first kernel.

    \b
    Examples:
      gpuproj quadrant -g a100-sxm4-80gb,h200 -p examples/rodinia-p100-nvprof.csv -o q.png
      gpuproj quadrant --gpus mi250x,h100-sxm5-80gb --intensity 0.25 --intensity 8 -o q.svg
    """
    from ..errors import InputError
    from ..plots import _style as st
    from ..plots import drawn_gpu
    from ..plots import quadrant as q

    if output is None and not as_json:
        raise click.UsageError("give -o FILE for the picture, or --json for the numbers")
    if output is not None:
        st.check_path(output)
    bad = [i for i in intensities if not (0 < i < float("inf"))]
    if bad:
        raise click.BadParameter(f"{bad[0]:g} is not a positive, finite FLOP/byte",
                                 param_hint="--intensity")
    if not profile and not intensities:
        raise InputError("give --profile or --intensity: the kernels to draw")
    alone = [o for o, v in (("--source", source), ("--kernel", kernel), ("--format", fmt),
                            ("--reader-option", reader_options)) if v and not profile]
    if alone:
        raise InputError(f"{' and '.join(alone)} without --profile: "
                         f"{'they select' if len(alone) > 1 else 'it selects'} among its rows")
    rows = None
    if profile:
        table = load_profile(profile, fmt, source, options=reader_options)
        report_skipped(table.skipped)  # on stderr with --json too: the JSON holds no rows
        rows = table.on(drawn_gpu(table, source).id).select(kernel)
    data = q.quadrant_data(split_list(gpu_names), rows,
                           kernels=[(f"I = {i:g} FLOP/B", i) for i in intensities],
                           precision=precision, which="measured" if measured else "peak")
    if output is not None:
        st.save(q.data_figure(data), output)
    report_dropped(data["skipped"], as_json)
    if as_json:
        emit_json(data)
    else:
        click.echo(f"wrote {output} ({len(data['gpus'])} GPU(s), {len(data['shown'])} of "
                   f"{len(data['kernels'])} kernel(s))", err=True)
