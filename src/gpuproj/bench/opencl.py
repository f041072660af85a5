"""OpenCL backend (pyopencl): any OpenCL device, GPUs first; PoCL's CPU device runs the whole
suite in CI. Durations come from OpenCL profiling events (``CL_PROFILING_COMMAND_START/END``)."""

from __future__ import annotations

import platform
import re
import subprocess
import sys

import numpy as np

from ..errors import GpuprojError, MissingToolError
from .backend import Backend, DeviceInfo, kernel_source


def _import_cl():
    try:
        import pyopencl as cl
    except ImportError:
        raise MissingToolError("the OpenCL backend needs pyopencl: pip install "
                               "'gpuproj[calibrate]' (it also installs PoCL for CPUs)") from None
    return cl


# Platforms that simulate a device: their timings measure the simulator. Oclgrind reports
# every device type (GPU included), so without this it would be taken as the first GPU.
SIMULATORS = ("oclgrind",)


def _label(d) -> str:
    return f"{d.platform.name.strip()} {d.name.strip()}"


def is_simulator(d) -> bool:
    return any(s in _label(d).lower() for s in SIMULATORS)


def list_devices() -> list:
    """All OpenCL devices: GPUs first, simulators last (``[]`` where there is no platform)."""
    cl = _import_cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        return []
    devs = [d for p in platforms for d in p.get_devices()]
    return sorted(devs, key=lambda d: 2 if is_simulator(d) else
                  0 if d.type & cl.device_type.GPU else 1)


def pick_device(devs, device=None):
    """The device to measure on: ``device`` as an index into ``devs`` or a case-insensitive
    substring of "<platform> <device>" ('pthread', 'nvidia'); by default the first device that
    is not a simulator (a simulator runs only when named)."""
    if not devs:
        raise MissingToolError("no OpenCL device found (install pocl-binary-distribution)")
    if device is None or device == "":
        real = [d for d in devs if not is_simulator(d)]
        if not real:
            raise GpuprojError(f"the only OpenCL device is a simulator ({_label(devs[0])}), "
                               "whose timings measure the simulator; name it with --device "
                               "to use it anyway")
        return real[0]
    if str(device).isdigit():
        i = int(device)
        if i >= len(devs):
            raise GpuprojError(f"OpenCL device {i} does not exist (there are {len(devs)})")
        return devs[i]
    hits = [d for d in devs if str(device).lower() in _label(d).lower()]
    if not hits:
        names = ", ".join(_label(d) for d in devs)
        raise GpuprojError(f"no OpenCL device matches '{device}' (devices: {names})")
    return hits[0]


def _kernel_names(prog) -> list[str]:
    """The kernels a built program holds (none where the compiler accepted the source but
    emitted no code for it)."""
    return [n for n in prog.kernel_names.split(";") if n]


def _options(defines) -> list[str]:
    """Compiler options of preprocessor ``defines`` (a dict, or None)."""
    return [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]


def probe_width(index: int, width: int):
    """Print how many kernels compute.cl gives at VW = ``width`` on device ``index`` of
    ``list_devices()`` when built a second time (run in a child process by
    ``OpenCLBackend._widest_vector``). The second build is what every later build gets: PoCL
    caches the first one's bitcode, and at a width whose vectors change the ABI the first build
    has its kernels and every build from the cache none."""
    import warnings

    warnings.simplefilter("ignore")  # the compiler's warnings are what the child is for
    from .suite import vector_defines

    cl, dev = _import_cl(), list_devices()[index]
    opts = _options(vector_defines(width))
    for _ in range(2):
        prog = cl.Program(cl.Context(devices=[dev]), kernel_source("compute", "cl")).build(
            options=opts)
    print(len(_kernel_names(prog)), flush=True)


