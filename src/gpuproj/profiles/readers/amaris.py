"""The Rodinia nvprof tables of Amaris et al. (github marcosamaris/gpuperfpredict,
``datasets/<kernel>-<GPU>.csv``, CC-BY-4.0), as concatenated in
``shared/data/external/amaris-rodinia-nvprof/*.csv.gz``.

Layout: one row per profiled kernel run, ``duration`` in seconds, the launch
(``grid.x/y``, ``block.x/y``, ``registers.per.thread``, ``static.smem``), the problem size
(``input.size.1``, ``input.size.2``), ~60 nvprof metrics with R-mangled names
(``floating_point_operations.single_precision_fma.`` = nvprof ``flop_count_sp_fma``) and the
GPU as a short name in ``gpu_name``.

What the reader does:

- configuration = input sizes + grid + block, ``problem`` = the input sizes (one launch per
  size in these tables: each configuration is a problem of its own, not a tuning variant of
  another); the rows of one (kernel, configuration, GPU) are
  runs of the same work and become one row: median ``time_s`` and median counts,
  ``launches = 1``, ``runs`` = the number of rows. (For ``calculate_temp`` the run count is
  ``input.size.2 / 2``, so these are probably the successive launches of one hotspot run;
  each is one launch of the same work, which is what a cross-GPU comparison needs.)
- metrics go through ``nvprof.NVPROF_METRICS`` by their nvprof name (``AMARIS_TO_NVPROF``);
  ``flop_count_dp_fma`` is absent from the tables and follows from the total as
  ``(flop_count_dp - add - mul) / 2`` (nvprof: an FMA counts 2 in the total).
- ``dram_write_bytes``: the tables have no DRAM write transaction count, so it is
  ``device_memory_write_throughput x duration``, with the throughput read as GB/s (the
  column ``dram_write_from_throughput`` marks this). The tables dropped nvprof's units, and the
  read side shows nvprof printed MB/s for slow cells (for ~1 % of rows ``read_transactions x 32
  / duration`` is 1000x below the read throughput taken as GB/s). Where the GB/s reading would
  put more bytes in DRAM than the L2 received plus a whole 4 MiB L2 (the largest L2 here, Tesla
  P100) it cannot be right, and the value is left missing. Cells in MB/s that pass this bound
  are many in the small calculate_temp configurations, where most runs write a few hundred
  bytes to DRAM: read as GB/s, the median run of a configuration wrote 3.4-18 times the bytes
  the L2 received (GTX 970, GTX 980, TITAN X at 64 x 256 and 64 x 512), where every other
  configuration of the three tables stays at or under 1.13 times. So a configuration whose
  median puts more than twice its L2 writes into DRAM is read as MB/s: 0.4-1.8 % of the L2
  writes, as the larger sizes on the same GPUs (0-3 %).
- ``static.smem`` is in bytes on seven GPUs and in KB on the GTX 980 and the Tesla P100
  (``KB_SMEM_GPUS``), converted.
- ``sm_clock_hz`` = ``elapsed_cycles_sm`` / (``duration`` x SM count): nvprof's
  ``elapsed_cycles_sm`` sums the elapsed cycles over the SMs (the Tesla K20, fixed at 706 MHz,
  reads 697 MHz; ``scripts/rodinia_clocks.py`` lists every GPU). Missing for runs shorter than
  100 us, which read up to 10 % high (the K20 767 MHz): the cycle count spans more than the
  kernel's ``duration``.
- shared-memory bytes are not derived (the throughputs have the same unit problem);
  ``shared_wavefronts`` = shared load + store transactions, ``shared_requests`` = the
  ``shared_load`` + ``shared_store`` warp-level instruction events.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...errors import InputError
from ..table import ProfileTable
from ._checks import numeric, require_columns, split_missing_names, split_unusable_times
from ._io import read_csv, resolve_gpus, whole_numbers
from .nvprof import SECTOR_BYTES, apply_metrics

# short names used by the dataset -> catalog ids. Explicit, because 'Titan' alone would be
# ambiguous (GTX TITAN Kepler, TITAN X, TITAN V, ...); see the dataset's README.
AMARIS_GPUS = {
    "GTX-680": "gtx-680",
    "GTX-970": "gtx-970",
    "GTX-980": "gtx-980",
    "Quadro": "quadro-k5200",
    "Tesla-K20": "tesla-k20",
    "Tesla-K40": "tesla-k40",
    "Tesla-P100": "tesla-p100-pcie-16gb",
    "Titan": "gtx-titan",        # GeForce GTX TITAN (Kepler GK110)
    "TitanX": "gtx-titan-x",     # GeForce GTX TITAN X (Maxwell GM200)
}

# dataset column -> nvprof metric or event name (CUDA Profiler User's Guide)
AMARIS_TO_NVPROF = {
    "floating_point_operations.single_precision.": "flop_count_sp",
    "floating_point_operations.single_precision_fma.": "flop_count_sp_fma",
    "floating_point_operations.single_precision_add.": "flop_count_sp_add",
    "floating_point_operation.single_precision_mul.": "flop_count_sp_mul",
    "floating_point_operations.single_precision_special.": "flop_count_sp_special",
    "floating_point_operations.double_precision.": "flop_count_dp",
    "floating_point_operations.double_precision_add.": "flop_count_dp_add",
    "floating_point_operations.double_precision_mul.": "flop_count_dp_mul",
    "fp_instructions.single.": "inst_fp_32",
    "fp_instructions.double.": "inst_fp_64",
    "integer_instructions": "inst_integer",
    "load.store_instructions": "inst_compute_ld_st",
    "inst_executed": "inst_executed",
    "device_memory_read_transactions": "dram_read_transactions",
    "l2_read_transactions": "l2_read_transactions",
    "l2_write_transactions": "l2_write_transactions",
    "shared_load_transactions": "shared_load_transactions",
    "shared_store_transactions": "shared_store_transactions",
    "shared_load": "inst_executed_shared_loads",
    "shared_store": "inst_executed_shared_stores",
    "achieved_occupancy": "achieved_occupancy",
}
MIN_CLOCK_DURATION_S = 1e-4  # shorter runs give no SM clock (module docstring)
LARGEST_L2_BYTES = 4 * 2**20  # Tesla P100: 4096 KB L2 (NVIDIA Tesla P100 whitepaper, Table 1)
MAX_DRAM_TO_L2_WRITES = 2.0  # above it, a configuration's write throughputs were MB/s

_REQUIRED = ["name", "gpu_name", "duration", "input.size.1", "input.size.2", "grid.x",
             "grid.y", "block.x", "block.y"]


# the GPUs whose tables print static.smem in KB (a newer nvprof): in every table of the dataset
# and every kernel with shared memory, 1024 x their value is what the other seven GPUs print in
# bytes (bpnn_layerforward 1.0625 against 1088, calculate_temp 3 against 3072). A rule by the
# value alone (a fraction, or a match with another GPU of the file) missed a table of one GPU:
# the bundled P100 example read 3 bytes
KB_SMEM_GPUS = {"GTX-980", "Tesla-P100"}


def _smem_bytes(smem, gpu_names):
    """``static.smem`` in bytes."""
    return smem.where(~gpu_names.isin(KB_SMEM_GPUS), smem * 1024)


def sniff(path, head: str) -> bool:
    first = head.splitlines()[0] if head else ""
    cols = {c.strip().strip('"') for c in first.split(",")}
    return {"input.size.1", "gpu_name"} <= cols


def read(path, gpu: str | None = None) -> ProfileTable:
    """Read one gpuperfpredict table (``.csv`` or ``.csv.gz``). ``gpu`` is not used (the
    table names its GPUs); it is accepted so every reader takes the same options."""
    path = Path(path)
    df = read_csv(path)
    require_columns(df, _REQUIRED, path)
    df, skipped = split_missing_names(df, path, {"name": "name", "gpu_name": "gpu_name"})
    df["gpu_name"] = df["gpu_name"].astype(str)
    unknown = sorted(set(df["gpu_name"].unique()) - set(AMARIS_GPUS))
    if unknown:
        i = df.index[df["gpu_name"] == unknown[0]][0]
        raise InputError(f"unknown GPU short name '{unknown[0]}' (known: "
                         f"{', '.join(AMARIS_GPUS)})", path=path, row=int(df.at[i, "_row"]),
                         field="gpu_name")
    rows = df["_row"]
    num = {c: numeric(df[c], path=path, field=c, rows=rows)
           for c in df.columns if c not in ("name", "gpu_name", "_row")
           and not c.startswith("Unnamed")}
    out = pd.DataFrame({"kernel": df["name"], "_row": rows, "_gpu_name": df["gpu_name"],
                        "time_s": num["duration"]})
    sizes = [num[c] for c in ("input.size.1", "input.size.2", "grid.x", "grid.y",
                              "block.x", "block.y")]
    fmt = [whole_numbers(s) for s in sizes]
    # the bpnn kernels take one size and leave input.size.2 at 0: 'size=65536', not '65536x0'
    size = "size=" + fmt[0] + ("x" + fmt[1]).where(sizes[1] != 0, "")
    out["config"] = size + " grid=" + fmt[2] + "x" + fmt[3] + " block=" + fmt[4] + "x" + fmt[5]
    out["problem"] = size
    out["grid_blocks"] = sizes[2] * sizes[3]
    out["block_threads"] = sizes[4] * sizes[5]
    if "registers.per.thread" in num:
        out["regs_per_thread"] = num["registers.per.thread"]
    if "static.smem" in num:
        out["smem_per_block_bytes"] = _smem_bytes(num["static.smem"], out["_gpu_name"])
    for c in ("input.size.1", "input.size.2"):
        out[c] = num[c]
    # nvprof metrics, vectorised: same arithmetic as nvprof.apply_metrics on one row
    values = {AMARIS_TO_NVPROF[c]: num[c] for c in AMARIS_TO_NVPROF if c in num}
    canon = {}
    apply_metrics(values, canon)
    for col, v in canon.items():
        out[col] = v
    if "device_memory_write_throughput" in num and "l2_write_transactions" in num:
        wbytes = num["device_memory_write_throughput"] * 1e9 * out["time_s"]
        possible = wbytes <= num["l2_write_transactions"] * SECTOR_BYTES + LARGEST_L2_BYTES
        out["dram_write_bytes"] = wbytes.where(possible)
        out["dram_write_from_throughput"] = True
        out["_l2_write_bytes"] = num["l2_write_transactions"] * SECTOR_BYTES
    out, unusable = split_unusable_times(out, path, field="duration")
    skipped += unusable
    out["gpu"] = resolve_gpus(out["_gpu_name"].map(AMARIS_GPUS), path)
    if "elapsed_cycles_sm" in num:
        from ...catalog import resolve

        sms = out["gpu"].map({g: resolve(g).value("sm_count") for g in out["gpu"].unique()})
        clock = num["elapsed_cycles_sm"].loc[out.index] / (out["time_s"] * sms)
        out["sm_clock_hz"] = clock.where(out["time_s"] >= MIN_CLOCK_DURATION_S)
    keys = ["kernel", "config", "gpu"]
    g = out.drop(columns=["_gpu_name"]).groupby(keys, sort=False)
    numcols = [c for c in out.columns if c not in keys and c not in ("_gpu_name",)
               and pd.api.types.is_numeric_dtype(out[c]) and c != "dram_write_from_throughput"]
    agg = g[numcols].median()
    if "_l2_write_bytes" in agg.columns:
        mb = agg["dram_write_bytes"] > MAX_DRAM_TO_L2_WRITES * agg.pop("_l2_write_bytes")
        agg.loc[mb, "dram_write_bytes"] /= 1000  # the runs printed MB/s (module docstring)
    agg["_row"] = g["_row"].min()
    agg["problem"] = g["problem"].first()  # the configuration's sizes, one per configuration
    agg["runs"] = g.size().astype(float)
    agg["launches"] = 1.0
    agg["dram_write_from_throughput"] = "dram_write_bytes" in out.columns
    res = agg.reset_index()
    return ProfileTable.from_frame(res, skipped=skipped, origin=str(path))
