"""An Nsight Compute profile with the times of a trace of the same application (``trace=``,
``--trace``): ncu's counts, the trace's in-application times and launch counts.

Real files: vernier's saxpy profiled by ncu on a Jetson AGX Thor (``--print-summary
per-kernel``, two launch configurations) and traced by nsys on the same Thor (one of them), as
vernier's tests keep them (apexedgesystems/vernier, Apache-2.0; tests/data/nsys/SOURCE.md);
the H100 raw page of our suite's kernels. The two vernier files come from two demos of the same
kernel, not one run: what they test is that the two tools' names and configurations meet."""

import json
from pathlib import Path

import pytest

from gpuproj.cli.main import main
from gpuproj.errors import InputError
from gpuproj.profiles import load
from gpuproj.profiles.table import count_causes
from gpuproj.profiles.trace_times import name_keys

DATA = Path(__file__).parent / "data"
NCU_THOR = DATA / "ncu-thor-vernier-summary-per-kernel.csv"
NSYS_THOR = DATA / "nsys" / "vernier-thor_cuda_gpu_trace.csv"
NSYS_THOR_SUM = DATA / "nsys" / "vernier-thor_cuda_gpu_kern_sum.out"
NCU_H100 = DATA / "ncu-h100-sxm5-80gb-raw-base.csv"
NCU_H100_REP = DATA / "ncu-h100-sxm5-80gb.ncu-rep"
PYTORCH_V100 = DATA / "pytorch" / "rmsnorm-v100-pcie-16gb.pt.trace.json"


def test_ncu_counts_take_the_nsys_times_of_the_same_kernel_and_configuration():
    ncu = load(NCU_THOR, gpu="jetson-agx-thor")
    nsys = load(NSYS_THOR).df.iloc[0]
    t = load(NCU_THOR, gpu="jetson-agx-thor", trace=NSYS_THOR)
    assert len(t) == 1
    row = t.df.iloc[0]
    # ncu calls the kernel 'unnamed>::saxpyKernel(...)', nsys 'vernier::bench::demo::<unnamed>::
    # saxpyKernel(...)': the profile's name stays
    assert row["kernel"].startswith("unnamed>::saxpyKernel(") and nsys["kernel"] != row["kernel"]
    assert row["config"] == nsys["config"] == "grid=4096x1x1 block=256x1x1"
    # the trace's 4 launches and their mean (27.1 us), min and max, not ncu's 14 at 89.3 us
    assert row["launches"] == 4
    assert (row["time_s"], row["time_s_min"], row["time_s_max"]) == (
        nsys["time_s"], nsys["time_s_min"], nsys["time_s_max"])
    assert row["time_s"] == pytest.approx(27.1e-6, rel=0.01)
    before = ncu.df.set_index("config").loc[row["config"]]
    assert before["time_s"] == pytest.approx(89.32e-6) and before["launches"] == 14
    # ncu's own numbers stay, except the clock of its run, which is not the trace's
    assert row["achieved_occupancy"] == before["achieved_occupancy"]
    assert row["regs_per_thread"] == before["regs_per_thread"]
    assert before["sm_clock_hz"] > 0 and row["sm_clock_hz"] != row["sm_clock_hz"]
    # the configuration nsys never launched is skipped with its ncu row; the trace's copies too
    causes = count_causes(t.skipped)
    assert causes["not a kernel launch (memory copy or set)"] == 12
    lost = [s for s in t.skipped if s.path == str(NCU_THOR)]
    assert len(lost) == 1 and "grid=1048576x1x1 block=1x1x1" in lost[0].reason
    assert "the trace has no launch of this kernel with" in lost[0].cause


def test_a_trace_without_configurations_does_not_guess_between_two():
    # cuda_gpu_kern_sum of nsys 2025 has no grid or block; ncu has saxpy in two configurations
    with pytest.raises(InputError, match="names no launch configuration, and the profile has "
                                         "this kernel in 2"):
        load(NCU_THOR, gpu="jetson-agx-thor", trace=NSYS_THOR_SUM)


