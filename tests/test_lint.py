"""The repository keeps the lint rules of pyproject.toml's [tool.ruff] (pyflakes, pycodestyle
with 100-character lines, sorted imports), so that a change that breaks them fails the tests
instead of piling up."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ruff")

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    paths = [p for p in ("src", "scripts", "tests", "benchmarks") if (ROOT / p).is_dir()]
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                        "--output-format", "concise", *paths],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
