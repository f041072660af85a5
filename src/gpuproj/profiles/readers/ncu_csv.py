"""Nsight Compute CSV exports: ``ncu --csv --page raw --metrics ...`` (one row per kernel launch,
one column per metric, a second row with the units) and the default ``--page details`` layout
(one row per launch and metric, with ``Metric Name``, ``Metric Unit``, ``Metric Value``). On the
details page of a run without ``--metrics`` (``ncu --csv ./app``), the default sections print
their metrics under display labels ("Duration", "Registers Per Thread"): ``SECTION_LABELS``
reads those that name a metric below. Such a profile has times and launch sizes but no FLOP or
byte counts, which suits the baselines only (``gpuproj predict --method all`` says what the
other methods lack); ``gpuproj profile`` collects the counts. A GPU named with ``gpu``
(``--source``) names the GPU where the file's device name is missing, ambiguous or unknown to
the catalog, and must then have the ISA of the compute capability ncu printed (``CC`` 9.0 =
sm_90); where the file names a GPU, one given is the same GPU or an error;
an SM count other than the catalog's ("# SMs": a MIG slice, another part of the same name) is
an ``InputWarning``. ``ncu --csv --print-summary per-kernel`` prints one row per kernel, launch
configuration and metric, with the ``Minimum``, ``Maximum`` and ``Average`` over the kernel's
``Invocations``: read as one row per kernel and configuration with the averages, ``launches``
= the invocations (a whole number, in the file's locale as the values are) and the duration's
minimum and maximum as ``time_s_min`` / ``time_s_max``; its ``Device`` column is an index, so it
needs ``--source``. ``load(..., trace=TIMELINE)``
(``--trace``) replaces ncu's replayed times with those of the application as it ran
(``gpuproj.profiles.trace_times``).

Both ``--print-units base`` (``nsecond``, ``byte``) and the default auto-scaled units
(``usecond``, ``Kbyte``, ``Gbyte/second``) are converted to SI with ``gpuproj.units``; values may
carry thousands separators (``"1,234"``). ncu writes numbers in the system's locale, so a profile
taken under a German or French one has decimal commas (``"65,77"`` %, ``"27.595.520"`` bytes, and
``"117.344"`` ns for 117,344 ns). Its numbers are read in the style they show: with decimal commas
and dots between thousands where some value can only be so written (``"65,77"``, ``"0,125"``,
``"27.595.520"``), with decimal points and commas between thousands where some value can only be so
written (``"117.34"``, ``"0.001"``, ``"1,234,567"``), and a file with both is an error quoting one
of each (row, field); one where no value shows its style is read with decimal points, ncu's default.

Launches of the same kernel with the same launch configuration on the same GPU become one row:
``launches`` = their number, every count and ``time_s`` = the mean per launch (``time_s_min`` /
``time_s_max`` keep the spread). Pass ``per_launch=True`` to keep one row per launch (with
``launch_id``).

``NCU_METRICS`` below is the one table that maps Nsight Compute metric names to canonical
columns; ``gpuproj profile`` requests exactly these metrics and ``ncu_rep`` reads them too.
Metric names and meanings follow NVIDIA's Nsight Compute "Kernel Profiling Guide" (section
"Metrics Reference" / "Metrics Decoder") and the nvprof-to-ncu "Metric Comparison" table of the
"Nsight Compute CLI" user guide (docs.nvidia.com/nsight-compute/ProfilingGuide and
.../NsightComputeCli, "nvprof Transition Guide").
"""

from __future__ import annotations

import functools
import re
import warnings
from operator import itemgetter
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import GPUNotNamedError, InputError, InputWarning
from ...files import read_text
from ...units import TIME_UNITS, unit_factor
from ..table import ProfileTable
from ._checks import (
    MAX_VALUE,
    number_style,
    parse_number,
    shown_styles,
    split_missing_names,
    split_unusable_times,
    with_decimal_points,
)
from ._io import check_header, csv_fields, group_launches, named_or_given_gpus

