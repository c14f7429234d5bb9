"""``study`` with the Metric Match paper's settings: τ-a (App. A Eq. 3), the cost model as options (§4.1.3), the
classification win rates printed (§4.3) and every method against every other (App. D)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from judgewise.analysis.reliability import get_metric
from judgewise.analysis.study import pairwise_win_rates, run_study, win_rates
from tests.support import cli_json, run_cli
from tests.support.studies import rank_aligned_population


def test_tau_a_is_the_papers_concordant_minus_discordant_over_all_pairs():
    rng = np.random.default_rng(3)
    x, y = rng.integers(1, 6, 40).astype(float), rng.integers(1, 6, 40).astype(float)  # Likert: many ties
    s = [np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in itertools.combinations(range(40), 2)]
    expected = (sum(v > 0 for v in s) - sum(v < 0 for v in s)) / (40 * 39 / 2)
    assert get_metric("tau-a")(x, y) == pytest.approx(expected, abs=1e-12)
    assert get_metric("tau-a").many(np.stack([x, y]), np.stack([y, x])) == pytest.approx([expected] * 2, abs=1e-12)
    assert get_metric("tau")(x, y) != pytest.approx(expected)  # τ-b corrects for ties; the paper's τ does not


def test_app_d_win_rates_of_every_method_against_every_other_match_a_direct_count():
    pool = rank_aligned_population(seed=1, n=120, n_judges=5)
    res = run_study(pool, targets=[pool.judges[0], pool.judges[1]], metrics=["rho", "tau-a"], budgets=[10, 20],
                    trials=8, methods=["stratified", "bias-correction", "metric-match"], seed=2)
    table = pairwise_win_rates(res.trials, res.population)
    t = res.trials
    for row in table.itertuples(index=False):
        per_metric = []
        for _, g in t.groupby("metric"):
            cells = [float(np.nanmean(c[c.method == row.method].error) < np.nanmean(c[c.method == row.versus].error))
                     for _, c in g.groupby(["target", "budget"])]
            per_metric.append(np.mean(cells))
        assert row.error_macro == pytest.approx(np.mean(per_metric), abs=1e-12), (row.method, row.versus)
    assert len(table) == 4 * 3  # random is always run: 4 methods, every ordered pair
    vs_random = table[(table.method == "metric-match") & (table.versus == "random")].iloc[0]
    assert vs_random.error_macro == pytest.approx(win_rates(res.trials, "metric-match", n_boot=10)["overall"]["macro"])


@pytest.mark.slow
def test_study_cli_takes_the_cost_model_and_prints_classification_and_app_d(tmp_path):
    pool = rank_aligned_population(seed=4, n=80, n_judges=4)
    rows = [{"item_id": i, "rater": r, "score": float(s)} for r, v in zip(pool.judges, pool.scores)
            for i, s in zip(pool.item_ids, v)]
    rows += [{"item_id": i, "rater": "human", "score": float(s)} for i, s in zip(pool.item_ids, pool.human)]
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    args = ("study", str(path), "--target", pool.judges[0], "--budgets", "10,20,30", "--trials", "6",
            "--minutes-per-label", "2", "--cost-per-hour", "60")
    out = cli_json(*args, "--json")
    assert out["settings"]["minutes_per_label"] == 2 and out["settings"]["cost_per_hour"] == 60
    assert out["settings"]["metrics"] == ["icc", "alpha", "rho", "tau-a"]  # the paper's four, τ as τ-a
    for s in out["savings"]:
        if s["matching_budget"] is not None and s["matching_budget"] == s["matching_budget"]:
            assert s["cost_savings"] == pytest.approx((s["budget"] - s["matching_budget"]) * 2 / 60 * 60)
    assert {(p["method"], p["versus"]) for p in out["pairwise"]} >= {("metric-match", "bias-correction"),
                                                                    ("metric-match", "stratified")}
    text = run_cli(*args)
    assert text.returncode == 0, text.stderr
    flat = " ".join(text.stdout.split())
    assert "classification 1[ρ̂ > t] vs 1[ρ > t]" in flat and "App. D" in flat and "2 min per label at $60/h" in flat
