"""``gpuproj bench``: measure a device's ceilings and write its catalog file plus raw samples."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

from ..errors import AmbiguousGPUError, GpuprojError, InputError, UnknownGPUError
from ..files import write_text
from ._common import WrittenPath, emit_json, output_option

SI = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""), (1e-3, "m"),
      (1e-6, "u"), (1e-9, "n")]


def fmt_si(v: float, unit: str = "") -> str:
    """``fmt_si(3.35e12, "B/s") == '3.35 TB/s'``; nan as '-'."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    for f, p in SI:
        if abs(v) >= f:
            return f"{v / f:.3g} {p}{unit}"
    return f"{v:.3g} {unit}"


UNIT_TEXT = {"flops_per_s": "FLOP/s", "ops_per_s": "op/s", "bytes_per_s": "B/s",
             "inst_per_s": "inst/s", "s": "s"}


def _resolve_gpu(name, device_name):
    """(catalog GPU or None, warning or None)."""
    from ..catalog import load_catalog

    cat = load_catalog()
    if name:
        try:
            gpu = cat.resolve(name)
        except AmbiguousGPUError:
            raise  # a new entry would take over a name that several GPUs answer to
        except UnknownGPUError:
            return None, None
        try:
            dev = cat.resolve(device_name)
        except UnknownGPUError:
            return gpu, (f"the device reports '{device_name}', which the catalog does not "
                         f"know: check that the measurements are {gpu.id}'s")
        if dev.id != gpu.id:
            return gpu, (f"the device reports '{device_name}', which the catalog knows as "
                         f"{dev.id}, not {gpu.id}")
        return gpu, None
    try:
        return cat.resolve(device_name), None
    except UnknownGPUError:
        return None, None


def _table(raw, gpu, flags):
    from ..bench.entry import FIELD_MAP, percent

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
        val = m["value"]
        pct = percent(val / peak) if fld and not math.isnan(peak) and peak > 0 else "-"
        probs = flagged.get(m["name"], []) + (flagged.get(fld, []) if fld else [])
        rows.append((m["name"], fmt_si(val, UNIT_TEXT.get(m["unit"], m["unit"])),
                     fmt_si(peak, UNIT_TEXT.get(m["unit"], "")), pct,
                     percent(m["summary"]["spread"], 1), ",".join(sorted(set(probs)))))
    return rows


@click.command("bench")
@click.option("--gpu", "gpu_name", metavar="NAME",
              help="The catalog GPU this device is (id, name or alias). A name the catalog does "
                   "not know starts a new GPU file with that name. Default: the device's name.")
@output_option("Catalog YAML file to write (default: <id>.yaml here). Load it with "
               "GPUPROJ_GPU_PATH=<its folder> or `--target FILE`.")
@click.option("--raw", "raw_out", type=WrittenPath(dir_okay=False), metavar="FILE",
              help="Raw result with every sample (default: FILE with suffix .json).")
@click.option("--backend", type=click.Choice(["auto", "cuda", "opencl"]), default="auto",
              show_default=True, help="auto: CUDA if an NVIDIA driver is present, else OpenCL.")
