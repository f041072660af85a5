"""Basic blocks, control-flow edges, regions (kernel body, internal subroutines) and loops.

A block starts at the kernel entry, at a subroutine entry, at a branch target, at a
``BSSY`` reconvergence point, and after any instruction that transfers control (branch,
``EXIT``, ``RET``, ``CALL``). Edges: an unconditional ``BRA`` goes to its target only, a
conditional one (``Instruction.conditional``: predicated, ``BRA.DIV``, ...) to its target and
the next block; ``EXIT`` and ``RET`` end the path unless predicated; ``CALL`` returns to the
next block (the call itself is recorded in ``calls``).
Loops are found from back-edges of a depth-first walk (natural loops); a loop is named by the
offset of its header block.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .program import Function, Instruction, canonical_callee

_ENDS = {"BRA", "BRX", "BRXU", "JMP", "JMX", "JMXU", "EXIT", "RET", "CALL", "KILL"}
_NO_FALL = {"BRA", "BRX", "BRXU", "JMP", "JMX", "JMXU", "EXIT", "RET", "KILL"}


@dataclass
class Block:
    """A basic block: ``start`` offset, instructions, successors (block starts), the region
    (``kernel`` or a subroutine's canonical name) and the loops (header offsets) around it."""

    start: int
    instructions: list[Instruction]
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    region: str | None = None
    loops: tuple[int, ...] = ()

    @property
    def end(self) -> int:
        return self.instructions[-1].offset

    def mix(self) -> Counter:
        """Instruction-mix column -> instructions in this block (static, per execution)."""
        return Counter(i.op.column for i in self.instructions)

    def signature(self) -> tuple:
        """What stays the same for the same PTX on any GPU: special functions, calls, memory
        operations by space, barriers and how the block ends. Used to match blocks."""
        sig = []
        for i in self.instructions:
            c = i.op
            if c.category == "special":
                sig.append(("mufu", c.kind))
            elif c.category == "call":
                sig.append(("call", canonical_callee(i.callee) or "?"))
            elif c.category in ("memory", "atomic") and c.space != "const":
                # constant-bank loads (kernel parameters) differ between GPUs: not compared
                sig.append((c.column,))
            elif c.category == "barrier" and i.base == "BAR":
                sig.append(("bar",))
            elif c.category == "tensor":
                sig.append(("tensor",))
        last = self.instructions[-1]
        end = last.base if last.base in _ENDS else "fall"
        sig.append(("end", end, last.conditional))
        return tuple(sig)


@dataclass
class CFG:
    """The control-flow graph of one function. ``regions`` maps a region name to its entry;
    ``loops`` maps a loop header to its body (block starts) and its back-edge sources."""

    function: Function
    blocks: dict[int, Block]
    regions: dict[str, int]
    loops: dict[int, set[int]]

    def region_blocks(self, region: str) -> list[Block]:
        return [b for b in self.blocks.values() if b.region == region]


def build_cfg(f: Function) -> CFG:
    insns = f.instructions
    if not insns:
        return CFG(f, {}, {}, {})
    offsets = [i.offset for i in insns]
    index = {o: k for k, o in enumerate(offsets)}
    leaders = {offsets[0]}
    sub_entries = {}
    for name, off in f.symbols.items():
        if off in index:
            sub_entries[off] = canonical_callee(name)
    for i in insns:
        if i.call_offset is not None and i.call_offset in index:
            sub_entries.setdefault(i.call_offset, canonical_callee(i.callee) if i.callee else None)
    leaders |= set(sub_entries)
    for k, i in enumerate(insns):
        if i.target is not None and i.target in index:
            leaders.add(i.target)
        if i.base == "BSSY":
            # the reconvergence point printed as BSSY's second operand
            m = re.findall(r"0x([0-9a-fA-F]+)", i.operands)
            if m and int(m[-1], 16) in index:
                leaders.add(int(m[-1], 16))
        if i.base in _ENDS and k + 1 < len(insns):
            leaders.add(offsets[k + 1])
    starts = sorted(leaders)
    blocks = {}
    for a, s in enumerate(starts):
        lo = index[s]
        hi = index[starts[a + 1]] if a + 1 < len(starts) else len(insns)
        blocks[s] = Block(s, insns[lo:hi])
    nxt = {s: (starts[a + 1] if a + 1 < len(starts) else None) for a, s in enumerate(starts)}
    for s, b in blocks.items():
        last = b.instructions[-1]
        succ = []
        if last.target is not None and last.target in blocks and last.base in ("BRA", "JMP"):
            succ.append(last.target)
        falls = not (last.base in _NO_FALL and not last.conditional)
        if last.base == "BRA" and last.target == last.offset and not last.conditional:
            falls = False
        if falls and nxt[s] is not None:
            succ.append(nxt[s])
        b.succs = list(dict.fromkeys(succ))
        if last.base == "CALL" and last.call_offset in blocks:
            b.calls.append(last.call_offset)
    for s, b in blocks.items():
        for t in b.succs:
            blocks[t].preds.append(s)
    # regions: the kernel body from the entry, then each subroutine from its entry
    regions = {"kernel": starts[0]}
    unnamed = 0
    for off in sorted(sub_entries):
        name = sub_entries[off]
        if not name:
            unnamed += 1
            name = f"subroutine#{unnamed}"
        regions[name] = off
    for name, entry in regions.items():
        stack = [entry]
        while stack:
            s = stack.pop()
            if blocks[s].region is not None:
                continue
            blocks[s].region = name
            stack.extend(blocks[s].succs)
    loops = _loops(blocks, regions)
    for h, body in loops.items():
        for s in body:
            blocks[s].loops = tuple(sorted(set(blocks[s].loops) | {h}))
    return CFG(f, blocks, regions, loops)


def _loops(blocks, regions) -> dict[int, set[int]]:
    """Natural loops: for each back-edge t -> h found by DFS (h on the DFS stack), the blocks
    that reach t without passing through h."""
    loops: dict[int, set[int]] = {}
    for entry in regions.values():
        state = {}
        stack = [(entry, iter(blocks[entry].succs))]
        state[entry] = 1
        while stack:
            s, it = stack[-1]
            for t in it:
                if state.get(t) == 1:
                    body = loops.setdefault(t, {t})
                    work = [s]
                    while work:
                        x = work.pop()
                        if x not in body:
                            body.add(x)
                            work.extend(blocks[x].preds)
                elif t not in state:
                    state[t] = 1
                    stack.append((t, iter(blocks[t].succs)))
                    break
            else:
                state[s] = 2
                stack.pop()
    return loops
