"""``gpuproj profile``: run an application under Nsight Compute with the metrics gpuproj reads,
or, with ``--timeline``, under Nsight Systems for every launch's time.

The metric list is ``profiles.readers.ncu_csv.NCU_METRICS`` (one table, shared with the readers);
``docs/ncu.md`` explains the command line and what each metric feeds.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import click

from ..errors import GpuprojError, InputError, MissingToolError
from ..files import read_text, write_text
from ..nvidia_tools import HINTS, find_tool
from ._common import output_option


def available_metrics(ncu: str) -> set[str] | None:
    """The metric names ncu offers on this machine's GPU (``ncu --query-metrics`` with every
    suffix), or None where it cannot say (no GPU, no permission, an ncu without the query)."""
    try:
        proc = subprocess.run([ncu, "--query-metrics", "--query-metrics-mode", "all"],
                              capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = set(re.findall(r"\b[a-z0-9_]+__[a-z0-9_.]*[a-z0-9_]", proc.stdout))
    # a real listing has hundreds of names; a few would be a message that merely names some
    return names if proc.returncode == 0 and len(names) >= 50 else None


def usable_metrics(wanted: list[str], offered: set[str] | None) -> tuple[list[str], list[str]]:
    """(metrics to ask for, metrics left out): ncu stops at the first metric the GPU does not
    have, so a metric missing from ``offered`` is left out rather than losing the whole run.
    Launch statistics and device attributes are not in ncu's listing and are always there;
    the duration is kept whatever the listing says, since without it nothing is predicted."""
    if offered is None:
        return list(wanted), []
    keep, drop = [], []
    for m in wanted:
        ok = (m.startswith(("launch__", "device__")) or m == "gpu__time_duration.sum"
              or m in offered or m.split(".")[0] in offered)
        (keep if ok else drop).append(m)
    return keep, drop


def ncu_command(ncu: str, app: list[str], out: Path, *, metrics: list[str] | None = None,
                kernel: str | None = None, launch_count: int | None = None) -> list[str]:
    """The argument list (never a shell string) that profiles ``app`` into the CSV ``out``;
    ``metrics``: gpuproj's whole list unless given."""
    from ..profiles.readers.ncu_csv import metric_names

    # --clock-control none: ncu's default locks the clocks to base, which makes a compute-bound
    # kernel up to 1.4x slower than the card runs it by itself and than the boost-clock peaks
    # the projection assumes for the target; it also leaves the card's settings alone
    cmd = [ncu, "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
           "--metrics", ",".join(metrics or metric_names()), "--log-file", str(out)]
    if kernel:
        cmd += ["--kernel-name", f"regex:{kernel}"]
    if launch_count:
        cmd += ["--launch-count", str(launch_count)]
    return cmd + list(app)


def nsys_commands(nsys: str, app: list[str], report: Path, prefix: Path) -> list[list[str]]:
    """The two argument lists of a timeline: ``nsys profile`` of ``app`` into ``report`` (CUDA
    only, no CPU sampling, which gpuproj does not read and which needs permissions; each kernel
    of a CUDA graph traced as its own launch, where nsys's default records a graph launch as
    one range and its kernels not at all), then ``nsys stats`` of its kernel trace into
    ``<prefix>_cuda_gpu_trace.csv``."""
    return [[nsys, "profile", "--trace=cuda", "--sample=none", "--cpuctxsw=none",
             "--cuda-graph-trace=node", "--force-overwrite=true", "--output", str(report),
             *app],
            [nsys, "stats", "--report", "cuda_gpu_trace", "--format", "csv",
             "--force-export=true", "--output", str(prefix), f"{report}.nsys-rep"]]


@click.command(context_settings={"ignore_unknown_options": True,
                                 "allow_interspersed_args": False})
@output_option("CSV file to write (ncu --csv --page raw layout; with --timeline, nsys's "
               "cuda_gpu_trace) [default: gpuproj-ncu.csv, gpuproj-nsys.csv]", path_type=Path)
