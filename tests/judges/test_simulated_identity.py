"""The simulated judge's stored verdicts are keyed by its parameters, the true ``ratings:`` included: a re-rated
config judges again the games whose models' ratings changed (and only those), and never reuses a verdict drawn
from other ratings."""

from __future__ import annotations

import sqlite3

from judgewise.judges.base import Comparison, Game
from judgewise.judges.runner import game_key
from judgewise.judges.simulated import SimulatedJudge
from tests.support.judging import simulated_store

RATINGS = {"a": 1000.0, "b": 1100.0, "c": 1200.0}


def _games(store) -> int:
    db = sqlite3.connect(store)
    try:
        return db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    finally:
        db.close()


def test_a_rerated_config_judges_again_the_games_of_the_models_whose_rating_changed(tmp_path):
    store = simulated_store(tmp_path, RATINGS, n_prompts=5)
    first = _games(store)
    assert first == 3 * 5 * 2  # 3 pairs, 5 prompts, both orders
    simulated_store(tmp_path, RATINGS, n_prompts=5)  # the same config: every verdict reused
    assert _games(store) == first
    simulated_store(tmp_path, {**RATINGS, "c": 2000.0}, n_prompts=5)
    assert _games(store) == first + 2 * 5 * 2  # a-c and b-c judged again; a-b reused


def test_the_game_key_holds_the_two_models_ratings_and_no_other():
    game = Game(Comparison("p1", "q", "a", "b", "x", "y"))
    key = lambda ratings: game_key(SimulatedJudge(ratings).identity, game, SimulatedJudge(ratings))  # noqa: E731
    assert key(RATINGS) != key({**RATINGS, "a": 1001.0})
    assert key(RATINGS) == key({**RATINGS, "c": 1500.0})
    assert key(RATINGS) == key({"a": 1000, "b": 1100, "c": 1200})  # 1000 and 1000.0 are one rating
