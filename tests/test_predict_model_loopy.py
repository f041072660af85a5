"""`gpuproj predict --model` (saved learned models next to the analytical methods) and
`gpuproj predict --loopy` (calibrated cost models of Stevens & Kloeckner), through click and
through the library, on a real cross-GPU table excerpt and a real loopy kernel file."""

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gpuproj.cli.main import cli, main
from gpuproj.errors import GpuprojError, InputError
from gpuproj.learned.persistence import save_model
from gpuproj.models import get_model
from gpuproj.predict import predict
from gpuproj.profiles import load

DATA = Path(__file__).parent / "data"
# 2 input sizes of Rodinia's bpnn_adjust_weights measured on 9 GPUs (Amaris et al., CC-BY-4.0)
TABLE = DATA / "amaris-9gpus-bpnn_adjust_weights.csv"
SRC = "gtx-680"
TGTS = ["tesla-p100-pcie-16gb", "gtx-980"]


@pytest.fixture(scope="module")
def table():
    return load(TABLE)


@pytest.fixture(scope="module")
def saved(table, tmp_path_factory):
    """A residual hybrid with 80 % split-conformal intervals, trained on the table (small
    learner, 3 folds: about a second) and saved as residual.json + residual.npz."""
    m = get_model("residual", coverage=0.8, cv_folds=3,
                  learner_params={"max_iter": 10}).fit(table)
    d = tmp_path_factory.mktemp("models")
    save_model(m, d / "residual")
    return m, d / "residual"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def by_key(records):
    return {(r["method"], r["config"], r["target"]): r for r in records}


def run_main(capsys, *args):
    try:
        code = main([str(a) for a in args])
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code or 0, out.out, out.err


