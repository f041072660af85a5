"""A benchmark device of known ceilings, for tests.

``SimulatedBackend`` is a ``gpuproj.bench.backend.Backend`` whose event timer returns how long
each kernel of ``gpuproj/bench/kernels`` takes on a device with exactly the throughputs of
``CEILINGS``: the work a launch does is counted here from the kernel sources (their comments give
the counts), independently of the bookkeeping in ``gpuproj.bench.suite``, and divided by the
ceiling of the resource it uses. Only the empty kernel costs a fixed time per launch and per
block; every other kernel takes its work over its ceiling and nothing else, so the suite must
return each ceiling exactly. It lets the whole bench pipeline (suite, result file, catalog
entry, table, pictures) run where no OpenCL or CUDA device is.
"""

import math

import numpy as np

from gpuproj.bench.backend import Backend, DeviceInfo

KiB, MiB = 1024, 1024**2
L1_BYTES, L2_BYTES = 64 * KiB, 4 * MiB

CEILINGS = {
    # FLOP/s or op/s of each compute kernel (compute.cl)
    "fp32_fma": 10e12, "fp32_add": 4e12, "fp32_mul": 5e12, "fp64_fma": 5e12, "fp64_add": 2e12,
    "fp64_mul": 2.5e12, "fp16x2_fma": 20e12, "int32_mad": 5e12, "int32_add": 4e12,
    "sfu_rsqrt": 1.25e12,
    # bytes/s
    "dram": 1e12, "dram_read": 1.1e12, "dram_write": 0.9e12, "l2": 3e12, "l1": 8e12,
    "shared_loads_per_s": 2e12,  # thread-level shared-memory loads, without bank conflicts
}
SHARED_BANKS = 32
KERNEL_S, BLOCK_S = 2e-6, 1e-8  # an empty kernel, + per block
LATENCY_S = {"l1": 30e-9, "l2": 200e-9, "dram": 500e-9}  # one dependent 64-byte line load

# compute.cl: each work-item runs iters x 16 (unroll) x 8 (chains) steps of OPS_PER_STEP
# instructions, each worth WORK_PER_OP FLOP or op
UNROLL_X_CHAINS = 16 * 8
OPS_PER_STEP = {"fp32_add": 2, "fp32_mul": 2, "fp64_add": 2, "fp64_mul": 2}
WORK_PER_OP = {"fp32_fma": 2, "fp64_fma": 2, "fp16x2_fma": 4, "int32_mad": 2}
# memory.cl: float4 arrays read + written per element of a STREAM kernel
STREAM_ARRAYS = {"init": 1, "read": 1, "copy": 2, "scale": 2, "add": 3, "triad": 3}
STREAM_CEILING = {"init": "dram_write", "read": "dram_read"}
# mixbench.cl: element bytes, FLOP per FMA, and the compute kernel of the same precision
MIX = {"fp32": (4, 2, "fp32_fma"), "fp64": (8, 2, "fp64_fma"), "fp16x2": (4, 4, "fp16x2_fma")}


class Buffer:
    """Device memory; ``value``: what every element holds (0 where never written, as the
    stand-in driver's), unless ``data``, the array last uploaded, is there (no kernel has
    written since)."""

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.value = 0.0
        self.data = None


# what every simulated compute kernel stores (finite, no seed); None: nothing, as on the
# stand-in driver of tests/data/libcuda_stub.c
COMPUTE_RESULT = 1.0625

# memory.cl's STREAM kernels on buffers of one value each: (argument written, its new value)
STREAM_EFFECT = {
    "stream_init": lambda a, s: (a, s),
    "stream_copy": lambda a, b: (b, a.value),
    "stream_scale": lambda a, b, s: (b, s * a.value),
    "stream_add": lambda a, b, c: (c, a.value + b.value),
    "stream_triad": lambda a, b, c, s: (a, b.value + s * c.value),
}


class Module(dict):
    """Kernels of a build, by name: the kernel is its name."""

    def __missing__(self, name):
        return name


