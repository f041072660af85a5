"""Roofline x occupancy x transferred efficiency (Srivastava et al., Algorithm 1).

    O_src, O_tgt = occupancy of the launch on each GPU (theoretical, from the catalog limits)
    FLOPs = 0:  eta = (Bytes / T_src) / (O_src BW_src);  T_tgt = Bytes / (eta O_tgt BW_tgt)
    else:       AI = FLOPs / Bytes; Roof = min(C, AI BW) on each GPU;
                eta = (FLOPs / T_src) / (O_src Roof_src);  T_tgt = FLOPs / (eta O_tgt Roof_tgt)

C and BW are datasheet peaks of the kernel's dtype, as in the report. Without bytes, Roof = C.
The occupancy ratio is taken as 1 (stated in the assumptions) for rows without launch
geometry, on a GPU whose occupancy limits the catalog lacks, and where the occupancy rules hold
no block on the source, on which the kernel ran. A row whose block fits no SM of the target
(more threads or shared memory than a block may have there) cannot launch on it: no time,
where O_tgt = 0 makes Algorithm 1's time infinite. A register or shared-memory size the
profile lacks is no limit: that occupancy counts the other limits only (noted).

By default the occupancy departs from the report's Sec. 4.0.2: its B_reg, B_smem, B_threads
and B_hardware are ``gpuproj.occupancy``'s rules with every allocation unit 1, and the rules
add NVIDIA's units (registers per warp in 256s, the register file's partitions, shared memory
in 128 or 256 B, 1 KB reserved per block since Ampere), which is what the hardware holds. On
the report's Titan V a block of 128 threads and 33 registers gets 12 blocks per SM (O = 0.75)
where the report's formula gives 15 (O = 0.94), and the time scales with O_src / O_tgt.
``EfficiencyTransfer(occupancy="report")`` takes the report's formula as written
(``gpuproj.occupancy.report_occupancy``); docs/accuracy.md scores both.
"""

from __future__ import annotations

import numpy as np

from .base import Model, Projection
from .common import (
    DTYPES,
    OCCUPANCY_FORMULAS,
    cannot_launch,
    check_formula,
    dram_blind_note,
    dtype_peaks,
    labels,
)


class EfficiencyTransfer(Model):
    name = "efficiency"
    summary = "roofline x occupancy x transferred efficiency (Srivastava et al., Algorithm 1)"
    requires_any = (("flops",), ("dram_bytes",))

    def __init__(self, occupancy: str = "rules"):
        self.occupancy = check_formula(occupancy, "occupancy")

    def _project(self, df, source, target):
        notes = []
        flops = df["flops"].to_numpy(float)
        nbytes = df["dram_bytes"].to_numpy(float)
        codes = df["_dtype"].to_numpy()
        c_s, c_t, peak_notes = dtype_peaks(codes, source, target)
        notes += peak_notes
        bw_s, bw_t = source.peak("dram_bw_bytes_per_s"), target.peak("dram_bw_bytes_per_s")
        o_s, o_t, launchable, occ_notes = self._occupancies(df, source, target)
        notes += occ_notes
        t_src = df["time_s"].to_numpy(float)
        has_f = np.isfinite(flops) & (flops > 0)
        has_b = np.isfinite(nbytes) & (nbytes > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            ai = flops / nbytes
            roof_s = np.where(has_b, np.minimum(c_s, ai * bw_s), c_s)
            roof_t = np.where(has_b, np.minimum(c_t, ai * bw_t), c_t)
            eta_c = (flops / t_src) / (o_s * roof_s)
            t_c = flops / (eta_c * o_t * roof_t)
            eta_b = (nbytes / t_src) / (o_s * bw_s)
            t_b = nbytes / (eta_b * o_t * bw_t)
        time = np.where(launchable, np.where(has_f, t_c, t_b), np.nan)
        lim = labels(np.where(has_f & ~(has_b & (ai * bw_t < c_t)), codes, len(DTYPES)),
                     DTYPES + ("dram",))
        notes.append("datasheet peaks; efficiency assumed equal on both GPUs")
        notes.extend(self._once("dram_blind", lambda: dram_blind_note(df)))
        why = (None if launchable.all() else
               np.where(launchable, "", cannot_launch(target.id, self.occupancy)))
        return Projection(time, limiter=lim, assumptions=notes, why_none=why,
                          breakdown={"occupancy_source": o_s, "occupancy_target": o_t})

    def _occupancies(self, df, source, target):
        """(O_src, O_tgt, rows that can launch on the target, notes): the occupancies of
        Algorithm 1, 1 on both GPUs where the ratio cannot be known (the module docstring)."""
        from .common import launch_configs, theoretical_occupancy

        configs = self._once("launch_configs", lambda: launch_configs(df))
        o_s = self._once("occupancy_source", lambda: theoretical_occupancy(
            df, source, configs, self.occupancy))
        o_t = theoretical_occupancy(df, target, configs, self.occupancy)
        geometry = configs[0]
        limits = geometry & np.isfinite(o_s) & np.isfinite(o_t)
        ran = limits & (o_s > 0)
        launchable = ~ran | (o_t > 0)
        known = ran & launchable
        notes = []

        def rows(mask, text):
            if mask.any():
                notes.append(f"{int(mask.sum())} row(s) {text}")

        rows(~geometry, "without launch geometry: occupancy ratio 1")
        rows(geometry & ~limits, f"on a GPU whose occupancy limits the catalog lacks "
                                 f"({source.id} or {target.id}): occupancy ratio 1")
        rows(limits & ~ran, f"fit no block on {source.id} by the occupancy "
                            f"{OCCUPANCY_FORMULAS[self.occupancy]}, where they ran: "
                            "occupancy ratio 1")
        rows(~launchable, f"cannot launch on {target.id}: no time")
        partial = self._once("partial", lambda: (
            np.isnan(df["regs_per_thread"].to_numpy(float))
            | np.isnan(df["smem_per_block_bytes"].to_numpy(float))))
        rows(known & partial, "without a register count or shared-memory size: their "
                              "occupancy counts the other limits only")
        return np.where(known, o_s, 1.0), np.where(known, o_t, 1.0), launchable, notes
