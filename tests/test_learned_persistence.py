"""Saved learned models: same predictions after loading, no code execution, version warnings."""

import json
import re
import warnings

import numpy as np
import pytest
from learned_helpers import synthetic_table

from gpuproj.errors import InputError
from gpuproj.learned.pairs import make_pairs
from gpuproj.learned.persistence import ModelVersionWarning, load_model, save_model
from gpuproj.models import get_model


@pytest.fixture(scope="module")
def synth():
    return synthetic_table(n_configs=10)


@pytest.mark.parametrize("name,params", [
    ("residual", {"learner_params": {"max_iter": 20}}),
    ("rf", {"learner_params": {"n_estimators": 15}}),
    # the report's set-up (scripts/learned_experiments.py): the source time alone, in ms
    ("rf", {"learner_params": {"n_estimators": 15}, "target": "ms",
            "pair_features": "source_time"}),
    ("knn", {}),
    ("svr", {"learner_params": {"max_samples": 200}}),
    ("ensemble", {"cv_folds": 2, "learner_params": {"max_iter": 10}}),
    ("ensemble", {"cv_folds": 2, "learner_params": {"max_iter": 10},
                  "members": ("physics", "residual", "gb", "lasso")}),
])
def test_roundtrip_predicts_the_same(tmp_path, synth, name, params):
    m = get_model(name, coverage=0.8, **params).fit(synth)
    jpath, _ = save_model(m, tmp_path / name)
    doc = json.loads(jpath.read_text())
    assert doc["model"]["features"] == m.features_
    assert doc["train"]["hash"] == m.train_info_["hash"]
    assert {"gpuproj", "scikit-learn", "numpy"} <= set(doc["versions"])
    assert doc["metrics"]["cross_validation"]["n"] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelVersionWarning)
        back = load_model(jpath)
    probe = make_pairs(synth)
    np.testing.assert_allclose(back._predict_pairs(probe), m._predict_pairs(probe), rtol=1e-9)
    # the H100 lies outside the training range: its interval leans on the kept error bands
    a = m.predict(synth.on("titan-v"), "titan-v", ["rtx-4070", "h100-sxm5-80gb"]).df
    b = back.predict(synth.on("titan-v"), "titan-v", ["rtx-4070", "h100-sxm5-80gb"]).df
    np.testing.assert_allclose(b["low_s"], a["low_s"], rtol=1e-9)
    np.testing.assert_allclose(b["high_s"], a["high_s"], rtol=1e-9)
    assert back.outside_bands_ == getattr(m, "outside_bands_", {})


def test_roundtrip_of_a_geomean_physics_base(tmp_path, synth):
    """A chain headed by the geometric mean of two methods (chosen where averaging validates;
    the synthetic table does not ask for one, so it is set by hand) is saved by name and
    recomputed on loading."""
    m = get_model("physics-best").fit(synth)
    m.chain_ = ["geomean(efficiency,bandwidth)", "bandwidth"]
    back = load_model(save_model(m, tmp_path / "physics")[0])
    assert back.chain_ == m.chain_
    probe = make_pairs(synth)
    got = back._predict_pairs(probe)
    np.testing.assert_allclose(got, m._predict_pairs(probe), rtol=1e-9)
    eff, bw = (get_model("physics-best") for _ in range(2))
    eff.chain_, bw.chain_ = ["efficiency", "bandwidth"], ["bandwidth"]
    for x in (eff, bw):
        x.spec_, x.learner_, x.features_ = m.spec_, None, []
    np.testing.assert_allclose(got, np.sqrt(eff._predict_pairs(probe) * bw._predict_pairs(probe)),
                               rtol=1e-9)


def test_other_versions_warn_and_numpy_path_is_used(tmp_path, synth):
    m = get_model("gb", learner_params={"max_iter": 10}).fit(synth)
    jpath, _ = save_model(m, tmp_path / "gb")
    doc = json.loads(jpath.read_text())
    doc["versions"]["scikit-learn"] = "0.0.1"
    jpath.write_text(json.dumps(doc))
    with pytest.warns(ModelVersionWarning, match="scikit-learn 0.0.1"):
        back = load_model(jpath)
    assert back.learner_.compiled_ is None  # version-independent numpy trees
    probe = make_pairs(synth).iloc[:50]
    np.testing.assert_allclose(back._predict_pairs(probe), m._predict_pairs(probe), rtol=1e-9)


