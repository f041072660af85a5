"""AMD rocprof (v1) CSV output and Omniperf / ROCm Compute Profiler workload folders: kernels
profiled on an AMD Instinct GPU, to project to any other GPU.

- ``rocprof --timestamp on -i counters.txt APP`` (or ``--stats``) writes ``results.csv``: one
  row per dispatch with ``Index, KernelName, gpu-id, ..., grd, wgr, lds, scr, arch_vgpr,
  accum_vgpr, sgpr, ...``, one column per counter, then ``DispatchNs, BeginNs, EndNs,
  CompleteNs``. A single file is read on its own.
- Omniperf (``omniperf profile``, now ``rocprof-compute``) runs rocprof once per counter pass
  and writes a folder per GPU: ``pmc_perf_0.csv`` ... ``pmc_perf_N.csv`` (or the merged
  ``pmc_perf.csv``), ``timestamps.csv`` and ``sysinfo.csv``. Give the folder: the passes are
  joined by dispatch index (a dispatch whose kernel name differs between two files is an error),
  times come from ``timestamps.csv`` where it exists. Omniperf's renamed columns
  (``Dispatch_ID``, ``Kernel_Name``, ``Grid_Size``, ``Start_Timestamp``, ...) read the same.

The GPU: ``gpu=`` (``--source``), else the ``sysinfo.csv`` beside the file (or in the folder),
whose ``gpu_soc`` (ISA) and ``numCU`` (rocprof-compute 3: ``gpu_arch`` and ``cu_per_gpu``) must
fit exactly one catalog GPU, or one that rocprof-compute 3's ``gpu_model`` (``MI300X_A1``)
names. They cannot tell an MI210 from one GCD of an MI250 (both gfx90a with 104 CUs): such a
profile needs ``--source``.
With both, a ``gpu=`` of another ISA or CU count than ``sysinfo.csv`` is an error.

Counters -> canonical columns, per dispatch, as Omniperf's roofline and panels compute them
(ROCm/rocprofiler-compute ``src/utils/roofline_calc.py`` ``calc_ai`` and
``analysis_configs/<arch>/0200_system-speed-of-light.yaml``, ``1600_L1_cache.yaml``; counter
meanings: ROCm docs "MI300 and MI200 series performance counters and metrics"):

- ``time_s`` = (EndNs - BeginNs) x 1e-9.
- ``dram_read_bytes`` = 32 x TCC_EA_RDREQ_32B + 64 x (TCC_EA_RDREQ - TCC_EA_RDREQ_32B) and
  ``dram_write_bytes`` = 64 x TCC_EA_WRREQ_64B + 32 x (TCC_EA_WRREQ - TCC_EA_WRREQ_64B) (the
  ``_sum`` over L2 channels); on MI300 (gfx94x) the counters are ``TCC_EA0_*`` and reads add
  the 128-byte requests ``TCC_BUBBLE``: 128 x BUBBLE + 64 x (RDREQ - BUBBLE - RDREQ_32B) +
  32 x RDREQ_32B. This is all traffic from L2 to the Infinity Fabric: local HBM, but also host
  memory and other GPUs' memory where the kernel touches them (no counter gives HBM bytes
  alone). Without these counters, rocprof's derived ``FetchSize`` / ``WriteSize`` (KB of 1024
  bytes, the same sums) are read on MI100 and MI200; on MI300 rocprof's ``FETCH_SIZE`` leaves
  out the 128-byte reads, so it is not.
- ``l2_bytes``: requests from the vector L1 to L2, TCP_TCC_{READ, WRITE, ATOMIC_WITH_RET,
  ATOMIC_WITHOUT_RET}_REQ, each 64 bytes (MI300: reads 128, the vector L1's line there).
- ``l1_bytes`` = TCP_TOTAL_CACHE_ACCESSES x the vector L1 line (64 bytes, 128 on MI300).
- FLOPs: SQ_INSTS_VALU_{ADD, MUL, FMA, TRANS}_F{16, 32, 64} count wavefront instructions;
  x the wavefront size gives the ``*_thread_inst`` columns and ``fp*_flops`` = wave x (ADD +
  MUL + TRANS + 2 FMA). They count every lane, active or not, so they are upper bounds where
  waves diverge (NVIDIA's counts are of active threads), and a packed instruction
  (``v_pk_fma_f32``) counts once. ``tensor_flops`` = 512 x SQ_INSTS_VALU_MFMA_MOPS_{F8, F16,
  BF16, F32, F64}. MI100 has none of these counters.
- ``warp_inst`` = SQ_INSTS (wavefront instructions issued).
- Launch: ``block_threads`` = wgr and ``grid_blocks`` = grd / wgr (rocprof's grid size counts
  work-items), ``smem_per_block_bytes`` = lds (LDS per workgroup, in rocprof's 512-byte
  allocation blocks), ``regs_per_thread`` = arch_vgpr + accum_vgpr on gfx90a and gfx94x (one
  register file), arch_vgpr on MI100 (its AccVGPRs are a separate file), or an older rocprof's
  lone ``vgpr``.

Counters are read on gfx908, gfx90a and gfx94x, whose formulas these are; a profile of
another AMD GPU keeps its times and launch sizes only (an ``InputWarning`` says so). Shared
memory (LDS) bytes are not read: Omniperf's LDS figure is a theoretical maximum from busy
cycles, not bytes moved.

Dispatches of one kernel with one launch configuration become one row, as with ncu:
``launches`` = their number, counts and ``time_s`` the mean per dispatch. Kernel names lose
the code object's `` [clone .kd]`` / ``.kd`` suffix.
"""

