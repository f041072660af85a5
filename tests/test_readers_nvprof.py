"""nvprof CSV reader and the Amaris et al. Rodinia tables (nvprof metrics with R-style names).

The nvprof fixtures are hand-built following the documented ``nvprof --csv --metrics`` and
``--print-gpu-trace`` layouts (tests/data/README.md); the Amaris fixtures are verbatim excerpts
of the CC-BY-4.0 dataset, and the full tables are read from shared/data/external when present.
"""

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpuproj.errors import InputError, InputWarning
from gpuproj.profiles import load, sniff
from gpuproj.profiles.readers import amaris, nvprof
from gpuproj.profiles.table import count_causes

DATA = Path(__file__).parent / "data"
METRICS = DATA / "nvprof-v100-pcie-32gb-metrics.csv"
TRACE = DATA / "nvprof-v100-pcie-32gb-trace.csv"
EXT = Path(__file__).resolve().parents[2] / "shared" / "data" / "external"
AMARIS = EXT / "amaris-rodinia-nvprof"
N = 2**20


def test_a_gpu_given_must_be_the_one_the_device_column_names():
    """gpu= (--source) used to replace the Device column without a word: a V100 32 GB's
    profile projected from the 16 GB part's catalog entry, or from any other GPU's."""
    assert load(METRICS, trace=TRACE, gpu="Tesla V100-PCIE-32GB").gpus == ["v100-pcie-32gb"]
    with pytest.raises(InputError, match=r"measured on 'Tesla V100-PCIE-32GB' "
                                         r"\(v100-pcie-32gb\), not on v100-pcie-16gb") as e:
        load(METRICS, trace=TRACE, gpu="v100-pcie-16gb")
    # the row and the file of the trace, whose Device column names the GPU
    assert (e.value.path, e.value.field) == (TRACE, "Device") and e.value.row > 1


def test_nvprof_metrics_joined_with_trace():
    assert sniff(METRICS) == "nvprof" and sniff(TRACE) == "nvprof"
    t = load(METRICS, trace=TRACE)
    assert len(t) == 2 and t.gpus == ["v100-pcie-32gb"]
    assert count_causes(t.skipped) == {"not a kernel launch (memory copy or set)": 2}
    v = t.df[t.df["kernel"].str.startswith("vec_add")].iloc[0]
    assert v["launches"] == 2 and v["time_s"] == pytest.approx(12.5e-6)   # (12.352+12.648)/2 us
    assert v["dram_read_bytes"] == 262144 * 32 and v["dram_write_bytes"] == 131072 * 32
    assert v["l2_bytes"] == (262144 + 131072) * 32
    assert v["fp32_flops"] == N and v["achieved_occupancy"] == pytest.approx(0.845)
    assert v["config"] == "grid=4096x1x1 block=256x1x1" and v["regs_per_thread"] == 16
    s = t.df[t.df["kernel"].str.startswith("saxpy")].iloc[0]
    assert s["fp32_flops"] == 2 * N and s["time_s"] == pytest.approx(14.016e-6)


def test_nvprof_utilisation_levels_of_metrics_no_column_uses_are_passed_over(tmp_path):
    """nvprof prints utilisation metrics as levels ("Low (2)"): a file with one was refused as
    a whole, though no canonical column is made of it. A metric that is used must still be a
    number."""
    util = ('"Tesla V100-PCIE-32GB (0)","vec_add(float const *, float const *, float*, int)",2,'
            '"dram_utilization","Device Memory Utilization","Low (2)","Low (2)","Low (2)"\n')
    p = tmp_path / "m.csv"
    p.write_text(METRICS.read_text() + util)
    pd.testing.assert_frame_equal(load(p, trace=TRACE).df, load(METRICS, trace=TRACE).df)
    p.write_text(METRICS.read_text() + util.replace("dram_utilization", "flop_count_sp_add"))
    with pytest.raises(InputError, match="'Low \\(2\\)' is not a number") as e:
        load(p, trace=TRACE)
    assert e.value.field == "flop_count_sp_add"


