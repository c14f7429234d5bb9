"""Single-shot designs whose comparisons are all listed up front: anchor(s), all pairs (quadratic), sampled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from judgewise.designs.base import DesignRun, Pairs, VerdictFn, call_verdicts, check_pool
from judgewise.errors import ConfigError


class _StaticDesign:
    """Shared ``run``: list the pairs, ask the callback once."""

    name = "static"

    def pairs(self, models: Sequence[str], prompt_ids: Sequence[str], rng: np.random.Generator) -> Pairs:
        raise NotImplementedError

    def run(self, models, prompt_ids, verdicts: VerdictFn, rng: np.random.Generator) -> DesignRun:
        pairs = self.pairs(models, prompt_ids, rng)
        outcome = call_verdicts(verdicts, pairs.prompt, pairs.a, pairs.b)
        return DesignRun(self.name, pairs, outcome)


def _tile_over_prompts(prompt_ids, models, a, b) -> Pairs:
    """The same model pairs on every prompt, prompt-major."""
    n_prompts, a, b = len(prompt_ids), np.asarray(a, int), np.asarray(b, int)
    return Pairs(list(prompt_ids), list(models), np.repeat(np.arange(n_prompts), len(a)),
                 np.tile(a, n_prompts), np.tile(b, n_prompts))


@dataclass
class AnchorDesign(_StaticDesign):
    """Every model against one anchor or several (Anchor §2; App. E): on every prompt, each unordered pair with
    at least one anchor in it is judged once, with the anchor as ``model_b``. ``anchor`` names one anchor (what a
    run config's ``design: {name: anchor, anchor: <model>}`` gives), ``anchors`` several; both may be given. With
    every model an anchor this is the quadratic design. Anchors not among ``models`` are added to the pool."""

    anchor: str | None = None
    anchors: Sequence[str] = ()
    name = "anchor"

    def __post_init__(self) -> None:
        anchors = [self.anchors] if isinstance(self.anchors, str) else list(self.anchors)
        self.anchors = list(dict.fromkeys(([self.anchor] if self.anchor else []) + anchors))
        if not self.anchors:
            raise ConfigError("the anchor design needs an anchor model: design: {name: anchor, anchor: <model>} "
                              "(several: anchors: [<model>, ...])")

    def pool(self, models: Sequence[str]) -> list[str]:
        return list(models) + [m for m in self.anchors if m not in models]

    def model_pairs(self, models: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        pool = self.pool(models)
        index = {m: k for k, m in enumerate(pool)}
        anchor_ids = [index[m] for m in dict.fromkeys(self.anchors)]
        seen, a, b = set(), [], []
        for anc in anchor_ids:
            for other in range(len(pool)):
                key = frozenset((other, anc))
                if other != anc and key not in seen:
                    seen.add(key)
                    a.append(other)
                    b.append(anc)
        return np.array(a, dtype=int), np.array(b, dtype=int)

    def n_calls(self, n_models: int, n_prompts: int) -> int:
        k = len(set(self.anchors))
        n = max(n_models, k)
        return n_prompts * (k * (n - 1) - k * (k - 1) // 2)

    def pairs(self, models, prompt_ids, rng=None) -> Pairs:
        pool = self.pool(models)
        check_pool(pool, prompt_ids)
        return _tile_over_prompts(prompt_ids, pool, *self.model_pairs(models))


@dataclass
class AllPairsDesign(_StaticDesign):
    """All pairs of models on every prompt: C(n, 2)·|X| calls (Anchor §3.2, the 'gold'). A run config's default
    (``design: {name: all_pairs}``); ``quadratic``, the papers' name, is the same design."""

    name = "all_pairs"

    def n_calls(self, n_models: int, n_prompts: int) -> int:
        return n_prompts * n_models * (n_models - 1) // 2

    def pairs(self, models, prompt_ids, rng=None) -> Pairs:
        check_pool(models, prompt_ids)
        a, b = np.triu_indices(len(models), k=1)
        return _tile_over_prompts(prompt_ids, models, a, b)


QuadraticDesign = AllPairsDesign  # the papers' name for the all-pairs design


@dataclass
class SampledDesign(_StaticDesign):
    """Random (prompt, pair) comparisons under a call ``budget``, without repeats: uniform over pairs, or
    weighted by ``weights`` (per model: a pair's weight is the product; or an n×n matrix of pair weights)."""

    budget: int = 0
    weights: Sequence[float] | np.ndarray | None = None
    name = "sampled"

    def n_calls(self, n_models: int, n_prompts: int) -> int:
        return min(int(self.budget), n_prompts * n_models * (n_models - 1) // 2)

    def _pair_weights(self, n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.weights is None:
            return np.ones(len(a))
        w = np.asarray(self.weights, dtype=float)
        if w.shape == (n,):
            pw = w[a] * w[b]
        elif w.shape == (n, n):
            pw = w[a, b]
        else:
            raise ConfigError(f"weights must have shape ({n},) or ({n}, {n}), got {w.shape}")
        if np.any(pw < 0) or pw.sum() <= 0:
            raise ConfigError("weights must be non-negative with a positive total")
        return pw

    def pairs(self, models, prompt_ids, rng: np.random.Generator) -> Pairs:
        check_pool(models, prompt_ids)
        if self.budget < 1:
            raise ConfigError(f"the sampled design needs a budget of at least 1 call, got {self.budget}")
        a, b = np.triu_indices(len(models), k=1)
        w = np.tile(self._pair_weights(len(models), a, b), len(prompt_ids))
        size = min(int(self.budget), int(np.count_nonzero(w)))
        pick = np.sort(rng.choice(len(w), size=size, replace=False, p=w / w.sum()))
        prompt, pair = np.divmod(pick, len(a))
        flip = rng.random(size) < 0.5  # balance which model is model_a
        pa, pb = np.where(flip, b[pair], a[pair]), np.where(flip, a[pair], b[pair])
        return Pairs(list(prompt_ids), list(models), prompt, pa, pb)
