"""The measurement tables behind the Srivastava et al. report (github
Debdeep23/Kernel_Performance_Prediction, ``predict-kernel-perf/data/runs_<gpu>_final.csv``;
``shared/data/external/seed-report-4gpus``; no licence stated, so gpuproj ships no copy).

One row per (kernel, size, GPU): ``mean_ms`` (and ``std_ms``) of repeated timings, the launch
(``regs``, ``shmem``, ``block``, ``grid_blocks``), the size (``N`` or ``rows`` x ``cols``, and
``iters`` for kernels that loop) and the report's *analytic* counts: ``FLOPs`` -> ``flops``,
``BYTES`` -> ``dram_bytes`` (bytes the kernel must move, not a counter reading),
``working_set_bytes``. The report's ``shared_bytes`` is not read: it is the shared memory one
block allocates (the repository's README: "Shared memory allocated"; ``shmem`` again, the same
at every grid size), not the bytes loaded and stored over the launch that the canonical
``shared_bytes`` counts and the hierarchical model prices. ``config`` = the size fields that
are set (``N=1048576,iters=50``; empty and 0 both mean "not used by this kernel", as the files
differ), and ``problem`` too: each size is a problem of its own, not a tuning variant of another.
Descriptive columns the report's learned models use are kept:
``mem_pattern``, ``size_kind``, ``has_branch_divergence``, ``atomic_ops_count``,
``arithmetic_intensity``. The GPU description columns (``gpu_*``, ``peak_*``, ``calibrated_*``)
and the report's own model outputs (``T1_model_ms``, ``speedup_model``, ``achieved_*``) are
dropped: they describe the GPU or are predictions, not measurements of the kernel.
The report notes that ``BYTES`` of ``atomic_hotspot`` differ between GPUs for one ``N``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..table import ProfileTable
from ._checks import numeric, require_columns, split_unusable_times
from ._io import named_or_given_gpus, read_csv

SIZE_FIELDS = ("N", "rows", "cols", "iters")
RENAME = {"FLOPs": "flops", "BYTES": "dram_bytes",
          "working_set_bytes": "working_set_bytes", "regs": "regs_per_thread",
          "shmem": "smem_per_block_bytes", "block": "block_threads",
          "grid_blocks": "grid_blocks"}
KEEP = ("mem_pattern", "size_kind", "has_branch_divergence", "atomic_ops_count",
        "arithmetic_intensity")


def sniff(path, head: str) -> bool:
    first = head.splitlines()[0] if head else ""
    return first.startswith("kernel,") and "mean_ms" in first and "gpu_device_name" in first


def read(path, gpu: str | None = None) -> ProfileTable:
    """Read one ``runs_*_final.csv``. ``gpu`` names the GPU of the rows whose
    ``gpu_device_name`` is empty, absent or unknown to the catalog; one that names another GPU
    is an error (``_io.named_or_given_gpus``)."""
    path = Path(path)
    df = read_csv(path)
    require_columns(df, ["kernel", "mean_ms"] + ([] if gpu else ["gpu_device_name"]), path)
    rows = df["_row"]
    out = pd.DataFrame({"kernel": df["kernel"].astype(str), "_row": rows})
    out["time_s"] = numeric(df["mean_ms"], path=path, field="mean_ms", rows=rows) * 1e-3
    if "std_ms" in df.columns:
        out["time_s_std"] = numeric(df["std_ms"], path=path, field="std_ms", rows=rows) * 1e-3
    parts = []
    for c in SIZE_FIELDS:
        if c in df.columns:
            v = numeric(df[c], path=path, field=c, rows=rows)
            out[c] = v
            # some files write 0, others leave the cell empty, for "not used by this kernel"
            parts.append(v.map(lambda x, c=c: "" if pd.isna(x) or x == 0 else f"{c}={x:.0f}"))
    config = (pd.concat(parts, axis=1).apply(lambda r: ",".join(x for x in r if x), axis=1)
              if parts else pd.Series("", index=df.index))
    out["config"] = config.where(config != "", "default")
    out["problem"] = out["config"]
    for src, dst in RENAME.items():
        if src in df.columns:
            out[dst] = numeric(df[src], path=path, field=src, rows=rows)
    for c in KEEP:
        if c in df.columns:
            out[c] = df[c]
    out, skipped = split_unusable_times(out, path, field="mean_ms")
    names = (df.loc[out.index, "gpu_device_name"] if "gpu_device_name" in df.columns
             else pd.Series(None, index=out.index, dtype=object))
    out["gpu"] = named_or_given_gpus(names, gpu, path, out["_row"], "gpu_device_name")
    return ProfileTable.from_frame(out, skipped=skipped, origin=str(path))