def test_nvprof_events_before_the_metrics_are_passed_over_with_a_warning(tmp_path):
    """``nvprof --events E --metrics M --csv`` prints an Event result section first, with its
    own header: the file was refused as neither metric nor trace output."""
    lines = METRICS.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("==") and "Metric result" in ln)
    events = ['==5120== Event result:\n',
              '"Device","Kernel","Invocations","Event Name","Min","Max","Avg","Total"\n',
              '"Tesla V100-PCIE-32GB (0)","vec_add(float const *, float const *, float*, int)",'
              '2,"elapsed_cycles_sm",1000,1000,1000,2000\n']
    p = tmp_path / "ev.csv"
    p.write_text("".join(lines[:at] + events + lines[at:]))
    assert sniff(p) == "nvprof"
    with pytest.warns(InputWarning, match=rf"rows {at + 2}-{at + 3}: the Event result section "
                                          "is passed over"):
        t = load(p, trace=TRACE)
    pd.testing.assert_frame_equal(t.df, load(METRICS, trace=TRACE).df)
    # events alone: said so, not "neither --metrics nor --print-gpu-trace"
    p.write_text("".join(lines[:at] + events))
    assert sniff(p) == "nvprof"
    with pytest.raises(InputError, match="nvprof --events output holds no metric"):
        load(p, trace=TRACE)
    # two outputs one after the other: the second header is not read as a kernel
    p.write_text(METRICS.read_text() + "".join(lines[at:]))
    with pytest.raises(InputError, match="the header of row .* again"):
        load(p, trace=TRACE)


def test_nvprof_dram_bytes_counted_once_when_both_forms_were_collected(tmp_path):
    """``--metrics all`` collects dram_read_bytes beside dram_read_transactions: one quantity,
    so read once (they were added, doubling the DRAM bytes)."""
    lines = METRICS.read_text().splitlines(keepends=True)
    extra = [ln.replace('"dram_read_transactions","Device Memory Read Transactions",262144,'
                        '262144,262144', '"dram_read_bytes","Device Memory Read Bytes",8388608,'
                        '8388608,8388608')
             .replace('"dram_write_transactions","Device Memory Write Transactions",131072,'
                      '131072,131072', '"dram_write_bytes","Device Memory Write Bytes",4194304,'
                      '4194304,4194304')
             for ln in lines if '"dram_' in ln]
    both = tmp_path / "metrics.csv"
    both.write_text("".join(lines + extra))
    v = load(both, trace=TRACE).df.iloc[0]
    assert (v["dram_read_bytes"], v["dram_write_bytes"]) == (8388608, 4194304)


def test_nvprof_trace_shared_memory_in_binary_kilobytes(tmp_path):
    """The trace's KB are 1024 bytes: 1.0625 KB of static shared memory is 1088 B."""
    text = TRACE.read_text().replace("ms,us,,,,,,,,B,B,MB", "ms,us,,,,,,,,KB,B,MB")
    text = text.replace(",256,1,1,16,0,0,", ",256,1,1,16,1.0625,0,")
    path = tmp_path / "trace.csv"
    path.write_text(text)
    assert (load(path).df["smem_per_block_bytes"] == 1088).all()
    path.write_text(text.replace(",KB,B,MB", ",Kbyte,B,MB"))
    with pytest.raises(InputError, match="not a size unit") as e:
        load(path)
    assert e.value.field == "Static SMem"


def test_nvprof_trace_alone_and_metrics_alone():
    t = load(TRACE)
    assert len(t) == 2 and t.df["fp32_flops"].isna().all()
    with pytest.raises(InputError, match="trace="):
        nvprof.read(METRICS)


def test_nvprof_values_with_units():
    assert nvprof.metric_value("684.32GB/s", path="p", row=1, field="f") == pytest.approx(6.8432e11)
    assert nvprof.metric_value("99.50%", path="p", row=1, field="f") == 99.5
    with pytest.raises(InputError) as e:
        nvprof.metric_value("lots", path="p", row=3, field="inst_executed")
    assert e.value.row == 3 and e.value.field == "inst_executed"


