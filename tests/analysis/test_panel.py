"""Panels of judges: majority / mean / weighted verdicts, splits, incomplete comparisons, Fleiss' κ, weights."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgewise.analysis.panel import panel_verdicts, reliability_weights
from judgewise.analysis.reliability import fleiss_kappa
from judgewise.errors import ConfigError, InputError


def _frame(votes: dict, flip=()) -> pd.DataFrame:
    """Judgments of m vs n on prompts p0.. by each judge (``flip``: judges that write the pair as n vs m)."""
    rows = []
    for judge, outcomes in votes.items():
        for i, o in enumerate(outcomes):
            if o is None:
                continue
            a, b, o = ("n", "m", 1.0 - o) if judge in flip else ("m", "n", o)
            rows.append({"prompt_id": f"p{i}", "model_a": a, "model_b": b, "judge": judge, "outcome": o})
    return pd.DataFrame(rows)


def test_majority_takes_the_most_common_label_and_ties_a_split():
    votes = {"x": [1, 1, 0, 0.5, 0.7], "y": [1, 0, 0, 1, 1], "z": [0, 0.5, 0, 0, 0.5]}
    panel = panel_verdicts(_frame(votes), ["x", "y", "z"])
    assert panel.judgments["outcome"].tolist() == [1.0, 0.5, 0.0, 0.5, 1.0]  # 0.7 counts as a win for m
    assert (panel.n_comparisons, panel.n_complete, panel.n_split, panel.n_dropped) == (5, 5, 2, 0)
    assert set(panel.judgments["judge"]) == {"panel(majority: x, y, z)"}


def test_split_drop_leaves_split_comparisons_out_and_counts_them():
    votes = {"x": [1, 1, 0], "y": [1, 0, 0]}
    panel = panel_verdicts(_frame(votes), ["x", "y"], split="drop")
    assert panel.judgments["prompt_id"].tolist() == ["p0", "p2"]
    assert (panel.n_split, panel.n_dropped) == (1, 1)


def test_mean_is_the_mean_outcome_whichever_way_members_write_the_pair():
    votes = {"x": [1, 0.75, 0], "y": [0, 0.25, 0]}
    panel = panel_verdicts(_frame(votes, flip={"y"}), ["x", "y"], "mean")
    assert panel.judgments["outcome"].tolist() == pytest.approx([0.5, 0.5, 0.0])
    assert panel.judgments[["model_a", "model_b"]].drop_duplicates().values.tolist() == [["m", "n"]]


def test_weighted_vote_follows_the_heavier_member_and_equal_weights_are_majority():
    votes = {"x": [1, 0, 1], "y": [0, 1, 0], "z": [0, 1, 1]}
    frame = _frame(votes)
    heavy = panel_verdicts(frame, ["x", "y", "z"], "weighted", weights={"x": 3.0, "y": 1.0, "z": 1.0})
    assert heavy.judgments["outcome"].tolist() == [1.0, 0.0, 1.0]
    equal = panel_verdicts(frame, ["x", "y", "z"], "weighted", weights={"x": 1, "y": 1, "z": 1})
    assert equal.judgments["outcome"].tolist() == panel_verdicts(frame, ["x", "y", "z"]).judgments["outcome"].tolist()


def test_comparisons_not_every_member_judged_are_kept_and_counted():
    votes = {"x": [1, 1, 0, 1], "y": [1, None, 0, None], "z": [0, 0, None, None]}
    panel = panel_verdicts(_frame(votes), ["x", "y", "z"])
    assert (panel.n_comparisons, panel.n_complete, panel.n_incomplete) == (4, 1, 3)
    assert panel.missing_by_member == {"x": 0, "y": 2, "z": 2}
    assert panel.judgments["n_members"].tolist() == [3, 2, 2, 1]
    assert panel.judgments["outcome"].tolist() == [1.0, 0.5, 0.0, 1.0]


def test_judges_outside_the_panel_and_failed_games_are_ignored():
    frame = _frame({"x": [1, 0], "y": [1, 0], "other": [0, 1]})
    failed = pd.DataFrame([{"prompt_id": "p0", "model_a": "m", "model_b": "n", "judge": "y", "outcome": None,
                            "error": "unparsed"}])
    panel = panel_verdicts(pd.concat([frame, failed], ignore_index=True), ["x", "y"])
    assert panel.member_rows == {"x": 2, "y": 2}
    assert panel.judgments["outcome"].tolist() == [1.0, 0.0]


def test_repeated_battles_of_one_key_stay_apart():
    frame = _frame({"x": [1], "y": [1]})
    twice = pd.concat([frame, frame.assign(outcome=0.0)], ignore_index=True)
    panel = panel_verdicts(twice, ["x", "y"])
    assert panel.judgments["outcome"].tolist() == [1.0, 0.0]


def test_a_panel_needs_two_known_distinct_members_and_a_known_rule():
    frame = _frame({"x": [1], "y": [1]})
    for bad in (["x"], ["x", "x"]):
        with pytest.raises(ConfigError, match="two distinct"):
            panel_verdicts(frame, bad)
    with pytest.raises(ConfigError, match="not in the judgments"):
        panel_verdicts(frame, ["x", "w"])
    with pytest.raises(ConfigError, match="rule"):
        panel_verdicts(frame, ["x", "y"], "median")
    with pytest.raises(ConfigError, match="weights"):
        panel_verdicts(frame, ["x", "y"], "weighted")


def test_fleiss_kappa_matches_statsmodels_and_the_textbook_example():
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(3)
    for raters in (2, 3, 6):
        counts = rng.multinomial(raters, [0.5, 0.2, 0.3], size=40)
        assert fleiss_kappa(counts) == pytest.approx(inter_rater.fleiss_kappa(counts), abs=1e-12)
    # Fleiss (1971) as reproduced on Wikipedia: 10 items, 14 raters, 5 categories, κ = 0.210
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=5e-5)
    with pytest.raises(InputError):
        fleiss_kappa([[2, 0], [1, 0]])


def test_panel_kappa_is_fleiss_over_complete_comparisons_and_one_when_members_agree():
    same = _frame({"x": [1, 0, 0.5, 1], "y": [1, 0, 0.5, 1], "z": [1, 0, 0.5, 1]})
    assert panel_verdicts(same, ["x", "y", "z"]).kappa == pytest.approx(1.0)
    votes = {"x": [1, 1, 0, 0.5], "y": [1, 0, 0, 1], "z": [0, 0.5, 0, None]}
    panel = panel_verdicts(_frame(votes), ["x", "y", "z"])
    assert panel.kappa == pytest.approx(fleiss_kappa([[2, 0, 1], [1, 1, 1], [0, 0, 3]]))


def test_reliability_weights_are_log_odds_of_agreement_with_the_reference():
    votes = {"human": [1, 0, 1, 0], "good": [1, 0, 1, 1], "chance": [0, 1, 0.5, 0]}
    weights, accuracy = reliability_weights(_frame(votes), ["good", "chance"], "human")
    assert accuracy == pytest.approx({"good": 0.75, "chance": 0.25})
    assert weights["good"] == pytest.approx(np.log(2 * 0.75 / 0.25))
    assert weights["chance"] == 0.0  # at or below chance (1/3): no vote


def test_a_majority_of_three_independent_judges_right_64_percent_is_right_more_often_than_each():
    """Condorcet on simulated judges (``judges.simulated``, Eq. 3 with a coin for the remainder): three judges,
    each naming the stronger model ~64% of the time, independently; their majority is right p³ + 3p²(1 − p) ≈ 71%."""
    from judgewise.judges.simulated import sample_verdicts

    rng = np.random.default_rng(2026)
    n = 6000
    elo_a = rng.choice([1000.0, 1200.0], n)
    elo_b = 2200.0 - elo_a  # every comparison 200 Elo apart, either way round
    frames, right = [], {}
    for k in range(3):
        outcome, _ = sample_verdicts(elo_a, elo_b, 0.55, rng, remainder="coin")
        frames.append(pd.DataFrame({"prompt_id": [f"p{i}" for i in range(n)], "model_a": "a", "model_b": "b",
                                    "judge": f"j{k}", "outcome": outcome}))
        right[f"j{k}"] = np.mean(np.where(elo_a > elo_b, outcome == 1, outcome == 0))
    panel = panel_verdicts(pd.concat(frames, ignore_index=True), list(right))
    order = panel.judgments["prompt_id"].str[1:].astype(int).to_numpy()
    truth, outcome = (elo_a > elo_b)[order], panel.judgments["outcome"].to_numpy()
    panel_right = np.mean(np.where(truth, outcome == 1, outcome == 0))
    assert all(0.62 < r < 0.67 for r in right.values()), right
    p = np.mean(list(right.values()))
    assert panel_right == pytest.approx(p ** 3 + 3 * p ** 2 * (1 - p), abs=0.02)
    assert panel_right > max(right.values()) + 0.04
