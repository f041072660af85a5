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

FIXTURE = Path(__file__).parent / "data" / "ncu-handbuilt-h100-raw-base.csv"


@pytest.fixture(autouse=True)
def _an_app(tmp_path, monkeypatch):
    """The application the tests profile, ``./app`` (the stand-in profilers never run it)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").write_text("")


def _stand_in(tmp_path, monkeypatch, name, body):
    """An executable Python script ``name`` in ``tmp_path/bin``, first on PATH."""
    script = tmp_path / "bin" / name
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!{sys.executable}\n{body}")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(script.parent) + os.pathsep + os.environ["PATH"])


def _fake_ncu(tmp_path, monkeypatch, rc=0, listing=None):
    """``listing``: what ``ncu --query-metrics`` prints (None: it fails, as without a GPU);
    asked for a metric it does not list, the stand-in fails as ncu does, with an error line in
    its log (and exit status 0, which ncu may also give)."""
    _stand_in(tmp_path, monkeypatch, "ncu", f"""
import json, re, shutil, sys
args = sys.argv[1:]
listing = {listing!r}
if "--query-metrics" in args:
    open({str(tmp_path / 'queried')!r}, "w").close()
    print(listing or "==ERROR== no device")
    sys.exit(0 if listing else 1)
with open({str(tmp_path / 'calls.jsonl')!r}, "a") as f:
    f.write(json.dumps(args) + "\\n")
json.dump(args, open({str(tmp_path / 'argv.json')!r}, "w"))
out = args[args.index("--log-file") + 1]
if listing:
    known = set(re.findall(r"[a-z0-9_]+__[a-z0-9_.]+", listing))
    for m in args[args.index("--metrics") + 1].split(","):
        if m not in known and not m.startswith(("launch__", "device__", "gpu__time")):
            open(out, "w").write("==ERROR== Failed to find metric " + m + "\\n")
            sys.exit(0)
shutil.copy({str(FIXTURE)!r}, out)
sys.exit({rc})
""")


def test_profile_runs_ncu_with_the_metric_table(tmp_path, monkeypatch, capsys):
    _fake_ncu(tmp_path, monkeypatch)
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


def test_profile_leaves_out_metrics_the_gpu_does_not_offer(tmp_path, monkeypatch, capsys):
    """ncu stops at the first metric the GPU lacks: after such a failure gpuproj asks it which
    it offers (a listing as `ncu --query-metrics --query-metrics-mode all` prints it, here
    without the two shared-memory byte and conflict counters) and profiles again without the
    others, saying which."""
    lacking = {"smsp__sass_data_bytes_mem_shared.sum",
               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"}
    offered = [m for m in metric_names() if m not in lacking
               and not m.startswith(("launch__", "device__", "gpu__time"))]
    filler = [f"lts__t_sectors_srcunit_tex_op_read_{i}.sum" for i in range(60)]
    listing = "Device NVIDIA H100 80GB HBM3 (GH100)\nMetric Name   Metric Description\n" + \
        "\n".join(f"{m}   # some description of {m.split('__')[0]}" for m in offered + filler)
    _fake_ncu(tmp_path, monkeypatch, listing=listing)
    out = tmp_path / "p.csv"
    mfile = tmp_path / "metrics.txt"
    main(["profile", "--out", str(out), "--metrics-file", str(mfile), "--", "./app"])
    argv = json.loads((tmp_path / "argv.json").read_text())
    asked = argv[argv.index("--metrics") + 1].split(",")
    assert asked == [m for m in metric_names() if m not in lacking]
    assert "gpu__time_duration.sum" in asked and "launch__grid_size" in asked
    assert mfile.read_text().split() == asked
    err = capsys.readouterr().err
    assert "does not offer 2 of gpuproj's metrics" in err and "profiling again" in err
    assert all(m in err for m in lacking)
    assert out.read_text() == FIXTURE.read_text()
    assert len((tmp_path / "calls.jsonl").read_text().splitlines()) == 2  # the run, then again
    assert (tmp_path / "queried").exists()


def test_profile_asks_for_the_offered_metrics_only_after_a_failure(tmp_path, monkeypatch):
    """The query costs seconds and collect.sh profiles in many short runs: a run that works is
    the only run."""
    listing = "\n".join(metric_names() + [f"lts__x_{i}.sum" for i in range(60)])
    _fake_ncu(tmp_path, monkeypatch, listing=listing)
    main(["profile", "--out", str(tmp_path / "p.csv"), "--", "./app"])
    assert len((tmp_path / "calls.jsonl").read_text().splitlines()) == 1
    assert not (tmp_path / "queried").exists()


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
    _fake_ncu(tmp_path, monkeypatch, rc=3)
    with pytest.raises(SystemExit) as e:
        main(["profile", "--out", str(tmp_path / "p.csv"), "--", "./app"])
    assert e.value.code == 2 and f"status 3 (its messages are in {tmp_path / 'p.csv'})" in \
        capsys.readouterr().err
    # an ncu that fails before writing its log: no file to send the user to
    with pytest.raises(SystemExit) as e:
        main(["profile", "--ncu", "/bin/false", "--out", str(tmp_path / "q.csv"), "--",
              "./app"])
    assert e.value.code == 2 and "status 1 (it wrote nothing)" in capsys.readouterr().err


def test_debug_is_a_global_option_not_the_applications(tmp_path, capsys):
    """``--debug`` after the command name, past ``--``, is the profiled application's own: the
    error stays one line; before the command name it is gpuproj's and shows the traceback."""
    from gpuproj.errors import GpuprojError

    args = ["profile", "--ncu", "/bin/false", "--out", str(tmp_path / "q.csv"), "--", "./app"]
    with pytest.raises(SystemExit) as e:
        main(args + ["--debug"])
    assert e.value.code == 2 and "gpuproj: error:" in capsys.readouterr().err
    with pytest.raises(GpuprojError):
        main(["--debug"] + args)


