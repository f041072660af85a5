"""Baselines kept for evaluation: ``same``, ``bandwidth``, ``compute`` and the classic DRAM
``roofline`` ratio. All use datasheet peaks only, as a reader of two datasheets would."""

from __future__ import annotations

import numpy as np

from .base import Model, Projection
from .common import DTYPES, dram_blind_note, dtype_peaks, fixed_label, labels


class Same(Model):
    """Target time = source time."""

    name = "same"
    summary = "target time = source time"

    def _project(self, df, source, target):
        return Projection(df["time_s"].to_numpy(float), limiter=fixed_label("measured", len(df)))


class BandwidthScaling(Model):
    """Source time x peak DRAM bandwidth ratio (source / target)."""

    name = "bandwidth"
    summary = "scale by the datasheet DRAM bandwidth ratio"

    def _project(self, df, source, target):
        k = "dram_bw_bytes_per_s"
        r = source.peak(k) / target.peak(k)
        return Projection(df["time_s"].to_numpy(float) * r, limiter=fixed_label("dram", len(df)),
                          # the ratio itself is the speed-up the table shows
                          assumptions=["datasheet DRAM bandwidth ratio, source / target"])


class ComputeScaling(Model):
    """Source time x peak FMA throughput ratio (source / target) of the kernel's dtype."""

    name = "compute"
    summary = "scale by the datasheet peak FLOP/s ratio of the kernel's data type"

    def _project(self, df, source, target):
        codes = df["_dtype"].to_numpy()
        ps, pt, notes = dtype_peaks(codes, source, target)
        return Projection(df["time_s"].to_numpy(float) * ps / pt, limiter=labels(codes, DTYPES),
                          assumptions=["datasheet FMA peak of the kernel's dtype "
                                        "(fp32 if unknown)", *notes])


class Roofline(Model):
    """Classic roofline ratio (Van Lanker Eqs. 1 and 9, DRAM only, datasheet peaks):
    roofline(OI) = min(BW x OI, Perf); Perf_t = Perf_s / roofline_s x roofline_t, so
    t_t = t_s x roofline_s / roofline_t. Without FLOPs the ratio is that of bandwidths; without
    bytes, that of compute peaks."""

    name = "roofline"
    summary = "classic DRAM roofline ratio with datasheet peaks"
    requires_any = (("flops",), ("dram_bytes",))

    def _project(self, df, source, target):
        flops = df["flops"].to_numpy(float)
        dram = df["dram_bytes"].to_numpy(float)
        codes = df["_dtype"].to_numpy()
        ps, pt, notes = dtype_peaks(codes, source, target)
        bs, bt = source.peak("dram_bw_bytes_per_s"), target.peak("dram_bw_bytes_per_s")
        has_f = np.isfinite(flops) & (flops > 0)
        has_b = np.isfinite(dram) & (dram > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            oi = flops / dram
            roof_s = np.where(has_f & has_b, np.minimum(bs * oi, ps), np.where(has_f, ps, bs))
            roof_t = np.where(has_f & has_b, np.minimum(bt * oi, pt), np.where(has_f, pt, bt))
            mem_bound_t = has_b & (~has_f | (bt * oi < pt))
        lim = labels(np.where(mem_bound_t, len(DTYPES), codes), DTYPES + ("dram",))
        return Projection(df["time_s"].to_numpy(float) * roof_s / roof_t, limiter=lim,
                          assumptions=["datasheet peaks; DRAM level only", *notes,
                                       *self._once("dram_blind", lambda: dram_blind_note(df))])
