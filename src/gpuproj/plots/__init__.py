"""Pictures: rooflines, projection bars, the quadrant-split view, evaluation charts and
microbenchmark sweeps. matplotlib is imported inside the drawing functions (Agg backend, no
pyplot state), so importing this package costs nothing."""
