"""Saving and loading trained models without executing anything on load.

A model is two files: ``NAME.json`` (class from a fixed list, hyper-parameters, feature list,
the physics chain, ensemble weights, conformal quantiles, training-data hash, library versions,
training and cross-validation metrics) and ``NAME.npz`` (the learners' arrays: tree node
arrays, support vectors, coefficients, imputation medians), read with
``numpy.load(allow_pickle=False)``. Loaded tree ensembles predict with pure numpy, or with
scikit-learn's compiled tree code rebuilt from the same node arrays when the installed
scikit-learn is the one that saved them. Loading a model saved under other library versions
warns (``ModelVersionWarning``).
"""

from __future__ import annotations

import json
import platform
import warnings
import zipfile
from pathlib import Path

import numpy as np

from ..errors import GpuprojError, GpuprojWarning, InputError
from ..files import parse_json, read_text, write_text, writing
from .conformal import LogConformal
from .features import FeatureSpec, geomean_members
from .learners import LEARNERS, Learner
from .physics import GUARD

FORMAT = "gpuproj-learned-model"
# 2: meas_launch_overhead_s in seconds (it held microseconds) and fma_share unknown, not 0,
# where an FMA count is missing; a model of format 1 would read its inputs 10^6 off
FORMAT_VERSION = 2


class ModelVersionWarning(GpuprojWarning):
    """A saved model was trained with other library versions than the installed ones."""


def _versions() -> dict:
    import sklearn

    from .. import __version__ as gp

    return {"gpuproj": gp, "scikit-learn": sklearn.__version__, "numpy": np.__version__,
            "python": platform.python_version()}


def _classes() -> dict:
    from . import hybrids as h
    from . import models as m

    out = {c.__name__: c for c in (m.RandomForest, m.GradientBoosting, m.SupportVector,
                                   m.NearestNeighbours, m.LinearModel, m.RidgeModel,
                                   m.LassoModel, h.ResidualHybrid, h.EfficiencyHybrid,
                                   h.PhysicsBest, h.Ensemble, m.Conformal)}
    return out


def _paths(path) -> tuple[Path, Path]:
    p = Path(path)
    if p.suffix in (".json", ".npz"):
        p = p.with_suffix("")
    return p.with_name(p.name + ".json"), p.with_name(p.name + ".npz")


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and not np.isfinite(v):
        return None if np.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _float(v):
    if v == "inf":
        return np.inf
    if v == "-inf":
        return -np.inf
    return np.nan if v is None else float(v)


def _model_state(model, arrays: dict, prefix: str) -> dict:
    st = {"class": type(model).__name__, "params": model.get_params(),
          "spec": model.spec_.to_dict(), "features": list(model.features_)}
    for attr in ("chain_", "known_kernels_", "weights_", "post_", "guard_", "outside_bands_",
                 "span_"):
        if hasattr(model, attr):
            st[attr.rstrip("_")] = getattr(model, attr)
    if getattr(model, "learner_", None) is not None:
        meta, arr = model.learner_.state()
        st["learner"] = meta
        for k, v in arr.items():
            arrays[f"{prefix}learner/{k}"] = np.asarray(v)
    if hasattr(model, "members_"):
        st["members"] = [_model_state(m, arrays, f"{prefix}m{i}/")
                         for i, m in enumerate(model.members_)]
    return st


def save_model(model, path) -> tuple[Path, Path]:
    """Write a fitted learned model to ``path.json`` + ``path.npz``; returns both paths."""
    from .models import LearnedModel

    if not isinstance(model, LearnedModel) or not hasattr(model, "features_"):
        raise InputError("only a fitted learned model can be saved", path=path)
    jpath, npath = _paths(path)
    arrays: dict = {}
    # a loaded model keeps the versions it was trained with: saved again under others, its
    # file must still warn where they differ from those installed
    versions = getattr(model, "saved_versions_", None)
    doc = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "method": model.name,
        "versions": _versions() if versions is None else versions, "train": model.train_info_,
        "metrics": {"train": model.train_metrics_, "cross_validation": model.cv_metrics_},
        "conformal": model.conformal_.state() if model.conformal_ is not None else None,
        "model": _model_state(model, arrays, ""),
    }
    write_text(jpath, json.dumps(_jsonable(doc), indent=1))
    with writing(npath):
        np.savez_compressed(npath, **arrays)
    return jpath, npath


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and bool(np.isfinite(v))


