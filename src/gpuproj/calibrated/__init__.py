"""Calibrated cost models of Stevens & Kloeckner ("A mechanism for balancing accuracy and scope in
cross-machine black-box GPU performance modeling"): symbolic loopy counts as features, user
model expressions, tagged measurement-kernel generators, work removal, Levenberg-Marquardt
calibration on measured kernels, prediction and ranking of kernel variants.

Stages, one module each::

    counting.py      loopy kernel -> symbolic counts (ops, accesses, syncs, AFR, groups)
    features.py      feature-name grammar -> numbers from counts
    expression.py    model expressions: parse, evaluate, differentiate (overlap model)
    kernels.py       kernel creation functions (microbenchmarks, case studies)
    work_removal.py  Algorithm 3
    generators.py    tagged generators, KernelCollection, MatchCondition
    timing.py        OpenCL (pyopencl) and CUDA (CuPy) runners
    model.py         CostModel, gather_features, calibrate, Calibration (JSON)
    modelfile.py     model files and kernel files (YAML/TOML, safe)
    study.py         calibrate on a device, evaluate variants, predict_loopy

Nothing heavy is imported here; loopy and pyopencl load when used.
"""

from __future__ import annotations

_LAZY = {
    "CostModel": "model", "calibrate": "model", "gather_features": "model",
    "Calibration": "model", "load_params": "model",
    "parse": "expression", "parse_feature": "features", "register_feature": "features",
    "count_kernel": "counting", "remove_work": "work_removal",
    "KernelCollection": "generators", "MatchCondition": "generators",
    "ALL_GENERATORS": "generators", "load_model_file": "modelfile",
    "bundled_model_path": "modelfile",
    "load_kernel_file": "modelfile", "predict_loopy": "study", "run_calibration": "study",
    "evaluate_variants": "study", "make_runner": "timing",
}

__all__ = ["ALL_GENERATORS", "Calibration", "CostModel", "KernelCollection", "MatchCondition",
           "bundled_model_path", "calibrate", "count_kernel", "evaluate_variants",
           "gather_features", "load_kernel_file", "load_model_file", "load_params", "make_runner",
           "parse", "parse_feature", "predict_loopy", "register_feature", "remove_work",
           "run_calibration"]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(name)
