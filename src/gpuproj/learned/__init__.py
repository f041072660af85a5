"""Learned cross-GPU predictors: features of (kernel, source GPU, target GPU) pairs, the report's
learners, hybrids bounded by the analytical models, calibrated intervals, experiment splits
and safe persistence.

>>> from gpuproj.learned import ResidualHybrid          # doctest: +SKIP
>>> model = ResidualHybrid(coverage=0.9).fit(table)     # doctest: +SKIP
>>> model.predict(rows_on_v100, "v100-sxm2-16gb", ["a100-sxm4-80gb"]).df  # doctest: +SKIP

Nothing heavy is imported here; scikit-learn is imported when a learner is fitted.
"""

from .conformal import LogConformal
from .hybrids import EfficiencyHybrid, Ensemble, PhysicsBest, ResidualHybrid
from .models import (
    Conformal,
    GradientBoosting,
    LassoModel,
    LearnedModel,
    LinearModel,
    NearestNeighbours,
    PureLearner,
    RandomForest,
    RidgeModel,
    SupportVector,
)
from .persistence import load_model, save_model

__all__ = [
    "Conformal",
    "EfficiencyHybrid",
    "Ensemble",
    "GradientBoosting",
    "LassoModel",
    "LearnedModel",
    "LinearModel",
    "LogConformal",
    "NearestNeighbours",
    "PhysicsBest",
    "PureLearner",
    "RandomForest",
    "ResidualHybrid",
    "RidgeModel",
    "SupportVector",
    "load_model",
    "save_model",
]
