"""Calibrated cost models: a model expression over features and parameters, its calibration by
nonlinear least squares and its predictions (Stevens & Kloeckner, Secs. 6-7).

* :class:`CostModel` holds the output feature (``f_wall_time``), the expression and any user-defined
  features (expressions over other features);
* :func:`gather_features` evaluates every input feature for every (kernel, sizes) row;
  :func:`check_features` refuses what no timing can mend (fewer kernels than parameters, a
  division by a feature that is 0), so that it is said before any kernel runs;
* :func:`calibrate` fits the parameters with Levenberg-Marquardt (``scipy.optimize.least_squares
  (method="lm")``, the paper used ``optimize.leastsq``, the same MINPACK code) and the symbolic
  Jacobian. With ``scale_by_output`` (the paper's ``scale_features_by_output``, used in all its
  examples) the residual is relative: r_k = 1 - g_k(p)/t_k. For a model that is homogeneous of
  degree one in its features this equals dividing every input feature by the output and fitting
  to 1, as the paper describes; for the overlap model it keeps ŝ's argument in seconds, so the
  calibrated ``p_edge`` (1/s) applies unchanged at prediction time;
* parameters are fitted as p_i = s_i q_i with s_i a starting value, so LM sees numbers near 1
  although costs are ~1e-12 s (a start of 0 from ``initial`` keeps q_i = 0, see ``_scale``);
  parameters the measurements do not determine are warned about by name;
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
from ..files import parse_json, read_text, write_text
from . import expression as E
from .counting import check_subgroup_size
from .features import MemAccessFeature, OpFeature, SyncFeature, parse_feature

PARAMS_FORMAT = "gpuproj-calibrated-params"
PARAMS_VERSION = 1


@dataclass
class CostModel:
    """Output feature + expression (+ user features ``{"f_name": "expression"}``)."""

    output: str
    expression: str
    user_features: dict = field(default_factory=dict)
    name: str = ""
    path: object = None
    # where the model's keys sit in its file: "" in a model file, "model." in a parameter file
    keys: str = ""

    def key(self, name: str) -> str:
        """The field an error names for the model's key ``name``."""
        return self.keys + name

    def __post_init__(self):
        self.expr = E.parse(self.expression, path=self.path, field=self.key("expression"))
        self._user = {}
        if not isinstance(self.user_features, dict):
            raise InputError("expected a mapping of feature name to expression",
                             path=self.path, field=self.key("features"))
        for fname, text in self.user_features.items():
            if not isinstance(fname, str) or not isinstance(text, str | int | float):
                raise InputError(f"expected an expression for a feature name, found "
                                 f"{fname!r}: {text!r}", path=self.path, field=self.key("features"))
            text = str(text)
            if not fname.startswith("f_"):
                raise InputError(f"user feature names start with 'f_': {fname!r}",
                                 path=self.path, field=self.key("features"))
            ue = E.parse(text, path=self.path, field=self.key(f"features.{fname}"))
            if ue.params():
                raise InputError(f"user feature {fname} may not use parameters "
                                 f"{sorted(ue.params())}", path=self.path,
                                 field=self.key("features"))
            self._user[fname] = ue
        try:
            out = parse_feature(self.output)
        except InputError as e:
            raise InputError(e.message, path=self.path, field=self.key("output")) from None
        if not out.is_output:
            raise InputError(f"output feature {self.output!r} is not a measured time "
                             "(use f_wall_time)", path=self.path, field=self.key("output"))
        self.params = sorted(self.expr.params())
        if not self.params:
            raise InputError("the expression has no parameters (p_...)", path=self.path,
                             field=self.key("expression"))
        self.features = sorted(self.expr.features())
        for f in self.base_features():
            try:
                feat = parse_feature(f)  # raise on bad names now, not mid-calibration
            except InputError as e:
                raise InputError(e.message, path=self.path, field=self.key("expression")) from None
            if feat.is_output:
                raise InputError(f"{f} is measured, not counted: it can only be the output",
                                 path=self.path, field=self.key("expression"))

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
                                 path=self.path, field=self.key("features"))
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
        """Every feature of the expression (user features included) for one count set; a
        feature the kernel lacks (``f_size:`` of another kernel's size) or a user feature
        that is not a finite number there (a division by a feature that is 0) is an
        ``InputError`` naming the model's file and the kernel."""
        base, order = self._expanded()
        try:
            vals = {f: parse_feature(f).evaluate(cv, access_tags) for f in base}
        except InputError as e:
            raise InputError(e.message, path=self.path, field=self.key("expression")) from None
        for name in order:
            vals[name] = self.evaluate_finite(
                self._user[name], vals, f"user feature {name} = {self.user_features[name]}",
                f"kernel {cv.counts.name} at sizes {cv.sizes}", field=self.key(f"features.{name}"))
        return vals

    def evaluate(self, params: dict, features: dict):
        env = dict(features)
        env.update(params)
        return self.expr.evaluate(env)

    def evaluate_finite(self, expr, env, what, where, field) -> float:
        """``expr`` at ``env`` (one kernel's features, as floats), which must be a finite
        number: Python floats raise on a division by zero, numpy's give inf or nan."""
        with np.errstate(all="ignore"):
            try:
                v = float(expr.evaluate(env))
            except (ZeroDivisionError, OverflowError) as e:
                v, why = math.nan, str(e)
            else:
                why = f"it is {v}"
        if not math.isfinite(v):
            raise InputError(f"{what} is not a finite number for {where}: {why}",
                             path=self.path, field=field)
        return v

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
    dtypes: dict = field(default_factory=dict)  # memory feature -> dtypes of its accesses

    def __len__(self):
        return len(self.labels)

    def set_timings(self, timings):
        """Set the measured output (s) from :class:`.timing.Timing` s, one per row."""
        self.output_s = np.array([t.median_s for t in timings], dtype=float)
        return self