def _times(tmp_path, text):
    p = tmp_path / "times.csv"
    p.write_text(text)
    return p


def test_a_plain_table_of_times_by_bare_kernel_name(tmp_path):
    trace = _times(tmp_path, "kernel,time_s,gpu,launches\n"
                             "void vector_add,2.0e-6,h100-sxm5-80gb,100\n"
                             "saxpy,3.0e-6,h100-sxm5-80gb,50\n"
                             "memset_kernel,1.0e-6,h100-sxm5-80gb,3\n")
    plain = load(NCU_H100).df.set_index("kernel")
    t = load(NCU_H100, trace=trace)
    df = t.df.set_index("kernel")
    assert sorted(df.index) == ["saxpy(float, const float *, float *, int)",
                                "vector_add(const float *, const float *, float *, int)"]
    assert df["time_s"].to_dict() == {
        "saxpy(float, const float *, float *, int)": 3.0e-6,
        "vector_add(const float *, const float *, float *, int)": 2.0e-6}
    assert df["launches"].tolist() == [100, 50]
    for col in ("dram_bytes", "thread_inst", "l2_bytes"):
        assert (df[col] == plain.loc[df.index, col]).all(), col
    by_path = {}
    for s in t.skipped:
        by_path.setdefault(s.path, []).append(s)
    (reduce,) = by_path[str(NCU_H100)]
    assert reduce.reason.startswith("reduce_sum(") and "no kernel of this name" in reduce.reason
    assert [(s.row, s.reason) for s in by_path[str(trace)]] == [
        (4, "kernel of the trace not in the profile")]


def test_a_trace_without_launch_counts_keeps_the_profiles(tmp_path):
    """A ``kernel,time_s`` table has no launch counts: the profile's stay (the hand-built page
    launches vec_add twice). The 1 the table was given for want of a count replaced them, and
    the application's total lost a launch of vec_add."""
    profile = DATA / "ncu-handbuilt-h100-raw-base.csv"
    trace = _times(tmp_path, "kernel,time_s,launches\nvec_add,2e-5,\nsaxpy,3e-5,5\n"
                             "reduce_sum,1e-5,\n")
    t = load(profile, trace=trace, gpu="h100-sxm5-80gb").df.set_index("kernel")
    assert load(profile).df["launches"].tolist() == [2, 1, 1]
    assert t["launches"].tolist() == [2, 5, 1]  # vec_add's and reduce_sum's from the profile
    assert t["time_s"].tolist() == [2e-5, 3e-5, 1e-5]
    assert (t["launches"] * t["time_s"]).sum() == pytest.approx(2 * 2e-5 + 5 * 3e-5 + 1e-5)
    no_column = _times(tmp_path, "kernel,time_s\nvec_add,2e-5\n")
    t = load(profile, trace=no_column, gpu="h100-sxm5-80gb").df
    assert t["launches"].tolist() == [2]


def test_two_kernels_of_the_trace_under_one_bare_name_are_not_guessed_between(tmp_path):
    trace = _times(tmp_path, "kernel,time_s,gpu\n"
                             "a::saxpy(int),2.0e-6,h100-sxm5-80gb\n"
                             "b::saxpy(float),3.0e-6,h100-sxm5-80gb\n"
                             "vector_add,1.0e-6,h100-sxm5-80gb\n")
    t = load(NCU_H100, trace=trace)
    assert t.df["kernel"].str.startswith("vector_add").tolist() == [True]
    saxpy = next(s for s in t.skipped if s.reason.startswith("saxpy("))
    assert "2 kernels of the trace have this name (a::saxpy(int), b::saxpy(float))" in saxpy.reason


def test_a_trace_of_another_gpu_is_an_error_naming_it(tmp_path):
    trace = _times(tmp_path, "kernel,time_s,gpu\nsaxpy,3.0e-6,a100-sxm4-80gb\n")
    with pytest.raises(InputError, match=r"times.csv: the trace ran on a100-sxm4-80gb, the "
                                         r"profile on h100-sxm5-80gb"):
        load(NCU_H100, trace=trace)