def test_nvprof_bad_trace(tmp_path):
    text = TRACE.read_text()
    bad = tmp_path / "t.csv"
    bad.write_text(text.replace("12.352000", "-1.0"))
    with pytest.raises(InputError, match="negative") as e:
        nvprof.read(bad)
    assert e.value.row == 7 and e.value.field == "Duration"
    bad.write_text(text.replace("ms,us,", "ms,B,"))
    with pytest.raises(InputError, match="not a time unit"):
        nvprof.read(bad)
    bad.write_text(text.replace("12.352000", ""))
    assert count_causes(nvprof.read(bad).skipped)["Duration has no value"] == 1
    bad.write_text(text.replace("Tesla V100-PCIE-32GB", "Tesla Q999"))
    with pytest.raises(InputError, match="Q999"):
        nvprof.read(bad)
    # a launch's line printed twice was a third vec_add launch
    lines = text.splitlines(keepends=True)
    bad.write_text("".join(lines[:7] + lines[6:]))
    with pytest.raises(InputError, match="the row repeats row 7 field for field") as e:
        nvprof.read(bad)
    assert e.value.row == 8



def test_nvprof_cut_line_and_trace_of_copies_only(tmp_path):
    # a file cut mid-line (a run killed while writing) names the line instead of a KeyError
    lines = METRICS.read_text().splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith('"Tesla'))
    bad = tmp_path / "m.csv"
    bad.write_text("\n".join(lines[:i] + [lines[i][:40]]) + "\n")
    with pytest.raises(InputError, match="a quoted field is not closed: the line is cut") as e:
        nvprof.read(bad, trace=TRACE)
    assert e.value.row == i + 1
    # cut between two fields, the count of fields says it
    bad.write_text("\n".join(lines[:i] + [lines[i][:lines[i].index("\",\"") + 1]]) + "\n")
    with pytest.raises(InputError, match="fields, the header has 8") as e:
        nvprof.read(bad, trace=TRACE)
    assert e.value.row == i + 1
    # a trace with memory copies only has nothing to predict
    lines = TRACE.read_text().splitlines()
    copies = [ln for ln in lines if ln.startswith(('"', "ms,", "==")) or '"Pageable"' in ln]
    bad.write_text("\n".join(copies) + "\n")
    with pytest.raises(InputError, match="no kernel launch in the trace"):
        nvprof.read(bad)


# ---- Amaris et al. ----------------------------------------------------------------------------
def test_amaris_excerpt_hand_values():
    p = DATA / "amaris-9gpus-bpnn_adjust_weights.csv"
    assert sniff(p) == "amaris"
    t = load(p)
    assert len(t) == 18 and len(t.gpus) == 9 and not t.skipped
    v = t.df[(t.df["gpu"] == "gtx-680") & (t.df["input.size.1"] == 8192)].iloc[0]
    assert v["config"] == "size=8192 grid=1x512 block=16x16"
    assert v["problem"] == "size=8192"  # one launch per size: no variants to rank
    assert v["time_s"] == pytest.approx(4.6208e-05)
    # flop_count_dp_fma is derived: (flop_count_dp - add - mul) / 2
    assert v["fp64_fma_thread_inst"] == (1179760 - 131088 - 524320) / 2
    assert v["fp64_flops"] == 1179760                      # = nvprof flop_count_dp
    assert v["dram_read_bytes"] == 35450 * 32
    assert v["l2_bytes"] == (96453 + 40974) * 32
    # write bytes from the write throughput (GB/s) x duration, flagged
    assert v["dram_write_bytes"] == pytest.approx(23.786458e9 * 4.6208e-05)
    assert bool(v["dram_write_from_throughput"])
    assert v["grid_blocks"] == 512 and v["block_threads"] == 256 and v["regs_per_thread"] == 21
    assert v["runs"] == 1 and v["launches"] == 1
    # SM clock: none for a 46 us run (under 100 us the cycle count spans more than the kernel)
    assert np.isnan(v["sm_clock_hz"])
    # the same work on every GPU: FP64 FLOPs agree across the 9 GPUs for each size
    assert (t.df.groupby("config")["fp64_flops"].nunique() == 1).all()


