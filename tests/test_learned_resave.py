"""A loaded model saves again: save -> load -> save -> load writes the same files and predicts
the same, for every model kind (a loaded learner exports its stored arrays, not a fitted
scikit-learn estimator it no longer has)."""

import json

import numpy as np
import pytest
from learned_helpers import synthetic_table

from gpuproj.learned.models import Conformal
from gpuproj.learned.pairs import make_pairs
from gpuproj.learned.persistence import load_model, save_model
from gpuproj.models import get_model

GB = {"learner_params": {"max_iter": 10}}  # few boosting rounds: tiny data, many threads


@pytest.fixture(scope="module")
def synth():
    return synthetic_table(n_configs=10)


@pytest.mark.parametrize("name,params", [
    ("rf", {"learner_params": {"n_estimators": 5}}),
    ("gb", GB),
    ("svr", {"learner_params": {"max_samples": 200}}),
    ("knn", {}),
    ("linear", {}),
    ("ridge", {}),
    ("lasso", {}),
    ("residual", GB),
    ("bounded-efficiency", GB),
    ("ensemble", GB),
    ("ensemble", {**GB, "members": ("physics", "residual", "gb", "lasso")}),
    ("physics-best", {}),
    ("conformal", {}),
])
def test_a_loaded_model_saves_again_the_same(tmp_path, synth, name, params):
    if name == "conformal":
        m = Conformal(base="hierarchical", coverage=0.8)
    else:
        m = get_model(name, coverage=0.8, cv_folds=2, **params)
    m.fit(synth)
    first = save_model(m, tmp_path / "first")
    back = load_model(first[0])
    second = save_model(back, tmp_path / "second")
    again = load_model(second[0])
    # the same file content: the JSON document (it has no timestamp) and every array, by name
    # and dtype (the .npz archives differ only in their zip entries' dates)
    assert json.loads(second[0].read_text()) == json.loads(first[0].read_text())
    with np.load(first[1]) as a, np.load(second[1]) as b:
        assert a.files == b.files
        for k in a.files:
            assert a[k].dtype == b[k].dtype, k
            np.testing.assert_array_equal(b[k], a[k], err_msg=k)
    # the same predictions and intervals, also of the model as fitted; the H100 lies outside
    # the training range (the interval leans on the kept error bands)
    probe = make_pairs(synth)
    np.testing.assert_array_equal(again._predict_pairs(probe), back._predict_pairs(probe))
    np.testing.assert_allclose(back._predict_pairs(probe), m._predict_pairs(probe), rtol=1e-9)
    targets = ["rtx-4070", "h100-sxm5-80gb"]
    fitted, loaded, reloaded = (x.predict(synth.on("titan-v"), "titan-v", targets).df
                                for x in (m, back, again))
    for col in ("time_s", "low_s", "high_s"):
        np.testing.assert_array_equal(reloaded[col], loaded[col], err_msg=col)
        np.testing.assert_allclose(loaded[col], fitted[col], rtol=1e-9, err_msg=col)
