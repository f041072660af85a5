"""``gpuproj`` entry point. Sub-commands live in their own modules and are imported only when
run, so ``gpuproj --help`` stays fast."""

from __future__ import annotations

import errno
import importlib
import os
import sys
import warnings

import click

from .. import __version__
from ..errors import GpuprojError, GpuprojWarning
from ._common import printable

# name -> ("module:attribute", one-line help shown by `gpuproj --help`)
COMMANDS = {
    "gpus": ("gpus:gpus", "List, show and resolve GPUs of the catalog."),
    "predict": ("predict:predict", "Project a source profile to one or more target GPUs."),
    "evaluate": ("evaluate:evaluate", "Measure every method's error on cross-GPU data."),
    "report": ("report:report", "Write a self-contained HTML report of a projection."),
    "quadrant": ("quadrant:quadrant", "Draw the quadrant-split view of GPUs and a kernel."),
    "roofline": ("roofline:roofline", "Draw a profile's rooflines with kernel-specific ceilings."),
    "profile": ("profile:profile",
                "Run an application under Nsight Compute with gpuproj's metrics."),
    "sass": ("sass:sass", "Compare a kernel's machine code across GPU architectures."),
    "bench": ("bench:bench",
              "Measure a GPU's ceilings with micro-benchmarks and write its catalog entry."),
    "calibrate": ("calibrate:calibrate",
                  "Fit a calibrated cost model (Stevens & Kloeckner) on measurement kernels."),
}


class _ReaderGone(Exception):
    """A command's BrokenPipeError, carried past click: click 8.5 ends a closed pipe with
    status 1 outside its handler, where ``main`` cannot tell it from an error."""


class LazyGroup(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError as e:
            raise _ReaderGone from e

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        target, _ = COMMANDS[name]
        mod, attr = target.split(":")
        return getattr(importlib.import_module(f".{mod}", __package__), attr)

    def format_commands(self, ctx, formatter):
        rows = [(n, COMMANDS[n][1]) for n in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


EPILOG = """\b
Examples:
  gpuproj gpus list
  gpuproj predict examples/rodinia-p100-nvprof.csv --target h100-sxm5-80gb,h200
  gpuproj evaluate table.csv --json
Run `gpuproj COMMAND --help` for each command's options."""


@click.group(cls=LazyGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
# the package's own version (pyproject.toml reads it from there too), not the installed
# metadata: right from a source tree on PYTHONPATH and after an edit of an editable install
@click.version_option(__version__, prog_name="gpuproj")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx, debug):
    """gpuproj predicts how long GPU kernels take on a target GPU from a profile measured on
    a source GPU (hierarchical roofline, quantitative roofline, efficiency transfer, calibrated
    and learned models)."""
    # --debug is read by main(), which handles the errors after click has returned
    # restored when the command ends
    ctx.with_resource(warnings.catch_warnings())
    warnings.simplefilter("always", GpuprojWarning)
    # numpy's floating-point notes (an overflow to inf in a total of absurd times) are not the
    # user's to read: the result says inf
    warnings.filterwarnings("ignore", r"(overflow|invalid value|divide by zero|underflow) "
                            "encountered", RuntimeWarning)
    # matplotlib's notes on a picture: a kernel name in a script its font lacks (drawn as
    # boxes) and a crowded figure laid out without constraints; the picture is written
    warnings.filterwarnings("ignore", r"Glyph \d+ .* missing from font", UserWarning)
    warnings.filterwarnings("ignore", "constrained_layout not applied", UserWarning)
    warnings.showwarning = _one_line(warnings.showwarning)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = _debug(argv)
    for stream in (sys.stdout, sys.stderr):
        # a terminal or pipe that cannot show "…" or a table's box lines gets "?" instead
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    try:
        cli.main(args=argv, prog_name="gpuproj", standalone_mode=False)
        sys.stdout.flush()  # a closed pipe shows here, not as Python exits
    except (BrokenPipeError, _ReaderGone):
        # the reader of the output closed it early (`gpuproj predict ... | head -1`): it has
        # what it wanted, so quiet and status 0
        _stdout_to_devnull()
        return 0
    except SystemExit as e:
        # click (a command's echo, --help) and rich (a table) end on a closed pipe themselves,
        # with status 1, from their handler of the BrokenPipeError
        if not isinstance(e.__context__, BrokenPipeError):
            raise
        _stdout_to_devnull()
        return 0
    except GpuprojError as e:
        if debug:
            raise
        click.echo(f"gpuproj: error: {_one_line_text(e)}", err=True)
        sys.exit(2)
    except click.exceptions.Abort as e:
        # click turns an EOFError into Abort, as if the user had closed a prompt; no command
        # prompts, so one is a bug (a reader's gzip cut short was one) and keeps its traceback
        if isinstance(e.__cause__, EOFError):
            raise e.__cause__ from None
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.BadParameter as e:
        # a value the option refuses (a file that does not exist): one line, as a bad file
        # gets; a usage error (an unknown option) keeps click's usage lines
        click.echo(f"gpuproj: error: {_one_line_text(e.format_message())}", err=True)
        sys.exit(e.exit_code)
    except click.ClickException as e:
        if isinstance(e, click.NoSuchOption) and e.option_name == "--debug":
            e.message = (e.message.rstrip(".") + ": it is gpuproj's own option, given before "
                         "the command (gpuproj --debug COMMAND ...).")
        e.show()
        sys.exit(e.exit_code)
    except OSError as e:
        # a full disk or a failing device under the output (files the commands write name
        # themselves in an InputError; this is the standard output or a library's write)
        if debug or e.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            raise
        click.echo(f"gpuproj: error: cannot write: {e.strerror}", err=True)
        sys.exit(1)
    return 0


# a message quotes the value it refuses; a crafted file's 50 kB cell would fill the terminal
MESSAGE_MAX_CHARS = 1000


def _one_line_text(message) -> str:
    """``message`` on one line, even where it quotes a value with a line break (a device name),
    and shortened in its middle past ``MESSAGE_MAX_CHARS``: the file, row and field come first
    and what was wrong last; a control character a crafted file put in it shows as '?'
    (``printable``)."""
    text = printable(" ".join(str(message).splitlines()))
    if len(text) <= MESSAGE_MAX_CHARS:
        return text
    head, tail = MESSAGE_MAX_CHARS * 2 // 3, MESSAGE_MAX_CHARS // 3
    return (f"{text[:head]} [... {len(text) - head - tail:,} characters left out ...] "
            f"{text[-tail:]}")


def _stdout_to_devnull() -> None:
    """After the reader of the standard output has gone: what is left in its buffer goes to
    /dev/null when Python flushes it at exit, instead of a second BrokenPipeError there."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _debug(argv):
    """Whether ``--debug`` is among the global options, which come before the command name: a
    ``--debug`` after it belongs to the command or, after ``--``, to the application that
    ``gpuproj profile`` runs."""
    for arg in argv:
        if arg == "--debug":
            return True
        if arg == "--" or not arg.startswith("-"):
            return False
    return False


def _one_line(show):
    """``warnings.showwarning`` that prints a ``GpuprojWarning`` as one stderr line, where
    Python would add its source file and line, and leaves any other warning to ``show`` (one
    from a library is not the user's to fix)."""

    def shown(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, GpuprojWarning):
            click.echo(f"gpuproj: warning: {_one_line_text(message)}", err=True)
        else:
            show(message, category, filename, lineno, file, line)

    return shown


if __name__ == "__main__":
    main()
