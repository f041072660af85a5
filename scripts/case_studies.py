#!/usr/bin/env python
"""Run the three case studies of Stevens & Kloeckner (Sec. 8) on one device: calibrate each
model on its measurement kernels, then measure and predict the kernel variants (matmul: 2,
DG differentiation: 4, finite differences: 2), reporting the geometric-mean relative error and
whether the predicted ranking of the variants matches the measured one at every size.

Writes docs/results/calibrated_<device>.json (everything, raw samples included) and
docs/results/calibrated_<device>.md (a fragment for docs/accuracy.md), plus the calibrated
parameters docs/results/calibrated_<device>_<model>_params.json.

    python scripts/case_studies.py                     # first OpenCL device (PoCL in CI)
    python scripts/case_studies.py --device cuda       # NVIDIA GPU through CuPy
    python scripts/case_studies.py --only matmul --repetitions 11
    python scripts/case_studies.py --rounds 5          # as docs/results/calibrated_pocl-cpu.md

``--rounds R`` calibrates and evaluates each model R times over: on a shared CPU one round's
error can be twice another's, so the fragment gives the median round in full and the range of
all of them.

``--replay RESULTS.json`` measures nothing: it calibrates and predicts again from the timings
an earlier run stored (its median round, the kernels' and the variants'), with today's model
files and calibration, and writes the results under the same label. A GPU's results stay
current when a model file or the fit changes and no GPU is at hand:

    python scripts/case_studies.py --replay docs/results/calibrated_nvidia-h200.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("matmul", "dg", "finite_diff")
TITLES = {"matmul": "Matrix multiplication (2 variants)",
          "dg": "DG differentiation (4 variants)",
          "finite_diff": "Finite differences (2 variants)"}
PAPER = {"matmul": "4.3 %", "dg": "7.5 %", "finite_diff": "6.7 %"}  # paper Secs. 8.3-8.5

# Sizes for a GPU (--sizes gpu). The model files' sizes suit PoCL on 2 CPU cores; on an H100 their
# kernels take microseconds, where launch overhead and timer resolution swamp the costs being
# calibrated. The paper sets sizes for 1-1000 ms (Sec. 7.1) and shows matmul at n 2048-3584
# (Sec. 2.2); the sizes below aim at 1-10 ms on an H100 (DG: 3 x 64 x 64 madds per element), the
# microbenchmarks with enough work-groups to fill 132 SMs many times over; the empty kernel keeps
# its few groups (it measures launch overhead).
# Per generator: tags that replace those of the same name, for (measurement, evaluation).
_FLOPS = {"ng0": "1024", "ng1": "64"}
GPU_SIZES = {
    "flops_madd_pattern": (_FLOPS, _FLOPS), "flops_add_pattern": (_FLOPS, _FLOPS),
    "flops_mul_pattern": (_FLOPS, _FLOPS),
    "lmem_access_pattern": ({"ng0": "512", "ng1": "64"},) * 2,
    "barrier_pattern": ({"ng0": "512", "ng1": "64"},) * 2,
    "gmem_access_pattern": ({"ng0": "1024", "ng1": "512,1024"},) * 2,
    "matmul_sq": ({"n": "2048,2560,3072"}, {"n": "2048,2560,3072,3584"}),
    "dg_diff": ({"nelements": "524288,786432"},
                {"nelements": "524288,786432,1048576,1310720"}),
    # n a multiple of both tiles' interiors (14 and 16)
    "finite_diff": ({"n": "8960,13440"}, {"n": "8960,13440,17920"}),
}


def gpu_sized(spec):
    """``spec`` with the GPU sizes of ``GPU_SIZES`` in its tag sets and evaluation entries."""
    import dataclasses

    def resize(tags, which):
        gen = next((t for t in tags if t in GPU_SIZES), None)
        if gen is None:
            return list(tags)
        sizes = GPU_SIZES[gen][which]
        return [t for t in tags if t.split(":")[0] not in sizes] + \
            [f"{k}:{v}" for k, v in sizes.items()]

    return dataclasses.replace(
        spec, tag_sets=[resize(t, 0) for t in spec.tag_sets],
        evaluation=[{**e, "tags": resize(e["tags"], 1)} for e in spec.evaluation])


def _sizes_key(sizes) -> tuple:
    return tuple(sorted((k, int(v)) for k, v in sizes.items()))


class ReplayRunner:
    """The timings one study of an earlier run (``--replay``) stored, in place of a device:
    each kernel's samples by its name and sizes. Each study's own: the microbenchmarks that
    several studies share were timed once per study, and a study was calibrated on its own.
    The JSON keeps the evaluation variants' times per variant entry and size, not per kernel:
    ``add_variants`` files them under the kernels the entry generates."""

    def __init__(self, record, study):
        from gpuproj.calibrated.timing import Timing

        self.device_name = record["device"]
        self.study = record["studies"][study]
        self.times = {}
        for m in self.study["measurements"]:
            self.times[(m["kernel"], _sizes_key(m["sizes"]))] = Timing(
                m["kernel"], m["sizes"], m["samples_s"], m["median_s"],
                m.get("outliers_s", []), self.device_name)

    def add_variants(self, spec):
        """File the study's stored variant times under the kernels ``spec``'s evaluation
        entries generate."""
        from gpuproj.calibrated.generators import ALL_GENERATORS, KernelCollection
        from gpuproj.calibrated.timing import Timing

        coll = KernelCollection(ALL_GENERATORS, spec.match)
        by_name = {v["name"]: v for v in self.study["evaluation"]["variants"]}
        for entry in spec.evaluation:
            v = by_name.get(entry["name"])
            if v is None:
                continue  # time() says which kernel was not measured
            measured = dict(zip((_sizes_key(s) for s in v["sizes"]), v["measured_s"]))
            for mk in coll.variants(list(entry["tags"])):
                t = measured.get(_sizes_key(mk.sizes))
                if t is not None:
                    self.times[(mk.name, _sizes_key(mk.sizes))] = Timing(
                        mk.name, dict(mk.sizes), [t], t, [], self.device_name)

    def time(self, mk):
        key = (mk.name, _sizes_key(mk.sizes))
        if key not in self.times:
            raise SystemExit(f"--replay: {mk.label()} was not measured in the replayed run "
                             "(a model file whose kernels changed needs the device)")
        return self.times[key]


def device_label(name: str) -> str:
    if "portable computing language" in name.lower():
        return "pocl-cpu"
    tail = name.split("/")[-1]
    return re.sub(r"[^a-z0-9]+", "-", tail.lower()).strip("-")[:40] or "device"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None, help="OpenCL device substring or cuda[:N]")
    ap.add_argument("--label", default=None, help="device label used in file names")
    ap.add_argument("--only", choices=MODELS, action="append", help="run only these models")
    ap.add_argument("--repetitions", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=1,
                    help="calibrate and evaluate each model this many times (the median round "
                         "is reported in full, with the range of all)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--sizes", choices=("model", "gpu"), default="model",
                    help="the model files' sizes (for a CPU), or GPU_SIZES (1-1000 ms on a GPU)")
    ap.add_argument("--models-dir", type=Path,
                    default=ROOT / "src" / "gpuproj" / "calibrated" / "models")
    ap.add_argument("--out-dir", type=Path, default=ROOT / "docs" / "results")
    ap.add_argument("--replay", type=Path, default=None,
                    help="calibrate and predict from an earlier run's JSON, measuring nothing")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")

    from gpuproj.calibrated.modelfile import load_model_file
    from gpuproj.calibrated.study import evaluate_variants, run_calibration
    from gpuproj.calibrated.timing import make_runner

    if args.replay:  # a runner per study: below
        old = json.loads(args.replay.read_text())
        device, label = old["device"], args.label or old["label"]
        args.sizes, args.rounds = old["sizes"], 1
        args.repetitions, args.warmup = old["repetitions"], old["warmup"]
    else:
        runner = make_runner(args.device, warmup=args.warmup, repetitions=args.repetitions)
        device = runner.device_name
        label = args.label or device_label(device)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    record = {"device": device, "label": label,
              "date": time.strftime("%Y-%m-%d"), "repetitions": args.repetitions,
              "warmup": args.warmup, "sizes": args.sizes, "rounds": args.rounds, "studies": {}}
    if args.replay:
        record["replayed"] = {"date": old.get("replayed", {}).get("date", old["date"]),
                              "rounds": old.get("replayed", {}).get("rounds", old["rounds"])}
    for name in args.only or MODELS:
        t0 = time.time()
        spec = load_model_file(args.models_dir / f"{name}.yaml")
        if args.sizes == "gpu":
            spec = gpu_sized(spec)
        if args.replay:
            runner = ReplayRunner(old, name)
            runner.add_variants(spec)
        rounds = []
        for _ in range(args.rounds):
            cal, kernels, timings = run_calibration(spec, runner)
            rounds.append((cal, timings, evaluate_variants(spec, cal, runner)))
        # the median round by error (the lower middle one of an even number)
        order = sorted(range(len(rounds)), key=lambda i: rounds[i][2].geomean_rel_error)
        cal, timings, ev = rounds[order[(len(rounds) - 1) // 2]]
        cal.save(args.out_dir / f"calibrated_{label}_{name}_params.json")
        record["studies"][name] = {
            "model": spec.model.to_dict(), "calibration": cal.to_dict(),
            "measurements": [t.to_dict() for t in timings],
            "evaluation": ev.to_dict(),
            # the measuring run's wall time, which a replay (no device, no timing) keeps
            "seconds": (old["studies"][name].get("seconds") if args.replay
                        else round(time.time() - t0, 1)),
            "rounds": [{"geomean_rel_error": e.geomean_rel_error,
                        "ranking_correct": e.ranking_correct, "residual": c.residual}
                       for c, _, e in rounds]}
        print(f"{name}: {len(kernels)} measurement kernels, geomean rel. error "
              f"{ev.geomean_rel_error:.1%}, ranking "
              f"{'right' if ev.ranking_correct else 'wrong'}"
              + (f" (median of {len(rounds)} rounds)" if len(rounds) > 1 else "")
              + f" ({time.time() - t0:.0f} s)", file=sys.stderr)
        # after every study, so that a run cut short (a GPU call's time limit) keeps the others
        (args.out_dir / f"calibrated_{label}.json").write_text(json.dumps(record, indent=1))
        (args.out_dir / f"calibrated_{label}.md").write_text(markdown(record))
    return 0


def markdown(record) -> str:
    replayed = record.get("replayed")
    measured = (f"Measured {record['date']} with `scripts/case_studies.py`" if not replayed else
                f"Measured {replayed['date']} with `scripts/case_studies.py` (the median of "
                f"{replayed['rounds']} rounds), calibrated and predicted again {record['date']} "
                "from those timings (`--replay`)")
    lines = [f"#### Calibrated cost models (Stevens & Kloeckner) on {record['device']}",
             "",
             (f"{measured}: each model calibrated "
              "on its measurement kernels (microbenchmarks and work-removed kernels, never the "
              "variants themselves), then every variant measured (median of "
              f"{record['repetitions']} runs) and predicted."
              + (f" All of it {record['rounds']} times over: the round with the median error in "
                 "full, the range of all rounds after it." if record["rounds"] > 1 else "")),
             "",
             ("| case study | variant | sizes | geomean rel. error | ranking right at all sizes |"
              " paper (5 GPUs) |"),
             "|---|---|---|---|---|---|"]
    for name, st in record["studies"].items():
        ev = st["evaluation"]
        for v in ev["variants"]:
            sizes = ", ".join(",".join(f"{k}={x}" for k, x in s.items()) for s in v["sizes"])
            lines.append(f"| {TITLES[name]} | {v['name']} | {sizes} | "
                         f"{v['geomean_rel_error']:.1%} | | |")
        ok = ev["ranking_correct"]
        errs = [r["geomean_rel_error"] for r in st["rounds"]]
        right = sum(r["ranking_correct"] for r in st["rounds"])
        several = len(errs) > 1
        lines.append(f"| **{TITLES[name]}** | all | | **{ev['geomean_rel_error']:.1%}**"
                     + (f" ({min(errs):.1%}-{max(errs):.1%} over {len(errs)} rounds)"
                        if several else "")
                     + f" | {'yes' if ok else 'no'} "
                     f"({sum(r['ok'] for r in ev['ranking'])}/{len(ev['ranking'])} sizes)"
                     + (f"; right in {right} of {len(errs)} rounds" if several else "")
                     + f" | {PAPER[name]} |")
    lines += ["", "Calibration residuals (relative, Euclidean norm) and negative-cost flags:", ""]
    for name, st in record["studies"].items():
        c = st["calibration"]
        neg = [f"{k} = {v:.3g}" for k, v in c["params"].items() if v < 0]
        flag = ", ".join(neg) if neg else "none"
        lines.append(f"- {name}: residual {c['residual']:.3g} over {c['n_kernels']} kernels; "
                     f"negative costs: {flag}")
    if "portable computing language" in record["device"].lower():
        lines += ["", ("PoCL runs OpenCL on the CPU: the method's GPU assumptions (sub-groups as "
                       "SIMD lanes, overlap of on-chip work with DRAM traffic) do not hold there "
                       "and CI machines are shared, so these numbers test the pipeline, not the "
                       "paper's accuracy; GPU results come from `scripts/calibrate_on_gpu.sh`.")]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
