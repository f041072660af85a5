"""Run measurement kernels for real and time them.

Two runners: :class:`OpenCLRunner` (pyopencl; any OpenCL device, PoCL on the CPU in CI) times
with OpenCL profiling events; :class:`CudaRunner` (CuPy) compiles loopy's CUDA code with NVRTC
and times with CUDA events. Both do ``warmup`` untimed launches, then ``repetitions`` timed ones,
drop anomalous samples above ``outlier_factor`` x the median (the paper saw occasional ~10x
outliers on one GPU and excluded them, Sec. 8) and report the median of the rest, keeping the
raw samples. Arrays are filled with ones (no denormals, no NaNs from uninitialised memory).
"""

from __future__ import annotations

import statistics
import warnings
from dataclasses import dataclass, field

from ..errors import GpuprojError, InputError, MissingToolError


@dataclass
class Timing:
    """Execution times of one kernel at one size, in s."""

    kernel: str
    sizes: dict
    samples_s: list
    median_s: float
    outliers_s: list = field(default_factory=list)
    device: str = ""

    def to_dict(self):
        return {"kernel": self.kernel, "sizes": self.sizes, "median_s": self.median_s,
                "samples_s": self.samples_s, "outliers_s": self.outliers_s,
                "device": self.device}


def robust_median(samples, outlier_factor=5.0):
    """(median of the samples that are not above ``outlier_factor`` x the overall median,
    rejected samples).

    >>> robust_median([1.0, 1.1, 0.9, 10.0])
    (1.0, [10.0])
    """
    if not samples:
        raise ValueError("no samples")
    med = statistics.median(samples)
    keep = [s for s in samples if s <= outlier_factor * med]
    out = [s for s in samples if s > outlier_factor * med]
    return statistics.median(keep), out


def _eval_int(expr, sizes):
    from pymbolic import evaluate

    return int(evaluate(expr, sizes))


def array_layout(arg, sizes):
    """(shape, strides in bytes, elements to allocate) of a loopy array argument."""
    from loopy.kernel.array import FixedStrideArrayDimTag

    shape = tuple(_eval_int(s, sizes) for s in arg.shape)
    item = arg.dtype.numpy_dtype.itemsize
    strides = []
    for tag in arg.dim_tags:
        if not isinstance(tag, FixedStrideArrayDimTag):
            raise InputError(f"array {arg.name}: unsupported axis tag {tag}")
        strides.append(_eval_int(tag.stride, sizes))
    n = 1 + sum((s - 1) * st for s, st in zip(shape, strides)) if all(shape) else 0
    return shape, tuple(st * item for st in strides), n


def _check_sizes(mk):
    lp = _lp()
    knl = mk.program.default_entrypoint
    need = [a.name for a in knl.args if isinstance(a, lp.ValueArg)]
    missing = [n for n in need if n not in mk.sizes]
    if missing:
        raise InputError(f"kernel {mk.name}: no value for size parameter(s) {missing}")
    return knl


def _lp():
    from .counting import _lp as get

    return get()


