"""Nsight Systems timelines, as ``nsys stats --format csv`` exports them: the kernels an
application ran, with their times and launch configurations (no counters: the projections that
need FLOPs or bytes take them from an Nsight Compute profile).

- ``nsys stats --report cuda_gpu_trace --format csv`` (``gputrace`` in older nsys): one
  row per kernel launch, memory copy or memset, with ``Start (ns)``, ``Duration (ns)``,
  ``CorrId``, ``GrdX`` ... ``GrdZ``, ``BlkX`` ... ``BlkZ``, ``Reg/Trd``, ``StcSMem (MB)``,
  ``DymSMem (MB)``, ..., ``Device`` (``NVIDIA H100 80GB HBM3 (0)``), ``Strm`` and ``Name``.
  Copies and memsets (no grid) are skipped and counted. Launches of one kernel with one launch
  configuration on one device become one row: ``launches`` = their number, ``time_s`` the mean
  per launch (``time_s_min`` / ``time_s_max`` the spread).
- ``nsys stats --report cuda_gpu_kern_sum --format csv`` (``gpukernsum`` in older nsys): one
  row per kernel with ``Instances``, ``Avg (ns)``, ``Min (ns)``, ``Max (ns)`` and ``Name``;
  where it also has ``GridXYZ`` and ``BlockXYZ`` (``  896    1    1``, as nsys 2022.4 printed
  them), one row per kernel and launch configuration. It does not name the device: pass
  ``--source``.

The units are the ones in the column names: times as ``nsys stats --timeunit`` chose (ns by
default), sizes in decimal megabytes (nsys prints a 4 MiB copy as 4.194 MB). The file may be
what ``--output PREFIX`` writes (``PREFIX_cuda_gpu_trace.csv``) or nsys's standard output with
its ``Processing [...]`` and ``NOTICE`` lines, one or several reports: a trace is read where
there is one, else the kernel summary; other reports (API calls, memory operations) hold no
kernel times and are not read.

The GPU: the trace's ``Device`` column; ``gpu=`` (``--source``) names it where the column names
none or one the catalog does not know (a kernel summary names none), and is an error where it
names another.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd

from ...errors import GPUNotNamedError, InputError
from ...files import read_text
from ...units import TIME_UNITS, unit_factor
from ..table import ProfileTable, Skipped
from ._checks import numeric, split_missing_names, split_unusable_times
from ._io import (
    check_header,
    csv_fields,
    group_launches,
    launch_config,
    named_or_given_gpus,
    refuse_repeated_rows,
    resolve_gpus,
    strip_device_index,
)

_TRACE, _SUMMARY = "cuda_gpu_trace", "cuda_gpu_kern_sum"
# nsys's own lines between and before its tables
_MESSAGE = re.compile(r"^(Processing \[|NOTICE:|SKIPPED:|WARNING:|ERROR:|Generating |\s)")
_REPORT = re.compile(r"^Processing \[.*\b(cuda_gpu_trace|cuda_gpu_kern_sum|gputrace|gpukernsum)"
                     r"\.py\]")
# 'Duration (ns)' -> ('Duration', 'ns'); the name ends in a non-space, and ++ and *+ give
# nothing back, where (.*?)\s* backtracked over a header name of 50,000 spaces for seconds
_UNIT = re.compile(r"^((?:.*\S)?)\s*\((\w++/?\w*+)\)$")
_GRID = ("GrdX", "GrdY", "GrdZ")
_BLOCK = ("BlkX", "BlkY", "BlkZ")


def _kind(fields) -> str | None:
    """Which report a CSV header line is, from its column names (units stripped): the columns
    checked here are the ones the reader needs."""
    names = {_UNIT.sub(r"\1", f.strip()) for f in fields}
    if {"Duration", "GrdX", "BlkX", "Name"} <= names:
        return _TRACE
    if {"Instances", "Avg", "Name"} <= names:
        return _SUMMARY
    return None


def sniff(path, head: str) -> bool:
    for line in head.splitlines():
        if _REPORT.match(line):
            return True  # nsys's own line naming a report of kernels (even one found empty)
        if line.strip() and not _MESSAGE.match(line):
            return _kind(next(csv.reader([line]), [])) is not None
    return False


def read(path, gpu: str | None = None) -> ProfileTable:
    """Read an ``nsys stats`` CSV (see the module docstring); ``gpu`` names the GPU where
    the trace's ``Device`` column does not, and where a kernel summary names none."""
    path = Path(path)
    sections, skipped_reports = _sections(path)
    traces = [s for s in sections if s[0] == _TRACE]
    if traces:
        frames, skipped = zip(*(_trace(recs, path) for _, recs in traces))
    elif sections:
        frames, skipped = zip(*(_summary(recs, path, gpu) for _, recs in sections))
    elif skipped_reports:
        raise InputError(f"nsys found no CUDA kernel in its report ({skipped_reports[0]})",
                         path=path)
    else:
        raise InputError("no cuda_gpu_trace or cuda_gpu_kern_sum table (nsys stats --report "
                         "cuda_gpu_trace --format csv)", path=path)
    skipped = [s for part in skipped for s in part]
    frames = [f for f in frames if len(f)]
    if not frames:
        raise InputError(f"no kernel launch in the trace (all {len(skipped)} rows are memory "
                         "copies or sets)", path=path)
    df = pd.concat(frames, ignore_index=True)
    df, bad = split_missing_names(df, path, {"kernel": "Name"})
    skipped += bad
    if traces:
        names = df["_device"].astype(object)
        if gpu is None and names.isna().any():
            raise GPUNotNamedError("the trace does not name the device of this launch",
                                   path=path, row=int(df.loc[names.isna(), "_row"].iloc[0]),
                                   field="Device")
        df["gpu"] = named_or_given_gpus(names, gpu, path, df["_row"], "Device")
        df = df.drop(columns=["_device"])
    else:
        df["gpu"] = resolve_gpus(pd.Series(gpu, index=df.index, dtype=object), path)
    return ProfileTable.from_frame(group_launches(df), skipped=skipped, origin=str(path))


