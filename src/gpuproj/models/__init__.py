"""Every projection method behind one interface (``models.base.Model``).

``MODELS`` maps a method name to ``"module:Class"`` (a module of ``gpuproj.models``, or with a
leading dot of ``gpuproj``: the learned family lives in ``gpuproj.learned``);
``get_model(name, **params)`` imports it lazily so that listing methods costs nothing.
"""

from __future__ import annotations

import importlib
import inspect

from ..errors import GpuprojError

MODELS = {
    # baselines
    "same": "baselines:Same",
    "bandwidth": "baselines:BandwidthScaling",
    "compute": "baselines:ComputeScaling",
    "roofline": "baselines:Roofline",
    # analytical methods of the papers
    "hierarchical": "hierarchical:Hierarchical",
    "hierarchical-ext": "hierarchical:HierarchicalExtended",
    "quantitative": "quantitative:Quantitative",
    "quantitative-transfer": "quantitative:QuantitativeTransfer",
    "efficiency": "efficiency:EfficiencyTransfer",
    # learned (gpuproj.learned): the report's learners, hybrids, ensemble
    "rf": ".learned.models:RandomForest", "gb": ".learned.models:GradientBoosting",
    "svr": ".learned.models:SupportVector", "knn": ".learned.models:NearestNeighbours",
    "linear": ".learned.models:LinearModel", "ridge": ".learned.models:RidgeModel",
    "lasso": ".learned.models:LassoModel", "physics-best": ".learned.hybrids:PhysicsBest",
    "residual": ".learned.hybrids:ResidualHybrid",
    "bounded-efficiency": ".learned.hybrids:EfficiencyHybrid",
    "ensemble": ".learned.hybrids:Ensemble",
}

BASELINES = ("same", "bandwidth", "compute", "roofline")


def method_list(methods) -> list:
    """Method names (or model objects) as a list (``names.name_list``): one name is a list of
    one, names separated by commas are several, as on the command line
    (``"bandwidth,roofline"``), a set is sorted (it has no order of its own: results would
    change order from run to run), and a method named twice is one (each copy would count its
    pairs or sources again)."""
    from ..names import name_list

    return list(dict.fromkeys(name_list(methods)))


def is_analytical(name: str) -> bool:
    """A baseline or analytical method (a class of ``gpuproj.models``), not a learned one."""
    return name in MODELS and not MODELS[name].startswith(".")


def model_class(name: str):
    """The class of method ``name`` (imported on first use)."""
    if name not in MODELS:
        raise GpuprojError(f"unknown method '{name}' (known: {', '.join(MODELS)})")
    mod, cls = MODELS[name].split(":")
    return getattr(importlib.import_module(f".{mod}", __name__), cls)


def get_model(name: str, **params):
    """An instance of method ``name`` with hyper-parameters ``params``."""
    cls = model_class(name)
    known = inspect.signature(cls).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in known.values()):
        unknown = sorted(set(params) - set(known))
        if unknown:  # Python's TypeError names one and not the ones there are
            raise GpuprojError(f"{name} has no parameter {', '.join(unknown)} (it has "
                               f"{', '.join(known) or 'none'})")
    return cls(**params)
