"""From a benchmark result to a catalog file: the ``measured`` section, checks against the
datasheet peak, and a complete GPU file for devices the catalog does not know.

Which benchmark gives which ``THROUGHPUT_FIELDS`` key (``FIELD_MAP``):

==========================  ==========================================================
field                       benchmark (value)
==========================  ==========================================================
fp32_fma_flops_per_s        fp32_fma (2 FLOP per FMA)
fp32_addmul_flops_per_s     the lower of fp32_add and fp32_mul (1 FLOP per instruction)
fp64_fma_flops_per_s        fp64_fma
fp64_addmul_flops_per_s     the lower of fp64_add and fp64_mul
fp16_fma_flops_per_s        fp16x2_fma (4 FLOP per paired FMA)
int32_fma_ops_per_s         int32_mad (2 ops per multiply-add)
int32_add_ops_per_s         int32_add
sfu_ops_per_s               sfu_rsqrt (results per second)
ldst_inst_per_s             smem_read (thread-level shared loads per second, T_ldst)
shared_bw_bytes_per_s       smem_read x 4 bytes per load
dram_bw_bytes_per_s         stream_triad
dram_read_bw_bytes_per_s    stream_read
dram_write_bw_bytes_per_s   stream_init
l2_bw_bytes_per_s           l2_read
l1_bw_bytes_per_s           l1_read
launch_overhead_s           launch
dram_latency_s              latency_dram (pointer chase through >= 4 x the L2)
==========================  ==========================================================
"""

from __future__ import annotations

import difflib
import math
import re
from pathlib import Path

from ..catalog.schema import SCHEMA_VERSION, THROUGHPUT_FIELDS
from ..errors import InputError
from ..files import parse_json, parse_yaml, read_text
from .checks import MIX_FMA_BENCH, mixbench_checks

# field -> (benchmarks, how: "value" | "min" | "rate:<count>")
FIELD_MAP = {
    "fp32_fma_flops_per_s": (("fp32_fma",), "value"),
    "fp32_addmul_flops_per_s": (("fp32_add", "fp32_mul"), "min"),
    "fp64_fma_flops_per_s": (("fp64_fma",), "value"),
    "fp64_addmul_flops_per_s": (("fp64_add", "fp64_mul"), "min"),
    "fp16_fma_flops_per_s": (("fp16x2_fma",), "value"),
    "int32_fma_ops_per_s": (("int32_mad",), "value"),
    "int32_add_ops_per_s": (("int32_add",), "value"),
    "sfu_ops_per_s": (("sfu_rsqrt",), "value"),
    "ldst_inst_per_s": (("smem_read",), "value"),
    "shared_bw_bytes_per_s": (("smem_read",), "rate:bytes"),
    "dram_bw_bytes_per_s": (("stream_triad",), "value"),
    "dram_read_bw_bytes_per_s": (("stream_read",), "value"),
    "dram_write_bw_bytes_per_s": (("stream_init",), "value"),
    "l2_bw_bytes_per_s": (("l2_read",), "value"),
    "l1_bw_bytes_per_s": (("l1_read",), "value"),
    "launch_overhead_s": (("launch",), "value"),
    "dram_latency_s": (("latency_dram",), "value"),
}
TIME_FIELDS = {"launch_overhead_s", "dram_latency_s"}  # lower is better: no "above peak" check
assert set(FIELD_MAP) <= set(THROUGHPUT_FIELDS)


# What the catalog file, the table and the pictures read from a result, by dotted path, with
# the JSON kinds it may hold (``KINDS``): a result edited by hand or written by another version
# stops here in one line naming the field rather than deep inside the catalog writer. "null"
# where a runtime may not say.
RESULT_FIELDS = {
    "date": "text", "elapsed_s": "number", "sizes.name": "text", "sizes.spread_limit": "number",
    "device.name": "text", "device.vendor": "text", "device.backend": "text",
    "device.device_type": "text", "device.architecture": "text or null",
    "device.isa": "text or null", "device.compute_units": "positive whole number",
    "device.warp_size": "positive whole number or null",
    "device.max_block_size": "positive whole number",
    "device.local_mem_bytes": "non-negative whole number",
    "device.global_mem_bytes": "positive whole number",
    "device.l2_bytes": "non-negative whole number or null",
    "device.clock_hz": "positive number or null",
    "measurements": "list",
}
MEASUREMENT_FIELDS = {"name": "text", "group": "text", "unit": "text",
                      "value": "positive number", "work": "positive number", "rates": "object",
                      "params": "object",
                      "summary.n": "positive whole number",
                      "summary.spread": "non-negative number", "summary.min": "positive number"}
