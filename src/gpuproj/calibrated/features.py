"""Kernel features and the paper's feature-name grammar (Stevens & Kloeckner, Sec. 6.1).

A feature maps a kernel and its size parameters to a number. Names start with ``f_``:

``f_op_<dtype>_<op>``
    arithmetic operations, e.g. ``f_op_float32_madd``; ``<op>`` is one of loopy's op names
    (add, mul, div, pow, shift, bw, maxmin), madd, or a math function loopy knows (exp, sqrt,
    ...; ``func:`` dropped), see :data:`ARITHMETIC_OPS` and :data:`FUNCTION_OPS`; any other
    name is an error. ``f_op_<op>`` matches every data type.
``f_mem_access[_tag:<tag>][_<mtype>][_<dtype>][_<direction>][_lstrides:{..}][_gstrides:{..}][_afr:<c>]``
    memory accesses; every field is optional but they come in this order. Stride constraints
    map a thread axis to a constraint: ``lstrides:{0:1;1:>15}`` means lid(0) stride 1 and lid(1)
    stride above 15; ``gstrides:{0:0}`` means no gid(0) dependence (an absent axis has stride 0).
    A constraint is ``[<|<=|>|>=|=]value``; value is an integer or an expression in the size
    parameters (``{0:<n}``). ``afr:>1`` constrains the access-to-footprint ratio.
``f_sync_barrier_local``, ``f_sync_kernel_launch``
    synchronizations encountered by one work-item (so multiply barriers by ``f_thread_groups``).
``f_thread_groups``
    the number of work-groups launched.
``f_size:<name>``
    a size parameter's value (for user-defined features).
``f_wall_time`` (or the paper's ``f_cl_wall_time_<platform>_<device>``)
    the measured execution time in s: an *output* feature, read from timings, not counted.

Counts are in units of their loopy count granularity (per work-item, per sub-group of
``subgroup_size`` work-items, per work-group); :attr:`Feature.granularities` reports which.
User-defined features: :func:`register_feature` with a Python function, or a model file's
``features:`` table of expressions over other features (see :mod:`.modelfile`).

>>> f = parse_feature("f_mem_access_global_float32_load_lstrides:{0:1;1:>15}_gstrides:{0:0}_afr:>1")
>>> f.mtype, f.dtype, f.direction, f.lstrides, f.gstrides, f.afr
('global', 'float32', 'load', ((0, ('=', '1')), (1, ('>', '15'))), ((0, ('=', '0')),), ('>', '1'))
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import InputError

DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "complex64", "complex128")
MTYPES = ("global", "local")
DIRECTIONS = ("load", "store")
SYNC_KINDS = ("barrier_local", "barrier_global", "kernel_launch")
# The op names loopy 2025.2's statistics give (plus our fused madd), and the math functions its
# C and OpenCL targets know, which it counts as "func:<name>": a name outside these is a typo
# that would make a feature that is 0 in every kernel.
ARITHMETIC_OPS = ("add", "mul", "madd", "div", "pow", "shift", "bw", "maxmin")
FUNCTION_OPS = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil",
                "clamp", "conj", "cos", "cosh", "dot", "erf", "erfc", "exp", "fabs", "floor",
                "fmax", "fmin", "imag", "isnan", "log", "log10", "max", "min", "pow", "real",
                "rsqrt", "sin", "sinh", "sqrt", "tan", "tanh")
OUTPUT_PREFIXES = ("f_wall_time", "f_cl_wall_time")


class FeatureError(InputError):
    """A feature name that does not follow the grammar."""

    def __init__(self, message, name):
        super().__init__(f"feature {name!r}: {message}", field="feature")


class Feature:
    name: str
    is_output = False

    def evaluate(self, cv, access_tags=None) -> float:
        raise NotImplementedError

    def granularities(self, cv, access_tags=None) -> set:
        return set()


@dataclass(frozen=True)
class OpFeature(Feature):
    name: str
    dtype: str | None
    op: str

    def _match(self, cv):
        return [(o, v) for o, v in cv.ops
                if o.name == self.op and (self.dtype is None or o.dtype == self.dtype)]

    def evaluate(self, cv, access_tags=None):
        return float(sum(v for _, v in self._match(cv)))

    def granularities(self, cv, access_tags=None):
        return {o.granularity for o, v in self._match(cv) if v}


@dataclass(frozen=True)
class MemAccessFeature(Feature):
    name: str
    tag: str | None = None
    mtype: str | None = None
    dtype: str | None = None
    direction: str | None = None
    lstrides: tuple | None = None  # ((axis, (op, value)), ...)
    gstrides: tuple | None = None
    afr: tuple | None = None  # (op, value)

    def matches(self, a, cv, access_tags=None) -> bool:
        if self.tag is not None:
            by_map = (access_tags or {}).get(self.tag)
            ok = self.tag in a.tags or (by_map is not None and (a.variable, a.direction) in
                                        {tuple(x) for x in by_map})
            if not ok:
                return False
        if self.mtype and a.mtype != self.mtype:
            return False
        if self.dtype and a.dtype != self.dtype:
            return False
        if self.direction and a.direction != self.direction:
            return False
        for spec, which in ((self.lstrides, "lid"), (self.gstrides, "gid")):
            if spec is None:
                continue
            strides = cv.strides(a, which)
            for axis, cons in spec:
                if not _satisfies(strides.get(axis, 0), cons, cv.sizes):
                    return False
        return self.afr is None or _satisfies(
            cv.afr.get((a.variable, a.direction), math.nan), self.afr, cv.sizes)

    def evaluate(self, cv, access_tags=None):
        return float(sum(v for a, v in cv.accesses if self.matches(a, cv, access_tags)))

    def granularities(self, cv, access_tags=None):
        return {a.granularity for a, v in cv.accesses if v and self.matches(a, cv, access_tags)}

    def dtypes(self, cv, access_tags=None) -> set:
        """Data types of the accesses counted (a tagged feature's name gives none)."""
        return {a.dtype for a, v in cv.accesses if v and self.matches(a, cv, access_tags)}


@dataclass(frozen=True)
class SyncFeature(Feature):
    name: str
    kind: str

    def evaluate(self, cv, access_tags=None):
        return float(cv.syncs.get(self.kind, 0.0))

    def granularities(self, cv, access_tags=None):
        return {"kernel"} if self.kind == "kernel_launch" else {"workitem"}


@dataclass(frozen=True)
class ThreadGroupsFeature(Feature):
    name: str = "f_thread_groups"

    def evaluate(self, cv, access_tags=None):
        return float(cv.thread_groups)

    def granularities(self, cv, access_tags=None):
        return {"workgroup"}


@dataclass(frozen=True)
class SizeFeature(Feature):
    name: str
    param: str

    def evaluate(self, cv, access_tags=None):
        if self.param not in cv.sizes:
            raise InputError(f"{self.name}: kernel {cv.counts.name} has no size parameter "
                             f"{self.param!r} (it has {', '.join(sorted(cv.sizes)) or 'none'})",
                             field="feature")
        return float(cv.sizes[self.param])


@dataclass(frozen=True)
class OutputFeature(Feature):
    """Measured wall time in s; its value comes from timing, never from counts."""

    name: str
    is_output = True

    def evaluate(self, cv, access_tags=None):
        raise InputError(f"{self.name} is measured, not counted", field="feature")


@dataclass(frozen=True)
class CallableFeature(Feature):
    name: str
    func: object

    def evaluate(self, cv, access_tags=None):
        return float(self.func(cv))


_USER: dict[str, object] = {}


def register_feature(name: str, func) -> None:
    """Register a user-defined feature ``name`` (must start with ``f_``) computed by
    ``func(count_values) -> float`` (count_values: :class:`.counting.CountValues`)."""
    if not name.startswith("f_"):
        raise InputError(f"feature names start with 'f_': {name!r}", field="feature")
    _USER[name] = func


# -- grammar ----------------------------------------------------------------------------------

_CONS = re.compile(r"^(<=|>=|<|>|=)?\s*(.+)$")


def _parse_constraint(text, name):
    m = _CONS.match(text.strip())
    if not m or not m.group(2):
        raise FeatureError(f"bad constraint {text!r}", name)
    op = m.group(1) or "="
    value = m.group(2).strip()
    _check_value(value, name)
    return (op, value)


def _check_value(value, name):
    try:
        float(value)
        return
    except ValueError:
        pass
    from pymbolic import parse as pparse

    try:
        pparse(value)
    except Exception:  # noqa: BLE001 - pymbolic's parser raises several error types
        raise FeatureError(f"bad constraint value {value!r}", name) from None


def _value(value, sizes):
    try:
        return float(value)
    except ValueError:
        from pymbolic import evaluate
        from pymbolic import parse as pparse

        try:
            return float(evaluate(pparse(value), sizes))
        except Exception:  # noqa: BLE001 - unknown names, parse errors: all bad input
            raise InputError(f"cannot evaluate constraint value {value!r} with sizes {sizes}",
                             field="feature") from None


def _satisfies(x, cons, sizes) -> bool:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return False
    try:
        x = float(x)
    except TypeError:  # a stride that stayed symbolic (size not given)
        return False
    op, v = cons
    v = _value(v, sizes)
    tol = 1e-9 * max(1.0, abs(v))
    return {"=": abs(x - v) <= tol, "<": x < v - tol, ">": x > v + tol,
            "<=": x <= v + tol, ">=": x >= v - tol}[op]


def _parse_strides(body, name):
    if not (body.startswith("{") and body.endswith("}")):
        raise FeatureError(f"stride constraints must be in braces, got {body!r}", name)
    out = []
    inner = body[1:-1].strip()
    if not inner:
        return ()
    for part in inner.split(";"):
        if ":" not in part:
            raise FeatureError(f"stride constraint {part!r} needs 'axis:constraint'", name)
        ax, cons = part.split(":", 1)
        try:
            axis = int(ax)
        except ValueError:
            raise FeatureError(f"stride axis must be an integer, got {ax!r}", name) from None
        out.append((axis, _parse_constraint(cons, name)))
    return tuple(sorted(out))


def _split_fields(rest, name):
    """Split on '_' outside braces."""
    fields, depth, cur = [], 0, ""
    for ch in rest:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "_" and depth == 0:
            fields.append(cur)
            cur = ""
        else:
            cur += ch
    fields.append(cur)
    if any(f == "" for f in fields):
        raise FeatureError("empty field (doubled or trailing '_')", name)
    return fields


_MEM_ORDER = ("tag", "mtype", "dtype", "direction", "lstrides", "gstrides", "afr")


def _parse_mem(name):
    rest = name[len("f_mem_access"):]
    if not rest:
        return MemAccessFeature(name)
    if not rest.startswith("_"):
        raise FeatureError("expected '_' after f_mem_access", name)
    fields = _split_fields(rest[1:], name)
    vals: dict = {}
    last = -1
    i = 0
    while i < len(fields):
        f = fields[i]
        if f.startswith("tag:"):
            kind = "tag"
            # A tag may contain '_': it runs until the next field that is a known keyword.
            tag = f[4:]
            while i + 1 < len(fields) and not _is_mem_keyword(fields[i + 1]):
                i += 1
                tag += "_" + fields[i]
            if not tag:
                raise FeatureError("empty tag", name)
            val = tag
        elif f in MTYPES:
            kind, val = "mtype", f
        elif f in DTYPES:
            kind, val = "dtype", f
        elif f in DIRECTIONS:
            kind, val = "direction", f
        elif f.startswith("lstrides:"):
            kind, val = "lstrides", _parse_strides(f[9:], name)
        elif f.startswith("gstrides:"):
            kind, val = "gstrides", _parse_strides(f[9:], name)
        elif f.startswith("afr:"):
            kind, val = "afr", _parse_constraint(f[4:], name)
        else:
            raise FeatureError(
                f"unknown field {f!r}; expected tag:<name>, one of {MTYPES}, a data type "
                f"({', '.join(DTYPES[:4])}, ...), {DIRECTIONS}, lstrides:{{..}}, "
                "gstrides:{..} or afr:<constraint>", name)
        pos = _MEM_ORDER.index(kind)
        if pos <= last:
            raise FeatureError(f"field {f!r} out of order; fields come in the order "
                               f"{', '.join(_MEM_ORDER)}", name)
        last = pos
        vals[kind] = val
        i += 1
    return MemAccessFeature(name, **vals)


def _is_mem_keyword(f):
    return (f in MTYPES or f in DTYPES or f in DIRECTIONS
            or f.startswith(("lstrides:", "gstrides:", "afr:")))


def parse_feature(name: str) -> Feature:
    """Parse one feature name into a :class:`Feature` (raises :class:`FeatureError`)."""
    if name in _USER:
        return CallableFeature(name, _USER[name])
    if not name.startswith("f_"):
        raise FeatureError("feature names start with 'f_'", name)
    if name.startswith(OUTPUT_PREFIXES):
        return OutputFeature(name)
    if name == "f_thread_groups":
        return ThreadGroupsFeature()
    if name.startswith("f_size:"):
        p = name[7:]
        if not p.isidentifier():
            raise FeatureError("f_size: needs a parameter name", name)
        return SizeFeature(name, p)
    if name.startswith("f_sync_"):
        kind = name[7:]
        if kind not in SYNC_KINDS:
            raise FeatureError(f"unknown synchronization {kind!r}; one of {SYNC_KINDS}", name)
        return SyncFeature(name, kind)
    if name == "f_mem_access" or name.startswith("f_mem_access_"):
        return _parse_mem(name)
    if name.startswith("f_op_"):
        parts = name[5:].split("_")
        if len(parts) == 2 and parts[0] in DTYPES:
            dtype, op = parts
        elif len(parts) == 1 and parts[0] not in DTYPES:
            dtype, op = None, parts[0]
        else:
            raise FeatureError("expected f_op_<dtype>_<op> or f_op_<op> (e.g. "
                               "f_op_float32_madd)", name)
        if op not in ARITHMETIC_OPS + FUNCTION_OPS:
            raise FeatureError(f"unknown op {op!r}; one of {', '.join(ARITHMETIC_OPS)} or a "
                               "math function loopy knows (exp, sqrt, tanh, ...)", name)
        return OpFeature(name, dtype, op)
    raise FeatureError("unknown feature class; built-in: f_op_, f_mem_access, f_sync_, "
                       "f_thread_groups, f_size:, f_wall_time", name)
