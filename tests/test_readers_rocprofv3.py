"""The rocprofv3 reader on real rocprofv3 output: a Jacobi solver's kernel trace and agent info
on an MI300A (AMD HPCTrainingExamples, MIT) and the sample kernel trace and counter collection
of ROCprofiler-SDK's documentation (MIT); sources, commits and rows kept in
tests/data/rocprof/SOURCE.md. Expected values are the files' printed numbers by hand."""

import json
import shutil
from pathlib import Path

import pytest

from gpuproj.cli.main import main
from gpuproj.errors import InputError
from gpuproj.profiles import load, sniff

DATA = Path(__file__).parent / "data" / "rocprof"
JACOBI = DATA / "rocprofv3-jacobi-mi300a" / "omp_kernel_trace.csv"
SDK_TRACE = DATA / "rocprofv3-sdk-docs" / "kernel_trace.csv"
SDK_COUNTERS = DATA / "rocprofv3-sdk-docs" / "counter_collection.csv"


def test_every_layout_is_recognised():
    assert {sniff(p) for p in (JACOBI, SDK_TRACE, SDK_COUNTERS)} == {"rocprofv3"}


def test_a_kernel_trace_finds_its_gpu_in_the_runs_agent_info():
    t = load(JACOBI)
    assert not t.skipped
    df = t.df.set_index("kernel")
    # Agent_Id 4 is Node_Id 4 of omp_agent_info.csv: gfx942 with 228 CUs, only the MI300A
    assert set(df["gpu"]) == {"mi300a"}
    norm = df.loc["__omp_offloading_32_2f3c6__QMnorm_modPnorm_l26"]
    ns = [5329321973322123 - 5329321973213203, 5329321987980254 - 5329321987888094,
          5329322000021345 - 5329321999929225]
    assert norm["launches"] == 3
    assert norm["time_s"] == pytest.approx(sum(ns) / 3 * 1e-9, rel=1e-12)
    assert (norm["time_s_min"], norm["time_s_max"]) == pytest.approx((92120e-9, 108920e-9))
    # Grid_Size_X 233472 work-items in workgroups of 256; Group_Segment_Size 4360 bytes of LDS
    assert norm["config"] == "grid=912 block=256"
    assert norm["smem_per_block_bytes"] == 4360
    boundary = df.loc["__omp_offloading_32_2f3c0__QMboundary_modPboundary_conditions_l24"]
    assert boundary["config"] == "grid=16 block=256" and boundary["launches"] == 2
    assert boundary["time_s"] == pytest.approx((10240 + 9840) / 2 * 1e-9)
    assert len(df) == 4


def test_a_gzipped_trace_finds_its_agent_info_and_a_repeated_line_is_refused(tmp_path):
    """``omp_kernel_trace.csv.gz`` looked for ``omp_kernel_trace.csv.gzagent_info.csv``; a line
    printed twice counted as one dispatch more (norm: 4 launches, where it has 3)."""
    import gzip

    run = tmp_path / "run"
    shutil.copytree(JACOBI.parent, run)
    gz = run / "omp_kernel_trace.csv.gz"
    gz.write_bytes(gzip.compress(JACOBI.read_bytes()))
    (run / JACOBI.name).unlink()
    assert load(gz).df.equals(load(JACOBI).df)
    lines = JACOBI.read_text().splitlines(keepends=True)
    twice = run / "twice_kernel_trace.csv"
    twice.write_text("".join(lines[:2] + lines[1:]))
    shutil.copy(run / "omp_agent_info.csv", run / "twice_agent_info.csv")
    with pytest.raises(InputError, match="row 3: the row repeats row 2 field for field"):
        load(twice)


def test_the_documentations_trace_and_counters_with_the_gpu_named():
    trace = load(SDK_TRACE, gpu="mi210").df.set_index("kernel")
    add = trace.loc["void addition_kernel<float>(float*, float const*, float const*, int, int)"]
    # dispatches 1 and 5; a 1024 x 1024 grid of work-items in workgroups of 64
    assert add["launches"] == 2 and add["config"] == "grid=16384 block=64"
    assert add["time_s"] == pytest.approx((16157 + 12830) / 2 * 1e-9)
    counted = load(SDK_COUNTERS, gpu="mi210").df.set_index("kernel")
    assert len(counted) == 4 and set(counted["launches"]) == {1}
    div = counted.loc["divide_kernel(float*, float const*, float const*, int, int)"]
    assert div["time_s"] == pytest.approx((3200098838927550 - 3200098838879399) * 1e-9)
    # VGPR_Count 12 + Accum_VGPR_Count 0: one register file on gfx90a
    assert div["regs_per_thread"] == 12 and div["config"] == "grid=16384 block=64"


