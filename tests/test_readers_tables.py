"""Readers of published measurement tables: seed report, KernelTuner, NeuSight.

Excerpts of the MIT datasets live in tests/data (README there); the seed-report tables state no
licence and are read from shared/data/external only (skipped when absent), like the full tables.
"""

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli

from gpuproj.errors import InputError, InputWarning
from gpuproj.profiles import load, sniff
from gpuproj.profiles.readers import kerneltuner, neusight, seed_report
from gpuproj.profiles.table import count_causes

DATA = Path(__file__).parent / "data"
EXT = Path(__file__).resolve().parents[2] / "shared" / "data" / "external"
SEED = EXT / "seed-report-4gpus"
KT = EXT / "kerneltuner-4gpus"
NS = EXT / "neusight-train"
need = pytest.mark.skipif


# ---- seed report -----------------------------------------------------------------------------
# the report's columns (runs_*_final.csv), for files written here: the tests that run without
# shared/data/external (CI) read these, the real tables' tests below only where it is present
SEED_HEAD = ("kernel,regs,shmem,mean_ms,std_ms,N,rows,cols,iters,block,grid_blocks,size_kind,"
             "FLOPs,BYTES,arithmetic_intensity,working_set_bytes,shared_bytes,mem_pattern,"
             "gpu_device_name,gpu_cc_major,gpu_sms,T1_model_ms,speedup_model")
SEED_ROWS = [  # made-up values in the report's format, one GPU of its four per row
    "atomic_hotspot,7,0,0.25,0.02,262144,0,0,50,256,1024,N,0,2097152,0,4,0,atomics_hotspot,"
    "NVIDIA GeForce RTX 4070,89,46,0.149,0.41",
    "conv2d_3x3,30,0,0.5,0.001,0,512,512,,256,1024,rows_cols,4718592,2097152,2.25,2097152,0,"
    "stencil_3x3,NVIDIA TITAN V,70,80,0.1,5.0",
    "vector_add,10,0,0.125,0.003,1048576,,,,256,4096,N,1048576,12582912,0.083,12582912,0,"
    "coalesced,NVIDIA GeForce RTX 2080 Ti,75,68,0.02,6.25",
]


def seed_file(path, rows=SEED_ROWS):
    """A seed-report table of ``rows`` (CSV lines under ``SEED_HEAD``) at ``path``."""
    path.write_text("\n".join([SEED_HEAD, *rows]) + "\n")
    return path


def test_seed_report_hand_values(tmp_path):
    p = seed_file(tmp_path / "runs_mixed_final.csv")
    assert sniff(p) == "seed-report"
    t = load(p)
    assert len(t) == 3 and not t.skipped
    d = t.df
    # mean_ms and std_ms are milliseconds: 0.25 ms = 2.5e-4 s
    assert list(d["time_s"]) == pytest.approx([0.25e-3, 0.5e-3, 0.125e-3], rel=1e-12)
    assert list(d["time_s_std"]) == pytest.approx([0.02e-3, 0.001e-3, 0.003e-3], rel=1e-12)
    # FLOPs -> flops, BYTES -> dram_bytes, as written (analytic counts, not counter readings)
    assert list(d["flops"]) == [0, 4718592, 1048576]
    assert list(d["dram_bytes"]) == [2097152, 2097152, 12582912]
    # the size fields that are set: empty and 0 both mean "not used by this kernel"
    assert list(d["config"]) == ["N=262144,iters=50", "rows=512,cols=512", "N=1048576"]
    assert list(d["problem"]) == list(d["config"])  # each size its own problem
    assert list(d["gpu"]) == ["rtx-4070", "titan-v", "rtx-2080-ti"]
    assert list(d["regs_per_thread"]) == [7, 30, 10] and list(d["block_threads"]) == [256] * 3
    assert list(d["grid_blocks"]) == [1024, 1024, 4096]
    assert list(d["working_set_bytes"]) == [4, 2097152, 12582912]
    assert list(d["mem_pattern"]) == ["atomics_hotspot", "stencil_3x3", "coalesced"]
    # the GPU's description and the report's own model outputs are dropped
    assert not {"T1_model_ms", "speedup_model", "gpu_sms", "gpu_cc_major"} & set(d.columns)



def test_seed_report_shared_bytes_are_a_blocks_allocation_not_traffic(tmp_path):
    """The report's shared_bytes is the shared memory one block allocates (its README: "Shared
    memory allocated"), the same at every grid size: read as the canonical shared_bytes (bytes
    loaded and stored over the launch) it gave reduce_sum 1 KiB of shared traffic at any N."""
    rows = [f"reduce_sum,10,1024,{ms},0.001,{n},0,0,,256,{n // 256},N,{n - 1},{4 * n + 4},0.25,"
            f"{4 * n},1024,shared_reduction,NVIDIA GeForce RTX 4070,89,46,0.1,1.0"
            for n, ms in ((262144, 0.01), (16777216, 0.2))]
    d = load(seed_file(tmp_path / "runs_4070_final.csv", rows)).df
    assert list(d["smem_per_block_bytes"]) == [1024, 1024]
    assert d["shared_bytes"].isna().all()


