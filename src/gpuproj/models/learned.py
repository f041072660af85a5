"""The learned family (``gpuproj.learned``) under the model registry's names. Thin re-export:
the classes live in ``gpuproj.learned.models``; importing this module does not import
scikit-learn."""

from ..learned.models import (  # noqa: F401
    EfficiencyHybrid,
    Ensemble,
    GradientBoosting,
    LassoModel,
    LinearModel,
    NearestNeighbours,
    PhysicsBest,
    RandomForest,
    ResidualHybrid,
    RidgeModel,
    SupportVector,
)
