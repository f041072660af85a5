"""``gpuproj gpus``: list, show and resolve GPUs of the catalog."""

from __future__ import annotations

import math

import click

from ..names import split_list
from ._common import console, emit_json, print_fitted


def _catalog():
    from ..catalog import load_catalog

    return load_catalog()


def _fmt(x, scale, digits=1):
    """``x / scale`` with ``digits`` decimals, or with 3 significant digits if ``digits`` is
    None (sizes: 0.5 MiB and 141 GiB); '' when missing."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x / scale:.3g}" if digits is None else f"{x / scale:.{digits}f}"


def _num(x):
    """JSON has no NaN: a missing number is null."""
    return None if isinstance(x, float) and math.isnan(x) else x


def _text(s):
    """User text (a GPU's name, a source) as a rich ``Text``: printed as written, where a plain
    string's ``[red]`` would be read as markup and an unmatched ``[/bold]`` raise."""
    from rich.text import Text

    return Text(str(s))


def _row(g) -> dict:
    """The numbers `gpus list` shows, in SI units (for --json); missing numbers are None, counts
    and sizes ints."""
    from ..catalog import whole_number

    return {k: _num(whole_number(k, v)) for k, v in _row_raw(g).items()}


def _row_raw(g) -> dict:
    return {"id": g.id, "vendor": g.vendor, "name": g.name, "architecture": g.architecture,
            "isa": g.isa, "sm_count": g.value("sm_count"),
            "fp64_peak_flops_per_s": g.peak("fp64_fma_flops_per_s"),
            "fp32_peak_flops_per_s": g.peak("fp32_fma_flops_per_s"),
            "dram_bw_peak_bytes_per_s": g.peak("dram_bw_bytes_per_s"),
            "dram_bw_measured_bytes_per_s": g.measured("dram_bw_bytes_per_s"),
            "memory_size_bytes": g.value("memory_size_bytes"),
            "l2_size_bytes": g.value("l2_size_bytes")}


@click.group()
def gpus():
    """List, show and resolve GPUs of the catalog (bundled files, $GPUPROJ_GPU_PATH and
    ~/.config/gpuproj/gpus).

    \b
    Examples:
      gpuproj gpus list --vendor AMD
      gpuproj gpus show "NVIDIA A100-SXM4-80GB"
      gpuproj gpus resolve "Tesla V100-PCIE-32GB"
    """


@gpus.command("list")
@click.argument("names", required=False)
@click.option("--vendor", help="Only GPUs of this vendor (NVIDIA, AMD, Intel; any case).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list (SI units).")
def list_(names, vendor, as_json):
    """One line per GPU: id, name, architecture, ISA, SMs, FP64 and FP32 peaks, DRAM peak and
    measured bandwidth, memory and L2 sizes (GiB, MiB).

    NAMES (optional, comma-separated) selects GPUs as `predict --target` does: names,
    wildcards on ids ('h100*,mi3*') or 'all'.

    \b
    Examples:
      gpuproj gpus list --vendor AMD
      gpuproj gpus list 'h100*,h200*,mi3*'
    """
    from ..catalog import select
    from ..errors import GpuprojError

    if names and not split_list(names):
        raise GpuprojError(f"NAMES '{names}' holds no GPU name (give names, wildcards on ids "
                           "or 'all')")
    gs = select(split_list(names)) if names else list(_catalog())
    gs = [g for g in gs if not vendor or g.vendor.lower() == vendor.lower()]
    if not gs:
        known = sorted({g.vendor for g in _catalog()})
        raise GpuprojError(f"no GPU of vendor '{vendor}' in the catalog (vendors: "
                           f"{', '.join(known)})" if not names else
                           f"no GPU of vendor '{vendor}' among {names}")
    if as_json:
        emit_json([_row(g) for g in gs])
        return
    # the id stays whole (it is what --target takes), the names fold
    columns = [("id", "left", False), ("name", "left", True), ("arch", "left", True),
               ("isa", "left", True), *((c, "right", False) for c in (
                   "SMs", "FP64 TFLOP/s", "FP32 TFLOP/s", "DRAM TB/s", "DRAM meas. TB/s",
                   "memory GiB", "L2 MiB"))]
    rows = []
    for g in gs:
        r = _row(g)
        rows.append([*map(_text, (g.id, g.name, g.architecture, g.isa)),
                     _fmt(r["sm_count"], 1, 0), _fmt(r["fp64_peak_flops_per_s"], 1e12),
                     _fmt(r["fp32_peak_flops_per_s"], 1e12),
                     _fmt(r["dram_bw_peak_bytes_per_s"], 1e12, 2),
                     _fmt(r["dram_bw_measured_bytes_per_s"], 1e12, 2),
                     _fmt(r["memory_size_bytes"], 2**30, None),
                     _fmt(r["l2_size_bytes"], 2**20, None)])
    print_fitted(console(), columns, rows, box=None, header_style="bold")


@gpus.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the GPU's description as JSON.")
def show(name, as_json):
    """Every field of one GPU, peak next to measured, each with its source (values in the
    units people read them in; --json gives them in SI).

    NAME is what `gpuproj gpus resolve` reads: an id, a name or alias, or the path of a GPU
    YAML file, such as one written for your own GPU (docs/catalog.md).

    \b
    Examples:
      gpuproj gpus show "NVIDIA A100-SXM4-80GB"
      gpuproj gpus show mi250x --json
      gpuproj gpus show src/gpuproj/catalog/gpus/h100-sxm5-80gb.yaml   # a GPU file
    """
    from ..catalog import resolve
    from ..units import readable

    g = resolve(name)
    if as_json:
        emit_json(g.to_dict())
        return
    from rich.table import Table
    from rich.text import Text

    con = console()
    con.print(Text.assemble((g.name, "bold"), f"  ({g.id}, {g.vendor} {g.architecture}, {g.isa}"
                            f"{', ' + str(g.release_year) if g.release_year else ''}"
                            f"{', ' + g.memory_type if g.memory_type else ''})"))
    if g.aliases:
        con.print(_text("aliases: " + ", ".join(g.aliases)))
    for label, text in (("runtime device", g.runtime_device), ("notes", g.notes)):
        if text:
            con.print(_text(f"{label}: {text}"))
    if g.path:
        con.print(_text(f"file: {g.path}"))
    vt = Table(title="values", box=None, header_style="bold", title_justify="left")
    for col in ("field", "value", "kind", "source"):
        vt.add_column(col, overflow="fold")
    for k, e in g.values.items():
        values = e.value if isinstance(e.value, list) else [e.value]
        vt.add_row(k, ", ".join(readable(k, x) for x in values), e.kind, _text(e.source))
    con.print(vt)
    pt = Table(title="throughputs (peak | measured)", box=None, header_style="bold",
               title_justify="left")
    for col in ("field", "peak", "measured", "meas/peak", "sources"):
        pt.add_column(col, overflow="fold")
    for k in [k for k in _throughput_order() if k in g.peaks or k in g.measureds]:
        p, m = g.peaks.get(k), g.measureds.get(k)
        ratio = f"{m.value / p.value:.2f}" if p and m and p.value else ""
        src = "\n".join(s for s in (f"peak ({p.kind}): {p.source}" if p else "",
                                    f"measured: {m.source}" if m else "") if s)
        pt.add_row(k, readable(k, p.value) if p else "", readable(k, m.value) if m else "",
                   ratio, _text(src))
    con.print(pt)


def _throughput_order():
    from ..catalog.schema import THROUGHPUT_FIELDS

    return list(THROUGHPUT_FIELDS)


@gpus.command("resolve")
@click.argument("name")
def resolve_(name):
    """Print the catalog id that NAME means (exit 2 when unknown or ambiguous): an id, a name
    or alias in any spelling runtimes print, an ISA that only one GPU has, or the path of a GPU
    YAML file.

    \b
    Examples:
      gpuproj gpus resolve "Tesla V100-PCIE-32GB"
      gpuproj gpus resolve "NVIDIA GeForce RTX 3060 Laptop GPU"
      gpuproj gpus resolve src/gpuproj/catalog/gpus/h100-sxm5-80gb.yaml
    """
    from ..catalog import resolve

    click.echo(resolve(name).id)
