"""A profile's times from a trace of the same application: ``load(PROFILE, trace=TRACE)``,
``--trace`` on the command line.

Profilers that count change the times they record: Nsight Compute replays each kernel once
per pass, flushes the caches between passes and, by default, locks the clocks; rocprof's
counter collection serialises the dispatches it counts. Their durations are those of a kernel
run alone. A trace (an Nsight Systems timeline, a PyTorch profiler trace, a rocprofv3 kernel
trace, a ``kernel,time_s`` table of one's own timings) has the times the application really
saw, for every launch, not only the profiled ones. The trace must name its GPU as the profile
does: such a table needs a ``gpu`` column, or ``--source NAME`` (``gpu=NAME`` in ``load()``),
which names the GPU of the profile and of the trace alike; the profile's GPU is not taken for
it.
``times_from_trace`` keeps the profile's counts and takes ``time_s``, ``time_s_min`` /
``time_s_max`` and ``launches`` from the trace; where the trace has no launch count (a table
without a ``launches`` column), the profile's stays. (nvprof's metrics carry no durations at all:
its reader takes its own ``--print-gpu-trace`` as ``trace`` and joins it itself.)

Kernel names are matched at the first of four levels that finds one kernel of the trace:
the whole name, the name without its namespaces and classes (ncu prints
``unnamed>::saxpyKernel(float, ...)`` for nsys's ``demo::<unnamed>::saxpyKernel(float,
...)``), that name as either demangler writes it (NVIDIA's tools print PyTorch's
``elementwise_kernel<(int)128, ...>(int, T3)`` where its own profiler prints
``elementwise_kernel<128, ...>(int, <the arguments>)``; ``name_keys``), then the bare function
name (a table that names kernels without their parameters).
Spaces and a leading ``void`` are ignored. Launch configurations must be equal where the trace
has them (``grid=... block=...``); a trace without them (a ``cuda_gpu_kern_sum`` of recent nsys,
a plain table) gives its time to a kernel only where the profile has that kernel in one
configuration. What cannot be matched is skipped and counted, on both sides; a trace that
matches none of the profile's kernels is an error naming the trace.
"""

from __future__ import annotations

import re

import pandas as pd

from ..errors import InputError
from ..kernel_names import closing_start, split_arguments
from .table import ProfileTable, Skipped

_LAUNCH_CONFIG = re.compile(r"grid=[\dx]+ block=[\dx]+")  # ncu and nsys: 4096x1x1; rocprof: 4096
_TAKEN = ("time_s", "time_s_min", "time_s_max", "launches")


def name_keys(name) -> tuple[str, str, str, str]:
    """(whole, unqualified, neutral, bare) keys of a kernel name, spaces removed. The neutral
    key is the unqualified name without its argument list, as NVIDIA's tools and the C++ ABI
    demangler (PyTorch's profiler, rocprof) both print it: their ``(int)4`` and ``4``,
    ``(unsigned long)3`` and ``3ul``, ``[lambda(int) (instance 1)]`` and ``{lambda(int)#1}``,
    ``<unnamed>`` and ``(anonymous namespace)`` written one way, the ``void`` of a nested
    function's type dropped, and what parentheses hold emptied (NVIDIA's tools print a
    template's parameters there, ``const T1 &``, the C++ ABI its arguments).

    >>> name_keys("void ns::<unnamed>::saxpy<float>(float, const float *)")[:2]
    ('ns::<unnamed>::saxpy<float>(float,constfloat*)', 'saxpy<float>(float,constfloat*)')
    >>> nvidia = "void ns::k<(int)4, void f<(bool)1>(T1)::[lambda(int) (instance 1)]>(int, T2)"
    >>> abi = "void ns::k<4, f<true>(int)::{lambda(int)#1}>(int, g<4ul>)"
    >>> name_keys(nvidia)[2], name_keys(abi)[2]
    ('k<4,f<true>()::{lambda()#1}>', 'k<4,f<true>()::{lambda()#1}>')
    """
    s = re.sub(r"\s+", "", re.sub(r"^\s*void\s+", "", str(name)))
    head, params = split_arguments(s)
    base, targs = head, ""
    if head.endswith(">") and (i := closing_start(head, ">", "<")) > 0:
        base, targs = head[:i], head[i:]
    # the last identifier, looked for in the last run of word characters and the ~ that may
    # precede it: a search of the whole name tried each earlier run to its end, 17 s for a
    # crafted name of 50,000 letters and a '!'
    start = len(base) - len(re.match(r"\w*", base[::-1]).group(0))
    bare = re.search(r"[A-Za-z_~]\w*$", base[max(start - 1, 0):])
    bare = bare.group(0) if bare else base
    return s, bare + targs + params, _neutral(bare + targs), bare


# the C++ ABI's spelling of what NVIDIA's demangler writes otherwise (spaces already removed)
_NEUTRAL = [
    (re.compile(r"\(anonymousnamespace\)"), "<unnamed>"),
    (re.compile(r"\[lambda(\([^()]*\))\(instance(\d+)\)\]"), r"{lambda\1#\2}"),
    (re.compile(r"\(bool\)1(?!\d)"), "true"),
    (re.compile(r"\(bool\)0(?!\d)"), "false"),
    (re.compile(r"\((?:unsigned|signed)?(?:char|short|int|long|longlong)\)(?=-?\d)"), ""),
    (re.compile(r"(?<![\w.])(-?\d+)(?:ull|ul|ll|u|l)(?!\w)", re.IGNORECASE), r"\1"),
    (re.compile(r"(?<=[<,])void(?=[A-Za-z_])"), ""),  # 'void ns::f<' with its space removed
]
_GROUP = re.compile(r"\([^()]*\)")