def test_amaris_runs_become_one_row_with_median():
    p = DATA / "amaris-2gpus-calculate_temp.csv"
    t = load(p)
    assert len(t) == 2
    raw = pd.read_csv(p)
    for short, gid in (("GTX-680", "gtx-680"), ("Tesla-P100", "tesla-p100-pcie-16gb")):
        r = t.df[t.df["gpu"] == gid].iloc[0]
        assert r["runs"] == 10
        assert r["time_s"] == pytest.approx(raw.loc[raw.gpu_name == short, "duration"].median())
    # single-precision: special functions count 1 FLOP each in gpuproj's convention,
    # nvprof's flop_count_sp leaves them out
    r = t.df[t.df["gpu"] == "gtx-680"].iloc[0]
    assert r["fp32_flops"] == 296336 + 36864
    # the P100 table prints static shared memory in KB (3), the GTX 680's in bytes (3072)
    assert set(raw["static.smem"]) == {3072, 3}
    assert (t.df["smem_per_block_bytes"] == 3072).all()
    # DRAM write bytes: each run's device_memory_write_throughput x 1e9 x duration, then the
    # median over the 10 runs, then /1000 where that median exceeds 2x the median L2 writes
    # (l2_write_transactions x 32 B; the runs printed MB/s).
    # P100: five runs at 0 GB/s, the others 67.293447, 67.386316, 67.479443, 100.912354,
    # 100.995846 "GB/s" x 3 us = 201880.341, 202158.948, 202438.329, 302737.062,
    # 302987.538 B; median (0 + 201880.341) / 2 = 100940.1705 B, above 2 x 845 x 32 = 54080 B,
    # so MB/s: 100.9401705 B
    p100 = t.df[t.df["gpu"] == "tesla-p100-pcie-16gb"].iloc[0]
    assert p100["dram_write_bytes"] == pytest.approx(100.94017, rel=1e-6)
    # GTX 680: the 5th and 6th of the sorted runs, 2.214804 GB/s x 8.064 us = 17860.179456 B
    # and 2.358841 GB/s x 8.064 us = 19021.693824 B, median 18440.93664 B; the median L2
    # writes (796 + 877) / 2 x 32 = 26768 B, x 2 = 53536 B above it: GB/s, unchanged
    assert r["dram_write_bytes"] == pytest.approx(18440.93664, rel=1e-6)
    # a table of the P100 alone, with no GPU printing bytes to compare with (it read 3 bytes)
    example = load(Path(__file__).resolve().parents[1] / "examples" / "rodinia-p100-nvprof.csv")
    smem = example.df.groupby("kernel")["smem_per_block_bytes"].unique()
    assert smem["calculate_temp"].tolist() == [3072]
    assert smem["bpnn_layerforward_CUDA"].tolist() == [1088]


