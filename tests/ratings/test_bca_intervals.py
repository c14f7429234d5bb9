"""BCa bootstrap intervals (the default of every ranking): the textbook formulas, and coverage measured by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtr, ndtri

from judgewise.errors import ConfigError
from judgewise.ratings import rank
from judgewise.ratings.bootstrap import acceleration, bca_interval, percentile_interval
from judgewise.ratings.coverage import coverage_line, interval_line, measured_coverage


def test_acceleration_of_the_mean_is_the_samples_skewness_over_six():
    x = np.random.default_rng(0).exponential(size=40)
    jack = np.array([[np.delete(x, i).mean()] for i in range(len(x))])  # delete-one means
    d = x - x.mean()
    expected = (d ** 3).sum() / (6 * (d ** 2).sum() ** 1.5)  # Efron & Tibshirani 1993, eq. 14.15 for the mean
    assert acceleration(jack, np.ones(len(x)))[0] == pytest.approx(expected, rel=1e-9)


def test_without_bias_or_acceleration_bca_is_the_percentile_interval():
    reps = np.random.default_rng(1).normal(size=(4001, 3))
    point = np.median(reps, axis=0)  # z0 = 0
    low, high = bca_interval(point, reps, None, 0.9)
    np.testing.assert_allclose(np.stack([low, high]), np.stack(percentile_interval(reps, 0.9)), atol=1e-12)


def test_bca_takes_the_quantiles_its_formula_names():
    rng = np.random.default_rng(2)
    reps = rng.gamma(2.0, size=(2000, 1))
    point, a = np.array([1.6]), 0.1
    jack = (np.array([[0.0], [0.0], [1.0]]), np.ones(3))  # a = Σd³ / (6 (Σd²)^1.5) for d = (1/3, 1/3, −2/3)
    d = np.array([1 / 3, 1 / 3, -2 / 3])
    a = (d ** 3).sum() / (6 * (d ** 2).sum() ** 1.5)
    z0 = ndtri((reps[:, 0] < point[0]).mean())
    levels = [ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in ndtri([0.025, 0.975])]
    low, high = bca_interval(point, reps, jack, 0.95)
    np.testing.assert_allclose([low[0], high[0]], np.quantile(reps[:, 0], levels), rtol=1e-12)


def test_a_column_whose_replicates_all_equal_the_point_gets_the_point():
    reps = np.column_stack([np.full(50, 50.0), np.linspace(0, 1, 50)])
    low, high = bca_interval(np.array([50.0, 0.5]), reps, None, 0.95)
    assert low[0] == high[0] == 50.0 and low[1] < 0.5 < high[1]


def _anchor_games(rng, prompts: int) -> pd.DataFrame:
    """One model against the anchor with a skewed continuous preference (mean 0.09): a low win rate."""
    return pd.DataFrame({"prompt_id": [f"p{i}" for i in range(prompts)], "model_a": "m", "model_b": "anchor",
                         "judge": "j", "outcome": rng.beta(0.3, 3.0, prompts)})


@pytest.mark.slow
def test_bca_covers_a_skewed_win_rate_at_its_level_where_the_percentile_interval_does_not():
    """Promises are measured: 300 samples of 100 prompts from a known mean; the share of 95% intervals that contain
    it (seeded: 95.0% BCa, 93.7% percentile). The percentile interval of a skewed mean falls short; BCa (Efron
    1987) reaches the level, within the simulation's standard error (1.3%)."""
    truth = 100 * 0.3 / 3.3
    hits = {"bca": 0, "percentile": 0}
    for k in range(300):
        games = _anchor_games(np.random.default_rng(k), 100)
        for interval in hits:
            r = rank(games, "winrate", anchor="anchor", bootstrap=400, seed=k, interval=interval)
            i = r.models.index("m")
            hits[interval] += r.ci_low[i] <= truth <= r.ci_high[i]
    assert hits["percentile"] < hits["bca"] and hits["bca"] / 300 >= 0.94


def test_an_unknown_interval_is_a_config_error_naming_the_option():
    with pytest.raises(ConfigError, match="--interval"):
        rank(_anchor_games(np.random.default_rng(0), 10), "winrate", bootstrap=10, interval="studentised")


def test_outputs_say_where_measured_coverage_falls_short_of_the_level():
    bt50 = measured_coverage("bt", "percentile", 60, 0.95)  # FastChat's interval: 80% at 50 prompts
    assert bt50["prompts"] == 50 and not bt50["fewer"]
    line = coverage_line(bt50)
    assert line.startswith("nominal 95%, measured ") and "at 50 prompts" in line
    assert coverage_line(measured_coverage("bt", "bca", 805, 0.95)) is None  # covers at 400 prompts and above
    for method in ("bt", "winrate"):  # the default interval, with its record floor, covers from 50 prompts
        assert measured_coverage(method, "bca", 50, 0.95)["measured"] >= 0.93
        assert coverage_line(measured_coverage(method, "bca", 50, 0.95)) is None
        assert "not measured on fewer" in coverage_line(measured_coverage(method, "bca", 8, 0.95))
    assert "at 50 prompts (fewer here: lower still)" in coverage_line(measured_coverage("elo", "bca", 20, 0.95))
    assert measured_coverage("bt", "bca", 60, 0.9) is None and measured_coverage("bt", "bca", 60, 0.95, "battle") is None
    ranking = rank(_anchor_games(np.random.default_rng(0), 60), "winrate", anchor="anchor", bootstrap=50)
    assert ranking.info["bootstrap"]["coverage"]["prompts"] == 50


def test_online_elo_says_its_interval_is_a_spread_not_a_confidence_interval():
    games = _anchor_games(np.random.default_rng(0), 60).assign(outcome=lambda f: (f["outcome"] > 0.2) * 1.0)
    line = interval_line(rank(games, "elo", bootstrap=20, seed=0))
    assert "not a confidence interval" in line and "--method bt" in line
    assert "not a confidence interval" not in interval_line(rank(games, "bt", bootstrap=20, seed=0))
