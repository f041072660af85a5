"""Every reader, given its fixture damaged in the ways files get damaged (cut short, a cell
overwritten, a column, line or header name lost, a line doubled, bytes flipped), either reads
it or raises a ``GpuprojError``: a one-line message, never a traceback. So do the SASS listing
parser (and the control-flow graph built on what it read) and the GPU file loader (and a
prediction for that GPU). The damage is drawn from a seeded random generator, so a failure
reproduces; each of the bugs this found is also tested by name in the module's own tests (a cut
nvprof line was a KeyError, an empty GPU name in an Amaris table an IndexError, an nvprof trace
of copies only a numpy type error, a doubled SASS line an IndexError, a 1e300 count in a GPU
file an OverflowError, an Amaris header without the row names' empty name a ValueError).
The tables measured on several GPUs, damaged alike, then go through the commands that match
their rows across GPUs.

Where an overwritten cell's text shows up in the error, the error must name the line that was
overwritten: every reader numbers rows by their file line.
"""

import random
import re
import warnings
from pathlib import Path

import pytest

from gpuproj.errors import GpuprojError
from gpuproj.profiles import ProfileTable, load, sniff

DATA = Path(__file__).parent / "data"
TRACE = DATA / "nvprof-v100-pcie-32gb-trace.csv"
NSYS_TRACE = DATA / "nsys" / "vernier-thor_cuda_gpu_trace.csv"
MEASUREMENT = "kernel,config,gpu,time_s,flops,dram_bytes\n" + "".join(
    f"k{i % 3},n={i},{gpu},{1e-3 * (i + 1)},{1e9 * (i + 1)},{1e8 * (i + 1)}\n"
    for i in range(12) for gpu in ("v100-pcie-32gb", "a100-pcie-40gb"))
FIXTURES = {  # name -> (text, load() options)
    "nvprof-metrics": (DATA / "nvprof-v100-pcie-32gb-metrics.csv", {"trace": str(TRACE)}),
    "nvprof-trace": (TRACE, {}),
    "ncu-raw": (DATA / "ncu-handbuilt-h100-raw-base.csv", {}),
    "ncu-raw-auto": (DATA / "ncu-handbuilt-h100-raw-auto.csv", {}),
    "ncu-details": (DATA / "ncu-handbuilt-h100-details.csv", {}),
    "ncu-summary": (DATA / "ncu-thor-vernier-summary-per-kernel.csv", {"gpu": "jetson-agx-thor"}),
    "ncu-summary-with-nsys": (DATA / "ncu-thor-vernier-summary-per-kernel.csv",
                              {"gpu": "jetson-agx-thor", "trace": str(NSYS_TRACE)}),
    "amaris": (DATA / "amaris-9gpus-bpnn_adjust_weights.csv", {}),
    "kerneltuner": (DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv", {}),
    "neusight": (DATA / "neusight-5gpus-conv.csv", {}),
    "nsys-trace": (NSYS_TRACE, {}),
    "nsys-kern-sum": (DATA / "nsys" / "vernier-thor_cuda_gpu_kern_sum.out",
                      {"gpu": "jetson-agx-thor"}),
    "measurement": (MEASUREMENT, {}),
    "pytorch": (DATA / "pytorch" / "rmsnorm-v100-pcie-16gb.pt.trace.json", {}),
}
GARBAGE = ["abc", "", "nan", "inf", "-1", "1e999", "0", '"', "n/a", "  ", "é", "-0", "1e-320",
           "0x10"]
MUTATIONS_PER_FIXTURE = 40


def _damage(text: str, rng: random.Random):
    """(damaged text or bytes, what was done, (line, garbage) where a cell was overwritten)."""
    lines = text.splitlines(keepends=True)
    i = rng.randrange(1, len(lines))
    kind = rng.randrange(10)
    if kind == 0:
        return text[:rng.randrange(len(text))], "cut short", None
    if kind == 1:
        cells = lines[i].rstrip("\n").split(",")
        j, junk = rng.randrange(len(cells)), rng.choice(GARBAGE)
        cells[j] = f'"{junk}"' if cells[j].startswith('"') and junk != '"' else junk
        lines[i] = ",".join(cells) + "\n"
        return "".join(lines), f"line {i + 1} cell {j} = {junk!r}", (i + 1, junk)
    if kind == 2:
        j = rng.randrange(lines[0].count(",") + 1)
        cut = [ln.rstrip("\n").split(",") for ln in lines]
        return "".join(",".join(c[:j] + c[j + 1:]) + "\n" for c in cut), f"column {j} lost", None
    if kind == 3:
        cells = lines[i].rstrip("\n").split(",")
        lines[i] = ",".join(cells[:rng.randrange(len(cells))]) + "\n"
        return "".join(lines), f"line {i + 1} cut", None
    if kind == 4:
        lines[i] = lines[i].rstrip("\n") + ",x,y\n"
        return "".join(lines), f"line {i + 1} with two more fields", None
    if kind == 5:
        del lines[i]
        return "".join(lines), f"line {i + 1} lost", None
    if kind == 6:
        lines.insert(i, lines[i] if rng.random() < 0.5 else "\n")
        return "".join(lines), f"line {i + 1} doubled or blank", None
    if kind == 7:
        return "".join(lines[:rng.randrange(1, 4)]), "header only", None
    if kind == 8:
        cells = lines[0].rstrip("\n").split(",")
        del cells[rng.randrange(len(cells))]
        return "".join([",".join(cells) + "\n"] + lines[1:]), "a header name lost", None
    data = bytearray(text.encode())
    for _ in range(5):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data), "bytes flipped", None


