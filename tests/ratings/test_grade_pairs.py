"""Grades read as pairs (the higher grade wins, equal grades tie) and as scores (one rater per judge)."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.ratings.pointwise import grade_pairs, grades_as_scores


def _grades(rows):
    return pd.DataFrame(rows, columns=["prompt_id", "model", "judge", "score", "turn", "error"])


def test_the_higher_grade_wins_and_equal_grades_tie_within_a_prompt_and_turn():
    grades = _grades([("p1", "b", "j", 4.0, 1, None), ("p1", "a", "j", 2.0, 1, None), ("p1", "c", "j", 4.0, 1, None),
                      ("p1", "a", "j", 5.0, 2, None), ("p1", "b", "j", None, 2, "rating 7 is outside 1-5"),
                      ("p2", "a", "j", 3.0, 1, None)])
    pairs, counts = grade_pairs(grades)
    got = {(r.prompt_id, r.turn, r.model_a, r.model_b): r.outcome for r in pairs.itertuples()}
    assert got == {("p1", 1, "a", "b"): 0.0, ("p1", 1, "a", "c"): 0.0, ("p1", 1, "b", "c"): 0.5}
    assert counts["pairs"] == 3 and counts["ties"] == 1 and counts["failed_grades_skipped"] == 1


def test_two_judges_never_meet_in_a_pair():
    grades = _grades([("p1", "a", "j1", 1.0, 1, None), ("p1", "b", "j2", 5.0, 1, None)])
    assert grade_pairs(grades)[0].empty


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=3, max_size=3), st.permutations(["x", "y", "z"]))
def test_each_pair_is_decided_by_its_grades_whatever_the_models_are_named(scores, names):
    pairs = grade_pairs(_grades([("p", m, "j", float(s), 1, None) for m, s in zip(names, scores)]))[0]
    score_of = dict(zip(names, scores))
    assert len(pairs) == 3
    for r in pairs.itertuples():
        a, b = score_of[r.model_a], score_of[r.model_b]
        assert r.model_a < r.model_b and r.outcome == (1.0 if a > b else 0.0 if a < b else 0.5)


def test_grades_become_scores_one_item_per_answer_and_turn():
    grades = _grades([("p1", "a", "j|rubric-helpfulness@1.1", 4.0, 2, None), ("p1", "b", "j", None, 1, "failed")])
    scores = grades_as_scores(grades)
    assert scores.to_dict("records") == [{"item_id": "p1/a/turn 2", "rater": "j|rubric-helpfulness@1.1",
                                          "score": 4.0}]
    without_turn = grades_as_scores(grades.drop(columns="turn").iloc[:1])
    assert without_turn["item_id"].tolist() == ["p1/a"]


def test_a_grades_table_without_its_columns_is_refused():
    with pytest.raises(Exception, match="score"):
        grade_pairs(pd.DataFrame({"prompt_id": ["p"], "model": ["a"], "judge": ["j"]}))
