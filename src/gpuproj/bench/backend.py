"""What a benchmark backend provides: device facts, kernel builds, buffers and event-timed runs.

Two backends implement it: ``opencl.OpenCLBackend`` (pyopencl; GPUs and, through PoCL, the CPU)
and ``cuda.CudaBackend`` (CUDA driver API through ctypes, kernels compiled with nvcc). Both run
the same kernels (``kernels/<name>.cl`` and ``kernels/<name>.cu`` hold the same kernel names,
arguments and operation counts), so the benchmarks in ``suite.py`` are written once.

A launch is ``blocks`` blocks (work-groups) of ``block`` threads (work-items), one-dimensional.
Kernel arguments are buffers returned by ``alloc`` or numpy scalars (``np.float32(2.0)``,
``np.uint32(7)``) whose dtype is the kernel parameter's type.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from importlib import resources

from ..errors import GpuprojError, MissingToolError


@dataclass
class DeviceInfo:
    """Facts a runtime reports about one device. Sizes in bytes, clocks in Hz; ``None`` where the
    runtime does not say."""

    backend: str
    name: str
    vendor: str
    device_type: str  # "GPU" or "CPU" (or "ACCELERATOR")
    compute_units: int
    warp_size: int | None
    max_block_size: int
    local_mem_bytes: int
    global_mem_bytes: int
    l2_bytes: int | None
    clock_hz: float | None
    isa: str
    architecture: str
    fp64: bool
    fp16: bool
    driver_version: str
    runtime_version: str
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


_LOCAL_INCLUDE = re.compile(r'^#include "([\w.]+)"$', re.MULTILINE)


def kernel_source(name: str, ext: str) -> str:
    """Text of ``kernels/<name>.<ext>`` shipped with the package (``ext``: ``cl`` or ``cu``),
    with each ``#include "file"`` of a file in ``kernels/`` replaced by that file's text: the
    OpenCL compiler is given a string, not a path, so it could not find the file itself."""
    kernels = resources.files("gpuproj.bench").joinpath("kernels")
    text = kernels.joinpath(f"{name}.{ext}").read_text()
    return _LOCAL_INCLUDE.sub(lambda m: kernels.joinpath(m.group(1)).read_text(), text)


class Backend:
    """Interface; see the module docstring. Subclasses set ``info`` and implement the methods."""

    name = "base"
    info: DeviceInfo

    # work-items of OpenCL CPU devices run the compute chains as vectors of this width (VW in
    # compute.cl); GPUs run scalar chains
    compute_vector_width = 1

    def build(self, source: str, extra: str = "", defines: dict | None = None) -> dict:
        """Compile kernels/<source>.<ext> with ``extra`` appended and preprocessor ``defines``;
        a mapping name -> kernel."""
        raise NotImplementedError

    def alloc(self, nbytes: int):
        raise NotImplementedError

    def upload(self, buf, array) -> None:
        raise NotImplementedError

    def download(self, buf, dtype, count: int):
        raise NotImplementedError

    def free(self, buf) -> None:
        raise NotImplementedError

    def run_many(self, kernel, blocks: int, block: int, arg_sets) -> list:
        """Launch ``kernel`` once per argument tuple in ``arg_sets``, back to back, and return each
        launch's duration in seconds from device events (OpenCL profiling events, CUDA events)."""
        raise NotImplementedError

    def run(self, kernel, blocks: int, block: int, args) -> float:
        """One event-timed launch (seconds)."""
        return self.run_many(kernel, blocks, block, [args])[0]

    def back_to_back(self, kernel, blocks: int, block: int, args, count: int) -> float:
        """Device seconds from the start of the first to the end of the last of ``count``
        launches, all queued before the device runs the first (divide by ``count`` for the
        launch overhead): the host's pace of issuing launches does not enter."""
        raise NotImplementedError

    def clocks(self) -> dict:
        """Current clocks and limits where the platform reports them (``nvidia-smi``)."""
        return {}

    def close(self) -> None:
        pass


def open_backend(kind: str = "auto", device: str | None = None) -> Backend:
    """The backend of ``kind`` (``auto``, ``cuda``, ``opencl``) on ``device`` (an index, or a
    substring of the device name).

    ``auto`` takes CUDA where an NVIDIA driver and device are present, else the first OpenCL GPU,
    else any OpenCL device (PoCL's CPU device). Raises ``MissingToolError`` with what to install
    when no backend is there; a backend that is there but fails (no such ``device``, a compiler
    that refuses the kernels) raises its own error, without install advice.
    """
    if kind not in ("auto", "cuda", "opencl"):
        raise GpuprojError(f"unknown backend '{kind}' (known: auto, cuda, opencl)")
    missing, failed = [], []
    for name, label in (("cuda", "CUDA"), ("opencl", "OpenCL")):
        if kind not in ("auto", name):
            continue
        if name == "cuda":
            from .cuda import CudaBackend as make
        else:
            from .opencl import OpenCLBackend as make
        try:
            return make(device)
        except GpuprojError as e:
            if kind == name:
                raise
            (missing if isinstance(e, MissingToolError) else failed).append(f"{label}: {e}")
    if failed:
        raise GpuprojError("no device to benchmark: " + "; ".join(failed + missing))
    raise MissingToolError(
        "no device to benchmark: " + "; ".join(missing) + ". Install an NVIDIA driver and the "
        "CUDA toolkit (nvcc) for the CUDA backend, or `pip install 'gpuproj[calibrate]'` for "
        "OpenCL (pyopencl, and PoCL, which runs the benchmarks on the CPU).")