def _neutral(s: str) -> str:
    for pattern, spelling in _NEUTRAL:
        s = pattern.sub(spelling, s)
    while (emptied := _GROUP.sub("\x00", s)) != s:  # innermost groups first
        s = emptied
    return s.replace("\x00", "()")


def times_from_trace(table: ProfileTable, trace, gpu=None) -> ProfileTable:
    """``table`` (one row per kernel, config and GPU) with the times and launch counts of the
    same kernels in ``trace``; the rows of both files left out are added to its ``skipped``.
    ``gpu`` names the trace's GPU as it does the profile's (where the trace names none, or one
    the catalog does not know); a trace that names no GPU (a ``kernel,time_s`` table without a
    ``gpu`` column) needs it. ``sm_clock_hz`` is
    dropped: it is the clock of the profiler's run, not of the trace's."""
    from . import load, sniff

    df, path = table.df.reset_index(drop=True), table.origin
    if df.duplicated(["kernel", "config", "gpu"]).any():
        raise InputError("a trace gives each kernel's mean time over its launches: one row per "
                         "launch (per_launch) takes none", path=path)
    tt = load(trace, sniff(trace, trace=True), gpu=gpu)
    tdf = tt.df.reset_index(drop=True)
    skipped = list(tt.skipped)
    if gpu is None and not set(df["gpu"]) & set(tdf["gpu"]):
        raise InputError(f"the trace ran on {', '.join(sorted(set(tdf['gpu'])))}, the profile "
                         f"on {', '.join(sorted(set(df['gpu'])))}: give a trace of the same "
                         "application on the same GPU", path=trace)
    # (gpu, key) -> the trace's rows, per level of name_keys: a lookup per profile row
    index: list[dict] = [{}, {}, {}, {}]
    for t, (g, kernel) in enumerate(zip(tdf["gpu"], tdf["kernel"])):
        for level, key in enumerate(name_keys(kernel)):
            index[level].setdefault((g, key), []).append(t)
    tkernel, tconfig = tdf["kernel"].tolist(), tdf["config"].tolist()
    has_launch = [bool(_LAUNCH_CONFIG.fullmatch(str(c))) for c in tconfig]
    configs_per_kernel = df.groupby(["gpu", "kernel"])["config"].transform("nunique").tolist()
    traced_gpus = set(tdf["gpu"])
    out = df.copy()
    for c in ("time_s_min", "time_s_max"):
        out[c] = float("nan")
    out["sm_clock_hz"] = float("nan")
    used: dict[int, list[int]] = {}
    why: dict[int, str] = {}
    for i, (kernel, config, g) in enumerate(zip(df["kernel"], df["config"], df["gpu"])):
        if g not in traced_gpus:  # a profile of several GPUs, a trace of one
            why[i] = f"the trace has no launch on {g}"
            continue
        own = name_keys(kernel)
        found = next((index[level][(g, own[level])] for level in range(len(index))
                      if (g, own[level]) in index[level]), [])
        if not found:
            why[i] = f"no kernel of this name in the trace {trace}"
            continue
        names = sorted({tkernel[t] for t in found})
        if len(names) > 1:
            why[i] = (f"{len(names)} kernels of the trace have this name ({names[0]}, "
                      f"{names[1]}): rename one, or trace them apart")
            continue
        with_config = [t for t in found if has_launch[t]]
        if with_config:
            found = [t for t in with_config if tconfig[t] == config]
            if not found:
                why[i] = f"the trace has no launch of this kernel with {config}"
                continue
        elif configs_per_kernel[i] > 1:
            why[i] = (f"the trace names no launch configuration, and the profile has this "
                      f"kernel in {configs_per_kernel[i]}")
            continue
        used.setdefault(found[0], []).append(i)
    pairs = []  # (profile row, trace row) of each kernel matched one to one
    for t, rows in used.items():
        if len(rows) > 1:  # two kernels of the profile found one of the trace (bare names)
            for i in rows:
                why[i] = f"the trace's {tdf.at[t, 'kernel']} matches {len(rows)} profile kernels"
            continue
        pairs.append((rows[0], t))
    for c in _TAKEN:  # a table of one's own timings may have no min, max or launches
        if c in tdf.columns:
            # a column at a time: a value at a time took 2 s for 3,000 kernels
            take = [(i, t) for i, t in pairs if not (c == "launches" and tt.launches_assumed[t])]
            if take:
                at, ts = zip(*take)
                out.loc[list(at), c] = tdf[c].to_numpy()[list(ts)]
    kept = [i for i in df.index if i not in why]
    if not kept and len(df):  # the trace's fault or the pairing's, not the profile's
        first = df.index[0]
        raise InputError(f"none of the {len(df)} kernel rows of the profile {path} is in this "
                         f"trace (the first, {df.at[first, 'kernel']} "
                         f"[{df.at[first, 'config']}]: {why[first]})", path=trace)
    file_rows = df["_row"] if "_row" in df.columns else pd.Series(None, index=df.index)
    skipped += [Skipped(str(path), _row(file_rows[i]), f"{df.at[i, 'kernel']} "
                        f"[{df.at[i, 'config']}]: {why[i]}") for i in df.index if i in why]
    matched = {t for t, rows in used.items() if len(rows) == 1}
    skipped += [Skipped(str(trace), _row(tdf.at[t, "_row"]) if "_row" in tdf else None,
                        "kernel of the trace not in the profile")
                for t in tdf.index if t not in matched]
    return ProfileTable(out.loc[kept].reset_index(drop=True), table.skipped + skipped, path)


def _row(value):
    return None if value is None or pd.isna(value) else int(value)
