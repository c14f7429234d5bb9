"""The record floor under BCa intervals (ratings/record_interval.py): Wilson at a Korn–Graubard effective size."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgewise.ratings import rank
from judgewise.ratings.bradley_terry import elo_scale
from judgewise.ratings.logistic import expit
from judgewise.ratings.record_interval import (bt_ratings_at_rates, record_rate_bounds, scale_coupling, widen,
                                               wilson_interval)


def test_no_win_in_fifty_games_is_bounded_by_wilson_at_t49():
    model, prompt = np.zeros(50, dtype=int), np.arange(50)
    low, high = record_rate_bounds(model, prompt, np.zeros(50), np.ones(50), 1, 0.95)
    t = stats.t.ppf(0.975, 49)
    assert low[0] == 0.0 and high[0] == pytest.approx(t ** 2 / (50 + t ** 2), rel=1e-12)  # Wilson's upper at k = 0


def test_both_orders_with_one_verdict_carry_one_games_information():
    """Two identical games on a prompt (both answer orders, one verdict) are one prompt's evidence, not two: the
    clustered variance halves the effective size, so the bounds equal those of one game per prompt."""
    score = np.zeros(80)
    score[[5, 40]] = 1.0  # two wins in 80: a rare record, which gets a floor
    single = record_rate_bounds(np.zeros(80, dtype=int), np.arange(80), score, np.ones(80), 1, 0.95)
    doubled = record_rate_bounds(np.zeros(160, dtype=int), np.repeat(np.arange(80), 2), np.repeat(score, 2),
                                 np.ones(160), 1, 0.95)
    np.testing.assert_allclose(np.ravel(doubled), np.ravel(single), rtol=1e-12)
    naive = wilson_interval(np.repeat(score, 2).sum(), 160, 0.95, stats.t.ppf(0.975, 79))
    assert naive[1] < doubled[1][0]  # counting them as independent would have been narrower


def test_a_record_with_wins_and_losses_aplenty_gets_no_floor():
    score = np.tile([1.0, 0.0, 0.5], 20)  # 25 games' worth of wins, 25 of losses: the bootstrap sees it
    low, high = record_rate_bounds(np.zeros(60, dtype=int), np.arange(60), score, np.ones(60), 1, 0.95)
    assert np.isnan(low[0]) and np.isnan(high[0])


def test_the_bt_rating_found_gives_the_asked_rate_against_the_opponents_met():
    theta = np.array([0.0, 1.0, -0.5])
    model = np.array([0, 0, 0, 1, 2])
    opponent = np.array([1, 2, 1, 0, 0])
    weight = np.array([1.0, 2.0, 1.0, 1.0, 1.0])
    rates = np.array([0.2, 0.9, 0.5])
    found = bt_ratings_at_rates(theta, model, opponent, weight, rates)
    for i in range(3):
        mine = model == i
        expected = np.sum(weight[mine] * expit(found[i] - theta[opponent[mine]])) / weight[mine].sum()
        assert expected == pytest.approx(rates[i], abs=1e-9)
    assert np.isnan(bt_ratings_at_rates(theta, model, opponent, weight, np.array([0.0, 1.0, np.nan]))).all()


def test_a_mean_centred_scale_couples_each_score_to_the_others_and_an_anchored_one_does_not():
    theta = np.array([0.3, -0.2, 0.5, 1.0])
    centred = scale_coupling(theta, elo_scale)
    off = ~np.eye(4, dtype=bool)
    np.testing.assert_allclose(centred[off], -1 / 3, rtol=1e-9)
    anchored = scale_coupling(theta, lambda t: elo_scale(t, anchor=0))
    np.testing.assert_allclose(anchored[1:, 1:][~np.eye(3, dtype=bool)], 0.0, atol=1e-9)


def test_widen_passes_one_models_widening_to_the_others_in_quadrature():
    low, high = np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0])
    coupling = np.full((3, 3), -0.5)
    new_low, new_high, moved = widen(low, high, np.array([np.nan, 0.0, 0.0]), np.array([7.0, 4.0, 1.0]), coupling)
    assert new_high.tolist() == [7.0, 4.0, 1.0]
    # model 0 rose 6 and model 1 rose 3 beyond their bootstrap bounds: model 2's lower bound drops √(3² + 1.5²)
    assert new_low[2] == pytest.approx(-np.hypot(3.0, 1.5)) and new_low[0] == pytest.approx(-1.5)
    assert moved == 3


def _rare_wins(seed: int, prompts: int = 50, p: float = 0.02) -> pd.DataFrame:
    wins = np.random.default_rng(seed).random(prompts) < p
    return pd.DataFrame({"prompt_id": [f"p{i}" for i in range(prompts)], "model_a": "m", "model_b": "anchor",
                         "judge": "j", "outcome": wins.astype(float)})


def test_a_rare_win_rate_is_covered_though_a_third_of_samples_show_no_win():
    """0.98⁵⁰ = 36% of 50-game samples of a 2% model have no win: a bootstrap alone gives them [0, 0]. With the
    record floor the default 95% interval covers 2% in at least 93% of 200 seeded samples."""
    hits = sum(_covers(rank(_rare_wins(k), "winrate", anchor="anchor", bootstrap=200, seed=k), 2.0)
               for k in range(200))
    percentile = sum(_covers(rank(_rare_wins(k), "winrate", anchor="anchor", bootstrap=200, seed=k,
                                 interval="percentile"), 2.0) for k in range(60))
    assert hits / 200 >= 0.93 and percentile / 60 < 0.75


def _covers(ranking, truth: float) -> bool:
    i = ranking.models.index("m")
    return bool(ranking.ci_low[i] <= truth <= ranking.ci_high[i])


def test_bt_widens_a_model_without_a_win_and_says_how_many_it_widened():
    games = pd.concat([_rare_wins(3, p=0.0), _rare_wins(4, p=0.5).assign(model_a="n")], ignore_index=True)
    r = rank(games, "bt", bootstrap=200, seed=0)
    i = r.models.index("m")
    assert r.ci_high[i] > r.scores[i] + 100  # 0 of 50 is consistent with a win rate up to ~7%
    assert r.info["bootstrap"]["widened_to_record"] >= 1
    assert "widened_to_record" not in rank(games, "bt", bootstrap=200, seed=0,
                                           interval="percentile").info["bootstrap"]
