"""When ``judgewise evaluate`` stops: the ranking-quality targets and what the stated numbers mean.

Every round refits BT on all games so far (the ridge ``l2`` = :data:`DEFAULT_L2`: a N(0, 1) prior on each model's
log-odds strength) and reads it as θ ~ N(θ̂, Σ) with Σ the **prompt-clustered** covariance
(:func:`judgewise.ratings.bradley_terry.bt_cluster_covariance`: games on one prompt — both answer orders of a
comparison, or one model's answer met by several opponents — are not independent verdicts). The maths of the
rankings' certainty is :mod:`judgewise.designs.ranking_posterior`, which the adaptive design reads too.

- ``kendall_tau: t`` (with ``margin: m`` Elo, default :data:`DEFAULT_MARGIN_ELO`) — stop when the posterior
  **probability that τ_m ≥ t** reaches :data:`TAU_CONFIDENCE` (0.9). τ_m is Kendall τ between the current
  ranking and the true one, with pairs truly within ±m Elo counted as agreeing (a near-tie is not a misorder; the
  output lists the pairs that are likely tied). A rule on the *expected* τ stopped with a 51–76% chance of τ ≥ t
  by its own posterior and, on real verdicts, reached t in as few as 11% of runs; a rule on the probability keeps
  the promise in most runs despite stopping at the first look that passes (measured:
  ``benchmarks/calibration.py``, the table in docs/evaluate.md).
- ``separated: p`` (with ``margin: m``) — stop when every adjacent pair of the current ranking is either
  **separated** (P(order right) ≥ p) or **tied within the margin** (the central p-interval of its gap lies inside
  ±m Elo).

"Against what": the truth the posterior speaks of is the BT ranking of the judge's verdicts on the population the
prompts were drawn from; the benchmark checks it against the ranking all comparisons on the same prompts give. It
says nothing about the judge being right.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgewise.designs.ranking_posterior import (adjacent_separation, expected_kendall_tau, likely_ties,
                                                 probability_tau_at_least)
from judgewise.errors import ConfigError
from judgewise.ratings.bradley_terry import ELO_SCALE

DEFAULT_MARGIN_ELO = 20.0  # a 20-Elo gap is a 52.9% win rate: "tied" for a judge-based leaderboard
# The ridge of evaluate's BT fits: a N(0, 1) prior on each log-odds score (a priori gaps of ±1.4 log-odds ≈ ±245
# Elo). The weak N(0, 10²) prior of `rank` let one win look conclusive (P(i > j | one win) → 1 as the prior
# widens), so sparse early rounds stopped with nonsense certainty.
DEFAULT_L2 = 1.0
TAU_CONFIDENCE = 0.9  # kendall_tau stops when P(τ_m ≥ target) ≥ this
TARGET_KEYS = ("kendall_tau", "separated", "margin")
ELO_PER_LOGIT = ELO_SCALE  # 400 / ln 10 Elo points per natural log-odds unit


@dataclass(frozen=True)
class Target:
    """A stopping target: ``kendall_tau`` and/or ``separated`` (with ``margin`` in Elo); any one reached stops."""

    kendall_tau: float | None = None
    separated: float | None = None
    margin: float = DEFAULT_MARGIN_ELO

    @property
    def margin_logit(self) -> float:
        """The margin on the natural log-odds scale."""
        return self.margin / ELO_PER_LOGIT

    @property
    def is_set(self) -> bool:
        """Whether there is a target to stop at (else the design or the budget ends the run)."""
        return self.kendall_tau is not None or self.separated is not None

    def describe(self) -> str:
        parts = []
        if self.kendall_tau is not None:
            parts.append(f"P(Kendall τ ≥ {self.kendall_tau:g}) ≥ {TAU_CONFIDENCE:g}, pairs within ±{self.margin:g} "
                         "Elo counted as agreeing")
        if self.separated is not None:
            parts.append(f"every adjacent pair separated at {self.separated:g} or tied within ±{self.margin:g} Elo")
        return " or ".join(parts) or "none (the design or the budget ends the run)"

    def as_dict(self) -> dict:
        return {"kendall_tau": self.kendall_tau, "separated": self.separated, "margin_elo": self.margin,
                "confidence": TAU_CONFIDENCE if self.kendall_tau is not None else None}


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
    return Target(tau, sep, DEFAULT_MARGIN_ELO if margin is None else float(margin))


def _check_number(source, key, value, low, high, what, high_open: bool = True) -> None:
    if value is None:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)
    ok = ok and low < value and (value < high if high_open else value <= high)
    if not ok:
        raise ConfigError(f"{source}: target.{key} = {value!r}: must be {what}")


@dataclass(frozen=True)
class TargetCheck:
    """One round's reading of the target: whether it is reached, the posterior-expected τ_m, P(τ_m ≥ target)
    (for a τ target) and the pairs likely tied within the margin (as model indices, higher first)."""

    reached: bool
    expected_tau: float
    probability: float | None
    ties: list


def check_target(target: Target, theta: np.ndarray, cov: np.ndarray) -> TargetCheck:
    """Read the fit against the target (module docstring)."""
    margin = target.margin_logit
    tau = expected_kendall_tau(theta, cov, margin)
    probability = None
    reached = False
    if target.kendall_tau is not None:
        probability = probability_tau_at_least(theta, cov, target.kendall_tau, margin)
        reached = probability >= TAU_CONFIDENCE
    if target.separated is not None and len(theta) > 1:
        reached = reached or bool(np.all(adjacent_separation(theta, cov, target.separated, margin) > 0))
    return TargetCheck(reached, tau, probability, likely_ties(theta, margin))
