"""Every reader, given its fixture damaged in the ways files get damaged (cut short, a cell
overwritten, a column or line lost, a line doubled, bytes flipped), either reads it or raises a
``GpuprojError``: a one-line message, never a traceback. The damage is drawn from a seeded random
generator, so a failure reproduces; each of the bugs this found is also tested by name in the
reader's own tests (a cut nvprof line was a KeyError, an empty GPU name in an Amaris table an
IndexError, an nvprof trace of copies only a numpy type error).

Where an overwritten cell's text shows up in the error, the error must name the line that was
overwritten: every reader numbers rows by their file line.
"""

import random
import re
from pathlib import Path

import pytest

from gpuproj.errors import GpuprojError
from gpuproj.profiles import ProfileTable, load

DATA = Path(__file__).parent / "data"
TRACE = DATA / "nvprof-v100-pcie-32gb-trace.csv"
MEASUREMENT = "kernel,config,gpu,time_s,flops,dram_bytes\n" + "".join(
    f"k{i % 3},n={i},{gpu},{1e-3 * (i + 1)},{1e9 * (i + 1)},{1e8 * (i + 1)}\n"
    for i in range(12) for gpu in ("v100-pcie-32gb", "a100-pcie-40gb"))
FIXTURES = {  # name -> (text, load() options)
    "nvprof-metrics": (DATA / "nvprof-v100-pcie-32gb-metrics.csv", {"trace": str(TRACE)}),
    "nvprof-trace": (TRACE, {}),
    "ncu-raw": (DATA / "ncu-h100-sxm5-80gb-raw-base.csv", {}),
    "ncu-raw-auto": (DATA / "ncu-h100-sxm5-80gb-raw-auto.csv", {}),
    "ncu-details": (DATA / "ncu-h100-sxm5-80gb-details.csv", {}),
    "amaris": (DATA / "amaris-9gpus-bpnn_adjust_weights.csv", {}),
    "kerneltuner": (DATA / "kerneltuner-4gpus-gemm_clblast_4096.csv", {}),
    "neusight": (DATA / "neusight-5gpus-conv.csv", {}),
    "measurement": (MEASUREMENT, {}),
}
GARBAGE = ["abc", "", "nan", "inf", "-1", "1e999", "0", '"', "n/a", "  ", "é", "-0", "1e-320",
           "0x10"]
MUTATIONS_PER_FIXTURE = 40


def _damage(text: str, rng: random.Random):
    """(damaged text or bytes, what was done, (line, garbage) where a cell was overwritten)."""
    lines = text.splitlines(keepends=True)
    i = rng.randrange(1, len(lines))
    kind = rng.randrange(9)
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
    data = bytearray(text.encode())
    for _ in range(5):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data), "bytes flipped", None


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_damaged_files_read_or_fail_in_one_line(name, tmp_path):
    source, options = FIXTURES[name]
    text = source if isinstance(source, str) else source.read_text()
    rng = random.Random(name)
    path = tmp_path / f"{name}.csv"
    for _ in range(MUTATIONS_PER_FIXTURE):
        damaged, what, cell = _damage(text, rng)
        if isinstance(damaged, bytes):
            path.write_bytes(damaged)
        else:
            path.write_text(damaged)
        try:
            table = load(path, **options)
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