def test_seed_report_gpu_given_must_be_the_one_a_row_names(tmp_path, capsys):
    """gpu= (--source) used to replace every row's device name without a word: an RTX 4070's
    runs projected from an RTX 3090's peaks. It names the GPU only where a row names none."""
    one = seed_file(tmp_path / "runs_4070_final.csv", SEED_ROWS[:1])
    assert set(seed_report.read(one, gpu="rtx-4070").df["gpu"]) == {"rtx-4070"}
    with pytest.raises(InputError, match="measured on 'NVIDIA GeForce RTX 4070' "
                                         r"\(rtx-4070\), not on rtx-3090") as e:
        seed_report.read(one, gpu="rtx-3090")
    assert (e.value.row, e.value.field) == (2, "gpu_device_name")
    # a file of several GPUs keeps them, the one given among them: --source picks its rows
    mixed = seed_file(tmp_path / "mixed.csv")
    assert list(seed_report.read(mixed, gpu="titan-v").df["gpu"]) == [
        "rtx-4070", "titan-v", "rtx-2080-ti"]
    code, out, _ = run_cli(capsys, "predict", str(mixed), "-s", "titan-v", "-t", "h200",
                           "-m", "bandwidth", "--json")
    assert code == 0 and [p["kernel"] for p in json.loads(out)["predictions"]] == ["conv2d_3x3"]
    with pytest.raises(InputError) as e:  # none of them the one given: the first row says
        seed_report.read(mixed, gpu="rtx-3090")
    assert e.value.row == 2 and "(rtx-4070), not on rtx-3090" in str(e.value)
    code, _, err = run_cli(capsys, "predict", str(one), "-s", "rtx-3090", "-t", "h200")
    err = err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "row 2, field 'gpu_device_name': measured" in err[0]
    # a row that names no GPU, or one the catalog does not know, takes the one given
    unnamed = seed_file(tmp_path / "unnamed.csv",
                        [SEED_ROWS[0].replace("NVIDIA GeForce RTX 4070", ""),
                         SEED_ROWS[0].replace("NVIDIA GeForce RTX 4070", "Voodoo 5")])
    assert list(seed_report.read(unnamed, gpu="rtx-4070").df["gpu"]) == ["rtx-4070"] * 2
    with pytest.raises(InputError, match="no GPU named: name it in gpu_device_name, or pass "
                                         "--source NAME") as e:
        seed_report.read(unnamed)
    assert (e.value.row, e.value.field) == (2, "gpu_device_name")


def test_seed_report_bad_rows_written_here(tmp_path):
    def with_time(v):
        f = SEED_ROWS[0].split(",")
        f[SEED_HEAD.split(",").index("mean_ms")] = v
        return seed_file(tmp_path / "s.csv", [",".join(f)] + SEED_ROWS[1:])

    with pytest.raises(InputError) as e:
        seed_report.read(with_time("abc"))
    assert e.value.row == 2 and e.value.field == "mean_ms"
    with pytest.raises(InputError, match="negative") as e:
        seed_report.read(with_time("-1"))
    assert e.value.row == 2 and e.value.field == "mean_ms"
    t = seed_report.read(with_time(""))
    assert len(t) == 2 and count_causes(t.skipped) == {"mean_ms has no value": 1}
    assert t.skipped[0].row == 2 and list(t.df["kernel"]) == ["conv2d_3x3", "vector_add"]
    t = seed_report.read(with_time("0"))
    assert len(t) == 2 and [s.row for s in t.skipped] == [2]
    assert count_causes(t.skipped) == {"mean_ms = 0 is not positive": 1}


@need(not SEED.is_dir(), reason="shared/data/external not present")
def test_seed_report_all_four_gpus():
    files = sorted(SEED.glob("runs_*_final.csv"))
    assert all(sniff(f) == "seed-report" for f in files)
    tables = [load(f) for f in files]
    df = pd.concat([t.df for t in tables], ignore_index=True)
    assert len(df) == 243 and not any(t.skipped for t in tables)
    assert sorted(df["gpu"].unique()) == ["gtx-titan-x", "rtx-2080-ti", "rtx-4070", "titan-v"]
    # the dataset README: 44 configurations measured on all four GPUs
    assert (df.groupby(["kernel", "config"])["gpu"].nunique() == 4).sum() == 44
    first = pd.read_csv(SEED / "runs_2080ti_final.csv").iloc[0]
    r = df[(df["gpu"] == "rtx-2080-ti")].iloc[0]
    assert r["time_s"] == pytest.approx(first["mean_ms"] / 1e3)
    assert r["flops"] == first["FLOPs"] and r["dram_bytes"] == first["BYTES"]
    assert r["config"] == "N=262144,iters=50" and r["mem_pattern"] == "atomics_hotspot"
    assert "T1_model_ms" not in df.columns and "gpu_sms" not in df.columns


@need(not SEED.is_dir(), reason="shared/data/external not present")
def test_seed_report_bad_rows(tmp_path):
    lines = (SEED / "runs_4070_final.csv").read_text().splitlines()
    head = lines[0].split(",")
    i = head.index("mean_ms")

    def with_time(v):
        f = lines[1].split(",")
        f[i] = v
        p = tmp_path / "s.csv"
        p.write_text("\n".join([lines[0], ",".join(f)] + lines[2:4]) + "\n")
        return p

    with pytest.raises(InputError) as e:
        seed_report.read(with_time("abc"))
    assert e.value.row == 2 and e.value.field == "mean_ms"
    with pytest.raises(InputError, match="negative"):
        seed_report.read(with_time("-1"))
    t = seed_report.read(with_time(""))
    assert len(t) == 2 and count_causes(t.skipped) == {"mean_ms has no value": 1}
    t = seed_report.read(with_time("0"))
    assert t.skipped[0].row == 2


# ---- KernelTuner ------------------------------------------------------------------------------
def test_kerneltuner_gemm_excerpt():
    p = DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv"
    assert sniff(p) == "kerneltuner"
    t = load(p)
    raw = pd.read_csv(p)
    times = [c for c in raw.columns if c.startswith("time_ms__")]
    assert len(t) == raw[times].notna().sum().sum()
    # each blank cell is skipped naming its GPU (predicting from one GPU, a user reading
    # "config invalid on this GPU" took another GPU's blanks for their own)
    ids = {"RTX_2080_Ti": "rtx-2080-ti", "RTX_3060_laptop": "rtx-3060-laptop",
           "RTX_3090": "rtx-3090", "RTX_Titan": "titan-rtx"}
    blank = {f"config invalid on {ids[c.removeprefix('time_ms__')]}": int(raw[c].isna().sum())
             for c in times}
    assert count_causes(t.skipped) == {k: n for k, n in blank.items() if n}
    assert sorted(t.gpus) == ["rtx-2080-ti", "rtx-3060-laptop", "rtx-3090", "titan-rtx"]
    r = t.df[t.df["gpu"] == "rtx-3090"].iloc[0]
    assert r["flops"] == 2 * 4096**3
    # every GPU's column gives that GPU's times, in ms
    for col, gpu in (("RTX_2080_Ti", "rtx-2080-ti"), ("RTX_3060_laptop", "rtx-3060-laptop"),
                     ("RTX_3090", "rtx-3090"), ("RTX_Titan", "titan-rtx")):
        col = "time_ms__" + col
        got = t.df.loc[t.df["gpu"] == gpu, "time_s"].to_numpy()
        assert got == pytest.approx(raw[col].dropna().to_numpy() / 1e3), gpu
    assert r["config"] == ("KWG=32,KWI=2,MDIMA=8,MDIMC=8,MWG=16,NDIMB=8,NDIMC=8,NWG=16,"
                           "PRECISION=32,SA=0,SB=0,STRM=0,STRN=0,VWM=1,VWN=1")
    assert r["block_threads"] == 64 and r["grid_blocks"] == (4096 / 16) ** 2
    assert r["MWG"] == 16  # tuning parameters kept as columns
    # one problem per cache, the variants of which rankings order
    assert set(t.df["problem"]) == {"M=N=K=4096,PRECISION=32"}


