"""Pictures: rooflines, projection bars, target GPUs compared, the quadrant-split view,
evaluation charts and microbenchmark sweeps. matplotlib is imported inside the drawing
functions (Agg canvas, no pyplot state), so importing this package costs nothing."""

# target GPUs that the projection bars draw one panel each; more are compared by their
# application totals (plots.targets): 67 panels of kernels would not be read
MAX_PANELS = 4


def drawn_gpu(table, source=None, what: str = "source"):
    """The GPU whose rows a picture (or the report) draws: ``source`` (a name or a GPU file),
    else the profile's only GPU; an ``InputError`` where the profile holds several and
    ``source`` names none, an ``UnknownGPUError`` where it names several (``what``: the
    argument's name in that error)."""
    from ..errors import InputError
    from ..names import one_gpu

    if source is None and len(table.gpus) > 1:
        raise InputError(f"the profile holds several GPUs ({', '.join(table.gpus)}); pass "
                         "--source with one of them", path=table.origin or None)
    return one_gpu(source if source else table.gpus[0], what)
