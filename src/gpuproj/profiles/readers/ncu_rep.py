"""Nsight Compute reports (``.ncu-rep``), read through NVIDIA's ``ncu_report`` Python module
(``pip install 'gpuproj[ncu]'``, PyPI package ``ncu-report``).

Every profiled kernel launch (an *action* of a *range*) becomes one launch row, named by its
demangled signature as the CSV export prints it (``vector_add(const float *, float *, int)``,
not the bare function name ``ncu_report`` gives by default, under which the instantiations of a
template and the overloads of a function would merge into one kernel), with the metrics
of ``ncu_csv.NCU_METRICS`` (the same table the CSV reader and ``gpuproj profile`` use), converted
to SI from the unit the report stores with each metric; launches are then grouped exactly as in
``ncu_csv`` (``per_launch=True`` keeps them apart), and the source GPU is checked against the
compute capability and the SM count the report holds, as there. A report without any range or
action is an ``InputError``: an empty profile is a failed capture, not an empty result; so is
a launch without a kernel name, which is where a report cut short ends.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...errors import InputError, MissingToolError
from ..table import ProfileTable
from .ncu_csv import NCU_METRICS, TIME_METRICS, duration_metric, finish, to_si

_LAUNCH_DIMS = ("launch__grid_dim_x", "launch__grid_dim_y", "launch__grid_dim_z",
                "launch__block_dim_x", "launch__block_dim_y", "launch__block_dim_z")
# the CSV's "CC" column, checked against the source GPU's ISA as there
_CC = ("device__attribute_compute_capability_major", "device__attribute_compute_capability_minor")


def sniff(path, head: str) -> bool:
    return Path(path).suffix in (".ncu-rep", ".ncu-repz")


def _ncu_report():
    try:
        import ncu_report
    except ImportError:
        raise MissingToolError("reading .ncu-rep files needs NVIDIA's ncu_report module: "
                               "pip install 'gpuproj[ncu]' (or export a CSV with "
                               "ncu --import FILE.ncu-rep --csv --page raw)") from None
    return ncu_report


def _metric(action, name):
    """(value text, unit) of metric ``name`` of ``action``, or None when the report lacks it."""
    m = action.metric_by_name(name)
    if m is None:
        return None
    if NCU_METRICS.get(name, (None, ""))[1] == "string":
        return m.as_string(), ""
    return repr(m.as_double()), m.unit() or ""


def _demangled(mod):
    """The ``NameBase`` that gives an action's whole demangled signature."""
    base = getattr(getattr(mod, "IAction", None), "NameBase_DEMANGLED", None)
    if base is None:
        raise MissingToolError("this ncu_report module gives no demangled kernel names "
                               "(IAction.NameBase_DEMANGLED): install a current one (pip "
                               "install --upgrade 'gpuproj[ncu]')")
    return base


def _launches(ctx, path, demangled) -> pd.DataFrame:
    rows, n = [], 0
    for i in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(i)
        for j in range(rng.num_actions()):
            action = rng.action_by_idx(j)
            n += 1
            kernel = action.name(demangled)
            if not kernel:
                # ncu names every launch it profiles; ncu_report reads a report cut short as
                # far as it goes, and the launch cut through has no name
                raise InputError("a launch without a kernel name: the report is cut short or "
                                 "damaged", path=path, row=n)
            metrics = {}
            for name in (*NCU_METRICS, *TIME_METRICS, *_LAUNCH_DIMS, *_CC):
                got = _metric(action, name)
                if got is not None:
                    metrics[name] = got
            # "row" in messages: the launch's position in the report (1-based)
            row = {"_row": n, "launch_id": f"{i}:{j}", "kernel": kernel}
            dims = [metrics.get(d, (None, ""))[0] for d in _LAUNCH_DIMS]
            if all(d is not None for d in dims):
                ints = [f"{float(d):.0f}" for d in dims]
                row["_grid"], row["_block"] = "x".join(ints[:3]), "x".join(ints[3:])
            cc = [metrics.get(c, (None, ""))[0] for c in _CC]
            if all(c is not None for c in cc):
                row["_cc"] = ".".join(f"{float(c):.0f}" for c in cc)
            timed = duration_metric(metrics)
            if timed is not None:
                row["time_s"] = to_si(timed, *metrics[timed], path=path, row=n)
            for name, (text, unit) in metrics.items():
                if name in _LAUNCH_DIMS or name in _CC or name in TIME_METRICS:
                    continue
                v = to_si(name, text, unit, path=path, row=n)
                col = NCU_METRICS[name][0]
                if col == "gpu":
                    row["_display_name"] = v
                elif col in row:
                    row[col] = row[col] + v
                else:
                    row[col] = v
            rows.append(row)
    if not rows:
        with open(path, "rb") as f:  # not the whole report, which may take gigabytes
            head = f.read(3)
        raise InputError("file is empty" if not head else
                         "not an Nsight Compute report (those start with 'NVR')"
                         if head != b"NVR" else
                         "the report holds no profiled kernel (no ranges or actions): a failed "
                         "capture, or a report cut short before its first kernel", path=path)
    return pd.DataFrame(rows)


def read(path, gpu: str | None = None, per_launch: bool = False) -> ProfileTable:
    """Read a ``.ncu-rep`` report. ``gpu`` names the GPU, in place of the report's
    ``device__attribute_display_name`` (needed where it lacks one)."""
    path = Path(path)
    mod = _ncu_report()
    if not path.exists():
        raise InputError("no such file", path=path)
    try:
        ctx = mod.load_report(str(path))
    except (FileNotFoundError, RuntimeError, OSError) as e:
        raise InputError(f"not a readable Nsight Compute report ({e})", path=path) from None
    return finish(_launches(ctx, path, _demangled(mod)), path, gpu=gpu, per_launch=per_launch)
