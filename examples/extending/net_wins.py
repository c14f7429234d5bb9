"""Net wins: games won minus games lost, per game played, ties counting zero (a toy method, docs/extending.md)."""

from __future__ import annotations

import numpy as np

from judgewise.ratings.method import MethodResult, RatingData


def net_wins(data: RatingData) -> MethodResult:
    """Each model's (wins − losses) / games in [-1, 1], over every game it played, whoever it met.

    ``refit`` gives the scores for integer per-row multiplicities: the bootstrap calls it once per replicate.
    """
    enc = data.enc

    def scores(multiplicity: np.ndarray) -> np.ndarray:
        weight = enc.weight * multiplicity
        margin = weight * (2.0 * enc.outcome - 1.0)  # model_a's side: +1 a win, -1 a loss, 0 a tie
        net = np.bincount(enc.a, margin, enc.n_models) - np.bincount(enc.b, margin, enc.n_models)
        games = np.bincount(enc.a, weight, enc.n_models) + np.bincount(enc.b, weight, enc.n_models)
        with np.errstate(invalid="ignore", divide="ignore"):
            return net / games

    return MethodResult(scores(np.ones(enc.n_rows)), info={"scale": "net wins per game"}, refit=scores)
