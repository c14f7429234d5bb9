"""`judgewise plan` follows Anchor Fig. 5 / §6 on the paper's own examples."""

import pytest

from judgewise.analysis.planning import MAX_MODELS, PlanInputs, detectable_edge, plan
from judgewise.analysis.power import sign_test_n_normal
from judgewise.errors import ConfigError
from tests.support import cli_json


@pytest.mark.parametrize("n", [2, 3])
def test_three_or_fewer_models_without_baseline_get_the_quadratic_design(n):
    result = plan(PlanInputs(n_models=n))
    assert result.design == "quadratic"
    assert result.judge_calls == n * (n - 1) // 2 * result.n_prompts


def test_natural_baseline_becomes_the_anchor_whatever_the_pool_size():
    for n in (3, 12):
        result = plan(PlanInputs(n_models=n, natural_baseline="base-method"))
        assert result.design == "anchor" and "base-method" in result.anchor_strategy
        assert result.judge_calls == (n - 1) * result.n_prompts


def test_leaderboard_gets_a_mediocre_anchor_with_a_pilot_sized_by_table2():
    result = plan(PlanInputs(n_models=22, effect=0.05))
    assert result.design == "anchor" and "mediocre" in result.anchor_strategy
    assert "pilot" in result.anchor_strategy and result.pilot_calls == 10 * 22 * 21 // 2
    # 617 informative prompts / 0.54 mean informativeness = 1143 (the paper's "sign test (1143)", §4.3)
    assert result.n_informative == 617 and result.n_prompts == 1143


def test_no_full_ranking_means_only_pairs_of_interest():
    assert plan(PlanInputs(n_models=6, full_ranking=False)).design == "pairs-of-interest"


def test_small_budget_warns_with_the_detectable_edge():
    result = plan(PlanInputs(n_models=10, budget=2000))
    assert result.warnings and "detect only an edge" in result.warnings[0]
    edge = detectable_edge(300)
    assert sign_test_n_normal(0.5 + edge) <= 300 < sign_test_n_normal(0.5 + edge - 0.002)


def test_plan_rejects_impossible_inputs():
    with pytest.raises(ConfigError):
        plan(PlanInputs(n_models=1))
    with pytest.raises(ConfigError):
        plan(PlanInputs(n_models=5, effect=0.6))
    for bad in ({"alpha": 2.0}, {"power": 0.0}, {"tie_rate": 1.0}, {"anchor_informativeness": 0.0}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            plan(PlanInputs(n_models=5, **bad))


def test_cli_plan_json_for_a_leaderboard():
    out = cli_json("plan", "--models", "22", "--json")
    assert out["design"] == "anchor" and "mediocre" in out["anchor_strategy"]
    assert out["judge_calls"] == 21 * out["n_prompts"] and out["reasons"]


@pytest.mark.parametrize("field, value", [("effect", 1e-200), ("effect", 1e-10), ("anchor_informativeness", 1e-320),
                                          ("alpha", 1e-300), ("power", 1 - 1e-12), ("effect", float("nan"))])
def test_inputs_whose_plan_would_overflow_are_refused_naming_the_parameter(field, value):
    with pytest.raises(ConfigError, match=f"`{field}` must be in"):
        plan(PlanInputs(n_models=8, **{field: value}))


def test_the_largest_plan_within_the_bounds_is_finite():
    result = plan(PlanInputs(n_models=MAX_MODELS, effect=0.001, anchor_informativeness=0.001))
    assert 0 < result.judge_calls < 10**18 and result.n_prompts > 10**9
