"""Inserting a new model into an existing leaderboard (Arena-lite §5.3, App. A.6): binary search (Alg. 2) and
scoring against an anchor with the leaderboard converted back to win rates (A.6.2)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from judgewise.designs.base import DesignRun, Pairs, Round, Steps, VerdictFn, drive
from judgewise.errors import ConfigError

ELO_SCALE = 400.0


def _pool(leaderboard: Sequence[str], new_model: str, models: Sequence[str] | None) -> list[str]:
    pool = list(leaderboard) + [new_model]
    if len(set(pool)) != len(pool):
        raise ConfigError(f"new model {new_model!r} is already on the leaderboard or names repeat")
    if models is not None and set(models) != set(pool):
        raise ConfigError("models must be the leaderboard plus the new model")
    return pool


def _run_ids(pool: Sequence[str], models: Sequence[str] | None) -> tuple[list[str], np.ndarray]:
    """The run's model list (``models`` in the caller's order, whatever it is) and, for each pool entry
    (leaderboard best first, then the new model), its index in that list: the verdict callback and the returned
    pairs index the caller's ``models``, never the leaderboard order."""
    names = list(models) if models is not None else list(pool)
    where = {m: i for i, m in enumerate(names)}
    return names, np.array([where[m] for m in pool], dtype=int)


@dataclass
class BinarySearchInsertion:
    """Arena-lite Alg. 2: binary search over the leaderboard (best first) with ⌊|X| / ⌊log2 |L|⌋⌋ matches per
    probe on prompts popped from Shuffle(X) ++ Shuffle(X). More than half the matches won moves the new model up,
    fewer moves it down; exactly half repeats the probe on fresh prompts (Alg. 2 "ensure tie") until prompts run
    out, when it is placed at the probe as a tie. Prompts running out before a fresh probe (not a repeated tied one)
    place it at the bracket's lower bound, not as a tie (``prompts_exhausted`` says so). Judge ties count half a win (the BT convention); Alg. 2's
    binary ``Match`` would count them as losses."""

    leaderboard: Sequence[str] = ()
    new_model: str = ""
    name = "insert-binary"

    def _sizes(self, n_prompts: int) -> tuple[int, int]:
        size = len(self.leaderboard)
        if size < 2:
            raise ConfigError("binary-search insertion needs a leaderboard of at least 2 models")
        n_comparisons = int(math.floor(math.log2(size)))
        n_matches = n_prompts // n_comparisons
        if n_matches < 1:
            raise ConfigError(f"Alg. 2 assumes |X| > |L|: {n_prompts} prompts cannot cover {n_comparisons} probes")
        return n_comparisons, n_matches

    def n_calls(self, n_models: int, n_prompts: int) -> int:
        """Upper bound without ties: ⌊log2 |L|⌋ + 1 probes of ⌊|X| / ⌊log2 |L|⌋⌋ matches (≤ 2|X| prompts)."""
        n_comparisons, n_matches = self._sizes(n_prompts)
        return min((n_comparisons + 1) * n_matches, 2 * n_prompts)

    def run(self, models, prompt_ids, verdicts: VerdictFn, rng: np.random.Generator) -> DesignRun:
        return drive(self.steps(models, prompt_ids, rng), verdicts)

    def steps(self, models, prompt_ids, rng: np.random.Generator) -> Steps:
        """One round per probe."""
        names, ids = _run_ids(_pool(self.leaderboard, self.new_model, models), models)
        _, n_matches = self._sizes(len(prompt_ids))
        order = rng.permutation(len(prompt_ids))
        queue, used = np.concatenate([order, order]), 0
        new = ids[-1]
        pairs, outcomes, probes = Pairs.empty(prompt_ids, names), [], []
        low, high, tie, repeating, exhausted = 0, len(self.leaderboard) - 1, False, False, False
        while low <= high:
            mid = (low + high) // 2
            if used + n_matches > len(queue):  # out of prompts: a tie only if this probe was tied (Alg. 2)
                tie, exhausted = repeating, True
                break
            prompt = queue[used:used + n_matches]
            used += n_matches
            a, b = np.full(n_matches, new), np.full(n_matches, ids[mid])
            out = (yield Round(prompt, a, b)).outcome
            pairs, wins = pairs.extend(prompt, a, b), float(np.nansum(out))
            outcomes.append(out)
            probes.append({"against": self.leaderboard[mid], "wins": wins, "matches": n_matches})
            repeating = wins == n_matches / 2
            if wins > n_matches / 2:
                high = mid - 1
            elif wins < n_matches / 2:
                low = mid + 1
        position = mid if tie else low
        return DesignRun(self.name, pairs, np.concatenate(outcomes) if outcomes else np.zeros(0),
                         {"position": int(position), "rank": int(position) + 1, "tie": tie, "probes": probes,
                          "new_model": self.new_model, "n_probes": len(probes), "prompts_exhausted": exhausted})


@dataclass
class AnchorInsertion:
    """Arena-lite A.6.2: judge the new model against one anchor on every prompt (|X| calls) and place it among
    the leaderboard models by their win rates against the same anchor, converted from the leaderboard's
    Elo/BT ratings: P(i > a) = 1 / (1 + 10^((R_a − R_i)/400)). Default anchor: the top model (Table 4's
    "comp. to 1st"); a mid-table anchor is more informative (Anchor §4.3)."""

    ratings: Mapping[str, float] | None = None
    new_model: str = ""
    anchor: str | None = None
    name = "insert-anchor"

    def _anchor(self) -> str:
        if not self.ratings:
            raise ConfigError("anchor insertion needs the leaderboard's ratings (model → Elo)")
        anchor = self.anchor or max(self.ratings, key=self.ratings.get)
        if anchor not in self.ratings:
            raise ConfigError(f"anchor {anchor!r} is not on the leaderboard")
        return anchor

    def n_calls(self, n_models: int, n_prompts: int) -> int:
        return n_prompts

    def run(self, models, prompt_ids, verdicts: VerdictFn, rng: np.random.Generator) -> DesignRun:
        return drive(self.steps(models, prompt_ids, rng), verdicts)

    def steps(self, models, prompt_ids, rng: np.random.Generator) -> Steps:
        """One round: the new model against the anchor on every prompt."""
        anchor = self._anchor()
        board = sorted(self.ratings, key=self.ratings.get, reverse=True)
        pool = _pool(board, self.new_model, models)
        names, ids = _run_ids(pool, models)
        n = len(prompt_ids)
        a, b = np.full(n, ids[-1]), np.full(n, ids[pool.index(anchor)])
        out = (yield Round(np.arange(n), a, b)).outcome
        win_rate = float(np.nanmean(out))
        elo = np.array([self.ratings[m] for m in board], dtype=float)
        expected = 1.0 / (1.0 + 10.0 ** ((self.ratings[anchor] - elo) / ELO_SCALE))
        position = int(np.sum(expected > win_rate))
        clipped = min(max(win_rate, 1e-3), 1 - 1e-3)
        return DesignRun(self.name, Pairs(list(prompt_ids), names, np.arange(n), a, b), out, {
            "position": position, "rank": position + 1, "anchor": anchor, "win_rate": win_rate,
            "new_model": self.new_model,
            "elo": float(self.ratings[anchor] + ELO_SCALE * math.log10(clipped / (1 - clipped)))})
