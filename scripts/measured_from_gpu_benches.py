#!/usr/bin/env python3
"""Fill the ``measured:`` section of bundled GPU files from public microbenchmark results.

Sources (see ``/work/shared/data/external/README.md`` for provenance and licences):

- gpu-benches (github te42kyfo/gpu-benches @1c36d50, GPL-3.0 data):
  - ``gpu-stream/<gpu>.txt``: bandwidth over an occupancy sweep. Max of ``init`` (A[i] = c, one
    store stream) -> ``dram_write_bw_bytes_per_s``; max of ``read`` -> ``dram_read_bw_bytes_per_s``;
    max of ``triad`` (A[i] = B[i] + c*C[i]) -> ``dram_bw_bytes_per_s``.
  - ``gpu-l2-cache/<gpu>.txt``: bandwidth over the total data set. L2 plateau = median over data
    sets no larger than half the catalog's L2 size (half, because A100/H100 split the L2 into two
    partitions and the benchmark's first points run at the near partition) ->
    ``l2_bw_bytes_per_s``. On GPUs with an L3 (Infinity Cache) in the catalog, the L3 plateau =
    median over data sets from 4 x the L2 size (past the L2's fall-off) to half the L3 size ->
    ``l3_bw_bytes_per_s``.
  - ``gpu-cache/<gpu>.txt``: bandwidth over the per-SM data set. L1 plateau = median over data sets
    of at most 16 kB (fits every part's L1 / L0) -> ``l1_bw_bytes_per_s``.
  - ``gpu-roofline/<gpu>.txt``: max GF/s over the arithmetic-intensity sweep ->
    ``fp32_fma_flops_per_s`` (the files print 0.25 Fl/B at 0 inner iterations; the benchmark
    computes (2 + 2N) / (2 sizeof(T)), so T was 4-byte float).
  - ``gpu-small-kernels/<gpu>.txt`` (the file without a suffix: one launch per repetition,
    back to back): the shortest time per kernel at the smallest size, n = 4096 doubles, over
    the block sizes -> ``launch_overhead_s``. Its 64 kB take about 10 ns at L2 bandwidth, so
    the time is that of a launch. Part of it may be the host's: the same kernel launched from
    a CUDA graph (``h200_graph.txt``) takes 1.3 us where plain launches take 2.4, and
    ``gpuproj bench`` now times queued launches on the device, which the next H200 run will
    set beside these. The gpu-benches small-kernels table of docs/accuracy.md is then
    in-sample at its smallest sizes (as the L2 sweep is for the L2 ceilings).
  - ``gpu-latency/<gpu>.txt``: pointer-chase latency over the working set (columns: steps,
    clock MHz, working set kB, ns per step times steps / 1e6, cycles per step). DRAM latency =
    cycles per step / clock at the working set nearest 256 MiB among those at least 4 x the
    last-level cache (L3 where the catalog has one, else L2) -> ``dram_latency_s``: the size
    ``gpuproj bench``'s own chase uses, past the cache but short of the TLB misses that raise
    the latency at gigabytes (the RX 6900 XT: 666 ns at 340 MB, 762 ns at 1.5 GB).
- seed-report-4gpus ``gpu_metrics.json`` (github Debdeep23/Kernel_Performance_Prediction @f808e85):
  ``sustained_bandwidth_gbps`` x 2 -> ``dram_bw_bytes_per_s``, ``sustained_compute_gflops`` ->
  ``fp32_fma_flops_per_s`` (the file lists it next to ``peak_fp32_gflops``). The report's
  ``collect_gpu_metrics.cu`` times a ``cudaMemcpyDeviceToDevice`` of 256 MiB and divides that
  size by the time, but the copy reads and writes it: the DRAM moves twice the size (CUDA's
  ``bandwidthTest`` counts a device-to-device copy so). As printed, the four GPUs reach 37-46 %
  of their DRAM peak; doubled, 74-92 %, where STREAM-like kernels reach on other GPUs. Its
  compute rate, a chain of dependent FMAs per thread over 2^20 threads, reaches 69-78 % of the
  boost-clock FP32 peak on the TITAN V, RTX 2080 Ti and GTX TITAN X and 35 % on the RTX 4070
  (an Ada SM must issue an FP32 warp instruction on every scheduler every clock for its peak);
  kept as measured.

Run from the repository root (rerunnable; only the ``measured:`` entries it produces are replaced,
everything else in each file is read and written back unchanged; an entry measured by
``gpuproj bench`` on the GPU itself, data/bench/, is kept in place of a public file's)::

    python scripts/measured_from_gpu_benches.py [--data /work/shared/data/external] [--dry-run]

Units: the benchmarks print decimal GB/s and GF/s; the catalog stores bytes/s and FLOP/s.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

import yaml

# one map of the files to GPUs, and one parser of the small-kernels files
from gpuproj.profiles.readers.gpu_benches import GPU_FILES
from gpuproj.profiles.readers.gpu_benches import read as read_gpu_benches

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "src" / "gpuproj" / "catalog" / "gpus"
BENCHES = "gpu-benches @1c36d50"
SEED = "seed-report-4gpus @f808e85 gpu_metrics.json"
OURS = "gpuproj bench"

SEED_MAP = {
    "NVIDIA TITAN V": "titan-v",
    "NVIDIA GeForce RTX 2080 Ti": "rtx-2080-ti",
    "NVIDIA GeForce RTX 4070": "rtx-4070",
    "NVIDIA GeForce GTX TITAN X": "gtx-titan-x",
}


def _src(path: Path, what: str, assumption: str) -> str:
    rel = f"{path.parent.name}/{path.name}"
    return f"{BENCHES} {rel}: {what}" + (f" ({assumption})" if assumption else "")


def parse_stream(path: Path) -> dict:
    """Max GB/s per kernel column of a gpu-stream result file -> {column: GB/s}."""
    header, best = None, {}
    for line in path.read_text().splitlines():
        if "blockSize" in line:
            header = line.split("|")[1].split()
            continue
        if "GB/s:" not in line or header is None:
            continue
        vals = [float(x) for x in line.split("GB/s:")[1].split()]
        for name, v in zip(header, vals):
            best[name] = max(best.get(name, 0.0), v)
    return best


def _rows_kb_bw(path: Path, size_col: int):
    """(data set kB, Eff. bw GB/s) rows of gpu-cache / gpu-l2-cache files."""
    rows = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if "GB/s" not in parts or "kB" not in parts:
            continue
        try:
            size_kb = float(parts[size_col])
            bw = float(parts[parts.index("GB/s") - 1])
        except (ValueError, IndexError):
            continue
        rows.append((size_kb, bw))
    return rows


def set_plateau(path: Path, lo_bytes: float, hi_bytes: float) -> tuple[float, int]:
    """Median Eff. bw (GB/s) of a gpu-l2-cache file over the total data sets in [lo, hi] bytes,
    and how many points it used: the L2 plateau is [0, L2/2], the L3's [4 x L2, L3/2]."""
    # columns: <per-block kB> kB <total kB> kB <time> <spread> <bw> GB/s ...
    rows = [(s, b) for s, b in _rows_kb_bw(path, 2) if lo_bytes <= s * 1024 <= hi_bytes]
    return statistics.median(b for _, b in rows), len(rows)