def test_rows_per_launch_take_no_trace(tmp_path):
    # the hand-built page launches vec_add twice: one row each with per_launch
    trace = _times(tmp_path, "kernel,time_s,gpu\nvec_add,3.0e-6,h100-sxm5-80gb\n")
    with pytest.raises(InputError, match=r"one row per launch \(per_launch\) takes none"):
        load(DATA / "ncu-handbuilt-h100-raw-base.csv", trace=trace, per_launch=True)


def test_rocprofv3_counters_take_the_kernel_trace(tmp_path):
    """The counter collection and the kernel trace of ROCprofiler-SDK's documentation: the
    counters of one, the times and dispatch counts of the other."""
    folder = DATA / "rocprof" / "rocprofv3-sdk-docs"
    counters = load(folder / "counter_collection.csv", gpu="mi300x")
    trace = load(folder / "kernel_trace.csv", gpu="mi300x")
    t = load(folder / "counter_collection.csv", gpu="mi300x", trace=folder / "kernel_trace.csv")
    assert len(t) >= 1
    for _, row in t.df.iterrows():
        own = trace.df[(trace.df["kernel"] == row["kernel"])
                       & (trace.df["config"] == row["config"])]
        assert len(own) == 1
        assert row["time_s"] == own["time_s"].iloc[0]
        assert row["launches"] == own["launches"].iloc[0]
        before = counters.df[(counters.df["kernel"] == row["kernel"])
                             & (counters.df["config"] == row["config"])].iloc[0]
        for col in ("dram_bytes", "flops", "grid_blocks"):
            assert row[col] == before[col] or (row[col] != row[col] and before[col] != before[col])


def test_an_ncu_report_takes_a_trace_too(tmp_path):
    pytest.importorskip("ncu_report")
    trace = _times(tmp_path, "kernel,time_s,gpu\nvector_add,2.0e-6,h100-sxm5-80gb\n")
    t = load(NCU_H100_REP, trace=trace)
    assert t.df["time_s"].tolist() == [2.0e-6] and t.df["dram_bytes"].iloc[0] > 0


def test_name_keys():
    assert name_keys("(anonymous namespace)::scale(float *, int)")[1:] == (
        "scale(float*,int)", "scale", "scale")
    # template arguments belong to the unqualified key, not to the bare name
    assert name_keys("void cutlass::Kernel<cutlass::Gemm<int, 3>>(T1::Params)")[1:] == (
        "Kernel<cutlass::Gemm<int,3>>(T1::Params)", "Kernel<cutlass::Gemm<int,3>>", "Kernel")
    assert name_keys("reduce") == ("reduce", "reduce", "reduce", "reduce")


# PyTorch's multiplication kernel as Nsight Systems printed it (`nsys stats` of a PyTorch
# training run, quoted in a public course write-up) and as the PyTorch profiler's trace of
# tests/data/pytorch names the same kernel: NVIDIA's demangler writes casts, placeholders for
# the template's parameters and its own lambdas, the C++ ABI's (Kineto's) does not
MUL_NVIDIA = ("void at::native::elementwise_kernel<(int)128, (int)2, void at::native::"
              "gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::"
              "binary_internal::MulFunctor<float>>>(at::TensorIteratorBase &, const T1 &)::"
              "[lambda(int) (instance 1)]>(int, T3)")


def test_nvidia_and_cxx_abi_names_of_one_kernel_meet(tmp_path):
    pytorch = load(PYTORCH_V100)
    (abi,) = [k for k in pytorch.df["kernel"] if "gpu_kernel_impl_nocast" in k]
    assert abi != MUL_NVIDIA and name_keys(abi)[2] == name_keys(MUL_NVIDIA)[2]
    counts = _times(tmp_path, "kernel,config,gpu,time_s,dram_bytes\n"
                    f'"{MUL_NVIDIA}",grid=65536x1x1 block=128x1x1,v100-pcie-16gb,2e-4,201326592\n')
    t = load(counts, trace=PYTORCH_V100)
    row = t.df.iloc[0]
    assert (row["time_s"], row["launches"]) == (pytest.approx(164e-6), 2)
    # its sibling with 4 elements per thread is another kernel: no bare-name guess between them
    assert name_keys(MUL_NVIDIA.replace("(int)2", "(int)4"))[2] != name_keys(abi)[2]


