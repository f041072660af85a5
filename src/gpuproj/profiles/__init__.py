"""Kernel profiles: the canonical table and one reader per input format.

>>> from gpuproj.profiles import load          # doctest: +SKIP
>>> table = load("report.csv", gpu="Tesla V100-PCIE-32GB")     # doctest: +SKIP

``load`` recognises the format from the file (``format=`` forces one); each reader lives in
``readers/<format>.py`` and is imported only when used.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ..files import refuse_irregular

if TYPE_CHECKING:
    from .table import ProfileTable

__all__ = ["ProfileTable", "Skipped", "load", "FORMATS"]

# format name -> (module under readers/, one-line description). Sniffing tries them in order.
FORMATS = {
    "ncu-rep": ("ncu_rep", "Nsight Compute report (.ncu-rep), needs the 'ncu' extra"),
    "ncu-csv": ("ncu_csv", "Nsight Compute CSV export (ncu --csv: --page raw or details, "
                "or --print-summary per-kernel)"),
    "nvprof": ("nvprof", "nvprof --csv metric/trace output"),
    "amaris": ("amaris", "gpuperfpredict (Amaris et al.) Rodinia nvprof tables"),
    "seed-report": ("seed_report", "Srivastava et al. report runs_*_final.csv"),
    "kerneltuner": ("kerneltuner", "KernelTuner cache tables, one time_ms__<GPU> column per GPU"),
    "neusight": ("neusight", "NeuSight operator latency tables"),
    "rocprof": ("rocprof", "AMD rocprof CSV (results.csv), or an Omniperf / rocprof-compute "
                "workload folder (pmc_perf*.csv, timestamps.csv, sysinfo.csv)"),
    "rocprofv3": ("rocprofv3", "AMD rocprofv3 kernel trace or counter collection CSV (with "
                  "the run's agent_info.csv)"),
    "nsys": ("nsys", "Nsight Systems timeline: nsys stats --format csv of the cuda_gpu_trace or "
             "cuda_gpu_kern_sum report (times and launch configurations, no counters)"),
    "pytorch": ("pytorch", "PyTorch profiler trace (torch.profiler's Chrome trace JSON, "
                "*.pt.trace.json[.gz]): kernel times and launch configurations, no counters"),
    "gpu-benches": ("gpu_benches", "gpu-benches L1 and L2 working-set sweeps, repeated small "
                    "kernels, roofline and stream occupancy sweeps (<gpu>.txt)"),
    "measurement": ("measurement", "plain measurement table: kernel, time_s, optional gpu, "
                    "config and counts"),
}


def __getattr__(name):
    # the table (and with it pandas and pyarrow) loads on first use, so the CLI can list FORMATS
    # in its --help without paying for them
    if name in ("ProfileTable", "Skipped"):
        from . import table

        return getattr(table, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _reader(fmt):
    if fmt not in FORMATS:
        raise InputError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    return importlib.import_module(f".readers.{FORMATS[fmt][0]}", __name__)


# reports of other tools that gpuproj reads only once exported: how to export them
_EXPORT = {
    ".nsys-rep": "an Nsight Systems report: export its kernels with `nsys stats --report "
                 "cuda_gpu_trace --format csv --output PREFIX FILE` and read "
                 "PREFIX_cuda_gpu_trace.csv (or run `gpuproj profile --timeline`)",
    ".sqlite": "an SQLite database (what `nsys export` and `nsys stats` write beside a "
               "report): gpuproj reads nsys's CSV, `nsys stats --report cuda_gpu_trace --format "
               "csv --output PREFIX FILE`",
}
_EXPORT[".qdrep"] = _EXPORT[".nsys-rep"]  # the name of nsys reports before 2021.4


# what a trace (``load(..., trace=)``) may be: its format is always detected
TRACE_KINDS = ("an nsys timeline (cuda_gpu_trace CSV), a PyTorch profiler trace, a rocprofv3 "
               "kernel trace or a kernel,time_s table")


def _not_a_profile(head: str) -> str | None:
    """What a file of a profiler's that holds no profile gpuproj reads is, and what to read in
    its place; None for any other file. Seen in projects' repositories: an ncu log of errors
    only, saved under the name of its CSV, and rocprof's per-kernel summary."""
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("==ERROR==")]
    if errors and all(line.startswith("==") for line in lines):
        return f"Nsight Compute wrote no results, only errors: {errors[0][:200]}"
    if lines and lines[0].replace('"', "").startswith("Name,Calls,TotalDurationNs,AverageNs"):
        return ("a rocprof --stats summary (each kernel's calls and total time, no launch "
                "configuration or counters): read the per-dispatch CSV it was made from "
                "(results.csv, or rocprofv3's kernel_trace.csv)")
    return None


