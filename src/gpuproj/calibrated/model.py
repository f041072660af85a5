"""Calibrated cost models: a model expression over features and parameters, its calibration by
nonlinear least squares and its predictions (Stevens & Kloeckner, Secs. 6-7).

* :class:`Model` holds the output feature (``f_wall_time``), the expression and any user-defined
  features (expressions over other features);
* :func:`gather_features` evaluates every input feature for every (kernel, sizes) row;
* :func:`calibrate` fits the parameters with Levenberg-Marquardt (``scipy.optimize.least_squares
  (method="lm")``, the paper used ``optimize.leastsq``, the same MINPACK code) and the symbolic
  Jacobian. With ``scale_by_output`` (the paper's ``scale_features_by_output``, used in all its
  examples) the residual is relative: r_k = 1 - g_k(p)/t_k. For a model that is homogeneous of
  degree one in its features this equals dividing every input feature by the output and fitting
  to 1, as the paper describes; for the overlap model it keeps ŝ's argument in seconds, so the
  calibrated ``p_edge`` (1/s) applies unchanged at prediction time;
* parameters are fitted as p_i = s_i q_i with s_i a starting value, so LM sees numbers near 1
  although costs are ~1e-12 s;
* :class:`Calibration` reports the residual norm, a parameter table with implied throughputs
  (the paper's Table 3) and flags negative costs as a sign of a bad model; it saves to JSON.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..files import read_text, write_text
from . import expression as E
from .features import MemAccessFeature, OpFeature, parse_feature

PARAMS_FORMAT = "gpuproj-calibrated-params"
PARAMS_VERSION = 1


@dataclass
class Model:
    """Output feature + expression (+ user features ``{"f_name": "expression"}``)."""

    output: str
    expression: str
    user_features: dict = field(default_factory=dict)
    name: str = ""
    path: object = None

    def __post_init__(self):
        self.expr = E.parse(self.expression, path=self.path)
        self._user = {}
        if not isinstance(self.user_features, dict):
            raise InputError("expected a mapping of feature name to expression",
                             path=self.path, field="features")
        for fname, text in self.user_features.items():
            if not isinstance(fname, str) or not isinstance(text, str | int | float):
                raise InputError(f"expected an expression for a feature name, found "
                                 f"{fname!r}: {text!r}", path=self.path, field="features")
            text = str(text)
            if not fname.startswith("f_"):
                raise InputError(f"user feature names start with 'f_': {fname!r}",
                                 path=self.path, field="features")
            ue = E.parse(text, path=self.path)
            if ue.params():
                raise InputError(f"user feature {fname} may not use parameters "
                                 f"{sorted(ue.params())}", path=self.path, field="features")
            self._user[fname] = ue
        out = parse_feature(self.output)
        if not out.is_output:
            raise InputError(f"output feature {self.output!r} is not a measured time "
                             "(use f_wall_time)", path=self.path, field="output")
        self.params = sorted(self.expr.params())
        if not self.params:
            raise InputError("the expression has no parameters (p_...)", path=self.path,
                             field="expression")
        self.features = sorted(self.expr.features())
        for f in self.base_features():
            try:
                parse_feature(f)  # raise on bad names now, not mid-calibration
            except InputError as e:
                raise InputError(e.message, path=self.path, field="expression") from None

    def _expanded(self) -> tuple[list, list]:
        """(built-in features the expression needs, the user features it needs in an order
        that evaluates each after those it uses); user features that refer to each other in a
        cycle are an ``InputError`` naming the cycle."""
        base, order, state = set(), [], {}

        def visit(f, chain):
            if f not in self._user:
                base.add(f)
            elif state.get(f) == "open":
                raise InputError(f"user features refer to each other in a cycle: "
                                 f"{' -> '.join([*chain[chain.index(f):], f])}",
                                 path=self.path, field="features")
            elif f not in state:
                state[f] = "open"
                for g in sorted(self._user[f].features()):
                    visit(g, [*chain, f])
                state[f] = "done"
                order.append(f)

        for f in self.features:
            visit(f, [])
        return sorted(base), order

    def base_features(self) -> list:
        """Built-in features needed, user features expanded."""
        return self._expanded()[0]

    def feature_values(self, cv, access_tags=None) -> dict:
        """Every feature of the expression (user features included) for one count set."""
        base, order = self._expanded()
        vals = {f: parse_feature(f).evaluate(cv, access_tags) for f in base}
        for name in order:
            vals[name] = float(self._user[name].evaluate(vals))
        return vals

    def evaluate(self, params: dict, features: dict):
        env = dict(features)
        env.update(params)
        return self.expr.evaluate(env)

    def to_dict(self):
        return {"name": self.name, "output": self.output, "expression": self.expression,
                "features": dict(self.user_features)}


@dataclass
class FeatureTable:
    """Feature values (one row per measured kernel) and the measured output in s."""

    labels: list
    features: dict  # name -> np.ndarray
    output_s: np.ndarray
    granularities: dict = field(default_factory=dict)  # feature -> set of granularities

    def __len__(self):
        return len(self.labels)


def gather_features(model: Model, kernels, timings=None, subgroup_size=32,
                    progress=None) -> FeatureTable:
    """Evaluate the model's features for ``kernels`` (MeasurementKernels); ``timings`` is a list
    of :class:`.timing.Timing` aligned with ``kernels`` (None: output left NaN)."""
    from .counting import count_kernel

    rows, labels, gran = [], [], {}
    it = kernels if progress is None else progress(kernels)
    for mk in it:
        cv = count_kernel(mk.program, subgroup_size).evaluate(mk.sizes)
        rows.append(model.feature_values(cv, mk.access_tags))
        for f in model.base_features():
            g = parse_feature(f).granularities(cv, mk.access_tags)
            gran.setdefault(f, set()).update(g)
        labels.append(mk.label())
    names = sorted(rows[0]) if rows else []
    feats = {n: np.array([r[n] for r in rows], dtype=float) for n in names}
    out = (np.array([t.median_s for t in timings], dtype=float) if timings is not None
           else np.full(len(rows), np.nan))
    return FeatureTable(labels, feats, out, gran)


@dataclass
class Calibration:
    """Fitted parameters of one model on one device, with how well they fit."""

    model: Model
    params: dict
    residual: float  # Euclidean norm of the (relative, when scaled) residual at the solution
    rel_errors: np.ndarray
    device: str = ""
    subgroup_size: int = 32
    scaled: bool = True
    n_kernels: int = 0
    warnings: list = field(default_factory=list)
    table: list = field(default_factory=list)
    success: bool = True
    message: str = ""

    def predict(self, features: dict):
        return self.model.evaluate(self.params, features)

    def to_dict(self):
        import gpuproj

        try:
            import loopy

            lv = ".".join(map(str, loopy.VERSION))
        except ImportError:  # loopy absent: prediction from saved params still works
            lv = None
        return {"format": PARAMS_FORMAT, "version": PARAMS_VERSION,
                "device": self.device, "subgroup_size": self.subgroup_size,
                "model": self.model.to_dict(), "params": self.params,
                "residual": self.residual, "scaled_by_output": self.scaled,
                "n_kernels": self.n_kernels,
                "geomean_rel_error_calibration": geomean_rel_error_from(self.rel_errors),
                "warnings": self.warnings, "table": self.table,
                "gpuproj_version": gpuproj.__version__, "loopy_version": lv,
                "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}

    def save(self, path):
        write_text(path, json.dumps(self.to_dict(), indent=2, default=_json_default))


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, set):
        return sorted(o)
    raise TypeError(type(o))


def load_params(path) -> tuple[Model, dict, dict]:
    """(model, params, the whole record) from a JSON file written by :meth:`Calibration.save`."""
    p = Path(path)
    try:
        d = json.loads(read_text(p, strict=True))
    except json.JSONDecodeError as e:
        raise InputError(f"cannot read calibrated parameters: {e}", path=p) from None
    if not isinstance(d, dict):
        raise InputError(f"not a {PARAMS_FORMAT} file (expected a JSON object)", path=p)
    if d.get("format") != PARAMS_FORMAT:
        raise InputError(f"not a {PARAMS_FORMAT} file", path=p, field="format")
    if d.get("version") != PARAMS_VERSION:
        raise InputError(f"unsupported version {d.get('version')!r} (this gpuproj reads "
                         f"{PARAMS_VERSION!r})", path=p, field="version")
    if not isinstance(d.get("device", ""), str):
        raise InputError(f"expected the device's name, found {d['device']!r}", path=p,
                         field="device")
    m = d.get("model")
    if not isinstance(m, dict):
        raise InputError("expected a mapping with output and expression", path=p, field="model")
    for key in ("output", "expression"):
        if not isinstance(m.get(key), str):
            raise InputError(f"expected text, found {m.get(key)!r}", path=p, field=f"model.{key}")
    model = Model(m["output"], m["expression"], m.get("features") or {}, str(m.get("name", "")),
                  path=p)
    if not isinstance(d.get("params"), dict):
        raise InputError("expected a mapping of parameter to value", path=p, field="params")
    params = {k: _finite(v, p, f"params.{k}") for k, v in d["params"].items()}
    sg = d.get("subgroup_size", 32)
    if isinstance(sg, bool) or not isinstance(sg, int) or sg < 1:
        raise InputError("must be a positive integer", path=p, field="subgroup_size")
    missing = set(model.params) - set(params)
    if missing:
        raise InputError(f"parameters {sorted(missing)} missing", path=p, field="params")
    return model, params, d


def _finite(v, path, field) -> float:
    try:
        if not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v):
            return float(v)
    except OverflowError:  # an integer beyond any float
        pass
    raise InputError(f"expected a finite number, found {v!r}", path=path, field=field)


def geomean_rel_error_from(rel):
    rel = np.abs(np.asarray(rel, dtype=float))
    rel = rel[np.isfinite(rel)]
    if not len(rel):
        return float("nan")
    # Exact zeros would make the geometric mean 0; floor them at 1e-12.
    return float(np.exp(np.mean(np.log(np.maximum(rel, 1e-12)))))


def _start(model: Model, table: FeatureTable, initial: dict):
    """Starting values: user ``initial``; otherwise non-negative least squares of the linear
    surrogate (every ŝ = 1/2) on relative rows; ``p_edge``-like parameters (not in the
    surrogate) start at 20 / median(t) so tanh's argument is O(1)."""
    from scipy.optimize import nnls

    t = table.output_s
    sur = E.linear_surrogate(model.expr)
    lin = [p for p in model.params if p in sur.params() and p not in initial]
    start = {}
    feats = {f: table.features[f] for f in table.features}
    if lin and E.is_linear_in(sur, lin):
        env0 = {**feats, **{p: 0.0 for p in model.params}, **initial}
        base = np.broadcast_to(np.asarray(sur.evaluate(env0), dtype=float), t.shape)
        cols = []
        for p in lin:
            col = np.broadcast_to(np.asarray(sur.diff(p).evaluate({**env0}), dtype=float),
                                  t.shape)
            cols.append(col / t)
        A = np.column_stack(cols)
        b = 1.0 - base / t
        scale = np.where(A.max(axis=0) > 0, A.max(axis=0), 1.0)
        x, _ = nnls(A / scale, b)
        x = x / scale
        for p, v, s in zip(lin, x, scale):
            # A zero start would freeze p = s q; use a small cost instead.
            start[p] = float(v) if v > 0 else 1e-3 / s / max(len(lin), 1)
    for p in model.params:
        if p in initial:
            start[p] = float(initial[p])
        elif p not in start:
            start[p] = 20.0 / float(np.median(t))
    return start


