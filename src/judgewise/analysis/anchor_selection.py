"""Anchor selection (Anchor §2, §4.1–4.3, §5.1, §5.3, App. E): how much an anchor's comparisons tell apart.

Verdicts against an anchor form a (prompts × models) matrix ``V`` from each *model's* view (v > 0: the model
beat the anchor), NaN where a comparison is missing. Collapsed verdicts are sign(v) ∈ {−1, 0, 1}; 5-way
verdicts are v ∈ {−2..2} when the judge gave them. All functions are vectorised over prompts and models.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io.schema import anchor_candidates, compares_every_pair, require_columns
from judgewise.ratings.bradley_terry import fit_bt_arrays
from judgewise.ratings.encode import encode


def informativeness(verdicts: np.ndarray) -> float:
    """Anchor §4.3: I(p, A) = share of (prompt, model pair) with different verdicts against the anchor,
    v_{i,a} ≠ v_{i,b}, over all pairs a < b of non-anchor models. Missing verdicts (NaN) drop their pairs
    (the denominator counts only pairs where both verdicts exist; with complete data it is N·C(M, 2))."""
    v = np.asarray(verdicts, dtype=float)
    present = np.isfinite(v)
    n_present = present.sum(axis=1)
    pairs = n_present * (n_present - 1) / 2
    values = np.unique(v[present])
    same = np.zeros(len(v))
    for value in values:  # few distinct verdict values: Σ_k C(c_k, 2) equal pairs per prompt
        c = np.sum(v == value, axis=1)
        same += c * (c - 1) / 2
    total = pairs.sum()
    if total == 0:
        raise InputError("informativeness needs at least two models judged against the anchor on some prompt")
    return float((pairs - same).sum() / total)


def collapse(verdicts: np.ndarray) -> np.ndarray:
    """5-way (or continuous, centred) verdicts → {−1, 0, 1}, keeping NaN."""
    return np.sign(np.asarray(verdicts, dtype=float))


def win_count_histogram(verdicts: np.ndarray) -> np.ndarray:
    """Anchor §4.2: for k = 0..M, the number of prompts on which exactly k models beat the anchor (v > 0)."""
    v = np.asarray(verdicts, dtype=float)
    wins = np.sum(v > 0, axis=1)
    return np.bincount(wins, minlength=v.shape[1] + 1)


@dataclass
class AnchorReport:
    """What an anchor's comparisons are worth: informativeness, wasted share, win-count histogram."""

    anchor: str
    n_prompts: int
    n_models: int
    informativeness: float  # on collapsed {-1, 0, 1} verdicts
    informativeness_5way: float | None  # on 5-way verdicts when the judge gave them
    wasted_share: float  # 1 − I: comparisons that tell no pair of models apart
    anchor_wins_all_share: float  # prompts where no model beat the anchor
    no_signal_share: float  # prompts where every model got the same collapsed verdict
    histogram: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def anchor_report(anchor: str, verdicts: np.ndarray, verdicts5: np.ndarray | None = None) -> AnchorReport:
    """All anchor-study figures for one anchor's (prompts × models) verdict matrix (model's view)."""
    v = collapse(verdicts)
    i_collapsed = informativeness(v)
    complete = v[np.all(np.isfinite(v), axis=1)]
    no_signal = float(np.mean(complete.min(axis=1) == complete.max(axis=1))) if len(complete) else float("nan")
    return AnchorReport(anchor, int(v.shape[0]), int(v.shape[1]), i_collapsed,
                        None if verdicts5 is None else informativeness(verdicts5), 1.0 - i_collapsed,
                        float(np.mean(np.sum(v > 0, axis=1) == 0)), no_signal, win_count_histogram(v).tolist())


