"""Training and test pairs for cross-GPU learning, and the held-out groups that validate them
(``cv_masks``).

A pair is one kernel configuration measured on a source GPU ``s`` and on a target GPU ``t``
(``s != t``): the source row's columns are the inputs, the target's mean time the answer.

>>> import pandas as pd
>>> from gpuproj.profiles.table import ProfileTable
>>> t = ProfileTable.from_frame(pd.DataFrame({"kernel": ["k"] * 3, "config": ["c"] * 3,
...     "gpu": ["a", "b", "c"], "time_s": [1.0, 2.0, 4.0]}))
>>> p = make_pairs(t)
>>> sorted(zip(p["source"], p["target"], p["true_s"]))[:2]
[('a', 'b', 2.0), ('a', 'c', 4.0)]
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from ..errors import GpuprojError
from ..profiles.table import ProfileTable


def make_pairs(table: ProfileTable, *, sources=None, targets=None, exclude=()) -> pd.DataFrame:
    """Every ordered pair (s, t), s != t, of GPUs that measured the same (kernel, config).

    Returns the source rows (all their columns; ``gpu`` renamed ``source``) with ``target``,
    ``true_s`` (the target's time, s) and ``src_row`` (index of the source row in
    ``table.df``). ``sources``/``targets`` restrict the GPU ids; GPUs in ``exclude`` appear on
    neither side.
    """
    table.require_unique_configs()
    df = table.df
    keep = ~df["gpu"].isin(list(exclude))
    left = df[keep & (df["gpu"].isin(list(sources)) if sources is not None else keep)]
    left = left.assign(src_row=left.index.to_numpy()).rename(columns={"gpu": "source"})
    right_rows = df[keep & (df["gpu"].isin(list(targets)) if targets is not None else keep)]
    right = right_rows[["kernel", "config", "gpu", "time_s"]].rename(
        columns={"gpu": "target", "time_s": "true_s"})
    out = left.merge(right, on=["kernel", "config"], how="inner")
    out = out[out["source"] != out["target"]]
    return out.reset_index(drop=True)


def table_hash(table: ProfileTable) -> str:
    """SHA-256 of every column of ``table`` (independent of the row order): which data a model
    was trained on, and the key of the feature cache (a table with the same times and other
    counters is other data). Where the files lie (``_path``, a table read from several) is no
    part of the data."""
    d = table.df.sort_values(["kernel", "config", "gpu", "time_s"], kind="mergesort")
    h = hashlib.sha256()
    for c in sorted(d.columns.drop("_path", errors="ignore")):
        h.update(f"\x1e{c}\x1f".encode())
        h.update(pd.util.hash_pandas_object(d[c], index=False).to_numpy().tobytes())
    return h.hexdigest()


def subsample(n: int, max_n: int | None, seed: int) -> np.ndarray:
    """Indices of at most ``max_n`` of ``n`` items, drawn without replacement with ``seed``
    (all, in order, when ``max_n`` is None or not smaller than ``n``)."""
    if max_n is None or n <= max_n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=max_n, replace=False))


# kernel or configuration folds where the caller gives no number
GROUP_FOLDS = 8


def cv_masks(pairs: pd.DataFrame, groups: str, folds: int | None, seed: int):
    """(train mask, validation mask) pairs for out-of-fold predictions.

    ``gpu``: each GPU in turn (up to ``folds`` of them, drawn with ``seed``; None: every one)
    is left out entirely (neither source nor target in training) and its pairs as target are
    validated; ``kernel``/``config``: kernels or (kernel, config) keys split into ``folds``
    groups (None: ``GROUP_FOLDS``). Every GPU by default, because the interval calibrated on
    them needs enough held-out GPUs for its quantile over GPUs: K >= 9 at 90 %
    (``models.LearnedModel.fit``); a cap of 8 kept the 10 GPUs of gpu-benches' stream sweep
    at 8 of its 9 training GPUs.
    """
    if groups == "gpu":
        src = pairs["source"].astype(str).to_numpy()
        tgt = pairs["target"].astype(str).to_numpy()
        gpus = sorted(set(src) | set(tgt))
        if len(gpus) < 3:  # leaving one out leaves no pair to train on
            return
        if folds is not None and len(gpus) > folds:
            pick = np.random.default_rng(seed).choice(len(gpus), folds, replace=False)
            gpus = [gpus[i] for i in sorted(pick)]
        for g in gpus:
            tr = (src != g) & (tgt != g)
            va = (tgt == g) & (src != g)
            if tr.any() and va.any():
                yield tr, va
        return
    if groups == "kernel":
        key = pairs["kernel"].astype(str).to_numpy()
    elif groups == "config":
        key = (pairs["kernel"].astype(str) + "\x1f" + pairs["config"].astype(str)).to_numpy()
    else:
        raise GpuprojError(f"cv_groups must be gpu, kernel or config (got {groups!r})")
    uniq = np.unique(key)
    if len(uniq) < 2:
        return
    n = min(folds or GROUP_FOLDS, len(uniq))
    fold_of = dict(zip(uniq, np.random.default_rng(seed).permutation(len(uniq)) % n))
    f = np.array([fold_of[k] for k in key])
    for i in range(n):
        va = f == i
        if va.any() and (~va).any():
            yield ~va, va