SWEEP_FIELDS = {
    "mixbench": {"precision": "text", "k": "whole number", "flop_per_byte": "positive number",
                 "flops_per_s": "positive number", "bytes_per_s": "positive number"},
    "working_set": {"working_set_bytes": "positive whole number",
                    "bytes_per_s": "positive number"},
}
# ``ok`` must be JSON's true or false: ``failed_checks`` takes false alone for a failure, so a
# "no" or a 0 passed, and the values of kernels that computed the wrong thing went into the
# catalog file
CHECK_FIELDS = {"name": "text", "ok": "true/false"}
# benchmark -> the count whose rate a catalog field reads (``FIELD_MAP``'s "rate:<count>")
RATE_FIELDS = {names[0]: how.split(":", 1)[1] for names, how in FIELD_MAP.values()
               if how.startswith("rate:")}
KINDS = {"text": str, "number": (int, float), "whole number": int, "list": list,
         "object": dict, "null": type(None), "true/false": bool}
# A kind's bound: a rate, a time, a size or a count (what the catalog file would refuse, a
# divisor, a point on a log axis); NaN fails both
BOUNDS = {"positive": lambda v: v > 0, "non-negative": lambda v: v >= 0}
# the sweeps that --plots draws: sweep -> (its picture, the group of the suite that measures
# it); the third picture, quadrant.png, needs no sweep
PLOTTED_SWEEPS = {"mixbench": ("roofline.png", "mixbench"),
                  "working_set": ("working_set.png", "cache")}


def read_result(path) -> dict:
    """A raw result written by ``gpuproj bench`` (``suite.run_suite``), checked for every field
    that ``gpu_file``, ``check`` and the pictures read; ``InputError`` naming the first one that
    is missing or of the wrong type."""
    raw = parse_json(read_text(path, strict=True), path)
    if not isinstance(raw, dict) or raw.get("format") != "gpuproj-bench":
        raise InputError("not a gpuproj bench result (format != gpuproj-bench)", path=path,
                         field="format")
    from .suite import FORMAT_VERSION

    if raw.get("format_version") != FORMAT_VERSION:
        raise InputError(f"format_version {raw.get('format_version')!r}: this gpuproj reads "
                         f"{FORMAT_VERSION}", path=path, field="format_version")
    _check_fields(raw, RESULT_FIELDS, "", path)
    _check_measurements(raw["measurements"], path)
    sweeps = raw.get("sweeps") or {}
    for key, kind, word in (("sweeps", dict, "object"), ("checks", list, "list")):
        value = raw.get(key) or kind()
        if not isinstance(value, kind):
            raise InputError(f"expected {word}, found {json_type(value)}", path=path, field=key)
    for i, c in enumerate(raw.get("checks") or []):
        _check_fields(c, CHECK_FIELDS, f"checks[{i}].", path)
    for sweep, spec in SWEEP_FIELDS.items():
        points = sweeps.get(sweep) or []
        if not isinstance(points, list):
            raise InputError(f"expected list, found {json_type(points)}", path=path,
                             field=f"sweeps.{sweep}")
        for i, q in enumerate(points):
            _check_fields(q, spec, f"sweeps.{sweep}[{i}].", path)
    for i, q in enumerate(sweeps.get("mixbench") or []):
        if q["precision"] not in MIX_FMA_BENCH:
            raise InputError(f"unknown precision '{q['precision']}' (known: "
                             f"{', '.join(MIX_FMA_BENCH)})", path=path,
                             field=f"sweeps.mixbench[{i}].precision")
    return raw


def _check_measurements(ms, path):
    """Each measurement's fields and rates; a benchmark of the suite, in the group and the unit
    the suite gives it (``suite.BENCHMARKS``: an unknown one would be left out of the catalog
    file without a word, a value in GFLOP/s written as FLOP/s); each benchmark once (a second
    would replace the first without a word); at least one (none would write the catalog GPU's
    file unchanged)."""
    from .suite import BENCHMARKS

    if not ms:
        raise InputError("no measurements: the result holds nothing to write", path=path,
                         field="measurements")
    first = {}
    for i, m in enumerate(ms):
        _check_fields(m, MEASUREMENT_FIELDS, f"measurements[{i}].", path)
        if m["name"] not in BENCHMARKS:
            close = difflib.get_close_matches(m["name"], BENCHMARKS, n=1)
            raise InputError(f"unknown benchmark '{m['name']}' ("
                             + (f"did you mean {close[0]}?" if close else
                                f"gpuproj bench measures {', '.join(BENCHMARKS)}") + ")",
                             path=path, field=f"measurements[{i}].name")
        for key, want in zip(("group", "unit"), BENCHMARKS[m["name"]]):
            if m[key] != want:
                why = (": a value is in the unit its catalog field's name ends in, never "
                       "converted" if key == "unit" else "")
                raise InputError(f"expected '{want}' ({m['name']}'s {key}{why}), found "
                                 f"'{m[key]}'", path=path, field=f"measurements[{i}].{key}")
        rates = {**dict.fromkeys(m["rates"], "positive number"),
                 **({RATE_FIELDS[m["name"]]: "positive number"} if m["name"] in RATE_FIELDS
                    else {})}
        _check_fields(m["rates"], rates, f"measurements[{i}].rates.", path)
        if m["name"] in first:
            raise InputError(f"benchmark '{m['name']}' is measured twice (also "
                             f"measurements[{first[m['name']]}]): keep one", path=path,
                             field=f"measurements[{i}].name")
        first[m["name"]] = i