class SimulatedBackend(Backend):
    name = "simulated"

    def __init__(self):
        self.info = DeviceInfo(
            backend="simulated", name="Simulated GPU", vendor="Test", device_type="GPU",
            compute_units=10, warp_size=32, max_block_size=1024, local_mem_bytes=48 * KiB,
            global_mem_bytes=1024 * MiB, l2_bytes=L2_BYTES, clock_hz=1.5e9, isa="sim",
            architecture="Simulated", fp64=True, fp16=True, driver_version="-",
            runtime_version="-")
        self.live = set()  # buffers allocated and not freed

    def build(self, source, extra="", defines=None):
        return Module()

    def alloc(self, nbytes):
        buf = Buffer(nbytes)
        self.live.add(buf)
        return buf

    def upload(self, buf, array):
        assert array.nbytes <= buf.nbytes, "upload larger than the buffer"
        buf.data = np.array(array)

    def free(self, buf):
        self.live.remove(buf)

    def download(self, buf, dtype, count):
        if buf.data is not None:  # uploaded, not written since
            return buf.data.view(np.uint8)[:count * np.dtype(dtype).itemsize].view(dtype)
        return np.full(count, buf.value, dtype=dtype)

    def run_many(self, kernel, blocks, block, arg_sets):
        assert 1 <= block <= self.info.max_block_size
        for args in arg_sets:
            if kernel in STREAM_EFFECT:
                out, value = STREAM_EFFECT[kernel](*args)
                out.value, out.data = float(value), None
            elif kernel in CEILINGS and COMPUTE_RESULT is not None:  # the mean of its chains
                args[0].value, args[0].data = COMPUTE_RESULT, None
            elif kernel == "ws_read" and 8 * args[0].value < 0:  # (in, out, mask, 2): 2 float4
                args[1].value, args[1].data = 8 * args[0].value, None
            elif kernel == "smem_read" and int(args[2]) == 0:  # stride 0 stores the sum, 0
                args[0].value, args[0].data = 0.0, None
            elif kernel == "empty" and int(args[1]) < blocks * block:  # the sentinel work-item
                args[0].value, args[0].data = 1.0, None
            elif kernel == "chase":  # (next, out, steps, start): out[0] = the node it ends on
                j, nxt = int(args[3]), args[0].data
                for _ in range(int(args[2])):
                    j = int(nxt[j])
                args[1].value, args[1].data = j, None
        return [self.duration(kernel, blocks, block, args) for args in arg_sets]

    def back_to_back(self, kernel, blocks, block, args, count):
        return count * self.duration(kernel, blocks, block, args)

    @staticmethod
    def duration(kernel, blocks, block, args):
        """Seconds one launch of ``kernel`` takes on the simulated device."""
        threads = blocks * block
        if kernel in CEILINGS:  # compute.cl: (out, iters, b, c)
            ops = threads * int(args[1]) * UNROLL_X_CHAINS * OPS_PER_STEP.get(kernel, 1)
            return ops * WORK_PER_OP.get(kernel, 1) / CEILINGS[kernel]
        if kernel.startswith("stream_"):  # one float4 per work-item and array
            name = kernel.removeprefix("stream_")
            nbytes = threads * 16 * STREAM_ARRAYS[name]
            return nbytes / CEILINGS[STREAM_CEILING.get(name, "dram")]
        if kernel == "ws_read":  # (in, out, mask, iters): iters float4 loads per work-item
            ws = (int(args[2]) + 1) * 16
            level = "l1" if ws <= L1_BYTES else "l2" if ws <= L2_BYTES else "dram_read"
            return threads * int(args[3]) * 16 / CEILINGS[level]
        if kernel == "smem_read":  # (out, iters, stride): 8 loads per iteration
            ways = math.gcd(int(args[2]), SHARED_BANKS)
            return threads * int(args[1]) * 8 * ways / CEILINGS["shared_loads_per_s"]
        if kernel.startswith("mix_"):  # mix_<prec>_<K>: 4 elements per work-item, K FMAs each
            _, prec, k = kernel.split("_")
            elem_bytes, flop_per_fma, peak = MIX[prec]
            n = threads * 4
            return max(n * int(k) * flop_per_fma / CEILINGS[peak],
                       n * elem_bytes * 2 / CEILINGS["dram"])
        if kernel == "chase":  # (next, out, steps, start): one dependent load per step
            nbytes = args[0].nbytes
            level = "l1" if nbytes <= L1_BYTES else "l2" if nbytes <= L2_BYTES else "dram"
            return int(args[2]) * LATENCY_S[level]
        if kernel == "empty":
            return KERNEL_S + BLOCK_S * blocks
        raise AssertionError(f"the simulated device has no kernel {kernel}")
