"""What `gpuproj bench` and `gpuproj calibrate` write: refused before anything is measured
where it would overwrite an input, cannot be written, or could not be read back, each in one
line naming the option's path."""

import json
import shutil
from pathlib import Path

import pytest
from bench_helpers import SimulatedBackend
from conftest import run_cli

from gpuproj.bench import QUICK, run_suite

DATA = Path(__file__).parent / "data"
MODEL = DATA / "calibrated-pocl-tiny-model.yaml"


@pytest.fixture(scope="module")
def raw_result():
    return run_suite(SimulatedBackend(), QUICK)


@pytest.fixture()
def raw_file(raw_result, tmp_path):
    path = tmp_path / "sim.json"
    path.write_text(json.dumps(raw_result))
    return path


@pytest.fixture()
def no_measuring(monkeypatch):
    """A backend that opens (the device's name gives the default file names) but fails the
    test if anything is measured on it."""
    import gpuproj.bench as B

    monkeypatch.setattr(B, "open_backend", lambda *a: SimulatedBackend())
    monkeypatch.setattr(B, "run_suite", lambda *a, **k: pytest.fail("measured"))


class _NoRunner:
    device_name = "simulated"

    def time(self, mk):
        raise AssertionError(f"kernel {mk.name} ran")


@pytest.fixture()
def no_timing(monkeypatch):
    from gpuproj.calibrated import timing as T

    monkeypatch.setattr(T, "make_runner", lambda device, **kw: _NoRunner())


def _one_line(code, err):
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("spelling", ["{d}/m.yaml", "{d}/../{n}/m.yaml"])
def test_calibrate_refuses_to_overwrite_its_model_file(tmp_path, capsys, no_timing, spelling):
    # -o naming the model file replaced it with the parameters' JSON, exit 0
    model = tmp_path / "m.yaml"
    shutil.copy(MODEL, model)
    out = spelling.format(d=tmp_path, n=tmp_path.name)
    code, stdout, err = run_cli(capsys, "calibrate", str(model), "--device", "pthread", "-o", out)
    _one_line(code, err)
    assert err == f"gpuproj: error: -o {out} would overwrite the model file\n"
    assert model.read_text() == MODEL.read_text() and stdout == ""


def test_calibrate_checks_its_output_folder_before_timing(tmp_path, capsys, no_timing,
                                                          monkeypatch):
    # a file where the folder would be was found after every kernel had been timed
    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" / "sub" / "x.json"
    code, _, err = run_cli(capsys, "calibrate", str(MODEL), "-o", str(out))
    _one_line(code, err)
    assert err == (f"gpuproj: error: -o {out}: cannot write: a file stands where its folder "
                   "would be\n")
    # a folder that has the default name (-o's own check is click's) passed the check
    monkeypatch.chdir(tmp_path)
    (tmp_path / "calibrated-tiny-simulated.json").mkdir()
    code, _, err = run_cli(capsys, "calibrate", str(MODEL))
    _one_line(code, err)
    assert err == ("gpuproj: error: calibrated-tiny-simulated.json: cannot write: a folder stands "
                   "where the file would be\n")


@pytest.mark.parametrize("args, message", [
    (["-o", "{d}/afile/z.yaml"], "-o {d}/afile/z.yaml: cannot write"),
    (["-o", "{d}/z.yaml", "--raw", "{d}/afile/z.json"], "--raw {d}/afile/z.json: cannot write"),
    (["-o", "{d}/z.yaml", "--plots", "{d}/afile/pics"],
     "--plots {d}/afile/pics/roofline.png: cannot write"),
])
def test_bench_checks_its_output_folders_before_measuring(tmp_path, capsys, no_measuring, args,
                                                          message):
    # the whole suite ran, then the error named the raw file, not the -o the user gave
    (tmp_path / "afile").write_text("")
    code, _, err = run_cli(capsys, "bench", "--quick", "-q",
                           *[a.format(d=tmp_path) for a in args])
    _one_line(code, err)
    assert err.startswith(f"gpuproj: error: {message.format(d=tmp_path)}: a file stands")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("from_raw", [True, False])
