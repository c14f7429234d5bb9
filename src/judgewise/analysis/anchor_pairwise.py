"""Pairwise verdicts derived from anchor-based verdicts (Anchor §4.3): i beats j on a prompt when it did better
against the shared anchor.

Anchor §4.3 calls a sample informative for models a and b when their verdicts against the anchor differ,
v_{i,a} ≠ v_{i,b}; under the transitivity assumption (Anchor §1–2) the model with the higher verdict is the better
one on that prompt. :func:`derived_pairwise` turns that logic into a pairwise judge: for models i, j on prompt p,
i beats j (outcome 1) when v_{p,i} > v_{p,j}, loses (0) when lower, and ties (0.5) when equal — so the
uninformative samples of §4.3 are exactly the derived ties. With AlpacaEval's continuous preferences (GPT-4-turbo
logprobs) the verdicts are the preferences themselves, so a derived tie needs exactly equal preferences.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgewise.analysis.anchor_selection import verdict_matrix
from judgewise.errors import ConfigError


def derived_pairwise(judgments: pd.DataFrame, anchor: str, models=None, judge: str | None = None) -> pd.DataFrame:
    """Canonical judgments rows (prompt_id, model_a, model_b, judge, outcome) of the pairwise judge derived from
    the verdicts against ``anchor`` (module docstring): one row per prompt and unordered pair of ``models``
    (default: every model judged against the anchor, sorted), model_a before model_b in that order; a pair is left
    out on a prompt where either verdict is missing. Several verdicts of one (prompt, model) are averaged first
    (:func:`~judgewise.analysis.anchor_selection.verdict_matrix`). ``judge`` names the derived judge (default:
    the recorded judge's name + ``" via <anchor>"``)."""
    verdicts, prompt_ids, found = verdict_matrix(judgments, anchor)
    chosen = list(found if models is None else models)
    unknown = sorted(set(chosen) - set(found))
    if unknown:
        raise ConfigError(f"models {unknown[:5]} have no verdicts against the anchor {anchor!r}; "
                          f"judged models: {found[:10]}")
    column = {m: k for k, m in enumerate(found)}
    v = verdicts[:, [column[m] for m in chosen]]
    lo, hi = np.triu_indices(len(chosen), k=1)
    left, right = v[:, lo], v[:, hi]  # (prompts × pairs)
    present = np.isfinite(left) & np.isfinite(right)
    outcome = 0.5 + 0.5 * np.sign(left - right)
    prompt, pair = np.nonzero(present)
    names = np.asarray(chosen, dtype=object)
    if judge is None:
        recorded = sorted(judgments["judge"].astype(str).unique()) if "judge" in judgments.columns else []
        judge = f"{'+'.join(recorded) or 'judge'} via {anchor}"
    return pd.DataFrame({"prompt_id": np.asarray(prompt_ids, dtype=object)[prompt], "model_a": names[lo[pair]],
                         "model_b": names[hi[pair]], "judge": judge, "outcome": outcome[prompt, pair]})
