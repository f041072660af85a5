"""Nsight Compute readers (CSV and .ncu-rep).

``REAL_*`` are real captures (suite/fixtures.sh on an H100 SXM5, ncu 2025.3.1, 2026-11-24): the
suite's vector_add, saxpy and reduce_sum over 2^18 floats, profiled once each with gpuproj's
metric list, as the raw page in base and in auto-scaled units, the default details page, and the
.ncu-rep; expected values are what the kernels' source makes them, computed by hand.
``REAL_DETAILS`` is another real capture (a Blackwell cuBLASLt GEMM from Microsoft's
superbenchmark, MIT): the default details page, with its display labels, rule rows and metric
rows shorter than the header. ``REAL_SUMMARY`` is ``ncu --print-summary per-kernel`` on a Jetson
AGX Thor (apexedgesystems/vernier, Apache-2.0). The ``ncu-handbuilt-*`` files follow the
documented layouts with counts chosen for the edits below (two launches of one kernel, bank
conflicts), see tests/data/README.md.
"""

import csv
import sys
import types
import warnings
from pathlib import Path

import pytest

from gpuproj.errors import InputError, InputWarning, MissingToolError
from gpuproj.profiles import load, sniff
from gpuproj.profiles.readers import ncu_csv, ncu_rep
from gpuproj.profiles.table import count_causes

DATA = Path(__file__).parent / "data"
BASE = DATA / "ncu-handbuilt-h100-raw-base.csv"
AUTO = DATA / "ncu-handbuilt-h100-raw-auto.csv"
DETAILS = DATA / "ncu-handbuilt-h100-details.csv"
REAL_DETAILS = DATA / "ncu-sm100-superbench-cublaslt-details.csv"
REAL_BASE = DATA / "ncu-h100-sxm5-80gb-raw-base.csv"
REAL_AUTO = DATA / "ncu-h100-sxm5-80gb-raw-auto.csv"
REAL_PAGE = DATA / "ncu-h100-sxm5-80gb-details.csv"
REAL_REP = DATA / "ncu-h100-sxm5-80gb.ncu-rep"
REAL_SUMMARY = DATA / "ncu-thor-vernier-summary-per-kernel.csv"
N = 2**20
VEC = "vec_add(const float *, const float *, float *, int)"


def row(t, kernel):
    df = t.df
    return df[df["kernel"] == kernel].iloc[0]


def test_sniffed_as_ncu_csv():
    for p in (BASE, AUTO, DETAILS, REAL_DETAILS, REAL_BASE, REAL_AUTO, REAL_PAGE):
        assert sniff(p) == "ncu-csv"


# the counts of the three kernels of the real captures, from their source (suite/srivastava.cu),
# n = 2^18 floats in blocks of 256: c = a + b (one FADD, two loads and one store per element),
# y = alpha x + y (one FFMA), and a block-wise tree sum of 256 values (255 FADDs per block)
REAL_N = 2**18
REAL_COUNTS = {
    "vector_add": {"fp32_add_thread_inst": REAL_N, "fp32_flops": REAL_N, "l1_bytes": 12 * REAL_N},
    "saxpy": {"fp32_fma_thread_inst": REAL_N, "fp32_flops": 2 * REAL_N, "l1_bytes": 12 * REAL_N},
    "reduce_sum": {"fp32_add_thread_inst": 1024 * 255, "fp32_flops": 1024 * 255},
}


def _real(table):
    df = table.df.copy()
    df["name"] = df["kernel"].str.split("(").str[0]
    return df.set_index("name")


@pytest.mark.parametrize("path", [REAL_BASE, REAL_AUTO])
def test_real_raw_page_counts_are_the_kernels(path):
    t = load(path)
    assert t.gpus == ["h100-sxm5-80gb"] and not t.skipped and len(t) == 3
    df = _real(t)
    for kernel, counts in REAL_COUNTS.items():
        for col, want in counts.items():
            # auto-scaled units print 4 significant decimals: 3.1457 Mbyte
            assert df.loc[kernel, col] == pytest.approx(want, rel=1e-4), (path.name, kernel, col)
    assert (df["grid_blocks"] == 1024).all() and (df["block_threads"] == 256).all()
    assert (df["regs_per_thread"] == 16).all() and (df["launches"] == 1).all()
    v = df.loc["vector_add"]
    # a and b are read from DRAM once (sectors: within 1 %); c stays in the 50 MB L2, whose
    # write-back leaves DRAM writes near zero during the kernel
    assert v["dram_read_bytes"] == pytest.approx(8 * REAL_N, rel=0.01)
    assert v["dram_write_bytes"] < 0.01 * 4 * REAL_N
    assert 0.5 < v["achieved_occupancy"] <= 1
    # the duration is the printed gpu__time_duration.sum, not .sum + .avg (the raw page prints
    # .avg, .max, .min and .sum of one launch: adding two of them doubled every time)
    printed = {"raw-base": (3552, 3520, 4800), "raw-auto": (3552, 3552, 4736)}
    want = printed[path.stem.split("80gb-")[1]]
    assert df.loc[["vector_add", "saxpy", "reduce_sum"], "time_s"].to_numpy() == pytest.approx(
        [w * 1e-9 for w in want])
    # ncu ran with --clock-control none: the SM clock is the card's, near its 1.98 GHz boost
    assert 1.7e9 < v["sm_clock_hz"] < 2.0e9


def test_real_details_page_needs_the_gpu_named_and_agrees_with_the_raw_page():
    # the details page identifies the device by index only
    with pytest.raises(InputError, match="does not name the GPU"):
        load(REAL_PAGE)
    page = _real(load(REAL_PAGE, gpu="h100-sxm5-80gb"))
    raw = _real(load(REAL_BASE))
    for col in ("grid_blocks", "block_threads", "regs_per_thread"):
        assert (page[col] == raw[col]).all(), col
    # two ncu runs of the same launches: occupancy within a few points, and the times of one
    # cold launch each (3.5-4.9 us) within 2 % (the replay pass that measures the duration
    # collects no other metric)
    assert page["achieved_occupancy"].to_numpy() == pytest.approx(
        raw["achieved_occupancy"].to_numpy(), abs=0.05)
    assert page["time_s"].to_numpy() == pytest.approx(raw["time_s"].to_numpy(), rel=0.02)


