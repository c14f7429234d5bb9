"""Selection strategies: valid, seedable subsets; Metric Match and variance matching pick the closest candidate."""

from __future__ import annotations

import numpy as np
import pytest

from judgewise.analysis.reliability import get_metric
from judgewise.analysis.selection import (STRATEGIES, MetricMatch, get_strategy, inter_model, quantile_bins,
                                          random_subsets, variance_signal)
from judgewise.errors import ConfigError, InputError


@pytest.fixture
def scores():
    rng = np.random.default_rng(3)
    z = rng.normal(size=120)
    target = z + rng.normal(scale=0.5, size=120)
    others = z + rng.normal(scale=0.6, size=(4, 120))
    human = z + rng.normal(scale=0.4, size=120)
    return target, others, human


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_every_strategy_returns_distinct_in_pool_items_and_is_reproducible(name, scores):
    target, others, _ = scores
    strategy, metric = get_strategy(name), get_metric("rho")
    a = strategy.select(target, others, 17, metric, np.random.default_rng(5), n_draws=6)
    b = strategy.select(target, others, 17, metric, np.random.default_rng(5), n_draws=6)
    c = strategy.select(target, others, 17, metric, np.random.default_rng(6), n_draws=6)
    assert a.shape == (6, 17) and (a == b).all() and not (a == c).all()
    assert ((a >= 0) & (a < len(target))).all()
    assert all(len(set(row)) == 17 for row in a)


def test_metric_match_keeps_the_candidate_closest_to_the_population_inter_model_metric(scores):
    target, others, _ = scores
    metric = get_metric("tau")
    chosen = MetricMatch(n_candidates=15).select(target, others, 20, metric, np.random.default_rng(11), n_draws=3)
    candidates = random_subsets(len(target), 20, 3 * 15, np.random.default_rng(11)).reshape(3, 15, 20)
    population = np.mean([metric(target, o) for o in others])
    for draw in range(3):
        deltas = [abs(np.mean([metric(target[c], o[c]) for o in others]) - population) for c in candidates[draw]]
        assert (chosen[draw] == candidates[draw][int(np.argmin(deltas))]).all()


def test_metric_match_on_averaged_labels_uses_the_metric_of_the_mean_judge(scores):
    target, others, _ = scores
    metric = get_metric("icc")
    assert float(inter_model(metric, target, others, None, "metric-of-mean")) == pytest.approx(
        metric(target, others.mean(axis=0)))
    strategy = get_strategy("metric-match-avg-labels")
    assert strategy.aggregation == "metric-of-mean"


def test_metric_match_subsets_are_closer_in_inter_model_metric_than_random_ones(scores):
    target, others, _ = scores
    metric = get_metric("rho")
    population = float(inter_model(metric, target, others))
    rng = np.random.default_rng(0)
    mm = get_strategy("metric-match").select(target, others, 15, metric, rng, n_draws=50)
    rnd = get_strategy("random").select(target, others, 15, metric, rng, n_draws=50)
    gap = lambda idx: np.abs(inter_model(metric, target, others, idx) - population).mean()  # noqa: E731
    assert gap(mm) < gap(rnd) / 2


def test_variance_match_keeps_the_candidate_closest_in_weighted_mean_squares(scores):
    target, others, _ = scores
    chosen = get_strategy("variance-match", n_candidates=10).select(target, others, 12, None,
                                                                    np.random.default_rng(2), n_draws=1)
    candidates = random_subsets(len(target), 12, 10, np.random.default_rng(2)).reshape(1, 10, 12)
    population = variance_signal(target, others, None, 0.9, 0.1)
    deltas = np.abs(variance_signal(target, others, candidates, 0.9, 0.1) - population)
    assert (chosen[0] == candidates[0, int(np.argmin(deltas[0]))]).all()


def test_bias_correction_estimate_is_population_im_plus_human_minus_subset_im(scores):
    target, others, human = scores
    metric = get_metric("rho")
    bc = get_strategy("bias-correction")
    idx = bc.select(target, others, 25, metric, np.random.default_rng(4), n_draws=2)
    est = bc.estimate(target, human, others, idx, metric)
    for i in range(2):
        s = idx[i]
        expected = (np.mean([metric(target, o) for o in others]) + metric(target[s], human[s])
                    - np.mean([metric(target[s], o[s]) for o in others]))
        assert est[i] == pytest.approx(expected, abs=1e-12)


def test_stratified_sampling_takes_equal_quotas_from_quantile_bins(scores):
    target, others, _ = scores
    bins = quantile_bins(target, 5)
    assert np.bincount(bins).tolist() == [24] * 5
    idx = get_strategy("stratified", n_bins=5).select(target, others, 20, None, np.random.default_rng(1), 4)
    for row in idx:
        assert np.bincount(bins[row], minlength=5).tolist() == [4] * 5


def test_stratified_sampling_fills_the_budget_when_ties_leave_few_bins():
    target = np.array([0.0] * 30 + [1.0] * 3)  # two bins after merging tied edges, one tiny
    idx = get_strategy("stratified").select(target, np.zeros((1, 33)), 10, None, np.random.default_rng(0), 3)
    assert idx.shape == (3, 10) and all((target[row] == 1).sum() == 3 for row in idx)


def test_budget_larger_than_pool_or_below_two_is_a_clear_error(scores):
    target, others, _ = scores
    for name in STRATEGIES:
        with pytest.raises(InputError, match="larger than the pool of 120 items"):
            get_strategy(name).select(target, others, 121, get_metric("rho"), np.random.default_rng(0))
    with pytest.raises(InputError, match="at least 2"):
        get_strategy("random").select(target, others, 1, get_metric("rho"), np.random.default_rng(0))


def test_matching_strategies_need_other_judges_and_unknown_names_are_config_errors(scores):
    target, _, _ = scores
    with pytest.raises(InputError, match="at least one other judge"):
        get_strategy("metric-match").select(target, np.empty((0, 120)), 10, get_metric("rho"),
                                            np.random.default_rng(0))
    with pytest.raises(ConfigError, match=r"known: .*random"):
        get_strategy("best-subset")