# metric -> (canonical column, kind). Kinds: time, bytes, count, frequency, pct (0-100 -> 0-1),
# string.
# Two metrics mapping to one column are added (shared-memory requests = loads + stores;
# shared memory per block = static + dynamic).
NCU_METRICS = {
    # duration of the launch on the GPU (Profiling Guide: gpu__time_duration)
    "gpu__time_duration.sum": ("time_s", "time"),
    # thread-level SASS instructions with the guard predicate true, per opcode class; an FMA
    # instruction is one instruction (FLOPs = 2 x FMA + ADD + MUL, as ncu's roofline does).
    # = nvprof flop_count_{sp,dp,hp}_{fma,add,mul} (Metric Comparison table).
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": ("fp32_fma_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": ("fp32_add_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": ("fp32_mul_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": ("fp64_fma_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum": ("fp64_add_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum": ("fp64_mul_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum": ("fp16_fma_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum": ("fp16_add_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum": ("fp16_mul_thread_inst", "count"),
    # instruction mix = nvprof inst_fp_32 / inst_fp_64 / inst_integer / inst_compute_ld_st
    "smsp__sass_thread_inst_executed_op_fp32_pred_on.sum": ("fp32_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_fp64_pred_on.sum": ("fp64_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_integer_pred_on.sum": ("int_thread_inst", "count"),
    "smsp__sass_thread_inst_executed_op_memory_pred_on.sum": ("ldst_thread_inst", "count"),
    # warp- and thread-level instructions executed (nvprof inst_executed, thread_inst_executed)
    "smsp__inst_executed.sum": ("warp_inst", "count"),
    "smsp__thread_inst_executed.sum": ("thread_inst", "count"),
    # memory hierarchy (hierarchical roofline levels): DRAM, L2 (lts = L2 slice), L1/TEX
    "dram__bytes_read.sum": ("dram_read_bytes", "bytes"),
    "dram__bytes_write.sum": ("dram_write_bytes", "bytes"),
    "lts__t_bytes.sum": ("l2_bytes", "bytes"),
    # the L2 tag-stage sectors (32 B) the L1/TEX units asked for, each looked up once. On a GPU
    # whose L2 is split in two partitions (A100, H100, H200) lts__t_bytes counts every lookup at
    # a slice's tag stage: a request for memory homed in the far partition is looked up in a
    # near slice and, on a miss there, again in the far one over the L2 fabric, that lookup
    # attributed to srcunit_ltcfabric (NVIDIA, forums.developer.nvidia.com/t/361731). Our H100
    # and H200 suite profiles show lts__t_bytes = 1.50-1.56 x the L1's bytes on streaming
    # kernels; collected so that the next GPU run can tell whether the L2 level should take 32 x
    # these instead. Not used yet: l2_bytes stays lts__t_bytes (docs/ncu.md, "L2 bytes on a
    # partitioned L2").
    "lts__t_sectors_srcunit_tex.sum": ("l2_tex_sectors", "count"),
    "l1tex__t_bytes.sum": ("l1_bytes", "bytes"),
    # shared memory: bytes moved by SASS shared loads/stores, wavefronts (data-stage passes:
    # one per conflict-free access, more with bank conflicts), warp-level instructions, conflicts
    "smsp__sass_data_bytes_mem_shared.sum": ("shared_bytes", "bytes"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": ("shared_wavefronts", "count"),
    "smsp__inst_executed_op_shared_ld.sum": ("shared_requests", "count"),
    "smsp__inst_executed_op_shared_st.sum": ("shared_requests", "count"),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum": ("shared_bank_conflicts", "count"),
    # launch statistics
    "launch__grid_size": ("grid_blocks", "count"),
    "launch__block_size": ("block_threads", "count"),
    "launch__registers_per_thread": ("regs_per_thread", "count"),
    "launch__shared_mem_per_block_static": ("smem_per_block_bytes", "bytes"),
    "launch__shared_mem_per_block_dynamic": ("smem_per_block_bytes", "bytes"),
    # achieved occupancy = active warps / max warps per SM (nvprof achieved_occupancy)
    "sm__warps_active.avg.pct_of_peak_sustained_active": ("achieved_occupancy", "pct"),
    # the SM clock during the launch (the "SM Frequency" of ncu's Speed Of Light section): ncu
    # locks clocks to base unless --clock-control none, and peaks assume the boost clock
    "sm__cycles_elapsed.avg.per_second": ("sm_clock_hz", "frequency"),
    # the device's marketing name, resolved through the GPU catalog
    "device__attribute_display_name": ("gpu", "string"),
    # the SMs of the device profiled, checked against the catalog (a MIG slice or another SKU
    # has fewer or more than the part its name resolves to); not a profile column
    "device__attribute_multiprocessor_count": ("_sm_count", "count"),
}

# The details page of a run without --metrics (``ncu --csv ./app``, the default sections) prints
# a section's metrics under their display labels, not their names: (section, label) -> metric,
# as the section files shipped with Nsight Compute (sections/*.section) define them. Only
# labels whose metric is in NCU_METRICS; "SM Frequency" is smsp__cycles_elapsed.avg.per_second
# there, the same SM clock.
SECTION_LABELS = {
    ("GPU Speed Of Light Throughput", "Duration"): "gpu__time_duration.sum",
    ("GPU Speed Of Light Throughput", "SM Frequency"): "sm__cycles_elapsed.avg.per_second",
    ("Launch Statistics", "Block Size"): "launch__block_size",
    ("Launch Statistics", "Grid Size"): "launch__grid_size",
    ("Launch Statistics", "Registers Per Thread"): "launch__registers_per_thread",
    ("Launch Statistics", "# SMs"): "device__attribute_multiprocessor_count",
    ("Launch Statistics", "Static Shared Memory Per Block"): "launch__shared_mem_per_block_static",
    ("Launch Statistics", "Dynamic Shared Memory Per Block"):
        "launch__shared_mem_per_block_dynamic",
    ("Occupancy", "Achieved Occupancy"): "sm__warps_active.avg.pct_of_peak_sustained_active",
}

TIME_METRICS = ("gpu__time_duration.sum", "gpu__time_duration.avg")
# how the header starts: a launch per row or per metric (--page raw / details), or a kernel and
# metric per row (--print-summary per-kernel)
_HEADERS = ('"ID","Process ID"', '"Process ID","Process Name"')
# a size: bytes with a decimal or binary prefix, per launch or per block (shared memory)
_BYTE_UNIT = re.compile(r"(?:[KMGTP]i?)?byte(?:/block)?")
_IDENTITY = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time",
             "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "Device Name",
             "Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name",
             "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup",
             "Invocations", "Minimum", "Maximum", "Average"}


def metric_names() -> list[str]:
    """The metrics gpuproj asks Nsight Compute for (``gpuproj profile``), in table order."""
    return list(NCU_METRICS)


def sniff(path, head: str) -> bool:
    lines = [ln for ln in head.splitlines() if ln.startswith('"')]
    return bool(lines) and lines[0].startswith(_HEADERS) and '"Kernel Name"' in lines[0]


# ---- converting one value ------------------------------------------------------------------
def to_si(metric: str, text, unit: str, *, path, row, unit_row=None):
    """The SI value of ``metric`` printed as ``text`` in ``unit``; checks that the unit fits
    the metric's kind (a duration in bytes is an ``InputError``, not a silent factor).
    ``unit_row``: the file row the unit was printed on, where not ``row`` (the raw page's
    units row), so that a bad unit is reported where it is."""
    at = row if unit_row is None else unit_row
    _, kind = NCU_METRICS.get(metric, (None, "time" if metric in TIME_METRICS else "count"))
    if kind == "string":
        return None if text is None or str(text).strip() == "" else str(text).strip()
    try:
        v = parse_number(text)
    except ValueError:
        raise InputError(f"'{text}' is not a number", path=path, row=row, field=metric) from None
    if np.isnan(v):
        return v
    wrong, f = _unit(kind, unit)
    if wrong:
        raise InputError(wrong, path=path, row=at, field=metric)
    if kind == "pct":
        return v / 100.0
    if v < 0:
        raise InputError(f"{text} is negative", path=path, row=row, field=metric)
    if not np.isfinite(v * f):
        raise InputError(f"'{text}' is not a finite number", path=path, row=row, field=metric)
    if v * f > MAX_VALUE:
        raise InputError(f"'{text}' {unit} is beyond any count, size or time (over "
                         f"{MAX_VALUE:g})", path=path, row=row, field=metric)
    return v * f


@functools.lru_cache(maxsize=1024)
def _unit(kind: str, unit) -> tuple[str | None, float]:
    """What is wrong with ``unit`` for a metric of ``kind`` (None where nothing) and its SI
    factor: once per unit, not once per value (a raw page prints a column's unit once)."""
    unit = (unit or "").strip()
    if kind == "time" and unit not in TIME_UNITS:
        return f"unit '{unit}' is not a time unit", 0.0
    if kind == "bytes" and not _BYTE_UNIT.fullmatch(unit):  # not Gbyte/second, byte/cycle
        return f"unit '{unit}' is not a byte unit", 0.0
    if kind == "count" and ("byte" in unit or "second" in unit):
        return f"unit '{unit}' does not fit a count", 0.0
    if kind == "frequency" and not (unit.lower().endswith("hz") or unit.startswith("cycle/")):
        return f"unit '{unit}' is not a frequency", 0.0
    if kind == "pct":
        return (None if unit in ("%", "") else f"unit '{unit}' is not '%'"), 0.01
    try:
        return None, unit_factor(unit)
    except InputError as e:
        return str(e), 0.0


def _dims(text) -> str | None:
    """'(256, 1, 1)' -> '256x1x1'."""
    if text is None or str(text).strip() == "":
        return None
    nums = re.findall(r"\d+", str(text))
    return "x".join(nums) if nums else str(text).strip()


# ---- reading the two CSV layouts into one per-launch frame ----------------------------------
def _is_text(metric: str) -> bool:
    """A metric whose value is text (the device's name), never a number to rewrite."""
    return NCU_METRICS.get(metric, (None, ""))[1] == "string"


def _csv_records(path):
    """(file line number, fields) of the CSV part of an ncu log: lines before the header
    (``==PROF==`` messages, application output) and ``==`` lines after it are dropped."""
    lines = read_text(path).splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(_HEADERS)), None)
    if start is None:
        if not any(ln.strip() for ln in lines):
            raise InputError("file is empty", path=path)
        raise InputError("no Nsight Compute CSV header (a line starting with \"ID\"); export "
                         "with ncu --csv --page raw", path=path)
    recs = []
    for i in range(start, len(lines)):
        ln = lines[i]
        if not ln.strip() or ln.startswith("=="):
            continue
        recs.append((i + 1, csv_fields(ln, path, i + 1)))
        if len(recs) > 1 and recs[-1][1] == recs[0][1]:
            # two outputs one after the other: their launch IDs restart and would merge
            raise InputError(f"the header of row {recs[0][0]} again: the file holds two ncu "
                             "outputs one after the other; give each its own file", path=path,
                             row=i + 1)
    check_header(recs[0][1], path, recs[0][0])
    return recs


