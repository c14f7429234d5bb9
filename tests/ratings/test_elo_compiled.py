"""The compiled Elo pass equals the plain sequential definition, one replicate or a batch of them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgewise.ratings.bootstrap import row_multiplicities
from judgewise.ratings.elo import online_elo, online_elo_reference, online_elo_replicates
from judgewise.ratings.encode import encode
from judgewise.ratings.method import RatingData


def _battles(rng: np.random.Generator, n_rows: int = 400, n_models: int = 7):
    a = rng.integers(0, n_models, n_rows)
    b = (a + rng.integers(1, n_models, n_rows)) % n_models
    outcome = rng.choice([0.0, 0.5, 1.0, 0.3], n_rows)
    weight = rng.choice([1.0, 3.0, 0.5], n_rows)
    return a, b, outcome, weight, n_models


def test_compiled_elo_equals_the_sequential_definition():
    a, b, outcome, weight, n = _battles(np.random.default_rng(1))
    compiled = online_elo(a, b, outcome, weight, n, k=32.0, initial=1200.0)
    reference = online_elo_reference(a, b, outcome, weight, n, k=32.0, initial=1200.0)
    np.testing.assert_array_equal(compiled, reference)


def test_each_batched_replicate_equals_the_definition_on_its_repeated_rows():
    rng = np.random.default_rng(2)
    a, b, outcome, weight, n = _battles(rng)
    multiplicity = rng.poisson(1.0, size=(5, len(a)))
    batch = online_elo_replicates(a, b, outcome, weight, n, multiplicity)
    for r in range(5):
        rows = np.repeat(np.arange(len(a)), multiplicity[r])
        np.testing.assert_array_equal(batch[r], online_elo_reference(a[rows], b[rows], outcome[rows],
                                                                     weight[rows], n))


def test_batched_prompt_multiplicities_resample_whole_prompts():
    frame = pd.DataFrame({"prompt_id": [f"p{i // 3}" for i in range(30)], "model_a": ["x", "y", "z"] * 10,
                          "model_b": ["y", "z", "x"] * 10, "judge": "j", "outcome": [1.0, 0.0, 0.5] * 10})
    data = RatingData(encode(frame), frame)
    mult = row_multiplicities(data, "prompt", np.random.default_rng(0), rounds=50)
    assert mult.shape == (50, 30)
    assert (mult.reshape(50, 10, 3) == mult.reshape(50, 10, 3)[:, :, :1]).all()  # a prompt's rows move together
    assert (mult.reshape(50, 10, 3)[:, :, 0].sum(axis=1) == 10).all()  # 10 prompts drawn per replicate


def test_prompt_units_give_the_same_replicates_as_expanded_row_multiplicities():
    rng = np.random.default_rng(3)
    a, b, outcome, weight, n = _battles(rng, n_rows=60)
    row_unit = np.arange(60) // 4  # 15 prompts of 4 rows
    unit_mult = rng.poisson(1.0, size=(6, 15))
    by_unit = online_elo_replicates(a, b, outcome, weight, n, unit_mult, row_unit=row_unit)
    by_row = online_elo_replicates(a, b, outcome, weight, n, unit_mult[:, row_unit])
    np.testing.assert_array_equal(by_unit, by_row)