# --model ------------------------------------------------------------------------------------
def test_cli_model_equals_model_predict_with_conformal_interval(table, saved):
    m, path = saved
    res = invoke("predict", TABLE, "--source", SRC, "--target", ",".join(TGTS),
                 "--model", path, "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    got = by_key(d["predictions"])
    # with --model and no --method, only the model predicts
    assert {k[0] for k in got} == {"residual"}
    ref = m.predict(table.on(SRC), SRC, TGTS).df
    assert len(got) == len(ref) == 4  # 2 configurations x 2 targets
    for r in ref.itertuples():
        g = got[("residual", r.config, r.target)]
        assert g["time_s"] == pytest.approx(r.time_s, rel=1e-12)
        assert g["low_s"] == pytest.approx(r.low_s, rel=1e-12)
        assert g["high_s"] == pytest.approx(r.high_s, rel=1e-12)
        assert g["low_s"] < g["time_s"] < g["high_s"]  # a real interval, not a point
        assert g["source_time_s"] == pytest.approx(table.on(SRC).df.loc[
            table.on(SRC).df["config"] == r.config, "time_s"].iloc[0])
    # the application total is time x launches summed over the kernels, per target
    app = {a["target"]: a for a in d["application"]}
    for t in TGTS:
        rows = ref[ref["target"] == t]
        assert app[t]["time_s"] == pytest.approx((rows["time_s"] * rows["launches"]).sum())
    info = d["models"]["residual"]
    assert info["class"] == "ResidualHybrid" and info["coverage"] == 0.8
    assert info["trained_on"]["sha256"] == m.train_info_["hash"]
    assert set(info["trained_on"]["gpus"]) == set(table.gpus)
    assert "calibrated on the out-of-fold errors" in " ".join(d["assumptions"]["residual"][TGTS[0]])


def test_model_next_to_methods_and_same_names_take_the_file_stem(table, saved, tmp_path):
    m, path = saved
    for ext in (".json", ".npz"):
        shutil.copy(f"{path}{ext}", tmp_path / f"res-copy{ext}")
    res = invoke("predict", TABLE, "-s", SRC, "-t", TGTS[0], "-m", "hierarchical,roofline",
                 "--model", f"{path},{tmp_path / 'res-copy.json'}", "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    got = by_key(d["predictions"])
    assert {k[0] for k in got} == {"hierarchical", "roofline", "residual", "res-copy"}
    for cfg in table.on(SRC).df["config"]:
        assert (got[("res-copy", cfg, TGTS[0])]["time_s"]
                == got[("residual", cfg, TGTS[0])]["time_s"])
    hier = get_model("hierarchical").predict(table.on(SRC), SRC, [TGTS[0]]).df
    for r in hier.itertuples():
        assert got[("hierarchical", r.config, TGTS[0])]["time_s"] == pytest.approx(r.time_s)
    assert d["models"]["res-copy"]["name"] == "residual"
    # the human table shows the learned interval
    res = invoke("predict", TABLE, "-s", SRC, "-t", TGTS[0], "--model", path)
    assert res.exit_code == 0, res.output
    from gpuproj.units import fmt_time

    ref = m.predict(table.on(SRC), SRC, [TGTS[0]]).df.iloc[0]
    assert f"{fmt_time(ref.low_s)} - {fmt_time(ref.high_s)}" in res.stdout
    assert "calibrated on the out-of-fold errors" in res.stdout
    # the caption says which interval that is (it once called it the range over memory levels)
    assert "interval: a saved model's interval calibrated on out-of-fold errors" in res.stdout
    assert "memory levels" not in res.stdout


def test_api_takes_model_objects_or_paths(table, saved):
    m, path = saved
    a = predict(table, source=SRC, targets=TGTS, models=[m])
    b = predict(table, source=SRC, targets=TGTS, models=[str(path) + ".json"])
    assert list(a.predictions) == list(b.predictions) == ["residual"]
    np.testing.assert_allclose(a.table()["time_s"], b.table()["time_s"], rtol=1e-12)
    np.testing.assert_allclose(a.table()["high_s"], b.table()["high_s"], rtol=1e-12)
    assert a.models["residual"]["path"] is None and b.models["residual"]["path"]
    # without models the default method is the extended hierarchical roofline
    assert list(predict(table, source=SRC, targets=TGTS).predictions) == ["hierarchical-ext"]
    with pytest.raises(GpuprojError, match="residual is a learned method.*--save-model"):
        predict(table, source=SRC, targets=TGTS, methods=["residual"])
    with pytest.raises(TypeError, match="models: expected"):
        predict(table, source=SRC, targets=TGTS, models=[42])
    with pytest.raises(InputError, match="cannot read"):
        predict(table, source=SRC, targets=TGTS, models=[Path(path).parent / "absent"])


def test_notes_name_what_the_model_was_not_trained_on(table, saved, tmp_path):
    m, path = saved
    assert m.train_info_["kernel_names"] == ["bpnn_adjust_weights_cuda"]
    # a kernel of another name, from a trained GPU to one the table does not have
    other = table.on(SRC).df.assign(kernel="renamed")
    r = predict(type(table).from_frame(other), source=SRC, targets=[TGTS[0], "h100-sxm5-80gb"],
                models=[m])
    notes = r.predictions["residual"].assumptions
    unseen = "kernels not in the training data: renamed: the prediction extrapolates"
    new_gpu = "h100-sxm5-80gb was not in the training data: the prediction extrapolates"
    assert unseen in notes[TGTS[0]] and new_gpu not in notes[TGTS[0]]
    assert {unseen, new_gpu} <= set(notes["h100-sxm5-80gb"])
    assert r.models["residual"]["trained_on"]["kernels"] == ["bpnn_adjust_weights_cuda"]
    # the table's own kernel on trained GPUs: nothing is new
    assert not [n for n in predict(table, source=SRC, targets=TGTS, models=[m])
                .predictions["residual"].assumptions[TGTS[0]] if "not in the training" in n]
    # a model saved before the kernel names were kept predicts without that note
    doc = json.loads(Path(f"{path}.json").read_text())
    del doc["train"]["kernel_names"]
    (tmp_path / "older.json").write_text(json.dumps(doc))
    shutil.copy(f"{path}.npz", tmp_path / "older.npz")
    r = predict(type(table).from_frame(other), source=SRC, targets=[TGTS[0]],
                models=[tmp_path / "older"])
    assert unseen not in r.predictions["residual"].assumptions[TGTS[0]]


def test_version_mismatch_warns_on_stderr_not_in_json(saved, tmp_path):
    _, path = saved
    doc = json.loads(Path(f"{path}.json").read_text())
    doc["versions"]["scikit-learn"] = "0.0.1"
    (tmp_path / "old.json").write_text(json.dumps(doc))
    shutil.copy(f"{path}.npz", tmp_path / "old.npz")
    res = invoke("predict", TABLE, "-s", SRC, "-t", TGTS[0], "--model", tmp_path / "old",
                 "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)  # stdout is pure JSON
    assert d["models"]["residual"]["versions"]["scikit-learn"] == "0.0.1"
    warn = [ln for ln in res.stderr.splitlines() if "warning" in ln]
    assert len(warn) == 1 and warn[0].startswith("gpuproj: warning: ")
    assert "scikit-learn 0.0.1" in warn[0]


def test_missing_or_corrupt_model_is_one_line_exit_2(capsys, saved, tmp_path):
    _, path = saved
    code, out, err = run_main(capsys, "predict", TABLE, "-s", SRC, "-t", TGTS[0],
                              "--model", tmp_path / "absent")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("gpuproj: error: ")
    assert "absent.json" in err and "cannot read" in err
    # truncated arrays: the zip's directory is gone
    shutil.copy(f"{path}.json", tmp_path / "cut.json")
    (tmp_path / "cut.npz").write_bytes(Path(f"{path}.npz").read_bytes()[:200])
    code, out, err = run_main(capsys, "predict", TABLE, "-s", SRC, "-t", TGTS[0],
                              "--model", tmp_path / "cut")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert str(tmp_path / "cut") in err
    # truncated JSON
    (tmp_path / "cut.json").write_text(Path(f"{path}.json").read_text()[:100])
    code, _, err = run_main(capsys, "predict", TABLE, "-s", SRC, "-t", TGTS[0],
                            "--model", tmp_path / "cut.json")
    assert code == 2 and "not valid JSON" in err and err.count("\n") == 1


# --loopy ------------------------------------------------------------------------------------
KERNEL = DATA / "calibrated-matmul-kernel.yaml"  # 16x16-tiled matmul with prefetch, float32
EXPR = ("p_launch * f_sync_kernel_launch + p_group * f_thread_groups"
        " + p_madd * f_op_float32_madd + p_g * f_mem_access_global_float32"
        " + p_lmem * f_mem_access_local_float32")


def hand_time(p, n):
    """The linear model by hand for the tiled matmul at size n (counts as pinned in
    tests/test_calibrated_loopy.py): 1 launch, (n/16)^2 work-groups, n^3 madds per 32
    work-items, n^3/16 global loads each of a and b plus n^2 stores, 2n^3 local loads and
    2n^3/16 local stores per 32 work-items."""
    return (p["p_launch"] * 1 + p["p_group"] * (n / 16) ** 2 + p["p_madd"] * n**3 / 32
            + p["p_g"] * (2 * n**3 / 16 + n**2) + p["p_lmem"] * (2 * n**3 + 2 * n**3 / 16) / 32)


def params_file(path, device, params):
    """A parameter file as `gpuproj calibrate` writes it, with chosen values."""
    from gpuproj.calibrated.model import Calibration, CostModel

    cal = Calibration(CostModel("f_wall_time", EXPR, name="linear-matmul"), params, 0.0,
                      np.zeros(0), device=device, subgroup_size=32)
    cal.save(path)
    return path


@pytest.fixture(scope="module")
def two_devices(tmp_path_factory):
    pytest.importorskip("loopy")
    d = tmp_path_factory.mktemp("params")
    fast = {"p_launch": 5e-6, "p_group": 1e-8, "p_madd": 4e-12, "p_g": 2e-11, "p_lmem": 1e-12}
    slow = {k: 3 * v for k, v in fast.items()} | {"p_launch": 2e-5}
    return [(params_file(d / "fast.json", "fast device", fast), fast),
            (params_file(d / "slow.json", "slow device", slow), slow)]


def test_loopy_json_time_is_sum_of_param_times_count(two_devices):
    (fast_path, fast), (slow_path, slow) = two_devices
    res = invoke("predict", "--loopy", KERNEL, "--params", f"{fast_path},{slow_path}",
                 "--sizes", "n=128", "--sizes", "n=256", "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    rows = d["predictions"]
    assert [(r["device"], r["sizes"]["n"]) for r in rows] == [
        ("fast device", 128), ("fast device", 256), ("slow device", 128), ("slow device", 256)]
    for r in rows:
        p = fast if r["device"] == "fast device" else slow
        n = r["sizes"]["n"]
        assert r["time_s"] == pytest.approx(hand_time(p, n), rel=1e-12)
        assert sum(r["terms"].values()) == pytest.approx(r["time_s"], rel=1e-12)
        assert r["features"]["f_op_float32_madd"] * 32 == n**3
        assert r["kernel"] == "matmul_pf" and r["model"] == "linear-matmul"
    # n=128 on the fast device: 5e-6 + 64e-8 + 65536*4e-12 + 278528*2e-11 + 139264*1e-12 s
    assert rows[0]["time_s"] == pytest.approx(1.1611968e-05, rel=1e-12)


def test_loopy_table_and_csv(two_devices):
    (fast_path, fast), _ = two_devices
    res = invoke("predict", "--loopy", KERNEL, "--params", fast_path, "--sizes", "n=256")
    assert res.exit_code == 0, res.output
    assert "fast device" in res.stdout and "54 us" in res.stdout  # hand_time(fast, 256)
    assert hand_time(fast, 256) == pytest.approx(5.4025024e-05)
    # the global loads: (2 x 256^3 / 16 + 256^2) x 2e-11 s = 43.3 us of 54.0 us
    assert "p_g * f_mem_access_global_float32 (80 %)" in res.stdout
    res = invoke("predict", "--loopy", KERNEL, "--params", fast_path, "--sizes", "n=128",
                 "--csv")
    assert res.exit_code == 0, res.output
    header, line = res.stdout.strip().splitlines()
    assert header == "params_file,device,model,kernel,sizes,time_s"
    assert line.endswith(",fast device,linear-matmul,matmul_pf,n=128,1.1611968e-05")


def test_loopy_errors(capsys, two_devices, tmp_path):
    (fast_path, _), _ = two_devices
    # n must be a multiple of 16 (the kernel's assumptions): one line, exit 2
    code, out, err = run_main(capsys, "predict", "--loopy", KERNEL, "--params", fast_path,
                              "--sizes", "n=100")
    assert code == 2 and out == "" and err.count("\n") == 1 and "field 'sizes'" in err
    # a domain isl cannot parse: loopy printed it to standard output, before the JSON
    bad = tmp_path / "bad.yaml"
    bad.write_text(Path(KERNEL).read_text().replace("0<=i,j,k<n}", "0<=i,j,k<n and (}"))
    code, out, err = run_main(capsys, "predict", "--loopy", bad, "--params", fast_path,
                              "--sizes", "n=128", "--json")
    assert code == 2 and out == "" and "bad.yaml: loopy rejected the kernel" in err
    code, _, err = run_main(capsys, "predict", "--loopy", KERNEL, "--params",
                            tmp_path / "absent.json")
    assert code == 2 and "absent.json" in err and err.count("\n") == 1
    for args, msg in [
        (["--loopy", KERNEL], "needs --params"),
        (["--loopy", KERNEL, "--params", ""], "needs --params"),  # was an IndexError
        (["--loopy", KERNEL, "--params", fast_path, "-t", "a100"], "--target applies"),
        (["--loopy", KERNEL, "--params", fast_path, "--sizes", "n"], "not NAME=INTEGER"),
        ([TABLE, "--loopy", KERNEL, "--params", fast_path], "not both"),
        ([TABLE, "-t", "a100", "--sizes", "n=1"], "go with --loopy"),
        ([], "give a PROFILE"),
        ([TABLE], "--target"),
    ]:
        res = invoke("predict", *args)
        assert res.exit_code == 2 and msg in res.output, (args, res.output)


def test_a_time_that_negative_costs_make_negative_is_an_error(capsys, tmp_path):
    # a fit's negative cost outweighing the others printed "-512 ms", exit 0
    pytest.importorskip("loopy")
    params = {"p_launch": -5e-6, "p_group": 1e-8, "p_madd": -4e-9, "p_g": 2e-11,
              "p_lmem": 1e-12}
    path = params_file(tmp_path / "neg.json", "dev", params)
    assert hand_time(params, 128) < 0
    code, out, err = run_main(capsys, "predict", "--loopy", KERNEL, "--params", path,
                              "--sizes", "n=128")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "neg.json: prediction is -0.000261 s for sizes {'n': 128}, not positive (negative " \
           "parameters: p_launch, p_madd)" in err


def test_parameters_of_a_model_for_other_kernels_warn(tmp_path):
    """A model that prices tagged accesses (DG's per-variant loads) applied to a kernel that
    tags none of them counts those accesses as 0: a warning names the tags. A kernel with one
    of them (one variant of the family) is in the model's scope."""
    from gpuproj.calibrated import predict_loopy
    from gpuproj.calibrated.model import Calibration, CostModel
    from gpuproj.errors import InputWarning

    pytest.importorskip("loopy")
    expr = "p_launch * f_sync_kernel_launch + p_a * f_mem_access_tag:plain_dLD"
    cal = Calibration(CostModel("f_wall_time", expr, name="tagged"),
                      {"p_launch": 5e-6, "p_a": 1e-11}, 0.0, np.zeros(0), device="d",
                      subgroup_size=32)
    cal.save(tmp_path / "tagged.json")
    with pytest.warns(InputWarning, match="model 'tagged' prices accesses tagged plain_dLD, "
                      "and kernel matmul_pf .* tags none of them"):
        r = predict_loopy(KERNEL, tmp_path / "tagged.json", {"n": 128})
    assert r["features"]["f_mem_access_tag:plain_dLD"] == 0
    # the same kernel with the tag on its loads of a: no warning, the loads priced
    kernel = tmp_path / "k.yaml"
    kernel.write_text(KERNEL.read_text().replace("aLD: [[a, load]]", "plain_dLD: [[a, load]]"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        r = predict_loopy(kernel, tmp_path / "tagged.json", {"n": 128})
    assert r["features"]["f_mem_access_tag:plain_dLD"] > 0


@pytest.mark.parametrize("edit, where", [
    (lambda d: d.pop("model"), "field 'model': expected a mapping"),
    (lambda d: d.update(model=[1, 2]), "field 'model': expected a mapping"),
    (lambda d: d["model"].pop("expression"), "field 'model.expression': expected text"),
    (lambda d: d["model"].update(output={"a": 1}), "field 'model.output': expected text"),
    (lambda d: d["model"].update(features=-1), "field 'model.features': expected a mapping"),
    (lambda d: d["model"].update(features={"f_x": [1]}),
     "field 'model.features': expected an expr"),
    # the model's own checks name its keys as the parameter file has them, under model.
    (lambda d: d["model"].update(output="f_op_float32_add"),
     "field 'model.output': output feature 'f_op_float32_add' is not a measured time"),
    (lambda d: d.pop("params"), "field 'params': expected a mapping"),
    (lambda d: d["params"].update(p_g="x"), "field 'params.p_g': expected a finite number"),
    (lambda d: d["params"].update(p_g=None), "field 'params.p_g': expected a finite number"),
    (lambda d: d["params"].update(p_g=10**400), "field 'params.p_g': expected a finite number"),
    (lambda d: d["params"].pop("p_g"), "field 'params': parameters ['p_g'] missing"),
    (lambda d: d.update(subgroup_size=[]),
     "field 'subgroup_size': sub-group size must be a positive integer"),
])
def test_a_damaged_params_file_is_one_line(capsys, two_devices, tmp_path, edit, where):
    # each of these was a KeyError, TypeError or AttributeError traceback
    (fast_path, _), _ = two_devices
    d = json.loads(fast_path.read_text())
    edit(d)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    code, out, err = run_main(capsys, "predict", "--loopy", KERNEL, "--params", bad,
                              "--sizes", "n=128")
    assert code == 2 and out == "" and err.count("\n") == 1 and where in err, err


@pytest.mark.parametrize("model, where", [
    ({"expression": "p_g * (f_x"}, "field 'model.expression': expected ')'"),
    ({"features": {"f_x": "1 +"}}, "field 'model.features.f_x': expected a number"),
])
def test_a_params_file_expression_error_names_its_key(capsys, two_devices, tmp_path, model,
                                                      where):
    # a parse error points at the token (message, expression, caret: three lines)
    (fast_path, _), _ = two_devices
    d = json.loads(fast_path.read_text())
    d["model"].update(model)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    code, out, err = run_main(capsys, "predict", "--loopy", KERNEL, "--params", bad,
                              "--sizes", "n=128")
    assert code == 2 and out == "" and where in err.splitlines()[0], err


MATMUL = KERNEL.read_text()


@pytest.mark.parametrize("text, where", [
    (MATMUL.replace("{name: n, dtype: int32}", "{name: 0, dtype: int32}"),
     "field 'args': argument 2 needs a name"),
    (MATMUL.replace("shape: [n, n]", "shape: [n, {a: 1}]"),
     "field 'args': argument 1: expected a shape"),
    (MATMUL.replace("bLD: [[b, load]]", "bLD: 0"), "field 'access_tags': expected a mapping"),
    (MATMUL + "sizes: [128]\n", "field 'sizes': expected a mapping"),
    ("name: '[1, 2]'\n" + MATMUL.replace("name: matmul_pf\n", ""),
     "field 'name': '[1, 2]' is not a kernel name"),
    (MATMUL.replace("sweep_inames: [i_inner, k_inner]", "sweep_inames: null"),
     "loopy cannot count the kernel: UnableToDetermineAccessRangeError: unable to determine"),
    ("generator: [matmul_sq]\n", "field 'generator': unknown generator ['matmul_sq']"),
    ("generator: matmul_sq\nargs: [prefetch]\n", "field 'args': expected a mapping"),
    # below: each named no file, the wrong field, or called bad sizes a domain error
    (MATMUL + "sizes: {n: abc}\n", "bad.yaml, field 'sizes.n': expected an integer, found 'abc'"),
    (MATMUL + "sizes: {n: true}\n", "field 'sizes.n': expected an integer, found True"),
    (MATMUL + "sizes: {n: 128.5}\n", "field 'sizes.n': expected an integer, found 128.5"),
    ("generator: matmul_sq\nargs: {prefetch: maybe}\n",
     "bad.yaml, field 'args.prefetch': generator matmul_sq: prefetch:maybe is not true or false"),
    ("generator: matmul_sq\nargs: {n: 0}\n", "field 'args.n': generator matmul_sq: n:0 is not "
     "a positive integer"),
    ("generator: matmul_sq\nargs: {prefetch: true}\n",
     "field 'args': args select 2 variants; give one value for each of n\n"),
    # several values given in args name that argument too (the list was empty)
    ("generator: matmul_sq\nargs: {prefetch: true, n: '128,192'}\n",
     "field 'args': args select 2 variants; give one value for each of n\n"),
    ("generator: matmul_sq\nargs: {prefetch: true, n: 100}\n",
     "field 'args.n': generator matmul_sq makes no kernel of these argument values: n:100 is "
     "not a multiple of lsize_0:16"),
])
def test_a_damaged_kernel_file_is_one_line(capsys, two_devices, tmp_path, text, where):
    # each of these was a TypeError, AttributeError, KeyError or loopy traceback
    (fast_path, _), _ = two_devices
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    code, out, err = run_main(capsys, "predict", "--loopy", bad, "--params", fast_path,
                              "--sizes", "n=128")
    assert code == 2 and out == "" and err.count("\n") == 1 and where in err, err


def test_errors_of_a_prediction_name_the_file(capsys, two_devices, tmp_path):
    """A kernel file without sizes, a size feature the kernel lacks, a division by a feature
    that is 0 in the kernel: one line naming the file (and the kernel), exit 2; the last was a
    ZeroDivisionError traceback."""
    (fast_path, fast), _ = two_devices
    code, out, err = run_main(capsys, "predict", "--loopy", KERNEL, "--params", fast_path)
    assert code == 2 and out == "" and err == (
        f"gpuproj: error: {KERNEL}, field 'sizes': kernel 'matmul_pf' needs size parameter(s) "
        "['n']; given []\n")
    d = json.loads(fast_path.read_text())
    d["model"]["expression"] = EXPR + " + p_x * f_size:m"
    d["params"]["p_x"] = 1e-9
    bad = tmp_path / "sizefeat.json"
    bad.write_text(json.dumps(d))
    code, out, err = run_main(capsys, "predict", "--loopy", KERNEL, "--params", bad,
                              "--sizes", "n=128")
    assert code == 2 and out == "" and err == (
        f"gpuproj: error: {bad}, field 'model.expression': f_size:m: kernel matmul_pf has no size "
        "parameter 'm' (it has n)\n")
    d["model"]["expression"] = "p_x * f_op_float32_madd / f_op_float32_add"
    bad.write_text(json.dumps(d))
    code, out, err = run_main(capsys, "predict", "--loopy", KERNEL, "--params", bad,
                              "--sizes", "n=128")
    assert code == 2 and out == "" and err == (
        f"gpuproj: error: {bad}, field 'model.expression': the expression p_x * "
        "f_op_float32_madd / f_op_float32_add is not a finite number for kernel matmul_pf at "
        "sizes {'n': 128}: float division by zero\n")


@pytest.mark.parametrize("n", [1024.7, 1024.0, True, "1024"])
def test_predict_loopy_refuses_sizes_that_are_not_integers(two_devices, n):
    # 1024.7 was predicted as 1024 without a word
    from gpuproj.calibrated import predict_loopy

    (fast_path, _), _ = two_devices
    with pytest.raises(InputError, match=rf"field 'sizes\.n': expected an integer, found "
                                         rf"{n!r}"):
        predict_loopy(KERNEL, fast_path, {"n": n})
    assert predict_loopy(KERNEL, fast_path, {"n": np.int64(128)})["sizes"] == {"n": 128}


def test_sizes_outside_the_kernels_domain_are_named_where_they_come_from(capsys, tmp_path):
    # the kernel assumes n mod 16 = 0: --sizes n=17 is named as given; the kernel file's own
    # sizes were named "sizes {}", the empty command-line set
    pytest.importorskip("loopy")
    params = {"p_launch": 5e-6, "p_group": 1e-8, "p_madd": 4e-11, "p_g": 2e-11, "p_lmem": 1e-12}
    path = params_file(tmp_path / "p.json", "dev", params)
    code, _, err = run_main(capsys, "predict", "--loopy", KERNEL, "--params", path,
                            "--sizes", "n=17")
    assert code == 2 and "field 'sizes': sizes {'n': 17} are outside the kernel's domain" in err
    own = tmp_path / "k17.yaml"
    own.write_text(KERNEL.read_text() + "sizes: {n: 17}\n")
    code, _, err = run_main(capsys, "predict", "--loopy", own, "--params", path)
    assert code == 2 and "field 'sizes': the kernel file's sizes are outside" in err


def test_the_api_names_sizes_outside_the_kernels_domain(tmp_path):
    # the same one-line error from the Python API as from the command line (a notebook got
    # isl's bare ValueError)
    pytest.importorskip("loopy")
    from gpuproj.calibrated import predict_loopy

    params = {"p_launch": 5e-6, "p_group": 1e-8, "p_madd": 4e-11, "p_g": 2e-11, "p_lmem": 1e-12}
    path = params_file(tmp_path / "p.json", "dev", params)
    with pytest.raises(InputError, match=r"field 'sizes': sizes \{'n': 17\} are outside"):
        predict_loopy(KERNEL, path, {"n": 17})
