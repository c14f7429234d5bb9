"""TrueSkill ratings (CLB App. C) with the ``trueskill`` package, in its own ``TrueSkill`` environment object.

Every judgment is a 1-vs-1 game in the order given: outcome > ½ a win for model_a, < ½ a win for model_b, = ½
a draw (soft outcomes are thresholded; weights are not used — TrueSkill has no notion of a weighted game).
The package's global environment is never touched: each call builds ``trueskill.TrueSkill(mu, sigma, beta,
tau, draw_probability)`` (defaults: the package's 25, 25/3, 25/6, 25/300 and 0.10). Reported: μ, σ and the
conservative μ − 3σ; ``score`` chooses which is the ranking score (default ``"conservative"``).
"""

from __future__ import annotations

import numpy as np
import trueskill

from judgewise.errors import ConfigError
from judgewise.ratings.method import MethodResult, RatingData

SCORES = ("conservative", "mu")


def true_skill(a: np.ndarray, b: np.ndarray, outcome: np.ndarray, n_models: int,
               env: trueskill.TrueSkill) -> tuple[np.ndarray, np.ndarray]:
    """(μ, σ) per model after playing every row as a 1-vs-1 game in order."""
    ratings = [env.create_rating() for _ in range(n_models)]
    for i, j, o in zip(a.tolist(), b.tolist(), outcome.tolist()):
        if i == j:
            continue
        if o > 0.5:
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], env=env)
        elif o < 0.5:
            ratings[j], ratings[i] = trueskill.rate_1vs1(ratings[j], ratings[i], env=env)
        else:
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], drawn=True, env=env)
    return np.array([r.mu for r in ratings]), np.array([r.sigma for r in ratings])


def trueskill_rating(data: RatingData, *, score: str = "conservative", mu: float = 25.0,
                     sigma: float = 25.0 / 3.0, beta: float = 25.0 / 6.0, tau: float = 25.0 / 300.0,
                     draw_probability: float = 0.10) -> MethodResult:
    """TrueSkill μ, σ and μ − 3σ of every model (module docstring)."""
    if score not in SCORES:
        raise ConfigError(f'score must be one of {SCORES}, got "{score}"')
    env = trueskill.TrueSkill(mu=mu, sigma=sigma, beta=beta, tau=tau, draw_probability=draw_probability)
    enc = data.enc

    def fit(multiplicity: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        rows = np.arange(enc.n_rows) if multiplicity is None else np.repeat(np.arange(enc.n_rows), multiplicity)
        return true_skill(enc.a[rows], enc.b[rows], enc.outcome[rows], enc.n_models, env)

    def pick(mu_sigma: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        m, s = mu_sigma
        return m - 3.0 * s if score == "conservative" else m

    m, s = fit()
    info = {"score": score, "environment": {"mu": mu, "sigma": sigma, "beta": beta, "tau": tau,
                                            "draw_probability": draw_probability},
            "order": "as given", "rows_used": enc.n_rows, "rows_not_used": int(np.sum(enc.a == enc.b))}
    return MethodResult(pick((m, s)), {"mu": m, "sigma": s, "conservative": m - 3.0 * s}, info,
                        refit=lambda multiplicity: pick(fit(multiplicity)))
