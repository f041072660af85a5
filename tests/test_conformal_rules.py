"""scripts/conformal_rules.py: every rule's coverage on a small leave-one-GPU-out run, so that a
change to the splits or the learned models cannot break the script unnoticed (it did once: a
MultiIndex where it expected a Series)."""

import json

import numpy as np
from conftest import load_script
from learned_helpers import GPUS, synthetic_table


def test_every_rule_is_scored_on_every_held_out_gpu(tmp_path, monkeypatch):
    cr = load_script("conformal_rules")
    synthetic_table(n_configs=6).df.to_csv(tmp_path / "t.csv", index=False)
    # a measurement table has no data source of its own in the shipped bands: the seed
    # report's stand in (the synthetic rows are priced on its four GPUs)
    bands = cr.le.bands_without("seed-report")
    monkeypatch.setattr(cr.le, "bands_without", lambda fmt: bands)
    res = cr.study(tmp_path, "synthetic", "measurement", ["t.csv"], lambda line: None)
    assert set(res) == set(cr.le.HYBRIDS)
    for rules in res.values():
        assert set(rules) == {*cr.RULES, "shipped"}
        # three training GPUs per fold, too few for a quantile over GPUs: the model widens
        # outside the range, and what it returns is the band rule
        assert rules["shipped"] == {k: v for k, v in rules["+ band outside"].items()
                                    if k != "per_gpu"}
        for rule, r in rules.items():
            assert r["n"] > 0 and 0.0 <= r["coverage"] <= 1.0 and r["width_ratio"] >= 1.0
            if rule in cr.BANDS:
                assert set(r["per_gpu"]) == set(GPUS)


def test_kth_smallest_of_the_cv_plus_values_matches_sorting_them():
    cr = load_script("conformal_rules")
    rng = np.random.default_rng(3)
    scores = [np.sort(rng.normal(size=n)) for n in (5, 1, 8)]
    lt, d = rng.normal(size=(4, 3)), rng.uniform(0.5, 2.0, size=(4, 3))
    # every value lt[i, j] + z d[i, j], formed and sorted
    values = np.concatenate([lt[:, j, None] + z[None, :] * d[:, j, None]
                             for j, z in enumerate(scores)], axis=1)
    for k in (1, 3, 14):
        assert np.allclose(cr.kth_smallest(lt, d, scores, k), np.sort(values, axis=1)[:, k - 1],
                           rtol=0, atol=1e-9)
    # one column, one score each side: lt + z d by hand
    got = cr.kth_smallest(np.array([[1.0]]), np.array([[2.0]]), [np.array([-0.5, 0.25])], 2)
    assert abs(got[0] - 1.5) < 1e-9


def test_rerunning_some_tables_keeps_the_others_results(tmp_path, monkeypatch):
    cr = load_script("conformal_rules")
    first, second = (name for name, *_ in cr.le.TABLES[:2])
    monkeypatch.setattr(cr, "OUT_JSON", tmp_path / "rules.json")
    monkeypatch.setattr(cr, "OUT_MD", tmp_path / "rules.md")
    monkeypatch.setattr(cr, "markdown", lambda res: "")
    cr.OUT_JSON.write_text(json.dumps({first: {"old": 1}, second: {"old": 2}}))
    monkeypatch.setattr(cr, "study", lambda data, name, *a: {"new": name})
    cr.main(["--tables", second])
    assert json.loads(cr.OUT_JSON.read_text()) == {first: {"old": 1}, second: {"new": second}}