def calibrate(model: Model, table: FeatureTable, *, scale_by_output=True, initial=None,
              device="", subgroup_size=32, signed=()) -> Calibration:
    """Fit ``model``'s parameters to ``table`` (Levenberg-Marquardt, symbolic Jacobian).

    ``signed``: parameters allowed to be negative (others are flagged when they come out
    negative: a negative cost is inconsistent with a cost-explanatory model).
    """
    from scipy.optimize import least_squares

    initial = dict(initial or {})
    t = np.asarray(table.output_s, dtype=float)
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise InputError("every measured output must be a positive time", field="output")
    npar = len(model.params)
    if len(t) < npar:
        raise InputError(f"{len(t)} measurements cannot determine {npar} parameters; add "
                         "measurement kernels", field="measurement")
    missing = set(model.features) - set(table.features)
    if missing:
        raise InputError(f"feature table lacks {sorted(missing)}", field="features")
    start = _start(model, table, initial)
    names = model.params
    s = np.array([start[p] if start[p] != 0 else 1.0 for p in names])
    jac_exprs = E.jacobian(model.expr, names)
    feats = dict(table.features)
    w = 1.0 / t if scale_by_output else np.ones_like(t)

    def env(q):
        d = dict(feats)
        d.update({p: v for p, v in zip(names, s * q)})
        return d

    def resid(q):
        g = np.broadcast_to(np.asarray(model.expr.evaluate(env(q)), dtype=float), t.shape)
        return (t - g) * w

    def jac(q):
        e = env(q)
        cols = [np.broadcast_to(np.asarray(jac_exprs[p].evaluate(e), dtype=float), t.shape)
                for p in names]
        # r = (t - g) w, p = s q  ->  dr/dq_i = -w dg/dp_i s_i
        return -(np.column_stack(cols) * w[:, None]) * s[None, :]

    q0 = np.ones(npar)
    method = "lm" if len(t) >= npar else "trf"
    with np.errstate(over="ignore", invalid="ignore"):
        res = least_squares(resid, q0, jac=jac, method=method, xtol=1e-12, ftol=1e-12,
                            gtol=1e-12, max_nfev=2000 * (npar + 1))
    params = {p: float(v) for p, v in zip(names, s * res.x)}
    g = np.asarray(model.expr.evaluate({**feats, **params}), dtype=float)
    g = np.broadcast_to(g, t.shape)
    rel = (g - t) / t
    resid_norm = float(np.linalg.norm(resid(res.x)))
    warns = [f"{p} = {v:.3g} < 0: a negative cost is a sign of a bad model (or of a "
             "measurement set that does not separate this cost)"
             for p, v in params.items() if v < 0 and p not in signed]
    cal = Calibration(model, params, resid_norm, rel, device, subgroup_size, scale_by_output,
                      len(t), warns, success=bool(res.success), message=str(res.message))
    cal.table = parameter_table(model, params, table.granularities, subgroup_size)
    return cal