def _per_launch_raw(recs, path) -> pd.DataFrame:
    (_, header), body = recs[0], recs[1:]
    if not body or body[0][1][:1] != [""]:
        raise InputError("no units row under the header (ncu --csv --page raw prints one)",
                         path=path, row=recs[0][0] + 1)
    unit_row, unit_fields = body[0]
    if len(unit_fields) != len(header):
        raise InputError(f"{len(unit_fields)} fields, the header has {len(header)}", path=path,
                         row=unit_row)
    units = dict(zip(header, unit_fields))
    body = body[1:]
    if not body:
        raise InputError("file has a header but no rows", path=path)
    metric_cols = {i for i, m in enumerate(header) if m not in _IDENTITY and not _is_text(m)}
    if _raw_style(body, header, metric_cols, path) == "comma":
        body = [(line, [with_decimal_points(v, "comma") if i in metric_cols else v
                        for i, v in enumerate(f)]) for line, f in body]
    read = [m for m in header if m in NCU_METRICS or m in TIME_METRICS]  # _launch's metrics
    out = _raw_launches(body, header, units, read)
    if out is not None:
        return pd.DataFrame(out)
    out = []
    first = {}  # launch ID -> the row it was first printed on
    for line, fields in body:
        if len(fields) != len(header):
            raise InputError(f"{len(fields)} fields, the header has {len(header)}", path=path,
                             row=line)
        rec = dict(zip(header, fields))
        # ncu prints each launch once, under its own ID: a repeat is a line copied or two
        # pages joined, and would count as a launch more
        if first.setdefault(rec["ID"], line) != line:
            raise InputError(f"launch ID {rec['ID']} again (first on row {first[rec['ID']]}): "
                             "ncu prints each launch once, so a line was repeated or two "
                             "outputs were joined; give each output its own file", path=path,
                             row=line, field="ID")
        out.append(_launch(rec, {m: (rec[m], units.get(m, ""), line, unit_row) for m in read},
                           line, path))
    return pd.DataFrame(out)


