"""scripts/l2_capacity_rules.py: the share of an L2 sweep's traffic that leaves a cache level,
from its bandwidth."""

import pytest
from conftest import load_script, table

from gpuproj.catalog import resolve


def test_dram_share_from_the_bandwidth_and_the_plateaus():
    # H200 (60 MiB L2): at each working set the bandwidth B of a known DRAM share f,
    # 1 / B = (1 - f) / B_L2 + f / B_D with the catalog's measured plateaus; the script must
    # give f back at the working set nearest each multiple of the L2 size
    script = load_script("l2_capacity_rules")
    gpu = resolve("h200-sxm-141gb")
    size = gpu.value("l2_size_bytes")
    b_l2, b_d = gpu.measured("l2_bw_bytes_per_s"), gpu.measured("dram_bw_bytes_per_s")
    shares = dict(zip(script.POINTS, (0.0, 0.1, 0.5, 0.7, 0.8, 1.0)))
    moved = 5e10
    t = table(kernel=["sweep"] * len(shares), config=[f"w{x}" for x in shares],
              gpu=["h200-sxm-141gb"] * len(shares), l2_bytes=[moved] * len(shares),
              working_set_bytes=[x * size for x in shares],
              time_s=[moved * ((1 - f) / b_l2 + f / b_d) for f in shares.values()])
    row = script.shares(t, "l2")[2].split(" | ")
    assert row[0] == "| h200-sxm-141gb" and row[1] == "60 MiB"
    got = [float(c.split(" (")[0]) for c in row[2:]]
    assert got == pytest.approx(list(shares.values()), abs=0.006)
    assert [c.split(" (")[1].rstrip(") |") for c in row[2:]] == [f"{x:.2f}" for x in shares]
    assert len(script.shares(t, "l3")) == 2  # no L3: the header only


def test_shares_past_an_l2_go_to_the_l3_where_there_is_one():
    # RX 6900 XT (4 MiB L2, 128 MiB Infinity Cache): past the L2 the traffic goes to the L3's
    # plateau, past the L3 to DRAM's; a sweep built from known shares at each level gives them back
    script = load_script("l2_capacity_rules")
    gpu = resolve("rx-6900-xt")
    b_l2, b_l3, b_d = (gpu.measured(f"{k}_bw_bytes_per_s") for k in ("l2", "l3", "dram"))
    moved, rows = 1e10, {}
    for level, b_in, b_past in (("l2", b_l2, b_l3), ("l3", b_l3, b_d)):
        size = gpu.value(f"{level}_size_bytes")
        rows[level] = [(x * size, moved * ((1 - f) / b_in + f / b_past))
                       for x, f in zip(script.POINTS, (0.0, 0.1, 0.5, 0.7, 0.8, 1.0))]
        t = table(kernel=["sweep"] * 6, config=[f"w{i}" for i in range(6)],
                  gpu=["rx-6900-xt"] * 6, l2_bytes=[moved] * 6,
                  working_set_bytes=[w for w, _ in rows[level]],
                  time_s=[s for _, s in rows[level]])
        row = script.shares(t, level)[2].split(" | ")
        assert row[1] == f"{size / 2**20:.0f} MiB"
        got = [float(c.split(" (")[0]) for c in row[2:]]
        assert got == pytest.approx([0.0, 0.1, 0.5, 0.7, 0.8, 1.0], abs=0.006)


def test_interval_rows_count_the_sets_near_a_cache_size():
    # H100 PCIe (50 MiB L2) and H200 (60 MiB): of three working sets only 55 MiB (1.1 x and
    # 0.92 x) lies in CAPACITY_BAND, so 2 of the 6 ordered pairs get an interval; by_gpu counts
    # every pair once per end
    script = load_script("l2_capacity_rules")
    sets = [10 * 2**20, 55 * 2**20, 200 * 2**20]
    gpus = ["h100-pcie-80gb", "h200-sxm-141gb"]
    t = table(kernel=["sweep"] * 6, config=[f"w{w}" for w in sets] * 2,
              gpu=[g for g in gpus for _ in sets], l2_bytes=[1e10] * 6,
              working_set_bytes=sets * 2, time_s=[1e-3, 2e-3, 3e-3, 1.1e-3, 2.5e-3, 2.9e-3])
    rows = [r.split(" | ") for r in script.interval_rows(t)[2:]]
    assert [int(r[1]) for r in rows] == [2, 2, 4]
    assert rows[2][2] == "0.0 %"  # a point never holds a measured time exactly
    by = {r.split(" | ")[0].lstrip("| "): r.split(" | ") for r in script.by_gpu(t)[2:]}
    assert int(by["all"][1]) == 6 and int(by["to h200-sxm-141gb"][1]) == 3