@pytest.mark.parametrize("kernel", ["--kernel", "-k"])
def test_profile_dry_run(capsys, kernel):
    main(["profile", "--dry-run", kernel, "saxpy", "--", "./app", "a b"])
    line = capsys.readouterr().out.strip()
    assert line.startswith("ncu --csv --page raw") and "--kernel-name regex:saxpy" in line
    assert line.endswith("./app 'a b'")


NSYS_TRACE = Path(__file__).parent / "data" / "nsys" / "vernier-thor_cuda_gpu_trace.csv"


def _fake_nsys(tmp_path, monkeypatch, profile_rc=0, kernels=True):
    """A stand-in ``nsys``: ``profile`` writes the report, ``stats`` writes a real Thor trace
    (tests/data/nsys) where its ``--output`` prefix says, or, for an application without
    kernels, only nsys's SKIPPED line; each call's arguments are recorded."""
    _stand_in(tmp_path, monkeypatch, "nsys", f"""import json, shutil, sys
args = sys.argv[1:]
with open({str(tmp_path / 'nsys-calls.jsonl')!r}, "a") as f:
    f.write(json.dumps(args) + "\\n")
out = args[args.index("--output") + 1]
if args[0] == "profile":
    open(out + ".nsys-rep", "w").write("report")
    sys.exit({profile_rc})
if {kernels!r}:
    shutil.copy({str(NSYS_TRACE)!r}, out + "_cuda_gpu_trace.csv")
else:
    print("SKIPPED: " + args[-1] + " does not contain CUDA trace data.")
""")


def test_profile_timeline_runs_nsys_and_writes_its_kernel_trace(tmp_path, monkeypatch, capsys):
    _fake_nsys(tmp_path, monkeypatch)
    out = tmp_path / "app.csv"
    main(["profile", "--timeline", "-o", str(out), "--", "./app", "--n", "5"])
    run, stats = [json.loads(ln) for ln in (tmp_path / "nsys-calls.jsonl").read_text().split("\n")
                  if ln]
    assert run[:5] == ["profile", "--trace=cuda", "--sample=none", "--cpuctxsw=none",
                       "--cuda-graph-trace=node"]
    assert run[-3:] == ["./app", "--n", "5"]
    assert stats[:5] == ["stats", "--report", "cuda_gpu_trace", "--format", "csv"]
    assert stats[-1] == run[run.index("--output") + 1] + ".nsys-rep"
    assert out.read_text() == NSYS_TRACE.read_text()
    assert not Path(stats[-1]).exists()  # the report went with its temporary folder
    assert "1 kernel configuration(s) on jetson-agx-thor, 4 launch(es)" in capsys.readouterr().err


