"""The PyTorch profiler trace reader on a real trace: ``torch.profiler``'s Chrome trace JSON of
two passes of an RMSNorm on a Tesla V100-PCIE-16GB (agostini01/rms-norm-exercise, MIT;
tests/data/pytorch/SOURCE.md). Expected values are the file's numbers by hand; the damaged
copies are the real file with one thing changed."""

import gzip
import json
from pathlib import Path

import pytest
from conftest import run_cli

from gpuproj.cli.main import main
from gpuproj.errors import InputError
from gpuproj.profiles import load, sniff

TRACE = Path(__file__).parent / "data" / "pytorch" / "rmsnorm-v100-pcie-16gb.pt.trace.json"
TEXT = TRACE.read_text()
SQUARE = "square_kernel_0d1d2de3de4de"
REDUCE = ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps"
          "<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, "
          "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)")
# the launches of each pass: (kernel name starts with, config, durations in us of both passes)
LAUNCHES = [
    ("void at::native::elementwise_kernel<128, 4,", "grid=32768x1x1 block=128x1x1",
     (174, 164, 165)),  # the input's multiplication, before the first pass too
    ("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel",
     "grid=640x1x1 block=256x1x1", (97, 97)),
    ("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
     "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}",
     "grid=32768x1x1 block=128x1x1", (136, 136)),
    (SQUARE, "grid=4096x1x1 block=512x1x1", (163, 164)),
    (REDUCE, "grid=256x1x1 block=32x16x1", (86, 85)),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add",
     "grid=8x1x1 block=128x1x1", (1, 1)),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda",
     "grid=8x1x1 block=128x1x1", (1, 1)),
    ("void at::native::elementwise_kernel<128, 2,", "grid=65536x1x1 block=128x1x1", (164, 164)),
    ("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
     "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#10}",
     "grid=32768x1x1 block=128x1x1", (136, 137)),
]


def _line(text, fragment, nth=0):
    """The file line of the ``nth`` occurrence of ``fragment``."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(fragment, at + 1)
    return text.count("\n", 0, at) + 1


def _damaged(tmp_path, old, new, count=1):
    assert old in TEXT
    path = tmp_path / "trace.json"
    path.write_text(TEXT.replace(old, new, count))
    return path


def test_the_trace_is_recognised_also_gzipped(tmp_path):
    packed = tmp_path / "rank0.pt.trace.json.gz"
    packed.write_bytes(gzip.compress(TEXT.encode()))
    assert sniff(TRACE) == sniff(packed) == "pytorch"
    assert load(packed).df.equals(load(TRACE).df)


def test_one_row_per_kernel_and_launch_configuration():
    t = load(TRACE)
    df = t.df
    assert len(df) == 9 and df["launches"].sum() == 19
    assert set(df["gpu"]) == {"v100-pcie-16gb"}  # deviceProperties: "Tesla V100-PCIE-16GB"
    for start, config, durations in LAUNCHES:
        (row,) = [r for _, r in df.iterrows() if r["kernel"].startswith(start)]
        assert row["config"] == config, start
        assert row["launches"] == len(durations)
        assert row["time_s"] == pytest.approx(sum(durations) / len(durations) * 1e-6, rel=1e-12)
        assert (row["time_s_min"], row["time_s_max"]) == pytest.approx(
            (min(durations) * 1e-6, max(durations) * 1e-6), rel=1e-12)
    reduce = df.set_index("kernel").loc[REDUCE]
    assert (reduce["grid_blocks"], reduce["block_threads"]) == (256, 512)
    assert (reduce["regs_per_thread"], reduce["smem_per_block_bytes"]) == (32, 16)
    square = df.set_index("kernel").loc[SQUARE]
    assert (square["regs_per_thread"], square["smem_per_block_bytes"]) == (20, 0)
    # a row is the line where its first launch's event starts
    assert square["_row"] == _line(TEXT, f'"name": "{SQUARE}"') - 1
    # the two host-to-device copies are skipped and counted, with their events' lines
    assert [(s.row, s.reason) for s in t.skipped] == [
        (_line(TEXT, '"cat": "gpu_memcpy"', n) - 1, "not a kernel launch (memory copy or set)")
        for n in (0, 1)]


def test_a_trace_without_device_properties_needs_the_gpu_named(tmp_path):
    start, end = TEXT.index('  "deviceProperties"'), TEXT.index('  "traceEvents"')
    path = tmp_path / "trace.json"
    path.write_text(TEXT[:start] + TEXT[end:])
    with pytest.raises(InputError, match="names no GPU for device 0.*--source") as e:
        load(path)
    assert (e.value.row, e.value.field) == (_line(path.read_text(), '"cat": "kernel"') - 1,
                                            "device")
    assert set(load(path, gpu="v100-pcie-16gb").df["gpu"]) == {"v100-pcie-16gb"}


def test_a_gpu_given_must_be_the_one_the_trace_names(capsys):
    """--source used to replace the trace's own GPU without a word: a V100 trace projected
    from an A100's peaks."""
    assert set(load(TRACE, gpu="Tesla V100-PCIE-16GB").df["gpu"]) == {"v100-pcie-16gb"}
    with pytest.raises(InputError, match="measured on 'Tesla V100-PCIE-16GB' "
                                         r"\(v100-pcie-16gb\), not on v100-pcie-32gb") as e:
        load(TRACE, gpu="v100-pcie-32gb")
    assert (e.value.row, e.value.field) == (_line(TEXT, '"cat": "kernel"') - 1, "device")
    code, _, err = run_cli(capsys, "predict", str(TRACE), "-s", "a100-sxm4-80gb", "-t", "h200")
    assert code == 2 and "Traceback" not in err and ("field 'device': measured on 'Tesla "
                                                     "V100-PCIE-16GB' (v100-pcie-16gb), not on "
                                                     "a100-sxm4-80gb") in err


