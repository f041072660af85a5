"""Small pieces the models share: the kernel's dominant data type, which ceiling it uses,
looking ceilings up with a record of where each came from, launch occupancy, and the time each
roofline level needs at datasheet peaks."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from ..catalog import CeilingNote

_PEAK_KEY = {
    "fp64": "fp64_fma_flops_per_s",
    "fp32": "fp32_fma_flops_per_s",
    "fp16": "fp16_fma_flops_per_s",
    "bf16": "bf16_fma_flops_per_s",
    "int32": "int32_fma_ops_per_s",
}


def warp_size(gpu) -> float:
    """The GPU's warp (wavefront) width, 32 where the catalog lacks it."""
    ws = gpu.value("warp_size")
    return 32.0 if np.isnan(ws) else ws


def compute_peak_key(dtype: str) -> str:
    """Catalog throughput field for a dtype's FMA rate (fp32 for unknown types)."""
    return _PEAK_KEY.get(dtype, _PEAK_KEY["fp32"])


DTYPES = tuple(_PEAK_KEY)
_FLOP_TYPES = ("fp64", "fp32", "fp16")  # precisions with a FLOP count column


def dtype_peaks(codes: np.ndarray, source, target) -> tuple[np.ndarray, np.ndarray, list]:
    """Datasheet FMA peak of each row's dtype (``codes``) on the source and on the target, and
    the notes of what stood in. Datasheets rarely give FP16 outside the tensor cores (the B200,
    the MI300X), and ptxas materialises constants with ``HFMA2.MMA Rd, -RZ, RZ, imm``, which
    ncu counts as FP16 FMAs: an FP32 kernel without FP32 math (the suite's random_access) then
    looks FP16. A GPU without an FP16 peak takes its FP32 peak x the other GPU's FP16/FP32
    ratio (both FP32 where neither has one), as ``hierarchical`` does with its ceilings, rather
    than leaving the row unprojected."""
    notes = []
    f32 = compute_peak_key("fp32")

    def peaks(d):
        key = compute_peak_key(d)
        ps, pt = source.peak(key), target.peak(key)
        if d != "fp16" or not (np.isnan(ps) or np.isnan(pt)):
            return ps, pt
        if np.isnan(ps) and np.isnan(pt):
            notes.append("neither GPU has an FP16 peak: the FP32 peaks for the rows that count "
                         "FP16 FLOPs")
            return source.peak(f32), target.peak(f32)
        if np.isnan(pt):
            lack, have, pt = target, source, target.peak(f32) * ps / source.peak(f32)
        else:
            lack, have, ps = source, target, source.peak(f32) * pt / target.peak(f32)
        notes.append(f"{lack.id} has no FP16 peak: its FP32 peak x {have.id}'s FP16/FP32 ratio "
                     "for the rows that count FP16 FLOPs")
        return ps, pt

    table = np.full((len(DTYPES), 2), np.nan)
    for c in np.flatnonzero(np.bincount(codes, minlength=len(DTYPES))):  # types present
        table[c] = peaks(DTYPES[c])
    return table[codes, 0], table[codes, 1], notes


def dtype_codes(df: pd.DataFrame) -> np.ndarray:
    """Index into ``DTYPES`` of each row's dominant compute type: the ``dtype`` column where it
    names one of ``DTYPES``, else the precision with the most FLOPs, else fp32. The models look
    ceilings up once per type and gather them with these codes."""
    # computed on codes, never on object arrays of names: this runs on every row of a table
    flops = df[[f"{p}_flops" for p in _FLOP_TYPES]].to_numpy(float)
    flops = np.where(np.isnan(flops), 0.0, flops)
    most = np.array([DTYPES.index(p) for p in _FLOP_TYPES])[flops.argmax(axis=1)]
    codes = np.where(flops.sum(axis=1) > 0, most, DTYPES.index("fp32"))
    given = df["dtype"]
    if given.notna().any():  # most tables name no dtype: skip hashing an empty column
        named = pd.Categorical(given.to_numpy(object), categories=DTYPES).codes
        codes = np.where(named >= 0, named, codes)
    return codes.astype(np.int8)


