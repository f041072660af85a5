"""Features of (kernel row, source GPU, target GPU) pairs for the learned models.

Three groups, all numeric, NaN where unknown (learners impute):

- kernel (``KERNEL_FEATURES``): log10 counts (FLOPs by precision, instructions, bytes per
  level), arithmetic intensities per level, instruction mix fractions, launch geometry, and the
  table's extra numeric columns (tuning parameters such as tile and block sizes, problem sizes).
- GPU (``GPU_FEATURES``), once for the source (``s_``) and once for the target (``t_``):
  datasheet peaks and measured ceilings (log10; the launch overhead in seconds), SM count,
  clocks, caches, occupancy limits, compute capability; and dimensionless target/source log10
  ratios (``r_``) of the throughputs, which carry over to GPUs outside the training set better
  than absolute values.
- pair (``PAIR_FEATURES``): the source's measured time, its efficiency against each roofline
  level on the source, the roofline time on both GPUs, theoretical occupancy and waves on both,
  and how the working set fits each GPU's L2 and one SM's set its L1.

``FeatureSpec`` fixes the list and order of columns at ``fit`` time so a saved model can rebuild
exactly the same matrix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from ..catalog import GPU, resolve
from ..models.common import ROOF_LEVELS, roofline_times, warp_size
from ..models.hierarchical import l1_cache_bytes
from ..profiles.schema import COLUMNS

# canonical count columns used as log10(1 + x)
LOG_COUNTS = (
    "flops", "fp64_flops", "fp32_flops", "fp16_flops", "tensor_flops", "int_ops",
    "fp64_fma_thread_inst", "fp32_fma_thread_inst", "fp32_add_thread_inst",
    "fp32_mul_thread_inst", "fp32_special_thread_inst", "fp64_thread_inst", "fp32_thread_inst",
    "int_thread_inst", "ldst_thread_inst", "warp_inst", "thread_inst",
    "dram_bytes", "dram_read_bytes", "dram_write_bytes", "l2_bytes", "l1_bytes", "shared_bytes",
    "shared_wavefronts", "working_set_bytes", "grid_blocks", "block_threads",
    "smem_per_block_bytes",
)
RAW_COLUMNS = ("regs_per_thread", "achieved_occupancy")
DERIVED_KERNEL = (
    "ai_dram", "ai_l2", "ai_l1",            # log10 FLOP per byte at each level
    "mix_fp32", "mix_fp64", "mix_int", "mix_ldst",  # fractions of thread instructions
    "fma_share",                              # FMA FLOPs / all FP32+FP64 FLOPs
    "warp_efficiency",                        # active threads per warp instruction / width
    "bank_conflict_ratio",                    # shared wavefronts / requests
    "dram_write_share",                       # written / (read + written) DRAM bytes
    "threads_total",                          # log10 grid x block threads
    "dtype_fp64", "dtype_fp16",               # dominant precision (fp32 = both 0)
)
KERNEL_FEATURES = tuple(f"log_{c}" for c in LOG_COUNTS) + RAW_COLUMNS + DERIVED_KERNEL
# The shared-memory level has its bytes (log_shared_bytes) but no intensity or source
# efficiency (ai_shared, src_eff_shared) as the other levels do. Measured with both added
# (scripts/learned_experiments.py settings, @96d6cf0): of the public tables only the seed
# report had shared bytes, and there they lost: leave-one-GPU-out bounded-efficiency MAPE
# 132.6 -> 137.5 %, ensemble 107.4 -> 108.3 %, residual 128.3 -> 128.1 %; Table 6's new GPU
# bounded-efficiency 63.8 -> 70.7 % and new kernel 107.2 -> 141.9 %. Not adopted. Those
# bytes were a block's allocation, not its traffic, which the seed reader no longer reads as
# such (@99ba81b): no public table counts shared-memory traffic.

# catalog throughputs (peak) used as log10; measured where present
GPU_PEAKS = ("fp64_fma_flops_per_s", "fp32_fma_flops_per_s", "fp16_fma_flops_per_s",
             "tensor_fp16_flops_per_s", "int32_add_ops_per_s", "dram_bw_bytes_per_s",
             "l2_bw_bytes_per_s", "l1_bw_bytes_per_s", "shared_bw_bytes_per_s")
GPU_MEASURED = ("dram_bw_bytes_per_s", "fp32_fma_flops_per_s", "l2_bw_bytes_per_s",
                "launch_overhead_s")
GPU_VALUES = ("sm_count", "boost_clock_hz", "base_clock_hz", "l2_size_bytes",
              "l1_shared_size_bytes_per_sm", "regs_per_sm", "max_threads_per_sm",
              "max_blocks_per_sm", "smem_per_sm_bytes", "memory_bus_bits", "fp32_lanes_per_sm",
              "fp64_lanes_per_sm")
GPU_FEATURES = (tuple(f"peak_{k}" for k in GPU_PEAKS) + tuple(f"meas_{k}" for k in GPU_MEASURED)
                + tuple(f"val_{k}" for k in GPU_VALUES) + ("compute_capability",))
# target / source log10 ratios (dimensionless). The base clock's ratio was measured as one
# more (leave-one-GPU-out, scripts/learned_experiments.py settings): Rodinia, whose GPUs ran
# near their base clocks (docs/accuracy_analysis.md), gained on bpnn_adjust_weights (ensemble
# MAPE 49.0 -> 45.4 %, residual 40.2 -> 36.8 %) and calculate_temp (ensemble 13.1 -> 12.9 %,
# bounded-efficiency 16.4 -> 14.9 %) and lost on bpnn_layerforward (ensemble 6.6 -> 6.8 %,
# residual coverage 88.8 -> 83.3 %); elsewhere nothing changed: the catalog has no base clock
# for four of NeuSight's five GPUs, and on the seed report's four GPUs it orders the GPU pairs
# as the boost clock does, which a tree cannot tell apart. SM count x base clock gained less
# (bpnn_adjust_weights residual 39.7 %). Not adopted: a loss on one of the only three tables
# it could change, and a feature most new GPUs lack (NVIDIA's data-centre datasheets, V100
# to H200, give no base clock: 40 of the catalog's 67 GPUs have none).
RATIO_FEATURES = ("peak_fp64_fma_flops_per_s", "peak_fp32_fma_flops_per_s",
                  "peak_fp16_fma_flops_per_s", "peak_dram_bw_bytes_per_s",
                  "peak_l2_bw_bytes_per_s", "val_sm_count", "val_boost_clock_hz",
                  "val_l2_size_bytes", "best_dram_bw", "best_fp32")

PAIR_FEATURES = (
    "log_source_time_s",
    "src_eff_compute", "src_eff_dram", "src_eff_l2", "src_eff_l1", "src_eff_roof",
    "log_roof_ratio",         # log10 roofline time target / source
    "log_roof_t_s",           # log10 roofline time on the target
    "occ_s", "occ_t", "log_occ_ratio",
    "waves_s", "waves_t", "fill_s", "fill_t",
    "l2_fit_s", "l2_fit_t",   # log10 working set / L2 size
    "l1_fit_s", "l1_fit_t",   # log10 one SM's working set / L1 size
)
# The L1 fit was measured on the one table that has one SM's working set, gpu-benches' L1
# sweep (leave-one-GPU-out, scripts/learned_experiments.py, catalog without gpu-benches'
# measurements, @7e108fb): the validated hybrid 63.1 / 42.2 -> 55.6 / 40.8 % MAPE / median APE,
# its application totals 50.5 / 26.5 -> 46.4 / 32.3 %. Elsewhere the column is empty and left out.


def _log10(x):
    x = np.asarray(x, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(x) & (x >= 0), np.log10(1.0 + x), np.nan)


def _ratio(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = a / b
    return np.where(np.isfinite(r), r, np.nan)


def _log_ratio(a, b):
    r = _ratio(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r > 0, np.log10(r), np.nan)


def _col(df, c):
    return df[c].to_numpy(float) if c in df.columns else np.full(len(df), np.nan)


def extra_columns(df: pd.DataFrame) -> list[str]:
    """Numeric columns a reader kept beyond the canonical schema (tuning parameters, sizes),
    sorted; bookkeeping columns (leading ``_``) and pair columns are left out."""
    skip = set(COLUMNS) | {"source", "target", "true_s", "src_row", "index", "row"}
    out = []
    for c in df.columns:
        if c in skip or str(c).startswith("_"):
            continue
        if pd.api.types.is_numeric_dtype(df[c]):  # bools too
            out.append(str(c))
    return sorted(out)


def kernel_features(df: pd.DataFrame, extras=(), counted_warp_size=32.0) -> dict:
    """Kernel feature columns (``KERNEL_FEATURES`` + ``x_<extra>``) of the rows of ``df``;
    ``counted_warp_size`` (per row or one): the warp width of the GPU that counted them."""
    from ..models.common import dtype_of

    f = {f"log_{c}": _log10(_col(df, c)) for c in LOG_COUNTS}
    for c in RAW_COLUMNS:
        f[c] = _col(df, c)
    flops = _col(df, "flops")
    dram, l2, l1 = _col(df, "dram_bytes"), _col(df, "l2_bytes"), _col(df, "l1_bytes")
    f["ai_dram"] = _log_ratio(flops, dram)
    f["ai_l2"] = _log_ratio(flops, l2)
    f["ai_l1"] = _log_ratio(flops, l1)
    ti = _col(df, "thread_inst")
    f["mix_fp32"] = _ratio(_col(df, "fp32_thread_inst"), ti)
    f["mix_fp64"] = _ratio(_col(df, "fp64_thread_inst"), ti)
    f["mix_int"] = _ratio(_col(df, "int_thread_inst"), ti)
    f["mix_ldst"] = _ratio(_col(df, "ldst_thread_inst"), ti)
    # NaN where the FLOPs of a precision are known but its FMA count is not: an unknown count
    # is no "no FMA", and the learner imputes NaN with its training median
    f32, f64 = _col(df, "fp32_flops"), _col(df, "fp64_flops")
    m32, m64 = _col(df, "fp32_fma_thread_inst"), _col(df, "fp64_fma_thread_inst")
    unknown = ((f32 > 0) & ~np.isfinite(m32)) | ((f64 > 0) & ~np.isfinite(m64))
    fma = np.nan_to_num(m32) + np.nan_to_num(m64)
    fpf = np.nan_to_num(f32) + np.nan_to_num(f64)
    f["fma_share"] = np.where((fpf > 0) & ~unknown, _ratio(2 * fma, fpf), np.nan)
    f["warp_efficiency"] = _ratio(ti, counted_warp_size * _col(df, "warp_inst"))
    f["bank_conflict_ratio"] = _ratio(_col(df, "shared_wavefronts"), _col(df, "shared_requests"))
    f["dram_write_share"] = _ratio(_col(df, "dram_write_bytes"), dram)
    f["threads_total"] = _log10(_col(df, "grid_blocks") * _col(df, "block_threads"))
    dt = dtype_of(df) if len(df) else np.array([], object)
    f["dtype_fp64"] = (dt == "fp64").astype(float)
    f["dtype_fp16"] = np.isin(dt, ["fp16", "bf16"]).astype(float)
    for c in extras:
        v = pd.to_numeric(df[c], errors="coerce") if c in df.columns else pd.Series(
            np.nan, index=df.index)
        f[f"x_{c}"] = v.to_numpy(float)
    return f


def _cc(isa: str) -> float:
    """Compute capability as a number from ``sm_XY`` (8.6 for sm_86); NaN for other ISAs."""
    m = re.fullmatch(r"sm_(\d+?)(\d)", str(isa).lower())
    return float(f"{m.group(1)}.{m.group(2)}") if m else np.nan


@lru_cache(maxsize=256)
def _gpu_vector_cached(g: GPU) -> tuple:
    return tuple(_gpu_vector(g).items())


def _gpu_vector(g: GPU) -> dict:
    v = {f"peak_{k}": _log10(g.peak(k)).item() for k in GPU_PEAKS}
    for k in GPU_MEASURED:
        m = g.measured(k)
        # the launch overhead in seconds as it is (it spans 2-8 us, no decades to log)
        v[f"meas_{k}"] = m if k == "launch_overhead_s" else _log10(m).item()
    for k in GPU_VALUES:
        v[f"val_{k}"] = g.value(k)
    v["compute_capability"] = _cc(g.isa)
    # best sustained estimate: measured where known, else the peak
    v["best_dram_bw"] = v["meas_dram_bw_bytes_per_s"] if np.isfinite(
        v["meas_dram_bw_bytes_per_s"]) else v["peak_dram_bw_bytes_per_s"]
    v["best_fp32"] = v["meas_fp32_fma_flops_per_s"] if np.isfinite(
        v["meas_fp32_fma_flops_per_s"]) else v["peak_fp32_fma_flops_per_s"]
    return v


def gpu_vector(gpu) -> dict:
    """GPU features of one catalog GPU (``GPU_FEATURES`` + best_dram_bw, best_fp32)."""
    if isinstance(gpu, GPU):
        return _gpu_vector(gpu)
    # cached per catalog GPU, not per id: a catalog read anew (another $GPUPROJ_GPU_PATH, as in
    # a notebook or scripts/learned_experiments.py) gives other GPU objects
    return dict(_gpu_vector_cached(resolve(str(gpu))))


def _occupancy(df, gpu):
    """(theoretical occupancy, fill fraction of the block slots, waves) of each row's launch on
    ``gpu`` (``gpuproj.models.common``); NaN where the launch geometry or the GPU's occupancy
    limits are unknown. A block that fits no SM of ``gpu`` has occupancy 0 (a learner may
    learn from it what it will; the analytical members give such a row no time) and NaN fill
    and waves."""
    from ..models.common import fill_fractions, launch_configs, launch_occupancy

    launch = ("block_threads", "grid_blocks", "regs_per_thread", "smem_per_block_bytes")
    df = df.assign(**{c: np.nan for c in launch if c not in df.columns})
    configs = launch_configs(df)
    occ, blocks_per_sm = launch_occupancy(df, gpu, configs)
    _, fill = fill_fractions(df, gpu, blocks_per_sm)
    with np.errstate(divide="ignore", invalid="ignore"):
        waves = np.ceil(_col(df, "grid_blocks") / (gpu.value("sm_count") * blocks_per_sm))
    return occ, fill, np.where(np.isfinite(waves) & (blocks_per_sm > 0), waves, np.nan)


def pair_features(df: pd.DataFrame, source: GPU, target: GPU) -> dict:
    """Pair features (``PAIR_FEATURES``) of rows measured on ``source``, for ``target``."""
    t_s = _col(df, "time_s")
    rs, rt = roofline_times(df, source), roofline_times(df, target)
    f = {"log_source_time_s": _log_ratio(t_s, 1.0)}
    for lvl in ("compute", "dram", "l2", "l1"):
        f[f"src_eff_{lvl}"] = _ratio(rs[lvl], t_s)
    f["src_eff_roof"] = _ratio(rs["roof"], t_s)
    f["log_roof_ratio"] = _log_ratio(rt["roof"], rs["roof"])
    f["log_roof_t_s"] = _log_ratio(rt["roof"], 1.0)
    o_s, fill_s, w_s = _occupancy(df, source)
    o_t, fill_t, w_t = _occupancy(df, target)
    f.update(occ_s=o_s, occ_t=o_t, log_occ_ratio=_log_ratio(o_t, o_s), waves_s=w_s, waves_t=w_t,
             fill_s=fill_s, fill_t=fill_t)
    ws = _col(df, "working_set_bytes")
    f["l2_fit_s"] = _log_ratio(ws, source.value("l2_size_bytes"))
    f["l2_fit_t"] = _log_ratio(ws, target.value("l2_size_bytes"))
    sm_ws = _col(df, "sm_working_set_bytes")
    f["l1_fit_s"] = _log_ratio(sm_ws, l1_cache_bytes(source))
    f["l1_fit_t"] = _log_ratio(sm_ws, l1_cache_bytes(target))
    return f


@dataclass
class FeatureSpec:
    """Which feature columns a model uses, in order.

    ``extras``: the table's extra numeric columns (``x_<name>``); ``categories``: extra text
    columns with their training values, one-hot encoded (``c_<name>=<value>``); ``gpu``: whether
    absolute GPU features are included besides the target/source ratios; ``pair``: the pair
    features (True), none (False), or ``"source_time"``: only the source's measured time in
    milliseconds (``source_time_ms``, the report scripts' T_src_ms); ``physics``: analytical
    methods whose projection enters as ``phys_<name>`` = log10(projection / source time)
    (hybrids); ``drop``: columns that were constant or empty in training.
    """

    extras: list = field(default_factory=list)
    categories: dict = field(default_factory=dict)
    gpu: bool = True
    pair: bool | str = True
    physics: list = field(default_factory=list)
    drop: list = field(default_factory=list)

    @property
    def all_names(self) -> list:
        out = list(KERNEL_FEATURES) + [f"x_{c}" for c in self.extras]
        out += [f"c_{c}={v}" for c, vals in self.categories.items() for v in vals]
        if self.gpu:
            out += [f"s_{k}" for k in GPU_FEATURES] + [f"t_{k}" for k in GPU_FEATURES]
        out += [f"r_{k}" for k in RATIO_FEATURES]
        if self.pair == "source_time":
            out.append("source_time_ms")
        elif self.pair:
            out += list(PAIR_FEATURES)
        out += [f"phys_{p}" for p in self.physics]
        return out

    @property
    def names(self) -> list:
        drop = set(self.drop)
        return [c for c in self.all_names if c not in drop]

    def to_dict(self) -> dict:
        return {"extras": list(self.extras), "categories": dict(self.categories),
                "gpu": self.gpu, "pair": self.pair, "physics": list(self.physics),
                "drop": list(self.drop)}

    @classmethod
    def from_dict(cls, d) -> FeatureSpec:
        return cls(**d)


def categorical_columns(df: pd.DataFrame, max_values: int = 16) -> dict:
    """Extra text columns with at most ``max_values`` distinct values (memory access pattern,
    size class): column -> sorted values. Identity and per-GPU name columns are left out."""
    skip = set(COLUMNS) | {"source", "target", "kernel_name"}
    out = {}
    for c in df.columns:
        if c in skip or str(c).startswith("_") or pd.api.types.is_numeric_dtype(df[c]):
            continue
        vals = df[c].dropna().astype(str).unique()
        if 1 < len(vals) <= max_values:
            out[str(c)] = sorted(vals)
    return out


class PairFeatures:
    """Feature columns of a pair frame (``make_pairs``), computed once and cached, so that the
    models of an ensemble and the folds of a cross-validation share them.

    ``column(name)`` returns one feature; ``matrix(names)`` stacks several; ``physics(method)``
    is the analytical projection (s) of each pair; ``roof_t`` the roofline time on the target.
    ``subset(idx)`` slices the pairs and every cached column.
    """

    def __init__(self, pairs: pd.DataFrame, spec: FeatureSpec | None = None, gpus=None,
                 physics_of=None):
        self.pairs = pairs.reset_index(drop=True)
        self.spec = spec or FeatureSpec()
        # GPU objects by id where the caller has them (GPU files outside the catalog)
        self.gpus = {g.id: g for g in (gpus or ())}
        # method -> its projection of each pair, where the caller computes them (``physics``)
        self.physics_of = physics_of
        self._cols: dict = {}
        self._phys: dict = {}

    def __len__(self):
        return len(self.pairs)

    def shared(self, spec: FeatureSpec) -> PairFeatures:
        """A view with another spec sharing this one's pairs and cached columns."""
        out = PairFeatures.__new__(PairFeatures)
        out.pairs, out.spec, out.gpus, out.physics_of = self.pairs, spec, self.gpus, self.physics_of
        out._cols, out._phys = self._cols, self._phys
        return out

    def subset(self, idx) -> PairFeatures:
        idx = np.asarray(idx)
        out = PairFeatures(self.pairs.iloc[idx], self.spec, self.gpus.values())
        out._cols = {k: v[idx] for k, v in self._cols.items()}
        out._phys = {k: v[idx] for k, v in self._phys.items()}
        return out

    # groups of columns -----------------------------------------------------------------
    def _kernel(self):
        src = self.pairs["source"].astype(str).to_numpy()
        at, ids = pd.factorize(src)  # hashing (np.unique sorts the strings: 15x slower)
        widths = np.array([warp_size(self.gpu(g)) for g in ids], float)[at]
        f = kernel_features(self.pairs, self.spec.extras, widths)
        for c, vals in self.spec.categories.items():
            v = self.pairs[c].astype(str).to_numpy(object) if c in self.pairs.columns else \
                np.full(len(self.pairs), None, object)
            for val in vals:
                f[f"c_{c}={val}"] = (v == val).astype(float)
        self._cols.update(f)

    def _gpu(self):
        n = len(self.pairs)
        src = self.pairs["source"].astype(str).to_numpy()
        tgt = self.pairs["target"].astype(str).to_numpy()
        ids = sorted(set(pd.unique(src)) | set(pd.unique(tgt)))
        keys = list(GPU_FEATURES) + ["best_dram_bw", "best_fp32"]
        vecs = [gpu_vector(self.gpu(g)) if g in self.gpus else gpu_vector(g) for g in ids]
        tab = np.array([[v[k] for k in keys] for v in vecs], float).reshape(
            len(ids), len(keys))
        index = pd.Index(ids)
        si, ti = index.get_indexer(src), index.get_indexer(tgt)
        for j, k in enumerate(keys):
            a = tab[si, j] if n else np.zeros(0)
            b = tab[ti, j] if n else np.zeros(0)
            if k in GPU_FEATURES:
                self._cols[f"s_{k}"], self._cols[f"t_{k}"] = a, b
            if k in RATIO_FEATURES:
                if k.startswith("val_"):
                    self._cols[f"r_{k}"] = _log_ratio(b, a)
                else:  # already log10
                    self._cols[f"r_{k}"] = b - a

    def _pair(self):
        n = len(self.pairs)
        pf = {k: np.full(n, np.nan) for k in PAIR_FEATURES}
        for (s, t), idx in self.pairs.groupby(["source", "target"], sort=False).indices.items():
            vals = pair_features(self.pairs.iloc[idx], self.gpu(s), self.gpu(t))
            for k in PAIR_FEATURES:
                pf[k][idx] = vals[k]
        self._cols.update(pf)

    def gpu(self, gid) -> GPU:
        """The GPU object of id ``gid`` (the caller's, else the catalog's)."""
        return self.gpus.get(str(gid)) or resolve(str(gid))

    def column(self, name: str) -> np.ndarray:
        if name not in self._cols:
            if name.startswith("phys_"):
                t_s = _col(self.pairs, "time_s")
                self._cols[name] = _log_ratio(self.physics(name[5:]), t_s)
            elif name == "source_time_ms":
                self._cols[name] = _col(self.pairs, "time_s") * 1e3
            elif name.startswith(("s_", "t_", "r_")):
                self._gpu()
            elif name in PAIR_FEATURES:
                self._pair()
            else:
                self._kernel()
        if name not in self._cols:
            raise KeyError(f"unknown feature '{name}'")
        return self._cols[name]

    def matrix(self, names) -> np.ndarray:
        n = len(self.pairs)
        if not names:
            return np.zeros((n, 0))
        X = np.empty((len(names), n))
        for j, c in enumerate(names):
            X[j] = self.column(c)
        # a value no learner can hold is missing: not finite, or beyond float32, to which
        # scikit-learn's trees cast their input (a 1e300 would become inf and stop the fit)
        with np.errstate(invalid="ignore"):
            X[~(np.abs(X) <= np.finfo(np.float32).max)] = np.nan
        return X.T  # column-major: filled one feature at a time

    # physics ------------------------------------------------------------------------------
    def physics(self, method: str) -> np.ndarray:
        """Projected target time (s) of each pair by analytical method ``method`` (or the
        geometric mean of several, a ``geomean_name``); NaN where the method cannot predict
        the row."""
        if method not in self._phys:
            parts = geomean_members(method)
            if parts:
                with np.errstate(divide="ignore", invalid="ignore"):
                    logs = np.log([self.physics(m) for m in parts])
                self._phys[method] = np.exp(logs.mean(axis=0))  # NaN where any member is
            elif self.physics_of is not None:
                self._phys[method] = self.physics_of(method)
            else:
                self._phys[method] = analytical_projection(self.pairs, method, self.gpu)
        return self._phys[method]

    @property
    def roof(self) -> dict:
        """Roofline times (s) per level on source (``s_<level>``) and target (``t_<level>``)."""
        keys = [f"{p}_{k}" for p in ("s", "t") for k in (*ROOF_LEVELS, "roof")]
        if "roof:t_roof" not in self._cols:
            n = len(self.pairs)
            out = {k: np.full(n, np.nan) for k in keys}
            for (s, t), idx in self.pairs.groupby(["source", "target"],
                                                  sort=False).indices.items():
                sub = self.pairs.iloc[idx]
                for p, g in (("s", s), ("t", t)):
                    r = roofline_times(sub, self.gpu(g))
                    for k in (*ROOF_LEVELS, "roof"):
                        out[f"{p}_{k}"][idx] = r[k]
            self._cols.update({f"roof:{k}": v for k, v in out.items()})
        return {k: self._cols[f"roof:{k}"] for k in keys}


def geomean_name(methods) -> str:
    """The name under which ``PairFeatures.physics`` gives the geometric mean of the
    projections of ``methods``."""
    return f"geomean({','.join(methods)})"


def geomean_members(name: str) -> list:
    """The methods a ``geomean_name`` averages ([] for a plain method name)."""
    if name.startswith("geomean(") and name.endswith(")"):
        return name[len("geomean("):-1].split(",")
    return []


def project_rows(rows: pd.DataFrame, method: str, source: GPU, targets) -> dict:
    """Target time (s) of each row of ``rows`` (measured on ``source``) projected by the
    analytical method ``method`` (a name of ``gpuproj.models.MODELS``) to each of ``targets``
    (GPUs) through one call of the model's public ``predict``, which does the work on the rows
    once for all targets: {GPU id: times}, NaN where it cannot."""
    import warnings

    from ..models import get_model
    from ..profiles.table import ProfileTable

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        pred = get_model(method).predict(ProfileTable(rows, (), ""), source, targets).df
    row, time_s = pred["row"].to_numpy(int), pred["time_s"].to_numpy(float)
    out = {}
    for t in targets:
        at = (pred["target"] == t.id).to_numpy()
        v = np.full(len(rows), np.nan)
        v[row[at]] = time_s[at]
        out[t.id] = np.where(np.isfinite(v) & (v > 0), v, np.nan)
    return out


def analytical_projection(pairs: pd.DataFrame, method: str, gpu_of=resolve) -> np.ndarray:
    """Target time (s) of each pair projected by the analytical method ``method`` from the
    source row (``project_rows``); NaN where it cannot."""
    out = np.full(len(pairs), np.nan)
    if not len(pairs):
        return out
    key_row = pairs["src_row"].to_numpy() if "src_row" in pairs.columns else np.arange(len(pairs))
    for s, idx in pairs.groupby("source", sort=False).indices.items():
        rows, first, row_at = np.unique(key_row[idx], return_index=True, return_inverse=True)
        target_at, targets = pd.factorize(pairs["target"].iloc[idx].astype(str))
        src = pairs.iloc[idx[first]].drop(columns=["source", "target", "true_s"],
                                          errors="ignore").assign(gpu=s).reset_index(drop=True)
        got = project_rows(src, method, gpu_of(s), [gpu_of(x) for x in targets])
        # none where a pair names its target otherwise than by the GPU's id
        grid = np.column_stack([got.get(x, np.full(len(rows), np.nan)) for x in targets])
        out[idx] = grid[row_at, target_at]
    return out


def uninformative(X: np.ndarray, names) -> list:
    """Columns of ``X`` that are all NaN or constant (they cannot inform any learner)."""
    out = []
    for j, c in enumerate(names):
        col = X[:, j]
        fin = col[np.isfinite(col)]
        if len(fin) == 0 or np.all(fin == fin[0]):
            out.append(c)
    return out
