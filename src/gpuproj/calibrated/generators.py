"""Tagged measurement-kernel generators (the paper's UIPICK, Sec. 7.1).

A :class:`Generator` wraps a kernel creation function from :mod:`.kernels` with

* *generator tags*: single words naming the computation (``matmul_sq``, ``flops_madd_pattern``);
* *arguments* with allowed values: one kernel is generated for each element of the Cartesian
  product of the allowed value sets. A *variant tag* ``arg:v1,v2`` restricts an argument to
  those values (size arguments accept any positive integer and default to small CI sizes).

:class:`KernelCollection` picks the generators whose tag sets match the user's generator tags
under one of four :class:`MatchCondition` s (identical, subset, superset = default, intersect).

>>> gens = KernelCollection(ALL_GENERATORS).matching(["matmul_sq"])
>>> [g.name for g in gens]
['matmul_sq']
>>> len(KernelCollection(ALL_GENERATORS).variants(["matmul_sq", "prefetch:True", "n:64,128"]))
2
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass

from ..errors import InputError
from . import kernels as K


class MatchCondition(enum.Enum):
    IDENTICAL = "identical"  # generator tags == user tags
    SUBSET = "subset"  # generator tags <= user tags
    SUPERSET = "superset"  # generator tags >= user tags (default)
    INTERSECT = "intersect"  # generator tags & user tags non-empty

    def matches(self, gen_tags: frozenset, user: frozenset) -> bool:
        if self is MatchCondition.IDENTICAL:
            return gen_tags == user
        if self is MatchCondition.SUBSET:
            return gen_tags <= user
        if self is MatchCondition.SUPERSET:
            return gen_tags >= user
        return bool(gen_tags & user)


@dataclass(frozen=True)
class Arg:
    """An argument: its default values and what it allows (a tuple of choices, or ``int``
    for any positive integer)."""

    default: tuple
    allowed: object = None  # tuple of values, or int

    def parse(self, text: str, gen: str, name: str):
        """The values of variant tag ``name:text``; a bad one is an ``InputError`` whose field
        is the argument's name (the caller knows the file and adds where the tag came from)."""
        kind = self.allowed if self.allowed is int else type(self.default[0])
        what = ("a positive integer" if self.allowed is int
                else "true or false" if kind is bool else "an integer")
        out = []
        for raw in text.split(","):
            raw = raw.strip()
            try:
                if kind is bool:
                    if raw.lower() not in ("true", "false"):
                        raise ValueError
                    v = raw.lower() == "true"
                elif kind is int:
                    v = int(raw)
                    if v < 1 and self.allowed is int:
                        raise ValueError
                else:
                    v = raw
            except ValueError:
                raise InputError(f"generator {gen}: {name}:{raw} is not {what}",
                                 field=name) from None
            if isinstance(self.allowed, tuple) and v not in self.allowed:
                raise InputError(f"generator {gen}: {name}:{raw} not allowed; allowed: "
                                 f"{', '.join(map(str, self.allowed))}", field=name)
            out.append(v)
        return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class Generator:
    name: str
    tags: frozenset
    args: dict  # name -> Arg
    create: object  # callable(**values) -> MeasurementKernel
    # optional: values -> None, or (argument, why) for a combination that makes no kernel
    # (dropped from the Cartesian product)
    invalid: object = None

    def values(self, variant_tags: dict) -> dict:
        """Each argument's values: those of its variant tag, else its defaults."""
        return {name: (arg.parse(variant_tags[name], self.name, name)
                       if name in variant_tags else arg.default)
                for name, arg in self.args.items()}

    def combinations(self, variant_tags: dict) -> list:
        """The argument values of each kernel :meth:`variants` makes: the Cartesian product of
        the (restricted) values less the combinations that make no kernel. None left is an
        ``InputError`` whose field is the argument that rules out the first: tags that ask
        for nothing this generator makes would drop out of a measurement set unsaid."""
        sets = self.values(variant_tags)
        names = list(sets)
        out, why = [], None
        for combo in itertools.product(*(sets[n] for n in names)):
            values = dict(zip(names, combo))
            bad = self.invalid(values) if self.invalid else None
            if bad is None:
                out.append(values)
            else:
                why = why or bad
        if not out:
            raise InputError(f"generator {self.name} makes no kernel of these argument values: "
                             f"{why[1]}", field=why[0])
        return out

    def variants(self, variant_tags: dict) -> list:
        """All kernels for the Cartesian product of the (restricted) argument values."""
        out = []
        for values in self.combinations(variant_tags):
            mk = self.create(**values)
            mk.variant = values
            out.append(mk)
        return out


def parse_tags(tags) -> tuple[frozenset, dict]:
    """Split filter tags into generator tags and variant tags ``{arg: "v1,v2"}``."""
    gen, var = set(), {}
    for t in tags:
        t = str(t).strip()
        if not t:
            continue
        if ":" in t:
            k, v = t.split(":", 1)
            if not k or not v:
                raise InputError(f"variant tag {t!r} needs 'arg:value'")
            var[k] = v
        else:
            gen.add(t)
    return frozenset(gen), var


