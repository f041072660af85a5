"""The examples in README.md and docs/ run as written: every `gpuproj` command of a fenced code
block, and the Python blocks. A command that cannot run in the tests (it needs a GPU, Nsight
Compute or a file only the user has) is listed in CANNOT_RUN with the reason, so a new example is
either run here or explained. The examples of every command's --help run too, on stand-ins for
the user's files (STAND_INS) and on the public data for those that name ../shared/ (as a
document's), or are listed in HELP_CANNOT_RUN.

Each document's commands run in order in one scratch directory (later ones read what earlier
ones wrote), with the repository's examples/, tests/, src/ and docs/results/ linked in and
`../shared/` pointing at the public data (without it, a document's commands run up to the first
that reads it)."""

import re
import shlex
import string
from pathlib import Path

import pytest
from conftest import opencl_unusable, run_cli

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DOCS = ["README.md"] + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))

CANNOT_RUN = {
    "gpuproj bench --gpu h100-sxm5-80gb -o h100.yaml": "measures a CUDA GPU",
    "gpuproj bench --from-raw h100.json --gpu h100-sxm5-80gb -o h100.yaml --plots plots/":
        "reads the previous command's GPU measurement",
    "gpuproj predict examples/rodinia-p100-nvprof.csv --target h100.yaml":
        "reads the GPU file of a CUDA measurement",
    "gpuproj calibrate src/gpuproj/calibrated/models/matmul.yaml --evaluate":
        "minutes of measurement on the first OpenCL device, a GPU where there is one",
    "gpuproj calibrate src/gpuproj/calibrated/models/matmul.yaml --device cuda":
        "needs a CUDA GPU and CuPy",
    "gpuproj profile -o saxpy.csv -- ./saxpy 1048576": "needs Nsight Compute and a GPU",
    "gpuproj predict saxpy.csv --target h100-sxm5-80gb": "reads the Nsight Compute profile above",
    "gpuproj profile --timeline -o saxpy-timeline.csv -- ./saxpy 1048576":
        "needs Nsight Systems and a GPU",
    "gpuproj predict saxpy.csv --trace saxpy-timeline.csv --target h100-sxm5-80gb":
        "reads the profile and the timeline above",
    "gpuproj evaluate TABLE --split gpu": "TABLE stands for the user's file",
    "gpuproj evaluate TABLE --split config": "TABLE stands for the user's file",
    "gpuproj evaluate TABLE --split kernel": "TABLE stands for the user's file",
    "gpuproj evaluate TEST --train TRAIN -m residual --save-model models/residual":
        "TEST and TRAIN stand for the user's files",
    "gpuproj sass diff app.sm_70.sass app.sm_90.sass": "app stands for the user's program",
    "gpuproj sass diff kernels.cu --arch sm_80,sm_90,sm_100 '[--kernel' 'REGEX]' '[--code]' "
    "'[--json]'": "a synopsis: kernels.cu stands for the user's file",
}
def runs_opencl(cmd: str) -> bool:
    """Commands that build and run OpenCL kernels on this machine's CPU (PoCL)."""
    return (cmd.startswith("gpuproj bench --backend opencl")
            or cmd.startswith("gpuproj calibrate") and "--device pthread" in cmd)


# Python blocks that name files the user has (the reader examples)
PYTHON_PLACEHOLDERS = ("run.csv", "metrics.csv")

# The user's files that the --help examples read, stood in for by bundled files of the same
# formats (the excerpts in tests/data, the example profile, a parameter file of docs/results)
STAND_INS = {
    "table.csv": "tests/data/amaris-2gpus-calculate_temp.csv",
    "gemm_4096.csv": "tests/data/kerneltuner-4gpus-gemm_clblast_4096.csv",
    # named without the GEMM size, which --reader-option gives
    "my_gemm_cache.csv": "tests/data/kerneltuner-4gpus-gemm_clblast_4096.csv",
    "run.csv": "examples/rodinia-p100-nvprof.csv",
    "kernel.yaml": "tests/data/calibrated-matmul-kernel.yaml",
    "calibrated-matmul-a100.json": "docs/results/calibrated_pocl-cpu_matmul_params.json",
    "timeline.csv": "tests/data/nsys/vernier-thor_cuda_gpu_trace.csv",
    "run.ncu-rep": "tests/data/ncu-h100-sxm5-80gb.ncu-rep",
}
HELP_CANNOT_RUN = {
    "gpuproj predict saxpy.csv --target h200": "reads the Nsight Compute profile of `profile`",
    "gpuproj predict saxpy.csv --trace saxpy-timeline.csv --target h200":
        "reads the Nsight Compute profile and the timeline of one run of `profile`",
    "gpuproj profile --timeline -o timeline.csv -- ./app": "needs Nsight Systems and a GPU",
    "gpuproj sass diff kernels.cu --arch sm_80,sm_90,sm_100": "compiles with nvcc",
    "gpuproj evaluate ../shared/data/external/kerneltuner-4gpus/gemm_clblast_4096_4gpus.csv.gz "
    "--split gpu -m gb,residual --coverage 0.8":
        "minutes: trains gb and residual on each held-out GPU's fold of the whole table "
        "(64k rows)",
}


