"""scripts/measured_from_gpu_benches.py: the catalog's ``measured:`` values from gpu-benches'
result files and the seed report's gpu_metrics.json, on hand-made files in their layouts (the
gpu-benches data is GPL-3.0 and stays in shared/data/external; the values here are invented).
Expected values follow the rules of the script's docstring, worked out by hand."""

import json
import math

import pytest
import yaml
from conftest import load_script

# gpu-l2-cache: chunk kB, total data set kB, time, spread, Eff. bw, four more GB/s columns; the
# sizes are blockDV / 1024 (gpu-l2-cache/main.cu), so "kB" is 1024 B
L2 = ("     data set   exec time     spread       Eff. bw\n" + "".join(
    f"       512 kB {kb:>10} kB         5ms       0.1% {bw:>9} GB/s        0 GB/s"
    "      0 GB/s      0 GB/s      0 GB/s \n"
    for kb, bw in ((512, 9000.0), (1024, 8800.0), (4096, 6000.0), (8192, 5000.0),
                   (16384, 4000.0), (65536, 1000.0))))
# gpu-cache: per-SM data set kB, time, spread, Eff. bw, four more GB/s columns
L1 = ("     data set   exec time     spread        Eff. bw       DRAM read\n" + "".join(
    f"{kb:>10} kB         4ms       0.1% {bw:>9} GB/s         0 GB/s          0 GB/s"
    "          0 GB/s          0 GB/s \n"
    for kb, bw in ((2, 24000.0), (8, 25000.0), (16, 25200.0), (32, 20000.0))))
# gpu-stream: per block size, the GB/s of each kernel column after "GB/s:"
STREAM = ("blockSize   threads       %occ  |                init       read       scale     triad\n"
          "       32        4224      3 %  |  GB/s:         300        120        240        330\n"
          "       64        8448    6.2 %  |  GB/s:         590        250        460        640\n"
          "      128       16896   12.5 %  |  GB/s:         580        260        470        600\n")
# gpu-roofline: the best GF/s is not on the last line
ROOFLINE = ("0 1056 blocks     0 its      0.250 Fl/B       3759 GB/s       940 GF/s   1980 Mhz\n"
            "0 1056 blocks   400 its    100.250 Fl/B        425 GB/s     42558 GF/s   1980 Mhz\n"
            "0 1056 blocks   800 its    200.250 Fl/B        210 GB/s     42000 GF/s   1980 Mhz\n")
# gpu-latency: steps, clock MHz, working set kB, ns x steps / 1e6, cycles per step
LATENCY = ("clock: 1400 1400\n"
           "  1000000  1400    65536    300.0   500.0\n"      # 64 MiB
           "  1000000  1400   262144    500.0   700.0\n"      # 256 MiB
           "  1000000  1400  1048576    640.0   900.0\n")     # 1 GiB
# gpu-small-kernels (one launch per repetition): n, kB, then GB/s per block size (2 here)
SMALL = "4096  64kB     26     32\n4341  67kB     27     28\n"


@pytest.fixture(scope="module")
def mg():
    return load_script("measured_from_gpu_benches")


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_plateaus_are_medians_over_the_data_sets_in_range(mg, tmp_path):
    f = _write(tmp_path / "l2.txt", L2)
    # an L2 of 2 MiB: the L2 plateau is the data sets <= 1 MiB, 512 and 1024 kB: median of
    # 9000 and 8800 GB/s
    assert mg.set_plateau(f, 0, 2**21 / 2) == (8900.0, 2)
    # an L3 of 32 MiB: from 4 x L2 = 8 MiB (8192 kB x 1024 B, inclusive) to L3 / 2 = 16 MiB
    # (16384 kB): median of 5000 and 4000; with kB read as 1000 B, 8192 kB would fall short
    assert mg.set_plateau(f, 4 * 2**21, 2**25 / 2) == (4500.0, 2)
    # L1: the per-SM data sets of at most 16 kB, 2, 8 and 16 kB: median 25000
    assert mg.l1_plateau(_write(tmp_path / "l1.txt", L1)) == (25000.0, 3)


def test_stream_roofline_and_latency_picks(mg, tmp_path):
    # the best row of each column, not the last one's
    assert mg.parse_stream(_write(tmp_path / "s.txt", STREAM)) == {
        "init": 590.0, "read": 260.0, "scale": 470.0, "triad": 640.0}
    assert mg.roofline_max(_write(tmp_path / "r.txt", ROOFLINE)) == 42558.0
    lat = _write(tmp_path / "lat.txt", LATENCY)
    # a last-level cache of 32 MiB: working sets >= 128 MiB, the one nearest 256 MiB (the
    # 256 MiB line): 700 cycles / 1400 MHz = 500 ns
    assert mg.dram_latency(lat, 2**25) == (pytest.approx(500e-9, rel=1e-12), 2**28)
    # the 256 MiB line replaced by one at 192 MiB: nearer 256 MiB than 1 GiB on a log scale
    # (|ln 0.75| = 0.29 against |ln 4| = 1.39): 600 cycles / 1400 MHz
    _write(lat, LATENCY.replace("262144    500.0   700.0", "196608    430.0   600.0"))
    assert mg.dram_latency(lat, 2**25) == (pytest.approx(600 / 1.4e9, rel=1e-12), 192 * 2**20)
    # a cache of 512 MiB: nothing at least 2 GiB in the file
    with pytest.raises(ValueError, match="no working set of at least 4 x"):
        mg.dram_latency(lat, 2**29)