def test_raw_base_units_hand_values():
    t = load(BASE)
    assert len(t) == 3 and t.gpus == ["h100-sxm5-80gb"] and not t.skipped
    v = row(t, VEC)
    assert v["launches"] == 2
    assert v["time_s"] == pytest.approx((12345 + 12655) / 2 * 1e-9)   # mean of the 2 launches
    assert v["time_s_min"] == pytest.approx(12345e-9)
    assert v["config"] == "grid=4096x1x1 block=256x1x1"
    assert v["fp32_add_thread_inst"] == N and v["fp32_flops"] == N
    assert v["dram_read_bytes"] == 8 * 2**20 and v["dram_bytes"] == 12 * 2**20
    assert v["l2_bytes"] == 12582912 and v["l1_bytes"] == 12582912
    assert v["warp_inst"] == 393216 and v["thread_inst"] == 12 * N
    assert v["int_thread_inst"] == 5 * N and v["ldst_thread_inst"] == 3 * N
    assert v["achieved_occupancy"] == pytest.approx((0.845 + 0.855) / 2)
    assert v["grid_blocks"] == 4096 and v["block_threads"] == 256 and v["regs_per_thread"] == 16
    s = row(t, "saxpy(float, const float *, float *, int)")
    assert s["fp32_fma_thread_inst"] == N and s["fp32_flops"] == 2 * N   # FMA = 2 FLOP
    r = row(t, "reduce_sum(const float *, float *, int)")
    assert r["smem_per_block_bytes"] == 1024                # static 1024 + dynamic 0
    assert r["shared_requests"] == 9216 + 10240             # shared loads + stores
    assert r["shared_wavefronts"] == 20480 and r["shared_bank_conflicts"] == 1024
    assert r["shared_bytes"] == 2490368
    assert r["time_s"] == pytest.approx(9.8e-6)


def test_auto_units_and_details_layout_agree_with_base():
    base = load(BASE).df.set_index("kernel")
    for p in (AUTO, DETAILS):
        other = load(p).df.set_index("kernel")
        for c in ("time_s", "dram_bytes", "l2_bytes", "shared_bytes", "smem_per_block_bytes",
                  "fp32_flops", "warp_inst", "launches"):
            # auto-scaled units print 4 decimals: 12.5829 Mbyte is 12,582,900 bytes
            assert other[c].to_numpy() == pytest.approx(base[c].to_numpy(), rel=1e-4), (p, c)


def test_per_launch_keeps_launches_apart():
    t = load(BASE, per_launch=True)
    assert len(t) == 4 and (t.df["launches"] == 1).all()
    assert list(t.df["launch_id"]) == ["0", "1", "2", "3"]
    assert t.df["time_s"].iloc[0] == pytest.approx(12345e-9)


def _write(tmp_path, text, name="x.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _edit_base(tmp_path, old, new, count=1):
    text = BASE.read_text()
    assert old in text
    return _write(tmp_path, text.replace(old, new, count))


def test_empty_and_header_only(tmp_path):
    with pytest.raises(InputError, match="empty"):
        ncu_csv.read(_write(tmp_path, ""))
    lines = BASE.read_text().splitlines()
    header_units = "\n".join(lines[5:7]) + "\n"
    with pytest.raises(InputError, match="no rows"):
        ncu_csv.read(_write(tmp_path, header_units))


def test_missing_units_row(tmp_path):
    lines = BASE.read_text().splitlines()
    p = _write(tmp_path, "\n".join(lines[:6] + lines[7:]) + "\n")
    with pytest.raises(InputError, match="units row") as e:
        ncu_csv.read(p)
    assert e.value.row == 7


def test_missing_time_metric(tmp_path):
    p = _edit_base(tmp_path, '"gpu__time_duration.sum"', '"gpu__time_something.sum"')
    with pytest.raises(InputError, match="gpu__time_duration.sum"):
        ncu_csv.read(p)


def test_bad_durations(tmp_path):
    # non-numeric -> error naming row and field
    p = _edit_base(tmp_path, '"12,345"', '"fast"')
    with pytest.raises(InputError) as e:
        ncu_csv.read(p)
    assert e.value.row == 8 and e.value.field == "gpu__time_duration.sum"
    assert "x.csv" in str(e.value) and "row 8" in str(e.value)
    # negative -> error
    with pytest.raises(InputError, match="negative"):
        ncu_csv.read(_edit_base(tmp_path, '"12,345"', '"-12,345"'))
    # zero and empty -> skipped, counted
    t = ncu_csv.read(_edit_base(tmp_path, '"12,345"', '"0"'))
    assert len(t.skipped) == 1 and t.skipped[0].row == 8
    assert "not positive" in t.skipped[0].reason
    assert row(t, VEC)["launches"] == 1
    t = ncu_csv.read(_edit_base(tmp_path, '"12,345"', '""'))
    assert count_causes(t.skipped) == {"gpu__time_duration.sum has no value": 1}


def test_launch_without_a_kernel_name_is_skipped_and_counted(tmp_path):
    # grouping launches by kernel would drop it without a word
    t = ncu_csv.read(_edit_base(tmp_path, '"saxpy(float, const float *, float *, int)"',
                                '"  "'))
    assert "saxpy" not in set(t.df["kernel"]) and len(t) == 2
    assert [(s.row, s.reason) for s in t.skipped] == [(9, "Kernel Name empty")]


@pytest.mark.parametrize("source, old, new, match, row, field", [
    # the raw page prints units on row 7, under the header: the error names that row
    (BASE, '"nsecond"', '"byte"', "not a time unit", 7, "gpu__time_duration.sum"),
    (BASE, '"register/thread"', '"furlong/thread"', "unknown unit 'furlong/thread'", 7, None),
    (BASE, '"register/thread",', "", "36 fields, the header has 37", 7, None),
    # a rate or a per-cycle size is no byte count: it was read as bytes (1e9 x, or as is)
    (BASE, '"byte","byte","nsecond"', '"Gbyte/second","byte","nsecond"',
     "unit 'Gbyte/second' is not a byte unit", 7, "dram__bytes_read.sum"),
    (BASE, '"byte","byte","nsecond"', '"byte/cycle","byte","nsecond"',
     "unit 'byte/cycle' is not a byte unit", 7, "dram__bytes_read.sum"),
    # the details page prints each value's unit beside it
    (DETAILS, '"gpu__time_duration.sum","usecond"', '"gpu__time_duration.sum","byte"',
     "not a time unit", 10, None),
    # its own row, not the launch's first (7)
    (DETAILS, '"usecond","12.3450"', '"usecond","fast"', "'fast' is not a number", 10, None),
])
def test_wrong_and_unknown_units(tmp_path, source, old, new, match, row, field):
    text = source.read_text().replace(old, new, 1)
    with pytest.raises(InputError, match=match) as e:
        ncu_csv.read(_write(tmp_path, text))
    assert e.value.row == row
    if field is not None:
        assert e.value.field == field


def test_byte_units_of_sizes_are_read():
    # what ncu prints for sizes: bytes with a prefix, shared memory per block
    for unit, factor in (("byte", 1), ("Kbyte", 1e3), ("Mbyte", 1e6), ("Kbyte/block", 1e3)):
        assert ncu_csv.to_si("dram__bytes_read.sum", "2", unit, path="p", row=1) == 2 * factor


def test_a_launch_printed_twice_is_an_error_not_a_launch_more(tmp_path):
    """ncu prints each launch once under its own ID; a line repeated (or two raw pages joined
    without the second's header, whose IDs restart) counted as another launch of the kernel."""
    lines = BASE.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.startswith('"1",'))
    with pytest.raises(InputError, match=r"launch ID 1 again \(first on row 9\)") as e:
        ncu_csv.read(_write(tmp_path, "".join(lines[:at + 1] + lines[at:])))
    assert (e.value.row, e.value.field) == (10, "ID")
    body = [ln for ln in lines if ln[:2] in ('"0', '"1', '"2', '"3')]
    with pytest.raises(InputError, match="launch ID 0 again"):
        ncu_csv.read(_write(tmp_path, "".join(lines) + "".join(body)))


