"""Helpers shared by the SASS tests: fixture paths, and an Nsight Compute source-page CSV written
from a listing with execution counts chosen by hand (the source GPU's 'measured' counts)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from gpuproj.sass import build_cfg

DATA = Path(__file__).parent / "data" / "sass"
ARCHS = (75, 80, 90, 100, 120)
JSON_ARCHS = (80, 90, 100)


def listing(arch: int, ext: str = "sass", tool: str = "nvdisasm",
            source: str = "fixture_kernels") -> Path:
    """A fixture of scripts/make_sass_fixtures.py: of fixture_kernels.cu, or of
    idiom_kernels.cu (``source="idiom_kernels"``, sm_75 to sm_90)."""
    return DATA / f"{tool}-sm_{arch}-{source}.{ext}"


# The path normal inputs take through each kernel compiled for sm_90 (block start -> executions
# per thread), read off tests/data/sass/nvdisasm-sm_90-fixture_kernels.sass, and the fraction of
# threads whose predicate is true for predicated instructions (by predicate, or by offset).
SM90_PATHS = {
    "div_f32": ({0x0: 1, 0x80: 1, 0x1b0: 1}, {}),
    "div_f64": ({0x0: 1, 0x80: 1, 0x200: 1}, {}),
    "sqrt_f32": ({0x0: 1, 0x80: 1, 0x140: 1, 0x180: 1}, {}),
    "exp_f32": ({0x0: 1, 0x80: 1}, {}),
    # @!P0: denormal input scaling, @P1: infinite input -> neither taken
    "log_f32": ({0x0: 1, 0x80: 1}, {"@!P0": 0.0, "@P1": 0.0}),
    # quadrant 2: @P1 (cosine coefficients) false, @P0 (negate) true
    "sin_f32": ({0x0: 1, 0x80: 1, 0x830: 1}, {"@P1": 0.0, "@P0": 1.0}),
    "fma_loop_f32": ({0x0: 1, 0x80: 1, 0x120: 1, 0x170: "iters", 0x1f0: 1}, {}),
    "fma_loop_f64": ({0x0: 1, 0x80: 1, 0x100: 1, 0x150: "iters", 0x1a0: 1}, {}),
    "hfma2_f16": ({0x0: 1, 0x80: 1}, {}),
    "smem_reduce_f32": ({0x0: 1, 0x400: 1}, {"smem": None}),
    "atomic_dot_f32": ({0x0: 1, 0x80: 1}, {}),
}


def ncu_source_csv(program, kernels, n: int, iters: int = 1, paths=SM90_PATHS) -> str:
    """The text of `ncu --page source --csv --print-source sass` for `kernels` of `program`
    launched with n threads (n a multiple of 32), all active in the executed blocks."""
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL)
    base = 0x7F3A_2C00_0000
    for k in kernels:
        f = program[k]
        cfg = build_cfg(f)
        blocks, preds = paths[k]
        w.writerow(["Kernel Name", k])
        w.writerow(["Address", "Source", "Warp Stall Sampling (All Samples)",
                    "Instructions Executed", "Thread Instructions Executed",
                    "Predicated-On Thread Instructions Executed", "Address Space"])
        fadd_k = 0
        for b in sorted(cfg.blocks.values(), key=lambda b: b.start):
            per = blocks.get(b.start, 0)
            per = iters if per == "iters" else per
            for i in b.instructions:
                threads = n * per
                p = threads
                if i.predicated and threads:
                    if "smem" in preds and i.base == "FADD":
                        p = threads * (128 >> fadd_k) / 256   # step k: stride 128 >> k
                        fadd_k += 1
                    else:
                        p = threads * preds.get(i.predicate, 1.0)
                src = i.text()
                if i.target is not None:
                    src = src.split("`")[0] + hex(base + i.target)
                w.writerow([f"0x{base + i.offset:x}", src, "0", f"{threads // 32:,}",
                            f"{threads:,}", f"{p:,.0f}", ""])
    return out.getvalue()
