"""GPU descriptions: loading, validation, name resolution and ceilings.

>>> cat = load_catalog()
>>> gpu = cat.resolve("NVIDIA A100-SXM4-80GB")
>>> gpu.id
'a100-sxm4-80gb'
>>> gpu.value("sm_count")
108.0

Files come from the package (``catalog/gpus/*.yaml``), then from the directories in
``$GPUPROJ_GPU_PATH`` (``:``-separated) and ``~/.config/gpuproj/gpus``; a user file with the id of a
bundled one replaces it, with a warning, and the bundled GPU's names then name it.
``load_catalog(extra=[path])`` adds single files.
"""

from __future__ import annotations

import difflib
import fnmatch
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..errors import AmbiguousGPUError, InputError, InputWarning, UnknownGPUError
from ..files import parse_yaml, read_text
from .schema import (
    IDENTITY_FIELDS,
    LIST_FIELDS,
    PLAUSIBLE,
    SCHEMA_VERSION,
    SOURCE_KINDS,
    THROUGHPUT_FIELDS,
    VALUE_FIELDS,
    WHOLE_FIELDS,
    ZERO_ALLOWED,
    unit_of,
)

BUNDLED_DIR = Path(__file__).parent / "gpus"
USER_DIR = Path.home() / ".config" / "gpuproj" / "gpus"


class CeilingNote(str):
    """What a model assumed about one ceiling of one GPU: the note's text, with its parts as
    attributes so that a report can group the notes of many GPUs without parsing the text.
    ``kind``: ``peak`` (no measured value), ``missing``, ``derived`` (peak x ``ref``'s
    measured/peak ``ratio``), or ``instead`` (missing, the GPU's ``ref`` ceiling used)."""

    gpu: str
    kind: str
    ceiling: str
    ref: str | None
    ratio: float | None

    def __new__(cls, gpu: str, kind: str, ceiling: str, ref: str | None = None,
                ratio: float | None = None):
        if kind == "derived":
            text = f"{gpu} {ceiling} derived: peak x {ref} measured/peak = {ratio:.3f}"
            if ratio > 1:
                text += " (taken as 1: a peak its own GPU exceeds is no share to carry over)"
        elif kind == "instead":
            text = f"{gpu} has no {ceiling}: {ref} used"
        else:
            text = (f"{gpu} {ceiling} peak (no measured value)" if kind == "peak"
                    else f"{gpu} has no {ceiling}")
        note = super().__new__(cls, text)
        note.gpu, note.kind, note.ceiling, note.ref, note.ratio = gpu, kind, ceiling, ref, ratio
        return note


@dataclass(frozen=True)
class Ceiling:
    """A throughput used by a model, with where it came from.

    ``kind`` is ``measured`` (sustained, from the catalog), ``derived`` (peak x the reference
    GPU's measured/peak ratio, Van Lanker Sec. 4.1), or ``peak`` (datasheet).
    """

    value: float
    kind: str
    note: str


@dataclass(frozen=True)
class Entry:
    value: object
    kind: str
    source: str