def test_bench_never_writes_the_raw_result_over_the_gpu_file(raw_file, tmp_path, capsys,
                                                             no_measuring, from_raw):
    # --raw naming the --gpu file replaced the GPU with the raw JSON, then failed to read it
    gpu = tmp_path / "some" / "gpu.yaml"
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(raw_file), "-o", str(gpu))
    assert code == 0, err
    before = gpu.read_text()
    measure = ["--from-raw", str(raw_file)] if from_raw else ["--quick"]
    code, _, err = run_cli(capsys, "bench", *measure, "--gpu", str(gpu), "--raw", str(gpu),
                           "-o", str(tmp_path / "out.yaml"))
    _one_line(code, err)
    assert f"--raw {gpu} would overwrite the --gpu file" in err
    assert gpu.read_text() == before and not (tmp_path / "out.yaml").exists()


# measuring, -o x.json is the raw result's default name, refused as such
@pytest.mark.parametrize("from_raw, name", [(True, "x.json"), (True, "noext"), (True, "x.YAML"),
                                            (False, "noext"), (False, "x.yml.bak")])
def test_bench_writes_gpu_files_only_under_names_that_load(raw_file, tmp_path, capsys,
                                                           no_measuring, from_raw, name):
    # -o x.json wrote a GPU file that no command would load
    out = tmp_path / name
    measure = ["--from-raw", str(raw_file)] if from_raw else ["--quick"]
    code, _, err = run_cli(capsys, "bench", *measure, "-o", str(out))
    _one_line(code, err)
    assert err == (f"gpuproj: error: -o {out}: the GPU file is YAML: name the file .yaml "
                   "or .yml\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [raw_file.name]


def test_calibrate_help_says_what_it_takes(capsys):
    code, stdout, _ = run_cli(capsys, "calibrate", "--help")
    assert code == 0
    text = " ".join(stdout.split())
    # without --device the first OpenCL device that is no simulator, a CPU too
    assert "first OpenCL GPU" not in text and "# first OpenCL device" in text
    assert "a CPU as well as a GPU" in text
    # one tag per --tags; a variant tag's values are comma-separated (not "comma-free words")
    assert "comma-free" not in text and "ARG:VALUES with the values comma-separated" in text


def test_a_folder_that_cannot_be_written_in_is_said_before_timing(tmp_path, capsys, no_timing,
                                                                  monkeypatch):
    import tempfile

    # tests run as root, who may write anywhere: the folder refuses files for the check
    ro = tmp_path / "ro"
    ro.mkdir()
    make = tempfile.TemporaryFile

    def refused(*a, dir=None, **kw):
        if Path(dir) == ro:
            raise PermissionError(13, "Permission denied")
        return make(*a, dir=dir, **kw)

    monkeypatch.setattr(tempfile, "TemporaryFile", refused)
    out = ro / "new" / "x.json"
    code, _, err = run_cli(capsys, "calibrate", str(MODEL), "-o", str(out))
    _one_line(code, err)
    assert err == f"gpuproj: error: -o {out}: cannot write: permission denied\n"
    assert list(ro.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_folder_no_file_can_be_made_in_is_said_before_timing(capsys, no_timing):
    """/proc takes no new files, from root either, whom os.access lets write anywhere."""
    code, _, err = run_cli(capsys, "calibrate", str(MODEL), "-o", "/proc/x.json")
    _one_line(code, err)
    assert err.startswith("gpuproj: error: -o /proc/x.json: cannot write: ")


@pytest.mark.parametrize("args, message", [
    (["-o", "{raw}"], "-o {raw} would overwrite the --from-raw input"),
    (["-o", "{d}/x.yaml", "--raw", "{raw}"], "--raw {raw} would overwrite the --from-raw input"),
])
def test_outputs_that_would_overwrite_an_input_are_one_line(raw_file, tmp_path, capsys, args,
                                                            message):
    # click's usage error took three lines (usage, --help hint, error)
    fill = {"d": tmp_path, "raw": raw_file}
    code, _, err = run_cli(capsys, "bench", "--from-raw", str(raw_file),
                           *[a.format(**fill) for a in args])
    _one_line(code, err)
    assert err == f"gpuproj: error: {message.format(**fill)}\n"
