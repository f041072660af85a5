"""The rocprof reader on real rocprof output: Omniperf test workloads measured on an MI100 and
an MI200 (ROCm/omniperf, MIT) and an ENCCS training page's rocprof run (CC-BY-4.0); sources,
commits and the rows kept in tests/data/rocprof/SOURCE.md. Expected values are the files'
printed numbers put through the formulas of the reader's docstring by hand."""

import shutil
import warnings
from pathlib import Path

import pytest

from gpuproj.errors import InputError, InputWarning
from gpuproj.profiles import load, sniff

DATA = Path(__file__).parent / "data" / "rocprof"
VCOPY = DATA / "omniperf-vcopy-mi100"
AXES_MI100 = DATA / "omniperf-axes2-mi100"
AXES_MI200 = DATA / "omniperf-axes2-mi200"
ENCCS = DATA / "enccs-mini-nbody"


def test_an_omniperf_folder_joins_its_counter_passes():
    assert sniff(VCOPY) == "rocprof"
    t = load(VCOPY)
    assert not t.skipped and len(t) == 1
    r = t.df.iloc[0]
    assert r["kernel"] == "vecCopy(double*, double*, double*, int, int)"
    assert r["gpu"] == "mi100"  # sysinfo.csv: gfx908 with 120 CUs
    assert r["config"] == "grid=4096 block=256"  # grd 1048576 work-items / wgr 256
    assert r["launches"] == 3
    # Start_Timestamp / End_Timestamp of the three dispatches (pmc_perf_0.csv)
    ns = [5255477523626869 - 5255477523602709, 5255477523745909 - 5255477523727189,
          5255477523785909 - 5255477523767029]
    assert r["time_s"] == pytest.approx(sum(ns) / 3 * 1e-9, rel=1e-12)
    assert r["time_s_min"] == pytest.approx(18720e-9) and r["time_s_max"] == pytest.approx(24160e-9)
    # pmc_perf_6.csv: TCC_EA_RDREQ_sum, no 32-byte reads; pmc_perf_4.csv: every write 64 bytes
    assert r["dram_read_bytes"] == pytest.approx(64 * (131403 + 131405 + 131385) / 3)
    assert r["dram_write_bytes"] == pytest.approx(64 * (131072 + 86427 + 86574) / 3)
    # TCP_TCC_READ_REQ_sum 131072 (pass 5) + WRITE 131072 + no atomics (pass 6), 64 B each
    assert r["l2_bytes"] == 64 * (131072 + 131072)
    assert r["l1_bytes"] == 64 * 524288  # TCP_TOTAL_CACHE_ACCESSES_sum (pass 3)
    assert r["warp_inst"] == 393216  # SQ_INSTS (pass 4)
    # MI100: AccVGPRs are a file of their own, so Arch_VGPR 8 is the per-thread count
    assert r["regs_per_thread"] == 8 and r["block_threads"] == 256
    # MI100 has no per-precision VALU counters: FLOPs stay missing, not zero
    assert r[["flops", "fp32_flops", "tensor_flops"]].isna().all()


def test_raw_rocprof_timestamps_keep_nanoseconds_past_2_to_the_53():
    t = load(AXES_MI100 / "timestamps.csv")
    df = t.df.set_index("kernel")
    assert sniff(AXES_MI100 / "timestamps.csv") == "rocprof" and len(t) == 13
    # row 1: BeginNs 12076040884512411, EndNs 12076040884519291 (> 2**53: floats would round)
    short = df.loc["void benchmark_func<short, 256, 8u, 0u>(short, short*)"]
    assert short["time_s"] == pytest.approx(6880e-9, rel=1e-12)
    assert short["config"] == "grid=128 block=256" and short["regs_per_thread"] == 24
    assert "__amd_rocclr_fillBuffer" in df.index  # ".kd" dropped as " [clone .kd]" is


def test_sysinfo_that_fits_two_gpus_asks_which_and_checks_the_answer():
    with pytest.raises(InputError, match="gfx90a with 104 CUs is any of .*mi210"):
        load(AXES_MI200)
    with pytest.raises(InputError, match="taken on a gfx90a GPU with 104 CUs, but h100"):
        load(AXES_MI200, gpu="h100-sxm5-80gb")
    mi210 = load(AXES_MI200, gpu="mi210").df
    mi100 = load(AXES_MI100).df
    # rows 1-12 are the same launches on both GPUs: pairs for cross-GPU evaluation
    keys = set(zip(mi100["kernel"], mi100["config"])) & set(zip(mi210["kernel"], mi210["config"]))
    assert len(keys) == 12 and set(mi210["gpu"]) == {"mi210"}


