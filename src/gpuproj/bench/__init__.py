"""Micro-benchmarks that measure a GPU's ceilings and write its catalog entry.

``run_suite(open_backend(), FULL)`` measures compute throughput per precision, STREAM-like DRAM
bandwidth, L1/L2/shared-memory bandwidth, the operational-intensity (mixbench) and working-set
sweeps, launch overhead and latencies; ``entry.gpu_file`` turns the result into a catalog file
whose ``measured`` section has one value per ``THROUGHPUT_FIELDS`` key. The same kernels run on
CUDA (``cuda.py``) and OpenCL (``opencl.py``, including PoCL's CPU device used in CI).
Nothing here is imported by ``gpuproj --help``; pyopencl and the driver load only when a backend
is opened.
"""

from .backend import DeviceInfo, open_backend
from .sizes import FULL, PRESETS, QUICK, Sizes
from .suite import GROUPS, run_suite

__all__ = [
           "FULL",
           "GROUPS",
           "PRESETS",
           "QUICK",
           "DeviceInfo",
           "Sizes",
           "open_backend",
           "run_suite",
]
