"""gpuproj.evaluate: which (source, target) pairs an evaluation holds, and their measured times."""

import numpy as np
import pandas as pd
from conftest import table

from gpuproj.evaluate import _stack_pairs, evaluate

A, H, V = "a100-sxm4-40gb", "h100-sxm5-80gb", "v100-sxm2-16gb"


def three_gpus():
    rows = [("k1", "c1", A, 1e-3), ("k1", "c1", H, 0.5e-3), ("k1", "c1", V, 2e-3),
            ("k1", "c2", A, 2e-3), ("k1", "c2", H, 1e-3),  # not measured on the V100
            ("k2", "c1", A, 7e-3),  # measured on one GPU only: no pair
            ("k2", "c2", V, 3e-3), ("k2", "c2", H, 4e-3)]
    return table(**dict(zip(("kernel", "config", "gpu", "time_s"), map(list, zip(*rows)))))


def pair_set(ev):
    d = ev.pairs
    return set(zip(d["kernel"], d["config"], d["source"], d["target"], d["source_time_s"],
                   d["true_s"]))


def test_every_ordered_pair_measured_on_both_gpus_and_no_other():
    ev = evaluate(three_gpus(), ["same"])
    assert pair_set(ev) == {
        ("k1", "c1", A, H, 1e-3, 0.5e-3), ("k1", "c1", A, V, 1e-3, 2e-3),
        ("k1", "c1", H, A, 0.5e-3, 1e-3), ("k1", "c1", H, V, 0.5e-3, 2e-3),
        ("k1", "c1", V, A, 2e-3, 1e-3), ("k1", "c1", V, H, 2e-3, 0.5e-3),
        ("k1", "c2", A, H, 2e-3, 1e-3), ("k1", "c2", H, A, 1e-3, 2e-3),
        ("k2", "c2", V, H, 3e-3, 4e-3), ("k2", "c2", H, V, 4e-3, 3e-3)}
    assert (ev.pairs["time_s"] == ev.pairs["source_time_s"]).all()  # `same`
    for c in ("method", "kernel", "config", "source", "target", "limiter"):
        assert ev.pairs[c].dtype == "str", c


def test_targets_and_sources_restrict_the_pairs():
    ev = evaluate(three_gpus(), ["same", "bandwidth"], sources=[A, V], targets="h100-sxm5")
    assert {(k, c, s) for k, c, s, t, _, _ in pair_set(ev)} == {
        ("k1", "c1", A), ("k1", "c1", V), ("k1", "c2", A), ("k2", "c2", V)}
    assert set(ev.pairs["target"]) == {H}
    assert ev.pairs.groupby("method").size().to_dict() == {"bandwidth": 4, "same": 4}


def test_stacked_pairs_equal_their_concatenation():
    # labels as categoricals of different categories, one with a missing value, and a float
    # column: the same values and dtypes as pd.concat's, the labels as str
    a = pd.DataFrame({"m": pd.Categorical(["x", None, "y"]), "t": [1.0, 2.0, 3.0]},
                     index=[4, 7, 9])
    b = pd.DataFrame({"m": pd.Categorical(["z", "x"]), "t": [4.0, 5.0]})
    empty = a.iloc[:0]
    got = _stack_pairs([a, empty, b])
    want = pd.concat([a, empty, b], ignore_index=True).astype({"m": "str"})
    pd.testing.assert_frame_equal(got, want)
    assert got["m"].isna().tolist() == [False, True, False, False, False]
    assert np.array_equal(got["t"], [1, 2, 3, 4, 5])


def test_projections_skipped_are_counted_only_where_the_target_measured_the_row():
    # hierarchical-ext cannot time j (shared-memory bytes alone, no L2 ceiling on these GPUs):
    # its projections between the two GPUs that measured j lose two pairs, and its projections
    # to gtx-titan-x, which did not measure j, lose none and are not reported (9 were, for 6)
    g, t, x = "rtx-2080-ti", "titan-v", "gtx-titan-x"
    rows = [("k", g, 1e-3, 1e6, 0), ("k", t, 1e-3, 1e6, 0), ("k", x, 1e-3, 1e6, 0),
            ("j", g, 1e-6, 0, 4096), ("j", t, 1e-6, 0, 4096)]
    tab = table(kernel=[r[0] for r in rows], config="c", gpu=[r[1] for r in rows],
                time_s=[r[2] for r in rows], flops=[r[3] for r in rows],
                dram_bytes=[r[3] for r in rows], shared_bytes=[r[4] for r in rows],
                working_set_bytes=[max(r[3], r[4]) for r in rows])
    ev = evaluate(tab, ["same", "hierarchical-ext"])
    n = ev.summary()
    assert n["same"]["n"] == 8 and n["hierarchical-ext"]["n"] == 6
    assert sorted(s.projection for s in ev.skipped) == [("j", "c", g), ("j", "c", t)]