@dataclass(eq=False)  # a GPU is itself: hashable, for sets and dict keys
class GPU:
    """One runtime device. Numbers are looked up with ``value``, ``peak`` and ``measured``;
    a missing number is ``nan`` (never zero)."""

    id: str
    vendor: str
    name: str
    aliases: tuple
    architecture: str
    isa: str
    release_year: int | None
    memory_type: str | None
    values: dict = field(default_factory=dict)  # field -> Entry
    peaks: dict = field(default_factory=dict)
    measureds: dict = field(default_factory=dict)
    path: Path | None = None
    runtime_device: str | None = None
    notes: str | None = None

    def __repr__(self):
        return f"GPU({self.id!r}, {self.name!r})"

    def _repr_html_(self) -> str:
        """What a notebook shows: the throughputs, peak next to measured with their sources,
        then the other values (as `gpuproj gpus show` prints them)."""
        import html

        import pandas as pd

        from ..units import readable

        def src(e):
            return f"{e.kind}: {e.source}" if e is not None else ""

        rates = pd.DataFrame(
            [(k, *(readable(k, e.value) if e is not None else "" for e in (p, m)),
              src(p), src(m))
             for k in THROUGHPUT_FIELDS if k in self.peaks or k in self.measureds
             for p, m in [(self.peaks.get(k), self.measureds.get(k))]],
            columns=["throughput", "peak", "measured", "peak source", "measured source"])
        values = pd.DataFrame(
            [(k, ", ".join(readable(k, x) for x in (e.value if isinstance(e.value, list)
                                                    else [e.value])), src(e))
             for k, e in self.values.items()], columns=["field", "value", "source"])
        return (f"<p><b>{html.escape(self.name)}</b> ({html.escape(self.id)}, "
                f"{html.escape(self.vendor)} {html.escape(self.architecture)})</p>"
                + rates.to_html(index=False) + values.to_html(index=False))

    def value(self, name: str) -> float:
        """Property ``name`` (``VALUE_FIELDS``: ``sm_count``, ``l2_size_bytes``, ...); NaN
        where this GPU's file has none. A list (``LIST_FIELDS``) is in ``values[name]``. A
        name the schema lacks is a KeyError (``_field``)."""
        e = self.values.get(_field(name, VALUE_FIELDS, "value"))
        return float(e.value) if e is not None and not isinstance(e.value, list) else math.nan

    def peak(self, name: str) -> float:
        """Datasheet throughput ``name`` (``THROUGHPUT_FIELDS``); NaN where none is known. A
        name the schema lacks is a KeyError (``_field``)."""
        e = self.peaks.get(_field(name, THROUGHPUT_FIELDS, "throughput"))
        return float(e.value) if e is not None else math.nan

    def measured(self, name: str) -> float:
        """Measured (sustained) throughput ``name`` (``THROUGHPUT_FIELDS``); NaN where none
        was measured. A name the schema lacks is a KeyError (``_field``)."""
        e = self.measureds.get(_field(name, THROUGHPUT_FIELDS, "throughput"))
        return float(e.value) if e is not None else math.nan

    def ceiling(self, name: str, reference: "GPU | None" = None) -> Ceiling:
        """The best available sustained value of throughput ``name``.

        Measured where the catalog has it; else this GPU's peak scaled by ``reference``'s
        measured/peak ratio (Van Lanker et al., Sec. 4.1), at most 1, marked ``derived``; else
        the peak.
        Where both GPUs were measured, but by different benchmarks (the first word of the
        source: ``gpu-benches``, ``seed-report-4gpus``, ``gpuproj``), the peak instead: each
        benchmark moves its bytes its own way (the seed report a ``cudaMemcpy``, gpu-benches
        STREAM kernels, ours a triad over all SMs) and reaches its own share of the peak, so
        each GPU of the pair falls back alike, where both have a peak; where one has none, both
        keep their measurements, as a peak against a measurement would credit one GPU with an
        efficiency the other is denied (an A100's L2 at its 5120 B per clock against our
        H200's measured L2). A name the schema lacks is a KeyError, as in ``measured``.
        """
        m = self.measured(name)
        p = self.peak(name)
        ref = reference if reference is not self else None
        if not math.isnan(m):
            mine = self.measureds[name]
            other = ref.measureds.get(name) if ref is not None else None
            if (other is None or _suite(other) == _suite(mine) or math.isnan(p)
                    or math.isnan(ref.peak(name))):
                return Ceiling(m, "measured", f"{self.id} {name} measured ({mine.source})")
            return Ceiling(p, "peak", f"{self.id} {name} peak: measured by {_suite(mine)}, "
                                      f"{ref.id} by {_suite(other)}, not comparable")
        if ref is not None:
            rm, rp = ref.measured(name), ref.peak(name)
            if not (math.isnan(p) or math.isnan(rm) or math.isnan(rp)) and rp > 0:
                # at most the peak: the H100's compiled integer adds run at 1.95x the
                # Programming Guide's IADD3 rate (half issue on the FMA pipe), which a Pascal's
                # or a Kepler's adds cannot
                return Ceiling(p * min(rm / rp, 1.0), "derived",
                               CeilingNote(self.id, "derived", name, ref.id, rm / rp))
        if not math.isnan(p):
            return Ceiling(p, "peak", CeilingNote(self.id, "peak", name))
        return Ceiling(math.nan, "missing", CeilingNote(self.id, "missing", name))

    def to_dict(self) -> dict:
        """The file's content as plain data (for ``--json``)."""
        def sec(d):
            return {k: {"value": whole_number(k, e.value), "kind": e.kind, "source": e.source}
                    for k, e in d.items()}
        return {
            "schema_version": SCHEMA_VERSION, "id": self.id, "vendor": self.vendor,
            "name": self.name, "aliases": list(self.aliases), "architecture": self.architecture,
            "isa": self.isa, "release_year": self.release_year, "memory_type": self.memory_type,
            "runtime_device": self.runtime_device, "notes": self.notes,
            "values": sec(self.values), "peak": sec(self.peaks), "measured": sec(self.measureds),
        }