def test_kerneltuner_caches_with_parameters_in_other_orders_name_configurations_alike(tmp_path):
    """The configuration key joined the parameters in the file's column order, so a cache
    written with its columns in another order named every configuration differently, and two
    such caches read together shared no configuration."""
    raw = pd.read_csv(DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv")
    cols = list(raw.columns)
    raw[cols[::-1]].to_csv(tmp_path / "gemm_4096.csv", index=False)
    a, b = load(DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv"), load(tmp_path / "gemm_4096.csv")
    key = ["gpu", "config"]
    assert a.df.sort_values(key)[key + ["time_s"]].reset_index(drop=True).equals(
        b.df.sort_values(key)[key + ["time_s"]].reset_index(drop=True))


def test_a_gemm_cache_named_with_its_gpu_count_only_has_no_size(tmp_path):
    """gemm_clblast_4gpus.csv was read as a GEMM of size 4 (the 4 of "4gpus"): FLOPs of 128,
    and a roofline that predicted from them without a word. A count of GPUs is no size: the
    size is unknown, and the warning says how to give it."""
    data = (DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv").read_bytes()
    p = tmp_path / "gemm_clblast_4gpus.csv"
    p.write_bytes(data)
    with pytest.warns(InputWarning, match=r"gemm_clblast_4gpus.csv: a CLBlast GEMM whose size "
                                          r"the file name does not give .* gemm_size=N"):
        assert load(p).df["flops"].isna().all()
    for name in ("gemm_clblast_4096_4gpus.csv", "gemm_4096.csv"):  # a size, GPUs counted or not
        (tmp_path / name).write_bytes(data)
        assert (load(tmp_path / name).df["flops"] == 2 * 4096**3).all()


def test_reader_options_by_name_and_type(tmp_path):
    # a GEMM cache named without its size has no FLOPs until gemm_size= gives it; text, as from
    # the command line, is converted to the type the reader's signature gives
    p = tmp_path / "cache.csv"
    p.write_bytes((DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv").read_bytes())
    # said where it happens, with the fix: it showed only as a profile of times without counts
    with pytest.warns(InputWarning, match=r"cache.csv: a CLBlast GEMM whose size the file name "
                                          r"does not give .* --reader-option gemm_size=N"):
        assert load(p).df["flops"].isna().all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)  # none where the size is known
        assert (load(p, gemm_size="512").df["flops"] == 2 * 512**3).all()
        assert len(load(DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv"))
    assert (load(p, gemm_size=512.0).df["grid_blocks"].iloc[0] == (512 / 16) ** 2)
    with pytest.raises(InputError, match=r"kerneltuner reader has no option 'gemm' \(its "
                                         r"options: gpu \(--source\), gemm_size, image_size\)"):
        load(p, gemm="512")
    for bad in ("abc", "0", "-4", "1.5", "inf", True):
        with pytest.raises(InputError, match="gemm_size: .* is not a positive integer"):
            load(p, gemm_size=bad)
    ncu = DATA / "ncu-handbuilt-h100-raw-base.csv"
    assert len(load(ncu, per_launch="true")) > len(load(ncu, per_launch="false"))
    with pytest.raises(InputError, match="per_launch: 'maybe' is not true or false"):
        load(ncu, per_launch="maybe")
    with pytest.raises(InputError, match="the amaris reader has no option 'x' \\(its options: "
                                         "gpu \\(--source\\)\\)"):
        load(DATA / "amaris-2gpus-calculate_temp.csv", x="1")


def test_kerneltuner_convolution_excerpt():
    t = load(DATA / "kerneltuner-4gpus-convolution.csv")
    r = t.df.iloc[0]
    assert r["flops"] == 2 * 4096 * 4096 * 15 * 15
    assert r["block_threads"] == r["block_size_x"] * r["block_size_y"]
    assert set(t.df["problem"]) == {"image=4096x4096,filter=15x15"}


def test_kerneltuner_bad_input(tmp_path):
    p = tmp_path / "k.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="time_ms__"):
        kerneltuner.read(p)
    p.write_text("a,time_ms__RTX_3090\n1,2\n2,oops\n")
    with pytest.raises(InputError) as e:
        kerneltuner.read(p)
    assert e.value.row == 3 and e.value.field == "time_ms__RTX_3090"
    p.write_text("a,time_ms__Voodoo_5\n1,2\n")
    with pytest.raises(InputError, match="Voodoo"):
        kerneltuner.read(p)


@need(not KT.is_dir(), reason="shared/data/external not present")
@pytest.mark.parametrize("name,rows,skipped", [("gemm_clblast_4096_4gpus.csv.gz", 63868, 7956),
                                               ("convolution_4gpus.csv.gz", 20952, 6120)])
def test_kerneltuner_full(name, rows, skipped):
    t = load(KT / name)
    assert len(t) == rows and len(t.skipped) == skipped and len(t.gpus) == 4
    assert t.df["flops"].notna().all()


# ---- NeuSight ---------------------------------------------------------------------------------
def test_neusight_excerpts_hand_values():
    b = load(DATA / "neusight-5gpus-bmm.csv")
    assert len(b) == 25 and len(b.gpus) == 5
    r = b.df.iloc[0]
    assert r["config"] == "B=6,M=27,N=21,K=390" and r["flops"] == 2 * 6 * 27 * 21 * 390
    assert r["kernel"] == "bmm" and r["kernel_name"] == "ampere_sgemm_128x128_nn"
    assert (b.df["problem"] == b.df["config"]).all()  # each shape its own problem
    assert r["time_s"] == pytest.approx(0.03578666721781095e-3)
    assert r["grid_blocks"] == 4 * 1 * 6 and r["block_threads"] == 256
    c = load(DATA / "neusight-5gpus-conv.csv")
    r = c.df.iloc[0]
    # B=38 Cin=893 Cout=326 k=3 S=5 stride 1 pad 1 -> O = (5 + 2 - 3) / 1 + 1 = 5
    assert r["flops"] == 2 * 38 * 326 * 5 * 5 * 893 * 3 * 3
    assert r["gpu"] == "a100-pcie-80gb" and r["time_s"] == pytest.approx(0.9669973452885946e-3)
    # each device name to its own catalog entry (an A100 40 GB PCIe is not the 80 GB, nor SXM)
    raw = pd.read_csv(DATA / "neusight-5gpus-bmm.csv")
    pairs = set(zip(raw["Device"], b.df["gpu"]))
    assert pairs == {("NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"),
                     ("Tesla P100-PCIE-16GB", "tesla-p100-pcie-16gb"), ("Tesla P4", "tesla-p4"),
                     ("Tesla T4", "tesla-t4"), ("Tesla V100-PCIE-32GB", "v100-pcie-32gb")}


def test_neusight_bad_input(tmp_path):
    lines = (DATA / "neusight-5gpus-bmm.csv").read_text().splitlines()
    p = tmp_path / "n.csv"
    p.write_text("\n".join([lines[0], lines[1].replace("bmm,0.0357", "bmm,NaN0")] + lines[2:]))
    with pytest.raises(InputError) as e:
        neusight.read(p)
    assert e.value.row == 2 and e.value.field == "Latency"
    p.write_text("\n".join([lines[0].replace("OPName,Latency", "OPName,Lat")] + lines[1:]))
    with pytest.raises(InputError, match="Latency"):
        neusight.read(p)
    p.write_text("\n".join(lines[:3] + [lines[3].replace("NVIDIA A100-PCIE-40GB", "Voodoo 5")]))
    with pytest.raises(InputError, match="unknown GPU 'Voodoo 5'") as e:
        neusight.read(p)
    assert e.value.row == 4 and e.value.field == "Device"


@need(not NS.is_dir(), reason="shared/data/external not present")
@pytest.mark.parametrize("name,rows", [("train_bmm_5gpus.csv.gz", 87623),
                                       ("train_conv_5gpus.csv.gz", 24662)])
def test_neusight_full(name, rows):
    t = load(NS / name)
    assert len(t) == rows and not t.skipped and len(t.gpus) == 5
    assert (t.df["flops"] > 0).all()


# ---- gpu-benches L2 sweeps (GPL-3.0 data: read from shared/data/external only) ----------------
GB = EXT / "gpu-benches" / "gpu-l2-cache"
GB_LINE = ("       512 kB      {set} kB        {ms}ms       0.1%    {bw} GB/s        0 GB/s      "
           "0 GB/s      0 GB/s      0 GB/s ")
GB_HEAD = "     data set   exec time     spread       Eff. bw"


@need(not GB.is_dir(), reason="shared/data/external not present")
def test_gpu_benches_l2_sweeps():
    from gpuproj.profiles.readers.gpu_benches import GPU_FILES

    for f in sorted(GB.glob("*.txt")):
        assert sniff(f) == "gpu-benches"
        t = load(f)
        assert not t.skipped and t.gpus == [GPU_FILES[f.stem][0]]
        # the time is the benchmark's 100 000-block launch at the printed bandwidth; the printed
        # whole milliseconds agree within their rounding, except on the MI210 (twice as long)
        printed = pd.Series([float(x.split()[4].rstrip("ms")) for x in
                             f.read_text().splitlines()[1:] if x.strip()], index=t.df.index)
        ratio = (printed / (t.df["time_s"] * 1e3)).median()
        assert ratio == pytest.approx(2.0 if f.stem == "mi210" else 1.0, rel=0.05)
        assert ((printed - t.df["time_s"] * 1e3).abs() <= 0.51).all() or f.stem == "mi210"
    t = load(GB / "h200.txt")
    r = t.df.iloc[0]
    assert len(t) == 85 and r["gpu"] == "h200-sxm-141gb"
    assert r["config"] == "chunk=512kB,data_set=1536kB"
    assert r["time_s"] == pytest.approx(512 * 1024 * 1e5 / 13526.6e9)
    assert r["l2_bytes"] == 512 * 1024 * 1e5 and r["working_set_bytes"] == 1536 * 1024
    assert pd.isna(r["dram_bytes"]) and r["grid_blocks"] == 1e5 and r["block_threads"] == 1024


def gpu_benches_error(path, lines, match=None, **read):
    """The InputError ``gpu_benches.read(path, **read)`` raises on a file of ``lines``."""
    from gpuproj.profiles.readers import gpu_benches

    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=match) as e:
        gpu_benches.read(path, **read)
    return e.value


def test_gpu_benches_bad_input(tmp_path):
    from gpuproj.profiles.readers import gpu_benches

    lines = [GB_HEAD, GB_LINE.format(set=1536, ms=4, bw="13526.6"),
             GB_LINE.format(set=2048, ms=4, bw="0.0")]
    p = tmp_path / "h200.txt"
    p.write_text("\n".join(lines) + "\n")
    t = load(p)
    assert sniff(p) == "gpu-benches" and len(t) == 1 and t.gpus == ["h200-sxm-141gb"]
    assert count_causes(t.skipped) == {"Eff. bw = 0 is not positive": 1}
    # the docstring's values: 100 000 blocks of 1024 threads each sum one 512 kB chunk, so the
    # launch moves 512 x 1024 x 1e5 B, at the printed 13526.6 GB/s (1e9 B/s); no counter
    # columns (all 0 GB/s): no DRAM bytes
    r = t.df.iloc[0]
    assert r["kernel"] == "gpu-l2-cache sumKernel"
    assert r["config"] == "chunk=512kB,data_set=1536kB"
    assert r["time_s"] == pytest.approx(512 * 1024 * 100_000 / 13526.6e9, rel=1e-12)
    assert r["l2_bytes"] == 512 * 1024 * 100_000 and r["working_set_bytes"] == 1536 * 1024
    assert r["grid_blocks"] == 100_000 and r["block_threads"] == 1024
    assert pd.isna(r["dram_bytes"])
    assert gpu_benches.read(p, gpu="H100 SXM").gpus == ["h100-sxm5-80gb"]
    q = tmp_path / "mybox.txt"
    q.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="pass --source NAME"):
        gpu_benches.read(q)
    assert gpu_benches_error(p, lines[:2] + ["       512 kB      2048 kB  fast"]).row == 3


# ---- gpu-benches L1 sweeps (GPL-3.0 data: read from shared/data/external only) ----------------
GC = EXT / "gpu-benches" / "gpu-cache"
GC_HEAD = ("     data set   exec time     spread        Eff. bw       DRAM read      DRAM write"
           "         L2 read       L2 store")
GC_LINE = ("{set:>10} kB{ms:>10}ms       0.1%{bw:>11} GB/s         0 GB/s          0 GB/s          "
           "0 GB/s          0 GB/s ")


@need(not GC.is_dir(), reason="shared/data/external not present")
def test_gpu_benches_l1_sweeps():
    from gpuproj.catalog import resolve
    from gpuproj.profiles.readers.gpu_benches import CACHE_BYTES, GPU_FILES

    # file -> (element, lines, blocks per launch, iterations x N): the version of main.cu each
    # run used (docstring); the RX 6900 XT's times fit 40 blocks, half its CUs
    runs = {"a100_80": ("fp64", 73, None, 1e8), "a40": ("fp32", 82, None, 1e9),
            "h100_pcie": ("fp64", 73, None, 1e8), "l40": ("fp32", 82, None, 1e9),
            "mi100": ("float4", 85, None, 1e9), "mi210": ("float4", 73, None, 1e8),
            "rx6900xt": ("float4", 85, 40, 1e9), "v100": ("fp64", 73, None, 1e8)}
    assert sorted(f.stem for f in GC.glob("*.txt")) == sorted(runs)
    for stem, (element, lines, blocks, work) in runs.items():
        f = GC / f"{stem}.txt"
        assert sniff(f) == "gpu-benches"
        t = load(f)
        assert len(t) == lines and not t.skipped and t.gpus == [GPU_FILES[stem][0]]
        assert set(t.df["kernel"]) == {f"gpu-cache sumKernel ({element})"}
        # the launch the printed whole milliseconds time: data set x blocks x (work / N + 2)
        # iterations at the printed bandwidth (that of the fastest launch; the printed time is
        # the mean of the others, rounded: up to 9 % more in the median over a file, where the
        # launches take 4 or 5 ms), where 10 x the iterations or 2 x the blocks would be far off
        blocks = blocks or resolve(t.gpus[0]).value("sm_count")
        size = {"fp32": 4, "fp64": 8, "float4": 16}[element]
        ws = t.df["working_set_bytes"]
        launch = ws * blocks * (work // (ws / size) + 2) * t.df["time_s"] / CACHE_BYTES
        printed = pd.Series([float(x.split()[2].rstrip("ms")) for x in f.read_text().splitlines()
                             if "GB/s" in x], index=t.df.index)
        assert 0.95 < (printed / (launch * 1e3)).median() < 1.12
    # v100.txt's first line: "2 kB 5ms 0.4% 13646.3 GB/s", 256 doubles
    r = load(GC / "v100.txt").df.iloc[0]
    assert r["kernel"] == "gpu-cache sumKernel (fp64)" and r["config"] == "data_set=2kB"
    assert r["time_s"] == pytest.approx(CACHE_BYTES / 13646.3e9)
    assert r["l1_bytes"] == CACHE_BYTES and r["working_set_bytes"] == 2048
    assert pd.isna(r["l2_bytes"]) and pd.isna(r["dram_bytes"]) and pd.isna(r["grid_blocks"])


def test_gpu_benches_l1_sweep_from_lines(tmp_path):
    from gpuproj.profiles.readers import gpu_benches

    # a clock line before the header and ROCm's agent lines after it are passed over
    lines = ["clock: 1740 1740 1755", GC_HEAD, "Agent 0", GC_LINE.format(set=1, ms=40, bw="9000.5"),
             GC_LINE.format(set=2, ms=38, bw="0.0"), "",
             GC_LINE.format(set=64, ms=39, bw="9400.0")]
    p = tmp_path / "a40.txt"
    p.write_text("\n".join(lines) + "\n")
    assert sniff(p) == "gpu-benches"
    t = load(p)
    assert len(t) == 2 and t.gpus == ["a40"]
    assert count_causes(t.skipped) == {"Eff. bw = 0 is not positive": 1}
    assert t.skipped[0].row == 5
    # the first data set, 1 kB, is main.cu's first run of N = 256 elements: 4-byte floats. Each
    # row is 10^11 bytes loaded at the printed bandwidth (10^9 B/s), all of them L1 loads; the
    # data set in 1024-byte kB; one block of 256 threads per SM, no grid; no counter columns read
    assert gpu_benches.CACHE_BYTES == 1e11
    r = t.df.iloc[0]
    assert r["kernel"] == "gpu-cache sumKernel (fp32)" and r["config"] == "data_set=1kB"
    assert r["time_s"] == pytest.approx(1e11 / 9000.5e9, rel=1e-12)
    assert r["l1_bytes"] == 1e11 and r["working_set_bytes"] == 1024
    # every block re-reads the whole set: it is also each SM's (what its L1 must hold)
    assert r["sm_working_set_bytes"] == 1024
    assert r["block_threads"] == 256 and pd.isna(r["grid_blocks"])
    assert pd.isna(r["l2_bytes"]) and pd.isna(r["dram_bytes"]) and pd.isna(r["flops"])
    r = t.df.iloc[1]
    assert r["config"] == "data_set=64kB" and r["working_set_bytes"] == 64 * 1024
    assert r["sm_working_set_bytes"] == 64 * 1024
    assert r["time_s"] == pytest.approx(1e11 / 9400e9, rel=1e-12)
    # the header alone tells the two sweeps apart: without a clock line too
    p.write_text("\n".join(lines[1:]) + "\n")
    assert sniff(p) == "gpu-benches" and len(load(p)) == 2
    # 2 kB first: doubles; 4 kB: the HIP build's float4
    for first, element in ((2, "fp64"), (4, "float4")):
        p.write_text(GC_HEAD + "\n" + GC_LINE.format(set=first, ms=5, bw="1.0") + "\n")
        assert load(p).df["kernel"].iloc[0] == f"gpu-cache sumKernel ({element})"
    q = tmp_path / "mybox.txt"
    q.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="pass --source NAME"):
        gpu_benches.read(q)
    assert gpu_benches.read(q, gpu="L40").gpus == ["l40"]
    # an L2-sweep line under the L1 sweep's header, a first data set that is not 256 elements
    # of 4, 8 or 16 bytes, a header without lines
    for bad, match, row in (
            ([GC_HEAD, GB_LINE.format(set=1536, ms=4, bw="13526.6")], "not a gpu-cache line", 2),
            ([GC_HEAD, GC_LINE.format(set=3, ms=5, bw="1.0")], "first data set 3 kB", 2),
            (["clock: 1740", GC_HEAD, "Agent 0"], "header but no rows", None)):
        assert gpu_benches_error(p, bad, match).row == row


# ---- gpu-benches repeated small kernels (GPL-3.0 data: read from shared/data/external only) ----
SK = EXT / "gpu-benches" / "gpu-small-kernels"


@need(not SK.is_dir(), reason="shared/data/external not present")
def test_gpu_benches_small_kernels():
    for f in sorted(SK.glob("*.txt")):
        assert sniff(f) == "gpu-benches"
        t = load(f)
        assert not t.skipped and len(t.gpus) == 1
    t = load(SK / "h200.txt")
    # 145 lines of six block sizes, 32 to 1024 threads
    assert len(t) == 145 * 6 and t.gpus == ["h200-sxm-141gb"]
    r = t.df.iloc[0]
    assert r["kernel"] == "gpu-small-kernels scale" and r["config"] == "n=4096,block=32"
    # first line "4096  64kB     26 ...": 16 bytes per element at 26 GB/s
    assert r["time_s"] == pytest.approx(16 * 4096 / 26e9)
    assert r["l2_bytes"] == r["working_set_bytes"] == 16 * 4096
    assert r["flops"] == r["fp64_flops"] == 4096 and r["dtype"] == "fp64"
    assert r["block_threads"] == 32 and r["grid_blocks"] == 4096 // 32 + 1
    # the older A100 run has nine block sizes (4 to 1024), the MI210 one seven (16 to 1024)
    for stem, blocks in (("a100_80", [4, 8, 16, 32, 64, 128, 256, 512, 1024]),
                         ("mi210", [16, 32, 64, 128, 256, 512, 1024])):
        got = load(SK / f"{stem}.txt").df["config"].str.extract(r"block=(\d+)")[0]
        assert sorted(set(got.astype(int))) == blocks
    # the L40 run stopped within its last line: two block sizes of it
    assert len(load(SK / "l40.txt")) == 165 * 6 + 2
    assert load(SK / "h200_graph.txt").df["kernel"].iloc[0] == "gpu-small-kernels scale (graph)"
    pt = load(SK / "h200_pt.txt").df
    assert pt["kernel"].iloc[0] == "gpu-small-kernels scale (persistent, atomic sync)"
    assert pt["grid_blocks"].isna().all()


def test_gpu_benches_small_kernels_bad_input(tmp_path):
    from gpuproj.profiles.readers import gpu_benches

    lines = ["4096  64kB     26     26", "4341  67kB     27      0", "4601  71kB     29"]
    p = tmp_path / "mybox_gsync.txt"
    gpu_benches_error(p, lines, "pass --source NAME")  # the file names no GPU
    assert sniff(p) == "gpu-benches"
    t = gpu_benches.read(p, gpu="H200")
    # two block sizes (512 and 1024 threads), the last line cut after the first; 0 GB/s is
    # skipped and counted
    assert list(t.df["config"]) == ["n=4096,block=512", "n=4096,block=1024",
                                    "n=4341,block=512", "n=4601,block=512"]
    assert t.df["kernel"].iloc[0] == "gpu-small-kernels scale (persistent, grid sync)"
    assert count_causes(t.skipped) == {"bandwidth = 0 is not positive": 1}
    # "4096  64kB  26": 16 bytes per element (one double read, one written) at 26 GB/s; one
    # FP64 multiply per element; a persistent kernel has no grid the file gives
    r = t.df.iloc[0]
    assert r["time_s"] == pytest.approx(16 * 4096 / 26e9, rel=1e-12)
    assert r["l2_bytes"] == r["working_set_bytes"] == 16 * 4096 == 65536
    assert r["fp64_mul_thread_inst"] == 4096 and r["fp64_fma_thread_inst"] == 0
    assert r["flops"] == r["fp64_flops"] == 4096 and r["dtype"] == "fp64"
    assert r["block_threads"] == 512 and pd.isna(r["grid_blocks"])
    r = t.df.iloc[2]  # "4341  67kB  27": block 512
    assert r["time_s"] == pytest.approx(16 * 4341 / 27e9, rel=1e-12)
    assert r["flops"] == 4341 and r["l2_bytes"] == 16 * 4341
    # one launch per repetition (no suffix): grid = n / block + 1 blocks
    q = tmp_path / "mybox.txt"
    q.write_text("\n".join(lines) + "\n")
    plain = gpu_benches.read(q, gpu="H200").df
    assert plain["kernel"].iloc[0] == "gpu-small-kernels scale"
    assert list(plain["grid_blocks"]) == [4096 // 512 + 1, 4096 // 1024 + 1, 4341 // 512 + 1,
                                          4601 // 512 + 1] == [9, 5, 9, 9]
    assert gpu_benches_error(p, lines + ["4877  76kB     31    fast"], gpu="H200").row == 4
    gpu_benches_error(p, ["4096  64kB" + "  26" * 12], "12 bandwidth columns", gpu="H200")
    # a line with more columns than the first, or fewer before the last, would shift the block
    # sizes of the whole file: an error naming it
    for bad, row in ((lines[:2] + ["4601  71kB     29     29     29"] + lines[2:], 3),
                     ([lines[0], lines[2], lines[1]], 2)):
        assert gpu_benches_error(p, bad, "where the first line has 2", gpu="H200").row == row


# ---- gpu-benches roofline sweeps (GPL-3.0 data: read from shared/data/external only) ----------
RF = EXT / "gpu-benches" / "gpu-roofline"
RF_LINE = ("{dev} {blocks} blocks   {its:3d} its      {flb} Fl/B      {gbs:5d} GB/s    {gfs:6d} "
           "GF/s   {mhz} Mhz   572 W   57°C")


@need(not RF.is_dir(), reason="shared/data/external not present")
def test_gpu_benches_roofline():
    from gpuproj.profiles.readers.gpu_benches import ROOF_ELEMENTS

    for stem, gpu, rows in (("alex_a100_40", "a100-sxm4-40gb", 43), ("alex_a40", "a40", 68),
                            ("genoa_l40", "l40", 68), ("h200", "h200-sxm-141gb", 55)):
        f = RF / f"{stem}.txt"
        assert sniff(f) == "gpu-benches"
        t = load(f)
        assert len(t) == rows and not t.skipped and t.gpus == [gpu]
    d = load(RF / "h200.txt").df.set_index("config")
    # "0 1056 blocks 0 its 0.250 Fl/B 3759 GB/s 940 GF/s 1980 Mhz": two 4-byte arrays at the
    # bandwidth, which has more digits than the FLOP rate
    r = d.loc["its=0"]
    assert r["kernel"] == "gpu-roofline testfun (fp32)" and r["dtype"] == "fp32"
    assert r["time_s"] == pytest.approx(8 * ROOF_ELEMENTS / 3759e9)
    assert r["dram_bytes"] == r["l2_bytes"] == r["working_set_bytes"] == 8 * ROOF_ELEMENTS
    assert r["sm_clock_hz"] == 1980e6 and r["block_threads"] == 256
    # "... 400 its 100.250 Fl/B 425 GB/s 42558 GF/s": 2 + 2 x 400 FLOP per element at the
    # FLOP rate, 400 FMA and 2 ADD thread instructions per element
    r = d.loc["its=400"]
    assert r["time_s"] == pytest.approx(802 * ROOF_ELEMENTS / 42558e9)
    assert r["flops"] == 802 * ROOF_ELEMENTS and r["fp32_fma_thread_inst"] == 400 * ROOF_ELEMENTS
    assert r["fp32_add_thread_inst"] == 2 * ROOF_ELEMENTS
    # eight A40s per node: the median over them; the L40 node's two at different clocks
    l40 = load(RF / "genoa_l40.txt").df.set_index("config").loc["its=512"]
    assert l40["sm_clock_hz"] == pytest.approx((1740e6 + 2205e6) / 2)
    assert l40["time_s"] == pytest.approx(
        (1026 * ROOF_ELEMENTS / 39046e9 + 1026 * ROOF_ELEMENTS / 50207e9) / 2)


def test_gpu_benches_roofline_bad_input(tmp_path):
    from gpuproj.profiles.readers import gpu_benches

    def line(dev=0, blocks=1056, its=0, flb="0.250", gbs=3759, gfs=940, mhz=1980):
        return RF_LINE.format(dev=dev, blocks=blocks, its=its, flb=flb, gbs=gbs, gfs=gfs,
                              mhz=mhz)

    # series.sh's own lines are passed over; two devices of one its give one row
    lines = ["8", "16", "-- Finished Building --", line(), line(dev=1, gbs=3700),
             line(its=1, flb="0.500", gbs=0, gfs=0), "", line(its=8, flb="2.250", gbs=3760,
                                                              gfs=8459)]
    p = tmp_path / "mybox.txt"
    gpu_benches_error(p, lines, "pass --source NAME")  # the file names no GPU
    assert sniff(p) == "gpu-benches"
    t = gpu_benches.read(p, gpu="H200")
    assert list(t.df["config"]) == ["its=0", "its=8"]
    assert count_causes(t.skipped) == {"GB/s and GF/s = 0 is not positive": 1}
    assert t.skipped[0].row == 6
    re_ = gpu_benches.ROOF_ELEMENTS  # the work every row is scaled to (elements per array)
    d = t.df.set_index("config")
    # its=0, Fl/B 0.25 = (2 + 0) / (2 x 4): 4-byte elements, two arrays of them; 3759 and 3700
    # GB/s have more digits than 940 GF/s, so the time is the bytes at the bandwidth, the median
    # of the two devices (of two values: their mean); 2 FLOP per element (a - b, the sum)
    r = d.loc["its=0"]
    assert r["kernel"] == "gpu-roofline testfun (fp32)" and r["dtype"] == "fp32"
    assert r["time_s"] == pytest.approx((8 * re_ / 3759e9 + 8 * re_ / 3700e9) / 2, rel=1e-12)
    assert r["dram_bytes"] == r["l2_bytes"] == r["working_set_bytes"] == 8 * re_
    assert r["sm_clock_hz"] == 1980e6 and r["block_threads"] == 256
    assert r["flops"] == 2 * re_ and r["fp32_fma_thread_inst"] == 0
    assert r["fp32_add_thread_inst"] == 2 * re_
    # its=8, Fl/B 2.25 = (2 + 16) / (2 x 4); 8459 GF/s has more digits than 3760 GB/s, so the
    # time is the 2 + 2 x 8 = 18 FLOP per element at the FLOP rate
    r = d.loc["its=8"]
    assert r["time_s"] == pytest.approx(18 * re_ / 8459e9, rel=1e-12)
    assert r["dram_bytes"] == 8 * re_ and r["sm_clock_hz"] == 1980e6
    assert r["flops"] == 18 * re_ and r["fp32_fma_thread_inst"] == 8 * re_
    assert r["fp32_add_thread_inst"] == 2 * re_ and r["fp32_mul_thread_inst"] == 0
    # 8-byte elements: half the FLOP per byte, an fp64 kernel of 16 bytes per element
    p.write_text(line(flb="0.125") + "\n")
    r = gpu_benches.read(p, gpu="H200").df.iloc[0]
    assert r["dtype"] == "fp64" and r["dram_bytes"] == 16 * gpu_benches.ROOF_ELEMENTS
    for bad, match, row in (
            (lines[:4] + ["0 1056 blocks  fast"], "not a gpu-roofline line", 5),
            ([line(), line(its=8, flb="3.000")], "Fl/B 3 fits neither", 2),
            ([line(), line(dev=1, blocks=504)], "block count 504 where", 2),
            ([line(), line(its=8, flb="1.125")], "element size 8 where", 2)):
        assert gpu_benches_error(p, bad, match, gpu="H200").row == row


# ---- gpu-benches stream kernels against occupancy (GPL-3.0 data: shared/data/external only) ---
ST = EXT / "gpu-benches" / "gpu-stream"
ST_HEAD = ("blockSize   threads       %occ  |                init       read       scale     triad"
           "       3pt        5pt")


@need(not ST.is_dir(), reason="shared/data/external not present")
def test_gpu_benches_stream():
    from gpuproj.profiles.readers.gpu_benches import STREAM_ELEMENTS

    for f in sorted(ST.glob("*.txt")):
        assert sniff(f) == "gpu-benches"
        t = load(f)
        assert len(t.gpus) == 1 and len(t) > 0
    t = load(ST / "h200.txt")
    # 32 block sizes (32 to 1024) of six kernels
    assert len(t) == 32 * 6 and not t.skipped and t.gpus == ["h200-sxm-141gb"]
    d = t.df.set_index(["kernel", "config"])
    # first line: "32  4224  3 %  |  GB/s:  297  123  240  334  222  218"
    r = d.loc[("gpu-stream triad", "block=32")]
    assert r["time_s"] == pytest.approx(3 * 8 * STREAM_ELEMENTS / 334e9)
    assert r["dram_bytes"] == 3 * 8 * STREAM_ELEMENTS and r["dtype"] == "fp64"
    assert r["fp64_fma_thread_inst"] == STREAM_ELEMENTS and r["flops"] == 2 * STREAM_ELEMENTS
    assert r["block_threads"] == 32 and r["grid_blocks"] == STREAM_ELEMENTS // 32 + 1
    r = d.loc[("gpu-stream 5pt", "block=32")]
    assert r["time_s"] == pytest.approx(2 * 8 * STREAM_ELEMENTS / 218e9)
    assert r["flops"] == 9 * STREAM_ELEMENTS
    assert d.loc[("gpu-stream init", "block=32"), "flops"] == 0
    # the older A100 40 GB run names its stencils 1pt and 3pt: the four stream kernels only,
    # each stencil cell skipped and counted
    old = load(ST / "a100_40.txt")
    assert set(old.df["kernel"]) == {f"gpu-stream {k}" for k in ("init", "read", "scale",
                                                                 "triad")}
    assert len(old.skipped) == 2 * 32 and old.skipped[0].reason.startswith("'1pt' of an older")
    assert load(ST / "RX6900XT.txt").gpus == ["rx-6900-xt"]


def test_gpu_benches_stream_bad_input(tmp_path):
    from gpuproj.profiles.readers import gpu_benches

    line = ("       {b}        {t}      3 %  |  GB/s:         297        123        {s}        334"
            "        222        218")
    lines = [ST_HEAD, line.format(b=32, t=4224, s=240), line.format(b=64, t=8448, s=0)]
    p = tmp_path / "mybox.txt"
    gpu_benches_error(p, lines, "pass --source NAME")  # the file names no GPU
    assert sniff(p) == "gpu-benches"
    t = gpu_benches.read(p, gpu="H200")
    assert len(t) == 11 and count_causes(t.skipped) == {"GB/s = 0 is not positive": 1}
    assert t.skipped[0].row == 3
    # gpu-stream/main.cu: max_buffer_size = 128 Mi + 2 doubles per array
    se = 128 * 1024 * 1024 + 2
    assert gpu_benches.STREAM_ELEMENTS == se
    d = t.df.set_index(["kernel", "config"])
    # block=32: "GB/s: 297 123 240 334 222 218" (init read scale triad 3pt 5pt); triad streams
    # three arrays of 8-byte elements and runs one FMA per element
    r = d.loc[("gpu-stream triad", "block=32")]
    assert r["time_s"] == pytest.approx(3 * 8 * se / 334e9, rel=1e-12)
    assert r["dram_bytes"] == r["l2_bytes"] == r["working_set_bytes"] == 3 * 8 * se
    assert r["fp64_fma_thread_inst"] == se and r["flops"] == 2 * se and r["dtype"] == "fp64"
    assert r["block_threads"] == 32 and r["grid_blocks"] == se // 32 + 1 == 4194305
    # 5pt: two arrays, five multiplies and four adds per element
    r = d.loc[("gpu-stream 5pt", "block=32")]
    assert r["time_s"] == pytest.approx(2 * 8 * se / 218e9, rel=1e-12)
    assert r["dram_bytes"] == 2 * 8 * se and r["flops"] == 9 * se
    assert (r["fp64_mul_thread_inst"], r["fp64_add_thread_inst"]) == (5 * se, 4 * se)
    r = d.loc[("gpu-stream init", "block=32")]
    assert r["flops"] == 0 and r["dram_bytes"] == 8 * se
    assert r["time_s"] == pytest.approx(8 * se / 297e9, rel=1e-12)
    # scale at block=64 is the skipped cell; its triad is there, of the other grid
    r = d.loc[("gpu-stream triad", "block=64")]
    assert r["grid_blocks"] == se // 64 + 1 == 2097153
    assert ("gpu-stream scale", "block=64") not in d.index
    for bad, match, row in (
            ([ST_HEAD, line.format(b=32, t=4224, s=240) + "  99"], "7 bandwidths for", 2),
            ([ST_HEAD, line.format(b=32, t=4224, s="fast")], "not a gpu-stream line", 2),
            ([ST_HEAD, line.format(b=0, t=0, s=240)], "block size 0", 2),
            ([ST_HEAD + "  7pt", line.format(b=32, t=4224, s=240)], "header's 7 kernels", 2),
            (["blockSize   threads       %occ  |   1pt   7pt", "  32  4224  3 %  |  GB/s:  1  2"],
             "the header names none of the kernels", None)):
        assert gpu_benches_error(p, bad, match, gpu="H200").row == row


def test_a_frame_from_python_skips_unusable_rows_and_says_why():
    # ProfileTable.from_frame is the notebook's way in, without a reader's own checks
    from gpuproj.profiles.table import ProfileTable

    df = pd.DataFrame({"kernel": ["a", "b", None, "d"], "config": ["1", "2", "3", "4"],
                       "gpu": ["v100-sxm2-16gb"] * 4, "time_s": [1e-3, -2.0, 1e-3, None],
                       "_row": [2, 3, 4, 5]})
    t = ProfileTable.from_frame(df, origin="nb")
    assert list(t.df["kernel"]) == ["a"]
    assert [(s.path, s.row, s.reason) for s in t.skipped] == [
        ("nb", 3, "time_s = -2.0 is not positive"), ("nb", 4, "kernel empty"),
        ("nb", 5, "time_s is missing")]
    with pytest.raises(InputError, match="missing required column"):
        ProfileTable.from_frame(df.drop(columns="time_s"))