def _is_strs(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_nums(v, n: int) -> bool:
    return isinstance(v, list) and len(v) == n and all(_is_num(x) for x in v)


def _is_method(name) -> bool:
    """An analytical method's name, or a ``geomean_name`` of several."""
    from ..models import is_analytical

    return isinstance(name, str) and all(
        is_analytical(m) for m in geomean_members(name) or [name])


def _needs(jpath, where: str = ""):
    """``need(ok, field, what)``: raise an ``InputError`` naming ``where.field`` of ``jpath``
    unless ``ok``."""
    def need(ok, field, what):
        if not ok:
            raise InputError(f"must be {what}", path=jpath,
                             field=".".join(p for p in (where, field) if p))
    return need


def _check_params(st, need) -> None:
    """The hyper-parameters of a model state: those the class has, of their defaults' types."""
    params = st.get("params")
    need(isinstance(params, dict), "params", "an object")
    defaults = _classes()[st["class"]]().get_params()
    # read when predicting (the others only in fit: a model saved before one was added loads)
    lack = [k for k in ("coverage", "learner", "base") if k in defaults and k not in params]
    need(not lack, "params", "an object with " + ", ".join(lack))
    for k, v in params.items():
        d = defaults.get(k, ...)
        need(d is not ..., f"params.{k}", f"one of the parameters {', '.join(defaults)}")
        if k == "coverage":
            need(v is None or (_is_num(v) and 0 < v < 1), f"params.{k}",
                 "null or a number between 0 and 1")
        elif k in ("learner", "base"):
            need(v in LEARNERS if k == "learner" else _is_method(v), f"params.{k}",
                 "a known learner" if k == "learner" else "an analytical method")
        elif k == "members":
            need(_is_strs(v), f"params.{k}", "a list of member names")
        elif k == "cv_folds":  # None: every GPU held out (``pairs.cv_masks``)
            need(v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 1),
                 f"params.{k}", "null or a whole number of at least 1")
        elif k == "pair_features":
            need(_is_pair_setting(v), f"params.{k}", 'true, false or "source_time"')
        elif d is not None and v is not None:  # None: unset, as max_pairs of all pairs
            like = (bool if isinstance(d, bool) else (int, float) if _is_num(d)
                    else type(d))
            need(isinstance(v, like) and (like is bool or not isinstance(v, bool)),
                 f"params.{k}", f"of the type of its default ({d!r})")


def _is_pair_setting(v) -> bool:
    """A value of ``pair_features`` (``PureLearner``; 1 and 0 are not)."""
    return isinstance(v, bool) or v == "source_time"


