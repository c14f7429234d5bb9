"""Bootstrap uncertainty: exact multinomial draws, batched fits equal single fits, seeds, levels, cluster units."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from judgewise.errors import ConfigError
from judgewise.ratings import RATING_METHODS, ci_aware_rank, rank
from judgewise.ratings.aggregate import battle_categories, pair_counts
from judgewise.ratings.bootstrap import multinomial
from judgewise.ratings.poisson import MAX_TABLE_MEANS, poisson_draws
from judgewise.ratings.bradley_terry import fit_lbfgs, newton_batch
from judgewise.ratings.encode import encode

from tests.support.rating_data import anchored_battles


def battles(rng, n=2000, k=5, prompts=None, prompt_effect=0.0) -> pd.DataFrame:
    """BT battles; with ``prompt_effect`` each prompt shifts model_a's logit by its own N(0, effect²) draw."""
    skill = np.linspace(-1, 1, k)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    prompt = rng.integers(0, prompts or n, n)
    shift = rng.normal(0, prompt_effect, prompts or n)[prompt] * np.where(a < b, 1, -1) if prompt_effect else 0.0
    outcome = (rng.random(n) < expit(skill[a] - skill[b] + shift)).astype(float)
    return pd.DataFrame({"prompt_id": prompt.astype(str), "model_a": [f"m{i}" for i in a],
                         "model_b": [f"m{i}" for i in b], "judge": "j", "outcome": outcome})


@pytest.mark.parametrize("compiled", [False, True])
def test_poisson_corrected_multinomial_has_multinomial_moments(compiled):
    rng = np.random.default_rng(0)
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    n, rounds = 200, 20_000
    draws = multinomial(rng, n, probs, rounds, compiled)
    assert (draws.sum(axis=1) == n).all() and (draws >= 0).all()
    np.testing.assert_allclose(draws.mean(axis=0), n * probs, rtol=0.01)
    cov = np.cov(draws.T)
    expected = n * (np.diag(probs) - np.outer(probs, probs))
    np.testing.assert_allclose(cov, expected, atol=0.05 * n * probs.max())


@pytest.mark.parametrize("means", [np.array([1.0] * 50), np.array([0.3, 2.0, 2.0, 15.0, 15.0, 15.0, 80.0, 400.0])])
def test_table_poisson_draws_follow_the_poisson_law(means):
    """The CDF-table sampler against scipy's pmf: per mean, a chi-square goodness of fit over the draws' values
    (cells with expected count < 5 pooled into the tails), and the layout rounds × categories."""
    from scipy import stats

    rng = np.random.default_rng(3)
    draws = poisson_draws(rng, means, 4000)
    assert draws.shape == (4000, len(means)) and (draws == np.round(draws)).all()
    for mean in np.unique(means):
        values = draws[:, means == mean].ravel()
        edges = np.arange(stats.poisson.ppf(1e-4, mean), stats.poisson.ppf(1 - 1e-4, mean) + 1)
        observed = np.array([(values <= edges[0]).sum()] + [(values == k).sum() for k in edges[1:-1]]
                            + [(values >= edges[-1]).sum()])
        expected = len(values) * np.concatenate(([stats.poisson.cdf(edges[0], mean)],
                                                 stats.poisson.pmf(edges[1:-1], mean),
                                                 [stats.poisson.sf(edges[-1] - 1, mean)]))
        keep = expected >= 5
        chi2 = (((observed - expected) ** 2 / expected)[keep]).sum()
        assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-3, (mean, chi2)


def test_many_distinct_means_use_numpys_sampler_with_the_same_law():
    rng = np.random.default_rng(4)
    means = np.linspace(1.0, 3.0, MAX_TABLE_MEANS + 1)
    draws = poisson_draws(rng, means, 400)
    assert draws.shape == (400, len(means))
    np.testing.assert_allclose(draws.mean(axis=0).mean(), means.mean(), rtol=0.01)
    np.testing.assert_allclose(draws.var(axis=0).mean(), means.mean(), rtol=0.02)


def test_batched_newton_replicates_equal_independent_fits():
    rng = np.random.default_rng(1)
    cats = battle_categories(encode(battles(rng)))
    pc = pair_counts(cats)
    theta = fit_lbfgs(pc)
    from judgewise.ratings.aggregate import pair_stats_matrix
    matrix, _, _ = pair_stats_matrix(cats)
    draws = multinomial(rng, int(cats.count.sum()), cats.count, 6)
    stats = np.asarray((matrix.T @ draws.T).T)
    p = pc.n_pairs
    batched, converged = newton_batch(pc, theta[None, :], stats[:, :p], stats[:, p:])
    assert converged.all()
    for r in range(6):
        pc.wins, pc.total = stats[r, :p], stats[r, p:]
        single = fit_lbfgs(pc)
        np.testing.assert_allclose(batched[r] - batched[r].mean(), single, atol=1e-6)


