"""Rank agreement between two rankings or score vectors: Kendall τ-b, Spearman ρ, Pearson r, Kendall distance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgewise.errors import InputError


def _pair(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"score vectors must be 1-D and the same length, got {x.shape} and {y.shape}")
    if len(x) < 2:
        raise InputError(f"need at least 2 items to compare rankings, got {len(x)}")
    return x, y


def kendall_tau_b(x, y) -> float:
    """Kendall's τ-b (tie-corrected), as ``scipy.stats.kendalltau``; NaN when either vector is constant."""
    x, y = _pair(x, y)
    from scipy import stats  # heavy: only when an agreement is computed, not at `rank`'s start

    return float(stats.kendalltau(x, y, variant="b").statistic)


def spearman_rho(x, y) -> float:
    """Spearman's rank correlation ρ (average ranks for ties); NaN when either vector is constant."""
    x, y = _pair(x, y)
    from scipy import stats  # heavy: only when an agreement is computed, not at `rank`'s start

    return float(stats.spearmanr(x, y).statistic)


def pearson_r(x, y) -> float:
    """Pearson's r on the scores themselves; NaN when either vector is constant."""
    x, y = _pair(x, y)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    from scipy import stats  # heavy: only when an agreement is computed, not at `rank`'s start

    return float(stats.pearsonr(x, y).statistic)


def kendall_distance(x, y) -> float:
    """Fraction of item pairs ordered in opposite directions (strictly discordant) among all pairs."""
    x, y = _pair(x, y)
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    iu = np.triu_indices(len(x), k=1)
    return float((dx[iu] * dy[iu] < 0).mean())


@dataclass
class Agreement:
    """All agreement figures between two score vectors over the same items."""

    n_items: int
    kendall_tau_b: float
    spearman_rho: float
    pearson_r: float
    kendall_distance: float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def agreement(x, y) -> Agreement:
    """Every rank-agreement figure between score vectors ``x`` and ``y`` (higher score = better)."""
    x, y = _pair(x, y)
    return Agreement(len(x), kendall_tau_b(x, y), spearman_rho(x, y), pearson_r(x, y), kendall_distance(x, y))
