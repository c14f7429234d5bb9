"""Which items to send to humans: random, stratified, bias correction, Metric Match and variance matching.

Paper: Metric Match (../shared/papers/metric-match.md) §3.2 (Alg. 1), §3.3 (baselines), App. D, E.1, F (Alg. 2).

Every strategy has the same interface, on integer positions into one item pool:

* ``select(target, others, budget, metric, rng, n_draws=1) -> (n_draws, budget)`` item positions, from the target
  judge's scores ``target`` (shape ``(n,)``) and the other judges' scores ``others`` (shape ``(m, n)``); never the
  human's.
* ``estimate(target, human, others, idx, metric) -> (n_draws,)`` the reliability estimate once humans labelled the
  selected items (``T(target[S], human[S])`` except for bias correction).

Seeds are explicit: pass a ``numpy.random.Generator``. All draws for a batch of trials are made at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from judgewise.analysis.reliability import ReliabilityMetric, mean_squares
from judgewise.errors import ConfigError, InputError
from judgewise.registry import Registry


def check_budget(n_items: int, budget: int) -> None:
    """InputError unless 2 ≤ budget ≤ n_items (every metric needs two items; a subset cannot exceed the pool)."""
    if budget > n_items:
        raise InputError(f"budget {budget} is larger than the pool of {n_items} items; choose a budget ≤ {n_items}")
    if budget < 2:
        raise InputError(f"budget {budget} is too small: reliability metrics need at least 2 labelled items")


def random_subsets(n_items: int, budget: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """``n_draws`` uniform subsets of ``budget`` distinct positions out of ``n_items`` (shape ``(n_draws, budget)``)."""
    check_budget(n_items, budget)
    keys = rng.random((n_draws, n_items))
    return np.argpartition(keys, budget - 1, axis=1)[:, :budget]


def inter_model(metric: ReliabilityMetric, target: np.ndarray, others: np.ndarray, idx: np.ndarray | None = None,
                aggregation: str = "mean-of-metrics") -> np.ndarray:
    """Inter-model reliability ρ^IM of the target against the other judges (Paper §3.1, §3.2, App. E.1).

    ``aggregation="mean-of-metrics"`` (paper default): the mean over other judges M' of T(M, M') (judges whose metric
    is undefined on a subset, e.g. constant there, are left out of that subset's mean);
    ``"metric-of-mean"`` (App. E.1): T(M, mean of the other judges' scores). ``idx`` (shape ``(..., b)``) restricts
    to subsets; None means the whole pool. Returns shape ``idx.shape[:-1]`` (a scalar array for the pool).
    """
    if aggregation not in AGGREGATIONS:
        raise ConfigError(f"unknown aggregation {aggregation!r}; known: {sorted(AGGREGATIONS)}")
    return AGGREGATIONS[aggregation](metric, target, others, idx)


def _mean_of_metrics(metric, target, others, idx):
    t = target if idx is None else target[idx]
    o = others if idx is None else others[:, idx]
    values = metric.many(t[None, ...], o)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(values)
        total = np.where(finite, values, 0.0).sum(axis=0)
        count = finite.sum(axis=0)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _metric_of_mean(metric, target, others, idx):
    mean_other = others.mean(axis=0)
    if idx is None:
        return np.asarray(metric.many(target, mean_other))
    return metric.many(target[idx], mean_other[idx])


AGGREGATIONS: dict[str, Callable] = {"mean-of-metrics": _mean_of_metrics, "metric-of-mean": _metric_of_mean}


def _closest(candidates: np.ndarray, values: np.ndarray, population: float) -> np.ndarray:
    """Per draw, the candidate subset whose value is closest to the population value (Alg. 1 lines 7–10: the first
    minimum wins; undefined values never win unless every candidate is undefined, then the first candidate)."""
    delta = np.abs(values - population)
    delta = np.where(np.isfinite(delta), delta, np.inf)
    best = np.argmin(delta, axis=1)
    return candidates[np.arange(len(candidates)), best]


# ---------------------------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RandomSelection:
    """Uniform random subset (Paper §3.3, the de-facto baseline)."""

    name: str = "random"

    def select(self, target, others, budget, metric, rng, n_draws=1):
        return random_subsets(len(target), budget, n_draws, rng)

    def estimate(self, target, human, others, idx, metric):
        return metric.many(target[idx], human[idx])


@dataclass(frozen=True)
class StratifiedSelection(RandomSelection):
    """Stratified on quantile bins of the target judge's score: equal quotas per bin (Paper §3.3 footnote 3).

    ``n_bins`` quantile bins (fewer when ties merge edges); a bin smaller than its quota gives its remainder to the
    other bins; the ``budget % bins`` left-over items go to randomly chosen bins.
    """

    name: str = "stratified"
    n_bins: int = 5

    def select(self, target, others, budget, metric, rng, n_draws=1):
        check_budget(len(target), budget)
        bins = quantile_bins(target, self.n_bins)
        sizes = np.bincount(bins)
        out = np.empty((n_draws, budget), dtype=int)
        for draw in range(n_draws):
            quotas = _allocate(sizes, budget, rng)
            keys = rng.random(len(target))
            picks = [np.flatnonzero(bins == b)[np.argsort(keys[bins == b])[:q]] for b, q in enumerate(quotas) if q]
            out[draw] = np.concatenate(picks)
        return out


def quantile_bins(scores: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin index (0..K−1) of each score on its quantiles; tied edges are merged so no bin is empty."""
    edges = np.unique(np.quantile(scores, np.linspace(0, 1, n_bins + 1))[1:-1])
    bins = np.searchsorted(edges, scores, side="left")  # right-closed bins (a, b]
    _, dense = np.unique(bins, return_inverse=True)
    return dense


def _allocate(sizes: np.ndarray, budget: int, rng: np.random.Generator) -> np.ndarray:
    """Equal quotas per bin capped by bin size; what a full bin cannot take goes to bins with room, at random."""
    quotas = np.minimum(sizes, budget // len(sizes))
    while quotas.sum() < budget:
        room = np.flatnonzero(quotas < sizes)
        extra = budget - quotas.sum()
        chosen = rng.choice(room, size=min(extra, len(room)), replace=False)
        quotas[chosen] += 1
    return quotas


@dataclass(frozen=True)
class BiasCorrection(RandomSelection):
    """Random subset, estimate ρ̂ = ρ^IM + ρ̂_S − ρ̂^IM_S (Paper §3.3 "Bias correction", App. D).

    The inter-model terms use the same aggregation over other judges as Metric Match.
    """

    name: str = "bias-correction"
    aggregation: str = "mean-of-metrics"

    def estimate(self, target, human, others, idx, metric):
        population = inter_model(metric, target, others, None, self.aggregation)
        on_subset = inter_model(metric, target, others, idx, self.aggregation)
        return population + metric.many(target[idx], human[idx]) - on_subset


@dataclass(frozen=True)
class MetricMatch(RandomSelection):
    """Metric Match (Paper Alg. 1): of C random candidate subsets, keep the one whose inter-model metric is closest
    to the population inter-model metric; estimate ρ̂_{S*} = T(M, H) on it.

    ``aggregation``: "mean-of-metrics" (§3.2, default) or "metric-of-mean" (App. E.1, averaged labels).
    """

    name: str = "metric-match"
    n_candidates: int = 20
    aggregation: str = "mean-of-metrics"

    def select(self, target, others, budget, metric, rng, n_draws=1):
        if self.n_candidates < 1:
            raise ConfigError(f"n_candidates must be ≥ 1, got {self.n_candidates}")
        _require_others(others, self.name)
        candidates = random_subsets(len(target), budget, n_draws * self.n_candidates, rng)
        candidates = candidates.reshape(n_draws, self.n_candidates, budget)
        population = float(inter_model(metric, target, others, None, self.aggregation))
        values = inter_model(metric, target, others, candidates, self.aggregation)
        return _closest(candidates, values, population)


def variance_signal(target: np.ndarray, others: np.ndarray, idx: np.ndarray | None, weight_between: float,
                    weight_error: float) -> np.ndarray:
    """α·MS_B + β·MS_E of (target, M') averaged over other judges M' (Paper App. F, Alg. 2 lines 3 and 6)."""
    t = target if idx is None else target[idx]
    o = others if idx is None else others[:, idx]
    pairs = np.stack(np.broadcast_arrays(t[None, ...], o), axis=-1)
    ms = mean_squares(pairs)
    return (weight_between * ms.rows + weight_error * ms.error).mean(axis=0)


@dataclass(frozen=True)
class VarianceMatch(RandomSelection):
    """Variance matching (Paper App. F, Alg. 2): match α·MS_B + β·MS_E (α = 0.9, β = 0.1) of target vs other judges
    to its population value; independent of the metric being estimated."""

    name: str = "variance-match"
    n_candidates: int = 20
    weight_between: float = 0.9
    weight_error: float = 0.1

    def select(self, target, others, budget, metric, rng, n_draws=1):
        _require_others(others, self.name)
        candidates = random_subsets(len(target), budget, n_draws * self.n_candidates, rng)
        candidates = candidates.reshape(n_draws, self.n_candidates, budget)
        population = float(variance_signal(target, others, None, self.weight_between, self.weight_error))
        values = variance_signal(target, others, candidates, self.weight_between, self.weight_error)
        return _closest(candidates, values, population)


def _require_others(others: np.ndarray, method: str) -> None:
    if others.ndim != 2 or others.shape[0] == 0:
        raise InputError(f"{method} needs scores from at least one other judge (synthetic labels); found none")


# name → factory(**options). Users add their own strategies here.
STRATEGIES: Registry[Callable[..., RandomSelection]] = Registry("selection method", {
    "random": RandomSelection,
    "stratified": StratifiedSelection,
    "bias-correction": BiasCorrection,
    "metric-match": MetricMatch,
    "metric-match-avg-labels": lambda **kw: MetricMatch(name="metric-match-avg-labels",
                                                        aggregation="metric-of-mean", **kw),
    "variance-match": VarianceMatch,
})


def get_strategy(name: str, **options) -> RandomSelection:
    """A strategy from the registry, built with ``options`` (e.g. ``n_candidates=20``)."""
    if name not in STRATEGIES:
        raise ConfigError(f"unknown selection method {name!r}; known: {', '.join(STRATEGIES)}")
    try:
        return STRATEGIES[name](**options)
    except TypeError as exc:
        raise ConfigError(f"selection method {name!r} does not take these options {sorted(options)}: {exc}") from None