def test_a_loaded_model_saved_again_keeps_the_versions_it_was_trained_with(tmp_path, synth):
    """Saving a loaded model writes the library versions it was trained with, not the installed
    ones: its file still warns, and its trees still take the version-independent path. Fitted
    anew, it was trained with the installed ones."""
    m = get_model("gb", coverage=None, learner_params={"max_iter": 10}).fit(synth)
    jpath, _ = save_model(m, tmp_path / "gb")
    doc = json.loads(jpath.read_text())
    doc["versions"]["scikit-learn"] = "0.0.1"
    jpath.write_text(json.dumps(doc))
    with pytest.warns(ModelVersionWarning):
        back = load_model(jpath)
    again_path, _ = save_model(back, tmp_path / "again")
    assert json.loads(again_path.read_text())["versions"] == doc["versions"]
    with pytest.warns(ModelVersionWarning, match="scikit-learn 0.0.1"):
        again = load_model(again_path)
    assert again.learner_.compiled_ is None
    refit, _ = save_model(again.fit(synth), tmp_path / "refit")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelVersionWarning)
        load_model(refit)


def test_load_refuses_foreign_files(tmp_path, synth):
    m = get_model("ridge").fit(synth)
    jpath, npath = save_model(m, tmp_path / "ridge")
    doc = json.loads(jpath.read_text())
    doc["model"]["class"] = "os.system"
    jpath.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="unknown model class"):
        load_model(jpath)
    (tmp_path / "x.json").write_text(json.dumps({"format": "pickle"}))
    with pytest.raises(InputError, match="not a gpuproj model"):
        load_model(tmp_path / "x.json")
    # arrays holding Python objects are refused (allow_pickle=False)
    doc["model"]["class"] = "RidgeModel"
    jpath.write_text(json.dumps(doc))
    np.savez(npath, **{"learner/coef": np.array([object()], dtype=object)})
    with pytest.raises(InputError, match="cannot read the model arrays"):
        load_model(jpath)._predict_pairs(make_pairs(synth).iloc[:3])
    # a text file given as the model; versions that are no object
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InputError, match="notes.txt: not a gpuproj model .one is the PATH.json"):
        load_model(tmp_path / "notes.txt")
    doc["versions"] = None
    jpath.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="field 'versions': expected an object"):
        load_model(jpath)


def test_a_pure_learner_stays_within_10x_of_its_training_ratios(tmp_path, synth):
    """A linear learner on ln time extrapolates without bound; its predictions are held to 10x
    past the smallest and largest target / source time ratios it was trained on, also after
    saving and loading."""
    m = get_model("ridge").fit(synth)
    pairs = make_pairs(synth)
    r = np.log(pairs["true_s"] / pairs["time_s"])
    lo, hi = m.span_
    assert (lo, hi) == pytest.approx((r.min() - np.log(10), r.max() + np.log(10)))
    probe = pairs.iloc[:20].copy()
    for col in ("flops", "dram_bytes"):  # a kernel 1e12x larger than any trained on
        probe[col] = probe[col] * 1e12
    back = load_model(save_model(m, tmp_path / "ridge")[0])
    for model in (m, back):
        ratio = model._predict_pairs(probe) / probe["time_s"].to_numpy()
        assert np.all(ratio <= np.exp(hi) * (1 + 1e-9)) and np.all(ratio >= np.exp(lo) * 0.999)
        # the bound binds (unbounded, this probe goes below the smallest ratio)
        assert np.any(np.isclose(ratio, np.exp(lo)) | np.isclose(ratio, np.exp(hi)))


@pytest.fixture(scope="module")
def saved_ensemble(tmp_path_factory, synth):
    """An ensemble (physics, residual and gb members: chain, guard, weights, trees) saved once;
    the damage tests edit copies of its two files."""
    m = get_model("ensemble", coverage=0.8, cv_folds=2,
                  learner_params={"max_iter": 10}).fit(synth)
    return save_model(m, tmp_path_factory.mktemp("saved") / "ensemble")