def test_cli_predicts_an_ncu_profile_with_nsys_times(capsys):
    rc = main(["predict", str(NCU_THOR), "-s", "jetson-agx-thor", "--trace", str(NSYS_THOR),
               "-t", "h200", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    (row,) = out["predictions"]
    assert row["source_time_s"] == pytest.approx(27.1e-6, rel=0.01)


def test_cli_takes_the_trace_with_trace_only(capsys):
    with pytest.raises(SystemExit) as e:
        main(["predict", str(NCU_THOR), "-s", "jetson-agx-thor", "--reader-option",
              f"trace={NSYS_THOR}", "-t", "h200"])
    assert e.value.code == 2
    assert "a trace is given with --trace" in capsys.readouterr().err


def test_roofline_reports_the_rows_left_out(tmp_path, capsys):
    from conftest import run_cli

    trace = _times(tmp_path, "kernel,time_s,gpu\nvector_add,2.0e-6,h100-sxm5-80gb\n"
                             "memset_kernel,1.0e-6,h100-sxm5-80gb\n")
    code, _, err = run_cli(capsys, "roofline", str(NCU_H100), "--trace", str(trace), "-o",
                           str(tmp_path / "r.png"), "--json")
    assert code == 0
    assert "skipped 1 row(s) (times.csv row 3): kernel of the trace not in the profile" in err
    assert "skipped 2 row(s)" in err and "no kernel of this name in the trace" in err


def test_a_profile_of_several_gpus_takes_a_trace_of_one(tmp_path):
    profile = _times(tmp_path, "kernel,time_s,gpu,dram_bytes\n"
                               "saxpy,9.0e-6,h100-sxm5-80gb,1e6\nsaxpy,8.0e-6,h200-sxm-141gb,1e6\n")
    trace = tmp_path / "trace.csv"
    trace.write_text("kernel,time_s,gpu,launches\nsaxpy,3.0e-6,h200-sxm-141gb,7\n")
    t = load(profile, trace=trace)
    assert t.df[["gpu", "time_s", "launches", "dram_bytes"]].values.tolist() == [
        ["h200-sxm-141gb", 3.0e-6, 7.0, 1e6]]
    (lost,) = t.skipped
    assert (lost.row, lost.cause) == (2, "the trace has no launch on h100-sxm5-80gb")


def test_a_trace_without_min_and_max_times_leaves_them_unknown():
    # the Rodinia table of the Amaris data has one mean time per configuration and no min or
    # max (reading it as a trace raised KeyError 'time_s_min'); its P100 calculate_temp row
    # gives the example's calculate_temp its time, the two bpnn kernels it lacks are skipped
    t = load(Path(__file__).parents[1] / "examples" / "rodinia-p100-nvprof.csv",
             trace=DATA / "amaris-2gpus-calculate_temp.csv")
    amaris = load(DATA / "amaris-2gpus-calculate_temp.csv").on("tesla-p100-pcie-16gb").df
    row = t.df.iloc[0]
    assert list(t.df["kernel"]) == ["calculate_temp"] and row["time_s"] == amaris["time_s"].iat[0]
    assert row[["time_s_min", "time_s_max"]].isna().all()
    assert count_causes(t.skipped)["no kernel of this name in the trace "
                               f"{DATA / 'amaris-2gpus-calculate_temp.csv'}"] == 2


def test_a_trace_with_none_of_the_profiles_kernels_is_the_traces_error(tmp_path):
    # it blamed the profile, at a row of the trace, with the trace's memory copies as cause
    trace = _times(tmp_path, "kernel,time_s,gpu\nother_kernel,3.0e-6,h100-sxm5-80gb\n")
    with pytest.raises(InputError) as e:
        load(NCU_H100, trace=trace)
    assert str(e.value).startswith(f"{trace}: none of the 3 kernel rows of the profile "
                                   f"{NCU_H100} is in this trace (the first, vector_add(")
    assert e.value.row is None