def _sections(path):
    """The CSV tables of the file: [(kind, [(file line, fields), ...header first])] for the
    tables of kernels, and nsys's SKIPPED lines (reports it found no data for)."""
    lines = read_text(path).splitlines()
    sections, skipped_reports = [], []
    in_table, current = False, None  # current: the records of a table of kernels, else None
    for i, line in enumerate(lines, start=1):
        if not line.strip() or _MESSAGE.match(line):
            in_table = False
            if line.startswith("SKIPPED:"):
                skipped_reports.append(line.strip())
            continue
        fields = csv_fields(line, path, i)
        if not in_table:  # a header: another report's table is not read
            in_table, kind = True, _kind(fields)
            current = [] if kind else None
            if kind:
                check_header(fields, path, i)
                sections.append((kind, current))
        elif current is not None and len(fields) != len(current[0][1]):
            # nsys prints every field of every row; anything else is a cut or edited line
            raise InputError(f"{len(fields)} fields, the header has {len(current[0][1])}",
                             path=path, row=i)
        if current is not None:
            current.append((i, fields))
    for _, recs in sections:
        if len(recs) < 2:
            raise InputError("a table with a header but no rows", path=path, row=recs[0][0])
    return sections, skipped_reports


def _frame(recs):
    """Records -> (DataFrame with ``_row``, its columns named without their unit; the unit of
    each such column; each column's name as the header prints it; the header's file line)."""
    header = [f.strip() for f in recs[0][1]]
    names, units = [], {}
    for h in header:
        m = _UNIT.match(h)
        names.append(m.group(1) if m else h)
        if m:
            units[m.group(1)] = m.group(2)
    df = pd.DataFrame([f for _, f in recs[1:]], columns=names)
    df["_row"] = [ln for ln, _ in recs[1:]]
    return df, units, dict(zip(names, header)), recs[0][0]


