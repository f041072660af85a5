"""Pictures: the numbers behind the roofline, projection and evaluation pictures (hand-computed),
that every picture renders with units, a legend and no overlapping text, and the CLI commands."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import make_gpu, run_cli, table

from gpuproj.cli.main import cli
from gpuproj.errors import InputError
from gpuproj.evaluate import Evaluation
from gpuproj.models import get_model
from gpuproj.models.hierarchical import Hierarchical
from gpuproj.predict import PredictionSet

SRC = make_gpu(
    "src",
    values={"warp_size": 32, "shared_banks": 32, "shared_bank_width_bytes": 4},
    peak={"fp32_fma_flops_per_s": 10e12, "fp32_addmul_flops_per_s": 5e12,
          "dram_bw_bytes_per_s": 1.25e12, "l2_bw_bytes_per_s": 4e12, "l1_bw_bytes_per_s": 16e12,
          "shared_bw_bytes_per_s": 16e12},
    measured={"dram_bw_bytes_per_s": 1e12},
)
TGT = make_gpu(
    "tgt",
    values={"warp_size": 32, "shared_banks": 32, "shared_bank_width_bytes": 4},
    peak={"fp32_fma_flops_per_s": 20e12, "fp32_addmul_flops_per_s": 10e12,
          "dram_bw_bytes_per_s": 2.5e12, "l2_bw_bytes_per_s": 6e12, "l1_bw_bytes_per_s": 20e12,
          "shared_bw_bytes_per_s": 20e12},
    measured={"dram_bw_bytes_per_s": 2e12},
)


def kernel_table(**over):
    """Van Lanker's quantities for one FP32 kernel: FLOP = 2*1e9 + 0.5e9 + 0.5e9 = 3e9."""
    cols = {"time_s": [2e-3], "fp32_fma_thread_inst": [1e9], "fp32_add_thread_inst": [0.5e9],
            "fp32_mul_thread_inst": [0.5e9], "warp_inst": [1e8], "thread_inst": [1.6e9],
            "dram_bytes": [1e9], "dram_read_bytes": [0.5e9], "dram_write_bytes": [0.5e9],
            "l2_bytes": [2e9], "l1_bytes": [4e9]}
    cols.update(over)
    return table(**cols)


# the numbers -------------------------------------------------------------------------------
def test_ceilings_hand_example():
    """Eq. 2: mix = 10e12 x 0.5 + 5e12 x 0.5 = 7.5e12; Eq. 3: usage 1.6e9 / (1e8 x 32) = 0.5
    -> 3.75e12. Hits DRAM 1e9, L2 1e9, L1 2e9; t_dram = 1e-3 (measured 1e12), t_l2 = 2.5e-4,
    t_l1 = 1.25e-4: BW_L2 = 2e9 / 1.25e-3 = 1.6e12, BW_L1 = 4e9 / 1.375e-3. OI (Eq. 10):
    DRAM 3e9/1e9 = 3, L2 3e9/2e9 = 1.5, L1 3e9/4e9 = 0.75."""
    c = Hierarchical().ceilings(kernel_table().df, SRC)
    assert c["fma_flops_per_s"][0] == 10e12
    assert c["addmul_flops_per_s"][0] == 5e12
    assert c["mix_flops_per_s"][0] == pytest.approx(7.5e12)
    assert c["warp_usage"][0] == pytest.approx(0.5)
    assert c["perf_ceil_flops_per_s"][0] == pytest.approx(3.75e12)
    assert c["bw_dram_bytes_per_s"][0] == pytest.approx(1e12)
    assert c["bw_l2_bytes_per_s"][0] == pytest.approx(1.6e12)
    assert c["bw_l1_bytes_per_s"][0] == pytest.approx(4e9 / 1.375e-3)
    assert [c[f"oi_{lvl}_flop_per_byte"][0] for lvl in ("dram", "l2", "l1")] == pytest.approx(
        [3, 1.5, 0.75])
    assert c["roof_dram_flops_per_s"][0] == pytest.approx(3e12)  # min(1e12 x 3, 3.75e12)
    assert c["roof_l1_flops_per_s"][0] == pytest.approx(min(4e9 / 1.375e-3 * 0.75, 3.75e12))
    assert c["dtype"][0] == "fp32"
    assert any("peak" in n for n in c["notes"])  # L2/L1 of src are datasheet values


def test_roofline_data_matches_the_model():
    """The projected interval drawn is the one `gpuproj predict` gives (same Eq. 9)."""
    from gpuproj.plots.roofline import roofline_data

    t = kernel_table()
    d = roofline_data(t, SRC, TGT)
    k = d["kernels"][0]
    assert k["perf_flops_per_s"] == pytest.approx(3e9 / 2e-3)
    p = get_model("hierarchical").predict(t, SRC, TGT).df.iloc[0]
    assert k["point_s"] == pytest.approx(p["time_s"], rel=1e-12)
    assert k["low_s"] == pytest.approx(p["low_s"], rel=1e-12)
    assert k["high_s"] == pytest.approx(p["high_s"], rel=1e-12)
    # DRAM level by hand: roof_s = 3e12, roof_t = min(2e12 x 3, 7.5e12) = 6e12 -> x2
    assert k["projected_flops_per_s"]["dram"] == pytest.approx(1.5e12 * 2)
    assert d["hardware"]["src"]["shared_bw_bytes_per_s"] == 16e12


def test_roofline_data_skips_kernels_without_flops_or_bytes():
    from gpuproj.plots.roofline import roofline_data, roofline_figure

    t = table(kernel=["a", "b", "c"], time_s=[1e-3] * 3, dram_bytes=[1e9, np.nan, np.nan],
              flops=[np.nan, 2e9, 2e9], l2_bytes=[np.nan, np.nan, 4e9])
    d = roofline_data(t, SRC)
    # c has bytes at L2 only: it stays
    assert [k["kernel"] for k in d["kernels"]] == ["c"]
    assert [s.split(":")[1] for s in d["skipped"]] == [" no FLOP count, so no operational "
                                                       "intensity", " no byte count, so no "
                                                       "operational intensity"]
    d = roofline_data(t.select("a|b"), SRC)  # KernelTuner-like: FLOPs, no bytes
    with pytest.raises(InputError, match=r"nothing to draw: every kernel row was skipped \(2 "
                                         r"row\(s\); the first: a \[c\]: no FLOP count"):
        roofline_figure(d)


