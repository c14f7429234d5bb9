"""Judge bias diagnostics with intervals: position, swap consistency, length/markdown, label agreement.

All figures read canonical judgments (``prompt_id, model_a, model_b, judge, outcome`` and, for position
figures, ``first`` = the model shown first). Proportions carry Wilson score intervals (ties count as half a
win, so counts may be fractional). References: position alternation and position bias (Arena-lite §4.3.3,
App. A.8), verdict scales (Anchor-selection §2), style and self-preference bias (CLB §3.2.1, §5.3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgewise.io.schema import require_columns, usable_mask
from judgewise.judges.run_result import swap_agreement
from judgewise.ratings.features import style_counts
from judgewise.ratings.record_interval import wilson_interval


@dataclass
class Proportion:
    """An estimated probability with its Wilson interval; ``n`` is the number of units it counts."""

    estimate: float
    ci_low: float
    ci_high: float
    n: int

    def as_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in self.__dict__.items()}


def proportion(values, level: float = 0.95) -> Proportion:
    """Mean of values in [0, 1] (e.g. outcomes with ties as 0.5) with a Wilson interval."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return Proportion(float("nan"), float("nan"), float("nan"), 0)
    lo, hi = wilson_interval(v.sum(), len(v), level)
    return Proportion(float(v.mean()), float(lo), float(hi), int(len(v)))


