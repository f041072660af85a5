"""The HTML report of a projection: one self-contained file (pictures embedded as PNG data URIs,
no script or style from the network, a Content-Security-Policy that forbids any fetch) with the
prediction table, the application totals, the projection bars, the rooflines, the
quadrant-split view, the assumptions, and the catalog values used (each GPU's note, peak and
measured values with their sources).

Every number of the prediction tables carries its exact value in SI units in a ``data-value``
attribute, so tests (and scripts) can compare the page with ``gpuproj predict --json``.

>>> from gpuproj.report import build_report                      # doctest: +SKIP
>>> html = build_report(load("run.csv"), "V100", ["A100", "H100"])  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import math
from pathlib import Path

from .catalog.schema import THROUGHPUT_FIELDS
from .errors import GpuprojError, InputError
from .files import write_text
from .plots import MAX_PANELS
from .profiles.table import ProfileTable, group_causes, skip_noun
from .units import fmt_error, fmt_time, readable

# identity numbers shown beside the throughputs (field, how to print it)
_VALUES = ("sm_count", "boost_clock_hz", "warp_size", "l2_size_bytes", "l3_size_bytes",
           "memory_size_bytes", "l1_shared_size_bytes_per_sm", "l1_cache_size_bytes_per_sm")

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
margin:0 auto;max-width:1280px;padding:0 24px 48px;color:#1b1b1b}
h1{font-size:1.6em;margin:28px 0 4px} h2{font-size:1.25em;margin:34px 0 8px;
border-bottom:1px solid #ddd;padding-bottom:4px} h3{font-size:1.05em;margin:20px 0 6px}
.meta{color:#555;margin:0 0 10px} table{border-collapse:collapse;margin:8px 0 14px;
font-size:13.5px} th,td{border:1px solid #d6d6d6;padding:3px 8px;vertical-align:top}
td.id{white-space:nowrap}
th{background:#f3f3f3;text-align:left} td.num{text-align:right;font-variant-numeric:tabular-nums;
white-space:nowrap} td.src{color:#555;font-size:12.5px;max-width:460px}
tr:nth-child(even) td{background:#fafafa} figure{margin:12px 0 22px}
figure img{max-width:100%;height:auto;border:1px solid #e4e4e4}
figcaption{color:#444;font-size:13.5px;margin-top:4px} .note{color:#555;font-size:13.5px}
.kind-measured{color:#1a7f37} .kind-derived{color:#9a6700} .kind-peak{color:#555}
.kind-missing{color:#b42318} code{font-size:12.5px;background:#f5f5f5;padding:0 3px}
.warning{color:#8a4b00}
"""