def test_roofline_data_measured_target_row():
    from gpuproj.plots.roofline import roofline_data

    base = kernel_table().df
    other = base.copy()
    other["gpu"], other["time_s"] = "tgt", 1.2e-3
    other["flops"] = 1.5 * base["flops"]  # its own count: the star's FLOP/s are of it
    from gpuproj.profiles.table import ProfileTable

    t = ProfileTable.from_frame(pd.concat([base, other], ignore_index=True))
    d = roofline_data(t, SRC, TGT)
    k = d["kernels"][0]
    assert k["measured_target_time_s"] == 1.2e-3
    assert k["measured_target_flops"] == pytest.approx(1.5 * base["flops"][0])
    assert k["measured_target_oi"]["dram"] == pytest.approx(4.5)
    # each ceiling says whether it is a peak, measured or derived
    # SRC's DRAM bandwidth is measured (by the benchmark of TGT's too); its L2, L1 and FP32
    # ceilings are peaks, and TGT measured none of them to derive from; no FP64 or FP16 value
    kinds = d["hardware"][SRC.id]["kinds"]
    assert kinds == {"dram_bw_bytes_per_s": "measured", "l2_bw_bytes_per_s": "peak",
                     "l1_bw_bytes_per_s": "peak", "fp32_fma_flops_per_s": "peak",
                     "fp32_addmul_flops_per_s": "peak", "fp64_fma_flops_per_s": "missing",
                     "fp64_addmul_flops_per_s": "missing", "fp16_fma_flops_per_s": "missing",
                     "fp16_addmul_flops_per_s": "missing"}
    assert d["hardware"][SRC.id]["shared_bw_kind"] == "peak"
    # a source whose L2 was measured makes the target's peak a derived ceiling:
    # 6e12 x (3.2e12 / 4e12) = 4.8e12
    src_l2 = make_gpu("src2", peak={k: e.value for k, e in SRC.peaks.items()},
                      measured={"dram_bw_bytes_per_s": 1e12, "l2_bw_bytes_per_s": 3.2e12})
    t2 = ProfileTable.from_frame(pd.concat([base.assign(gpu="src2"), other], ignore_index=True))
    d2 = roofline_data(t2, src_l2, TGT)
    assert d2["hardware"]["tgt"]["kinds"]["l2_bw_bytes_per_s"] == "derived"
    assert TGT.ceiling("l2_bw_bytes_per_s", src_l2).value == pytest.approx(4.8e12)


def test_roofline_fp16_ceiling_kind_is_what_the_model_used():
    """A target without an FP16 rate takes its FP32 one x the source's measured FP16/FP32
    ratio for an FP16 kernel (``_flop_ceiling``); the line drawn and its legend's kind say so,
    where they said "missing" and drew no FMA line while the mix used the derived rate. Without
    the source's measured ratio, the FP32 rate stands in: kind "instead"."""
    from gpuproj.plots.roofline import roofline_data
    from gpuproj.profiles.table import ProfileTable

    fp16 = kernel_table(fp32_fma_thread_inst=[0.0], fp32_add_thread_inst=[0.0],
                        fp32_mul_thread_inst=[0.0], fp16_fma_thread_inst=[1e9],
                        fp16_flops=[2e9], flops=[2e9]).df
    src16 = make_gpu("src16", values={"warp_size": 32},
                     peak={k: e.value for k, e in SRC.peaks.items()},
                     measured={"fp32_fma_flops_per_s": 8e12, "fp16_fma_flops_per_s": 16e12})
    t = ProfileTable.from_frame(fp16.assign(gpu="src16"))
    d = roofline_data(t, src16, TGT)
    assert d["hardware"]["tgt"]["kinds"]["fp16_fma_flops_per_s"] == "derived"
    # TGT's FP32 ceiling 20e12 x 8e12 / 10e12 (derived from src16's measured/peak), x the
    # FP16/FP32 ratio 16e12 / 8e12
    assert d["kernels"][0]["target"]["fma_flops_per_s"] == pytest.approx(32e12)
    d = roofline_data(ProfileTable.from_frame(fp16), SRC, TGT)
    assert d["hardware"]["tgt"]["kinds"]["fp16_fma_flops_per_s"] == "instead"
    assert d["kernels"][0]["target"]["fma_flops_per_s"] == pytest.approx(20e12)


def test_roofline_figure_of_a_target_without_a_finite_roof():
    """A target without an FP32 ADD/MUL peak projects no level (its mix ceiling is unknown),
    and its measured row has no bytes: the star goes at the kernel's own OIs on the target.
    The figure raised UnboundLocalError."""
    from gpuproj.plots.roofline import roofline_data, roofline_figure
    from gpuproj.profiles.table import ProfileTable

    noadd = make_gpu("tgt2", values={"warp_size": 32},
                     peak={"fp32_fma_flops_per_s": 20e12, "dram_bw_bytes_per_s": 2.5e12,
                           "l2_bw_bytes_per_s": 6e12, "l1_bw_bytes_per_s": 20e12})
    base = kernel_table().df
    other = base.assign(gpu="tgt2", time_s=1e-3)
    for c in ("dram_bytes", "l2_bytes", "l1_bytes", "dram_read_bytes", "dram_write_bytes"):
        other[c] = np.nan
    d = roofline_data(ProfileTable.from_frame(pd.concat([base, other], ignore_index=True)),
                      SRC, noadd)
    assert d["kernels"][0]["projected_flops_per_s"] == {}
    fig = roofline_figure(d)
    stars = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_marker() == "*"]
    oi = d["kernels"][0]["target"]
    assert sorted(stars[0].get_xdata()) == sorted(
        oi[f"oi_{lvl}_flop_per_byte"] for lvl in ("dram", "l2", "l1"))


def markers_inside(ax):
    """Whether every marker (a point, not a line) of ``ax`` lies within its axis limits."""
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    pts = [(x, y) for ln in ax.get_lines() if ln.get_marker() not in (None, "None", "")
           for x, y in zip(ln.get_xdata(), ln.get_ydata())]
    assert pts
    return all(x0 <= x <= x1 and y0 <= y <= y1 for x, y in pts)