def test_mi100_times_project_to_the_mi210_by_their_bandwidth_ratio():
    """The Axes2 rows are mixbench points of low intensity (0-2 operations per element), bound
    by HBM: the datasheet bandwidth ratio (1.6384 / 1.2288 TB/s) carries the MI100's times to
    the MI210's within 1.6 % at the median. A reader that got the units or the pairing of the
    two folders wrong could not."""
    import numpy as np

    from gpuproj.predict import predict

    mi210 = load(AXES_MI200, gpu="mi210").df[["kernel", "config", "time_s"]]
    got = predict(load(AXES_MI100), targets=["mi210"], methods=["bandwidth"]).table()
    both = got.merge(mi210.rename(columns={"time_s": "true_s"}), on=["kernel", "config"])
    ape = np.abs(both["time_s"] / both["true_s"] - 1)
    assert len(both) == 12 and np.median(ape) < 0.02


def test_rocprof_results_csv_and_its_derived_metrics():
    with pytest.raises(InputError, match="does not name the GPU"):
        load(ENCCS / "results.csv")
    # the page does not name its GPU; the course ran on gfx90a GCDs
    t = load(ENCCS / "results.csv", gpu="mi250")
    r = t.df.iloc[0]
    durations = [26316649, 26115847, 26102728, 26060585, 26095946, 26070505, 26084872,
                 26083752, 26098793, 26095267]  # DurationNs = EndNs - BeginNs
    assert r["kernel"] == "bodyForce(Body*, float, int)" and r["launches"] == 10
    assert r["time_s"] == pytest.approx(sum(durations) / 10 * 1e-9, rel=1e-12)
    assert r["regs_per_thread"] == 20 + 4  # gfx90a: arch_vgpr + accum_vgpr, one register file
    c = load(ENCCS / "rocprof_counters.csv", gpu="mi250").df.iloc[0]
    # rocprof's derived FetchSize / WriteSize are in KB of 1024 bytes
    assert c["dram_read_bytes"] == 9429.1875 * 1024 and c["dram_write_bytes"] == 7872 * 1024


def _copy(tmp_path, folder=VCOPY):
    dst = tmp_path / folder.name
    shutil.copytree(folder, dst)
    return dst


def test_a_bad_counter_names_its_own_file_and_row(tmp_path):
    d = _copy(tmp_path)
    f = d / "pmc_perf_6.csv"
    f.write_text(f.read_text().replace("131405.0", "lots", 1))
    with pytest.raises(InputError, match=r"pmc_perf_6.csv, row 3, field 'TCC_EA_RDREQ_sum'"):
        load(d)


def test_passes_of_different_runs_are_refused(tmp_path):
    d = _copy(tmp_path)
    f = d / "pmc_perf_5.csv"
    f.write_text(f.read_text().replace('"vecCopy(', '"vecAdd(', 1))
    with pytest.raises(InputError, match="dispatch 0 is 'vecAdd.*pmc_perf_0.csv"):
        load(d)


def test_a_pass_that_lost_a_dispatch_or_repeats_one_is_refused(tmp_path):
    # each pass profiles every dispatch once: joined as they were, a lost line gave another
    # dispatch's counters (DRAM writes 7 % off) and a repeated one a launch more
    d = _copy(tmp_path)
    f = d / "pmc_perf_4.csv"
    lines = f.read_text().splitlines(keepends=True)
    f.write_text(lines[0] + lines[1] + "".join(lines[3:]))  # dispatch 1 lost
    with pytest.raises(InputError, match="pmc_perf_4.csv, field 'Dispatch_ID': dispatch 1 of "
                                         "pmc_perf_0.csv is not in this pass"):
        load(d)
    f.write_text("".join(lines))
    f = d / "pmc_perf_2.csv"
    lines = f.read_text().splitlines(keepends=True)
    f.write_text(lines[0] + lines[1] + lines[2].replace("1,", "0,", 1) + "".join(lines[3:]))
    with pytest.raises(InputError, match="pmc_perf_2.csv, row 3, field 'Dispatch_ID': dispatch 0 "
                                         "appears twice"):
        load(d)


