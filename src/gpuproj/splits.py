"""Train/test splits of the three generalisation experiments (Srivastava et al., Sec. 6) and the
evaluation of trained methods on them.

- ``gpu``: leave one GPU out. For each GPU g, training sees no row measured on g (g is neither
  source nor target of any training pair); the test pairs are (s, g) for every other GPU s.
  (The report's scripts test one GPU, TITAN V, and keep it as a source in training; here it
  is left out entirely.)
- ``config``: new problem size of known kernels. Per kernel, the configurations of the largest
  size measured on two or more GPUs are the test set, every smaller one trains ("train on
  small/medium/large, test on the largest"). Size = working set bytes where they vary within
  the kernel, else DRAM bytes, else FLOPs (largest over the GPUs).
- ``kernel``: new kernels. The report's Experiment 3 split where its kernels are present
  (``REPORT_TEST_KERNELS``), else each kernel left out in turn.

No test row influences training: a fold's ``train`` table holds no row of a test (kernel,
config) on a test target, and trained methods are fitted on ``train`` only.

>>> import pandas as pd
>>> from gpuproj.profiles.table import ProfileTable
>>> t = ProfileTable.from_frame(pd.DataFrame({"kernel": ["k"] * 4, "config": ["a", "b"] * 2,
...     "gpu": ["titan-v", "titan-v", "rtx-2080-ti", "rtx-2080-ti"], "time_s": [1.0, 2, 3, 4],
...     "dram_bytes": [1e6, 4e6, 1e6, 4e6]}))
>>> [(f.name, sorted(f.test_keys)) for f in config_folds(t)]
[('largest size', [('k', 'b')])]
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import GpuprojError
from .names import gpu_list
from .profiles.table import ProfileTable

SPLITS = ("gpu", "config", "kernel")

# Srivastava et al., Experiment 3: the four test kernels (the other twelve train)
REPORT_TEST_KERNELS = ("matmul_tiled", "shared_transpose", "atomic_hotspot",
                       "vector_add_divergent")


@dataclass
class Fold:
    """One train/test split: fit on ``train``; predict, from the rows of ``test`` on each GPU of
    ``sources``, every GPU of ``targets`` (None: all GPUs of ``test``)."""

    name: str
    train: ProfileTable
    test: ProfileTable
    sources: list | None = None
    targets: list | None = None
    test_keys: set = field(default_factory=set)


def _keys(df, columns=("kernel", "config")) -> pd.MultiIndex:
    """(kernel, config) of each row, or the labels of other ``columns``."""
    return pd.MultiIndex.from_arrays([df[c].astype(str) for c in columns])


def gpu_folds(table: ProfileTable, gpus=None) -> list[Fold]:
    """Leave-one-GPU-out folds (all GPUs of ``table``, or those named in ``gpus``: a list, or
    names separated by commas)."""
    ids = [g.id for g in gpu_list(gpus)] if gpus else table.gpus
    if len(table.gpus) < 3:
        raise GpuprojError("leave-one-GPU-out needs a table with three or more GPUs (training "
                           "needs pairs of two GPUs besides the one left out)")
    out = []
    for g in ids:
        if g not in table.gpus:
            raise GpuprojError(f"GPU {g} is not in the table (GPUs: {', '.join(table.gpus)})")
        on_g = table.df["gpu"] == g
        train = table.subset(~on_g)
        others = [x for x in table.gpus if x != g]
        keys = set(_keys(table.df[on_g]))
        out.append(Fold(f"target {g}", train, table, others, [g], keys))
    return out


def config_size(table: ProfileTable) -> pd.Series:
    """Size of each (kernel, config): working set bytes where they vary within the kernel, else
    DRAM bytes, else FLOPs, else the number in the config string; largest over the GPUs."""
    d = table.df
    out = {}
    for k, g in d.groupby("kernel", sort=False):
        size = None
        for c in ("working_set_bytes", "dram_bytes", "flops"):
            v = g.groupby("config", sort=False)[c].max()
            if v.notna().all() and v.nunique() > 1:
                size = v
                break
        if size is None:  # the largest product of the numbers in the config string
            def num(s):
                vals = [float(x) for x in pd.Series([s]).str.findall(r"\d+(?:\.\d+)?")[0]]
                return float(np.prod(vals)) if vals else np.nan
            size = pd.Series({c: num(c) for c in g["config"].unique()})
        for c, v in size.items():
            out[(str(k), str(c))] = float(v)
    return pd.Series(out, dtype=float)


def config_folds(table: ProfileTable) -> list[Fold]:
    """One fold: per kernel, its largest-size configurations (measured on >= 2 GPUs) are the
    test set; kernels with a single size only train."""
    d = table.df
    keys = _keys(d)
    n_gpus = d.groupby([d["kernel"].astype(str), d["config"].astype(str)])["gpu"].nunique()
    size = config_size(table)
    test = set()
    for k in d["kernel"].astype(str).unique():
        s = size[[key for key in size.index if key[0] == k and n_gpus.get(key, 0) >= 2]]
        if s.nunique() < 2:
            continue
        test |= set(s.index[s == s.max()])
    if not test:
        raise GpuprojError("the config split needs kernels measured at two or more sizes on "
                           "two or more GPUs")
    in_test = keys.isin(test)
    return [Fold("largest size", table.subset(~in_test), table.subset(in_test), None, None, test)]


def kernel_folds(table: ProfileTable, test_kernels=None) -> list[Fold]:
    """One fold holding out ``test_kernels`` (a kernel's name or a list of names) together,
    or without them the report's Experiment 3 split where its kernels are present; else
    leave-one-kernel-out."""
    if isinstance(test_kernels, str):  # one name (a C++ signature may hold commas)
        test_kernels = [test_kernels]
    d = table.df
    kernels = sorted(d["kernel"].astype(str).unique())
    if len(kernels) < 2:
        raise GpuprojError("the kernel split needs a table with two or more kernels")
    if test_kernels is None and set(REPORT_TEST_KERNELS) <= set(kernels):
        test_kernels = REPORT_TEST_KERNELS
    groups = [list(test_kernels)] if test_kernels else [[k] for k in kernels]
    out = []
    for grp in groups:
        missing = [k for k in grp if k not in kernels]
        if missing:
            raise GpuprojError(f"kernel(s) {', '.join(missing)} not in the table")
        m = d["kernel"].astype(str).isin(grp).to_numpy()
        name = "report test kernels" if tuple(grp) == REPORT_TEST_KERNELS else f"kernel {grp[0]}"
        out.append(Fold(name, table.subset(~m), table.subset(m), None, None,
                        set(_keys(d[m]))))
    return out


def folds(table: ProfileTable, split: str, **kw) -> list[Fold]:
    """The train/test folds of ``table`` for ``split`` (one of ``SPLITS``), each a ``Fold``
    to fit on ``train`` and score on ``test``: ``gpu``, each GPU left out in turn, trained on
    the others and predicted from them (``gpu_folds``; ``gpus=`` names the GPUs to leave
    out); ``config``, one fold holding out each kernel's largest configurations
    (``config_folds``); ``kernel``, the kernels of ``test_kernels=`` held out together, else
    the report's four test kernels where the table has them, else each kernel in turn
    (``kernel_folds``).
    ``evaluate_split`` scores methods on them; another split is a ``GpuprojError``."""
    if split == "gpu":
        return gpu_folds(table, kw.get("gpus"))
    if split == "config":
        return config_folds(table)
    if split == "kernel":
        return kernel_folds(table, kw.get("test_kernels"))
    raise GpuprojError(f"unknown split '{split}' (known: {', '.join(SPLITS)})")


def held_out_bands(table: ProfileTable) -> dict | None:
    """The analytical error bands fitted without ``table``'s data source, where ``table`` was
    read from the public tables of one data source the shipped bands were fitted on, one file
    or several (None otherwise: the shipped file holds no bands without two sources).
    Outside the training GPUs' range a trained model's interval widens to these bands; fitted
    on the table itself, they would carry the held-out GPU's own errors into its intervals."""
    from .models.bands import bands_without_source
    from .profiles import sniff

    # the files the rows came from (several where tables were read as one)
    paths = (pd.unique(table.df["_path"]) if "_path" in table.df.columns
             else [table.origin] if table.origin else [])
    paths = [Path(p) for p in paths if isinstance(p, str) and p]
    if not paths or not all(p.is_file() for p in paths):
        return None
    try:
        sources = {sniff(p) for p in paths}
    except GpuprojError:
        return None
    return bands_without_source(sources.pop()) if len(sources) == 1 else None


def make_method(name_or_model, *, coverage=None, cv_groups="gpu", params=None, bands=None):
    """A model instance for ``name_or_model``: trained methods get ``coverage`` (None: their
    default, 90 %; 0: no interval), the CV grouping of the split and ``bands`` (None: the
    shipped ones) to widen to outside their range; analytical methods are wrapped in
    ``Conformal`` when ``coverage`` is given, so every method reports a calibrated interval.
    An instance is returned as it is, with the settings its maker gave it."""
    from inspect import signature

    from .models import get_model, model_class

    if not isinstance(name_or_model, str):
        return name_or_model
    cls = model_class(name_or_model)
    params = dict(params or {})
    if getattr(cls, "trained", False):
        if coverage is not None:
            params.setdefault("coverage", coverage or None)
        takes = signature(cls.__init__).parameters
        if "cv_groups" in takes:
            params.setdefault("cv_groups", cv_groups)
        if bands is not None and "physics_bands" in takes:
            params.setdefault("physics_bands", bands)
        return get_model(name_or_model, **params)
    if coverage:
        from .learned.models import Conformal

        return Conformal(base=name_or_model, coverage=coverage)
    return get_model(name_or_model, **params)


def evaluate_fold(fold: Fold, methods, *, coverage=None, cv_groups="gpu", model_params=None,
                  fitted: list | None = None, progress=None, bands=None):
    """Fit the trained methods (and conformal wrappers) on ``fold.train``, predict the fold's
    test pairs with every method. Returns an ``Evaluation`` whose pairs carry a ``fold``
    column. ``fitted`` (a list) receives the fitted models; ``progress`` wraps the methods
    as they are made and trained; ``bands``: see ``make_method``."""
    from .evaluate import Evaluation, NothingToEvaluate, TrainedOnWarning, evaluate
    from .models import method_list

    models = []
    methods = method_list(methods)  # "gb,residual": two methods, as on the command line
    for m in progress(methods) if progress else methods:
        name = m if isinstance(m, str) else m.name
        model = make_method(m, coverage=coverage, cv_groups=cv_groups,
                            params=(model_params or {}).get(name), bands=bands)
        if model is m and getattr(m, "trained", False) and hasattr(m, "clone"):
            # every fold trains its own, unfitted copy; one left at the shipped bands
            # (physics_bands None) gets those without the table's source, as a model made
            # from its name does
            shipped = bands is not None and getattr(m, "physics_bands", False) is None
            model = m.clone(physics_bands=bands) if shipped else m.clone()
        if getattr(model, "trained", False) and not hasattr(model, "features_"):
            model.fit(fold.train)
        models.append(model)
        if fitted is not None:
            fitted.append(model)
    try:
        with warnings.catch_warnings():  # a fold's overlap is ``overlap``'s to report
            warnings.simplefilter("ignore", TrainedOnWarning)
            ev = evaluate(fold.test, models, fold.sources, fold.targets)
    except NothingToEvaluate:  # a fold without a pair (a kernel one GPU alone measured)
        ev = Evaluation.empty()
    pairs = ev.pairs
    if fold.test_keys and len(pairs):
        keep = _keys(pairs).isin(fold.test_keys)
        pairs = pairs[keep].reset_index(drop=True)
    pairs = pairs.assign(fold=fold.name)
    return Evaluation(pairs, ev.skipped)


def evaluate_split(table: ProfileTable, methods, split: str, *, coverage=None,
                   model_params=None, progress=None, **kw):
    """Every fold of ``split`` (``gpu``, ``config`` or ``kernel``) with ``methods``; the
    pairs of all folds in one ``Evaluation`` (the same metrics and JSON as ``evaluate``).
    The trained methods' intervals widen, outside their range, to the error bands fitted
    without ``table``'s data source (``held_out_bands``)."""
    from .evaluate import Evaluation

    fs = folds(table, split, **kw)
    bands = held_out_bands(table)
    it = progress(fs) if progress else fs
    frames, skipped = [], []
    for f in it:
        ev = evaluate_fold(f, methods, coverage=coverage, cv_groups=split,
                           model_params=model_params, bands=bands)
        frames.append(ev.pairs)
        skipped.extend(ev.skipped)
    # every fold's test table carries the rows the table itself skipped: count them once
    # (a projection's skip belongs to its fold's models, and stays)
    skipped = list(dict.fromkeys(s for s in skipped if not s.projection)) + [
        s for s in skipped if s.projection]
    pairs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return Evaluation(pairs, skipped)


def overlap(train: ProfileTable, test: ProfileTable) -> dict:
    """What a separate test table shares with the training table: ``shared_rows``, the test
    rows whose (kernel, config, GPU) was also measured in training (their errors are training
    errors, not a new GPU's or kernel's), of ``test_rows``; and the test table's kernels and
    GPUs that training never saw (``new_kernels``, ``new_gpus``), to which a learned model
    extrapolates.

    >>> import pandas as pd
    >>> t = ProfileTable.from_frame(pd.DataFrame({"kernel": ["k", "k", "j"], "config": "a",
    ...     "gpu": ["titan-v", "rtx-2080-ti", "titan-v"], "time_s": [1.0, 2, 3]}))
    >>> overlap(t, t)["shared_rows"], overlap(t.subset(t.df["kernel"] == "k"), t)
    (3, {'shared_rows': 2, 'test_rows': 3, 'new_kernels': ['j'], 'new_gpus': []})
    """
    row = ("kernel", "config", "gpu")
    shared = _keys(test.df, row).isin(_keys(train.df, row))
    return {"shared_rows": int(shared.sum()), "test_rows": len(test.df),
            "new_kernels": sorted(set(test.df["kernel"].astype(str))
                                  - set(train.df["kernel"].astype(str))),
            "new_gpus": [g for g in test.gpus if g not in train.gpus]}


def evaluate_trained(train: ProfileTable, test: ProfileTable, methods, *, coverage=None,
                     sources=None, targets=None, fitted=None, progress=None):
    """Fit trained methods on ``train`` and evaluate every method on all pairs of ``test``.
    A test table read from another file than ``train`` has the intervals, outside the
    training range, widen to the error bands fitted without its data source
    (``held_out_bands``); on the training file itself the evaluation is in-sample anyway, and
    the models keep the shipped bands."""
    fold = Fold("train/test", train, test, sources, targets)
    bands = held_out_bands(test) if test.origin != train.origin else None
    return evaluate_fold(fold, methods, coverage=coverage, fitted=fitted, progress=progress,
                         bands=bands)
