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
NCU = ROOT / "tests" / "data" / "ncu-handbuilt-h100-raw-base.csv"


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
    # the suite as one application: the synthetic times follow the bandwidth ratio, so its
    # total is exact too; the learned models' folds are added into one total per direction
    total = s["totals"]["methods"]["bandwidth"]["h100-sxm5-80gb -> h200-sxm-141gb"]
    assert total[0] == pytest.approx(1.0, abs=0.005) and total[3] == pytest.approx(1.0, abs=0.005)
    assert set(s["totals"]["methods"]["rf"]) == set(bw)
    # the configurations that make half the measured total, longest first
    top = s["totals"]["longest"]["h100-sxm5-80gb -> h200-sxm-141gb"]
    shares = [v for *_, v in top]
    assert shares == sorted(shares, reverse=True) and sum(shares[:-1]) < 0.5 <= sum(shares)
    assert "The suite as one application" in sc.pair_markdown(
        {"gpus": ["a", "b"], "dates": ["?"], "ncu_rows": 0, "rows": 0, "summary": s})
    assert s["methods"]["residual"]["coverage"] is not None
    # each family's learned predictions come from the fold that held that family out
    for fam, g in ev.pairs[ev.pairs["method"] == "rf"].groupby("family"):
        assert set(g["fold"]) == {f"kernel {min(g['kernel'].unique())}"}


def test_main_writes_the_tables_only_with_two_gpus(sc, tmp_path, capsys):
    data = collection(tmp_path)
    md, js = tmp_path / "suite.md", tmp_path / "suite.json"
    none = ["--external", str(tmp_path / "no-public-data")]  # the report's part: below
    assert sc.main(["--data", str(data), "--md", str(md), "--json", str(js),
                    "--no-learned"] + none) == 0
    text = md.read_text()
    assert "h100-sxm5-80gb -> h200-sxm-141gb" in text and "2026-11-22" in text
    assert json.loads(js.read_text())["ncu_rows"] == 3
    assert "The report's four GPUs" not in text
    shutil.rmtree(data / "h200-sxm-141gb")
    md.unlink()
    assert sc.main(["--data", str(data), "--md", str(md), "--json", str(js)] + none) == 0
    assert not md.exists() and "needs two" in capsys.readouterr().err


SEED_GPUS = {"2080ti": ("NVIDIA GeForce RTX 2080 Ti", 616e9), "4070": ("NVIDIA GeForce RTX 4070",
             504e9), "titanv": ("NVIDIA TITAN V", 653e9), "titanx": ("NVIDIA GeForce GTX TITAN X",
                                                                     336e9)}


def seed_report(root: Path) -> Path:
    """The report's four files, in its format, with memory-bound times (their bytes over each
    GPU's bandwidth) for the collection's srivastava kernels and an atomic_hotspot row."""
    d = root / "seed-report-4gpus"
    d.mkdir(parents=True)
    for tag, (name, bw) in SEED_GPUS.items():
        rows = [{"kernel": k, "N": n, "rows": 0, "cols": 0, "FLOPs": 2 * n, "BYTES": 12 * n,
                 "mean_ms": 12 * n / bw * 1e3, "gpu_device_name": name}
                for k in ("vector_add", "saxpy", "reduce_sum", "atomic_hotspot")
                for n in (2 ** 18, 2 ** 20, 2 ** 22)]
        pd.DataFrame(rows).to_csv(d / f"runs_{tag}_final.csv", index=False)
    return root


def test_the_reports_gpus_predict_ours_with_one_gpu_collected(sc, tmp_path, capsys):
    """One GPU is enough for the report's Experiment 1 with our GPU as the new one: the
    report's four GPUs predict our srivastava rows of the same (kernel, config), from the runs
    without an L2 flush where collected; atomic_hotspot stays out; the learned models train
    on the report's pairs alone."""
    # our configurations in the report's notation
    assert sc.report_config("conv2d_3x3", "1024x1024") == "rows=1024,cols=1024"
    assert sc.report_config("matmul_tiled", "N=512") == "rows=512,cols=512"
    assert sc.report_config("saxpy", "N=262144") == "N=262144"
    data = collection(tmp_path)
    shutil.rmtree(data / "h200-sxm-141gb")
    h100 = data / "h100-sxm5-80gb"
    cold = pd.read_csv(h100 / "measurements.csv")
    warm = cold[cold["family"] == "srivastava"].assign(time_s=lambda d: d["time_s"] * 0.9)
    warm.to_csv(h100 / "measurements-warm.csv", index=False)
    ext = seed_report(tmp_path / "external")
    _, reader, files = sc.SEED
    seed = sc.load_dataset(ext, reader, files)
    ev, info = sc.report_to_ours(seed, [h100], trained=("residual",))
    p = ev.pairs
    assert set(p["target"]) == {"h100-sxm5-80gb"}
    assert set(p["source"]) == {"rtx-2080-ti", "rtx-4070", "titan-v", "gtx-titan-x"}
    assert "atomic_hotspot" not in set(p["kernel"]) and "residual" in set(p["method"])
    # 3 kernels x 2 sizes both have (2^20, 2^22); 2^24 is ours alone, 2^18 the report's alone
    assert info["matched_configs"] == 6 and info["timing"] == {"h100-sxm5-80gb": "warm"}
    truth = warm.set_index(["kernel", "config"])["time_s"]
    got = p.drop_duplicates(["kernel", "config"]).set_index(["kernel", "config"])["true_s"]
    assert got.to_numpy() == pytest.approx(truth.reindex(got.index).to_numpy())
    md, js = tmp_path / "suite.md", tmp_path / "suite.json"
    assert sc.main(["--data", str(data), "--md", str(md), "--json", str(js), "--no-learned",
                    "--external", str(ext)]) == 0
    text = md.read_text()
    assert "## The report's four GPUs -> ours" in text and "no L2 flush (docs/suite.md)" in text
    assert "## Our suite" not in text and "needs two" in capsys.readouterr().err
    assert json.loads(js.read_text())["report"]["info"]["matched_configs"] == 6


