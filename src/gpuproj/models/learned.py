"""The learned family (``gpuproj.learned``) under the model registry's names. Thin re-export:
the classes live in ``gpuproj.learned.models`` and ``gpuproj.learned.hybrids``; importing this
module does not import scikit-learn."""

from ..learned.hybrids import EfficiencyHybrid, Ensemble, PhysicsBest, ResidualHybrid  # noqa: F401
from ..learned.models import (  # noqa: F401
    GradientBoosting,
    LassoModel,
    LinearModel,
    NearestNeighbours,
    RandomForest,
    RidgeModel,
    SupportVector,
)