def whole_number(name: str, value):
    """A count or size of ``WHOLE_FIELDS`` as an int (132 SMs, not 132.0), as its file writes
    it; other values as they are."""
    if name in WHOLE_FIELDS and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _field(name: str, fields, what: str) -> str:
    """``name``, where it is one of the schema's ``fields``; else a KeyError listing them: a
    misspelt name (``dram_bw`` for ``dram_bw_bytes_per_s``) would read as a number this GPU's
    file lacks, NaN, and a model would go on without the ceiling instead of failing."""
    if name not in fields:
        other = ("" if what != "value" or name not in THROUGHPUT_FIELDS else
                 f" ({name!r} is a throughput: peak(), measured() or ceiling())")
        raise KeyError(f"{name!r} is not a catalog {what}{other}; the {what}s are "
                       f"{', '.join(sorted(fields))}")
    return name


def _suite(e: Entry) -> str:
    """The benchmark behind a measured value: the first word of its source."""
    return (e.source.split() or [""])[0]


def _entry(raw, path, section, name, is_list=False) -> Entry:
    where = f"{section}.{name}"
    if not isinstance(raw, dict) or "value" not in raw:
        raise InputError("must be a mapping {value, kind, source}", path=path, field=where)
    missing = [k for k in ("kind", "source") if not raw.get(k)]
    if missing:
        raise InputError(f"lacks {' and '.join(missing)}", path=path, field=where)
    for k in raw:  # a 'unit: GB' beside the value would otherwise be dropped without a word
        if k not in ("value", "kind", "source"):
            raise InputError("unknown field (an entry is {value, kind, source}; the unit is "
                             "in the field's name)", path=path, field=f"{where}.{k}")
    source = _as_text(raw["source"], path, f"{where}.source")
    if not isinstance(raw["kind"], str) or raw["kind"] not in SOURCE_KINDS:
        raise InputError(f"kind {raw['kind']!r} is not one of {sorted(SOURCE_KINDS)}",
                         path=path, field=where)
    # peak and measured values are never mixed: a measured one is a measurement (or the
    # user's own), and a measurement is no peak
    if (section == "measured" and raw["kind"] not in ("measurement", "user")
            or section == "peak" and raw["kind"] == "measurement"):
        want = ("kind 'measurement' or 'user'" if section == "measured"
                else "a datasheet, derived or other kind, not 'measurement' (that is measured:)")
        raise InputError(f"kind {raw['kind']!r} in {section}: needs {want}", path=path,
                         field=where)
    v = raw["value"]
    if is_list and not isinstance(v, list):
        raise InputError("value must be a list of numbers", path=path, field=where)
    vals = [_spelled_number(x) for x in (v if is_list else [v])]
    for x in vals:
        try:
            # -0.0 passes x < 0: a number written with a minus sign is refused alike
            bad = (isinstance(x, bool) or not isinstance(x, (int, float))
                   or not math.isfinite(x) or math.copysign(1, x) < 0)
        except OverflowError:  # an integer beyond any float
            bad = True
        if bad:
            raise InputError(f"value {x!r} is not a finite non-negative number", path=path,
                             field=where)
    if not is_list and vals[0] == 0 and name not in ZERO_ALLOWED:
        raise InputError("value 0: leave the field out where it is unknown", path=path,
                         field=where)
    for x in vals:
        if x != 0:  # a 0 was refused above where it may not be
            _check_plausible(x, name, path, where)
    if section == "values" and name in WHOLE_FIELDS:
        for x in vals:
            if x != int(x) or x > 2**53:
                raise InputError(f"value {x!r} is not a whole number", path=path, field=where)
    return Entry(vals if is_list else float(vals[0]), raw["kind"], source)