def l1_plateau(path: Path, max_kb: float = 16) -> tuple[float, int]:
    """Median Eff. bw (GB/s) over per-SM data sets <= ``max_kb`` kB."""
    rows = [(s, b) for s, b in _rows_kb_bw(path, 0) if s <= max_kb]
    return statistics.median(b for _, b in rows), len(rows)


def dram_latency(path: Path, llc_bytes: float) -> tuple[float, float]:
    """(DRAM latency s, its working set bytes) of a gpu-latency file: the point nearest 256 MiB
    among those at least 4 x ``llc_bytes``."""
    rows = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) != 5:
            continue
        try:
            _, mhz, kb, _, cycles = (float(x) for x in parts)
        except ValueError:
            continue
        if kb * 1024 >= 4 * llc_bytes:
            rows.append((abs(math.log(kb * 1024 / 2**28)), cycles / (mhz * 1e6), kb * 1024))
    if not rows:
        raise ValueError(f"{path}: no working set of at least 4 x {llc_bytes:g} B")
    _, lat, ws = min(rows)
    return lat, ws


def roofline_max(path: Path) -> float:
    """Max GF/s over the gpu-roofline sweep."""
    best = 0.0
    for line in path.read_text().splitlines():
        parts = line.split()
        if "GF/s" in parts:
            best = max(best, float(parts[parts.index("GF/s") - 1]))
    return best


