"""Lining AlpacaEval's length-control inputs up with a judgments table: difficulty per prompt, weights per model.

A difficulty table keyed by **position** (AlpacaEval's ``instruction_difficulty.csv`` / ``df_gamed.csv``: the
instruction's place in the 805-instruction evaluation set) is mapped to prompts through the anchor's responses in
their order (its ``model_outputs.json``, which AlpacaEval writes in evaluation-set order); the anchor must have
exactly as many responses as the table has positions. Choice stated: AlpacaEval itself looks the difficulty up by
the row's position in *each model's* annotations, so for a model missing some instructions (5 of the 28 models in
the shared AlpacaEval data) its rows after the gap get their neighbours' difficulty; judgewise looks it up by
instruction, for every model. A table keyed by ``instruction`` text or ``prompt_id`` is matched directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io.alpacaeval import prompt_id_of
from judgewise.io.alpacaeval_lc import LcDifficulty, read_lc_difficulty, read_lc_weights


@dataclass
class AlignedDifficulty:
    """``by_prompt[p]``: difficulty of prompt id p (NaN when the table lacks it); ``values``: every entry of the
    table (what a prediction from weights averages over); ``gamed``: (length feature, difficulty, preference) of
    the anchor's gamed variants in judgewise's sign, or None."""

    by_prompt: np.ndarray
    values: np.ndarray
    gamed: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    source: str


def _anchor_order(responses: pd.DataFrame | None, anchor: str, n: int, source: str) -> list[str]:
    """Prompt ids of the anchor's responses in their order: position i → the i-th (positions need all n)."""
    if responses is None:
        raise ConfigError("a difficulty table keyed by position needs the responses (the anchor's outputs give "
                          "the order of AlpacaEval's instructions)")
    ids = responses.loc[responses["model"].astype(str) == anchor, "prompt_id"].astype(str).tolist()
    if len(ids) != n:
        raise InputError(f"the table gives the difficulty of {n} instructions by position, but the anchor "
                         f'"{anchor}" has {len(ids)} responses (positions follow the anchor\'s outputs in file '
                         "order, so both must cover the same evaluation set)", file=source)
    return ids


def _prompt_ids(table: LcDifficulty, responses: pd.DataFrame | None, anchor: str, prompts: set) -> list[str]:
    """The prompt id of each table entry."""
    if table.key == "prompt_id":
        return [str(k) for k in table.keys]
    if table.key == "instruction":
        by_text = {}
        if responses is not None and "instruction" in responses.columns:
            by_text = dict(zip(responses["instruction"].astype(str), responses["prompt_id"].astype(str)))
        return [by_text.get(k, k if k in prompts else prompt_id_of(str(k))) for k in table.keys]
    keys = np.asarray(table.keys)
    if keys.min() < 0 or len(np.unique(keys)) != len(keys) or keys.max() >= len(keys):
        raise InputError(f"positions must be 0 … {len(keys) - 1}, each once; found {keys.min()} … {keys.max()}",
                         file=table.source, field="index")
    order = _anchor_order(responses, anchor, len(keys), table.source)
    return [order[k] for k in keys]


def align_difficulty(difficulty, responses: pd.DataFrame | None, anchor: str, prompts: list[str]) -> AlignedDifficulty:
    """Read (a path) or take (an :class:`LcDifficulty`) the difficulty table and map it onto ``prompts``."""
    table = difficulty if isinstance(difficulty, LcDifficulty) else read_lc_difficulty(Path(difficulty))
    ids = _prompt_ids(table, responses, anchor, set(prompts))
    by_id = dict(zip(ids, table.values))
    by_prompt = np.array([by_id.get(p, np.nan) for p in prompts], dtype=float)
    gamed = None
    if table.gamed is not None:
        g = table.gamed
        gamed = (np.tanh(-g["std_delta_len"].to_numpy(float)), g["difficulty"].to_numpy(float),
                 g["preference"].to_numpy(float))  # AlpacaEval's gap is anchor − variant: flip to ours
    return AlignedDifficulty(by_prompt, np.asarray(table.values, dtype=float), gamed, table.source)


def model_weights(weights, anchor: str) -> pd.DataFrame:
    """GLM weights relative to the anchor (its row subtracted, as AlpacaEval's ``predict_winrate`` does), in
    judgewise's length sign (``length`` = −AlpacaEval's ``np.tanh(std_delta_len)`` weight). ``weights``: a path
    (file or directory, :func:`judgewise.io.alpacaeval_lc.read_lc_weights`) or a DataFrame already read."""
    frame = weights if isinstance(weights, pd.DataFrame) else read_lc_weights(weights, anchor)
    source = frame.attrs.get("source", "a DataFrame")
    missing = [c for c in ("length", "difficulty", "intercept") if c not in frame.columns]
    if missing:
        raise ConfigError(f"GLM weights need the columns length, difficulty, intercept; missing {missing}")
    frame = frame[["length", "difficulty", "intercept"]].astype(float)
    if anchor in frame.index:
        frame = frame - frame.loc[anchor]
    frame = frame.assign(length=-frame["length"])
    frame.attrs["source"] = source
    return frame