def _check_plausible(x, name, path, where):
    """Refuse a value of field ``name`` outside ``PLAUSIBLE``, naming the multiples of its unit
    that it would fit as. An error, not a warning: the ranges hold every device gpuproj models
    with room to spare, so a value outside was written in another unit (10 for 10 TB/s), and
    every projection from it would be off by that factor (a saxpy of 69.9 us became 23400333
    s), which a warning above the results would not stop."""
    lo, hi = PLAUSIBLE[name]
    if lo <= x <= hi:
        return
    unit, multiples = unit_of(name)
    fits = [m for m, f in multiples if lo <= x * f <= hi]
    hint = ("; it would fit as " + ", ".join(fits[:-1]) + (" or " if len(fits) > 1 else "")
            + f"{fits[-1]} (the field takes {unit})" if fits else "")
    raise InputError(f"value {x:g} is outside the plausible range {lo:g} to {hi:g}"
                     f"{' ' + unit if unit else ''}{hint}", path=path, field=where)


def _as_text(v, path, where) -> str:
    """``v`` as text: a YAML string, or a number written without quotes (``isa: 90``); a list,
    a mapping or a true/false (YAML 1.1 reads ``yes`` and ``on`` as one) is an error naming
    field ``where``."""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        found = ("true/false" if isinstance(v, bool) else "a list" if isinstance(v, list)
                 else "a mapping" if isinstance(v, dict) else type(v).__name__)
        raise InputError(f"expected text, found {found}", path=path, field=where)
    return str(v)


def _optional_text(data, key, path) -> str | None:
    return None if data.get(key) is None else _as_text(data[key], path, key)


def _release_year(data, path) -> int | None:
    """The year, a whole number where given: the catalog is sorted by it."""
    year = data.get("release_year")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        raise InputError(f"expected a year such as 2024, found {year!r}", path=path,
                         field="release_year")
    return year


def _spelled_number(x):
    """The number a string spells, else ``x``: YAML 1.1 (PyYAML) reads ``3e12``, without a
    decimal point, as the string '3e12'."""
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return x
    return x


