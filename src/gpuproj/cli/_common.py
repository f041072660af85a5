"""Options and printing shared by several commands."""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

import click

# comma-separated option values, split as the API splits its list arguments
from ..names import split_lists


def names_or_all(value):
    """An option naming several things or 'all' (one value, or a repeatable option's values,
    each comma-separated): None when not given, "all", or the names; the API functions take
    the same three."""
    if value is None or value == ():
        return None
    names = split_lists((value,) if isinstance(value, str) else value)
    return "all" if names == ["all"] else names


def is_tty() -> bool:
    return sys.stdout.isatty()


# C0 and C1 control characters but the line break and the tab: in a crafted file's kernel
# name or cell they would reach the terminal as escape sequences (a title set, text hidden)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with each control character shown as '?'.

    >>> printable("evil\x1b]0;title\x07")
    'evil?]0;title?'
    """
    return _CONTROL.sub("?", text)


def console():
    """A rich console on stdout: the terminal's width on a terminal; piped or redirected, wide
    enough that no table cell is cut (a table is only as wide as its content). The text it
    prints is ``printable``; its own styles and cursor moves are not text."""
    from rich.console import Console
    from rich.segment import Segment

    class PrintableConsole(Console):
        def render(self, renderable, options=None):
            for seg in super().render(renderable, options):
                yield seg if seg.control else Segment(printable(seg.text), seg.style)

    return PrintableConsole(width=None if is_tty() else 400)


# the narrowest a text column (a name) is let fold to where a table is fitted to a terminal
FOLDED_NAME_CHARS = 12


def print_fitted(con, columns, rows, *, keys: int = 1, title=None, caption=None,
                 **table_options) -> None:
    """``rows`` of text cells as rich tables no wider than ``con``. ``columns``: (header,
    justify, folds) each; a column that folds (a name) breaks onto more lines, down to
    ``FOLDED_NAME_CHARS``, and any other (a number, an id to copy) stays whole, its header a
    line per word where the table is too wide: rich would cut every cell to 'ab…' to fit.
    Columns that do not fit side by side go to a second table (and a third...), each led by
    the first ``keys`` columns again; the title heads the first, the caption ends the last;
    ``table_options`` go to each ``rich.table.Table``."""
    from rich.table import Table
    from rich.text import Text

    rows = [[c if isinstance(c, Text) else Text(str(c)) for c in r] for r in rows]
    widest = [max((r[i].cell_len for r in rows), default=0) for i in range(len(columns))]

    def least(i):  # a column's narrowest, its padding and border included
        header, _, folds = columns[i]
        if not folds:  # its header does not wrap either (but for the breaks put in below)
            return max(*map(len, header.split("\n")), widest[i]) + 3
        word = max((len(w) for w in header.split()), default=0)
        return max(word, min(widest[i], FOLDED_NAME_CHARS)) + 3

    if sum(map(least, range(len(columns)))) + 1 > con.width:
        # a number's header on a line per word, as a wrapping column's would be
        columns = [(h if folds else "\n".join(h.split()), j, folds) for h, j, folds in columns]
    lead = sum(least(i) for i in range(keys)) + 1
    chunks, used = [[]], lead
    for i in range(keys, len(columns)):
        if chunks[-1] and used + least(i) > con.width:
            chunks.append([])
            used = lead
        chunks[-1].append(i)
        used += least(i)
    for n, chunk in enumerate(chunks):
        t = Table(title=title if n == 0 else None,
                  caption=caption if n == len(chunks) - 1 else None, **table_options)
        shown = [*range(keys), *chunk]
        for i in shown:
            header, justify, folds = columns[i]
            t.add_column(header, justify=justify, no_wrap=not folds, overflow="fold",
                         min_width=None if folds else widest[i])
        for r in rows:
            t.add_row(*(r[i] for i in shown))
        con.print(t)


def emit_json(obj) -> None:
    """``obj`` as strict JSON on stdout: NaN and infinities become null (Python would write
    NaN, which JSON has not and strict parsers reject), numpy scalars plain numbers, anything
    else unknown its text."""
    click.echo(json.dumps(_finite(obj), indent=2, default=_default, allow_nan=False))


def _finite(o):
    import math

    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o


def _default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return _finite(o.item())
    return str(o)


def report_skipped(skipped, *, quiet: bool = False) -> None:
    """One stderr line per reason: how many rows (or projections of a row to a target) were
    skipped and why."""
    if not skipped or quiet:
        return
    from ..profiles.table import skipped_lines

    for line in skipped_lines(skipped):
        click.echo(f"gpuproj: {printable(line)}", err=True)


def progress(iterable, total=None, description=""):
    """A rich progress bar on stderr where that is a terminal (with stdout redirected to a
    file too); the plain iterable when stderr is piped."""
    if not sys.stderr.isatty():
        return iterable
    from rich.console import Console
    from rich.progress import track

    return track(iterable, total=total, description=description, transient=True,
                 console=Console(stderr=True))


def source_option(*extra_names, several: bool = False):
    """``--source/-s``: the GPU a profile was measured on, for every command that reads one;
    ``several``: the command also combines several of a profile's GPUs."""
    return click.option("--source", "-s", *extra_names, "source",
                        help="GPU the profile was measured on (default: named in the file; "
                             "needed where the file names none, or several)"
                             + ("; several, comma-separated, or 'all' of the file's GPUs "
                                "predict each target from all of them at once." if several
                                else "."))


