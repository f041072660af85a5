"""Quantitative roofline (Konstantinidis & Cotronis, JPDC 2017): profiling metrics of the kernel
on a reference GPU + throughput parameters of the target from micro-benchmarks.

Kernel parameters (paper Table 2), from nvprof-level metrics (Table 1; the canonical columns in
parentheses):

- K_type: fp64 if M_fp64 > 0, else fp32 if M_fp32 > 0, else int   (fp64/fp32_thread_inst)
- Eq. 2  W_comp = M_fpXX + M_fmaXX (fp) or M_int (int)  (fpXX_fma_thread_inst, int_thread_inst)
- Eq. 3  W_traf = 32 (M_tran_r + M_tran_w) = DRAM bytes            (dram_bytes)
- Eq. 4  E_mix = (M_fpXX + M_fmaXX) / (2 M_fpXX), 50 % for int
- Eqs. 5-9  D_ops = I_ops / I_total, D_ldst = M_ldst / I_total, D_other = 1 - D_ops - D_ldst,
  I_ops = M_fpXX or M_int, I_total = 32 M_inst                     (ldst_thread_inst, warp_inst)
  (the counting GPU's warp width for 32: 64 on CDNA); D_other at least 0: counts whose D_ops +
  D_ldst exceed 1, which no consistent profile gives, would make the other instructions' work
  negative and the kernel faster than its compute and load/store instructions alone

Target parameters (Table 3) from the catalog (measured, else derived, else peak): T_SP, T_DP
(FMA FLOP/s), T_int (INT32 multiply-add ops/s), T_add (INT32 add), T_ldst (shared load/store
instructions/s), B_mem (DRAM bandwidth). Where the catalog has no INT32 add rate (AMD, the
B200) T_add is the FP32 add rate; where it has no INT32 multiply-add rate (AMD, the B200, and
Maxwell and Pascal, whose IMAD is several instructions, so that the stand-in flatters them) T_int
is half the FP32 FMA rate. Only the H100 and H200 have a measured load/store rate (32 per SM and
clock); another GPU's T_ldst is its T_add x the reference GPU's measured T_ldst / T_add where
the reference has both (that T_add at most its peak where the other GPU's, derived from it,
stops there: the H100's compiled adds run at 1.95x their peak), else T_add. Each stand-in is
noted.

- Eq. 10 T_op = T_SP | T_DP | T_int
- Eqs. 11-13  W_op = T_SP / T_op, W_ldst = (T_SP/2) / T_ldst, W_other = (T_SP/2) / T_add
- Eqs. 14-16  C_x = D_x W_x;  Eq. 17  E_instr = C_op / (C_op + C_ldst + C_other)
- Eq. 18 T'_op = E_mix E_instr T_op
- Eq. 19 T_pred = T'_op if O_krn > O_dev else O_krn B_mem, with O_krn = W_comp / W_traf and
  O_dev = T'_op / B_mem; predicted time = W_comp / T_pred.

The model predicts the target time from the kernel's metrics alone: the source time is not an
input (it is what the paper evaluates against on the reference GPU). Each prediction says, in
its assumptions, how far the model's time on the source GPU itself lies from the measured one
(as the paper evaluates it): the model errs on the target much as it erred there. Dividing that
ratio out is ``quantitative-transfer``, which takes the MAPE on the Rodinia tables from 42-63 %
to 20-48 % (docs/accuracy.md).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..kernel_names import without_arguments
from .base import Model, Projection
from .common import CeilingBook, labels, warp_size

K_TYPES = ("fp64", "fp32", "int")


class Quantitative(Model):
    name = "quantitative"
    summary = ("quantitative roofline from profiling metrics + target micro-benchmarks "
               "(Konstantinidis)")
    requires = ("time_s", "warp_inst", "ldst_thread_inst", "dram_bytes")
    requires_any = (("fp32_thread_inst",), ("fp64_thread_inst",), ("int_thread_inst",))

    def kernel_parameters(self, df, counted_warp_size=32.0) -> dict:
        """Table 2 of the paper, one array per parameter. ``counted_warp_size``: the warp width
        of the GPU that counted ``warp_inst`` (the paper's 32 in I_total = 32 M_inst; 64 for a
        CDNA wavefront, which issues half as many instructions for the same threads)."""
        m32 = np.nan_to_num(df["fp32_thread_inst"].to_numpy(float))
        m64 = np.nan_to_num(df["fp64_thread_inst"].to_numpy(float))
        mint = np.nan_to_num(df["int_thread_inst"].to_numpy(float))
        f32 = np.nan_to_num(df["fp32_fma_thread_inst"].to_numpy(float))
        f64 = np.nan_to_num(df["fp64_fma_thread_inst"].to_numpy(float))
        ktype = np.where(m64 > 0, "fp64", np.where(m32 > 0, "fp32", "int")).astype(object)
        w_comp = np.select([ktype == "fp64", ktype == "fp32"], [m64 + f64, m32 + f32], mint)
        with np.errstate(invalid="ignore", divide="ignore"):
            e_mix = np.select([ktype == "fp64", ktype == "fp32"],
                              [(m64 + f64) / (2 * m64), (m32 + f32) / (2 * m32)], 0.5)
            i_ops = np.select([ktype == "fp64", ktype == "fp32"], [m64, m32], mint)
            i_total = counted_warp_size * df["warp_inst"].to_numpy(float)
            d_ops = i_ops / i_total
            d_ldst = df["ldst_thread_inst"].to_numpy(float) / i_total
        d_other = 1.0 - d_ops - d_ldst
        return {"K_type": ktype, "W_comp": w_comp, "W_traf": df["dram_bytes"].to_numpy(float),
                "E_mix": e_mix, "D_ops": d_ops, "D_ldst": d_ldst,
                "D_other": np.maximum(d_other, 0.0)}  # at least 0: the module docstring

    @staticmethod
    def device_parameters(book) -> dict:
        """Table 3 of the paper from the catalog (rates in per second)."""
        t_add = book("int32_add_ops_per_s")
        if np.isnan(t_add):
            # one INT32 add per FP32 lane and clock, the FP32 add rate (CDNA, Hopper; GA10x's
            # FP32-only half of the lanes would make it half that)
            t_add = book("fp32_addmul_flops_per_s")
            book.stand_in("int32_add_ops_per_s", "fp32_addmul_flops_per_s")
        # LD/ST: measured on the H100 and H200 only (32 per SM and clock); another GPU takes
        # its T_add x the reference's measured LD/ST/add ratio, the add on the footing of this
        # GPU's (CeilingBook.relative), so that both GPUs of a projection price load/stores
        # alike (the H100's LSU rate itself against a GPU's add rate would not); else T_add
        t_ldst = book.relative("ldst_inst_per_s", "int32_add_ops_per_s", base_value=t_add)
        t_sp = book("fp32_fma_flops_per_s")
        t_int = book("int32_fma_ops_per_s")
        if np.isnan(t_int):
            # IMAD at half the FP32 FMA rate (64 against 128 per clock and SM on NVIDIA since
            # Volta; the B200's and MI300X's documents give no INT32 rate; on Maxwell and
            # Pascal IMAD is several XMAD instructions, which this overstates)
            t_int = 0.5 * t_sp
            book.stand_in("int32_fma_ops_per_s", "fp32_fma_flops_per_s / 2")
        return {"T_SP": t_sp, "T_DP": book("fp64_fma_flops_per_s"), "T_int": t_int,
                "T_add": t_add, "T_ldst": t_ldst, "B_mem": book("dram_bw_bytes_per_s")}

    def _project(self, df, source, target):
        p = self._model_time(df, source, target)
        note, caution = self._once("self_check", lambda: self._self_check(df, source))
        return replace(p, assumptions=p.assumptions + note, cautions=caution)

    def _self_check(self, df, source) -> tuple[list, list]:
        """The model's time on the source GPU itself against the measured time, as the paper
        evaluates it: an absolute prediction far from the measurement there is as far off on the
        target. (notes, cautions): the note says so next to the projected times, and where a
        row lies outside 0.5-2x, a caution names the worst one (an H100 atomic_hotspot, 19 ms
        of contended atomics, is 0.0022x there, and "464x faster" on an H200)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            r = self._model_time(df, source, source).time_s / df["time_s"].to_numpy(float)
        ok = np.isfinite(r) & (r > 0)
        if not ok.any():
            return [], []
        lo, med, hi = np.quantile(r[ok], [0.0, 0.5, 1.0])
        span = f"{lo:.2g}x" if lo == hi else f"{lo:.2g}x to {hi:.2g}x (median {med:.2g}x)"
        note = f"on {source.id} itself the model predicts {span} the measured time"
        if 0.5 <= lo and hi <= 2:
            return [note], []
        off = np.where(ok, np.abs(np.log(np.where(ok, r, 1.0))), -1.0)
        worst = int(np.argmax(off))
        kernel = without_arguments(str(df["kernel"].iat[worst]))
        caution = (f"on {source.id} itself it predicts {np.sum(ok & ((r < 0.5) | (r > 2)))} of "
                   f"{ok.sum()} rows outside 0.5-2x the measured time ({kernel}: "
                   f"{r[worst]:.2g}x): its projections of them are as far off; "
                   "quantitative-transfer keeps the measured level")
        return [note + ": its absolute times miss what limits these kernels there"], [caution]

    def _model_time(self, df, source, target, reference=None):
        """Eq. 19's time of each row on ``target``, from counts taken on ``source``
        (``reference``: the GPU whose measured/peak ratios derive the target's missing
        ceilings, by default ``source``)."""
        # the kernel's parameters depend on the counting GPU only: computed once per predict
        # call, with K_type as an index into K_TYPES so that per-target choices are gathers
        k = self._once("kernel", lambda: self.kernel_parameters(df, warp_size(source)))
        kind = self._once("kind", lambda: pd.Categorical(k["K_type"], categories=K_TYPES).codes)
        book = CeilingBook(target, reference=source if reference is None else reference)
        d = self.device_parameters(book)
        t_op = np.array([d["T_DP"], d["T_SP"], d["T_int"]])[kind]  # Eq. 10, per K_type
        w_op = d["T_SP"] / t_op
        w_ldst = 0.5 * d["T_SP"] / d["T_ldst"]
        w_other = 0.5 * d["T_SP"] / d["T_add"]
        c_op, c_ldst, c_other = k["D_ops"] * w_op, k["D_ldst"] * w_ldst, k["D_other"] * w_other
        with np.errstate(invalid="ignore", divide="ignore"):
            e_instr = c_op / (c_op + c_ldst + c_other)
            t_adj = k["E_mix"] * e_instr * t_op
            o_krn = k["W_comp"] / k["W_traf"]
            o_dev = t_adj / d["B_mem"]
            compute_bound = o_krn > o_dev
            t_pred = np.where(compute_bound, t_adj, o_krn * d["B_mem"])
            # NaN where a throughput the kernel needs is unknown (not the DRAM time alone)
            time = np.where(np.isfinite(t_adj), k["W_comp"] / t_pred, np.nan)
            # a kernel without beneficial operations moves bytes only
            time = np.where(k["W_comp"] > 0, time, k["W_traf"] / d["B_mem"])
        lim = labels(np.where(compute_bound & (k["W_comp"] > 0), kind, len(K_TYPES)),
                     K_TYPES + ("dram",))
        with np.errstate(invalid="ignore", divide="ignore"):
            breakdown = {"t_compute_s": k["W_comp"] / t_adj, "t_dram_s": k["W_traf"] / d["B_mem"]}
        return Projection(time, limiter=lim, breakdown=breakdown, assumptions=book.notes)


