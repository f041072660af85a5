"""SI units and the converters from the units that profilers and spreadsheets print; the
helpers that write values (and lists of names) for people to read.

All quantities inside gpuproj are SI and decimal: seconds, bytes, bytes per second, operations
per second. Names carry the unit (``time_s``, ``dram_bw_bytes_per_s``).
"""

import math

from .errors import InputError

_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
# as Nsight Compute (nsecond), Nsight Systems (nsec) and people (ns) print them
_TIME = {"nsecond": 1e-9, "nsec": 1e-9, "ns": 1e-9, "usecond": 1e-6, "usec": 1e-6, "us": 1e-6,
         "msecond": 1e-3, "msec": 1e-3, "ms": 1e-3, "second": 1.0, "sec": 1.0, "s": 1.0}
TIME_UNITS = frozenset(_TIME)
_NOUNIT = {"", "%", "inst", "warp", "thread", "block", "sector", "request", "byte/cycle",
           "cycle", "register/thread", "byte/request", "sector/request",
           # Nsight Compute counter units (launch statistics, shared-memory wavefronts)
           "register", "wavefront", "request/cycle", "SM"}


def _bytes_factor(unit):
    for suffix in ("byte", "B"):
        if unit.endswith(suffix):
            prefix = unit[: -len(suffix)]
            if prefix in _BINARY:
                return _BINARY[prefix]
            if prefix in _PREFIX:
                return _PREFIX[prefix]
    return None


def unit_factor(unit: str) -> float:
    """Factor that turns a value printed in ``unit`` into SI (bytes, seconds, per second).

    Counts and percentages have factor 1. An unknown unit raises ``InputError`` rather than
    being passed through, because a silent factor of 1000 is the worst error a profile reader
    can make.

    >>> unit_factor("Kbyte"), unit_factor("usecond"), unit_factor("Gbyte/second")
    (1000.0, 1e-06, 1000000000.0)
    >>> unit_factor("Mbyte/second"), unit_factor("KiB")
    (1000000.0, 1024.0)
    """
    u = (unit or "").strip()
    if u in _NOUNIT or u.startswith("(") or u == "nan":
        return 1.0
    if u in _TIME:
        return _TIME[u]
    if "/" in u:
        num, den = u.split("/", 1)
        f = _bytes_factor(num)
        if f is None and num in ("cycle", "inst", "warp", "op"):
            f = 1.0
        if f is None:
            raise InputError(f"unknown unit '{unit}'")
        if den in ("second", "s", "sec"):
            return f
        if den in _TIME:
            return f / _TIME[den]
        if den in ("cycle",):
            return f
        if den in ("block", "thread", "warp", "request", "sm"):
            return f  # per-launch-unit sizes, e.g. ncu's "Kbyte/block"
        raise InputError(f"unknown unit '{unit}'")
    f = _bytes_factor(u)
    if f is not None:
        return f
    for p, v in _PREFIX.items():
        if p and u.startswith(p) and u[len(p):] in ("inst", "op", "FLOP", "flop", "hz", "Hz",
                                                    "cycle", "sector"):
            return v
    if u in ("hz", "Hz", "FLOP", "flop", "op"):
        return 1.0
    raise InputError(f"unknown unit '{unit}'")


def first_of(items, n: int, sep: str = ", ") -> str:
    """The first ``n`` of ``items`` joined by ``sep``, and how many more there are: a message
    naming what a long list holds stays one readable line.

    >>> first_of(["a", "b", "c"], 2), first_of(["a", "b"], 2), first_of([], 2)
    ('a, b and 1 more', 'a, b', '')
    """
    items = [str(x) for x in items]
    more = f" and {len(items) - n} more" if len(items) > n else ""
    return sep.join(items[:n]) + more


_DECIMAL = (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3))
_SMALL = (("", 1.0), ("m", 1e-3), ("u", 1e-6), ("n", 1e-9))