def _raw_launches(body, header, units, read) -> list[dict] | None:
    """The rows that ``_launch`` makes of a raw page's ``body`` (equal, keys in the same order),
    converted a metric at a time: a value at a time took 10 s for 30,000 launches of 34
    metrics. None where the loop of ``_per_launch_raw`` must go row by row to name a row: one
    of another width, a launch ID again, a value that ``to_si`` refuses."""
    if any(len(f) != len(header) for _, f in body):
        return None
    n, lines = len(body), [line for line, _ in body]
    wanted = {"ID", "Kernel Name", "Grid Size", "Block Size", "Device Name", "CC", *read}
    columns = {c: [f[i] for _, f in body] for i, c in enumerate(header) if c in wanted}
    if len(set(columns["ID"])) != n:
        return None
    absent = (None,) * n
    rows = {"_row": lines, "launch_id": list(columns["ID"]),
            "kernel": [t or None for t in columns.get("Kernel Name", absent)],
            "_grid": _each_distinct(_dims, columns.get("Grid Size", absent)),
            "_block": _each_distinct(_dims, columns.get("Block Size", absent)),
            "_device_name": [t or None for t in columns.get("Device Name", absent)],
            "_cc": [(t or "").replace(",", ".") or None for t in columns.get("CC", absent)]}
    blank = {}  # row -> (metric, file row) of the metrics without a value, as _launch's
    timed = duration_metric(read)
    if timed is not None:
        rows["time_s"] = _si_column(timed, columns[timed], units.get(timed, ""))
        if rows["time_s"] is None:
            return None
    for m in read:
        if m in TIME_METRICS:
            continue
        col, kind = NCU_METRICS[m]
        v = _si_column(m, columns[m], units.get(m, ""))
        if v is None or (kind == "string") != (col == "gpu"):
            return None
        if kind != "string":
            for i in np.flatnonzero(np.isnan(v)):
                blank.setdefault(i, []).append((m, lines[i]))
        if col == "gpu":
            rows["_display_name"] = v
        elif col == "_sm_count":
            rows[col], rows["_sm_count_row"] = v, lines
        elif col in rows:  # two metrics of one count: a value where either has one
            if not isinstance(rows[col], np.ndarray):
                return None
            rows[col] = np.where(np.isnan(rows[col]), v, rows[col] + np.where(np.isnan(v), 0.0, v))
        else:
            rows[col] = v
    rows["_blank"] = [tuple(blank.get(i, ())) for i in range(n)]
    values = [v.tolist() if isinstance(v, np.ndarray) else v for v in rows.values()]
    return [dict(zip(rows, launch)) for launch in zip(*values)]