def test_bootstrap_is_reproducible_by_seed_and_labels_its_level():
    data = battles(np.random.default_rng(2))
    one = rank(data, "bt", bootstrap=200, seed=5)
    two = rank(data, "bt", bootstrap=200, seed=5)
    other = rank(data, "bt", bootstrap=200, seed=6)
    np.testing.assert_array_equal(one.ci_low, two.ci_low)
    assert not np.array_equal(one.ci_low, other.ci_low)
    assert one.ci_level == 0.95 and one.info["bootstrap"]["ci_level"] == 0.95
    assert one.info["bootstrap"]["interval"] == "bca" and one.info["bootstrap"]["unit"] == "prompt"
    assert rank(data, "bt", bootstrap=20, seed=5, interval="percentile").info["bootstrap"]["interval"] == "percentile"
    narrow = rank(data, "bt", bootstrap=200, seed=5, ci_level=0.5)
    assert narrow.ci_level == 0.5
    assert np.all(narrow.ci_high - narrow.ci_low < one.ci_high - one.ci_low)
    assert np.all((one.ci_low <= one.extra["median"]) & (one.extra["median"] <= one.ci_high))


def test_cluster_bootstrap_is_wider_than_battle_bootstrap_when_prompts_matter():
    data = battles(np.random.default_rng(3), n=3000, prompts=60, prompt_effect=2.0)
    by_prompt = rank(data, "bt", bootstrap=300, bootstrap_unit="prompt", seed=0)
    by_battle = rank(data, "bt", bootstrap=300, bootstrap_unit="battle", seed=0)
    width = lambda r: np.mean(r.ci_high - r.ci_low)  # noqa: E731
    assert width(by_prompt) > 1.3 * width(by_battle)


@pytest.mark.parametrize("method", RATING_METHODS.names())  # every registered method (docs/extending.md)
def test_every_method_bootstraps(method):
    data, responses = anchored_battles(np.random.default_rng(4))
    ranking = rank(data, method, bootstrap=15, seed=1, responses=responses)
    finite = np.isfinite(ranking.ci_low) & np.isfinite(ranking.ci_high)
    assert finite.all() and np.all(ranking.ci_low <= ranking.ci_high)
    assert ranking.info["bootstrap"]["rounds"] == 15 and ranking.info["bootstrap"]["failed_replicates"] == 0
    again = rank(data, method, bootstrap=15, seed=1, responses=responses)
    np.testing.assert_array_equal(again.ci_low, ranking.ci_low)  # seeded


def test_unknown_bootstrap_unit_is_a_config_error():
    with pytest.raises(ConfigError, match="bootstrap unit"):
        rank(battles(np.random.default_rng(5), n=50), "bt", bootstrap=5, bootstrap_unit="judge")


def test_ci_aware_rank_counts_models_whose_lower_bound_beats_this_upper_bound():
    scores = np.array([10.0, 9.0, 5.0, 1.0])
    low = np.array([8.0, 7.0, 4.0, 0.0])
    high = np.array([12.0, 11.0, 7.5, 2.0])
    np.testing.assert_array_equal(ci_aware_rank(scores, low, high), [1, 1, 1 + 1, 1 + 3])
    ranking = rank(battles(np.random.default_rng(6)), "bt", bootstrap=100)
    expected = 1 + (ranking.ci_low[None, :] > ranking.ci_high[:, None]).sum(axis=1)
    np.testing.assert_array_equal(ranking.rank, expected)


def test_replicates_without_a_finite_mle_are_counted_not_hidden():
    rows = [("top", "mid", 1.0)] * 30 + [("mid", "top", 1.0)] + [("mid", "low", 1.0)] * 10 + [("low", "mid", 1.0)] * 10
    data = pd.DataFrame({"prompt_id": [f"p{i}" for i in range(len(rows))], "model_a": [r[0] for r in rows],
                         "model_b": [r[1] for r in rows], "judge": "j", "outcome": [r[2] for r in rows]})
    ranking = rank(data, "bt", bootstrap=200, bootstrap_unit="battle", seed=0)
    boot = ranking.info["bootstrap"]
    assert boot["nonconverged_replicates"] > 0  # about exp(-1) of replicates drop the one loss of "top"
    assert np.isfinite(ranking.ci_low).all() and np.isfinite(ranking.ci_high).all()


def test_unit_statistics_single_precision_only_when_exact():
    """Half-integer matrices give the double product exactly in float32; fractional entries, or sums past 2²²,
    take the double product."""
    from scipy import sparse

    from judgewise.ratings.bootstrap import UnitStatistics

    rng = np.random.default_rng(5)
    halves = sparse.random(300, 40, density=0.2, format="csr", random_state=1,
                           data_rvs=lambda k: rng.integers(1, 9, k) / 2)
    draws = rng.poisson(3.0, size=(7, 300)).astype(np.float64)
    product = UnitStatistics(halves)
    assert product.exact32 and product.units.dtype == np.float32
    np.testing.assert_array_equal(product(draws), (halves.T @ draws.T).T)
    fractional = halves.copy()
    fractional.data = fractional.data / 3.0
    product = UnitStatistics(fractional)
    assert not product.exact32
    np.testing.assert_allclose(product(draws), (fractional.T @ draws.T).T, rtol=1e-15)
    big = draws.copy()
    big[0, 0] = 2.0 ** 22
    np.testing.assert_array_equal(UnitStatistics(halves)(big), (halves.T @ big.T).T)
