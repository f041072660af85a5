"""Model files and kernel files: safe YAML (``yaml.safe_load``) or TOML (``tomllib``).

Model file::

    name: matmul
    output: f_wall_time
    subgroup_size: 32                 # the only hardware input
    expression: >
      p_launch * f_sync_kernel_launch + p_group * f_thread_groups + ...
    features:                         # optional user-defined features
      f_barriers: f_sync_barrier_local * f_thread_groups
    initial: {p_edge: 1.0e+4}         # optional starting values
    signed: []                        # parameters allowed to be negative
    measurement:
      match: superset                 # identical | subset | superset | intersect
      tag_sets:                       # one KernelCollection query per entry
        - [flops_madd_pattern, "m:64,128"]
    evaluation:                       # optional: variants to predict and rank (case studies)
      - {name: prefetch, tags: [matmul_sq, "prefetch:True", "n:128,192"]}

Kernel file (for ``predict_loopy``), either a generator with one value for each argument
whose defaults have several (``n`` here; ``--sizes n=...`` overrides it)::

    generator: matmul_sq
    args: {prefetch: true, n: 1024}

or a loopy kernel built from a whitelist of transformations (no code is executed)::

    domains: ["{[i,j,k]: 0<=i,j,k<n}"]
    instructions: "c[i,j] = sum(k, a[i,k]*b[k,j])"
    args:
      - {name: "a,b,c", dtype: float32, shape: [n, n]}
      - {name: n, dtype: int32}          # no shape: a size parameter
    transforms:
      - [split_iname, {split_iname: i, inner_length: 16, outer_tag: g.1, inner_tag: l.1}]
      - [split_iname, {split_iname: j, inner_length: 16, outer_tag: g.0, inner_tag: l.0}]
      - [assume, {assumptions: "n mod 16 = 0"}]
    access_tags: {aLD: [[a, load]]}
    sizes: {n: 1024}                     # optional: integers, overridden by --sizes
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..files import parse_yaml, read_text
from .counting import check_subgroup_size
from .generators import ALL_GENERATORS, KernelCollection, MatchCondition
from .model import CostModel, _finite

TRANSFORMS = ("split_iname", "tag_inames", "assume", "add_prefetch", "fix_parameters",
              "prioritize_loops", "tag_array_axes", "realize_reduction",
              "privatize_temporaries_with_inames", "duplicate_inames", "add_inames_to_insn",
              "set_options", "remove_work")
# the loopy options a kernel file may set: those that change only the code loopy generates or
# checks. The others write files (write_code, write_wrapper: a path), start an editor
# (edit_code), pass compiler flags (build_options) or skip the argument checks
SAFE_OPTIONS = {"allow_fp_reordering", "annotate_inames", "check_dep_resolution",
                "disable_global_barriers", "enforce_array_accesses_within_bounds",
                "enforce_variable_access_ordered", "insert_gbarriers"}


# the model files gpuproj ships, the paper's case studies: an installed package has no src/
# folder to name them by path
BUNDLED_MODELS = Path(__file__).resolve().parent / "models"


def bundled_model_path(name: str) -> Path:
    """The path of the model file gpuproj ships as ``name`` (``matmul``, ``dg``,
    ``finite_diff``); an ``InputError`` listing them for another name."""
    names = sorted(f.stem for f in BUNDLED_MODELS.glob("*.yaml"))
    if name not in names:
        raise InputError(f"no bundled model '{name}' (bundled: {', '.join(names)})")
    return BUNDLED_MODELS / f"{name}.yaml"


def read_mapping(path) -> dict:
    p = Path(path)
    text = read_text(p, strict=True)
    if p.suffix.lower() == ".toml":
        import tomllib

        try:
            d = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"bad TOML: {e}", path=p) from None
    else:
        d = parse_yaml(text, p)
    if not isinstance(d, dict):
        raise InputError("expected a mapping at the top level", path=p)
    return d


@dataclass
class ModelSpec:
    model: CostModel
    subgroup_size: int = 32
    initial: dict = field(default_factory=dict)
    signed: tuple = ()
    match: MatchCondition = MatchCondition.SUPERSET
    tag_sets: list = field(default_factory=list)
    evaluation: list = field(default_factory=list)  # [{"name":..., "tags": [...]}]
    path: object = None


def load_model_file(path) -> ModelSpec:
    """Read and check a model file (YAML or TOML)."""
    d = read_mapping(path)
    p = Path(path)
    for key in ("output", "expression"):
        if key not in d:
            raise InputError("missing key", path=p, field=key)
        if not isinstance(d[key], str):
            raise InputError(f"expected text, found {d[key]!r}", path=p, field=key)
    allowed = {"name", "output", "expression", "features", "subgroup_size", "initial",
               "signed", "measurement", "evaluation", "description"}
    unknown = set(d) - allowed
    if unknown:
        raise InputError(f"unknown key(s) {sorted(unknown)}", path=p)
    model = CostModel(d["output"], d["expression"], d.get("features") or {},
                  str(d.get("name") or p.stem), path=p)
    sg = check_subgroup_size(d.get("subgroup_size", 32), p)
    meas = d.get("measurement") or {}
    if not isinstance(meas, dict):
        raise InputError("expected a mapping", path=p, field="measurement")
    try:
        match = MatchCondition(str(meas.get("match", "superset")).lower())
    except ValueError:
        raise InputError("one of identical, subset, superset, intersect", path=p,
                         field="measurement.match") from None
    tag_sets = meas.get("tag_sets") or []
    if not isinstance(tag_sets, list) or not all(isinstance(t, list) for t in tag_sets):
        raise InputError("expected a list of tag lists", path=p, field="measurement.tag_sets")
    tag_sets = [[str(t) for t in ts] for ts in tag_sets]
    evaluation = d.get("evaluation") or []
    if not isinstance(evaluation, list):
        raise InputError("expected a list of {name, tags}", path=p, field="evaluation")
    for i, e in enumerate(evaluation):
        if not isinstance(e, dict) or "tags" not in e or "name" not in e:
            raise InputError(f"entry {i + 1} needs name and tags", path=p, field="evaluation")
        if not isinstance(e["tags"], list):  # a string would be read as its characters
            raise InputError(f"entry {i + 1}: tags must be a list, found {e['tags']!r}",
                             path=p, field="evaluation")
    evaluation = [{"name": str(e["name"]), "tags": [str(t) for t in e["tags"]]}
                  for e in evaluation]
    initial = d.get("initial") or {}
    if not isinstance(initial, dict):
        raise InputError("expected a mapping of parameter to starting value", path=p,
                         field="initial")
    # .nan or .inf reached the fit after every kernel was timed, where scipy refused them
    initial = {str(k): _finite(v, p, f"initial.{k}") for k, v in initial.items()}
    signed = d.get("signed") or []
    if not isinstance(signed, list):
        raise InputError("expected a list of parameter names", path=p, field="signed")
    for key, names in (("initial", initial), ("signed", signed)):
        bad = set(map(str, names)) - set(model.params)
        if bad:
            raise InputError(f"{sorted(bad)} are not parameters of the expression", path=p,
                             field=key)
    spec = ModelSpec(model, sg, initial, tuple(str(n) for n in signed), match, tag_sets,
                     evaluation, p)
    check_tag_sets(spec)
    return spec


def check_tag_sets(spec: ModelSpec) -> None:
    """Raise the ``InputError`` that a tag set or evaluation entry of ``spec`` would raise when
    its kernels are made (an unknown generator or argument, a bad value, no kernel at all),
    naming the entry. A tag that selects no kernel is reported when the model file is read,
    and again for another match condition (``--match``), not after the kernels before it ran
    (an evaluation entry: after the parameters were written)."""
    coll = KernelCollection(ALL_GENERATORS, spec.match)
    for field_, i, tags in (
            [("measurement.tag_sets", i, ts) for i, ts in enumerate(spec.tag_sets)]
            + [("evaluation", i, e["tags"]) for i, e in enumerate(spec.evaluation)]):
        with tag_errors(spec.path, field_, i):
            coll.check(tags)


@contextlib.contextmanager
def tag_errors(path, field, index):
    """Re-raise a generator's ``InputError`` for entry ``index`` (0-based) of a model file's
    list ``field`` (``measurement.tag_sets`` or ``evaluation``) with the file and the field."""
    try:
        yield
    except InputError as e:
        raise InputError(f"entry {index + 1}: {e.message}", path=path, field=field) from None


def load_kernel_file(path):
    """A :class:`.kernels.MeasurementKernel` from a kernel file (see module docstring)."""
    from .generators import GENERATORS
    from .kernels import MeasurementKernel

    d = read_mapping(path)
    p = Path(path)
    if "generator" in d:
        g = GENERATORS.get(d["generator"]) if isinstance(d["generator"], str) else None
        if g is None:
            raise InputError(f"unknown generator {d['generator']!r}; known: "
                             f"{', '.join(GENERATORS)}", path=p, field="generator")
        args = d.get("args") or {}
        if not isinstance(args, dict):
            raise InputError("expected a mapping of argument to value", path=p, field="args")
        tags = {k: str(v) for k, v in args.items()}
        unknown = set(tags) - set(g.args)
        if unknown:
            raise InputError(f"generator {g.name} has no argument(s) {sorted(unknown)}",
                             path=p, field="args")
        try:
            combos = g.combinations(tags)
        except InputError as e:
            raise InputError(e.message, path=p, field=f"args.{e.field}") from None
        if len(combos) > 1:
            several = [a for a, vs in g.values(tags).items() if len(vs) > 1]
            raise InputError(f"args select {len(combos)} variants; give one value for each "
                             f"of {', '.join(several)}", path=p, field="args")
        return g.variants(tags)[0]
    return _build_loopy(d, p, MeasurementKernel)


def _build_loopy(d, p, MeasurementKernel):
    import numpy as np

    from .counting import _lp, check_size_values
    from .work_removal import remove_work

    lp = _lp()
    for key in ("domains", "instructions", "args"):
        if key not in d:
            raise InputError("missing key", path=p, field=key)
    if not isinstance(d["args"], list):
        raise InputError("expected a list of {name, dtype, shape}", path=p, field="args")
    kernel_name = str(d.get("name", p.stem))
    if not kernel_name.replace("-", "_").isidentifier():
        raise InputError(f"{kernel_name!r} is not a kernel name (letters, digits, _ and -)", path=p,
                         field="name")
    try:
        args = []
        for i, a in enumerate(d["args"]):
            if not isinstance(a, dict) or not isinstance(a.get("name"), str):
                raise InputError(f"argument {i + 1} needs a name", path=p, field="args")
            try:
                dt = np.dtype(a.get("dtype", "float32"))
            except TypeError:
                raise InputError(f"bad dtype {a.get('dtype')!r}", path=p, field="args") from None
            if "shape" in a:
                if not isinstance(a["shape"], list) or not all(
                        isinstance(n, str | int) for n in a["shape"]):
                    raise InputError(f"argument {i + 1}: expected a shape such as [n, n]",
                                     path=p, field="args")
                args.append(lp.GlobalArg(a["name"], dt, shape=tuple(str(n) for n in a["shape"])))
            else:
                args.append(lp.ValueArg(a["name"], dt))
        # loopy prints a domain it cannot parse to standard output, where --json is written;
        # the error below names the file and says why
        with contextlib.redirect_stdout(io.StringIO()):
            knl = lp.make_kernel(d["domains"], d["instructions"], args,
                                 name=kernel_name.replace("-", "_"),
                                 lang_version=(2018, 2))
        for i, t in enumerate(d.get("transforms") or []):
            if not (isinstance(t, list) and len(t) == 2 and isinstance(t[1], dict)):
                raise InputError(f"transform {i + 1}: expected [name, {{kwargs}}]", path=p,
                                 field="transforms")
            name, kw = t
            if name not in TRANSFORMS:
                raise InputError(f"transform {i + 1}: {name!r} not allowed; allowed: "
                                 f"{', '.join(TRANSFORMS)}", path=p, field="transforms")
            if name == "set_options" and set(kw) - SAFE_OPTIONS:
                raise InputError(f"transform {i + 1}: option(s) "
                                 f"{', '.join(sorted(set(kw) - SAFE_OPTIONS))} not allowed; "
                                 f"allowed: {', '.join(sorted(SAFE_OPTIONS))} (others write "
                                 "files, start an editor or pass compiler flags when the kernel "
                                 "runs)", path=p, field="transforms")
            fn = remove_work if name == "remove_work" else getattr(lp, name)
            try:
                knl = fn(knl, **kw)
            except InputError as e:  # remove_work's names no file, and its argument as field
                raise InputError(f"transform {i + 1} ({name}): {e.message}", path=p,
                                 field="transforms") from None
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - loopy's own errors: report them as bad input
        raise InputError(f"loopy rejected the kernel: {loopy_error(e)}", path=p) from None
    tags = d.get("access_tags") or {}
    if not isinstance(tags, dict) or not all(
            isinstance(v, list) and all(isinstance(x, list) and len(x) == 2 for x in v)
            for v in tags.values()):
        raise InputError("expected a mapping of tag to [[array, load|store], ...]", path=p,
                         field="access_tags")
    sizes = d.get("sizes") or {}
    if not isinstance(sizes, dict):
        raise InputError("expected a mapping of size name to integer", path=p, field="sizes")
    try:
        sizes = check_size_values(sizes)
    except InputError as e:
        raise InputError(e.message, path=p, field=e.field) from None
    tags = {k: [tuple(x) for x in v] for k, v in tags.items()}
    return MeasurementKernel(kernel_name, knl, sizes, access_tags=tags)


def loopy_error(e: Exception) -> str:
    """One line for an error loopy or isl raised: its type and first line (loopy appends the
    loop nesting tree and the like on further lines)."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"