def _each_distinct(f, texts) -> list:
    """``[f(t) for t in texts]``, ``f`` called once per distinct text."""
    done = {t: f(t) for t in set(texts)}
    return [done[t] for t in texts]


def _number(text) -> float:
    """``parse_number(text)``: ``float(text)`` where that reads it (the same number: no quote,
    thousands separator or "n/a" in it), else its own rules."""
    try:
        return float(text)
    except ValueError:
        return parse_number(text)


def _si_column(metric: str, texts, unit: str):
    """``to_si`` of each of ``texts`` (``metric`` in ``unit``): floats (a list of text for a
    metric of text); None where ``to_si`` refuses one."""
    _, kind = NCU_METRICS.get(metric, (None, "time" if metric in TIME_METRICS else "count"))
    if kind == "string":
        return [None if t is None or str(t).strip() == "" else str(t).strip() for t in texts]
    try:
        try:
            v = np.array(list(map(float, texts)), dtype=float)
        except ValueError:  # a text that only parse_number reads ("1,024"), or none reads
            v = np.array(_each_distinct(_number, texts), dtype=float)
    except ValueError:
        return None
    blank = np.isnan(v)
    if blank.all():
        return v
    wrong, factor = _unit(kind, unit)
    if wrong:
        return None
    if kind == "pct":
        return np.where(blank, v, v / 100.0)
    with np.errstate(over="ignore", invalid="ignore"):
        si = v * factor
    known = ~blank
    if (v[known] < 0).any() or not np.isfinite(si[known]).all() or (si[known] > MAX_VALUE).any():
        return None
    return np.where(blank, v, si)


def _raw_style(body, header, metric_cols, path) -> str:
    """``number_style`` of the metric cells of a raw page's ``body``, from its distinct texts
    where every row has every metric column: a generator of each cell's (row, field, text)
    took 20 s for 11 million cells. It goes cell by cell where that may be an error, to quote
    the first number of each style."""
    cols = sorted(metric_cols)
    if cols and all(len(f) > cols[-1] for _, f in body):
        take = itemgetter(*cols) if len(cols) > 1 else (lambda f: (f[cols[0]],))
        distinct = set()
        for _, f in body:
            distinct.update(take(f))
        styles = shown_styles(distinct)
        if len(styles) < 2:
            return next(iter(styles), "point")
    return number_style(((line, header[i], f[i]) for line, f in body for i in metric_cols
                         if i < len(f)), path)