def test_roofline_shows_a_row_faster_than_its_ceilings():
    """A source row at 3x its FMA peak (counts in doubt: the report warns of such rows)
    projects at 2.7-3x the target's; the y axis stopped at 2.5x the peak and cut the
    projected points, interval and point off."""
    from gpuproj.plots.roofline import roofline_data, roofline_figure

    d = roofline_data(kernel_table(time_s=[1e-4]), SRC, TGT)
    assert d["kernels"][0]["perf_flops_per_s"] == pytest.approx(3e13)
    assert max(d["kernels"][0]["projected_flops_per_s"].values()) == pytest.approx(6e13)
    fig = roofline_figure(d)
    assert all(markers_inside(ax) for ax in fig.axes[:2])


def test_roofline_shows_the_target_measured_at_its_own_intensity():
    """The target's row with 1000x fewer DRAM bytes (its L2 holds the working set) puts its
    star at DRAM OI 3000; the x axis, made of the source's OIs and ridge points, stopped at
    60 and cut it off."""
    from gpuproj.plots.roofline import roofline_data, roofline_figure
    from gpuproj.profiles.table import ProfileTable

    base = kernel_table().df
    other = base.assign(gpu="tgt", time_s=1e-3, dram_bytes=1e6, dram_read_bytes=5e5,
                        dram_write_bytes=5e5)
    d = roofline_data(ProfileTable.from_frame(pd.concat([base, other], ignore_index=True)),
                      SRC, TGT)
    assert d["kernels"][0]["measured_target_oi"]["dram"] == pytest.approx(3000)
    fig = roofline_figure(d)
    assert all(markers_inside(ax) for ax in fig.axes[:2])
    assert fig.axes[0].get_xlim() == fig.axes[1].get_xlim()


