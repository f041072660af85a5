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
from pathlib import Path

import numpy as np

from ..errors import GpuprojWarning, InputError
from ..files import read_text, write_text, writing
from .conformal import LogConformal
from .features import FeatureSpec
from .learners import Learner

FORMAT = "gpuproj-learned-model"
FORMAT_VERSION = 1


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
    for attr in ("chain_", "known_kernels_", "weights_", "post_", "guard_", "outside_bands_"):
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
    doc = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "method": model.name,
        "versions": _versions(), "train": model.train_info_,
        "metrics": {"train": model.train_metrics_, "cross_validation": model.cv_metrics_},
        "conformal": model.conformal_.state() if model.conformal_ is not None else None,
        "model": _model_state(model, arrays, ""),
    }
    write_text(jpath, json.dumps(_jsonable(doc), indent=1))
    with writing(npath):
        np.savez_compressed(npath, **arrays)
    return jpath, npath


def _build(st: dict, arrays, prefix: str, compiled: bool):
    classes = _classes()
    if st["class"] not in classes:
        raise InputError(f"unknown model class '{st['class']}'", field="model.class")
    cls = classes[st["class"]]
    params = dict(st["params"])
    if "members" in params:
        params["members"] = tuple(params["members"])
    m = cls(**params)
    m.spec_ = FeatureSpec.from_dict(st["spec"])
    m.features_ = list(st["features"])
    if "chain" in st:
        m.chain_ = list(st["chain"])
    if "known_kernels" in st:
        m.known_kernels_ = list(st["known_kernels"])
    m.post_ = st.get("post")
    m.guard_ = st.get("guard")
    # saved before the interval leaned on the error bands outside the training range: it does not
    m.outside_bands_ = st.get("outside_bands", {})
    if "weights" in st:
        m.weights_ = {k: list(v) for k, v in st["weights"].items()}
    m.learner_ = None
    if "learner" in st:
        pre = f"{prefix}learner/"
        arr = {k[len(pre):]: arrays[k] for k in arrays.files if k.startswith(pre)}
        m.learner_ = Learner.from_state(st["learner"], arr, compiled=compiled)
    if "members" in st:
        m.members_ = [_build(s, arrays, f"{prefix}m{i}/", compiled)
                      for i, s in enumerate(st["members"])]
    return m


def load_model(path):
    """A model saved by ``save_model`` (``path`` with or without ``.json``)."""
    jpath, npath = _paths(path)
    try:
        doc = json.loads(read_text(jpath, strict=True))
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg}", path=jpath, row=e.lineno) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"not a gpuproj model file (format is not '{FORMAT}')", path=jpath,
                         field="format")
    if doc.get("format_version") != FORMAT_VERSION:
        raise InputError(f"format_version {doc.get('format_version')!r} is not supported "
                         f"(this gpuproj reads {FORMAT_VERSION})", path=jpath,
                         field="format_version")
    saved, now = doc.get("versions", {}), _versions()
    differ = {k: (saved.get(k), v) for k, v in now.items()
              if k != "python" and saved.get(k) != v}
    if differ:
        what = ", ".join(f"{k} {a} (now {b})" for k, (a, b) in differ.items())
        warnings.warn(f"{jpath}: model trained with {what}; predictions may differ",
                      ModelVersionWarning, stacklevel=2)
    try:
        arrays = np.load(npath, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read the model arrays: {e}", path=npath) from None
    compiled = saved.get("scikit-learn") == now["scikit-learn"]
    with arrays:
        try:
            m = _build(doc["model"], arrays, "", compiled)
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(f"cannot read the model arrays: {e}", path=npath) from None
    m.train_info_ = doc.get("train", {})
    m.train_metrics_ = doc.get("metrics", {}).get("train")
    m.cv_metrics_ = doc.get("metrics", {}).get("cross_validation")
    c = doc.get("conformal")
    m.conformal_ = None if c is None else LogConformal.from_state(
        {**c, "lo": _float(c["lo"]), "hi": _float(c["hi"])})
    m.saved_versions_ = saved
    return m