def gather_features(model: CostModel, kernels, timings=None, subgroup_size=32,
                    progress=None) -> FeatureTable:
    """Evaluate the model's features for ``kernels`` (MeasurementKernels); ``timings`` is a list
    of :class:`.timing.Timing` aligned with ``kernels`` (None: output left NaN)."""
    from .counting import count_kernel

    rows, labels, gran, dtypes = [], [], {}, {}
    it = kernels if progress is None else progress(kernels)
    for mk in it:
        cv = count_kernel(mk.program, subgroup_size).evaluate(mk.sizes)
        rows.append(model.feature_values(cv, mk.access_tags))
        for f in model.base_features():
            feat = parse_feature(f)
            gran.setdefault(f, set()).update(feat.granularities(cv, mk.access_tags))
            if isinstance(feat, MemAccessFeature):
                dtypes.setdefault(f, set()).update(feat.dtypes(cv, mk.access_tags))
        labels.append(mk.label())
    names = sorted(rows[0]) if rows else []
    feats = {n: np.array([r[n] for r in rows], dtype=float) for n in names}
    table = FeatureTable(labels, feats, np.full(len(rows), np.nan), gran, dtypes)
    return table if timings is None else table.set_timings(timings)


@dataclass
class Calibration:
    """Fitted parameters of one model on one device, with how well they fit."""

    model: CostModel
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
                "fit_success": self.success, "fit_message": self.message,
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


def load_params(path) -> tuple[CostModel, dict, dict]:
    """(model, params, the whole record) from a JSON file written by :meth:`Calibration.save`."""
    p = Path(path)
    d = parse_json(read_text(p, strict=True), p, "calibrated parameters (JSON)")
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
    model = CostModel(m["output"], m["expression"], m.get("features") or {}, str(m.get("name", "")),
                  path=p, keys="model.")
    if not isinstance(d.get("params"), dict):
        raise InputError("expected a mapping of parameter to value", path=p, field="params")
    params = {k: _finite(v, p, f"params.{k}") for k, v in d["params"].items()}
    check_subgroup_size(d.get("subgroup_size", 32), p)
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


# Decades around 20 / median(t) from which the ``p_edge``-like parameters start, the fit with
# the least residual kept. The overlap model's residual has a local minimum for each way ŝ can
# saturate: fitting the DG and matmul model files to times they generated themselves, from
# 20 / median(t) alone, gave p_edge 1.8e9 for a true 1e4 and 152 for 1e5 (errors up to 8 %);
# from every decade, the true values (tests/test_calibrated_model.py).
EDGE_START_DECADES = tuple(range(-3, 7))