def parse_gpu(data: dict, path=None) -> GPU:
    """Validate one GPU description (already parsed from YAML) and build a ``GPU``."""
    if not isinstance(data, dict):
        raise InputError("not a GPU description (expected a mapping)", path=path)
    ver = data.get("schema_version")
    if isinstance(ver, bool) or ver != SCHEMA_VERSION:  # true == 1 to Python
        raise InputError(f"schema_version {ver!r} is not supported (this gpuproj reads "
                         f"{SCHEMA_VERSION})", path=path, field="schema_version")
    for k in ("id", "vendor", "name", "architecture", "isa"):
        if not data.get(k):
            raise InputError("is required", path=path, field=k)
    known = set(IDENTITY_FIELDS) | {"schema_version", "values", "peak", "measured",
                                    "runtime_device", "notes"}
    for k in data:
        if k not in known:
            raise InputError("unknown field", path=path, field=k)
    for sec in ("values", "peak", "measured"):
        if not isinstance(data.get(sec) or {}, dict):
            raise InputError("expected a mapping of field to {value, kind, source}", path=path,
                             field=sec)
    if not isinstance(data.get("aliases") or [], list):
        raise InputError("expected a list of names", path=path, field="aliases")
    aliases = tuple(_as_text(a, path, f"aliases[{i}]")
                    for i, a in enumerate(data.get("aliases") or ()))
    for i, a in enumerate(aliases):
        if not normalize_name(a):  # it would answer to every name of vendor words alone
            raise InputError(f"{a!r} names no GPU once vendor and product-line words are "
                             "dropped", path=path, field=f"aliases[{i}]")
    required = {k: _as_text(data[k], path, k) for k in ("id", "vendor", "name", "architecture",
                                                          "isa")}
    values, peaks, measureds = {}, {}, {}
    for k, raw in (data.get("values") or {}).items():
        if k not in VALUE_FIELDS and k not in LIST_FIELDS:
            raise InputError("unknown field", path=path, field=f"values.{k}")
        values[k] = _entry(raw, path, "values", k, is_list=k in LIST_FIELDS)
    for sec, out in (("peak", peaks), ("measured", measureds)):
        for k, raw in (data.get(sec) or {}).items():
            if k not in THROUGHPUT_FIELDS:
                raise InputError("unknown field", path=path, field=f"{sec}.{k}")
            out[k] = _entry(raw, path, sec, k)
    return GPU(
        id=required["id"].lower(), vendor=required["vendor"], name=required["name"],
        aliases=aliases, architecture=required["architecture"], isa=required["isa"],
        release_year=_release_year(data, path),
        memory_type=_optional_text(data, "memory_type", path),
        values=values, peaks=peaks, measureds=measureds, path=Path(path) if path else None,
        runtime_device=_optional_text(data, "runtime_device", path),
        notes=_optional_text(data, "notes", path),
    )


def read_gpu_file(path) -> GPU:
    """The GPU that the YAML file ``path`` describes (the catalog's schema, docs/catalog.md;
    what ``gpuproj bench -o FILE`` writes), validated as the bundled GPUs are, without adding
    it to the catalog: wherever a GPU name is taken, the file's path is taken too
    (``resolve``). A file that cannot be read, is not UTF-8, or breaks the schema is an
    ``InputError`` naming it and, where it can, the field."""
    path = Path(path)
    return parse_gpu(parse_yaml(read_text(path, strict=True), path), path)


_DROP = {"nvidia", "amd", "ati", "intel", "geforce", "tesla", "quadro", "radeon", "instinct",
         "graphics", "gpu", "accelerator", "data", "center"}
# dropped words that name a product line: a query that has one matches by its other words only
# a GPU whose names have it too ("Quadro RTX 6000", the Turing card, is not the RTX 6000 Ada)
_LINES = {"geforce", "tesla", "quadro", "radeon", "instinct"}
# words that make another product of a name they are added to: 'RTX 2080' is not the RTX 2080 Ti;
# nor is 'Max 1550' one stack (tile) of it, a device of its own in Level Zero's FLAT mode
_VARIANT_WORDS = {"ti", "super", "xt", "xtx", "gre", "laptop", "mobile", "q", "d", "s", "x",
                  "black", "ultra", "stack", "tile"}


def normalize_name(name: str) -> str:
    """Lowercase, vendor and product-line words dropped, punctuation as spaces.

    >>> normalize_name("NVIDIA GeForce RTX 3060 Laptop GPU")
    'rtx 3060 laptop'
    >>> normalize_name("Tesla V100-PCIE-32GB")
    'v100 pcie 32gb'
    """
    s = re.sub(r"[^a-z0-9.+]+", " ", name.lower())
    # from the first digit of a number only: from each digit, a name of 50,000 took 25 s
    s = re.sub(r"(?<!\d)(\d+)\s+gb\b", r"\1gb", s)
    return " ".join(t for t in s.split() if t not in _DROP)