def with_prefix(value: float, unit: str, small: bool = False) -> str:
    """``value`` with the decimal prefix that leaves 1 to 999 of ``unit``, 3 significant digits;
    ``small``: also m, u and n below 1 (a value under 1 n is left without a prefix). '-' for no
    value (None or NaN).

    >>> with_prefix(1.95e13, "FLOP/s"), with_prefix(512.0, "B"), with_prefix(None, "B")
    ('19.5 TFLOP/s', '512 B', '-')
    >>> with_prefix(2.5e-5, "s"), with_prefix(2.5e-5, "s", small=True)
    ('2.5e-05 s', '25 us')
    """
    if value is None or value != value:
        return "-"
    prefixes = _DECIMAL + _SMALL if small else _DECIMAL
    prefix, f = next(((p, f) for p, f in prefixes if abs(value) >= f), ("", 1.0))
    return f"{value / f:.3g} {prefix}{unit}"


def fmt_error(predicted, measured) -> str:
    """A prediction's signed error against the measurement, in whole percent; '-' where
    nothing was measured (NaN). Rounded before the sign is chosen: a prediction a hair below
    the measurement is "+0 %", not "-0 %".

    >>> fmt_error(1.26, 1.0), fmt_error(0.999999, 1.0), fmt_error(1.0, float("nan"))
    ('+26 %', '+0 %', '-')
    """
    if measured != measured:
        return "-"
    return f"{round(100 * (predicted / measured - 1)):+d} %"


def fmt_time(t) -> str:
    """Seconds with a readable prefix; '-' for no time (None or NaN).

    >>> fmt_time(2.5e-5), fmt_time(1.234e-3), fmt_time(None)
    ('25 us', '1.23 ms', '-')
    """
    if t is None or t != t:
        return "-"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(t) >= f:
            return f"{t / f:.3g} {unit}" if t / f < 100 else f"{t / f:.0f} {unit}"
    return f"{t / 1e-9:.3g} ns"


_RATES = (("_bytes_per_s", "B/s"), ("_flops_per_s", "FLOP/s"), ("_ops_per_s", "OP/s"),
          ("_inst_per_s", "inst/s"), ("_hz", "Hz"))


def readable(field: str, value: float) -> str:
    """A catalog value as people read it, in the unit its field name gives: rates and clocks
    with a decimal prefix (as datasheets give them), sizes in bytes with a binary one (as the
    catalog reads memory sizes), times in ns, us or ms, anything else as a plain number.

    >>> readable("memory_size_bytes", 141 * 2**30), readable("l2_size_bytes", 50 * 2**20)
    ('141 GiB', '50 MiB')
    >>> readable("l1_shared_size_bytes_per_sm", 262144), readable("sm_count", None)
    ('256 KiB', '-')
    >>> readable("dram_bw_bytes_per_s", 4.8e12), readable("fp32_fma_flops_per_s", 6.513e13)
    ('4.8 TB/s', '65.1 TFLOP/s')
    >>> readable("boost_clock_hz", 1.98272e9), readable("dram_latency_s", 3.44e-7)
    ('1.98 GHz', '344 ns')
    >>> readable("ldst_inst_per_s", 8.29e12), readable("sm_count", 132)
    ('8.29 Tinst/s', '132')
    """
    if value is None or not math.isfinite(value):
        return "-"
    v = float(value)
    for suffix, unit in _RATES:
        if field.endswith(suffix):
            return with_prefix(v, unit)
    if field.endswith("_bytes") or "_bytes_per_" in field:  # a size (per SM, per block)
        prefix, f = next(((p, f) for p, f in (("Gi", 2.0**30), ("Mi", 2.0**20), ("Ki", 2.0**10))
                          if abs(v) >= f), ("", 1.0))
        return f"{v / f:.3g} {prefix}B"
    if field.endswith("_s"):
        return fmt_time(v)
    return f"{v:g}"