def test_counters_of_a_dispatch_become_one_row_through_rocprofs_formulas(tmp_path):
    """The documentation's run with the FP32 instruction counters of its first dispatch added
    after its SQ_WAVES row, as a --pmc run of them writes them (the values are this test's):
    fp32_flops = wave 64 x (ADD + MUL + TRANS + 2 FMA)."""
    lines = SDK_COUNTERS.read_text().splitlines()
    first = lines[1]
    extra = [first.replace('"SQ_WAVES",16384.000000', f'"SQ_INSTS_VALU_{k}_F32",{v}')
             for k, v in (("ADD", 100), ("MUL", 50), ("TRANS", 0), ("FMA", 1000))]
    path = tmp_path / "counter_collection.csv"
    path.write_text("\n".join([lines[0], first, *extra, *lines[2:]]) + "\n")
    r = load(path, gpu="mi210").df.set_index("kernel").iloc[0]
    assert r["fp32_flops"] == 64 * (100 + 50 + 0 + 2 * 1000)
    assert r["fp32_fma_thread_inst"] == 64 * 1000
    twice = path.read_text().replace("SQ_INSTS_VALU_MUL_F32", "SQ_INSTS_VALU_ADD_F32")
    path.write_text(twice)
    with pytest.raises(InputError, match=r"counter_collection.csv, row 4, field 'Counter_Name': "
                                         r"counter SQ_INSTS_VALU_ADD_F32 appears more than once"):
        load(path, gpu="mi210")


def test_without_agent_info_the_gpu_must_be_named_and_must_fit(tmp_path):
    with pytest.raises(InputError, match=r"no agent_info.csv of its run beside it\): pass"):
        load(SDK_TRACE)
    with pytest.raises(InputError, match="gfx942 GPU with 228 CUs, but mi300x is gfx942 with"):
        load(JACOBI, gpu="mi300x")
    # a counter pass's folder: the agent info one folder up, beside pass_1/
    run = tmp_path / "run"
    (run / "pass_1").mkdir(parents=True)
    shutil.copy(JACOBI.parent / "omp_agent_info.csv", run)
    shutil.copy(JACOBI, run / "pass_1" / "omp_kernel_trace.csv")
    assert set(load(run / "pass_1" / "omp_kernel_trace.csv").df["gpu"]) == {"mi300a"}
    # an agent that is a CPU of the agent info
    text = JACOBI.read_text().replace('"KERNEL_DISPATCH",4,1,4,', '"KERNEL_DISPATCH",2,1,4,', 1)
    (run / "pass_1" / "omp_kernel_trace.csv").write_text(text)
    with pytest.raises(InputError, match=r"row 3, field 'Agent_Id': agent '2' is no GPU"):
        load(run / "pass_1" / "omp_kernel_trace.csv")


def test_a_row_without_a_time_or_of_another_kind_is_skipped_and_counted(tmp_path):
    path = tmp_path / "kernel_trace.csv"
    path.write_text(SDK_TRACE.read_text().replace("2414192765369494", "2414192765353337"))
    t = load(path, gpu="mi210")
    assert [(s.row, s.reason) for s in t.skipped] == [
        (2, "End_Timestamp - Start_Timestamp = 0 is not positive")]
    assert t.df["launches"].sum() == 7
    path.write_text(SDK_TRACE.read_text().replace('"KERNEL_DISPATCH",2,1,1,21228,1,',
                                                  '"MEMORY_COPY",2,1,1,21228,1,'))
    t = load(path, gpu="mi210")
    assert [(s.row, s.reason) for s in t.skipped] == [
        (2, "Kind = MEMORY_COPY is no kernel dispatch")]


def test_predict_projects_the_mi300a_run(capsys):
    code = main(["predict", str(JACOBI), "-t", "h100-sxm5-80gb", "-m", "bandwidth", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and {p["source"] for p in out["predictions"]} == {"mi300a"}
    assert len(out["predictions"]) == 4
