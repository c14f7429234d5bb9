"""Run any design through the judging engine: a verdict callback backed by ``judges.runner.run_judging``.

Each batch a design asks for becomes ``Comparison`` objects (texts from a responses table), is judged by the
engine (durable store, retries, limits, both answer orders by default) and comes back as model_a's mean
outcome per comparison; a comparison whose games all failed is NaN (tournaments treat it like a tie).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from judgewise.designs.base import VerdictFn
from judgewise.errors import InputError
from judgewise.judges.base import Comparison, Judge
from judgewise.judges.runner import run_judging


def response_lookup(responses: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(prompt_id, model) → response text from a canonical responses table (``io.tables``)."""
    missing = [c for c in ("prompt_id", "model", "text") if c not in responses.columns]
    if missing:
        raise InputError(f"responses table lacks column(s) {missing}", field=missing[0])
    keys = zip(responses["prompt_id"].astype(str), responses["model"].astype(str))
    return dict(zip(keys, responses["text"].astype(str)))


def engine_verdicts(judge: Judge, store, responses: pd.DataFrame, models: Sequence[str],
                    prompt_ids: Sequence[str], prompts: Mapping[str, str] | None = None, **run_options) -> VerdictFn:
    """A design verdict callback that judges each batch with :func:`run_judging` (``run_options`` are its
    keywords: orders, seed, concurrency, limits, budget, ...). ``prompts`` maps prompt_id → prompt text
    (default: the responses' ``instruction`` column when present, else the prompt id)."""
    texts = response_lookup(responses)
    if prompts is None and "instruction" in responses.columns:
        prompts = dict(zip(responses["prompt_id"].astype(str), responses["instruction"].astype(str)))
    prompts = prompts or {}

    def text(prompt_id: str, model: str) -> str:
        try:
            return texts[(prompt_id, model)]
        except KeyError:
            raise InputError(f"no response of model {model!r} to prompt {prompt_id!r} in the responses table",
                             field="text") from None

    def verdicts(prompt, a, b) -> np.ndarray:
        rows = [(str(prompt_ids[p]), str(models[i]), str(models[j])) for p, i, j in zip(prompt, a, b)]
        comparisons = [Comparison(p, prompts.get(p, p), ma, mb, text(p, ma), text(p, mb)) for p, ma, mb in rows]
        result = run_judging(comparisons, judge, store, **run_options)
        by = result.by_comparison().set_index(["prompt_id", "model_a", "model_b"])["outcome"]
        by = by[~by.index.duplicated()]
        return np.array([by.get(r, np.nan) for r in rows], dtype=float)

    return verdicts
