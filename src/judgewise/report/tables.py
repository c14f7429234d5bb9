"""Aggregations the report and explorer display that no rating method computes: the head-to-head matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd


def win_matrix(judgments: pd.DataFrame, models: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Mean outcome of row model against column model (ties 0.5, soft outcomes as given) and match counts.

    Each judgment counts for (a, b) with ``outcome`` and for (b, a) with ``1 - outcome``; cells of pairs
    that never met are NaN. Rows whose models are not in ``models`` are ignored (callers pass all models).
    """
    index = {m: i for i, m in enumerate(models)}
    a = judgments["model_a"].astype(str).map(index)
    b = judgments["model_b"].astype(str).map(index)
    keep = a.notna() & b.notna() & judgments["outcome"].notna()
    a, b = a[keep].to_numpy(int), b[keep].to_numpy(int)
    y = judgments.loc[keep, "outcome"].to_numpy(float)
    n = len(models)
    wins, counts = np.zeros((n, n)), np.zeros((n, n))
    np.add.at(wins, (a, b), y)
    np.add.at(wins, (b, a), 1.0 - y)
    np.add.at(counts, (a, b), 1.0)
    np.add.at(counts, (b, a), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(counts > 0, wins / counts, np.nan)
    return rates, counts