def _check_state(st, jpath, where: str) -> None:
    """Raise ``InputError`` naming the field of a model state (``_model_state``) that is not
    what ``_build`` and prediction need, so that a damaged or hand-edited file stops at load
    with one line instead of failing inside a prediction."""
    need = _needs(jpath, where)
    need(isinstance(st, dict), "", "an object")
    if st.get("class") not in _classes():
        raise InputError(f"unknown model class {st.get('class')!r} (known: "
                         f"{', '.join(_classes())})", path=jpath, field=f"{where}.class")
    _check_params(st, need)
    spec = st.get("spec")
    need(isinstance(spec, dict) and set(spec) <= set(FeatureSpec.__dataclass_fields__),
         "spec", "an object of " + ", ".join(FeatureSpec.__dataclass_fields__))
    for k in ("extras", "physics", "drop"):
        need(_is_strs(spec.get(k, [])), f"spec.{k}", "a list of names")
    need(all(_is_method(m) for m in spec.get("physics", [])), "spec.physics",
         "analytical method names")
    cats = spec.get("categories", {})
    need(isinstance(cats, dict) and all(_is_strs(v) for v in cats.values()),
         "spec.categories", "an object of value lists")
    need(isinstance(spec.get("gpu", True), bool), "spec.gpu", "true or false")
    need(_is_pair_setting(spec.get("pair", True)), "spec.pair",
         'true, false or "source_time"')
    known = set(FeatureSpec.from_dict(spec).all_names)
    feats = st.get("features")
    need(_is_strs(feats), "features", "a list of names")
    bad = [f for f in feats if f not in known]
    need(not bad, "features", f"names the spec gives (not {', '.join(bad[:3])})")
    need(_is_strs(st.get("chain", [])) and all(_is_method(m) for m in st.get("chain", [])),
         "chain", "a list of analytical method names")
    need(_is_strs(st.get("known_kernels", [])), "known_kernels", "a list of kernel names")
    post = st.get("post")
    need(post is None or (isinstance(post, dict) and _is_num(post.get("lam"))
                          and _is_num(post.get("delta"))), "post", "null or {lam, delta}")
    guard = st.get("guard")
    need(guard is None or (isinstance(guard, dict) and set(guard) <= set(GUARD)
                           and all(_is_nums(v, 3) and v[0] <= v[1] and v[2] > 0
                                   for v in guard.values())),
         "guard", "null or an object of [low <= high, scale > 0] per range descriptor")
    need(st.get("span") is None or (_is_nums(st["span"], 2) and st["span"][0] <= st["span"][1]),
         "span", "null or [low, high] with low <= high")
    bands = st.get("outside_bands", {})
    need(isinstance(bands, dict) and all(
        isinstance(b, dict) and all(_is_nums(q, 2) and q[0] <= q[1] for q in b.values())
        for b in bands.values()), "outside_bands", "an object of [low, high] per cell, low <= high")
    # what each class reads when it predicts, which its own fit always sets
    required = {"ResidualHybrid": ("chain",), "EfficiencyHybrid": ("chain",),
                "PhysicsBest": ("chain",), "Ensemble": ("members", "known_kernels", "weights")}
    missing = [k for k in required.get(st["class"], ()) if k not in st]
    need(not missing, ", ".join(missing), "present for a " + st["class"])
    members = st.get("members", [])
    need(isinstance(members, list) and ("members" not in st["params"]
                                        or len(members) == len(st["params"]["members"])),
         "members", "a list of one model state per member named in params")
    w = st.get("weights")
    need(w is None or (isinstance(w, dict) and "*" in w
                       and all(_is_nums(v, len(members)) and min(v) >= 0 and sum(v) > 0
                               for v in w.values())),
         "weights", "an object with '*', of one weight >= 0 per member, not all 0")
    learner = st.get("learner", {})
    need(isinstance(learner, dict) and ("learner" not in st or learner.get("kind") in LEARNERS),
         "learner.kind", f"one of {', '.join(LEARNERS)}")
    need(isinstance(learner.get("params", {}), dict), "learner.params", "an object")
    for k in {"gb": ("baseline",), "svr": ("gamma_value",)}.get(learner.get("kind"), ()):
        need(_is_num(learner.get(k)), f"learner.{k}", "a number")
    try:  # the values the class itself refuses (a target 'foo', an unknown member)
        _classes()[st["class"]](**_params(st))
    except GpuprojError as e:
        raise InputError(str(e), path=jpath, field=f"{where}.params") from None
    for i, m in enumerate(members):
        _check_state(m, jpath, f"{where}.members[{i}]")
    if "members" in st["params"]:  # a weight and a role per name: each state of its class
        from .hybrids import MEMBERS

        for i, (name, m) in enumerate(zip(st["params"]["members"], members)):
            need(m["class"] == MEMBERS[name].__name__, f"members[{i}].class",
                 f"{MEMBERS[name].__name__}, the class of member '{name}'")


