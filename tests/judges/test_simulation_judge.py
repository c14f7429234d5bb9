"""The simulated judge follows Arena-lite Eq. 3 and honours the Judge protocol."""

import asyncio

import numpy as np
import pytest

from judgewise.errors import ConfigError, JudgeError
from judgewise.judges.base import Comparison, Game, Judge
from judgewise.judges.simulated import SimulatedJudge, _stable_seed, eq3_probabilities, sample_verdicts


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


# -- tie rate, position and length bias (module docstring, steps 2-4) --------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"tie_rate": 0.2}, {"position_bias": 0.3}, {"position_bias": -0.4},
                                    {"tie_rate": 0.1, "position_bias": 0.2, "length_bias": 0.5}])
def test_verdict_probabilities_sum_to_one_with_every_setting(kwargs):
    from judgewise.judges.simulated import with_biases

    elo_a, elo_b = np.array([1000.0, 1200.0, 900.0]), np.array([1100.0, 1000.0, 900.0])
    probs = eq3_probabilities(elo_a, elo_b, 0.7, tie_rate=kwargs.get("tie_rate"))
    probs = with_biases(probs, position_bias=kwargs.get("position_bias", 0.0),
                        length_bias=kwargs.get("length_bias", 0.0), longer=np.array([1, -1, 0]))
    assert np.allclose(probs.sum(-1), 1) and np.all(probs >= 0)


def test_explicit_tie_rate_is_the_tie_probability_and_keeps_eq3_accuracy_on_decisive_verdicts():
    probs = eq3_probabilities(1200.0, 1000.0, 0.7, tie_rate=0.25)
    coin = eq3_probabilities(1200.0, 1000.0, 0.7, remainder="coin")
    assert probs[1] == pytest.approx(0.25)
    assert probs[[0, 2]] / 0.75 == pytest.approx(coin[[0, 2]])
    plain = eq3_probabilities(1200.0, 1000.0, 0.7)
    assert np.array_equal(eq3_probabilities(1200.0, 1000.0, 0.7, tie_rate=None), plain)


def test_settings_outside_the_model_are_config_errors():
    for kwargs in ({"tie_rate": 1.2}, {"position_bias": 1.5}, {"position_bias": 0.6, "length_bias": 0.5}):
        with pytest.raises(ConfigError):
            SimulatedJudge({"x": 1000}, **kwargs)


def _both_orders(judge, n_prompts, ratings, texts=("", "")):
    """Outcomes of the first-shown response over all pairs × prompts, each comparison shown in both orders."""
    models = sorted(ratings)
    out = []
    for p in range(n_prompts):
        for i, a in enumerate(models):
            for b in models[i + 1:]:
                c = Comparison(f"p{p}", "", a, b, *texts)
                out += [judge.judge_sync(Game(c, swapped=s)).verdict.outcome for s in (False, True)]
    return np.array(out)


RATINGS = {"m0": 1000.0, "m1": 1100.0, "m2": 1250.0, "m3": 1300.0}


@pytest.mark.slow
@pytest.mark.parametrize("b", [0.0, 0.3, -0.2])
def test_position_bias_is_recovered_from_many_games_as_p_first_wins(b):
    judge = SimulatedJudge(RATINGS, p_judge=0.8, seed=7, position_bias=b)
    first = _both_orders(judge, 1000, RATINGS)  # 12,000 games
    half_width = 2 * np.sqrt(0.25 / len(first))
    assert first.mean() == pytest.approx(0.5 + b / 2, abs=half_width)  # ties count as half
    decisive = (first == 1.0).mean() - (first == 0.0).mean()
    assert decisive == pytest.approx(b, abs=2 * half_width)


