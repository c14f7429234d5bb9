"""The ``Ranking`` result object that every rating method returns and every output reads from."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Ranking:
    """Scores of models with their uncertainty, in the style of ``scipy.stats`` result objects.

    Arrays are aligned with ``models``. ``ci_low``/``ci_high`` are bootstrap percentile bounds at
    ``ci_level`` (NaN when no bootstrap was run). ``rank`` is the CI-aware rank: 1 + the number of models
    whose lower bound exceeds this model's upper bound (plain rank by score when no intervals).
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


def ci_aware_rank(scores: np.ndarray, ci_low: np.ndarray, ci_high: np.ndarray) -> np.ndarray:
    """1 + number of models whose lower bound exceeds this model's upper bound (plain rank if no CIs)."""
    scores = np.asarray(scores, dtype=float)
    if np.all(np.isnan(ci_low)) or np.all(np.isnan(ci_high)):
        order = np.argsort(-scores, kind="stable")
        rank = np.empty(len(scores), dtype=int)
        rank[order] = np.arange(1, len(scores) + 1)
        return rank
    return 1 + (np.asarray(ci_low)[None, :] > np.asarray(ci_high)[:, None]).sum(axis=1)