from __future__ import annotations

import re
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import GPUNotNamedError, InputError, InputWarning, UnknownGPUError
from ..table import ProfileTable
from ._checks import numeric, split_missing_names, split_unusable_times
from ._io import group_launches, read_csv

# Omniperf's (and ROCm 6.0 rocprof's) names for rocprof's launch and timestamp columns
RENAMES = {"Dispatch_ID": "Index", "Kernel_Name": "KernelName", "GPU_ID": "gpu-id",
           "Grid_Size": "grd", "Workgroup_Size": "wgr", "LDS_Per_Workgroup": "lds",
           "Scratch_Per_Workitem": "scr", "Arch_VGPR": "arch_vgpr", "Accum_VGPR": "accum_vgpr",
           "SGPR": "sgpr", "Start_Timestamp": "BeginNs", "End_Timestamp": "EndNs",
           "GRD": "grd", "WGR": "wgr", "LDS": "lds", "SCR": "scr", "ACCUM_VGPR": "accum_vgpr"}
# the ISAs whose counter formulas the module docstring gives (gfx94x: MI300)
COUNTER_ISAS = ("gfx908", "gfx90a", "gfx94")
_PRECISIONS = {"F16": "fp16", "F32": "fp32", "F64": "fp64"}
_MFMA = ("F8", "F16", "BF16", "F32", "F64")
_L2_REQUESTS = ("TCP_TCC_READ_REQ_sum", "TCP_TCC_WRITE_REQ_sum",
                "TCP_TCC_ATOMIC_WITH_RET_REQ_sum", "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum")
_HEADERS = ("Index,KernelName,gpu-id", "Dispatch_ID,Kernel_Name,GPU_ID")
# launch and time columns read as numbers (the counters too: SQ_INSTS*, TCC_*, TCP_*)
NUMBERS = {"Index", "grd", "wgr", "lds", "arch_vgpr", "accum_vgpr", "vgpr", "wave_size",
           "BeginNs", "EndNs", "FetchSize", "WriteSize"}


def sniff(path, head: str) -> bool:
    first = head.split("\n", 1)[0].replace('"', "").strip()
    return first.startswith(_HEADERS)


def sniff_folder(path: Path) -> bool:
    """An Omniperf workload folder: rocprof's CSVs (and a ``sysinfo.csv`` naming the GPU)."""
    return bool(_folder_files(path))


def _folder_files(path: Path) -> list[Path]:
    """The rocprof CSVs of a workload folder: timestamps first (the times), then the counter
    passes in pass order."""
    def number(p):
        m = re.search(r"_(\d+)$", p.stem)
        return int(m.group(1)) if m else -1

    passes = sorted(path.glob("pmc_perf*.csv"), key=number)
    files = [path / "timestamps.csv"] if (path / "timestamps.csv").is_file() else []
    return files + passes + ([path / "results.csv"] if (path / "results.csv").is_file() else [])


