"""CUDA backend: the CUDA driver API (``libcuda``) through ctypes, kernels compiled by nvcc to a
cubin for the device's compute capability. Durations come from CUDA events recorded around each
launch on the default stream, all queued behind a ``hold`` kernel (``kernels/hold.cu``) that
keeps the device busy until the host has queued them: an event recorded on an idle device
would otherwise start the clock while the host is still issuing the launch (from Python about
7 us on the H100 machine, longer than the device takes to run an empty kernel).

No Python CUDA package is needed (the GPU machines may have none): only the driver, and nvcc or
cubins built beforehand. ``GPUPROJ_NVCC`` names the nvcc to use (one that does not exist is an
error, not a reason to take another); ``GPUPROJ_BENCH_CUBIN_DIR`` holds prebuilt cubins
(``python -m gpuproj.bench.cuda --arch sm_90 --out DIR`` writes them on a machine that has
nvcc). Compiled cubins are cached in ``~/.cache/gpuproj/bench``.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..errors import GpuprojError, MissingToolError
from ..nvidia_tools import find_tool, tool_errors
from .backend import Backend, DeviceInfo, kernel_source

CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gpuproj" / "bench"

# CUdevice_attribute values (cuda.h)
ATTR = {"max_threads_per_block": 1, "max_smem_per_block": 8, "warp_size": 10, "clock_khz": 13,
        "sm_count": 16, "mem_clock_khz": 36, "mem_bus_bits": 37, "l2_bytes": 38,
        "max_threads_per_sm": 39, "cc_major": 75, "cc_minor": 76, "max_smem_per_sm": 81,
        "regs_per_sm": 82}

# launches queued behind one hold: far inside the driver's queue, which blocks the host when full
# (the host would then wait for the hold it is meant to outrun)
MAX_QUEUED = 128
HOLD_MIN_S = 1e-3  # the shortest hold
HOLD_MARGIN = 3.0  # hold = this x the launches x the host's last queueing time per launch
QUEUE_S = 20e-6  # the host's queueing time per launch assumed first, and at least
HOLD_TRIES = 3

ARCH_NAMES = {(7, 0): "Volta", (7, 5): "Turing", (8, 0): "Ampere", (8, 6): "Ampere",
              (8, 7): "Ampere", (8, 9): "Ada Lovelace", (9, 0): "Hopper", (10, 0): "Blackwell",
              (10, 3): "Blackwell", (12, 0): "Blackwell"}


class _Driver:
    """Thin checked wrapper: ``drv.cuInit(0)`` raises ``GpuprojError`` on a non-zero CUresult."""

    def __init__(self):
        names = ["libcuda.so.1", "libcuda.so"] if sys.platform != "win32" else ["nvcuda.dll"]
        self.lib = None
        for n in names:
            try:
                self.lib = ctypes.CDLL(n)
                break
            except OSError:
                continue
        if self.lib is None:
            raise MissingToolError("no NVIDIA driver (libcuda) found")

    def has(self, name):
        return hasattr(self.lib, name)

    def __getattr__(self, name):
        fn = getattr(self.lib, name)

        def call(*args):
            err = fn(*args)
            if err != 0:
                raise GpuprojError(f"{name} failed: {self.error_name(err)}")
        return call

    def error_name(self, err):
        s = ctypes.c_char_p()
        if self.lib.cuGetErrorName(int(err), ctypes.byref(s)) == 0 and s.value:
            return s.value.decode()
        return f"CUresult {err}"


class DeviceBuffer:
    def __init__(self, ptr: int, nbytes: int):
        self.ptr, self.nbytes = ptr, nbytes


def cubin_key(source_text: str, arch: str) -> str:
    return hashlib.sha256(f"{arch}\n{source_text}".encode()).hexdigest()[:24]


def cuda_source(source: str, extra: str = "", defines: dict | None = None) -> str:
    """The CUDA C++ text the backend compiles for ``kernels/<source>.cu``: ``defines`` as
    ``#define`` lines, the file, ``extra`` appended. Its hash names the cubin, so a prebuilt
    cubin is found only for exactly this text."""
    text = "".join(f"#define {k} {v}\n" for k, v in sorted((defines or {}).items()))
    return text + kernel_source(source, "cu") + ("\n" + extra + "\n" if extra else "")


def compile_cubin(source_text: str, arch: str) -> tuple[bytes, str]:
    """(cubin for ``arch`` (``sm_90``), where it came from) of CUDA C++ text: a prebuilt one in
    ``$GPUPROJ_BENCH_CUBIN_DIR``, a cached one, or nvcc's (argument list, no shell), then
    cached by (arch, source) hash. The origin goes into the raw result: a cubin found on disk
    was built by whatever nvcc built it, not necessarily this machine's."""
    key = cubin_key(source_text, arch)
    for d, how in ((os.environ.get("GPUPROJ_BENCH_CUBIN_DIR"), "prebuilt"), (CACHE_DIR, "cached")):
        if d and (Path(d) / f"{key}.cubin").is_file():
            return (Path(d) / f"{key}.cubin").read_bytes(), f"{how}: {Path(d) / f'{key}.cubin'}"
    nvcc = find_tool("nvcc", missing=(
        "the CUDA backend needs nvcc (CUDA toolkit) to compile its kernels, or prebuilt cubins "
        "in $GPUPROJ_BENCH_CUBIN_DIR (python -m gpuproj.bench.cuda --arch sm_XY --out DIR)"))
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "k.cu", Path(tmp) / "k.cubin"
        src.write_text(source_text)
        proc = subprocess.run([nvcc, "-O3", f"-arch={arch}", "-cubin", "-o", str(out), str(src)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise GpuprojError(f"nvcc failed for {arch}: {tool_errors(proc.stderr)}")
        data = out.read_bytes()
    try:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        (CACHE_DIR / f"{key}.cubin").write_bytes(data)
    except OSError:
        pass  # a read-only home only costs a recompilation next time
    return data, f"compiled: {nvcc_version(nvcc)}"


def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True,
                         check=False).stdout
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


def nvidia_smi(pci_bus_id: str) -> dict:
    """Clocks (MHz), power limit (W), temperature (C) and driver from nvidia-smi of the GPU at
    ``pci_bus_id``; {} without it. Never by CUDA ordinal: CUDA orders devices fastest first and
    after CUDA_VISIBLE_DEVICES, nvidia-smi by PCI bus, so the same number can be two GPUs."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return {}
    q = ["name", "driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem",
         "power.limit", "temperature.gpu", "persistence_mode", "clocks_event_reasons.active"]
    try:
        proc = subprocess.run([exe, f"--id={pci_bus_id}", f"--query-gpu={','.join(q)}",
                               "--format=csv,noheader,nounits"], capture_output=True, text=True,
                              timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if proc.returncode != 0:
        return {}
    vals = [v.strip() for v in proc.stdout.strip().splitlines()[0].split(",")]
    return dict(zip(q, vals))


class CudaBackend(Backend):
    name = "cuda"

    def __init__(self, device=None):
        self.drv = drv = _Driver()
        drv.cuInit(0)
        n = ctypes.c_int()
        drv.cuDeviceGetCount(ctypes.byref(n))
        if n.value == 0:
            raise MissingToolError("the NVIDIA driver reports no CUDA device")
        self.index = self._pick(device, n.value)
        self.dev = ctypes.c_int()
        drv.cuDeviceGet(ctypes.byref(self.dev), self.index)
        bus = ctypes.create_string_buffer(64)
        drv.cuDeviceGetPCIBusId(bus, 64, self.dev)
        self.pci_bus_id = bus.value.decode()
        self.ctx = ctypes.c_void_p()
        drv.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), self.dev)
        drv.cuCtxSetCurrent(self.ctx)
        self._modules = {}
        self._queue_s = QUEUE_S  # host seconds to queue one launch and its events, last seen
        self._elapsed = ("cuEventElapsedTime_v2" if drv.has("cuEventElapsedTime_v2")
                         else "cuEventElapsedTime")
        self.info = self._info()

    def _pick(self, device, count):
        if device is None or device == "":
            return 0
        if str(device).isdigit():
            if int(device) >= count:
                raise GpuprojError(f"CUDA device {device} does not exist (there are {count})")
            return int(device)
        for i in range(count):
            if str(device).lower() in self._name(i).lower():
                return i
        raise GpuprojError(f"no CUDA device matches '{device}'")

    def _name(self, i):
        d = ctypes.c_int()
        self.drv.cuDeviceGet(ctypes.byref(d), i)
        buf = ctypes.create_string_buffer(256)
        self.drv.cuDeviceGetName(buf, 256, d)
        return buf.value.decode()

    def attr(self, name, default=None):
        """A device attribute; ``default`` where the driver no longer reports it (clock rates
        are deprecated attributes in recent CUDA versions)."""
        v = ctypes.c_int()
        try:
            self.drv.cuDeviceGetAttribute(ctypes.byref(v), ATTR[name], self.dev)
        except GpuprojError:
            if default is None:
                raise
            return default
        return v.value

    def _info(self) -> DeviceInfo:
        cc = (self.attr("cc_major"), self.attr("cc_minor"))
        self.arch = f"sm_{cc[0]}{cc[1]}"
        mem = ctypes.c_size_t()
        self.drv.cuDeviceTotalMem_v2(ctypes.byref(mem), self.dev)
        ver = ctypes.c_int()
        self.drv.cuDriverGetVersion(ctypes.byref(ver))
        smi = nvidia_smi(self.pci_bus_id)
        clock_khz = self.attr("clock_khz", 0)
        return DeviceInfo(
            backend="cuda", name=self._name(self.index), vendor="NVIDIA", device_type="GPU",
            compute_units=self.attr("sm_count"), warp_size=self.attr("warp_size"),
            max_block_size=self.attr("max_threads_per_block"),
            local_mem_bytes=self.attr("max_smem_per_block"), global_mem_bytes=int(mem.value),
            l2_bytes=self.attr("l2_bytes") or None,
            clock_hz=clock_khz * 1e3 if clock_khz > 0 else None, isa=self.arch,
            architecture=ARCH_NAMES.get(cc, "unknown"), fp64=True, fp16=cc >= (6, 0),
            driver_version=smi.get("driver_version", ""),
            runtime_version=f"CUDA driver API {ver.value // 1000}.{ver.value % 1000 // 10}",
            # source -> the cubin's origin (``compile_cubin``), filled in as modules are built
            extra={"compute_capability": f"{cc[0]}.{cc[1]}", "pci_bus_id": self.pci_bus_id,
                   "cubins": {},
                   "mem_clock_hz": self.attr("mem_clock_khz", 0) * 1e3 or None,
                   "mem_bus_bits": self.attr("mem_bus_bits", 0) or None,
                   "max_threads_per_sm": self.attr("max_threads_per_sm"),
                   "max_smem_per_sm_bytes": self.attr("max_smem_per_sm"),
                   "regs_per_sm": self.attr("regs_per_sm")})

    def build(self, source, extra="", defines=None):
        key = (source, extra, tuple(sorted((defines or {}).items())))
        if key not in self._modules:
            image, origin = compile_cubin(cuda_source(source, extra, defines), self.arch)
            self.info.extra["cubins"][source] = origin
            mod = ctypes.c_void_p()
            self.drv.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(image))
            self._modules[key] = _Module(self.drv, mod)
        return self._modules[key]

    def alloc(self, nbytes):
        p = ctypes.c_uint64()
        self.drv.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(int(nbytes)))
        return DeviceBuffer(p.value, int(nbytes))

    def upload(self, buf, array):
        a = np.ascontiguousarray(array)
        self.drv.cuMemcpyHtoD_v2(ctypes.c_uint64(buf.ptr), a.ctypes.data_as(ctypes.c_void_p),
                                 ctypes.c_size_t(a.nbytes))

    def download(self, buf, dtype, count):
        out = np.empty(count, dtype=dtype)
        self.drv.cuMemcpyDtoH_v2(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint64(buf.ptr),
                                 ctypes.c_size_t(out.nbytes))
        return out

    def free(self, buf):
        self.drv.cuMemFree_v2(ctypes.c_uint64(buf.ptr))

    @staticmethod
    def _params(args):
        """ctypes storage for each argument and the void** array cuLaunchKernel reads."""
        store = []
        for a in args:
            if isinstance(a, DeviceBuffer):
                store.append(ctypes.c_uint64(a.ptr))
            elif isinstance(a, np.generic):
                raw = a.tobytes()
                store.append((ctypes.c_char * len(raw)).from_buffer_copy(raw))
            else:
                raise TypeError(f"kernel argument {a!r} is neither a buffer nor a numpy scalar")
        ptrs = (ctypes.c_void_p * len(store))(*[ctypes.cast(ctypes.pointer(s), ctypes.c_void_p)
                                                for s in store])
        return store, ptrs

    def _launch(self, kernel, blocks, block, ptrs):
        self.drv.cuLaunchKernel(kernel, ctypes.c_uint(blocks), 1, 1, ctypes.c_uint(block), 1, 1,
                                0, None, ptrs, None)

    def _event(self):
        e = ctypes.c_void_p()
        self.drv.cuEventCreate(ctypes.byref(e), 0)
        return e

    def _held(self, queue, launches):
        """Run ``queue()``, which queues ``launches`` launches and their events, behind a hold
        long enough for the host to queue them all, then synchronise. The host's queueing time
        is measured: the hold cannot start before it is launched, so a hold longer than that
        time ends after the last launch was queued, and the device runs them back to back. A
        shorter one is retried, longer, up to ``HOLD_TRIES`` times."""
        hold = self.build("hold")["hold"]
        for _ in range(HOLD_TRIES):
            hold_s = max(HOLD_MIN_S, HOLD_MARGIN * launches * self._queue_s)
            _, ptrs = self._params((np.uint64(round(hold_s * 1e9)),))
            t0 = time.perf_counter()
            self._launch(hold, 1, 1, ptrs)
            queue()
            queued_s = time.perf_counter() - t0
            self.drv.cuCtxSynchronize()
            # the next hold follows this host's pace, a retry with the slower one just seen
            self._queue_s = max(QUEUE_S, queued_s / launches)
            if queued_s < hold_s:
                return
        raise GpuprojError(f"the host took {queued_s * 1e3:.1f} ms to queue {launches} launches, "
                           f"longer than the {hold_s * 1e3:.1f} ms hold before them, "
                           f"{HOLD_TRIES} times: their event times would contain the host's")

    def run_many(self, kernel, blocks, block, arg_sets):
        out = []
        for i in range(0, len(arg_sets), MAX_QUEUED):
            params = [self._params(a) for a in arg_sets[i:i + MAX_QUEUED]]
            evs = [(self._event(), self._event()) for _ in params]

            def queue():
                for (start, end), (_, ptrs) in zip(evs, params):
                    self.drv.cuEventRecord(start, None)
                    self._launch(kernel, blocks, block, ptrs)
                    self.drv.cuEventRecord(end, None)
            try:
                self._held(queue, len(params))
                out += [self._elapsed_s(start, end) for start, end in evs]
            finally:
                for e in (e for pair in evs for e in pair):
                    self.drv.cuEventDestroy_v2(e)
        return out

    def back_to_back(self, kernel, blocks, block, args, count):
        if not 1 <= count <= MAX_QUEUED:
            raise ValueError(f"count {count} outside 1..{MAX_QUEUED}")
        _, ptrs = self._params(args)
        start, end = self._event(), self._event()

        def queue():
            self.drv.cuEventRecord(start, None)
            for _ in range(count):
                self._launch(kernel, blocks, block, ptrs)
            self.drv.cuEventRecord(end, None)
        try:
            self._held(queue, count)
            return self._elapsed_s(start, end)
        finally:
            self.drv.cuEventDestroy_v2(start)
            self.drv.cuEventDestroy_v2(end)

    def _elapsed_s(self, start, end):
        ms = ctypes.c_float()
        getattr(self.drv, self._elapsed)(ctypes.byref(ms), start, end)
        return ms.value * 1e-3

    def clocks(self):
        return nvidia_smi(self.pci_bus_id)

    def close(self):
        for m in self._modules.values():
            self.drv.cuModuleUnload(m.handle)
        self._modules.clear()
        self.drv.cuDevicePrimaryCtxRelease_v2(self.dev)


class _Module(dict):
    """Kernel name -> CUfunction, looked up on first use."""

    def __init__(self, drv, handle):
        super().__init__()
        self.drv, self.handle = drv, handle

    def __missing__(self, name):
        f = ctypes.c_void_p()
        self.drv.cuModuleGetFunction(ctypes.byref(f), self.handle, name.encode())
        self[name] = f
        return f


def prebuild(arch: str, out_dir, sizes_name: str = "full") -> list:
    """Compile every CUDA source the suite builds with preset ``sizes_name`` for ``arch`` into
    ``out_dir`` (cubins named by content hash, as ``compile_cubin`` looks them up)."""
    from .sizes import PRESETS
    from .suite import cuda_build_units

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for source, extra in cuda_build_units(PRESETS[sizes_name]):
        text = cuda_source(source, extra)
        p = out / f"{cubin_key(text, arch)}.cubin"
        p.write_bytes(compile_cubin(text, arch)[0])
        written.append(p)
    return written


def main(argv=None) -> None:
    """``python -m gpuproj.bench.cuda``: a build helper for GPU machines without nvcc; a
    ``GpuprojError`` (nvcc missing or failing) is one line and exit code 2, as in the CLI."""
    import argparse

    from .sizes import PRESETS

    ap = argparse.ArgumentParser(description="Prebuild the benchmark cubins for one GPU arch.")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="full", choices=PRESETS)
    ns = ap.parse_args(argv)
    try:
        written = prebuild(ns.arch, ns.out, ns.sizes)
    except GpuprojError as e:
        print(f"gpuproj: error: {e}", file=sys.stderr)
        sys.exit(2)
    for p in written:
        print(p)


if __name__ == "__main__":
    main()
