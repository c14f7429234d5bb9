"""What a rating method receives (:class:`RatingData`) and returns (:class:`MethodResult`); the registry's contract.

A method is a function ``method(data: RatingData, **options) -> MethodResult`` registered by name in
``judgewise.ratings.RATING_METHODS``. To support the bootstrap it either gives a :class:`StatsForm` (scores as a
function of aggregated category statistics, so every replicate is one sparse product and all replicates are fitted
at once) or a ``refit`` function (scores from integer per-row multiplicities, for order-dependent methods), optionally
with ``refit_batch`` fitting a whole batch of replicates' multiplicities in one call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np
import pandas as pd

from judgewise.ratings.aggregate import BattleCategories, battle_categories
from judgewise.ratings.encode import EncodedJudgments

if TYPE_CHECKING:
    from scipy import sparse


class StatsForm:
    """Scores as a function of summed category statistics: ``from_stats(counts @ matrix)`` for a batch of counts.

    ``matrix`` is (battle categories × statistics), a scipy sparse matrix, or a function that builds it: then it
    is built on the first read of ``form.matrix`` (by a bootstrap), so a rating without one does not import
    scipy.sparse. ``from_stats`` maps a (B × statistics) array to (B × models). ``failures`` collects, per batch,
    how many replicates the method could not fit to convergence.
    """

    def __init__(self, matrix: sparse.csr_matrix | Callable[[], sparse.csr_matrix],
                 from_stats: Callable[[np.ndarray], np.ndarray], failures: list[int] | None = None):
        self._matrix = matrix
        self.from_stats = from_stats
        self.failures = [] if failures is None else failures

    @property
    def matrix(self) -> sparse.csr_matrix:
        if callable(self._matrix):
            self._matrix = self._matrix()
        return self._matrix


@dataclass
class MethodResult:
    """A method's point estimate: per-model ``scores`` (and ``n``), method-specific arrays and facts."""

    scores: np.ndarray
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    n: np.ndarray | None = None
    stats: StatsForm | None = None
    refit: Callable[[np.ndarray], np.ndarray] | None = None
    #: (unit multiplicities: replicates × units, each row's unit) → (replicates × models); see bootstrap.py
    refit_batch: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    #: (level, bootstrap unit) → (low, high, coupling): score bounds from each model's own record, its games
    #: clustered as the bootstrap resamples them, and how one model's score moves the others' (None: it does not);
    #: the BCa interval is widened to contain them (ratings/record_interval.py)
    record_bounds: Callable[[float, str], tuple[np.ndarray, np.ndarray, np.ndarray | None]] | None = None


@dataclass
class RatingData:
    """Everything a method may read: the encoded rows, their battle categories, the original tables, the anchor."""

    enc: EncodedJudgments
    judgments: pd.DataFrame
    anchor: str | None = None
    responses: pd.DataFrame | None = None
    style_control: bool = False
    _cats: BattleCategories | None = None

    @property
    def cats(self) -> BattleCategories:
        """Distinct battle categories of ``enc`` (computed once)."""
        if self._cats is None:
            self._cats = battle_categories(self.enc)
        return self._cats
