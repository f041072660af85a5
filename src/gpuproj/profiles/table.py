"""``ProfileTable``: many canonical kernel profiles, pandas-backed, with what was skipped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError, NotATableError, UnknownGPUError
from ..units import first_of
from .schema import COLUMNS, NUMERIC, REQUIRED, STRINGS


def _catalog_ids(names: pd.Series) -> pd.Series:
    """The catalog id of each name that means one catalog GPU; other names (a GPU read from a
    file, a name shared by several GPUs) unchanged, for the model or the user to report."""
    from ..catalog import load_catalog

    cat = load_catalog()
    ids = {}
    for n in names.dropna().unique():
        try:
            ids[n] = cat.resolve(n).id
        except UnknownGPUError:  # also AmbiguousGPUError
            ids[n] = n
    if names.dtype == _TEXT and names.notna().any():
        # text (as _text leaves it): each distinct name looked up once, not once a row
        codes, distinct = pd.factorize(names)  # a missing name: -1, the last entry
        out = np.array([ids[n] for n in distinct] + [np.nan], dtype=object)[codes]
        return pd.Series(out, index=names.index, name=names.name, dtype=_TEXT)
    return names.map(lambda v: ids.get(v, v))


# the dtype of a column of text, as pandas makes it
_TEXT = pd.Series([""]).dtype


def _text(col: pd.Series) -> pd.Series:
    """``col`` as text: None where a value is missing, else its str(). A column of text
    already, or missing everywhere, gives back what a call per value would, without one (5
    columns of 87,000 rows took 0.4 s)."""
    if col.isna().all():
        return pd.Series([None] * len(col), index=col.index, name=col.name, dtype=object)
    if col.dtype == _TEXT:
        return col
    return col.astype(object).where(col.notna(), None).map(lambda v: v if v is None else str(v))


@dataclass(frozen=True)
class Skipped:
    """A row that was left out, and why. ``row`` is 1-based as a spreadsheet shows it."""

    path: str
    row: int | None
    reason: str
    # the catalog ceilings (``CeilingNote`` of kind ``missing``) a model lacked for the row,
    # so that the skips of many GPU pairs can be told as one cause (``group_causes``)
    lacks: tuple = field(default=(), compare=False)
    # (kernel, config, target) where one row's projection to one target was left out, so that
    # an evaluation counts only those the target measured
    projection: tuple = field(default=(), compare=False)

    @property
    def cause(self) -> str:
        """The reason without the ``kernel [config]: `` a model puts before it, so that the rows
        skipped for one cause count together."""
        return self.reason.split(": ", 1)[-1]

    @property
    def what(self) -> str:
        """The ``kernel [config]`` (and ``source -> target``) a model puts before the cause, ''
        where the reason has none."""
        return self.reason.split(": ", 1)[0] if ": " in self.reason else ""


def skip_noun(skipped) -> str:
    """'row', or 'projection' where each of ``skipped`` is one row's projection to one target
    (a model that could not time a row on a GPU pair skips it once per pair)."""
    return "projection" if skipped and all(s.projection for s in skipped) else "row"


def group_causes(skipped) -> dict:
    """Cause -> the ``Skipped`` left out for it, in order of first appearance. A model's skips
    for missing ceilings count as one cause per model and ceilings, naming every GPU that
    lacks them: one line instead of one per GPU pair (an evaluation of 10 GPUs where one lacks
    a ceiling has 18 such pairs)."""
    groups: dict = {}
    for s in skipped:
        key = s.cause if not s.lacks else (s.cause.split(" (", 1)[0],
                                           tuple(sorted({n.ceiling for n in s.lacks})))
        groups.setdefault(key, []).append(s)
    out = {}
    for key, items in groups.items():
        if isinstance(key, tuple):
            prefix, ceilings = key
            gpus = {c: sorted({n.gpu for s in items for n in s.lacks if n.ceiling == c})
                    for c in ceilings}
            key = prefix + " (" + "; ".join(f"no {c} on {', '.join(g)}"
                                            for c, g in gpus.items()) + ")"
        out.setdefault(key, []).extend(items)
    return out


def skipped_lines(skipped) -> list[str]:
    """One line per reason, most frequent first: how many rows (or projections of a row to a
    target) were skipped, where (file rows, or the kernels a model names) and why; what the
    command line prints on stderr and a notebook's views under their tables."""
    from pathlib import Path

    lines = []
    for reason, items in sorted(group_causes(skipped).items(), key=lambda kv: -len(kv[1])):
        where = [f"{name} row {row}" for name, row in
                 sorted({(Path(s.path).name, s.row) for s in items if s.path and s.row})]
        if not where:  # a model's skip names the kernel (and target) before its cause
            where = list(dict.fromkeys(s.what for s in items if s.what))
        at = f" ({', '.join(where[:3])}{', ...' if len(where) > 3 else ''})" if where else ""
        lines.append(f"skipped {len(items)} {skip_noun(items)}(s){at}: {reason}")
    return lines


