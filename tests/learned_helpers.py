"""A synthetic cross-GPU table with a known generating model, for the learned-model tests.

Four catalog GPUs; each kernel configuration's time on GPU g is its roofline time at g's
datasheet peaks divided by an efficiency that depends on the kernel (its ``eff`` parameter)
and on the GPU's compute capability, plus a 5 us launch cost, with 3 % multiplicative noise.
"""

import numpy as np
import pandas as pd

from gpuproj.catalog import resolve
from gpuproj.profiles.table import ProfileTable

GPUS = ("titan-v", "rtx-2080-ti", "rtx-4070", "gtx-titan-x")


def synthetic_table(n_configs: int = 40, kernels=("stream", "gemm", "stencil"), seed: int = 0,
                    gpus=GPUS) -> ProfileTable:
    rng = np.random.default_rng(seed)
    rows = []
    for k_i, k in enumerate(kernels):
        for c in range(n_configs):
            n = 2 ** rng.uniform(16, 26)
            ai = {0: 0.1, 1: 20.0, 2: 1.0}.get(k_i % 3, 1.0) * rng.uniform(0.5, 2)
            dram = 12.0 * n
            flops = ai * dram
            eff_k = 0.3 + 0.6 * ((k_i * 7 + c) % 5) / 5
            for g in gpus:
                gpu = resolve(g)
                roof = max(flops / gpu.peak("fp32_fma_flops_per_s"),
                           dram / gpu.peak("dram_bw_bytes_per_s"))
                cc = int(gpu.isa[3:]) / 10
                eff = eff_k * (0.6 + 0.05 * cc) if k_i % 3 == 1 else eff_k
                t = roof / min(eff, 0.95) + 5e-6
                t *= np.exp(rng.normal(0, 0.03))
                rows.append({"kernel": k, "config": f"n={int(n)}", "gpu": g, "time_s": t,
                             "flops": flops, "fp32_flops": flops, "dram_bytes": dram,
                             "working_set_bytes": dram, "block_threads": 256.0,
                             "grid_blocks": float(np.ceil(n / 256)), "regs_per_thread": 32.0,
                             "tile": float(2 ** (c % 4))})
    return ProfileTable.from_frame(pd.DataFrame(rows))
