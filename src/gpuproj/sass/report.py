"""Side-by-side instruction mix of each kernel per architecture, and the blocks that differ.

The mix is the static count per thread (every block of the kernel body once, loops once,
nvcc's slow-path subroutines not entered): what one thread executes on the common path.
"""

from __future__ import annotations

import warnings
from collections import Counter

from ..errors import InputWarning
from ..profiles.table import kernel_pattern
from .cfg import build_cfg
from .compare import match_blocks
from .counts import static_counts
from .opcodes import MIX_COLUMNS
from .program import Program

# What the PTX does not fix and the comparison reports: floating-point work and memory access.
_REPORTED = tuple(c for c in MIX_COLUMNS if c.startswith(("fp", "ld.", "st.", "atomic", "copy"))
                  and c != "ld.const")


def _block_mix(b) -> Counter:
    return Counter({k: v for k, v in b.mix().items() if k in _REPORTED})


def arch_label(arch) -> str:
    """'sm_80' for architecture 80; a label (``load_sass_archs``' 'sm_90a', or 'input2' for an
    input without an architecture) as it is."""
    from .tools import arch_name

    return arch_name(arch) if isinstance(arch, int) else str(arch)


def diff_programs(programs: dict[int | str, Program], kernel_regex: str | None = None) -> dict:
    """``{kernel: {"archs", "mix": {col: {arch: n}}, "flops_per_thread": {arch: {...}},
    "instructions": {arch: n}, "blocks": [...], "notes": [...]}}`` for every kernel present in
    all ``programs`` (arch or label -> Program), each arch as its ``arch_label``. ``blocks``
    lists, for each architecture after the first, the blocks whose FP or memory mix differs
    from their counterpart in the first (``ref_block`` None: the block lies in a region, such
    as a subroutine, that the first architecture's code lacks)."""
    from .tools import demangle

    programs = {arch_label(a): p for a, p in programs.items()}
    archs = list(programs)
    every = list(dict.fromkeys(n for p in programs.values() for n in p.functions))
    # C++ kernels as they are declared (scale<float>), where c++filt is installed
    declared = demangle(every)
    if kernel_regex:
        pat = kernel_pattern(kernel_regex)
        every = [n for n in every if pat.search(n) or pat.search(declared[n])]
    names = [n for n in every if all(n in programs[a].functions for a in archs)]
    lacking = {n: [a for a in archs if n not in programs[a].functions]
               for n in every if n not in names}
    if lacking:  # left out, and said: a kernel one input lacks is no difference of the code
        shown = [f"{n} (not in {', '.join(a)})" for n, a in list(lacking.items())[:3]]
        warnings.warn(InputWarning(
            f"{len(lacking)} kernel(s) not in every input, left out: {', '.join(shown)}"
            + (", ..." if len(lacking) > 3 else "")), stacklevel=2)
    out = {}
    for name in names:
        mix, flops, ninsn, notes = {}, {}, {}, []
        cfgs = {a: build_cfg(programs[a][name]) for a in archs}
        for a in archs:
            c = static_counts(programs[a][name], cfg=cfgs[a])
            m = c.mix()
            for col in MIX_COLUMNS:
                if m.get(col):
                    mix.setdefault(col, {})[a] = m[col]
            can = c.canonical()
            flops[a] = {k: can[k] for k in ("fp64_flops", "fp32_flops", "fp16_flops", "flops")}
            ninsn[a] = sum(1 for b in cfgs[a].blocks.values() if b.region
                           for _ in b.instructions)
            # each architecture's code has its own loops and offsets: say whose a note is
            notes += [f"{a}: {n}" for n in c.notes if f"{a}: {n}" not in notes]
        for col in mix:
            for a in archs:
                mix[col].setdefault(a, 0.0)
        ref = archs[0]
        blocks = []
        for a in archs[1:]:
            m = match_blocks(cfgs[ref], cfgs[a])
            notes += [n for n in m.notes if n not in notes]
            for t, s in sorted(m.pairs.items()):
                tb = cfgs[a].blocks[t]
                mt = _block_mix(tb)
                ms = _block_mix(cfgs[ref].blocks[s]) if s is not None else Counter()
                if mt != ms:
                    blocks.append({
                        "arch": a, "region": tb.region,
                        "ref_block": None if s is None else f"{s:#06x}", "block": f"{t:#06x}",
                        "ref_mix": dict(ms), "mix": dict(mt),
                        "ref_code": [] if s is None else
                        [i.text() for i in cfgs[ref].blocks[s].instructions],
                        "code": [i.text() for i in tb.instructions],
                    })
        out[name] = {"archs": archs, "declared": declared[name], "mix": mix,
                     "flops_per_thread": flops, "instructions": ninsn, "blocks": blocks,
                     "notes": notes}
    return out
