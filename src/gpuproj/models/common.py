"""Small pieces the models share: the kernel's dominant data type, which ceiling it uses, and
looking ceilings up with a record of where each came from."""

from __future__ import annotations

import numpy as np
import pandas as pd

_PEAK_KEY = {
    "fp64": "fp64_fma_flops_per_s",
    "fp32": "fp32_fma_flops_per_s",
    "fp16": "fp16_fma_flops_per_s",
    "bf16": "bf16_fma_flops_per_s",
    "int32": "int32_fma_ops_per_s",
}


def compute_peak_key(dtype: str) -> str:
    """Catalog throughput field for a dtype's FMA rate (fp32 for unknown types)."""
    return _PEAK_KEY.get(dtype, _PEAK_KEY["fp32"])


DTYPES = tuple(_PEAK_KEY)


def dtype_codes(df: pd.DataFrame) -> np.ndarray:
    """Index into ``DTYPES`` of each row's dominant compute type (see ``dtype_of``); the models
    look ceilings up once per type and gather them with these codes."""
    return pd.Categorical(dtype_of(df), categories=DTYPES).codes


def per_dtype(codes: np.ndarray, value_of) -> np.ndarray:
    """``value_of(dtype)`` for each row, evaluated once per type."""
    table = np.full(len(DTYPES), np.nan)
    for c in np.unique(codes):
        table[c] = value_of(DTYPES[c])
    return table[codes]


def dtype_names(codes: np.ndarray) -> np.ndarray:
    return np.asarray(DTYPES, dtype=object)[codes]


def dtype_of(df: pd.DataFrame) -> np.ndarray:
    """Dominant compute type per row: the ``dtype`` column where given, else the precision
    with the most FLOPs, else fp32."""
    out = np.full(len(df), "fp32", dtype=object)
    flops = df[["fp64_flops", "fp32_flops", "fp16_flops"]].fillna(0).to_numpy(float)
    has = flops.sum(axis=1) > 0
    best = np.array(["fp64", "fp32", "fp16"], dtype=object)[flops.argmax(axis=1)]
    out[has] = best[has]
    given = df["dtype"].to_numpy(object)
    known = pd.notna(given) & np.isin(given.astype(str), list(_PEAK_KEY))
    out[known] = given[known]
    return out


class CeilingBook:
    """Looks up ceilings of one GPU (against a reference GPU for derived values) and remembers
    every non-measured value it used, so a prediction can state its assumptions."""

    def __init__(self, gpu, reference=None, prefer: str = "measured"):
        self.gpu, self.reference, self.prefer = gpu, reference, prefer
        self.notes: list[str] = []

    def __call__(self, key: str) -> float:
        if self.prefer == "peak":
            v = self.gpu.peak(key)
            if np.isnan(v):
                self._note(f"{self.gpu.id} has no {key}")
            return v
        c = self.gpu.ceiling(key, self.reference)
        if c.kind != "measured":
            self._note(c.note)
        return c.value

    def relative(self, key: str, base: str) -> float:
        """``key`` where known (measured or peak); else this GPU's ``base`` ceiling x the
        reference GPU's ``key``/``base`` ratio of sustained values (e.g. the write bandwidth from
        the DRAM bandwidth and the source GPU's STREAM init/triad ratio); else ``base``."""
        m = self.gpu.measured(key)
        if not np.isnan(m):
            return m
        ref = self.reference
        if ref is not None:
            rk, rb = ref.measured(key), ref.measured(base)
            if not (np.isnan(rk) or np.isnan(rb)) and rb > 0:
                self._note(f"{self.gpu.id} {key} derived: {base} x {ref.id} measured "
                           f"{key}/{base} = {rk / rb:.3f}")
                return self(base) * rk / rb
        p = self.gpu.peak(key)
        if not np.isnan(p):
            self._note(f"{self.gpu.id} {key} peak (no measured value)")
            return p
        self._note(f"{self.gpu.id} has no {key}: {base} used")
        return self(base)

    def _note(self, text):
        if text not in self.notes:
            self.notes.append(text)


def launch_occupancy(df: pd.DataFrame, gpu):
    """(theoretical occupancy, resident blocks per SM) of each row's launch on ``gpu``; NaN where
    the row has no block size or the catalog lacks an occupancy limit of ``gpu``."""
    from ..errors import InputError
    from ..occupancy import occupancy

    n = len(df)
    occ, bps = np.full(n, np.nan), np.full(n, np.nan)
    threads = df["block_threads"].to_numpy(float)
    ok = np.isfinite(threads) & (threads > 0)
    if not ok.any():
        return occ, bps
    regs = np.nan_to_num(df["regs_per_thread"].to_numpy(float)[ok]).astype(np.int64)
    smem = np.nan_to_num(df["smem_per_block_bytes"].to_numpy(float)[ok]).astype(np.int64)
    try:
        o = occupancy(gpu, threads[ok].astype(np.int64), regs, smem)
    except InputError:
        return occ, bps
    occ[ok], bps[ok] = o.occupancy, o.blocks_per_sm
    return occ, bps


def theoretical_occupancy(df: pd.DataFrame, gpu) -> np.ndarray:
    return launch_occupancy(df, gpu)[0]


def fill_fraction(df: pd.DataFrame, gpu) -> np.ndarray:
    """Fraction of the GPU's block slots busy on average over the waves of each launch:
    u = blocks / (waves x SMs x resident blocks per SM), waves = ceil(blocks / (SMs x b)).
    1 for a launch of whole full waves, small for a grid that under-fills the GPU."""
    _, bps = launch_occupancy(df, gpu)
    slots = gpu.value("sm_count") * bps
    blocks = df["grid_blocks"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        waves = np.ceil(blocks / slots)
        return np.where((slots > 0) & (blocks > 0), blocks / (waves * slots), np.nan)
