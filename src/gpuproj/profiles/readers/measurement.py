"""The plain measurement table (CSV or Parquet): one row per (kernel configuration, GPU).
A CSV file separated by semicolons, as spreadsheets write it under locales with decimal commas, or
by tabs (a spreadsheet's tab-delimited text, a table pasted from one; the header says which: a comma
if it has one, else a semicolon, else a tab) has its numbers read in the style they show: with
decimal commas and dots between thousands where some number can only be so written (``0,5``,
``1.234,5``, ``1.234.567``; ``1.234`` is then 1234), with decimal points and commas between
thousands where some number can only be so written (``0.5``, ``1,234,567``; ``1,234`` is then 1234),
and a file with both is an error quoting one of each (row, field); one where no number shows its
style is read with decimal commas, a lone ``1.234`` being 1.234. Its numbers are those of the
canonical numeric columns and of the other columns that hold only numbers (tuning parameters, kept
as numbers); text columns (``kernel``, ``config``, ``gpu``, ``problem``) stay as written, but for
spaces around them, as around a column's name (a hand-written ``kernel, time_s``). ``launches``,
where given, is a whole number; a row of 0 launches is skipped and counted. A line whose first
character other than a space is ``#`` is a comment, skipped (a note above the header or between the
rows); a ``#`` inside a row is text.

Required columns: ``kernel`` and ``time_s``. ``gpu`` may be left out when ``gpu=``
(``--source``) names the GPU of every row; ``config`` may be left out when each kernel ran in
one configuration (it becomes ``default``): ``kernel,time_s,fp32_flops,dram_bytes`` with
``--source`` is a whole profile. A CSV file that no reader claims, whose header names
``kernel``, ``config``, ``gpu`` or ``time_s`` or a near miss of one (``time_ms``, ``Kernel``),
is taken for this table short of a column: the error names the column missing. Any other canonical
column of ``profiles.schema.COLUMNS`` may be present (``docs/profiles.md``): ``problem`` says
which configurations of a kernel solve the same problem (tuning variants, which rankings
order), and must be the same for a kernel and config on every GPU. Columns that are not
canonical are kept as they are (e.g. tuning parameters, useful to learned models); one
whose name is a canonical column's with its words reordered or a letter off (``flops_fp32``,
``dram_byte``) is kept too, with an ``InputWarning`` naming the column meant, since the models
would not use it. Rows that repeat a
(kernel, config, GPU) are repeated runs of the same work and become one row: median ``time_s``
and median counts, ``runs`` = the number of runs, ``time_s_min`` / ``time_s_max`` the spread (a
row that already stands for several runs, as gpuproj's own tables do, counts with its ``runs``
and its spread);
repeated rows that differ in a column that is not canonical (a tuning parameter left out of
``config``) are an error, since merging them could mix different work. An error names the row
as a spreadsheet shows it in a CSV file (the header is row 1) and by its record number in a
Parquet file, which has no header row (the first record is row 1).
"""

from __future__ import annotations

import difflib
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import GPUNotNamedError, InputError, InputWarning
from ..schema import COLUMNS, NUMERIC, REQUIRED
from ..table import ProfileTable, require_one_problem
from ._checks import (
    as_written,
    is_number,
    number_style,
    numeric,
    split_missing_names,
    split_unusable_times,
    with_decimal_points,
)
from ._io import first_line, head_text, read_csv, resolve_gpus, separator

KEYS = ["kernel", "config", "gpu"]
# what the file itself must have: the GPU may come from gpu=, a missing config is "default"
NEEDS = ("kernel", "time_s")
# what a merged row says of its runs (gpuproj's own tables have them): not canonical columns, so
# not numbers that must agree between repeats, but their count and spread
SPREAD = ("runs", "time_s_min", "time_s_max")


def _header(head: str) -> set:
    first = first_line(head)
    return {c.strip().strip('"') for c in first.split(separator(first))}


def sniff(path, head: str) -> bool:
    return Path(path).suffix == ".parquet" or set(NEEDS) <= _header(head)


def short_of(head: str, path) -> str | None:
    """The column of ``NEEDS`` that a CSV header no reader claims lacks, where the header
    looks like a hand-made measurement table's: it names a column of ``REQUIRED``, or a near
    miss of one (``time_ms``, ``tme_s``, ``Kernel``), which is warned of
    (``warn_near_misses``); None where it does not. Naming the column helps more than "cannot
    tell the format"."""
    cols = _header(head)
    if not any(c in REQUIRED or _near_miss(c, cols) in REQUIRED for c in cols):
        return None
    warn_near_misses(cols, path)
    return next(c for c in NEEDS if c not in cols)


