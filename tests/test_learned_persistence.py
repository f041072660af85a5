"""Saved learned models: same predictions after loading, no code execution, version warnings."""

import json
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
    np.testing.assert_allclose(back.predict_pairs(probe), m.predict_pairs(probe), rtol=1e-9)
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
    got = back.predict_pairs(probe)
    np.testing.assert_allclose(got, m.predict_pairs(probe), rtol=1e-9)
    eff, bw = (get_model("physics-best") for _ in range(2))
    eff.chain_, bw.chain_ = ["efficiency", "bandwidth"], ["bandwidth"]
    for x in (eff, bw):
        x.spec_, x.learner_, x.features_ = m.spec_, None, []
    np.testing.assert_allclose(got, np.sqrt(eff.predict_pairs(probe) * bw.predict_pairs(probe)),
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
    np.testing.assert_allclose(back.predict_pairs(probe), m.predict_pairs(probe), rtol=1e-9)


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
        load_model(jpath).predict_pairs(make_pairs(synth).iloc[:3])