def count_causes(skipped) -> dict:
    """Cause -> how many of ``skipped`` were left out for it (``group_causes``)."""
    return {c: len(items) for c, items in group_causes(skipped).items()}


def top_cause(skipped, besides=()) -> str | None:
    """'<the most frequent cause>: N rows' over ``skipped`` (and how many other causes there
    are), for an error that says why nothing could be predicted; None when nothing was
    skipped. ``besides`` (a table's own skips, reported apart) are left out. A method skips a
    row it cannot use once, whatever the number of targets, and a row it cannot time on a GPU
    pair once per pair (``skip_noun``)."""
    read = {id(s) for s in besides}
    causes = group_causes(s for s in skipped if id(s) not in read)
    if not causes:
        return None
    top = max(causes, key=lambda c: len(causes[c]))
    others = len(causes) - 1
    n = len(causes[top])
    return (f"{top}: {n} {skip_noun(causes[top])}{'s' if n > 1 else ''}"
            + (f"; {others} other cause{'s' if others > 1 else ''}" if others else ""))


def require_table(table) -> None:
    """A one-line error (``NotATableError``, a ``TypeError``) where the API gets a file name or
    a DataFrame for a ``ProfileTable``."""
    if not isinstance(table, ProfileTable):
        raise NotATableError(f"expected a ProfileTable, got {type(table).__name__}: "
                           "gpuproj.profiles.load(path) reads a file, "
                           "ProfileTable.from_frame(df) takes a DataFrame")


def kernel_pattern(regex: str) -> re.Pattern:
    """``--kernel REGEX`` compiled, or a one-line error saying why it is not one."""
    try:
        return re.compile(regex)
    except re.error as e:
        raise InputError(f"--kernel '{regex}' is not a regular expression ({e})") from None


def _fill_derived(df: pd.DataFrame) -> None:
    """Totals from their parts where the total is missing (never overwrite a measured total)."""

    def fill(col, value):
        value = pd.Series(value, index=df.index, dtype=float)
        df[col] = df[col].where(df[col].notna(), value)

    for p in ("fp64", "fp32", "fp16"):
        fma, add, mul = (df[f"{p}_{k}_thread_inst"] for k in ("fma", "add", "mul"))
        parts = 2 * fma + add + mul
        if p == "fp32":
            parts = parts + df["fp32_special_thread_inst"].fillna(0).where(parts.notna())
        fill(f"{p}_flops", parts)
    kinds = df[["fp64_flops", "fp32_flops", "fp16_flops"]]
    fill("flops", kinds.sum(axis=1, min_count=1))
    fill("dram_bytes", df["dram_read_bytes"] + df["dram_write_bytes"])
    fill("launches", 1.0)  # ProfileTable.launches_assumed marks these rows


def problem_labels(problem: pd.Series) -> pd.Series:
    """``problem`` with "" for a configuration of no known problem: the configurations of a
    kernel whose problem is not known are one group, as in a table without the column (a
    missing label would leave them out of every group)."""
    return problem.astype(object).where(problem.notna(), "")


