"""The benchmarks, written once for every backend, and the runner that executes them.

Groups (``GROUPS``), each kernel's formula in ``kernels/*.cl``:

- ``compute``: FMA, ADD and MUL in FP32 and FP64, paired FP16 FMA, INT32 multiply-add and add,
  rsqrt on the special-function unit; 8 independent chains per thread, iteration counts raised
  until one run lasts ``min_time_s``.
- ``stream``: init (write-only), read, copy, scale, add, triad over arrays far above L2, two
  buffer sets used in turn so no run finds the previous run's data in a cache.
- ``cache``: L1 and L2 read bandwidth (working sets of ``l1_ws_bytes`` and a fraction of L2),
  and the bandwidth-versus-working-set sweep that shows each level's plateau.
- ``shared``: shared-memory loads without and with 32-way bank conflicts (T_ldst).
- ``mixbench``: operational-intensity sweep per precision (the measured roofline).
- ``overhead``: launch overhead (device time per launch of empty kernels queued back to back)
  and per-block cost (device time of an empty kernel against its block count).
- ``latency``: pointer chase, one thread, through a random cycle of 64-byte lines in an L1-, an
  L2- and a DRAM-sized working set; the DRAM chase starts each launch on lines no launch before
  it read.

Every timed repetition is a device-event duration; the raw samples are kept in the result.
"""

from __future__ import annotations

import math
import platform
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from ..errors import GpuprojError
from .sizes import QUICK, Sizes, floor_pow2
from .stats import linear_fit, summarize

GROUPS = ("compute", "stream", "cache", "shared", "mixbench", "overhead", "latency")
FORMAT_VERSION = 1
# how ``launch`` is timed (``params.timer``); results of gpuproj before it timed the host
TIMER_BACK_TO_BACK = "device, first start to last end of launches queued before the first ran"

# compute kernels: name -> (argument dtype, instructions per chain step, FLOP (or op) per
#                           instruction, unit, device capability needed, (b, c) arguments)
UNROLL, CHAINS = 16, 8
COMPUTE = {
    "fp32_fma": (np.float32, 1, 2, "flops_per_s", None, (0.999, 0.001)),
    "fp32_add": (np.float32, 2, 1, "flops_per_s", None, (0.001, -0.001)),
    "fp32_mul": (np.float32, 2, 1, "flops_per_s", None, (0.999, 1 / 0.999)),
    "fp64_fma": (np.float64, 1, 2, "flops_per_s", "fp64", (0.999, 0.001)),
    "fp64_add": (np.float64, 2, 1, "flops_per_s", "fp64", (0.001, -0.001)),
    "fp64_mul": (np.float64, 2, 1, "flops_per_s", "fp64", (0.999, 1 / 0.999)),
    "fp16x2_fma": ("half2", 1, 4, "flops_per_s", "fp16", (0.5, 0.5)),
    "int32_mad": (np.uint32, 1, 2, "ops_per_s", None, (3, 7)),
    "int32_add": (np.uint32, 1, 1, "ops_per_s", None, (3, 7)),
    "sfu_rsqrt": (np.float32, 1, 1, "ops_per_s", None, (0.0, 0.0)),
}

# STREAM kernels: name -> (arrays read, arrays written) per element; arguments built in _stream
STREAM = {"init": (0, 1), "read": (1, 0), "copy": (1, 1), "scale": (1, 1), "add": (2, 1),
          "triad": (2, 1)}
# what the STREAM kernels, run in that order, leave in a, b, c of every buffer set: init a = 1;
# read stores nothing; copy b = a; scale b = a / 2; add c = a + b; triad a = b + c / 2
STREAM_RESULT = {"a": 1.25, "b": 0.5, "c": 1.5}

MIX_PRECISIONS = {"fp32": (np.float32, 4, 2, None), "fp64": (np.float64, 8, 2, "fp64"),
                  "fp16x2": ("half2", 4, 4, "fp16")}  # dtype, bytes/element, FLOP per FMA, needs

