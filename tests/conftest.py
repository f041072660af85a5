"""Shared test helpers: GPUs built in memory for hand-computed examples, the repository's
scripts as modules."""

import functools
import importlib.util
import shutil
import sys
from pathlib import Path

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


def load_script(name: str):
    """``scripts/<name>.py`` imported as module ``name`` (the scripts are not a package)."""
    path = Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


@functools.cache
def opencl_unusable() -> str | None:
    """Why OpenCL kernels cannot run here (the reason a test skips), or None: pyopencl or a
    device missing, or a trivial kernel that does not build (PoCL 3.0's LLVM 14 cannot compile
    for a CPU model newer than itself, such as AMD Zen 5)."""
    try:
        import pyopencl as cl
    except ImportError:
        return "pyopencl is not installed"
    from gpuproj.bench.opencl import build_failure, list_devices, pick_device
    from gpuproj.errors import GpuprojError

    try:
        device = pick_device(list_devices())  # the device the tests' commands will use
    except GpuprojError as e:
        return str(e)
    try:
        cl.Program(cl.Context([device]), "__kernel void k(__global float *a) { a[0] = 1; }"
                   ).build()
    except cl.Error as e:
        return f"OpenCL cannot build a kernel on {device.name.strip()}: {build_failure(e)}"
    return None


def has_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def run_cli(capsys, *args):
    """(exit code, stdout, stderr) of ``gpuproj ARGS`` run in-process."""
    from gpuproj.cli.main import main

    try:
        code = main(list(args))
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code or 0, out.out, out.err