def require_one_problem(df: pd.DataFrame, origin: str) -> None:
    """A kernel configuration solves one problem (``problem``) on every GPU that names it: two
    rows that name two would rank it among other variants on one GPU than on another. A row
    of no problem (a file without the column, an empty cell) takes the one named elsewhere
    (``problem_per_row``). The error names the row and its file (``_path``, ``_row``) and where
    the first row naming the other problem is."""
    if "problem" not in df:
        return
    named = df[df["problem"].notna()]
    first = named["problem"].groupby([named["kernel"], named["config"]],
                                     sort=False).transform("first")
    differ = (named["problem"] != first).to_numpy()
    if not differ.any():
        return
    r = named[differ].iloc[0]
    f = named[(named["kernel"] == r["kernel"]) & (named["config"] == r["config"])].iloc[0]
    path = r.get("_path", origin)
    raise InputError(f"kernel {r['kernel']} with config {r['config']} has problem "
                     f"'{r['problem']}' here and '{f['problem']}' in "
                     f"{_where(f, path) or 'another row'}: a configuration solves one problem "
                     "on every GPU", path=path or None, row=_row(r), field="problem")


def problems_of(df: pd.DataFrame) -> pd.Series | None:
    """(kernel, config) -> the problem the configuration's rows name (the first: they agree,
    ``require_one_problem``); None where no row names one."""
    if "problem" not in df or df["problem"].isna().all():
        return None
    named = df.dropna(subset=["problem"]).drop_duplicates(["kernel", "config"])
    return pd.Series(named["problem"].to_numpy(object),
                     index=pd.MultiIndex.from_frame(named[["kernel", "config"]].astype(object)))


def problem_per_row(df: pd.DataFrame, problems: pd.Series) -> pd.Series:
    """Each row's problem from ``problems`` (``problems_of``), its kernel configuration's
    wherever a row names it (a GPU's file without the column, joined with one that has it);
    NaN where none does."""
    keys = pd.MultiIndex.from_frame(df[["kernel", "config"]].astype(object))
    return pd.Series(problems.reindex(keys).to_numpy(object), index=df.index)


def _row(r: pd.Series) -> int | None:
    """The file row of table row ``r`` (``_row``), None where it has none."""
    n = r.get("_row")
    return None if n is None or pd.isna(n) else int(n)


def _where(r: pd.Series, path) -> str:
    """Where table row ``r`` is, for a message about a row of file ``path``: "row 2", "row 2
    of a.csv" where ``r`` came from another file; "" where it has no file row."""
    if _row(r) is None:
        return ""
    return f"row {_row(r)}" + (f" of {r['_path']}" if r.get("_path", path) != path else "")


def _origin_of(df: pd.DataFrame, origin: str) -> str:
    """The files ``df``'s rows came from, comma-separated (``origin`` for rows of one file)."""
    if "_path" not in df:
        return origin
    # none left (an empty subset), or rows joined by hand without one: the table's own
    return ", ".join(p for p in pd.unique(df["_path"]) if isinstance(p, str) and p) or origin


def _numbers(df: pd.DataFrame, column: str, origin: str) -> pd.Series:
    """``df[column]`` as floats, checked as a reader checks a file's (``readers._checks.numeric``:
    the time may be negative, a skipped row); the error of a frame built in memory names the
    index label of the value, which has no file row."""
    from .readers._checks import numeric

    negative = column == "time_s"
    if "_row" in df.columns:
        return numeric(df[column], path=origin or None, field=column, rows=df["_row"],
                       allow_negative=negative)
    try:
        return numeric(df[column], path=origin or None, field=column, allow_negative=negative)
    except InputError as e:
        for label, v in df[column].items():  # which one: an error is rare, the loop cheap then
            try:
                numeric(pd.Series([v]), path=None, field=column, allow_negative=negative)
            except InputError:
                raise InputError(f"index {label}: {e.message}", path=origin or None,
                                 field=column) from None
        raise