def _si(df, units, shown, name, kind, path, row):
    """The column ``name`` as floats in SI, from the unit in its header (``time``: ns where it
    names none; ``size``: bytes)."""
    unit = units.get(name, "ns" if kind == "time" else "B")
    fits = unit in TIME_UNITS if kind == "time" else unit.endswith(("B", "byte"))
    try:
        factor = unit_factor(unit) if fits else None
    except InputError:
        factor = None
    if factor is None:
        raise InputError(f"unit '{unit}' is not a {kind} unit", path=path, row=row,
                         field=shown[name])
    return numeric(df[name], path=path, field=shown[name], rows=df["_row"]) * factor


def _trace(recs, path):
    """One row per kernel launch of a cuda_gpu_trace table, and the skipped copies."""
    df, units, shown, header_row = _frame(recs)
    refuse_repeated_rows(df, path, "nsys prints each launch and copy once, with its start")
    is_kernel = df["GrdX"].str.strip() != ""
    skipped = [Skipped(str(path), int(r), "not a kernel launch (memory copy or set)")
               for r in df.loc[~is_kernel, "_row"]]
    df = df.loc[is_kernel].copy()
    if df.empty:
        return df, skipped
    df["time_s"] = _si(df, units, shown, "Duration", "time", path, header_row)
    df, bad = split_unusable_times(df, path, field=shown["Duration"])
    skipped += bad
    rows = df["_row"]
    one = pd.Series(1.0, index=df.index)
    dims = {c: numeric(df[c], path=path, field=c, rows=rows) if c in df.columns else one
            for c in (*_GRID, *_BLOCK)}
    grid, block = [dims[c] for c in _GRID], [dims[c] for c in _BLOCK]
    out = pd.DataFrame({"kernel": df["Name"], "time_s": df["time_s"], "_row": rows,
                        "grid_blocks": grid[0] * grid[1] * grid[2],
                        "block_threads": block[0] * block[1] * block[2]})
    out["config"] = launch_config(grid, block)
    if "Reg/Trd" in df.columns:
        out["regs_per_thread"] = numeric(df["Reg/Trd"], path=path, field="Reg/Trd", rows=rows)
    smem = [c for c in ("StcSMem", "DymSMem") if c in df.columns]
    if smem:
        out["smem_per_block_bytes"] = sum(
            _si(df, units, shown, c, "size", path, header_row).fillna(0.0) for c in smem)
    out["_device"] = (df["Device"].map(strip_device_index).replace("", None)
                      if "Device" in df.columns
                      else pd.Series(None, index=df.index, dtype=object))
    return out, skipped


def _summary(recs, path, gpu):
    """One row per kernel (and launch configuration) of a cuda_gpu_kern_sum table."""
    df, units, shown, header_row = _frame(recs)
    refuse_repeated_rows(df, path, "nsys sums each kernel (and launch shape) on one row")
    if gpu is None:
        raise GPUNotNamedError("a kernel summary (cuda_gpu_kern_sum) does not name the GPU",
                               in_file="read the cuda_gpu_trace report, whose Device column "
                               "does", path=path)
    rows = df["_row"]
    out = pd.DataFrame({"kernel": df["Name"], "_row": rows})
    for col, name in (("time_s", "Avg"), ("time_s_min", "Min"), ("time_s_max", "Max")):
        if name in df.columns:
            out[col] = _si(df, units, shown, name, "time", path, header_row)
    out["launches"] = numeric(df["Instances"], path=path, field="Instances", rows=rows)
    out["config"] = "default"
    if {"GridXYZ", "BlockXYZ"} <= set(df.columns):
        out["config"] = ("grid=" + df["GridXYZ"].map(_xyz) + " block="
                         + df["BlockXYZ"].map(_xyz))
    return split_unusable_times(out, path, field=shown["Avg"])


def _xyz(text) -> str:
    """nsys's '  896    1    1' -> '896x1x1'."""
    return "x".join(str(text).split())
