"""``gpuproj calibrate MODEL_FILE``: fit a Stevens & Kloeckner calibrated cost model on the
measurement kernels named by the model file (or ``--tags``), timed on an OpenCL device or,
with ``--device cuda``, an NVIDIA GPU through CuPy. Writes the parameters as JSON."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import click

from ..errors import GpuprojError, GpuprojWarning
from ._common import check_writable, emit_json, output_option, progress


def _slug(text: str, empty: str) -> str:
    """``text`` made a file name: lower-case letters, digits and '-' (no path separator, no
    '..'), at most 60 characters; ``empty`` where nothing is left."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].strip("-") or empty


class ModelFile(click.Path):
    """A model file's path, or the name of one gpuproj ships (``matmul``, ``dg``,
    ``finite_diff``: ``calibrated.modelfile.bundled_model_path``)."""

    def convert(self, value, param, ctx):
        # a file of that name in the working directory wins; a folder of it does not
        if not Path(value).is_file() and re.fullmatch(r"[a-z_]+", str(value)):
            from ..calibrated.modelfile import bundled_model_path
            from ..errors import InputError

            try:
                value = bundled_model_path(value)
            except InputError as e:
                self.fail(f"no file '{value}', and {e.message}", param, ctx)
        return super().convert(value, param, ctx)


@click.command("calibrate")
@click.argument("model_file", type=ModelFile(exists=True, dir_okay=False, path_type=Path))
@click.option("--tags", "tags", multiple=True,
              help="Filter tags replacing the model file's tag sets, one per --tags "
                   "(repeat it): a generator's tag, or ARG:VALUES with the values "
                   "comma-separated: --tags flops_madd_pattern --tags m:64,128.")
@click.option("--match", type=click.Choice(["identical", "subset", "superset", "intersect"]),
              default=None, help="Generator match condition (default: the model file's).")
@click.option("--device", default=None,
              help="OpenCL device substring (e.g. 'pthread', 'nvidia') or 'cuda[:N]' "
                   "(default: the first OpenCL device that is no simulator, a CPU as well "
                   "as a GPU).")
@output_option("Parameter file to write (default: calibrated-<model>-<device>.json in the "
               "working directory, the model's and the device's names made file names).",
               path_type=Path)
@click.option("--repetitions", default=7, show_default=True, type=click.IntRange(min=1),
              help="Timed runs per kernel.")
@click.option("--warmup", default=2, show_default=True, type=click.IntRange(min=0),
              help="Untimed runs per kernel before the timed ones (0: none).")
@click.option("--evaluate", "do_eval", is_flag=True,
              help="Also measure, predict and rank the model file's evaluation variants.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def calibrate(model_file, tags, match, device, output, repetitions, warmup, do_eval, as_json):
    """Calibrate MODEL_FILE (YAML or TOML) on this machine's device. MODEL_FILE may also
    name a model gpuproj ships: matmul, dg or finite_diff (src/gpuproj/calibrated/models).

    \b
    Examples:
      gpuproj calibrate tests/data/calibrated-pocl-tiny-model.yaml --device pthread  # PoCL, seconds
      gpuproj calibrate src/gpuproj/calibrated/models/matmul.yaml --evaluate  # first OpenCL device
      gpuproj calibrate src/gpuproj/calibrated/models/matmul.yaml --device cuda  # CuPy
    """
    from ..calibrated.generators import MatchCondition
    from ..calibrated.model import format_table
    from ..calibrated.modelfile import check_tag_sets, load_model_file
    from ..calibrated.study import evaluate_variants, measurement_kernels, run_calibration
    from ..calibrated.timing import make_runner
    from ..errors import InputError

    if output and output.resolve() == model_file.resolve():
        raise GpuprojError(f"-o {output} would overwrite the model file")
    spec = load_model_file(model_file)
    if match:
        spec.match = MatchCondition(match)
        check_tag_sets(spec)
    runner = make_runner(device, warmup=warmup, repetitions=repetitions)
    try:
        kernels = measurement_kernels(spec, list(tags) or None)
    except InputError as e:
        if not tags:
            raise
        raise click.BadParameter(e.message, param_hint="--tags") from None
    out = output or Path(f"calibrated-{_slug(spec.model.name, 'model')}-"
                         f"{_slug(runner.device_name, 'device')}.json")
    check_writable(out, "-o" if output else None)
    cal, kernels, timings = run_calibration(spec, runner, kernels, progress=progress)
    cal.save(out)
    result = cal.to_dict()
    result["measurements"] = [t.to_dict() for t in timings]
    if do_eval and spec.evaluation:
        ev = evaluate_variants(spec, cal, runner, progress=progress)
        result["evaluation"] = ev.to_dict()
    if as_json:
        emit_json(result)
        return
    click.echo(f"{spec.model.name}: {len(kernels)} kernels on {runner.device_name}")
    click.echo(format_table(cal.table))
    # the fit's residual norm, in words: 'residual 2.388 (relative)' beside a 13.9 % error
    # said nothing of what it measures
    errors = ("relative errors (1 - predicted / measured)" if cal.scaled
              else "errors in seconds (measured - predicted)")
    click.echo(f"least-squares residual {cal.residual:.4g}: the Euclidean norm of the "
               f"{cal.n_kernels} kernels' {errors}")
    click.echo(f"geometric-mean relative error {result['geomean_rel_error_calibration']:.1%} "
               "on the measurement kernels")
    for w in cal.warnings:  # in the JSON too, under "warnings"
        warnings.warn(GpuprojWarning(w))
    if "evaluation" in result:
        ev = result["evaluation"]
        click.echo(f"evaluation: geometric-mean relative error {ev['geomean_rel_error']:.1%}, "
                   f"ranking {'right' if ev['ranking_correct'] else 'wrong'}")
    click.echo(f"wrote {out}")