def _start(model: CostModel, table: FeatureTable, initial: dict):
    """Starting values: user ``initial``; otherwise non-negative least squares of the linear
    surrogate (every ŝ = 1/2) on relative rows; ``p_edge``-like parameters (not in the
    surrogate) start at 20 / median(t) so tanh's argument is O(1) (``calibrate`` tries the
    decades around it, ``EDGE_START_DECADES``). Returns (start values, the parameters
    started so)."""
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
    edge = set()
    for p in model.params:
        if p in initial:
            start[p] = float(initial[p])
        elif p not in start:
            start[p] = 20.0 / float(np.median(t))
            edge.add(p)
    return start, edge


def calibrate(model: CostModel, table: FeatureTable, *, scale_by_output=True, initial=None,
              device="", subgroup_size=32, signed=()) -> Calibration:
    """Fit ``model``'s parameters to ``table`` (Levenberg-Marquardt, symbolic Jacobian).

    ``signed``: parameters allowed to be negative (others are flagged when they come out
    negative: a negative cost is inconsistent with a cost-explanatory model).
    """
    from scipy.optimize import least_squares

    initial = dict(initial or {})
    for p, v in initial.items():  # a model file's are checked when it is read
        _finite(v, model.path, f"initial.{p}")
    t = np.asarray(table.output_s, dtype=float)
    bad = ~np.isfinite(t) | (t <= 0)
    if bad.any():  # the kernel, so that its timing can be looked at
        k = int(np.argmax(bad))
        raise InputError(f"every measured output must be a positive time: kernel "
                         f"{table.labels[k]} measured {t[k]} s", path=model.path,
                         field=model.key("output"))
    check_features(model, table)
    npar = len(model.params)
    start, edge_params = _start(model, table, initial)
    names = model.params
    jac_exprs = E.jacobian(model.expr, names)
    feats = dict(table.features)
    w = 1.0 / t if scale_by_output else np.ones_like(t)
    # p = s q with q0 = 1, so LM sees numbers near 1; a start of 0 (from ``initial``) stays
    # 0 with q0 = 0 and the scale of a p whose term alone would make the kernels' times
    s = np.array([start[p] or _scale(jac_exprs[p], {**feats, **start}, t) for p in names])
    q0 = np.array([start[p] / si for p, si in zip(names, s)])

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

    def fit(q_start):
        with np.errstate(over="ignore", invalid="ignore"):
            r = least_squares(resid, q_start, jac=jac, method="lm", xtol=1e-12, ftol=1e-12,
                              gtol=1e-12, max_nfev=2000 * (npar + 1))
            return r, float(np.linalg.norm(r.fun)) if np.all(np.isfinite(r.fun)) else np.inf

    def fit_other(q_start):
        try:
            return fit(q_start)
        except ValueError:  # the model is not finite there (exp(p x) overflows): no start
            return None, np.inf

    edge = np.array([p in edge_params for p in names])
    # the usual start first: where it fails, its error is the one to see, as one line naming
    # the file and the starting values (scipy's names neither)
    try:
        first = fit(q0)
    except ValueError as e:  # the model is not finite there (exp(p x) overflows)
        text = " ".join(model.expression.split())  # a YAML folded expression ends in \n
        starts = ", ".join(f"{p} = {start[p]:.3g}" + (" (initial:)" if p in initial else "")
                           for p in names)
        raise InputError(f"the fit cannot start: at {starts} the expression {text} is not a "
                         f"finite number for some measurement kernel (scipy: {e})",
                         path=model.path, field=model.key("expression")) from None
    fits = [first] + [fit_other(np.where(edge, q0 * 10.0 ** k, q0))
                      for k in EDGE_START_DECADES if k and edge.any()]
    res = min(fits, key=lambda rn: rn[1])[0]
    params = {p: float(v) for p, v in zip(names, s * res.x)}
    g = np.asarray(model.expr.evaluate({**feats, **params}), dtype=float)
    g = np.broadcast_to(g, t.shape)
    rel = (g - t) / t
    resid_norm = float(np.linalg.norm(resid(res.x)))
    warns = [f"{p} = {v:.3g} < 0: a negative cost is a sign of a bad model (or of a "
             "measurement set that does not separate this cost)"
             for p, v in params.items() if v < 0 and p not in signed]
    with np.errstate(over="ignore", invalid="ignore"):
        warns += _undetermined(names, jac(res.x), params)
    if not res.success:  # MINPACK ran out of evaluations: the parameters are where it stopped
        warns.append(f"the least-squares fit did not converge ({res.message}): the parameters "
                     "are where it stopped, not a fit")
    cal = Calibration(model, params, resid_norm, rel, device, subgroup_size, scale_by_output,
                      len(t), warns, success=bool(res.success), message=str(res.message))
    cal.table = parameter_table(model, params, table.granularities, subgroup_size,
                                table.dtypes)
    return cal


