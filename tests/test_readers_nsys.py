"""The nsys reader on real ``nsys stats --format csv`` output: vernier's saxpy demo traced on an
RTX 5000 Ada laptop GPU (nsys 2026.3.1) and a Jetson AGX Thor (nsys 2025.3.2), and the Thor's
kernel summary and a report without kernels as nsys printed them (apexedgesystems/vernier,
Apache-2.0; tests/data/nsys/SOURCE.md). Expected values are the files' numbers by hand."""

import json
from pathlib import Path

import pytest

from gpuproj.cli.main import main
from gpuproj.errors import InputError
from gpuproj.profiles import load, sniff

DATA = Path(__file__).parent / "data" / "nsys"
ADA = DATA / "vernier-rtx5000ada-laptop_cuda_gpu_trace.csv"
THOR = DATA / "vernier-thor_cuda_gpu_trace.csv"
THOR_SUM = DATA / "vernier-thor_cuda_gpu_kern_sum.out"
NO_KERNELS = DATA / "vernier-no-kernels_cuda_gpu_kern_sum.out"
SAXPY = "vernier::bench::demo::<unnamed>::saxpyKernel(float, const float *, float *, unsigned long)"


def test_every_file_is_recognised():
    assert {sniff(p) for p in (ADA, THOR, THOR_SUM, NO_KERNELS)} == {"nsys"}


def test_a_trace_gives_one_row_per_kernel_and_launch_configuration():
    t = load(THOR)
    assert len(t.df) == 1
    row = t.df.iloc[0]
    # the Device column 'NVIDIA Thor (0)' names the GPU
    assert (row["kernel"], row["gpu"]) == (SAXPY, "jetson-agx-thor")
    assert row["launches"] == 4
    assert row["time_s"] == pytest.approx((40672 + 22528 + 22624 + 22624) / 4 * 1e-9, rel=1e-12)
    assert (row["time_s_min"], row["time_s_max"]) == pytest.approx((22528e-9, 40672e-9))
    assert row["config"] == "grid=4096x1x1 block=256x1x1"
    assert (row["grid_blocks"], row["block_threads"]) == (4096, 256)
    assert (row["regs_per_thread"], row["smem_per_block_bytes"]) == (16, 0)
    # each launch sits between two copies in and one out: the 12 copies are skipped, counted
    assert len(t.skipped) == 12
    assert [s.row for s in t.skipped][:4] == [2, 3, 5, 6]
    assert {s.reason for s in t.skipped} == {"not a kernel launch (memory copy or set)"}


def test_a_gpu_the_catalog_lacks_is_an_error_naming_it_unless_one_is_given():
    with pytest.raises(InputError) as e:
        load(ADA)
    assert "'NVIDIA RTX 5000 Ada Generation Laptop GPU'" in str(e.value)
    assert (e.value.row, e.value.field) == (4, "Device")  # its first kernel launch
    # --source names a GPU the catalog does not know (the user's own GPU file, or a stand-in)
    row = load(ADA, gpu="rtx-4090").df.iloc[0]
    assert row["gpu"] == "rtx-4090" and row["launches"] == 4
    assert row["time_s"] == pytest.approx((7072 + 6945 + 6816 + 6592) / 4 * 1e-9, rel=1e-12)


def test_a_gpu_given_must_be_the_one_the_device_column_names():
    """--source used to replace a Device column the catalog knows without a word: a Thor
    timeline projected from an RTX 4090's peaks."""
    assert set(load(THOR, gpu="NVIDIA Thor").df["gpu"]) == {"jetson-agx-thor"}
    with pytest.raises(InputError, match=r"measured on 'NVIDIA Thor' \(jetson-agx-thor\), not "
                                         "on rtx-4090") as e:
        load(THOR, gpu="rtx-4090")
    assert (e.value.row, e.value.field) == (4, "Device")


def test_a_kernel_summary_needs_the_gpu_named():
    with pytest.raises(InputError, match="--source"):
        load(THOR_SUM)
    t = load(THOR_SUM, gpu="jetson-agx-thor")
    row = t.df.iloc[0]
    assert (row["kernel"], row["config"], row["launches"]) == (SAXPY, "default", 61)
    assert row["time_s"] == pytest.approx(2925932.1e-9, rel=1e-12)  # Avg (ns)
    assert (row["time_s_min"], row["time_s_max"]) == pytest.approx((2852032e-9, 3774688e-9))
    assert not t.skipped


def test_a_kernel_summary_split_by_launch_configuration(tmp_path):
    # the GridXYZ / BlockXYZ columns nsys 2022.4's gpukernsum printed before Name
    head, row = THOR_SUM.read_text().splitlines()[1:3]
    f = tmp_path / "kern_sum.csv"
    f.write_text(head.replace(",Name", ",GridXYZ,BlockXYZ,Name") + "\n"
                 + row.replace(',"', ',"  4096    1    1","  256    1    1","') + "\n"
                 + row.replace(',"', ',"  16    1    1","  1    1    1","') + "\n")
    df = load(f, gpu="jetson-agx-thor").df
    assert list(df["config"]) == ["grid=4096x1x1 block=256x1x1", "grid=16x1x1 block=1x1x1"]


