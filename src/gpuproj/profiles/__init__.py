"""Kernel profiles: the canonical table and one reader per input format.

>>> from gpuproj.profiles import load          # doctest: +SKIP
>>> table = load("report.csv", gpu="V100")     # doctest: +SKIP

``load`` recognises the format from the file (``format=`` forces one); each reader lives in
``readers/<format>.py`` and is imported only when used.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from .table import ProfileTable

__all__ = ["ProfileTable", "Skipped", "load", "FORMATS"]

# format name -> (module under readers/, one-line description). Sniffing tries them in order.
FORMATS = {
    "ncu-rep": ("ncu_rep", "Nsight Compute report (.ncu-rep), needs the 'ncu' extra"),
    "ncu-csv": ("ncu_csv", "Nsight Compute CSV export (ncu --csv --page raw)"),
    "nvprof": ("nvprof", "nvprof --csv metric/trace output"),
    "amaris": ("amaris", "gpuperfpredict (Amaris et al.) Rodinia nvprof tables"),
    "seed-report": ("seed_report", "Srivastava et al. report runs_*_final.csv"),
    "kerneltuner": ("kerneltuner", "KernelTuner cache tables, one time_ms__<GPU> column per GPU"),
    "neusight": ("neusight", "NeuSight operator latency tables"),
    "gpu-benches": ("gpu_benches", "gpu-benches gpu-l2-cache working-set sweeps (<gpu>.txt)"),
    "measurement": ("measurement", "plain measurement table: kernel, config, gpu, time_s, ..."),
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


def sniff(path) -> str:
    """The format of ``path``, from its name and first bytes."""
    path = Path(path)
    if path.suffix == ".ncu-rep":
        return "ncu-rep"
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
    raise InputError("cannot tell the format of this file; pass --format "
                     f"({', '.join(FORMATS)})", path=path)


def load(path, format: str | None = None, **options) -> ProfileTable:
    """Read a profile or measurement file into a ``ProfileTable``.

    ``options`` go to the reader (``gpu=`` names the GPU where the file does not).
    """
    path = Path(path)
    if not path.exists():
        raise InputError("no such file", path=path)
    if options.get("gpu") is not None:
        from ..catalog import resolve

        resolve(options["gpu"])  # a name the user gave: its error names no file row
    fmt = format or sniff(path)
    table = _reader(fmt).read(path, **options)
    if len(table) == 0 and table.skipped:
        first = table.skipped[0]
        raise InputError(f"no usable row: all {len(table.skipped)} rows were skipped "
                         f"(the first: {first.reason})", path=path, row=first.row)
    return table