def test_a_dispatch_without_a_time_is_skipped_and_counted(tmp_path):
    d = _copy(tmp_path)
    for f in d.glob("pmc_perf_*.csv"):  # the times come from the first file: pass 0
        f.write_text(f.read_text().replace(",5255477523745909,", ",5255477523727189,"))
    t = load(d)
    assert t.df["launches"].iloc[0] == 2
    assert [(s.row, s.reason) for s in t.skipped] == [(3, "EndNs - BeginNs = 0 is not positive")]


def test_counters_of_an_isa_without_known_formulas_are_left_out(tmp_path):
    d = _copy(tmp_path)
    (d / "sysinfo.csv").unlink()
    with pytest.warns(InputWarning, match="gfx1100: times and launch sizes only"):
        t = load(d, gpu="rx-7900-xtx")
    assert t.df[["dram_bytes", "l2_bytes", "warp_inst"]].isna().all(axis=None)
    # the times and the launch are read as on the MI100 (pmc_perf_0.csv: 24160, 18720 and
    # 18880 ns)
    r = t.df.iloc[0]
    assert r["time_s"] == pytest.approx((24160 + 18720 + 18880) / 3 * 1e-9, rel=1e-12)
    assert r["launches"] == 3 and r["gpu"] == "rx-7900-xtx"
    assert r["config"] == "grid=4096 block=256" and r["block_threads"] == 256


def test_a_folder_that_is_no_omniperf_workload_is_an_error():
    with pytest.raises(InputError, match="read only as an Omniperf workload"):
        load(DATA)


def test_no_warning_reading_wide_passes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load(VCOPY)  # pmc_perf_12/13 print 149 columns


def _rocprof_compute_3(folder, model="MI300X_A1"):
    """A workload folder as rocprof-compute 3 (ROCm 7) writes it: sysinfo.csv names the ISA and
    the CU count ``gpu_arch`` and ``cu_per_gpu`` and the part ``gpu_model``; the merged
    pmc_perf.csv has float timestamps. A hand-made reproduction of that layout (the MI300X
    workloads of github HGLiu1998/batched_gemm state no licence); the values are invented."""
    folder.mkdir()
    (folder / "sysinfo.csv").write_text(
        "workload_name,command,version,gpu_series,gpu_model,gpu_arch,gpu_chip_id,cu_per_gpu,"
        "simd_per_cu,wave_size,compute_partition\n"
        f"mm,./mm,3,MI300,{model},gfx942,29857,304,4,64,SPX\n")
    (folder / "pmc_perf.csv").write_text(
        "Dispatch_ID,GPU_ID,Grid_Size,Workgroup_Size,LDS_Per_Workgroup,Scratch_Per_Workitem,"
        "Arch_VGPR,Accum_VGPR,SGPR,Wave_Size,Kernel_Name,Correlation_ID,SQ_WAVES,TCC_REQ[0],"
        "TCC_REQ_sum,Start_Timestamp,End_Timestamp\n"
        '0,0,65536,256,1024,0,32,8,16,64,"mm(float*, int)",1,1024.0,5.0,640.0,'
        "1000000.25,1040000.75\n")
    return folder


def test_rocprof_compute_3_sysinfo_names_the_gpu(tmp_path):
    """Its sysinfo.csv has no gpu_soc and numCU: such folders were refused ("missing column
    'gpu_soc'") though they name the GPU; gpu_model tells the MI300X from the MI325X, which
    share gfx942 and 304 CUs."""
    r = load(_rocprof_compute_3(tmp_path / "mi300x")).df.iloc[0]
    assert r["gpu"] == "mi300x" and r["config"] == "grid=256 block=256"
    assert r["time_s"] == pytest.approx(40000.5e-9) and r["regs_per_thread"] == 40
    assert load(_rocprof_compute_3(tmp_path / "mi325x", "MI325X")).gpus == ["mi325x"]
    # a part the catalog does not know leaves the choice to --source
    with pytest.raises(InputError, match=r"sysinfo.csv, row 2, field 'gpu_arch': a gfx942 with "
                                         "304 CUs is any of mi300x, mi325x"):
        load(_rocprof_compute_3(tmp_path / "other", "MI3XX"))
