"""``gpuproj sass``: look at a kernel's machine code across GPU architectures."""

from __future__ import annotations

import click

from ._common import console, emit_json


@click.group()
def sass():
    """Compare a kernel's machine code (SASS) across GPU architectures.

    \b
    Examples:
      gpuproj sass diff kernels.cu --arch sm_80,sm_90,sm_100
      gpuproj sass diff tests/data/sass/fixture_kernels-sm_90-sm_100.fatbin --arch sm_90,sm_100
    """


@sass.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--arch", "archs", default=None,
              help="Architectures, comma separated (sm_80,sm_90a,...; sm_90a and sm_100f are "
                   "targets of their own). Needed for a .cu file, a binary or a listing of "
                   "several architectures; other listings carry their own.")
@click.option("--kernel", "-k", "kernel_regex", default=None,
              help="Only kernels matching this regex.")
@click.option("--code/--no-code", default=False, help="Print the instructions of differing blocks.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def diff(inputs, archs, kernel_regex, code, as_json):
    """Instruction mix of each kernel per architecture, side by side, and the blocks whose
    floating-point or memory work differs from the first architecture.

    INPUTS: one CUDA source (.cu), cubin, fatbin or executable with --arch, or one SASS listing
    per architecture (nvdisasm text or -json, cuobjdump -sass, ncu source page CSV).

    \b
    Examples:
      gpuproj sass diff kernels.cu --arch sm_80,sm_90,sm_100
      gpuproj sass diff app.sm_70.sass app.sm_90.sass
    """
    from ..errors import InputError
    from ..names import split_list
    from ..profiles.table import kernel_pattern
    from ..sass import arch_name, load_sass, load_sass_archs
    from ..sass.report import arch_label, diff_programs

    if kernel_regex:  # said first, before the listings are read
        kernel_pattern(kernel_regex)
    if len(inputs) == 1 and archs:
        programs = load_sass_archs(inputs[0], archs)
    else:
        arch_list = split_list(archs)
        if arch_list and len(arch_list) != len(inputs):
            raise InputError(f"{len(inputs)} inputs but {len(arch_list)} architectures")
        programs = {}
        for k, path in enumerate(inputs):
            p = load_sass(path, arch_list[k] if arch_list else None)
            # the name given (sm_90a, as the listing cannot tell it from sm_90), else the
            # listing's own
            key = (arch_name(arch_list[k]) if arch_list else
                   arch_label(p.arch) if p.arch is not None else f"input{k + 1}")
            if key in programs:
                raise InputError(f"{key} again: {programs[key].origin} is for it too "
                                 "(one input per architecture)", path=path)
            programs[key] = p
    if len(programs) < 2:
        raise InputError("need at least two architectures to compare")
    result = diff_programs(programs, kernel_regex)
    if not result:
        raise InputError("no kernel is present in every input" +
                         (f" and matches '{kernel_regex}'" if kernel_regex else ""))
    if as_json:
        emit_json(result)
        return
    _print(result, code)


def _fmt(v):
    return f"{v:g}"


def _print(result, code):
    from rich.table import Table
    from rich.text import Text

    con = console()
    for name, r in result.items():
        archs = r["archs"]
        # kernel and subroutine names are the user's (operator[], a[/b]x, ns::smile::f): rich
        # Text, never read as markup or emoji codes. The heading goes above the table: a
        # table's title wraps at the table's width
        shown = name if r["declared"] == name else f"{r['declared']} ({name})"
        con.print(Text(f"{shown}: instructions per thread (static: loops once, slow paths not "
                       "taken)"))
        t = Table()
        t.add_column("class")
        for a in archs:
            t.add_column(a, justify="right")
        for col, per in r["mix"].items():
            vals = [per[a] for a in archs]
            style = "bold" if len(set(vals)) > 1 else None
            t.add_row(col, *[_fmt(v) for v in vals], style=style)
        t.add_row("FLOP fp32/fp64/fp16", *["/".join(_fmt(r["flops_per_thread"][a][k]) for k in
                                                   ("fp32_flops", "fp64_flops", "fp16_flops"))
                                           for a in archs], end_section=True)
        t.add_row("instructions in code", *[str(r["instructions"][a]) for a in archs])
        con.print(t)
        if r["blocks"]:
            con.print(f"blocks that differ from {archs[0]}:")
            for b in r["blocks"]:
                delta = {k: b["mix"].get(k, 0) - b["ref_mix"].get(k, 0)
                         for k in set(b["mix"]) | set(b["ref_mix"])}
                delta = ", ".join(f"{k} {v:+g}" for k, v in sorted(delta.items()) if v)
                vs = f"vs {b['ref_block']}" if b["ref_block"] else f"only on {b['arch']}"
                con.print(Text(f"  {b['arch']} {b['region']} block {b['block']} ({vs}): "
                               f"{delta}"))
                if code:
                    for line in b["ref_code"]:
                        con.print(Text(f"      - {line}"))
                    for line in b["code"]:
                        con.print(Text(f"      + {line}"))
        else:
            con.print("no block differs in floating-point or memory work")
        for n in r["notes"]:
            con.print(Text(f"  note: {n}", style="dim"))
        con.print()
