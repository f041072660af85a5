"""scripts/doc_numbers.py recomputes numbers the docs' prose quotes: where a section runs in
a moment, the quoted number is checked against it, so that a catalog change that moves it
fails here rather than leaving the prose stale."""

import re
from pathlib import Path

from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]


def test_the_boost_base_clock_ratio_docs_ncu_quotes(capsys):
    load_script("doc_numbers").boost_base_clocks(None)
    out = capsys.readouterr().out
    m = re.search(r"NVIDIA: boost / base clock on the (\d+) catalog GPUs that list both: "
                  r"([\d.]+) \(\S+\) to ([\d.]+) \(\S+\)", out)
    assert m, out
    n, low, high = m.groups()
    text = " ".join((ROOT / "docs" / "ncu.md").read_text().split())
    assert f"({low}-{high} on the {n} NVIDIA GPUs of the catalog that list both" in text