@pytest.mark.parametrize("profile_rc, kernels, message", [
    (5, True, "nsys profile exited with status 5"),
    (0, False, "nsys stats wrote no kernel trace"),
])
def test_profile_timeline_failures(tmp_path, monkeypatch, capsys, profile_rc, kernels, message):
    _fake_nsys(tmp_path, monkeypatch, profile_rc=profile_rc, kernels=kernels)
    with pytest.raises(SystemExit) as e:
        main(["profile", "--timeline", "-o", str(tmp_path / "app.csv"), "--", "./app"])
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_profile_timeline_options(capsys):
    main(["profile", "--timeline", "--dry-run", "-o", "app.csv", "--", "./app", "a b"])
    # the commands that run: nsys stats writes <prefix>_cuda_gpu_trace.csv in the temporary
    # folder, copied to -o (the dry run printed a --output that would write app_cuda_gpu_...)
    run, stats, copy = capsys.readouterr().out.strip().split("\n")
    assert run.startswith("nsys profile --trace=cuda") and run.endswith("./app 'a b'")
    assert stats.endswith("--output WORK/stats WORK/report.nsys-rep")
    assert copy == "cp WORK/stats_cuda_gpu_trace.csv app.csv"
    for args in (["--kernel", "saxpy"], ["--launch-count", "2"]):
        with pytest.raises(SystemExit) as e:
            main(["profile", "--timeline", *args, "--", "./app"])
        assert e.value.code == 2 and "Nsight Compute" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["profile", "--nsys", "nsys", "--", "./app"])
    assert e.value.code == 2 and "--nsys goes with --timeline" in capsys.readouterr().err


def test_profile_checks_what_ncu_would_only_report_in_its_log(tmp_path, monkeypatch, capsys):
    # a missing application was "ncu exited with status 1 (its messages are in y.csv)"; an
    # output folder that does not exist was not made; --launch-count 0 profiled every launch
    # and a bad --kernel regex went to ncu
    _fake_ncu(tmp_path, monkeypatch)
    with pytest.raises(SystemExit) as e:
        main(["profile", "--", "./no-such-app"])
    assert e.value.code == 2 and capsys.readouterr().err == (
        "gpuproj: error: no application ./no-such-app to run (not a file, nor a command on "
        "PATH)\n")
    main(["profile", "-o", str(tmp_path / "new" / "dir" / "p.csv"), "--", "./app"])
    assert (tmp_path / "new" / "dir" / "p.csv").stat().st_size > 0
    for args, says in ((["--launch-count", "0"], "0 is not in the range x>=1"),
                       (["--kernel", "("], "--kernel '(' is not a regular expression")):
        with pytest.raises(SystemExit) as e:
            main(["profile", *args, "--", "./app"])
        assert e.value.code == 2 and says in capsys.readouterr().err


@pytest.mark.parametrize("log,rc,says", [
    ("==PROF== Connected to process 1 (./app)\n==ERROR== ERR_NVGPUCTRPERM - The user does not "
     "have permission to access NVIDIA GPU Performance Counters on the target device 0.\n", 0,
     "ncu reported an error: ==ERROR== ERR_NVGPUCTRPERM - The user does not have permission"),
    ("==ERROR== The application returned an error code (1).\n", 1,
     "ncu exited with status 1: ==ERROR== The application returned an error code (1). (its "
     "messages are in p.csv)"),
    ("==PROF== Connected to process 1 (./app)\n==WARNING== No kernels were profiled.\n", 0,
     "ncu wrote no results to p.csv: ==WARNING== No kernels were profiled.")])
def test_profile_says_what_ncu_said(tmp_path, monkeypatch, capsys, log, rc, says):
    """ncu can exit 0 after an error (no permission to the performance counters), and a run
    that profiled no kernel writes a log of warnings: the message was the CSV reader's "no
    Nsight Compute CSV header", whose advice repeats the flags gpuproj gave ncu."""
    _stand_in(tmp_path, monkeypatch, "ncu", f"""
import sys
args = sys.argv[1:]
if "--query-metrics" in args:
    sys.exit(1)
open(args[args.index("--log-file") + 1], "w").write({log!r})
sys.exit({rc})
""")
    with pytest.raises(SystemExit) as e:
        main(["profile", "--out", "p.csv", "--", "./app"])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1 and says in err[0], err


def test_profile_keeps_the_results_ncu_wrote_beside_an_error(tmp_path, monkeypatch, capsys):
    # ncu says of a kernel it could not profile with an error line and goes on: the other
    # kernels' results were thrown away with the run
    _stand_in(tmp_path, monkeypatch, "ncu", f"""
import sys
args = sys.argv[1:]
if "--query-metrics" in args:
    sys.exit(1)
text = open({str(FIXTURE)!r}).read()
open(args[args.index("--log-file") + 1], "w").write(
    text + "==ERROR== Failed to profile kernel \\"other\\" in process 1\\n")
""")
    main(["profile", "--out", "p.csv", "--", "./app"])
    err = capsys.readouterr().err
    assert ('gpuproj: warning: ncu reported ==ERROR== Failed to profile kernel "other" in '
            "process 1; p.csv has the kernels it profiled") in err
    assert "3 kernel configuration(s) on h100-sxm5-80gb" in err
