"""When ``judgewise evaluate`` stops: the ranking-quality targets, computed from the BT fit's uncertainty.

Both targets read the ridge BT fit (:func:`judgewise.ratings.bradley_terry.fit_bt_arrays`: θ̂ on the natural
log-odds scale and its covariance Σ, the inverse Fisher information — the **Laplace approximation** θ ~ N(θ̂, Σ)
of the posterior under the ridge's Gaussian prior). For a pair (i, j) the gap θ_i − θ_j is then
N(μ, σ²) with μ = θ̂_i − θ̂_j and σ² = Σ_ii + Σ_jj − 2Σ_ij.

- ``kendall_tau: t`` — stop when the **posterior-expected Kendall τ** between the current ranking (the order of
  θ̂) and the true one reaches t. Kendall τ is an average over pairs of ±1 (concordant / discordant), so its
  expectation is exact from the pairwise marginals, with no draws: E[τ] = 1 − 2·Σ_pairs Φ(−|μ|/σ) / C(n, 2)
  (the adaptive design's "expected discordant pairs", :func:`judgewise.designs.adaptive.misorder_probability`).
  Nothing random is involved, so the stop is deterministic given the verdicts.
- ``separated: p`` (with ``margin: m`` Elo points, default :data:`DEFAULT_MARGIN_ELO`) — stop when every
  adjacent pair of the current ranking is either **separated** (P(order right) ≥ p) or **tied within the
  margin** (the central p-interval of its gap lies inside ±m Elo).

The meaning, for a report: "expected τ 0.9" says that, if the judge's verdicts follow BT, about 5% of the
model pairs are expected to be ordered the wrong way round; it says nothing about the judge being right.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from judgewise.designs.adaptive import misorder_probability
from judgewise.errors import ConfigError
from judgewise.ratings.bradley_terry import ARRAY_FIT_L2, ELO_SCALE

DEFAULT_MARGIN_ELO = 10.0  # a 10-Elo gap is a 51.4% win rate: "tied" for a leaderboard
DEFAULT_L2 = ARRAY_FIT_L2  # the ridge of the array BT fit: prior sd 10 log-odds, finite on separated data
TARGET_KEYS = ("kendall_tau", "separated", "margin")
ELO_PER_LOGIT = ELO_SCALE  # 400 / ln 10 Elo points per natural log-odds unit


@dataclass(frozen=True)
class Target:
    """A stopping target: ``kendall_tau`` and/or ``separated`` (with ``margin`` in Elo); any one reached stops."""

    kendall_tau: float | None = None
    separated: float | None = None
    margin: float = DEFAULT_MARGIN_ELO

    @property
    def is_set(self) -> bool:
        """Whether there is a target to stop at (else the design or the budget ends the run)."""
        return self.kendall_tau is not None or self.separated is not None

    def describe(self) -> str:
        parts = []
        if self.kendall_tau is not None:
            parts.append(f"posterior-expected Kendall τ ≥ {self.kendall_tau:g}")
        if self.separated is not None:
            parts.append(f"every adjacent pair separated at {self.separated:g} or tied within ±{self.margin:g} Elo")
        return " or ".join(parts) or "none (the design or the budget ends the run)"

    def as_dict(self) -> dict:
        return {"kendall_tau": self.kendall_tau, "separated": self.separated, "margin_elo": self.margin}


def parse_target(target: dict | Target | None, source: str = "<dict>") -> Target:
    """A :class:`Target` from a config's ``target:`` mapping (checked again here for Python callers: unknown keys,
    ranges, a margin without ``separated``); ``None`` or ``{}`` is no target."""
    if isinstance(target, Target):
        return target
    if not target:
        return Target()
    if not isinstance(target, dict):
        raise ConfigError(f"{source}: target: must be a mapping such as {{kendall_tau: 0.9}}, found {target!r}")
    unknown = sorted(set(target) - set(TARGET_KEYS))
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {unknown} in target; expected some of {list(TARGET_KEYS)}")
    tau, sep, margin = target.get("kendall_tau"), target.get("separated"), target.get("margin")
    _check_number(source, "kendall_tau", tau, 0.0, 1.0, "a number in (0, 1), e.g. 0.9")
    _check_number(source, "separated", sep, 0.5, 1.0, "a probability in (0.5, 1), e.g. 0.95")
    _check_number(source, "margin", margin, 0.0, 1000.0, "Elo points in (0, 1000]", high_open=False)
    if tau is None and sep is None:
        raise ConfigError(f"{source}: target: names no target; give kendall_tau (e.g. 0.9) or separated (e.g. 0.95)")
    if margin is not None and sep is None:
        raise ConfigError(f"{source}: target.margin applies to target.separated, which is not given")
    return Target(tau, sep, DEFAULT_MARGIN_ELO if margin is None else float(margin))


def _check_number(source, key, value, low, high, what, high_open: bool = True) -> None:
    if value is None:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)
    ok = ok and low < value and (value < high if high_open else value <= high)
    if not ok:
        raise ConfigError(f"{source}: target.{key} = {value!r}: must be {what}")


def pair_gaps(theta: np.ndarray, cov: np.ndarray, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of θ_i − θ_j under N(θ̂, Σ)."""
    return theta[i] - theta[j], np.maximum(cov[i, i] + cov[j, j] - 2 * cov[i, j], 1e-12)


def expected_kendall_tau(theta: np.ndarray, cov: np.ndarray) -> float:
    """Posterior-expected Kendall τ between the order of θ̂ and the true order under N(θ̂, Σ) (module docstring)."""
    theta, cov = np.asarray(theta, float), np.asarray(cov, float)
    i, j = np.triu_indices(len(theta), k=1)
    if not len(i):
        return 1.0
    mu, var = pair_gaps(theta, cov, i, j)
    return float(1.0 - 2.0 * misorder_probability(mu, var).mean())


def adjacent_separation(theta: np.ndarray, cov: np.ndarray, level: float, margin_elo: float) -> np.ndarray:
    """Per adjacent pair of the current ranking (best first): 1 separated at ``level``, 2 tied within ±margin at
    ``level``, 0 neither."""
    order = np.argsort(-np.asarray(theta, float), kind="stable")
    mu, var = pair_gaps(np.asarray(theta, float), np.asarray(cov, float), order[:-1], order[1:])
    separated = ndtr(mu / np.sqrt(var)) >= level
    half = ndtri(0.5 + level / 2) * np.sqrt(var)
    margin = margin_elo / ELO_PER_LOGIT
    tied = (np.abs(mu) + half) <= margin
    return np.where(separated, 1, np.where(tied, 2, 0))


def target_reached(target: Target, theta: np.ndarray, cov: np.ndarray) -> tuple[bool, float]:
    """(whether any of the target's conditions holds, the posterior-expected Kendall τ)."""
    tau = expected_kendall_tau(theta, cov)
    reached = target.kendall_tau is not None and tau >= target.kendall_tau
    if target.separated is not None and len(theta) > 1:
        reached = reached or bool(np.all(adjacent_separation(theta, cov, target.separated, target.margin) > 0))
    return reached, tau
