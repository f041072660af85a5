"""End-to-end use: generate measurement kernels, time them, calibrate; predict and rank kernel
variants; predict a loopy kernel from saved parameters.

Ranking: at every size, the variants sorted by measured time must be sorted the same way by
predicted time (the paper's criterion for choosing among equivalent variants).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, InputWarning
from .generators import ALL_GENERATORS, KernelCollection
from .model import (
    Calibration,
    calibrate,
    check_features,
    gather_features,
    geomean_rel_error_from,
    load_params,
)
from .modelfile import tag_errors


def measurement_kernels(spec, tags=None):
    """Kernels of every tag set of the model file (or of ``tags`` alone: their errors name
    no file, as they come from the caller)."""
    coll = KernelCollection(ALL_GENERATORS, spec.match)
    if tags:
        return coll.variants(list(tags))
    if not spec.tag_sets:
        raise InputError("no measurement tag sets (model file 'measurement.tag_sets' or "
                         "--tags)", path=spec.path, field="measurement")
    out = []
    for i, ts in enumerate(spec.tag_sets):
        with tag_errors(spec.path, "measurement.tag_sets", i):
            out += coll.variants(ts)
    return out


def time_kernels(kernels, runner, progress=None):
    it = kernels if progress is None else progress(kernels)
    return [runner.time(mk) for mk in it]


def run_calibration(spec, runner, kernels=None, progress=None):
    """(Calibration, kernels, timings) for a :class:`.modelfile.ModelSpec` on ``runner``.

    ``kernels``: the measurement kernels (default: ``measurement_kernels(spec)``).
    ``progress(kernels, description=...)``: returns the kernels to iterate over, called once
    for the counting and once for the timing (a progress bar's hook)."""
    if kernels is None:
        kernels = measurement_kernels(spec)

    def stage(what):
        return None if progress is None else (lambda it: progress(it, description=what))

    # counting first: a feature the model cannot have on a kernel, too few kernels or an
    # expression that divides by a feature that is 0 stops it before any runs
    table = gather_features(spec.model, kernels, None, spec.subgroup_size,
                            progress=stage("counting"))
    check_features(spec.model, table)
    timings = time_kernels(kernels, runner, stage("timing kernels"))
    cal = calibrate(spec.model, table.set_timings(timings), initial=spec.initial,
                    device=runner.device_name, subgroup_size=spec.subgroup_size,
                    signed=spec.signed)
    return cal, kernels, timings


@dataclass
class VariantResult:
    name: str
    sizes: list
    measured_s: list
    predicted_s: list

    @property
    def rel_errors(self):
        m, p = np.array(self.measured_s), np.array(self.predicted_s)
        return (p - m) / m

    def to_dict(self):
        return {"name": self.name, "sizes": self.sizes, "measured_s": self.measured_s,
                "predicted_s": self.predicted_s,
                "rel_error": [float(x) for x in self.rel_errors],
                "geomean_rel_error": geomean_rel_error_from(self.rel_errors)}


@dataclass
class VariantEvaluation:
    variants: list
    # per size: {"sizes", "measured", "predicted", "ok"}
    ranking: list = field(default_factory=list)

    @property
    def geomean_rel_error(self):
        return geomean_rel_error_from(np.concatenate([v.rel_errors for v in self.variants]))

    @property
    def ranking_correct(self):
        return all(r["ok"] for r in self.ranking) if self.ranking else None

    def to_dict(self):
        return {"variants": [v.to_dict() for v in self.variants],
                "geomean_rel_error": self.geomean_rel_error,
                "ranking": self.ranking, "ranking_correct": self.ranking_correct}


def predict_kernels(cal_or_model, params, kernels, subgroup_size=32):
    """Predicted output (s) for each MeasurementKernel at its own sizes."""
    model = cal_or_model.model if isinstance(cal_or_model, Calibration) else cal_or_model
    table = gather_features(model, kernels, None, subgroup_size)
    return np.broadcast_to(np.asarray(model.evaluate(params, table.features), dtype=float),
                           (len(kernels),)).copy()


def evaluate_variants(spec, cal: Calibration, runner, progress=None) -> VariantEvaluation:
    """Measure and predict every evaluation variant of the model file; rank per size.
    ``progress(kernels, description=...)``: as in ``run_calibration``, once per variant."""
    coll = KernelCollection(ALL_GENERATORS, spec.match)
    results = []
    by_size = {}
    for i, entry in enumerate(spec.evaluation):
        with tag_errors(spec.path, "evaluation", i):
            kernels = coll.variants(list(entry["tags"]))
        timings = time_kernels(
            kernels, runner, None if progress is None else
            (lambda it, name=entry["name"]: progress(it, description=f"timing {name}")))
        pred = predict_kernels(cal, cal.params, kernels, spec.subgroup_size)
        vr = VariantResult(entry["name"], [dict(k.sizes) for k in kernels],
                           [t.median_s for t in timings], [float(x) for x in pred])
        results.append(vr)
        for s, m, p in zip(vr.sizes, vr.measured_s, vr.predicted_s):
            by_size.setdefault(tuple(sorted(s.items())), []).append((entry["name"], m, p))
    ranking = []
    for key, rows in sorted(by_size.items()):
        if len(rows) < 2:
            continue
        meas = [r[0] for r in sorted(rows, key=lambda r: r[1])]
        pred = [r[0] for r in sorted(rows, key=lambda r: r[2])]
        ranking.append({"sizes": dict(key), "measured": meas, "predicted": pred,
                        "ok": meas == pred})
    return VariantEvaluation(results, ranking)


def _check_tags(model, mk, kc, params_file, kernel_file):
    """Warn where the model prices tagged accesses and the kernel tags none of them: its
    parameters were calibrated for other kernels (a DG model on a matmul kernel counts every
    tagged access as 0). A kernel of one variant lacks the other variants' tags, so only none
    at all is suspect."""
    from .features import MemAccessFeature, parse_feature

    wanted = {f.tag for f in map(parse_feature, model.base_features())
              if isinstance(f, MemAccessFeature) and f.tag}
    have = set(mk.access_tags) | {t for a in kc.accesses for t in a.tags}
    if wanted and not wanted & have:
        warnings.warn(InputWarning(
            f"{params_file}: model {model.name!r} prices accesses tagged "
            f"{', '.join(sorted(wanted))}, and kernel {mk.name} ({kernel_file}) tags none of "
            "them: these parameters were calibrated for other kernels"), stacklevel=3)


def predict_loopy(kernel_file, params_file, sizes):
    """Predict a loopy kernel's execution time from parameters saved by ``gpuproj calibrate``.

    ``kernel_file``: a kernel file (see :mod:`.modelfile`); ``params_file``: the JSON written by
    :meth:`.model.Calibration.save`; ``sizes``: ``{"n": 1024}`` or a list of such dicts.
    Returns, per size, ``{"kernel", "sizes", "time_s", "terms": {term: s}, "term_labels":
    {term: short name}, "features": {...}, "device"}`` (a list when ``sizes`` is a list).
    """
    from . import expression as E
    from .counting import check_size_values, count_kernel
    from .modelfile import load_kernel_file, loopy_error

    model, params, record = load_params(params_file)
    mk = load_kernel_file(kernel_file)
    sg = int(record.get("subgroup_size", 32))
    many = isinstance(sizes, (list, tuple))
    out = []
    import islpy
    from loopy.diagnostic import LoopyError, UnableToDetermineAccessRangeError

    try:
        kc = count_kernel(mk.program, sg)
    except (LoopyError, UnableToDetermineAccessRangeError, islpy.Error) as e:
        # a kernel that loopy cannot schedule or count
        raise InputError(f"loopy cannot count the kernel: {loopy_error(e)}",
                         path=kernel_file) from None
    _check_tags(model, mk, kc, params_file, kernel_file)
    parts = E.terms(model.expr)
    labels = {str(term): E.term_label(term) for term in parts}
    for s in (sizes if many else [sizes]):
        unknown = sorted(set(dict(s)) - set(kc.params))
        if unknown:  # a name the kernel does not have sizes nothing: a typo, most likely
            raise InputError(f"kernel {kc.name!r} has no size parameter {', '.join(unknown)} "
                             f"(it has {', '.join(sorted(kc.params)) or 'none'})",
                             path=kernel_file, field="sizes")
        given = check_size_values(dict(s))
        s = {**mk.sizes, **given}
        try:
            cv = kc.evaluate(s)
        except InputError as e:  # a size neither the kernel file nor the call gives
            raise InputError(e.message, path=kernel_file, field=e.field) from None
        except ValueError as e:  # isl: the sizes break the kernel's assumptions
            named = f"sizes {given}" if given else "the kernel file's sizes"
            raise InputError(f"{named} are outside the kernel's domain ({e})",
                             path=kernel_file, field="sizes") from None
        feats = model.feature_values(cv, mk.access_tags)
        env = {**feats, **params}
        text = " ".join(model.expression.split())  # a YAML folded expression ends in \n
        t = model.evaluate_finite(model.expr, env, f"the expression {text}",
                                  f"kernel {mk.name} at sizes {s}", field=model.key("expression"))
        terms = {str(term): float(term.evaluate(env)) for term in parts}
        if t <= 0:
            # a fit can give a cost a negative value (docs/calibrated.md); where it outweighs
            # the others the time is no time
            neg = ", ".join(k for k, v in params.items() if v < 0)
            raise InputError(f"prediction is {t:.3g} s for sizes {s}, not positive "
                             + (f"(negative parameters: {neg})" if neg else
                                "(every cost the kernel has is 0)"), path=params_file)
        out.append({"kernel": mk.name, "sizes": s, "time_s": t, "terms": terms,
                    "term_labels": labels, "features": feats,
                    "device": record.get("device", "")})
    return out if many else out[0]
