"""What the benchmark scripts record about the machine they ran on: timings from different
machines are not comparable, so every result file names its CPU."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo; elsewhere what ``platform`` says)."""
    info = Path("/proc/cpuinfo")
    if info.exists():
        for line in info.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def machine() -> dict:
    """CPU model, logical CPUs and Python version."""
    return {"cpu": cpu_model(), "cpus": os.cpu_count(), "python": platform.python_version()}