def per_dtype(codes: np.ndarray, value_of) -> np.ndarray:
    """``value_of(dtype)`` for each row, evaluated once per type."""
    table = np.full(len(DTYPES), np.nan)
    for c in np.flatnonzero(np.bincount(codes, minlength=len(DTYPES))):  # types present, no sort
        table[c] = value_of(DTYPES[c])
    return table[codes]


def dtype_names(codes: np.ndarray) -> np.ndarray:
    return np.asarray(DTYPES, dtype=object)[codes]


def labels(codes: np.ndarray, names) -> pd.Categorical:
    """Per-row limiter ``names[codes]`` as a categorical: built from codes, it costs nothing per
    row, where an object array of names costs a hash per row when ``Model.predict`` stacks the
    targets (e.g. ``labels(np.where(mem_bound, len(DTYPES), codes), DTYPES + ("dram",))``)."""
    return pd.Categorical.from_codes(codes, dtype=_label_dtype(tuple(names)))


@functools.lru_cache(maxsize=64)
def _label_dtype(names: tuple) -> pd.CategoricalDtype:
    # validating the categories costs more than the rest of a small table's projection
    return pd.CategoricalDtype(list(names))


def fixed_label(name: str, n: int) -> pd.Categorical:
    """The same limiter ``name`` for all ``n`` rows."""
    return labels(np.zeros(n, np.int8), [name])


def dtype_of(df: pd.DataFrame) -> np.ndarray:
    """Dominant compute type name per row (see ``dtype_codes``)."""
    return dtype_names(dtype_codes(df))


