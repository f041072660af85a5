"""scripts/suite_crossval.py on a hand-made two-GPU collection: the ncu join, the pairs in both
directions, the leave-one-family-out training, and nothing written before two GPUs exist."""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
NCU = ROOT / "tests" / "data" / "ncu-h100-sxm5-80gb-raw-base.csv"


@pytest.fixture(scope="module")
def sc():
    return load_script("suite_crossval")


def collection(root: Path) -> Path:
    """data/suite with an H100 (one ncu run, the fixture's four launches mapped to two of
    its rows) and an H200 whose memory-bound times are the H100's over 1.43."""
    rows = []
    for fam, kernels in {"srivastava": ["vector_add", "saxpy", "reduce_sum"],
                         "stencil": ["stencil2d5", "stencil3d7"],
                         "special": ["sf_exp_fp32", "sf_sin_fp32"]}.items():
        for k in kernels:
            for n in (2 ** 20, 2 ** 22, 2 ** 24):
                rows.append({"kernel": k, "config": f"N={n}", "family": fam, "dtype": "fp32",
                             "flops": (64 if fam == "special" else 2) * n,
                             "dram_bytes": 12.0 * n, "block_threads": 256,
                             "grid_blocks": n // 256})
    base = pd.DataFrame(rows)
    rng = np.random.default_rng(0)
    h100 = base.assign(gpu="h100-sxm5-80gb",
                       time_s=base["dram_bytes"] / 2.5e12 * rng.uniform(1, 1.3, len(base)))
    h200 = h100.assign(gpu="h200-sxm-141gb", time_s=h100["time_s"] / 1.43)
    out = root / "suite"
    for t in (h100, h200):
        d = out / t["gpu"].iloc[0]
        d.mkdir(parents=True)
        t.to_csv(d / "measurements.csv", index=False)
        (d / "manifest.json").write_text(json.dumps({"date_utc": "2026-11-22T10:00:00Z"}))
    ncu = out / "h100-sxm5-80gb" / "ncu"
    ncu.mkdir()
    shutil.copy(NCU, ncu / "srivastava-small.csv")
    pd.DataFrame({"ncu_id": ["0", "1", "2", "3"],
                  "kernel": ["vector_add", "saxpy", "vector_add", "reduce_sum"],
                  "config": ["N=1048576"] * 4, "function": ["f"] * 4,
                  "family": ["srivastava"] * 4, "size": ["small"] * 4}).to_csv(
        ncu / "srivastava-small.map.csv", index=False)
    return out


def test_ncu_counters_replace_the_analytic_ones(sc, tmp_path):
    data = collection(tmp_path)
    t, info = sc.suite_table(data / "h100-sxm5-80gb")
    timed = pd.read_csv(data / "h100-sxm5-80gb" / "measurements.csv")
    assert info["ncu_runs"] == 1 and info["ncu_rows"] == 3 and not info["runs_without_map"]
    assert info["ncu_launches_unmapped"] == 0
    d = t.df.set_index(["kernel", "config"])
    # the two vec_add launches (IDs 0 and 2) are averaged; the fixture's DRAM bytes and
    # registers replace the analytic ones, the timed run's time stays
    ncu = __import__("gpuproj.profiles", fromlist=["load"]).load(
        NCU, format="ncu-csv", per_launch=True).df
    va = d.loc[("vector_add", "N=1048576")]
    assert va["counts"] == "ncu"
    assert va["dram_bytes"] == pytest.approx(ncu.loc[[0, 2], "dram_bytes"].mean())
    assert va["regs_per_thread"] == pytest.approx(ncu.loc[0, "regs_per_thread"])
    want = timed.set_index(["kernel", "config"]).loc[("vector_add", "N=1048576"), "time_s"]
    assert va["time_s"] == pytest.approx(want)
    other = d.loc[("vector_add", "N=4194304")]
    assert other["counts"] == "analytic" and other["dram_bytes"] == 12.0 * 2 ** 22


def test_both_directions_and_learned_models_never_see_their_family(sc, tmp_path):
    data = collection(tmp_path)
    tables = [sc.suite_table(d)[0] for d in sc.collected(data)]
    ev = sc.crossval(tables[0].concat(tables[1]), trained=("rf", "residual"))
    s = sc.summarize(ev)
    bw = s["per_direction"]["bandwidth"]
    assert set(bw) == {"h100-sxm5-80gb -> h200-sxm-141gb", "h200-sxm-141gb -> h100-sxm5-80gb"}
    # H200/H100 DRAM bandwidth from the catalog, 4.8 / 3.35 TB/s = 1.43: the synthetic times
    # follow it exactly
    assert bw["h100-sxm5-80gb -> h200-sxm-141gb"]["mape"] == pytest.approx(0.0, abs=0.5)
    assert set(s["per_family"]["rf"]) == {"srivastava", "stencil", "special"}
    assert s["methods"]["residual"]["coverage"] is not None
    # each family's learned predictions come from the fold that held that family out
    for fam, g in ev.pairs[ev.pairs["method"] == "rf"].groupby("family"):
        assert set(g["fold"]) == {f"kernel {min(g['kernel'].unique())}"}


def test_main_writes_the_tables_only_with_two_gpus(sc, tmp_path, capsys):
    data = collection(tmp_path)
    md, js = tmp_path / "suite.md", tmp_path / "suite.json"
    assert sc.main(["--data", str(data), "--md", str(md), "--json", str(js),
                    "--no-learned"]) == 0
    text = md.read_text()
    assert "h100-sxm5-80gb -> h200-sxm-141gb" in text and "2026-11-22" in text
    assert json.loads(js.read_text())["ncu_rows"] == 3
    shutil.rmtree(data / "h200-sxm-141gb")
    md.unlink()
    assert sc.main(["--data", str(data), "--md", str(md), "--json", str(js)]) == 0
    assert not md.exists() and "two are needed" in capsys.readouterr().err
