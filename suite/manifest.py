#!/usr/bin/env python3
"""Write ``manifest.json`` for one collection folder (``data/suite/<gpu>/``).

    python3 suite/manifest.py DIR [--suite-dir suite]

Reads what ``collect.sh`` left in DIR: ``env/`` (raw outputs of nvidia-smi, nvcc, ncu, date,
uname), ``steps.tsv`` (step, status, seconds, detail), ``measurements.jsonl`` (driver output)
and every other file, and writes DIR/manifest.json (format in docs/suite.md): GPU, driver,
CUDA and ncu versions, clocks before and after the timed runs, date, the steps and their
status, result-check summary and one entry per file with its size and SHA-256.
Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import sys
from pathlib import Path

FORMAT = "gpuproj-suite-collection"
VERSION = 1

KINDS = {  # file name pattern -> (kind, description)
    r"^measurements\.csv$": ("measurement-table", "gpuproj measurement table, one row per (kernel, config)"),
    r"^measurements\.jsonl$": ("driver-jsonl", "raw driver output: device, check, time lines (all repetitions)"),
    r"^measurements-warm\.csv$": ("measurement-table", "srivastava family, no L2 flush (as the report)"),
    r"^measurements-warm\.jsonl$": ("driver-jsonl", "raw driver output of the runs without flush"),
    r"^ncu/.*\.map\.csv$": ("ncu-id-map", "ncu result ID -> (kernel, config) of one ncu run"),
    r"^ncu/.*\.jsonl$": ("driver-jsonl", "driver output of one ncu run (profile lines)"),
    r"^ncu/.*\.source\.csv$": ("ncu-source-csv", "ncu SourceCounters page, SASS per instruction"),
    r"^ncu/.*\.ncu-rep$": ("ncu-rep", "Nsight Compute report with the SourceCounters section"),
    r"^ncu/.*\.csv$": ("ncu-csv", "ncu --csv --page raw --print-units base, gpuproj metric list"),
    r"^sass/.*\.sass\.gz$": ("sass", "cuobjdump -sass of the driver binary (gzip)"),
    r"^ptxas/.*\.txt$": ("ptxas", "nvcc -Xptxas -v: registers, shared memory, spills per kernel"),
    r"^env/.*": ("environment", "raw tool output describing the machine"),
    r"^logs/.*": ("log", "collection log"),
    r"^steps\.tsv$": ("steps", "collection steps: name, status, seconds, detail"),
}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text else None
    except ValueError:
        return None


def git_state(env: Path) -> dict:
    """Whether the tree that ran differed from ``git_commit``: ``git_describe`` (``git describe
    --always --dirty``), ``git_dirty`` (true when ``git status --porcelain`` listed anything,
    null when it was not recorded) and ``git_changed`` (its lines, the changed paths)."""
    status = env / "git-status.txt"
    changed = None
    if status.is_file():
        text = status.read_text(encoding="utf-8", errors="replace")
        changed = [line for line in text.splitlines() if line.strip()]
    describe = read_text(env / "git-describe.txt")
    dirty = bool(changed) if changed is not None else (
        describe.endswith("-dirty") if describe else None)
    return {"git_describe": describe, "git_dirty": dirty, "git_changed": changed}


def smi_query(path: Path) -> list[dict]:
    """Rows of an ``nvidia-smi --query-gpu=... --format=csv`` output (values as text)."""
    text = read_text(path)
    if not text or "," not in text.splitlines()[0]:
        return []
    rows = list(csv.reader(text.splitlines()))
    head = [h.strip() for h in rows[0]]
    return [{k: v.strip() for k, v in zip(head, r)} for r in rows[1:] if r]


def nvcc_version(text: str | None) -> str | None:
    m = re.search(r"release [\d.]+, V([\d.]+)", text or "")
    return m.group(1) if m else None


def ncu_version(text: str | None) -> str | None:
    m = re.search(r"Version ([\d.]+)", text or "")
    return m.group(1) if m else None


def checks(jsonl: Path) -> dict:
    out = {"passed": 0, "failed": 0, "failures": [], "skipped": []}
    if not jsonl.exists():
        return out
    for line in jsonl.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        try:
            o = json.loads(line)
        except json.JSONDecodeError:
            continue
        if o.get("type") == "check":
            if o.get("ok"):
                out["passed"] += 1
            else:
                out["failed"] += 1
                out["failures"].append({k: o.get(k) for k in ("kernel", "config", "rel_err", "tol")})
        elif o.get("type") == "skip":
            out["skipped"].append({k: o.get(k) for k in ("kernel", "config", "reason")})
    return out


def device_line(jsonl: Path) -> dict:
    if jsonl.exists():
        for line in jsonl.read_text(encoding="utf-8", errors="replace").splitlines():
            if '"type":"device"' in line:
                try:
                    return json.loads(line)
                except json.JSONDecodeError:
                    pass
    return {}


def steps(path: Path) -> list[dict]:
    out = []
    text = read_text(path) or ""
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3:
            try:
                secs = float(parts[2])
            except ValueError:
                secs = None
            out.append({"step": parts[0], "status": parts[1], "seconds": secs,
                        "detail": parts[3] if len(parts) > 3 else ""})
    return out


def build(folder: Path, suite_dir: Path | None = None) -> dict:
    env = folder / "env"
    before = smi_query(env / "smi-before.csv")
    after = smi_query(env / "smi-after.csv")
    dev = device_line(folder / "measurements.jsonl")
    gpu = dict(before[0]) if before else {}
    files = []
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != "manifest.json":
            rel = p.relative_to(folder).as_posix()
            kind, desc = next(((k, d) for pat, (k, d) in KINDS.items() if re.search(pat, rel)),
                              ("other", ""))
            files.append({"path": rel, "bytes": p.stat().st_size, "sha256": sha256(p),
                          "kind": kind, "description": desc})
    src = {}
    if suite_dir and suite_dir.is_dir():
        for p in sorted(list(suite_dir.glob("*.cu")) + list(suite_dir.glob("*.cuh")) +
                        list(suite_dir.glob("*.h")) + list(suite_dir.glob("*.sh"))):
            src[p.name] = sha256(p)
    return {
        "format": FORMAT,
        "version": VERSION,
        "gpu": {
            "name": gpu.get("name") or dev.get("name"),
            "catalog_id": read_text(env / "catalog_id.txt"),
            "driver_version": gpu.get("driver_version"),
            "smi_before_timing": before,
            "smi_after_timing": after,
            "device_properties": {k: v for k, v in dev.items() if k not in ("type", "family", "seed")},
        },
        "cuda": {
            "nvcc": nvcc_version(read_text(env / "nvcc.txt")),
            "runtime_version": dev.get("cuda_runtime_version"),
            "driver_api_version": dev.get("cuda_driver_version"),
        },
        "ncu": {"version": ncu_version(read_text(env / "ncu.txt")),
                "path": read_text(env / "ncu_path.txt")},
        "date_utc": read_text(env / "date.txt"),
        "host": read_text(env / "uname.txt"),
        "build": {"archs": read_text(env / "archs.txt"), "git_commit": read_text(env / "git.txt"),
                  **git_state(env), "suite_sources_sha256": src},
        "seed": _int_or_none(read_text(env / "seed.txt")),
        "steps": steps(folder / "steps.tsv"),
        "checks": checks(folder / "measurements.jsonl"),
        "files": files,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="write manifest.json of a suite collection folder")
    ap.add_argument("folder")
    ap.add_argument("--suite-dir", default=str(Path(__file__).resolve().parent))
    a = ap.parse_args(argv)
    folder = Path(a.folder)
    if not folder.is_dir():
        print(f"manifest: error: {folder}: not a folder", file=sys.stderr)
        return 2
    m = build(folder, Path(a.suite_dir))
    (folder / "manifest.json").write_text(json.dumps(m, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