class Catalog:
    """All known GPUs, resolvable by id, name, alias or ISA."""

    def __init__(self, gpus, replaced=()):
        """``replaced``: bundled GPUs that a user file of the same id replaced; their names and
        aliases name the replacement, as what a profile prints for that GPU (a correction of
        its values keeps its names)."""
        self.gpus = {g.id: g for g in gpus}
        self._names = {}  # normalized name -> set of ids
        for g in [*self.gpus.values(), *replaced]:
            for n in (g.id, g.name, *g.aliases):
                for key in (normalize_name(n), normalize_name(n).replace(" ", "")):
                    self._names.setdefault(key, set()).add(g.id)
        # the leading words of every name: a short query ('h10O') is spelt close to 'h100',
        # and far from 'h100 sxm5 80gb', which the spelling distance would compare it with
        self._leads = {}
        for key, ids in self._names.items():
            words = key.split()
            for k in range(1, len(words) + 1):
                self._leads.setdefault(" ".join(words[:k]), set()).update(ids)
        for g in self.gpus.values():  # said at load, not at the first profile that names it
            if g.path is not None and g.path.parent != BUNDLED_DIR:
                for field_, n in [("name", g.name)] + [(f"aliases[{i}]", a)
                                                       for i, a in enumerate(g.aliases)]:
                    others = sorted(self._names[normalize_name(n)] - {g.id})
                    if others:
                        warnings.warn(InputWarning(
                            f"{g.path}, field '{field_}': {n!r} is also a name of "
                            f"{', '.join(others)}: it now names no one GPU"), stacklevel=2)

    def __iter__(self):
        return iter(sorted(self.gpus.values(), key=lambda g: (g.vendor, g.release_year or 0, g.id)))

    def __len__(self):
        return len(self.gpus)

    def __repr__(self):
        from collections import Counter

        vendors = Counter(g.vendor for g in self.gpus.values())
        per = ", ".join(f"{n} {v}" for v, n in sorted(vendors.items()))
        return f"<Catalog of {len(self)} GPUs ({per}); .resolve(name), iterate for the GPUs>"

    def __contains__(self, name):
        try:
            self.resolve(name)
            return True
        except UnknownGPUError:
            return False

    def resolve(self, name) -> GPU:
        """The GPU that ``name`` means: an id, a name or alias in any spelling runtimes print,
        or an ISA (``gfx90a``, ``sm_90``) where only one GPU has it.

        Ambiguous names raise ``UnknownGPUError`` listing the candidates; unknown names suggest
        close matches.
        """
        if isinstance(name, GPU):
            return name
        raw = str(name).strip()
        if not raw:
            raise UnknownGPUError("the GPU name is empty (see `gpuproj gpus list`)")
        if raw.lower() in self.gpus:
            return self.gpus[raw.lower()]
        if any(c in raw for c in "*?["):
            # normalising would drop the '*' and resolve 'h200*' as 'h200'
            raise UnknownGPUError(f"'{raw}' is a pattern where one GPU is named (`gpuproj gpus "
                                  f"list '{raw}'` lists the GPUs it matches)")
        key = normalize_name(raw)
        ids = self._names.get(key) or self._names.get(key.replace(" ", ""))
        if not ids:  # an ISA, also with the target features ROCm prints (gfx908:sramecc+)
            isa = raw.lower().split(":")[0]
            ids = {g.id for g in self.gpus.values() if g.isa.lower() == isa}
        if not ids and key:
            # every word of the query appears in a GPU's name or an alias, which adds no word
            # that names a variant of it
            words = set(key.split())
            lines = set(re.findall(r"[a-z]+", raw.lower())) & _LINES
            ids = {g.id for g in self.gpus.values()
                   for n in (g.id, g.name, *g.aliases)
                   if words <= (have := set(normalize_name(n).split()))
                   and not (have - words) & _VARIANT_WORDS
                   and lines <= set(re.findall(r"[a-z]+", " ".join((g.name, *g.aliases)).lower()))}
        if len(ids) == 1:
            return self.gpus[next(iter(ids))]
        if ids:
            cands = ", ".join(f"{i} ({self.gpus[i].name})" for i in sorted(ids))
            raise AmbiguousGPUError(f"GPU name '{raw}' is ambiguous: it matches {cands}")
        # an id cut short names the GPUs it begins ('mi300': mi300a, mi300x), which spelling
        # distance ranks below others ('mi100')
        # and a letter O typed for a zero ('a1OO') names the GPUs of the zero
        zeros = re.sub(r"(?<=\d)o+|o+(?=\d)", lambda m: "0" * len(m[0]), key)
        ids = sorted(i for i in self.gpus if i.startswith(raw.lower())) or sorted(
            self._leads.get(zeros) or
            {i for c in difflib.get_close_matches(key, list(self._leads), n=4, cutoff=0.6)
             for i in self._leads[c]})
        hint = "; did you mean " + ", ".join(ids[:6]) + "?" if ids else ""
        raise UnknownGPUError(f"unknown GPU '{raw}'{hint} (see `gpuproj gpus list`; add your own "
                              f"GPU as a YAML file in {USER_DIR})")


