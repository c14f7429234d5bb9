"""Issue 31: the stopping rule's parts — the prompt-clustered BT covariance, τ with a margin and the probability
that it reaches a target, near-ties listed — and evaluate's round loop: one BT fit per round, shared by the design
and the target, and no control flow by exception."""

from __future__ import annotations

import numpy as np
import pytest

import judgewise
import judgewise.pipeline.config as run_config
import judgewise.pipeline.target_rounds as target_rounds
from judgewise.designs.ranking_posterior import (expected_kendall_tau, likely_ties, probability_tau_at_least,
                                                 tau_draws)
from judgewise.ratings.bradley_terry import bt_cluster_covariance, fit_bt_arrays
from tests.support.evaluating import evaluate_config


def _games(seed: int, n_models: int = 5, n: int = 400):
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1, 1, n_models)
    a = rng.integers(n_models, size=n)
    b = (a + rng.integers(1, n_models, size=n)) % n_models
    outcome = (rng.random(n) < 1 / (1 + np.exp(-(theta[a] - theta[b])))).astype(float)
    return a, b, outcome


def _gap_variances(cov):
    i, j = np.triu_indices(len(cov), k=1)
    return cov[i, i] + cov[j, j] - 2 * cov[i, j]


def test_a_verdict_counted_twice_on_one_prompt_gets_the_variance_of_one_verdict():
    """Both answer orders of a comparison with the same verdict are one piece of evidence: the clustered covariance
    of the doubled games is (close to) the model-based covariance of the single ones, where the model-based one of
    the doubled games claims half the variance."""
    a, b, outcome = _games(0)
    prompt = np.arange(len(a))
    single_theta, single_cov = fit_bt_arrays(a, b, outcome, 5, l2=1e-6)
    twice = (np.r_[a, a], np.r_[b, b], np.r_[outcome, outcome])
    theta, naive = fit_bt_arrays(*twice, 5, l2=2e-6)
    robust = bt_cluster_covariance(theta, naive, *twice, np.r_[prompt, prompt])
    ratio = _gap_variances(robust) / _gap_variances(single_cov)
    assert np.allclose(theta, single_theta, atol=1e-6)
    assert np.all(_gap_variances(naive) / _gap_variances(single_cov) < 0.55)
    assert np.all((ratio > 0.85) & (ratio < 1.25)), ratio


def test_independent_verdicts_keep_the_model_based_covariance_as_a_floor():
    a, b, outcome = _games(1)
    theta, cov = fit_bt_arrays(a, b, outcome, 5, l2=1.0)
    robust = bt_cluster_covariance(theta, cov, a, b, outcome, np.arange(len(a)))
    assert np.all(np.linalg.eigvalsh(robust - cov) > -1e-12)  # never below the model-based covariance
    assert np.all(_gap_variances(robust) / _gap_variances(cov) < 1.3)  # and close to it for independent games
    assert bt_cluster_covariance(theta, cov, a, b, outcome, np.zeros(len(a))) is cov  # one cluster: nothing to say


def test_tau_with_a_margin_counts_pairs_within_it_as_agreeing():
    theta = np.array([0.0, 0.001, 2.0])  # the first two are a near-tie, the third far above
    cov = np.eye(3) * 0.01
    assert expected_kendall_tau(theta, cov) < 0.75  # the near-tie is a coin flip
    assert expected_kendall_tau(theta, cov, margin=0.5) > 0.99
    assert probability_tau_at_least(theta, cov, 0.99, margin=0.5) > 0.99
    assert probability_tau_at_least(theta, cov, 0.99) < 0.6
    assert likely_ties(theta, 0.5) == [(1, 0)]
    assert likely_ties(theta, 0.0) == []


def test_tau_draws_are_the_same_for_the_same_fit_and_match_the_exact_expectation():
    rng = np.random.default_rng(3)
    theta = rng.normal(size=6)
    root = rng.normal(size=(6, 6)) * 0.3
    cov = root @ root.T + np.eye(6) * 0.05
    first, second = tau_draws(theta, cov, 0.1), tau_draws(theta, cov, 0.1)
    assert np.array_equal(first, second)
    assert first.mean() == pytest.approx(expected_kendall_tau(theta, cov, 0.1), abs=0.02)


def test_an_adaptive_evaluate_fits_bt_once_per_round_and_the_design_reuses_that_fit(tmp_path, monkeypatch):
    fits = {"rounds": 0, "design": 0}
    real = target_rounds.fit_bt_arrays

    def counted_round_fit(*args, **kwargs):
        fits["rounds"] += 1
        return real(*args, **kwargs)

    def counted_design_fit(*args, **kwargs):
        fits["design"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(target_rounds, "fit_bt_arrays", counted_round_fit)
    monkeypatch.setitem(run_config.DESIGN_DEFAULTS, "fit", counted_design_fit)
    cfg = evaluate_config(tmp_path, n_models=6, n_prompts=60, gap=120.0, design={"name": "adaptive"})
    result = judgewise.evaluate(cfg, bootstrap=0)
    assert result.summary["rounds"] > 3
    assert fits["rounds"] == result.summary["rounds"]  # one fit per judged round
    assert fits["design"] == 0  # the design took the round's fit instead of fitting again


def test_evaluate_states_the_probability_it_stopped_on_and_lists_likely_ties(tmp_path):
    ratings = {"m0": 1000.0, "m1": 1000.0, "m2": 1300.0, "m3": 1600.0}  # m0 and m1 are one model twice
    cfg = evaluate_config(tmp_path, n_models=4, n_prompts=120)
    cfg["judge"]["ratings"] = ratings
    cfg["target"] = {"kendall_tau": 0.9, "margin": 40}
    result = judgewise.evaluate(cfg, bootstrap=0)
    trust = result.trust
    assert result.stopped == "target"
    assert trust["tau_probability"] >= trust["target"]["confidence"] == 0.9
    assert {"m0", "m1"} in [set(pair) for pair in trust["likely_ties"]]
