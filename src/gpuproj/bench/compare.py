"""Compare a ``gpuproj bench`` result with the public gpu-benches measurements of the same GPU
(te42kyfo/gpu-benches, data under GPL-3.0; copy in ``shared/data/external/gpu-benches``).

Parsed files (values by column name after the ``GB/s:`` marker, never by guessing):

- ``gpu-stream/<gpu>.txt``: bandwidth per block size / occupancy for init, read, scale, triad;
  the best row of each column is compared with our stream_* figure;
- ``gpu-l2-cache/<gpu>.txt``: effective bandwidth against total data set; the row whose data
  set is closest to our L2 working set is compared with l2_read;
- ``gpu-cache/<gpu>.txt``: effective bandwidth against per-SM data set; the row closest to our
  L1 working set is compared with l1_read;
- ``gpu-roofline/<gpu>.txt``: the best GF/s of its intensity sweep (precision as gpu-benches
  ran it) is compared with our best mixbench FP32 point.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError

# catalog id -> gpu-benches file stem; a board that gpu-benches measured in another form factor
# is listed with the stem and a caveat
GPU_BENCHES_NAMES = {
    "h200-sxm-141gb": ("h200", None),
    "h100-pcie-80gb": ("h100_pcie", None),
    "h100-sxm5-80gb": ("h100_pcie", ("gpu-benches measured the H100 PCIe (114 SMs, HBM2e); "
                                     "compare fractions of each board's peak, not absolutes")),
    "a100-sxm4-80gb": ("a100_80", None),
    "a100-sxm4-40gb": ("a100_40", None),
    "v100-sxm2-32gb": ("v100", None),
    "a40": ("a40", None),
    "l40": ("l40", None),
}

# gpu-benches prints binary sizes under decimal names: gpu-l2-cache/main.cu and gpu-cache/main.cu
# write ``blockDV / 1024 << " kB"`` (the profiles reader's gpu_benches.KIB); read as 1000 B, a
# row's data set came out 2.4 % small, which moved the row nearest our working set and the
# size its label names
_UNIT = {"kB": 1024, "MB": 1024**2, "GB": 1024**3}


def parse_stream(path) -> dict:
    """Best GB/s (as bytes/s) per column of a gpu-stream file: {init, read, scale, triad, ...}."""
    lines = Path(path).read_text().splitlines()
    if not lines or "blockSize" not in lines[0]:
        raise InputError("not a gpu-stream file (no blockSize header)", path=path, row=1)
    cols = lines[0].split("|", 1)[1].split()
    best = {}
    for i, ln in enumerate(lines[1:], start=2):
        if "GB/s:" not in ln:
            continue
        vals = ln.split("GB/s:", 1)[1].split()
        if len(vals) != len(cols):
            raise InputError(f"{len(vals)} values for {len(cols)} columns", path=path, row=i)
        for c, v in zip(cols, vals):
            best[c] = max(best.get(c, 0.0), float(v) * 1e9)
    return best


def parse_size_bw(path) -> list:
    """(data set bytes, effective bytes/s) rows of a gpu-cache or gpu-l2-cache file (the last
    size before the time column is the total data set)."""
    rows = []
    pat = re.compile(r"([\d.]+)\s*(kB|MB|GB)\s+([\d.]+)\s*ms\s+([\d.]+)%\s+([\d.]+)\s*GB/s")
    for ln in Path(path).read_text().splitlines():
        m = None
        for m in pat.finditer(ln):
            pass
        if m:
            rows.append((float(m.group(1)) * _UNIT[m.group(2)], float(m.group(5)) * 1e9))
    if not rows:
        raise InputError("no '<size> kB <time>ms <spread>% <bw> GB/s' rows", path=path)
    return rows


def parse_roofline(path) -> dict:
    """Best GF/s and best GB/s of a gpu-roofline file (as FLOP/s and bytes/s)."""
    pat = re.compile(r"([\d.]+)\s+Fl/B\s+([\d.]+)\s+GB/s\s+([\d.]+)\s+GF/s")
    best_f = best_b = 0.0
    for ln in Path(path).read_text().splitlines():
        m = pat.search(ln)
        if m:
            best_b = max(best_b, float(m.group(2)) * 1e9)
            best_f = max(best_f, float(m.group(3)) * 1e9)
    if best_f == 0:
        raise InputError("no '<I> Fl/B <bw> GB/s <f> GF/s' rows", path=path)
    return {"flops_per_s": best_f, "bytes_per_s": best_b}


def _closest(rows, size):
    return min(rows, key=lambda r: abs(r[0] - size))


FOLDERS = ("gpu-stream", "gpu-l2-cache", "gpu-cache", "gpu-roofline")


def compare(raw, root, stem: str) -> list:
    """Rows {metric, ours, theirs, ratio, theirs_source} for every figure both sides have;
    ``InputError`` where ``root`` holds none of gpu-benches' files for ``stem`` (a wrong folder
    would give an empty table)."""
    root = Path(root)
    if not any((root / d / f"{stem}.txt").is_file() for d in FOLDERS):
        raise InputError(f"no gpu-benches file for '{stem}' here (looked for "
                         f"{', '.join(f'{d}/{stem}.txt' for d in FOLDERS)})", path=root)
    ours = {m["name"]: m for m in raw["measurements"]}
    rows = []

    def add(metric, our, their, src):
        rows.append({"metric": metric, "ours": our, "theirs": their,
                     "ratio": our / their if their else float("nan"), "theirs_source": src})

    f = root / "gpu-stream" / f"{stem}.txt"
    if f.is_file():
        st = parse_stream(f)
        for col in ("init", "read", "scale", "triad"):
            if col in st and f"stream_{col}" in ours:
                add(f"stream_{col}", ours[f"stream_{col}"]["value"], st[col],
                    f"gpu-stream/{stem}.txt best {col}")
    for name, folder, unit, per_unit in (("l2_read", "gpu-l2-cache", "MB", 1e6),
                                         ("l1_read", "gpu-cache", "kB", 1e3)):
        f = root / folder / f"{stem}.txt"
        if f.is_file() and name in ours:
            ws = ours[name]["params"]["working_set_bytes"]
            size, bw = _closest(parse_size_bw(f), ws)
            add(name, ours[name]["value"], bw,
                f"{folder}/{stem}.txt at {size / per_unit:.3g} {unit}")
    f = root / "gpu-roofline" / f"{stem}.txt"
    mix = [p for p in (raw.get("sweeps") or {}).get("mixbench", []) if p["precision"] == "fp32"]
    if f.is_file() and mix:
        rf = parse_roofline(f)
        add("mixbench_best_flops", max(p["flops_per_s"] for p in mix), rf["flops_per_s"],
            f"gpu-roofline/{stem}.txt best GF/s")
    return rows


def markdown(rows, title: str, caveat: str | None = None) -> str:
    out = [f"### {title}", ""]
    if caveat:
        out += [f"Caveat: {caveat}.", ""]
    out += ["| metric | gpuproj | gpu-benches | ratio | gpu-benches row |", "|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['metric']} | {r['ours']:.4g} | {r['theirs']:.4g} | {r['ratio']:.3f} | "
                   f"{r['theirs_source']} |")
    return "\n".join(out) + "\n"
