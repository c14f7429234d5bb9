"""Contextual features of a judgment for style-controlled Bradley–Terry: style differences and self-preference.

Style (CLB §3.2.1 "Bias correction", after Arena-Hard / Chatbot Arena style control): for each response count
its length (``n_tokens`` column of the responses table when present, else whitespace-separated words), markdown
headers (lines starting with 1–6 ``#``), list items (lines starting with ``-``, ``*``, ``+`` or ``1.``) and bold spans
(``**x**`` or ``__x__``), with fenced code blocks removed first. The feature of a judgment is the normalised
difference (a − b) / (a + b) (0 when both are 0), then each feature is z-scored over the rows used.

Self-preference (CLB §3.2.1; Wataoka et al. 2024): +1 when only model_a is from the judge's family, −1 when only
model_b is, 0 when neither or both are — antisymmetric, so swapping the sides of a judgment flips its sign, and
a same-family pair carries no self-preference signal. Family of a name:
``families[name]`` when the exact name is a key; else the value of the longest key that the name starts with
(case-insensitive), so ``{"gpt": "openai", "o1": "openai", "claude": "anthropic"}`` works as a prefix rule;
else the name's leading run of letters, lower-cased ("gpt-4o" → "gpt", "claude-3-haiku" → "claude").
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from judgewise.errors import InputError
from judgewise.io.schema import RESPONSES_REQUIRED, require_columns

STYLE_FEATURES = ("length", "headers", "lists", "bold")
_CODE = re.compile(r"```.*?```", re.DOTALL)
_HEADER = re.compile(r"^#{1,6}\s", re.MULTILINE)
_LIST = re.compile(r"^\s*(?:[-*+]|\d+\.)\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
_LEADING_LETTERS = re.compile(r"[A-Za-z]+")


def style_counts(text: str) -> tuple[int, int, int]:
    """(headers, list items, bold spans) of a markdown text, ignoring fenced code blocks."""
    prose = _CODE.sub("", text or "")
    return len(_HEADER.findall(prose)), len(_LIST.findall(prose)), len(_BOLD.findall(prose))


def response_style(responses: pd.DataFrame) -> pd.DataFrame:
    """Per (prompt_id, model): length, headers, lists, bold counts (module docstring)."""
    require_columns(responses, RESPONSES_REQUIRED, what="responses table")
    text = responses["text"].fillna("").astype(str)
    counts = np.array([style_counts(t) for t in text], dtype=float).reshape(-1, 3)
    if "n_tokens" in responses.columns:
        length = pd.to_numeric(responses["n_tokens"], errors="coerce").to_numpy(float)
    else:
        length = text.str.split().str.len().to_numpy(float)
    frame = pd.DataFrame(np.column_stack([length, counts]), columns=list(STYLE_FEATURES))
    frame.index = pd.MultiIndex.from_arrays([responses["prompt_id"].astype(str), responses["model"].astype(str)])
    return frame[~frame.index.duplicated(keep="first")]


def zscore(x: np.ndarray) -> np.ndarray:
    """Columns centred and scaled to unit standard deviation (constant columns become 0)."""
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def style_differences(judgments: pd.DataFrame, responses: pd.DataFrame) -> np.ndarray:
    """Rows × 4 z-scored normalised differences (a − b)/(a + b) of the style counts of the two responses."""
    style = response_style(responses)
    prompts = judgments["prompt_id"].astype(str)
    sides = []
    for column in ("model_a", "model_b"):
        keys = pd.MultiIndex.from_arrays([prompts, judgments[column].astype(str)])
        found = style.reindex(keys)
        absent = found.isna().any(axis=1).to_numpy()
        if absent.any():
            i = int(np.flatnonzero(absent)[0])
            raise InputError(f'no response text for prompt "{prompts.iloc[i]}" and model '
                             f'"{judgments[column].iloc[i]}" (style control needs every compared response; '
                             f"{int(absent.sum())} rows lack one)", row=i + 1, field=column)
        sides.append(found.to_numpy(float))
    a, b = sides
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(total > 0, (a - b) / np.where(total > 0, total, 1.0), 0.0)
    return zscore(diff)


def family_of(name: str, families: dict[str, str] | None = None) -> str:
    """Model family of a model or judge name (module docstring rule)."""
    families = families or {}
    if name in families:
        return families[name]
    lowered = name.lower()
    prefixes = [k for k in families if lowered.startswith(k.lower())]
    if prefixes:
        return families[max(prefixes, key=len)]
    match = _LEADING_LETTERS.match(name)
    return match.group(0).lower() if match else lowered


def self_preference(judgments: pd.DataFrame, families: dict[str, str] | None = None) -> np.ndarray:
    """+1 / −1 / 0 per row: only model_a / only model_b / neither-or-both from the judge's family."""
    require_columns(judgments, ("judge",), what="judgments table (self-preference)")
    def fam(series: pd.Series) -> np.ndarray:  # one family_of call per distinct name, not per row
        names = series.astype(str)
        return names.map({v: family_of(v, families) for v in names.unique()}).to_numpy(dtype=object)

    judge = fam(judgments["judge"])
    same_a = fam(judgments["model_a"]) == judge
    same_b = fam(judgments["model_b"]) == judge
    return same_a.astype(float) - same_b.astype(float)
