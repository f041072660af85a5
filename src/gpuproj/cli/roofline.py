"""``gpuproj roofline``: the hierarchical roofline of a profile's kernels, on the source GPU and
projected to a target."""

from __future__ import annotations

import click

from ._common import (
    emit_json,
    format_option,
    load_profile,
    output_option,
    reader_option,
    report_dropped,
    report_skipped,
    source_option,
    trace_option,
)


@click.command()
@click.argument("profile", type=click.Path())
@source_option("--gpu")
@click.option("--target", "-t", help="Also draw the rooflines of this GPU with the projected "
              "interval.")
@click.option("--kernel", "-k", help="Only kernels whose name matches this regular expression.")
@click.option("--max-kernels", type=click.IntRange(1, 50), default=4, show_default=True,
              help="Draw at most this many kernel rows (the longest-running); --json gives "
                   "every row, and with -o the rows drawn under 'shown'.")
@format_option()
@reader_option()
@trace_option()
@output_option("Picture to write: .png, .svg or .pdf (needed unless --json).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the ceilings, intensities and projections as JSON (with -o: as well "
                   "as the picture).")
def roofline(profile, source, target, kernel, max_kernels, fmt, reader_options, trace, output,
             as_json):
    """Draw rooflines with kernel-specific ceilings (Van Lanker et al., Fig. 2): DRAM, L2 and L1
    bandwidth ceilings of each kernel (Eqs. 6-8), the shared-memory bandwidth, the FMA and
    ADD/MUL peaks, the kernel's instruction-mix (Eq. 2) and warp-usage (Eq. 3) ceilings, and the
    kernel as one point per memory level at its operational intensity (Eq. 10). With --target,
    a second panel shows the target's ceilings and the projected interval (Eq. 9).

    \b
    Examples:
      gpuproj roofline examples/rodinia-p100-nvprof.csv -o roofline.png
      gpuproj roofline examples/rodinia-p100-nvprof.csv -t h200 -k calculate_temp -o rl.svg
    """
    from ..plots import drawn_gpu
    from ..plots.roofline import roofline as draw
    from ..plots.roofline import roofline_data

    if output is None and not as_json:
        raise click.UsageError("give -o FILE for the picture, or --json for the numbers")
    table = load_profile(profile, fmt, source, trace, reader_options)
    report_skipped(table.skipped)  # on stderr with --json too: the JSON lists only the plot's
    if output is None:
        data = roofline_data(table, drawn_gpu(table, source), target, kernel)
    else:
        data = draw(table, output, drawn_gpu(table, source), target, kernel,
                    max_kernels=max_kernels)
    report_dropped(data["skipped"], as_json)
    if as_json:
        emit_json(data)
    else:
        click.echo(f"wrote {output} ({len(data['shown'])} of {len(data['kernels'])} kernel rows)",
                   err=True)