@pytest.mark.slow
def test_tie_rate_is_recovered_and_bias_takes_its_share():
    plain = _both_orders(SimulatedJudge(RATINGS, p_judge=0.6, seed=8, tie_rate=0.15), 600, RATINGS)
    assert (plain == 0.5).mean() == pytest.approx(0.15, abs=0.015)
    biased = _both_orders(SimulatedJudge(RATINGS, p_judge=0.6, seed=8, tie_rate=0.15, position_bias=0.4),
                          600, RATINGS)
    assert (biased == 0.5).mean() == pytest.approx(0.6 * 0.15, abs=0.015)  # (1 − |b|)·τ


@pytest.mark.slow
def test_length_bias_favours_the_longer_shown_text_in_either_position():
    judge = SimulatedJudge({"x": 1000.0, "y": 1000.0}, p_judge=0.8, seed=9, length_bias=0.4)
    long_first = _both_orders(judge, 3000, judge.ratings, texts=("long answer", "short"))
    # the comparison's a text is longer: shown first in unswapped games, second in swapped ones
    longer_wins = np.where(np.arange(len(long_first)) % 2 == 0, long_first, 1 - long_first)
    assert longer_wins.mean() == pytest.approx(0.5 + 0.4 / 2, abs=0.02)
    assert _both_orders(judge, 500, judge.ratings, texts=("same", "same")).mean() == pytest.approx(0.5, abs=0.03)


def test_without_position_bias_a_swapped_game_has_the_mirrored_distribution():
    judge = SimulatedJudge(RATINGS, p_judge=0.7, seed=10, tie_rate=0.1)
    c = [Comparison(f"p{p}", "", "m3", "m0", "", "") for p in range(6000)]
    m3_shown_first = np.array([judge.judge_sync(Game(x)).verdict.outcome for x in c])
    m3_shown_second = np.array([1 - judge.judge_sync(Game(x, swapped=True)).verdict.outcome for x in c])
    expected = eq3_probabilities(1300.0, 1000.0, 0.7, tie_rate=0.1)
    for outcomes in (m3_shown_first, m3_shown_second):
        assert (outcomes == 1.0).mean() == pytest.approx(expected[0], abs=0.02)
        assert (outcomes == 0.5).mean() == pytest.approx(expected[1], abs=0.015)
    biased = SimulatedJudge(RATINGS, p_judge=0.7, seed=10, tie_rate=0.1, position_bias=0.5)
    assert np.mean([biased.judge_sync(Game(x, swapped=True)).verdict.outcome for x in c[:2000]]) > 0.5


def test_default_parameters_keep_the_plain_eq3_identity_and_draws():
    judge = SimulatedJudge(RATINGS, p_judge=0.8, seed=3)
    assert set(judge.identity) == {"kind", "p_judge", "seed", "remainder", "response_sd", "strong_win"}
    win, tie, _ = eq3_probabilities(1000.0, 1250.0, 0.8)
    for i in range(50):  # one uniform per game from the game's seed, thresholded on Eq. 3 (text-blind)
        u = np.random.default_rng(_stable_seed(3, "game", f"p{i}", "m0", "m2")).random()
        expected = 1.0 if u < win else 0.5 if u < win + tie else 0.0
        game = Game(Comparison(f"p{i}", "", "m0", "m2", "a" * i, "b"))
        assert judge.judge_sync(game).verdict.outcome == expected
    assert SimulatedJudge(RATINGS, position_bias=0.2).identity["position_bias"] == 0.2


def test_run_config_builds_a_biased_simulated_judge():
    from judgewise.pipeline import build_judge

    judge = build_judge({"backend": "simulated", "ratings": RATINGS, "p_judge": 0.9, "tie_rate": 0.05,
                         "position_bias": 0.25, "length_bias": 0.1, "seed": 4})
    assert (judge.tie_rate, judge.position_bias, judge.length_bias, judge.seed) == (0.05, 0.25, 0.1, 4)
    with pytest.raises(ConfigError):
        build_judge({"backend": "simulated", "ratings": RATINGS, "position_bias": 2.0})
