"""scripts/conformal_rules.py: every rule's coverage on a small leave-one-GPU-out run, so that a
change to the splits or the learned models cannot break the script unnoticed (it did once: a
MultiIndex where it expected a Series)."""

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
        assert set(rules) == set(cr.RULES)
        for rule, r in rules.items():
            assert r["n"] > 0 and 0.0 <= r["coverage"] <= 1.0 and r["width_ratio"] >= 1.0
            if rule in cr.BANDS:
                assert set(r["per_gpu"]) == set(GPUS)