def test_a_report_without_kernels_says_so():
    with pytest.raises(InputError, match="nsys found no CUDA kernel in its report .SKIPPED"):
        load(NO_KERNELS, gpu="jetson-agx-thor")


def test_standard_output_with_several_reports_reads_the_trace(tmp_path):
    # what `nsys stats -r cuda_gpu_trace,cuda_gpu_kern_sum --format csv REP` prints: each
    # report after its Processing line, the tables apart by a blank line
    trace = THOR.read_text()
    out = tmp_path / "stats.txt"
    out.write_text("Processing [/tmp/x.sqlite] with [/opt/nsys/reports/cuda_gpu_trace.py]...\n"
                   + trace + "\n" + THOR_SUM.read_text())
    t = load(out)
    assert len(t.df) == 1 and t.df.iloc[0]["launches"] == 4  # the trace, not the summary
    assert t.skipped[0].row == 3  # file lines, past the Processing line


def test_the_units_in_the_column_names_are_read(tmp_path):
    head, *rows = THOR.read_text().splitlines()
    kernels = [r for r in rows if "saxpy" in r]
    # the same launches in microseconds, as `nsys stats --timeunit usec` prints them
    us = [r.replace(r.split(",")[1], str(int(r.split(",")[1]) / 1000), 1) for r in kernels]
    for unit in ("us", "usec"):  # older nsys versions print 'usec'
        f = tmp_path / f"{unit}.csv"
        f.write_text(head.replace("(ns)", f"({unit})") + "\n" + "\n".join(us) + "\n")
        assert load(f).df.iloc[0]["time_s"] == pytest.approx(load(THOR).df.iloc[0]["time_s"])
    bad = tmp_path / "bad.csv"
    bad.write_text(head.replace("Duration (ns)", "Duration (MB)") + "\n" + kernels[0] + "\n")
    with pytest.raises(InputError, match="not a time unit") as e:
        load(bad)
    assert e.value.field == "Duration (MB)"


def test_damaged_traces_are_errors_with_the_row(tmp_path):
    lines = THOR.read_text().splitlines()
    cut = tmp_path / "cut.csv"
    cut.write_text("\n".join(lines[:4] + [lines[4][:40]]) + "\n")
    with pytest.raises(InputError, match="fields, the header has 21") as e:
        load(cut)
    assert e.value.row == 5
    text = tmp_path / "text.csv"
    text.write_text("\n".join(lines[:3] + [lines[3].replace(",40672,", ",fast,")]) + "\n")
    with pytest.raises(InputError, match="'fast' is not a number") as e:
        load(text)
    assert (e.value.row, e.value.field) == (4, "Duration (ns)")
    nameless = tmp_path / "nameless.csv"
    nameless.write_text("\n".join(lines[:3] + [lines[3].replace("NVIDIA Thor (0)", "")]) + "\n")
    with pytest.raises(InputError, match="does not name the device") as e:
        load(nameless)
    assert (e.value.row, e.value.field) == (4, "Device")
    copies = tmp_path / "copies.csv"
    copies.write_text("\n".join(lines[:3]) + "\n")
    with pytest.raises(InputError, match="no kernel launch in the trace .all 2 rows"):
        load(copies)
    # a kernel's line printed twice counted as a fifth launch (29.8 us mean, where the four
    # took 27.1); kernels of one CUDA graph launch share a CorrId, so only a whole line counts
    twice = tmp_path / "twice_cuda_gpu_trace.csv"
    twice.write_text("\n".join(lines[:4] + lines[3:]) + "\n")
    with pytest.raises(InputError, match="the row repeats row 4 field for field") as e:
        load(twice)
    assert e.value.row == 5
    graph = tmp_path / "graph_cuda_gpu_trace.csv"
    first, second = lines[3].split(","), lines[7].split(",")  # two saxpy launches
    assert first[3] == second[3] == "4096" and first[2] != second[2]
    second[2] = first[2]
    graph.write_text("\n".join(lines[:7] + [",".join(second)] + lines[8:]) + "\n")
    assert load(graph).df["launches"].sum() == load(THOR).df["launches"].sum()


def test_predict_from_an_nsys_trace(capsys):
    rc = main(["predict", str(THOR), "--target", "h100-sxm5-80gb", "--method", "bandwidth",
               "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    (k,) = out["predictions"]
    assert (k["source"], k["launches"]) == ("jetson-agx-thor", 4)
    assert k["source_time_s"] == pytest.approx(27112e-9)
    assert len(out["skipped"]) == 12 and out["skipped"][0]["row"] == 2


@pytest.mark.parametrize("suffix", [".nsys-rep", ".qdrep", ".sqlite"])
def test_an_unexported_nsys_report_says_how_to_export_it(tmp_path, suffix):
    report = tmp_path / f"app{suffix}"
    report.write_bytes(b"SQLite format 3\x00" if suffix == ".sqlite" else b"\x00binary")
    with pytest.raises(InputError, match=r"nsys stats --report cuda_gpu_trace --format csv"):
        load(report)
