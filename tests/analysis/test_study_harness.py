"""Study harness: Metric Match beats random on a rank-aligned synthetic population; summaries; clear input errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgewise.analysis.study import (annotation_savings, classification_win_rates, matching_budget, pool_from_scores,
                                     relative_improvement, run_study)
from judgewise.errors import ConfigError, InputError

from tests.support.studies import rank_aligned_population


def test_metric_match_beats_random_on_a_rank_aligned_population():
    result = run_study(rank_aligned_population(), metrics=["icc", "alpha", "rho", "tau"], budgets=[10, 20, 30],
                       trials=40, methods=["metric-match"], seed=0)
    wins = result.win_rates("metric-match", n_boot=500)["overall"]
    assert wins["macro"] > 0.5 and wins["macro_lo"] > 0.5
    assert wins["micro_lo"] > 0.5
    assert (relative_improvement(result.trials)["improvement"] > 0).all()


def test_study_tables_have_every_cell_and_json_ready_summary():
    pool = rank_aligned_population(1, n=80, n_judges=3)
    result = run_study(pool, metrics=["rho", "mse"], budgets=[5, 10], trials=6, seed=2)
    assert len(result.trials) == 3 * 2 * 2 * 5 * 6  # targets × metrics × budgets × methods × trials
    errors = result.errors()
    assert set(errors["method"]) == {"random", "stratified", "bias-correction", "metric-match", "variance-match"}
    summary = result.as_dict()
    assert {"errors", "win_rates", "classification", "savings", "per_target", "population"} <= set(summary)
    json.dumps(summary, allow_nan=True)  # JSON-ready: plain Python types only


def test_a_study_without_metric_match_summarises_the_method_it_ran():
    pool = rank_aligned_population(3, n=60, n_judges=3)
    result = run_study(pool, metrics=["rho"], budgets=[5, 10], trials=4, methods=["stratified"], seed=1)
    summary = result.as_dict()
    assert summary["headline"]["method"] == "stratified" and set(summary["win_rates"]) == {"stratified"}
    only_random = run_study(pool, metrics=["rho"], budgets=[5], trials=2, methods=["random"], seed=1)
    with pytest.raises(ConfigError, match="only random"):
        only_random.as_dict()


def test_study_is_reproducible_from_its_seed():
    pool = rank_aligned_population(2, n=60, n_judges=3)
    a = run_study(pool, metrics=["tau"], budgets=[8], trials=5, seed=9).trials
    b = run_study(pool, metrics=["tau"], budgets=[8], trials=5, seed=9).trials
    c = run_study(pool, metrics=["tau"], budgets=[8], trials=5, seed=10).trials
    assert a.equals(b) and not a["estimate"].equals(c["estimate"])


def test_matching_budget_interpolates_the_first_crossing():
    budgets = np.array([10.0, 20.0, 30.0])
    assert matching_budget(budgets, np.array([0.5, 0.3, 0.1]), 0.2) == pytest.approx(25.0)
    assert matching_budget(budgets, np.array([0.5, 0.3, 0.1]), 0.6) == 10.0  # already there: no extrapolation
    assert np.isnan(matching_budget(budgets, np.array([0.5, 0.3, 0.1]), 0.05))


def _trials(err_random, err_method, budgets):
    rows = []
    for method, errs in (("random", err_random), ("metric-match", err_method)):
        for b, e in zip(budgets, errs):
            rows.append({"target": "t", "metric": "icc", "budget": b, "method": method, "trial": 0,
                         "estimate": 0.5 + e, "error": e, "population": 0.5})
    return pd.DataFrame(rows)


def test_cost_model_is_saved_labels_times_hours_times_rate():
    trials = _trials([0.4, 0.3, 0.2], [0.3, 0.2, 0.1], [10, 20, 30])
    out = annotation_savings(trials, hours_per_label=1 / 12, cost_per_hour=500).set_index("budget")
    # random reaches 0.3 at R=20; Metric Match at 10 → 10 labels saved → 10 · 5 min · $500/h
    assert out.loc[20, "matching_budget"] == pytest.approx(10.0)
    assert out.loc[20, "relative_savings"] == pytest.approx(0.5)
    assert out.loc[20, "cost_savings"] == pytest.approx(10 / 12 * 500)


def test_classification_counts_a_win_only_when_the_method_alone_is_right():
    trials = pd.DataFrame({"target": "t", "metric": "rho", "budget": 10, "trial": [0, 1, 0, 1],
                           "method": ["random", "random", "metric-match", "metric-match"],
                           "estimate": [0.65, 0.75, 0.75, 0.75], "error": 0.0, "population": 0.72})
    population = pd.DataFrame({"target": ["t"], "metric": ["rho"], "population": [0.72]})
    out = classification_win_rates(trials, population, thresholds=[0.7])
    # trial 0: only Metric Match right (win 1); trial 1: both right (0.5)
    assert out["micro"].item() == pytest.approx(0.75) and out["macro"].item() == 1.0


def _long(wide: dict[str, list[float]], items=None) -> pd.DataFrame:
    items = items or [f"i{k}" for k in range(len(next(iter(wide.values()))))]
    return pd.DataFrame([{"item_id": i, "rater": r, "score": s} for r, v in wide.items() for i, s in zip(items, v)])


def test_item_missing_for_a_rater_is_a_clear_error():
    table = _long({"a": [1, 2, 3, 4], "b": [2, 1, 4, 3], "human": [1, 2, 4, 3]})
    table = table[~((table["rater"] == "b") & (table["item_id"] == "i2"))]
    with pytest.raises(InputError, match=r"rater 'b' has no score for 1 of 4 items \(e.g. 'i2'\)"):
        pool_from_scores(table, target="a")


def test_constant_scores_are_a_clear_error():
    pool = pool_from_scores(_long({"a": [1, 2, 3, 4, 5], "b": [3, 3, 3, 3, 3], "human": [1, 2, 3, 5, 4]}))
    with pytest.raises(InputError, match="judge 'b' gives the same score"):
        run_study(pool, targets=["a"], metrics=["rho"], budgets=[3], trials=2)
    pool = pool_from_scores(_long({"a": [1, 2, 3, 4, 5], "b": [2, 1, 3, 5, 4], "human": [2] * 5}))
    with pytest.raises(InputError, match="human scores are constant"):
        run_study(pool, targets=["a"], metrics=["rho"], budgets=[3], trials=2)


def test_budget_larger_than_pool_and_unknown_judge_are_clear_errors():
    pool = pool_from_scores(_long({"a": [1, 2, 3, 4], "b": [2, 1, 4, 3], "human": [1, 2, 4, 3]}))
    with pytest.raises(InputError, match="budget 10 is larger than the pool of 4 items"):
        run_study(pool, metrics=["rho"], budgets=[10], trials=2)
    with pytest.raises(InputError, match="'gpt-5' is not a judge in these scores; judges: a, b"):
        run_study(pool, targets=["gpt-5"], metrics=["rho"], budgets=[3], trials=2)


def test_duplicate_and_non_numeric_scores_name_the_row():
    table = _long({"a": [1, 2, 3], "human": [1, 2, 3]})
    with pytest.raises(InputError, match="row 4 field \"item_id\".*scored twice"):
        pool_from_scores(pd.concat([table.iloc[:3], table.iloc[:1]], ignore_index=True), source="s.csv")
    table["score"] = table["score"].astype(object)
    table.loc[1, "score"] = "good"
    with pytest.raises(InputError, match="row 2 field \"score\": = 'good' is not a finite number"):
        pool_from_scores(table, source="s.csv")
