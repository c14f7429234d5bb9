"""Ranking pointwise grades: mean score per model with a prompt-cluster bootstrap (ratings.pointwise)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.errors import ConfigError, RatingError
from judgewise.ratings.pointwise import mean_scores


def _grades(rng: np.random.Generator, n_prompts: int = 12, models=("a", "b", "c"), fail_rate: float = 0.1):
    rows = []
    for p in range(n_prompts):
        for m in models:
            for turn in (1, 2):
                failed = rng.random() < fail_rate
                rows.append({"prompt_id": f"q{p}", "model": m, "judge": "gpt-4", "turn": turn,
                             "score": None if failed else float(rng.integers(1, 11)),
                             "error": "no rating" if failed else None})
    return pd.DataFrame(rows)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_score_is_the_mean_of_each_models_scored_grades(seed):
    grades = _grades(np.random.default_rng(seed))
    ranking = mean_scores(grades)
    for m, score, n in zip(ranking.models, ranking.scores, ranking.n):
        mine = [s for model, s in zip(grades["model"], grades["score"]) if model == m and s == s and s is not None]
        assert score == pytest.approx(sum(mine) / len(mine)) and n == len(mine)
    assert ranking.info["failed_grades_skipped"] == int(grades["score"].isna().sum())


def test_intervals_lie_within_each_models_range_and_are_reproducible():
    grades = _grades(np.random.default_rng(3))
    a = mean_scores(grades, bootstrap=400, seed=5)
    b = mean_scores(grades, bootstrap=400, seed=5)
    assert np.array_equal(a.ci_low, b.ci_low) and np.array_equal(a.ci_high, b.ci_high)
    for i, m in enumerate(a.models):
        scores = grades.loc[grades["model"] == m, "score"].dropna()
        assert scores.min() <= a.ci_low[i] <= a.scores[i] <= a.ci_high[i] <= scores.max()


def test_constant_scores_give_a_zero_width_interval():
    grades = pd.DataFrame({"prompt_id": [f"q{i}" for i in range(8) for _ in range(2)],
                           "model": ["a", "b"] * 8, "judge": "j", "score": [7.0, 3.0] * 8})
    r = mean_scores(grades, bootstrap=100)
    assert list(r.ci_low) == list(r.ci_high) == list(r.scores) == [7.0, 3.0]
    assert list(r.rank) == [1, 2]


def test_relabelling_models_permutes_the_ranking():
    grades = _grades(np.random.default_rng(9))
    renamed = grades.assign(model=grades["model"].map({"a": "z", "b": "y", "c": "x"}))
    r1, r2 = mean_scores(grades, bootstrap=200, seed=2), mean_scores(renamed, bootstrap=200, seed=2)
    s1 = dict(zip(r1.models, r1.scores))
    s2 = dict(zip(r2.models, r2.scores))
    assert s1 == pytest.approx({"a": s2["z"], "b": s2["y"], "c": s2["x"]})


def test_several_judges_are_refused_unless_one_is_chosen():
    grades = pd.concat([_grades(np.random.default_rng(1)), _grades(np.random.default_rng(2)).assign(judge="claude")])
    with pytest.raises(ConfigError, match="different judges"):
        mean_scores(grades)
    assert mean_scores(grades, judge="claude").info["judge_rows_dropped"] == len(grades) // 2


def test_all_failed_is_a_rating_error():
    grades = pd.DataFrame({"prompt_id": ["q1"], "model": ["a"], "judge": ["j"], "score": [None], "error": ["x"]})
    with pytest.raises(RatingError, match="none of the 1 grades"):
        mean_scores(grades)