def test_unknown_gpu_and_missing_gpu_name(tmp_path):
    p = _edit_base(tmp_path, "NVIDIA H100 80GB HBM3", "NVIDIA Imaginary 9000", 4)
    with pytest.raises(InputError, match="Imaginary") as e:
        ncu_csv.read(p)
    assert e.value.field == "device__attribute_display_name"
    # a name the catalog does not know takes the GPU given
    assert ncu_csv.read(p, gpu="h100-sxm5-80gb").gpus == ["h100-sxm5-80gb"]
    p = _edit_base(tmp_path, '"NVIDIA H100 80GB HBM3"', '""', 4)
    with pytest.raises(InputError, match="pass --source NAME"):
        ncu_csv.read(p)
    assert ncu_csv.read(p, gpu="H100-PCIe-80GB").gpus == ["h100-pcie-80gb"]


def test_metric_list_is_the_mapping_table():
    names = ncu_csv.metric_names()
    assert names[0] == "gpu__time_duration.sum"
    assert "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in names
    assert len(names) == len(set(names)) == len(ncu_csv.NCU_METRICS)


SUITE_NCU = Path(__file__).parents[1] / "data" / "suite"


@pytest.mark.parametrize("gpu, l2", [("h100-sxm5-80gb", 305597280), ("h200-sxm-141gb", 304938176)])
def test_l2_bytes_count_a_far_partition_lookup_twice(gpu, l2):
    """docs/ncu.md, "L2 bytes on a partitioned L2": the suite's vector_add over 2^24 floats
    (srivastava-xlarge) reads a and b and writes c once each, so its L1 sends 12 x 2^24 bytes to
    the L2, while lts__t_bytes (l2_bytes, the value printed) is 1.52 x that on the H100 and
    the H200: the sectors homed in the far L2 partition are looked up twice. These profiles
    predate l2_tex_sectors, and l2_bytes stays lts__t_bytes."""
    v = _real(load(SUITE_NCU / gpu / "ncu" / "srivastava-xlarge.csv")).loc["vector_add"]
    assert v["l1_bytes"] == 12 * 2**24 and v["l2_bytes"] == l2
    assert 1.5 < v["l2_bytes"] / v["l1_bytes"] < 1.53
    assert v["l2_tex_sectors"] != v["l2_tex_sectors"]  # NaN: not collected then


@pytest.mark.parametrize("unit, scale", [("sector", 1), ("Ksector", 1000)])
def test_l1tex_lookups_at_the_l2_are_read_beside_l2_bytes(tmp_path, unit, scale):
    """lts__t_sectors_srcunit_tex.sum becomes l2_tex_sectors (ncu's auto-scaled units print
    Ksector); l2_bytes is still lts__t_bytes. The real capture with the column added by hand:
    the L1's bytes / 32 per kernel (vector_add and saxpy 12 x 2^18 bytes, reduce_sum 1081344)."""
    tex = {"0": 98304, "1": 98304, "2": 33792}
    lines = REAL_BASE.read_text().splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    lines[head] += ',"lts__t_sectors_srcunit_tex.sum"'
    lines[head + 1] += f',"{unit}"'
    for i in range(head + 2, len(lines)):
        if lines[i].startswith('"'):
            launch = next(csv.reader([lines[i]]))[0]
            lines[i] += f',"{tex[launch] / scale:g}"'
    df = _real(load(_write(tmp_path, "\n".join(lines) + "\n")))
    raw = _real(load(REAL_BASE))
    assert df.loc[["vector_add", "saxpy", "reduce_sum"], "l2_tex_sectors"].tolist() == [
        98304, 98304, 33792]
    assert (df["l2_bytes"] == raw["l2_bytes"]).all()
    assert raw.loc["vector_add", "l2_bytes"] == 6182400  # lts__t_bytes.sum as printed


# ---- .ncu-rep ---------------------------------------------------------------------------------
class _Metric:
    def __init__(self, value, unit=""):
        self.v, self.u = value, unit

    def as_double(self):
        return float(self.v)

    def as_string(self):
        return str(self.v)

    def unit(self):
        return self.u


