"""Run any design through the judging engine: a verdict callback backed by ``judges.engine_verdicts.EngineVerdicts``.

Each batch a design asks for becomes ``Comparison`` objects (texts from a responses table), is judged by the
engine (durable store, retries, limits, both answer orders by default) and comes back as model_a's mean
outcome per comparison; a comparison whose games all failed is NaN (tournaments treat it like a tie).
This is the Python-API form of what ``judgewise judge`` does for multi-round designs: one implementation,
:class:`~judgewise.judges.engine_verdicts.EngineVerdicts`, with a strict check that every asked-for response exists.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from judgewise.designs.base import VerdictFn
from judgewise.errors import InputError
from judgewise.io.schema import RESPONSES_REQUIRED, require_columns
from judgewise.judges.base import Judge
from judgewise.judges.pairs import Pool
from judgewise.judges.engine_verdicts import EngineVerdicts


def response_lookup(responses: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(prompt_id, model) → response text from a canonical responses table (``io.tables``)."""
    require_columns(responses, RESPONSES_REQUIRED, what="responses table")
    keys = zip(responses["prompt_id"].astype(str), responses["model"].astype(str))
    return dict(zip(keys, responses["text"].astype(str)))


def engine_verdicts(judge: Judge, store, responses: pd.DataFrame, models: Sequence[str],
                    prompt_ids: Sequence[str], prompts: Mapping[str, str] | None = None, **run_options) -> VerdictFn:
    """A design verdict callback that judges each batch with :func:`run_judging` (``run_options`` are its
    keywords: orders, seed, concurrency, limits, budget, ...). ``prompts`` maps prompt_id → prompt text
    (default: the responses' ``instruction`` column when present, else the prompt id). Raises ``InputError``
    when a batch asks for a response the table does not have."""
    response_lookup(responses)  # checks the columns
    responses = responses.assign(prompt_id=responses["prompt_id"].astype(str), model=responses["model"].astype(str),
                                 text=responses["text"].astype(str))
    texts = {str(p): str(p) for p in prompt_ids}
    if prompts is None and "instruction" in responses.columns:
        prompts = dict(zip(responses["prompt_id"], responses["instruction"].astype(str)))
    texts.update(prompts or {})
    pool = Pool(responses, texts, [str(m) for m in models], [str(p) for p in prompt_ids])
    engine = EngineVerdicts(pool, judge, store, dict(run_options))

    def verdicts(prompt, a, b) -> np.ndarray:
        before = len(engine.skipped)
        out = engine(prompt, a, b)
        if len(engine.skipped) > before:
            raise InputError(f"responses table lacks a response the design asked for: {engine.skipped[before]}",
                             field="text")
        return out

    verdicts.engine = engine  # the rounds' results, judgments() and summary()
    return verdicts
