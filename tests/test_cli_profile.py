"""``gpuproj profile``: the ncu command line it builds and runs. No GPU and no ncu here: a
stand-in ``ncu`` script records its arguments and writes a hand-built ncu CSV fixture
(tests/data/README.md) to the ``--log-file`` path, as ncu does."""

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from gpuproj.cli.main import main
from gpuproj.profiles.readers.ncu_csv import metric_names

FIXTURE = Path(__file__).parent / "data" / "ncu-h100-sxm5-80gb-raw-base.csv"


def _fake_ncu(tmp_path, rc=0):
    script = tmp_path / "bin" / "ncu"
    script.parent.mkdir()
    script.write_text(f"""#!{sys.executable}
import json, shutil, sys
args = sys.argv[1:]
json.dump(args, open({str(tmp_path / 'argv.json')!r}, "w"))
out = args[args.index("--log-file") + 1]
shutil.copy({str(FIXTURE)!r}, out)
sys.exit({rc})
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_profile_runs_ncu_with_the_metric_table(tmp_path, monkeypatch, capsys):
    _fake_ncu(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    out = tmp_path / "p.csv"
    mfile = tmp_path / "metrics.txt"
    main(["profile", "--out", str(out), "--metrics-file", str(mfile), "--", "./app", "--n", "5"])
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[:7] == ["--csv", "--page", "raw", "--print-units", "base",
                        "--clock-control", "none"]
    assert argv[argv.index("--metrics") + 1] == ",".join(metric_names())
    assert argv[-3:] == ["./app", "--n", "5"]                   # app args passed through as a list
    assert out.read_text() == FIXTURE.read_text()
    assert mfile.read_text().split() == metric_names()
    assert "3 kernel configuration(s) on h100-sxm5-80gb" in capsys.readouterr().err


def test_profile_without_ncu(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    if Path("/usr/local/cuda/bin/ncu").exists():
        pytest.skip("a real ncu is installed")
    with pytest.raises(SystemExit) as e:
        main(["profile", "--", "./app"])
    assert e.value.code == 2
    assert "ncu" in capsys.readouterr().err


def test_profile_ncu_failure(tmp_path, monkeypatch, capsys):
    _fake_ncu(tmp_path, rc=3)
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    with pytest.raises(SystemExit) as e:
        main(["profile", "--out", str(tmp_path / "p.csv"), "--", "./app"])
    assert e.value.code == 2 and "status 3" in capsys.readouterr().err


def test_profile_dry_run(capsys):
    main(["profile", "--dry-run", "--kernel", "saxpy", "--", "./app", "a b"])
    line = capsys.readouterr().out.strip()
    assert line.startswith("ncu --csv --page raw") and "--kernel-name regex:saxpy" in line
    assert line.endswith("./app 'a b'")