# every benchmark a result holds: name -> (group, unit of its value). A unit is how the name of
# the benchmark's catalog field ends (``entry.FIELD_MAP``: smem_read, ``inst_per_s``, gives
# ``ldst_inst_per_s``), and a result holds no other: ``entry.read_result`` refuses a name or a
# unit not listed here, which a hand edit would otherwise carry into the catalog file unread
# (GFLOP/s written as FLOP/s, a renamed benchmark left out)
BENCHMARKS = {
    **{name: ("compute", spec[3]) for name, spec in COMPUTE.items()},
    **{f"stream_{name}": ("stream", "bytes_per_s") for name in STREAM},
    "l1_read": ("cache", "bytes_per_s"), "l2_read": ("cache", "bytes_per_s"),
    "smem_read": ("shared", "inst_per_s"), "smem_read_conflict": ("shared", "inst_per_s"),
    "launch": ("overhead", "s"),
    **{f"latency_{level}": ("latency", "s") for level in ("l1", "l2", "dram")},
}


def half2_bits(x: float) -> np.uint32:
    """The 32 bits of a half2 holding ``x`` twice (how paired-FP16 arguments are passed)."""
    return np.array([x, x], dtype=np.float16).view(np.uint32)[0]


def _arg(dtype, v):
    return half2_bits(v) if dtype == "half2" else np.dtype(dtype).type(v)


