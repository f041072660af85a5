"""Matching the machine code of one kernel across two GPUs, and carrying execution counts over.

Van Lanker et al. (Euro-Par 2024, Sec. 4.2): the PTX of a kernel is the same for every GPU, so
only the code that implements special functions (division, square root, exp, log, sin, ...)
differs in floating-point work; the blocks that contain them are matched between the source
and the target code, the source's active-thread counts are carried to the matching target
blocks, and the target's FLOPs and operational intensities are recomputed from them, with the
memory traffic kept as measured. Every block is compared, not only those with special
functions: a target compiler also contracts plain arithmetic (``FMUL`` + ``FADD`` into ``FFMA``),
which moves the FP mix and the compute ceiling (docs/sass.md).

Matching (``match_blocks``): regions are paired first (the kernel body with the kernel body, an
internal subroutine with the one of the same name, e.g. ``__cuda_sm20_div_rn_f32_slowpath``,
or, where names are unknown as in ``cuobjdump`` listings, with the most similar one); inside a
region pair, blocks in address order are aligned on their signatures (special functions,
calls, memory operations by space, barriers, how the block ends: what the PTX fixes) with a
longest-matching-subsequence alignment. Target blocks left over take the counts of the
source blocks of the same gap in order, or, where the gap has none, of the block before them
where that one can reach them, else of the next matched source block, and a note says how
many.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from .cfg import CFG, build_cfg
from .counts import Counts, measured_counts, named_trips, static_counts
from .program import Function


@dataclass
class Matching:
    """Target block start -> source block start (None: no counterpart), with the region pairs
    and notes."""

    source: CFG
    target: CFG
    pairs: dict[int, int | None]
    exact: set[int] = field(default_factory=set)      # target blocks aligned on equal signature
    regions: dict[str, str | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def special_blocks(self) -> list[int]:
        """Target blocks that contain special functions or calls, or lie in a subroutine."""
        out = []
        for s, b in self.target.blocks.items():
            if b.region is None:
                continue
            if b.region != "kernel" or any(i.op.category in ("special", "call")
                                           for i in b.instructions):
                out.append(s)
        return sorted(out)


def _tokens(cfg: CFG, region: str) -> Counter:
    c = Counter()
    for b in cfg.region_blocks(region):
        c.update(b.signature())
    return c


def _pair_regions(src: CFG, tgt: CFG) -> dict[str, str | None]:
    out = {}
    left = [r for r in src.regions if r not in tgt.regions]
    for r in tgt.regions:
        if r in src.regions:
            out[r] = r
    for r in tgt.regions:
        if r in out:
            continue
        tt = _tokens(tgt, r)
        best, score = None, 0.0
        for q in left:
            st = _tokens(src, q)
            inter = sum((tt & st).values())
            union = sum((tt | st).values()) or 1
            if inter / union > score:
                best, score = q, inter / union
        out[r] = best
        if best is not None:
            left.remove(best)
    return out


def match_blocks(source: CFG | Function, target: CFG | Function) -> Matching:
    """Align the blocks of the same kernel compiled for two GPUs (see module docstring)."""
    src = source if isinstance(source, CFG) else build_cfg(source)
    tgt = target if isinstance(target, CFG) else build_cfg(target)
    regions = _pair_regions(src, tgt)
    pairs, exact, notes = {}, set(), []
    guessed = 0
    for r_t, r_s in regions.items():
        tb = sorted(tgt.region_blocks(r_t), key=lambda b: b.start)
        if r_s is None:
            for b in tb:
                pairs[b.start] = None
            notes.append(f"{tgt.function.name}: region {r_t} has no counterpart in the source "
                         "code; its blocks are not counted")
            continue
        sb = sorted(src.region_blocks(r_s), key=lambda b: b.start)
        sm = SequenceMatcher(None, [b.signature() for b in sb], [b.signature() for b in tb],
                             autojunk=False)
        last = sb[0].start if sb else None
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag == "equal":
                for a, b in zip(sb[i1:i2], tb[j1:j2]):
                    pairs[b.start] = a.start
                    exact.add(b.start)
                last = sb[i2 - 1].start
            elif tag == "replace":
                n_s, n_t = i2 - i1, j2 - j1
                after = sb[i2].start if i2 < len(sb) else None
                for k, b in enumerate(tb[j1:j2]):
                    a = sb[i1 + min(n_s - 1, k * n_s // n_t)]
                    # a block in fewer loops than its counterpart is no part of that loop's
                    # body (sm_100's 8x and 4x tails after a loop unrolled 16x): it takes
                    # the count of the source block after the gap
                    pairs[b.start] = (after if after is not None
                                      and len(a.loops) > len(b.loops) else a.start)
                guessed += n_t if n_s != n_t else 0
                last = sb[i2 - 1].start
            elif tag == "insert":
                # a block that the one before it can reach (fall-through or jump) takes that
                # one's counterpart; one it cannot (after an EXIT or an unconditional jump)
                # is reached from elsewhere, and takes the next source block: the diverged
                # path of a shuffle after the kernel's last EXIT is not the store before it
                after = sb[i2].start if i2 < len(sb) else last
                # (nor, when it lies in fewer loops than that one's counterpart, is it that
                # loop's body: sm_100's 8x and 4x tails after a loop unrolled 16x are not)
                for k in range(j1, j2):
                    prev = tb[k - 1] if k else None
                    reached = prev is not None and prev.start in tb[k].preds
                    if reached and pairs[prev.start] is not None and (
                            len(src.blocks[pairs[prev.start]].loops) > len(tb[k].loops)):
                        reached = False
                    pairs[tb[k].start] = (pairs[prev.start] if reached
                                          else last if prev is None else after)
                guessed += j2 - j1
            else:   # delete: source blocks without a counterpart
                last = sb[i2 - 1].start
    if guessed:
        notes.append(f"{tgt.function.name}: {guessed} target block(s) without a one-to-one "
                     "counterpart took the counts of the nearest source block")
    return Matching(src, tgt, pairs, exact, regions, notes)


def carry_counts(matching: Matching, source_counts: Counts) -> Counts:
    """Target counts: each target block gets the active threads of its source block. A
    predicated target instruction gets the fraction of active threads whose predicate was true
    at its counterpart in the source block: the k-th predicated instruction of the same opcode
    when both blocks have as many, else the predicated source instruction at the nearest
    relative position in the block (predicate registers are renamed across GPUs, so their
    names are not compared); all active threads when the source block has none."""
    src, tgt = matching.source, matching.target
    per_block, per_insn = {}, {}
    notes = list(matching.notes)
    unknown_pred = 0
    unroll = unroll_factors(matching)
    notes += [f"{tgt.function.name}: the loop at {h:#x} does {1 / r:.3g}x the source loop's "
              f"work per iteration (unrolled otherwise): its body's counts x {r:.3g}"
              for h, r in unroll.items()]
    for s, b in tgt.blocks.items():
        a = matching.pairs.get(s)
        if a is None or b.region is None:
            n = 0.0
        else:
            n = source_counts.per_block.get(a, 0.0)
            if b.loops:
                # a loop unrolled otherwise runs its body another number of times
                n *= unroll.get(min(b.loops, key=lambda h: len(tgt.loops[h])), 1.0)
        per_block[s] = n
        src_pred = []
        if a is not None and source_counts.measured:
            f = src.function
            sins = src.blocks[a].instructions
            for k, i in enumerate(sins):
                if i.predicated:
                    _, t, p = f.counts.get(i.offset, (0.0, 0.0, 0.0))
                    src_pred.append((k / max(len(sins) - 1, 1), i.base, p / t if t else 0.0))
        tins = b.instructions
        tgt_bases = Counter(i.base for i in tins if i.predicated)
        src_bases = Counter(base for _, base, _ in src_pred)
        seen = Counter()
        for k, i in enumerate(tins):
            if not i.predicated or not source_counts.measured:
                per_insn[i.offset] = n
                continue
            same = [r for _, base, r in src_pred if base == i.base]
            if same and len(same) == tgt_bases[i.base] == src_bases[i.base]:
                r = same[seen[i.base]]          # k-th predicated FADD <-> k-th predicated FADD
            elif src_pred:
                pos = k / max(len(tins) - 1, 1)
                r = min(src_pred, key=lambda x: (abs(x[0] - pos), x[1] != i.base))[2]
            else:
                r = 1.0
                unknown_pred += bool(n and i.op.flops)
            seen[i.base] += 1
            per_insn[i.offset] = n * r
    if unknown_pred:
        notes.append(f"{tgt.function.name}: {unknown_pred} predicated FP instruction(s) without "
                     "a source counterpart counted as executed by every active thread")
    return Counts(tgt.function, tgt, per_insn, per_block, source_counts.measured, notes)


def _loop_work(cfg: CFG, h: int) -> int:
    """The PTX-fixed work (``Block.signature`` without how the block ends: loads, stores,
    special functions, calls, ...) of the blocks of loop ``h`` outside its inner loops."""
    body = set(cfg.loops[h])
    for g, inner in cfg.loops.items():
        if g != h and inner < cfg.loops[h]:
            body -= inner
    return sum(1 for s in body for t in cfg.blocks[s].signature() if t[0] != "end")


def _source_loop(matching: Matching, h: int) -> int | None:
    """The innermost source loop that holds the block target loop ``h``'s header is matched
    with."""
    src = matching.source
    a = matching.pairs.get(h)
    around = [sh for sh, body in src.loops.items() if a in body]
    return min(around, key=lambda sh: len(src.loops[sh]), default=None)


def unroll_factors(matching: Matching) -> dict[int, float]:
    """Target loop header -> source iterations per target iteration, where the two compilers
    unrolled a loop by other factors (CUDA 13: 4x up to sm_90, 16x on sm_100): the ratio of
    the PTX-fixed work (``_loop_work``) of the source loop to that of the target loop. A
    count carried into the body of a loop unrolled 4x more runs it 4x too often."""
    out = {}
    for h in matching.target.loops:
        sh = _source_loop(matching, h)
        if sh is None:
            continue
        ns, nt = _loop_work(matching.source, sh), _loop_work(matching.target, h)
        if ns and nt and ns != nt:
            out[h] = ns / nt
    return out


def carry_trips(matching: Matching, given: dict[int, float]) -> dict[int, float]:
    """Trip counts of the target's loops (header offset -> trips) from those ``given`` for the
    source's loops: each target loop takes the trips of the innermost source loop that holds
    the block its header is matched with, times the ratio of their unrolling
    (``unroll_factors``). Loops not reached that way are left out (one trip, noted by
    ``static_counts``)."""
    unroll = unroll_factors(matching)
    out = {}
    for h in matching.target.loops:
        inner = _source_loop(matching, h)
        if inner in given:
            out[h] = given[inner] * unroll.get(h, 1.0)
    return out


def estimate(source: Function, target: Function, *, trips=None,
             slowpath_calls: float = 0.0) -> tuple[Counts, Counts, Matching | None]:
    """(source counts, target counts, matching) for one kernel: measured source counts carried
    over where the source function has them, static counts of both codes otherwise. ``trips``
    as ``static_counts`` takes it, naming the source's loops; the target's loops take theirs
    through the block matching (``carry_trips``): the two codes' loops sit at other offsets."""
    if source.counts:
        s = measured_counts(source)
        m = match_blocks(s.cfg, build_cfg(target))
        return s, carry_counts(m, s), m
    s = static_counts(source, trips, slowpath_calls)
    tgt = build_cfg(target)
    notes = []
    if isinstance(trips, dict) or (isinstance(trips, (int, float)) and s.cfg.loops):
        # one number is the trips of each source loop, carried as named ones are: a target
        # loop unrolled otherwise runs its body another number of times (sm_100's 16x loop
        # 1/4 as often as sm_90's 4x)
        given = (named_trips(s.cfg, trips) if isinstance(trips, dict)
                 else dict.fromkeys(s.cfg.loops, float(trips)))
        m = match_blocks(s.cfg, tgt)
        carried = carry_trips(m, given)
        notes = [f"{target.name}: loop at {h:#x} runs {carried[h]:g} trips for the source "
                 f"loop's {carried[h] / r:g} (unrolled otherwise: its work per iteration x "
                 f"{1 / r:.3g})" for h, r in unroll_factors(m).items() if h in carried]
        if isinstance(trips, dict):
            trips = carried
        elif notes:  # loops the matching does not reach keep the number
            trips = {h: carried.get(h, float(trips)) for h in tgt.loops}
    t = static_counts(target, trips, slowpath_calls, cfg=tgt)
    t.notes += notes
    return s, t, None