def test_a_gpu_the_catalog_lacks_is_an_error_naming_it(tmp_path):
    path = _damaged(tmp_path, '"name": "Tesla V100-PCIE-16GB"', '"name": "Tesla Z9"')
    with pytest.raises(InputError, match="'Tesla Z9'") as e:
        load(path)
    assert e.value.field == "device"
    # unless the GPU is given: the trace's name for it is not the catalog's
    assert set(load(path, gpu="v100-pcie-32gb").df["gpu"]) == {"v100-pcie-32gb"}


@pytest.mark.parametrize("old, new, field, message", [
    ('"dur": 174,', '"dur": "fast",', "dur", '"fast" is not a number'),
    ('"dur": 174,', '"dur": -174,', "dur", "-174 is not a finite number >= 0"),
    ('"grid": [32768, 1, 1]', '"grid": [32768, 0, 1]', "grid",
     r"\[32768, 0, 1\] is not three whole numbers >= 1"),
    ('"block": [128, 1, 1]', '"block": [128, 1]', "block", "is not three whole numbers"),
    ('"registers per thread": 32,', '"registers per thread": "32",', "registers per thread",
     "is not a number"),
    ('"args": {\n      "External id": 127,', '"args": [1], "x": {\n      "External id": 127,',
     "args", "args is not a JSON object"),
])
def test_a_bad_value_is_an_error_naming_its_line_and_field(tmp_path, old, new, field, message):
    path = _damaged(tmp_path, old, new)
    with pytest.raises(InputError, match=message) as e:
        load(path)
    assert (e.value.row, e.value.field) == (_line(path.read_text(), f'"{field}"'), field)


@pytest.mark.parametrize("cut", [
    lambda t: t[: len(t) // 2],  # cut short
    lambda t: t.replace('"pid": 0, "tid": 7,\n', '"pid": 0 "tid": 7,\n', 1),  # a comma lost
])
def test_invalid_json_is_an_error_naming_its_line(tmp_path, cut):
    path = tmp_path / "trace.json"
    path.write_text(cut(TEXT))
    with pytest.raises(InputError, match="not valid JSON") as e:
        load(path)
    assert e.value.row is not None and e.value.row > 1


def test_a_kernel_of_no_measurable_time_is_skipped(tmp_path):
    # whole microseconds: a kernel under one can come out as 0
    add = '"ts": 1713738903327368, "dur": 1,'
    path = _damaged(tmp_path, add, add.replace('"dur": 1', '"dur": 0'))
    t = load(path)
    row = t.df[t.df["kernel"].str.contains("CUDAFunctorOnSelf_add")].iloc[0]
    assert row["launches"] == 1
    (zero,) = [s for s in t.skipped if "dur" in s.reason]
    assert zero.reason == "dur = 0 is not positive" and zero.row == _line(TEXT, add) - 2


def test_a_trace_of_the_host_alone_is_an_error_saying_how_to_trace_the_gpu(tmp_path):
    doc = json.loads(TEXT)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") in ("cuda_runtime",
                                                                            "gpu_memcpy")]
    path = tmp_path / "host.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"no kernel launch in the trace \(2 copies or sets, "
                                         r"\d+ other events\).*ProfilerActivity.CUDA"):
        load(path)


def test_counts_take_the_times_of_the_pytorch_trace(tmp_path):
    """A profile that counts (here a plain table of bytes, as ncu would give) with the trace's
    in-application times: names as ncu prints them (no ``void``, another spacing)."""
    counts = tmp_path / "counts.csv"
    reduce = REDUCE.removeprefix("void ").replace(", ", ",")
    counts.write_text(
        "kernel,config,gpu,time_s,dram_bytes\n"
        f"{SQUARE},grid=4096x1x1 block=512x1x1,v100-pcie-16gb,2e-4,134217728\n"
        f'"{reduce}",grid=256x1x1 block=32x16x1,v100-pcie-16gb,1e-4,67108864\n')
    t = load(counts, trace=TRACE)
    df = t.df.set_index("kernel")
    assert df.loc[SQUARE, "time_s"] == pytest.approx(163.5e-6)
    assert df.loc[SQUARE, "launches"] == 2
    assert df.loc[reduce, "time_s"] == pytest.approx(85.5e-6)
    assert df.loc[SQUARE, "dram_bytes"] == 134217728  # the counts stay the profile's
    # the trace's other 7 kernels and its 2 copies are skipped and counted
    assert len(t.skipped) == 9


def test_predict_from_a_pytorch_trace(capsys):
    rc = main(["predict", str(TRACE), "--target", "h100-sxm5-80gb", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["predictions"]) == 9
    assert {p["method"] for p in out["predictions"]} == {"bandwidth"}  # times, no counts
    total = sum(p["source_time_s"] * p["launches"] for p in out["predictions"])
    assert total == pytest.approx(2072e-6)  # every launch's dur, summed by hand
    assert [s["row"] for s in out["skipped"]] == [87, 425]