class CeilingBook:
    """Looks up ceilings of one GPU (against a reference GPU for derived values) and remembers
    every non-measured value it used, so a prediction can state its assumptions."""

    def __init__(self, gpu, reference=None):
        self.gpu, self.reference = gpu, reference
        self.notes: list[str] = []
        # where each ceiling looked up came from: measured, derived, peak, missing or instead
        # (another ceiling in its place), for a picture's legend
        self.kinds: dict[str, str] = {}

    def __call__(self, key: str) -> float:
        c = self.gpu.ceiling(key, self.reference)
        self.kinds[key] = c.kind
        if c.kind != "measured":
            self.note(c.note)
        return c.value

    def relative(self, key: str, base: str, base_value: float | None = None) -> float:
        """``key`` where known (measured or peak); else this GPU's ``base`` ceiling (or
        ``base_value``, where the caller has one in its place) x the reference GPU's
        ``key``/``base`` ratio of sustained values (e.g. the write bandwidth from the DRAM
        bandwidth and the source GPU's STREAM init/triad ratio), its ``base`` at most its peak
        where this GPU's, derived from it, is, and its peak where this GPU's is (the two GPUs'
        measurements of ``base`` from two benchmarks, ``GPU.ceiling``); else ``base``."""
        m = self.gpu.measured(key)
        if not np.isnan(m):
            self.kinds[key] = "measured"
            return m

        def b():
            return self(base) if base_value is None else base_value

        ref = self.reference
        if ref is not None:
            rk, rb = ref.measured(key), ref.measured(base)
            if not (np.isnan(rk) or np.isnan(rb)) and rb > 0:
                value = b()
                over = "/"
                kind = self.kinds.get(base)
                if (kind == "derived" and rb > ref.peak(base)
                        or kind == "peak" and ref.peak(base) > 0):
                    # this GPU's base, derived from the reference's, stops at its peak
                    # (GPU.ceiling): so does the reference's in the ratio, or the share the
                    # cap left out is taken out of ``key`` (the H100's adds at 1.95x their
                    # peak gave an A100 16 LD/ST per clock and SM, not its 32). A base taken
                    # at its peak (both GPUs measured by two benchmarks) is set against the
                    # reference's peak too: its measured STREAM triad gave a Titan V from an
                    # H100 a write bandwidth 1.07x its DRAM peak
                    rb, over = ref.peak(base), " / peak "
                self.note(f"{self.gpu.id} {key} derived: {base} x {ref.id} measured "
                          f"{key}{over}{base} = {rk / rb:.3f}")
                self.kinds[key] = "derived"
                return value * rk / rb
        p = self.gpu.peak(key)
        if not np.isnan(p):
            self.note(CeilingNote(self.gpu.id, "peak", key))
            self.kinds[key] = "peak"
            return p
        self.stand_in(key, base)
        return b()

    def per_sm_clock(self, key: str) -> float:
        """``key``, a rate that every SM serves on its own at its clock (the L1's), where this
        GPU has it (``__call__``); else the reference GPU's, per SM and clock, x this GPU's SM
        count and boost clock, marked ``derived``; else NaN (``hierarchical.l1_bandwidth``
        says what it served there). The bytes per clock of one SM's L1 differ between designs
        (64 on Turing, 128 on GA10x: docs/catalog.md), which this takes as the reference's."""
        v = self(key)
        ref = self.reference
        if np.isfinite(v) or ref is None:
            return v
        theirs = ref.ceiling(key, self.gpu).value
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = (self.gpu.value("sm_count") * self.gpu.value("boost_clock_hz")
                     / (ref.value("sm_count") * ref.value("boost_clock_hz")))
        value = theirs * scale
        if not (np.isfinite(value) and value > 0):
            return v
        self.notes = [n for n in self.notes
                      if not (getattr(n, "kind", None) == "missing" and n.ceiling == key)]
        self.note(f"{self.gpu.id} {key} derived: {ref.id}'s per SM and clock x SM count x "
                  f"boost clock = {value / 1e12:.3g} TB/s")
        self.kinds[key] = "derived"
        return value

    def stand_in(self, key: str, base: str) -> None:
        """Record that this GPU's ``base`` ceiling took the place of its missing ``key``: that
        note replaces the one saying ``key`` is missing, which would only repeat it."""
        self.notes = [n for n in self.notes
                      if not (getattr(n, "kind", None) == "missing" and n.ceiling == key)]
        self.note(CeilingNote(self.gpu.id, "instead", key, base))
        self.kinds[key] = "instead"

    def note(self, text):
        """Add ``text`` to the assumptions, once."""
        if text not in self.notes:
            self.notes.append(text)


def launch_configs(df: pd.DataFrame):
    """The distinct launch configurations of the rows that give a block size: ``(rows, which,
    threads, regs, smem)``, ``rows`` the mask of such rows, ``which`` the index of each such
    row's configuration in the ``threads, regs, smem`` arrays (int64). Tables repeat a few
    configurations over many rows, so occupancy is computed once per configuration."""
    threads = df["block_threads"].to_numpy(float)
    rows = np.isfinite(threads) & (threads > 0)

    def whole(x):
        # a damaged file's 1e20 threads would overflow the cast; 2^62 is past every GPU's
        # limit all the same, which the occupancy calculator then reports
        return np.minimum(np.nan_to_num(x[rows]), 2.0 ** 62).astype(np.int64)

    key = pd.DataFrame({"threads": whole(threads),
                        "regs": whole(df["regs_per_thread"].to_numpy(float)),
                        "smem": whole(df["smem_per_block_bytes"].to_numpy(float))})
    groups = key.groupby(list(key.columns), sort=False)
    which = groups.ngroup().to_numpy()
    distinct = groups.size().index  # numbered as ngroup numbers them (order of appearance)
    return (rows, which, *(distinct.get_level_values(c).to_numpy(np.int64) for c in key.columns))


