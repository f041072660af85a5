"""Options and printing shared by several commands."""

from __future__ import annotations

import json
import sys

import click


def split_list(value) -> list[str]:
    """'a, b,c' -> ['a', 'b', 'c'] (comma-separated option values; empty -> [])."""
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


def is_tty() -> bool:
    return sys.stdout.isatty()


def emit_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, default=_default))


def _default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, float) and o != o:
        return None
    return str(o)


def report_skipped(skipped, *, quiet: bool = False) -> None:
    """One stderr line per reason: how many rows were skipped and why."""
    if not skipped or quiet:
        return
    counts = {}
    for s in skipped:
        reason = s.reason.split(": ", 1)[-1]
        counts[reason] = counts.get(reason, 0) + 1
    for reason, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        click.echo(f"gpuproj: skipped {n} row(s): {reason}", err=True)


def progress(iterable, total=None, description="", enabled=None):
    """A rich progress bar on a terminal; the plain iterable when piped or disabled."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return iterable
    from rich.progress import track

    return track(iterable, total=total, description=description, transient=True)
