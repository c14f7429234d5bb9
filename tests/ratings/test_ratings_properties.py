"""Invariants of the ratings (hypothesis): relabelling, side swapping, recovery of known strengths, CI coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import expit

from judgewise.ratings import rank
from judgewise.ratings.bradley_terry import ELO_SCALE


@st.composite
def battle_tables(draw, min_models=3, max_models=6):
    """Random judgments among k models, plus a cycle of ties so every BT MLE exists (strongly connected)."""
    k = draw(st.integers(min_models, max_models))
    n = draw(st.integers(1, 40))
    a = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    shift = draw(st.lists(st.integers(1, k - 1), min_size=n, max_size=n))
    outcome = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=n, max_size=n))
    a = a + list(range(k))
    b = [(x + s) % k for x, s in zip(a, shift)] + [(i + 1) % k for i in range(k)]
    outcome = outcome + [0.5] * k
    names = [f"m{i}" for i in range(k)]
    return pd.DataFrame({"prompt_id": [f"p{i % 7}" for i in range(len(a))], "model_a": [names[i] for i in a],
                         "model_b": [names[i] for i in b], "judge": "j", "outcome": outcome})


def scores_by_model(ranking, key="scores") -> pd.Series:
    values = ranking.scores if key == "scores" else ranking.extra[key]
    return pd.Series(values, index=ranking.models).sort_index()


PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(battle_tables(), st.randoms(use_true_random=False))
def test_bt_is_invariant_to_model_relabelling(table, random):
    names = sorted(set(table.model_a) | set(table.model_b))
    new = names[:]
    random.shuffle(new)
    rename = {old: f"x-{n}" for old, n in zip(names, new)}
    relabelled = table.assign(model_a=table.model_a.map(rename), model_b=table.model_b.map(rename))
    original = scores_by_model(rank(table, "bt"))
    again = scores_by_model(rank(relabelled, "bt"))
    np.testing.assert_allclose(again[[rename[m] for m in original.index]].to_numpy(), original.to_numpy(),
                               atol=1e-4)


@PROPERTY
@given(battle_tables(), st.lists(st.booleans(), min_size=50, max_size=50))
def test_bt_is_invariant_to_swapping_sides_with_flipped_outcome(table, flips):
    swap = np.resize(np.array(flips), len(table))
    swapped = table.copy()
    swapped.loc[swap, ["model_a", "model_b"]] = table.loc[swap, ["model_b", "model_a"]].to_numpy()
    swapped.loc[swap, "outcome"] = 1.0 - table.loc[swap, "outcome"]
    np.testing.assert_allclose(scores_by_model(rank(swapped, "bt")), scores_by_model(rank(table, "bt")), atol=1e-4)


@PROPERTY
@given(battle_tables(min_models=2, max_models=5), st.lists(st.booleans(), min_size=50, max_size=50))
def test_winrate_is_invariant_to_swapping_sides_and_relabelling(table, flips):
    anchor = "m0"
    table = table[(table.model_a == anchor) ^ (table.model_b == anchor)].reset_index(drop=True)
    if table.empty or len(set(table.model_a) | set(table.model_b)) < 2:
        return
    swap = np.resize(np.array(flips), len(table))
    swapped = table.copy()
    swapped.loc[swap, ["model_a", "model_b"]] = table.loc[swap, ["model_b", "model_a"]].to_numpy()
    swapped.loc[swap, "outcome"] = 1.0 - table.loc[swap, "outcome"]
    renamed = swapped.replace({"model_a": {"m1": "zz"}, "model_b": {"m1": "zz"}})
    base = scores_by_model(rank(table, "winrate", anchor=anchor))
    other = scores_by_model(rank(renamed, "winrate", anchor=anchor)).rename({"zz": "m1"}).sort_index()
    np.testing.assert_allclose(other.to_numpy(), base.to_numpy(), atol=1e-9)


def simulate(rng: np.random.Generator, strengths: np.ndarray, n_battles: int, tie: float = 0.05) -> pd.DataFrame:
    """Battles with P(a wins) = (1 − tie)·σ(s_a − s_b), ties with probability ``tie`` (BT with half-win ties)."""
    k = len(strengths)
    a = rng.integers(0, k, n_battles)
    b = (a + rng.integers(1, k, n_battles)) % k
    u = rng.random(n_battles)
    p = (1 - tie) * expit(strengths[a] - strengths[b])
    outcome = np.where(u < p, 1.0, np.where(u < p + tie, 0.5, 0.0))
    names = np.array([f"m{i}" for i in range(k)])
    return pd.DataFrame({"prompt_id": np.arange(n_battles).astype(str), "model_a": names[a], "model_b": names[b],
                         "judge": "sim", "outcome": outcome})


def test_bt_recovers_known_strengths_from_simulated_data():
    rng = np.random.default_rng(7)
    strengths = np.linspace(-1.5, 1.5, 8)
    ranking = rank(simulate(rng, strengths, 200_000, tie=0.0), "bt", scale="natural")
    got = scores_by_model(ranking).to_numpy()
    np.testing.assert_allclose(got, strengths - strengths.mean(), atol=0.03)
    elo = scores_by_model(ranking, "elo").to_numpy()
    np.testing.assert_allclose(elo, ELO_SCALE * (strengths - strengths.mean()) + 1000.0, atol=0.03 * ELO_SCALE)


def population_elo(strengths: np.ndarray, tie: float = 0.05) -> np.ndarray:
    """The BT estimand of :func:`simulate`'s design: the fit to every ordered pair with its expected outcome.

    With ties counted as half wins the expected outcome is (1 − tie)·σ(d) + tie/2, not σ(d), so the BT target is
    slightly flatter than the generating strengths; coverage is judged against this target.
    """
    k = len(strengths)
    a, b = np.array([(i, j) for i in range(k) for j in range(k) if i != j]).T
    expected = (1 - tie) * expit(strengths[a] - strengths[b]) + tie / 2
    table = pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{j}" for j in b], "judge": "sim",
                          "prompt_id": "all", "outcome": expected})
    return scores_by_model(rank(table, "bt")).loc[[f"m{i}" for i in range(k)]].to_numpy()


@pytest.mark.slow
def test_bt_bootstrap_interval_covers_simulated_truth_95_percent():
    """≥ 200 simulated datasets × 6 models: the 95% percentile interval holds the true Elo 95% ± 3 points."""
    rng = np.random.default_rng(2024)
    hits = []
    for dataset in range(200):
        strengths = rng.normal(size=6)
        truth = population_elo(strengths)
        ranking = rank(simulate(rng, strengths, 3000), "bt", bootstrap=300, bootstrap_unit="battle",
                       seed=dataset)
        order = np.argsort([int(m[1:]) for m in ranking.models])
        hits.append((ranking.ci_low[order] <= truth) & (truth <= ranking.ci_high[order]))
    coverage = np.mean(hits)
    assert 0.92 <= coverage <= 0.98, coverage
