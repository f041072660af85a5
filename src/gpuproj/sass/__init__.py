"""Assembly-level (SASS) projection: disassembly, basic blocks, instruction classes and the
cross-architecture comparison of Van Lanker et al. (Euro-Par 2024, Sec. 4.2).

Data flow: ``load_sass`` (a .cu file, cubin, fatbin, executable or a SASS listing) ->
``Program`` (functions -> instructions, ``program.py``) -> ``build_cfg`` (blocks, regions,
loops, ``cfg.py``) -> counts (measured from an Nsight Compute source page, or static with loop
trip counts, ``counts.py``) -> ``match_blocks`` / ``carry_counts`` (``compare.py``) ->
``target_counts`` (the profile-schema FP columns for the target GPU, for the models).

See ``docs/sass.md``.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import InputError
from ..files import refuse_irregular
from ..names import split_list
from .cfg import CFG, Block, build_cfg
from .compare import Matching, carry_counts, estimate, match_blocks
from .counts import CANONICAL, Counts, canonical_counts, measured_counts, static_counts
from .opcodes import MIX_COLUMNS, OpClass, classify
from .parse import parse_file, parse_json, parse_ncu_source_csv, parse_text, sniff
from .program import Function, Instruction, Program, canonical_callee
from .tools import arch_name, parse_arch

__all__ = [
    "CANONICAL",
    "CFG",
    "MIX_COLUMNS",
    "Block",
    "Counts",
    "Function",
    "Instruction",
    "Matching",
    "OpClass",
    "Program",
    "arch_name",
    "build_cfg",
    "canonical_callee",
    "canonical_counts",
    "carry_counts",
    "classify",
    "estimate",
    "load_sass",
    "load_sass_archs",
    "match_blocks",
    "measured_counts",
    "parse_arch",
    "parse_file",
    "parse_json",
    "parse_ncu_source_csv",
    "parse_text",
    "resolve_kernel",
    "static_counts",
    "target_counts",
    "target_intensities",
]

_CU = {".cu", ".cuh"}


def _from_cubin(path: Path, arch) -> Program:
    from .tools import cubin_arch, disassemble_cubin

    a = cubin_arch(path.read_bytes())
    if arch is not None and a is not None and a != parse_arch(arch):
        raise InputError(f"cubin is for sm_{a}, not sm_{parse_arch(arch)}", path=str(path))
    text, symbols = disassemble_cubin(path)
    prog = parse_json(text, str(path), symbols)
    if prog.arch is None:
        prog.arch = a
    return prog


def load_sass(path, arch=None, *, nvcc_options=()) -> Program:
    """The SASS of every kernel in ``path`` for one architecture.

    ``path``: a CUDA source (.cu; compiled with nvcc for ``arch``), a cubin, a fatbin, an
    executable, shared library or object with embedded cubins (``arch`` picks one when several
    are embedded), or a listing (nvdisasm text or -json, cuobjdump -sass text, Nsight Compute
    source-page CSV, which also carries execution counts). ``arch``: 'sm_80', '80', 80.
    """
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", path=str(p))
    refuse_irregular(p)
    if p.is_dir():
        raise InputError("a folder, not a program or a listing", path=str(p))
    if p.suffix in _CU:
        import tempfile

        from .tools import compile_cu

        if arch is None:
            raise InputError("a .cu file needs an architecture to compile for (e.g. sm_80)",
                             path=str(p))
        from .tools import has_code

        with tempfile.TemporaryDirectory(prefix="gpuproj-sass-") as tmp:
            cubin = compile_cu(p, arch, tmp, nvcc_options)
            if not has_code(cubin.read_bytes()):
                raise InputError("compiles to no kernel (no __global__ function)", path=str(p))
            prog = _from_cubin(cubin, arch)
        prog.origin = str(p)
        return prog
    with open(p, "rb") as f:
        head = f.read(65536)
    kind = sniff(head)
    if kind in ("elf", "fatbin"):
        from .tools import cubin_arch, extract_cubins, has_code

        if kind == "elf" and cubin_arch(head) is not None:
            return _from_cubin(p, arch)
        cubins = [(a, c) for a, c in extract_cubins(p, arch) if has_code(c.read_bytes())]
        if not cubins:
            raise InputError("no embedded cubin " + (f"for {arch_name(arch)} " if arch else "")
                             + "holds the code of a kernel", path=str(p))
        archs = sorted({a for a, _ in cubins if a is not None}, key=lambda a: (parse_arch(a), a))
        if len(archs) > 1:
            raise InputError(f"holds cubins for {', '.join(archs)}; pass --arch to pick one "
                             f"(`gpuproj sass diff` compares two: --arch {','.join(archs[:2])})",
                             path=str(p))
        progs = [_from_cubin(c, arch) for _, c in cubins]
        prog = progs[0]
        for other in progs[1:]:
            for name, f in other.functions.items():
                prog.functions.setdefault(name, f)
        prog.origin = str(p)
        return prog
    prog = parse_file(p, parse_arch(arch) if arch is not None else None)
    if arch is not None and prog.arch is not None and prog.arch != parse_arch(arch):
        raise InputError(f"listing is for sm_{prog.arch}, not sm_{parse_arch(arch)}",
                         path=str(p))
    return prog


def load_sass_archs(path, archs, *, nvcc_options=()) -> dict[str, Program]:
    """``load_sass`` for each architecture in ``archs`` (a list or 'sm_80,sm_90a'), keyed by
    its ``arch_name``: 'sm_90a' stays apart from 'sm_90', whose code it is not."""
    if isinstance(archs, str):
        archs = split_list(archs)
    names = [arch_name(a) for a in archs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"{', '.join(twice)} named twice among the architectures")
    return {n: load_sass(path, a, nvcc_options=nvcc_options) for n, a in zip(names, archs)}


def _base_name(kernel: str) -> str:
    """'void foo<float>(float*, int)' -> 'foo'; 'ns::bar(int)' -> 'bar'."""
    s = kernel.strip()
    s = s.removeprefix("void ")
    depth, out = 0, []
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            break
        elif depth == 0:
            out.append(ch)
    return "".join(out).split("::")[-1].strip()


def _mangled_base(name: str) -> str | None:
    """The unqualified name inside an Itanium-mangled symbol: '_Z3fooPfi' -> 'foo',
    '_ZN2ns3barEi' -> 'bar'."""
    import re

    if not name.startswith("_Z"):
        return None
    s = name[2:]
    parts = []
    if s.startswith("N"):
        s = s[1:]
        while s and s[0].isdigit():
            m = re.match(r"(\d+)", s)
            n = int(m.group(1))
            parts.append(s[len(m.group(1)):len(m.group(1)) + n])
            s = s[len(m.group(1)) + n:]
            if s.startswith("I"):   # template args: stop at the name before them
                break
    else:
        m = re.match(r"(\d+)", s)
        if m:
            n = int(m.group(1))
            parts.append(s[len(m.group(1)):len(m.group(1)) + n])
    return parts[-1] if parts else None


def resolve_kernel(kernel: str, program: Program, kernel_map=None) -> str | None:
    """The function of ``program`` that a profile's kernel name stands for: ``kernel_map``
    first (a dict or callable), then the exact name, then the unqualified name without
    template and argument lists matched against (mangled) function names, when unambiguous."""
    if kernel_map is not None:
        m = kernel_map(kernel) if callable(kernel_map) else kernel_map.get(kernel)
        if m is not None:
            return m if m in program.functions else None
    if kernel in program.functions:
        return kernel
    base = _base_name(kernel)
    hits = [n for n in program.functions if n == base or _mangled_base(n) == base]
    return hits[0] if len(hits) == 1 else None


def target_counts(profiles, source_sass, target_sass, *, kernel_map=None, trips=None,
                  slowpath_calls: float = 0.0):
    """The profile-schema FP columns for the target GPU, one row per row of ``profiles.df``.

    ``source_sass``/``target_sass``: ``Program`` objects (``load_sass``) or paths. Per kernel,
    source and target counts come from ``compare.estimate`` (measured counts carried over when
    the source listing is an Nsight Compute source page, static counts otherwise, with
    ``trips`` = loop trip counts: a number, or {kernel: number or {loop: trips}} with loops
    named by number or header offset in the source code, the target's taking theirs through
    the block matching (``compare.carry_trips``), a key that names no source loop an
    ``InputError``; loops not given are assumed to run once; ``slowpath_calls`` = fraction of
    calls entering nvcc's internal slow-path subroutines, assumed 0). Each column of the row is
    then the measured source value times target/source of that column's estimate; where the
    source estimate is 0 but the target's is not, the target estimate is scaled by
    measured/estimated total FLOPs of the source; where nothing was measured and the counts are
    measured ones, the target estimate itself (per launch). Rows whose kernel has no function
    in both listings are NaN.
    A profile without a special-function count (Nsight Compute's FLOPs are 2 FMA + ADD + MUL)
    is compared on estimates without special functions too: its FLOPs scale by the ratio of
    the estimates' FLOPs that it counts, and it gets no special count.

    Returns a ``pandas.DataFrame`` indexed like ``profiles.df`` with columns ``CANONICAL``;
    ``df.attrs['notes']`` lists every assumption made.
    """
    import numpy as np
    import pandas as pd

    src = source_sass if isinstance(source_sass, Program) else load_sass(source_sass)
    tgt = target_sass if isinstance(target_sass, Program) else load_sass(target_sass)
    df = profiles.df
    out = pd.DataFrame(np.nan, index=df.index, columns=list(CANONICAL))
    notes = list(src.notes) + list(tgt.notes)
    cache = {}
    for idx, row in df.iterrows():
        k = row["kernel"]
        fs, ft = resolve_kernel(k, src, kernel_map), resolve_kernel(k, tgt, kernel_map)
        if fs is None or ft is None:
            side = "source" if fs is None else "target"
            msg = (f"kernel '{k}' not found in the {side} SASS: not compared (its target "
                   "counts are NaN; a projection keeps the source's)")
            if msg not in notes:
                notes.append(msg)
            continue
        if (fs, ft) not in cache:
            t = trips.get(k, trips.get(fs)) if isinstance(trips, dict) else trips
            s_c, t_c, _ = estimate(src[fs], tgt[ft], trips=t, slowpath_calls=slowpath_calls)
            cache[(fs, ft)] = (s_c.canonical(), t_c.canonical(), s_c.measured)
            for n in s_c.notes + t_c.notes:
                if n not in notes:
                    notes.append(n)
            if not s_c.measured:
                notes.append(f"{fs}: no per-instruction counts; target/source ratio of static "
                             "counts scales the measured counts")
        S, T, measured = cache[(fs, ft)]
        if _nan(row.get("fp32_special_thread_inst", np.nan)):
            S, T = _without_special(S), _without_special(T)
        meas_total, est_total = row.get("flops", np.nan), S["flops"]
        scale = meas_total / est_total if est_total and not _nan(meas_total) else np.nan
        for c in CANONICAL:
            m_v = row.get(c, np.nan)
            if _nan(m_v):
                if measured:
                    out.at[idx, c] = T[c]
                elif not _nan(scale):
                    out.at[idx, c] = T[c] * scale
                continue
            if S[c]:
                out.at[idx, c] = m_v * T[c] / S[c]
            elif T[c]:
                out.at[idx, c] = T[c] * scale if not _nan(scale) else np.nan
            else:
                out.at[idx, c] = m_v
    out.attrs["notes"] = notes
    return out


def _without_special(counts: dict) -> dict:
    """``counts`` as a profile that does not count special functions sees them: FLOPs without
    theirs (one each, ``counts.canonical_counts``), no special count."""
    n = counts["fp32_special_thread_inst"]
    return {**counts, "flops": counts["flops"] - n, "fp32_flops": counts["fp32_flops"] - n,
            "fp32_special_thread_inst": math.nan}


def _nan(v) -> bool:
    try:
        return v is None or math.isnan(float(v))
    except (TypeError, ValueError):
        return True


def target_intensities(profiles, counts):
    """Operational intensities (FLOP per byte) at L1, L2 and DRAM for the target: the target
    FLOPs of ``counts`` (``target_counts``) over the bytes through each level as measured on
    the source (Van Lanker et al. Eq. 10's N+, as ``hierarchical`` takes them: L1's includes
    the shared-memory bytes). Columns ``oi_l1_flop_per_byte``, ``oi_l2_flop_per_byte``,
    ``oi_dram_flop_per_byte``; NaN where a level is unknown or moved no byte."""
    import numpy as np
    import pandas as pd

    from ..models.hierarchical import level_bytes

    df = profiles.df
    nplus = level_bytes(df, df["dram_bytes"].to_numpy(float))["nplus"]
    flops = counts["flops"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        oi = {f"oi_{lvl}_flop_per_byte": np.where(nplus[lvl] > 0, flops / nplus[lvl], np.nan)
              for lvl in ("l1", "l2", "dram")}
    return pd.DataFrame(oi, index=df.index)
