"""scripts/rodinia_clocks.py: the clock a GPU ran at, from nvprof's elapsed SM cycles."""

import pytest
from conftest import load_script


@pytest.fixture(scope="module")
def rc():
    return load_script("rodinia_clocks")


def test_clock_is_elapsed_sm_cycles_over_duration_and_sms(rc, tmp_path):
    # GTX 680: 8 SMs, boost 1058 MHz. 200 us at 1.0 GHz on 8 SMs = 1.6 M summed SM cycles;
    # 400 us at 0.9 GHz = 2.88 M (median of 1.0 and 0.9 GHz: 950 MHz); the 10 us run is
    # shorter than the minimum and left out (its 2.0 GHz would move the median)
    path = tmp_path / "t.csv"
    path.write_text("gpu_name,elapsed_cycles_sm,duration\n"
                    "GTX-680,1600000,0.0002\n"
                    "GTX-680,2880000,0.0004\n"
                    "GTX-680,160000,0.00001\n")
    out = rc.clocks(path, 1e-4).set_index("gpu")
    row = out.loc["gtx-680"]
    assert row["runs"] == 2
    assert row["clock_mhz"] == pytest.approx(950.0)
    assert row["boost_mhz"] == pytest.approx(1058.0)
    assert row["clock_over_boost"] == pytest.approx(950.0 / 1058.0)