def entry(value: float, source: str) -> dict:
    return {"value": float(value), "kind": "measurement", "source": source}


def _result_files(gb: Path, bench: str):
    """(path, catalog id, assumption) of each gpu-benches ``bench`` result file of a GPU in
    ``GPU_FILES`` (files with a suffix, such as the small kernels' graph runs, are not)."""
    for p in sorted((gb / bench).glob("*.txt")):
        if p.stem.lower() in GPU_FILES:
            yield (p, *GPU_FILES[p.stem.lower()])


def collect(data: Path, l2_sizes: dict, l3_sizes: dict) -> dict:
    """catalog id -> {field: entry} from every source."""
    out: dict = {}
    gb = data / "gpu-benches"

    def put(gid, field, value, source):
        out.setdefault(gid, {})[field] = entry(value, source)

    for p, gid, assume in _result_files(gb, "gpu-stream"):
        best = parse_stream(p)
        for col, field in (("init", "dram_write_bw_bytes_per_s"),
                           ("read", "dram_read_bw_bytes_per_s"),
                           ("triad", "dram_bw_bytes_per_s")):
            if col in best:
                put(gid, field, best[col] * 1e9,
                    _src(p, f"max {col} over occupancy sweep = {best[col]:g} GB/s", assume))
    for p, gid, assume in _result_files(gb, "gpu-l2-cache"):
        if gid not in l2_sizes:
            continue
        bw, n = set_plateau(p, 0, l2_sizes[gid] / 2)
        put(gid, "l2_bw_bytes_per_s", bw * 1e9,
            _src(p, f"L2 plateau = median Eff. bw over the {n} data sets <= L2/2 "
                    f"({l2_sizes[gid] / 2**21:g} MiB) = {bw:g} GB/s", assume))
        if gid in l3_sizes:
            bw, n = set_plateau(p, 4 * l2_sizes[gid], l3_sizes[gid] / 2)
            put(gid, "l3_bw_bytes_per_s", bw * 1e9,
                _src(p, f"L3 (Infinity Cache) plateau = median Eff. bw over the {n} data sets "
                        f"from 4 x L2 ({4 * l2_sizes[gid] / 2**20:g} MiB) "
                        f"to L3/2 ({l3_sizes[gid] / 2**21:g} MiB) = {bw:g} GB/s",
                     assume))
    for p, gid, assume in _result_files(gb, "gpu-cache"):
        bw, n = l1_plateau(p)
        put(gid, "l1_bw_bytes_per_s", bw * 1e9,
            _src(p, f"L1 plateau = median Eff. bw over the {n} per-SM data sets "
                    f"<= 16 kB = {bw:g} GB/s", assume))
    for p, gid, assume in _result_files(gb, "gpu-small-kernels"):
        df = read_gpu_benches(p).df
        n = df["config"].str.extract(r"n=(\d+)")[0].astype(int)
        first = df[n == n.min()]
        t = float(first["time_s"].min())
        put(gid, "launch_overhead_s", t,
            _src(p, f"shortest time per kernel at n = {n.min()} doubles over the "
                    f"{len(first)} block sizes = {t * 1e6:.3g} us (16 n B / the printed GB/s; "
                    "launches back to back)", assume))
    for p, gid, assume in _result_files(gb, "gpu-latency"):
        llc = l3_sizes.get(gid, l2_sizes.get(gid))
        if llc is None:
            continue
        lat, ws = dram_latency(p, llc)
        put(gid, "dram_latency_s", lat,
            _src(p, f"pointer chase through {ws / 2**20:.0f} MiB (>= 4 x the last-level "
                    f"cache, nearest 256 MiB) = {lat * 1e9:.1f} ns", assume))
    for p, gid, assume in _result_files(gb, "gpu-roofline"):
        gf = roofline_max(p)
        put(gid, "fp32_fma_flops_per_s", gf * 1e9,
            _src(p, f"max GF/s over the arithmetic-intensity sweep = {gf:g} GF/s "
                    "(FP32 FMA loop: 0.25 Fl/B "
                    "at 0 iterations means 4-byte float)", assume))
    seed = data / "seed-report-4gpus" / "gpu_metrics.json"
    if seed.is_file():
        for rec in json.loads(seed.read_text()):
            gid = SEED_MAP.get(rec.get("device_name"))
            if gid is None:
                continue
            m = out.setdefault(gid, {})
            if rec.get("sustained_bandwidth_gbps"):
                # the copy's size / time: a device-to-device copy reads and writes that size
                m["dram_bw_bytes_per_s"] = entry(
                    2 * rec["sustained_bandwidth_gbps"] * 1e9,
                    f"{SEED} '{rec['device_name']}': "
                    f"sustained_bandwidth_gbps = {rec['sustained_bandwidth_gbps']}, x 2: "
                    "collect_gpu_metrics.cu divides the size of a device-to-device "
                    "cudaMemcpy by its time, and the copy reads and writes that size")
            if rec.get("sustained_compute_gflops"):
                m["fp32_fma_flops_per_s"] = entry(
                    rec["sustained_compute_gflops"] * 1e9,
                    f"{SEED} '{rec['device_name']}': "
                    f"sustained_compute_gflops = {rec['sustained_compute_gflops']}")
    return out