# the pictures ------------------------------------------------------------------------------
def text_overlaps(fig):
    """Pairs of visible, non-empty texts of ``fig`` whose boxes intersect (in pixels)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    hidden = set()  # tick labels of ticks outside the view limits are not drawn
    for ax in fig.axes:
        for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = min(lo, hi), max(lo, hi)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not (lo - 1e-12 * abs(lo) <= tick.get_loc() <= hi + 1e-12 * abs(hi)):
                    hidden.update({id(tick.label1), id(tick.label2)})
    boxes = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip() or id(t) in hidden:
            continue
        ax = t.axes
        if ax is not None and not ax.get_visible():
            continue
        bb = t.get_window_extent(r)
        if bb.width == 0 or bb.height == 0:
            continue
        boxes.append((t.get_text(), bb.shrunk(0.97, 0.9)))
    bad = []
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            if boxes[i][1].overlaps(boxes[j][1]):
                bad.append((boxes[i][0], boxes[j][0]))
    return bad


def assert_readable(fig):
    """Every visible axes has labels with units in parentheses; there is a legend or a colour
    bar; no two texts overlap; no text is smaller than 8 pt."""
    from matplotlib.text import Text

    axes = [a for a in fig.axes if a.get_visible() and a.get_label() != "<colorbar>"]
    assert axes
    for a in axes:
        # categorical axes (kernels, GPUs) have no unit
        x = a.get_xlabel()
        assert "(" in x or x.startswith("kernel") or "GPU" in x, x
        assert "(" in a.get_ylabel() or "GPU" in a.get_ylabel(), a.get_ylabel()
    assert fig.legends or any(a.get_legend() for a in axes) or len(fig.axes) > len(axes)
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip():
            assert t.get_fontsize() >= 8, t.get_text()
    assert text_overlaps(fig) == []


def test_roofline_legend_says_why_a_level_has_no_line():
    """A target without an L2 bandwidth has no L2 line, and no L1 line either: the L1's
    ceiling (Eq. 6) counts the time of the bytes that pass on to the L2. The legend tells the
    two apart."""
    from gpuproj.plots.roofline import roofline_data, roofline_figure

    tgt = make_gpu("tgt", values={"warp_size": 32, "shared_banks": 32,
                                  "shared_bank_width_bytes": 4},
                   peak={k: v.value for k, v in TGT.peaks.items() if k != "l2_bw_bytes_per_s"},
                   measured={"dram_bw_bytes_per_s": 2e12})
    fig = roofline_figure(roofline_data(kernel_table(), SRC, tgt))
    labels = [x.get_text() for x in fig.axes[1].get_legend().get_texts()]
    assert "L2: no bandwidth in the catalog" in labels
    assert "L1: no ceiling without the bandwidth of a level below" in labels
    assert not any(lb.startswith(("L1 ceiling", "L2 ceiling")) for lb in labels)


def test_roofline_picture(tmp_path):
    from gpuproj.plots.roofline import roofline, roofline_data, roofline_figure

    t = kernel_table()
    fig = roofline_figure(roofline_data(t, SRC, TGT))
    assert_readable(fig)
    src_ax, tgt_ax = fig.axes[:2]
    assert src_ax.get_xlabel() == "Operational intensity (FLOP/byte)"
    assert src_ax.get_ylabel() == "Performance (TFLOP/s)"
    labels = [x.get_text() for x in tgt_ax.get_legend().get_texts()]
    assert any(lb.startswith("projected interval") for lb in labels)
    assert any(lb.startswith("warp usage 0.50 (Eq. 3)") for lb in labels)
    assert any(lb.startswith("L1 ceiling (Eq. 6)") for lb in labels)
    for ext in ("png", "svg"):
        roofline(t, tmp_path / f"r.{ext}", SRC, TGT)
        assert (tmp_path / f"r.{ext}").stat().st_size > 10_000
    with pytest.raises(InputError, match="picture format"):
        roofline(t, tmp_path / "r.txt", SRC)


def prediction_set(methods=("hierarchical",)):
    t = table(kernel=["small", "big"], time_s=[2e-6, 5e-3], flops=[1e6, 3e9],
              dram_bytes=[1e6, 1e9])
    preds = {m: get_model(m).predict(t, SRC, [TGT]) for m in methods}
    return t, PredictionSet(["src"], ["tgt"], preds, [])


def test_projection_bars(tmp_path):
    from gpuproj.plots.projection import projection_bars, projection_figure

    _, result = prediction_set(("hierarchical", "roofline"))
    # the target's time as the profile holds it (``predict`` reads it from a profile with
    # the target's rows: the next test)
    result.measured = pd.DataFrame({"kernel": ["big"], "config": ["c"], "target": ["tgt"],
                                    "measured_s": [2e-3]})
    fig, d = projection_figure(result)
    assert_readable(fig)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"  # 2 us next to 5 ms
    assert ax.get_ylabel() == "Time per launch (ms)"
    assert d.loc[d["kernel"] == "big", "measured_s"].tolist() == [2e-3, 2e-3]
    assert np.isnan(d.loc[d["kernel"] == "small", "measured_s"]).all()
    labels = [x.get_text() for x in fig.legends[0].get_texts()]
    assert "measured on tgt" in labels  # no catalog name: the id
    # one memory level: neither method has an interval to draw
    assert {"hierarchical: predicted point", "roofline: predicted point"} <= set(labels)
    assert len(labels) == len(set(labels))  # each entry once, whatever the panels
    out = projection_bars(result, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 10_000 and len(out) == 4


def test_projection_legend_names_an_interval_where_one_is_drawn():
    """Every method's entry read "predicted point and interval", also of a method whose
    interval is its point (low = high: roofline, or one memory level), which draws none."""
    from gpuproj.plots.projection import projection_figure

    t = kernel_table()  # three memory levels: hierarchical projects an interval
    result = PredictionSet(["src"], ["tgt"], {m: get_model(m).predict(t, SRC, [TGT])
                                              for m in ("hierarchical", "roofline")}, [])
    d = result.table().set_index("method")
    assert d.at["hierarchical", "low_s"] < d.at["hierarchical", "high_s"]
    assert d.at["roofline", "low_s"] == d.at["roofline", "high_s"]
    fig, _ = projection_figure(result)
    labels = [x.get_text() for x in fig.legends[0].get_texts()]
    assert {"hierarchical: predicted point and interval", "roofline: predicted point"} <= set(
        labels)


def test_projection_bars_many_kernels_keeps_the_largest():
    from gpuproj.plots.projection import projection_frame

    n = 40
    t = table(kernel=[f"k{i:02d}" for i in range(n)], time_s=list(np.arange(1, n + 1) * 1e-4),
              flops=[1e9] * n, dram_bytes=[1e9] * n)
    result = PredictionSet(["src"], ["tgt"], {"hierarchical": get_model("hierarchical").predict(
        t, SRC, [TGT])}, [])
    d, total = projection_frame(result, max_kernels=30)
    assert total == 40 and min(d["kernel"]) == "k10"


def evaluation():
    """Hand-made pairs: method a is off by +10 % and -20 %, method b by +50 %."""
    rows = [("a", "k1", "g1", "g2", 1.1e-3, 1e-3), ("a", "k2", "g2", "g1", 0.8e-3, 1e-3),
            ("a", "k3", "g1", "g2", 1.0e-4, 1e-4), ("b", "k1", "g1", "g2", 1.5e-3, 1e-3),
            ("b", "k2", "g2", "g1", 3e-4, 2e-4)]
    d = pd.DataFrame(rows, columns=["method", "kernel", "source", "target", "time_s", "true_s"])
    d["config"], d["limiter"] = "c", "dram"
    d["low_s"], d["high_s"] = d["time_s"] * 0.9, d["time_s"] * 1.1
    return Evaluation(d, [])


def test_pair_errors_are_medians_per_pair():
    from gpuproj.plots.evaluation import pair_errors

    ev = evaluation()
    tab = pair_errors(ev.pairs[ev.pairs["method"] == "a"])
    assert tab.loc["g1", "g2"] == pytest.approx(5.0)  # median of 10 % and 0 %
    assert tab.loc["g2", "g1"] == pytest.approx(20.0)


def test_evaluation_plots(tmp_path):
    from gpuproj.plots.evaluation import (
        cdf_figure,
        evaluation_plots,
        heatmap_figure,
        scatter_figure,
    )

    ev = evaluation()
    paths = evaluation_plots(ev, tmp_path / "ev")
    names = sorted(p.name for p in paths)
    assert names == ["error_cdf.png", "pair_error_a.png", "pair_error_b.png",
                     "predicted_vs_measured.png"]
    for fig in (scatter_figure(ev.pairs), cdf_figure(ev.pairs),
                heatmap_figure(ev.pairs[ev.pairs["method"] == "a"], "a")):
        assert_readable(fig)
    sc = scatter_figure(ev.pairs)
    assert sc.axes[0].get_title().startswith("a\nn = 3")  # best method first
    labels = [x.get_text() for x in sc.axes[0].get_legend().get_texts()]
    assert "±10 %" in labels and "±25 %" in labels
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="directory"):
        evaluation_plots(ev, tmp_path / "file")


def test_error_cdf_draws_methods_with_the_same_errors_as_one_curve():
    """Two methods whose curves coincide share one legend entry; a third keeps its own."""
    from gpuproj.plots.evaluation import cdf_figure

    d = evaluation().pairs
    same = d[d["method"] == "a"].assign(method="c")
    fig = cdf_figure(pd.concat([d, same], ignore_index=True))
    labels = [x.get_text() for x in fig.axes[0].get_legend().get_texts()]
    assert labels == ["a = c (median 10.0 %)", "b (median 50.0 %)"]
    assert len(fig.axes[0].get_lines()) == 2 + 2  # two curves, the 10 % and 25 % marks


def test_pair_error_map_of_many_gpus_stays_readable():
    """The cell values of a 20-GPU map: 8 pt, no overlaps (6.5 pt once, above 14 GPUs)."""
    from gpuproj.plots.evaluation import heatmap_figure

    gpus = [f"gpu-{i:02d}" for i in range(20)]
    rows = [{"kernel": "k", "config": "c", "method": "a", "source": s, "target": t,
             "time_s": 1.1e-3 + 1e-5 * i, "true_s": 1e-3}
            for i, (s, t) in enumerate((s, t) for s in gpus for t in gpus if s != t)]
    fig = heatmap_figure(pd.DataFrame(rows), "a")
    assert_readable(fig)
    assert sum(t.get_fontsize() == 8 for t in fig.axes[0].texts) == 20 * 19


def test_evaluation_scatter_becomes_density_for_many_pairs():
    from matplotlib.collections import PolyCollection

    from gpuproj.plots.evaluation import DENSE, scatter_figure

    rng = np.random.default_rng(1)
    n = DENSE + 1
    true = 10 ** rng.uniform(-5, -2, n)
    d = pd.DataFrame({"method": "m", "source": "g1", "target": "g2", "true_s": true,
                      "time_s": true * np.exp(rng.normal(0, 0.2, n))})
    fig = scatter_figure(d)
    assert any(isinstance(c, PolyCollection) for c in fig.axes[0].collections)



@pytest.mark.parametrize("methods,n", [(1, 300), (2, 300), (3, 300), (2, 150000)])
def test_evaluation_scatter_keeps_its_titles_and_labels_inside(tmp_path, methods, n):
    # square panels in a figure 4.4 in high per row pushed the two-line titles and the x
    # labels of 2 or 3 panels against the edges, and a title ran under its colour bar
    from PIL import Image

    from gpuproj.plots._style import save
    from gpuproj.plots.evaluation import scatter_figure

    rng = np.random.default_rng(1)
    true = 10 ** rng.uniform(-5, -2, n)
    d = pd.concat([pd.DataFrame({"method": f"method-{i}", "source": "g1", "target": "g2",
                                 "true_s": true, "time_s": true * np.exp(rng.normal(0, 0.2, n))})
                   for i in range(methods)])
    fig = scatter_figure(d)
    im = np.asarray(Image.open(save(fig, tmp_path / "s.png")).convert("L"))
    assert all((edge < 128).sum() == 0 for edge in (im[0], im[-1], im[:, 0], im[:, -1]))
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    for ax in fig.axes[:methods]:  # the panels (the colour bars come after them)
        title = ax.title.get_window_extent(r)
        assert not any(title.overlaps(c.get_window_extent(r)) for c in fig.axes[methods:])

# the commands ------------------------------------------------------------------------------
PROFILE = """kernel,config,gpu,time_s,fp32_fma_thread_inst,fp32_add_thread_inst,\
fp32_mul_thread_inst,warp_inst,thread_inst,dram_bytes,dram_read_bytes,dram_write_bytes,\
l2_bytes,l1_bytes
stencil,n=1024,v100-sxm2-16gb,2e-3,1e9,5e8,5e8,1e8,3.2e9,1e9,5e8,5e8,2e9,4e9
stencil,n=1024,a100-sxm4-40gb,1.3e-3,1e9,5e8,5e8,1e8,3.2e9,1e9,5e8,5e8,2e9,4e9
"""


@pytest.fixture
def profile(tmp_path):
    p = tmp_path / "prof.csv"
    p.write_text(PROFILE)
    return p


def test_cli_roofline(profile, tmp_path):
    import json

    out = tmp_path / "rl.png"
    r = CliRunner().invoke(cli, ["roofline", str(profile), "--format", "measurement", "--gpu",
                                 "V100-SXM2-16GB", "--target", "A100-SXM4-40GB", "-o", str(out),
                                 "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["gpu"] == "v100-sxm2-16gb" and data["target"] == "a100-sxm4-40gb"
    assert data["kernels"][0]["measured_target_time_s"] == 1.3e-3
    assert out.stat().st_size > 10_000


def test_cli_predict_plot(profile, tmp_path):
    out = tmp_path / "bars.png"
    r = CliRunner().invoke(cli, ["predict", str(profile), "--format", "measurement", "--source",
                                 "v100-sxm2-16gb", "--target", "a100-sxm4-40gb", "--json",
                                 "--plot", str(out)])
    assert r.exit_code == 0, r.output
    assert out.stat().st_size > 10_000


def test_targets_compared_by_application_total(tmp_path):
    """Real data (the Amaris et al. bpnn_adjust_weights excerpt, 9 GPUs): from the Tesla K40 to
    the other eight, every target has every row measured, so each has a measured total; the
    rows are the first method's targets fastest first."""
    from pathlib import Path

    from gpuproj.plots.targets import targets_chart, targets_figure
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    t = load(Path(__file__).parent / "data" / "amaris-9gpus-bpnn_adjust_weights.csv")
    others = [g for g in t.gpus if g != "tesla-k40"]
    result = predict(t, source="tesla-k40", targets=others, methods=["bandwidth", "same"])
    fig, d = targets_figure(result)
    assert_readable(fig)
    first = d[d["method"] == "bandwidth"]
    assert list(first["time_s"]) == sorted(first["time_s"])
    rows = t.df[t.df["gpu"] == "tesla-p100-pcie-16gb"]
    p100 = d.loc[d["target"] == "tesla-p100-pcie-16gb", "measured_s"]
    assert p100.tolist() == pytest.approx([(rows["time_s"] * rows["launches"].fillna(1)).sum()]
                                          * 2)
    ax = fig.axes[0]
    ticks = sorted(zip(ax.get_yticks(), (x.get_text() for x in ax.get_yticklabels())))
    # the bandwidth ratio's speed-ups: P100 732 / K40 288 GB/s = 2.54 on top, the Quadro K5200's
    # 192 / 288 = 0.67 at the bottom
    assert len(ticks) == 8 and ticks[-1][1] == "Tesla P100 PCIe 16GB  2.54x"
    assert ticks[0][1] == "Quadro K5200  0.67x"
    legend = [x.get_text() for x in fig.legends[0].get_texts()]
    assert "measured on the target" in legend and len(legend) == len(set(legend))
    out = targets_chart(result, tmp_path / "t.svg")
    assert (tmp_path / "t.svg").stat().st_size > 10_000 and len(out) == 16


