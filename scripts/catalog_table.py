#!/usr/bin/env python3
"""Print (or write into docs/catalog.md) the table of all bundled GPUs.

    python scripts/catalog_table.py          # print the Markdown table
    python scripts/catalog_table.py --write  # replace the table between the markers in
                                             # docs/catalog.md

The table is generated from the catalog files, so it cannot drift from them (tests/test_catalog.py
checks that the document holds the current table).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "catalog.md"
BEGIN, END = "<!-- catalog-table:begin -->", "<!-- catalog-table:end -->"


def _f(x, scale, digits):
    return "" if math.isnan(x) else f"{x / scale:.{digits}f}"


def table_markdown() -> str:
    from gpuproj.catalog import bundled_catalog

    cat = bundled_catalog()
    lines = ["| id | vendor | name | architecture | isa | SMs/CUs | FP32 peak TFLOP/s | "
             "DRAM peak TB/s | DRAM measured TB/s | L1 / shared / L2 |",
             "|---|---|---|---|---|---:|---:|---:|---:|---|"]
    for g in cat:
        levels = " / ".join(_kinds(g, f"{level}_bw_bytes_per_s")
                            for level in ("l1", "shared", "l2"))
        lines.append(f"| {g.id} | {g.vendor} | {g.name} | {g.architecture} | {g.isa} | "
                     f"{_f(g.value('sm_count'), 1, 0)} | "
                     f"{_f(g.peak('fp32_fma_flops_per_s'), 1e12, 1)} | "
                     f"{_f(g.peak('dram_bw_bytes_per_s'), 1e12, 2)} | "
                     f"{_f(g.measured('dram_bw_bytes_per_s'), 1e12, 2)} | {levels} |")
    return "\n".join(lines) + "\n"


def _kinds(g, name) -> str:
    """Which bandwidths of a memory level the GPU's file has: p (peak), m (measured), pm, or -
    (neither: a projection to it goes without that level's ceiling)."""
    return ("p" if name in g.peaks else "") + ("m" if name in g.measureds else "") or "-"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    md = table_markdown()
    if "--write" not in argv:
        sys.stdout.write(md)
        return 0
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{md}{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