def _damaged(tmp_path, saved, edit_json=None, edit_arrays=None):
    jpath, npath = saved
    doc = json.loads(jpath.read_text())
    if edit_json:
        edit_json(doc)
    arrays = dict(np.load(npath))
    if edit_arrays:
        edit_arrays(arrays)
    (tmp_path / "m.json").write_text(json.dumps(doc))
    np.savez(tmp_path / "m.npz", **arrays)
    return tmp_path / "m.json"


def _set(path, value):
    def edit(doc):
        *head, last = path
        for k in head:
            doc = doc[k]
        if value is KeyError:
            del doc[last]
        else:
            doc[last] = value
    return edit


@pytest.mark.parametrize("path,value,field", [
    (("model", "members", 1, "features", 3), 0, "model.members[1].features"),
    (("model", "members", 1, "features", 3), "no_such_feature", "model.members[1].features"),
    (("model", "members", 1, "chain", 0), "rf", "model.members[1].chain"),
    (("model", "members", 1, "guard", "t_compute_capability"), [1.0, None, 2.0],
     "model.members[1].guard"),
    (("model", "members", 2, "spec", "extras", 0), {}, "model.members[2].spec.extras"),
    (("model", "known_kernels"), KeyError, "model.known_kernels"),
    (("model", "weights", "*"), [0.5, 0.5], "model.weights"),
    (("model", "params", "coverage"), "0.9", "model.params.coverage"),
    (("model", "params", "members"), ["physics"], "model.members"),
    (("model", "post"), 0.5, "model.post"),
    (("train", "gpus"), KeyError, "train.gpus"),
    (("conformal", "hi"), KeyError, "conformal.hi"),
    # inconsistent values: an interval whose ends are swapped
    (("conformal", "hi"), "-inf", "conformal.hi"),
    (("model", "members", 1, "guard", "t_compute_capability"), [9.0, 7.0, 2.0],
     "model.members[1].guard"),
    (("model", "members", 1, "guard", "t_compute_capability"), [7.0, 9.0, 0.0],
     "model.members[1].guard"),
    (("model", "members", 2, "span"), [1.0, -1.0], "model.members[2].span"),
    # values that load and then crash or mislead a prediction
    (("model", "params", "coverage"), None, "model.params.coverage"),  # 100 * None
    (("model", "params", "members"), ["gb", "residual", "bounded-efficiency", "physics"],
     "model.members[0].class"),
    (("model", "params", "members"), ["physics", "residual", "bounded-efficiency", "xx"],
     "model.params"),
    (("model", "members", 3, "params", "target"), "foo", "model.members[3].params"),
    (("conformal", "offset"), -5.0, "conformal.offset"),  # low > point > high
    (("model", "weights", "*"), [1.0, -1.0, 0.0], "model.weights"),
    (("model", "weights", "*"), [0.0, 0.0, 0.0], "model.weights"),
    (("train", "pairs"), True, "train.pairs"),
    # format 1 took the launch overhead in microseconds and a missing FMA count as 0
    (("format_version",), 1, "format_version"),
    (("model", "members", 3, "learner", "kind"), "zzz", "model.members[3].learner.kind"),
    (("model", "members", 3, "learner", "baseline"), KeyError,
     "model.members[3].learner.baseline"),
])
def test_damaged_model_file_stops_at_load_naming_the_field(tmp_path, saved_ensemble, path,
                                                           value, field):
    """A hand-edited or damaged model file stops at load with the field it got wrong, not with
    a traceback from inside a prediction (the ensemble's members: 0 physics, 1 residual,
    2 bounded-efficiency, 3 gb)."""
    jpath = _damaged(tmp_path, saved_ensemble, edit_json=_set(path, value))
    with pytest.raises(InputError, match=f"field '{re.escape(field)}'"):
        load_model(jpath)


def _tree_edit(key, fn):
    def edit(arrays):
        k = next(k for k in arrays if k.endswith(f"learner/tree_{key}"))
        arrays[k] = fn(arrays[k].copy())
    return edit


