"""``gpuproj bench``: measure a device's ceilings and write its catalog file plus raw samples."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

from ..errors import AmbiguousGPUError, GpuprojError, InputError, UnknownGPUError
from ..files import write_text
from ..names import split_list
from ..units import with_prefix
from ._common import WrittenPath, check_writable, emit_json, output_option

UNIT_TEXT = {"flops_per_s": "FLOP/s", "ops_per_s": "op/s", "bytes_per_s": "B/s",
             "inst_per_s": "inst/s", "s": "s"}


def _resolve_name(name):
    """The GPU ``--gpu`` names: a catalog GPU, or the GPU file ``name`` is the path of
    (docs/catalog.md), whose entry the measurements update as a catalog GPU's; None for a
    name the catalog does not know (a new GPU). A name several GPUs share is an error (a new
    entry would take it over), and so are a path that is no GPU file and a pattern (``h100*``
    names no GPU, nor a new one). Resolved before anything is measured."""
    from ..catalog import names_a_file, resolve

    try:
        return resolve(name)
    except AmbiguousGPUError:
        raise
    except UnknownGPUError:
        # no such file, or not a GPU file, or a pattern: no name for a new GPU
        if names_a_file(name) or any(c in name for c in "*?["):
            raise
        return None


def _is_bundled_gpu(gpu) -> bool:
    """Whether ``gpu`` (None: none) has the id of a GPU gpuproj ships."""
    from ..catalog import bundled_catalog

    return gpu is not None and gpu.id in {g.id for g in bundled_catalog()}


def _resolve_device(gpu, gpu_name, device_name):
    """(catalog GPU, warning or None, whether a new GPU file may take ``device_name`` as an
    alias) for a device that reports ``device_name``, ``gpu`` being what ``--gpu gpu_name``
    resolved to. Without ``--gpu``, a name several catalog GPUs share is an error listing them:
    the measurements are one GPU's, and only the user knows which."""
    from ..catalog import Catalog, load_catalog

    try:
        dev = load_catalog().resolve(device_name)
        known = f"which the catalog knows as {dev.id}"
    except AmbiguousGPUError as e:
        if gpu_name is None:
            raise GpuprojError(f"{e}: name it with --gpu") from None
        dev, known = None, "which several catalog GPUs answer to"
    except UnknownGPUError:
        dev, known = None, None
    if gpu_name is None:
        return dev, None, True
    if gpu is None:  # a new GPU file: another GPU's name would become ambiguous everywhere
        if known is None:
            return None, None, True
        return None, (f"the device reports '{device_name}', {known}: the new GPU file does "
                      "not take it as an alias"), False
    # a GPU file named by its path answers to names the catalog need not know
    if (dev is not None and dev.id == gpu.id) or (known is None
                                                  and device_name in Catalog([gpu])):
        return gpu, None, False
    return gpu, (f"the device reports '{device_name}', "
                 f"{known or 'which the catalog does not know'}: check that the measurements "
                 f"are {gpu.id}'s"), False


def _rows(raw, gpu, flags) -> list[dict]:
    """One row per benchmark: ``name``, ``value`` in ``unit``, the datasheet ``peak`` of the
    field it measures (in the same unit; None where none is known), ``of_peak`` (fraction),
    ``spread`` (IQR / median) and the problems ``flags`` names for it: the text table and the
    JSON's ``benchmarks``."""
    from ..bench.entry import FIELD_MAP

    # the field in the benchmark's own unit: smem_read is a load rate (ldst_inst_per_s); its
    # bytes (shared_bw_bytes_per_s) against a peak in bytes read as 25 % on an H100 at 99 %
    by_bench = {n: f for f, (names, how) in FIELD_MAP.items() if not how.startswith("rate:")
                for n in names}
    flagged = {}
    for f in flags:
        flagged.setdefault(f.get("name") or f.get("field"), []).append(f["problem"])
    rows = []
    for m in raw["measurements"]:
        fld = by_bench.get(m["name"])
        peak = gpu.peak(fld) if (gpu is not None and fld) else float("nan")
        known = not math.isnan(peak) and peak > 0
        # a failed result check names a benchmark or its group
        probs = (flagged.get(m["name"], []) + flagged.get(m["group"], [])
                 + (flagged.get(fld, []) if fld else []))
        rows.append({"name": m["name"], "value": m["value"], "unit": m["unit"],
                     "peak": peak if known else None,
                     "of_peak": m["value"] / peak if known else None,
                     "spread": m["summary"]["spread"], "flags": sorted(set(probs))})
    return rows


