"""The CUDA benchmark backend (gpuproj.bench.cuda, ctypes over the driver API) has no GPU to run
on here: a stand-in driver library (tests/data/libcuda_stub.c, built with the system C
compiler) takes its place, so every driver call the backend makes, the whole quick suite and
`gpuproj bench --backend cuda` up to the catalog file run as they would on an H100. The
stand-in runs no kernel, so the STREAM result check must fail and say so."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

STUB = Path(__file__).parent / "data" / "libcuda_stub.c"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    """(folder holding libcuda.so.1, folder of stand-in cubins for the quick suite)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or not sys.platform.startswith("linux"):
        pytest.skip("the stand-in driver needs Linux (LD_LIBRARY_PATH, .so) and a C compiler")
    d = tmp_path_factory.mktemp("libcuda")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(d / "libcuda.so.1"), str(STUB)],
                   check=True)
    from gpuproj.bench.backend import kernel_source
    from gpuproj.bench.cuda import cubin_key
    from gpuproj.bench.sizes import QUICK
    from gpuproj.bench.suite import cuda_build_units

    cubins = tmp_path_factory.mktemp("cubins")
    for source, extra in cuda_build_units(QUICK):
        text = kernel_source(source, "cu") + ("\n" + extra + "\n" if extra else "")
        (cubins / f"{cubin_key(text, 'sm_90')}.cubin").write_bytes(b"stand-in cubin")
    return d, cubins


def test_bench_runs_the_cuda_backend_through_the_driver_api(driver, tmp_path):
    lib, cubins = driver
    env = {**os.environ, "LD_LIBRARY_PATH": str(lib), "GPUPROJ_BENCH_CUBIN_DIR": str(cubins),
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MPLBACKEND": "Agg"}
    out = tmp_path / "h100.yaml"
    p = subprocess.run([sys.executable, "-m", "gpuproj.cli.main", "bench", "--backend", "cuda",
                        "--quick", "--out", str(out), "--json", "-q"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    raw = json.loads(out.with_suffix(".json").read_text())
    dev = raw["device"]
    assert dev["name"] == "NVIDIA H100 80GB HBM3" and dev["isa"] == "sm_90"
    assert dev["compute_units"] == 132 and dev["l2_bytes"] == 52428800
    assert dev["architecture"] == "Hopper" and dev["global_mem_bytes"] == 80 * 2**30
    names = {m["name"] for m in raw["measurements"]}
    assert {"fp32_fma", "fp64_fma", "fp16x2_fma", "stream_triad", "l2_read", "smem_read",
            "launch"} <= names and not raw["skipped"]
    # every timed launch took the stand-in's 5 ms
    fma = next(m for m in raw["measurements"] if m["name"] == "fp32_fma")
    assert set(fma["samples_s"]) == {0.005}
    # nothing ran, not even the fills, so every array is still the zeros it was allocated as
    (check,) = raw["checks"]
    assert not check["ok"]
    assert check["wrong"] == {f"set {i} {a}": 0.0 for i in (0, 1) for a in "abc"}
    summary = json.loads(p.stdout)
    assert summary["id"] == "h100-sxm5-80gb"
    assert any(f["problem"] == "wrong_results" for f in summary["flags"])
    # scripts/bench_on_gpu.sh then rebuilds the table from the raw file
    q = subprocess.run([sys.executable, "-m", "gpuproj.cli.main", "bench", "--from-raw",
                        str(out.with_suffix(".json")), "--out", str(tmp_path / "again.yaml")],
                       env=env, capture_output=True, text=True, timeout=120)
    assert q.returncode == 0, q.stderr
    assert "stream: the kernels left wrong values" in q.stdout + q.stderr


HOLD_CHECK = """
import ctypes, sys
import numpy as np
from gpuproj.bench import cuda
from gpuproj.errors import GpuprojError

stub = ctypes.CDLL("libcuda.so.1")
stub.stub_hold_ns.restype = ctypes.c_uint64
b = cuda.CudaBackend()
k = b.build("memory")["empty"]
out = b.alloc(4)
args = (out, np.uint32(0xFFFFFFFF))
times = b.run_many(k, 1, 32, [args] * 300)
print(len(times), set(times), stub.stub_holds(), stub.stub_launches(), stub.stub_hold_ns())
print(b.back_to_back(k, 1, 32, args, 100), stub.stub_holds(), stub.stub_launches())
cuda.HOLD_MIN_S, cuda.HOLD_MARGIN = 1e-9, 1e-9  # a hold shorter than the host's queueing
try:
    b.run(k, 1, 32, args)
except GpuprojError as e:
    print("error:", e, stub.stub_holds())
"""


def test_timed_launches_wait_behind_a_hold(driver, tmp_path):
    """The device must not start a timed launch's events before the host has queued it: each
    batch of at most cuda.MAX_QUEUED launches waits behind one hold kernel (of at least
    HOLD_MIN_S), and a hold the host's queueing outlasted is retried, then refused."""
    lib, cubins = driver
    env = {**os.environ, "LD_LIBRARY_PATH": str(lib), "GPUPROJ_BENCH_CUBIN_DIR": str(cubins),
           "HOME": str(tmp_path)}
    p = subprocess.run([sys.executable, "-c", HOLD_CHECK], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    many, b2b, err = p.stdout.splitlines()
    # 300 launches in batches of 128, 128 and 44, each timed at the stand-in's 5 ms; the last
    # hold at least 3 x 44 x the 20 us a launch is first assumed to take to queue
    n, times, holds, launches, hold_ns = many.split(" ")
    assert (n, times, holds, launches) == ("300", "{0.005}", "3", "300")
    assert int(hold_ns) >= 3 * 44 * 20_000
    # 100 launches between two events behind one hold: 5 ms each
    t, holds, launches = b2b.split()
    assert float(t) == pytest.approx(0.5) and (holds, launches) == ("4", "400")
    assert err.startswith("error: the host took") and "3 times" in err and err.endswith(" 7")
