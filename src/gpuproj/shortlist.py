"""Which configurations of a tuned kernel to measure on a GPU one has not tuned on.

An autotuner that can run only ``k`` of a kernel's configurations on the target takes them in
turn from several predicted orders (fastest first): the source GPU's own order (method
``same``) is right within an architecture and can be far off across one, a learned model's
order the other way round, and a shortlist that draws from both loses little where either is
right (docs/learned.md, "Ranking kernel variants"; measured in docs/accuracy.md).

>>> import pandas as pd
>>> p = pd.DataFrame({"kernel": "k", "config": list("abcabc"),
...                   "method": ["same"] * 3 + ["gb"] * 3,
...                   "time_s": [1.0, 2.0, 3.0, 3.0, 1.0, 2.0]})
>>> shortlist(p, ["same", "gb"], k=3, keys=["kernel"])[["config", "method"]].values.tolist()
[['a', 'same'], ['b', 'gb'], ['c', 'same']]
"""

from __future__ import annotations

import pandas as pd


def shortlist(pred: pd.DataFrame, methods, k: int, keys) -> pd.DataFrame:
    """The ``k`` configurations to measure per group of ``keys`` (e.g. kernel and target),
    chosen in turns: each method of ``methods``, in that order, adds the configuration it
    predicts fastest among those not yet chosen (rows of ``pred`` with ``config``, ``method``,
    ``time_s``; ties by row order), until ``k`` are chosen or every method's order is used up.
    Returns those rows of ``pred`` (the proposing method's) with ``rank`` 1..k, groups in order
    of appearance. A group with fewer configurations gets them all."""
    if k < 1:
        raise ValueError(f"shortlist: k must be at least 1 (got {k})")
    keys = list(keys)
    d = pred[pred["method"].isin(list(methods)) & pred["time_s"].notna()]
    config = d["config"].to_dict()
    picked, rank = [], []
    for _, g in d.groupby(keys, sort=False):
        own = {m: h.sort_values("time_s", kind="stable").index for m, h in
               g.groupby("method", sort=False)}
        queues = [iter(own[m]) for m in methods if m in own]
        chosen = set()
        while queues and len(chosen) < k:
            for q in list(queues):
                row = next((i for i in q if config[i] not in chosen), None)
                if row is None:  # this method has proposed all it predicts
                    queues.remove(q)
                    continue
                chosen.add(config[row])
                picked.append(row)
                rank.append(len(chosen))
                if len(chosen) == k:
                    break
    return d.loc[picked].assign(rank=rank).reset_index(drop=True)
