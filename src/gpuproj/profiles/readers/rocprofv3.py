"""AMD rocprofv3 (ROCprofiler-SDK, ROCm 6.2 on) CSV output: kernels traced or profiled on an AMD
GPU, to project to any other GPU.

- ``rocprofv3 --kernel-trace --output-format csv -- APP`` writes ``<prefix>_kernel_trace.csv``:
  one row per dispatch (``Kind`` = ``KERNEL_DISPATCH``) with ``Agent_Id``, ``Kernel_Name``,
  ``Start_Timestamp`` and ``End_Timestamp`` (ns), the workgroup and grid sizes per dimension
  (``Workgroup_Size_X`` ..., ``Grid_Size_X`` ... in work-items), the LDS per workgroup
  (``LDS_Block_Size``; before ROCprofiler-SDK 1.1 ``Group_Segment_Size``) and, in newer
  versions, ``VGPR_Count`` / ``Accum_VGPR_Count``. rocpd's CSV export (``Guid`` first,
  ``Lds_Block_Size``, ``Vgpr_Count``, ...) reads the same.
- ``rocprofv3 --pmc C1 C2 ...`` (or ``-i counters.txt``, one ``pass_N/`` or ``pmc_N/`` folder
  per pass) writes ``<prefix>_counter_collection.csv``: one row per dispatch and counter
  (``Counter_Name``, ``Counter_Value``), with the dispatch's launch (``Grid_Size`` and
  ``Workgroup_Size`` in work-items, ``LDS_Block_Size``, ``VGPR_Count``, ``Accum_VGPR_Count``)
  and timestamps on every row. The counters of a dispatch become one row, and the formulas of
  the ``rocprof`` reader turn them into bytes and FLOPs (gfx908, gfx90a, gfx94x): collect the
  ``_sum`` counters rocprof-compute collects (``TCC_EA0_RDREQ_sum``, ...) and the
  ``SQ_INSTS_VALU_*`` ones. A counter that appears twice for one dispatch is an error: gpuproj
  does not guess how its values combine.

The GPU: ``gpu=`` (``--source``), else the ``<prefix>_agent_info.csv`` rocprofv3 writes beside
the file (or one folder up, beside the ``pass_N/`` folders). Its row for the dispatch's
``Agent_Id`` (``Agent N``: its ``Logical_Node_Id``, rocprofv3's default relative index; a bare
number: its ``Node_Id``) gives the ISA (``Name``) and ``Cu_Count``, which must fit exactly one
catalog GPU, as for the ``rocprof`` reader; with both, a ``gpu=`` of another ISA or CU count is
an error. ``Wave_Front_Size`` is the wavefront the counter formulas use.

Dispatches of one kernel with one launch configuration become one row: ``launches`` = their
number, ``time_s`` and counts the mean per dispatch (``time_s_min`` / ``time_s_max`` the spread).
A launch configuration is ``grid=<workgroups> block=<work-items>`` in totals, the only sizes a
counter collection and the ``rocprof`` reader's files give, so that a kernel trace's times match
their rows (``--trace``); a trace's per-dimension sizes are multiplied out, and two shapes of one
kernel with the same totals (16 x 64 and 64 x 16 workgroups of 64) become one row.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ...errors import GPUNotNamedError, InputError
from ..table import ProfileTable, Skipped
from ._checks import numeric
from ._io import group_launches, read_csv, refuse_repeated_rows
from .rocprof import checked_numbers, dispatches, fit_gpu

# rocprofv3's (and rocpd's) column names, lower-cased -> the rocprof v1 names of rocprof.py
RENAMES = {"kernel_name": "KernelName", "start_timestamp": "BeginNs",
           "end_timestamp": "EndNs", "lds_block_size": "lds", "group_segment_size": "lds",
           "vgpr_count": "arch_vgpr", "accum_vgpr_count": "accum_vgpr", "sgpr_count": "sgpr",
           "grid_size": "grd", "workgroup_size": "wgr", "agent_id": "agent",
           "dispatch_id": "dispatch", "counter_name": "counter", "counter_value": "value",
           "kind": "kind"}
_TRACE = ("Kind,Agent_Id,", "Guid,Kind,Agent_Id,")
_COUNTERS = "Correlation_Id,Dispatch_Id,Agent_Id,"
_AGENT_FIELDS = ("Node_Id", "Logical_Node_Id", "Agent_Type", "Name", "Cu_Count")
# what errors call a column the file lacks
_SHOWN = {"KernelName": "Kernel_Name", "BeginNs": "Start_Timestamp", "EndNs": "End_Timestamp",
          "agent": "Agent_Id", "dispatch": "Dispatch_Id", "counter": "Counter_Name",
          "value": "Counter_Value"}


def sniff(path, head: str) -> bool:
    first = head.split("\n", 1)[0].replace('"', "").strip()
    return first.startswith((*_TRACE, _COUNTERS))


def read(path, gpu: str | None = None) -> ProfileTable:
    """Read a rocprofv3 kernel trace or counter collection CSV (see the module docstring);
    ``gpu`` names the GPU where no ``agent_info.csv`` does."""
    path = Path(path)
    raw = read_csv(path)
    refuse_repeated_rows(raw, path, "rocprofv3 prints each dispatch (and counter) once, with "
                         "its timestamps")
    df = raw.rename(columns={c: RENAMES.get(str(c).lower(), c) for c in raw.columns})
    # the file's own name of each column, for errors
    names = {**_SHOWN, **{RENAMES.get(str(c).lower(), c): c for c in raw.columns}}
    for c in ("KernelName", "BeginNs", "EndNs", "agent"):
        if c not in df.columns:
            raise InputError(f"missing required column '{names[c]}' (not a rocprofv3 CSV?)",
                             path=path, field=names[c])
    skipped = []
    if "kind" in df.columns:  # a trace of kernels holds nothing else, but say so if it does
        other = df["kind"].astype(str) != "KERNEL_DISPATCH"
        skipped = [Skipped(str(path), int(r), f"{names['kind']} = {k} is no kernel dispatch")
                   for r, k in zip(df.loc[other, "_row"], df.loc[other, "kind"])]
        df = df[~other]
    if "counter" in df.columns:
        df = _one_row_per_dispatch(df, path, names)
    df = _launch_sizes(df, path, names)
    agents = _agents(path, gpu, df)
    out = []
    for agent, rows in df.groupby("agent", sort=False, dropna=False):
        g, wave = agents[agent]
        if wave is not None:
            rows = rows.assign(wave_size=wave)
        part, skip = dispatches(rows, g, path, path, name_field=names["KernelName"],
                                time_field=f"{names['EndNs']} - {names['BeginNs']}")
        out.append(part)
        skipped += skip
    table = pd.concat(out, ignore_index=True) if out else pd.DataFrame()
    return ProfileTable.from_frame(group_launches(table), skipped=skipped, origin=str(path))


def _one_row_per_dispatch(df: pd.DataFrame, path, names: dict) -> pd.DataFrame:
    """Counter collection rows (one per dispatch and counter) -> one row per dispatch, each
    counter a column named as rocprofv3 names it."""
    for c in ("dispatch", "value"):
        if c not in df.columns:
            raise InputError(f"missing required column '{names[c]}'", path=path, field=names[c])
    df = df.assign(value=numeric(df["value"], path=path, field=names["value"], rows=df["_row"]))
    keys = ["agent", "dispatch"]
    again = df.duplicated([*keys, "counter"])
    if again.any():
        r = df[again].iloc[0]
        raise InputError(f"counter {r['counter']} appears more than once for dispatch "
                         f"{r['dispatch']}", path=path, row=int(r["_row"]), field=names["counter"])
    counters = df.pivot(index=keys, columns="counter", values="value")
    counters.columns = [str(c) for c in counters.columns]
    launches = df.drop(columns=["counter", "value"]).drop_duplicates(keys).set_index(keys)
    return launches.join(counters).reset_index()


def _launch_sizes(df: pd.DataFrame, path, names: dict) -> pd.DataFrame:
    """Grid and workgroup sizes as totals of work-items (``grd``, ``wgr``), and the launch
    and time columns checked as numbers."""
    df = df.copy()
    for total, prefix in (("grd", "grid_size_"), ("wgr", "workgroup_size_")):
        dims = [c for c in df.columns if str(c).lower().startswith(prefix)]
        if dims and total not in df.columns:
            size = pd.Series(1.0, index=df.index)
            for c in sorted(dims):
                size = size * numeric(df[c], path=path, field=c, rows=df["_row"])
            df[total] = size
    read = [c for c in ("grd", "wgr", "lds", "arch_vgpr", "accum_vgpr", "BeginNs", "EndNs")
            if c in df.columns]
    return checked_numbers(df, read, path, names)


def _agent_file(path: Path) -> Path | None:
    """The ``agent_info.csv`` of the run that wrote ``path``: same prefix, same folder or the
    one above (counter passes go to ``pass_N/`` or ``pmc_N/``)."""
    prefix = re.sub(r"(kernel_trace|counter_collection)\.csv(\.gz)?$", "", path.name)
    for folder in (path.parent, path.parent.parent):
        f = folder / f"{prefix}agent_info.csv"
        if f.is_file():
            return f
    return None


def _agents(path: Path, gpu, df: pd.DataFrame) -> dict:
    """Agent_Id -> (catalog GPU, wavefront size or None) for every agent of ``df``."""
    from ...catalog import resolve

    info_path = _agent_file(path)
    if info_path is None:
        if gpu is None:
            raise GPUNotNamedError("the file does not name the GPU (no agent_info.csv of its "
                                   "run beside it)", path=path, field="Agent_Id")
        g = resolve(gpu)
        return {a: (g, None) for a in df["agent"].unique()}
    info = read_csv(info_path)
    for c in _AGENT_FIELDS:
        if c not in info.columns:
            raise InputError(f"missing column '{c}'", path=info_path, field=c)
    out = {}
    for agent in df["agent"].unique():
        text = str(agent).strip()
        m = re.fullmatch(r"Agent (\d+)", text)
        key, number = ("Logical_Node_Id", m.group(1)) if m else ("Node_Id", text)
        row = info[info[key].astype(str) == number]
        if row.empty or str(row["Agent_Type"].iloc[0]) != "GPU":
            first = df[df["agent"] == agent]["_row"].iloc[0]
            raise InputError(f"agent '{text}' is no GPU of {info_path.name}", path=path,
                             row=int(first), field="Agent_Id")
        r = row.iloc[0]
        cus = numeric(row["Cu_Count"], path=info_path, field="Cu_Count", rows=row["_row"]).iloc[0]
        g = fit_gpu(gpu, str(r["Name"]).strip(), cus, info_path, int(r["_row"]), "Name")
        wave = (float(r["Wave_Front_Size"]) if "Wave_Front_Size" in info.columns
                and pd.notna(r["Wave_Front_Size"]) else None)
        out[agent] = (g, wave)
    return out