def test_cli_predict_plot_compares_many_targets(tmp_path):
    from gpuproj.plots import MAX_PANELS

    targets = "h100*,h200*,mi3*"  # nine GPUs
    out = tmp_path / "cmp.png"
    r = CliRunner().invoke(cli, ["predict", "examples/rodinia-p100-nvprof.csv", "-t", targets,
                                 "--plot", str(out), "--json"])
    assert r.exit_code == 0, r.output
    import json

    import matplotlib.image

    assert len(json.loads(r.stdout)["targets"]) == 9 > MAX_PANELS
    # one row per target, not one panel per target: wider than tall
    h, w = matplotlib.image.imread(out).shape[:2]
    assert w > h


def test_cli_evaluate_plot(profile, tmp_path):
    out = tmp_path / "ev"
    r = CliRunner().invoke(cli, ["evaluate", str(profile), "--format", "measurement", "--method",
                                 "hierarchical,roofline", "--json", "--plots", str(out)])
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in out.iterdir())
    assert "error_cdf.png" in names and "predicted_vs_measured.png" in names
    assert "pair_error_hierarchical.png" in names


def test_predict_and_evaluate_say_what_they_drew_as_roofline_does(tmp_path, capsys):
    """`predict --plot` and `evaluate --plots` wrote their pictures without a word, where
    roofline, quadrant and report say `wrote ...` on stderr; with --json, as theirs, nothing
    (--csv keeps it: stdout holds the CSV alone)."""
    bars, many, ev = tmp_path / "bars.png", tmp_path / "many.png", tmp_path / "ev"
    for args, said in (
            (["predict", "examples/rodinia-p100-nvprof.csv", "-t", "h200", "--plot", str(bars)],
             f"wrote {bars} (3 of 3 kernel rows)"),
            (["predict", "examples/rodinia-p100-nvprof.csv", "-t", "h100*,h200*,mi3*",
              "--plot", str(many), "--csv"], f"wrote {many} (the application totals of 9 "
                                             "targets)"),
            (["evaluate", str(Path(__file__).parent / "data" /
                              "amaris-9gpus-bpnn_adjust_weights.csv"), "-m", "bandwidth",
              "--plots", str(ev)], f"wrote 3 pictures to {ev}")):
        code, _, err = run_cli(capsys, *args)
        assert code == 0 and err.splitlines()[-1] == said, err
        code, out, err = run_cli(capsys, *args[:-1] if args[-1] == "--csv" else args, "--json")
        assert code == 0 and json.loads(out) and "wrote" not in err