def check_plottable(raw, path=None) -> None:
    """``InputError`` naming the first sweep that the pictures draw and ``raw`` lacks, so that
    ``--plots`` stops before anything is written."""
    for sweep, (picture, group) in PLOTTED_SWEEPS.items():
        if not (raw.get("sweeps") or {}).get(sweep):
            raise InputError(f"missing: --plots draws {picture} from it (run the '{group}' "
                             "group)", path=path, field=f"sweeps.{sweep}")


def _check_fields(obj, spec, prefix, path):
    for key, kinds in spec.items():
        v, found = obj, True
        for part in key.split("."):
            found = isinstance(v, dict) and part in v
            if not found:
                break
            v = v[part]
        if not found:
            raise InputError("missing", path=path, field=prefix + key)
        bound = kinds.split()[0] if kinds.split()[0] in BOUNDS else None
        kind = kinds.removeprefix(f"{bound} ") if bound else kinds
        allowed = kind.split(" or ")
        # JSON true/false are ints to Python; a count or a rate is never one
        fits = ("true/false" in allowed if isinstance(v, bool)
                else any(isinstance(v, KINDS[k]) for k in allowed))
        if not fits:
            raise InputError(f"expected {kinds}, found {json_type(v)}", path=path,
                             field=prefix + key)
        if bound and v is not None and not (math.isfinite(v) and BOUNDS[bound](v)):
            raise InputError(f"expected {kinds}, found {v}", path=path, field=prefix + key)


def json_type(v) -> str:
    """What a parsed JSON value is, in the words of ``KINDS``."""
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, float):
        return "number"
    return next((k for k, t in KINDS.items() if type(v) is t), type(v).__name__)


def percent(x: float, decimals: int = 0) -> str:
    """``x`` as a percentage with ``decimals`` decimals, but never more than 3 significant
    digits: a broken timer's 1e300 FLOP/s is no 300-digit share of the peak.

    >>> percent(0.149), percent(1.946, 1), percent(1e298)
    ('15%', '195%', '1e+300%')
    """
    text = f"{x:.{decimals}%}"
    digits = text.rstrip("%").lstrip("-0.").replace(".", "")
    return text if len(digits) <= 3 else f"{100 * x:.3g}%"


def _by_name(raw):
    return {m["name"]: m for m in raw["measurements"]}


def device_label(raw) -> str:
    return raw["device"]["name"]


def host_timed(m) -> bool:
    """Whether ``m`` is a ``launch`` timed on the host (``gpuproj bench`` until 2026-11-24): the
    pace at which the driver took launches from Python (7.5 us on the H100 machine), no
    property of the GPU."""
    return m["name"] == "launch" and m["params"].get("timer") == "host perf_counter"


def failed_checks(raw) -> list:
    """The result checks that failed; each ``name`` is a benchmark or a group."""
    return [c for c in raw.get("checks") or [] if c.get("ok") is False]


def unchecked(m, failed) -> bool:
    """Whether measurement ``m`` is covered by one of the ``failed`` checks (by its name or its
    group): gpuproj since 2026-12 does not time such kernels, older results timed them first."""
    return any(c["name"] in (m["name"], m["group"]) for c in failed)