def lane_width(dtype, vw: int) -> int:
    """Vector lanes per chain or element of ``dtype`` when 4-byte types take ``vw`` (1 on GPUs):
    8-byte types take half as many, to fill the same vector registers; at ``vw`` lanes a CPU's
    FP64 chains need twice the registers and spill, at half the rate or less (PoCL on an AMD
    EPYC: docs/bench.md, ``-DVW64``, with the script that measures it). Paired FP16 is never
    widened."""
    if isinstance(dtype, str):  # "half2"
        return 1
    return max(1, vw * 4 // np.dtype(dtype).itemsize)


def vector_defines(vw: int) -> dict:
    """Build options of compute.cl and mixbench.cl at vector width ``vw``; none at 1."""
    return {"VW": vw, "VW64": lane_width(np.float64, vw)} if vw > 1 else {}


def mix_extra(ks, precisions) -> str:
    """The instantiation lines appended to mixbench.cl / mixbench.cu."""
    return "\n".join(" ".join(f"MIX_{p.upper()}({k})" for k in ks) for p in precisions)


def cuda_build_units(sizes: Sizes) -> list:
    """(source, appended text) of every CUDA module the suite builds with ``sizes`` (``hold``:
    the CUDA backend's, ahead of every timed launch)."""
    return [("compute", ""), ("memory", ""), ("mixbench", mix_extra(sizes.mix_ks, MIX_PRECISIONS)),
            ("hold", "")]


@dataclass
class Measurement:
    """One benchmark of ``BENCHMARKS``: ``reps`` event-timed durations of a run doing ``work``
    units.

    ``value`` is ``work / median(samples_s)`` (a rate, in ``unit``), or for ``per_item`` ones
    ``median(samples_s) / work`` (seconds per item: launch overhead, latency). ``counts`` holds
    other per-run counts (``instructions``) whose rates are reported too.
    """

    name: str
    work: float
    samples_s: list
    params: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    per_item: bool = False

    @property
    def group(self) -> str:
        return BENCHMARKS[self.name][0]

    @property
    def unit(self) -> str:
        return BENCHMARKS[self.name][1]

    @property
    def summary(self):
        return summarize(self.samples_s)

    @property
    def value(self) -> float:
        med = self.summary.median
        return med / self.work if self.per_item else self.work / med

    def rate_of(self, count: str) -> float:
        return self.counts[count] / self.summary.median

    def to_dict(self) -> dict:
        return {"name": self.name, "group": self.group, "unit": self.unit, "value": self.value,
                "work": self.work, "per_item": self.per_item, "counts": self.counts,
                "rates": {k: self.rate_of(k) for k in self.counts},
                "summary": self.summary.to_dict(), "params": self.params,
                "samples_s": list(self.samples_s)}


class Runner:
    """Runs the groups of the suite on one backend with one set of sizes."""

    def __init__(self, backend, sizes: Sizes = QUICK, log=None):
        self.b, self.s, self.info = backend, sizes, backend.info
        self.log = log or (lambda msg: None)
        self.block = min(sizes.block, self.info.max_block_size)
        self.grid = max(1, self.info.compute_units) * sizes.blocks_per_cu
        l2 = self.info.l2_bytes
        # CPUs report their last-level cache, sometimes absurdly; keep GPU-like sizes sane
        self.l2 = l2 if l2 and l2 <= 256 * 1024**2 and self.info.device_type == "GPU" else \
            (l2 if l2 and l2 <= 64 * 1024**2 else sizes.default_l2_bytes)
        self.measurements, self.sweeps, self.skipped, self.checks = [], {}, [], []

    # -- timing helpers -------------------------------------------------------------------------
    def timed(self, kernel, blocks, block, arg_sets, reps=None, warmup=None) -> list:
        """``warmup`` untimed then ``reps`` timed launches, cycling through ``arg_sets``."""
        reps = self.s.reps if reps is None else reps
        warmup = self.s.warmup if warmup is None else warmup
        cyc = [arg_sets[i % len(arg_sets)] for i in range(warmup + reps)]
        if warmup:
            self.b.run_many(kernel, blocks, block, cyc[:warmup])
        return self.b.run_many(kernel, blocks, block, cyc[warmup:])

    def calibrate(self, run_once, start: int, multiple: int = 1, limit: int = 2**31 - 1) -> int:
        """Smallest tried count (doubling or more) whose single run lasts ``min_time_s``."""
        n = max(multiple, start - start % multiple)
        while True:
            t = run_once(n)
            if t >= self.s.min_time_s or n >= limit:
                return n
            grow = min(64, max(2, math.ceil(1.3 * self.s.min_time_s / max(t, 1e-9))))
            n = min(limit, n * grow)
            n -= n % multiple

    def add(self, m: Measurement):
        self.measurements.append(m)
        self.log(f"{m.name}: {m.value:.4g} {m.unit} (spread {m.summary.spread:.1%})")
        return m

    def skip(self, name, reason):
        self.skipped.append({"name": name, "reason": reason})
        self.log(f"{name}: skipped ({reason})")

    def has(self, need):
        return need is None or bool(getattr(self.info, need))

    # -- groups ---------------------------------------------------------------------------------
    def compute(self):
        vw = int(self.b.compute_vector_width)
        mod = self.b.build("compute", defines=vector_defines(vw))
        threads = self.grid * self.block
        lanes = threads * vw
        out = self.b.alloc(lanes * 8)
        idx = np.arange(lanes)
        try:
            for name, (dt, per_step, flop, _, need, (bv, cv)) in COMPUTE.items():
                if not self.has(need):
                    self.skip(name, f"the device has no {need} support")
                    continue
                k = mod[name]
                b, c = _arg(dt, bv), _arg(dt, cv)
                # distinct start values per lane (the kernels read them as their seeds)
                if dt == np.uint32:
                    seeds = (idx * 2654435761).astype(np.uint32)
                elif dt == "half2":
                    seeds = (1 + (idx % 16) * 0.01).astype(np.float16).repeat(2)
                else:
                    seeds = (1 + (idx % 256) * 0.001).astype(dt)
                self.b.upload(out, seeds)
                w = lane_width(dt, vw)
                n_out = threads * w * (2 if dt == "half2" else 1)  # a half2 is two float16
                if not self.check_compute(name, k, (out, np.uint32(1), b, c), seeds[:n_out]):
                    continue

                def once(it, k=k, b=b, c=c):
                    return self.b.run(k, self.grid, self.block, (out, np.uint32(it), b, c))
                iters = self.calibrate(once, 16)
                samples = self.timed(k, self.grid, self.block,
                                     [(out, np.uint32(iters), b, c)])
                inst = float(threads) * w * iters * UNROLL * CHAINS * per_step
                self.add(Measurement(name, inst * flop, samples,
                                     params={"blocks": self.grid, "block": self.block,
                                             "vector_width": w, "iters": iters,
                                             "chains": CHAINS, "unroll": UNROLL,
                                             "instructions_per_step": per_step,
                                             "work_per_instruction": flop},
                                     counts={"instructions": inst}))
        finally:
            self.b.free(out)

    def check_compute(self, name, k, args, seeds) -> bool:
        """Correct first, before ``name`` is timed: one launch of one iteration (``args``) must
        replace the ``seeds`` in its output with finite values. The CUDA and OpenCL kernels
        combine their chains differently, so only this much is common to both; it catches a
        kernel that never ran or a compiler that dropped its store."""
        self.b.run(k, self.grid, self.block, args)
        got = self.b.download(args[0], seeds.dtype, seeds.size)
        finite = np.isfinite(got).all() if got.dtype.kind == "f" else True
        ok = bool(finite and (got != seeds).any())
        return self.verdict(name, ok, expected="finite values other than the seeds",
                            wrong={} if ok else {"first values": got[:4].tolist()})

    def expect(self, name, got, want, label: str = "out") -> bool:
        """``verdict`` of a check that every value of ``got`` is ``want``, naming the first
        that is not as ``label``."""
        bad = np.atleast_1d(got) != want
        return self.verdict(name, not bad.any(), expected=want,
                            wrong={label: np.atleast_1d(got)[bad][0].item()} if bad.any() else {})

    def verdict(self, name, ok: bool, **detail) -> bool:
        """Record the result check of ``name`` (a benchmark or a group) in ``checks``; one that
        failed is not timed (``skipped``): a rate of kernels that compute the wrong thing is no
        ceiling, and ``entry.measured_values`` leaves it out of the catalog file."""
        self.checks.append({"name": name, "ok": ok, **detail})
        self.log(f"{name} results: " + ("right" if ok else f"WRONG {detail.get('wrong')}"))
        if not ok:
            self.skip(name, "its result check failed: not timed")
        return ok

    def _stream_elems(self):
        # STREAM's rule: each array at least 4x the cache, or it measures the cache (a CPU's
        # last-level cache can be four times the quick preset's arrays)
        per = max(self.s.stream_bytes or max(16 * self.l2, 256 * 1024**2), 4 * self.l2)
        sets = self.s.rotate_sets
        # 3 arrays per set must fit in 80 % of device memory
        while sets > 1 and 3 * sets * per > 0.8 * self.info.global_mem_bytes:
            sets -= 1
        while 3 * sets * per > 0.8 * self.info.global_mem_bytes:
            per //= 2
        n = per // 16 // self.block * self.block  # float4 elements, whole blocks
        return n, sets

    def stream(self):
        mod = self.b.build("memory")
        n, sets = self._stream_elems()
        nbytes = n * 16
        arrays = [[self.b.alloc(nbytes) for _ in range(3)] for _ in range(sets)]
        blocks = n // self.block
        try:
            for a, b, c in arrays:  # positive data on the device, no host transfer
                for buf, v in ((a, 1.0), (b, 2.0), (c, 0.5)):
                    self.b.run(mod["stream_init"], blocks, self.block, (buf, np.float32(v)))
            f = np.float32
            args = {"init": lambda a, b, c: (a, f(1.0)),
                    "read": lambda a, b, c: (a, b, f(-1.0)),
                    "copy": lambda a, b, c: (a, b),
                    "scale": lambda a, b, c: (a, b, f(0.5)),
                    "add": lambda a, b, c: (a, b, c),
                    "triad": lambda a, b, c: (a, b, c, f(0.5))}
            # correct first: the sequence once, untimed, then its results (each kernel leaves
            # the same values when the timed runs repeat it)
            for name in STREAM:
                for bufs in arrays:
                    self.b.run(mod[f"stream_{name}"], blocks, self.block, args[name](*bufs))
            if not self.check_stream(arrays, min(4 * n, 65536)):
                return
            for name, (nr, nw) in STREAM.items():
                samples = self.timed(mod[f"stream_{name}"], blocks, self.block,
                                     [args[name](*s) for s in arrays])
                self.add(Measurement(f"stream_{name}", float(nbytes) * (nr + nw), samples,
                                     params={"array_bytes": nbytes, "arrays_read": nr,
                                             "arrays_written": nw, "buffer_sets": sets,
                                             "blocks": blocks, "block": self.block}))
        finally:
            for s in arrays:
                for buf in s:
                    self.b.free(buf)

    def check_stream(self, arrays, count: int) -> bool:
        """The first ``count`` floats of every STREAM array hold what the kernels must have
        left there (``STREAM_RESULT``); a kernel that wrote nothing, or the wrong thing, makes
        every STREAM bandwidth meaningless (``verdict``)."""
        wrong = {}
        for i, bufs in enumerate(arrays):
            for (name, want), buf in zip(STREAM_RESULT.items(), bufs):
                got = self.b.download(buf, np.float32, count)
                bad = got != np.float32(want)
                if bad.any():
                    wrong[f"set {i} {name}"] = float(got[np.argmax(bad)])
        return self.verdict("stream", not wrong, expected=STREAM_RESULT, wrong=wrong,
                            floats_checked=count)

    def _ws_read(self, mod, buf, out, ws_bytes):
        """(samples, bytes per run, iters) of ws_read over ``ws_bytes`` (a power of two)."""
        k = mod["ws_read"]
        gs = self.grid * self.block
        mask = np.uint32(ws_bytes // 16 - 1)
        # each block walks 2 x block elements per step from its own chunk: enough steps that
        # the blocks together walk as many chunks as the set has (every one where the grid
        # has as many blocks, the starting chunks being distinct)
        cover = 2 * math.ceil(ws_bytes / 16 / (2 * self.block) / self.grid)

        def once(it):
            return self.b.run(k, self.grid, self.block, (buf, out, mask, np.uint32(it)))
        iters = self.calibrate(once, max(2, cover), multiple=2)
        samples = self.timed(k, self.grid, self.block, [(buf, out, mask, np.uint32(iters))])
        return samples, float(gs) * iters * 16, iters

    def cache(self):
        mod = self.b.build("memory")
        n_stream, _ = self._stream_elems()
        top = self.s.sweep_max_bytes or 4 * n_stream * 16
        top = floor_pow2(min(top, int(0.4 * self.info.global_mem_bytes)))
        l1 = floor_pow2(self.s.l1_ws_bytes)
        l2 = max(2 * l1, floor_pow2(int(self.l2 * self.s.l2_ws_fraction)))
        top = max(top, 2 * l2)
        buf = self.b.alloc(top)
        out = self.b.alloc(self.grid * self.block * 4)
        try:
            # correct first: on data of -1, one loop iteration reads two float4 per work-item
            # and stores their sum, -8 (data >= 0, as timed, store nothing)
            self.b.run(mod["stream_init"], top // 16 // self.block, self.block,
                       (buf, np.float32(-1.0)))
            self.b.run(mod["ws_read"], self.grid, self.block,
                       (buf, out, np.uint32(l1 // 16 - 1), np.uint32(2)))
            got = self.b.download(out, np.float32, self.grid * self.block)
            if not self.expect("cache", got, -8.0):
                return
            self.b.run(mod["stream_init"], top // 16 // self.block, self.block,
                       (buf, np.float32(1.0)))
            for name, ws in (("l1_read", l1), ("l2_read", l2)):
                samples, work, iters = self._ws_read(mod, buf, out, ws)
                self.add(Measurement(name, work, samples,
                                     params={"working_set_bytes": ws, "iters": iters,
                                             "blocks": self.grid, "block": self.block,
                                             "l2_bytes_assumed": self.l2}))
            points = []
            ws = floor_pow2(self.s.sweep_min_bytes)
            while ws <= top:
                samples, work, iters = self._ws_read(mod, buf, out, ws)
                s = summarize(samples)
                points.append({"working_set_bytes": ws, "bytes_per_s": work / s.median,
                               "iters": iters, "summary": s.to_dict(), "samples_s": samples})
                ws *= self.s.sweep_factor
            self.sweeps["working_set"] = points
            self.log(f"working-set sweep: {len(points)} points up to {top} bytes")
        finally:
            self.b.free(buf)
            self.b.free(out)

    def shared(self):
        mod = self.b.build("memory")
        k = mod["smem_read"]
        block = self.block
        out = self.b.alloc(self.grid * block * 4)
        try:
            # correct first: at stride 0 every load reads a 0 and every work-item stores the sum
            self.b.upload(out, np.full(self.grid * block, -1.0, dtype=np.float32))
            self.b.run(k, self.grid, block, (out, np.uint32(1), np.uint32(0)))
            got = self.b.download(out, np.float32, self.grid * block)
            if not self.expect("shared", got, 0.0):
                return
            for name, stride in (("smem_read", 1), ("smem_read_conflict", 32)):
                def once(it, stride=stride):
                    return self.b.run(k, self.grid, block, (out, np.uint32(it), np.uint32(stride)))
                iters = self.calibrate(once, 16)
                samples = self.timed(k, self.grid, block, [(out, np.uint32(iters),
                                                            np.uint32(stride))])
                loads = float(self.grid) * block * iters * 8
                self.add(Measurement(name, loads, samples,
                                     params={"stride_words": stride, "iters": iters,
                                             "blocks": self.grid, "block": block,
                                             "bytes_per_load": 4},
                                     counts={"bytes": loads * 4}))
        finally:
            self.b.free(out)

    def mixbench(self):
        precs = [p for p, (_, _, _, need) in MIX_PRECISIONS.items() if self.has(need)]
        for p, (_, _, _, need) in MIX_PRECISIONS.items():
            if p not in precs:
                self.skip(f"mixbench_{p}", f"the device has no {need} support")
        # CUDA builds every precision in one module (so prebuilt cubins match)
        vw = int(self.b.compute_vector_width)
        mod = self.b.build("mixbench", mix_extra(self.s.mix_ks, MIX_PRECISIONS
                                                 if self.b.name == "cuda" else precs),
                           defines=vector_defines(vw))
        total = self.s.mix_bytes or self._stream_elems()[0] * 16
        total = min(total, int(0.1 * self.info.global_mem_bytes))
        points = []
        for p in precs:
            dt, es, flop_per_fma, _ = MIX_PRECISIONS[p]
            w = lane_width(dt, vw)  # elements per chain (vector lanes on CPUs)
            threads = total // es // (4 * w) // self.block * self.block
            n = threads * 4 * w
            host = np.ones(n, dtype=np.float16 if dt == "half2" else dt)
            if dt == "half2":
                host = np.ones(2 * n, dtype=np.float16)
            bufs = [self.b.alloc(host.nbytes) for _ in range(self.s.rotate_sets)]
            try:
                for buf in bufs:
                    self.b.upload(buf, host)
                a, c = _arg(dt, 0.5), _arg(dt, 0.5)
                for kk in self.s.mix_ks:
                    samples = self.timed(mod[f"mix_{p}_{kk}"], threads // self.block, self.block,
                                         [(buf, a, c) for buf in bufs])
                    flops = float(n) * kk * flop_per_fma
                    nbytes = float(n) * es * 2
                    s = summarize(samples)
                    points.append({"precision": p, "k": kk, "vector_width": w,
                                   "flop_per_byte": flops / nbytes,
                                   "flops_per_s": flops / s.median,
                                   "bytes_per_s": nbytes / s.median, "flops": flops,
                                   "bytes": nbytes, "summary": s.to_dict(),
                                   "samples_s": samples})
                best = max(q["flops_per_s"] for q in points if q["precision"] == p)
                self.log(f"mixbench {p}: {len(self.s.mix_ks)} points, best {best:.4g} flops_per_s")
            finally:
                for buf in bufs:
                    self.b.free(buf)
        self.sweeps["mixbench"] = points

    def overhead(self):
        k = self.b.build("memory")["empty"]
        out = self.b.alloc(4)
        sentinel = np.uint32(0xFFFFFFFF)
        try:
            block = min(32, self.block)
            # correct first: the work-item whose id is the sentinel stores 1
            self.b.upload(out, np.zeros(1, dtype=np.float32))
            self.b.run(k, 1, block, (out, np.uint32(0)))
            got = float(self.b.download(out, np.float32, 1)[0])
            if not self.expect("overhead", got, 1.0):
                return
            for _ in range(self.s.warmup):
                self.b.back_to_back(k, 1, block, (out, sentinel), self.s.launch_count)
            samples = [self.b.back_to_back(k, 1, block, (out, sentinel), self.s.launch_count)
                       for _ in range(self.s.reps)]
            self.add(Measurement("launch", float(self.s.launch_count), samples,
                                 per_item=True, params={"launches_per_sample":
                                                        self.s.launch_count,
                                                        "blocks": 1, "block": block,
                                                        "timer": TIMER_BACK_TO_BACK}))
            pts = []
            for m in self.s.block_multiples:
                blocks = self.info.compute_units * m
                s = summarize(self.timed(k, blocks, self.block, [(out, sentinel)]))
                pts.append({"blocks": blocks, "time_s": s.median, "summary": s.to_dict()})
            a, slope = linear_fit([q["blocks"] for q in pts], [q["time_s"] for q in pts])
            self.sweeps["block_cost"] = {"points": pts, "intercept_s": a, "per_block_s": slope,
                                         "per_block_per_cu_s": slope * self.info.compute_units,
                                         "block": self.block}
            self.log(f"per-block cost: {slope:.3g} s per block over the device")
        finally:
            self.b.free(out)

    def _flush_l2(self):
        """Write twice the L2 elsewhere: the upload's last lines (up to an L2 of the set, a
        fifth of the H100's 256 MiB) would still be in the L2 and shorten a DRAM chase."""
        n = 2 * self.l2 // 16 // self.block * self.block
        scratch = self.b.alloc(n * 16)
        try:
            self.b.run(self.b.build("memory")["stream_init"], n // self.block, self.block,
                       (scratch, np.float32(0.0)))
        finally:
            self.b.free(scratch)

    def latency(self):
        k = self.b.build("memory")["chase"]
        n_stream, _ = self._stream_elems()
        dram = floor_pow2(max(4 * self.l2, min(n_stream * 16, 256 * 1024**2)))
        levels = {"l1": floor_pow2(self.s.l1_ws_bytes) // 2,
                  "l2": floor_pow2(int(self.l2 * self.s.l2_ws_fraction)),
                  "dram": dram if dram >= 4 * self.l2 else 2 * dram}  # 126 MB L2: 512 MiB
        rng = np.random.default_rng(0)
        pts = []
        out = self.b.alloc(4)
        try:
            for level, nbytes in levels.items():
                words = nbytes // 4
                nodes = rng.permutation(words // 16) * 16  # one node per 64-byte line
                nxt = np.zeros(words, dtype=np.uint32)
                nxt[nodes] = np.roll(nodes, -1)
                reps = min(self.s.reps, 5)
                # a cached level is timed on the path the warm-up loaded; for DRAM every launch
                # starts `steps` further along the cycle, else a path shorter than the L2 (100 000
                # lines = 6.4 MB) would be read from the L2 the warm-up filled
                launches = 1 + reps if level == "dram" else 1
                starts = nodes[(np.arange(launches) * self.s.chase_steps) % len(nodes)]
                buf = self.b.alloc(nxt.nbytes)
                try:
                    self.b.upload(buf, nxt)
                    if level == "dram":
                        self._flush_l2()
                    steps = np.uint32(self.s.chase_steps)
                    # correct first: from the first node the chase ends `steps` nodes on
                    self.b.run(k, 1, 1, (buf, out, steps, np.uint32(nodes[0])))
                    got = int(self.b.download(out, np.uint32, 1)[0])
                    want = int(nodes[self.s.chase_steps % len(nodes)])
                    if not self.expect(f"latency_{level}", got, want, "end node"):
                        continue
                    samples = self.timed(k, 1, 1, [(buf, out, steps, np.uint32(j)) for j in starts],
                                         reps=reps, warmup=1)
                finally:
                    self.b.free(buf)
                m = Measurement(f"latency_{level}", float(self.s.chase_steps), samples,
                                per_item=True,
                                params={"working_set_bytes": nbytes, "line_bytes": 64})
                self.add(m)
                pts.append({"level": level, "working_set_bytes": nbytes, "latency_s": m.value})
        finally:
            self.b.free(out)
        self.sweeps["latency"] = pts


def run_suite(backend, sizes: Sizes = QUICK, only=None, log=None) -> dict:
    """Run the groups in ``only`` (default: all of ``GROUPS``) and return the raw result: device,
    sizes, clocks before and after, every measurement with its samples, and the sweeps."""
    only = list(GROUPS if not only else only)
    bad = [g for g in only if g not in GROUPS]
    if bad:
        raise GpuprojError(f"unknown benchmark group(s) {', '.join(bad)} (known: "
                           f"{', '.join(GROUPS)})")
    r = Runner(backend, sizes, log)
    started = datetime.now(UTC)
    clocks_before = backend.clocks()
    t0 = time.perf_counter()
    for g in GROUPS:
        if g in only:
            getattr(r, g)()
    elapsed = time.perf_counter() - t0
    from .. import __version__

    return {
        "format": "gpuproj-bench", "format_version": FORMAT_VERSION,
        "date": started.strftime("%Y-%m-%d"), "started_utc": started.isoformat(timespec="seconds"),
        "elapsed_s": elapsed,
        "tool": {"gpuproj": __version__, "python": platform.python_version(),
                 "numpy": np.__version__, "backend": backend.name,
                 "runtime": backend.info.runtime_version, "host": platform.node()},
        "device": backend.info.to_dict(), "sizes": sizes.to_dict(), "groups": only,
        "clocks_before": clocks_before, "clocks_after": backend.clocks(),
        "measurements": [m.to_dict() for m in r.measurements],
        "sweeps": r.sweeps, "skipped": r.skipped, "checks": r.checks,
    }
