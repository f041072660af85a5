"""gpuproj: predict how fast GPU kernels run on a GPU you do not have.

The data flow, one module per stage::

    profile (profiles/)  ->  GPU descriptions (catalog/)  ->  projection (models/)
        ->  Prediction (models/base.py)  ->  evaluation (evaluate.py), pictures (plots/)

The entry points from Python, each in its stage's module::

    from gpuproj.profiles import load        # a profile -> ProfileTable
    from gpuproj.catalog import resolve      # a GPU name -> GPU
    from gpuproj.predict import predict      # ProfileTable, targets -> PredictionSet
    from gpuproj.evaluate import evaluate    # a table measured on several GPUs -> Evaluation

They are not re-exported here: ``predict`` and ``evaluate`` name their modules, which the
package's attributes of those names are once imported, so ``gpuproj.predict`` would be a
function or a module depending on what ran before.

Nothing heavy is imported here, so ``import gpuproj`` and ``gpuproj --help`` stay fast.
"""

# the one place the version is written: pyproject.toml reads it for the package metadata
# ([tool.setuptools.dynamic]) and `gpuproj --version` prints it
__version__ = "0.1.0"