def stage_user_files(folder):
    """The stand-ins of STAND_INS, app.csv, and train.csv / test.csv: the Rodinia excerpt's GPUs
    split six for training, three for testing."""
    import gzip

    import pandas as pd

    for name, source in STAND_INS.items():
        data = (ROOT / source).read_bytes()
        (folder / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    # a plain table of kernels, times and counts, the GPU named on the command line: the
    # example profile's three kernels in those columns
    from gpuproj.profiles import load

    app = load(ROOT / "examples/rodinia-p100-nvprof.csv").df
    app[["kernel", "time_s", "fp32_flops", "dram_bytes"]].to_csv(folder / "app.csv", index=False)
    rows = pd.read_csv(ROOT / "tests/data/amaris-9gpus-bpnn_adjust_weights.csv")
    train = rows["gpu_name"].isin(sorted(rows["gpu_name"].unique())[:6])
    rows[train].to_csv(folder / "train.csv", index=False)
    rows[~train].to_csv(folder / "test.csv", index=False)


def help_examples():
    """The `gpuproj ...` lines of every command's --help, comments dropped."""
    import click

    from gpuproj.cli.main import COMMANDS, cli

    def walk(cmd):
        yield cmd
        if isinstance(cmd, click.Group):
            for n in cmd.list_commands(None):
                yield from walk(cmd.get_command(None, n))

    found = []
    for cmd in [cli] + [c for n in COMMANDS for c in walk(cli.get_command(None, n))]:
        examples = False
        for line in f"{cmd.help or ''}\n{cmd.epilog or ''}".splitlines():
            examples = examples or line.strip().startswith("Example")
            if examples and line.strip().startswith("gpuproj "):
                found.append(shlex.join(shlex.split(line, comments=True)))
    return found


def blocks(doc):
    """(language, text) of each fenced code block of ``doc``."""
    return re.findall(r"^```(\w*)\n(.*?)^```", (ROOT / doc).read_text(), re.S | re.M)


def commands(doc):
    """The shell lines of ``doc``'s code blocks that run gpuproj, continuation lines joined,
    comments dropped: (environment assignments, the command as one normalised string)."""
    found = []
    for lang, text in blocks(doc):
        if lang not in ("", "sh"):
            continue
        for line in text.replace("\\\n", " ").splitlines():
            if not (re.match(r"([A-Z_]+=\S*\s+)*(gpuproj|pip)\s", line)
                    or re.fullmatch(r"[A-Z_]+=\S*", line.strip())):
                continue
            words = shlex.split(line, comments=True)
            env = {}
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                k, v = words.pop(0).split("=", 1)
                env[k] = v
            if words[:1] == ["pip"] and "&&" in words:  # README: install, then run
                words = words[words.index("&&") + 1:]
            if words[:1] == ["gpuproj"]:
                found.append((env, shlex.join(words)))
            elif env and not words:
                found.append((env, ""))  # a shell variable the next commands use
    return found


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    for name in ("examples", "tests", "src"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "results").symlink_to(ROOT / "docs" / "results")
    (tmp_path / "docs" / "img").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_listed_command_is_still_in_the_docs():
    shown = {c for doc in DOCS for _, c in commands(doc)}
    assert not set(CANNOT_RUN) - shown, "CANNOT_RUN names commands no document shows"


@pytest.mark.parametrize("doc", [d for d in DOCS
                                 if any(c and c not in CANNOT_RUN for _, c in commands(d))])
def test_doc_commands_run_as_written(doc, workdir, capsys, monkeypatch):
    def run(env, cmd):
        with monkeypatch.context() as m:
            for k, v in env.items():
                m.setenv(k, v)
            return run_cli(capsys, *shlex.split(cmd)[1:])

    shell = {}
    ran = 0
    calibration = None  # the last `gpuproj calibrate` run, which times kernels on this CPU
    for env, cmd in commands(doc):
        if not cmd:
            shell.update(env)
            continue
        if cmd in CANNOT_RUN:
            continue
        cmd = string.Template(cmd).substitute(shell)
        if ("../shared/" in cmd and not SHARED.exists()
                or runs_opencl(cmd) and opencl_unusable()):
            break  # and the rest, which may read what this one would have written
        cmd = cmd.replace("../shared/", f"{SHARED}/")
        code, out, err = run(env, cmd)
        if code and "not positive (negative parameters" in err and calibration:
            # a fit to times taken on a busy CPU can give costs negative values, and the
            # prediction then none (docs/calibrated.md): calibrate once more, as a user would
            assert run(*calibration)[0] == 0
            code, out, err = run(env, cmd)
        if cmd.startswith("gpuproj calibrate "):
            calibration = (env, cmd)
        assert code == 0, f"{doc}: `{cmd}` exited {code}:\n{err[-2000:]}"
        assert out or err, f"{doc}: `{cmd}` said nothing"
        ran += 1
    if ran == 0:
        pytest.skip("its first command reads ../shared/data/external or runs OpenCL kernels "
                    f"({opencl_unusable() or 'which can run here'})")


def python_blocks(doc, placeholders: bool):
    """The Python blocks of ``doc`` that name a file of the user's (``PYTHON_PLACEHOLDERS``),
    or those that do not."""
    return [text for lang, text in blocks(doc) if lang == "python"
            and any(p in text for p in PYTHON_PLACEHOLDERS) == placeholders]


# only the documents with a block that can run: one whose blocks all name the user's files
# would pass having run nothing (those are compiled below)
@pytest.mark.parametrize("doc", [d for d in DOCS if python_blocks(d, placeholders=False)])
def test_doc_python_runs_as_written(doc, workdir):
    texts = python_blocks(doc, placeholders=False)
    assert texts
    for text in texts:
        exec(compile(text, f"{doc} (python block)", "exec"), {})


def test_doc_python_with_the_users_files_is_python():
    """The blocks that name a file of the user's cannot run here; they are Python still."""
    texts = {doc: python_blocks(doc, placeholders=True) for doc in DOCS}
    texts = {doc: t for doc, t in texts.items() if t}
    assert texts, "PYTHON_PLACEHOLDERS matches no block of the docs"
    for doc, blocks_ in texts.items():
        for text in blocks_:
            compile(text, f"{doc} (python block)", "exec")


def test_help_examples_run_as_written(workdir, capsys):
    """Every example of each command's --help runs, on stand-ins for the user's files or on
    the public data of ../shared/ where it is, unless it is listed with the reason it cannot;
    those that save a model run first."""
    stage_user_files(workdir)
    examples = help_examples()
    listed = set(CANNOT_RUN) | set(HELP_CANNOT_RUN)
    assert not set(HELP_CANNOT_RUN) - set(examples), "HELP_CANNOT_RUN names no --help example"
    # the public tables the examples name are where they say, those of the listed ones too
    public = [w for c in examples for w in shlex.split(c) if w.startswith("../shared/")]
    assert public
    if SHARED.exists():
        assert [w for w in public if not (ROOT / w).is_file()] == []
    ran = 0
    opencl = [c for c in examples if runs_opencl(c)] if opencl_unusable() else []
    absent = [c for c in examples if "../shared/" in c] if not SHARED.exists() else []
    for cmd in sorted(examples, key=lambda c: "--save-model" not in c):
        if cmd in listed or cmd in opencl or cmd in absent:
            continue
        code, out, err = run_cli(capsys, *shlex.split(cmd.replace("../shared/", f"{SHARED}/"))[1:])
        assert code == 0, f"--help example `{cmd}` exited {code}:\n{err[-2000:]}"
        ran += 1
    assert ran == len([c for c in examples if c not in listed and c not in opencl
                       and c not in absent]) >= 20


def test_every_option_the_docs_name_exists():
    """Synopses in the prose (`gpuproj evaluate TABLE --plots DIR`), the commands that cannot
    run here and the --help examples name only options their command has."""
    import click

    from gpuproj.cli.main import cli

    shown = {c for doc in DOCS for _, c in commands(doc) if c} | set(help_examples())
    for doc in DOCS:
        shown |= set(re.findall(r"`(gpuproj [^`]+)`", (ROOT / doc).read_text()))
    wrong = []
    for text in sorted(shown):
        words = re.sub(r"[][']", " ", text).split()[1:]  # synopsis brackets, shell quotes
        cmd, ctx = cli, click.Context(cli)
        while words and isinstance(cmd, click.Group) and not words[0].startswith("-"):
            sub = cmd.get_command(ctx, words.pop(0))
            if sub is None:
                break
            cmd = sub
        opts = {o for p in cmd.params for o in p.opts} | {"--help", "-h"}
        for w in words:
            if w == "--":
                break
            name = w.split("=")[0]
            if name.startswith("-") and name not in opts and not name.startswith("---"):
                wrong.append(f"{text}: {name}")
    assert not wrong