@click.option("--device", metavar="N|TEXT", help="Device index or part of its name.")
@click.option("--quick", is_flag=True,
              help="Small sizes and few repetitions (CI, CPU devices): seconds, not minutes.")
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
      gpuproj bench --gpu h100-sxm5-80gb -o h100.yaml          # CUDA, full sizes (~2 min)
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
        read_result,
        slug,
    )
    from ..bench.sizes import with_overrides

    if list_devices:
        _list_devices()
        return
    log = (lambda msg: None) if quiet else (lambda msg: click.echo(f"bench: {msg}", err=True))
    if from_raw:
        given = _measuring_options_given()
        if given:
            raise click.UsageError(f"--from-raw measures nothing: {', '.join(given)} "
                                   f"{'does' if len(given) == 1 else 'do'} not apply with it")
        raw = read_result(from_raw)
    else:
        groups = [g.strip() for g in only.split(",") if g.strip()] if only else None
        lacking = [g for g in PLOTTED_SWEEPS.values() if g not in groups] if groups else []
        if plots_dir and lacking:  # known before minutes of measuring
            raise click.UsageError(f"--plots draws the sweeps of the {' and '.join(lacking)} "
                                   "groups: add them to --only")
        sizes = with_overrides(PRESETS["quick" if quick else "full"], reps=reps)
        b = open_backend(backend, device)
        log(f"{b.info.name} ({b.name}, {b.info.compute_units} compute units), "
            f"{sizes.name} sizes")
        try:
            raw = run_suite(b, sizes, only=groups, log=log)
        finally:
            b.close()
    if plots_dir:  # before anything is written
        check_plottable(raw, from_raw)
    gpu, warn = _resolve_gpu(gpu_name, raw["device"]["name"])
    if warn:
        click.echo(f"gpuproj: warning: {warn}", err=True)
    flags = check(raw, gpu)
    raw["flags"] = flags
    data = gpu_file(raw, gpu, name=gpu_name)
    out_path = Path(output) if output else Path(f"{data['id']}.yaml")
    raw_path = Path(raw_out or from_raw or out_path.with_suffix(".json"))
    write_text(out_path, dump_yaml(data))
    if not from_raw or raw_out:
        write_text(raw_path, json.dumps(raw, indent=1))
    from ..catalog import read_gpu_file

    try:
        read_gpu_file(out_path)  # what we wrote must load
    except InputError:
        # a file that does not load would stop every command once on the GPU path
        out_path.unlink()
        raise
    plots = []
    if plots_dir:
        plots = _plots(raw, gpu, read_gpu_file(out_path), Path(plots_dir))
    if gpu is None and gpu_name is None:
        click.echo(f"(the catalog does not know '{raw['device']['name']}'; the file is a new GPU "
                   f"with id {slug(raw['device']['name'])})", err=True)
    if as_json:
        emit_json({"gpu_file": str(out_path), "raw": str(raw_path), "id": data["id"],
                   "measured": data["measured"], "flags": flags,
                   "elapsed_s": raw["elapsed_s"], "plots": [str(p) for p in plots]})
        return
    rows = _table(raw, gpu, flags)
    head = ("benchmark", "measured", "peak", "of peak", "spread", "flags")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        click.echo("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    for f in flags:
        click.echo(f"gpuproj: warning: {f['text']}", err=True)
    wrote_raw = f" and {raw_path}" if not from_raw or raw_out else ""
    click.echo(f"wrote {out_path} ({data['id']}, {len(data['measured'])} measured values)"
               f"{wrote_raw}; suite took {raw['elapsed_s']:.1f} s")
    for p in plots:
        click.echo(f"wrote {p}")


def _measuring_options_given() -> list[str]:
    """The options of the command line that choose what a run measures."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    return [f"--{n}" for n in ("backend", "device", "quick", "only", "reps")
            if ctx.get_parameter_source(n) is ParameterSource.COMMANDLINE]


def _plots(raw, gpu, measured_gpu, d: Path):
    from ..plots.mixbench import plot_roofline, plot_working_set
    from ..plots.quadrant import MAX_KERNELS, plot_quadrant, points_from_gpus

    # check_plottable has seen both sweeps
    out = [plot_roofline(raw, d / "roofline.png", gpu=gpu),
           plot_working_set(raw, d / "working_set.png")]
    # what was measured, beside the datasheet's (one call would draw the one GPU id once)
    pts = points_from_gpus([measured_gpu], precision="fp32", which="measured")[0]
    if gpu is not None:
        pts += points_from_gpus([gpu], precision="fp32")[0]
    kernels = sorted({(f"mix K={p['k']}", p["flop_per_byte"])
                      for p in raw["sweeps"]["mixbench"] if p["precision"] == "fp32"},
                     key=lambda kv: kv[1])
    # the picture tells MAX_KERNELS lines apart: spread over the intensities, not the lowest
    step = max(1, -(-len(kernels) // MAX_KERNELS))
    kernels = kernels[::step]
    if pts:
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
