"""Each rating method through ``rank()``: BT designs and errors, weights, win-rate options, Elo, TrueSkill."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import trueskill

from judgewise.errors import ConfigError, InputError, RatingError
from judgewise.ratings import RATING_METHODS, MethodResult, rank
from judgewise.ratings.bradley_terry import ELO_SCALE

from tests.support.rating_data import anchored_battles


def table(rows, prompts=None) -> pd.DataFrame:
    """Judgments from (model_a, model_b, outcome) tuples."""
    a, b, o = zip(*rows)
    return pd.DataFrame({"prompt_id": prompts or [f"p{i}" for i in range(len(rows))], "model_a": a, "model_b": b,
                         "judge": "j", "outcome": o})


def star(rng, rates: dict, n: int = 400, anchor: str = "anchor") -> pd.DataFrame:
    """Every model against the anchor, outcome ~ Bernoulli(rate) from the model's side, shown in random order."""
    rows = []
    for model, rate in rates.items():
        wins = rng.random(n) < rate
        for k, w in enumerate(wins):
            rows.append((model, anchor, float(w)) if k % 2 else (anchor, model, float(not w)))
    return table(rows)


def by_model(ranking, values=None) -> dict:
    return dict(zip(ranking.models, ranking.scores if values is None else values))


def test_bt_rejects_a_disconnected_comparison_graph_naming_its_components():
    data = table([("a", "b", 1.0), ("b", "a", 1.0), ("c", "d", 0.5), ("d", "c", 1.0)])
    with pytest.raises(RatingError, match=r"disconnected into 2 components.*\{a, b\}; \{c, d\}"):
        rank(data, "bt")


def test_bt_reports_an_infinite_mle_and_fits_it_with_l2():
    data = table([("a", "b", 1.0), ("a", "b", 1.0), ("b", "c", 0.5), ("c", "b", 0.0)])
    with pytest.raises(RatingError, match="MLE is infinite.*l2"):
        rank(data, "bt", l2=0)
    scores = by_model(rank(data, "bt", l2=0.1))
    assert scores["a"] > scores["b"] and np.isfinite(list(scores.values())).all()


def test_bt_on_separated_data_fits_the_weak_default_prior_and_says_so():
    data = table([("a", "b", 1.0), ("a", "b", 1.0), ("b", "c", 0.5), ("c", "b", 0.0)])
    ranking = rank(data, "bt")
    assert ranking.info["l2"] == 0.01 and "{a}" in ranking.info["separated"]
    assert by_model(ranking) == pytest.approx(by_model(rank(data, "bt", l2=0.01)))
    assert by_model(ranking)["a"] > by_model(ranking)["b"]


def test_bt_default_is_the_unpenalised_mle_when_it_exists():
    data = table([("a", "b", 1.0), ("b", "a", 1.0), ("a", "b", 1.0), ("b", "c", 1.0), ("c", "b", 1.0)])
    ranking = rank(data, "bt")
    assert ranking.info["l2"] == 0.0 and ranking.info["separated"] is None
    assert by_model(ranking) == pytest.approx(by_model(rank(data, "bt", l2=0)), abs=1e-9)


def test_bt_on_an_anchor_only_star_design_equals_logit_of_win_rates():
    data = star(np.random.default_rng(1), {"m1": 0.2, "m2": 0.5, "m3": 0.7})
    bt = by_model(rank(data, "bt"))
    wr = by_model(rank(data, "winrate"))
    for model in ("m1", "m2", "m3"):
        p = wr[model] / 100.0
        assert bt[model] - bt["anchor"] == pytest.approx(400.0 * np.log10(p / (1 - p)), abs=1e-6)


def test_bt_anchor_pins_the_named_model_at_its_rating_without_changing_gaps():
    data = star(np.random.default_rng(2), {"m1": 0.3, "m2": 0.6})
    centred = by_model(rank(data, "bt"))
    pinned = by_model(rank(data, "bt", anchor="anchor", anchor_rating=1200.0))
    assert pinned["anchor"] == pytest.approx(1200.0)
    assert pinned["m1"] - pinned["m2"] == pytest.approx(centred["m1"] - centred["m2"])
    assert np.mean(list(centred.values())) == pytest.approx(1000.0)


def test_bt_natural_scale_is_elo_scale_divided_by_400_over_ln10():
    data = star(np.random.default_rng(3), {"m1": 0.3, "m2": 0.6})
    ranking = rank(data, "bt", scale="natural")
    np.testing.assert_allclose(ranking.extra["elo"], ELO_SCALE * ranking.scores + 1000.0)


def test_sample_weights_count_like_repeated_rows():
    rng = np.random.default_rng(4)
    base = star(rng, {"m1": 0.3, "m2": 0.6}, n=50)
    weights = rng.integers(1, 4, len(base))
    weighted = base.assign(w=weights)
    repeated = base.loc[base.index.repeat(weights)].reset_index(drop=True)
    for method in ("bt", "winrate"):
        got = rank(weighted, method, weight_column="w")
        want = rank(repeated, method)
        np.testing.assert_allclose(got.scores, want.scores, atol=1e-7)
    np.testing.assert_allclose(rank(weighted, "winrate", weight_column="w").extra["se"],
                               rank(repeated, "winrate").extra["se"], atol=1e-9)


def test_arena_hard_weighting_counts_a_strong_verdict_as_three_games():
    rng = np.random.default_rng(5)
    verdict = rng.choice([-2, -1, 0, 1, 2], 300)
    data = table([("m", "base", 0.5 + np.sign(v) / 2) for v in verdict]).assign(verdict=verdict)
    repeated = data.loc[data.index.repeat(np.where(np.abs(verdict) == 2, 3, 1))].reset_index(drop=True)
    got = rank(data, "winrate", anchor="base", weighting="arena_hard")
    want = rank(repeated, "winrate", anchor="base")
    np.testing.assert_allclose(got.scores, want.scores)
    np.testing.assert_allclose(got.extra["se"], want.extra["se"])
    with pytest.raises(InputError, match="verdict"):
        rank(data.drop(columns="verdict"), "winrate", anchor="base", weighting="arena_hard")


