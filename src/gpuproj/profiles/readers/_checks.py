"""Checks every reader applies the same way: numbers that are text, negative counts, unusable
durations. One policy for all formats:

- a cell that should be a number but holds text (``'fast'``) is an ``InputError`` naming file,
  row and column: a typo must not silently become a missing value;
- a negative duration or count, or an infinite number, is an ``InputError`` (no profiler
  prints one);
- an empty, NaN or zero duration makes the row unusable for timing: it is skipped and counted
  as a ``Skipped(path, row, reason)``; so does an empty kernel or GPU name.

Numbers that a locale wrote (ncu's output, a spreadsheet's semicolon-separated export) have one
rule, ``number_style``: a file is read with decimal commas and dots between thousands where some
number in it can only be written so (``"65,77"``, ``"0,125"``, ``"27.595.520"``, ``"1.234,5"``),
then ``"1.234"`` is 1234; with decimal points and commas between thousands where some number can
only be written so (``"117.34"``, ``"0.001"``, ``"1,234,567"``, ``"4.0e-05"``), then ``"1,234"`` is
1234; numbers of both styles in one file are an error quoting one of each (row, field). A file with
neither (only numbers such as ``"1,234"``, ``"1.234"``, ``"64"``) is read as its reader says: ncu's
with decimal points, a spreadsheet's with decimal commas, a lone ``"1.234"`` being 1.234 there.
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


def _written(decimal: str, thousands: str) -> re.Pattern:
    """A number written with ``decimal`` and ``thousands`` separators: groups of three digits
    after a first group of one to three that does not start with 0 (so "0,125" and "0.001"
    have a decimal separator), or digits without groups, an exponent maybe ("4.0e-05"), or
    inf (pandas reads it as a number, so a column of tuning parameters with it stays one)."""
    d, t = re.escape(decimal), re.escape(thousands)
    return re.compile(rf"[+-]?(?:[1-9]\d{{0,2}}(?:{t}\d{{3}})+(?:{d}\d*)?"
                      rf"|\d+(?:{d}\d*)?(?:[eE][+-]?\d+)?|inf(?:inity)?)", re.IGNORECASE)


# style -> (decimal separator, thousands separator, what a number so written looks like)
_STYLES = {style: (d, t, _written(d, t)) for style, d, t in (("point", ".", ","),
                                                            ("comma", ",", "."))}
# a file of no determined style, as a spreadsheet's export with decimal commas: dots are
# between thousands only where they must be, before a decimal comma or two or more of them
# ("1.234,5", "1.234.567"); a lone "1.234" is 1.234
_DOT_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:(?:\.\d{3})+,\d*|(?:\.\d{3}){2,})$")


def _reading(text: str, style: str) -> str | None:
    """``text`` as a number written in ``style`` ("point", "comma"), rewritten with a decimal
    point and no thousands separators; None where that style cannot write it."""
    decimal, thousands, written = _STYLES[style]
    t = text.strip()
    return t.replace(thousands, "").replace(decimal, ".") if written.fullmatch(t) else None


def is_number(text: str) -> bool:
    """Whether ``text`` is a number written in one of the styles ("1.234,5", "12", not "v1.2"
    or "535.104.05", a version)."""
    return any(_reading(text, style) is not None for style in _STYLES)


def _separator_style(text: str) -> str | None:
    """"comma" where ``text`` can only be a number written with a decimal comma ("65,77",
    "0,125", "27.595.520", "1.234,5"), "point" where only with a decimal point ("117.34",
    "0.001", "1,234,567", "4.0e-05"), None where it could be either ("117.344", "1,234", "64")
    or neither (text)."""
    styles = [style for style in _STYLES if _reading(text, style) is not None]
    return styles[0] if len(styles) == 1 else None


def shown_styles(texts) -> set[str]:
    """The styles ("comma", "point") that some of ``texts`` can only be written in: with one
    or none, it is what ``number_style`` says of them, whatever their order (which it needs
    only to quote the first of each style)."""
    return {style for t in texts if ("," in t or "." in t) and (style := _separator_style(t))}


def number_style(values, path, default: str = "point") -> str:
    """"comma" or "point": how the (file row, field, text) ``values`` of one file write decimals
    (the module docstring); ``default`` where no value shows it. Both styles in one file is an
    ``InputError`` quoting a value of each with its row and field."""
    first, seen = {}, {}
    for row, fld, text in values:
        # a profile repeats its values (each launch of a kernel), and most have no separator
        style = seen.get(text, 0)
        if style == 0:
            style = seen[text] = _separator_style(text) if "," in text or "." in text else None
        if style and style not in first:
            first[style] = (row, fld, text)
            if len(first) == 2:
                break
    if len(first) == 2:
        (rc, fc, tc), (rp, fp, tp) = first["comma"], first["point"]
        raise InputError(f"numbers written with a decimal comma ('{tc}', row {rc}, field "
                         f"'{fc}') and with a decimal point ('{tp}', row {rp}, field '{fp}'): "
                         "export the file again under one locale", path=path, row=max(rc, rp))
    return next(iter(first), default)


def with_decimal_points(text: str, style: str) -> str:
    """``text``, a number of a file of ``style`` (``number_style``), rewritten with a decimal
    point and no thousands separators; text that is no number in that style as it is, for the
    error that quotes it. "undetermined": a file with decimal commas whose numbers do not show
    what their dots are.

    >>> [with_decimal_points(t, "comma") for t in ("0,0125", "1.234,5", "1.234")]
    ['0.0125', '1234.5', '1234']
    >>> with_decimal_points("1,234", "point"), with_decimal_points("1.234", "undetermined")
    ('1234', '1.234')
    """
    if style == "undetermined":
        t = text.strip()
        return (t.replace(".", "") if _DOT_THOUSANDS.match(t) else t).replace(",", ".")
    reading = _reading(text, style)
    return text if reading is None else reading


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
    if "," in s and _THOUSANDS.match(s):  # the test first: most numbers have no comma
        s = s.replace(",", "")
    return float(s)


# no measured count, size or time comes near it, and below it the sums and products the
# readers and models form of two or three values stay finite (1e308 per launch x 1e10
# launches overflowed to an infinite application time, two such launches to an infinite mean)
MAX_VALUE = 1e100


def numeric(values: pd.Series, *, path, field: str, rows=None, allow_negative=False,
            style=None) -> pd.Series:
    """``values`` as floats; text that is not a number raises ``InputError`` with the row.

    ``rows`` holds the 1-based file row of each value (``_row``); ``field`` is the column name as
    the file spells it. ``style``: how the file writes decimals (``number_style``), for text to
    be rewritten with ``with_decimal_points``; an error quotes it as written.
    """
    if pd.api.types.is_bool_dtype(values) and len(values):
        # pandas reads a column of true/false alone as booleans, which would pass as 1 and 0
        raise InputError(f"'{as_written(values.iloc[0], path, _at(rows, 0), field)}' is not "
                         "a number", path=path, row=_at(rows, 0), field=field)
    if pd.api.types.is_numeric_dtype(values):
        out = values.astype(float)
    else:
        text = values.astype(object).where(values.notna(), "").astype(str).str.strip()
        if style is not None:
            text = text.map(lambda t: with_decimal_points(t, style))
        out = pd.to_numeric(text.where(~text.isin(_NA_TEXT), None), errors="coerce")
        out = out.astype(float)
        # what to_numeric could not read: thousands separators, else a real error
        for i in np.flatnonzero(out.isna().to_numpy() & ~text.isin(_NA_TEXT).to_numpy()):
            try:
                out.iloc[i] = parse_number(text.iloc[i])
            except ValueError:
                shown = as_written(values.iloc[i], path, _at(rows, i), field)
                raise InputError(f"'{shown}' is not a number", path=path,
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
    inf; true/false text a boolean), else as it is."""
    if isinstance(value, str):
        return value
    text = cell_text(path, row, field)
    if isinstance(value, (bool, np.bool_)):
        return value if text is None else text
    try:
        if text is not None and parse_number(text) == value:
            return text
    except ValueError:
        pass
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