def verdict_matrix(judgments: pd.DataFrame, anchor: str, column: str = "outcome") -> tuple[np.ndarray, list[str], list[str]]:
    """(prompts × models) verdicts of every model against ``anchor`` from the model's view.

    ``column="outcome"`` gives outcome − ½ (so sign() is the collapsed verdict); ``"verdict"`` the 5-way
    verdict. Rows not involving the anchor are ignored; several judgments of one (prompt, model) — both answer
    orders, repeated games — are averaged. Returns (matrix, prompt ids, model names)."""
    require_columns(judgments, (column,), what="judgments table")
    sub = judgments[(judgments["model_a"] == anchor) | (judgments["model_b"] == anchor)]
    if sub.empty:
        models = sorted(set(judgments["model_a"]) | set(judgments["model_b"]))
        raise ConfigError(f"anchor {anchor!r} is in no judgment; models: {models[:20]}")
    anchor_first = (sub["model_a"] == anchor).to_numpy()
    other = np.where(anchor_first, sub["model_b"], sub["model_a"])
    value = pd.to_numeric(sub[column], errors="coerce").to_numpy(float)
    value = value - 0.5 if column == "outcome" else value
    value = np.where(anchor_first, -value, value)
    frame = pd.DataFrame({"prompt_id": sub["prompt_id"].to_numpy(), "model": other, "v": value})
    table = frame.pivot_table(index="prompt_id", columns="model", values="v", aggfunc="mean", sort=True)
    return table.to_numpy(float), [str(p) for p in table.index], [str(m) for m in table.columns]


def report_from_judgments(judgments: pd.DataFrame, anchor: str) -> AnchorReport:
    """:func:`anchor_report` for ``anchor`` in a canonical judgments table (5-way when a verdict column exists)."""
    v, _, _ = verdict_matrix(judgments, anchor)
    v5 = None
    if "verdict" in judgments.columns and judgments["verdict"].notna().any():
        v5 = verdict_matrix(judgments, anchor, "verdict")[0]
    return anchor_report(anchor, v, v5)


def likely_anchors(judgments: pd.DataFrame) -> list[str]:
    """Models taking part in at least half of all rows — the anchor(s) of an anchor-based file. A file comparing
    every pair of models (all pairs: the pilot's input, Anchor §5.3) or only two models has none."""
    a, b = judgments["model_a"], judgments["model_b"]
    n_models = len(pd.unique(pd.concat([a, b])))
    if n_models <= 2 or compares_every_pair(a, b):  # io.schema
        return []
    return [str(m) for m in anchor_candidates(a, b, min_share=0.5)]


class QuadraticData:
    """Quadratic (all-pairs) judgments as a (prompts × models × models) outcome tensor Q[p, i, j] = i's result
    against j (NaN if not judged), the input of the pilot and the anchor-quality experiments."""

    def __init__(self, judgments: pd.DataFrame):
        enc = encode(judgments)
        self.models, self.prompts = enc.models, enc.prompts
        n, p = enc.n_models, len(enc.prompts)
        total = np.zeros((p, n, n))
        count = np.zeros((p, n, n))
        np.add.at(total, (enc.prompt, enc.a, enc.b), enc.outcome)
        np.add.at(total, (enc.prompt, enc.b, enc.a), 1 - enc.outcome)
        np.add.at(count, (enc.prompt, enc.a, enc.b), 1)
        np.add.at(count, (enc.prompt, enc.b, enc.a), 1)
        with np.errstate(invalid="ignore"):
            self.q = np.where(count > 0, total / np.maximum(count, 1), np.nan)

    def anchor_verdicts(self, anchor: int, prompts: np.ndarray | None = None) -> np.ndarray:
        """Collapsed-scale verdicts (outcome − ½) of every other model vs ``anchor``: (prompts × models−1)."""
        q = self.q if prompts is None else self.q[prompts]
        return np.delete(q[:, :, anchor] - 0.5, anchor, axis=1)

    def arrays(self, prompts: np.ndarray | None = None, anchors: list[int] | None = None):
        """(a, b, outcome) arrays of the judged pairs (a < b), restricted to prompts and to pairs touching
        an anchor when ``anchors`` is given."""
        q = self.q if prompts is None else self.q[prompts]
        n = len(self.models)
        lo, hi = np.triu_indices(n, k=1)
        if anchors is not None:
            keep = np.isin(lo, anchors) | np.isin(hi, anchors)
            lo, hi = lo[keep], hi[keep]
        o = q[:, lo, hi]
        ok = np.isfinite(o)
        return np.broadcast_to(lo, o.shape)[ok], np.broadcast_to(hi, o.shape)[ok], o[ok]

    def bt_scores(self, prompts=None, anchors=None) -> np.ndarray:
        a, b, o = self.arrays(prompts, anchors)
        return fit_bt_arrays(a, b, o, len(self.models))[0]
