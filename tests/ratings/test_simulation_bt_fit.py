"""One Bradley–Terry fit: the array fit in ratings is the table fit's likelihood, and the simulator, the anchor
study and the adaptive design of a run config all use it (a second copy would not be seen by these tests)."""

import numpy as np
import pandas as pd
import pytest

from judgewise.ratings import rank
from judgewise.ratings.bradley_terry import (ARRAY_FIT_L2, bt_covariance, chord_inverse, fit_bt_arrays,
                                             pair_counts_from_arrays)


def _judgments(n_models=5, n=400, seed=0):
    rng = np.random.default_rng(seed)
    strength = np.linspace(-1, 1, n_models)
    a, b = rng.integers(n_models, size=n), rng.integers(n_models, size=n)
    keep = a != b
    a, b = a[keep], b[keep]
    outcome = (rng.random(len(a)) < 1 / (1 + np.exp(strength[b] - strength[a]))).astype(float)
    outcome[::7] = 0.5  # some ties
    return a, b, outcome


def test_the_array_fit_equals_the_table_fit_of_the_same_judgments():
    a, b, o = _judgments()
    names = [f"m{i}" for i in range(5)]
    frame = pd.DataFrame({"prompt_id": [f"p{i}" for i in range(len(a))], "model_a": np.take(names, a),
                          "model_b": np.take(names, b), "judge": "j", "outcome": o})
    ranking = rank(frame, "bt", l2=ARRAY_FIT_L2)
    table_theta = dict(zip(ranking.models, ranking.extra["theta"]))
    theta, _ = fit_bt_arrays(a, b, o, 5)
    np.testing.assert_allclose(theta - theta.mean(), [table_theta[m] for m in names], atol=1e-7)


def test_the_covariance_is_the_inverse_fisher_information_at_the_fit():
    a, b, o = _judgments(seed=1)
    theta, cov = fit_bt_arrays(a, b, o, 5)
    pc = pair_counts_from_arrays(a, b, o, 5)
    np.testing.assert_allclose(cov, chord_inverse(pc, theta, ARRAY_FIT_L2), rtol=1e-5)
    np.testing.assert_allclose(cov, bt_covariance(theta, pc), rtol=1e-12)


def test_failed_games_and_self_comparisons_are_left_out_of_the_counts():
    a, b, o = _judgments(seed=2)
    noisy_a, noisy_b = np.r_[a, 0, 1], np.r_[b, 2, 1]
    np.testing.assert_allclose(fit_bt_arrays(noisy_a, noisy_b, np.r_[o, np.nan, 1.0], 5)[0],
                               fit_bt_arrays(a, b, o, 5)[0])


def test_the_simulator_and_the_anchor_study_fit_with_the_array_fit():
    from judgewise.analysis.anchor_selection import QuadraticData
    from judgewise.analysis.simulation import bt_scores
    from judgewise.designs import make_design
    from judgewise.judges.simulated import response_quality, verdict_fn

    rng = np.random.default_rng(3)
    models, prompts = [f"m{i}" for i in range(4)], [f"x{i}" for i in range(30)]
    verdicts = verdict_fn(response_quality(np.array([900.0, 1000, 1100, 1200]), 30, 0.0, rng), 0.8, rng)
    run = make_design("quadratic").run(models, prompts, verdicts, rng)
    expected = fit_bt_arrays(run.pairs.a, run.pairs.b, run.outcome, 4)[0]
    np.testing.assert_allclose(bt_scores(run), expected)
    data = QuadraticData(run.to_judgments())
    order = [data.models.index(m) for m in models]
    np.testing.assert_allclose(data.bt_scores()[order] - data.bt_scores().mean(), expected - expected.mean(),
                               atol=1e-8)


def test_a_run_config_gives_the_adaptive_design_the_ratings_bt_fit_unless_one_is_passed():
    from judgewise.pipeline import build_design

    assert build_design({"name": "adaptive", "budget": 5}).fit is fit_bt_arrays
    mine = lambda a, b, o, n: fit_bt_arrays(a, b, o, n, l2=1.0)  # noqa: E731
    assert build_design({"name": "adaptive", "budget": 5, "fit": mine}).fit is mine
    assert not hasattr(build_design({"name": "tournament"}), "fit")


def test_the_covariance_needs_a_ridge():
    from judgewise.errors import ConfigError
    a, b, o = _judgments()
    with pytest.raises(ConfigError, match="ridge"):
        bt_covariance(np.zeros(5), pair_counts_from_arrays(a, b, o, 5), l2=0.0)