# ---- the committed collections (data/suite/, 2026-11-24) -----------------------------------
DATA = ROOT / "data" / "suite"
GPUS = ("h100-sxm5-80gb", "h200-sxm-141gb")


@pytest.mark.parametrize("gpu", GPUS)
def test_committed_collection_matches_its_manifest(gpu):
    """Every file the manifest lists is there with its size and SHA-256, and every result
    check passed: the data is what the GPU machine wrote."""
    import hashlib

    d = DATA / gpu
    m = json.loads((d / "manifest.json").read_text())
    assert m["gpu"]["catalog_id"] == gpu and m["checks"]["failed"] == 0
    assert m["checks"]["passed"] == 68
    for f in m["files"]:
        p = d / f["path"]
        assert p.stat().st_size == f["bytes"], f["path"]
        assert hashlib.sha256(p.read_bytes()).hexdigest() == f["sha256"], f["path"]


def test_committed_collections_keep_hierarchical_ext_under_the_goal(sc):
    """The issue's goal on the real H100 <-> H200 data: the best method under 10 % MAPE.
    `hierarchical-ext` reached 4.1 % there (docs/accuracy.md); a change of the models or the
    catalog that takes it past 6 % fails here before the accuracy tables are regenerated."""
    h100, info = sc.suite_table(DATA / GPUS[0])
    h200, _ = sc.suite_table(DATA / GPUS[1])
    assert len(h100) == len(h200) == 209 and info["ncu_rows"] == 182
    ev = sc.crossval(h100.concat(h200), trained=())
    p = ev.pairs
    ape = ((p["time_s"] - p["true_s"]).abs() / p["true_s"])[p["method"] == "hierarchical-ext"]
    assert len(ape) == 418 and 100 * ape.mean() < 6.0


def test_speedup_by_dram_share_bins_rows_by_the_slower_gpus_ceiling(sc):
    """Each (kernel, config) lands in the bin of the DRAM-ceiling share it reached on the GPU
    of the lower measured DRAM bandwidth, and the bin's speed-up is the mean of its rows'
    time ratios: computed here by hand on three rows."""
    from gpuproj.catalog import resolve
    from gpuproj.profiles.table import ProfileTable

    ceiling = resolve("h100-sxm5-80gb").measured("dram_bw_bytes_per_s")
    # shares 5 %, 40 % and 95 % of the H100's ceiling at 1 ms each; the H200 1.0x, 1.2x, 1.4x
    shares, speedups = [0.05, 0.40, 0.95], [1.0, 1.2, 1.4]
    rows = []
    for i, (f, s) in enumerate(zip(shares, speedups)):
        common = {"kernel": f"k{i}", "config": "N=1", "dram_bytes": f * ceiling * 1e-3}
        rows += [{**common, "gpu": "h100-sxm5-80gb", "time_s": 1e-3},
                 {**common, "gpu": "h200-sxm-141gb", "time_s": 1e-3 / s}]
    rows += [{**r, "config": "N=1"} for r in rows[:2]]  # k0 timed twice on each GPU: one row
    sp = sc.speedup_by_dram_share(ProfileTable.from_frame(pd.DataFrame(rows)))
    assert (sp["slow"], sp["fast"]) == ("h100-sxm5-80gb", "h200-sxm-141gb")
    got = {(b["share_from"], b["share_to"]): (b["rows"], b["mean_speedup"]) for b in sp["bins"]}
    assert got[(0.0, 0.1)] == (1, pytest.approx(1.0))
    assert got[(0.3, 0.5)] == (1, pytest.approx(1.2))
    assert got[(0.9, None)] == (1, pytest.approx(1.4))
    assert got[(0.1, 0.3)] == (0, None)
    md = "\n".join(sc.share_markdown(sp))
    assert "| > 90 % | 1 | 1.40x |" in md and "| 10-30 % | 0 | - |" in md
