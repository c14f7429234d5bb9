"""Designs list the comparisons they will pay for, with the cost known before running (Arena-lite Alg. 1/2,
Anchor §2/App. E)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgewise.designs import DESIGNS, is_single_shot, make_design
from judgewise.designs.tournament import bracket
from judgewise.errors import ConfigError
from judgewise.judges.simulated import response_quality, verdict_fn
from judgewise.ratings.bradley_terry import fit_bt_arrays


def names(n, prefix="m"):
    return [f"{prefix}{i}" for i in range(n)]


def sim(elo, n_prompts, p_judge=0.8, seed=0, remainder="tie"):
    rng = np.random.default_rng(seed)
    return verdict_fn(response_quality(np.asarray(elo, float), n_prompts, 0.0, rng), p_judge, rng,
                      remainder=remainder)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), n_prompts=st.integers(1, 12), seed=st.integers(0, 10_000),
       tie_break=st.sampled_from(["coin", "second"]), p_judge=st.sampled_from([0.0, 0.6, 1.0]))
def test_tournament_costs_n_minus_1_calls_per_prompt_and_everyone_plays_every_prompt(n, n_prompts, seed,
                                                                                     tie_break, p_judge):
    design = make_design("tournament", tie_break=tie_break)
    rng = np.random.default_rng(seed)
    run = design.run(names(n), names(n_prompts, "x"), sim(rng.normal(1000, 200, n), n_prompts, p_judge, seed), rng)
    assert run.n_calls == (n - 1) * n_prompts == design.n_calls(n, n_prompts)
    plays = np.zeros((n_prompts, n), dtype=int)
    np.add.at(plays, (run.pairs.prompt, run.pairs.a), 1)
    np.add.at(plays, (run.pairs.prompt, run.pairs.b), 1)
    assert plays.min() >= 1
    assert np.all(run.pairs.a != run.pairs.b)
    # single elimination: per prompt, exactly one model never loses
    assert run.info["champion_counts"].sum() == n_prompts


def test_bracket_gives_byes_when_n_is_not_a_power_of_two():
    for n in range(2, 70):
        matches = bracket(n)
        assert len(matches) == n - 1
        slots = sorted(-c - 1 for left, right, _ in matches for c in (left, right) if c < 0)
        assert slots == list(range(n))
        assert max(h for _, _, h in matches) == int(np.ceil(np.log2(n)))


def test_tournament_tie_break_second_advances_model_b_as_alg1_does():
    always_tie = lambda p, a, b: np.full(len(p), 0.5)  # noqa: E731
    run = make_design("tournament", tie_break="second").run(names(4), ["x"], always_tie, np.random.default_rng(0))
    final_a, final_b = run.pairs.a[-1], run.pairs.b[-1]
    semis_b = set(run.pairs.b[:2])
    assert {final_a, final_b} == semis_b and np.all(run.outcome == 0.5)


def test_tournament_champion_is_mostly_the_best_model_with_a_perfect_judge():
    elo = [1900, 1000, 1000, 1000, 1000, 1000, 1000, 1000]
    run = make_design("tournament").run(names(8), names(200, "x"), sim(elo, 200, 1.0), np.random.default_rng(1))
    assert run.info["champion_counts"][0] > 180


def test_anchor_design_pairs_every_model_with_each_anchor_once_per_prompt():
    design = make_design("anchor", anchors=["m1", "m3"])
    pairs = design.pairs(names(5), names(3, "x"))
    assert len(pairs) == design.n_calls(5, 3) == 3 * (4 + 3)
    frame = pairs.to_frame()
    assert set(frame.model_b) == {"m1", "m3"}
    assert not frame.duplicated().any()


def test_all_models_as_anchors_is_the_quadratic_design():
    anchor = make_design("anchor", anchors=names(6)).pairs(names(6), names(2, "x"))
    quad = make_design("quadratic").pairs(names(6), names(2, "x"))
    key = lambda p: sorted((x, *sorted((a, b))) for x, a, b in p.records())  # noqa: E731
    assert key(anchor) == key(quad) and len(quad) == 15 * 2


def test_quadratic_and_all_pairs_are_one_design_under_two_names():
    assert DESIGNS["quadratic"] is DESIGNS["all_pairs"]
    assert make_design("quadratic").pairs(names(4), ["x", "y"]).records() == \
        make_design("all_pairs").pairs(names(4), ["x", "y"]).records()
    assert {"quadratic", "all_pairs"} <= set(DESIGNS.names())  # both still listed and accepted by configs


def test_external_anchor_joins_the_pool():
    pairs = make_design("anchor", anchors="ref").pairs(names(3), ["x"])
    assert pairs.models == ["m0", "m1", "m2", "ref"] and len(pairs) == 3


def test_sampled_design_respects_budget_without_repeats_and_zero_weights():
    design = make_design("sampled", budget=50, weights=[1, 1, 1, 0])
    pairs = design.pairs(names(4), names(20, "x"), np.random.default_rng(0))
    frame = pairs.to_frame()
    assert len(frame) == 50 == design.n_calls(4, 20)
    assert "m3" not in set(frame.model_a) | set(frame.model_b)
    unordered = frame.apply(lambda r: (r.prompt_id, *sorted((r.model_a, r.model_b))), axis=1)
    assert not unordered.duplicated().any()


def test_adaptive_design_stays_within_budget_and_concentrates_on_close_pairs():
    elo = [1500, 1480, 1200, 1000, 980]
    design = make_design("adaptive", budget=600, fit=fit_bt_arrays, batch_size=4, per_pair=2)
    run = design.run(names(5), names(300, "x"), sim(elo, 300, 0.9, seed=3), np.random.default_rng(3))
    assert run.n_calls <= 600
    close = ((run.pairs.a == 0) & (run.pairs.b == 1)) | ((run.pairs.a == 1) & (run.pairs.b == 0))
    far = ((run.pairs.a == 0) & (run.pairs.b == 4)) | ((run.pairs.a == 4) & (run.pairs.b == 0))
    assert close.sum() > 5 * max(far.sum(), 1)
    assert run.info["trajectory"][-1][0] == run.n_calls


def test_adaptive_design_judges_a_pair_on_a_fresh_prompt_each_time_and_leaves_resolved_pairs_alone():
    elo = [2000, 1600, 1200, 800, 790]
    design = make_design("adaptive", budget=400, fit=fit_bt_arrays)
    run = design.run(names(5), names(500, "x"), sim(elo, 500, 1.0, seed=5), np.random.default_rng(5))
    frame = run.to_judgments()
    pair = frame[["model_a", "model_b"]].apply(sorted, axis=1).str.join("-")
    assert not frame.assign(pair=pair).duplicated(["pair", "prompt_id"]).any()
    assert pair.value_counts().index[0] == "m3-m4" and (pair == "m3-m4").mean() > 0.4  # the unresolved pair


def test_hull_allocation_gives_calls_by_gain_per_call_and_skips_pairs_with_nothing_to_gain():
    from judgewise.designs.adaptive import LOOKAHEAD, hull_allocation
    m = LOOKAHEAD
    gain = np.stack([np.where(m >= 4, 0.4, 0.0),        # pays only after 4 calls: 0.1 per call
                     0.05 * np.minimum(m, 2),            # 0.05 per call for 2 calls, then nothing
                     np.zeros_like(m)], axis=1)          # resolved: nothing to gain
    assert hull_allocation(gain, 6, np.array([99, 99, 99])).tolist() == [4, 2, 0]
    assert hull_allocation(gain, 3, np.array([99, 99, 99])).tolist() == [3, 0, 0]
    assert hull_allocation(gain, 6, np.array([1, 99, 99])).tolist() == [1, 2, 0]


def test_adaptive_design_stops_when_the_ranking_is_resolved():
    elo = [2000, 1500, 1000]
    design = make_design("adaptive", budget=5000, fit=fit_bt_arrays, batch_size=6, confidence=0.95)
    run = design.run(names(3), names(200, "x"), sim(elo, 200, 1.0, seed=4), np.random.default_rng(4))
    assert run.info["stopped"] == "resolved" and run.n_calls < 5000


def test_adaptive_needs_a_fit_and_a_budget():
    with pytest.raises(ConfigError):
        make_design("adaptive", budget=10)
    with pytest.raises(ConfigError):
        make_design("adaptive", fit=fit_bt_arrays)


def test_binary_search_insertion_places_a_clearly_separated_model():
    board = names(8)
    elo = [1800 - 100 * i for i in range(8)] + [1450]  # the new model belongs between m3 (1500) and m4 (1400)
    design = make_design("insert-binary", leaderboard=board, new_model="new")
    run = design.run(None, names(300, "x"), sim(elo, 300, 1.0, seed=5), np.random.default_rng(5))
    assert run.info["position"] == 4 and not run.info["tie"]
    assert run.n_calls <= design.n_calls(9, 300)
    assert set(run.pairs.to_frame().model_a) == {"new"}


def test_anchor_insertion_converts_the_leaderboard_back_to_win_rates():
    ratings = {f"m{i}": 1800.0 - 100 * i for i in range(8)}
    elo = list(ratings.values()) + [1450.0]
    design = make_design("insert-anchor", ratings=ratings, new_model="new", anchor="m4")
    run = design.run(None, names(2000, "x"), sim(elo, 2000, 1.0, seed=6), np.random.default_rng(6))
    assert run.n_calls == 2000 == design.n_calls(9, 2000)
    assert run.info["position"] == 4 and abs(run.info["elo"] - 1450) < 40


def test_unknown_design_lists_the_known_ones():
    with pytest.raises(ConfigError, match="tournament"):
        make_design("swiss")
    assert {"anchor", "quadratic", "tournament", "sampled", "adaptive", "insert-binary",
            "insert-anchor"} <= set(DESIGNS)


def test_design_run_becomes_canonical_judgments():
    run = make_design("quadratic").run(names(3), names(2, "x"), sim([1, 2, 3], 2), np.random.default_rng(0))
    frame = run.to_judgments("sim")
    assert list(frame.columns) == ["prompt_id", "model_a", "model_b", "judge", "outcome"]
    assert len(frame) == 6 and frame.outcome.between(0, 1).all()


def test_one_registry_holds_every_design_and_lists_single_shot_comparisons():
    from judgewise.designs import design_triples, is_single_shot
    single = {n for n in DESIGNS if is_single_shot(n)}
    assert {"all_pairs", "anchor", "quadratic", "sampled"} <= single  # the built-ins' kinds, as catalog.py says
    assert not {"tournament", "adaptive", "insert-binary", "insert-anchor"} & single
    models, prompts = names(4), names(3, "x")
    expected = make_design("quadratic").pairs(models, prompts, np.random.default_rng(0)).records()
    assert design_triples("quadratic", models, prompts, seed=0) == expected
    assert design_triples("all_pairs", models, prompts) == expected  # all_pairs is the quadratic design
    assert len(design_triples("sampled", models, prompts, seed=1, budget=5)) == 5
    with pytest.raises(ConfigError, match="multi-round"):
        design_triples("tournament", models, prompts)


# --- every registered design, by its kind -------------------------------------------------------------------------
# The tests below are generated from DESIGNS: a design registered in designs/catalog.py (docs/extending.md) is
# exercised without editing them. Its kind is what it declares: ``pairs`` (single-shot) or ``steps`` (multi-round).

def built_in_options(name: str, models: list[str]) -> dict:
    """The options a run config gives the built-in designs that need some; any other design is built with none
    (a design's options have defaults, docs/extending.md)."""
    board = models[:-1]
    return {"anchor": {"anchor": models[0]}, "sampled": {"budget": 10},
            "adaptive": {"budget": 24, "fit": fit_bt_arrays, "batch_size": 6},
            "insert-binary": {"leaderboard": board, "new_model": models[-1]},
            "insert-anchor": {"ratings": {m: 1400.0 - 60 * i for i, m in enumerate(board)},
                              "new_model": models[-1], "anchor": board[1]}}.get(name, {})


def decisive(n_models: int, n_prompts: int, seed: int):
    """A simulated judge that always picks a side (a tie repeats insert-binary's probe past its declared cost)."""
    return sim(np.linspace(1300, 1000, n_models), n_prompts, 0.9, seed, remainder="coin")


def example_run(name: str, seed: int = 0, n_models: int = 5, n_prompts: int = 6):
    """(design, models, prompts, run) of design ``name`` on a decisive simulated judge, seeded."""
    models, prompts = names(n_models), names(n_prompts, "x")
    design = make_design(name, **built_in_options(name, models))
    return design, models, prompts, design.run(models, prompts, decisive(n_models, n_prompts, seed),
                                               np.random.default_rng(seed))


@pytest.mark.parametrize("name", DESIGNS.names())
def test_every_design_runs_to_canonical_judgments_within_its_declared_cost(name):
    design, models, prompts, run = example_run(name)
    assert 0 < run.n_calls <= design.n_calls(len(models), len(prompts))
    assert np.all(run.pairs.a != run.pairs.b) and set(run.pairs.models) <= set(models)
    assert run.pairs.prompt.max() < len(prompts) and max(run.pairs.a.max(), run.pairs.b.max()) < len(models)
    frame = run.to_judgments("sim")
    assert list(frame.columns) == ["prompt_id", "model_a", "model_b", "judge", "outcome"]
    assert len(frame) == run.n_calls and frame.outcome.between(0, 1).all()
    again = example_run(name)[3]
    assert again.pairs.records() == run.pairs.records() and np.array_equal(again.outcome, run.outcome)


@pytest.mark.parametrize("name", [n for n in DESIGNS.names() if is_single_shot(n)])
def test_a_single_shot_design_lists_up_front_what_it_runs_at_its_exact_cost(name):
    from judgewise.designs import design_triples
    design, models, prompts, run = example_run(name, seed=3)
    listed = design.pairs(models, prompts, np.random.default_rng(3))
    assert len(listed) == design.n_calls(len(models), len(prompts)) == run.n_calls
    assert listed.records() == run.pairs.records()  # run judges exactly the listed comparisons
    assert design_triples(name, models, prompts, seed=3, **built_in_options(name, models)) == listed.records()


@pytest.mark.parametrize("name", [n for n in DESIGNS.names() if not is_single_shot(n)])
def test_a_multi_round_design_runs_as_its_rounds_and_lists_nothing_up_front(name):
    from judgewise.designs import design_triples
    from judgewise.designs.base import drive
    design, models, prompts, run = example_run(name, seed=4)
    driven = drive(design.steps(models, prompts, np.random.default_rng(4)), decisive(len(models), len(prompts), 4))
    assert driven.pairs.records() == run.pairs.records() and np.array_equal(driven.outcome, run.outcome)
    with pytest.raises(ConfigError, match="multi-round"):
        design_triples(name, models, prompts, **built_in_options(name, models))


@pytest.mark.parametrize("name", DESIGNS.names())
def test_every_design_runs_in_the_simulator(name):
    from judgewise.analysis.simulation import TrialSpec, run_trial
    models = names(5)
    spec = TrialSpec(np.linspace(1400, 1000, 5), 8, 0.9, name, built_in_options(name, models))
    row = run_trial(spec, np.random.default_rng(5))
    assert row["calls"] > 0 and len(row["scores"]) == 5 and -1 <= row["kendall"] <= 1


def test_the_anchor_design_takes_one_anchor_or_several_with_the_anchor_as_model_b():
    models, prompts = names(4), names(2, "x")
    one = make_design("anchor", anchor="m2").pairs(models, prompts).records()
    assert one == [(p, m, "m2") for p in prompts for m in models if m != "m2"]  # what a run config's anchor: gives
    assert make_design("anchor", anchors=["m2"]).pairs(models, prompts).records() == one
    both = make_design("anchor", anchor="m1", anchors=["m3", "m1"])
    assert both.anchors == ["m1", "m3"] and len(both.pairs(models, prompts)) == 2 * 5
    with pytest.raises(ConfigError, match="needs an anchor model"):
        make_design("anchor")


def test_registering_a_design_is_explicit_and_a_taken_name_needs_replace():
    from judgewise.designs import register_design
    from judgewise.designs.static import QuadraticDesign
    with pytest.raises(ConfigError, match="already registered"):
        register_design("quadratic", QuadraticDesign)
    register_design("my-quadratic", QuadraticDesign)
    try:
        assert "my-quadratic" in DESIGNS and len(make_design("my-quadratic").pairs(names(3), ["x"])) == 3
    finally:
        DESIGNS.unregister("my-quadratic")
