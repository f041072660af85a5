"""The CUDA benchmark backend (gpuproj.bench.cuda, ctypes over the driver API) has no GPU to run
on here: a stand-in driver library (tests/data/libcuda_stub.c, built with the system C
compiler) takes its place, so every driver call the backend makes, the whole quick suite and
`gpuproj bench --backend cuda` up to the catalog file run as they would on an H100. The
stand-in runs no kernel, so every result check must fail, nothing may be timed, and no catalog
file may be written."""

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
    from gpuproj.bench.cuda import cubin_key, cuda_source
    from gpuproj.bench.sizes import QUICK
    from gpuproj.bench.suite import cuda_build_units

    cubins = tmp_path_factory.mktemp("cubins")
    for source, extra in cuda_build_units(QUICK):
        (cubins / f"{cubin_key(cuda_source(source, extra), 'sm_90')}.cubin").write_bytes(
            b"stand-in cubin")
    # an nvidia-smi that says which GPU it was asked about
    (d / "nvidia-smi").write_text('#!/bin/sh\necho "$1" > "$(dirname "$0")/smi-args"\n'
                                  'echo "NVIDIA H100 80GB HBM3, 580.1, 1980, 2619, 1980, 2619, '
                                  '700.00, 40, Enabled, 0x0"\n')
    (d / "nvidia-smi").chmod(0o755)
    return d, cubins


def test_bench_runs_the_cuda_backend_through_the_driver_api(driver, tmp_path):
    lib, cubins = driver
    env = {**os.environ, "LD_LIBRARY_PATH": str(lib), "GPUPROJ_BENCH_CUBIN_DIR": str(cubins),
           "PATH": f"{lib}:/usr/bin:/bin", "HOME": str(tmp_path), "MPLBACKEND": "Agg"}
    out = tmp_path / "h100.yaml"
    p = subprocess.run([sys.executable, "-m", "gpuproj.cli.main", "bench", "--backend", "cuda",
                        "--quick", "--out", str(out), "--json", "-q"], env=env,
                       capture_output=True, text=True, timeout=300)
    # the stand-in runs no kernel: nothing passed its check, so nothing became a catalog value
    assert p.returncode == 2 and p.stdout == "" and not out.exists()
    assert p.stderr.startswith("gpuproj: error: no measurement passed its result check")
    assert p.stderr.count("\n") == 1
    raw = json.loads(out.with_suffix(".json").read_text())  # the raw result is kept
    dev = raw["device"]
    assert dev["name"] == "NVIDIA H100 80GB HBM3" and dev["isa"] == "sm_90"
    assert dev["compute_units"] == 132 and dev["l2_bytes"] == 52428800
    assert dev["architecture"] == "Hopper" and dev["global_mem_bytes"] == 80 * 2**30
    # nvidia-smi was asked about the device's PCI bus, not its CUDA ordinal
    assert (lib / "smi-args").read_text().strip() == "--id=0000:3B:00.0"
    assert raw["clocks_before"]["clocks.max.sm"] == "1980"
    assert dev["driver_version"] == "580.1" and dev["extra"]["pci_bus_id"] == "0000:3B:00.0"
    # the cubins were the prebuilt stand-ins, which no nvcc of this machine built
    assert raw["tool"]["runtime"] == "CUDA driver API 13.0"
    assert set(dev["extra"]["cubins"]) == {"compute", "memory", "mixbench", "hold"}
    assert all(v.startswith(f"prebuilt: {cubins}") for v in dev["extra"]["cubins"].values())
    assert raw["measurements"] == []
    checks = {c["name"]: c for c in raw["checks"]}
    assert {"fp32_fma", "fp64_fma", "fp16x2_fma", "int32_add", "stream",
            "latency_dram"} <= set(checks) and not any(c["ok"] for c in checks.values())
    # nothing ran, not even the fills, so every array is still the zeros it was allocated as
    assert checks["stream"]["wrong"] == {f"set {i} {a}": 0.0 for i in (0, 1) for a in "abc"}


HOLD_CHECK = """
import ctypes, sys
import numpy as np
from gpuproj.bench import cuda
from gpuproj.errors import GpuprojError

stub = ctypes.CDLL("libcuda.so.1")
stub.stub_hold_ns.restype = ctypes.c_uint64
# holds far longer than the host's queueing, so that a machine busy with other work retries
# none and the holds counted stay 3 and 4 (the stand-in's hold takes no time)
cuda.HOLD_MARGIN = 50.0
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


def test_gpu_session_brings_back_the_raw_result_of_a_bench_it_cannot_plot(driver, tmp_path):
    """scripts/gpu_session.sh's bench step on the stand-in driver: bench_on_gpu.sh's --plots
    cannot draw the working-set sweep (no cache check passed), yet the raw result with every
    check is written and reaches $OUT in the bench archive, with no half-packed file left."""
    import tarfile

    from gpuproj.bench import PRESETS
    from gpuproj.bench.cuda import cubin_key, cuda_source
    from gpuproj.bench.suite import cuda_build_units

    lib, _ = driver
    cubins, bin_dir, out = tmp_path / "cubins", tmp_path / "bin", tmp_path / "out"
    cubins.mkdir()
    bin_dir.mkdir()
    for source, extra in cuda_build_units(PRESETS["full"]):  # bench_on_gpu.sh: full sizes
        (cubins / f"{cubin_key(cuda_source(source, extra), 'sm_90')}.cubin").write_bytes(
            b"stand-in cubin")
    shutil.copy(lib / "nvidia-smi", bin_dir / "nvidia-smi")  # its smi-args stay here
    env = {**os.environ, "LD_LIBRARY_PATH": str(lib), "GPUPROJ_BENCH_CUBIN_DIR": str(cubins),
           "PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path), "OUT": str(out),
           "PYTHON": sys.executable, "MPLBACKEND": "Agg"}
    repo = Path(__file__).resolve().parents[1]
    p = subprocess.run(["bash", str(repo / "scripts" / "gpu_session.sh"), "--steps", "bench",
                        "--budget-s", "200"], env=env, capture_output=True, text=True,
                       timeout=240)
    assert p.returncode == 0, p.stdout + p.stderr
    log = (out / "session.log").read_text()
    assert "the samples are in h100-sxm5-80gb.json" in log and "== bench: rc=1 at" in log
    (archive,) = [f for f in out.iterdir() if f.name.startswith("bench-")]
    assert archive.name.endswith(".tar.gz") and not list(out.glob("*.part"))
    with tarfile.open(archive) as t:
        raw = json.load(t.extractfile("bench/h100-sxm5-80gb.json"))
    assert raw["measurements"] == [] and raw["checks"] and "mixbench" in raw["sweeps"]
