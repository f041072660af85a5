"""Symbolic operation, memory-access and synchronization counts of a loopy kernel.

This is Section 5 of Stevens & Kloeckner (Algorithm 1 for counts, Algorithm 2 for access
footprints) on top of loopy 2025.2's statistics module (``lp.get_op_map``,
``lp.get_mem_access_map``, ``lp.get_synchronization_map``, ``lp.gather_access_footprint_bytes``):

* counts stay piecewise quasi-polynomials in the kernel's size parameters and are cached per
  (kernel, sub-group size); :meth:`KernelCounts.evaluate` re-evaluates them cheaply for new sizes;
* each count carries loopy's *count granularity*: arithmetic and local-memory accesses are counted
  once per sub-group, global accesses once per work-item except uniform ones (``lid(0)`` stride 0,
  once per sub-group); the sub-group size is the only hardware input;
* loopy does not fuse multiply-adds, so :func:`op_map_with_madd` counts ``a + b*c`` (and
  ``a - b*c``, ``b*c - a``) as one ``madd`` (and neither an ``add`` nor a ``mul``), as the
  paper's feature ``f_op_float32_madd`` needs;
* index arithmetic inside subscripts is not counted (the paper's models leave it out);
* the access-to-footprint ratio (AFR) of an array and direction is its number of element accesses
  per work-item, summed over the grid, divided by the number of distinct elements it touches.

loopy is imported inside functions: ``import gpuproj`` stays light.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from ..errors import InputError, MissingToolError


def _lp():
    try:
        import loopy as lp
    except ImportError as e:  # pragma: no cover - the extra is installed in CI
        raise MissingToolError(
            "the calibrated models need loopy: pip install 'gpuproj[calibrate]'") from e
    return lp


@dataclass(frozen=True)
class OpCount:
    """Arithmetic operations of one kind. ``count`` is symbolic (loopy GuardedPwQPolynomial),
    in units of ``granularity`` (a sub-group executing one operation counts once)."""

    dtype: str
    name: str  # add, mul, madd, div, pow, exp, ...
    granularity: str
    count: object = field(compare=False)


@dataclass(frozen=True)
class AccessCount:
    """Memory accesses of one pattern. Strides are pymbolic expressions in the size parameters,
    in elements of ``dtype``; an axis absent from a stride dict has stride 0."""

    mtype: str  # global, local
    dtype: str
    direction: str  # load, store
    variable: str
    tags: frozenset
    lid_strides: tuple  # ((axis, stride expr or None), ...)
    gid_strides: tuple
    granularity: str
    count: object = field(compare=False)


@dataclass
class KernelCounts:
    """All symbolic counts of one kernel for one sub-group size."""

    name: str
    subgroup_size: int
    params: tuple
    ops: list
    accesses: list
    syncs: dict  # kind ("barrier_local", "kernel_launch") -> count per work-item
    workitem_accesses: dict  # (variable, direction) -> element accesses summed over work-items
    footprint: dict  # (variable, direction) -> distinct elements touched
    itemsize: dict  # variable -> bytes per element
    global_size: tuple  # number of work-groups per grid axis (pymbolic expressions)

    def evaluate(self, sizes: dict) -> CountValues:
        """Numeric counts for one assignment of the size parameters (``{"n": 1024}``)."""
        sizes = _check_sizes(self, sizes)

        def ev(c):
            return float(c.eval_with_dict(sizes)) if c is not None else 0.0

        ops = [(o, ev(o.count)) for o in self.ops]
        acc = [(a, ev(a.count)) for a in self.accesses]
        syncs = {k: ev(v) for k, v in self.syncs.items()}
        afr = {}
        for key, wi in self.workitem_accesses.items():
            fp = self.footprint.get(key)
            fp_el = ev(fp) if fp is not None else 0.0
            afr[key] = ev(wi) / fp_el if fp_el > 0 else math.inf
        groups = math.prod(int(_eval_expr(g, sizes)) for g in self.global_size) \
            if self.global_size else 1
        return CountValues(self, dict(sizes), ops, acc, syncs, afr, groups)


@dataclass
class CountValues:
    """Counts of one kernel at one size; what features read."""

    counts: KernelCounts
    sizes: dict
    ops: list  # [(OpCount, value)]
    accesses: list  # [(AccessCount, value)]
    syncs: dict
    afr: dict  # (variable, direction) -> access-to-footprint ratio
    thread_groups: int

    def strides(self, access: AccessCount, which: str) -> dict:
        """Strides of ``access`` ("lid" or "gid") evaluated at these sizes; None = not affine."""
        raw = access.lid_strides if which == "lid" else access.gid_strides
        return {ax: (None if s is None else _eval_expr(s, self.sizes)) for ax, s in raw}


def _eval_expr(expr, sizes):
    from pymbolic import evaluate

    v = evaluate(expr, sizes)
    return v


def _check_sizes(counts, sizes):
    missing = [p for p in counts.params if p not in sizes]
    if missing:
        raise InputError(f"kernel {counts.name!r} needs size parameter(s) {missing}; "
                         f"given {sorted(sizes)}", field="sizes")
    return {k: v for k, v in check_size_values(sizes).items() if k in counts.params}


def check_size_values(sizes: dict) -> dict:
    """``sizes`` with every value an integer (numpy's too), else an ``InputError`` naming the
    size: ``int()`` would turn 1024.7 into 1024 and ``True`` into 1 without a word."""
    import operator

    out = {}
    for k, v in sizes.items():
        try:
            if isinstance(v, bool):
                raise TypeError
            out[k] = operator.index(v)
        except TypeError:
            raise InputError(f"expected an integer, found {v!r}", field=f"sizes.{k}") from None
    return out


def _dtype_name(t) -> str:
    import numpy as np

    return np.dtype(t.numpy_dtype if hasattr(t, "numpy_dtype") else t).name


def _tag_names(tags) -> frozenset:
    out = set()
    for t in tags or ():
        out.add(str(getattr(t, "value", t)))
    return frozenset(out)


def _madd_counter_class():
    """An ExpressionOpCounter that fuses ``x + y*z`` and ``x - y*z`` into one madd (loopy
    2025.2 does not)."""
    lp = _lp()
    from loopy.statistics import ExpressionOpCounter, Op

    class MaddOpCounter(ExpressionOpCounter):
        def map_sum(self, expr):
            base = super().map_sum(expr)
            # Each product child can absorb one of the len-1 additions of this sum.
            n_prod = sum(1 for c in expr.children if _is_fusable_product(c))
            fused = min(len(expr.children) - 1, n_prod)
            if not fused:
                return base
            dt = self.type_inf(expr)
            g = self.arithmetic_count_granularity
            return base + self.new_poly_map({
                Op(dtype=dt, name="madd", count_granularity=g, kernel_name=self.knl.name):
                    self.zero + fused,
                Op(dtype=dt, name="add", count_granularity=g, kernel_name=self.knl.name):
                    self.zero - fused,
                Op(dtype=dt, name="mul", count_granularity=g, kernel_name=self.knl.name):
                    self.zero - fused,
            })

    del lp
    return MaddOpCounter


def _is_fusable_product(x) -> bool:
    """Whether ``x`` is a product of two or more factors, also under negations: pymbolic
    parses ``a - b*c`` as ``a + Product((-1, Product((b, c))))``, whose outer product has one
    factor besides -1, and that is one fused multiply-add as much as ``-b*c + a`` is."""
    from pymbolic.primitives import Product

    while isinstance(x, Product):
        factors = [f for f in x.children if not _is_minus_one(f)]
        if len(factors) >= 2:
            return True
        if not factors:
            return False
        x = factors[0]
    return False


def _is_minus_one(x):
    try:
        return x == -1
    except (TypeError, ValueError):  # pymbolic expressions compare structurally
        return False


def op_map_with_madd(knl, callables_table, subgroup_size, count_redundant_work=True):
    """loopy's per-kernel op map (as in ``lp.get_op_map`` on a preprocessed kernel, subscripts
    not counted) with multiply-adds fused. ``knl`` is a preprocessed, type-inferred LoopKernel."""
    from loopy.kernel.instruction import (
        Assignment,
        BarrierInstruction,
        CallInstruction,
        CInstruction,
        NoOpInstruction,
    )
    from loopy.statistics import ToCountMap, _get_insn_count

    counter = _madd_counter_class()(knl, callables_table, None, count_within_subscripts=False)
    total = counter.new_zero_poly_map()
    for insn in knl.instructions:
        if isinstance(insn, (CallInstruction, Assignment)):
            ops = counter(insn.assignees) + counter(insn.expression)
            for key, val in ops.count_map.items():
                n = _get_insn_count(knl, callables_table, insn.id, subgroup_size,
                                    count_redundant_work, key.count_granularity)
                total = total + ToCountMap({key: val}) * n
        elif not isinstance(insn, (CInstruction, NoOpInstruction, BarrierInstruction)):
            raise InputError(f"cannot count instruction type {type(insn).__name__}")
    return total


def _prepare(program):
    lp = _lp()
    from loopy.preprocess import infer_unknown_types, preprocess_program

    program = preprocess_program(program)
    program = infer_unknown_types(program, expect_completion=True)
    entry = next(iter(program.entrypoints))
    del lp
    return program, entry


def check_subgroup_size(value, path=None) -> int:
    """``value`` where it is a positive integer (not a bool: YAML's true is no size of 1), else
    an ``InputError`` naming ``path``'s field ``subgroup_size``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"sub-group size must be a positive integer, found {value!r}",
                         path=path, field="subgroup_size")
    return value