def _per_launch_details(recs, path) -> pd.DataFrame:
    (_, header), body = recs[0], recs[1:]
    if not body:
        raise InputError("file has a header but no rows", path=path)
    # ncu ends a metric row after its value (and a comma): the rule columns that close the
    # header (Rule Name ... Estimated Speedup) are filled only on the rows of rule results
    name_at, value_at = header.index("Metric Name"), header.index("Metric Value")
    need = value_at + 1
    comma = number_style(((line, f[name_at], f[value_at]) for line, f in body
                          if len(f) >= need and not _is_text(f[name_at])), path) == "comma"
    launches = {}
    named = {}  # (launch ID, metric) -> (value, unit, row) of the metrics printed by name
    for line, fields in body:
        if not need <= len(fields) <= len(header):
            raise InputError(f"{len(fields)} fields, the header has {len(header)}", path=path,
                             row=line)
        rec = dict(zip(header, fields))
        entry = launches.setdefault(rec["ID"], (rec, {}, line))
        name = rec["Metric Name"]
        name = SECTION_LABELS.get((rec.get("Section Name"), name), name)
        # a metric requested by name (--metrics) wins over the same metric under its label
        if name and (name == rec["Metric Name"] or name not in entry[1]):
            value = rec["Metric Value"]
            if comma and not _is_text(name):
                value = with_decimal_points(value, "comma")
            unit = rec.get("Metric Unit", "")
            if name == rec["Metric Name"] and (name in NCU_METRICS or name in TIME_METRICS):
                before = named.setdefault((rec["ID"], name), (value, unit, line))
                if before[:2] != (value, unit):
                    raise InputError(f"{name} of launch {rec['ID']} printed twice, as "
                                     f"{before[0]} {before[1]} on row {before[2]} and as {value} "
                                     f"{unit}: which one holds?", path=path, row=line,
                                     field=name)
            entry[1][name] = (value, unit, line, line)
    return pd.DataFrame([_launch(rec, metrics, line, path)
                         for rec, metrics, line in launches.values()])


def _per_kernel_summary(recs, path) -> pd.DataFrame:
    """``--print-summary per-kernel``: a row per kernel, launch configuration and metric, with
    the metric's ``Minimum``, ``Maximum`` and ``Average`` over the kernel's ``Invocations``.
    One row per kernel and configuration: the averages, ``launches`` = the invocations and the
    duration's minimum and maximum as ``time_s_min`` / ``time_s_max``."""
    (line, header), body = recs[0], recs[1:]
    missing = [c for c in ("Kernel Name", "Metric Name", "Metric Unit", "Minimum", "Maximum")
               if c not in header]
    if missing:
        raise InputError(f"missing required column '{missing[0]}'", path=path, row=line,
                         field=missing[0])
    if not body:
        raise InputError("file has a header but no rows", path=path)
    # the invocations are written in the same locale as the values ("1.234" = 1,234 under a
    # decimal comma), and show it where they have thousands separators
    name_at, stats_at = header.index("Metric Name"), [
        header.index(c) for c in ("Minimum", "Maximum", "Average", "Invocations") if c in header]
    comma = number_style(((line, f"{f[name_at]} {header[i]}", f[i]) for line, f in body
                          if len(f) == len(header) and not _is_text(f[name_at])
                          for i in stats_at), path) == "comma"
    kernels = {}
    for line, fields in body:
        if len(fields) != len(header):
            raise InputError(f"{len(fields)} fields, the header has {len(header)}", path=path,
                             row=line)
        rec = dict(zip(header, fields))
        if comma:
            rec.update({c: with_decimal_points(rec[c], "comma")
                        for c in ("Minimum", "Maximum", "Average")})
        key = tuple(rec.get(c) for c in ("Process ID", "Kernel Name", "Block Size", "Grid Size",
                                         "Device"))
        _, metrics, spread, _ = kernels.setdefault(key, (rec, {}, {}, line))
        name = SECTION_LABELS.get((rec.get("Section Name"), rec["Metric Name"]),
                                  rec["Metric Name"])
        if name and (name == rec["Metric Name"] or name not in metrics):
            metrics[name] = (rec["Average"], rec["Metric Unit"], line, line)
            spread[name] = (rec["Minimum"], rec["Maximum"], rec["Metric Unit"], line)
    out = []
    for rec, metrics, spread, line in kernels.values():
        row = _launch(rec, metrics, line, path)
        row["launches"] = _invocations(rec["Invocations"], comma, path, line)
        timed = duration_metric(metrics)
        if timed is not None:
            low, high, unit, at = spread[timed]
            row["time_s_min"] = to_si(timed, low, unit, path=path, row=at)
            row["time_s_max"] = to_si(timed, high, unit, path=path, row=at)
        out.append(row)
    return pd.DataFrame(out)