def test_amaris_bad_input(tmp_path):
    src = (DATA / "amaris-9gpus-bpnn_adjust_weights.csv").read_text().splitlines()
    p = tmp_path / "a.csv"
    p.write_text("\n".join([src[0], src[1].replace('"GTX-680"', '"GTX-9999"')] + src[2:]))
    with pytest.raises(InputError, match="GTX-9999") as e:
        amaris.read(p)
    assert e.value.row == 2 and e.value.field == "gpu_name"
    p.write_text("\n".join([src[0], src[1].replace(",4.6208e-05,", ",slow,")] + src[2:]))
    with pytest.raises(InputError) as e:
        amaris.read(p)
    assert e.value.row == 2 and e.value.field == "duration"
    p.write_text("\n".join([src[0], src[1].replace(",4.6208e-05,", ",0,")] + src[2:]))
    t = amaris.read(p)
    assert len(t) == 17 and t.skipped[0].row == 2 and "not positive" in t.skipped[0].reason
    p.write_text("\n".join([src[0].replace('"duration",', '"dur",')] + src[1:]))
    with pytest.raises(InputError, match="duration"):
        amaris.read(p)
    # a row without a GPU or kernel name is skipped and counted, not lost in the grouping
    cells, head = src[1].split(","), src[0].split(",")
    cells[head.index('"name"')] = cells[head.index('"gpu_name"')] = '""'
    p.write_text("\n".join([src[0], ",".join(cells)] + src[2:]))
    t = amaris.read(p)
    assert len(t) == 17
    assert [(s.row, s.reason) for s in t.skipped] == [(2, "name and gpu_name empty")]
    p.write_text(src[0] + "\n")
    with pytest.raises(InputError, match="no rows"):
        amaris.read(p)
    p.write_text("")
    with pytest.raises(InputError, match="empty"):
        amaris.read(p)


def test_row_names_without_a_header_name(tmp_path):
    """R's write.table gives the row names no header name: each row has one field more than
    the header. The Amaris tables repeat row names (one file per GPU, concatenated), which
    pandas then made a duplicate index and the clock's where() a ValueError."""
    original = DATA / "amaris-9gpus-bpnn_adjust_weights.csv"
    src = original.read_text()
    p = tmp_path / "a.csv"
    p.write_text(src.replace('"",', "", 1))
    pd.testing.assert_frame_equal(amaris.read(p).df, load(original).df)
    p.write_text(src.replace('"","input.size.1",', "", 1))
    with pytest.raises(InputError, match="80 fields where the header has 78") as e:
        amaris.read(p)
    assert e.value.row == 2


def test_truncated_gz(tmp_path):
    data = gzip.compress((DATA / "amaris-9gpus-bpnn_adjust_weights.csv").read_bytes())
    p = tmp_path / "cut.csv.gz"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="cut.csv.gz"):
        load(p, format="amaris")


@pytest.mark.skipif(not AMARIS.is_dir(), reason="shared/data/external not present")
@pytest.mark.parametrize("name,rows", [("bpnn_adjust_weights_cuda_9gpus.csv.gz", 513),
                                       ("bpnn_layerforward_CUDA_9gpus.csv.gz", 513),
                                       ("calculate_temp_9gpus.csv.gz", 180)])
def test_amaris_full_tables(name, rows):
    t = load(AMARIS / name)
    assert len(t) == rows and not t.skipped and len(t.gpus) == 9
    assert t.df["gpu"].notna().all() and (t.df["time_s"] > 0).all()
    assert t.df.groupby("config")["gpu"].nunique().eq(9).all()
    # FP64 work is compiled the same way for all 9 GPUs in every kernel
    assert t.df.groupby("config")["fp64_flops"].nunique().eq(1).all()
    total = t.df["runs"].sum()
    assert total == {513: 513, 180: 57600}[rows]
    assert np.isfinite(t.df["dram_read_bytes"]).all()
    # DRAM writes never exceed what the L2 received; read as GB/s, the MB/s cells of small
    # calculate_temp runs wrote 3-18 times the L2's writes
    assert (t.df["dram_write_bytes"] <= t.df["l2_bytes"]).all()


@pytest.mark.skipif(not AMARIS.is_dir(), reason="shared/data/external not present")
def test_amaris_write_throughputs_printed_in_mb_per_s():
    """The same work (calculate_temp at 64 x 256 and 64 x 512: one 6 x 6 grid, about 27 kB of
    L2 writes) writes a few hundred bytes to DRAM on the GTX 970, 980 and TITAN X, as at the
    larger sizes there (64 x 768, 64 x 1024); their median runs printed MB/s."""
    df = load(AMARIS / "calculate_temp_9gpus.csv.gz").df
    small = df[df["config"].str.startswith("size=64x")].set_index(["gpu", "input.size.2"])
    w = small["dram_write_bytes"]
    assert w["gtx-970", 256] == pytest.approx(483.1, rel=1e-3)   # 483,098 before
    assert w["gtx-titan-x", 256] == pytest.approx(338.7, rel=1e-3)
    for gpu in ("gtx-970", "gtx-980", "gtx-titan-x"):
        assert (w[gpu] < 1000).all(), gpu
    assert (w["gtx-680"] > 10_000).all()  # a Kepler writes back more, in GB/s cells