def measured_values(raw) -> dict:
    """field -> {"value", "benchmarks", "n", "spread"} for every field the result has, but not
    from a host-timed ``launch`` or from a benchmark whose result check failed (``check`` says
    each was left out): a catalog ``measured`` value wins over the datasheet peak in every
    projection."""
    failed = failed_checks(raw)
    ms = {n: m for n, m in _by_name(raw).items() if not host_timed(m) and not unchecked(m, failed)}
    out = {}
    for fld, (names, how) in FIELD_MAP.items():
        got = [ms[n] for n in names if n in ms]
        if len(got) != len(names):
            continue
        if how == "min":
            m = min(got, key=lambda m: m["value"])
            val = m["value"]
        elif how.startswith("rate:"):
            m = got[0]
            val = m["rates"][how.split(":", 1)[1]]
        else:
            m = got[0]
            val = m["value"]
        out[fld] = {"value": float(val), "benchmarks": list(names), "n": m["summary"]["n"],
                    "spread": max(g["summary"]["spread"] for g in got),
                    "chosen": m["name"]}
    return out


def group_of(fld) -> str:
    """The group of the suite whose benchmarks give catalog field ``fld``.

    >>> group_of("dram_bw_bytes_per_s")
    'stream'
    """
    from .suite import BENCHMARKS

    return BENCHMARKS[FIELD_MAP[fld][0][0]][0]


def source_text(raw, fld, mv) -> str:
    """'gpuproj bench <name> <date> <device> median of N' (plus how two were combined)."""
    names = "+".join(mv["benchmarks"])
    how = FIELD_MAP[fld][1]
    note = " (lower of the two)" if how == "min" else (" x 4 bytes per load"
                                                       if how == "rate:bytes" else "")
    return (f"gpuproj bench {names}{note} {raw['date']} {device_label(raw)} "
            f"median of {mv['n']}")


def measured_section(raw) -> dict:
    """The ``measured`` section: field -> {value, kind: measurement, source}."""
    return {f: {"value": float(mv["value"]), "kind": "measurement",
                "source": source_text(raw, f, mv)}
            for f, mv in measured_values(raw).items()}


# memory levels, nearest first: each should read at least as fast as the one behind it
LEVELS = ("l1_bw_bytes_per_s", "l2_bw_bytes_per_s", "dram_read_bw_bytes_per_s")


def check(raw, gpu=None) -> list:
    """Warnings: a value above the GPU's datasheet peak (a broken timer or a wrong peak), a
    cache read slower than the memory behind it, a kernel result check that failed, a
    host-timed launch overhead (left out), a measurement whose spread exceeds
    ``sizes.spread_limit``. Each: {field/name, problem, text}."""
    limit = raw["sizes"]["spread_limit"]
    out = []
    mvs = measured_values(raw)
    levels = [f for f in LEVELS if f in mvs]
    for near, far in zip(levels, levels[1:]):
        a, b = mvs[near]["value"], mvs[far]["value"]
        if a < b:
            # seen on PoCL's CPU device: the cache kernel's GPU-style access pattern, not the
            # cache, sets the rate there
            out.append({"field": near, "problem": "below_next_level",
                        "text": f"{near} = {a:.4g} is below {far} = {b:.4g}: a cache slower "
                                "than the memory behind it measures the kernel's access pattern "
                                "on this device; do not use it as a ceiling"})
    if gpu is not None:
        for f, mv in mvs.items():
            peak = gpu.peak(f)
            if f in TIME_FIELDS or math.isnan(peak) or peak <= 0:
                continue
            if mv["value"] > 1.01 * peak:
                out.append({"field": f, "problem": "above_peak",
                            "text": f"{f} = {mv['value']:.4g} is {percent(mv['value'] / peak, 1)} "
                                    f"of the datasheet peak {peak:.4g}: a broken timer or a "
                                    "wrong peak"})
    for p, c in mixbench_checks(raw).items():
        if c["drop"] > 0.25:
            out.append({"name": f"mixbench_{p}", "problem": "sweep_not_monotone",
                        "text": f"mixbench {p}: throughput falls {percent(c['drop'])} below an "
                                "earlier point as intensity grows (noise, clocks or a wrong "
                                "count)"})
    for c in failed_checks(raw):
        names = {m["name"] for m in raw["measurements"] if unchecked(m, [c])} | {c["name"]}
        fields = [f for f, (benches, _) in FIELD_MAP.items() if names & set(benches)]
        out.append({"name": c["name"], "problem": "wrong_results", "fields": fields,
                    "text": f"{c['name']}: the kernels left wrong values{_wrong(c)}: "
                            + (f"{', '.join(fields)} left out of the catalog entry" if fields
                               else "not timed")})
    for m in raw["measurements"]:
        if host_timed(m):
            out.append({"name": m["name"], "problem": "host_timed",
                        "text": f"{m['name']}: timed on the host by an older gpuproj bench, the "
                                "driver's pace, not the GPU's: left out of the catalog entry"})
        sp = m["summary"]["spread"]
        if sp > limit:
            out.append({"name": m["name"], "problem": "wide_spread",
                        "text": f"{m['name']}: spread (IQR/median) {percent(sp, 1)} exceeds "
                                f"{percent(limit)}; do not trust this value"})
    return out