# ---- reading and joining the files ---------------------------------------------------------
def _read_one(path: Path) -> tuple[pd.DataFrame, str]:
    """One rocprof CSV, the columns gpuproj reads checked as numbers, and the file's name of
    the dispatch number (``Index``, Omniperf's ``Dispatch_ID``), for messages."""
    df = read_csv(path)
    index_field = "Dispatch_ID" if "Dispatch_ID" in df.columns else "Index"
    df = df.rename(columns=RENAMES)
    # per-channel counters (TCC_EA_RDREQ[7]) are also summed in the _sum columns read here
    df = df[[c for c in df.columns if "[" not in str(c)]]
    for c in ("Index", "KernelName"):
        if c not in df.columns:
            raise InputError(f"missing required column '{c}' (not a rocprof CSV?)", path=path,
                             field=c)
    read = [c for c in df.columns if c in NUMBERS or c.startswith(("SQ_INSTS", "TCC_", "TCP_"))]
    df = checked_numbers(df, read, path)
    twice = df["Index"].duplicated()
    if twice.any():  # rocprof numbers each dispatch once: a line repeated or edited
        r = df[twice].iloc[0]
        raise InputError(f"dispatch {r['Index']:.0f} appears twice", path=path,
                         row=int(r["_row"]), field=index_field)
    return df, index_field


def checked_numbers(df: pd.DataFrame, columns, path, names: dict | None = None) -> pd.DataFrame:
    """``df`` with ``columns`` read as numbers, checked here, where the file and row of a bad
    cell are known (``names``: the file's own name of a renamed column). Nanosecond stamps
    (``BeginNs``, ``EndNs``) stay integers: past 2**53 ns, 104 days of uptime, floats would
    round them."""
    names = names or {}
    conv = {}
    for c in columns:
        if c in ("BeginNs", "EndNs") and pd.api.types.is_integer_dtype(df[c]):
            neg = np.flatnonzero((df[c] < 0).to_numpy())
            if len(neg):
                raise InputError(f"{df[c].iloc[neg[0]]} is negative", path=path,
                                 row=int(df["_row"].iloc[neg[0]]), field=names.get(c, c))
            continue
        conv[c] = numeric(df[c], path=path, field=names.get(c, c), rows=df["_row"])
    return pd.concat([df.drop(columns=list(conv)), pd.DataFrame(conv, index=df.index)], axis=1)


def _joined(files: list[Path]) -> pd.DataFrame:
    """One row per dispatch: the first file's rows, with every column the later files add.
    Counters of one dispatch in two passes are of one launch (rocprof numbers dispatches in
    launch order), so a pass that names another kernel at the same index is an error."""
    base, _ = _read_one(files[0])
    for f in files[1:]:
        extra, index_field = _read_one(f)
        both = base[["Index", "KernelName"]].merge(
            extra[["Index", "KernelName", "_row"]], on="Index", suffixes=("", "_other"))
        differ = both[both["KernelName"].astype(str) != both["KernelName_other"].astype(str)]
        if len(differ):
            d = differ.iloc[0]
            raise InputError(f"dispatch {d['Index']:.0f} is '{d['KernelName_other']}' here and "
                             f"'{d['KernelName']}' in {files[0].name}: the files are not of one "
                             "run", path=f, row=int(d["_row"]), field="KernelName")
        lost = sorted(set(base["Index"]) - set(extra["Index"]))
        if lost:  # each pass profiles every dispatch of the run: a line lost, or another run
            raise InputError(f"dispatch {lost[0]:.0f} of {files[0].name} is not in this pass "
                             f"({len(lost)} missing): the files are not of one run", path=f,
                             field=index_field)
        new = [c for c in extra.columns if c not in base.columns]
        base = base.merge(extra[["Index", *new]], on="Index", how="left")
    return base


# ---- the GPU ---------------------------------------------------------------------------
def _gpu(gpu, sysinfo: Path, path):
    """The catalog GPU: ``gpu`` (checked against ``sysinfo``), else the one catalog GPU with
    sysinfo's ISA and CU count."""
    from ...catalog import resolve

    if not sysinfo.is_file():
        if gpu is None:
            raise GPUNotNamedError("the file does not name the GPU (no sysinfo.csv beside it)",
                                   path=path, field="gpu")
        return resolve(gpu)
    info = read_csv(sysinfo)
    # rocprof-compute 3 (ROCm 7) names them gpu_arch and cu_per_gpu (an MI300X workload of
    # github HGLiu1998/batched_gemm); without them its folders needed --source
    isa_col, cu_col = next(((i, c) for i, c in (("gpu_soc", "numCU"), ("gpu_arch", "cu_per_gpu"))
                            if i in info.columns and c in info.columns), ("gpu_soc", "numCU"))
    for c in (isa_col, cu_col):
        if c not in info.columns:
            raise InputError(f"missing column '{c}'", path=sysinfo, field=c)
    cus = numeric(info[cu_col], path=sysinfo, field=cu_col, rows=info["_row"]).iloc[0]
    # rocprof-compute 3 also names the part ("MI300X_A1"), which tells an MI300X from an MI325X
    model = str(info["gpu_model"].iloc[0]) if "gpu_model" in info.columns else None
    return fit_gpu(gpu, str(info[isa_col].iloc[0]).strip(), cus, sysinfo, 2, isa_col, model)


