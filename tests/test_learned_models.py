"""Point calibration of the learned models (hand-computed cases)."""

import numpy as np
import pytest


def test_point_calibration_keeps_a_shift_only_if_every_group_gains():
    from gpuproj.learned.models import point_calibration

    true = np.full(40, 1e-3)
    groups = np.repeat([0, 1], 20)
    # both held-out groups predicted e^0.2 too slow: the shift -0.2 helps each
    both = point_calibration(true * np.exp(0.2), None, true, groups)
    assert both["lam"] == 1.0 and both["delta"] == pytest.approx(-0.2)
    # only group 0 too slow: -0.2 lowers the pooled score (mean + median APE: 0.221 -> 0.181,
    # hand-computed) but makes group 1 worse, so no shift is kept; without groups it is
    one = true * np.exp(np.where(groups == 0, 0.2, 0.0))
    assert point_calibration(one, None, true, groups)["delta"] == 0.0
    assert point_calibration(one, None, true)["delta"] == pytest.approx(-0.2)