@click.option("--timeline", is_flag=True,
              help="Run APP under Nsight Systems instead: every launch's time and "
                   "configuration, no counts, no replay.")
@click.option("--metrics-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the metrics asked for, one per line, to this file.")
@click.option("--kernel", "-k", help="Profile only kernels whose name matches this regex.")
@click.option("--launch-count", type=click.IntRange(min=1),
              help="Profile at most this many launches.")
@click.option("--ncu", "ncu_path", help="Path to the ncu executable.")
@click.option("--nsys", "nsys_path", help="Path to the nsys executable (--timeline).")
@click.option("--dry-run", is_flag=True, help="Print the command line(s) and stop.")
@click.argument("app", nargs=-1, required=True, type=click.UNPROCESSED)
def profile(output, timeline, metrics_file, kernel, launch_count, ncu_path, nsys_path, dry_run,
            app):
    """Run APP [ARGS...] under Nsight Compute and write the metrics gpuproj reads as CSV.

    Nsight Compute replays each kernel to count its FLOPs and bytes, which the roofline
    methods need. --timeline runs APP once under Nsight Systems instead: each launch's time
    as the application ran it, for the baselines (same, bandwidth, compute) and for an
    application's total. Both of one application: `predict --trace` takes the counts from
    the first and the times and launch counts from the second.

    \b
    Examples:
      gpuproj profile -o saxpy.csv -- ./saxpy 1048576
      gpuproj predict saxpy.csv --target h200
      gpuproj profile --timeline -o timeline.csv -- ./app
      gpuproj predict timeline.csv --target h200 --method bandwidth
      gpuproj predict saxpy.csv --trace saxpy-timeline.csv --target h200
    """
    from ..profiles.readers.ncu_csv import metric_names
    from ..profiles.table import kernel_pattern

    if kernel:
        kernel_pattern(kernel)  # a bad regex is an error here, not inside ncu
    if timeline:
        given = [name for name, v in (("--metrics-file", metrics_file), ("--kernel", kernel),
                                      ("--launch-count", launch_count),
                                      ("--ncu", ncu_path)) if v]
        if given:
            raise click.UsageError(f"{', '.join(given)} choose what Nsight Compute measures; "
                                   "--timeline records every launch with Nsight Systems")
        _timeline(output or Path("gpuproj-nsys.csv"), nsys_path, dry_run, list(app))
        return
    if nsys_path:
        raise click.UsageError("--nsys goes with --timeline")
    output = output or Path("gpuproj-ncu.csv")
    ncu = (ncu_path or "ncu") if dry_run else find_tool("ncu", ncu_path)

    def command(metrics):
        return ncu_command(ncu, list(app), output, metrics=metrics, kernel=kernel,
                           launch_count=launch_count)

    metrics = metric_names()
    if dry_run:
        if metrics_file:
            write_text(metrics_file, "\n".join(metrics) + "\n")
        click.echo(" ".join(_quote(c) for c in command(metrics)))
        return
    _check_app(app[0])
    output.parent.mkdir(parents=True, exist_ok=True)  # ncu writes its log file itself
    proc = _run(command(metrics), "ncu")
    if _failed(proc, output):
        # asked only after a failure: the query costs seconds, and collect.sh profiles in many
        # short runs
        kept, dropped = usable_metrics(metrics, available_metrics(ncu))
        if dropped:
            click.echo(f"gpuproj: ncu does not offer {len(dropped)} of gpuproj's metrics on "
                       f"this GPU; profiling again without them: {', '.join(dropped)}",
                       err=True)
            metrics = kept
            proc = _run(command(metrics), "ncu")
    if metrics_file:
        write_text(metrics_file, "\n".join(metrics) + "\n")
    said = _said(output) or []
    errors = [ln for ln in said if ln.startswith("==ERROR==")]
    where = (f"its messages are in {output}" if output.exists() and output.stat().st_size
             else "it wrote nothing")
    if proc.returncode != 0:
        raise GpuprojError(f"ncu exited with status {proc.returncode}"
                           + (f": {errors[0]}" if errors else "") + f" ({where})")
    if not output.exists() or output.stat().st_size == 0:
        raise GpuprojError(f"ncu wrote no results to {output} (was any kernel launched?)")
    from ..profiles.readers import ncu_csv

    try:
        table = ncu_csv.read(output)
    except InputError:
        # ncu can exit 0 after an error (no permission to the counters: ERR_NVGPUCTRPERM) or
        # having profiled nothing: its own words say more than the CSV reader's of its log
        if errors:
            raise GpuprojError(f"ncu reported an error: {errors[0]} ({where})") from None
        warned = [ln for ln in said if ln.startswith("==WARNING==")]
        if not warned:
            raise
        raise GpuprojError(f"ncu wrote no results to {output}: {warned[0]}") from None
    if errors:  # a kernel it could not profile: the others' results stand
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        click.echo(f"gpuproj: warning: ncu reported {errors[0]}{more}; {output} has the "
                   "kernels it profiled", err=True)
    click.echo(f"gpuproj: wrote {output}: {len(table)} kernel configuration(s) on "
               f"{', '.join(table.gpus)}, {int(table.df['launches'].sum())} launch(es)", err=True)