class _Dumper(yaml.SafeDumper):
    """Floats as shortest round-trip scientific notation (``2.039e+12``), readable and exact."""


def _float(dumper, value):
    import numpy as np

    if value == int(value) and abs(value) < 1e6:
        text = repr(float(value))
    else:
        text = np.format_float_scientific(value, unique=True, exp_digits=2).replace(".e", ".0e")
    return dumper.represent_scalar("tag:yaml.org,2002:float", text)


_Dumper.add_representer(float, _float)


def dump_gpu(doc: dict) -> str:
    """YAML text of a GPU description, keys in the order given; checked to read back identical."""
    text = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=110)
    if yaml.safe_load(text) != doc:
        raise RuntimeError("YAML round trip changed the data")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path,
                    default=Path(__file__).resolve().parents[2] / "shared" / "data" / "external")
    ap.add_argument("--catalog", type=Path, default=CATALOG)
    ap.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    args = ap.parse_args(argv)
    docs = {p: yaml.safe_load(p.read_text()) for p in sorted(args.catalog.glob("*.yaml"))}
    by_id = {d["id"]: p for p, d in docs.items()}
    l2 = {d["id"]: d["values"]["l2_size_bytes"]["value"] for d in docs.values()
          if "l2_size_bytes" in (d.get("values") or {})}
    l3 = {d["id"]: d["values"]["l3_size_bytes"]["value"] for d in docs.values()
          if "l3_size_bytes" in (d.get("values") or {})}
    found = collect(args.data, l2, l3)
    for gid, fields in sorted(found.items()):
        if gid not in by_id:
            print(f"skip {gid}: not in the catalog", file=sys.stderr)
            continue
        path = by_id[gid]
        doc = docs[path]
        measured = dict(doc.get("measured") or {})
        # a `gpuproj bench` run on the part itself (data/bench/) outranks a public file that
        # only names the GPU: it stays
        ours = {k for k in fields if str(measured.get(k, {}).get("source", "")).startswith(OURS)}
        for k in sorted(ours):
            print(f"{gid:16s} {k:28s} kept: {measured[k]['source']}")
        fields = {k: e for k, e in fields.items() if k not in ours}
        measured.update(fields)
        doc["measured"] = measured
        for k, e in sorted(fields.items()):
            print(f"{gid:16s} {k:28s} {e['value']:.4g}")
        if not args.dry_run:
            path.write_text(dump_gpu(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
