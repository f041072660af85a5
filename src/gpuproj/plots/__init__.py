"""Pictures: rooflines, projection bars, target GPUs compared, the quadrant-split view,
evaluation charts and microbenchmark sweeps. matplotlib is imported inside the drawing
functions (Agg backend, no pyplot state), so importing this package costs nothing."""

# target GPUs that the projection bars draw one panel each; more are compared by their
# application totals (plots.targets): 67 panels of kernels would not be read
MAX_PANELS = 4