def _timeline(output: Path, nsys_path, dry_run: bool, app: list[str]) -> None:
    """nsys profile, then nsys stats into ``output``; the report stays in a temporary folder."""
    nsys = (nsys_path or "nsys") if dry_run else find_tool("nsys", nsys_path)
    if dry_run:  # what runs: WORK is the temporary folder, removed after the copy
        for cmd in nsys_commands(nsys, app, Path("WORK") / "report", Path("WORK") / "stats"):
            click.echo(" ".join(_quote(c) for c in cmd))
        click.echo(f"cp WORK/stats_cuda_gpu_trace.csv {_quote(str(output))}")
        return
    _check_app(app[0])
    with tempfile.TemporaryDirectory(prefix="gpuproj-nsys-") as work:
        prefix = Path(work) / "stats"
        for cmd in nsys_commands(nsys, app, Path(work) / "report", prefix):
            proc = _run(cmd, "nsys")
            if proc.returncode != 0:
                raise GpuprojError(f"nsys {cmd[1]} exited with status {proc.returncode}")
        written = Path(f"{prefix}_cuda_gpu_trace.csv")
        if not written.exists():
            raise GpuprojError("nsys stats wrote no kernel trace (was any kernel launched?)")
        write_text(output, read_text(written))
    from ..profiles.readers import nsys as nsys_reader

    table = nsys_reader.read(output)
    click.echo(f"gpuproj: wrote {output}: {len(table)} kernel configuration(s) on "
               f"{', '.join(table.gpus)}, {int(table.df['launches'].sum())} launch(es)", err=True)


def _check_app(app: str) -> None:
    """An application that does not exist is said here: the profiler would put its own
    message in its log (ncu: the output CSV) and exit with a status."""
    if not (shutil.which(app) or Path(app).is_file()):
        raise GpuprojError(f"no application {app} to run (not a file, nor a command on PATH)")


def _run(cmd, name):
    """Run ``cmd``, whose first item is the ``name`` tool's executable."""
    try:
        return subprocess.run(cmd, check=False)
    except OSError as e:
        raise MissingToolError(f"cannot run {cmd[0]}: {e.strerror}. {HINTS[name]}") from None


def _failed(proc, output: Path) -> bool:
    """ncu failed: a non-zero status, or an error line in its log (it can exit 0 after one)."""
    said = _said(output)
    return (proc.returncode != 0 or said is None  # no log at all
            or any(ln.startswith("==ERROR==") for ln in said))


def _said(output: Path) -> list[str] | None:
    """ncu's own error and warning lines in its log (``==ERROR==``, ``==WARNING==``); None
    where there is no log to read."""
    try:
        lines = read_text(output).splitlines()
    except InputError:
        return None
    return [ln.strip() for ln in lines if ln.startswith(("==ERROR==", "==WARNING=="))]


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)