def _user_dirs() -> tuple[str, ...]:
    dirs = [Path(p) for p in os.environ.get("GPUPROJ_GPU_PATH", "").split(os.pathsep) if p]
    dirs.append(USER_DIR)
    return tuple(str(d.resolve()) for d in dirs)


@lru_cache(maxsize=8)
def _load(extra: tuple, user_dirs: tuple) -> Catalog:
    # user_dirs is part of the cache key: a notebook that changes $GPUPROJ_GPU_PATH (or the
    # working directory, for a relative entry) gets the GPUs of the new path
    gpus, users = {}, {}  # users: id -> the user file that gave it
    replaced = []  # bundled GPUs a user file replaced
    for d in [BUNDLED_DIR, *map(Path, user_dirs)]:
        if not d.is_dir():
            if str(d) != str(USER_DIR.resolve()):  # the default folder need not exist
                what = "a file" if d.exists() else "not there"
                warnings.warn(InputWarning(
                    f"$GPUPROJ_GPU_PATH names {d}, which is {what}: it is searched for GPU "
                    "files only as a folder"), stacklevel=3)
            continue
        for p in sorted([*d.glob("*.yaml"), *d.glob("*.yml")]):
            g = read_gpu_file(p)
            if d != BUNDLED_DIR:  # a user file replaces a bundled GPU, not another's
                if g.id in users and users[g.id] != p.resolve():
                    raise InputError(f"GPU id '{g.id}' is also given by {users[g.id]}: "
                                     "keep one of the two files", path=p, field="id")
                users[g.id] = p.resolve()
                _replace_bundled(gpus, g, replaced)
            gpus[g.id] = g
    for p in extra:
        g = read_gpu_file(p)
        if g.id in users and users[g.id] != Path(p).resolve():
            raise InputError(f"GPU id '{g.id}' is also given by {users[g.id]}: keep one of the "
                             "two files", path=p, field="id")
        users[g.id] = Path(p).resolve()
        _replace_bundled(gpus, g, replaced)
        gpus[g.id] = g
    return Catalog(gpus.values(), replaced)


def _replace_bundled(gpus, g, replaced):
    """Say that user GPU ``g`` replaces the bundled GPU of its id, if there is one, and note it
    in ``replaced``. Said once per process: ``_load`` is cached, and resolving reads its
    result. A file of the bundled GPU's name corrects its values (``gpuproj bench --gpu ID``
    writes one), and is not warned of: every command would repeat it. One of another name
    may give another GPU a bundled id by mistake, which would take that GPU's profiles."""
    old = gpus.get(g.id)
    if old is None or old.path is None or old.path.parent != BUNDLED_DIR:
        return
    replaced.append(old)
    if normalize_name(g.name) == normalize_name(old.name):
        return
    warnings.warn(InputWarning(
        f"{g.path}, field 'id': '{g.id}' is the id of the bundled {old.name}: this file "
        f"replaces it, and the bundled GPU's names now name this file's (give the file "
        f"another id if it describes another GPU)"), stacklevel=4)


