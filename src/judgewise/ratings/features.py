"""Contextual features of a judgment for style-controlled Bradley–Terry: style differences and self-preference.

Style (CLB §3.2.1 "Bias correction", after Arena-Hard / Chatbot Arena style control): for each response count
its length, markdown headers (lines starting with 1–6 ``#``), list items (lines starting with ``-``, ``*``, ``+``
or ``1.``) and bold spans (``**x**`` or ``__x__``), with fenced code blocks' contents removed first — Arena-Hard's
per-level counts (:func:`judgewise.io.markdown.markdown_counts`) summed, :func:`style_counts`. Two definitions
(:data:`STYLE_DEFINITIONS`, one :class:`StyleDefinition` each) turn the counts of the two responses into features:

* ``"arena-hard"`` — Arena-Hard-Auto's and FastChat's style control (lmarena/arena-hard-auto ``utils_math.py``
  ``construct_style_matrices`` with ``add_one=True`` and ``fit_bt``; lm-sys/FastChat
  ``fastchat/serve/monitor/elo_analysis.py`` the same): counts from the answers' Arena-Hard metadata when present
  (``n_tokens``/``n_headers``/``n_lists``/``n_bold`` columns: ``token_len`` is tiktoken tokens; header, list and
  bold counts summed over their kinds), else counted here (length: ``n_tokens`` or words); feature
  (a − b) / (a + b + 1); z-scored with the rows' frequency weights (a strong verdict counted 3 times, as their
  repeated battles are), standard deviation with ddof 0. Their fit is scikit-learn's ``LogisticRegression()``
  with its default L2 penalty (C = 1) on battles written twice (a tie once as each side's win), which is the
  likelihood Σ w·ℓ plus ½·l2·‖θ‖² with l2 = ½ / ln(10)² on the natural-scale strengths (their columns are
  ±ln 10) and ½·l2_features·‖β‖² with l2_features = ½ on the coefficients.
* ``"judgewise"`` — the normalised difference (a − b) / (a + b) (0 when both are 0) of the counts (length:
  ``n_tokens`` when present, else whitespace-separated words), z-scored over the rows (unweighted), and the plain
  maximum-likelihood fit (no penalty on β).

Self-preference (CLB §3.2.1; Wataoka et al. 2024): +1 when only model_a is from the judge's family, −1 when only
model_b is, 0 when neither or both are — antisymmetric, so swapping the sides of a judgment flips its sign, and
a same-family pair carries no self-preference signal. Family of a name:
``families[name]`` when the exact name is a key; else the value of the longest key that the name starts with
(case-insensitive), so ``{"gpt": "openai", "o1": "openai", "claude": "anthropic"}`` works as a prefix rule;
else the name's leading run of letters, lower-cased ("gpt-4o" → "gpt", "claude-3-haiku" → "claude").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io.markdown import markdown_counts
from judgewise.io.schema import RESPONSES_REQUIRED, require_columns

STYLE_FEATURES = ("length", "headers", "lists", "bold")
METADATA_COLUMNS = ("n_tokens", "n_headers", "n_lists", "n_bold")  # io.arenahard's names for Arena-Hard metadata


@dataclass(frozen=True)
class StyleDefinition:
    """How style counts become features and how hard the fit is pulled to 0 (module docstring)."""

    name: str
    add_one: bool  # (a − b) / (a + b + 1) instead of (a − b) / (a + b)
    weighted_zscore: bool  # z-score with the rows' frequency weights
    use_metadata: bool  # counts from Arena-Hard answer metadata when present
    l2: float | None  # ridge on θ (natural scale); None: the BT default (the MLE)
    l2_features: float  # ridge on β


STYLE_DEFINITIONS = {
    "arena-hard": StyleDefinition("arena-hard", add_one=True, weighted_zscore=True, use_metadata=True,
                                  l2=0.5 / math.log(10) ** 2, l2_features=0.5),
    "judgewise": StyleDefinition("judgewise", add_one=False, weighted_zscore=False, use_metadata=False,
                                 l2=None, l2_features=0.0),
}


def style_definition(name: str) -> StyleDefinition:
    """The :class:`StyleDefinition` called ``name`` (ConfigError listing the known ones otherwise)."""
    try:
        return STYLE_DEFINITIONS[name]
    except KeyError:
        raise ConfigError(f'unknown style definition "{name}" (known: {", ".join(STYLE_DEFINITIONS)})') from None


_LEADING_LETTERS = re.compile(r"[A-Za-z]+")


def style_counts(text: str) -> tuple[int, int, int]:
    """(headers, list items, bold spans) of a markdown text: Arena-Hard's per-level counts
    (:func:`judgewise.io.markdown.markdown_counts`, fenced code blocks' contents removed) summed over levels and
    kinds, as Arena-Hard's style control sums them (CLB §3.2.1)."""
    counts = markdown_counts(text or "")
    return tuple(sum(counts[kind].values()) for kind in ("header_count", "list_count", "bold_count"))


def has_style_metadata(responses: pd.DataFrame) -> bool:
    """True when every response carries Arena-Hard's style metadata (``METADATA_COLUMNS``, all numbers)."""
    if not set(METADATA_COLUMNS) <= set(responses.columns):
        return False
    return bool(np.isfinite(responses[list(METADATA_COLUMNS)].apply(pd.to_numeric, errors="coerce")).all().all())


def response_style(responses: pd.DataFrame, use_metadata: bool = False) -> pd.DataFrame:
    """Per (prompt_id, model): length, headers, lists, bold counts (module docstring); with ``use_metadata`` from
    Arena-Hard's answer metadata when every response has it."""
    require_columns(responses, RESPONSES_REQUIRED, what="responses table")
    if use_metadata and has_style_metadata(responses):
        values = responses[list(METADATA_COLUMNS)].apply(pd.to_numeric).to_numpy(float)
        frame = pd.DataFrame(values, columns=list(STYLE_FEATURES))
        frame.index = pd.MultiIndex.from_arrays([responses["prompt_id"].astype(str), responses["model"].astype(str)])
        return frame[~frame.index.duplicated(keep="first")]
    text = responses["text"].fillna("").astype(str)
    counts = np.array([style_counts(t) for t in text], dtype=float).reshape(-1, 3)
    if "n_tokens" in responses.columns:
        length = pd.to_numeric(responses["n_tokens"], errors="coerce").to_numpy(float)
    else:
        length = text.str.split().str.len().to_numpy(float)
    frame = pd.DataFrame(np.column_stack([length, counts]), columns=list(STYLE_FEATURES))
    frame.index = pd.MultiIndex.from_arrays([responses["prompt_id"].astype(str), responses["model"].astype(str)])
    return frame[~frame.index.duplicated(keep="first")]


def zscore(x: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """Columns centred and scaled to unit standard deviation (ddof 0; constant columns become 0); with ``weight``
    the mean and deviation count row i ``weight[i]`` times."""
    mean = np.average(x, axis=0, weights=weight)
    sd = np.sqrt(np.average((x - mean) ** 2, axis=0, weights=weight))
    return (x - mean) / np.where(sd > 0, sd, 1.0)


def normalised_difference(a: np.ndarray, b: np.ndarray, add_one: bool) -> np.ndarray:
    """(a − b) / (a + b + 1) (Arena-Hard, FastChat) or (a − b) / (a + b), 0 where a + b = 0 (module docstring)."""
    total = a + b + (1.0 if add_one else 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (a - b) / np.where(total > 0, total, 1.0), 0.0)


def style_differences(judgments: pd.DataFrame, responses: pd.DataFrame, definition: str = "judgewise",
                      weight: np.ndarray | None = None) -> np.ndarray:
    """Rows × 4 z-scored normalised differences of the style counts of the two responses, by ``definition``
    (:data:`STYLE_DEFINITIONS`); ``weight``: the rows' frequency weights (used by definitions that weight)."""
    spec = style_definition(definition)
    style = response_style(responses, spec.use_metadata)
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
    diff = normalised_difference(*sides, add_one=spec.add_one)
    return zscore(diff, weight if spec.weighted_zscore else None)


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
