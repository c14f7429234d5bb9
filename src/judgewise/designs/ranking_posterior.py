"""How certain a ranking is under a normal posterior of the ratings: the one place of the stopping maths.

Both the adaptive design (where to spend the next calls) and ``judgewise evaluate``'s targets (when to stop) read
a rating fit as θ ~ N(θ̂, Σ) on the natural log-odds scale (a Laplace approximation; the caller chooses Σ —
evaluate passes the prompt-clustered covariance of :func:`judgewise.ratings.bradley_terry.bt_cluster_covariance`).
For a pair (i, j) the gap θ_i − θ_j is then N(μ, σ²), μ = θ̂_i − θ̂_j, σ² = Σ_ii + Σ_jj − 2Σ_ij.

**Near-ties.** A ``margin`` m (log-odds) makes pairs whose true gap is within ±m count as agreeing whatever their
order: a ranking is not wrong to put a 51%-49% pair either way. The Kendall τ with that indifference zone is

    τ_m = (1 / C(n, 2)) Σ_{i<j} c_ij,   c_ij = 1 if |Δ_ij| ≤ m, else sign(Δ_ij) · sign(θ̂_i − θ̂_j),

with Δ the true gaps; m = 0 is Kendall τ (τ-a) between the order of θ̂ and the true one. Its posterior expectation
is exact from the pairwise marginals; its distribution (for "the probability that τ_m ≥ t") needs joint draws, taken
from a fixed seed so a stop is deterministic given the verdicts (:data:`DRAWS` draws: the probability is known to
±0.005 at 0.9).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import ndtr, ndtri

DRAWS = 4000  # posterior draws for P(τ_m ≥ t): binomial sd √(0.9·0.1/4000) ≈ 0.005 at 0.9
DRAW_SEED = 20261129  # fixed: the same verdicts always give the same stop


def misorder_probability(mu: np.ndarray, var: np.ndarray, zone: float = 0.0) -> np.ndarray:
    """Posterior probability that a pair with gap ~ N(mu, var) is ordered the wrong way round by more than the
    indifference ``zone`` (log-odds): Φ(−(|μ| + zone)/σ)."""
    return ndtr(-(np.abs(mu) + zone) / np.sqrt(np.maximum(var, 1e-12)))


def pair_gaps(theta: np.ndarray, cov: np.ndarray, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of θ_i − θ_j under N(θ̂, Σ)."""
    return theta[i] - theta[j], np.maximum(cov[i, i] + cov[j, j] - 2 * cov[i, j], 1e-12)


def expected_kendall_tau(theta: np.ndarray, cov: np.ndarray, margin: float = 0.0) -> float:
    """Posterior expectation of τ_m (module docstring): per pair, P(|Δ| ≤ m) + P(same order, |Δ| > m) −
    P(opposite order, |Δ| > m) = 1 − 2·P(opposite order, |Δ| > m) = 1 − 2·Φ(−(|μ| + m)/σ), exact from the normal
    marginals (m = 0: the expected number of discordant pairs the adaptive design reduces)."""
    theta, cov = np.asarray(theta, float), np.asarray(cov, float)
    i, j = np.triu_indices(len(theta), k=1)
    if not len(i):
        return 1.0
    mu, var = pair_gaps(theta, cov, i, j)
    return float(1.0 - 2.0 * misorder_probability(mu, var, margin).mean())


@lru_cache(maxsize=64)
def _standard_draws(n: int) -> np.ndarray:
    return np.random.default_rng(DRAW_SEED).standard_normal((DRAWS, n))


def tau_draws(theta: np.ndarray, cov: np.ndarray, margin: float = 0.0) -> np.ndarray:
    """τ_m of the order of θ̂ against each of :data:`DRAWS` fixed-seed draws θ ~ N(θ̂, Σ)."""
    theta, cov = np.asarray(theta, float), np.asarray(cov, float)
    n = len(theta)
    i, j = np.triu_indices(n, k=1)
    if not len(i):
        return np.ones(1)
    w, v = np.linalg.eigh((cov + cov.T) / 2)
    root = v * np.sqrt(np.clip(w, 0.0, None))  # Σ = root rootᵀ (eigh: safe when Σ is near-singular)
    draws = theta + _standard_draws(n) @ root.T
    gap = draws[:, i] - draws[:, j]
    agree = np.where(np.abs(gap) <= margin, 1.0, np.sign(gap) * np.sign(theta[i] - theta[j]))
    return agree.mean(axis=1)


def probability_tau_at_least(theta: np.ndarray, cov: np.ndarray, target: float, margin: float = 0.0) -> float:
    """Posterior probability that τ_m ≥ ``target`` (module docstring)."""
    return float(np.mean(tau_draws(theta, cov, margin) >= target - 1e-12))


def adjacent_separation(theta: np.ndarray, cov: np.ndarray, level: float, margin: float) -> np.ndarray:
    """Per adjacent pair of the current ranking (best first): 1 separated at ``level`` (P(order right) ≥ level),
    2 tied within ±``margin`` (log-odds) at ``level`` (the central ``level`` interval of the gap inside ±margin),
    0 neither."""
    order = np.argsort(-np.asarray(theta, float), kind="stable")
    mu, var = pair_gaps(np.asarray(theta, float), np.asarray(cov, float), order[:-1], order[1:])
    separated = ndtr(mu / np.sqrt(var)) >= level
    half = ndtri(0.5 + level / 2) * np.sqrt(var)
    tied = (np.abs(mu) + half) <= margin
    return np.where(separated, 1, np.where(tied, 2, 0))


def likely_ties(theta: np.ndarray, margin: float) -> list[tuple[int, int]]:
    """Pairs (i, j), i estimated above j, whose estimated gap θ̂_i − θ̂_j is within ±``margin`` (log-odds): the
    pairs a τ_m target counts as agreeing in either order, so an output lists them as tied rather than ordered.
    Best pair first."""
    theta = np.asarray(theta, float)
    order = np.argsort(-theta, kind="stable")
    ranked = theta[order]
    return [(int(order[x]), int(order[y])) for x in range(len(order)) for y in range(x + 1, len(order))
            if ranked[x] - ranked[y] <= margin]