class _IAction:  # ncu_report.IAction's name bases
    NameBase_FUNCTION, NameBase_DEMANGLED, NameBase_MANGLED = 0, 1, 2


class _Action:
    def __init__(self, name, metrics):
        self._name, self._m = name, metrics

    def name(self, base=_IAction.NameBase_FUNCTION):
        """The demangled signature, or as ncu_report does by default the bare function name
        ('void ns::k<1>(int)' -> 'k')."""
        if base == _IAction.NameBase_DEMANGLED:
            return self._name
        return self._name.split("(")[0].split("<")[0].split("::")[-1].split(" ")[-1]

    def metric_by_name(self, n):
        return self._m.get(n)


class _Range:
    def __init__(self, actions):
        self.a = actions

    def num_actions(self):
        return len(self.a)

    def action_by_idx(self, i):
        return self.a[i]


class _Context:
    def __init__(self, ranges):
        self.r = ranges

    def num_ranges(self):
        return len(self.r)

    def range_by_idx(self, i):
        return self.r[i]


def _fake_module(ranges):
    mod = types.ModuleType("ncu_report")
    mod.load_report = lambda path: _Context(ranges)
    mod.IAction = _IAction
    return mod


def _action(t_ns, ffma):
    m = {"gpu__time_duration.sum": _Metric(t_ns, "nsecond"),
         "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": _Metric(ffma, "inst"),
         "dram__bytes_read.sum": _Metric(8.388608, "Mbyte"),
         "device__attribute_display_name": _Metric("NVIDIA H100 80GB HBM3"),
         "launch__grid_dim_x": _Metric(4096), "launch__grid_dim_y": _Metric(1),
         "launch__grid_dim_z": _Metric(1), "launch__block_dim_x": _Metric(256),
         "launch__block_dim_y": _Metric(1), "launch__block_dim_z": _Metric(1)}
    return _Action("saxpy(float, const float *, float *, int)", m)


def test_ncu_rep_through_the_report_api(tmp_path, monkeypatch):
    """The reader against a stand-in for NVIDIA's ncu_report API (same method names)."""
    monkeypatch.setitem(sys.modules, "ncu_report",
                        _fake_module([_Range([_action(1000, N), _action(3000, N)])]))
    rep = tmp_path / "r.ncu-rep"
    rep.write_bytes(b"\0")
    assert sniff(rep) == "ncu-rep"
    t = load(rep)
    v = t.df.iloc[0]
    assert v["launches"] == 2 and v["time_s"] == pytest.approx(2e-6)
    assert v["fp32_fma_thread_inst"] == N and v["dram_read_bytes"] == pytest.approx(8388608)
    assert v["config"] == "grid=4096x1x1 block=256x1x1" and v["gpu"] == "h100-sxm5-80gb"


def test_ncu_rep_names_kernels_by_their_whole_signature(tmp_path, monkeypatch):
    """Two instantiations of one template with the same launch configuration stay two kernels,
    named as the CSV export names them; under the bare function name ncu_report gives by
    default, they were one row with the mean of their times."""
    add, exp = (_action(1000, N), _action(9000, N))
    add._name = "void at::native::elementwise_kernel<128, 4, AddFunctor<float>>(int, T3)"
    exp._name = "void at::native::elementwise_kernel<128, 4, ExpFunctor<float>>(int, T3)"
    monkeypatch.setitem(sys.modules, "ncu_report", _fake_module([_Range([add, exp])]))
    rep = tmp_path / "r.ncu-rep"
    rep.write_bytes(b"NVR")
    t = load(rep)
    assert t.df["kernel"].tolist() == [add._name, exp._name]
    assert t.df["time_s"].tolist() == pytest.approx([1e-6, 9e-6])
    assert t.df["launches"].tolist() == [1, 1]
    del sys.modules["ncu_report"].IAction  # a module without the name bases: said, not guessed
    with pytest.raises(MissingToolError, match="NameBase_DEMANGLED"):
        load(rep)