def launch_occupancy(df: pd.DataFrame, gpu, configs=None):
    """(theoretical occupancy, resident blocks per SM) of each row's launch on ``gpu``; NaN where
    the row has no block size or the catalog lacks an occupancy limit of ``gpu``; 0 where a
    block needs more threads or shared memory than ``gpu`` gives one. ``configs``:
    ``launch_configs(df)`` where the caller already has it. A register count above ``gpu``'s
    per-thread limit (counted on a GPU that allows more) is taken at the limit: ``gpu``'s
    compiler caps it and spills the rest, where the occupancy rules would refuse the block."""
    from ..errors import InputError
    from ..occupancy import occupancy

    n = len(df)
    occ, bps = np.full(n, np.nan), np.full(n, np.nan)
    rows, which, threads, regs, smem = launch_configs(df) if configs is None else configs
    if not rows.any():
        return occ, bps
    cap = gpu.value("max_regs_per_thread")
    if np.isfinite(cap):
        regs = np.minimum(regs, int(cap))
    try:
        o = occupancy(gpu, threads, regs, smem)
    except InputError:
        return occ, bps
    occ[rows], bps[rows] = o.occupancy[which], o.blocks_per_sm[which]
    return occ, bps


# the occupancy formulas ``theoretical_occupancy`` knows, and how a note names each
OCCUPANCY_FORMULAS = {"rules": "rules", "report": "formula"}


def check_formula(formula: str, what: str = "formula") -> str:
    """``formula`` where it is one of ``OCCUPANCY_FORMULAS``, else a ValueError."""
    if formula not in OCCUPANCY_FORMULAS:
        raise ValueError(f"{what} must be 'rules' or 'report', not {formula!r}")
    return formula


def cannot_launch(gpu_id: str, formula: str = "rules") -> str:
    """Why a row whose block fits no SM of ``gpu_id`` (occupancy 0) has no time there."""
    return (f"a block fits no SM of {gpu_id} by the occupancy {OCCUPANCY_FORMULAS[formula]}: "
            "it cannot launch there")


def theoretical_occupancy(df: pd.DataFrame, gpu, configs=None,
                          formula: str = "rules") -> np.ndarray:
    """Each row's theoretical occupancy on ``gpu`` (``launch_occupancy``), by the CUDA
    occupancy rules or (``formula="report"``) by Srivastava et al.'s Sec. 4.0.2 as written
    (``occupancy.report_occupancy``, which, as written, takes the register count as counted
    where the rules cap it at the GPU's limit)."""
    if check_formula(formula) == "rules":
        return launch_occupancy(df, gpu, configs)[0]
    from ..errors import InputError
    from ..occupancy import report_occupancy

    occ = np.full(len(df), np.nan)
    rows, which, threads, regs, smem = launch_configs(df) if configs is None else configs
    if rows.any():
        try:
            occ[rows] = report_occupancy(gpu, threads, regs, smem)[which]
        except InputError:
            pass  # a limit the catalog lacks: unknown, as in launch_occupancy
    return occ


def fill_fractions(df: pd.DataFrame, gpu, bps: np.ndarray):
    """(by SM, by block slot): the fraction of the GPU a launch of B blocks keeps busy on average,
    at the two ends of how many resident blocks an SM needs to reach its throughput. By SM, one:
    the busiest of the S SMs runs ceil(B / S) blocks, u = B / (ceil(B / S) S). By block slot, all
    b that fit (``bps``, the occupancy calculator's resident blocks per SM of each row,
    ``launch_occupancy``): u = B / (waves S b), waves = ceil(B / (S b)). Both are 1 for whole
    full waves and small for a grid that under-fills the GPU; NaN where the row has no grid (by
    slot also where b is unknown)."""
    from ..occupancy import waves

    sms = gpu.value("sm_count")
    blocks = df["grid_blocks"].to_numpy(float)
    if math.isnan(sms):  # waves() needs it; an unknown SM count is an unknown fill here
        return np.full(len(df), np.nan), np.full(len(df), np.nan)
    out = []
    for per_sm in (1.0, bps):
        slots = sms * per_sm
        n = waves(blocks, gpu, per_sm)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where((slots > 0) & (blocks > 0), blocks / (n * slots), np.nan))
    return tuple(out)


