"""What each SASS opcode does: category, precision, arithmetic kind, memory space and FLOPs.

The classification follows the instruction-set tables of NVIDIA's CUDA Binary Utilities
documentation (Turing to Blackwell) and the way Nsight Compute counts floating-point work:
an FMA is 2 FLOPs, ADD and MUL 1, a packed instruction (``HFMA2``, ``FFMA2``) works on 2 lanes,
so ``HFMA2`` = 4 FLOPs. A special-function instruction (``MUFU``) counts 1 FP32 operation, as
in ``profiles.schema`` (``fp32_special_thread_inst``).

Unknown opcodes never raise: they warn once per opcode and are counted as ``other``.

>>> classify("FFMA.RM").flops
2
>>> classify("HFMA2.MMA", "R3,-RZ,RZ,0,2.38e-07").category    # a constant move, not FP16 work
'move'
>>> classify("HADD2.F32", "R0, -RZ, R2.H0_H0").category      # __half2float, not FP16 work
'convert'
>>> c = classify("HFMA2", "R0,R2,R3,R4"); (c.precision, c.kind, c.lanes, c.flops)
('fp16', 'fma', 2, 4)
>>> classify("LDG.E.128").column
'ld.global'
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache

from ..errors import GpuprojWarning


@dataclass(frozen=True)
class OpClass:
    """Small immutable descriptor of what one SASS instruction does (per thread).

    ``category``: fp, special, convert, int, move, warp, memory, atomic, barrier, control,
    tensor, other. ``precision``: fp16/fp32/fp64 for fp and special. ``kind``: fma/add/mul/
    other for fp; the function (rcp, sqrt, ...) for special; ``ld``/``st`` for memory.
    ``space``: global, shared, local, const, generic, texture for memory and atomics.
    ``lanes``: values per thread (2 for packed ``HFMA2``/``FFMA2``). ``flops``: floating-point
    operations per executing thread.
    """

    category: str
    precision: str | None = None
    kind: str | None = None
    space: str | None = None
    lanes: int = 1
    flops: int = 0

    @property
    def column(self) -> str:
        """The instruction-mix column this class is counted in (``fp32.fma``, ``ld.shared``)."""
        if self.category in ("fp", "special"):
            return f"{self.precision}.{self.kind if self.category == 'fp' else 'special'}"
        if self.category == "memory":
            return f"{self.kind}.{self.space}"
        if self.category == "atomic":
            return f"atomic.{self.space}"
        return self.category


# Column order used in reports: FP work first, then the rest of the mix.
MIX_COLUMNS = (
    "fp32.fma", "fp32.add", "fp32.mul", "fp32.special", "fp32.other",
    "fp64.fma", "fp64.add", "fp64.mul", "fp64.special", "fp64.other",
    "fp16.fma", "fp16.add", "fp16.mul", "fp16.other",
    "convert", "int", "move", "warp",
    "ld.global", "st.global", "ld.shared", "st.shared", "ld.local", "st.local", "ld.const",
    "ld.generic", "st.generic", "ld.texture", "st.texture", "copy.global_shared",
    "atomic.global", "atomic.shared", "atomic.generic",
    "barrier", "control", "call", "tensor", "other",
)

_FP = {
    # opcode: (precision, kind, lanes)
    "FFMA": ("fp32", "fma", 1), "FADD": ("fp32", "add", 1), "FMUL": ("fp32", "mul", 1),
    "FFMA32I": ("fp32", "fma", 1), "FADD32I": ("fp32", "add", 1), "FMUL32I": ("fp32", "mul", 1),
    "FFMA2": ("fp32", "fma", 2), "FADD2": ("fp32", "add", 2), "FMUL2": ("fp32", "mul", 2),
    "FSWZADD": ("fp32", "add", 1),
    "DFMA": ("fp64", "fma", 1), "DADD": ("fp64", "add", 1), "DMUL": ("fp64", "mul", 1),
    "HFMA2": ("fp16", "fma", 2), "HADD2": ("fp16", "add", 2), "HMUL2": ("fp16", "mul", 2),
    "HFMA2_32I": ("fp16", "fma", 2), "HADD2_32I": ("fp16", "add", 2),
    "HMUL2_32I": ("fp16", "mul", 2),
}
_FP_OTHER = {
    "FSETP": "fp32", "FSET": "fp32", "FSEL": "fp32", "FMNMX": "fp32", "FCHK": "fp32",
    "FCMP": "fp32", "FMNMX3": "fp32",
    "DSETP": "fp64", "DSET": "fp64", "DMNMX": "fp64",
    "HSETP2": "fp16", "HSET2": "fp16", "HMNMX2": "fp16",
}
_CONVERT = {"F2F", "F2I", "I2F", "I2I", "F2FP", "I2FP", "F2IP", "FRND", "DRND", "UF2FP", "UI2FP",
            "UF2F", "UF2I", "UI2F"}
_INT = {
    "IMAD", "IADD3", "IADD", "IADD32I", "IMUL", "IMUL32I", "LOP3", "LOP", "LOP32I", "SHF", "SHL",
    "SHR", "ISETP", "ICMP", "IMNMX", "LEA", "POPC", "FLO", "BREV", "BMSK", "SGXT", "PRMT",
    "SEL", "IABS", "IDP", "IDP4A", "XMAD", "VIADD", "VIMNMX", "VIMNMX3", "VIADDMNMX", "ISCADD",
    "VABSDIFF", "VABSDIFF4", "PLOP3", "PSETP", "P2R", "R2P", "BITEXTRACT", "IMNMX3", "IADD2",
    "UIADD3", "UIMAD", "ULOP3", "ULOP", "ULOP32I", "USHF", "USHL", "USHR", "UISETP", "ULEA",
    "USEL", "UPRMT", "UFLO", "UPOPC", "UBREV", "USGXT", "UPLOP3", "UPSETP", "UBMSK", "UP2UR",
    "UR2UP", "UIMNMX", "UVIADD", "UVIMNMX", "UIABS", "USETMAXREG", "UFMNMX", "UFSETP", "UFSEL",
}
_MOVE = {"MOV", "MOV32I", "UMOV", "S2R", "S2UR", "CS2R", "R2UR", "R2B", "B2R", "GETLMEMBASE",
         "SETLMEMBASE", "PMTRIG", "LEPC", "UGETNEXTWORKID", "REDUX_MOV"}
_WARP = {"SHFL", "VOTE", "VOTEU", "MATCH", "REDUX", "ELECT", "CREDUX", "UREDUX"}
_MEMORY = {
    # opcode: (kind, space)
    "LDG": ("ld", "global"), "STG": ("st", "global"), "LD": ("ld", "generic"),
    "ST": ("st", "generic"), "LDS": ("ld", "shared"), "STS": ("st", "shared"),
    "LDSM": ("ld", "shared"), "STSM": ("st", "shared"), "LDL": ("ld", "local"),
    "STL": ("st", "local"), "LDC": ("ld", "const"), "ULDC": ("ld", "const"),
    "LDCU": ("ld", "const"), "TEX": ("ld", "texture"), "TLD": ("ld", "texture"),
    "TLD4": ("ld", "texture"), "TMML": ("ld", "texture"), "TXD": ("ld", "texture"),
    "TXQ": ("ld", "texture"), "SULD": ("ld", "texture"), "SUST": ("st", "texture"),
    "LDGSTS": ("copy", "global_shared"), "UBLKCP": ("copy", "global_shared"),
    "UTMALDG": ("copy", "global_shared"), "UTMASTG": ("copy", "global_shared"),
    "UTMAPF": ("copy", "global_shared"), "UTMAREDG": ("copy", "global_shared"),
    "UBLKRED": ("copy", "global_shared"), "UBLKPF": ("copy", "global_shared"),
    "LDTM": ("ld", "shared"), "STTM": ("st", "shared"),
}
_ATOMIC = {"ATOM": "generic", "ATOMG": "global", "ATOMS": "shared", "RED": "global",
           "REDG": "global", "REDAS": "shared", "ATOMAS": "shared", "SURED": "global",
           "SUATOM": "global"}
_BARRIER = {"BAR", "MEMBAR", "DEPBAR", "ERRBAR", "CCTL", "CCTLL", "CCTLT", "FENCE", "SYNCS",
            "ARRIVES", "WARPSYNC", "LDGDEPBAR", "UCGABAR_ARV", "UCGABAR_WAIT", "CGAERRBAR",
            "UTMACCTL", "UTMACMDFLUSH", "MEMSET", "WARPGROUP", "WARPGROUPSET", "ACQBULK",
            "UCGABAR", "UTCBAR", "FENCE_VIEW"}
_CONTROL = {"BRA", "BRX", "BRXU", "JMP", "JMX", "JMXU", "EXIT", "RET", "BPT", "BREAK", "KILL",
            "NOP", "YIELD", "BMOV", "BSSY", "BSYNC", "CALL", "PREEXIT", "ENDCOLLECTIVE",
            "NANOSLEEP", "NANOTRAP", "RTT", "WARPSYNC", "ACQSHMINIT", "RPCMOV", "BCLEAR"}
_TENSOR = {"HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "OMMA", "QMMA",
           "UTCHMMA", "UTCIMMA", "UTCQMMA", "UTCOMMA", "UTCBMMA", "UTCMMA", "UTCCP", "UTCSHIFT"}


def _by_name(*groups) -> dict[str, str]:
    """Opcode -> category; an opcode in two groups (WARPSYNC: barrier and control, CALL: call
    and control) takes the first."""
    table = {}
    for category, names in groups:
        for name in names:
            table.setdefault(name, category)
    return table


# the categories an opcode's name alone gives (no precision, kind or space)
_CATEGORY = _by_name(("convert", _CONVERT), ("int", _INT), ("move", _MOVE), ("warp", _WARP),
                     ("call", {"CALL"}), ("barrier", _BARRIER), ("control", _CONTROL),
                     ("tensor", _TENSOR))

_ZERO = re.compile(r"^-?\|?RZ\|?$")
_warned: set[str] = set()


def _is_const_move(operands: str) -> bool:
    """``HFMA2 Rd, -RZ, RZ, a, b`` computes 0*0 + (a, b): nvcc's idiom for loading a constant
    on the FMA pipe; it does no floating-point work the program asked for."""
    ops = [o.strip() for o in (operands or "").split(",")]
    return len(ops) >= 3 and bool(_ZERO.match(ops[1])) and bool(_ZERO.match(ops[2]))


def _is_widening(operands: str) -> bool:
    """``HADD2.F32 Rd, -RZ, Rx.H0_H0`` (sm_75: ``Rd, Rx.H0_H0, -RZ.H0_H0``) adds zero to one
    half of Rx into an FP32 result: nvcc's idiom for ``__half2float``, a conversion and no
    floating-point work the program asked for (as ``F2F`` would be)."""
    ops = [o.strip() for o in (operands or "").split(",")]
    # the operand without its half selector (.H0_H0, .H1_H1)
    return len(ops) == 3 and any(_ZERO.match(o.split(".")[0]) for o in ops[1:])


@lru_cache(maxsize=4096)
def _classify(opcode: str, idiom: bool) -> OpClass:
    """``idiom``: the operands make the instruction one of nvcc's idioms that do no FP work
    (``_is_const_move``, ``_is_widening``)."""
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    if base in _FP:
        precision, kind, lanes = _FP[base]
        if idiom:
            return OpClass("move" if base.startswith("HFMA2") else "convert")
        flops = lanes * (2 if kind == "fma" else 1)
        return OpClass("fp", precision, kind, lanes=lanes, flops=flops)
    if base == "MUFU":
        fn = (mods[0] if mods else "unknown").lower()
        if fn.endswith("64h"):
            # RCP64H/RSQ64H seed a DFMA Newton iteration; Nsight Compute counts no FLOP for it.
            return OpClass("special", "fp64", fn)
        return OpClass("special", "fp32", fn, flops=1)
    if base in _FP_OTHER:
        return OpClass("fp", _FP_OTHER[base], "other")
    if base in _MEMORY:
        kind, space = _MEMORY[base]
        return OpClass("memory", kind=kind, space=space)
    if base in _ATOMIC:
        return OpClass("atomic", space=_ATOMIC[base])
    if base in _CATEGORY:
        return OpClass(_CATEGORY[base])
    if base not in _warned:
        _warned.add(base)
        # a GpuprojWarning: the CLI prints it as one line, without Python's source line
        warnings.warn(GpuprojWarning(f"unknown SASS opcode '{base}' counted as 'other'"),
                      stacklevel=3)
    return OpClass("other")


def classify(opcode: str, operands: str = "") -> OpClass:
    """The ``OpClass`` of one instruction from its opcode with modifiers (``FFMA.RZ``) and, for
    the few opcodes whose meaning depends on them, its operands (``HFMA2`` constant moves,
    ``HADD2.F32`` conversions)."""
    opcode = opcode.strip().upper()
    parts = opcode.split(".")
    if parts[0].startswith("HFMA2"):
        return _classify(opcode, _is_const_move(operands))
    if parts[0] == "HADD2" and "F32" in parts[1:]:
        return _classify(opcode, _is_widening(operands))
    return _classify(opcode, False)