def read(path, gpu: str | None = None) -> ProfileTable:
    path = Path(path)
    style = None  # Parquet and comma-separated files: numbers as pandas reads them
    if path.suffix == ".parquet":
        try:
            df = pd.read_parquet(path)
        except ImportError:
            from ...errors import MissingToolError
            raise MissingToolError("reading Parquet needs pyarrow: pip install 'gpuproj[parquet]'")
        except Exception as e:  # pyarrow raises many types for corrupt files
            raise InputError(f"not a readable Parquet file ({e})", path=path) from None
        df["_row"] = range(1, len(df) + 1)
    else:
        sep = separator(first_line(head_text(path)))
        df = read_csv(path, sep=sep, text=(*KEYS, "problem"))
        # a hand-written table's spaces around its names ("k1, 0.001") are not part of them
        for c in (*KEYS, "problem"):
            if c in df.columns:
                df[c] = df[c].str.strip()
        if sep != ",":  # read as text (read_csv): numbers in the style they show
            style = _spreadsheet_numbers(df, path)
    warn_near_misses(df.columns, path)
    if gpu is not None and "gpu" not in df.columns:
        df["gpu"] = gpu
    if "config" not in df.columns:
        df["config"] = "default"
    for c in NEEDS:
        if c not in df.columns:
            raise InputError(f"missing required column '{c}'", path=path)
    if "gpu" not in df.columns:
        raise GPUNotNamedError("no 'gpu' column", in_file="add one naming each row's GPU",
                               path=path)
    # a numeric column with text in it is an error (a typo), not a silently skipped row;
    # an empty cell is a missing value
    for c in (*NUMERIC, *SPREAD):
        if c in df.columns:
            written = df[c]
            df[c] = numeric(written, path=path, field=c, rows=df["_row"],
                            allow_negative=c == "time_s",  # a time <= 0 is a skipped row
                            style=style)
            if c == "launches":
                _check_launches(df[c], written, path, df["_row"])
    df, skipped = split_missing_names(df, path, {c: c for c in ("kernel", "config", "gpu")})
    df, unusable = split_unusable_times(df, path)
    skipped += unusable
    df["config"] = df["config"].astype(str)
    df["gpu"] = resolve_gpus(df["gpu"].astype(str), path, rows=df["_row"])
    if "problem" in df.columns:
        require_one_problem(df, str(path))
    return ProfileTable.from_frame(_merge_runs(df, path), skipped=skipped, origin=str(path))


# the truth values pandas reads from a comma-separated file
_TRUTH = {t: v for v in (True, False) for t in (str(v), str(v).upper(), str(v).lower())}


def _spreadsheet_numbers(df: pd.DataFrame, path) -> str:
    """The style of the numbers of a file separated by semicolons or tabs, read as text
    (``number_style``; "undetermined" where none shows it), for ``numeric`` to read its
    canonical columns with.
    The style is that of every column read as numbers: the canonical numeric ones and the other
    columns that hold only numbers (tuning parameters), which are converted here, to numbers as
    pandas makes those of a comma-separated file, as are columns of truth values (booleans);
    text columns take no part."""
    canonical = [c for c in (*NUMERIC, *SPREAD) if c in df.columns]
    others = [c for c in df.columns if c not in (*COLUMNS, *SPREAD, "_row")
              and df[c].dropna().map(is_number).all()]
    names = [*canonical, *others]
    cells = df[["_row", *names]].itertuples(index=False)
    style = number_style(((row, name, text) for row, *texts in cells
                          for name, text in zip(names, texts) if isinstance(text, str)),
                         path, default="undetermined")
    for c in others:
        df[c] = pd.to_numeric(df[c].map(lambda t: with_decimal_points(t, style),
                                        na_action="ignore"))
    # and columns of truth values (a flag among the tuning parameters) as booleans, as pandas
    # reads them from a comma-separated file
    for c in df.columns:
        if c not in COLUMNS and c not in others and df[c].notna().all() and df[c].isin(
                _TRUTH).all():
            df[c] = df[c].map(_TRUTH).astype(bool)
    return style