ROOF_LEVELS = ("compute", "dram", "l2", "l1", "shared")


def _column(df, c):
    return df[c].to_numpy(float) if c in df.columns else np.full(len(df), np.nan)


def dram_blind_note(df: pd.DataFrame) -> list[str]:
    """The note of a DRAM-only roofline (``roofline``, ``efficiency``) on rows whose traffic
    the profile counts at a cache level only (an L2 sweep, an L2-resident kernel): to such a
    roofline they have no bytes and are projected on their compute peaks, which a memory-bound
    kernel's FLOP efficiency does not follow (the gpu-benches small kernels, 670-776 % MAPE)."""
    dram = np.nan_to_num(_column(df, "dram_bytes")) > 0
    cache = (np.nan_to_num(_column(df, "l2_bytes")) > 0) | (
        np.nan_to_num(_column(df, "l1_bytes")) > 0)
    n = int((cache & ~dram).sum())
    return [f"{n} row(s) with cache-level bytes but no DRAM bytes: projected on compute peaks "
            "alone (a DRAM roofline does not see their traffic; hierarchical prices it)"] \
        if n else []


def roofline_times(df: pd.DataFrame, gpu) -> dict:
    """Time (s) each roofline level needs for the rows of ``df`` on ``gpu`` with datasheet
    peaks: compute (FLOPs of each precision over its FMA peak; tensor FLOPs over the tensor
    peak), DRAM, L2, L1 and shared bytes over their bandwidths. NaN where the count or the
    peak is unknown. ``roof`` is the largest known level (the roofline's bound)."""
    n = len(df)
    comp = np.zeros(n)
    known = np.zeros(n, bool)
    for p, key in (("fp64", "fp64_fma_flops_per_s"), ("fp32", "fp32_fma_flops_per_s"),
                   ("fp16", "fp16_fma_flops_per_s")):
        x = _column(df, f"{p}_flops")
        ok = np.isfinite(x) & (x > 0)
        peak = gpu.peak(key)
        if not np.isfinite(peak) and p == "fp16":
            peak = gpu.peak("fp32_fma_flops_per_s")
        comp += np.where(ok, x / peak, 0.0)
        known |= ok
    tens = _column(df, "tensor_flops")
    ok_t = np.isfinite(tens) & (tens > 0)
    comp += np.where(ok_t, tens / gpu.peak("tensor_fp16_flops_per_s"), 0.0)
    known |= ok_t
    # total FLOPs without a per-precision split: the dominant dtype's peak
    total = _column(df, "flops")
    only_total = ~known & np.isfinite(total) & (total > 0)
    if only_total.any():
        dt = dtype_of(df).astype(str)
        uniq, inv = np.unique(dt, return_inverse=True)
        peaks = np.array([gpu.peak(compute_peak_key(d)) for d in uniq])[inv]
        comp = np.where(only_total, total / peaks, comp)
        known |= only_total
    out = {"compute": np.where(known, comp, np.nan)}
    for lvl, col, key in (("dram", "dram_bytes", "dram_bw_bytes_per_s"),
                          ("l2", "l2_bytes", "l2_bw_bytes_per_s"),
                          ("l1", "l1_bytes", "l1_bw_bytes_per_s"),
                          ("shared", "shared_bytes", "shared_bw_bytes_per_s")):
        x = _column(df, col)
        out[lvl] = np.where(np.isfinite(x) & (x > 0), x / gpu.peak(key), np.nan)
    stack = np.column_stack([out[k] for k in ROOF_LEVELS])
    stack = np.where(np.isfinite(stack) & (stack > 0), stack, -np.inf)
    roof = stack.max(axis=1) if n else np.zeros(0)
    out["roof"] = np.where(np.isfinite(roof), roof, np.nan)
    return out
