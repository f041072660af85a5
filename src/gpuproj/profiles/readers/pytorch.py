"""PyTorch profiler traces: the JSON ``torch.profiler`` writes (``prof.export_chrome_trace(PATH)``,
or ``torch.profiler.tensorboard_trace_handler``'s ``*.pt.trace.json``, also gzipped), with the
GPU activity its Kineto library recorded through CUPTI: every kernel the application ran, with
its time and launch configuration. It has no counters: the projections that need FLOPs or
bytes take them from an Nsight Compute profile, which can take its times from this trace
(``--trace``).

- Each event of ``traceEvents`` with ``"cat": "kernel"`` is a kernel launch: its ``name``,
  ``dur`` (microseconds, as in every Chrome trace) and, in ``args``, the ``device`` it ran on,
  ``grid`` and ``block`` (three sizes each), ``registers per thread`` and ``shared memory``
  (bytes per block, static and dynamic). GPU copies and memsets (``gpu_memcpy``,
  ``gpu_memset``) are skipped and counted; the host's events (operators, runtime calls, flows)
  are not GPU work and are not read.
- Launches of one kernel with one launch configuration on one device become one row:
  ``launches`` = their number, ``time_s`` the mean per launch (``time_s_min`` / ``time_s_max``
  the spread).
- Rows are file lines: an event's is the line where it starts (Kineto writes an event over
  several lines), a field's the line that names it.
- Times are as fine as the trace: where it has whole microseconds (the V100 trace in tests/data,
  written in April 2024, has; newer ones have nanoseconds), a kernel shorter than a
  microsecond can have a ``dur`` of 0, skipped as unusable, and any other is off by up to a
  microsecond.

The GPU: the trace's ``deviceProperties`` entry for the event's ``device`` (its ``name`` as
CUDA reports it, ``Tesla V100-PCIE-16GB``); ``gpu=`` (``--source``) names it where the trace
names none or one the catalog does not know, and is an error where the trace names another.
PyTorch on ROCm writes the same layout; no trace of an AMD GPU has been read yet.

To trace the part of a program to project (a few steps after the warm-up)::

    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        train_step()
        torch.cuda.synchronize()
    prof.export_chrome_trace("step.pt.trace.json")
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd

from ...errors import GPUNotNamedError, InputError
from ...files import read_text
from ..table import ProfileTable, Skipped
from ._checks import MAX_VALUE, split_missing_names, split_unusable_times
from ._io import group_launches, launch_config, named_or_given_gpus

_SPACE = re.compile(r"[ \t\n\r]*")
_NEXT = re.compile(r"[ \t\n\r]*([,\]])[ \t\n\r]*")
_GRID, _BLOCK = ("_grid_x", "_grid_y", "_grid_z"), ("_block_x", "_block_y", "_block_z")
_COPIES = ("gpu_memcpy", "gpu_memset", "memcpy", "memset")  # Kineto's first traces: "Memcpy"


def sniff(path, head: str) -> bool:
    return head.lstrip().startswith("{") and ('"traceEvents"' in head
                                              or '"schemaVersion"' in head)


def read(path, gpu: str | None = None) -> ProfileTable:
    """Read a PyTorch profiler trace (see the module docstring); ``gpu`` names the GPU where
    the trace's ``deviceProperties`` do not."""
    path = Path(path)
    text = read_text(path)
    doc = _parse(text, path)
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        raise InputError("no traceEvents list (not a PyTorch profiler trace?)", path=path)
    lines = _Lines(text)
    rows, skipped = [], []
    for start, end, ev in events:
        cat = ev.get("cat") if isinstance(ev, dict) else None
        if not isinstance(cat, str):
            continue  # metadata, flow ends, the host's instants
        if cat.lower() in _COPIES:
            skipped.append(Skipped(str(path), lines.at(start),
                                   "not a kernel launch (memory copy or set)"))
        elif cat.lower() == "kernel":
            rows.append(_launch(ev, _Event(text, path, lines, start, end)))
    if not rows:
        raise InputError(
            f"no kernel launch in the trace ({len(skipped)} copies or sets, "
            f"{len(events) - len(skipped)} other events): profile with "
            "activities=[ProfilerActivity.CUDA]", path=path)
    df = pd.DataFrame(rows)
    df, bad = split_missing_names(df, path, {"kernel": "name"})
    skipped += bad
    df, bad = split_unusable_times(df, path, field="dur")
    skipped += bad
    grid, block = [df[c] for c in _GRID], [df[c] for c in _BLOCK]
    # a launch without its grid and block: one configuration for all such launches
    df["config"] = launch_config(grid, block).where(grid[0].notna() & block[0].notna(),
                                                    "default")
    df["grid_blocks"] = grid[0] * grid[1] * grid[2]
    df["block_threads"] = block[0] * block[1] * block[2]
    df["gpu"] = _gpus(df, doc, gpu, path)
    df = df.drop(columns=["_device", *_GRID, *_BLOCK])
    return ProfileTable.from_frame(group_launches(df), skipped=skipped, origin=str(path))


def _launch(ev: dict, where: _Event) -> dict:
    """The row of one kernel event: its name, time, launch and device."""
    args = ev.get("args", {})
    if not isinstance(args, dict):
        raise where.error("args is not a JSON object", "args")
    name = ev.get("name")
    row = {"kernel": name if name is None or isinstance(name, str) else json.dumps(name),
           "time_s": where.number(ev, "dur") * 1e-6, "_row": where.row,
           "regs_per_thread": where.number(args, "registers per thread"),
           "smem_per_block_bytes": where.number(args, "shared memory"),
           "_device": args.get("device")}
    for key, columns in (("grid", _GRID), ("block", _BLOCK)):
        row.update(zip(columns, where.sizes(args, key)))
    return row