class OpenCLRunner:
    """Times loopy kernels on an OpenCL device (pyopencl).

    ``device``: None for the first device that is not a simulator, an index, or a
    case-insensitive substring of "<platform> <device>" (``"pthread"``, ``"nvidia"``), as
    ``gpuproj.bench.opencl.pick_device`` reads it.
    """

    def __init__(self, device=None, warmup=2, repetitions=7, outlier_factor=5.0):
        try:
            import pyopencl as cl
        except ImportError as e:
            raise MissingToolError("timing needs pyopencl: pip install 'gpuproj[calibrate]'") \
                from e
        self.cl = cl
        from ..bench.opencl import list_devices, pick_device

        self.device = pick_device(list_devices(), device)
        self.platform = self.device.platform
        self.context = cl.Context([self.device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.warmup, self.repetitions, self.outlier_factor = warmup, repetitions, outlier_factor

    @property
    def device_name(self) -> str:
        return f"{self.platform.name.strip()} / {self.device.name.strip()}"

    def _args(self, mk, knl):
        import pyopencl.array as cla

        lp = _lp()
        args = {}
        for a in knl.args:
            if isinstance(a, lp.ValueArg):
                args[a.name] = mk.sizes[a.name]
                continue
            shape, strides, n = array_layout(a, mk.sizes)
            dt = a.dtype.numpy_dtype
            base = cla.empty(self.queue, (max(n, 1),), dt)
            base.fill(dt.type(1))
            args[a.name] = cla.Array(self.queue, shape, dt, strides=strides, data=base.data)
        return args

    def _samples(self, ex, args) -> list:
        for _ in range(self.warmup):
            ex(self.queue, **args)
        self.queue.finish()
        samples = []
        for _ in range(self.repetitions):
            evt, _ = ex(self.queue, **args)
            evt.wait()
            samples.append((evt.profile.end - evt.profile.start) * 1e-9)
        return samples

    def time(self, mk) -> Timing:
        knl = _check_sizes(mk)
        lp = _lp()
        prog = mk.program.copy(target=lp.PyOpenCLTarget())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                samples = self._samples(prog.executor(self.queue), self._args(mk, knl))
            except self.cl.Error as e:
                # the device's compiler or runtime refused (RuntimeError), or the launch did:
                # a buffer above the device's largest allocation, a work-group it cannot run
                # (LogicError), memory it has not (MemoryError)
                from ..bench.opencl import build_failure

                raise GpuprojError(f"OpenCL could not run kernel {mk.name} at sizes "
                                   f"{mk.sizes} on {self.device_name}: {build_failure(e)}"
                                   ) from None
        med, out = robust_median(samples, self.outlier_factor)
        return Timing(mk.name, dict(mk.sizes), samples, med, out, self.device_name)


@dataclass
class CudaLaunch:
    """A measurement kernel as CUDA C++ and how to launch it: ``args`` in the kernel's
    parameter order, each (name, numpy dtype, size value for a scalar or elements for an
    array, is_array)."""

    name: str
    code: str
    grid: tuple
    block: tuple
    args: list


def cuda_launch(mk) -> CudaLaunch:
    """loopy's CUDA code for measurement kernel ``mk`` at its sizes (no GPU needed)."""
    lp = _lp()
    knl = _check_sizes(mk)
    prog = mk.program.copy(target=lp.CudaTarget())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = lp.generate_code_v2(prog).device_code()
        entry = prog.default_entrypoint
        gsize, lsize = entry.get_grid_size_upper_bounds_as_exprs(prog.callables_table)
    args = []
    for a in knl.args:
        if isinstance(a, lp.ValueArg):
            args.append((a.name, a.dtype.numpy_dtype, mk.sizes[a.name], False))
        else:
            args.append((a.name, a.dtype.numpy_dtype, array_layout(a, mk.sizes)[2], True))
    return CudaLaunch(entry.name, code, tuple(_eval_int(g, mk.sizes) for g in gsize) or (1,),
                      tuple(_eval_int(s, mk.sizes) for s in lsize) or (1,), args)


class CudaRunner:
    """Times loopy kernels on an NVIDIA GPU through loopy's CUDA code and CuPy (NVRTC)."""

    def __init__(self, device=0, warmup=2, repetitions=7, outlier_factor=5.0):
        try:
            import cupy
        except ImportError as e:
            raise MissingToolError("CUDA timing needs CuPy: pip install cupy-cuda12x (or "
                                   "cupy-cuda13x, after the CUDA version)") from e
        self.cupy = cupy
        self.device_id = int(device or 0)
        self.warmup, self.repetitions, self.outlier_factor = warmup, repetitions, outlier_factor

    @property
    def device_name(self) -> str:
        props = self.cupy.cuda.runtime.getDeviceProperties(self.device_id)
        name = props["name"]
        return "CUDA / " + (name.decode() if isinstance(name, bytes) else str(name))

    def time(self, mk) -> Timing:
        cp = self.cupy
        launch = cuda_launch(mk)
        try:
            samples = self._samples(launch)
        except (cp.cuda.compiler.CompileException, cp.cuda.driver.CUDADriverError,
                cp.cuda.runtime.CUDARuntimeError, cp.cuda.memory.OutOfMemoryError) as e:
            # NVRTC refused the code (its log: the first error line), or CUDA the launch or
            # the arrays (too many threads per block, too little memory)
            lines = [ln for ln in str(e).splitlines() if ln.strip()] or [type(e).__name__]
            why = next((ln for ln in lines if "error" in ln.lower()), lines[0]).strip()
            # the device by its number: after a failed launch, asking it its name may fail too
            raise GpuprojError(f"CUDA could not run kernel {mk.name} at sizes {mk.sizes} on "
                               f"device {self.device_id}: {why}") from None
        med, out = robust_median(samples, self.outlier_factor)
        return Timing(mk.name, dict(mk.sizes), samples, med, out, self.device_name)

    def _samples(self, launch) -> list:
        cp = self.cupy
        with cp.cuda.Device(self.device_id):
            kernel = cp.RawModule(code=launch.code, options=()).get_function(launch.name)
            args = tuple(cp.ones(max(n, 1), dtype=dt) if is_array else dt.type(n)
                         for _name, dt, n, is_array in launch.args)
            for _ in range(self.warmup):
                kernel(launch.grid, launch.block, args)
            cp.cuda.Device(self.device_id).synchronize()
            samples = []
            for _ in range(self.repetitions):
                start, end = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                kernel(launch.grid, launch.block, args)
                end.record()
                end.synchronize()
                samples.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
        return samples


def make_runner(device=None, **kw):
    """``device``: "cuda" or "cuda:<n>" for :class:`CudaRunner`, anything else selects an
    OpenCL device by substring (None: the first one)."""
    if device and str(device).lower().startswith("cuda"):
        idx = str(device).split(":", 1)[1] if ":" in str(device) else 0
        return CudaRunner(idx, **kw)
    return OpenCLRunner(device, **kw)


__all__ = [
    "CudaLaunch",
    "CudaRunner",
    "OpenCLRunner",
    "Timing",
    "array_layout",
    "cuda_launch",
    "make_runner",
    "robust_median",
]