@pytest.mark.skipif(not AMARIS.is_dir(), reason="shared/data/external not present")
def test_amaris_clock_of_gpus_with_one_clock():
    """The SM clock read from the counters (elapsed_cycles_sm / duration / SMs, runs of 100 us
    and more) matches the two GPUs whose clock is known: the Tesla K20 runs at a fixed 706 MHz,
    the P100 reaches its 1303 MHz boost."""
    df = load(AMARIS / "calculate_temp_9gpus.csv.gz").df
    clock = df.groupby("gpu")["sm_clock_hz"].median()
    assert clock["tesla-k20"] == pytest.approx(706e6, rel=0.02)
    assert clock["tesla-p100-pcie-16gb"] == pytest.approx(1303e6, rel=0.02)


def test_a_trace_without_correlation_id_column_keeps_kernels_apart_from_their_launches(tmp_path):
    """CUDA 8's nvprof prints no Correlation_ID column: it ends each kernel's Name with the
    launch's correlation ID, "kernel(...) [1073]" (github leimingyu/magus, GTX 1080 Ti traces,
    which state no licence; this is a hand-made reproduction of that layout, values invented).
    Kept, every launch was a kernel of its own and no metric found its kernel: the counts were
    lost, with only a skipped row for a word."""
    dev = '"GeForce GTX 1080 Ti (0)","1","7"'
    launch = '8,8,1,16,16,1,20,2.000000,0,,,' + dev + ',"void mm<int=16>(float*, int)'
    trace = tmp_path / "trace.csv"
    trace.write_text(
        "==100== Profiling result:\n"
        '"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z",'
        '"Registers Per Thread","Static SMem","Dynamic SMem","Size","Throughput","Device",'
        '"Context","Stream","Name"\n'
        "ms,ms,,,,,,,,KB,B,KB,MB/s,,,,\n"
        f'1.000000,0.500000,,,,,,,,,,400.000000,800.000000,{dev},"[CUDA memcpy HtoD]"\n'
        f'2.000000,0.010000,{launch} [101]"\n'
        f'2.100000,0.030000,{launch} [108]"\n'
        f'2.200000,0.004000,4,1,1,64,1,1,8,0.000000,0,,,{dev},"scale(float*) [115]"\n')
    metrics = tmp_path / "metrics.csv"
    k = '"GeForce GTX 1080 Ti (0)","void mm<int=16>(float*, int)",2'
    metrics.write_text(
        "==101== Metric result:\n"
        '"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"\n'
        f'{k},"flop_count_sp_fma","FMA",1000,1000,1000\n'
        f'{k},"l2_read_transactions","L2 Reads",10,30,20\n')
    t = load(trace)
    assert sorted(t.df["kernel"]) == ["scale(float*)", "void mm<int=16>(float*, int)"]
    mm = t.df.set_index("kernel").loc["void mm<int=16>(float*, int)"]
    assert mm["launches"] == 2 and mm["time_s"] == pytest.approx(20e-6)   # (10 + 30) / 2 us
    assert mm["smem_per_block_bytes"] == 2048 and mm["config"] == "grid=8x8x1 block=16x16x1"
    joined = load(metrics, trace=trace)
    assert count_causes(joined.skipped) == {"not a kernel launch (memory copy or set)": 1}
    mm = joined.df.set_index("kernel").loc["void mm<int=16>(float*, int)"]
    assert mm["fp32_fma_thread_inst"] == 1000 and mm["l2_bytes"] == 20 * 32
