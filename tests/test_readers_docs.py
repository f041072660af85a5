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


def test_profiles_doc_says_a_table_of_times_needs_its_gpu_named():
    """A ``kernel,time_s`` table used as a trace needs a ``gpu`` column or ``--source``: the
    profile's GPU is not taken for it, and the docs did not say so."""
    text = (ROOT / "docs" / "profiles.md").read_text()
    trace = text.split("## Times from a trace", 1)[1].split("\n## ", 1)[0]
    assert "needs a ``gpu`` column, or ``--source NAME``" in trace


def test_ncu_doc_names_every_limiter():
    """docs/ncu.md says what each limiter of a prediction means; a new one must be added there."""
    from gpuproj.models.base import LIMITERS

    text = (ROOT / "docs" / "ncu.md").read_text()
    section = text.split("## From a report to a prediction", 1)[1].split("\n## ", 1)[0]
    assert not [name for name in LIMITERS if f"`{name}`" not in section]
