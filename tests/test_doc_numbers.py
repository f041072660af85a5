"""scripts/doc_numbers.py recomputes numbers the docs' prose quotes: where a section runs in
a moment, the quoted number is checked against it, so that a catalog change that moves it
fails here rather than leaving the prose stale."""

import json
import re
from pathlib import Path

import pytest
from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]


def test_the_boost_base_clock_ratio_docs_ncu_quotes(capsys):
    load_script("doc_numbers").boost_base_clocks(None)
    out = capsys.readouterr().out
    m = re.search(r"NVIDIA: boost / base clock on the (\d+) catalog GPUs that list both: "
                  r"([\d.]+) \(\S+\) to ([\d.]+) \(\S+\)", out)
    assert m, out
    n, low, high = m.groups()
    text = " ".join((ROOT / "docs" / "ncu.md").read_text().split())
    assert f"({low}-{high} on the {n} NVIDIA GPUs of the catalog that list both" in text


EXT = ROOT.parent / "shared" / "data" / "external"


@pytest.mark.skipif(not (EXT / "gpu-benches" / "gpu-cache").is_dir(),
                    reason="needs shared/data/external (gpu-benches)")
def test_the_l1_sweep_numbers_docs_accuracy_analysis_quotes(capsys):
    load_script("doc_numbers").l1_sweep(EXT)
    out = capsys.readouterr().out
    m = re.search(r"an interval \(.*\) on (\d+) of (\d+) pairs, MAPE ([\d.]+) % there against "
                  r"([\d.]+) % on the others; it holds the measured time on ([\d.]+) %", out)
    assert m, out
    n, total, there, others, cov = m.groups()
    text = " ".join((ROOT / "docs" / "accuracy_analysis.md").read_text().split())
    assert f"spans {n} of the {total} pairs" in text
    assert f"({there} % MAPE against {others} % for the others)" in text
    assert f"in {cov} % of them" in text
    # the H100's rate past its L1 and past 0.6 x its L2, as the paragraph quotes them
    h100 = next(line for line in out.splitlines() if line.strip().startswith("h100-pcie-80gb"))
    assert "to 4 MB 8.23" in h100 and "L2 3.69" in h100


@pytest.mark.skipif(not (EXT / "neusight-train").is_dir(),
                    reason="needs shared/data/external (neusight-train)")
def test_the_neusight_bytes_numbers_docs_accuracy_analysis_quotes(capsys):
    load_script("doc_numbers").neusight_bytes(EXT)
    out = capsys.readouterr().out
    plain = re.search(r"neusight bmm, FLOPs only: roofline ([\d.]+) / [\d.]+ %; hierarchical "
                      r"[\d.]+ / [\d.]+ %; hierarchical-ext ([\d.]+) /", out)
    dram = re.search(r"neusight bmm, \+ DRAM bytes: roofline ([\d.]+) / [\d.]+ %; hierarchical "
                     r"[\d.]+ / [\d.]+ %; hierarchical-ext ([\d.]+) /", out)
    share = re.search(r"memory-bound by these bytes at the datasheet peaks: (\d+) % of the rows",
                      out)
    ratios = re.search(r"a100-pcie-40gb -> tesla-p4, median time ratio: memory-bound rows "
                       r"([\d.]+), the others ([\d.]+); DRAM bandwidth ratio ([\d.]+), FP32 peak "
                       r"ratio ([\d.]+)", out)
    assert plain and dram and share and ratios, out
    text = " ".join((ROOT / "docs" / "accuracy_analysis.md").read_text().split())
    assert f"makes {share[1]} % of the bmm rows memory-bound" in text
    slow, others, by_dram, by_fp32 = ratios.groups()
    assert (f"they run {slow}x slower, where the DRAM ratio says {by_dram}x and the FP32 ratio "
            f"{by_fp32}x (the other rows {others}x)") in text
    assert (f"go from {plain[1]} to {dram[1]} % MAPE on bmm and `hierarchical-ext` from "
            f"{plain[2]} to {dram[2]} %") in text


