"""Shared helpers for readers: the head of a file (to sniff its format), CSV parsing that keeps
row numbers, GPU names, launch configurations."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pandas as pd

from ...errors import GPUNotNamedError, InputError, UnknownGPUError
from ...files import read_text


def head_text(path, n: int = 8192) -> str:
    """The first ``n`` characters ("" for binary or unreadable files and folders); a gzip file
    cut short or corrupt is an ``InputError`` saying so, not a file of no known format."""
    try:
        return read_text(path, n)
    except InputError:
        if str(path).endswith(".gz"):
            raise
        return ""


# a whole line whose first character that is not a space is "#": a note above or between the
# rows of a hand-written table
_COMMENT = re.compile(r"(?m)^[ \t]*#[^\n]*")


def uncommented(text: str) -> str:
    """``text`` with its comment lines emptied, their line breaks kept: the rows keep their
    file line numbers, and an empty line is skipped as any blank one."""
    return _COMMENT.sub("", text) if "#" in text else text


def first_line(text: str) -> str:
    """The first line of ``text`` that is neither blank nor a comment: a CSV file's header."""
    return next((ln for ln in uncommented(text).splitlines() if ln.strip()), "")


def read_csv(path, sep: str = ",", text=()) -> pd.DataFrame:
    """``pandas.read_csv`` with a ``_row`` column (the file line where the row starts, 1-based,
    header = 1, counted past blank lines and line breaks inside quotes) and a one-line error on
    malformed files. ``text``: columns kept as written (a configuration "1024" stays "1024",
    not "1024.0" where an empty cell made the column floats; "0.10" stays "0.10"). ``sep`` ";"
    or a tab: a spreadsheet's export under a locale that may write decimal commas, every column
    kept as written, for the reader to convert its numbers by the file's style
    (``_checks.number_style``): pandas would read "0,5" with a decimal comma and leave "1.234"
    as text, or the reverse. Comment lines (``uncommented``) are skipped as blank ones."""
    content = uncommented(read_text(path))
    header = next((r for r in csv.reader(_lines(content), delimiter=sep)
                   if any(f.strip() for f in r)), [])
    # a hand-written header's spaces around the names ("kernel, time_s") are not part of them
    names = [h.strip() for h in header]
    lines, widths = _records(content, sep, path)
    check_header(names, path, row=int(lines[0]) if len(lines) else 1)
    trailing = _check_widths(content, lines, widths, len(header), sep, path) == "trailing"
    try:
        # index_col=False: pandas drops the empty field a trailing separator leaves, where it
        # would take the first field for a row name and move every column one to the left
        # bytes: pandas encodes text to UTF-8 for its parser anyway, in a copy that took longer
        df = pd.read_csv(io.BytesIO(content.encode()), sep=sep,
                         dtype=str if sep != "," else {h: str for h, n in zip(header, names)
                                                        if n in text},
                         index_col=False if trailing else None)
    except pd.errors.EmptyDataError:
        raise InputError("file is empty", path=path) from None
    except pd.errors.ParserError as e:
        raise InputError(f"not a readable CSV file ({str(e).splitlines()[0]})", path=path) from None
    if df.empty:
        raise InputError("file has a header but no rows", path=path)
    # rows with one field more than the header that is not empty in every row (R's
    # write.table; ``_check_widths`` lets nothing else through): pandas made the first field,
    # the row name, the index; readers look rows up by a position index
    # copy(): pandas 3 keeps a block per column of a wide file (a rocprof pass prints 149), and
    # adding a column to such a frame warns that it is fragmented
    df = df.reset_index(drop=True).copy()
    df.columns = [c.strip() if isinstance(c, str) else c for c in df.columns]
    df["_row"] = _record_lines(content, len(df), lines)
    return df


def _lines(text: str):
    """The lines of ``text`` as ``io.StringIO(text)`` gives them (split after each "\\n"), one
    at a time: a StringIO first copies the whole text into 4 bytes a character, 0.1 s for a
    30 MB table of which the header is wanted."""
    start = 0
    while start < len(text):
        end = text.find("\n", start) + 1 or len(text)
        yield text[start:end]
        start = end


def csv_fields(line: str, path, row: int) -> list[str]:
    """The fields of one CSV line, a one-line error where the csv module refuses it (a quote
    left open: a line cut short; a field over its size limit, 128 KiB)."""
    try:
        return next(csv.reader([line], strict=True), [])
    except csv.Error as e:
        why = ("a quoted field is not closed: the line is cut short?"
               if "unexpected end of data" in str(e) else f"not a readable CSV line ({e})")
        raise InputError(why, path=path, row=row) from None