def bundled_catalog() -> Catalog:
    """The GPU files shipped with gpuproj only, for documents and checks that a user's own GPU
    files must not change."""
    return Catalog(read_gpu_file(p) for p in sorted(BUNDLED_DIR.glob("*.yaml")))


def load_catalog(extra=()) -> Catalog:
    """The bundled GPUs plus the user's (see module docstring) plus ``extra`` files."""
    return _load(tuple(str(p) for p in extra), _user_dirs())


def resolve(name) -> GPU:
    """``load_catalog().resolve(name)``, or a GPU file if ``name`` is a path to one. An
    unknown name that looks like a path says what is wrong with the file."""
    if isinstance(name, GPU):
        return name
    if is_yaml(name) and _is(Path.is_file, name):
        return read_gpu_file(name)
    try:  # the catalog first: a user's GPU may have a / in its name
        return load_catalog().resolve(name)
    except AmbiguousGPUError:
        raise
    except UnknownGPUError as e:
        if not names_a_file(name):
            raise
        why = "not a GPU file (.yaml or .yml)" if _is(Path.exists, name) else "no such file"
        # still an UnknownGPUError: a profile's GPU column names GPUs by paths too, and a
        # renderer string ('GeForce RTX 3080/PCIe/SSE2') keeps the catalog's suggestions
        raise UnknownGPUError(f"{name}: {why}" + ("" if is_yaml(name) else f"; {e}")) from None


def names_a_file(name) -> bool:
    """Whether ``name``, which the catalog does not know, means a file: a GPU file's name, one
    that exists, or one written as a path (./gpus/x). A name with a / inside ('AMD Instinct
    MI250X / MI250', a renderer's 'RTX 3080/PCIe') is no file."""
    text = str(name)
    if not text.strip():  # Path('') is the working folder, which exists
        return False
    return is_yaml(text) or _is(Path.exists, text) or text.startswith(("/", "./", "../", "~"))


def _is(test, name) -> bool:
    """``test`` (``Path.exists``, ``Path.is_file``) of ``name``, False where ``name`` is too
    long for a file name (ENAMETOOLONG): a profile's GPU column may hold any text."""
    try:
        return test(Path(name))
    except OSError:
        return False


def is_yaml(name) -> bool:
    """Whether ``name`` is a GPU file's: the catalog reads .yaml and .yml files only."""
    return str(name).endswith((".yaml", ".yml"))


def select(names) -> list[GPU]:
    """The GPUs that ``names`` (one or a list) mean, each once, in the order given: a name or
    GPU file as ``resolve`` reads it, ``all`` for every GPU of the catalog, or shell-style
    wildcards on ids (``h100*``, ``mi3*``, ``*-80gb``), which match in catalog order.

    >>> [g.id for g in select(["mi3*", "H200", "mi300x"])]
    ['mi300a', 'mi300x', 'mi325x', 'mi350x', 'mi355x', 'h200-sxm-141gb']
    """
    # a set has no order of its own: sorted, so that results come in the same order each run
    names = ([names] if isinstance(names, (str, GPU)) else
             sorted(names, key=str) if isinstance(names, (set, frozenset)) else list(names))
    out: dict[str, GPU] = {}
    for n in names:
        raw = n if isinstance(n, GPU) else str(n).strip()
        if isinstance(raw, str) and (raw.lower() == "all" or any(c in raw for c in "*?[")):
            cat = load_catalog()
            gs = list(cat) if raw.lower() == "all" else [
                g for g in cat if fnmatch.fnmatchcase(g.id, raw.lower())]
            if not gs:
                raise UnknownGPUError(f"no GPU id matches '{raw}' (see `gpuproj gpus list`)")
        else:
            gs = [resolve(raw)]
        out.update((g.id, g) for g in gs if g.id not in out)
    return list(out.values())