def _first_inner(a, value):
    a[np.flatnonzero(a >= 0)[0]] = value
    return a


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("edit,message", [
    # a child index past the arrays: scikit-learn's compiled trees would read out of bounds
    (_tree_edit("left", lambda a: _first_inner(a, 10 ** 6)), "child indices"),
    # a node that is its own child: the numpy walk would never end
    (_tree_edit("right", lambda a: _first_inner(a, 0)), "child indices"),
    (_tree_edit("feature", lambda a: _first_inner(a, 10 ** 4)), "feature index below"),
    (_tree_edit("value", lambda a: a[:-1]), "tree_value"),
    (_tree_edit("roots", lambda a: a[::-1]), "tree_roots"),
])
def test_damaged_tree_arrays_stop_at_load(tmp_path, saved_ensemble, edit, message, compiled):
    """Tree node arrays are checked before either tree path sees them: before this, a child
    index out of range crashed the process in scikit-learn's compiled code (the path taken
    when the saving scikit-learn is installed) and a cycle hung the numpy path."""
    def versions(doc):
        if not compiled:
            doc["versions"]["scikit-learn"] = "0.0.1"

    jpath = _damaged(tmp_path, saved_ensemble, edit_json=versions, edit_arrays=edit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelVersionWarning)
        with pytest.raises(InputError, match=f"cannot read the model arrays: .*{message}"):
            load_model(jpath)


@pytest.mark.parametrize("learner,key", [("knn", "train_X"), ("svr", "support_vectors"),
                                         ("lasso", "coef")])
def test_learner_arrays_of_the_wrong_shape_stop_at_load(tmp_path, synth, learner, key):
    m = get_model(learner, learner_params={"max_samples": 200} if learner != "lasso" else {}
                  ).fit(synth)
    saved = save_model(m, tmp_path / learner)
    jpath = _damaged(tmp_path, saved, edit_arrays=lambda a: a.update(
        {f"learner/{key}": a[f"learner/{key}"][..., :-1]}))
    with pytest.raises(InputError, match=f"array '{key}' must be"):
        load_model(jpath)


def test_model_arrays_are_refused_before_they_are_read(tmp_path, saved_ensemble, monkeypatch):
    """An array no learner reads, or arrays that would expand past the cap (a deflated file of
    zeros: 2 MB on disk took 2 GB), stop at load before anything is read into memory; a file
    that is not an archive says so (numpy's advice was to unpickle it)."""
    import gpuproj.learned.persistence as P

    jpath = _damaged(tmp_path, saved_ensemble,
                     edit_arrays=lambda a: a.update({"m1/learner/zz_extra": np.zeros(3)}))
    with pytest.raises(InputError, match="array 'm1/learner/zz_extra' is not part of the model"):
        load_model(jpath)
    jpath = _damaged(tmp_path, saved_ensemble)
    monkeypatch.setattr(P, "MAX_ARRAY_BYTES", 1000)
    with pytest.raises(InputError, match="GiB of memory, more than any model gpuproj trains"):
        load_model(jpath)
    monkeypatch.undo()
    (tmp_path / "m.npz").write_text("garbage")
    with pytest.raises(InputError, match=r"m\.npz: not an \.npz archive"):
        load_model(jpath)


@pytest.mark.parametrize("learner", ["lasso", "svr"])
def test_an_intercept_that_is_not_one_value_stops_at_load(tmp_path, synth, learner):
    m = get_model(learner, learner_params={"max_samples": 200} if learner == "svr" else {}
                  ).fit(synth)
    jpath = _damaged(tmp_path, save_model(m, tmp_path / learner),
                     edit_arrays=lambda a: a.update({"learner/intercept": np.array(1.0)}))
    with pytest.raises(InputError, match="array 'intercept' must be one finite value"):
        load_model(jpath)


def test_knn_draws_its_training_subsample_with_the_models_seed(synth):
    fit = [get_model("knn", random_state=seed, learner_params={"max_samples": 50}).fit(synth)
           for seed in (0, 0, 1)]
    x = [m.learner_.train_X_ for m in fit]
    assert np.array_equal(x[0], x[1]) and not np.array_equal(x[0], x[2])
