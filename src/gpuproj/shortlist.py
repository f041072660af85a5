"""Which configurations of a tuned kernel to measure on a GPU one has not tuned on.

An autotuner that can run only ``k`` of a kernel's configurations on the target takes them in
turn from several predicted orders (fastest first): the source GPU's own order (method
``same``) is right within an architecture and can be far off across one, a learned model's
order the other way round, and a shortlist that draws from both avoids the worst case of each
(docs/learned.md, "Ranking kernel variants"; measured in docs/accuracy.md).

>>> import pandas as pd
>>> p = pd.DataFrame({"kernel": "k", "config": list("abcabc"),
...                   "method": ["same"] * 3 + ["gb"] * 3,
...                   "time_s": [1.0, 2.0, 3.0, 3.0, 1.0, 2.0]})
>>> shortlist(p, ["same", "gb"], k=3, keys=["kernel"])[["config", "method"]].values.tolist()
[['a', 'same'], ['b', 'gb'], ['c', 'same']]
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def by_prediction(d: pd.DataFrame) -> tuple:
    """``np.lexsort`` keys (least significant first) that order the rows of ``d`` by
    predicted time (``time_s``), ties by the source's time where ``d`` has it (configurations a
    floor predicts alike: an autotuner takes the one that ran fastest where it measured;
    combined sets have none), then by row order."""
    tie = d["source_time_s"].to_numpy(float) if "source_time_s" in d else np.zeros(len(d))
    return np.arange(len(d)), tie, d["time_s"].to_numpy(float)


def shortlist(pred: pd.DataFrame, methods, k: int, keys) -> pd.DataFrame:
    """The ``k`` configurations to measure per group of ``keys`` (e.g. kernel and target),
    chosen in turns: each method of ``methods``, in that order, adds the configuration it
    predicts fastest among those not yet chosen (rows of ``pred`` with ``config``, ``method``,
    ``time_s``; ties by ``source_time_s`` where given, then by row order), until ``k`` are
    chosen or every method's order is used up. Returns those rows of ``pred`` (the proposing
    method's) with ``rank`` 1..k, groups in order of appearance. A group with fewer
    configurations gets them all."""
    if k < 1:
        raise ValueError(f"shortlist: k must be at least 1 (got {k})")
    d = pred[pred["method"].isin(list(methods)) & pred["time_s"].notna()]
    if d.empty:  # no method named predicted a time: no group, nothing to choose
        return d.assign(rank=np.zeros(0, int)).reset_index(drop=True)
    turn = {m: i for i, m in enumerate(dict.fromkeys(methods))}
    group = d.groupby(list(keys), sort=False).ngroup().to_numpy()
    method = d["method"].map(turn).to_numpy()
    # one sort for all groups: by group, method in turn order, then ``by_prediction``
    order = np.lexsort((*by_prediction(d), method, group))
    config, group, method = d["config"].to_numpy()[order], group[order], method[order]
    starts = np.flatnonzero(np.r_[True, (np.diff(group) != 0) | (np.diff(method) != 0)])
    ends = np.r_[starts[1:], len(d)]
    picked, rank = [], []
    i = 0
    while i < len(starts):  # one group: its methods' runs of rows, in turn order
        j = i
        while j < len(starts) and group[starts[j]] == group[starts[i]]:
            j += 1
        queues = [iter(range(a, b)) for a, b in zip(starts[i:j], ends[i:j])]
        chosen = set()
        while queues and len(chosen) < k:
            for q in list(queues):
                row = next((r for r in q if config[r] not in chosen), None)
                if row is None:  # this method has proposed all it predicts
                    queues.remove(q)
                    continue
                chosen.add(config[row])
                picked.append(order[row])
                rank.append(len(chosen))
                if len(chosen) == k:
                    break
        i = j
    return d.iloc[picked].assign(rank=rank).reset_index(drop=True)