class KernelCollection:
    """Generators filtered by tags; ``variants(tags)`` returns measurement kernels."""

    def __init__(self, generators, match=MatchCondition.SUPERSET):
        self.generators = list(generators)
        self.match = MatchCondition(match) if not isinstance(match, MatchCondition) else match

    def matching(self, tags) -> list:
        gen_tags, _ = parse_tags(tags)
        return [g for g in self.generators if self.match.matches(g.tags, gen_tags)]

    def _selected(self, tags) -> list:
        """[(generator, its variant tags)] for ``tags``; raises where they select nothing."""
        gen_tags, var = parse_tags(tags)
        gens = [g for g in self.generators if self.match.matches(g.tags, gen_tags)]
        if not gens:
            raise InputError(f"no generator matches tags {sorted(gen_tags)} "
                             f"({self.match.value})")
        # an argument one of several generators lacks restricts the others only; one that
        # all of them lack is a misspelling (mm:64 for m:64), not a restriction of none
        known = set().union(*(g.args for g in gens))
        unknown = sorted(set(var) - known)
        if unknown and len(gens) == 1:
            raise InputError(f"generator {gens[0].name} has no argument(s) {unknown}; "
                             f"arguments: {', '.join(gens[0].args)}")
        if unknown:
            raise InputError(f"none of the {len(gens)} generators that tags "
                             f"{sorted(gen_tags)} select has argument(s) {unknown}; their "
                             f"arguments: {', '.join(sorted(known))}")
        return [(g, {k: v for k, v in var.items() if k in g.args}) for g in gens]

    def check(self, tags) -> None:
        """Raise the ``InputError`` that :meth:`variants` would, without building kernels (a
        model file's tag sets are checked when it is read, before any kernel runs)."""
        for g, var in self._selected(tags):
            g.combinations(var)

    def variants(self, tags) -> list:
        return [mk for g, var in self._selected(tags) for mk in g.variants(var)]


# -- the generators -------------------------------------------------------------------------

_DT = Arg(("float32",), ("float32", "float64"))
_L = Arg((16,), (8, 16, 32))


def _with_removal(mk, remove_work, keep):
    if not remove_work:
        return mk
    from .work_removal import remove_work as rw

    keep_vars = None if keep == "all" else keep.split("+")
    if keep_vars is None:
        mk.program = rw(mk.program, remove_vars=())
    else:
        mk.program = rw(mk.program, keep_vars=keep_vars)
    mk.name += f"_rm_{keep}"
    return mk


def _flops(op):
    def create(dtype, lsize_0, lsize_1, ng0, ng1, m, unroll):
        return K.flops_pattern(op, dtype, (lsize_0, lsize_1), (ng0, ng1), m, unroll)

    return Generator(
        f"flops_{op}_pattern", frozenset({f"flops_{op}_pattern", "flops", "microbenchmark"}),
        {"dtype": _DT, "lsize_0": _L, "lsize_1": _L, "ng0": Arg((32,), int),
         "ng1": Arg((4,), int), "m": Arg((64, 128), int), "unroll": Arg((4,), (1, 2, 4, 8, 16))},
        create, invalid=lambda v: _multiple(v, "m", v["unroll"], f"unroll:{v['unroll']}"))


def _gmem(dtype, lsize_0, lsize_1, ng0, ng1, narrays, transposed):
    return K.global_access(dtype, (lsize_0, lsize_1), (ng0, ng1), narrays, transposed)


def _lmem(dtype, lsize_0, lsize_1, ng0, ng1, m):
    return K.local_access(dtype, (lsize_0, lsize_1), (ng0, ng1), m)


def _overlap(dtype, lsize_0, lsize_1, ng0, ng1, m):
    mk = K.local_access(dtype, (lsize_0, lsize_1), (ng0, ng1), m)
    mk.name = f"overlap_local_global_{dtype}"
    return mk


def _barrier(lsize_0, lsize_1, ng0, ng1, m):
    return K.barriers((lsize_0, lsize_1), (ng0, ng1), m)


def _empty(lsize_0, lsize_1, ng0, ng1):
    return K.empty((lsize_0, lsize_1), (ng0, ng1))


def _matmul(dtype, lsize_0, lsize_1, n, prefetch, remove_work, keep):
    return _with_removal(K.matmul_sq(n, dtype, (lsize_0, lsize_1), prefetch), remove_work, keep)


def _dg(variant, nelements, nunit_nodes, nmatrices, remove_work, keep):
    return _with_removal(K.dg_diff(variant, nelements, nunit_nodes, nmatrices), remove_work,
                         keep)


def _fd(lsize, n, remove_work, keep):
    return _with_removal(K.finite_diff(n, lsize), remove_work, keep)