# Sets data attributes on <body> once every image has loaded (or failed), so a headless
# browser can check the page: data-images-total / -loaded / -failed / -visible, data-js-errors,
# data-ready.
_JS = """
(function () {
  var b = document.body, errs = 0;
  window.addEventListener('error', function () { errs++; b.setAttribute('data-js-errors', errs); });
  b.setAttribute('data-js-errors', 0);
  var imgs = Array.prototype.slice.call(document.images), ok = 0, bad = 0, left = imgs.length;
  function settle() {
    var shown = imgs.filter(function (im) { return im.getBoundingClientRect().width > 0; });
    b.setAttribute('data-images-visible', shown.length);
    b.setAttribute('data-images-total', imgs.length);
    b.setAttribute('data-images-loaded', ok);
    b.setAttribute('data-images-failed', bad);
    if (left === 0) { b.setAttribute('data-ready', 'yes'); }
  }
  imgs.forEach(function (im) {
    function fin(good) { if (good) { ok++; } else { bad++; } left--; settle(); }
    if (im.complete) { fin(im.naturalWidth > 0); }
    else {
      im.addEventListener('load', function () { fin(im.naturalWidth > 0); });
      im.addEventListener('error', function () { fin(false); });
    }
  });
  settle();
})();
"""


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _num_cell(col: str, value, text: str) -> str:
    """A right-aligned cell showing ``text`` with the exact ``value`` in ``data-value``."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return f'<td class="num" data-col="{col}" data-value="">-</td>'
    return f'<td class="num" data-col="{col}" data-value="{float(value)!r}">{_e(text)}</td>'


# the parts ---------------------------------------------------------------------------------
TIME_COLUMNS = ("source_time_s", "time_s", "low_s", "high_s", "band_low_s", "band_high_s")


def _time_cells(r) -> str:
    """The time cells both tables share, from a prediction or application row."""
    return "".join(_num_cell(c, getattr(r, c), fmt_time(getattr(r, c))) for c in TIME_COLUMNS)


def _prediction_table(result) -> str:
    from .views import by_kernel

    d = result.table()
    if d.empty:
        return "<p>No kernel could be predicted (see the skipped rows below).</p>"
    head = ("kernel", "config", "target", "method", "source time", "predicted", "low", "high",
            "90 % band low", "90 % band high", "speed-up", "limiter", "measured on target")
    rows = []
    for r in by_kernel(d).itertuples(index=False):
        m = getattr(r, "measured_s", math.nan)  # a column only where targets were timed
        rows.append(
            f'<tr data-kernel="{_e(r.kernel)}" data-config="{_e(r.config)}" '
            f'data-target="{_e(r.target)}" data-method="{_e(r.method)}">'
            f"<td>{_e(r.kernel)}</td><td>{_e(r.config)}</td>"
            f'<td class="id">{_e(r.target)}</td><td class="id">{_e(r.method)}</td>'
            + _time_cells(r)
            + _num_cell("speedup", r.speedup, f"{r.speedup:.2f}x")
            + f"<td>{_e(r.limiter)}</td>"
            + _num_cell("measured_s", m, fmt_time(m))
            + "</tr>")
    return (f'<table id="predictions"><thead><tr>{"".join(f"<th>{h}</th>" for h in head)}'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _application_table(result) -> str:
    a = result.ranked_application()  # fastest first, as `predict` prints them
    if a.empty:
        return ""
    rows = []
    for r in a.itertuples(index=False):
        # the target's measured total where the profile holds every row of it, as `predict`
        meas = getattr(r, "measured_s", math.nan)  # a column only where targets were timed
        err = 100 * (r.time_s / meas - 1) if math.isfinite(meas) else None  # for sorting
        rows.append(
            f'<tr data-target="{_e(r.target)}" data-method="{_e(r.method)}">'
            f"<td>{_e(r.method)}</td><td>{_e(r.target)}</td>"
            + _time_cells(r)
            + _num_cell("speedup", r.speedup, f"{r.speedup:.2f}x")
            + _num_cell("measured_s", meas, fmt_time(meas))
            + _num_cell("error_pct", err, fmt_error(r.time_s, meas))
            + "</tr>")
    head = ("method", "target", "source", "predicted", "low", "high", "90 % band low",
            "90 % band high", "speed-up", "measured on target", "error")
    return (f'<table id="application"><thead><tr>{"".join(f"<th>{h}</th>" for h in head)}'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _figure(png: bytes, alt: str, caption: str, fig_id: str) -> str:
    b64 = base64.b64encode(png).decode("ascii")
    return (f'<figure id="{_e(fig_id)}"><img src="data:image/png;base64,{b64}" alt="{_e(alt)}">'
            f"<figcaption>{caption}</figcaption></figure>")


def _catalog_tables(gpus, source) -> str:
    """Per GPU: its catalog note, every throughput the catalog has (peak and measured side by
    side, each with its source) and the value the models use (measured, derived from the other
    GPU's measured/peak ratio, or peak): one for a target, derived against the source; one per
    target for the source where they differ (``_used``)."""
    out = []
    targets = [g for g in gpus if g.id != source.id]
    for g in gpus:
        refs = targets if g.id == source.id else [source]
        rows = []
        for f in THROUGHPUT_FIELDS:
            pe, me = g.peaks.get(f), g.measureds.get(f)
            if pe is None and me is None:
                continue
            used, kind = _used(g, f, refs)
            rows.append(
                f"<tr><td><code>{_e(f)}</code></td>"
                f'<td class="num">{_e(readable(f, pe.value) if pe else "-")}</td>'
                f'<td class="src">{_e(pe.source) if pe else ""}</td>'
                f'<td class="num">{_e(readable(f, me.value) if me else "-")}</td>'
                f'<td class="src">{_e(me.source) if me else ""}</td>'
                f'<td class="num">{used}</td><td>{kind}</td></tr>')
        vals = []
        for f in _VALUES:
            e = g.values.get(f)
            if e is not None:
                vals.append(f"<tr><td><code>{_e(f)}</code></td>"
                            f'<td class="num">{_e(readable(f, e.value))}</td>'
                            f'<td class="src">{_e(e.source)}</td></tr>')
        role = "source" if g.id == source.id else "target"
        out.append(
            f'<h3 id="catalog-{_e(g.id)}">{_e(g.name)} <span class="note">({role}, '
            f"<code>{_e(g.id)}</code>, {_e(g.architecture)}, {_e(g.isa)})</span></h3>"
            # the catalog's note on the part (a clock set by a power limit, a power mode)
            + (f'<p class="note">{_e(g.notes)}</p>' if g.notes else "")
            + '<table class="catalog"><thead><tr><th>throughput</th><th>peak</th>'
            "<th>peak source</th><th>measured</th><th>measured source</th><th>used</th>"
            f"<th>kind</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            + ('<table class="catalog"><thead><tr><th>property</th><th>value</th><th>source</th>'
               f"</tr></thead><tbody>{''.join(vals)}</tbody></table>" if vals else ""))
    return "".join(out)


def _used(gpu, field, refs) -> tuple[str, str]:
    """The "used" and "kind" cells (HTML) of ``gpu``'s ``field`` against each GPU of ``refs``
    (the models derive a missing measured value from the other GPU's measured/peak ratio): one
    line per distinct value, each naming the GPUs it was used against where there are
    several."""
    lines = {}  # (value, kind, how) -> ids of the GPUs it was used against
    for r in refs:
        c = gpu.ceiling(field, r)
        how = (f"derived: peak × {c.note.ref}'s measured/peak {c.note.ratio:.3f}"
               if c.kind == "derived" else c.kind)
        lines.setdefault((c.value, c.kind, how), []).append(r.id)
    used = [_e(readable(field, v)) for v, _, _ in lines]
    kinds = [f'<span class="kind-{_e(k)}">{_e(how)}</span>'
             + (f" (with {_e(', '.join(ids))})" if len(lines) > 1 and k != "derived" else "")
             for (_, k, how), ids in lines.items()]
    return "<br>".join(used), "<br>".join(kinds)


def _assumptions(result) -> str:
    from .predict import held_out_note

    # grouped as `gpuproj predict` prints them: each once, with the methods that made it
    items = [f"<li>{_e(n)}</li>" for n in result.assumption_lines()]
    general = (
        "<li>Times are per launch; application totals multiply each kernel's time by its "
        "launches and sum over kernels.</li>"
        "<li>The hierarchical method projects each memory level separately (Van Lanker et al., "
        "Eq. 9); the interval is [min, max] over the levels the profile has and the point is "
        "their mean; <code>hierarchical-ext</code>'s also spans the alternatives of its "
        "extensions (a spread of the model, not a probability). A learned model's interval is "
        "calibrated on its out-of-fold errors (docs/learned.md). The 90 % band is how far the "
        "method has been off on real cross-GPU data (docs/accuracy.md, 'Error bands')"
        f"{_e(held_out_note(list(result.predictions)))}.</li>"
        "<li>Ceilings: measured where the catalog has a measurement; otherwise the GPU's peak "
        "scaled by the other GPU's measured/peak ratio (derived: the target's against the "
        "source, the source's against each target); otherwise the peak.</li>")
    return f"<ul>{general}{''.join(items)}</ul>"


def _skipped(result) -> str:
    if not result.skipped:
        return "<p>None.</p>"
    causes = group_causes(result.skipped)
    return "<ul>" + "".join(f"<li>{len(items)} {skip_noun(items)}(s): {_e(r)}</li>"
                            for r, items in sorted(causes.items(), key=lambda kv: -len(kv[1]))
                            ) + "</ul>"


# pictures ------------------------------------------------------------------------------
def _pictures(table, result, kernel, max_kernels, notes, progress=None) -> list[str]:
    from .plots import _style as st

    figs = []
    targets = list(result.targets)
    if len(targets) > MAX_PANELS:
        # one panel (and one roofline) per target would not be read: the targets compared,
        # then the details of the fastest ones
        from .plots.targets import targets_figure

        fig, d = targets_figure(result)
        figs.append(_figure(
            st.png_bytes(fig), "targets compared",
            "Per target GPU, fastest first: the application total (time x launches summed "
            "over kernels) each method predicts, with its interval and its measured 90 % band, "
            "the source's measured total (vertical line) and the total measured on the target "
            "where the input has it.", "fig-targets"))
        targets = list(dict.fromkeys(d["target"].astype(str)))[:MAX_PANELS]
        notes.append(f"projection bars and rooflines drawn for the {MAX_PANELS} fastest of "
                     f"{len(result.targets)} targets: {', '.join(targets)}")
    try:
        from .plots.projection import projection_figure

        fig, _ = projection_figure(result, max_kernels=30, targets=targets)
        figs.append(_figure(
            st.png_bytes(fig), "projection bars",
            "Per kernel and target GPU: time measured on the source (bar), the predicted "
            "interval (segment) with the predicted point, the method's measured 90 % error "
            "band (thin pale bar: how far it has been off on public cross-GPU data), and the "
            "time measured on the target where the input has it.", "fig-projection"))
    except GpuprojError as e:
        notes.append(f"projection bars not drawn: {e}")
    from .plots.roofline import roofline_data, roofline_figure

    # the rooflines take most of a report's time (about 2 s each): a bar where one is asked for
    for t in progress(targets, description="drawing rooflines") if progress else targets:
        try:
            data = roofline_data(table, result.gpu(result.source), result.gpu(t), kernel)
            fig = roofline_figure(data, max_kernels=max_kernels)
        except GpuprojError as e:
            notes.append(f"roofline for {t} not drawn: {e}")
            continue
        figs.append(_figure(
            st.png_bytes(fig), f"roofline {result.source} to {t}",
            f"Hierarchical rooflines of the {len(data['shown'])} longest-running kernel rows "
            f"with kernel-specific ceilings on {_e(data['gpu_name'])} (left, measured "
            f"performance at the L1, L2 and DRAM intensities) and {_e(data['target_name'])} "
            # the panel projects by Eq. 9 alone: hierarchical-ext's rows above may differ 2x
            "(right, the performance per level, interval and point projected by the "
            "<code>hierarchical</code> method: Eq. 9 without the extensions of "
            "<code>hierarchical-ext</code>).",
            f"fig-roofline-{t}"))
    q = _quadrant_png(table, result, kernel, notes)
    if q is not None:
        figs.append(_figure(q, "quadrant-split view",
                            "Quadrant-split view (Konstantinidis & Cotronis): each GPU as a point "
                            "(DRAM bandwidth, compute peak); the kernel as a half-line whose "
                            "slope is its DRAM operational intensity. GPUs above the line are "
                            "memory-bound for it, GPUs below compute-bound.", "fig-quadrant"))
    return figs


def _quadrant_png(table, result, kernel, notes):
    """The quadrant-split picture of the source and targets (``plots/quadrant.py``)."""
    from .plots import _style as st
    from .plots import quadrant

    gpus = [result.gpu(g) for g in (result.source, *result.targets)]
    rows = table.on(result.source).select(kernel)
    try:
        data = quadrant.quadrant_data(gpus, rows)
        fig = quadrant.data_figure(data)
    except GpuprojError as e:
        notes.append(f"quadrant-split view not drawn: {e}")
        return None
    notes.extend(f"quadrant-split view leaves out {s}" for s in data["skipped"])
    return st.png_bytes(fig)


# the page --------------------------------------------------------------------------------
def build_report(table: ProfileTable, source, targets, *, methods=None,
                 kernel: str | None = None, max_kernels: int = 3, title: str | None = None,
                 result=None, progress=None) -> str:
    """The report as one HTML string. ``table``: the profile (rows on the source, and
    optionally the targets' measurements of the same kernels); ``source``/``targets``: GPU
    names; ``methods``/``kernel`` as for ``gpuproj.predict.predict`` (None: its default).
    ``result``: an already computed ``PredictionSet`` (otherwise predicted here).
    ``progress``: ``progress(iterable, description=...)`` wraps the drawing of the rooflines
    (the CLI's bar; None: none)."""
    from . import __version__
    from .predict import beyond_roofline, predict

    if result is None:
        result = predict(table, source=source, targets=targets, methods=methods, kernel=kernel)
    src = result.gpu(result.source)
    tgts = [result.gpu(t) for t in result.targets]
    d = result.table()
    keys = set(zip(d["kernel"], d["config"])) if not d.empty else set()
    notes: list[str] = []
    figs = _pictures(table, result, kernel, max_kernels, notes, progress)
    # rows faster than the source's roofline allows: their counts are in doubt, and with
    # them every projection (`predict` warns on the terminal; the page must say it too)
    doubt = beyond_roofline({src.id: table.on(src.id).select(kernel)}, {src.id: src})
    origin = table.origin or "(in memory)"
    title = title or f"gpuproj: {Path(origin).name} from {src.name} to " + ", ".join(
        t.name for t in tgts)
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    n_k = len(keys)
    body = [
        f"<h1>{_e(title)}</h1>",
        (f'<p class="meta">Profile <code>{_e(origin)}</code> measured on '
         f"<b>{_e(src.name)}</b>; targets {', '.join(f'<b>{_e(t.name)}</b>' for t in tgts)}; "
         f"methods {', '.join(f'<code>{_e(m)}</code>' for m in result.predictions)}; {n_k} "
         f"kernel row(s). gpuproj {_e(__version__)}, {stamp}.</p>"),
        '<h2 id="predictions-h">Predictions per kernel</h2>',
        *(f'<p class="note warning">{_e(doubt)}</p>' for _ in [doubt] if doubt),
        _prediction_table(result),
        '<h2 id="application-h">Application total</h2>',
        '<p class="note">Time × launches, summed over the kernels above.</p>',
        _application_table(result),
        *(f'<p class="note">{_e(n)}</p>'
          for n in (result.partial_totals(), result.unbounded_totals()) if n),
        '<h2 id="pictures-h">Pictures</h2>',
        *figs,
        *(f'<p class="note">{_e(n)}</p>' for n in notes),
        '<h2 id="assumptions-h">Assumptions</h2>',
        _assumptions(result),
        '<h2 id="catalog-h">Catalog values used</h2>',
        ('<p class="note">Peak (datasheet) and measured (sustained) values side by side with '
         "their sources; <i>used</i> is the ceiling the models take: measured, derived "
         "(peak × the other GPU's measured/peak ratio) or peak. A target's is derived against "
         "the source; the source's against each target, one line per value.</p>"),
        _catalog_tables([src, *tgts], src),
        '<h2 id="skipped-h">Skipped rows</h2>',
        _skipped(result),
    ]
    csp = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
           "script-src 'unsafe-inline'")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(body) + f"<script>{_JS}</script></body></html>\n")


def write_report(path, table: ProfileTable, source, targets, **options) -> Path:
    """Write ``build_report(...)`` to ``path`` (UTF-8)."""
    path = Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise InputError("the report is HTML: name the file .html", path=path)
    return write_text(path, build_report(table, source, targets, **options))