def format_option():
    """``--format``: the input format, for every command that reads a profile."""
    from ..profiles import FORMATS

    return click.option("--format", "fmt", type=click.Choice(list(FORMATS)),
                        help="Input format (default: detected from the file).")


def reader_option():
    """``--reader-option KEY=VALUE`` (repeatable): a setting of the input's reader, for every
    command that reads a profile; ``profiles.load`` checks the name and converts the value."""

    def parse(ctx, param, values):
        out = {}
        for item in values:
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise click.BadParameter(f"{item!r} is not KEY=VALUE", ctx, param)
            if key == "gpu":
                raise click.BadParameter("the GPU is no reader option: `predict` takes it "
                                         "with --source, `evaluate` reads it from each file",
                                         ctx, param)
            if key == "trace":
                raise click.BadParameter("a trace is given with --trace (of predict, report "
                                         "and roofline)", ctx, param)
            if key in ("path", "format"):  # profiles.load's own arguments
                raise click.BadParameter(f"{key} is no reader option: the file is the command's "
                                         "argument, its format --format", ctx, param)
            out[key] = value.strip()
        return out

    return click.option("--reader-option", "reader_options", multiple=True, metavar="KEY=VALUE",
                        callback=parse,
                        help="A setting of the input's reader, repeatable: gemm_size=4096 for "
                             "a KernelTuner GEMM table whose file name does not give the size, "
                             "per_launch=true for one row per ncu launch (each reader's "
                             "settings: docs/profiles.md).")


class WrittenPath(click.Path):
    """A file or folder a command writes: an empty name is refused, where it would write
    nothing (or name the current folder) without a word."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            self.fail("the path is empty", param, ctx)
        return super().convert(value, param, ctx)


def check_writable(path, option=None) -> None:
    """An ``InputError`` where ``path`` cannot be written (its folder a file, or a folder
    that cannot be made or written in), said of ``option path`` (the path the user gave):
    checked before a command measures for minutes, where ``files.writing`` would say it only
    after. Nothing is made yet: a run that fails leaves no empty folders behind."""
    from ..errors import InputError

    path = Path(path)
    where = f"{option} {path}" if option else path
    if path.is_dir():
        raise InputError("cannot write: a folder stands where the file would be", path=where)
    existing = next(p for p in (path.parent, *path.parent.parents) if p.exists() or p == p.parent)
    if not existing.is_dir():
        raise InputError("cannot write: a file stands where its folder would be", path=where)
    # tried, not asked of os.access, which says yes to root everywhere (/proc included): a
    # file that exists is opened to append (its content untouched), else a temporary file
    # made and removed where the first missing folder would go
    try:
        if path.exists():
            open(path, "ab").close()
        else:
            tempfile.TemporaryFile(dir=existing).close()
    except OSError as e:
        raise InputError(f"cannot write: {(e.strerror or str(e)).lower()}", path=where) from None


def output_option(help_text, **kwargs):
    """``-o/--output FILE`` (``--out`` is the same option): the file a command writes."""
    return click.option("-o", "--output", "--out", "output", metavar="FILE",
                        type=WrittenPath(dir_okay=False, path_type=kwargs.pop("path_type", None)),
                        help=help_text, **kwargs)


def trace_option():
    """``--trace FILE``: the in-application durations of the profiled run, for every command
    that projects or draws a profile's times (``profiles.load``'s ``trace``)."""
    return click.option(
        "--trace", type=click.Path(exists=True, dir_okay=False),
        help="A trace of the same application whose kernel times and launch counts replace "
             "the profile's: an Nsight Systems timeline (`gpuproj profile --timeline`) or a "
             "PyTorch profiler trace for an Nsight Compute profile, a rocprofv3 kernel trace "
             "for its counter collection, or a kernel,time_s table (times as the application "
             "ran, without the profiler's replays); for nvprof --metrics, the "
             "--print-gpu-trace CSV of the run.")


def load_profile(path, fmt, source, trace=None, options=None):
    """The profile at ``path``; ``source`` names its GPU where the file does not (nvprof and
    ncu exports without the device, gpu-benches output, a measurement table without a ``gpu``
    column); ``trace`` and the reader's ``options`` (a dict: a key such as 'source' must reach
    the reader's check, not this function's arguments) go to ``profiles.load``."""
    from ..profiles import load

    return load(path, format=fmt, **({"gpu": source} if source else {}),
                **({"trace": trace} if trace else {}), **(options or {}))


def report_dropped(skipped, as_json: bool) -> None:
    """One stderr line per item a picture left out (``skipped``: "what: why" lines), unless
    ``--json`` lists them under "skipped"."""
    if not as_json:
        for s in skipped:
            click.echo(f"gpuproj: skipped {s}", err=True)
