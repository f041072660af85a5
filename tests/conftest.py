"""Shared test helpers: GPUs built in memory for hand-computed examples."""

import shutil

import pandas as pd
import pytest

from gpuproj.catalog import parse_gpu
from gpuproj.profiles.table import ProfileTable


def make_gpu(gid, values=None, peak=None, measured=None, **identity):
    def sec(d):
        return {k: {"value": v, "kind": "user", "source": "test"} for k, v in (d or {}).items()}

    data = {"schema_version": 1, "id": gid, "vendor": "Test", "name": gid.upper(),
            "architecture": "Test", "isa": "sm_00", "values": sec(values), "peak": sec(peak),
            "measured": sec(measured), **identity}
    return parse_gpu(data)


def table(**cols):
    """A ProfileTable from keyword columns (lists); kernel/config/gpu default to simple values."""
    n = len(next(iter(cols.values())))
    base = {"kernel": [f"k{i}" for i in range(n)], "config": ["c"] * n, "gpu": ["src"] * n}
    base.update(cols)
    return ProfileTable.from_frame(pd.DataFrame(base))


def has_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
