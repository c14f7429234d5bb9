"""Arena-lite tournament design (Alg. 1): a single-elimination bracket per prompt with a fresh shuffled seeding.

The bracket is Alg. 1's ``SingleElim``: split the seeded list at ⌊n/2⌋, play out each half, then the two
winners meet. A half of one model is a bye (Alg. 1 leaves |M| = 1 undefined; a bye is the only reading
that keeps every model in the bracket). Every match eliminates one model, so each prompt costs exactly
n − 1 calls, and every model plays at least once per prompt.

The bracket *shape* depends only on n, so all prompts are played together: matches are grouped by their
height in the bracket and each height is one batch for the verdict callback (⌈log2 n⌉ batches in all).

**Ties.** Alg. 1's ``Match`` returns m₁ only if it ``IsBetter``, else m₂; a tie is neither. The paper
allows resolving it either way since seeding is a fresh shuffle per prompt. ``tie_break="coin"`` (default)
advances a uniformly random one of the two (seeded), which is Alg. 1's "else m₂" in distribution but not
tied to the left/right slot; ``tie_break="second"`` is Alg. 1 literally (model_b advances). Either way the
tie is recorded as outcome 0.5, so ratings see a tie, not a win.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgewise.designs.base import DesignRun, Pairs, Round, Steps, VerdictFn, check_pool, drive
from judgewise.errors import ConfigError

TIE_BREAKS = ("coin", "second")


def bracket(n: int) -> list[tuple[int, int, int]]:
    """Alg. 1's bracket for n seeded slots as matches ``(left, right, height)``.

    A child ``>= 0`` is an earlier match's index, ``< 0`` is seeded slot ``-child - 1``. Matches are listed
    children-first; ``height`` is 1 + the taller child's height (slots have height 0).
    """
    matches: list[tuple[int, int, int]] = []

    def build(lo: int, hi: int) -> tuple[int, int]:
        if hi - lo == 1:
            return -lo - 1, 0  # a slot: bye at this level
        mid = lo + (hi - lo) // 2
        left, hl = build(lo, mid)
        right, hr = build(mid, hi)
        matches.append((left, right, 1 + max(hl, hr)))
        return len(matches) - 1, matches[-1][2]

    if n >= 2:
        build(0, n)
    return matches


@dataclass
class TournamentDesign:
    """Arena-lite Alg. 1: one single-elimination tournament per prompt, (n − 1)·|X| judge calls."""

    tie_break: str = "coin"
    name = "tournament"

    def __post_init__(self) -> None:
        if self.tie_break not in TIE_BREAKS:
            raise ConfigError(f"tie_break must be one of {TIE_BREAKS}, got {self.tie_break!r}")

    def n_calls(self, n_models: int, n_prompts: int) -> int:
        return (n_models - 1) * n_prompts

    def run(self, models, prompt_ids, verdicts: VerdictFn, rng: np.random.Generator) -> DesignRun:
        return drive(self.steps(models, prompt_ids, rng), verdicts)

    def steps(self, models, prompt_ids, rng: np.random.Generator) -> Steps:
        """One round per bracket level (all prompts at once)."""
        check_pool(models, prompt_ids)
        n, n_prompts = len(models), len(prompt_ids)
        matches = bracket(n)
        seeding = rng.permuted(np.tile(np.arange(n), (n_prompts, 1)), axis=1)  # fresh shuffle per prompt
        winner = np.empty((n_prompts, len(matches)), dtype=int)
        prompt_col = np.arange(n_prompts)
        pairs, outcomes = Pairs.empty(prompt_ids, models), []

        def entrant(child: int) -> np.ndarray:
            return seeding[:, -child - 1] if child < 0 else winner[:, child]

        heights = np.array([h for _, _, h in matches])
        for height in range(1, int(heights.max(initial=0)) + 1):
            level = np.nonzero(heights == height)[0]
            a = np.concatenate([entrant(matches[m][0]) for m in level])
            b = np.concatenate([entrant(matches[m][1]) for m in level])
            prompt = np.tile(prompt_col, len(level))
            outcome = (yield Round(prompt, a, b)).outcome
            winner[:, level] = self._advance(a, b, outcome, rng).reshape(len(level), n_prompts).T
            pairs = pairs.extend(prompt, a, b)
            outcomes.append(outcome)
        outcome = np.concatenate(outcomes) if outcomes else np.zeros(0)
        champions = winner[:, len(matches) - 1] if matches else np.zeros(n_prompts, dtype=int)
        return DesignRun(self.name, pairs, outcome, {"champion_counts": np.bincount(champions, minlength=n)})

    def _advance(self, a, b, outcome, rng) -> np.ndarray:
        """Winners of a batch of matches; a failed call (NaN) is treated like a tie."""
        tied = ~((outcome > 0.5) | (outcome < 0.5))
        a_wins = outcome > 0.5
        if self.tie_break == "coin":
            a_wins = np.where(tied, rng.random(len(a)) < 0.5, a_wins)
        return np.where(a_wins, a, b)
