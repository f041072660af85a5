"""The parsed machine code: ``Program`` -> ``Function`` (one per kernel) -> ``Instruction``.

Offsets are byte offsets from the start of the kernel's ``.text`` section, as nvdisasm and
cuobjdump print them (``/*01a0*/``). Never-executed filler (``@!PT ...``) is dropped when
parsing, so instruction offsets may have gaps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .opcodes import OpClass, classify

_PRED_OPERAND = re.compile(r"^!?U?P(\d+)\s*,|^!U?PT\s*,")
_INTERNAL = re.compile(r"^\$?__internal_\d+_\$")
# branch modifiers that make a branch depend on whether the warp has diverged
_CONVERGENCE = {"DIV", "CONV"}


def canonical_callee(name: str | None) -> str | None:
    """A call target's name without nvcc's per-file numbering, so that
    ``$__internal_0_$__cuda_sm20_div_rn_f32_slowpath`` on one GPU matches
    ``$__internal_3_$__cuda_sm20_div_rn_f32_slowpath`` on another.

    >>> canonical_callee("$__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath")
    '__cuda_sm20_sqrt_rn_f32_slowpath'
    """
    if name is None:
        return None
    return _INTERNAL.sub("", name)


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction. ``predicate`` is '' or '@P0', '@!P1', ...; ``opcode`` keeps its
    modifiers (``FFMA.RZ``); ``target`` is the branch target offset (BRA, conditional or
    not), ``callee`` the called subroutine's symbol and ``call_offset`` its offset when known."""

    offset: int
    predicate: str
    opcode: str
    operands: str = ""
    target: int | None = None
    callee: str | None = None
    call_offset: int | None = None

    @property
    def base(self) -> str:
        return self.opcode.split(".")[0]

    @property
    def op(self) -> OpClass:
        return classify(self.opcode, self.operands)

    @property
    def predicated(self) -> bool:
        """Executed only by the threads whose predicate is true (``@P0``, ``@!P1``)."""
        return bool(self.predicate) and self.predicate not in ("@PT", "@UPT")

    @property
    def conditional(self) -> bool:
        """May or may not take effect: predicated, or a branch on a condition: a predicate
        operand (``BRA.U !UP0, target``, ``@P0 BRA P1, target``), any operand before a
        ``BRA``'s target (``BRA.DIV UR4, target``), or the warp's convergence
        (``BRA.DIV``/``BRA.CONV``, taken only where the warp has diverged or not; sm_75 prints
        ``BRA.DIV target``). Read as unconditional, the code after such a branch (the
        converged warp's fast path of a ``__shfl_sync``) was reached by no edge."""
        if self.predicated:
            return True
        if self.base not in ("BRA", "JMP", "BRX", "JMX"):
            return False
        return (bool(_CONVERGENCE & set(self.opcode.split(".")[1:]))
                or bool(_PRED_OPERAND.match(self.operands))
                or (self.base == "BRA" and "," in self.operands))

    def text(self) -> str:
        p = f"{self.predicate} " if self.predicate else ""
        return f"{p}{self.opcode} {self.operands}".strip()


@dataclass
class Function:
    """One kernel's code section. ``symbols`` maps internal subroutine names to their offsets;
    ``counts`` (when read from an Nsight Compute source page) maps an instruction offset to
    ``(warp_inst, thread_inst, pred_on_thread_inst)`` executed over the profiled launch."""

    name: str
    instructions: list[Instruction]
    arch: int | None = None
    symbols: dict[str, int] = field(default_factory=dict)
    counts: dict[int, tuple[float, float, float]] | None = None

    def at(self) -> dict[int, Instruction]:
        return {i.offset: i for i in self.instructions}


@dataclass
class Program:
    """All kernels of one binary for one architecture (``arch`` = 80 for sm_80), with where
    they came from (``origin``: a path, ``fmt``: nvdisasm-text, nvdisasm-json, cuobjdump-text,
    ncu-source-csv) and what the parser had to assume (``notes``)."""

    arch: int | None
    functions: dict[str, Function]
    origin: str = ""
    fmt: str = ""
    notes: list[str] = field(default_factory=list)

    def __getitem__(self, name: str) -> Function:
        return self.functions[name]

    def __iter__(self):
        return iter(self.functions.values())

    def __repr__(self):
        a = f"sm_{self.arch}" if self.arch else "sm_?"
        return f"Program({a}, {len(self.functions)} functions, {self.fmt}, {self.origin!r})"