class OpenCLBackend(Backend):
    name = "opencl"

    def __init__(self, device=None):
        cl = self.cl = _import_cl()
        self.device = dev = pick_device(list_devices(), device)
        self.ctx = cl.Context(devices=[dev])
        self.queue = cl.CommandQueue(self.ctx,
                                     properties=cl.command_queue_properties.PROFILING_ENABLE)
        self._programs = {}
        self.info = self._info()
        if self.info.device_type == "CPU":
            self.compute_vector_width = self._widest_vector(int(dev.preferred_vector_width_float))

    def _info(self) -> DeviceInfo:
        cl, d = self.cl, self.device
        ext = d.extensions.split()
        dtype = ("GPU" if d.type & cl.device_type.GPU else
                 "CPU" if d.type & cl.device_type.CPU else "ACCELERATOR")
        # PoCL names its CPU target in the version string: "... HSTR: pthread-x86_64-...-rocketlake"
        m = re.search(r"HSTR:\s*\S*?-(\w+)-\S*-(\w+)$", d.version.strip())
        if dtype == "CPU":
            isa = platform.machine() or "cpu"
            arch = m.group(2) if m else "cpu"
        else:
            # AMD's OpenCL names the ISA (gfx90a) as the device name; others do not say
            amd = d.vendor.lower().startswith("advanced")
            isa = d.name.strip().split()[0] if amd else "unknown"
            arch = "unknown"
        l2 = int(d.global_mem_cache_size) or None
        try:
            import pyopencl as pcl

            runtime = f"pyopencl {pcl.VERSION_TEXT}; {d.platform.version.strip()}"
        except AttributeError:
            runtime = d.platform.version.strip()
        return DeviceInfo(
            backend="opencl", name=d.name.strip(), vendor=d.vendor.strip(), device_type=dtype,
            compute_units=int(d.max_compute_units), warp_size=self._simd_width(),
            max_block_size=int(d.max_work_group_size), local_mem_bytes=int(d.local_mem_size),
            global_mem_bytes=int(d.global_mem_size), l2_bytes=l2,
            clock_hz=float(d.max_clock_frequency) * 1e6 if d.max_clock_frequency else None,
            isa=isa, architecture=arch,
            fp64="cl_khr_fp64" in ext or int(getattr(d, "double_fp_config", 0) or 0) != 0,
            fp16="cl_khr_fp16" in ext, driver_version=d.driver_version.strip(),
            runtime_version=runtime,
            extra={"opencl_version": d.version.strip(), "platform": d.platform.name.strip(),
                   "global_mem_cache_bytes": int(d.global_mem_cache_size)})

    def _simd_width(self):
        """The preferred work-group size multiple of a trivial kernel: the warp / wavefront
        width on GPUs, the vector width the compiler packs work-items into on CPUs."""
        try:
            k = self.build("memory")["empty"]
            return int(k.get_work_group_info(
                self.cl.kernel_work_group_info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE, self.device))
        except self.cl.Error:
            return None

    def _widest_vector(self, preferred: int) -> int:
        """The widest vector width VW <= ``preferred`` at which compute.cl builds kernels.
        PoCL reports the host CPU's vector width but compiles for the CPU its LLVM knows: PoCL
        3.0 compiles for an AVX-512 Zen 4 as for a Zen 3, and at VW = 16 the compiler accepts
        compute.cl, warns that the vectors change the ABI and gives a program with no kernels
        once the build is in PoCL's cache (the first build, on a fresh machine, has them); the
        process then aborts when it exits (PoCL: "still have references to IRs"). Hence each
        width is tried in a child process (``probe_width``)."""
        devs, w = list_devices(), max(1, preferred)
        index = next(i for i, d in enumerate(devs) if d == self.device)
        code = ("import sys; from gpuproj.bench.opencl import probe_width; "
                "probe_width(int(sys.argv[1]), int(sys.argv[2]))")
        while w > 1:
            try:
                r = subprocess.run([sys.executable, "-c", code, str(index), str(w)],
                                   capture_output=True, text=True, timeout=300)
                if r.stdout.strip().isdigit() and int(r.stdout) > 0:
                    return w
            except subprocess.TimeoutExpired:
                pass
            w //= 2
        return 1

    def build(self, source, extra="", defines=None):
        opts = _options(defines)
        key = (source, extra, tuple(opts))
        if key not in self._programs:
            src = kernel_source(source, "cl") + ("\n" + extra if extra else "")
            try:
                prog = self.cl.Program(self.ctx, src).build(options=opts)
            except self.cl.RuntimeError as e:
                raise GpuprojError(f"OpenCL build of {source}.cl failed: {build_failure(e)}"
                                   ) from None
            names = _kernel_names(prog)
            if not names:
                how = " ".join(opts) or "no options"
                raise GpuprojError(f"OpenCL build of {source}.cl ({how}) gave no kernels, "
                                   "though the compiler accepted it")
            self._programs[key] = {n: self.cl.Kernel(prog, n) for n in names}
        return self._programs[key]

    def alloc(self, nbytes):
        return self.cl.Buffer(self.ctx, self.cl.mem_flags.READ_WRITE, size=int(nbytes))

    def upload(self, buf, array):
        self.cl.enqueue_copy(self.queue, buf, np.ascontiguousarray(array)).wait()

    def download(self, buf, dtype, count):
        out = np.empty(count, dtype=dtype)
        self.cl.enqueue_copy(self.queue, out, buf).wait()
        return out

    def free(self, buf):
        buf.release()

    def _enqueue(self, kernel, blocks, block, args):
        kernel.set_args(*args)
        return self.cl.enqueue_nd_range_kernel(self.queue, kernel, (blocks * block,), (block,))

    def run_many(self, kernel, blocks, block, arg_sets):
        events = [self._enqueue(kernel, blocks, block, a) for a in arg_sets]
        self.queue.finish()
        return [(e.profile.end - e.profile.start) * 1e-9 for e in events]

    def back_to_back(self, kernel, blocks, block, args, count):
        # the first launch waits for a user event the host completes once all are queued
        kernel.set_args(*args)
        gate = self.cl.UserEvent(self.ctx)
        events = [self.cl.enqueue_nd_range_kernel(self.queue, kernel, (blocks * block,), (block,),
                                                  wait_for=[gate] if i == 0 else None)
                  for i in range(count)]
        gate.set_status(self.cl.command_execution_status.COMPLETE)
        self.queue.finish()
        return (events[-1].profile.end - events[0].profile.start) * 1e-9


def build_failure(error) -> str:
    """Why an OpenCL build failed, in one line where the log names a known cause; the whole
    message otherwise."""
    text = str(error)
    cpu = re.search(r"unknown target CPU '([^']*)'", text)
    if cpu:
        # PoCL asks its LLVM for the host CPU's name; an LLVM older than the CPU model answers
        # 'generic', which its own compiler then refuses (e.g. PoCL 3.0 / LLVM 14 on AMD Zen 5)
        return (f"the OpenCL compiler does not know this CPU (it calls it '{cpu.group(1)}'): "
                "its LLVM predates the CPU model; an OpenCL runtime built with a newer LLVM, "
                "or another OpenCL device, is needed")
    return text
