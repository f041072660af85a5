"""scripts/catalog_corrections.py: each correction undone gives GPU files the catalog loads,
with the values it had before, and nothing else of the file changed; the report says how each
table moved."""

import pytest
import yaml
from conftest import load_script

from gpuproj.catalog import read_gpu_file


@pytest.fixture(scope="module")
def cc():
    return load_script("catalog_corrections")


def test_every_correction_undoes_into_loadable_gpu_files(cc, tmp_path):
    # gtx970-bandwidth, seed-copy-rate (4 GPUs), k5200-fp64, h200-own-run, h200-l2-size,
    # laptop-clock
    assert len(cc.CORRECTIONS) == 6
    assert sum(len(c.before) for c in cc.CORRECTIONS) == 9
    for c in cc.CORRECTIONS:
        assert c.before, c.name
        folder = cc.write_before(c, tmp_path / c.name)
        for gid in c.before:
            old, now = read_gpu_file(folder / f"{gid}.yaml"), read_gpu_file(
                cc.BUNDLED / f"{gid}.yaml")
            assert old.id == now.id and old.name == now.name  # replaces the bundled GPU


def test_the_values_restored_are_those_before(cc, tmp_path):
    by = {c.name: c for c in cc.CORRECTIONS}
    g970 = read_gpu_file(cc.write_before(by["gtx970-bandwidth"], tmp_path / "a") / "gtx-970.yaml")
    assert g970.peak("dram_bw_bytes_per_s") == 224e9
    tv = read_gpu_file(cc.write_before(by["seed-copy-rate"], tmp_path / "b") / "titan-v.yaml")
    now = read_gpu_file(cc.BUNDLED / "titan-v.yaml")
    assert tv.measured("dram_bw_bytes_per_s") == now.measured("dram_bw_bytes_per_s") / 2
    assert "x 2" not in tv.measureds["dram_bw_bytes_per_s"].source
    k = read_gpu_file(cc.write_before(by["k5200-fp64"], tmp_path / "c") / "quadro-k5200.yaml")
    assert k.peak("fp64_fma_flops_per_s") != k.peak("fp64_fma_flops_per_s")  # NaN: none
    h = read_gpu_file(cc.write_before(by["h200-own-run"], tmp_path / "d") / "h200-sxm-141gb.yaml")
    assert h.measured("dram_bw_bytes_per_s") == 3.534e12
    assert h.measureds["l2_bw_bytes_per_s"].source.startswith("gpu-benches")
    # the rest of the file is today's
    raw_old = yaml.safe_load((tmp_path / "d" / "h200-sxm-141gb.yaml").read_text())
    raw_now = yaml.safe_load((cc.BUNDLED / "h200-sxm-141gb.yaml").read_text())
    assert {k: v for k, v in raw_old.items() if k != "measured"} == {
        k: v for k, v in raw_now.items() if k != "measured"}
    h = read_gpu_file(cc.write_before(by["h200-l2-size"], tmp_path / "e") / "h200-sxm-141gb.yaml")
    assert h.value("l2_size_bytes") == 50 * 2**20 and h.value("memory_bus_bits") == 6144
    assert "H100 SXM5" in h.values["l2_size_bytes"].source
    now = read_gpu_file(cc.BUNDLED / "h200-sxm-141gb.yaml")
    assert now.value("l2_size_bytes") == 60 * 2**20 and now.value("memory_bus_bits") == 6016
    lap = read_gpu_file(cc.write_before(by["laptop-clock"], tmp_path / "f") /
                        "rtx-3060-laptop.yaml")
    now = read_gpu_file(cc.BUNDLED / "rtx-3060-laptop.yaml")
    assert lap.value("boost_clock_hz") == 1.703e9 and now.value("boost_clock_hz") == 1.478e9
    # every clock-derived peak at the upper end (30 SMs x 128 lanes x 2 FLOP x 1.703 GHz), its
    # source naming that clock; the DRAM bandwidth is no clock's
    assert lap.peak("fp32_fma_flops_per_s") == pytest.approx(30 * 128 * 2 * 1.703e9)
    assert "1.703 GHz" in lap.peaks["fp32_fma_flops_per_s"].source
    assert lap.peak("dram_bw_bytes_per_s") == now.peak("dram_bw_bytes_per_s")


def test_the_report_shows_before_now_and_the_pairs_a_missing_value_left_out(cc):
    c = cc.CORRECTIONS[0]
    before = {"t": {"bandwidth": (10.7, 9.0, 40), "compute": (21.0, 18.5, 40),
                    "hierarchical": (50.0, 30.0, 30)}}
    now = {"t": {"bandwidth": (9.0, 7.8, 40), "compute": (21.02, 18.5, 40),
                 "hierarchical": (48.4, 30.3, 40)}}
    md = cc.markdown([(c, before, now)])
    assert "| bandwidth | 10.7 / 9.0 -> 9.0 / 7.8 |" in md
    assert "| compute | 21.0 / 18.5 = |" in md
    assert "| hierarchical | 50.0 / 30.0 (30 pairs) -> 48.4 / 30.3 (40) |" in md


def test_before_writes_the_files_for_other_scripts_and_refuses_unknown_names(cc, tmp_path,
                                                                              capsys):
    cc.main(["--before", "k5200-fp64", str(tmp_path / "x")])
    assert capsys.readouterr().out.strip() == str(tmp_path / "x")
    assert (tmp_path / "x" / "quadro-k5200.yaml").exists()
    with pytest.raises(SystemExit) as e:
        cc.main(["--before", "nope", str(tmp_path / "y")])
    assert e.value.code == 2 and "gtx970-bandwidth" in capsys.readouterr().err


def test_the_report_scores_the_bundled_catalog_whatever_the_users_own_gpu_files(
        cc, tmp_path, monkeypatch):
    import gpuproj.catalog as catalog

    # the user's own GTX 970 file, as `gpuproj bench --gpu gtx-970` writes one
    mine = tmp_path / "mine"
    mine.mkdir()
    raw = yaml.safe_load((cc.BUNDLED / "gtx-970.yaml").read_text())
    raw["peak"]["dram_bw_bytes_per_s"]["value"] = 1.5e11
    (mine / "gtx-970.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    monkeypatch.setenv("GPUPROJ_GPU_PATH", str(mine))
    assert catalog.resolve("gtx-970").peak("dram_bw_bytes_per_s") == 1.5e11
    user_dir = catalog.USER_DIR
    with cc.bundled_catalog_and():
        assert catalog.resolve("gtx-970").peak("dram_bw_bytes_per_s") == 1.96e11
    before = cc.write_before(cc.CORRECTIONS[0], tmp_path / "before")
    with cc.bundled_catalog_and(before):  # no clash with the user's file of the same id
        assert catalog.resolve("gtx-970").peak("dram_bw_bytes_per_s") == 2.24e11
    assert catalog.USER_DIR == user_dir
    assert catalog.resolve("gtx-970").peak("dram_bw_bytes_per_s") == 1.5e11
