"""scripts/rodinia_clocks.py: the clock a GPU ran at, from nvprof's elapsed SM cycles."""

from pathlib import Path

import pandas as pd
import pytest
from conftest import load_script

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def rc():
    return load_script("rodinia_clocks")


def test_clock_is_elapsed_sm_cycles_over_duration_and_sms(rc, tmp_path):
    # one configuration, 10 runs per GPU: the median of the runs' clocks, each run's
    # elapsed_cycles_sm (summed over the SMs) / (duration x SMs); GTX 680: 8 SMs, P100: 56.
    # The excerpt's 3-8 us runs give no clock; 100x longer runs at the same clocks do.
    raw = pd.read_csv(DATA / "amaris-2gpus-calculate_temp.csv")
    assert rc.clocks(DATA / "amaris-2gpus-calculate_temp.csv").empty
    raw[["duration", "elapsed_cycles_sm"]] *= 100
    path = tmp_path / "long.csv"
    raw.to_csv(path, index=False)
    out = rc.clocks(path).set_index("gpu")
    for short, gid, sms, boost in (("GTX-680", "gtx-680", 8, 1058.0),
                                   ("Tesla-P100", "tesla-p100-pcie-16gb", 56, 1303.0)):
        q = raw[raw["gpu_name"] == short]
        hz = (q["elapsed_cycles_sm"] / (q["duration"] * sms)).median()
        row = out.loc[gid]
        assert row["configs"] == 1
        assert row["clock_mhz"] == pytest.approx(hz / 1e6)
        assert row["boost_mhz"] == pytest.approx(boost)
        assert row["clock_over_boost"] == pytest.approx(hz / 1e6 / boost)


def test_within_architecture_ratios(rc):
    # the 9-GPU excerpt: 2 configurations, Kepler x5, Maxwell x3, Pascal x1 -> 2 x (20 + 6)
    # ordered same-architecture pairs; its runs are shorter than 100 us, so no profiled clock
    path = DATA / "amaris-9gpus-bpnn_adjust_weights.csv"
    out = rc.within_architecture(path).set_index("ratio")
    assert (out.drop(index="issue rate, profiled clock")["pairs"] == 52).all()
    assert out.loc["issue rate, profiled clock", "pairs"] == 0
    # DRAM bandwidth ratio recomputed from the raw durations (one run per GPU and size)
    from gpuproj.catalog import bundled_catalog
    from gpuproj.profiles.readers.amaris import AMARIS_GPUS

    cat = bundled_catalog()
    raw = pd.read_csv(path)
    raw["gpu"] = raw["gpu_name"].map(AMARIS_GPUS)
    t = raw.pivot_table(index="input.size.1", columns="gpu", values="duration")
    ape = []
    for s in t.columns:
        for d in t.columns:
            gs, gd = cat.resolve(s), cat.resolve(d)
            if s != d and gs.architecture == gd.architecture:
                bw = gs.peak("dram_bw_bytes_per_s") / gd.peak("dram_bw_bytes_per_s")
                ape += list((t[s] * bw / t[d] - 1).abs() * 100)
    assert out.loc["DRAM bandwidth", "mape"] == pytest.approx(sum(ape) / len(ape))
    assert set(out.index) == {"DRAM bandwidth", "issue rate, boost clock",
                              "issue rate, base clock", "issue rate, profiled clock"}
