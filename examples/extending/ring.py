"""The ring design: every model against the next one round a ring, on every prompt (a toy design, docs/extending.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgewise.designs.base import DesignRun, Pairs, VerdictFn, call_verdicts, check_pool


@dataclass
class RingDesign:
    """Model i against model i + 1, the last against the first, on every prompt: n calls a prompt (one for two
    models). Single-shot: it lists its comparisons up front (``pairs``), so a run judges them in one go."""

    name = "ring"

    def n_calls(self, n_models: int, n_prompts: int) -> int:
        return n_prompts * (n_models if n_models > 2 else 1)

    def pairs(self, models, prompt_ids, rng: np.random.Generator | None = None) -> Pairs:
        check_pool(models, prompt_ids)
        a = np.arange(len(models) if len(models) > 2 else 1)
        b = (a + 1) % len(models)
        n = len(prompt_ids)
        return Pairs(list(prompt_ids), list(models), np.repeat(np.arange(n), len(a)), np.tile(a, n), np.tile(b, n))

    def run(self, models, prompt_ids, verdicts: VerdictFn, rng: np.random.Generator) -> DesignRun:
        pairs = self.pairs(models, prompt_ids, rng)
        return DesignRun(self.name, pairs, call_verdicts(verdicts, pairs.prompt, pairs.a, pairs.b))