@functools.lru_cache(maxsize=512, typed=True)  # True is no sub-group size of 1
def count_kernel(program, subgroup_size: int = 32) -> KernelCounts:
    """Symbolic counts of a loopy program (one entrypoint); cached per (program, sub-group size).
    ``count_kernel(prog, 32).evaluate({"n": 512})`` gives the numbers for one size."""
    import warnings

    lp = _lp()
    check_subgroup_size(subgroup_size)
    with warnings.catch_warnings():
        # loopy warns for every sub-group-granularity count that it uses the work-group size
        # upper bound; that is exactly the counting rule we want.
        warnings.simplefilter("ignore")
        prepared, entry = _prepare(program)
        knl = prepared[entry]
        ops_map = op_map_with_madd(knl, prepared.callables_table, subgroup_size)
        mem_map = lp.get_mem_access_map(program, count_redundant_work=True,
                                        subgroup_size=subgroup_size)
        mem_wi = lp.get_mem_access_map(program, count_redundant_work=True, subgroup_size=1)
        sync_map = lp.get_synchronization_map(program, subgroup_size=subgroup_size)
        # lp.gather_access_footprint_bytes is broken for TranslationUnits in loopy 2025.2, so
        # count the footprint sets (Algorithm 2) ourselves.
        from loopy.statistics import count as _count

        has_access = any(isinstance(i, lp.MultiAssignmentBase) for i in knl.instructions)
        footprints = (lp.gather_access_footprints(program, ignore_uncountable=True)
                      if has_access else {})
        fp_elems = {key: _count(knl, fp) for key, fp in footprints.items()}
        gsize, _ = knl.get_grid_size_upper_bounds_as_exprs(prepared.callables_table)

    ops = [OpCount(_dtype_name(k.dtype), _op_name(k.name), k.count_granularity, v)
           for k, v in ops_map.count_map.items()]
    accesses = []
    for k, v in mem_map.count_map.items():
        accesses.append(AccessCount(
            mtype=k.mtype, dtype=_dtype_name(k.dtype), direction=k.direction,
            variable=k.variable, tags=_tag_names(k.variable_tags),
            lid_strides=tuple(sorted((k.lid_strides or {}).items())),
            gid_strides=tuple(sorted((k.gid_strides or {}).items())),
            granularity=k.count_granularity, count=v))
    wi = {}
    for k, v in mem_wi.count_map.items():
        key = (k.variable, k.direction)
        wi[key] = wi[key] + v if key in wi else v
    fps = {(var, "load" if d == "read" else "store"): v for (var, d), v in fp_elems.items()}
    itemsize = {}
    for a in knl.args:
        if getattr(a, "dtype", None) is not None:
            itemsize[a.name] = a.dtype.numpy_dtype.itemsize
    for name, t in knl.temporary_variables.items():
        if t.dtype is not None and t.dtype is not lp.auto:
            itemsize[name] = t.dtype.numpy_dtype.itemsize
    syncs = {k.kind: v for k, v in sync_map.count_map.items()}
    params = tuple(sorted(a.name for a in knl.args if isinstance(a, lp.ValueArg)))
    return KernelCounts(name=knl.name, subgroup_size=subgroup_size, params=params, ops=ops,
                        accesses=accesses, syncs=syncs, workitem_accesses=wi,
                        footprint=fps, itemsize=itemsize, global_size=tuple(gsize))


def _op_name(name: str) -> str:
    # loopy names calls "func:exp"; the paper's feature grammar says f_op_float32_exp.
    return name.split(":", 1)[1] if name.startswith("func:") else name