def _invocations(text, comma: bool, path, line) -> float:
    """The ``Invocations`` of a summary row (``comma``: written with a decimal comma, so "1.234"
    is 1,234): a whole number of launches, at least 1."""
    n = to_si("Invocations", with_decimal_points(text, "comma") if comma else text, "",
              path=path, row=line)
    if not (n >= 1 and float(n).is_integer()):
        raise InputError(f"'{text}' is not a whole number of launches", path=path, row=line,
                         field="Invocations")
    return n


def _launch(rec: dict, metrics: dict, line: int, path) -> dict:
    """One launch (first printed on file row ``line``) as canonical columns (SI) plus identity;
    ``metrics``: name -> (text, unit, the file rows of the text and of the unit)."""
    row = {"_row": line, "launch_id": rec.get("ID"), "kernel": rec.get("Kernel Name") or None,
           "_grid": _dims(rec.get("Grid Size")), "_block": _dims(rec.get("Block Size")),
           "_device_name": rec.get("Device Name") or None,
           "_cc": (rec.get("CC") or "").replace(",", ".") or None}
    timed = duration_metric(metrics)
    if timed is not None:
        text, unit, at, unit_at = metrics[timed]
        row["time_s"] = to_si(timed, text, unit, path=path, row=at, unit_row=unit_at)
    blank = []  # (metric, file row) of the metrics printed without a value
    for m, (text, unit, at, unit_at) in metrics.items():
        if m in TIME_METRICS:
            continue
        if m in NCU_METRICS:
            col, _ = NCU_METRICS[m]
            v = to_si(m, text, unit, path=path, row=at, unit_row=unit_at)
            if isinstance(v, float) and np.isnan(v):
                blank.append((m, at))
            if col == "gpu":
                row["_display_name"] = v
            elif col == "_sm_count":  # a warning names the row it was printed on
                row[col], row["_sm_count_row"] = v, at
            elif col in row and not np.isnan(row[col]):
                row[col] = row[col] + (0.0 if np.isnan(v) else v)
            else:
                row[col] = v
    row["_blank"] = tuple(blank)
    return row


def duration_metric(metrics) -> str | None:
    """The metric of ``metrics`` (names) that ``time_s`` comes from: .sum, else .avg where
    only that was printed; never both added (a raw page prints .avg before .sum: adding them
    doubled every time)."""
    return next((m for m in TIME_METRICS if m in metrics), None)


# ---- from per-launch rows to the canonical table (shared with ncu_rep) ----------------------
def finish(launches: pd.DataFrame, path, *, gpu=None, per_launch=False) -> ProfileTable:
    """Per-launch frame (``_launch`` rows) -> ``ProfileTable``: GPU names resolved, unusable
    durations skipped, launches of one kernel+config+GPU grouped unless ``per_launch``."""
    df = launches.copy()
    if "time_s" not in df.columns:
        raise InputError(f"missing required metric {TIME_METRICS[0]}", path=path,
                         field=TIME_METRICS[0])
    if df["kernel"].isna().all():
        raise InputError("missing required column 'Kernel Name'", path=path, field="Kernel Name")
    names = pd.Series(None, index=df.index, dtype=object)
    for c in ("_display_name", "_device_name"):
        if c in df.columns:
            names = names.fillna(df[c])
    if gpu is None and names.isna().any():
        raise GPUNotNamedError("the file does not name the GPU (no "
                               "device__attribute_display_name column)", path=path, field="gpu")
    # ``gpu`` names the GPU where the file does not, and must be one the file names where it
    # does (the compute capability check below cannot tell an H100 from an H200)
    rows = df["_row"] if "_row" in df.columns else pd.Series(range(1, len(df) + 1),
                                                             index=df.index)
    df["gpu"] = named_or_given_gpus(names.astype(object), gpu, path, rows,
                                    "device__attribute_display_name")
    if "_cc" in df.columns:
        _check_compute_capability(df, path)
    if "_sm_count" in df.columns:
        _warn_sm_count(df, path)
    if "_blank" in df.columns:
        _warn_blank(df["_blank"], path)
    dims = {}
    for key, alt in (("_grid", "grid_blocks"), ("_block", "block_threads")):
        d = df[key] if key in df.columns else pd.Series(None, index=df.index, dtype=object)
        if alt in df.columns:  # no "Grid Size" text column (ncu_rep): the launch__ sizes
            d = d.astype(object).where(d.notna(), df[alt].map(
                lambda v: None if pd.isna(v) else f"{v:.0f}"))
        dims[key] = d.fillna("?").astype(str)
    df["config"] = "grid=" + dims["_grid"] + " block=" + dims["_block"]
    df, skipped = split_missing_names(df, path, {"kernel": "Kernel Name"})
    df, unusable = split_unusable_times(df, path, field="gpu__time_duration.sum")
    skipped += unusable
    if per_launch:
        if "launches" in df.columns:
            raise InputError("a per-kernel summary (ncu --print-summary per-kernel) has no "
                             "launches to keep apart: per_launch needs a raw or details page",
                             path=path)
        df["launches"] = 1.0
    else:
        df = group_launches(df)
    df = df.drop(columns=[c for c in df.columns if c.startswith("_") and c != "_row"])
    return ProfileTable.from_frame(df, skipped=skipped, origin=str(path))