def fit_gpu(gpu, isa: str, cus: float, path, row: int, field: str, model: str | None = None):
    """The catalog GPU of a profile whose GPU is an ``isa`` with ``cus`` compute units (as a
    profiler's description of the machine says, in ``path`` at ``row``): ``gpu`` where the user
    named one, which must be such a GPU, else the one catalog GPU that is, or of several the one
    that ``model`` (the profiler's name of the part, "MI300X_A1": the name before "_") names."""
    from ...catalog import load_catalog, resolve

    def fits(g):
        n = g.values.get("sm_count")
        return (g.isa or "").lower() == isa.lower() and n is not None and n.value == cus

    if gpu is not None:
        g = resolve(gpu)
        if not fits(g):
            raise InputError(f"the profile was taken on a {isa} GPU with {cus:.0f} CUs, but "
                             f"{g.id} is {g.isa} with {g.value('sm_count'):.0f}: name the GPU "
                             "it was taken on", path=path, row=row, field=field)
        return g
    cands = [g for g in load_catalog() if fits(g)]
    if len(cands) > 1 and model and model.strip() and model.strip().lower() != "nan":
        try:
            named = resolve(model.strip().split("_")[0]).id
        except UnknownGPUError:
            named = None
        cands = [g for g in cands if g.id == named] or cands
    if len(cands) == 1:
        return cands[0]
    what = f"{isa} with {cus:.0f} CUs"
    if not cands:
        raise InputError(f"no catalog GPU is a {what}: pass --source NAME, or add the GPU to "
                         "the catalog", path=path, row=row, field=field)
    raise InputError(f"a {what} is any of {', '.join(g.id for g in cands)}: pass --source "
                     "NAME", path=path, row=row, field=field)


# ---- counters -> canonical columns -------------------------------------------------------
def _columns(df: pd.DataFrame, isa: str, wave: pd.Series) -> dict:
    """Canonical per-dispatch columns from the counters of ``df`` (see the module docstring)."""
    col = partial(_float, df)
    out = {}
    mi300 = isa.startswith("gfx94")
    ea = "TCC_EA0_" if mi300 else "TCC_EA_"
    rd, rd32 = col(f"{ea}RDREQ_sum"), col(f"{ea}RDREQ_32B_sum")
    wr, wr64 = col(f"{ea}WRREQ_sum"), col(f"{ea}WRREQ_64B_sum")
    if rd is not None and rd32 is not None:
        if mi300:
            bubble = col("TCC_BUBBLE_sum")
            if bubble is not None:
                out["dram_read_bytes"] = 128 * bubble + 64 * (rd - bubble - rd32) + 32 * rd32
        else:
            out["dram_read_bytes"] = 32 * rd32 + 64 * (rd - rd32)
    if wr is not None and wr64 is not None:
        out["dram_write_bytes"] = 64 * wr64 + 32 * (wr - wr64)
    if not mi300:
        for kb, name in (("FetchSize", "dram_read_bytes"), ("WriteSize", "dram_write_bytes")):
            if name not in out and col(kb) is not None:
                out[name] = 1024 * col(kb)
    line = 128 if mi300 else 64
    req = [col(c) for c in _L2_REQUESTS]
    if all(r is not None for r in req):
        out["l2_bytes"] = line * req[0] + 64 * (req[1] + req[2] + req[3])
    if col("TCP_TOTAL_CACHE_ACCESSES_sum") is not None:
        out["l1_bytes"] = line * col("TCP_TOTAL_CACHE_ACCESSES_sum")
    for p, name in _PRECISIONS.items():
        kinds = {k: col(f"SQ_INSTS_VALU_{k}_{p}") for k in ("ADD", "MUL", "FMA", "TRANS")}
        if any(v is None for v in kinds.values()):
            continue
        for k in ("ADD", "MUL", "FMA"):
            out[f"{name}_{k.lower()}_thread_inst"] = wave * kinds[k]
        if p == "F32":
            out["fp32_special_thread_inst"] = wave * kinds["TRANS"]
        out[f"{name}_flops"] = wave * (kinds["ADD"] + kinds["MUL"] + kinds["TRANS"]
                                       + 2 * kinds["FMA"])
    mops = [col(f"SQ_INSTS_VALU_MFMA_MOPS_{t}") for t in _MFMA]
    if any(m is not None for m in mops):
        out["tensor_flops"] = 512 * sum(m for m in mops if m is not None)
    if col("SQ_INSTS") is not None:
        out["warp_inst"] = col("SQ_INSTS")
    return out


