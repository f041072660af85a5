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