def _warn_blank(blank: pd.Series, path) -> None:
    """Warn of the metrics that some launches have a value of and others not (an empty or
    ``nan`` cell): the counts made from them are unknown for those launches (or short of that
    metric, for the two counts that add two metrics), and a projection of those kernels leans
    on the other levels. A metric no launch has a value of is simply absent."""
    rows: dict[str, list[int]] = {}
    for launch in blank:
        for m, at in launch:
            rows.setdefault(m, []).append(at)
    for m, at in rows.items():
        if len(at) < len(blank):
            warnings.warn(InputWarning(
                f"{path}: {len(at)} of {len(blank)} launches have no value of {m} (row "
                f"{at[0]}{', ...' if len(at) > 1 else ''}): the counts made from it are "
                "unknown for them"), stacklevel=4)


def _check_compute_capability(df: pd.DataFrame, path) -> None:
    """ncu prints the compute capability of the GPU it profiled ("CC" 10.0 = ISA sm_100); a
    source GPU of another ISA, from --source or a catalog name that matched the wrong part,
    would project every kernel from the wrong machine, so it stops at the first such row."""
    from ...catalog import resolve

    firsts = df.dropna(subset=["_cc"]).drop_duplicates(["gpu", "_cc"])
    for gpu, cc, row in zip(firsts["gpu"], firsts["_cc"], firsts["_row"]):
        isa, want = resolve(gpu).isa or "", "sm_" + str(cc).replace(".", "")
        if isa.startswith("sm_") and isa != want:
            raise InputError(f"ncu profiled a compute capability {cc} GPU ({want}), but {gpu} "
                             f"is {isa}: name the GPU the profile was taken on", path=path,
                             row=row, field="CC")


def _warn_sm_count(df: pd.DataFrame, path) -> None:
    """An ``InputWarning`` per GPU whose profiled SM count is not the catalog's: the source's
    peaks come from the catalog, so a MIG slice, or another part under the same name, projects
    from a machine of another size. Not an error: the profile itself is sound."""
    from ...catalog import resolve

    firsts = df.dropna(subset=["_sm_count"]).drop_duplicates(["gpu", "_sm_count"])
    rows = firsts.get("_sm_count_row", firsts["_row"])
    for gpu, n, row in zip(firsts["gpu"], firsts["_sm_count"], rows):
        known = resolve(gpu).values.get("sm_count")
        if known is not None and known.value != n:
            warnings.warn(InputWarning(
                f"{path}: row {int(row)}: ncu profiled a GPU with {n:.0f} SMs, the catalog's {gpu} "
                f"has {known.value:.0f}; the projections use the catalog's peaks"), stacklevel=2)


def read(path, gpu: str | None = None, per_launch: bool = False) -> ProfileTable:
    """Read an Nsight Compute CSV export (see module docstring). ``gpu`` names the GPU, in place
    of the file's ``device__attribute_display_name`` (needed where the file lacks it)."""
    path = Path(path)
    recs = _csv_records(path)
    header = recs[0][1]
    if "Invocations" in header and "Average" in header:
        launches = _per_kernel_summary(recs, path)
    elif "ID" not in header:
        raise InputError("missing required column 'ID' (ncu numbers each launch)", path=path,
                         row=recs[0][0], field="ID")
    elif "Metric Name" in header and "Metric Value" in header:
        launches = _per_launch_details(recs, path)
    else:
        launches = _per_launch_raw(recs, path)
    return finish(launches, path, gpu=gpu, per_launch=per_launch)