def _require(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    require_columns(frame, columns, what=f"the judgments table for {what}")  # the one check (io.schema)


def _decided(frame: pd.DataFrame) -> pd.DataFrame:
    """Judgments with a usable outcome (:func:`judgewise.io.schema.usable_mask`, the one rule)."""
    return frame[usable_mask(frame)]


def first_shown_outcome(frame: pd.DataFrame) -> np.ndarray:
    """Outcome from the view of the response shown first (1 = first shown wins)."""
    _require(frame, ("model_a", "first", "outcome"), "position bias")
    outcome = frame["outcome"].to_numpy(dtype=float)
    a_first = (frame["first"] == frame["model_a"]).to_numpy()
    return np.where(a_first, outcome, 1.0 - outcome)


def position_bias(frame: pd.DataFrame, level: float = 0.95) -> Proportion:
    """P(the response shown first wins), ties as half (0.5 = no position bias; Arena-lite §4.3.3)."""
    decided = _decided(frame)
    decided = decided[decided["first"].notna()] if "first" in decided.columns else decided
    return proportion(first_shown_outcome(decided), level)


def swap_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """Both-order judgments of the same (judge, prompt, model pair), one row per pair.

    Columns: ``judge, prompt_id, lo, hi`` (models sorted), ``lo_first``/``hi_first`` = ``lo``'s outcome when
    ``lo`` / ``hi`` was shown first. Pairs judged more than once per order use the mean outcome per order.
    """
    _require(frame, ("prompt_id", "model_a", "model_b", "judge", "outcome", "first"), "swap consistency")
    d = _decided(frame)
    d = d[d["first"].notna()]
    a_is_lo = (d["model_a"] <= d["model_b"]).to_numpy()
    lo = np.where(a_is_lo, d["model_a"], d["model_b"])
    hi = np.where(a_is_lo, d["model_b"], d["model_a"])
    out = pd.DataFrame({
        "judge": d["judge"].to_numpy(), "prompt_id": d["prompt_id"].to_numpy(), "lo": lo, "hi": hi,
        "lo_outcome": np.where(a_is_lo, d["outcome"], 1.0 - d["outcome"].to_numpy(dtype=float)),
        "order": np.where(d["first"].to_numpy() == lo, "lo_first", "hi_first"),
    })
    wide = out.pivot_table(index=["judge", "prompt_id", "lo", "hi"], columns="order", values="lo_outcome",
                           aggfunc="mean")
    for col in ("lo_first", "hi_first"):
        if col not in wide.columns:
            wide[col] = np.nan
    return wide.dropna(subset=["lo_first", "hi_first"]).reset_index()


def _decision(outcome) -> np.ndarray:
    """-1 / 0 / +1: loss, tie, win (outcome compared to 0.5)."""
    return np.sign(np.asarray(outcome, dtype=float) - 0.5)


def swap_consistency(frame: pd.DataFrame, level: float = 0.95) -> Proportion:
    """Fraction of both-order pairs whose decisions (win/tie/loss) agree, with a Wilson interval; the agreement
    itself is :func:`judgewise.judges.runner.swap_agreement` (the one definition)."""
    _require(frame, ("prompt_id", "model_a", "model_b", "judge", "outcome"), "swap consistency")
    return proportion(swap_agreement(_decided(frame)), level)


def first_wins_both_orders(frame: pd.DataFrame, level: float = 0.95) -> Proportion:
    """Fraction of both-order pairs where the first shown won in *both* orders (a pure position flip)."""
    pairs = swap_pairs(frame)
    flip = (_decision(pairs["lo_first"]) > 0) & (_decision(pairs["hi_first"]) < 0)
    return proportion(flip.astype(float), level)


# -- length and markdown ------------------------------------------------------------------------------

def markdown_count(text: str) -> int:
    """Headers + bold spans + list items: the markdown features of style control (CLB §3.2.1), summed
    (:func:`judgewise.ratings.features.style_counts`, the one definition)."""
    return int(sum(style_counts(text)))


def _response_lookup(responses: pd.DataFrame, feature) -> dict[tuple[str, str], float]:
    _require(responses, ("prompt_id", "model", "text"), "length/markdown bias (responses)")
    texts = responses["text"].fillna("").astype(str)
    return dict(zip(zip(responses["prompt_id"].astype(str), responses["model"].astype(str)),
                    (feature(t) for t in texts)))


def feature_preference(frame: pd.DataFrame, responses: pd.DataFrame, feature,
                       level: float = 0.95) -> Proportion:
    """P(the side with the larger ``feature(text)`` wins), over judgments where the feature differs."""
    lookup = _response_lookup(responses, feature)
    d = _decided(frame)
    pid = d["prompt_id"].astype(str)
    fa = np.array([lookup.get(k, np.nan) for k in zip(pid, d["model_a"].astype(str))], dtype=float)
    fb = np.array([lookup.get(k, np.nan) for k in zip(pid, d["model_b"].astype(str))], dtype=float)
    usable = ~np.isnan(fa) & ~np.isnan(fb) & (fa != fb)
    outcome = d["outcome"].to_numpy(dtype=float)[usable]
    larger_wins = np.where(fa[usable] > fb[usable], outcome, 1.0 - outcome)
    return proportion(larger_wins, level)


def length_bias(frame: pd.DataFrame, responses: pd.DataFrame, level: float = 0.95) -> Proportion:
    """P(the longer response wins) (characters; equal lengths skipped) — length bias (CLB §5.3)."""
    return feature_preference(frame, responses, len, level)


def markdown_bias(frame: pd.DataFrame, responses: pd.DataFrame, level: float = 0.95) -> Proportion:
    """P(the response with more markdown elements wins) (equal counts skipped; CLB §3.2.1 features)."""
    return feature_preference(frame, responses, markdown_count, level)


# -- agreement with a known truth ---------------------------------------------------------------------

def label_agreement(frame: pd.DataFrame, truth_col: str = "truth", level: float = 0.95) -> dict:
    """Agreement of verdicts with an objective label (``truth_col`` = model_a's true outcome, 1 or 0).

    Returns per-judgment accuracy (ties count as wrong), the same with ties as half, and — when both orders
    were judged — JudgeBench's pair-level accuracy: the two decisions are summed and a pair counts as
    correct only when the sum points to the label (a split or tied pair is wrong).
    """
    _require(frame, ("outcome", truth_col), "label agreement")
    d = _decided(frame)
    d = d[d[truth_col].notna()]
    truth = d[truth_col].to_numpy(dtype=float)
    dec = _decision(d["outcome"])
    want = np.where(truth > 0.5, 1.0, -1.0)
    out = {"per_judgment": proportion((dec == want).astype(float), level),
           "ties_half": proportion(np.where(dec == 0, 0.5, (dec == want).astype(float)), level),
           "tie_rate": proportion((dec == 0).astype(float), level)}
    if "first" in d.columns and d["first"].notna().any():
        out["per_pair"] = _pair_label_accuracy(d, truth_col, level)
    return out


def _pair_label_accuracy(d: pd.DataFrame, truth_col: str, level: float) -> Proportion:
    signed = _decision(d["outcome"]) * np.where(d[truth_col].to_numpy(dtype=float) > 0.5, 1.0, -1.0)
    keys = [d["judge"].astype(str), d["prompt_id"].astype(str),
            np.minimum(d["model_a"].astype(str), d["model_b"].astype(str)),
            np.maximum(d["model_a"].astype(str), d["model_b"].astype(str))]
    summed = pd.Series(signed).groupby([np.asarray(k) for k in keys]).sum()
    return proportion((summed.to_numpy() > 0).astype(float), level)