def parameter_table(model: Model, params: dict, granularities: dict, subgroup_size=32):
    """One row per parameter: the feature it multiplies (when the term is ``p * f``), the
    modelled cost granularity and the implied throughput, as in the paper's Table 3.

    Rate: (work-items per counted unit: 1 for work-item, the sub-group size for sub-group
    granularity) x (flops per op: 2 for madd, else 1; or bytes per access) / p.
    """
    rows = []
    pairs = {}
    todo = [model.expr]
    while todo:  # every p * f product anywhere in the expression (also inside overlap())
        term = todo.pop(0)
        todo += list(term.children())
        if isinstance(term, E.Mul) and isinstance(term.a, E.Sym) and isinstance(term.b, E.Sym):
            a, b = term.a.name, term.b.name
            if a.startswith("p_") and b.startswith("f_"):
                pairs.setdefault(a, b)
            elif b.startswith("p_") and a.startswith("f_"):
                pairs.setdefault(b, a)
    for p in model.params:
        v = params[p]
        f = pairs.get(p)
        row = {"param": p, "value_s": v, "feature": f, "granularity": None, "rate": None,
               "rate_unit": None}
        if f is not None:
            gs = granularities.get(f, set())
            g = next(iter(gs)) if len(gs) == 1 else ("mixed" if gs else None)
            row["granularity"] = g
            feat = parse_feature(f) if f not in model._user else None
            per_unit = {"workitem": 1, "subgroup": subgroup_size}.get(g)
            if per_unit and v > 0 and feat is not None:
                if isinstance(feat, OpFeature):
                    row["rate"] = per_unit * (2 if feat.op == "madd" else 1) / v
                    row["rate_unit"] = "flop/s"
                elif isinstance(feat, MemAccessFeature) and feat.dtype:
                    row["rate"] = per_unit * np.dtype(feat.dtype).itemsize / v
                    row["rate_unit"] = "B/s"
                elif isinstance(feat, MemAccessFeature):
                    row["rate"] = per_unit / v
                    row["rate_unit"] = "access/s"
        rows.append(row)
    return rows


def format_table(rows) -> str:
    """The parameter table as aligned text."""
    lines = [f"{'parameter':<14} {'value (s)':>11} {'MCG':<9} {'rate':>11}  feature"]
    for r in rows:
        rate = f"{r['rate']:.3g} {r['rate_unit']}" if r["rate"] else ""
        g = {"workitem": "WI", "subgroup": "SG", "workgroup": "WG", "kernel": "K"}.get(
            r["granularity"], r["granularity"] or "")
        lines.append(f"{r['param']:<14} {r['value_s']:>11.3e} {g:<9} {rate:>11}  "
                     f"{r['feature'] or ''}")
    return "\n".join(lines)

