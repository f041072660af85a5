"""Execution counts of blocks and instructions, and the instruction mix and FLOPs they give.

Two sources of counts:

- measured: the per-instruction counters of an Nsight Compute source page (``Function.counts``,
  see ``docs/sass.md``): warp-level executions, active threads and predicated-on threads;
- static: every block of the kernel body runs once per thread, times the trip count of each
  loop around it (supplied, or assumed 1), internal slow-path subroutines run on a fraction
  ``slowpath_calls`` of their calls (assumed 0), and predicated instructions run on every
  thread. What was assumed is returned in ``notes``.

``static_counts`` and ``measured_counts`` return ``Counts``, whose ``per_insn`` holds, per
instruction offset, the number of threads that executed it with its predicate true (static: per
thread of the launch; measured: over the whole launch).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..errors import InputError
from .cfg import CFG, build_cfg
from .program import Function

CANONICAL = (
    "fp64_fma_thread_inst", "fp64_add_thread_inst", "fp64_mul_thread_inst",
    "fp32_fma_thread_inst", "fp32_add_thread_inst", "fp32_mul_thread_inst",
    "fp32_special_thread_inst",
    "fp16_fma_thread_inst", "fp16_add_thread_inst", "fp16_mul_thread_inst",
    "fp64_flops", "fp32_flops", "fp16_flops", "flops",
)


@dataclass
class Counts:
    """Per-instruction thread executions (predicate true) of one function, with notes."""

    function: Function
    cfg: CFG
    per_insn: dict[int, float]
    per_block: dict[int, float]          # executions of each block (threads, or per thread)
    measured: bool
    notes: list[str] = field(default_factory=list)

    def mix(self) -> Counter:
        """Instruction-mix column -> thread instructions executed."""
        out = Counter()
        for i in self.function.instructions:
            n = self.per_insn.get(i.offset, 0.0)
            if n:
                out[i.op.column] += n
        return out

    def canonical(self) -> dict[str, float]:
        """The profile-schema FP columns (thread instructions, FLOPs) these counts give."""
        return canonical_counts((i.op, self.per_insn.get(i.offset, 0.0))
                                for i in self.function.instructions)


def canonical_counts(pairs) -> dict[str, float]:
    """Profile-schema columns from (OpClass, thread executions) pairs: packed instructions
    count once per lane (``HFMA2`` = 2 FP16 FMA), FLOPs = 2 FMA + ADD + MUL (+ FP32 special).

    >>> from gpuproj.sass.opcodes import classify
    >>> c = canonical_counts([(classify("FFMA"), 10), (classify("MUFU.RCP"), 10)])
    >>> c["fp32_fma_thread_inst"], c["fp32_special_thread_inst"], c["fp32_flops"]
    (10.0, 10.0, 30.0)
    """
    out = dict.fromkeys(CANONICAL, 0.0)
    for op, n in pairs:
        if not n:
            continue
        if op.category == "fp" and op.kind in ("fma", "add", "mul"):
            out[f"{op.precision}_{op.kind}_thread_inst"] += op.lanes * n
            out[f"{op.precision}_flops"] += op.flops * n
        elif op.category == "special" and op.precision == "fp32":
            out["fp32_special_thread_inst"] += n
            out["fp32_flops"] += op.flops * n
    out["flops"] = out["fp64_flops"] + out["fp32_flops"] + out["fp16_flops"]
    return out


def named_trips(cfg: CFG, trips: dict) -> dict[int, float]:
    """Header offset -> trip count of the loops of ``cfg`` that ``trips`` names by loop number
    (0, 1, ... in the order of the headers' offsets) or by header offset (which wins where
    both name one loop). A key that names no loop is an ``InputError``: a header offset read
    off another listing (each architecture puts its loops elsewhere) left the loop at one trip,
    said only in a note."""
    headers = sorted(cfg.loops)
    f = cfg.function
    out = {}
    # header offsets last, so that they win
    for key, n in sorted(trips.items(), key=lambda kv: kv[0] in cfg.loops):
        if key in cfg.loops:
            out[key] = float(n)
        elif isinstance(key, int) and 0 <= key < len(headers):
            out[headers[key]] = float(n)
        else:
            loops = ", ".join(f"{k} at {h:#x}" for k, h in enumerate(headers)) or "none"
            # a number or an offset: both ways
            shown = f"{key} ({key:#x})" if isinstance(key, int) else repr(key)
            arch = f" (sm_{f.arch})" if f.arch else ""
            raise InputError(f"{f.name}{arch}: trips names loop {shown}, which is no loop "
                             f"number or loop header offset of this code (its loops: {loops})")
    return out


def static_counts(f: Function, trips=None, slowpath_calls: float = 0.0,
                  cfg: CFG | None = None) -> Counts:
    """Counts per thread from the code alone.

    ``trips``: trip count of every loop (a number), or a mapping from loop number or header
    offset to trip count (``named_trips``); loops not named run once. ``slowpath_calls``:
    fraction of calls to internal subroutines (nvcc's slow paths of division, sqrt, ...) that
    enter them.
    """
    cfg = cfg or build_cfg(f)
    notes = []
    headers = sorted(cfg.loops)
    given = named_trips(cfg, trips) if isinstance(trips, dict) else {}
    trip = {}
    for k, h in enumerate(headers):
        if isinstance(trips, (int, float)):
            trip[h] = float(trips)
        elif h in given:
            trip[h] = given[h]
        else:
            trip[h] = 1.0
            notes.append(f"{f.name}: loop {k} (header at {h:#x}) trip count assumed 1")
    if isinstance(trips, (int, float)) and headers:
        notes.append(f"{f.name}: every loop trip count set to {trips:g}")
    per_block = {}
    for s, b in cfg.blocks.items():
        if b.region != "kernel":
            continue
        n = 1.0
        for h in b.loops:
            n *= trip[h]
        per_block[s] = n
    # subroutines: entered by their call sites; inside, loops multiply again
    for name, entry in cfg.regions.items():
        if name == "kernel":
            continue
        calls = sum(per_block.get(s, 0.0) for s, b in cfg.blocks.items() if entry in b.calls)
        enter = calls * slowpath_calls
        for s, b in cfg.blocks.items():
            if b.region == name:
                n = enter
                for h in b.loops:
                    n *= trip[h]
                per_block[s] = n
        if calls:
            notes.append(f"{f.name}: subroutine {name} entered on {slowpath_calls:g} of its "
                         "calls (assumed)")
    per_insn = {}
    npred = 0
    for s, b in cfg.blocks.items():
        n = per_block.get(s, 0.0)
        for i in b.instructions:
            per_insn[i.offset] = n
            npred += bool(n and i.predicated and i.op.flops)
    if npred:
        notes.append(f"{f.name}: {npred} predicated FP instruction(s) counted as executed by "
                     "every thread")
    return Counts(f, cfg, per_insn, per_block, False, notes)


def measured_counts(f: Function, cfg: CFG | None = None) -> Counts:
    """Counts from an Nsight Compute source page: per instruction, the predicated-on thread
    instructions executed; per block, the active threads (thread instructions executed)."""
    if not f.counts:
        raise ValueError(f"{f.name} has no per-instruction counts")
    cfg = cfg or build_cfg(f)
    per_insn = {off: c[2] for off, c in f.counts.items()}
    per_block = {s: max((f.counts.get(i.offset, (0, 0, 0))[1] for i in b.instructions),
                        default=0.0) for s, b in cfg.blocks.items()}
    return Counts(f, cfg, per_insn, per_block, True, [])