def _write(path, damaged) -> None:
    """Write what ``_damage`` returned: text, or bytes where bytes were flipped."""
    if isinstance(damaged, bytes):
        path.write_bytes(damaged)
    else:
        path.write_text(damaged)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_damaged_files_read_or_fail_in_one_line(name, tmp_path):
    source, options = FIXTURES[name]
    text = source if isinstance(source, str) else source.read_text()
    rng = random.Random(name)
    path = tmp_path / f"{name}.csv"
    for _ in range(MUTATIONS_PER_FIXTURE):
        damaged, what, cell = _damage(text, rng)
        _write(path, damaged)
        try:
            with warnings.catch_warnings(record=True) as said:  # what a damaged file warns of
                warnings.simplefilter("always")
                table = load(path, **options)
            assert all("\n" not in str(w.message) for w in said), (what, said)
        except GpuprojError as e:
            message = str(e)
            assert "\n" not in message, (what, message)
            named = re.search(r", row (\d+)", message)
            if cell and named and cell[1].strip() and f"'{cell[1]}'" in message:
                assert int(named.group(1)) == cell[0], (what, message)
        except Exception as e:  # a bug: the test names the damage that caused it
            raise AssertionError(f"{name}, {what}: {type(e).__name__}: {e}") from e
        else:
            assert isinstance(table, ProfileTable) and len(table) > 0, what


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_damaged_gzip_files_fail_in_one_line(name, tmp_path, capsys):
    """A ``.gz`` cut short or with its header overwritten: gzip raises EOFError for the first,
    which click would have turned into "Aborted." (exit 1) rather than the file's error."""
    import gzip

    from conftest import run_cli

    source, options = FIXTURES[name]
    text = source if isinstance(source, str) else source.read_text()
    packed = gzip.compress(text.encode())
    path = tmp_path / f"{name}.csv.gz"
    fmt = "measurement" if isinstance(source, str) else sniff(source)  # the damage hides it
    for damaged in (packed[: len(packed) // 2], b"\x1f\x8b\x08garbage" + packed[10:]):
        path.write_bytes(damaged)
        with pytest.raises(GpuprojError, match=rf"{name}\.csv\.gz: cannot read: "):
            load(path, format=fmt, **options)
    code, _, err = run_cli(capsys, "predict", str(path), "--format", fmt, "-s", "h100-sxm5-80gb",
                           "-t", "h200")
    assert code == 2 and err.startswith(f"gpuproj: error: {path}: cannot read: "), err


# tables measured on several GPUs, and the commands that match their rows across GPUs
CROSS_GPU = ("amaris", "kerneltuner", "neusight", "measurement")
COMMANDS = (["evaluate", "{path}", "--gpu-choice", "--ranking"],
            ["evaluate", "{path}", "--combine-sources", "--json"],
            ["predict", "{path}", "--source", "all", "-t", "h100-pcie-80gb", "--json"])
CLI_MUTATIONS = 40


@pytest.mark.parametrize("name", CROSS_GPU)
def test_damaged_cross_gpu_tables_through_every_command(name, tmp_path, capsys):
    """What a reader lets through must not break the commands after it: configurations that
    collide on one GPU (a KernelTuner column lost, a NeuSight line repeated) were read as
    they are and crashed ``evaluate`` in pandas (a reindex, ``--gpu-choice``'s unstack)."""
    from conftest import run_cli

    source, _ = FIXTURES[name]
    text = source if isinstance(source, str) else source.read_text()
    rng = random.Random(f"cli {name}")
    path = tmp_path / f"{name}.csv"
    for _ in range(CLI_MUTATIONS):
        damaged, what, _ = _damage(text, rng)
        _write(path, damaged)
        args = [a.format(path=path) for a in rng.choice(COMMANDS)]
        try:
            code, _, err = run_cli(capsys, *args)
        except Exception as e:  # a bug: the test names the damage and the command
            raise AssertionError(f"{name}, {what}, {args[0]}: {type(e).__name__}: {e}") from e
        assert code in (0, 2) and "Traceback" not in err, (what, args, err)
        if code == 2:
            assert err.strip().splitlines()[-1].startswith("gpuproj: error: "), (what, err)


ROOT = Path(__file__).parents[1]
SASS = DATA / "sass" / "nvdisasm-sm_90-fixture_kernels.sass"
GPU_FILE = ROOT / "src" / "gpuproj" / "catalog" / "gpus" / "h200-sxm-141gb.yaml"
EXAMPLE = ROOT / "examples" / "rodinia-p100-nvprof.csv"


def _damage_lines(text: str, rng: random.Random) -> str:
    """A line lost, doubled, moved or cut, or one word of it overwritten."""
    lines = text.splitlines(keepends=True)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    kind = rng.randrange(5)
    if kind == 0:
        del lines[i]
    elif kind == 1:
        lines.insert(i, lines[j])
    elif kind == 2:
        lines.insert(i, lines.pop(j))
    elif kind == 3:
        lines[i] = lines[i][:rng.randrange(len(lines[i]) + 1)] + "\n"
    else:  # most often the last word, where YAML and SASS lines keep their values
        words = lines[i].rstrip("\n").split(" ")
        k = -1 if rng.random() < 0.7 else rng.randrange(len(words))
        words[k] = rng.choice(GARBAGE + ["[1, 2]", "{a: 1}", "null", "1e300"])
        lines[i] = " ".join(words) + "\n"
    return "".join(lines)


def test_damaged_sass_listings_parse_or_fail_in_one_line(tmp_path):
    from gpuproj.sass import build_cfg, parse_file

    rng, text, path = random.Random("sass"), SASS.read_text(), tmp_path / "x.sass"
    for _ in range(MUTATIONS_PER_FIXTURE):
        path.write_text(_damage_lines(text, rng))
        try:
            program = parse_file(path)
            for f in program.functions.values():
                build_cfg(f)  # where a moved line left an empty block (an IndexError)
        except GpuprojError as e:
            assert "\n" not in str(e), str(e)


def test_damaged_gpu_files_load_and_predict_or_fail_in_one_line(tmp_path):
    from gpuproj.catalog import read_gpu_file
    from gpuproj.predict import predict

    text = GPU_FILE.read_text().replace("id: h200-sxm-141gb", "id: my-gpu")
    text = text[:text.index("aliases:")] + text[text.index("architecture:"):]
    profile = load(EXAMPLE)
    fields = [i for i, ln in enumerate(text.splitlines()) if ln.strip().startswith(
        ("value:", "kind:"))]
    rng, path = random.Random("gpu"), tmp_path / "my-gpu.yaml"
    for _ in range(80):
        damaged = _damage_lines(text, rng).splitlines()
        if rng.random() < 0.5:  # most lines are sources: aim at a value or its kind as often
            lines = text.splitlines()
            i = rng.choice(fields)
            lines[i] = lines[i].split(":")[0] + ": " + rng.choice(
                ["0", "-1", "10.5", "1e300", "abc", "null", "[1, 2]", "{a: 1}"])
            damaged = lines
        path.write_text("\n".join(damaged) + "\n")
        try:  # a 0 or 1e300 warp size went as far as the occupancy arithmetic
            predict(profile, targets=[read_gpu_file(path)], methods="all")
        except GpuprojError as e:
            assert "\n" not in str(e), str(e)
