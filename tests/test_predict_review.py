"""What the review of predict.py, cli/predict.py, models/base.py and models/hierarchical.py
settled: the library predicts without the terminal's table library, the terminal's tables are
the CLI's, and the hierarchical model's limiter labels and extension switches are as named."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def test_the_library_predicts_and_shows_a_notebook_view_without_the_cli():
    # the terminal's tables are drawn in gpuproj.cli.predict: the library never sees the CLI
    # (nor click, nor rich)
    code = (
        "import sys\n"
        "from gpuproj.predict import predict\n"
        "from gpuproj.profiles import load\n"
        "r = predict(load('examples/rodinia-p100-nvprof.csv'), targets=['h200'],\n"
        "            methods=['hierarchical-ext', 'bandwidth'])\n"
        "r._repr_html_(); r.to_json(); r.ranked_application()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'click')\n"
        "             or m.startswith('gpuproj.cli')))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, check=True).stdout
    assert out.strip() == "[]"


def test_the_terminal_tables_are_the_clis():
    import gpuproj.predict as lib
    from gpuproj.cli import predict as cli

    assert not hasattr(lib.PredictionSet, "print")
    assert not hasattr(lib.PredictionSet, "print_shortlist")
    assert callable(cli.print_predictions) and callable(cli.print_shortlist)


def test_printed_shortlist_names_each_target():
    import io

    from rich.console import Console

    from gpuproj.cli.predict import print_shortlist
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    r = predict(load(ROOT / "tests" / "data" / "kerneltuner-4gpus-gemm_clblast_4096.csv"),
                source="titan-rtx", targets=["rtx-3090"], methods=["same"])
    buf = io.StringIO()
    print_shortlist(r, Console(file=buf, width=200), 3)
    text = buf.getvalue()
    assert "Configurations to measure on rtx-3090 (shortlist of 3, from same in turn)" in text
    # the profile holds the target's times: the caption says what the shortlist would lose
    assert "the shortlist's best measured" in text


def _breakdown_rows():
    """Three rows whose longest time is DRAM, compute (fp32) and L2."""
    from gpuproj.models.common import DTYPES

    df = pd.DataFrame({"flops": [1.0, 1.0, 1.0], "shared_bytes": np.nan,
                       "shared_wavefronts": np.nan, "_dtype": DTYPES.index("fp32")})
    n = {"dram": np.ones(3), "present": {"l2": np.ones(3, bool), "l1": np.zeros(3, bool)}}
    times = {"t_compute_s": np.array([1.0, 5.0, 1.0]), "t_dram_s": np.array([3.0, 1.0, 1.0]),
             "t_l2_s": np.array([1.0, 1.0, 4.0]), "t_l1_s": np.zeros(3),
             "t_shared_s": np.zeros(3)}
    return df, n, times


def test_hierarchical_limiter_is_the_longest_resource_unless_a_mask_names_it():
    from gpuproj.models.hierarchical import Hierarchical

    df, n, times = _breakdown_rows()
    none = np.zeros(3, bool)
    _, limiter = Hierarchical._breakdown(df, n, times, none, None, None, none)
    assert list(limiter) == ["dram", "fp32", "l2"]
    # unbounded, underfilled and latency-held rows: the later mask wins, and a row whose bytes
    # were priced at DRAM bandwidth is not unknown
    unbounded = np.array([True, True, True])
    at_dram = np.array([False, False, True])
    underfilled = np.array([False, True, True])
    latency = np.array([False, False, True])
    _, limiter = Hierarchical._breakdown(df, n, times, at_dram, underfilled, latency, unbounded)
    assert list(limiter) == ["unknown", "parallelism", "latency"]


def test_hierarchical_ext_switches_its_extensions_on_by_name():
    from gpuproj.models.hierarchical import Hierarchical, HierarchicalExtended

    assert HierarchicalExtended().get_params() == {
        "cache_capacity": True, "roof_share": True, "roof_floor": True, "parallelism": True,
        "warp_bandwidth": True, "issue_rate": True, "source_clock": False,
        "target_counts": None}
    assert not any(v for v in Hierarchical().get_params().values())
    assert HierarchicalExtended(roof_floor=False).roof_floor is False


def test_interval_note_says_what_the_analytical_interval_spans():
    # hierarchical-ext's interval also spans its extensions' alternatives, hierarchical's the
    # memory levels alone: the note names both, whatever the method's name or settings
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    profile = load(ROOT / "examples" / "h100-suite-ncu.csv")  # L1, L2 and DRAM bytes
    r = predict(profile, targets=["h200-sxm-141gb"], methods=["hierarchical-ext", "hierarchical"])
    d = r.table()
    assert all((g["high_s"] > g["low_s"]).any() for _, g in d.groupby("method"))
    note = r.bands_note(d)
    assert "interval: the method's own range over memory levels and over the alternatives" in note
    assert "saved model" not in note


def test_totals_say_where_a_target_lacks_the_ceiling_of_much_of_the_time():
    """The H100 suite ranked the B200 before the H200 with nothing in the totals to say that
    80 % of the source time (atomic_hotspot and naive_transpose on the L2, two kernels on the
    L1) was projected without those levels, which the B200's entry lacks; the H200 has them."""
    from gpuproj.predict import predict
    from gpuproj.profiles import load

    r = predict(load(ROOT / "examples" / "h100-suite-ncu.csv"), targets=["h200", "b200"],
                methods=["hierarchical-ext"])
    d = r.table()
    d = d[d["target"] == "b200"].assign(w=lambda x: x["source_time_s"] * x["launches"])
    gap = d[d["limiter"] == "unknown"]
    share = gap["w"].sum() / d["w"].sum()
    note = r.unbounded_totals()
    assert f"b200: {len(gap)} rows, {100 * share:.0f} %" in note and "h200" not in note
    assert note in r._repr_html_().replace("&#x27;", "'")
    assert predict(load(ROOT / "examples" / "h100-suite-ncu.csv"), targets=["h200"],
                   methods=["hierarchical-ext"]).unbounded_totals() is None
