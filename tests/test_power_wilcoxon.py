"""Wilcoxon signed-rank power by simulation (Anchor App. C): calibrated under the null, powered under an effect."""

import numpy as np
import pytest

from judgewise.analysis.power import (distribution_from_probabilities, sign_test_sample_size,
                                      wilcoxon_power)
from judgewise.errors import ConfigError
from tests.conftest import cli_json


def test_wilcoxon_rejection_rate_is_about_alpha_without_an_effect():
    pool = distribution_from_probabilities([-2, -1, 0, 1, 2], [0.1, 0.2, 0.4, 0.2, 0.1])
    res = wilcoxon_power([pool], [200], n_simulations=2000, power=0.99, rng=np.random.default_rng(1))
    assert res.power[0] == pytest.approx(0.05, abs=0.02)
    assert res.n_required is None


def test_wilcoxon_needs_no_more_samples_than_sign_test_when_wins_are_larger():
    # wins are large (+2) and losses small (-1): Wilcoxon uses the magnitude, the sign test cannot (§4.3).
    values, probs = [-1, 0, 2], [0.27, 0.40, 0.33]
    pool = distribution_from_probabilities(values, probs)
    res = wilcoxon_power([pool], range(20, 400, 20), n_simulations=1000, rng=np.random.default_rng(2))
    sign = sign_test_sample_size(0.33 / 0.60, tie_rate=0.40)
    assert res.n_required is not None and res.n_required < sign.n_total
    assert res.power[-1] >= 0.8 > res.power[0]


def test_distribution_must_sum_to_one():
    with pytest.raises(ConfigError):
        distribution_from_probabilities([0, 1], [0.5, 0.6])


def test_cli_power_wilcoxon_from_a_distribution():
    out = cli_json("power", "wilcoxon", "--distribution", "-1:0.27,0:0.40,2:0.33", "--n", "50,100,200,400",
                   "--simulations", "300", "--json")
    assert out["n_required"] in (50, 100, 200, 400)
    assert out["power"][-1] >= 0.8
