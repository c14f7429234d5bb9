"""Judgments every registered rating method can rate, for the tests generated from ``RATING_METHODS``."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit


def anchored_battles(rng: np.random.Generator, n: int = 300, k: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(judgments, responses): ``n`` BT battles of models m1..m{k-1} against the anchor m0, one prompt each, the
    anchor shown first half the time, and every model's answer text on every prompt. An anchor in every row (win
    rates) and the answers' lengths (the length-controlled win rate) are all a built-in method asks of its input."""
    skill = np.linspace(-1, 1, k)
    other = rng.integers(1, k, n)
    first = rng.random(n) < 0.5
    a, b = np.where(first, 0, other), np.where(first, other, 0)
    outcome = (rng.random(n) < expit(skill[a] - skill[b])).astype(float)
    prompts = [f"p{i}" for i in range(n)]
    judgments = pd.DataFrame({"prompt_id": prompts, "model_a": [f"m{i}" for i in a],
                              "model_b": [f"m{i}" for i in b], "judge": "j", "outcome": outcome})
    lengths = rng.integers(10, 400, (n, k))
    responses = pd.DataFrame({"prompt_id": np.repeat(prompts, k), "model": [f"m{i}" for i in range(k)] * n,
                              "text": ["x" * int(m) for m in lengths.ravel()]})
    return judgments, responses
