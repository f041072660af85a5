"""Hand-counted floating-point work of the fixture kernels (``tests/data/sass/src/
fixture_kernels.cu``), the independent reference of the tests of ``target_counts``.

The counts are derived from the kernels' code and, for the special functions, from the
instruction sequences nvcc 13.0 emits for them (read off the listings in ``tests/data/sass``),
for the inputs stated: operands in the normal range, so that no slow path is taken
(``a/b`` with normal ``a``, ``b``, ``|a/b|`` normal; ``sqrtf`` of a positive normal;
``logf`` of a positive normal finite value; ``expf`` of ``|x| < 80``), and ``sinf`` of
``x`` in ``[pi, 1.25 pi)`` (quadrant 2: the sine polynomial, result negated; no Payne-Hanek
reduction). One thread per element, ``n`` threads.

Per element:

==============  =======================================================  ==================
kernel          instructions (per thread)                                FLOP
==============  =======================================================  ==================
div_f32         MUFU.RCP + 5 FFMA (Newton step and residual correction)  11
div_f64         MUFU.RCP64H + 7 DFMA + 1 DMUL; 1 FFMA range check        fp64 15, fp32 2
sqrt_f32        MUFU.RSQ + 2 FMUL + 2 FFMA                               7
exp_f32         4 FFMA + 1 FADD + 1 FMUL + MUFU.EX2                      11
log_f32         11 FFMA + 1 FADD + 1 FMUL (polynomial in the mantissa)   24
sin_f32 <sm100  3 FFMA + FMUL (reduction); FMUL + 4 FFMA (polynomial)    18
                + FFMA x*(-1) for the sign
sin_f32 >=sm100 3 FFMA + FMUL; FMUL + 5 FFMA; FADD 0-x for the sign       19
fma_loop_f32    3 FADD + iters x (4 FFMA + FMUL) + 3 FADD                 9 iters + 6
fma_loop_f64    DADD + iters x 2 DFMA + DMUL                              4 iters + 2
hfma2_f16       1 HFMA2 (2 FP16 FMA lanes)                                4 (fp16)
smem_reduce     FADD by 128 + 64 + ... + 1 = 255 threads per 256          255 per block
atomic_dot      1 FMUL (the float atomic add is not a FLOP)               1
==============  =======================================================  ==================

The polynomial of ``sinf`` picks its coefficients with a predicated FFMA before sm_100 and an
FSEL from sm_100 on, and negates the result with ``FFMA x, -1, RZ`` before and ``FADD RZ, -x``
from sm_100 on: that is the FLOP difference the SASS comparison has to find.
"""

from __future__ import annotations

from gpuproj.sass.counts import CANONICAL

KERNELS = ("div_f32", "div_f64", "sqrt_f32", "exp_f32", "log_f32", "sin_f32", "fma_loop_f32",
           "fma_loop_f64", "hfma2_f16", "smem_reduce_f32", "atomic_dot_f32")


def _per_thread(kernel: str, arch: int, iters: int) -> dict[str, float]:
    """Thread instructions per thread (per element) by schema column."""
    if kernel == "div_f32":
        return {"fp32_fma_thread_inst": 5, "fp32_special_thread_inst": 1}
    if kernel == "div_f64":
        return {"fp64_fma_thread_inst": 7, "fp64_mul_thread_inst": 1, "fp32_fma_thread_inst": 1}
    if kernel == "sqrt_f32":
        return {"fp32_fma_thread_inst": 2, "fp32_mul_thread_inst": 2,
                "fp32_special_thread_inst": 1}
    if kernel == "exp_f32":
        return {"fp32_fma_thread_inst": 4, "fp32_add_thread_inst": 1, "fp32_mul_thread_inst": 1,
                "fp32_special_thread_inst": 1}
    if kernel == "log_f32":
        return {"fp32_fma_thread_inst": 11, "fp32_add_thread_inst": 1, "fp32_mul_thread_inst": 1}
    if kernel == "sin_f32":
        if arch >= 100:
            return {"fp32_fma_thread_inst": 3 + 5, "fp32_mul_thread_inst": 2,
                    "fp32_add_thread_inst": 1}
        return {"fp32_fma_thread_inst": 3 + 4 + 1, "fp32_mul_thread_inst": 2}
    if kernel == "fma_loop_f32":
        return {"fp32_fma_thread_inst": 4 * iters, "fp32_mul_thread_inst": iters,
                "fp32_add_thread_inst": 6}
    if kernel == "fma_loop_f64":
        return {"fp64_fma_thread_inst": 2 * iters, "fp64_add_thread_inst": 1,
                "fp64_mul_thread_inst": 1}
    if kernel == "hfma2_f16":
        return {"fp16_fma_thread_inst": 2}
    if kernel == "smem_reduce_f32":
        return {"fp32_add_thread_inst": 255 / 256}
    if kernel == "atomic_dot_f32":
        return {"fp32_mul_thread_inst": 1}
    raise KeyError(f"not a fixture kernel: {kernel}")


def fixture_counts(kernel: str, arch: int, n: int, iters: int = 1) -> dict[str, float]:
    """Schema FP columns (thread instructions and FLOPs) of one launch of a fixture kernel
    with ``n`` threads (``iters`` loop iterations for the ``fma_loop`` kernels).

    >>> [fixture_counts("sin_f32", n, 1000)["fp32_flops"] for n in (90, 100)]
    [18000.0, 19000.0]
    >>> fixture_counts("smem_reduce_f32", 80, 4 * 256)["fp32_flops"]
    1020.0
    """
    out = dict.fromkeys(CANONICAL, 0.0)
    for c, v in _per_thread(kernel, arch, iters).items():
        out[c] = float(v) * n
    for p in ("fp64", "fp32", "fp16"):
        out[f"{p}_flops"] = (2 * out[f"{p}_fma_thread_inst"] + out[f"{p}_add_thread_inst"]
                             + out[f"{p}_mul_thread_inst"])
    out["fp32_flops"] += out["fp32_special_thread_inst"]
    out["flops"] = out["fp64_flops"] + out["fp32_flops"] + out["fp16_flops"]
    return out
