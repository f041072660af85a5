"""The library side of ``gpuproj predict``: one call from a profile to predictions of one or
more methods on one or more targets, with the application totals.

>>> from gpuproj.predict import predict                             # doctest: +SKIP
>>> result = predict(load("run.csv"), targets=["H100-SXM5-80GB"])    # doctest: +SKIP
>>> result.table()                                                   # doctest: +SKIP

A saved learned model (``gpuproj evaluate --train TABLE -m residual --save-model PATH``) is one
more method next to the named ones:

>>> predict(load("run.csv"), targets=["a100-sxm4-80gb"], models=["PATH"])  # doctest: +SKIP

A table measured on several GPUs predicts each target from all of them at once, the
inverse-variance weighted geometric mean of their projections (``gpuproj.combine``):

>>> predict(load("sweep.csv"), source="all", targets=["h200"])        # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .catalog import GPU, resolve
from .combine import COMBINED, combine_sources
from .errors import GpuprojError, GpuprojWarning, InputError, InputWarning
from .models import MODELS, get_model, method_list, model_class
from .models.bands import load_bands
from .models.base import LIMITER_MEANINGS, Model, Prediction, complete_sums, has_width
from .models.common import roofline_times
from .names import gpu_list, name_list
from .profiles.table import (
    ProfileTable,
    Skipped,
    problem_labels,
    problem_per_row,
    problems_of,
    require_table,
    skipped_lines,
    top_cause,
)
from .units import first_of
from .views import (
    APPLICATION_TITLE,
    KERNEL_KEYS,
    has_own_interval,
    limiter_note,
    readable_rows,
    text_columns,
)


@dataclass
class PredictionSet:
    """Predictions of several methods from one source GPU's profile, or from several GPUs'
    at once (``combined``)."""

    sources: list
    targets: list
    predictions: dict  # method -> Prediction
    skipped: list
    models: dict = field(default_factory=dict)  # method -> provenance of a model passed in
    # id -> GPU of the sources and targets: a GPU read from a file is not in the catalog
    gpus: dict = field(default_factory=dict)
    # kernel, config, target, measured_s: the profile's own times on a target, where it has
    # rows of that GPU (``_measured_on_targets``)
    measured: pd.DataFrame | None = None
    # (kernel, config) -> the problem each configuration solves, where the profile names it
    # (``profiles.table.problems_of``), so that a shortlist chooses among the variants of one
    problems: pd.Series | None = None

    def _interval_note(self, d: pd.DataFrame) -> str:
        """What the interval column of ``d`` holds, for the methods that give it a width: a
        saved model's interval calibrated on out-of-fold errors, an analytical method's range
        over the memory levels (and its extensions' alternatives)."""
        wide = {m for m, g in d.groupby("method", observed=True)
                if has_width(g["low_s"], g["high_s"]).any()}
        kinds = []
        if wide - set(self.models):
            kinds.append("the method's own range over memory levels and over the "
                         "alternatives of the extensions it uses (a working set near a cache's "
                         "size, the FP issue share, the block-slot fill)")
        if wide & set(self.models):
            kinds.append("a saved model's interval calibrated on out-of-fold errors (its "
                         "coverage in the assumptions)")
        return "; interval: " + " or ".join(kinds) if kinds else ""

    def gpu(self, gpu_id: str) -> GPU:
        """The source or target GPU with id ``gpu_id`` (one read from a file too)."""
        return self.gpus[gpu_id] if gpu_id in self.gpus else resolve(gpu_id)

    @property
    def combined(self) -> bool:
        """Each target predicted from several sources at once: the rows' ``source`` is
        "combined", ``sources`` counts the projections behind each, and there is no speed-up
        (``source_time_s`` is the sources' weighted geometric mean, see ``gpuproj.combine``)."""
        return len(self.sources) > 1

    @property
    def source(self) -> str:
        """The source GPU's id; an error for a combined set, whose pictures of one source's
        rooflines have no single source to draw."""
        if self.combined:
            raise GpuprojError(f"these predictions combine {', '.join(self.sources)}: give one "
                               "source for a view of one source's profile")
        return self.sources[0]

    @property
    def source_label(self) -> str:
        """What the predictions were projected from, in words."""
        return (f"{', '.join(self.sources)} (combined)" if self.combined
                else self.sources[0])

    def table(self) -> pd.DataFrame:
        """One row per kernel, configuration, target and method, times in seconds; empty,
        with the columns, where every row was skipped. The columns:

        - ``kernel``, ``config``, ``source`` (``combined`` for several sources), ``target``,
          ``method``;
        - ``source_time_s``: the time measured on the source (combined: the sources' weighted
          geometric mean), ``time_s``: the prediction on the target, ``speedup`` (one source):
          ``source_time_s / time_s``;
        - ``measured_s``, a column only where the profile holds rows of a target: the time
          measured there of the same kernel and configuration (NaN where it has none);
        - ``low_s``/``high_s``: the method's own interval: the hierarchical methods' range over
          the memory levels (and their extensions' alternatives), a learned model's interval
          calibrated on out-of-fold errors; ``time_s`` twice for a method without one;
        - ``band_low_s``/``band_high_s``: the 90 % error band, how far the method has been off
          on real cross-GPU data for such a GPU pair (``models.bands``; NaN where none was
          measured for the method);
        - ``limiter``: what bounds the row on the target in the method's projection, the
          ceiling it comes nearest (which it need not reach): the resource whose time at the
          target's ceiling is the longest, named by the kernel's data type (``fp32``,
          ``fp64``, ``fp16``, ``int``) where that is compute, else ``dram``, ``l2``, ``l1``,
          ``shared``; ``issue`` where ``hierarchical-ext``'s issue rate holds that compute
          ceiling below the FP peak; ``parallelism`` or ``latency`` where ``hierarchical-ext``
          finds too few blocks to fill the target or too few loads in flight to hide memory
          latency;
          ``unknown`` where the target lacks the ceiling of what bounds the row on the
          source; the one ratio a baseline scales by (``dram`` for ``bandwidth``, the data
          type for ``compute``, ``measured`` for ``same``); ``learned`` for a learned model
          (``models.base.LIMITER_MEANINGS``). Combined: the limiter of the source weighted
          most;
        - ``launches``: the kernel row's launches in the application (the totals of
          ``application()`` weigh ``time_s`` by them);
        - ``t_compute_s``, ``t_dram_s``, ``t_l2_s``, ``t_l1_s``, ``t_shared_s`` (a method that
          gives them; one source): the time the row's work takes on the target at each
          resource's ceiling alone, the longest naming the limiter. The hierarchical methods:
          the target's FLOPs at the kernel-specific compute ceiling and the bytes of each
          level at its bandwidth; NaN where the profile does not count the quantity or the
          target lacks the ceiling. The quantitative methods: ``t_compute_s`` and
          ``t_dram_s`` of their model. ``time_s`` is no sum of them; NaN for other methods;
        - ``occupancy_source``, ``occupancy_target`` (``efficiency``; one source): the
          launch's theoretical occupancy on each GPU (resident warps per SM over the most an
          SM holds), by whose ratio the time scales; 1 on both where the ratio cannot be known
          (no block size, a limit the catalog lacks, no block fitting the source);
        - ``sources`` (combined): the number of sources whose projections were combined."""
        d = _stacked([p.df.drop(columns=["row"]) for p in self.predictions.values()])
        if "time_s" not in d:  # (no method at all: no columns)
            return d
        at = d.columns.get_loc("time_s") + 1
        if not self.combined:
            d.insert(at, "speedup", d["source_time_s"] / d["time_s"])
            at += 1
        if self.measured is not None and len(self.measured):
            keys = ["kernel", "config", "target"]
            got = d[keys].astype(str).merge(self.measured, on=keys, how="left")
            d.insert(at, "measured_s", got["measured_s"].to_numpy(float))
        return d

    def application(self) -> pd.DataFrame:
        """Per method and target, the totals of ``table()``'s rows (time x launches): ``time_s``,
        ``source_time_s`` and ``speedup`` (one source), ``measured_s`` (where the profile has
        every row of the total measured on the target), the interval and the band (missing
        where a row has none), and ``rows``, the kernel rows added."""
        frames = []
        measured = self._measured_totals()
        for m, p in self.predictions.items():
            a = p.application()
            if self.combined:  # a sum of per-target weighted means of the sources' times
                a = a.drop(columns=["source_time_s", "speedup"])
            if measured is not None:
                a.insert(a.columns.get_loc("time_s") + 1, "measured_s",
                         a["target"].astype(str).map(measured.get(m, {})).astype(float))
            a.insert(0, "method", m)
            frames.append(a)
        return _stacked(frames)

    def _measured_totals(self) -> dict | None:
        """{method: {target: measured time x launches summed over the method's rows}} where
        every row has a measured time; None where the profile has no target's rows."""
        if self.measured is None or not len(self.measured):
            return None
        d = self.table()
        w = d["measured_s"] * d["launches"]
        total = complete_sums(w.groupby([d["method"].astype(str), d["target"].astype(str)]))
        out: dict = {}
        for (m, t), v in total.items():
            out.setdefault(m, {})[t] = v
        return out

    def shortlist(self, k: int) -> pd.DataFrame:
        """The ``k`` configurations of each kernel to measure on each target, taken in turn
        from the methods' predicted orders, fastest first, in the order the methods were given
        (``gpuproj.shortlist``): ``rank``, ``config``, ``method`` (the one that proposed it),
        its predicted ``time_s``, the source's time (combined: the number of sources) and,
        where the profile holds the target's times, ``measured_s``. Where the profile names
        the configurations' problems, each kernel's ``problem`` has its own shortlist, and one
        where no kernel has MIN_CONFIGS configurations of one problem is a ``GpuprojError``
        (``evaluate.why_no_variants``): the configurations are then problem sizes, not
        variants to choose among."""
        from .shortlist import shortlist

        keys = ["kernel", "target"] if self.problems is None else ["kernel", "problem", "target"]
        cols = [*keys, "rank", "config", "method", "time_s",
                "sources" if self.combined else "source_time_s"]
        d = self.with_problems(self.table())
        if d.empty:  # nothing predicted: no rows, the same columns
            return pd.DataFrame(columns=cols)
        if self.problems is not None:
            from .evaluate import why_no_variants

            why = why_no_variants(d, ["method", *keys], "predicted for a target",
                                  "a shortlist chooses among")
            if why:
                raise GpuprojError(f"nothing to shortlist: {why}")
        # a table that holds the target's times shows how the picks fare there
        cols += ["measured_s"] if "measured_s" in d else []
        return shortlist(d, list(self.predictions), k, keys)[cols]

    def with_problems(self, d: pd.DataFrame) -> pd.DataFrame:
        """``d`` (rows of ``table()``) with each configuration's ``problem``
        (``problem_labels``), where the profile names problems; else ``d`` as it is."""
        if self.problems is None:
            return d
        return d.assign(problem=problem_labels(problem_per_row(d, self.problems)))

    def to_json(self, shortlist: int | None = None) -> dict:
        """Everything as plain data, the application totals fastest first per method as
        printed (``ranked_application``); with ``shortlist`` (k) also ``shortlist(k)``."""
        def recs(df):
            return df.replace({np.nan: None}).to_dict(orient="records")

        d = self.table()
        return {
            "source": COMBINED if self.combined else self.sources[0],
            "sources": self.sources, "targets": self.targets,
            "predictions": recs(d),
            # per method, whether low_s / high_s is an interval of its own anywhere (else they
            # repeat time_s, a point, as a one-level hierarchical row does too), and what the
            # limiters named mean: a reader of the JSON has no table notes
            "interval": {m: bool(has_width(g["low_s"], g["high_s"]).any())
                         for m, g in d.groupby("method", sort=False)} if len(d) else {},
            "limiters": {x: LIMITER_MEANINGS[x] for x in LIMITER_MEANINGS
                         if len(d) and (d["limiter"] == x).any()},
            "application": recs(self.ranked_application()),
            **({"shortlist": recs(self.shortlist(shortlist))} if shortlist else {}),
            "assumptions": {m: p.assumptions for m, p in self.predictions.items()},
            "models": self.models,
            "bands": _bands_provenance(),
            "skipped": [{"row": s.row, "reason": s.reason} for s in self.skipped],
        }

    def ranked_application(self) -> pd.DataFrame:
        """``application()`` with each method's targets fastest first: the view for choosing
        a GPU among several."""
        a = self.application()
        if a.empty:
            return a
        order = pd.Categorical(a["method"], categories=list(self.predictions), ordered=True)
        return (a.assign(_order=order).sort_values(["_order", "time_s"], kind="stable")
                .drop(columns="_order").reset_index(drop=True))

    def __repr__(self) -> str:
        n = sum(len(p.df) for p in self.predictions.values())
        # a comparison of many GPUs (targets='all'): their number, not a paragraph of ids
        tg = (", ".join(self.targets) if len(self.targets) <= 4
              else f"{len(self.targets)} targets ({', '.join(self.targets[:2])}, ...)")
        return (f"<PredictionSet {self.source_label} -> {tg}: "
                f"{', '.join(self.predictions) or 'no method'}, {n} predictions, "
                f"{len(self.skipped)} skipped; .table(), .application(), .to_json()>")

    def _repr_html_(self) -> str:
        """What a notebook shows: the application totals, then each kernel and target, a note
        on totals over fewer rows and the assumptions, as the terminal shows them
        (``cli.predict.print_predictions``; ``table()`` and ``application()`` keep the times in
        seconds)."""
        import html

        skipped = "".join(f"<p><small>{html.escape(ln)}</small></p>"
                          for ln in skipped_lines(self.skipped))
        d = self.table()
        if d.empty:
            return f"<p>{html.escape(repr(self))}</p>" + skipped
        own = has_own_interval(d)
        parts = [f"<p><b>Projected from {html.escape(self.source_label)}</b>: "
                 f"{APPLICATION_TITLE[0].lower()}{APPLICATION_TITLE[1:]}</p>",
                 text_columns(self.ranked_application(), ["method", "target"], own).to_html(
                     index=False),
                 "<p>Per kernel</p>",
                 text_columns(readable_rows(d), KERNEL_KEYS, own).to_html(index=False,
                                                                          max_rows=60)]
        parts += [f"<p>{html.escape(n)}</p>" for n in (self.partial_totals(),
                                                       self.unbounded_totals()) if n]
        parts += [f"<p><small>{html.escape(note)}</small></p>"
                  for note in (self.bands_note(d), limiter_note(d["limiter"]))]
        parts.append(skipped)
        lines = self.assumption_lines()
        if lines:
            parts += ["<p>Assumptions (of the methods in brackets):</p><ul>",
                      *(f"<li>{html.escape(ln)}</li>" for ln in lines), "</ul>"]
        return "".join(parts)

    def bands_note(self, d) -> str:
        """What the band and interval columns mean, under the tables, with what each method's
        band held on data it was not fitted on (``held_out_note``)."""
        banded = [m for m, g in d.groupby("method", observed=True, sort=False)
                  if g["band_low_s"].notna().any()] if "band_low_s" in d else []
        held = held_out_note(banded)
        if held and self.combined:
            # the check was of one source's projections; combined, the band held as often or
            # more on every public table (docs/accuracy.md, "Several source GPUs")
            held += " (of one source's projections; combined, as often or more)"
        return ("90 % band: how far the method has been off on real cross-GPU data "
                "(docs/accuracy.md, 'Error bands')" + held + self._interval_note(d))

    def partial_totals(self) -> str | None:
        """A note naming the methods (and targets) whose application totals add fewer kernel
        rows than another's (rows skipped, or, combined, rows no other source measured for a
        target that is a source too), or None: such a total is not comparable with the
        others, and its smaller source total is the only other sign of it."""
        rows = {(m, t): set(g) for m, p in self.predictions.items() if len(p.df)
                for t, g in p.df.groupby("target", observed=True, sort=False)["row"]}
        every = set().union(*rows.values()) if rows else set()
        targets = {t for _, t in rows}
        short = [f"{m}{f' -> {t}' if len(targets) > 1 else ''} {len(r)}"
                 for (m, t), r in rows.items() if len(r) < len(every)]
        if not short:
            return None
        # a comparison of many targets: the first ones say what happened
        return (f"application totals add {len(every)} kernel rows, those of "
                f"{first_of(short, 6)} (rows skipped): compare such a total with the "
                "source's on the same rows, not with the other totals")

    def unbounded_totals(self) -> str | None:
        """A note naming the totals (method, target) of which a third or more of the source
        time lies in rows whose limiter is ``unknown`` (bound on the source by a level the
        target's catalog entry lacks, projected from the other levels alone), or None: their
        own interval does not see it, and a target ranked fastest may owe it to the gap (the
        H100 suite on the B200, without an L2 ceiling: 4 rows, 80 % of the time)."""
        d = self.table()
        if d.empty or "source_time_s" not in d:
            return None
        w = d["source_time_s"] * d["launches"]
        by = [d["method"].astype(str), d["target"].astype(str)]
        share = w.where(d["limiter"] == "unknown", 0.0).groupby(by).sum() / w.groupby(by).sum()
        rows = (d["limiter"] == "unknown").groupby(by).sum()
        one = d["method"].nunique() == 1
        big = [f"{t}{'' if one else f' ({m})'}: {rows[m, t]} rows, {100 * share[m, t]:.0f} %"
               for (m, t) in share.index if share[m, t] >= 1 / 3]
        if not big:
            return None
        return (f"totals with much of the source time bound by a ceiling the target lacks "
                f"(limiter unknown), projected from the other levels alone: "
                f"{first_of(big, 6)}; their totals may be too fast, beyond their interval")

    def assumption_lines(self) -> list[str]:
        """Each assumption once, with the methods that made it (a catalog value used for every
        target and method would otherwise repeat for each). Notes on ceilings
        (``catalog.CeilingNote``) are grouped: a GPU's ceilings at peak (or missing) share one
        line, GPUs with the same ones and methods share it too, as do GPUs with the same
        stand-in for a missing ceiling, and a ceiling derived against several GPUs lists their
        ratios on one line; a comparison of many targets otherwise made a wall of notes.
        A source GPU's ceiling at peak for some targets only (derived against the others,
        which have a measured value) says for which."""
        seen: dict[str, list] = {}
        made_for: dict[str, dict] = {}  # note -> the targets it was made for, in order
        for m, p in self.predictions.items():
            for t, notes in p.assumptions.items():
                for n in notes:
                    if m not in seen.setdefault(n, []):
                        seen[n].append(m)
                    made_for.setdefault(n, {})[t] = None
        every = len(self.predictions)

        def who(ms):
            return "all methods" if len(ms) == every > 1 else ", ".join(ms)

        def which_targets(n, ms, skip=()) -> str:
            """The targets of methods ``ms`` (but ``skip``) note ``n`` was made for, in
            words; '' where it was made for each of them."""
            some = [t for t in made_for[n] if t not in skip]
            targets = [t for t in dict.fromkeys(t for m in ms
                                                for t in self.predictions[m].assumptions)
                       if t not in skip]
            if not some or len(some) == len(targets):
                return ""
            if len(some) <= 3:
                return ", ".join(some)
            rest = [t for t in targets if t not in made_for[n]]
            if len(rest) <= 3:
                return f"every target but {', '.join(rest)}"
            return f"{len(some)} of {len(targets)} targets"

        def scope(n, ms) -> str:
            """' for T' where a note on ``n.gpu`` holds for some other targets only."""
            w = which_targets(n, ms, skip={n.gpu})
            return f" for {w}" if w else ""

        def for_targets(n, ms) -> str:
            """'for T: ' where a plain note holds for some of the targets only and does not
            name them itself: with several targets, 'I = 8 -> 4' and 'I = 8 -> 8' said
            nothing of which target had which."""
            if all(t in str(n) for t in made_for[n]):
                return ""
            w = which_targets(n, ms)
            return f"for {w}: " if w else ""

        # a group of notes on ceilings per key, its line in the place of its first note
        groups: dict = {}  # key -> (notes, methods)
        order: list = []  # plain lines and group keys
        for n, ms in seen.items():
            kind = getattr(n, "kind", None)
            if kind is None:
                order.append(f"{for_targets(n, ms)}{n} ({who(ms)})")
                continue
            key = ((kind, n.gpu, scope(n, ms) if kind == "peak" else "")
                   if kind in ("peak", "missing")
                   else (kind, n.gpu, n.ceiling) if kind == "derived" else (kind, n.ceiling, n.ref))
            if key not in groups:
                order.append(key)
            notes, methods = groups.setdefault(key, ([], []))
            notes.append(n)
            methods += [x for x in ms if x not in methods]
        # GPUs with the same ceilings at peak (or missing), for the same methods, share a line
        same: dict = {}
        for key, (notes, ms) in groups.items():
            if key[0] in ("peak", "missing"):
                same.setdefault((key[0], key[2], tuple(n.ceiling for n in notes), tuple(ms)),
                                []).append(key)
        text = {}
        for (kind, where, ceilings, ms), keys in same.items():
            gpus = [k[1] for k in keys]
            say = (f"at peak (no measured value){where}:" if kind == "peak"
                   else "has no" if len(gpus) == 1 else "have no")
            text[keys[0]] = f"{', '.join(gpus)} {say} {', '.join(ceilings)} ({who(ms)})"
        for key, (notes, ms) in groups.items():
            if key[0] in ("peak", "missing"):
                continue
            first = notes[0]
            if len(notes) == 1:
                line = str(first)
            elif key[0] == "derived":
                line = (f"{first.gpu} {first.ceiling} derived: peak x measured/peak of "
                        + ", ".join(f"{n.ref} {n.ratio:.3f}" for n in notes))
            else:  # instead
                line = (f"{', '.join(n.gpu for n in notes)} have no {first.ceiling}: "
                        f"{first.ref} used")
            text[key] = f"{line} ({who(ms)})"
        # a group's later GPUs have no line of their own
        return [k if isinstance(k, str) else text[k] for k in order
                if isinstance(k, str) or k in text]


def _stacked(frames: list) -> pd.DataFrame:
    """``frames`` one under the other, labels as plain strings; where all are empty, the first
    (its columns), as pandas warns about the column types of empty frames in a concat."""
    frames = [f for f in frames if len(f)] or frames[:1]
    d = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    # the models keep labels as categoricals (fast for 10^6 rows); a user's frame has plain
    # strings, whose groupby lists no target without rows
    for c in d.columns:
        if isinstance(d[c].dtype, pd.CategoricalDtype):
            d[c] = d[c].astype(d[c].cat.categories.dtype)
    return d


def _bands_provenance() -> dict:
    """What the ``band_low_s``/``band_high_s`` columns are, for machine readers."""
    b = load_bands()
    return {"coverage": b.get("coverage"), "offset": b.get("offset"),
            "score": b.get("weighting"), "tables": sorted(b.get("tables", {})),
            "methods": sorted(b.get("methods", {})), "held_out": b.get("held_out", {})}


def held_out_note(methods) -> str:
    """What the bands of ``methods`` held on the tables of a data source they were fitted
    without (leave one source out, ``error_bands.json``'s ``held_out``): a 90 % band covers
    less there on average, and much less on some tables (docs/accuracy.md, "Error bands"),
    which its name alone would not say. Empty where the bands file has no such check."""
    held = load_bands().get("held_out", {})
    rows = [(m, held[m]) for m in methods if m in held]
    if not rows:
        return ""

    def pct(h, key):
        return f"{100 * h[key]:.0f}"

    (m, h), rest = rows[0], rows[1:]
    return ("; on the tables of data sources it was not fitted on, the band held the measured "
            f"time in {pct(h, 'mean')} % of the pairs (mean over the tables, "
            f"{pct(h, 'lowest')}-{pct(h, 'highest')} % per table) for {m}"
            + "".join(f", {pct(h, 'mean')} % ({pct(h, 'lowest')}-{pct(h, 'highest')} %) for {m}"
                      for m, h in rest))


# the method to reach for first: the lowest error on most public tables and on our H100 <-> H200
# suite (docs/accuracy.md, scoreboard), where the paper's `hierarchical` errs 18.5 % against 4.1
DEFAULT_METHOD = "hierarchical-ext"
# the default for a profile with times but no counts (an Nsight Systems timeline, ncu's default
# details page, a table of times): the best baseline on 6 of the 8 cross-GPU tables
# (docs/accuracy.md, scoreboard), which needs nothing but the catalog's DRAM bandwidths
TIMES_ONLY_METHOD = "bandwidth"


def sass_target_counts(rows: ProfileTable, sass, source, targets, target_sass=None) -> dict:
    """{target id: FP counts on the target} from the SASS of ``sass`` (a .cu file, cubin,
    fatbin or executable) compiled/disassembled for the source's and each target's
    architecture (Van Lanker Sec. 4.2, ``gpuproj.sass.target_counts``); the targets' code from
    ``target_sass`` where given, so that ``sass`` may be the source's alone (an Nsight Compute
    source page, whose counts the comparison carries over). Targets that are not NVIDIA GPUs
    keep the source counts. Code that holds none of the profile's kernels is an error: the
    comparison would change nothing (kernels some listing lacks are noted)."""
    from .sass import load_sass, resolve_kernel, target_counts

    def nvidia(g):
        return g.vendor.upper() == "NVIDIA" and g.isa.startswith("sm_")

    if not nvidia(source):
        raise GpuprojError(f"--sass compares NVIDIA machine code: the source GPU {source.id} is "
                           f"{source.vendor} ({source.isa})")
    src_prog = load_sass(sass, source.isa)
    kernels = list(dict.fromkeys(rows.df["kernel"].astype(str)))

    def none_of_them(prog, path, whose):
        if kernels and not any(resolve_kernel(k, prog) is not None for k in kernels):
            raise InputError(f"no kernel of the profile is in this {whose} code, so nothing "
                             f"would be compared (its functions: "
                             f"{first_of(list(prog.functions), 3) or 'none'}; the profile's "
                             f"kernels: {first_of(kernels, 3)})", path=str(path))

    out = {}
    for t in targets:
        if not nvidia(t):
            continue
        if target_sass is None and src_prog.fmt == "ncu-source-csv" and t.isa != source.isa:
            # the page names no architecture: read "for" the target it would pass the source's
            # code off as the target's, and the comparison would change nothing
            raise InputError(f"an Nsight Compute source page holds the code of the GPU it was "
                             f"profiled on ({source.isa}), not of the target {t.id} ({t.isa}): "
                             "give the targets' code with --target-sass (a binary with their "
                             "architectures, or a listing of one)", path=str(sass))
        try:
            tgt_prog = load_sass(sass if target_sass is None else target_sass, t.isa)
        except InputError as e:  # the listing or binary has no code for this target
            raise InputError(f"{e.message} (the target {t.id})", path=e.path,
                             field=e.field) from None
        if not out:  # only where a target is compared: a source alone compares nothing
            none_of_them(src_prog, sass, "source's")
        none_of_them(tgt_prog, sass if target_sass is None else target_sass,
                     f"target {t.id}'s")
        out[t.id] = target_counts(rows, src_prog, tgt_prog)
    return out


def _model_stem(path) -> str:
    """'models/residual.json' -> 'residual' (the name ``save_model`` was given)."""
    name = Path(path).name
    for ext in (".json", ".npz"):
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def load_saved_model(path) -> Model:
    """A model saved by ``gpuproj evaluate --train ... --save-model PATH`` (``PATH``,
    ``PATH.json`` or ``PATH.npz``), read with ``learned.load_model`` (no code executed; a model
    saved under other library versions warns ``ModelVersionWarning``). A missing, foreign or
    damaged file raises ``InputError`` naming it."""
    import zipfile
    import zlib

    from .learned.persistence import load_model

    try:
        m = load_model(path)  # raises InputError itself for missing or foreign files
    # a damaged .npz or a hand-edited .json fails inside numpy/zipfile or while rebuilding
    except (zipfile.BadZipFile, zlib.error, EOFError, KeyError, IndexError, TypeError,
            ValueError, AttributeError) as e:
        raise InputError(f"not a readable gpuproj model ({type(e).__name__}: {e})",
                         path=path) from None
    if not isinstance(m, Model):
        raise InputError("not a gpuproj model", path=path)
    return m


def _provenance(model: Model, path) -> dict:
    """What a model passed to ``predict`` is, for the JSON output: file, class, training data,
    interval coverage and the library versions it was saved with."""
    info = {"path": None if path is None else str(path), "class": type(model).__name__,
            "name": model.name}
    train = getattr(model, "train_info_", None)
    if train:
        info["trained_on"] = {"gpus": list(train.get("gpus", [])), "pairs": train.get("pairs"),
                              "rows": train.get("rows"), "kernels": train.get("kernel_names"),
                              "sha256": train.get("hash")}
    if hasattr(model, "conformal_"):
        info["coverage"] = model.coverage if model.conformal_ is not None else None
    if getattr(model, "saved_versions_", None):
        info["versions"] = dict(model.saved_versions_)
    return info


def _labelled(models, taken) -> list:
    """[(label, model, path or None)]: each model named by its ``name``, or by its file stem
    where that name is taken (by a method or an earlier model), else ``name-2``, ``name-3``."""
    out, taken = [], set(taken)
    for item in models:
        if isinstance(item, (str, Path)):
            path, m, stem = item, load_saved_model(item), _model_stem(item)
        elif isinstance(item, Model):
            path, m, stem = None, item, None
        else:
            raise TypeError(f"models: expected a fitted gpuproj model or the path of a saved "
                            f"one, got {type(item).__name__}")
        cands = [m.name, stem] + [f"{m.name}-{k}" for k in range(2, len(models) + len(taken) + 3)]
        label = next(c for c in cands if c and c not in taken)
        taken.add(label)
        out.append((label, m, path))
    return out


def predict(table: ProfileTable, *, targets, source=None, methods=None,
            kernel: str | None = None, sass=None, target_sass=None,
            model_params: dict | None = None, models=()) -> PredictionSet:
    """Predict the kernels of ``table`` (a ``ProfileTable``: ``profiles.load(path)``, or
    ``ProfileTable.from_frame(df)``) measured on ``source`` for each of ``targets`` (a GPU
    name or a list of names; ``all`` or wildcards on catalog ids such as ``mi3*`` select
    several, see ``catalog.select``). Names separated by commas are several, as on the command
    line (``targets="h100*,mi3*"``, ``methods="bandwidth,roofline"``; ``gpuproj.names``).

    ``methods``: a name, a list of names, or "all" (every analytical method the table's
    columns allow); default ``DEFAULT_METHOD`` (hierarchical-ext), ``TIMES_ONLY_METHOD``
    (bandwidth, with an ``InputWarning``) for a table with no counts it reads, or none when
    ``models`` are given. ``models``: fitted models (any ``models.base.Model``, e.g. a trained
    ``learned.ResidualHybrid``) or paths of models saved by ``gpuproj evaluate --train TABLE
    --save-model PATH``; each is one more method, named by its ``name``, or by its file stem
    where a method already has that name; its interval is its own (calibrated on out-of-fold
    errors, at 90 % unless the learned model was trained with another ``coverage``).
    ``source`` may be omitted when the table holds one GPU. ``sass``: the kernels' code, whose
    comparison gives the hierarchical methods the targets' FP counts
    (``sass_target_counts``); ``target_sass``: the targets' code, where ``sass`` is the
    source's alone.

    Several sources (a list of names, or "all": every GPU of the table) predict each target
    from all of them at once: per method, kernel and configuration (matched by name across
    the GPUs) the inverse-variance weighted geometric mean of the sources' projections, which
    errs less than one source's (``gpuproj.combine``; docs/accuracy.md, "Several source
    GPUs"). A target that is also a source is predicted from the others.

    No row predicted by any method is a ``GpuprojError`` saying why (an empty result told
    nothing), rows skipped beside predicted ones are in ``skipped``.
    """
    require_table(table)
    models = [models] if isinstance(models, (str, Path, Model)) else list(models or ())
    srcs = _sources(table, source)
    several = len(srcs) > 1
    rows = _kernel_rows(table, srcs, kernel)
    srcs = [s for s in srcs if s.id in rows]  # of several, those that measured such a kernel
    said = beyond_roofline(rows, {s.id: s for s in srcs})
    if said:
        warnings.warn(said, RooflineWarning, stacklevel=2)
    if several:  # combined per kernel and configuration
        for r in rows.values():
            r.require_unique_configs()
    tgts = gpu_list(targets) if targets else []  # h200,H200: once
    if not tgts:
        raise GpuprojError("no target GPU named (--target NAME[,NAME], targets=[...] in the "
                           "API)")
    if methods is None:
        methods = [] if models else _default_method(rows)
    names = _methods_to_run(methods, rows)
    extra = _labelled(models, names)
    if not names and not extra:
        raise GpuprojError("no method to predict with (give methods or models)")
    fitted = [(n, None) for n in names] + [(label, (m, path)) for label, m, path in extra]
    per_source, skipped = _project_each_source(rows, srcs, tgts, fitted, several, sass,
                                               target_sass, model_params)
    preds, unmeasured = _combine_per_method(per_source, rows, tgts, several)
    skipped = [*table.skipped, *skipped, *unmeasured]
    predicted = any(len(p.df) for p in preds.values())
    # a method that predicted nothing beside others that did would only show as a missing
    # line of the totals (with none predicted at all, the error below says it)
    if predicted:
        for label, p in preds.items():
            if p.df.empty:
                warnings.warn(f"{label} predicted none of the kernel rows (see the skipped "
                              "rows for why)", InputWarning, stacklevel=2)
    for label, p in preds.items():
        for c in p.cautions:
            warnings.warn(f"{label}: {c}", MethodWarning, stacklevel=2)
    if not predicted:
        _nothing_predicted(table, skipped, methods)
    provenance = {label: _provenance(*saved) for label, saved in fitted if saved is not None}
    return PredictionSet([s.id for s in srcs], [t.id for t in tgts], preds, skipped,
                         provenance, {g.id: g for g in (*srcs, *tgts)},
                         _measured_on_targets(table, tgts, kernel), problems_of(table.df))


def _kernel_rows(table: ProfileTable, srcs: list, kernel: str | None) -> dict:
    """{source id: its rows of the kernels ``kernel`` selects}. Of several sources, only those
    that measured such a kernel (a source without one sits this out; none at all is an
    ``InputError``); one source's rows may be none (the methods' skips say why)."""
    if len(srcs) == 1:
        return {srcs[0].id: table.on(srcs[0].id).select(kernel)}
    chosen = table.select(kernel)
    rows = {s.id: r for s in srcs if len(r := chosen.on(s.id))}
    if not rows:
        raise InputError(f"no kernel matching --kernel '{kernel}' was measured on "
                         f"{', '.join(s.id for s in srcs)}", path=table.origin or None)
    return rows


def _methods_to_run(methods, rows: dict) -> list:
    """The method names ``methods`` gives (a name, a list of names, or "all": every analytical
    method the columns of ``rows``, a ``ProfileTable`` per source id, allow), in ``MODELS``'
    order for "all"; a learned method, which needs training, is a ``GpuprojError``."""
    names = method_list(methods)
    if names == ["all"]:
        from .evaluate import applicable_methods

        usable = {n for r in rows.values() for n in applicable_methods(r, list(MODELS))}
        names = [n for n in MODELS if n in usable]
    for n in names:
        if getattr(model_class(n), "trained", False):
            raise GpuprojError(f"{n} is a learned method: train and save it with `gpuproj "
                               f"evaluate --train TABLE -m {n} --save-model PATH`, then pass "
                               "--model PATH (models=[PATH] in the API)")
    return names


def _project_each_source(rows: dict, srcs: list, tgts: list, fitted: list, several: bool,
                         sass, target_sass, model_params: dict | None) -> tuple[dict, list]:
    """({label: [its Prediction from each source]}, the rows they skipped): every method of
    ``fitted`` ((label, None) for a method by name, (label, (model, path)) for a given model)
    run on each source's ``rows``; of ``several`` sources, each predicts the targets other
    than itself. The hierarchical methods take the targets' FP counts from ``sass``
    (``sass_target_counts``)."""
    per_source: dict[str, list] = {label: [] for label, _ in fitted}
    skipped = []
    for src in srcs:
        its = [t for t in tgts if not several or t.id != src.id]
        if not its:
            continue
        params = {k: dict(v) for k, v in (model_params or {}).items()}
        if sass is not None:
            counts = sass_target_counts(rows[src.id], sass, src, its, target_sass)
            for label, saved in fitted:
                if saved is None and label.startswith("hierarchical"):
                    params.setdefault(label, {})["target_counts"] = counts
        for label, saved in fitted:
            m = get_model(label, **params.get(label, {})) if saved is None else saved[0]
            p = m.predict(rows[src.id], src, its)
            if saved is not None and label != m.name:  # which of two same-named models
                p.df["method"] = pd.Categorical([label] * len(p.df))
            per_source[label].append(p)
            skipped.extend(p.skipped)
    return per_source, skipped


def _combine_per_method(per_source: dict, rows: dict, tgts: list,
                        several: bool) -> tuple[dict, list]:
    """({label: Prediction}, skipped records): each method's prediction from its one source,
    or of ``several`` sources their combination per kernel and configuration (``_combined``),
    with the kernel rows that only a target which is also a source measured skipped."""
    if not several:
        return {label: ps[0] for label, ps in per_source.items()}, []
    if not any(per_source.values()):
        raise GpuprojError(f"nothing to predict: a target is predicted from the other "
                           f"sources, and only {', '.join(rows)} measured these kernels")
    # one row number per (kernel, config) of all the sources, shared by every method
    keys = pd.concat([r.df[["kernel", "config"]] for r in rows.values()]).drop_duplicates()
    numbers = {k: i for i, k in enumerate(keys.itertuples(index=False, name=None))}
    return ({label: _combined(ps, numbers) for label, ps in per_source.items()},
            _unmeasured_elsewhere(rows, tgts))


def _nothing_predicted(table: ProfileTable, skipped: list, methods) -> None:
    """The error for a prediction of no row: why (the methods' skips; the reader's cannot be
    all rows, that is the reader's error) and which methods the profile's columns suit."""
    from .evaluate import applicable_methods

    why = top_cause(skipped, besides=table.skipped)
    can = applicable_methods(table)
    hint = ("" if method_list(methods or []) == ["all"] or not can
            else f"; the profile's columns suit the methods {','.join(can)}")
    raise GpuprojError("no kernel could be predicted" + (f" ({why})" if why else "") + hint)


def _measured_on_targets(table: ProfileTable, targets: list, kernel: str | None):
    """kernel, config, target, measured_s of the rows ``table`` holds of each target (the
    median of repeated rows), those ``kernel`` selects; None where it holds none."""
    frames = []
    for t in targets:
        if t.id in table.gpus:
            on = table.on(t.id)
            try:
                on = on.select(kernel)
            except InputError:  # the source's rows matched; the target has none that do
                continue
            frames.append(on.df[["kernel", "config"]].astype(str).assign(
                target=t.id, measured_s=on.df["time_s"].to_numpy(float)))
    if not frames:
        return None
    d = pd.concat(frames, ignore_index=True)
    return d.groupby(["kernel", "config", "target"], as_index=False, sort=False)["measured_s"] \
        .median()


def _default_method(rows: dict) -> str:
    """``DEFAULT_METHOD``, or ``TIMES_ONLY_METHOD`` where no row of any source (``rows``: a
    ``ProfileTable`` per catalog id) has the counts it needs, saying so."""
    from .evaluate import method_gaps

    gaps = [method_gaps(r, [DEFAULT_METHOD])[DEFAULT_METHOD] for r in rows.values()]
    if not all(gaps):
        return DEFAULT_METHOD
    warnings.warn(InputWarning(
        f"the profile has times but no counts ({gaps[0]}): predicted with "
        f"{TIMES_ONLY_METHOD}, the best baseline on the public data; an Nsight Compute profile "
        f"(gpuproj profile) has the counts"), stacklevel=3)
    return TIMES_ONLY_METHOD


class RooflineWarning(GpuprojWarning):
    """Rows measured faster than their source GPU's datasheet roofline allows."""


class MethodWarning(GpuprojWarning):
    """A method's doubt about its own projections (``Projection.cautions``)."""


def beyond_roofline(rows: dict, gpus: dict | None = None) -> str | None:
    """What the rows say that no GPU can do: how many of each GPU's rows (``rows``: a
    ``ProfileTable`` per GPU id; ``gpus``: the GPU of an id, one read from a file) ran faster
    than its datasheet roofline allows, their FLOPs at the FMA peak of their precision or their
    DRAM bytes at the DRAM bandwidth taking longer than the measured time, in one sentence;
    None where none did. Every method that reads the counts projects from them as they are.
    The NeuSight conv tables have such rows: their FLOPs are the convolution's nominal ones,
    whatever algorithm cuDNN chose (Winograd, for 3 x 3 filters, does fewer)."""
    parts, worst = [], (0.0, "")
    for gid, table in rows.items():
        gpu, df = (gpus or {}).get(gid) or resolve(gid), table.df
        r = roofline_times(df, gpu)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.fmax(r["compute"], r["dram"]) / df["time_s"].to_numpy(float)
        fast = np.flatnonzero(ratio > 1.01)  # beyond the rounding of a tabulated time
        if not len(fast):
            continue
        parts.append(f"{len(fast)} of {int((~np.isnan(ratio)).sum())} "
                     + ("rows measured " if not parts else "") + f"on {gpu.id}")
        i = fast[np.argmax(ratio[fast])]
        if ratio[i] > worst[0]:
            worst = (ratio[i], f"{df['kernel'].iat[i]} [{df['config'].iat[i]}]"
                     + (f" on {gpu.id}" if len(rows) > 1 else ""))
    if not parts:
        return None
    its, the = ("its", "the") if len(parts) == 1 else ("their GPU's", "a")
    return (f"{', '.join(parts)} ran faster than {its} datasheet roofline allows (FLOPs at the "
            f"FMA peak, DRAM bytes at the bandwidth), by up to {worst[0]:.3g}x ({worst[1]}): "
            "their counts overstate the work (a cheaper algorithm, bytes a cache served) or "
            f"{the} GPU is not the catalog's (its clock, its model); projections from the "
            "counts inherit that error")


def _sources(table: ProfileTable, source) -> list:
    """The catalog entries of ``source`` (a name, a list of names, "all" or None: the table's
    only GPU), each checked to have rows in ``table``."""
    if not table.gpus:
        raise InputError("the profile has no rows", path=table.origin or None)
    names = None if source is None else name_list(source)  # "a,b": a and b
    if names is None or names == ["all"]:
        if names is None and len(table.gpus) != 1:
            raise InputError(f"the profile holds several GPUs ({', '.join(table.gpus)}); "
                             "pass --source (several, or 'all', to combine them)",
                             path=table.origin or None)
        names = table.gpus
    if not names:
        raise GpuprojError("no source GPU named (--source NAME[,NAME], or 'all')")
    srcs = list({g.id: g for g in map(resolve, names)}.values())  # v100,V100: once
    for s in srcs:
        if s.id not in table.gpus:
            raise InputError(f"no rows measured on {s.id}: the file has "
                             f"{', '.join(table.gpus) or 'no rows'} (--source names the GPU the "
                             "profile was measured on)", path=table.origin or None)
    return srcs


def _unmeasured_elsewhere(rows: dict, targets: list) -> list:
    """Skipped records of the (kernel, config) pairs that a target which is also a source
    alone measured: predicted from the other sources, it has no projection of them."""
    out = []
    for t in targets:
        if t.id not in rows:
            continue
        others = [r.df[["kernel", "config"]] for s, r in rows.items() if s != t.id]
        elsewhere = set(pd.concat(others).itertuples(index=False, name=None))
        own = rows[t.id]
        for k, c in own.df[["kernel", "config"]].drop_duplicates().itertuples(index=False):
            if (k, c) not in elsewhere:
                out.append(Skipped(own.origin, None, f"{k} [{c}] -> {t.id}: no other source "
                                   "GPU measured it (the target is a source)",
                                   projection=(k, c, t.id)))
    return out


def _combined(preds: list, numbers: dict) -> Prediction:
    """One prediction from each source's (``gpuproj.combine``), with ``row`` the number of
    its (kernel, config) pair in ``numbers``."""
    d = pd.concat([p.df for p in preds], ignore_index=True)
    assumptions: dict = {}
    for p in preds:
        for t, notes in p.assumptions.items():
            have = assumptions.setdefault(t, [])
            have += [n for n in notes if n not in have]
    cautions = list(dict.fromkeys(c for p in preds for c in p.cautions))
    if d.empty:
        return Prediction(d, assumptions, [], cautions)
    c = combine_sources(d.drop(columns=[x for x in d.columns if x.startswith("t_")]))
    c["row"] = [numbers[k] for k in zip(c["kernel"], c["config"])]
    return Prediction(c, assumptions, [], cautions)