def check_header(names, path, row: int = 1) -> None:
    """A one-line error where a column name appears twice (pandas would read the second as
    ``name.1``, which no reader looks for)."""
    seen = set()
    for n in names:
        if n.strip() and n in seen:
            raise InputError(f"column '{n}' appears twice in the header", path=path, row=row,
                             field=n)
        seen.add(n)


def _records(text: str, sep: str, path) -> tuple[np.ndarray, np.ndarray]:
    """The file line where each record that is not blank starts (the header first) and its
    number of fields, as the csv module reads them; a one-line error where it cannot (a field
    over its size limit, 128 KiB). Blank: no field, or one of whitespace only."""
    fast = _simple_records(text, sep)
    if fast is not None:
        return fast
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    lines, widths, line = [], [], 1
    try:
        for r in reader:
            if r and (len(r) > 1 or r[0].strip()):
                lines.append(line)
                widths.append(len(r))
            line = reader.line_num + 1
    except csv.Error as e:
        raise InputError(f"not a readable CSV file ({e})", path=path) from None
    return np.array(lines, dtype=np.int64), np.array(widths, dtype=np.int64)


def _simple_records(text: str, sep: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``_records`` without the csv module, which makes a string of every field (2 s for the
    6 million of a 30 MB table), where the text is simple: every record is one line, and every
    quote opens or closes a whole field on it, without one inside ("a","b c",3; "x, y" too),
    so that a record has its separators outside quotes + 1 fields. None where the csv module
    must read it: a quote inside a field, a line break inside quotes, a line long enough to
    hold a field over its size limit, a NUL or a carriage return. Works on the UTF-8 bytes:
    separators, quotes and line breaks are single bytes there, found by numpy."""
    if "\0" in text or "\r" in text:
        return None
    try:
        raw = text.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return None
    b = np.frombuffer(raw, dtype=np.uint8)
    s, nl = ord(sep), ord("\n")
    ends = np.flatnonzero(b == nl)  # each line's end, past its last character
    if len(b) and b[-1] != nl:
        ends = np.append(ends, len(b))  # a last line without a line break
    starts = np.concatenate(([0], ends[:-1] + 1))
    # bytes: at least the characters, to which the csv module's limit applies
    if len(ends) and (ends - starts).max() >= csv.field_size_limit():
        return None
    seps = np.flatnonzero(b == s)
    fields = np.diff(np.searchsorted(seps, ends), prepend=0) + 1
    quotes = np.flatnonzero(b == ord('"'))
    if len(quotes):
        if len(quotes) % 2:
            return None
        opens, closes = quotes[::2], quotes[1::2]
        before = b[np.maximum(opens - 1, 0)]
        after = b[np.minimum(closes + 1, len(b) - 1)]
        line = np.searchsorted(ends, opens)
        if not (((opens == 0) | (before == s) | (before == nl)).all()
                and ((closes == len(b) - 1) | (after == s) | (after == nl)).all()
                and (line == np.searchsorted(ends, closes)).all()):
            return None
        # separators inside quotes part no fields
        np.subtract.at(fields, line, np.searchsorted(seps, closes) - np.searchsorted(seps, opens))
    # a line of one field is blank where that field (the line, or what its quotes hold) is
    # whitespace; an empty line has no field
    blank = np.zeros(len(ends), dtype=bool)
    for i in np.flatnonzero(fields == 1):
        one = raw[starts[i]:ends[i]].decode()
        blank[i] = not (one[1:-1] if one.startswith('"') else one).strip()
    keep = np.flatnonzero(~blank)
    return keep + 1, fields[keep]


def _check_widths(text: str, lines, widths, width: int, sep: str, path) -> str | None:
    """A one-line error naming the first row whose number of fields is not the header's
    ``width``: pandas fills a short row in with empty values, without a word, and stops at a
    long one with its own message; a short last row without a line break after it is a file
    that ends inside a row. Rows that all have one field more are "trailing" where that field
    is the last and empty in every row (a separator at the end of each row, as some scripts and
    spreadsheets write them), else "row names" (R's ``write.table`` puts a row name first,
    without a header name); None where every row has the header's width. ``lines``, ``widths``:
    the text's ``_records``, the header first."""
    lines, widths = lines[1:], widths[1:]
    if (widths == width).all():
        return None
    if (widths == width + 1).all():
        last = [r[-1] for r in csv.reader(io.StringIO(text), delimiter=sep)
                if r and (len(r) > 1 or r[0].strip())][1:]
        return "trailing" if all(not f.strip() for f in last) else "row names"
    k = np.flatnonzero(widths != width)[0]
    line, n = int(lines[k]), int(widths[k])
    if k == len(widths) - 1 and n < width and not text.endswith("\n"):
        raise InputError(f"the file ends inside a row ({n} of the header's {width} fields): "
                         "cut short?", path=path, row=line)
    raise InputError(f"{n} fields where the header has {width}", path=path, row=line)


def separator(first: str) -> str:
    """The field separator of a header line: "," where it has a comma; else ";" where it has a
    semicolon (the CSV a spreadsheet writes under a locale with decimal commas: German,
    French); else a tab where it has one (a spreadsheet's tab-delimited text, a table pasted
    from one). A file separated by ";" or a tab may write decimal commas (``read_csv``)."""
    for sep in (",", ";", "\t"):
        if sep in first:
            return sep
    return ","


def cell_text(path, row, field) -> str | None:
    """The text of column ``field`` in the record that starts on line ``row`` of the CSV file
    ``path``, as the file writes it, for a message about a value pandas has already parsed
    (it reads '1e400' as inf); None where it cannot be found (not a CSV file, no such line or
    column)."""
    if row is None or str(path).endswith(".parquet"):
        return None
    try:
        lines = uncommented(read_text(path)).splitlines(keepends=True)
    except InputError:
        return None
    first = next((ln for ln in lines if ln.strip()), "")
    sep = separator(first)
    header = [h.strip() for h in next(csv.reader([first], delimiter=sep), [])]  # as read_csv
    if field not in header or not 1 <= row <= len(lines):
        return None
    try:
        rec = next(csv.reader(io.StringIO("".join(lines[row - 1:])), delimiter=sep), [])
    except csv.Error:
        return None
    at = header.index(field)
    if len(rec) == len(header) + 1 and rec[-1].strip():  # R's row name first
        at += 1
    return rec[at].strip() if at < len(rec) else None


def _record_lines(text: str, n: int, lines):
    """The file line where each of the ``n`` records after the header starts; ``lines``: the
    text's ``_records``, the header first."""
    if text.count("\n") + (not text.endswith("\n")) == n + 1:
        return range(2, n + 2)  # one line per record
    # pandas skips empty and whitespace-only lines, as _records; a line of commas is a row.
    # Where the csv module and pandas disagree on the records, number them as lines
    return lines[1:] if len(lines) == n + 1 else range(2, n + 2)


def resolve_gpus(names: pd.Series, path, rows: pd.Series | None = None,
                 field: str = "gpu") -> pd.Series:
    """Catalog ids for the GPU names in ``names`` (each distinct name resolved once).

    ``rows`` (aligned with ``names``) holds each name's file row, so that an unknown name is
    reported with the first row that has it; ``field`` is the file's name for the column.
    """
    from ...catalog import resolve  # a GPU file's path too (--source ./my-gpu.yaml)

    ids = {}
    for n in names.dropna().unique():
        try:
            ids[n] = resolve(str(n)).id
        except UnknownGPUError as e:
            row = None if rows is None else int(rows[names == n].iloc[0])
            raise InputError(str(e), path=path, row=row, field=field) from None
    return names.map(ids)


def named_or_given_gpus(names: pd.Series, gpu, path, rows: pd.Series,
                        field: str) -> pd.Series:
    """Catalog ids of each row's GPU where the file names it (``names``, as ``resolve_gpus``)
    and ``gpu`` (``--source``) may name it too: ``gpu`` applies where the file names none (an
    empty ``names`` entry) or one the catalog cannot resolve. A file whose rows name GPUs and
    none of them ``gpu`` is an error naming the first row and both GPUs: ``gpu`` used to
    replace the file's names, so a profile of an RTX 4070 projected from the RTX 3090's peaks
    without a word. A file of several GPUs keeps them all, ``gpu`` among them: ``--source``
    then picks its rows (``ProfileTable.on``)."""
    if gpu is None:
        if names.isna().any():
            raise GPUNotNamedError("no GPU named", in_file=f"name it in {field}", path=path,
                                   row=int(rows[names.isna()].iloc[0]), field=field)
        return resolve_gpus(names, path, rows=rows, field=field)
    from ...catalog import resolve

    given = resolve(gpu).id
    ids = {}
    for n in names.dropna().unique():
        try:
            ids[n] = resolve(str(n)).id
        except UnknownGPUError:
            continue  # a name the catalog does not know (or several parts share): gpu says which
    if ids and given not in ids.values():
        n, other = next(iter(ids.items()))
        raise InputError(f"measured on '{n}' ({other}), not on {given} as --source (gpu= in "
                         "load()) says: name the GPU the profile was measured on, or leave "
                         "--source out", path=path, row=int(rows[names == n].iloc[0]),
                         field=field)
    return names.map(ids).astype(object).fillna(given)


def refuse_repeated_rows(df: pd.DataFrame, path, what: str) -> None:
    """An ``InputError`` at the first row of ``df`` that repeats an earlier one in every field
    (``_row`` aside). ``what`` says why no two rows of the format can be alike (each launch
    has its own start time): a repeat is a line copied or two outputs joined, and would count
    as one launch more. A shared launch ID alone is no repeat: the kernels of one CUDA graph
    launch share their correlation ID."""
    if df.empty:
        return
    keys = pd.util.hash_pandas_object(df.drop(columns="_row"), index=False).to_numpy()
    twice = pd.Series(keys).duplicated().to_numpy()
    if twice.any():
        i = twice.nonzero()[0][0]
        first = int(df["_row"].to_numpy()[(keys == keys[i]).nonzero()[0][0]])
        raise InputError(f"the row repeats row {first} field for field: {what}, so a line was "
                         "repeated or two outputs were joined; give each output its own file",
                         path=path, row=int(df["_row"].iloc[i]))


def strip_device_index(name) -> str:
    """'Tesla V100-PCIE-16GB (0)' -> 'Tesla V100-PCIE-16GB' (nvprof and nsys number devices)."""
    # the spaces before it go with strip(): a leading \s* backtracked for seconds over a name
    # of 50,000 spaces
    return re.sub(r"\(\d+\)\s*$", "", str(name)).strip()


def launch_config(grid, block) -> pd.Series:
    """The ``config`` of launches from their grid and block sizes (three Series each):
    ``grid=4096x1x1 block=256x1x1``."""
    def xyz(parts):
        return whole_numbers(parts[0]) + "x" + whole_numbers(parts[1]) + "x" + \
            whole_numbers(parts[2])

    return "grid=" + xyz(grid) + " block=" + xyz(block)


def whole_numbers(values: pd.Series) -> pd.Series:
    """``values.map("{:.0f}".format)`` ("4096"), each distinct value formatted once: a profile
    repeats its sizes in every row, and formatting 60,000 took 0.08 s a column."""
    if values.dtype != np.float64 or not len(values):
        return values.map("{:.0f}".format)
    # by bit pattern, so that -0.0 ("-0") stays apart from 0.0 ("0"), as map formats them
    bits = np.ascontiguousarray(values.to_numpy()).view(np.int64)
    distinct, at = np.unique(bits, return_inverse=True)
    text = np.array(["{:.0f}".format(v) for v in distinct.view(np.float64).tolist()], dtype=object)
    return pd.Series(text[at], index=values.index, name=values.name, dtype="str")


def group_launches(df: pd.DataFrame) -> pd.DataFrame:
    """Per-launch rows -> one row per kernel, config and GPU: ``launches`` = their number,
    every numeric column the mean per launch, ``time_s_min`` / ``time_s_max`` the spread and
    ``_row`` the first file row (profilers that print one row per launch: ncu, rocprof).

    Rows that stand for several launches each (a profiler's per-kernel summary: a ``launches``
    column, and ``time_s_min`` / ``time_s_max`` where it printed them) weigh by them."""
    if not len(df):
        return df
    keys = ["kernel", "config", "gpu"]
    spread = ("launches", "time_s_min", "time_s_max")
    num = [c for c in df.columns if c not in (*keys, "launch_id", *spread)
           and not c.startswith("_") and pd.api.types.is_numeric_dtype(df[c])]
    w = df["launches"] if "launches" in df.columns else pd.Series(1.0, index=df.index)
    by = [df[k] for k in keys]
    g = df.groupby(keys, sort=False)
    # the mean per launch of each column over the launches that have it
    agg = pd.DataFrame({c: (df[c] * w).groupby(by, sort=False).sum(min_count=1)
                        / w.where(df[c].notna()).groupby(by, sort=False).sum() for c in num})
    agg["launches"] = w.groupby(by, sort=False).sum()
    agg["time_s_min"] = g[df.columns.intersection(["time_s", "time_s_min"])].min().min(axis=1)
    agg["time_s_max"] = g[df.columns.intersection(["time_s", "time_s_max"])].max().max(axis=1)
    agg["_row"] = g["_row"].min()
    return agg.reset_index()
