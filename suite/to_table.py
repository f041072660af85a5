#!/usr/bin/env python3
"""Turn the suite drivers' JSON lines into gpuproj's measurement table (CSV).

    python3 suite/to_table.py measurements.jsonl -o measurements.csv [--gpu h100-sxm5-80gb]
    python3 suite/to_table.py --ncu-map ncu/srivastava-small.jsonl -o ncu/srivastava-small.map.csv

Input: the drivers' stdout (one JSON object per line; lines that are not JSON are ignored).
``"type": "time"`` lines become rows; ``"type": "device"`` lines give the GPU name when
``--gpu`` is not given. Columns (canonical ones per ``gpuproj.profiles.schema``):
kernel, config, gpu, dtype, launches, time_s (median of one launch, s), flops (FLOP, analytic,
FMA = 2), dram_bytes (B, analytic minimum), working_set_bytes (B), grid_blocks,
block_threads, smem_per_block_bytes (B), then family, size, function, time_s_min, time_s_max,
time_s_mean, reps, l2_flush (kept by the measurement reader as extra columns).

``--ncu-map``: the ``"type": "profile"`` lines of a ``--profile`` run become a table
ncu_id, kernel, config, function, family, size: which ncu result (its ``ID`` column) is which
(kernel, config).

Standard library only, so it runs on the GPU machine without gpuproj installed; the GPU
name is resolved to a catalog id when gpuproj is importable (else kept as the name).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys

COLUMNS = [
    "kernel", "config", "gpu", "dtype", "launches", "time_s", "flops", "dram_bytes",
    "working_set_bytes", "grid_blocks", "block_threads", "smem_per_block_bytes",
    "family", "size", "function", "time_s_min", "time_s_max", "time_s_mean", "reps", "l2_flush",
]
# JSON field -> column where the names differ
RENAMED = {"time_min_s": "time_s_min", "time_max_s": "time_s_max", "time_mean_s": "time_s_mean"}
MAP_COLUMNS = ["ncu_id", "kernel", "config", "function", "family", "size"]


class TableError(ValueError):
    """A line that should be a record but is not usable (names file and line)."""


def read_lines(paths):
    """(path, line number, dict) for every JSON object line of the files ('-' = stdin)."""
    for path in paths:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
        try:
            for no, line in enumerate(fh, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise TableError(f"{path}:{no}: not valid JSON ({e.msg})") from None
                if isinstance(obj, dict):
                    yield path, no, obj
        finally:
            if fh is not sys.stdin:
                fh.close()


def resolve_gpu(name: str) -> str:
    """Catalog id for a GPU name when gpuproj and its catalog know it; else the name."""
    try:
        from gpuproj.catalog import load_catalog
    except ImportError:
        return name
    try:
        return load_catalog().resolve(name).id
    except Exception:  # unknown GPU: keep the name, the measurement reader will say so
        return name


def _fmt(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def time_rows(paths, gpu: str | None = None, resolve: bool = True):
    """Rows (dicts over COLUMNS) from the "time" lines; the GPU comes from ``gpu`` or from
    the file's "device" line."""
    rows, device = [], None
    for path, no, obj in read_lines(paths):
        kind = obj.get("type")
        if kind == "device":
            device = obj.get("name", device)
        elif kind == "time":
            for f in ("kernel", "config", "time_s"):
                if obj.get(f) in (None, ""):
                    raise TableError(f"{path}:{no}: time line without '{f}'")
            name = gpu or device
            if not name:
                raise TableError(f"{path}:{no}: no GPU: pass --gpu or keep the 'device' line")
            row = {c: "" for c in COLUMNS}
            for k, v in obj.items():
                col = RENAMED.get(k, k)
                if col in row:
                    row[col] = _fmt(v)
            row["gpu"] = name
            rows.append(row)
    if resolve:
        ids = {n: resolve_gpu(n) for n in {r["gpu"] for r in rows}}
        for r in rows:
            r["gpu"] = ids[r["gpu"]]
    return rows


def map_rows(paths):
    """ncu result ID -> (kernel, config) rows from the "profile" lines of --profile runs. An ID
    seen again belongs to a later run of the program (``gpuproj profile`` runs it a second
    time when ncu refused a metric), whose results are the ones ncu wrote: the last run wins."""
    rows = {}
    for path, no, obj in read_lines(paths):
        if obj.get("type") != "profile":
            continue
        try:
            first, count = int(obj["launch_first"]), int(obj.get("launch_count", 1))
        except (KeyError, TypeError, ValueError):
            raise TableError(f"{path}:{no}: profile line without launch_first") from None
        for i in range(first, first + count):
            rows[i] = {"ncu_id": str(i), **{c: _fmt(obj.get(c)) for c in MAP_COLUMNS[1:]}}
    return [rows[i] for i in sorted(rows)]


def write_csv(rows, columns, out):
    fh = sys.stdout if out in (None, "-") else open(out, "w", newline="", encoding="utf-8")
    try:
        w = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    finally:
        if fh is not sys.stdout:
            fh.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="JSON-lines files from the drivers ('-' = stdin)")
    ap.add_argument("-o", "--out", default="-", help="CSV to write (default: stdout)")
    ap.add_argument("--gpu", help="GPU name or catalog id for every row (default: the device line)")
    ap.add_argument("--no-resolve", action="store_true", help="keep GPU names as they are")
    ap.add_argument("--ncu-map", action="store_true", help="write the ncu ID map of --profile lines")
    a = ap.parse_args(argv)
    try:
        if a.ncu_map:
            write_csv(map_rows(a.inputs), MAP_COLUMNS, a.out)
        else:
            rows = time_rows(a.inputs, gpu=a.gpu, resolve=not a.no_resolve)
            if not rows:
                raise TableError("no 'time' lines in the input")
            write_csv(rows, COLUMNS, a.out)
    except (TableError, OSError) as e:
        print(f"to_table: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