def _check_launches(n: pd.Series, written: pd.Series, path, rows) -> None:
    """A launch count is a whole number: 1.5 launches is a typo or another quantity, and would
    weigh the kernel's time in the application's total by it. (0, a kernel that did not run, is
    a row ``ProfileTable.from_frame`` skips and counts.)"""
    frac = np.flatnonzero((n.notna() & (n % 1 != 0)).to_numpy())
    if len(frac):
        i = frac[0]
        row = int(rows.iloc[i])
        raise InputError(f"'{as_written(written.iloc[i], path, row, 'launches')}' is not a "
                         "whole number of launches", path=path, row=row, field="launches")


def _near_miss(name: str, present) -> str | None:
    """The canonical column ``name`` was probably meant to be, where the file lacks it: the
    same words in another order, or a spelling one or two letters off."""
    words = sorted(name.lower().split("_"))
    for c in COLUMNS:
        if c not in present and sorted(c.split("_")) == words:
            return c
    close = difflib.get_close_matches(name.lower(), [c for c in COLUMNS if c not in present],
                                      n=1, cutoff=0.85)
    return close[0] if close else None


# unit suffixes of column names written by hand, and how a message names them
_UNITS = {"s": "seconds", "ms": "ms", "us": "us", "ns": "ns", "bytes": "bytes", "kb": "kB",
          "mb": "MB", "gb": "GB", "kib": "KiB", "mib": "MiB", "gib": "GiB"}


def warn_near_misses(columns, path) -> None:
    """An ``InputWarning`` for each column that is no canonical one but nearly is (``_near_miss``):
    no model would read it."""
    for c in columns:
        meant = None if c in COLUMNS or c in (*SPREAD, "_row") else _near_miss(c, columns)
        if meant:
            stem, _, unit = meant.rpartition("_")
            c_stem, _, c_unit = c.lower().rpartition("_")
            # time_ms for time_s: a rename alone would read milliseconds as seconds
            other_unit = c_stem == stem and c_unit != unit and c_unit in _UNITS
            warnings.warn(InputWarning(
                f"{path}: column '{c}' is not a canonical column and no model reads it; did you "
                f"mean '{meant}'?" + (f" It is in {_UNITS.get(unit, unit)}: convert the values, "
                                      "not the name alone" if other_unit else "")), stacklevel=3)


def _merge_runs(df: pd.DataFrame, path) -> pd.DataFrame:
    """One row per (kernel, config, gpu): repeated runs merged (the module docstring). A row
    that already stands for several runs (``runs``, ``time_s_min``, ``time_s_max``, as gpuproj
    writes them) keeps its spread and count, and adds them to those of its repeats."""
    df = df.copy()
    df["runs"] = _column(df, "runs", 1.0)
    df["time_s_min"] = _column(df, "time_s_min", df["time_s"])
    df["time_s_max"] = _column(df, "time_s_max", df["time_s"])
    repeated = df.duplicated(KEYS, keep=False)
    if not repeated.any():
        return df
    rep = df[repeated]
    g = rep.groupby(KEYS, sort=False)
    # a canonical count may vary from run to run (a profiler's sampling); what any other column
    # means is unknown, so it must agree
    counts = [c for c in NUMERIC if c in rep.columns]
    others = [c for c in rep.columns if c not in (*KEYS, "_row", *counts, *SPREAD)]
    for c in others:
        differ = rep[c].astype(str).groupby([rep[k] for k in KEYS], sort=False).transform(
            "nunique") > 1
        if differ.any():
            rows = rep.loc[differ.to_numpy(), "_row"].head(2).tolist()
            raise InputError(f"rows {rows[0]} and {rows[1]} repeat kernel, config and gpu but "
                             f"differ in '{c}': put it in config, or drop it", path=path)
    merged = g[counts].median()
    merged[others] = g[others].first()
    merged["runs"] = g["runs"].sum()
    merged["time_s_min"] = g["time_s_min"].min()
    merged["time_s_max"] = g["time_s_max"].max()
    merged["_row"] = g["_row"].min()
    out = pd.concat([df[~repeated], merged.reset_index()], ignore_index=True)
    return out.sort_values("_row", kind="stable").reset_index(drop=True)


def _column(df: pd.DataFrame, name: str, default) -> pd.Series:
    """Column ``name``, ``default`` where it is missing or empty."""
    if name not in df.columns:
        return pd.Series(default, index=df.index, dtype=float)
    return df[name].fillna(default)