def test_winrate_needs_an_anchor_when_none_is_in_every_row():
    data = table([("a", "b", 1.0), ("b", "c", 0.0), ("c", "a", 0.5)])
    with pytest.raises(ConfigError, match="--anchor"):
        rank(data, "winrate")
    ranking = rank(data, "winrate", anchor="a")
    assert ranking.info["rows_not_used"] == 1 and ranking.info["rows_used"] == 2


def test_winrate_rejects_an_unknown_anchor_listing_models():
    with pytest.raises(ConfigError, match='model "zzz" is not in the judgments'):
        rank(table([("a", "b", 1.0)]), "winrate", anchor="zzz")


def test_outcome_out_of_range_is_an_input_error_naming_row_and_field():
    with pytest.raises(InputError, match=r'row 2 field "outcome".*not a number in \[0, 1\]'):
        rank(table([("a", "b", 1.0), ("a", "b", 1.5)]), "bt")


def test_unknown_method_and_unknown_option_are_config_errors():
    data = table([("a", "b", 1.0), ("b", "a", 1.0)])
    with pytest.raises(ConfigError, match="unknown rating method"):
        rank(data, "nope")
    with pytest.raises(ConfigError, match="no option"):
        rank(data, "bt", k=3)
    with pytest.raises(ConfigError, match="style control"):
        rank(data, "winrate", style_control=True)


def test_rating_methods_registry_is_user_extendable():
    def mean_outcome(data, *, bonus: float = 0.0):
        enc = data.enc
        total = np.bincount(enc.a, enc.outcome, enc.n_models) + np.bincount(enc.b, 1 - enc.outcome, enc.n_models)
        return MethodResult(total / enc.rows_per_model() + bonus)

    RATING_METHODS["mean_outcome"] = mean_outcome
    try:
        ranking = rank(table([("a", "b", 1.0), ("b", "a", 0.5)]), "mean_outcome", bonus=1.0)
        assert by_model(ranking) == {"a": 1.75, "b": 1.25}
    finally:
        del RATING_METHODS["mean_outcome"]


@pytest.mark.parametrize("method", RATING_METHODS.names())  # every registered method (docs/extending.md)
def test_every_method_gives_a_ranking_of_every_model_best_first_with_what_made_it(method):
    data, responses = anchored_battles(np.random.default_rng(8))
    ranking = rank(data, method, responses=responses)
    k = len(ranking.models)
    assert ranking.method == method == ranking.info["method"] and sorted(ranking.models) == ["m0", "m1", "m2"]
    for values in (ranking.scores, ranking.ci_low, ranking.ci_high, ranking.rank, ranking.n,
                   *ranking.extra.values()):
        assert np.shape(values) == (k,)
    assert np.isfinite(ranking.scores).all() and np.isnan(ranking.ci_low).all()  # no bootstrap, no interval
    assert ranking.info["rows"] == len(data) and ranking.settings()["method"] == method
    records = ranking.to_records()
    assert [r["model"] for r in records] == [ranking.models[i] for i in ranking.order()]
    assert [r["score"] for r in records] == sorted((r["score"] for r in records), reverse=True)
    assert all(r["rank"] == 1 + sum(s["score"] > r["score"] for s in records) for r in records)


def test_online_elo_conserves_total_rating_and_depends_on_order():
    data = star(np.random.default_rng(6), {"m1": 0.3, "m2": 0.7}, n=200)
    forward = rank(data, "elo", k=16)
    backward = rank(data.iloc[::-1].reset_index(drop=True), "elo", k=16)
    assert forward.scores.sum() == pytest.approx(1000.0 * 3)
    assert not np.allclose(by_model(forward)["m1"], by_model(backward)["m1"])
    assert rank(data, "elo", k=32).info["k"] == 32


def test_trueskill_matches_the_package_and_leaves_its_global_environment_alone():
    data = table([("a", "b", 1.0), ("b", "c", 0.5), ("c", "a", 0.0), ("a", "c", 1.0), ("b", "a", 0.0)])
    trueskill.setup(mu=3.0, sigma=1.0)  # a hostile global environment
    try:
        ranking = rank(data, "trueskill", score="mu")
        env = trueskill.TrueSkill()
        r = {m: env.create_rating() for m in "abc"}
        r["a"], r["b"] = trueskill.rate_1vs1(r["a"], r["b"], env=env)
        r["b"], r["c"] = trueskill.rate_1vs1(r["b"], r["c"], drawn=True, env=env)
        r["a"], r["c"] = trueskill.rate_1vs1(r["a"], r["c"], env=env)
        r["a"], r["c"] = trueskill.rate_1vs1(r["a"], r["c"], env=env)
        r["a"], r["b"] = trueskill.rate_1vs1(r["a"], r["b"], env=env)
        for model in "abc":
            assert by_model(ranking)[model] == pytest.approx(r[model].mu)
            assert by_model(ranking, ranking.extra["conservative"])[model] == pytest.approx(
                r[model].mu - 3 * r[model].sigma)
        assert trueskill.global_env().mu == 3.0
    finally:
        trueskill.setup()


def test_missing_model_name_is_an_input_error_not_a_model_called_nan():
    data = table([("a", "b", 1.0), ("a", None, 0.0)])
    with pytest.raises(InputError, match=r'row 2 field "model_b": model_b is missing'):
        rank(data, "bt")
