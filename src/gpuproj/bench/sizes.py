"""Problem sizes, repetitions and sweep ranges of one benchmark run.

``FULL`` fills a data-centre GPU (grids of 32 blocks of 256 threads per SM, STREAM arrays of
16 x L2 and at least 256 MiB, 20 timed repetitions); ``QUICK`` runs the whole suite in seconds
on a CPU's OpenCL device, for CI. Every choice is recorded in the result file.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

KiB, MiB = 1024, 1024**2


@dataclass(frozen=True)
class Sizes:
    name: str
    block: int                   # threads per block for every kernel but chase
    blocks_per_cu: int           # grid of compute / cache / shared-memory kernels: CUs x this
    min_time_s: float            # iteration counts are raised until one run lasts this long
    reps: int                    # timed repetitions of every measurement
    warmup: int                  # untimed launches before them
    stream_bytes: int | None     # bytes per STREAM array (>= 4 x L2); None: 16 x L2, >= 256 MiB
    rotate_sets: int             # STREAM / mixbench buffer sets used in turn
    l1_ws_bytes: int             # working set of the L1 measurement (all blocks read it)
    l2_ws_fraction: float        # working set of the L2 measurement, as a fraction of L2
    default_l2_bytes: int        # L2 size assumed where the runtime does not report one
    sweep_min_bytes: int         # bandwidth-versus-working-set sweep range, geometric
    sweep_max_bytes: int | None  # None: 4 x the STREAM array
    sweep_factor: int
    mix_ks: tuple                # FMAs per element of the intensity sweep
    mix_bytes: int | None        # array of the intensity sweep; None: as STREAM
    launch_count: int            # back-to-back launches per launch-overhead sample (<= 128)
    block_multiples: tuple       # grids of the per-block cost: CUs x these
    chase_steps: int             # dependent loads per pointer-chase run
    spread_limit: float          # relative IQR above which a measurement is flagged

    def to_dict(self) -> dict:
        return asdict(self)


FULL = Sizes(
    name="full", block=256, blocks_per_cu=32, min_time_s=1e-3, reps=20, warmup=3,
    stream_bytes=None, rotate_sets=2, l1_ws_bytes=16 * KiB, l2_ws_fraction=0.25,
    default_l2_bytes=4 * MiB, sweep_min_bytes=4 * KiB, sweep_max_bytes=None, sweep_factor=2,
    mix_ks=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), mix_bytes=256 * MiB,
    launch_count=100, block_multiples=(1, 2, 4, 8, 16, 32, 64, 128), chase_steps=100_000,
    spread_limit=0.05)

QUICK = Sizes(
    name="quick", block=64, blocks_per_cu=4, min_time_s=3e-3, reps=5, warmup=1,
    stream_bytes=8 * MiB, rotate_sets=2, l1_ws_bytes=16 * KiB, l2_ws_fraction=0.25,
    default_l2_bytes=1 * MiB, sweep_min_bytes=4 * KiB, sweep_max_bytes=32 * MiB, sweep_factor=4,
    mix_ks=(1, 4, 16, 64), mix_bytes=4 * MiB, launch_count=100, block_multiples=(1, 4, 16, 64),
    chase_steps=20_000, spread_limit=0.25)

PRESETS = {"full": FULL, "quick": QUICK}


def with_overrides(sizes: Sizes, **kw) -> Sizes:
    """``sizes`` with the non-None keyword values replaced (``reps=5``)."""
    return replace(sizes, **{k: v for k, v in kw.items() if v is not None})


def floor_pow2(n: int) -> int:
    """Largest power of two <= n (n >= 1).

    >>> floor_pow2(50 * 1024**2 // 4) == 8 * 1024**2
    True
    """
    return 1 << (int(n).bit_length() - 1)
