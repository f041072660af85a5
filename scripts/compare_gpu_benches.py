#!/usr/bin/env python3
"""Compare a `gpuproj bench` raw result (JSON) with the public gpu-benches measurements of the
same GPU (te42kyfo/gpu-benches, ../shared/data/external/gpu-benches) and print / write a
Markdown table for docs/bench.md.

    python scripts/compare_gpu_benches.py out/h200-sxm-141gb.json [--gpu-benches DIR]
        [--gpu ID] [--out compare.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gpuproj.bench.compare import GPU_BENCHES_NAMES, compare, markdown
from gpuproj.bench.entry import read_result
from gpuproj.catalog import load_catalog
from gpuproj.errors import GpuprojError


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", help="raw JSON written by gpuproj bench")
    ap.add_argument("--gpu-benches", default=str(ROOT.parent / "shared" / "data" / "external"
                                                 / "gpu-benches"))
    ap.add_argument("--gpu", help="the GPU, as the catalog resolves it (default: the device name)")
    ap.add_argument("--out", help="write the Markdown table here")
    ns = ap.parse_args(argv)
    try:
        raw = read_result(ns.raw)
    except GpuprojError as e:
        sys.exit(f"compare: {e}")
    try:
        gid = load_catalog().resolve(ns.gpu or raw["device"]["name"]).id
    except GpuprojError as e:
        sys.exit(f"compare: {e}; pass --gpu")
    if gid not in GPU_BENCHES_NAMES:
        sys.exit(f"compare: gpu-benches has no data for {gid} (known: "
                 f"{', '.join(sorted(GPU_BENCHES_NAMES))})")
    stem, caveat = GPU_BENCHES_NAMES[gid]
    try:
        rows = compare(raw, ns.gpu_benches, stem)
    except GpuprojError as e:  # e.g. a --gpu-benches folder without the GPU's files
        sys.exit(f"compare: {e}")
    text = markdown(rows, f"{raw['device']['name']} ({raw['date']}) against gpu-benches {stem}",
                    caveat)
    print(text)
    if ns.out:
        Path(ns.out).write_text(text)


if __name__ == "__main__":
    main()