def _float(df: pd.DataFrame, name: str) -> pd.Series | None:
    return df[name].astype(float) if name in df.columns else None


def _launch(df: pd.DataFrame, isa: str) -> dict:
    col = partial(_float, df)
    out = {}
    grd, wgr = col("grd"), col("wgr")
    if wgr is not None:
        out["block_threads"] = wgr.where(wgr > 0)
        if grd is not None:
            out["grid_blocks"] = np.ceil(grd / out["block_threads"])
    if col("lds") is not None:
        out["smem_per_block_bytes"] = col("lds")
    arch, accum = col("arch_vgpr"), col("accum_vgpr")
    if arch is not None:
        unified = accum is not None and (isa == "gfx90a" or isa.startswith("gfx94"))
        out["regs_per_thread"] = arch + accum if unified else arch
    elif col("vgpr") is not None:
        out["regs_per_thread"] = col("vgpr")
    return out


def _config(launch: dict, index) -> pd.Series:
    def text(key):
        v = launch.get(key)
        if v is None:
            return pd.Series("?", index=index)
        return v.map(lambda x: "?" if pd.isna(x) else f"{x:.0f}")

    return "grid=" + text("grid_blocks") + " block=" + text("block_threads")


def read(path, gpu: str | None = None) -> ProfileTable:
    """Read a rocprof CSV or an Omniperf workload folder (see module docstring). ``gpu`` names
    the GPU where no ``sysinfo.csv`` does."""
    path = Path(path)
    if path.is_dir():
        files = _folder_files(path)
        if not files:
            raise InputError("no rocprof CSV (timestamps.csv, pmc_perf*.csv, results.csv) in "
                             "this folder", path=path)
        sysinfo = path / "sysinfo.csv"
    else:
        files, sysinfo = [path], path.parent / "sysinfo.csv"
    g = _gpu(gpu, sysinfo, path)
    df = _joined(files)
    for c in ("BeginNs", "EndNs"):
        if c not in df.columns:
            raise InputError(f"missing required column '{c}'", path=files[0], field=c)
    out, skipped = dispatches(df, g, path, files[0], name_field="KernelName",
                              time_field="EndNs - BeginNs")
    return ProfileTable.from_frame(group_launches(out), skipped=skipped, origin=str(path))


def dispatches(df: pd.DataFrame, g, path, timed, name_field: str, time_field: str):
    """Canonical per-dispatch rows, and the rows skipped, of ``df``: dispatches on the catalog
    GPU ``g`` in rocprof's column names (``KernelName``, ``BeginNs``, ``EndNs``, launch columns,
    counters; ``wave_size`` where the profile gives it), read from ``timed``, the file whose
    rows the errors name, as ``name_field`` and ``time_field`` name its columns."""
    isa = (g.isa or "").lower()
    if all(pd.api.types.is_integer_dtype(df[c]) for c in ("BeginNs", "EndNs")):
        ns = (df["EndNs"].astype("int64") - df["BeginNs"].astype("int64")).astype(float)
    else:
        ns = df["EndNs"].astype(float) - df["BeginNs"].astype(float)
    wave = (df["wave_size"].astype(float) if "wave_size" in df.columns
            else pd.Series(float(g.value("warp_size")), index=df.index))
    counted = isa.startswith(COUNTER_ISAS)
    counters = _columns(df, isa, wave) if counted else {}
    if not counted and any(c.startswith(("SQ_", "TCC_", "TCP_")) for c in df.columns):
        warnings.warn(InputWarning(
            f"{path}: counters are read on gfx908, gfx90a and gfx94x (MI100-MI300), whose "
            f"formulas gpuproj knows; {g.id} is {isa}: times and launch sizes only"),
            stacklevel=3)
    launch = _launch(df, isa)
    kernel = df["KernelName"].astype(object).map(
        lambda k: k if pd.isna(k) else re.sub(r"(\s*\[clone \.kd\]|\.kd)$", "", str(k).strip()))
    out = pd.DataFrame({"kernel": kernel, "config": _config(launch, df.index), "gpu": g.id,
                        "time_s": ns * 1e-9, **launch, **counters, "_row": df["_row"]})
    out, skipped = split_missing_names(out, timed, {"kernel": name_field})
    out, unusable = split_unusable_times(out, timed, field=time_field)
    return out, skipped + unusable