def test_ncu_rep_checks_the_source_against_the_device(tmp_path, monkeypatch):
    """Compute capability and SM count, as the CSV reader checks ``CC`` and "# SMs"."""
    def action(major, minor, sms):
        a = _action(1000, N)
        a._m.update({"device__attribute_compute_capability_major": _Metric(major),
                     "device__attribute_compute_capability_minor": _Metric(minor),
                     "device__attribute_multiprocessor_count": _Metric(sms)})
        return a

    rep = tmp_path / "r.ncu-rep"
    rep.write_bytes(b"\0")
    monkeypatch.setitem(sys.modules, "ncu_report", _fake_module([_Range([action(9, 0, 132)])]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        assert load(rep).gpus == ["h100-sxm5-80gb"]         # the display name's GPU: 132 SMs
    monkeypatch.setitem(sys.modules, "ncu_report", _fake_module([_Range([action(9, 0, 114)])]))
    with pytest.warns(InputWarning, match="row 1: ncu profiled a GPU with 114 SMs, the "
                      "catalog's h100-sxm5-80gb has 132"):
        load(rep)
    monkeypatch.setitem(sys.modules, "ncu_report", _fake_module([_Range([action(8, 0, 132)])]))
    with pytest.raises(InputError, match=r"row 1, field 'CC': ncu profiled a compute "
                       r"capability 8.0 GPU \(sm_80\), but h100-sxm5-80gb is sm_90"):
        load(rep)


def test_ncu_rep_without_actions_is_an_error(tmp_path, monkeypatch):
    # NVIDIA's module finds no kernel in an empty file, a CSV renamed or the first 5 kB of a
    # report alike: the message tells them apart by the file's first bytes
    monkeypatch.setitem(sys.modules, "ncu_report", _fake_module([_Range([])]))
    rep = tmp_path / "r.ncu-rep"
    for head, says in ((b"NVR\0\2", r"no profiled kernel \(no ranges or actions\): a failed "
                                       "capture, or a report cut short"),
                       (b"", "file is empty"),
                       (b'"ID","Process ID"', r"not an Nsight Compute report \(those start "
                                              r"with 'NVR'\)")):
        rep.write_bytes(head)
        with pytest.raises(InputError, match=says):
            ncu_rep.read(rep)


def test_ncu_rep_needs_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ncu_report", None)
    with pytest.raises(MissingToolError, match=r"gpuproj\[ncu\]"):
        ncu_rep.read(tmp_path / "r.ncu-rep")


def test_ncu_rep_real_module_on_garbage(tmp_path):
    pytest.importorskip("ncu_report")
    rep = tmp_path / "garbage.ncu-rep"
    rep.write_bytes(b"not a report")
    # NVIDIA's module reads no kernel from it (no error of its own): the first bytes say why
    with pytest.raises(InputError, match=r"garbage.ncu-rep: not an Nsight Compute report "
                                         r"\(those start with 'NVR'\)"):
        ncu_rep.read(rep)


def test_ncu_rep_real_capture_through_nvidias_module():
    """The real .ncu-rep of the H100 captures, read through NVIDIA's ncu_report (the `ncu`
    extra, in `test`): the same kernels and counts as the raw page of another ncu run."""
    pytest.importorskip("ncu_report")
    assert sniff(REAL_REP) == "ncu-rep"
    t = ncu_rep.read(REAL_REP)
    assert t.gpus == ["h100-sxm5-80gb"] and len(t) == 3
    # the same names as the CSV export: whole signatures, not the bare function names
    assert t.df["kernel"].tolist() == load(REAL_BASE).df["kernel"].tolist() == [
        "vector_add(const float *, const float *, float *, int)",
        "saxpy(float, const float *, float *, int)", "reduce_sum(const float *, float *, int)"]
    rep, raw = _real(t), _real(load(REAL_BASE))
    for kernel, counts in REAL_COUNTS.items():
        for col, want in counts.items():
            assert rep.loc[kernel, col] == want, (kernel, col)
    for col in ("thread_inst", "grid_blocks", "block_threads", "regs_per_thread"):
        assert (rep[col] == raw.loc[rep.index, col]).all(), col
    assert rep["dram_read_bytes"].to_numpy() == pytest.approx(
        raw.loc[rep.index, "dram_read_bytes"].to_numpy(), rel=0.01)
    # one cold launch each (3.5-4.9 us) in two ncu runs: within 7 %
    assert rep["time_s"].to_numpy() == pytest.approx(
        raw.loc[rep.index, "time_s"].to_numpy(), rel=0.1)


def test_ncu_rep_cut_short_is_an_error(tmp_path):
    # NVIDIA's module reads a report cut short as far as it goes: the launch cut through has
    # no name, which the reader takes for what it is instead of skipping it as a row
    pytest.importorskip("ncu_report")
    data = REAL_REP.read_bytes()
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(data[:len(data) * 95 // 100])
    with pytest.raises(InputError, match="row 3: a launch without a kernel name: the report "
                                         "is cut short"):
        ncu_rep.read(cut, gpu="h100-sxm5-80gb")


def _with_clock(tmp_path, unit, values):
    """The base fixture with an ``sm__cycles_elapsed.avg.per_second`` column (``values`` for
    launches 0-3, printed in ``unit``) appended to the header, units and launch rows."""
    out, launch = [], 0
    for ln in BASE.read_text().splitlines():
        if ln.startswith('"ID"'):
            ln += ',"sm__cycles_elapsed.avg.per_second"'
        elif ln.startswith('""'):
            ln += f',"{unit}"'
        elif ln.startswith('"'):
            ln += f',"{values[launch]}"'
            launch += 1
        out.append(ln)
    return _write(tmp_path, "\n".join(out) + "\n")


def test_sm_clock(tmp_path):
    # "SM Frequency" as ncu prints it by default (cycle/nsecond); vec_add's two launches
    # (1.59 and 1.98 GHz) become one row with the mean
    t = ncu_csv.read(_with_clock(tmp_path, "cycle/nsecond", ["1.59", "1.75", "1.98", "1.755"]))
    assert row(t, VEC)["sm_clock_hz"] == pytest.approx((1.59e9 + 1.98e9) / 2)
    assert row(t, "reduce_sum(const float *, float *, int)")["sm_clock_hz"] == \
        pytest.approx(1.755e9)
    t = ncu_csv.read(_with_clock(tmp_path, "Mhz", ["1,590", "1,750", "1,980", "1,755"]))
    assert row(t, VEC)["sm_clock_hz"] == pytest.approx((1.59e9 + 1.98e9) / 2)
    with pytest.raises(InputError, match="not a frequency") as e:
        ncu_csv.read(_with_clock(tmp_path, "byte", ["1", "1", "1", "1"]))
    assert e.value.field == "sm__cycles_elapsed.avg.per_second"


@pytest.mark.filterwarnings("ignore::gpuproj.predict.MethodWarning")  # quantitative's, per row
def test_a_profile_without_some_of_the_metrics_reads_and_predicts(tmp_path):
    """`gpuproj profile` leaves out the metrics a GPU does not offer: the raw page then lacks
    their columns, the reader leaves those canonical columns empty and every model still
    runs."""
    import csv
    import io

    from gpuproj.predict import predict

    lacking = {"smsp__sass_data_bytes_mem_shared.sum",
               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"}
    out, header = [], None
    for line in (DATA / "ncu-handbuilt-h100-raw-base.csv").read_text().splitlines(True):
        if not line.startswith('"'):
            out.append(line)
            continue
        row = next(csv.reader([line]))
        header = header or row
        buf = io.StringIO()
        csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(
            [v for h, v in zip(header, row) if h not in lacking])
        out.append(buf.getvalue())
    path = tmp_path / "partial.csv"
    path.write_text("".join(out))
    full = ncu_csv.read(DATA / "ncu-handbuilt-h100-raw-base.csv")
    part = ncu_csv.read(path)
    assert len(part) == len(full) == 3
    cols = ["shared_bytes", "shared_bank_conflicts"]
    assert full.df[cols].notna().all().all() and part.df[cols].isna().all().all()
    res = predict(part, targets="h200", methods="all")
    assert {"hierarchical", "hierarchical-ext", "quantitative"} <= set(res.predictions)
    assert res.table()["time_s"].notna().all() and not res.skipped


def test_real_default_details_page():
    """A real ``ncu --csv`` run with the default sections: the application's own output before
    the CSV, metrics under their section labels ("Duration", "Registers Per Thread"), rule
    rows without a metric, and metric rows that stop after the value (16 fields, the header
    has 20). The file does not name the GPU (compute capability 10.0, 152 SMs); read as the
    catalog's B200 here, which has 148 SMs, and the reader says so."""
    with pytest.raises(InputError, match="--source"):
        load(REAL_DETAILS)
    # a source of another compute capability than the one ncu printed is refused
    with pytest.raises(InputError, match=r"row 5, field 'CC': ncu profiled a compute "
                       r"capability 10.0 GPU \(sm_100\), but h100-sxm5-80gb is sm_90"):
        load(REAL_DETAILS, gpu="h100-sxm5-80gb")
    with pytest.warns(InputWarning, match=r"row 26: ncu profiled a GPU with 152 SMs, the "
                      r"catalog's b200 has 148; the projections use the catalog's peaks"):
        t = load(REAL_DETAILS, gpu="b200")
    assert len(t) == 1 and not t.skipped
    v = t.df.iloc[0]
    assert v["kernel"].startswith("cutlass3x_sm100_tensorop_s64x256x32gemm_f8_f8_f32")
    assert v["config"] == "grid=9x32x1 block=384x1x1"
    assert v["time_s"] == pytest.approx(406240e-9)                # "Duration","ns","406240"
    assert v["grid_blocks"] == 288 and v["block_threads"] == 384
    assert v["regs_per_thread"] == 168
    assert v["smem_per_block_bytes"] == 205696 + 0                  # dynamic + static
    assert v["achieved_occupancy"] == pytest.approx(0.1553)
    assert v["sm_clock_hz"] == pytest.approx(1239496049.13)
    assert v["launches"] == 1


def _details(tmp_path, rows):
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
            '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
            '"Metric Value","Rule Name","Rule Type","Rule Description","Estimated Speedup Type",'
            '"Estimated Speedup"')
    ident = '"0","1","app","h","k(float*)","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0",'
    return _write(tmp_path, "\n".join([head] + [ident + r for r in rows]) + "\n")


def test_a_metric_requested_by_name_wins_over_its_section_label(tmp_path):
    named = '"Command line profiler metrics","gpu__time_duration.sum","ns","2000",'
    label = '"GPU Speed Of Light Throughput","Duration","ns","1000",'
    for rows in ([named, label], [label, named]):
        t = ncu_csv.read(_details(tmp_path, rows), gpu="h100-sxm5-80gb")
        assert t.df["time_s"].iloc[0] == pytest.approx(2000e-9)
    # a label of another section is not the metric
    with pytest.raises(InputError, match="missing required metric"):
        ncu_csv.read(_details(tmp_path, ['"Memory Workload Analysis","Duration","ns","1000",']),
                     gpu="h100-sxm5-80gb")


def test_a_metric_printed_twice_and_a_header_again_are_errors(tmp_path):
    # the last value was kept without a word; a second output under the first read its header
    # as a launch ("a compute capability CC GPU")
    named = '"Command line profiler metrics","gpu__time_duration.sum","ns","{}",'
    with pytest.raises(InputError, match=r"row 3, field 'gpu__time_duration.sum': "
                                         r"gpu__time_duration.sum of launch 0 printed twice, as "
                                         r"2000 ns on row 2 and as 3000 ns"):
        ncu_csv.read(_details(tmp_path, [named.format(2000), named.format(3000)]),
                     gpu="h100-sxm5-80gb")
    ncu_csv.read(_details(tmp_path, [named.format(2000)] * 2), gpu="h100-sxm5-80gb")  # same
    twice = tmp_path / "twice.csv"
    twice.write_text(DETAILS.read_text() * 2)
    first = DETAILS.read_text().splitlines().index(next(
        ln for ln in DETAILS.read_text().splitlines() if ln.startswith('"ID"')))
    again = len(DETAILS.read_text().splitlines()) + first + 1
    with pytest.raises(InputError, match=rf"row {again}: the header of row {first + 1} again: "
                                         "the file holds two ncu outputs"):
        ncu_csv.read(twice, gpu="h100-sxm5-80gb")


@pytest.mark.parametrize("cells, n", [
    ('"GPU Speed Of Light Throughput","Duration","ns"', 14),             # no value
    ('"GPU Speed Of Light Throughput","Duration","ns","1","","","","","",""', 21)])
def test_details_row_too_short_or_too_long(tmp_path, cells, n):
    path = _details(tmp_path, [cells])
    with pytest.raises(InputError, match=f"row 2: {n} fields, the header has 20"):
        ncu_csv.read(path, gpu="h100-sxm5-80gb")


def test_numbers_written_with_a_decimal_comma(tmp_path):
    """ncu writes numbers in the system's locale. Under a German one, "117.344" ns is 117,344 ns
    (a dot between thousands), which read with a decimal point would be 1000x too short; the
    file's "65,77" % and "27.595.520" bytes can only be that locale, so the whole file is read
    in it."""
    rows = ['"Command line profiler metrics","gpu__time_duration.sum","ns","117.344",',
            '"Command line profiler metrics","dram__bytes_read.sum","byte","27.595.520",',
            '"Command line profiler metrics",'
            '"sm__warps_active.avg.pct_of_peak_sustained_active","%","65,77",',
            '"Command line profiler metrics","launch__grid_size","","64",',
            '"Command line profiler metrics","device__attribute_display_name","",'
            '"NVIDIA H100 80GB HBM3",']
    v = ncu_csv.read(_details(tmp_path, rows)).df.iloc[0]
    assert v["time_s"] == pytest.approx(117344e-9)
    assert v["dram_read_bytes"] == 27595520 and v["achieved_occupancy"] == pytest.approx(0.6577)
    assert v["grid_blocks"] == 64 and v["gpu"] == "h100-sxm5-80gb"
    # with a decimal point elsewhere in the file, "117.344" ns is 117.344 ns
    rows[2] = rows[2].replace("65,77", "65.77")
    rows[1] = rows[1].replace("27.595.520", "27,595,520")
    v = ncu_csv.read(_details(tmp_path, rows)).df.iloc[0]
    assert v["time_s"] == pytest.approx(117.344e-9) and v["dram_read_bytes"] == 27595520
    # both in one file: no reading of it is right
    rows[2] = rows[2].replace("65.77", "65,77")
    with pytest.raises(InputError, match=r"row 4: numbers written with a decimal comma \('65,77', "
                       r"row 4, field 'sm__warps_active.avg.pct_of_peak_sustained_active'\) "
                       r"and with a decimal point \('27,595,520', row 3, field "
                       r"'dram__bytes_read.sum'\)"):
        ncu_csv.read(_details(tmp_path, rows))


def test_a_zero_before_one_separator_shows_the_decimal_separator(tmp_path):
    """Groups of thousands never start with 0: "0,125" can only have a decimal comma and
    "0.001" a decimal point. "0,125" % was read as 125 % in a file whose other numbers did not
    show the style, and "117.344" ns as 117.344 ns; "0.001" in a file with decimal commas was
    read as 1."""
    rows = ['"Command line profiler metrics","gpu__time_duration.sum","ns","117.344",',
            '"Command line profiler metrics",'
            '"sm__warps_active.avg.pct_of_peak_sustained_active","%","0,125",',
            '"Command line profiler metrics","device__attribute_display_name","",'
            '"NVIDIA H100 80GB HBM3",']
    v = ncu_csv.read(_details(tmp_path, rows)).df.iloc[0]
    assert v["time_s"] == pytest.approx(117344e-9)
    assert v["achieved_occupancy"] == pytest.approx(0.00125)
    rows[1] = rows[1].replace("0,125", "0.001")
    v = ncu_csv.read(_details(tmp_path, rows)).df.iloc[0]
    assert v["time_s"] == pytest.approx(117.344e-9)
    assert v["achieved_occupancy"] == pytest.approx(0.00001)
    rows.append('"Command line profiler metrics","dram__bytes_read.sum","byte","27.595.520",')
    with pytest.raises(InputError, match=r"row 5: numbers written with a decimal comma "
                       r"\('27.595.520', row 5, field 'dram__bytes_read.sum'\) and with a "
                       r"decimal point \('0.001', row 3, field 'sm__warps_active"):
        ncu_csv.read(_details(tmp_path, rows))


@pytest.mark.parametrize("text, style", [
    ("65,77", "comma"), ("27.595.520", "comma"), ("1.234,5", "comma"), ("0,125", "comma"),
    ("-0,5", "comma"), ("+0,5", "comma"), ("117.34", "point"), ("1,234,567", "point"),
    ("4.0e-05", "point"), ("0.001", "point"), ("-0.5", "point"), ("117.344", None),
    ("1,234", None), ("64", None), ("535.104.05", None), ("fast", None)])
def test_the_style_a_number_shows(text, style):
    from gpuproj.profiles.readers._checks import _separator_style

    assert _separator_style(text) == style


def test_the_raw_page_under_a_decimal_comma_locale_reads_as_under_a_decimal_point_one(tmp_path):
    """The raw-page fixture with every number's separators swapped ("1,048,576" ->
    "1.048.576", "12.5" -> "12,5"), as ncu writes it under a German locale, reads the same."""
    out = []
    for ln in AUTO.read_text().splitlines():
        if ln.startswith('"') and not ln.startswith('"ID"') and not ln.startswith('""'):
            cells = next(csv.reader([ln]))
            # identity columns (11) and the device name stay as they are
            cells[12:] = [c.translate(str.maketrans(".,", ",.")) for c in cells[12:]]
            ln = ",".join(f'"{c}"' for c in cells)
        out.append(ln)
    swapped = _write(tmp_path, "\n".join(out) + "\n")
    assert swapped.read_text() != AUTO.read_text()
    a, b = ncu_csv.read(AUTO).df, ncu_csv.read(swapped).df
    num = a.select_dtypes("number").columns.drop("_row", errors="ignore")
    assert (a[num].fillna(-1) == b[num].fillna(-1)).all().all()


def test_method_all_names_the_methods_a_profile_cannot_feed(capsys):
    """A profile of times and launch sizes only (ncu's default details page) suits the
    baselines; ``--method all`` says which methods it left out and what they lack."""
    import io

    import pandas as pd
    from conftest import run_cli

    code, out, err = run_cli(capsys, "predict", str(REAL_DETAILS), "--source", "b200",
                             "--target", "h100-sxm5-80gb", "--method", "all", "--csv")
    assert code == 0, err
    assert "left out roofline needs flops or dram_bytes;" in err
    assert "quantitative needs 'warp_inst'" in err
    assert set(pd.read_csv(io.StringIO(out))["method"]) == {"same", "bandwidth", "compute"}
    # the SM count that differs from the catalog's: one line, no Python source location
    warned = [ln for ln in err.splitlines() if "152 SMs" in ln]
    assert len(warned) == 1 and warned[0].startswith("gpuproj: warning: ")
    assert "ncu-sm100-superbench-cublaslt-details.csv: row 26:" in warned[0]


def test_real_per_kernel_summary():
    """``--print-summary per-kernel``: a row per kernel, configuration and metric, with the
    minimum, maximum and average over the kernel's invocations, the units auto-scaled per
    kernel (us and ms, Mhz and Ghz)."""
    assert sniff(REAL_SUMMARY) == "ncu-csv"
    with pytest.raises(InputError, match="--source"):
        load(REAL_SUMMARY)  # the device shows only as its index, "0"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 20 SMs, as the catalog's Thor has
        t = load(REAL_SUMMARY, gpu="jetson-agx-thor")
    df = t.df.set_index("config")
    assert len(df) == 2 and not t.skipped
    wide = df.loc["grid=4096x1x1 block=256x1x1"]
    assert wide["launches"] == 14
    assert (wide["time_s"], wide["time_s_min"], wide["time_s_max"]) == pytest.approx(
        (89.32e-6, 57.79e-6, 124.77e-6))
    assert (wide["grid_blocks"], wide["block_threads"], wide["regs_per_thread"]) == (4096, 256, 16)
    assert wide["smem_per_block_bytes"] == 0
    assert wide["achieved_occupancy"] == pytest.approx(0.7634)
    assert wide["sm_clock_hz"] == pytest.approx(650.45e6)
    narrow = df.loc["grid=1048576x1x1 block=1x1x1"]
    assert (narrow["time_s"], narrow["time_s_min"], narrow["time_s_max"]) == pytest.approx(
        (3.78e-3, 3.40e-3, 4.08e-3))
    assert narrow["sm_clock_hz"] == pytest.approx(1.19e9)
    assert (narrow["launches"], narrow["_row"]) == (14, 46)
    with pytest.raises(InputError, match="compute capability 11.0") as e:
        load(REAL_SUMMARY, gpu="h100-sxm5-80gb")
    assert e.value.field == "CC"
    with pytest.raises(InputError, match="no launches to keep apart"):
        load(REAL_SUMMARY, gpu="jetson-agx-thor", per_launch=True)


def test_a_summary_under_a_decimal_comma_locale_counts_its_invocations_alike(tmp_path):
    """``Invocations`` "1.234" under a decimal comma is 1,234 launches, as "1,234" under a
    decimal point; it was read as 1.234 launches (the application's total 1000 x too small).
    A count that is no whole number is an error."""
    lines = REAL_SUMMARY.read_text().splitlines(keepends=True)
    # the same file under a German locale: every number in the statistics swapped
    out = []
    for ln in lines:
        if not ln.startswith('"') or ln.startswith('"ID"') or ln.startswith('"Process ID"'):
            out.append(ln)
            continue
        f = next(csv.reader([ln]))
        f[-3:] = [v.replace(",", "").replace(".", ",") for v in f[-3:]]
        out.append(",".join(f'"{v}"' for v in f) + "\n")
    point = "".join(lines).replace('"14"', '"1,234"')
    comma = "".join(out).replace('"14"', '"1.234"')
    assert '"1.234"' in comma and '"89,32"' in comma
    a = load(_write(tmp_path, point, "pt.csv"), gpu="jetson-agx-thor").df
    b = load(_write(tmp_path, comma, "de.csv"), gpu="jetson-agx-thor").df
    assert a["launches"].tolist() == b["launches"].tolist() == [1234, 1234]
    assert b["time_s"].tolist() == pytest.approx(a["time_s"].tolist())
    with pytest.raises(InputError, match="'1,5' is not a whole number of launches") as e:
        load(_write(tmp_path, comma.replace('"1.234"', '"1,5"', 1), "frac.csv"),
             gpu="jetson-agx-thor")
    assert e.value.field == "Invocations"


def test_summaries_of_one_kernel_from_two_processes_weigh_by_their_invocations(tmp_path):
    lines = REAL_SUMMARY.read_text().splitlines()
    first = [ln for ln in lines[1:] if '"(256, 1, 1)"' in ln]
    other = [ln.replace('"93269"', '"93270"').replace('"14"', '"6"')
             .replace('"57.79","124.77","89.32"', '"50.00","60.00","55.00"') for ln in first]
    f = tmp_path / "two.csv"
    f.write_text("\n".join([lines[0], *first, *other]) + "\n")
    row = load(f, gpu="jetson-agx-thor").df.iloc[0]
    assert row["launches"] == 20
    assert row["time_s"] == pytest.approx((14 * 89.32 + 6 * 55.0) / 20 * 1e-6)
    assert (row["time_s_min"], row["time_s_max"]) == pytest.approx((50e-6, 124.77e-6))
    assert row["achieved_occupancy"] == pytest.approx(0.7634)  # the same in both


def test_the_source_named_must_be_the_files_device():
    """``gpu=`` (``--source``) names the GPU where the device name is missing, ambiguous or
    unknown to the catalog; one that is another GPU than the file names is refused, as in the
    other readers (it replaced the name, and the compute capability cannot tell an H100 SXM
    from an H100 NVL or an H200)."""
    assert load(REAL_BASE).gpus == ["h100-sxm5-80gb"]
    for other in ("h100-nvl-94gb", "a100-sxm4-80gb"):
        with pytest.raises(InputError, match=f"measured on 'NVIDIA H100 80GB HBM3' "
                                             rf"\(h100-sxm5-80gb\), not on {other}") as e:
            load(REAL_BASE, gpu=other)
        assert e.value.field == "device__attribute_display_name"


def test_a_launch_without_a_value_of_a_metric_the_others_have_is_said(tmp_path):
    """One empty dram__bytes_read.sum cell (a damaged file) leaves that launch's DRAM bytes
    unknown, and a warning names the metric and the file row, where before nothing did and
    the projection of that kernel silently moved to another level."""
    import csv
    import io

    out, header, blanked = [], None, None
    for k, line in enumerate(BASE.read_text().splitlines(True), 1):
        if not line.startswith('"'):
            out.append(line)
            continue
        row = next(csv.reader([line]))
        if header is None:
            header = row
        elif row[0] and blanked is None and row[header.index("ID")] not in ("", "ID"):
            row[header.index("dram__bytes_read.sum")] = ""
            blanked = k
        buf = io.StringIO()
        csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(row)
        out.append(buf.getvalue())
    path = tmp_path / "blank.csv"
    path.write_text("".join(out))
    with pytest.warns(InputWarning, match=rf"1 of 4 launches have no value of "
                                          rf"dram__bytes_read.sum \(row {blanked}\)"):
        t = ncu_csv.read(path, per_launch=True)
    full = ncu_csv.read(BASE, per_launch=True)
    assert t.df["dram_read_bytes"].isna().sum() == 1 and full.df["dram_read_bytes"].notna().all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the whole file: no warning
        ncu_csv.read(BASE)


def test_a_gpu_given_must_be_the_one_the_profile_names():
    # gpu= (--source) replaced the file's device name: an H100 profile read as an H200's, which
    # the compute-capability check cannot tell apart
    from gpuproj.errors import InputError
    from gpuproj.profiles import load

    path = Path(__file__).parent / "data" / "ncu-h100-sxm5-80gb-raw-base.csv"
    assert load(path, gpu="h100-sxm5-80gb").gpus == ["h100-sxm5-80gb"]
    with pytest.raises(InputError, match=r"field 'device__attribute_display_name': measured on "
                                         r"'NVIDIA H100 80GB HBM3' \(h100-sxm5-80gb\), not on "
                                         "h200-sxm-141gb"):
        load(path, gpu="h200")
