"""Checks every reader applies the same way: numbers that are text, negative counts, unusable
durations. One policy for all formats:

- a cell that should be a number but holds text (``'fast'``) is an ``InputError`` naming file,
  row and column: a typo must not silently become a missing value;
- a negative duration or count, or an infinite number, is an ``InputError`` (no profiler
  prints one);
- an empty, NaN or zero duration makes the row unusable for timing: it is skipped and counted
  as a ``Skipped(path, row, reason)``; so does an empty kernel or GPU name.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ...errors import InputError
from ..table import Skipped
from ._io import cell_text

_NA_TEXT = ("", "n/a", "N/A", "-", "nan", "NaN")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$")
# under a decimal comma: dots between thousands, before a decimal comma or two or more of them
# ("1.234,5", "1.234.567"); a single "1.234" stays what it was read as before, 1.234
_DOT_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:(?:\.\d{3})+,\d*|(?:\.\d{3}){2,})$")


def from_decimal_comma(text: str) -> str:
    """A number written with a decimal comma, rewritten with a decimal point.

    >>> from_decimal_comma("0,0125"), from_decimal_comma("1.234,5")
    ('0.0125', '1234.5')
    """
    if _DOT_THOUSANDS.match(text):
        text = text.replace(".", "")
    return text.replace(",", ".")


def parse_number(text) -> float:
    """A float from a profiler cell: ``'1,234.5'`` (thousands separators), ``''`` and ``'n/a'``
    are NaN. Raises ``ValueError`` on other text.

    >>> parse_number("1,234,567")
    1234567.0
    >>> parse_number("")
    nan
    """
    if text is None:
        return float("nan")
    if isinstance(text, (int, float, np.integer, np.floating)):
        return float(text)
    s = str(text).strip().strip('"')
    if s in _NA_TEXT:
        return float("nan")
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    return float(s)


# no measured count, size or time comes near it, and below it the sums and products the
# readers and models form of two or three values stay finite (1e308 per launch x 1e10
# launches overflowed to an infinite application time, two such launches to an infinite mean)
MAX_VALUE = 1e100


def numeric(values: pd.Series, *, path, field: str, rows=None, allow_negative=False,
            decimal_comma=False) -> pd.Series:
    """``values`` as floats; text that is not a number raises ``InputError`` with the row.

    ``rows`` holds the 1-based file row of each value (``_row``); ``field`` is the column name as
    the file spells it. ``decimal_comma``: text is written with decimal commas (a spreadsheet's
    export under such a locale, ``from_decimal_comma``); an error quotes it as written.
    """
    if pd.api.types.is_numeric_dtype(values):
        out = values.astype(float)
    else:
        text = values.astype(object).where(values.notna(), "").astype(str).str.strip()
        if decimal_comma:
            text = text.map(from_decimal_comma)
        out = pd.to_numeric(text.where(~text.isin(_NA_TEXT), None), errors="coerce")
        out = out.astype(float)
        # what to_numeric could not read: thousands separators, else a real error
        for i in np.flatnonzero(out.isna().to_numpy() & ~text.isin(_NA_TEXT).to_numpy()):
            try:
                out.iloc[i] = parse_number(text.iloc[i])
            except ValueError:
                raise InputError(f"'{values.iloc[i]}' is not a number", path=path,
                                 row=_at(rows, i), field=field) from None
    inf = np.flatnonzero(np.isinf(out.to_numpy()))
    if len(inf):
        i = inf[0]
        raise InputError(f"'{as_written(values.iloc[i], path, _at(rows, i), field)}' is not a "
                         "finite number", path=path, row=_at(rows, i), field=field)
    huge = np.flatnonzero((out.abs() > MAX_VALUE).to_numpy())
    if len(huge):
        i = huge[0]
        raise InputError(f"'{as_written(values.iloc[i], path, _at(rows, i), field)}' is beyond "
                         f"any count, size or time (over {MAX_VALUE:g})", path=path,
                         row=_at(rows, i), field=field)
    if not allow_negative:
        neg = np.flatnonzero((out < 0).to_numpy())
        if len(neg):
            i = neg[0]
            raise InputError(f"{as_written(values.iloc[i], path, _at(rows, i), field)} is "
                             "negative", path=path, row=_at(rows, i), field=field)
    return out


def as_written(value, path, row, field):
    """``value`` as the file writes it where pandas has parsed it (an overflow, '1e400', is
    inf), else as it is."""
    if isinstance(value, str):
        return value
    text = cell_text(path, row, field)
    for form in (text, None if text is None else from_decimal_comma(text)):
        try:
            if form is not None and parse_number(form) == value:
                return text
        except ValueError:
            continue
    return value


def _at(rows, i):
    if rows is None:
        return None
    r = list(rows)[i]
    return None if pd.isna(r) else int(r)


def split_unusable_times(df: pd.DataFrame, path, *, column="time_s", field=None,
                         reason_blank=None):
    """Rows of ``df`` with a usable (finite, positive) time, and a ``Skipped`` per other row.

    ``column`` already holds floats (see ``numeric``); ``field`` is the file's name for it, used
    in the reason. ``reason_blank`` replaces the reason for empty cells (KernelTuner: the
    configuration does not run on that GPU).
    """
    field = field or column
    t = df[column].to_numpy(dtype=float)
    bad = ~(np.isfinite(t) & (t > 0))
    reasons = [(reason_blank or f"{field} has no value") if np.isnan(v)
               else f"{field} = {v:g} is not positive" for v in t[bad]]
    return _split(df, path, bad, reasons, f"no row has a usable {field}", field=field)


def split_missing_names(df: pd.DataFrame, path, fields: dict):
    """Rows of ``df`` whose name columns all hold text, and a ``Skipped`` per other row: a row
    without a kernel or GPU name cannot be keyed, and grouping would drop it without a word.

    ``fields`` maps each column of ``df`` to the file's name for it, used in the reason.
    """
    empty = {f: (df[c].isna() | (df[c].astype(object).astype(str).str.strip() == "")).to_numpy()
             for c, f in fields.items()}
    bad = np.logical_or.reduce(list(empty.values()))
    reasons = [" and ".join(f for f, e in empty.items() if e[i]) + " empty"
               for i in np.flatnonzero(bad)]
    return _split(df, path, bad, reasons,
                  f"every row lacks a name ({', '.join(fields.values())})")


def _split(df, path, bad, reasons, everything, field=None):
    """The rows of ``df`` that are not ``bad`` and a ``Skipped`` per bad row (``reasons``: one
    per bad row, in order); an ``InputError`` where every row is bad, ``everything`` saying
    what they lack."""
    rows = df["_row"].to_numpy()[bad]
    skipped = [Skipped(str(path), None if pd.isna(r) else int(r), why)
               for r, why in zip(rows, reasons)]
    if len(df) and bad.all():
        first = skipped[0]
        raise InputError(f"{everything}: all {len(df)} rows would be skipped ({first.reason})",
                         path=path, row=first.row, field=field)
    return df.loc[~bad].copy(), skipped


def require_columns(df: pd.DataFrame, columns, path, what="column") -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"missing required {what}(s): {', '.join(missing)}", path=path,
                         field=missing[0])