def _table(rows) -> list[tuple]:
    """``_rows`` as the text table's cells."""
    from ..bench.entry import percent

    return [(r["name"], with_prefix(r["value"], UNIT_TEXT.get(r["unit"], r["unit"]), small=True),
             with_prefix(float("nan") if r["peak"] is None else r["peak"],
                         UNIT_TEXT.get(r["unit"], ""), small=True),
             "-" if r["of_peak"] is None else percent(r["of_peak"]),
             percent(r["spread"], 1), ",".join(r["flags"])) for r in rows]


@click.command("bench")
@click.option("--gpu", "gpu_name", metavar="NAME",
              help="The catalog GPU this device is (id, name or alias), or a GPU file's path: "
                   "its entry is written with the new measurements. A name the catalog does not "
                   "know starts a new GPU file with that name. Default: the device's name.")
@output_option("Catalog YAML file to write (default: <id>.yaml here). Load it with "
               "GPUPROJ_GPU_PATH=<its folder> or `--target FILE`.")
@click.option("--raw", "raw_out", type=WrittenPath(dir_okay=False), metavar="FILE",
              help="Raw result with every sample (default: FILE with suffix .json).")
@click.option("--backend", type=click.Choice(["auto", "cuda", "opencl"]), default="auto",
              show_default=True, help="auto: CUDA if an NVIDIA driver is present, else OpenCL.")
@click.option("--device", metavar="N|TEXT", help="Device index or part of its name.")
@click.option("--quick", is_flag=True,
              help="Small sizes and few repetitions (CI, CPU devices).")
@click.option("--only", metavar="GROUPS",
              help="Comma-separated groups: compute, stream, cache, shared, mixbench, overhead, "
                   "latency (default: all).")
@click.option("--reps", type=click.IntRange(3, 1000), help="Timed repetitions per measurement.")
@click.option("--plots", "plots_dir", type=WrittenPath(file_okay=False), metavar="DIR",
              help="Also draw the measured roofline, the working-set sweep and the "
                   "quadrant-split view into DIR.")
@click.option("--from-raw", "from_raw", type=click.Path(exists=True, dir_okay=False),
              metavar="FILE", help="Measure nothing: write the catalog file (and plots) from an "
                                   "earlier raw result.")