def check_features(model: CostModel, table: FeatureTable):
    """Raise the ``InputError`` that makes ``table`` impossible to calibrate on whatever the
    kernels' times: fewer kernels than parameters, a feature it lacks, a part of the expression
    that is not a finite number (:func:`_check_finite`). ``calibrate`` checks it; so does
    ``study.run_calibration``, before the timing, as the features are all it needs."""
    npar = len(model.params)
    if len(table) < npar:
        raise InputError(f"{len(table)} measurements cannot determine {npar} parameters; add "
                         "measurement kernels", path=model.path, field="measurement")
    missing = set(model.features) - set(table.features)
    if missing:
        raise InputError(f"feature table lacks {sorted(missing)}", path=model.path,
                         field=model.key("features"))
    _check_finite(model, table)


def _check_finite(model: CostModel, table: FeatureTable):
    """A part of the expression free of parameters that is not a finite number for a kernel,
    or 0 for a kernel where the expression divides by it, is an ``InputError`` naming the
    part and the kernel: the model is inf or nan there whatever the parameters (scipy's
    error would name neither)."""
    feats = dict(table.features)
    with np.errstate(all="ignore"):
        for e in E.walk(model.expr):
            if isinstance(e, E.Div) and e.b.features() and not e.b.params():
                zero = np.broadcast_to(np.asarray(e.b.evaluate(feats)) == 0, (len(table),))
                if zero.any():
                    raise InputError(f"the expression divides by {e.b}, which is 0 for kernel "
                                     f"{table.labels[int(np.argmax(zero))]}", path=model.path,
                                     field=model.key("expression"))
            if e.features() and not e.params():
                v = np.broadcast_to(np.asarray(e.evaluate(feats), dtype=float), (len(table),))
                if not np.isfinite(v).all():
                    k = int(np.argmax(~np.isfinite(v)))
                    raise InputError(f"{e} is {v[k]} for kernel {table.labels[k]}",
                                     path=model.path, field=model.key("expression"))


def _scale(djac: E.Expr, env: dict, t: np.ndarray) -> float:
    """The value of a parameter whose term alone would make the median kernel's time (t over
    its derivative), as the scale of a parameter that starts at 0; 1 where it has no term."""
    with np.errstate(all="ignore"):
        d = np.abs(np.broadcast_to(np.asarray(djac.evaluate(env), dtype=float), t.shape))
    ok = np.isfinite(d) & (d > 0)
    return float(np.median(t[ok] / d[ok])) if ok.any() else 1.0


def _undetermined(names, J, params) -> list:
    """Warnings for parameters the measurements do not determine at the fit: a Jacobian column
    that is 0 for every kernel (a feature that is 0 in all of them: a misspelt tag, a missing
    microbenchmark), or columns in proportion (costs no measurement tells apart)."""
    out = []
    norms = np.linalg.norm(J, axis=0)
    for p, n in zip(names, norms):
        if n == 0:
            out.append(f"{p} is not determined by the measurements: it changes no measurement "
                       f"kernel's time (its features are 0 in all of them?); {params[p]:.3g} "
                       "is its starting value, not a fit")
    live = [i for i, n in enumerate(norms) if np.isfinite(n) and n > 0]
    if len(live) > 1 and np.isfinite(J[:, live]).all():
        A = J[:, live] / norms[live]
        _, sv, vt = np.linalg.svd(A, full_matrices=False)
        if sv[-1] < 1e-10 * sv[0]:
            tied = [names[live[i]] for i in np.flatnonzero(np.abs(vt[-1]) > 0.1)]
            out.append(f"{', '.join(tied)} are not told apart by the measurements: their "
                       "terms change the measurement kernels' times in proportion; add "
                       "kernels that vary one and not the others")
    return out


