"""What every gpuproj picture shares: a figure without pyplot's global state, readable font sizes,
unit scaling for axes, and saving by file extension.

>>> time_unit([2e-5, 8e-4])
('µs', 1e-06)
>>> rate_unit([3e11, 2e13], "FLOP/s")
('TFLOP/s', 1000000000000.0)
>>> short("a_very_long_kernel_name_with_template_arguments<float, 4>", 20)
'a_very_long_kernel_…'
>>> print(literal("$__internal_0_$__cuda_sm20_div_rn_f32"))
\\$__internal_0_\\$__cuda_sm20_div_rn_f32
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from ..files import writing
from ..kernel_names import without_arguments
from ..units import with_prefix

# Sizes in points. At 150 dpi a 10-inch figure is 1500 px wide; 11 pt text stays readable when
# the picture is shown at full width of a report or a README.
FONT = {"font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "xtick.labelsize": 10,
        "ytick.labelsize": 10, "legend.fontsize": 9.5, "figure.titlesize": 13}
DPI = 150
FORMATS = (".png", ".svg", ".pdf")

# Level and role colours, the same in every picture (colour-blind safe Okabe-Ito palette).
COLORS = {"dram": "#0072B2", "l2": "#009E73", "l1": "#D55E00", "shared": "#CC79A7",
          "fma": "#000000", "addmul": "#7f7f7f", "mix": "#E69F00", "warp": "#F0C808",
          "source": "#56B4E9", "interval": "#000000", "point": "#D62728"}
TARGET_COLORS = ("#E69F00", "#009E73", "#CC79A7", "#0072B2", "#D55E00", "#F0E442", "#999999")
LEVEL_NAMES = {"dram": "DRAM", "l2": "L2", "l1": "L1", "shared": "shared memory"}
LEVEL_MARKERS = {"l1": "o", "l2": "s", "dram": "^"}


def figure(width_in: float, height_in: float):
    """A matplotlib Figure on the Agg canvas with gpuproj's font sizes and constrained layout.
    It leaves matplotlib's backend alone: a notebook's inline pictures stay as they were, and
    the Figure, outside pyplot, needs none."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(FONT):
        fig = Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def rc():
    """Context manager applying gpuproj's font sizes while artists are created."""
    import matplotlib

    return matplotlib.rc_context(FONT)


def check_path(path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"cannot tell the picture format from '{path.suffix}' "
                         f"(use one of {', '.join(FORMATS)})", path=path)
    return path


def save(fig, path) -> Path:
    """Write ``fig`` to ``path``; the extension picks PNG, SVG or PDF."""
    with writing(check_path(path)) as path:
        fig.savefig(path, dpi=DPI, metadata=_metadata(path))
    return path


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes (for embedding in the HTML report)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": "gpuproj"})
    return buf.getvalue()


def _metadata(path):
    # fixed metadata keeps files reproducible (matplotlib stamps the date into SVG/PDF otherwise)
    ext = path.suffix.lower()
    if ext == ".svg":
        return {"Date": None, "Creator": "gpuproj"}
    if ext == ".pdf":
        return {"CreationDate": None, "Creator": "gpuproj"}
    return {"Software": "gpuproj"}


def time_unit(values) -> tuple[str, float]:
    """The unit (name, seconds per unit) that shows ``values`` (seconds) with small numbers."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v) & (v > 0)]
    ref = float(np.median(v)) if len(v) else 1.0
    for name, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if ref >= f:
            return name, f
    return "ns", 1e-9


def rate_unit(values, base: str) -> tuple[str, float]:
    """Decimal prefix for a rate in ``base`` units (``FLOP/s``, ``B/s``) from the largest value."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v) & (v > 0)]
    ref = float(np.max(v)) if len(v) else 1.0
    for p, f in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if ref >= 10 * f:
            return p + base, f
    return base, 1.0


def fmt_rate(value: float, base: str) -> str:
    """``1.95e13, 'FLOP/s'`` -> ``'19.5 TFLOP/s'``; ``'n/a'`` where not finite."""
    return with_prefix(value, base) if np.isfinite(value) else "n/a"


def short(text, n: int = 32) -> str:
    """``text`` cut to ``n`` characters with an ellipsis."""
    s = str(text)
    return s if len(s) <= n else s[: n - 1] + "…"


def literal(text) -> str:
    """``text`` for a matplotlib title, label or legend entry, drawn as written: every text a
    picture shows that comes from the user (kernel names, configurations, GPU and method
    names) goes through here, since matplotlib reads what lies between two ``$`` as mathtext
    and fails on a CUDA name such as ``$__internal_0_$__cuda_sm20_div_rn_f32``."""
    return str(text).replace("$", r"\$")


def kernel_name(kernel) -> str:
    """A kernel's name without a demangled signature's return type and parameter list (the
    arguments make C++ names too long for an axis).

    >>> kernel_name("void saxpy<float>(float, const float *, float *, int)")
    'saxpy<float>'
    >>> kernel_name("void at::(anonymous namespace)::fill<4>(int)")
    'at::(anonymous namespace)::fill<4>'
    >>> kernel_name("calculate_temp")
    'calculate_temp'
    """
    s = str(kernel).strip()
    return without_arguments(s).removeprefix("void ").strip() or s


def label_of(kernel, config, with_config: bool, n: int = 34) -> str:
    """Axis label of one kernel row: the name, and the configuration where kernels repeat."""
    name = short(kernel_name(kernel), n)
    if not with_config or config in (None, "", "nan"):
        return literal(name)
    return literal(name + "\n" + short(config, n))


def log_needed(values, spread: float = 20.0) -> bool:
    """True when positive ``values`` span more than ``spread`` x (then a linear axis would hide
    the small ones)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v) & (v > 0)]
    return len(v) > 1 and v.max() / v.min() > spread
