#!/usr/bin/env python
"""Regenerate the SASS fixtures of tests/data/sass/ from tests/data/sass/src/fixture_kernels.cu.

Needs nvcc (a CUDA toolkit) and nvdisasm/cuobjdump (``pip install 'gpuproj[sass]'``). For each
architecture it compiles the kernels to a cubin (``nvcc -cubin -O3 -arch=sm_XX``) and writes

- ``nvdisasm-sm_XX-fixture_kernels.sass``  ``nvdisasm -c`` text (all architectures),
- ``nvdisasm-sm_XX-fixture_kernels.json``  ``nvdisasm -json`` (``--json-archs``),
- ``cuobjdump-sm_XX-fixture_kernels.sass`` ``cuobjdump -sass`` text (``--cuobjdump-archs``),

``fixture_kernels-sm_90-sm_100.fatbin`` (``nvcc -fatbin -O3`` for both: what ``gpuproj predict
--sass`` reads when the source and the target are of two architectures),
``nvdisasm-sm_XX-idiom_kernels.sass`` and, for the ``--json-archs`` among them, ``.json``
(tests/data/sass/src/idiom_kernels.cu for ``--idiom-archs``: constructs the parser must read
right, no hand count), ``nvdisasm-sm_XX-unroll_kernels.sass`` (tests/data/sass/src/
unroll_kernels.cu for ``--unroll-archs``: a loop each compiler unrolls by its own factor) and
``MANIFEST.txt`` with the tool versions. Usage:

    python scripts/make_sass_fixtures.py [--archs sm_75,sm_80,sm_90,sm_100,sm_120]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gpuproj.sass.tools import compile_cu, find_tool, parse_arch, tool_version

SRC = ROOT / "tests/data/sass/src/fixture_kernels.cu"
IDIOMS = ROOT / "tests/data/sass/src/idiom_kernels.cu"
UNROLL = ROOT / "tests/data/sass/src/unroll_kernels.cu"
OUT = ROOT / "tests/data/sass"
FATBIN_ARCHS = (90, 100)
FATBIN = f"{SRC.stem}-" + "-".join(f"sm_{a}" for a in FATBIN_ARCHS) + ".fatbin"


def run(args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archs", default="sm_75,sm_80,sm_90,sm_100,sm_120")
    ap.add_argument("--json-archs", default="sm_80,sm_90,sm_100")
    ap.add_argument("--cuobjdump-archs", default="sm_75")
    ap.add_argument("--idiom-archs", default="sm_75,sm_80,sm_90")
    ap.add_argument("--unroll-archs", default="sm_90,sm_100")
    a = ap.parse_args(argv)
    archs = [parse_arch(x) for x in a.archs.split(",")]
    idiom_archs = [parse_arch(x) for x in a.idiom_archs.split(",") if x]
    unroll_archs = [parse_arch(x) for x in a.unroll_archs.split(",") if x]
    json_archs = {parse_arch(x) for x in a.json_archs.split(",") if x}
    cuobj_archs = {parse_arch(x) for x in a.cuobjdump_archs.split(",") if x}
    nvdisasm, cuobjdump = find_tool("nvdisasm"), find_tool("cuobjdump")
    stem = SRC.stem
    with tempfile.TemporaryDirectory() as tmp:
        for arch in archs:
            cubin = compile_cu(SRC, arch, tmp)
            (OUT / f"nvdisasm-sm_{arch}-{stem}.sass").write_text(run([nvdisasm, "-c", str(cubin)]))
            if arch in json_archs:
                (OUT / f"nvdisasm-sm_{arch}-{stem}.json").write_text(
                    run([nvdisasm, "-json", str(cubin)]))
            if arch in cuobj_archs:
                (OUT / f"cuobjdump-sm_{arch}-{stem}.sass").write_text(
                    run([cuobjdump, "-sass", str(cubin)]))
            print(f"sm_{arch}: done", file=sys.stderr)
        for arch in idiom_archs:
            cubin = compile_cu(IDIOMS, arch, tmp)
            (OUT / f"nvdisasm-sm_{arch}-{IDIOMS.stem}.sass").write_text(
                run([nvdisasm, "-c", str(cubin)]))
            if arch in json_archs:
                (OUT / f"nvdisasm-sm_{arch}-{IDIOMS.stem}.json").write_text(
                    run([nvdisasm, "-json", str(cubin)]))
        for arch in unroll_archs:
            cubin = compile_cu(UNROLL, arch, tmp)
            (OUT / f"nvdisasm-sm_{arch}-{UNROLL.stem}.sass").write_text(
                run([nvdisasm, "-c", str(cubin)]))
    run([find_tool("nvcc"), "-fatbin", "-O3", *(f"-gencode=arch=compute_{a},code=sm_{a}"
                                                for a in FATBIN_ARCHS),
         "-o", str(OUT / FATBIN), str(SRC)])
    (OUT / "MANIFEST.txt").write_text(
        f"source: tests/data/sass/src/{SRC.name}\n"
        f"compiled with: nvcc -cubin -O3 -arch=sm_XX ({tool_version('nvcc')})\n"
        f"{FATBIN}: nvcc -fatbin -O3, " + ", ".join(f"sm_{a}" for a in FATBIN_ARCHS) + "\n"
        f"disassembled with: nvdisasm ({tool_version('nvdisasm')}), "
        f"cuobjdump ({tool_version('cuobjdump')})\n"
        f"architectures: {', '.join(f'sm_{x}' for x in archs)}\n"
        f"also: tests/data/sass/src/{IDIOMS.name}: nvdisasm text for "
        f"{', '.join(f'sm_{x}' for x in idiom_archs)}, -json for "
        f"{', '.join(f'sm_{x}' for x in idiom_archs if x in json_archs) or 'none'}\n"
        f"also: tests/data/sass/src/{UNROLL.name}: nvdisasm text for "
        f"{', '.join(f'sm_{x}' for x in unroll_archs)}\n"
        "regenerate: python scripts/make_sass_fixtures.py\n")


if __name__ == "__main__":
    main()