def sniff(path, trace: bool = False) -> str:
    """The format of ``path``, from its name and first bytes (``trace``: of a trace, whose
    errors name the kinds of trace rather than --format, which a trace does not take)."""
    path = Path(path)
    if _reader("ncu-rep").sniff(path, ""):
        return "ncu-rep"
    if path.suffix in _EXPORT:
        raise InputError(_EXPORT[path.suffix], path=path)
    if path.is_dir():
        if _reader("rocprof").sniff_folder(path):
            return "rocprof"
        raise InputError("a folder is read only as an Omniperf workload (timestamps.csv, "
                         "pmc_perf*.csv or results.csv, with sysinfo.csv); give a file", path=path)
    from .readers._io import head_text

    if path.stat().st_size == 0:
        raise InputError("the file is empty", path=path)
    head = head_text(path)
    for fmt in FORMATS:
        if fmt == "ncu-rep":
            continue
        mod = _reader(fmt)
        if mod.sniff(path, head):
            return fmt
    known = _not_a_profile(head)
    if known:
        raise InputError(known, path=path)
    from .readers.measurement import short_of

    missing = short_of(head, path)
    other = (f"a trace is {TRACE_KINDS}" if trace else f"pass --format: {', '.join(FORMATS)}")
    if missing:
        # most hand-made tables are measurement tables short of a column: say which, and that
        # the file may be of another format
        raise InputError(f"missing required column '{missing}' of a measurement table (or "
                         f"{other})", path=path)
    raise InputError(f"cannot tell the format of this file; {other}", path=path)


def load(path, format: str | None = None, trace=None, **options) -> ProfileTable:
    """Read a profile or measurement file into a ``ProfileTable``.

    ``options`` go to the reader (``gpu=``, every reader's, names the GPU where the file does
    not: one GPU, a name, a GPU file or a ``GPU``; each reader's own options are in
    docs/profiles.md). An option the reader does not take is an error listing those it does;
    a value given as text, as on the command line, is read as the type the reader wants.
    ``trace`` is a trace of the same application run (an nsys timeline, a PyTorch profiler
    trace, a rocprofv3 kernel trace, a ``kernel,time_s`` table) whose times and launch counts
    replace the profile's (``gpuproj.profiles.trace_times``); nvprof's reader takes its
    ``--print-gpu-trace`` so.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("no such file", path=path)
    # a pipe's second read began mid-stream ("the file is empty", a header seen twice)
    refuse_irregular(path)
    if options.get("gpu") is not None:
        from ..names import one_gpu

        # a name the user gave: its error names no file row
        gpu = one_gpu(options["gpu"], "gpu= (--source)")
        if not isinstance(options["gpu"], str):  # a GPU object, a list of one: the readers
            options["gpu"] = str(gpu.path) if gpu.path else gpu.id  # take a name or a file
    fmt = format or sniff(path)
    reader = _reader(fmt)
    own_trace = trace is not None and "trace" in inspect.signature(reader.read).parameters
    if own_trace:
        options["trace"] = trace
    table = reader.read(path, **_reader_options(reader, fmt, options))
    if trace is not None and not own_trace:
        from .trace_times import times_from_trace

        table = times_from_trace(table, trace, options.get("gpu"))
    if len(table) == 0 and table.skipped:
        first = table.skipped[0]
        raise InputError(f"no usable row: all {len(table.skipped)} rows were skipped "
                         f"(the first: {first.reason})", path=path, row=first.row)
    return table


def _reader_options(reader, fmt, options) -> dict:
    """``options`` checked against ``reader.read``'s signature: a name it does not take is an
    error listing those it does; text is converted to the annotated type (bool: true/false;
    int: a positive integer, as every integer option is a size); other values pass as given."""
    params = {n: p for n, p in inspect.signature(reader.read).parameters.items() if n != "path"}
    out = {}
    for name, value in options.items():
        if name not in params:
            # gpu= first: every reader takes it, and one who wrote source= looks for it; the
            # command line refuses it as a reader option (--source gives it there)
            own = [n if n != "gpu" else "gpu (--source)"
                   for n in sorted(params, key=lambda n: n != "gpu")]
            raise InputError(f"the {fmt} reader has no option '{name}' ("
                             + (f"its options: {', '.join(own)})" if own else "it has none)"))
        kind = str(params[name].annotation)
        out[name] = value if value is None else _typed(f"{fmt} option {name}", value, kind)
    return out


def _typed(what, value, kind):
    if "bool" in kind:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "1"):
            return True
        if text in ("false", "no", "0"):
            return False
        raise InputError(f"{what}: '{value}' is not true or false")
    if "int" in kind:
        try:
            number = float(str(value).strip())
        except ValueError:
            number = 0.0
        if isinstance(value, bool) or not (number >= 1 and number.is_integer()):
            raise InputError(f"{what}: '{value}' is not a positive integer")
        return int(number)
    return value

