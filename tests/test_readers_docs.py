"""docs/profiles.md is generated from the code and docs/ncu.md names every metric gpuproj asks for."""

import importlib.util
from pathlib import Path

from gpuproj.profiles.readers.ncu_csv import metric_names

ROOT = Path(__file__).resolve().parents[1]


def test_profiles_doc_is_current():
    spec = importlib.util.spec_from_file_location("profiles_doc", ROOT / "scripts" / "profiles_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (ROOT / "docs" / "profiles.md").read_text() == mod.document(), \
        "run python scripts/profiles_doc.py --write"


def test_ncu_doc_lists_every_metric():
    text = (ROOT / "docs" / "ncu.md").read_text()
    missing = [m for m in metric_names() if f"`{m}`" not in text]
    assert not missing
