"""The shared predict driver: the output frame it assembles and the values it computes once per
call (models.base), checked against the plain ways of computing the same things."""

import numpy as np
import pandas as pd
import pytest
from conftest import table

from gpuproj.catalog import resolve
from gpuproj.models import get_model
from gpuproj.models.base import _stack_labels
from gpuproj.models.common import labels, launch_configs, launch_occupancy
from gpuproj.occupancy import occupancy

SOURCE = "v100-sxm2-16gb"
TARGETS = ["a100-sxm4-40gb", "h100-sxm5-80gb", "mi250x"]


def kernels(n, seed):
    """Small random but complete profiles: every analytical method can predict them."""
    rng = np.random.default_rng(seed)
    fma = rng.lognormal(18, 1, n)
    return table(
        kernel=[f"k{i % 7}" for i in range(n)], config=[str(i) for i in range(n)],
        gpu=[SOURCE] * n, time_s=rng.lognormal(-9, 1, n),
        fp32_fma_thread_inst=fma, fp32_add_thread_inst=fma * rng.uniform(0, 1, n),
        fp32_mul_thread_inst=fma * 0.5, fp32_thread_inst=fma * 2.0, fp64_thread_inst=[0.0] * n,
        int_thread_inst=fma, ldst_thread_inst=fma * 0.5, warp_inst=fma / 8,
        thread_inst=fma * 3.0, dram_read_bytes=fma * rng.uniform(0.5, 8, n),
        dram_write_bytes=fma, l2_bytes=fma * 12, l1_bytes=fma * 30, working_set_bytes=fma * 4,
        grid_blocks=rng.integers(1, 5000, n), block_threads=rng.choice([64, 256, 1024], n),
        regs_per_thread=rng.choice([32, 64, 128], n), smem_per_block_bytes=[0.0] * n)


def test_stacked_labels_equal_one_categorical_of_all_names():
    """Categoricals with unused or unsorted categories, plain str arrays and missing values stack
    to what pd.Categorical makes of the concatenated names."""
    parts = [labels(np.array([2, 0, 2]), ("fp64", "fp32", "dram", "l2")),
             np.array(["l1", "dram", None], dtype=object),
             labels(np.array([1, 1]), ("fp64", "fp32", "dram", "l2")),
             pd.Categorical(["shared", "fp32"], categories=["shared", "fp32", "unused"])]
    want = pd.Categorical(np.concatenate([np.asarray(p, dtype=object) for p in parts]))
    got = _stack_labels(parts)
    assert list(got.categories) == list(want.categories) == ["dram", "fp32", "fp64", "l1", "shared"]
    assert np.array_equal(got.codes, want.codes)


def test_occupancy_per_distinct_launch_equals_per_row():
    df = kernels(40, seed=1).df
    gpu = resolve("a100-sxm4-40gb")
    rows, _, threads, _, _ = launch_configs(df)
    assert rows.all() and len(threads) <= 9  # 3 block sizes x 3 register counts
    occ, bps = launch_occupancy(df, gpu)
    direct = occupancy(gpu, df["block_threads"].to_numpy(np.int64),
                       df["regs_per_thread"].to_numpy(np.int64), 0)
    assert np.array_equal(occ, direct.occupancy)
    assert np.array_equal(bps, direct.blocks_per_sm)


@pytest.mark.parametrize("method", ["hierarchical", "hierarchical-ext", "quantitative",
                                    "efficiency"])
def test_values_shared_by_targets_do_not_leak_between_calls(method):
    """One instance predicting two tables in turn gives what fresh instances give: what is
    computed once per call (source occupancy, byte levels, kernel parameters) is not reused."""
    a, b = kernels(30, seed=2), kernels(20, seed=3)
    model = get_model(method)
    first, second = model.predict(a, SOURCE, TARGETS), model.predict(b, SOURCE, TARGETS)
    assert len(second.df) == 20 * len(TARGETS)
    for got, tab in ((first, a), (second, b)):
        want = get_model(method).predict(tab, SOURCE, TARGETS)
        pd.testing.assert_frame_equal(got.df, want.df)
        assert got.assumptions == want.assumptions


def test_target_blocks_follow_the_targets():
    """Rows come target by target; each target's times equal a prediction to it alone."""
    t = kernels(25, seed=4)
    both = get_model("hierarchical-ext").predict(t, SOURCE, TARGETS).df
    assert list(both.columns[:14]) == ["kernel", "config", "source", "target", "method",
                                       "source_time_s", "time_s", "low_s", "high_s",
                                       "band_low_s", "band_high_s", "limiter", "launches", "row"]
    for tgt in TARGETS:
        alone = get_model("hierarchical-ext").predict(t, SOURCE, [tgt]).df
        part = both[both["target"] == tgt].reset_index(drop=True)
        assert np.array_equal(part["time_s"].to_numpy(), alone["time_s"].to_numpy())
        assert list(part["limiter"].astype(str)) == list(alone["limiter"].astype(str))
        assert np.array_equal(part["row"].to_numpy(), np.arange(25))