def _wrong(check) -> str:
    """' (the wrong values, expected what)' of a failed result check, as far as it says."""
    said = ([str(check["wrong"])] if check.get("wrong") else []) + (
        [f"expected {check['expected']}"] if check.get("expected") else [])
    return f" ({', '.join(said)})" if said else ""


def slug(name: str) -> str:
    """A catalog id from a device name.

    >>> slug("pthread-Intel(R) Xeon(R) Processor")
    'pthread-intel-xeon-processor'
    """
    s = re.sub(r"\((r|tm)\)", "", name.lower())
    return re.sub(r"[^a-z0-9.]+", "-", s).strip("-") or "device"


def _values_from_device(raw) -> dict:
    """values.* a runtime reports, each with its query as the source."""
    d = raw["device"]
    api = "OpenCL clGetDeviceInfo" if d["backend"] == "opencl" else "CUDA cuDeviceGetAttribute"
    when = f"{raw['date']} {d['name']}"
    rows = {
        "sm_count": (d["compute_units"], "MAX_COMPUTE_UNITS" if d["backend"] == "opencl"
                     else "MULTIPROCESSOR_COUNT"),
        "warp_size": (d["warp_size"], "PREFERRED_WORK_GROUP_SIZE_MULTIPLE of a trivial kernel"
                      if d["backend"] == "opencl" else "WARP_SIZE"),
        "max_threads_per_block": (d["max_block_size"], "MAX_WORK_GROUP_SIZE"
                                  if d["backend"] == "opencl" else "MAX_THREADS_PER_BLOCK"),
        "smem_per_block_bytes": (d["local_mem_bytes"], "LOCAL_MEM_SIZE"
                                 if d["backend"] == "opencl" else "MAX_SHARED_MEMORY_PER_BLOCK"),
        "memory_size_bytes": (d["global_mem_bytes"], "GLOBAL_MEM_SIZE"
                              if d["backend"] == "opencl" else "cuDeviceTotalMem"),
        "boost_clock_hz": (d["clock_hz"], "MAX_CLOCK_FREQUENCY" if d["backend"] == "opencl"
                           else "CLOCK_RATE"),
    }
    if d["device_type"] == "GPU":
        rows["l2_size_bytes"] = (d["l2_bytes"], "GLOBAL_MEM_CACHE_SIZE"
                                 if d["backend"] == "opencl" else "L2_CACHE_SIZE")
    return {k: {"value": v, "kind": "measurement", "source": f"{api} {q}, {when}"}
            for k, (v, q) in rows.items() if v}


def gpu_file(raw, gpu=None, name: str | None = None, device_alias: bool = True) -> dict:
    """The YAML content of the catalog file: ``gpu``'s own file with its ``measured`` section
    updated (fields not measured now are kept), or, for a device the catalog does not know, a
    complete minimal file (identity from the runtime, values from its device queries) that
    answers to the device's name too where ``device_alias`` (not where the name is another
    catalog GPU's: it would become ambiguous)."""
    measured = measured_section(raw)
    if gpu is not None:
        if gpu.path is not None and Path(gpu.path).is_file():
            data = parse_yaml(read_text(gpu.path, strict=True), gpu.path)
        else:
            data = {k: v for k, v in gpu.to_dict().items() if v not in (None, {}, [])}
        data["measured"] = {**(data.get("measured") or {}), **measured}
        return data
    d = raw["device"]
    name = name or d["name"]
    data = {
        "schema_version": SCHEMA_VERSION, "id": slug(name), "vendor": d["vendor"],
        "name": name, "aliases": sorted({d["name"]} - {name}) if device_alias else [],
        "architecture": d["architecture"] or "unknown", "isa": d["isa"] or "unknown",
        "notes": (f"written by gpuproj bench {raw['date']} ({d['backend']} backend, "
                  f"{d['device_type']} device, {raw['sizes']['name']} sizes); no datasheet "
                  f"values"),
        "values": _values_from_device(raw), "measured": measured,
    }
    if not data["aliases"]:
        del data["aliases"]
    return data


def dump_yaml(data) -> str:
    import yaml

    head = ("# GPU catalog file (schema in gpuproj/catalog/schema.py). The measured section was\n"
            "# written by `gpuproj bench`; raw samples are in the JSON file beside it.\n")
    return head + yaml.safe_dump(data, sort_keys=False, width=100)
