"""docs/profiles.md is generated from the code and docs/ncu.md names every metric gpuproj asks
for."""

from pathlib import Path

from conftest import load_script

from gpuproj.profiles.readers.ncu_csv import metric_names

ROOT = Path(__file__).resolve().parents[1]


def test_profiles_doc_is_current():
    assert (ROOT / "docs" / "profiles.md").read_text() == load_script("profiles_doc").document(), \
        "run python scripts/profiles_doc.py --write"


def test_ncu_doc_lists_every_metric():
    text = (ROOT / "docs" / "ncu.md").read_text()
    missing = [m for m in metric_names() if f"`{m}`" not in text]
    assert not missing
