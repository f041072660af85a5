"""What a wheel or an sdist built from this repository carries, checked against pyproject.toml
and MANIFEST.in without building one (no network, no build backend): the data files the package
opens at run time, the sdist's folders the tests read, the imports the dependencies cover, and
one version for the metadata and ``gpuproj --version``."""

import ast
import fnmatch
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import gpuproj
from gpuproj.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "gpuproj"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

# import name -> distribution name, where they differ
DISTRIBUTION = {"sklearn": "scikit-learn", "yaml": "pyyaml"}
# imported only inside the function that needs them, and not through an extra: what they come
# with, or why no extra installs them (each import's error message says what to install)
OPTIONAL_WITHOUT_EXTRA = {
    "pymbolic": "installed with loopy (the calibrate extra)",
    "cupy": "CUDA timing of calibrated models; its wheel depends on the CUDA version",
    "torch": "named in the PyTorch reader's docstring only",
}


def _requirement_name(req: str) -> str:
    return re.split(r"[\s\[<>=!~;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _declared(extras: bool) -> set[str]:
    project = PYPROJECT["project"]
    reqs = list(project["dependencies"])
    if extras:
        for name, group in project.get("optional-dependencies", {}).items():
            reqs += [r for r in group if not r.startswith("gpuproj[")]
    return {_requirement_name(r) for r in reqs}


def _third_party_imports():
    """(module file, top-level import name, whether at module level) for every import in the
    package of a module that is neither the standard library's nor gpuproj's."""
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                root = name.split(".")[0]
                if root in sys.stdlib_module_names or root == "gpuproj":
                    continue
                yield path.relative_to(ROOT), root, id(node) in top


def _package_data_patterns() -> list[str]:
    return PYPROJECT["tool"]["setuptools"]["package-data"]["gpuproj"]


def test_every_data_file_of_the_package_goes_into_the_wheel():
    # the catalog's YAML, the error bands, the bench kernels, the calibrated model files: a
    # file in the package that no package-data pattern matches is missing from the wheel
    patterns = _package_data_patterns()
    data = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    assert data, "no data files found under src/gpuproj"
    missed = [f for f in data if not any(fnmatch.fnmatchcase(f, pat) for pat in patterns)]
    assert missed == [], f"not in [tool.setuptools.package-data]: {missed}"


def test_every_package_data_pattern_matches_a_file():
    # a pattern left behind after a folder moved would hide that its files are missing
    files = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*") if p.is_file()]
    empty = [pat for pat in _package_data_patterns()
             if not any(fnmatch.fnmatchcase(f, pat) for f in files)]
    assert empty == []


def test_module_level_imports_are_core_dependencies():
    # `pip install gpuproj` without extras must import every module it loads on start-up
    core = _declared(extras=False)
    undeclared = sorted({f"{name} ({path})" for path, name, top in _third_party_imports()
                         if top and DISTRIBUTION.get(name, name).lower() not in core})
    assert undeclared == []


def test_every_third_party_import_is_declared():
    allowed = _declared(extras=True) | set(OPTIONAL_WITHOUT_EXTRA)
    undeclared = sorted({f"{name} ({path})" for path, name, _ in _third_party_imports()
                         if DISTRIBUTION.get(name, name).lower().replace("_", "-") not in allowed})
    assert undeclared == [], ("declare them in pyproject.toml (an extra for an optional one) "
                              "or in OPTIONAL_WITHOUT_EXTRA with why not")


def test_every_core_dependency_is_imported():
    imported = {DISTRIBUTION.get(name, name).lower() for _, name, _ in _third_party_imports()}
    assert sorted(_declared(extras=False) - imported) == []


def _manifest_grafts() -> set[str]:
    lines = (ROOT / "MANIFEST.in").read_text().splitlines()
    return {ln.split()[1].rstrip("/") for ln in lines if ln.startswith("graft ")}


def _folders_the_tests_read() -> set[str]:
    """Top-level folders of the repository that a string in the tests names ("docs",
    "examples/x.csv", "data/suite" ...)."""
    skip = {".git", ".pytest_cache", ".ruff_cache", ".venv", "build", "dist", "out"}
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and p.name not in skip}
    named = set()
    for path in (ROOT / "tests").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                first = node.value.split("/")[0]
                if first in folders:
                    named.add(first)
    return named


def test_sdist_carries_what_the_tests_read():
    # setuptools puts only the package and tests/test*.py into an sdist by itself: no
    # conftest.py, no fixtures, no README examples' files
    grafts = _manifest_grafts()
    assert {"src", "tests", ".ci"} <= grafts
    missing = sorted(_folders_the_tests_read() - grafts)
    assert missing == [], f"MANIFEST.in grafts none of {missing}, which the tests read"


def test_one_version_for_metadata_and_cli(capsys, monkeypatch):
    assert "version" not in PYPROJECT["project"]
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "gpuproj.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+([.-]?\w+)*", gpuproj.__version__)
    # from the package itself, not the installed metadata: the same from a source tree on
    # PYTHONPATH, where there is none, or a stale one
    def no_metadata(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", no_metadata)
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"gpuproj, version {gpuproj.__version__}"


def test_console_script_is_the_cli_entry_point():
    target = PYPROJECT["project"]["scripts"]["gpuproj"]
    module, attr = target.split(":")
    assert (module, attr) == ("gpuproj.cli.main", "main")


def test_requires_python_matches_ruff_target():
    # the lint rules judge the syntax of the oldest Python the package admits
    low = re.fullmatch(r">=\s*3\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert low, PYPROJECT["project"]["requires-python"]
    assert PYPROJECT["tool"]["ruff"]["target-version"] == f"py3{low.group(1)}"