@pytest.mark.skipif(not (EXT / "neusight-train").is_dir(),
                    reason="needs shared/data/external (neusight-train)")
def test_the_neusight_power_limit_numbers_docs_accuracy_analysis_quotes(capsys):
    load_script("doc_numbers").neusight_durations(EXT)
    out = capsys.readouterr().out
    factors = {(table, gpu): values.split(" / ") for table, block in re.findall(
        r"neusight (\w+), hierarchical-ext, each GPU as the target: .*?: (.*)", out)
        for gpu, values in re.findall(r"([\w-]+) ([\d.]+ / [\d.]+ / [\d.]+)", block)}
    errors = re.findall(r"MAPE ([\d.]+) %: pairs with a low-power board ([\d.]+) % \((\d+) % "
                        r"of the pairs\), their rows over 1 ms ([\d.]+) % \((\d+) % of the "
                        r"summed error\), the other pairs ([\d.]+) %; with the two boards' six "
                        r"factors above \(in-sample\) ([\d.]+) / ([\d.]+) % MAPE / median APE, "
                        r"against [\d.]+ / ([\d.]+)", out)
    dense = dict(re.findall(r"([\w-]+ -> tesla-[pt]4) ([\d.]+)", out.split("neusight conv")[0]))
    assert len(factors) == 10 and len(errors) == 2 and len(dense) == 6, out
    text = " ".join((ROOT / "docs" / "accuracy_analysis.md").read_text().split())
    t4, p4 = factors[("bmm", "tesla-t4")], factors[("bmm", "tesla-p4")]
    assert (f"the T4 goes on bmm from {t4[0]} for operators under 0.1 ms on the source to {t4[1]} "
            f"at 0.1-1 ms and {t4[2]} over 1 ms (the P4 {', '.join(p4)})") in text
    others = [float(v) for (table, gpu), vs in factors.items()
              if table == "bmm" and gpu not in ("tesla-t4", "tesla-p4") for v in vs]
    assert f"the other three stay within {min(others):.2f}-{max(others):.2f}" in text
    t4, p4 = factors[("conv", "tesla-t4")], factors[("conv", "tesla-p4")]
    assert f"(T4 {' / '.join(t4)}, P4 {' / '.join(p4)})" in text
    to_t4 = sorted(v for k, v in dense.items() if k.endswith("t4"))
    to_p4 = sorted(v for k, v in dense.items() if k.endswith("p4"))
    assert (f"projects the T4 at {to_t4[0]}-{to_t4[-1]} of its time from each of the three other "
            f"boards and the P4 at {to_p4[0]}-{to_p4[-1]}") in text
    (mape, low, share, long, summed, rest, mape_fixed, med_fixed, med), conv = errors
    assert (f"are {share} % of bmm's pairs and err {low} % MAPE (the others {rest} %); their rows "
            f"over 1 ms err {long} % and carry {summed} % of the summed error") in text
    assert (f"from {mape} / {med} to {mape_fixed} / {med_fixed} % MAPE / median APE on bmm and "
            f"from {conv[0]} / {conv[8]} to {conv[6]} / {conv[7]} % on conv") in text
    # the catalog notes of the two boards quote the same factors
    from gpuproj.catalog import resolve

    for gpu in ("tesla-t4", "tesla-p4"):
        bmm, conv = factors[("bmm", gpu)], factors[("conv", gpu)]
        notes = " ".join(resolve(gpu).notes.split())
        assert (f"over 1 ms it ran at {bmm[2]} (bmm) and {conv[2]} (conv) of the speed its peaks "
                f"give against the A100, P100 and V100 boards, on operators under 0.1 ms at "
                f"{bmm[0]} and {conv[0]}") in notes, gpu
    # the hybrids' T4 fold, from the learned experiments' results
    fold = json.loads((ROOT / "docs" / "results" / "learned.json").read_text())[
        "logo"]["neusight bmm"]["error_per_fold"]
    t4 = {family: fold[family]["target tesla-t4"][0] for family in ("analytical", "hybrid")}
    assert f"the T4 too (bmm {t4['analytical']:.1f} -> {t4['hybrid']:.1f} % MAPE" in text


