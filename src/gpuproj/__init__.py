"""gpuproj: predict how fast GPU kernels run on a GPU you do not have.

The data flow, one module per stage::

    profile (profiles/)  ->  GPU descriptions (catalog/)  ->  projection (models/)
        ->  Prediction (models/base.py)  ->  evaluation (evaluate.py), pictures (plots/)

Nothing heavy is imported here, so ``import gpuproj`` and ``gpuproj --help`` stay fast.
"""

# the one place the version is written: pyproject.toml reads it for the package metadata
# ([tool.setuptools.dynamic]) and `gpuproj --version` prints it
__version__ = "0.1.0"