class QuantitativeTransfer(Quantitative):
    """The quantitative roofline with the source's efficiency carried over: the kernel is taken
    to reach on the target the fraction of its quantitative-roofline performance that it
    reached on the source (the efficiency transfer of Srivastava et al., applied to this
    model's time instead of the plain roofline's),

        t_target = t_source x Q_target / Q_source,

    Q_x the time ``quantitative`` predicts on GPU x from the source's metrics. The absolute
    model predicts kernels that run far below their roofline 2x too fast (docs/accuracy.md);
    the ratio keeps what it knows about the instruction mix (FP64 against FP32 throughput,
    load/store and other instructions) and takes the level from the measurement."""

    name = "quantitative-transfer"
    summary = ("quantitative roofline x the source's efficiency against it (Konstantinidis, "
               "efficiency transfer of Srivastava et al.)")

    def _project(self, df, source, target):
        # Q_source with the target as the reference GPU, as Q_target has the source: where one
        # of the two has a measured ceiling and the other only a peak, the other's value is
        # derived from that measured/peak ratio, so that the ratio never sets a measured value
        # against a peak (an H200's measured DRAM bandwidth against an H100's datasheet one
        # made a DRAM-bound kernel 1.05x faster instead of 1.43x)
        # both from the source's counts: Eq. 9's warp width is the source's, whichever GPU
        # the time is for (with the target's, a CDNA target halved I_total in Q_source, and the
        # first target of a predict call set it for all the others through _once)
        own = self._model_time(df, source, source, reference=target)
        p = self._model_time(df, source, target)
        with np.errstate(invalid="ignore", divide="ignore"):
            efficiency = df["time_s"].to_numpy(float) / own.time_s
        notes = list(dict.fromkeys(own.assumptions + p.assumptions))
        return Projection(p.time_s * efficiency, limiter=p.limiter,
                          breakdown={k: v * efficiency for k, v in p.breakdown.items()},
                          assumptions=notes)
