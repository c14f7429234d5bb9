"""Online Elo: one pass over the judgments in the order given (CLB App. C; Chatbot Arena's original rating).

Every model starts at ``initial`` (1000). For a judgment of a vs b with outcome o (a's result), the expected
score is E_a = 1 / (1 + 10^((R_b − R_a)/400)); then R_a += k·w·(o − E_a) and R_b −= k·w·(o − E_a), with w the
sample weight (a weight scales the step). k defaults to 4 (FastChat's ``compute_elo``). Ratings depend on the
order of the rows — that is the method, not a bug (Anchor §2 fn. 2, CLB App. C): the table's row order is used
as is; sort it by time first if that is what you mean. Bootstrap replicates keep the original order (each row
repeated by its multiplicity), so intervals reflect resampling, not reshuffling.
"""

from __future__ import annotations

import numpy as np

from judgewise.errors import ConfigError
from judgewise.ratings.method import MethodResult, RatingData


def online_elo(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, weight: np.ndarray, n_models: int,
               k: float = 4.0, initial: float = 1000.0) -> np.ndarray:
    """Ratings after one sequential pass of Elo updates (module docstring)."""
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

    def fit(multiplicity: np.ndarray | None = None) -> np.ndarray:
        rows = np.arange(enc.n_rows) if multiplicity is None else np.repeat(np.arange(enc.n_rows), multiplicity)
        return online_elo(enc.a[rows], enc.b[rows], enc.outcome[rows], enc.weight[rows], enc.n_models, k, initial)

    info = {"k": k, "initial": initial, "order": "as given", "rows_used": enc.n_rows, "rows_not_used": 0}
    return MethodResult(fit(), {}, info, refit=fit)