def _check_doc(doc: dict, jpath) -> None:
    """The parts of a model file besides the model state that prediction reads."""
    need = _needs(jpath)
    train = doc.get("train")
    need(isinstance(train, dict), "train", "an object")
    need(_is_strs(train.get("gpus")), "train.gpus", "a list of GPU names")
    need(_is_strs(train.get("kernel_names", [])), "train.kernel_names", "a list of names")
    for k in ("kernels", "rows", "pairs"):
        need(isinstance(train.get(k), int) and not isinstance(train[k], bool), f"train.{k}",
             "a whole number")
    need(isinstance(train.get("hash"), str), "train.hash", "a string")
    metrics = doc.get("metrics", {})
    need(isinstance(metrics, dict) and all(v is None or isinstance(v, dict)
                                           for v in metrics.values()), "metrics", "an object")
    c = doc.get("conformal")
    if c is not None:
        need(isinstance(c, dict), "conformal", "null or an object")
        need(_is_num(c.get("coverage")) and 0 < c["coverage"] < 1, "conformal.coverage",
             "a number between 0 and 1")
        need(_is_num(c.get("n")), "conformal.n", "a number")
        need(c.get("offset") is None or (_is_num(c["offset"]) and c["offset"] >= 0),
             "conformal.offset", "null or a number >= 0 (a negative one inverts intervals)")
        for k in ("lo", "hi"):
            need(_is_num(c.get(k)) or c.get(k) in ("inf", "-inf"), f"conformal.{k}",
                 "a number, 'inf' or '-inf'")
        need(_float(c["lo"]) <= _float(c["hi"]), "conformal.hi", "at least conformal.lo")
    _check_state(doc.get("model"), jpath, "model")
    if c is not None:  # the note a prediction writes reads the coverage the model requested
        need(doc["model"]["params"].get("coverage") == c["coverage"], "model.params.coverage",
             f"conformal.coverage ({c['coverage']}), where the file holds an interval")


def _params(st: dict) -> dict:
    """The constructor arguments of a model state."""
    params = dict(st["params"])
    if "members" in params:
        params["members"] = tuple(params["members"])
    return params


def _build(st: dict, arrays, prefix: str, compiled: bool):
    m = _classes()[st["class"]](**_params(st))
    m.spec_ = FeatureSpec.from_dict(st["spec"])
    m.features_ = list(st["features"])
    if "chain" in st:
        m.chain_ = list(st["chain"])
    if "known_kernels" in st:
        m.known_kernels_ = list(st["known_kernels"])
    # only those saved (what the fitted model had: an ensemble's members have no post_, a pure
    # learner no guard_), so that saving the loaded model writes the same file. Where one is
    # absent its readers take None: no span (files saved before it: the old exp(20) clip), no
    # outside bands (saved before the interval leaned on them outside the training range)
    for k in ("post", "guard", "span", "outside_bands"):
        if k in st:
            setattr(m, f"{k}_", st[k])
    if "weights" in st:
        m.weights_ = {k: list(v) for k, v in st["weights"].items()}
    m.learner_ = None
    if "learner" in st:
        pre = f"{prefix}learner/"
        arr = {k[len(pre):]: arrays[k] for k in arrays.files if k.startswith(pre)}
        m.learner_ = Learner.from_state(st["learner"], arr, compiled=compiled)
        if len(m.learner_.median_) != len(m.features_):
            raise ValueError(f"the learner has {len(m.learner_.median_)} features, the model "
                             f"{len(m.features_)}")
    if "members" in st:
        m.members_ = [_build(s, arrays, f"{prefix}m{i}/", compiled)
                      for i, s in enumerate(st["members"])]
    return m


# far above what a model gpuproj trains holds (a random forest of 100 trees on 60,000 pairs,
# at most 40,000 nodes a tree, about 160 MB), and what a small deflated file of zeros expands
# to before any shape is checked
MAX_ARRAY_BYTES = 2**30
# the arrays a learner writes (``Learner.state``), besides its ``tree_*`` node arrays
LEARNER_ARRAYS = {"median", "mean", "scale", "coef", "intercept", "support_vectors",
                  "dual_coef", "train_X", "train_y"}


