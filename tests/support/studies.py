"""A synthetic population of judges and a human for the study tests, with errors aligned on the items' rank."""

from __future__ import annotations

import numpy as np

from judgewise.analysis.study import ScorePool


def rank_aligned_population(seed: int = 0, n: int = 300, n_judges: int = 8) -> ScorePool:
    """Judges and the human see the same latent quality plus noise whose size is a per-item difficulty shared by
    every rater: subsets rich in hard items have low inter-model *and* human-model agreement (rank-aligned errors,
    Paper App. C)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    difficulty = np.exp(rng.normal(scale=1.0, size=n))
    judges = z + 0.7 * difficulty * rng.normal(size=(n_judges, n))
    human = z + 0.7 * difficulty * rng.normal(size=n)
    return ScorePool(item_ids=np.array([f"item{i}" for i in range(n)]),
                     judges=tuple(f"judge{j}" for j in range(n_judges)), scores=judges, human=human)
