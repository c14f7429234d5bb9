"""Ratings reproduce published oracles through ``rank()``: AlpacaEval's leaderboard and FastChat's BT on Arena-Hard."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgewise.ratings import rank

from tests.support.oracles import alpacaeval_judgments


def arenahard_judgments(path) -> pd.DataFrame:
    raw = pd.read_json(path, lines=True)
    return pd.DataFrame({
        "prompt_id": raw["question_id"].astype(str), "model_a": raw["model_a"], "model_b": raw["model_b"],
        "judge": "arena-hard", "outcome": raw["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5}),
    })


@pytest.fixture(scope="module")
def alpaca(shared):
    return alpacaeval_judgments(shared / "data" / "alpacaeval")


def test_winrate_reproduces_alpacaeval_leaderboard(alpaca, shared):
    board = pd.read_csv(shared / "data" / "alpacaeval" / "leaderboard.csv").set_index("model")
    got = pd.DataFrame(rank(alpaca, "winrate").to_records()).set_index("model").loc[board.index]
    assert len(got) == 28
    np.testing.assert_allclose(got["score"], board["win_rate"], atol=1e-6, rtol=0)
    np.testing.assert_allclose(got["se"], board["standard_error"], atol=1e-6, rtol=0)
    models = board.index != "gpt4_1106_preview"  # the anchor's own row: 50 / 0 by definition (AlpacaEval)
    for ours, theirs in [("n_wins", "n_wins"), ("n_draws", "n_draws"), ("discrete_win_rate", "discrete_win_rate"),
                         ("n", "n_total")]:
        np.testing.assert_allclose(got.loc[models, ours], board.loc[models, theirs], atol=1e-9, rtol=0)


def test_winrate_detects_the_anchor_and_reports_rows(alpaca):
    ranking = rank(alpaca, "winrate")
    assert ranking.info["anchor"] == "gpt4_1106_preview"
    assert ranking.info["rows_used"] == len(alpaca) and ranking.info["rows_not_used"] == 0


def test_winrate_complement_anchor_score_follows_anchor_paper_section_2(alpaca):
    ranking = rank(alpaca, "winrate", anchor_score="complement")
    scores = dict(zip(ranking.models, ranking.scores))
    others = [s for m, s in scores.items() if m != "gpt4_1106_preview"]
    assert scores["gpt4_1106_preview"] == pytest.approx(100.0 - np.mean(others))


def test_bt_matches_fastchat_reference_on_arenahard_battles(shared):
    judgments = arenahard_judgments(shared / "data" / "arenahard" / "battles.jsonl")
    reference = json.loads((shared / "reference" / "arenahard_battles_fastchat.json").read_text())["bt_elo_scale"]
    ranking = rank(judgments, "bt")
    got = dict(zip(ranking.models, ranking.scores))
    assert set(got) == set(reference)
    for model, elo in reference.items():
        assert abs(got[model] - elo) < 0.01, (model, got[model], elo)
    assert np.mean(ranking.scores) == pytest.approx(1000.0)
