"""Online Elo: one pass over the judgments in the order given (CLB App. C; Chatbot Arena's original rating).

Every model starts at ``initial`` (1000). For a judgment of a vs b with outcome o (a's result), the expected
score is E_a = 1 / (1 + 10^((R_b − R_a)/400)); then R_a += k·w·(o − E_a) and R_b −= k·w·(o − E_a), with w the
sample weight (a weight scales the step). k defaults to 4 (FastChat's ``compute_elo``). Ratings depend on the
order of the rows — that is the method, not a bug (Anchor §2 fn. 2, CLB App. C): the table's row order is used
as is; sort it by time first if that is what you mean. Bootstrap replicates keep the original order (each row
repeated by its multiplicity), so intervals reflect resampling, not reshuffling.

The pass is a compiled loop (numba) over rows, and the bootstrap runs every replicate in one compiled call
(``refit_batch``), as FastChat's ``rating_systems.py`` vectorises its replicates: the same numbers as the plain
sequential definition (``online_elo_reference``), far faster.
"""

from __future__ import annotations

import functools

import numpy as np

from judgewise.errors import ConfigError
from judgewise.ratings.method import MethodResult, RatingData


def _elo_pass(a, b, outcome, weight, row_unit, multiplicity, n_models, k, initial):  # pragma: no cover - compiled
    """Ratings of each replicate r: row i applied ``multiplicity[r, row_unit[i]]`` times, rows in order."""
    rounds = multiplicity.shape[0]
    ratings = np.full((rounds, n_models), initial)
    for r in range(rounds):
        rating = ratings[r]
        for i in range(a.shape[0]):
            ai, bi = a[i], b[i]
            step = k * weight[i]
            for _ in range(multiplicity[r, row_unit[i]]):
                expected = 1.0 / (1.0 + 10.0 ** ((rating[bi] - rating[ai]) / 400.0))
                delta = step * (outcome[i] - expected)
                rating[ai] += delta
                rating[bi] -= delta
    return ratings


@functools.cache
def _compiled_pass():
    """:func:`_elo_pass` compiled (numba, cached on disk), imported on first use: most commands never rate by Elo."""
    import numba

    return numba.njit(cache=True, nogil=True)(_elo_pass)


def online_elo_replicates(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, weight: np.ndarray, n_models: int,
                          multiplicity: np.ndarray, k: float = 4.0, initial: float = 1000.0,
                          row_unit: np.ndarray | None = None) -> np.ndarray:
    """(replicates × models) ratings; replicate r applies row i ``multiplicity[r, row_unit[i]]`` times, rows in
    order (``row_unit`` defaults to the identity: one multiplicity per row)."""
    mult = np.ascontiguousarray(np.atleast_2d(multiplicity), dtype=np.int64)
    units = np.arange(len(a), dtype=np.int64) if row_unit is None else np.ascontiguousarray(row_unit, np.int64)
    return _compiled_pass()(np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64),
                            np.ascontiguousarray(outcome, dtype=np.float64),
                            np.ascontiguousarray(weight, dtype=np.float64),
                            units, mult, int(n_models), float(k), float(initial))


def online_elo(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, weight: np.ndarray, n_models: int,
               k: float = 4.0, initial: float = 1000.0) -> np.ndarray:
    """Ratings after one sequential pass of Elo updates (module docstring)."""
    once = np.ones((1, len(a)), dtype=np.int64)
    return online_elo_replicates(a, b, outcome, weight, n_models, once, k, initial)[0]


def online_elo_reference(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, weight: np.ndarray, n_models: int,
                         k: float = 4.0, initial: float = 1000.0) -> np.ndarray:
    """The definition as a plain Python loop: the oracle the compiled pass is tested against."""
    rating = np.full(n_models, float(initial))
    for i, j, o, w in zip(a.tolist(), b.tolist(), outcome.tolist(), weight.tolist()):
        expected = 1.0 / (1.0 + 10.0 ** ((rating[j] - rating[i]) / 400.0))
        delta = k * w * (o - expected)
        rating[i] += delta
        rating[j] -= delta
    return rating


def elo(data: RatingData, *, k: float = 4.0, initial: float = 1000.0) -> MethodResult:
    """Online Elo ratings of the models, rows in the order given."""
    if k <= 0:
        raise ConfigError(f"k must be > 0, got {k}")
    enc = data.enc

    def refit_batch(multiplicity: np.ndarray, row_unit: np.ndarray) -> np.ndarray:
        return online_elo_replicates(enc.a, enc.b, enc.outcome, enc.weight, enc.n_models, multiplicity, k, initial,
                                     row_unit)

    def fit(multiplicity: np.ndarray | None = None) -> np.ndarray:
        once = np.ones(enc.n_rows, dtype=np.int64) if multiplicity is None else multiplicity
        return online_elo_replicates(enc.a, enc.b, enc.outcome, enc.weight, enc.n_models, once, k, initial)[0]

    info = {"k": k, "initial": initial, "order": "as given", "rows_used": enc.n_rows, "rows_not_used": 0}
    return MethodResult(fit(), {}, info, refit=fit, refit_batch=refit_batch)