@click.option("--list-devices", is_flag=True, help="List the devices each backend sees and exit.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
def bench(gpu_name, output, raw_out, backend, device, quick, only, reps, plots_dir, from_raw,
          list_devices, as_json, quiet):
    """Measure a GPU's ceilings with micro-benchmarks and write its catalog entry.

    \b
    Examples:
      gpuproj bench --gpu h100-sxm5-80gb -o h100.yaml          # CUDA, full sizes (seconds)
      gpuproj bench --backend opencl --quick -o cpu.yaml
      gpuproj bench --from-raw h100.json --gpu h100-sxm5-80gb -o h100.yaml --plots plots/
    """
    from ..bench import PRESETS, open_backend, run_suite
    from ..bench.entry import (
        PLOTTED_SWEEPS,
        check,
        check_plottable,
        dump_yaml,
        gpu_file,
        measured_values,
        read_result,
        slug,
    )
    from ..bench.sizes import with_overrides

    if list_devices:
        given = _options_given(exclude="list_devices")
        if given:
            raise click.UsageError(f"--list-devices only lists the devices: {', '.join(given)} "
                                   f"{'does' if len(given) == 1 else 'do'} not apply with it")
        _list_devices()
        return
    log = (lambda msg: None) if quiet else (lambda msg: click.echo(f"bench: {msg}", err=True))
    # everything that can be refused is refused before minutes of measuring
    gpu = _resolve_name(gpu_name) if gpu_name else None
    if output:  # the default name waits for the GPU's id
        _refuse_same_paths(Path(output), Path(raw_out or from_raw or Path(output).with_suffix(
            ".json")), from_raw, raw_out, gpu)
        # the catalog reads GPU files by these names only: another is a file nothing loads
        from ..catalog import is_yaml

        if not is_yaml(output):
            raise GpuprojError(f"-o {output}: the GPU file is YAML: name the file .yaml or .yml")
    if from_raw:
        given = _measuring_options_given()
        if given:
            raise click.UsageError(f"--from-raw measures nothing: {', '.join(given)} "
                                   f"{'does' if len(given) == 1 else 'do'} not apply with it")
        raw = read_result(from_raw)
        device_name, device_type = raw["device"]["name"], raw["device"]["device_type"]
    else:
        groups = split_list(only) if only is not None else None
        if groups == []:
            raise click.UsageError("--only: no group given")
        lacking = [(p, g) for p, g in PLOTTED_SWEEPS.values() if g not in groups] if groups else []
        if plots_dir and lacking:
            raise click.UsageError(
                "--plots draws " + " and ".join(f"{p} from the {g} group" for p, g in lacking)
                + f": add {','.join(g for _, g in lacking)} to --only")
        sizes = with_overrides(PRESETS["quick" if quick else "full"], reps=reps)
        b = open_backend(backend, device)
        device_name, device_type = b.info.name, b.info.device_type
    try:
        if device_type == "CPU" and _is_bundled_gpu(gpu):
            # `--backend auto` falls back to an OpenCL CPU where no GPU is found: its
            # rates would replace the GPU's measured ones (a CPU's own file, from an earlier
            # run, may be named)
            raise GpuprojError(
                f"the device is a CPU ('{device_name}'), not {gpu.id}: pick the GPU with "
                "--device (--list-devices shows them), or leave out --gpu to write the CPU's "
                "own file")
        gpu, warn, alias = _resolve_device(gpu, gpu_name, device_name)
        if warn and not from_raw:  # said before the minutes of measuring, and again after
            click.echo(f"gpuproj: warning: {warn}", err=True)
        file_id = gpu.id if gpu is not None else slug(gpu_name or device_name)
        out_path = Path(output) if output else Path(f"{file_id}.yaml")
        raw_path = Path(raw_out or from_raw or out_path.with_suffix(".json"))
        _refuse_same_paths(out_path, raw_path, from_raw, raw_out, gpu)
        check_writable(out_path, "-o" if output else None)
        if not from_raw or raw_out:
            check_writable(raw_path, "--raw" if raw_out else None)
        if plots_dir:  # the first picture drawn: its folder as the others'
            check_writable(Path(plots_dir) / "roofline.png", "--plots")
        if not from_raw:
            log(f"{b.info.name} ({b.name}, {b.info.compute_units} compute units), "
                f"{sizes.name} sizes")
            raw = run_suite(b, sizes, only=groups, log=log)
    finally:
        if not from_raw:
            b.close()
    if warn:
        click.echo(f"gpuproj: warning: {warn}", err=True)
    flags = check(raw, gpu)
    raw["flags"] = flags
    wrote_raw = not from_raw or raw_out
    if wrote_raw:  # first: the samples outlive a catalog file or pictures that cannot be made
        write_text(raw_path, json.dumps(raw, indent=1))
    if plots_dir:  # before the catalog file and the pictures are written
        try:
            check_plottable(raw, from_raw)
        except InputError as e:
            if not wrote_raw:
                raise
            raise GpuprojError(f"{e}; the samples are in {raw_path}") from None
    if not measured_values(raw):
        kept = f"; the samples are in {raw_path}" if wrote_raw else ""
        raise GpuprojError("no measurement passed its result check, nothing to write to "
                           f"{out_path}: {'; '.join(f['text'] for f in flags)}{kept}")
    data = gpu_file(raw, gpu, name=gpu_name, device_alias=alias)
    text = dump_yaml(data)
    from ..catalog import parse_gpu
    from ..files import parse_yaml

    # what is written must load, checked before: a file that does not load would stop every
    # command once on the GPU path, and -o may name the --gpu file, updated in place
    try:
        written = parse_gpu(parse_yaml(text, out_path), out_path)
    except InputError as e:
        # a value outside its plausible range (a broken timer): said of the file not written
        kept = f"; the samples are in {raw_path}" if wrote_raw else ""
        raise GpuprojError(f"{e} (nothing written to it{kept})") from None
    write_text(out_path, text)
    plots = []
    if plots_dir:
        plots = _plots(raw, gpu, written, Path(plots_dir))
    if gpu is None and gpu_name is None:
        click.echo(f"(the catalog does not know '{device_name}'; the file is a new GPU "
                   f"with id {data['id']})", err=True)
    if as_json:
        emit_json({"gpu_file": str(out_path), "raw": str(raw_path), "id": data["id"],
                   "measured": data["measured"], "benchmarks": _rows(raw, gpu, flags),
                   "flags": flags, "elapsed_s": raw["elapsed_s"],
                   "plots": [str(p) for p in plots]})
        return
    rows = _table(_rows(raw, gpu, flags))
    head = ("benchmark", "measured", "peak", "of peak", "spread", "flags")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        click.echo("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    for f in flags:
        click.echo(f"gpuproj: warning: {f['text']}", err=True)
    also = f" and {raw_path}" if wrote_raw else ""
    click.echo(f"wrote {out_path} ({data['id']}, {len(data['measured'])} measured values)"
               f"{also}; suite took {raw['elapsed_s']:.1f} s")
    for p in plots:
        click.echo(f"wrote {p}")


def _refuse_same_paths(out_path: Path, raw_path: Path, from_raw, raw_out, gpu=None) -> None:
    """One-line error where the catalog file would overwrite the raw result it is written
    with, or either would overwrite an input: the ``--from-raw`` result or the file of the
    ``--gpu`` GPU (which the catalog file may update in place: it is written from it)."""
    def same(a, b):
        return Path(a).resolve() == Path(b).resolve()

    writes_raw = not from_raw or raw_out
    if from_raw and same(out_path, from_raw):
        raise GpuprojError(f"-o {out_path} would overwrite the --from-raw input")
    if from_raw and raw_out and same(raw_out, from_raw):
        raise GpuprojError(f"--raw {raw_out} would overwrite the --from-raw input")
    if writes_raw and same(out_path, raw_path):
        how = "--raw" if raw_out else "the raw result's default name (-o with .json)"
        raise GpuprojError(f"-o {out_path} and {how} name the same file: give the catalog "
                           "file a .yaml name or --raw another file")
    if writes_raw and gpu is not None and gpu.path is not None and same(raw_path, gpu.path):
        how = f"--raw {raw_out}" if raw_out else f"the raw result's default name ({raw_path})"
        raise GpuprojError(f"{how} would overwrite the --gpu file {gpu.path}")


def _measuring_options_given() -> list[str]:
    """The options of the command line that choose what a run measures."""
    return [o for o in _options_given() if o in ("--backend", "--device", "--quick", "--only",
                                                  "--reps")]


def _options_given(exclude: str = "") -> list[str]:
    """The options given on the command line, as ``--name`` (but ``exclude``)."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    return [max(param.opts, key=len) for param in ctx.command.params
            if param.name != exclude
            and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE]


def _plots(raw, gpu, measured_gpu, d: Path):
    from ..bench.entry import group_of
    from ..plots.mixbench import plot_roofline, plot_working_set
    from ..plots.quadrant import MAX_KERNELS, plot_quadrant, points_from_gpus

    # check_plottable has seen both sweeps
    out = [plot_roofline(raw, d / "roofline.png", gpu=gpu),
           plot_working_set(raw, d / "working_set.png")]
    # what was measured, beside the datasheet's (one call would draw the one GPU id once)
    pts, lacking = points_from_gpus([measured_gpu], precision="fp32", which="measured")
    if gpu is not None:
        pts += points_from_gpus([gpu], precision="fp32")[0]
    if not pts:
        # a new GPU's file has only what was measured; a catalog GPU has its datasheet's
        fields = ("fp32_fma_flops_per_s", "dram_bw_bytes_per_s")  # those points_from_gpus reads
        click.echo(f"gpuproj: warning: quadrant.png not drawn: {'; '.join(lacking)} ("
                   + ", ".join(f"the {group_of(f)} group measures {f}" for f in fields) + ")",
                   err=True)
        return out
    kernels = sorted({(f"mix K={p['k']}", p["flop_per_byte"])
                      for p in raw["sweeps"]["mixbench"] if p["precision"] == "fp32"},
                     key=lambda kv: kv[1])
    # the picture tells MAX_KERNELS lines apart: spread over the intensities, not the lowest
    step = max(1, -(-len(kernels) // MAX_KERNELS))
    kernels = kernels[::step]
    out.append(plot_quadrant(pts, kernels, d / "quadrant.png"))
    return out


def _list_devices():
    found = False
    try:
        from ..bench.cuda import CudaBackend

        b = CudaBackend()
        click.echo(f"cuda 0: {b.info.name} ({b.info.isa}, {b.info.compute_units} SMs)")
        b.close()
        found = True
    except GpuprojError as e:
        click.echo(f"cuda: {e}", err=True)
    try:
        from ..bench.opencl import is_simulator, list_devices

        for i, d in enumerate(list_devices()):
            sim = "; a simulator, used only when named" if is_simulator(d) else ""
            click.echo(f"opencl {i}: {d.name.strip()} ({d.platform.name.strip()}, "
                       f"{d.max_compute_units} compute units{sim})")
            found = True
    except GpuprojError as e:
        click.echo(f"opencl: {e}", err=True)
    if not found:
        click.echo("no device found", err=True)
        sys.exit(1)