@pytest.mark.skipif(not (EXT / "kerneltuner-4gpus").is_dir(),
                    reason="needs shared/data/external (kerneltuner-4gpus)")
def test_the_kerneltuner_clock_numbers_docs_accuracy_analysis_quotes(capsys):
    load_script("doc_numbers").kerneltuner_clocks(EXT)
    out = capsys.readouterr().out
    laptop = re.findall(r"kerneltuner (GEMM|convolution): rtx-3060-laptop / rtx-3090 time, "
                        r"median ([\d.]+) .*: as 30 SMs at (\d+) MHz", out)
    turing = re.findall(r"kerneltuner (GEMM|convolution): titan-rtx / rtx-2080-ti time, median "
                        r"([\d.]+) .*; SM counts give ([\d.]+), SMs x rated boost clocks "
                        r"([\d.]+)", out)
    assert len(laptop) == len(turing) == 2, out
    ratio = {t: float(r) for t, r, _ in laptop}
    text = " ".join((ROOT / "docs" / "accuracy_analysis.md").read_text().split())
    assert (f"a median {ratio['GEMM']:.2f}x (GEMM) and {ratio['convolution']:.2f}x "
            "(convolution) longer than the RTX 3090") in text
    # the clocks they imply, quoted as a range rounded to 10 MHz
    assert all(1310 <= int(mhz) <= 1320 for *_, mhz in laptop), laptop
    assert "as 30 SMs at 1310-1320 MHz would" in text
    tr = {t: (float(r), float(sm), float(boost)) for t, r, sm, boost in turing}
    assert (f"ran the variants {tr['convolution'][0]:.2f}x (convolution) and "
            f"{tr['GEMM'][0]:.2f}x (GEMM) the RTX 2080 Ti's time (median), where their SM "
            f"counts give {tr['GEMM'][1]:.2f}x and their rated boost clocks (1770 and 1545 MHz) "
            f"{tr['GEMM'][2]:.2f}x") in text


def test_band_levels_checks_the_bands_as_held_out_does():
    """``band-levels`` fits and checks the bands at many levels at once, on the scores alone;
    at one level it must agree with ``gpuproj.models.bands.held_out`` (coverage and median width
    per method and table, each data source held out in turn)."""
    import numpy as np
    import pandas as pd

    from gpuproj.models.bands import distance, held_out, scores

    dn = load_script("doc_numbers")
    rng = np.random.default_rng(3)
    n = 600
    source = rng.lognormal(-7, 1, n)
    time_s = source * rng.lognormal(0, 0.8, n)
    dataset = rng.choice(["a", "b", "c"], n)
    pairs = pd.DataFrame({
        "method": rng.choice(["bandwidth", "hierarchical"], n),
        "table": [f"{d} t{k}" for d, k in zip(dataset, rng.integers(0, 2, n))],
        "dataset": dataset, "cell": rng.choice(["same_arch", "cross_arch"], n),
        "time_s": time_s, "true_s": time_s * rng.lognormal(0, 0.3, n), "source_time_s": source})
    want = held_out(pairs, 0.9)
    want = want[want["bucket"] == "all"].set_index(["method", "table"])
    fast = pairs.assign(z=scores(pairs), d=distance(pairs["time_s"], pairs["source_time_s"]),
                        key=pd.Categorical(pairs["method"] + " " + pairs["cell"]))
    got = pd.concat(dn._band_check(dn._band_quantiles(fast[fast["dataset"] != s], (0.8, 0.9)),
                                   fast[fast["dataset"] == s], 1)
                    for s in ("a", "b", "c"))
    got = got.loc[want.index]
    np.testing.assert_allclose(got["coverage"], want["covered"] / want["n"])
    # fit_bands rounds its quantiles to 4 decimals
    np.testing.assert_allclose(got["width"], want["width"], rtol=1e-3)
