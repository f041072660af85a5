"""nvprof CSV output (CUDA <= 10 profiler, GPUs up to Volta):

- ``nvprof --csv --metrics m1,m2,... APP``: one row per (device, kernel, metric) with columns
  ``Device, Kernel, Invocations, Metric Name, Metric Description, Min, Max, Avg``; values may
  carry a unit (``12.3GB/s``, ``93.5%``). The ``Avg`` over the invocations is used, of the
  metrics a canonical column is made of (``NVPROF_METRICS``); the others, utilisation levels
  such as ``Low (2)`` among them, are passed over. With ``--events``, nvprof prints an
  ``Event result:`` section before the ``Metric result:`` one: the events are passed over,
  with a warning.
- ``nvprof --csv --print-gpu-trace APP``: one row per launch or copy with ``Start, Duration,
  Grid X..Z, Block X..Z, Registers Per Thread, Static SMem, Dynamic SMem, ..., Device, Name``
  and a units row under the header (``us,us,,,...``). Copies and memsets are skipped. Where
  the trace has no ``Correlation_ID`` column (CUDA 8's nvprof), each name ends with the
  launch's correlation ID (``kernel(...) [1073]``), which is dropped.

Durations come only from the trace: ``read(metrics_csv, trace=trace_csv)`` joins the two by
device and kernel name (nvprof averages metrics per kernel name, so every launch configuration
of one kernel gets the same per-launch counts); ``read(trace_csv)`` alone gives time and launch
configuration. ``==PID==`` message lines are ignored.

Metric meanings: CUDA Profiler User's Guide, "Metrics Reference" (docs.nvidia.com/cuda/
profiler-users-guide). ``flop_count_sp_fma`` counts FMA *operations* of non-predicated threads,
each contributing 1 (so = FFMA thread instructions), while ``flop_count_sp`` = 2 x fma + add +
mul without special functions; DRAM and L2 transactions are 32-byte sectors.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import GPUNotNamedError, InputError, InputWarning
from ...files import read_text
from ...units import unit_factor
from ..table import ProfileTable, Skipped
from ._checks import numeric, parse_number, split_unusable_times
from ._io import (
    check_header,
    csv_fields,
    launch_config,
    named_or_given_gpus,
    refuse_repeated_rows,
    strip_device_index,
)

SECTOR_BYTES = 32  # bytes per DRAM / L2 transaction (Profiler User's Guide, dram_read_throughput)

# nvprof metric (or event) -> (canonical column, factor). Several metrics on one column add up.
NVPROF_METRICS = {
    "flop_count_sp_fma": ("fp32_fma_thread_inst", 1.0),
    "flop_count_sp_add": ("fp32_add_thread_inst", 1.0),
    "flop_count_sp_mul": ("fp32_mul_thread_inst", 1.0),
    "flop_count_sp_special": ("fp32_special_thread_inst", 1.0),
    "flop_count_dp_fma": ("fp64_fma_thread_inst", 1.0),
    "flop_count_dp_add": ("fp64_add_thread_inst", 1.0),
    "flop_count_dp_mul": ("fp64_mul_thread_inst", 1.0),
    "flop_count_hp_fma": ("fp16_fma_thread_inst", 1.0),
    "flop_count_hp_add": ("fp16_add_thread_inst", 1.0),
    "flop_count_hp_mul": ("fp16_mul_thread_inst", 1.0),
    "inst_fp_32": ("fp32_thread_inst", 1.0),
    "inst_fp_64": ("fp64_thread_inst", 1.0),
    "inst_integer": ("int_thread_inst", 1.0),
    "inst_compute_ld_st": ("ldst_thread_inst", 1.0),
    "inst_executed": ("warp_inst", 1.0),
    "thread_inst_executed": ("thread_inst", 1.0),
    "dram_read_transactions": ("dram_read_bytes", SECTOR_BYTES),
    "dram_write_transactions": ("dram_write_bytes", SECTOR_BYTES),
    "dram_read_bytes": ("dram_read_bytes", 1.0),
    "dram_write_bytes": ("dram_write_bytes", 1.0),
    "l2_read_transactions": ("l2_bytes", SECTOR_BYTES),
    "l2_write_transactions": ("l2_bytes", SECTOR_BYTES),
    "shared_load_transactions": ("shared_wavefronts", 1.0),
    "shared_store_transactions": ("shared_wavefronts", 1.0),
    "inst_executed_shared_loads": ("shared_requests", 1.0),
    "inst_executed_shared_stores": ("shared_requests", 1.0),
    "achieved_occupancy": ("achieved_occupancy", 1.0),
}
# the same quantity in two forms (``--metrics all`` collects both): the second only where the
# first is missing, never both added
SAME_AS = {"dram_read_transactions": "dram_read_bytes",
           "dram_write_transactions": "dram_write_bytes"}
# a total from which the FMA count follows when only the parts add/mul are given:
# fma = (flop_count_dp - add - mul) / 2
FMA_FROM_TOTAL = {"flop_count_dp": ("fp64", "flop_count_dp_fma", "flop_count_dp_add",
                                    "flop_count_dp_mul"),
                  "flop_count_sp": ("fp32", "flop_count_sp_fma", "flop_count_sp_add",
                                    "flop_count_sp_mul")}

_METRIC_HEADER = ["Device", "Kernel", "Invocations", "Metric Name", "Metric Description",
                  "Min", "Max", "Avg"]
# possessive ++: the number gives back no e or E to the unit, which it never needs to, and a
# crafted cell of 50,000 e took a minute of backtracking
_VALUE = re.compile(r"^\s*([-+0-9.,eE]++)\s*([A-Za-z/%]*)\s*$")
_SECTION = re.compile(r"^==\d+== (\w+) result:\s*$")
# the metrics a canonical column is made of: only their values need to be numbers (nvprof prints
# utilisation metrics as levels, "Low (2)")
USED_METRICS = {*NVPROF_METRICS, *FMA_FROM_TOTAL}


def sniff(path, head: str) -> bool:
    return ('"Device","Kernel","Invocations","Metric Name"' in head
            or '"Device","Kernel","Invocations","Event Name"' in head  # to say what it lacks
            or '"Start","Duration","Grid X"' in head)


def _records(path):
    lines = read_text(path).splitlines()
    if not any(ln.strip() for ln in lines):
        raise InputError("file is empty", path=path)
    # nvprof --events E --metrics M prints an "Event result:" section before the "Metric
    # result:" one, each with its own header: the metrics are read, the events passed over
    section, sections = None, []
    for i, ln in enumerate(lines):
        m = _SECTION.match(ln)
        if m:
            section = m.group(1)
        sections.append(section)
    keep = "Metric" if "Metric" in sections else None
    passed = [i + 1 for i, ln in enumerate(lines)
              if keep and sections[i] != keep and ln.startswith('"')]
    if passed:
        warnings.warn(InputWarning(
            f"{path}: rows {passed[0]}-{passed[-1]}: the {sections[passed[0] - 1] or 'first'} "
            "result section is passed over; gpuproj reads the metric result (nvprof --metrics)"),
            stacklevel=3)
    start = next((i for i, ln in enumerate(lines)
                  if ln.startswith('"') and (keep is None or sections[i] == keep)), None)
    if start is None:
        raise InputError("no nvprof CSV header (run nvprof with --csv)", path=path)
    recs = [(i + 1, csv_fields(ln, path, i + 1)) for i, ln in enumerate(lines)
            if i >= start and ln.strip() and not ln.startswith("==")
            and (keep is None or sections[i] == keep)]
    check_header(recs[0][1], path, recs[0][0])
    width = len(recs[0][1])
    for line, fields in recs[1:]:
        if fields == recs[0][1]:
            # two processes (--profile-child-processes) or two runs: their kernels would merge
            raise InputError(f"the header of row {recs[0][0]} again: the file holds two nvprof "
                             "outputs one after the other; give each its own file", path=path,
                             row=line)
        if len(fields) != width:
            # nvprof prints every field of every row; anything else is a cut or edited line
            raise InputError(f"{len(fields)} fields, the header has {width}", path=path, row=line)
    return recs


def metric_value(text, *, path, row, field):
    """An nvprof cell as SI: '12.3GB/s' -> 1.23e10, '93.5%' -> 93.5, '1.2e+03' -> 1200."""
    m = _VALUE.match(str(text))
    if not m:
        raise InputError(f"'{text}' is not a number", path=path, row=row, field=field)
    try:
        v = parse_number(m.group(1))
    except ValueError:
        raise InputError(f"'{text}' is not a number", path=path, row=row, field=field) from None
    unit = m.group(2)
    if unit and unit != "%":
        try:
            v *= unit_factor(unit)
        except InputError as e:
            raise InputError(str(e), path=path, row=row, field=field) from None
    # counts, rates and shares: never negative; an overflow is a damaged file
    if not math.isfinite(v):
        raise InputError(f"'{text}' is not a finite number", path=path, row=row, field=field)
    if v < 0:
        raise InputError(f"{text} is negative", path=path, row=row, field=field)
    return v


def apply_metrics(values: dict, row: dict) -> None:
    """Add nvprof metric ``values`` (name -> SI value, scalars or Series) to canonical ``row``
    (in place). Metrics sharing a column add up (L2 reads + writes), except two forms of one
    quantity (``SAME_AS``)."""
    for name, v in values.items():
        if name in NVPROF_METRICS and SAME_AS.get(name) not in values:
            col, factor = NVPROF_METRICS[name]
            row[col] = _add(row[col], v * factor) if col in row else v * factor
    for total, (p, fma, add, mul) in FMA_FROM_TOTAL.items():
        col = f"{p}_fma_thread_inst"
        if col not in row and total in values and add in values and mul in values:
            row[col] = (values[total] - values[add] - values[mul]) / 2.0


def _add(a, b):
    """a + b where a missing part counts 0 (missing only when both are); scalars or Series."""
    if isinstance(a, pd.Series) or isinstance(b, pd.Series):
        if isinstance(a, pd.Series):
            return a.add(b, fill_value=0)
        return b.add(a, fill_value=0)
    if np.isnan(a):
        return b
    return a if np.isnan(b) else a + b


def _read_metrics(recs, path) -> pd.DataFrame:
    header = recs[0][1]
    missing = [c for c in ("Device", "Kernel", "Metric Name", "Avg") if c not in header]
    if missing:
        raise InputError(f"missing required column(s) {', '.join(missing)}", path=path,
                         field=missing[0])
    kernels = {}
    for line, fields in recs[1:]:
        rec = dict(zip(header, fields))
        key = (strip_device_index(rec["Device"]), rec["Kernel"])
        entry = kernels.setdefault(key, {"_row": line, "_values": {}, "launches_profiled":
                                         rec.get("Invocations")})
        if rec["Metric Name"] in USED_METRICS:
            entry["_values"][rec["Metric Name"]] = metric_value(
                rec["Avg"], path=path, row=line, field=rec["Metric Name"])
    if not kernels:
        raise InputError("file has a header but no rows", path=path)
    rows = []
    for (dev, kernel), e in kernels.items():
        try:
            launches = parse_number(e["launches_profiled"])
        except ValueError:
            raise InputError(f"'{e['launches_profiled']}' is not a number", path=path,
                             row=e["_row"], field="Invocations") from None
        row = {"_device": dev, "_key": _kernel_key(kernel), "_row": e["_row"],
               "launches_profiled": launches}
        apply_metrics(e["_values"], row)
        rows.append(row)
    return pd.DataFrame(rows)


def _read_trace(recs, path):
    """Kernel launches of a --print-gpu-trace CSV (one row each) and the skipped copies."""
    header = recs[0][1]
    missing = [c for c in ("Duration", "Grid X", "Block X", "Name") if c not in header]
    if missing:
        raise InputError(f"missing required column(s) {', '.join(missing)}", path=path,
                         field=missing[0])
    if len(recs) < 2:
        raise InputError("file has a header but no rows", path=path)
    unit_line, units = recs[1]
    if units and units[0] and not _is_unit_row(units):
        raise InputError("no units row under the header (nvprof prints one, e.g. 'us,us,,')",
                         path=path, row=unit_line)
    units = dict(zip(header, units))
    try:
        tf = unit_factor(units.get("Duration", ""))
    except InputError as e:
        raise InputError(str(e), path=path, row=unit_line, field="Duration") from None
    if units.get("Duration", "") not in ("s", "ms", "us", "ns"):
        raise InputError(f"unit '{units.get('Duration')}' is not a time unit", path=path,
                         row=unit_line, field="Duration")
    recs = recs[2:]
    if not recs:
        raise InputError("file has a header but no rows", path=path)
    df = pd.DataFrame([dict(zip(header, f)) for _, f in recs])
    df["_row"] = [ln for ln, _ in recs]
    refuse_repeated_rows(df, path, "nvprof prints each launch and copy once, with its start")
    skipped = []
    is_kernel = df["Grid X"].astype(str).str.strip() != ""
    for r in df.loc[~is_kernel, "_row"]:
        skipped.append(Skipped(str(path), int(r), "not a kernel launch (memory copy or set)"))
    df = df.loc[is_kernel].copy()
    if df.empty:
        raise InputError(f"no kernel launch in the trace (all {len(skipped)} rows are memory "
                         "copies or sets)", path=path)
    df["time_s"] = numeric(df["Duration"], path=path, field="Duration", rows=df["_row"]) * tf
    dims = {}
    for c in ("Grid X", "Grid Y", "Grid Z", "Block X", "Block Y", "Block Z",
              "Registers Per Thread", "Static SMem", "Dynamic SMem"):
        if c in df.columns:
            f = 1.0
            if "SMem" in c:
                f = _trace_bytes(units.get(c, "B") or "B", path, unit_line, c)
            dims[c] = numeric(df[c], path=path, field=c, rows=df["_row"]) * f
    one = pd.Series(1.0, index=df.index)
    grid = [dims.get(c, one) for c in ("Grid X", "Grid Y", "Grid Z")]
    block = [dims.get(c, one) for c in ("Block X", "Block Y", "Block Z")]
    df["grid_blocks"] = grid[0] * grid[1] * grid[2]
    df["block_threads"] = block[0] * block[1] * block[2]
    if "Registers Per Thread" in dims:
        df["regs_per_thread"] = dims["Registers Per Thread"]
    if "Static SMem" in dims:
        df["smem_per_block_bytes"] = dims["Static SMem"] + dims.get("Dynamic SMem", 0.0)
    df["config"] = launch_config(grid, block)
    names = df["Name"].astype(str)
    if "Correlation_ID" not in header:
        # an nvprof without the Correlation_ID column (CUDA 8's, the magus traces) ends each
        # kernel's name with it instead, "matrixMulCUDA(...) [1073]": kept, every launch was a
        # kernel of its own and none found its metrics
        names = names.str.replace(_CORRELATION_SUFFIX, "", regex=True)
    df["kernel"] = names
    df["_key"] = names.map(_kernel_key)
    df["_device"] = df["Device"].map(strip_device_index) if "Device" in df.columns else None
    return df, skipped


# nvprof's trace writes binary sizes with decimal-looking units: a memset of 1028 bytes prints as
# "1.003906" KB, and a block's 1088 bytes of static shared memory as 1.0625 KB (the Amaris
# tables, against 1088 B on GPUs whose runs printed bytes)
_TRACE_BYTES = {"B": 1.0, "KB": 2.0**10, "MB": 2.0**20, "GB": 2.0**30}


def _trace_bytes(unit, path, row, field) -> float:
    if unit not in _TRACE_BYTES:
        raise InputError(f"unit '{unit}' is not a size unit of nvprof's trace", path=path,
                         row=row, field=field)
    return _TRACE_BYTES[unit]


# the correlation ID that ends a kernel's name in a trace without a Correlation_ID column
_CORRELATION_SUFFIX = re.compile(r"\s\[\d+\]$")


def _kernel_key(name) -> str:
    """Join key for kernel names: the metric and trace outputs may differ in a leading 'void '."""
    return re.sub(r"^void\s+", "", str(name).strip())


def _is_unit_row(fields):
    return all(f == "" or re.fullmatch(r"[A-Za-z/%]+", f) for f in fields)


def read(path, trace=None, gpu: str | None = None) -> ProfileTable:
    """Read nvprof CSV output: a metrics file with ``trace=`` the gpu-trace file of the same
    run, or a gpu-trace file alone. ``gpu`` names the GPU where the files' device names do not
    (``_io.named_or_given_gpus``)."""
    path = Path(path)
    recs = _records(path)
    header = recs[0][1]
    if header[:4] == _METRIC_HEADER[:4]:
        metrics = _read_metrics(recs, path)
        if trace is None:
            raise InputError("nvprof metric output carries no durations: pass the "
                             "--print-gpu-trace CSV of the same run (--trace FILE; trace=FILE "
                             "in load())",
                             path=path)
        tpath = Path(trace)
        launches, skipped = _read_trace(_records(tpath), tpath)
    elif "Duration" in header:
        metrics, tpath = None, path
        launches, skipped = _read_trace(recs, path)
    elif header[:4] == [*_METRIC_HEADER[:3], "Event Name"]:
        raise InputError("nvprof --events output holds no metric gpuproj reads: collect "
                         "--metrics (flop_count_sp, dram_read_transactions, ...)", path=path,
                         row=recs[0][0])
    else:
        raise InputError("neither nvprof --metrics nor --print-gpu-trace CSV output", path=path)
    launches, bad = split_unusable_times(launches, tpath, field="Duration")
    skipped += bad
    keep = ["kernel", "_key", "config", "_device", "time_s", "grid_blocks", "block_threads",
            "regs_per_thread", "smem_per_block_bytes", "_row"]
    launches = launches[[c for c in keep if c in launches.columns]]
    g = launches.groupby(["_device", "_key", "kernel", "config"], sort=False, dropna=False)
    df = g.mean(numeric_only=True)
    df["launches"] = g.size()
    df["_row"] = g["_row"].min()
    df = df.reset_index()
    if metrics is not None:
        unmatched = metrics.merge(df[["_device", "_key"]].drop_duplicates(), how="left",
                                  indicator=True)
        lost = unmatched[unmatched["_merge"] == "left_only"]
        for r in lost["_row"]:
            skipped.append(Skipped(str(path), int(r), "kernel has metrics but no launch in "
                                   "the trace"))
        df = df.merge(metrics.drop(columns=["_row"]), on=["_device", "_key"], how="left")
    names = df["_device"].astype(object)
    if gpu is None and names.isna().any():
        raise GPUNotNamedError("the file does not name the device", path=path, field="Device")
    # the rows are the trace's, whose Device column names the GPU
    df["gpu"] = named_or_given_gpus(names, gpu, tpath, df["_row"], "Device")
    df = df.drop(columns=["_device", "_key"])
    return ProfileTable.from_frame(df, skipped=skipped, origin=str(path))
