"""Kernel names as profilers print them, demangled C++ signatures: their argument list (which
the trace join and the tables cut) and short forms for tables and plot labels (PyTorch's and
CUTLASS's template arguments run to thousands of characters)."""

from __future__ import annotations

import re
from collections import Counter

import pandas as pd

# kernel names longer than this (without their argument list) are shortened in tables
LONG_NAME = 60


def closing_start(s: str, close: str, open_: str) -> int:
    """Index of the bracket that opens the balanced group ``s`` ends with (-1 if unbalanced)."""
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        depth += (s[i] == close) - (s[i] == open_)
        if depth == 0:
            return i
    return -1


def split_arguments(s: str) -> tuple[str, str]:
    """(name, argument list) of a demangled signature: the last group where it ends with ")"
    (an earlier one belongs to the name: ``at::(anonymous namespace)::f<...>``), else ''."""
    if s.endswith(")") and (i := closing_start(s, ")", "(")) > 0:
        return s[:i], s[i:]
    return s, ""


def short_kernel_names(names: pd.Series) -> pd.Series:
    """C++ signatures shortened for a table, each as far as it stays apart from the other
    names: without the argument list, and where that leaves more than ``LONG_NAME``
    characters (PyTorch's and CUTLASS's template arguments run to thousands), with what nests
    deeper than ``depth`` brackets elided, for ``depth`` from 1 up; names that cannot be told
    apart so stay whole.

    >>> short_kernel_names(pd.Series(["f(int)", "g<(int)2>(float *)", "h"])).tolist()
    ['f', 'g<(int)2>', 'h']
    >>> k = "ns::kernel<{}, ns::functor<float, float, float, ns::mul<float> > >(int, float *)"
    >>> short_kernel_names(pd.Series([k.format(4), k.format(2)])).tolist()
    ['ns::kernel<4, ns::functor<...> >', 'ns::kernel<2, ns::functor<...> >']
    >>> short_kernel_names(pd.Series(["f(int)", "f(float)"])).tolist()
    ['f(int)', 'f(float)']
    """
    uniq = [str(n) for n in pd.unique(names)]
    bare = {n: without_arguments(n) for n in uniq}
    chosen = {n: b for n, b in bare.items() if len(b) <= LONG_NAME}
    for depth in range(1, max(map(_nesting, bare.values()), default=0) + 1):
        shown = {n: chosen.get(n) or _elided(bare[n], depth) for n in uniq}
        taken = Counter(shown.values())
        chosen.update({n: s for n, s in shown.items() if n not in chosen and taken[s] == 1})
    shown = {n: chosen.get(n, bare[n]) for n in uniq}
    if len(set(shown.values())) < len(uniq):
        return names
    return names.map(shown)


def without_arguments(name: str) -> str:
    """A demangled signature without its argument list (``split_arguments``), also where it
    ends with " [clone .kd]", as HIP's code objects name kernels.

    >>> without_arguments("bodyForce(Body*, float, int) [clone .kd]")
    'bodyForce'
    """
    return split_arguments(_CLONE.sub("", name))[0]


_OPEN, _CLOSE = "<([{", ">)]}"
_CLONE = re.compile(r"\s*\[clone [^\]]*\]$")


def _nesting(name: str) -> int:
    """How many brackets deep ``name`` nests (0 where they do not balance: an ``operator<``)."""
    depth = deepest = 0
    for ch in name:
        depth += (ch in _OPEN) - (ch in _CLOSE)
        deepest = max(deepest, depth)
        if depth < 0:
            return 0
    return deepest if depth == 0 else 0


def _elided(name: str, max_depth: int) -> str:
    """``name`` with the contents of brackets deeper than ``max_depth`` replaced by "..."
    (an empty group stays empty: ``operator()``)."""
    if not _nesting(name):
        return name
    out, depth, cut = [], 0, False
    for ch in name:
        if ch in _CLOSE:
            depth -= 1
        if depth <= max_depth:
            out.append(ch)
            cut = False
        elif not cut:
            out.append("...")
            cut = True
        if ch in _OPEN:
            depth += 1
    return "".join(out)