def parameter_table(model: CostModel, params: dict, granularities: dict, subgroup_size=32,
                    dtypes=None):
    """One row per parameter: the feature it multiplies (when its term is ``p`` times features,
    user features that are such products expanded), the modelled cost granularity (MCG) and
    the implied throughput, as in the paper's Table 3.

    MCG: that of the one feature counted (``granularities``: feature -> the granularities of
    its counts); a per-work-item synchronization count times ``f_thread_groups``
    (``p_barrier * f_sync_barrier_local * f_thread_groups``) is per work-group, the paper's
    "local barrier ... WG". Rate: (work-items per counted unit: 1 for work-item, the sub-group
    size for sub-group granularity) x (flops per op: 2 for madd, else 1; or bytes per access,
    from the data type the feature's name gives, else from ``dtypes``: feature -> the data
    types of the accesses it counted, as for a tagged access) / p.

    >>> m = CostModel("f_wall_time", "p_b * f_sync_barrier_local * f_thread_groups"
    ...           " + p_a * f_mem_access_tag:aLD")
    >>> rows = parameter_table(m, {"p_a": 4e-12, "p_b": 1e-13},
    ...     {"f_mem_access_tag:aLD": {"workitem"}, "f_sync_barrier_local": {"workitem"},
    ...      "f_thread_groups": {"workgroup"}}, dtypes={"f_mem_access_tag:aLD": {"float32"}})
    >>> [(r["param"], r["granularity"], r["rate"], r["rate_unit"]) for r in rows]
    [('p_a', 'workitem', 1000000000000.0, 'B/s'), ('p_b', 'workgroup', None, None)]
    """
    dtypes = dtypes or {}
    products = {}
    for p, written, feats in _cost_products(model):
        products.setdefault(p, (written, feats))
    rows = []
    for p in model.params:
        v = params[p]
        written, feats = products.get(p, (None, []))
        row = {"param": p, "value_s": v, "feature": written, "granularity": _mcg(
            feats, granularities), "rate": None, "rate_unit": None}
        per_unit = {"workitem": 1, "subgroup": subgroup_size}.get(row["granularity"])
        feat = parse_feature(feats[0]) if len(feats) == 1 else None
        if per_unit and v > 0:
            if isinstance(feat, OpFeature):
                row["rate"] = per_unit * (2 if feat.op == "madd" else 1) / v
                row["rate_unit"] = "flop/s"
            elif isinstance(feat, MemAccessFeature):
                types = {feat.dtype} if feat.dtype else dtypes.get(feats[0], set())
                if len(types) == 1:
                    row["rate"] = per_unit * np.dtype(next(iter(types))).itemsize / v
                    row["rate_unit"] = "B/s"
                else:  # no access counted, or of several sizes: no bytes per access
                    row["rate"] = per_unit / v
                    row["rate_unit"] = "access/s"
        rows.append(row)
    return rows


def _cost_products(model: CostModel):
    """(parameter, the product as written, its built-in features) for every product of one
    parameter and features anywhere in the expression (also inside ``overlap()``); a user
    feature that is itself a product of features is replaced by them."""

    def factors(e):
        return factors(e.a) + factors(e.b) if isinstance(e, E.Mul) else [e]

    def expand(names):
        """The built-in features of a product of ``names``; [] where one of them, at any
        depth, is a user feature that is no product of features (no granularity then)."""
        out = []
        for name in names:
            ue = model._user.get(name)
            if ue is None:
                out.append(name)
                continue
            fs = factors(ue)
            inner = expand([f.name for f in fs]) if all(isinstance(f, E.Sym) for f in fs) else []
            if not inner:
                return []
            out += inner
        return out

    todo = [model.expr]
    while todo:
        e = todo.pop(0)
        fs = factors(e)
        names = [f.name for f in fs if isinstance(f, E.Sym)]
        ps = [n for n in names if n.startswith("p_")]
        if len(fs) > 1 and len(names) == len(fs) and len(ps) == 1:
            feats = [n for n in names if n != ps[0]]
            yield ps[0], " * ".join(feats), expand(feats)
        else:
            todo += list(e.children())


def _mcg(feats, granularities):
    """The modelled cost granularity of a product of built-in features (see
    :func:`parameter_table`); None where it has none."""
    if not feats:
        return None
    if len(feats) == 1:
        gs = granularities.get(feats[0], set())
        return next(iter(gs)) if len(gs) == 1 else ("mixed" if gs else None)
    rest = [f for f in feats if f != "f_thread_groups"]
    if len(rest) == len(feats) - 1 and all(isinstance(parse_feature(f), SyncFeature)
                                           for f in rest):
        return "workgroup"
    return None


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

