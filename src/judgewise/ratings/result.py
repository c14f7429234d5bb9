"""The ``Ranking`` result object that every rating method returns and every output reads from."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Ranking:
    """Scores of models with their uncertainty, in the style of ``scipy.stats`` result objects.

    Arrays are aligned with ``models``. ``ci_low``/``ci_high`` are bootstrap bounds at ``ci_level`` (BCa or
    percentile: ``info["bootstrap"]["interval"]``; NaN when no bootstrap was run). ``rank`` is the CI-aware rank: 1 + the number of models
    whose lower bound exceeds this model's upper bound; without intervals, 1 + the number of models with a higher
    score, so tied models share a rank (:func:`ci_aware_rank`).
    ``n`` is the number of judgments each model took part in. ``extra`` holds method-specific per-model
    arrays (e.g. ``se``, ``n_wins``, ``n_draws``, ``discrete_win_rate``, ``elo``, ``mu``, ``sigma``) and
    ``info`` method-level facts (coefficients of style control, rows used/skipped, settings).
    """

    method: str
    models: list[str]
    scores: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    rank: np.ndarray
    n: np.ndarray
    ci_level: float = 0.95
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    def order(self) -> np.ndarray:
        """Indices of models from best to worst score."""
        return np.argsort(-np.asarray(self.scores), kind="stable")

    def to_records(self) -> list[dict]:
        """One JSON-ready dict per model, best first: model, score, ci_low, ci_high, rank, n, + extras."""
        out = []
        for i in self.order():
            rec = {
                "model": self.models[i],
                "score": _num(self.scores[i]),
                "ci_low": _num(self.ci_low[i]),
                "ci_high": _num(self.ci_high[i]),
                "rank": int(self.rank[i]),
                "n": int(self.n[i]),
            }
            for key, values in self.extra.items():
                rec[key] = _num(values[i])
            out.append(rec)
        return out

    def settings(self) -> dict:
        """The keyword arguments of :func:`judgewise.ratings.rank` that made this ranking (method, the method's
        options, the bootstrap: rounds, unit, seed, level, interval): what a run records with its store so that a
        report of the store ranks the same way (``store.run_settings``)."""
        boot = self.info.get("bootstrap") or {}
        out = {"method": self.method, **(self.info.get("options") or {}), "bootstrap": int(boot.get("rounds", 0)),
               "ci_level": float(self.ci_level)}
        if boot:
            out.update(bootstrap_unit=boot["unit"], seed=boot["seed"], interval=boot["interval"])
        return out

    def to_frame(self):
        """The ranking as a pandas DataFrame, best first (the columns of :meth:`to_records`)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.to_records())


def _num(x):
    """JSON-safe number: NaN becomes None, numpy scalars become Python scalars."""
    if x is None:
        return None
    if isinstance(x, (np.integer,)):
        return int(x)
    x = float(x)
    return None if np.isnan(x) else x


SCORE_DECIMALS = 9
"""Scores equal to this many decimals are equal: a fit's last digits are noise, not an order between models."""


def competition_rank(scores: np.ndarray) -> np.ndarray:
    """1 + the number of models with a higher score ("1, 1, 1, 4": equal scores share the better rank, so a rank
    never depends on the order the models were first seen in); scores compared to :data:`SCORE_DECIMALS`, a NaN
    score ranks after every number."""
    points = np.round(np.nan_to_num(np.asarray(scores, dtype=float), nan=-np.inf), SCORE_DECIMALS)
    return _count_above(points, points)


def ci_aware_rank(scores: np.ndarray, ci_low: np.ndarray, ci_high: np.ndarray) -> np.ndarray:
    """1 + the number of models clearly better than this one: whose lower bound exceeds this model's upper bound.
    Without intervals (no bootstrap) a model's interval is its score: :func:`competition_rank`, ties share a rank."""
    low, high = np.asarray(ci_low, dtype=float), np.asarray(ci_high, dtype=float)
    if np.all(np.isnan(low)) or np.all(np.isnan(high)):
        return competition_rank(scores)
    return _count_above(low, high)


def _count_above(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """1 + #{j: low[j] > high[i]} for every i, by one sort (NaN bounds compare false: they never count, and a NaN
    ``high`` has nothing above it)."""
    above = np.sort(low[~np.isnan(low)])
    rank = 1 + len(above) - np.searchsorted(above, high, side="right")
    return np.where(np.isnan(high), 1, rank).astype(int)