def test_collect_names_each_value_and_doubles_the_seed_reports_copy_bandwidth(mg, tmp_path):
    gb = tmp_path / "gpu-benches"
    for bench, text in (("gpu-stream", STREAM), ("gpu-l2-cache", L2), ("gpu-cache", L1),
                        ("gpu-roofline", ROOFLINE), ("gpu-latency", LATENCY),
                        ("gpu-small-kernels", SMALL)):
        _write(gb / bench / "rx6900xt.txt", text)  # GPU_FILES: rx-6900-xt
    _write(gb / "gpu-small-kernels" / "rx6900xt_graph.txt", SMALL.replace("26", "99"))
    _write(tmp_path / "seed-report-4gpus" / "gpu_metrics.json", json.dumps([
        {"device_name": "NVIDIA TITAN V", "sustained_bandwidth_gbps": 300.5,
         "sustained_compute_gflops": 10000.0},
        {"device_name": "Voodoo 5", "sustained_bandwidth_gbps": 1.0}]))
    got = mg.collect(tmp_path, {"rx-6900-xt": 2**22}, {"rx-6900-xt": 2**27})
    assert set(got) == {"rx-6900-xt", "titan-v"}  # an unknown device name is left out
    rx = {k: e["value"] for k, e in got["rx-6900-xt"].items()}
    assert all(e["kind"] == "measurement" for e in got["rx-6900-xt"].values())
    # GB/s and GF/s as bytes/s and FLOP/s
    assert rx["dram_write_bw_bytes_per_s"] == 590e9 and rx["dram_read_bw_bytes_per_s"] == 260e9
    assert rx["dram_bw_bytes_per_s"] == 640e9 and rx["fp32_fma_flops_per_s"] == 42558e9
    # L2 4 MiB: data sets <= 2 MiB, 512 and 1024 kB: 8900 GB/s; L3 128 MiB: from 16 MiB to
    # 64 MiB, 16384 and 65536 kB: median of 4000 and 1000
    assert rx["l2_bw_bytes_per_s"] == 8900e9 and rx["l3_bw_bytes_per_s"] == 2500e9
    assert rx["l1_bw_bytes_per_s"] == 25000e9
    # the last-level cache is the L3 (128 MiB): >= 512 MiB, nearest 256 MiB is 1 GiB
    assert rx["dram_latency_s"] == pytest.approx(900 / 1.4e9, rel=1e-12)
    # at the smallest n = 4096 the best of the block sizes, 32 GB/s: 16 x 4096 B / 32e9 B/s;
    # the _graph file (suffix) is not read
    assert rx["launch_overhead_s"] == pytest.approx(16 * 4096 / 32e9, rel=1e-12)
    src = got["rx-6900-xt"]["l2_bw_bytes_per_s"]["source"]
    assert src.startswith("gpu-benches @1c36d50 gpu-l2-cache/rx6900xt.txt: L2 plateau = median "
                          "Eff. bw over the 2 data sets <= L2/2 (2 MiB) = 8900 GB/s")
    # the report times a device-to-device copy of S bytes and prints S / t: the DRAM moved 2 S
    tv = got["titan-v"]
    assert tv["dram_bw_bytes_per_s"]["value"] == pytest.approx(2 * 300.5e9, rel=1e-12)
    assert tv["fp32_fma_flops_per_s"]["value"] == 10000e9


def test_main_keeps_what_gpuproj_bench_measured_on_the_gpu(mg, tmp_path):
    """A `gpuproj bench` value of the GPU itself stays; the others are replaced, everything
    else of the file is read and written back unchanged."""
    gb = tmp_path / "data" / "gpu-benches"
    _write(gb / "gpu-stream" / "h200.txt", STREAM)
    _write(gb / "gpu-roofline" / "h200.txt", ROOFLINE)
    cat = tmp_path / "gpus"
    doc = {"schema_version": 1, "id": "h200-sxm-141gb", "name": "H200",
           "values": {"l2_size_bytes": {"value": 62914560, "kind": "driver", "source": "s"}},
           "measured": {
               "dram_bw_bytes_per_s": {"value": 4.369e12, "kind": "measurement",
                                       "source": "gpuproj bench stream_triad, 2026-11-24"},
               "fp32_fma_flops_per_s": {"value": 1.0, "kind": "measurement",
                                        "source": "an older public file"}}}
    path = _write(cat / "h200.yaml", yaml.safe_dump(doc, sort_keys=False))
    assert mg.main(["--data", str(tmp_path / "data"), "--catalog", str(cat), "--dry-run"]) == 0
    assert yaml.safe_load(path.read_text()) == doc  # a dry run writes nothing
    assert mg.main(["--data", str(tmp_path / "data"), "--catalog", str(cat)]) == 0
    new = yaml.safe_load(path.read_text())
    m = new["measured"]
    assert m["dram_bw_bytes_per_s"] == doc["measured"]["dram_bw_bytes_per_s"]  # ours kept
    assert m["fp32_fma_flops_per_s"]["value"] == 42558e9  # the public file's, replaced
    assert m["dram_write_bw_bytes_per_s"]["value"] == 590e9  # new
    assert {k: v for k, v in new.items() if k != "measured"} == {
        k: v for k, v in doc.items() if k != "measured"}
    assert math.isclose(m["dram_read_bw_bytes_per_s"]["value"], 260e9)