def _gpus(df, doc, gpu, path) -> pd.Series:
    """Catalog ids of each launch's GPU: the ``deviceProperties`` name of its ``device``, or
    ``gpu`` where there is none (``_io.named_or_given_gpus``)."""
    props = doc.get("deviceProperties")
    named = {p["id"]: p.get("name") for p in props
             if isinstance(p, dict) and isinstance(p.get("id"), int)} \
        if isinstance(props, list) else {}
    names = df["_device"].map(
        lambda d: named.get(d) if isinstance(d, int) and not isinstance(d, bool) else None)
    names = names.where(names.map(lambda n: isinstance(n, str) and n.strip() != ""), None)
    if gpu is None and names.isna().any():
        first = df.loc[names.isna()].iloc[0]
        raise GPUNotNamedError(f"the trace names no GPU for device {first['_device']} (no "
                               "deviceProperties entry with its id and a name)", path=path,
                               row=int(first["_row"]), field="device")
    return named_or_given_gpus(names.astype(object), gpu, path, df["_row"], "device")


class _Lines:
    """File line of a character offset, for offsets asked in increasing order (the events, as
    they come), counted once over the text."""

    def __init__(self, text: str):
        self.text, self.offset, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        if offset < self.offset:
            return self.text.count("\n", 0, offset) + 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


class _Event:
    """One event's place in the file, for its fields' checks and errors."""

    def __init__(self, text, path, lines, start, end):
        self.text, self.path, self.start, self.end = text, path, start, end
        self.row = lines.at(start)

    def error(self, message, field):
        # the line that names the field, else the event's first
        at = self.text.find(f'"{field}"', self.start, self.end)
        row = self.row + self.text.count("\n", self.start, at) if at >= 0 else self.row
        return InputError(message, path=self.path, row=row, field=field)

    def number(self, obj: dict, key: str) -> float:
        """``obj[key]`` as a float, NaN where absent or null; text, a negative or an infinite
        number is an error (no profiler writes one)."""
        v = obj.get(key)
        if v is None:
            return math.nan
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(f"{json.dumps(v)} is not a number", key)
        # compared, not math.isfinite(): an integer of 400 digits overflows a float
        if not 0 <= v <= MAX_VALUE:
            raise self.error(f"{v} is not a finite number >= 0" + (
                f" (over {MAX_VALUE:g})" if MAX_VALUE < v < math.inf else ""), key)
        return float(v)

    def sizes(self, obj: dict, key: str) -> tuple:
        """``obj[key]``, a launch's three sizes, as whole numbers; NaNs where absent."""
        v = obj.get(key)
        if v is None:
            return (math.nan,) * 3
        if type(v) is list and len(v) == 3 and all(type(x) is int and 1 <= x <= MAX_VALUE
                                                   for x in v):
            return tuple(v)  # as Kineto writes them
        if not (isinstance(v, list) and len(v) == 3 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool)
                and 1 <= x <= MAX_VALUE and x == int(x) for x in v)):
            raise self.error(f"{json.dumps(v)} is not three whole numbers >= 1", key)
        return tuple(int(x) for x in v)


def _parse(text: str, path) -> dict:
    """The top-level fields of a Chrome trace (a JSON object), with ``traceEvents`` as
    [(start, end, event)]: the character offsets of each event, which json.loads does not
    give, so that errors and skipped events can name their line."""
    decode = json.JSONDecoder().raw_decode
    fields: dict = {}
    try:
        i = _skip(text, 0)
        if not text.startswith("{", i):
            raise json.JSONDecodeError("Expecting '{' (a Chrome trace is a JSON object)", text, i)
        i = _skip(text, i + 1)
        while not text.startswith("}", i):
            key, i = decode(text, i)
            if not isinstance(key, str):
                raise json.JSONDecodeError("Expecting property name", text, i)
            i = _skip(text, i)
            if not text.startswith(":", i):
                raise json.JSONDecodeError("Expecting ':' delimiter", text, i)
            i = _skip(text, i + 1)
            if key == "traceEvents" and text.startswith("[", i):
                fields[key], i = _events(text, i, decode)
            else:
                fields[key], i = decode(text, i)
            i = _skip(text, i)
            if text.startswith(",", i):
                i = _skip(text, i + 1)
            elif not text.startswith("}", i):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg} (column {e.colno})", path=path,
                         row=e.lineno) from None
    except RecursionError:
        raise InputError("not a trace: JSON nested too deep", path=path) from None
    except ValueError as e:  # int() of over 4,300 digits
        raise InputError(f"not valid JSON: {str(e).split(';')[0]}", path=path) from None
    return fields


def _events(text, i, decode):
    """The array that starts at ``text[i]`` as [(start, end, value)], and the offset after it."""
    out = []
    i = _skip(text, i + 1)
    if text.startswith("]", i):
        return out, i + 1
    while True:
        start = i
        value, i = decode(text, i)
        out.append((start, i, value))
        after = _NEXT.match(text, i)  # one match for the delimiter and the space around it
        if after is None:
            raise json.JSONDecodeError("Expecting ',' delimiter", text, _skip(text, i))
        i = after.end()
        if after.group(1) == "]":
            return out, i


def _skip(text, i) -> int:
    return _SPACE.match(text, i).end()