def _open_arrays(npath, state: dict):
    """The model's ``.npz``, refused before anything is read into memory where it is not an
    archive, holds an array that no learner of ``state`` reads, or would expand past
    ``MAX_ARRAY_BYTES``."""
    if not zipfile.is_zipfile(npath):
        what = "no such file" if not Path(npath).exists() else "not an .npz archive"
        raise InputError(f"{what} (the arrays that --save-model writes beside the .json)",
                         path=npath)
    try:
        arrays = np.load(npath, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise InputError(f"cannot read the model arrays: {e}", path=npath) from None
    prefixes = set(_learner_prefixes(state, ""))
    for name in arrays.files:
        pre, _, own = name.rpartition("/")
        if f"{pre}/" not in prefixes or not (own in LEARNER_ARRAYS or own.startswith("tree_")):
            arrays.close()
            raise InputError(f"array '{name}' is not part of the model", path=npath)
    size = sum(i.file_size for i in arrays.zip.infolist())
    if size > MAX_ARRAY_BYTES:
        arrays.close()
        raise InputError(f"its arrays would take {size / 2**30:.1f} GiB of memory, more than "
                         "any model gpuproj trains", path=npath)
    return arrays


def _learner_prefixes(st: dict, prefix: str):
    """The array-name prefixes of the learners in model state ``st`` (as ``_build`` reads
    them)."""
    if "learner" in st:
        yield f"{prefix}learner/"
    for i, m in enumerate(st.get("members", [])):
        yield from _learner_prefixes(m, f"{prefix}m{i}/")


def load_model(path):
    """A model saved by ``save_model`` (``path`` with or without ``.json``)."""
    if Path(path).is_file() and Path(path).suffix not in (".json", ".npz"):
        raise InputError("not a gpuproj model (one is the PATH.json and PATH.npz that `gpuproj "
                         "evaluate --save-model PATH` writes)", path=path)
    jpath, npath = _paths(path)
    doc = parse_json(read_text(jpath, strict=True), jpath)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"not a gpuproj model file (format is not '{FORMAT}')", path=jpath,
                         field="format")
    if doc.get("format_version") != FORMAT_VERSION:
        raise InputError(f"format_version {doc.get('format_version')!r} is not supported "
                         f"(this gpuproj reads {FORMAT_VERSION})", path=jpath,
                         field="format_version")
    _check_doc(doc, jpath)
    saved, now = doc.get("versions", {}), _versions()
    if not isinstance(saved, dict):
        raise InputError(f"expected an object of library versions, found {saved!r}", path=jpath,
                         field="versions")
    differ = {k: (saved.get(k), v) for k, v in now.items()
              if k != "python" and saved.get(k) != v}
    if differ:
        what = ", ".join(f"{k} {a} (now {b})" for k, (a, b) in differ.items())
        warnings.warn(f"{jpath}: model trained with {what}; predictions may differ",
                      ModelVersionWarning, stacklevel=2)
    arrays = _open_arrays(npath, doc["model"])
    compiled = saved.get("scikit-learn") == now["scikit-learn"]
    with arrays:
        try:
            m = _build(doc["model"], arrays, "", compiled)
        # MemoryError: an array whose header gives a shape of terabytes, which numpy
        # allocates before it finds the data missing
        except (ValueError, KeyError, TypeError, MemoryError) as e:
            raise InputError(f"cannot read the model arrays: {e}", path=npath) from None
    m.train_info_ = doc.get("train", {})
    m.train_metrics_ = doc.get("metrics", {}).get("train")
    m.cv_metrics_ = doc.get("metrics", {}).get("cross_validation")
    c = doc.get("conformal")
    m.conformal_ = None if c is None else LogConformal.from_state(
        {**c, "lo": _float(c["lo"]), "hi": _float(c["hi"])})
    m.saved_versions_ = saved
    return m