def test_cli_quadrant(profile, tmp_path):
    import json

    out = tmp_path / "q.svg"
    r = CliRunner().invoke(cli, ["quadrant", "--gpus", "V100-SXM2-16GB,A100-SXM4-40GB",
                                 "--profile", str(profile), "--format", "measurement",
                                 "--source", "v100-sxm2-16gb", "--intensity", "100",
                                 "-o", str(out), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    # FLOP = 2e9 + 5e8 + 5e8 = 3e9 over 1e9 DRAM bytes: I = 3 FLOP/B
    assert data["kernels"][0]["intensity_flop_per_byte"] == pytest.approx(3.0)
    assert [k["intensity_flop_per_byte"] for k in data["kernels"]][1] == 100
    # V100 peak: 15.7 TFLOP/s over 900 GB/s -> ridge 17.4 FLOP/B: memory-bound at 3, not 100
    assert data["kernels"][0]["bound"]["v100-sxm2-16gb"] == "memory"
    assert data["kernels"][1]["bound"]["v100-sxm2-16gb"] == "compute"
    assert out.read_text().startswith("<?xml")


def test_quadrant_draws_the_intensities_asked_for_beside_many_rows():
    """--intensity lines came after the profile's rows: with six rows or more they were not
    drawn, unsaid. They are, and the longest rows take the lines left."""
    from gpuproj.plots.quadrant import MAX_KERNELS, data_figure, quadrant_data

    n = MAX_KERNELS + 2
    rows = table(kernel=[f"k{i}" for i in range(n)], fp32_flops=[1e9] * n,
                 dram_bytes=[1e8] * n, time_s=[1e-3 * (i + 1) for i in range(n)],
                 gpu=["h100-sxm5-80gb"] * n)
    data = quadrant_data(["h100-sxm5-80gb", "a100-sxm4-80gb"], rows,
                         kernels=[("I = 100 FLOP/B", 100.0)])
    assert [k["from_profile"] for k in data["kernels"]] == [True] * n + [False]
    data_figure(data)
    assert data["shown"] == [f"k{i} [c]" for i in range(n - 1, n - MAX_KERNELS, -1)] + [
        "I = 100 FLOP/B"]


def test_quadrant_note_clear_of_points_and_arrows():
    """The quadrant-split note must not cross a GPU point or arrow, also for a GPU with much
    compute and little bandwidth (L40: top left) and with the H200 far right (its arrow ran
    through the old note in the compute-bound corner)."""
    from matplotlib.patches import FancyArrowPatch

    from gpuproj.plots.quadrant import data_figure, quadrant_data

    gpus = ["tesla-p100-pcie-16gb", "l40", "a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb"]
    fig = data_figure(quadrant_data(gpus, kernels=[("low", 0.6), ("mid", 7.5)]))
    assert_readable(fig)
    ax = fig.axes[0]
    r = fig.canvas.get_renderer()
    note = next(t for t in ax.texts if "memory-bound" in t.get_text())
    box = note.get_window_extent(r)
    arrows = [getattr(t, "arrow_patch", None) for t in ax.texts]
    marks = [a.get_window_extent(r) for a in arrows if isinstance(a, FancyArrowPatch)]
    marks += [ln.get_window_extent(r) for ln in ax.lines if ln.get_marker() == "o"]
    assert len(marks) == 2 * len(gpus)
    assert not [m for m in marks if m.overlaps(box)]


# what the third fuzzing round found --------------------------------------------------------
EXAMPLE = "examples/rodinia-p100-nvprof.csv"


def one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuproj: error: "), err
    return lines[0]


@pytest.mark.parametrize("target", ["h200-sxm-141gb", "a100-sxm4-80gb"])
def test_roofline_point_is_predicts_time(target):
    """docs/pictures.md: the roofline's projected point is `predict -m hierarchical`'s time.
    The P100 has no measured ceilings: both derive them from the target's measured/peak
    ratios, so the source's panel differs with the target (DRAM 666 GB/s against the H200,
    631 against the A100, not the 732 of the datasheet)."""
    from gpuproj.plots.roofline import roofline_data
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    t = load(EXAMPLE)
    d = roofline_data(t, "tesla-p100-pcie-16gb", target)
    p = predict(t, targets=[target], methods=["hierarchical"]).table()
    assert len(d["kernels"]) == len(p) == 3
    for k in d["kernels"]:
        r = p[p["kernel"] == k["kernel"]].iloc[0]
        assert k["point_s"] == pytest.approx(r["time_s"], rel=1e-12), k["kernel"]
        assert k["low_s"] == pytest.approx(r["low_s"], rel=1e-12)
    from gpuproj.catalog import resolve

    used = resolve("tesla-p100-pcie-16gb").ceiling("dram_bw_bytes_per_s", resolve(target))
    assert used.kind == "derived" and round(used.value / 1e9) == {"h200-sxm-141gb": 666,
                                                                 "a100-sxm4-80gb": 631}[target]
    assert [k["source"]["bw_dram_bytes_per_s"] for k in d["kernels"]] == [used.value] * 3


def test_roofline_counts_the_sources_warps_against_a_wider_target():
    """The source's warp usage is counted in its own 32-wide warps, also when the target's
    wavefronts are 64 wide (blocks of 256 threads fill both alike): 20 / 32 active lanes."""
    from gpuproj.plots.roofline import roofline_data
    from gpuproj.predict import predict
    from gpuproj.profiles import load
    from gpuproj.profiles.table import ProfileTable

    df = load(EXAMPLE).df.assign(block_threads=256.0)
    df["thread_inst"] = df["warp_inst"] * 20
    t = ProfileTable.from_frame(df)
    d = roofline_data(t, "tesla-p100-pcie-16gb", "mi300x")
    p = predict(t, targets=["mi300x"], methods=["hierarchical"]).table()
    assert len(d["kernels"]) == len(p) == 3
    for k in d["kernels"]:
        assert k["source"]["warp_usage"] == pytest.approx(20 / 32)
        assert k["point_s"] == pytest.approx(
            p.loc[p["kernel"] == k["kernel"], "time_s"].iloc[0], rel=1e-12)


def test_quadrant_takes_the_profiles_precision(tmp_path, capsys):
    p = tmp_path / "f64.csv"
    p.write_text("kernel,time_s,fp64_flops,dram_bytes,gpu\nk1,1e-3,1e9,1e8,h100-sxm5-80gb\n")
    code, out, _ = run_cli(capsys, "quadrant", "-g", "h200,rtx-4090", "-p", str(p), "-o",
                           str(tmp_path / "q.png"), "--json")
    data = json.loads(out)
    assert code == 0 and data["precision"] == "fp64"
    h200 = next(g for g in data["gpus"] if g["id"] == "h200-sxm-141gb")
    assert h200["compute_ops_per_s"] == 34e12  # the FP64 peak, not FP32's 67 TFLOP/s


def test_quadrant_says_what_it_leaves_out(tmp_path, capsys):
    out = str(tmp_path / "q.png")
    code, _, err = run_cli(capsys, "quadrant", "-g", "gtx-480,h200", "--precision", "fp16",
                           "--intensity", "1", "-o", out)
    assert code == 0
    assert err.splitlines() == [
        "gpuproj: skipped GeForce GTX 480 (gtx-480): the catalog has no fp16_fma_flops_per_s",
        f"wrote {out} (1 GPU(s), 1 of 1 kernel(s))"]
    p = tmp_path / "m1.csv"
    p.write_text("kernel,time_s,fp32_flops,dram_bytes,gpu\nk1,1e-3,1e9,1e8,h100-sxm5-80gb\n"
                 "k2,2e-3,,1e8,h100-sxm5-80gb\nk3,3e-3,1e9,,h100-sxm5-80gb\n")
    code, stdout, err = run_cli(capsys, "quadrant", "-g", "h200,gtx-480", "--precision", "fp16",
                                "-p", str(p), "-o", out, "--json")
    assert code == 0 and err == ""  # with --json, the JSON lists them
    data = json.loads(stdout)
    assert [k["label"] for k in data["kernels"]] == ["k1 [default]"]
    assert data["skipped"] == [
        "GeForce GTX 480 (gtx-480): the catalog has no fp16_fma_flops_per_s",
        "k2 [default]: no FLOP count, so no operational intensity",
        "k3 [default]: no DRAM byte count, so no operational intensity"]
    code, _, err = run_cli(capsys, "quadrant", "-g", "gtx-480", "--precision", "fp16",
                           "--intensity", "1", "-o", out)
    assert code == 2 and one_error(err) == (
        "gpuproj: error: no GPU has both a DRAM bandwidth and a fp16 compute throughput "
        "(GeForce GTX 480 (gtx-480): the catalog has no fp16_fma_flops_per_s)")
    # a profile none of whose rows can be drawn: the error names it and the first row's lack
    none = tmp_path / "none.csv"
    none.write_text("kernel,time_s,dram_bytes,gpu\nk1,1e-3,1e9,h100-sxm5-80gb\n")
    code, _, err = run_cli(capsys, "quadrant", "-g", "h200", "-p", str(none), "-o", out)
    assert code == 2 and one_error(err) == (
        f"gpuproj: error: {none}: no kernel row has both flops and dram_bytes (its operational "
        "intensity is unknown; the first: k1 [default]: no FLOP count, so no operational "
        "intensity)")


def test_dollar_signs_in_kernel_names_are_drawn_as_written(tmp_path, capsys):
    """matplotlib reads the text between two $ as mathtext: a CUDA runtime helper's name
    crashed every picture."""
    from gpuproj.plots.roofline import roofline_data, roofline_figure
    from gpuproj.profiles import load

    name = "$__internal_0_$__cuda_sm20_div_rn_f32"
    p = tmp_path / "math.csv"
    p.write_text(f'kernel,time_s,fp32_flops,dram_bytes,gpu\n"{name}",1e-3,1e9,1e8,'
                 "h100-sxm5-80gb\n")
    for cmd in (["roofline", str(p), "-t", "h200", "-o", str(tmp_path / "r.png")],
                ["quadrant", "-g", "h200", "-p", str(p), "-o", str(tmp_path / "q.png")],
                ["predict", str(p), "-t", "h200", "--plot", str(tmp_path / "p.png")],
                ["report", str(p), "-t", "h200", "-o", str(tmp_path / "r.html")]):
        code, _, err = run_cli(capsys, *cmd)
        assert code == 0, (cmd, err)
    fig = roofline_figure(roofline_data(load(p), "h100-sxm5-80gb", "h200"))
    fig.canvas.draw()
    title = fig.axes[0].title
    assert title.get_text().startswith(r"\$__internal_0_\$") and not title._preprocess_math(
        title.get_text())[1]  # drawn as plain text


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_roofline_skips_rows_it_cannot_draw(tmp_path, capsys):
    """Counts or times near 0 or the largest float: no log axis holds the point. The row is
    skipped with the reason; nothing left is one line, as `predict --plot` says it."""
    from gpuproj.plots.roofline import roofline_data

    p = tmp_path / "ext.csv"
    p.write_text("kernel,time_s,fp32_flops,dram_bytes,gpu\nk1,1e-3,1e-300,1e100,h100-sxm5-80gb\n")
    code, _, err = run_cli(capsys, "roofline", str(p), "-t", "h200", "-o", str(tmp_path / "e.png"))
    assert code == 2 and one_error(err) == (
        "gpuproj: error: nothing to draw: every kernel row was skipped (1 row(s); the first: "
        "k1 [default]: its DRAM operational intensity (0) is too small to draw)")
    # the readers take values up to 1e100: their quotients still overflow
    p.write_text("kernel,time_s,fp32_flops,dram_bytes,gpu\nk1,1e-300,1e100,1e100,h100-sxm5-80gb\n"
                 "k2,1e-3,1e100,1e-206,h100-sxm5-80gb\nk3,1e-3,1e9,1e8,h100-sxm5-80gb\n")
    from gpuproj.profiles import load

    d = roofline_data(load(p), "h100-sxm5-80gb", "h200")
    assert [k["kernel"] for k in d["kernels"]] == ["k3"]
    assert d["skipped"] == ["k1 [default]: its FLOP/s (inf) is too large to draw",
                            "k2 [default]: its DRAM operational intensity (1e+306) is too "
                            "large to draw"]
    out = str(tmp_path / "e.png")
    code, _, err = run_cli(capsys, "roofline", str(p), "-t", "h200", "-o", out)
    assert code == 0 and err.splitlines() == [*(f"gpuproj: skipped {s}" for s in d["skipped"]),
                                              f"wrote {out} (1 of 1 kernel rows)"]


def test_a_profile_of_several_gpus_is_an_input_error(tmp_path, capsys):
    two = str(Path(__file__).parent / "data" / "amaris-2gpus-calculate_temp.csv")
    says = (f"gpuproj: error: {two}: the profile holds several GPUs (gtx-680, "
            "tesla-p100-pcie-16gb); pass --source with one of them")
    for cmd in (["roofline", two, "-o", str(tmp_path / "x.png")],
                ["quadrant", "-g", "h200", "-p", two, "-o", str(tmp_path / "x.png")]):
        code, _, err = run_cli(capsys, *cmd)
        assert code == 2 and one_error(err) == says
    code, _, err = run_cli(capsys, "quadrant", "-g", "h200", "-o", str(tmp_path / "q.png"))
    assert code == 2 and one_error(err) == ("gpuproj: error: give --profile or --intensity: "
                                            "the kernels to draw")


def test_quadrant_draws_the_longest_rows_and_says_how_many():
    # it drew the first six rows of the file (Rodinia's smallest sizes) and did not say so
    from gpuproj.plots.quadrant import MAX_KERNELS, data_figure, kernels_from_rows, quadrant_data

    n = MAX_KERNELS + 2
    df = pd.DataFrame({"kernel": [f"k{i}" for i in range(n)], "config": "c",
                       "time_s": [1e-3 * (i + 1) for i in range(n)], "flops": 1e9,
                       "dram_bytes": [1e8 * (i + 1) for i in range(n)]})
    found, _ = kernels_from_rows(df)
    assert [lb for lb, _ in found][:2] == [f"k{n - 1} [c]", f"k{n - 2} [c]"]
    data = quadrant_data(["h100-sxm5-80gb"], df, precision="fp32")
    fig = data_figure(data)
    assert data["shown"] == [f"k{i} [c]" for i in range(n - 1, 1, -1)]
    assert fig._suptitle.get_text().endswith(f"the {MAX_KERNELS} longest of {n} kernel rows)")


def test_longest_running_counts_the_launches():
    """A kernel launched 1000 times at 0.2 ms runs 0.2 s, longer than one launched once at
    0.5 ms: the projection bars keep it (time x launches), the roofline and the quadrant
    view drew the other as "the longest-running"."""
    from gpuproj.plots.projection import projection_frame
    from gpuproj.plots.quadrant import kernels_from_rows
    from gpuproj.plots.roofline import roofline_data, roofline_figure

    t = table(kernel=["often", "once"], time_s=[2e-4, 5e-4], flops=[1e9, 1e9],
              dram_bytes=[4e8, 4e8], launches=[1000, 1])
    data = roofline_data(t, SRC, TGT)
    roofline_figure(data, max_kernels=1)
    assert data["shown"] == [("often", "c")]
    assert [lb for lb, _ in kernels_from_rows(t)[0]] == ["often [c]", "once [c]"]
    result = PredictionSet(["src"], ["tgt"], {"hierarchical": get_model("hierarchical").predict(
        t, SRC, [TGT])}, [])
    assert projection_frame(result, max_kernels=1)[0]["kernel"].tolist() == ["often"]


def test_projection_figure_takes_the_targets_times_from_the_prediction():
    """A notebook's ``projection_figure(predict(...))``, with no other argument, draws the
    target's times the profile holds (real data: the Amaris et al. calculate_temp excerpt)."""
    from gpuproj.plots.projection import projection_figure
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    t = load(Path(__file__).parent / "data" / "amaris-2gpus-calculate_temp.csv")
    src, tgt = sorted(t.gpus)
    result = predict(t, source=src, targets=[tgt], methods=["bandwidth"])
    _, d = projection_figure(result)
    assert d["measured_s"].notna().all()
    assert d["measured_s"].tolist() == result.table()["measured_s"].tolist()


def test_drawing_leaves_the_users_backend_alone():
    """gpuproj's figures are drawn outside pyplot: a notebook's backend (inline pictures) must
    stay what the user chose."""
    import matplotlib

    from gpuproj.plots.roofline import roofline_data, roofline_figure

    before = matplotlib.get_backend()
    matplotlib.use("svg")  # any backend other than Agg
    try:
        roofline_figure(roofline_data(kernel_table(), SRC, TGT))
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)