class ProfileTable:
    """Kernel profiles in canonical form (see ``profiles.schema.COLUMNS``).

    ``df`` holds one row per (kernel, config, gpu) (per launch where a reader is asked to:
    ncu's ``per_launch``; ``require_unique_configs`` checks); ``skipped`` lists the input rows
    that were left out with the reason. Build one with ``ProfileTable.from_frame`` or a reader
    (``gpuproj.profiles.load``). ``launches_assumed`` (one bool per row of ``df``) marks the
    rows whose ``launches`` is the 1 ``from_frame`` assumed where the input gave no count, so
    that what combines tables (a trace's times, ``trace_times``) does not take it for a count.

    >>> t = ProfileTable.from_frame(pd.DataFrame({"kernel": ["k"], "config": ["n=1"],
    ...     "gpu": ["v100-sxm2-16gb"], "time_s": [1e-3], "flops": [2e9]}))
    >>> float(t.df.loc[0, "launches"])
    1.0
    """

    def __init__(self, df: pd.DataFrame, skipped=(), origin: str = "", launches_assumed=None):
        self.df = df
        self.skipped = list(skipped)
        self.origin = origin
        self.launches_assumed = (np.zeros(len(df), dtype=bool) if launches_assumed is None
                                 else np.asarray(launches_assumed, dtype=bool))

    # construction -----------------------------------------------------------------------
    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, skipped=(), origin: str = "") -> "ProfileTable":
        """Canonicalise ``frame`` (canonical column names already): add missing columns as NaN,
        derive totals, and skip rows with an unusable time (counted in ``skipped``).

        Extra columns are kept (readers keep e.g. tuning parameters for learned models). A
        ``gpu`` that names one catalog GPU becomes its id (``NVIDIA A100-SXM4-80GB`` ->
        ``a100-sxm4-80gb``), as the readers do; other names stay as they are. A missing
        ``config`` is ``default``, as in a measurement table, and a column named nearly as a
        canonical one is warned of (``dram_byte``). Numbers are checked as the
        readers check a file's: text that is no number, an infinite or a negative count is an
        ``InputError`` naming the column and the row (a frame built in memory: its index
        label); a time that is not positive is a skipped row.
        """
        df = frame.copy()
        if "_row" not in df.columns:
            # a frame built in memory: its columns were named by hand, as a measurement table's
            from .readers.measurement import warn_near_misses

            warn_near_misses(df.columns, origin or "the frame")
        if "config" not in df.columns:  # each kernel ran in one configuration
            df["config"] = "default"
        missing = [c for c in REQUIRED if c not in df.columns]
        if missing:
            # the GPU is the column a frame of one GPU's times most often lacks
            hint = (" (the GPU of the rows: frame.assign(gpu='h100-sxm5-80gb'), a catalog name)"
                    if "gpu" in missing else "")
            raise InputError(f"missing required column(s) {', '.join(missing)}{hint}",
                             path=origin or None)
        for c in COLUMNS:
            if c not in df.columns:
                df[c] = np.nan if c in NUMERIC else None
        for c in NUMERIC:
            df[c] = _numbers(df, c, origin)
        for c in STRINGS:
            df[c] = _text(df[c])
        df["gpu"] = _catalog_ids(df["gpu"])
        skipped = list(skipped)
        bad = ~(np.isfinite(df["time_s"]) & (df["time_s"] > 0))
        for c in ("kernel", "config", "gpu"):
            bad |= df[c].isna()
        # a row of no launch (or fewer) adds nothing to the application's total
        bad |= (df["launches"] <= 0).to_numpy()
        if bad.any():
            rows = df.index[bad]
            src_rows = df.loc[bad, "_row"] if "_row" in df.columns else [None] * len(rows)
            for i, r in zip(rows, src_rows):
                t = df.at[i, "time_s"]
                empty = [c for c in ("kernel", "config", "gpu") if pd.isna(df.at[i, c])]
                why = ("time_s is missing" if pd.isna(t) else f"time_s = {t} is not positive")
                if np.isfinite(t) and t > 0:  # the time is sound: the launch count is not
                    why = f"launches = {df.at[i, 'launches']:g} (the kernel did not run)"
                if empty:
                    why = f"{' and '.join(empty)} empty"
                row = None if r is None or pd.isna(r) else int(r)
                if row is None:  # a frame built in memory: its index label says which row
                    why = f"index {i}: {why}"
                skipped.append(Skipped(origin, row, why))
            df = df.loc[~bad]
        assumed = df["launches"].isna().to_numpy()
        _fill_derived(df)
        df = df.reset_index(drop=True)
        return cls(df, skipped, origin, launches_assumed=assumed)

    def require_unique_configs(self) -> None:
        """``InputError`` naming the first row that repeats a kernel configuration on its GPU,
        or that gives a configuration another problem than its other rows
        (``require_one_problem``: tables read from several files), for what matches
        configurations across GPUs (evaluation, learned models' pairs, combined sources).
        Readers merge repeated runs; a repeat left is a damaged file (a line repeated, a column
        of the configuration lost) or one row per launch (ncu's ``per_launch``)."""
        keys = ["kernel", "config", "gpu"]
        dup = self.df.duplicated(keys)
        if dup.any():
            r = self.df.loc[dup.idxmax()]
            first = self.df.loc[(self.df[keys] == r[keys]).all(axis=1).idxmax()]
            path = r.get("_path", self.origin)
            # the same file read twice, or one GPU's rows in two files, shows in the first row
            where = _where(first, path)
            raise InputError(f"{r['gpu']} has several rows of kernel {r['kernel']} with config "
                             f"{r['config']}{f' (the first: {where})' if where else ''}: "
                             "configurations are matched across GPUs, so each must be one row "
                             "(a line repeated, a file read twice, a column lost, or an ncu "
                             "profile read with per_launch?)", path=path or None, row=_row(r))
        require_one_problem(self.df, self.origin)

    def concat(self, other: "ProfileTable") -> "ProfileTable":
        """The rows of both tables. Tables read from different files keep each row's file in
        ``_path``, as they keep its file row in ``_row``, so that a message about a row names
        the file it came from; ``origin`` then lists every file."""
        parts = [self.df, other.df]
        if self.origin != other.origin or any("_path" in d for d in parts):
            parts = [d if "_path" in d else d.assign(_path=t.origin)
                     for d, t in zip(parts, (self, other))]
        df = pd.concat(parts, ignore_index=True)
        return ProfileTable(df, self.skipped + other.skipped, _origin_of(df, self.origin),
                            np.concatenate([self.launches_assumed, other.launches_assumed]))

    def subset(self, mask) -> "ProfileTable":
        """The rows where ``mask`` (booleans, one per row) holds, with their files and launch
        counts' provenance."""
        mask = np.asarray(mask, dtype=bool)
        df = self.df[mask].reset_index(drop=True)
        return ProfileTable(df, self.skipped, _origin_of(df, self.origin),
                            self.launches_assumed[mask])

    # views ------------------------------------------------------------------------------
    def __len__(self):
        return len(self.df)

    def __repr__(self):
        return (f"ProfileTable({len(self.df)} rows, {self.df['kernel'].nunique()} kernels, "
                f"GPUs {sorted(self.df['gpu'].unique())}, {len(self.skipped)} skipped)")

    @property
    def gpus(self) -> list[str]:
        return sorted(self.df["gpu"].unique())

    def on(self, gpu) -> "ProfileTable":
        """The rows measured on ``gpu``: a GPU id of the table, or any name of it
        (``catalog.resolve``)."""
        if gpu not in self.gpus:
            from ..catalog import resolve

            gpu = resolve(gpu).id
        return self.subset(self.df["gpu"] == gpu)

    def select(self, kernel_regex: str | None) -> "ProfileTable":
        """The rows whose kernel name matches ``kernel_regex`` (re.search), the name as the
        profile gives it or as the tables show it (``kernel_names.short_kernel_names``:
        ``'^vector_add$'`` selects ``vector_add(float *, int)``); an error if none does,
        naming the kernels there are."""
        if not kernel_regex:
            return self
        from ..kernel_names import short_kernel_names

        pat = kernel_pattern(kernel_regex)
        names = pd.Series(self.df["kernel"].astype(str).unique())
        short = dict(zip(names, short_kernel_names(names)))
        m = self.df["kernel"].astype(str).map(
            lambda k: pat.search(k) is not None or pat.search(short[k]) is not None).astype(bool)
        if not m.any():
            names = sorted(self.df["kernel"].astype(str).unique())
            raise InputError(f"no kernel matches --kernel '{kernel_regex}' (kernels: "
                             f"{first_of(names, 8) or 'none'})", path=self.origin or None)
        return self.subset(m)

    def has(self, column: str) -> np.ndarray:
        """Boolean mask of rows where ``column`` is known."""
        return self.df[column].notna().to_numpy()
