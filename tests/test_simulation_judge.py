"""The simulated judge follows Arena-lite Eq. 3 and honours the Judge protocol."""

import asyncio

import numpy as np
import pytest

from judgewise.errors import ConfigError, JudgeError
from judgewise.judges.base import Comparison, Game, Judge
from judgewise.judges.simulated import SimulatedJudge, eq3_probabilities, sample_verdicts


def test_eq3_probabilities_sum_to_one_and_scale_bt_by_p_judge():
    probs = eq3_probabilities([1200, 1000], [1000, 1000], 0.7)
    assert np.allclose(probs.sum(-1), 1)
    p_gt = 1 / (1 + 10 ** (-200 / 400))
    assert probs[0, 0] == pytest.approx(0.7 * p_gt)
    assert probs[0, 1] == pytest.approx(0.3)
    coin = eq3_probabilities(1200, 1000, 0.7, remainder="coin")
    assert coin[1] == 0 and coin[0] == pytest.approx(0.7 * p_gt + 0.15)


def test_eq3_with_perfect_judge_is_bradley_terry_sampling():
    rng = np.random.default_rng(0)
    outcome, verdict = sample_verdicts(np.full(200_000, 1100.0), 1000.0, 1.0, rng)
    assert set(np.unique(outcome)) <= {0.0, 1.0}
    assert outcome.mean() == pytest.approx(1 / (1 + 10 ** (-100 / 400)), abs=0.005)
    assert np.all(np.sign(verdict) == np.sign(outcome - 0.5))


def test_eq3_rejects_bad_settings():
    with pytest.raises(ConfigError):
        eq3_probabilities(0, 0, 1.5)
    with pytest.raises(ConfigError):
        eq3_probabilities(0, 0, 0.5, remainder="flip")


def test_simulated_judge_is_a_judge_and_is_deterministic_per_game():
    judge = SimulatedJudge({"x": 1300, "y": 900}, p_judge=0.9, seed=3)
    assert isinstance(judge, Judge)
    game = Game(Comparison("p1", "", "x", "y", "", ""))
    first = asyncio.run(judge.judge(game))
    assert first.verdict.outcome == asyncio.run(judge.judge(game)).verdict.outcome
    outcomes = judge.batch_verdicts([f"p{i}" for i in range(2000)], ["x"] * 2000, ["y"] * 2000)
    expected = eq3_probabilities(1300, 900, 0.9)
    assert outcomes.mean() == pytest.approx(expected[0] + expected[1] / 2, abs=0.03)


def test_simulated_judge_names_unknown_model():
    judge = SimulatedJudge({"x": 1000})
    with pytest.raises(JudgeError, match="zzz"):
        judge.judge_sync(Game(Comparison("p", "", "x", "zzz", "", "")))