def _transpose(dtype, n, prefetch, remove_work, keep):
    return _with_removal(K.transpose(n, dtype, prefetch=prefetch), remove_work, keep)


def _multiple(v, arg, width, what):
    """(arg, why) where argument ``arg`` is not a multiple of ``width`` (``what``: its name)."""
    return (arg, f"{arg}:{v[arg]} is not a multiple of {what}") if v[arg] % width else None


def _removal(v):
    # keep:<vars> means "remove the other global accesses", which only exists with removal
    if v["keep"] != "all" and not v["remove_work"]:
        return "keep", f"keep:{v['keep']} needs remove_work:True"
    return None


def _matmul_invalid(v):
    # kernels.matmul_sq splits k by the tile width of both i and j (a ValueError traceback)
    if v["lsize_1"] != v["lsize_0"]:
        return "lsize_1", (f"lsize_1:{v['lsize_1']} is not lsize_0:{v['lsize_0']} (matmul_sq "
                           "needs square work-groups)")
    return _removal(v) or _multiple(v, "n", v["lsize_0"], f"lsize_0:{v['lsize_0']}")


def _fd_invalid(v):
    # a tile of lsize work-items computes its lsize - 2 interior points per axis
    return _removal(v) or _multiple(v, "n", v["lsize"] - 2, f"lsize - 2 = {v['lsize'] - 2}")


_RM = Arg((False,), (False, True))

ALL_GENERATORS = [
    _flops("add"), _flops("mul"), _flops("madd"), _flops("div"),
    Generator("gmem_access_pattern",
              frozenset({"gmem_access_pattern", "gmem", "microbenchmark"}),
              {"dtype": _DT, "lsize_0": _L, "lsize_1": _L, "ng0": Arg((64,), int),
               "ng1": Arg((32, 64), int), "narrays": Arg((1, 2), (1, 2, 3, 4)),
               "transposed": Arg((False,), (False, True))}, _gmem),
    Generator("lmem_access_pattern",
              frozenset({"lmem_access_pattern", "lmem", "microbenchmark"}),
              {"dtype": _DT, "lsize_0": _L, "lsize_1": _L, "ng0": Arg((16,), int),
               "ng1": Arg((8,), int), "m": Arg((256, 512), int)}, _lmem),
    Generator("barrier_pattern", frozenset({"barrier_pattern", "barrier", "microbenchmark"}),
              {"lsize_0": _L, "lsize_1": _L, "ng0": Arg((16,), int), "ng1": Arg((8,), int),
               "m": Arg((256, 512), int)}, _barrier),
    Generator("empty_kernel", frozenset({"empty_kernel", "launch", "microbenchmark"}),
              {"lsize_0": _L, "lsize_1": _L, "ng0": Arg((16, 256), int),
               "ng1": Arg((1,), int)}, _empty),
    Generator("overlap_local_global", frozenset({"overlap_local_global", "overlap",
                                                 "microbenchmark"}),
              {"dtype": _DT, "lsize_0": _L, "lsize_1": _L, "ng0": Arg((32,), int),
               "ng1": Arg((32,), int), "m": Arg((1, 2, 4, 8, 16, 32), int)}, _overlap),
    Generator("matmul_sq", frozenset({"matmul_sq", "matmul", "application"}),
              {"dtype": _DT, "lsize_0": _L, "lsize_1": _L, "n": Arg((128, 192), int),
               "prefetch": Arg((True, False), (True, False)), "remove_work": _RM,
               "keep": Arg(("all",), ("all", "a", "b", "c", "a+c", "b+c", "a+b"))},
              _matmul, invalid=_matmul_invalid),
    Generator("dg_diff", frozenset({"dg_diff", "dg", "application"}),
              {"variant": Arg(K.DG_VARIANTS, K.DG_VARIANTS),
               "nelements": Arg((512, 1024), int), "nunit_nodes": Arg((64,), (16, 32, 64)),
               "nmatrices": Arg((3,), int), "remove_work": _RM,
               "keep": Arg(("all",), ("all", "u", "diff_mat", "res", "u+res", "diff_mat+res"))},
              _dg, invalid=lambda v: _removal(v) or _multiple(v, "nelements", 16, "16")),
    Generator("finite_diff", frozenset({"finite_diff", "stencil", "application"}),
              {"lsize": Arg((16, 18), (16, 18)), "n": Arg((224,), int), "remove_work": _RM,
               "keep": Arg(("all",), ("all", "u", "res", "u+res"))}, _fd,
              invalid=_fd_invalid),
    Generator("transpose", frozenset({"transpose", "application"}),
              {"dtype": _DT, "n": Arg((256,), int),
               "prefetch": Arg((True, False), (True, False)), "remove_work": _RM,
               "keep": Arg(("all",), ("all", "a", "b", "a+b"))},
              _transpose, invalid=lambda v: _removal(v) or _multiple(v, "n", 16, "16")),
]

GENERATORS = {g.name: g for g in ALL_GENERATORS}
