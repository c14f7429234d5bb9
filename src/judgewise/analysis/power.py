"""Power and sample size for pairwise judge comparisons: the sign test (Anchor §4.3, Table 2) and Wilcoxon (App. C).

Two sample sizes for the one-sided sign test are offered and always labelled:

* ``"normal"`` — the normal approximation the anchor paper's Table 2 uses (rounded up):
  ``n = ((z_{1−α}·0.5 + z_{power}·sqrt(p(1−p))) / (p − 0.5))²``;
* ``"exact"`` — the smallest n whose exact binomial test (critical count from Binomial(n, ½)) reaches the
  power at win rate p.

Ties carry no information for the sign test, so the total number of prompts is ``N_total = N / I`` where
``I`` is the informativeness (share of non-tied comparisons, Anchor §4.3; I = 1 − tie rate).
"""

from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from judgewise.errors import ConfigError, InputError

SIGN_METHODS = ("normal", "exact")


@dataclass
class SignTestSize:
    """Sample size of the one-sided sign test: ``n_informative`` discordant prompts, ``n_total`` with ties."""

    method: str
    win_rate: float
    tie_rate: float
    informativeness: float
    alpha: float
    power: float
    n_informative: int
    n_total: int
    achieved_power: float

    def as_dict(self) -> dict:
        return asdict(self)


def check_unit(name: str, value: float, *, low_open=True, high_open=True) -> None:
    """ConfigError unless ``value`` lies in the unit interval, open or closed at each end as asked."""
    ok_low = value > 0 if low_open else value >= 0
    ok_high = value < 1 if high_open else value <= 1
    if not (ok_low and ok_high):
        raise ConfigError(f"{name} must be in {'(' if low_open else '['}0, 1{')' if high_open else ']'}, "
                          f"got {value}")


def sign_test_n_normal(win_rate: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Anchor §4.3 Table 2 "Base": discordant prompts for a one-sided sign test, normal approximation, rounded up."""
    z_alpha, z_power = stats.norm.ppf(1 - alpha), stats.norm.ppf(power)
    p = win_rate
    n = ((z_alpha * 0.5 + z_power * math.sqrt(p * (1 - p))) / (p - 0.5)) ** 2
    return math.ceil(n)


def sign_test_power_exact(n, win_rate: float, alpha: float = 0.05) -> np.ndarray:
    """Exact power of the one-sided sign test with ``n`` discordant prompts (vectorised over ``n``).

    Reject H0 (win rate ≤ ½) when wins ≥ c, c the smallest count with P(X ≥ c | n, ½) ≤ α.
    """
    n = np.atleast_1d(np.asarray(n, dtype=int))
    c = stats.binom.isf(alpha, n, 0.5) + 1  # smallest c with sf(c-1) <= alpha
    return stats.binom.sf(c - 1, n, win_rate)


def sign_test_n_exact(win_rate: float, alpha: float = 0.05, power: float = 0.8, n_max: int = 1_000_000) -> int:
    """Smallest n whose exact one-sided sign test reaches ``power`` (the exact power is saw-toothed in n;
    this is the first n that reaches it)."""
    if sign_test_n_normal(win_rate, alpha, power) > 2 * n_max:  # the exact n is close to the normal one
        raise ConfigError(f"no sample size up to {n_max:,} reaches power {power} at win rate {win_rate} "
                          f"(the edge over 0.5 is too small)")
    step = 4096
    for start in range(1, n_max + 1, step):
        grid = np.arange(start, min(start + step, n_max + 1))
        hit = np.nonzero(sign_test_power_exact(grid, win_rate, alpha) >= power)[0]
        if hit.size:
            return int(grid[hit[0]])
    raise ConfigError(f"no sample size up to {n_max} reaches power {power} at win rate {win_rate}")


def total_with_ties(n_informative: int, informativeness: float) -> int:
    """Anchor §4.3: ``N_total = N / I`` rounded up. Rounds the quotient to 9 decimals first so that an exact
    integer (153 / 0.45 = 340) is not pushed to the next one by floating point (1 − 0.55 < 0.45)."""
    check_unit("informativeness", informativeness, high_open=False)
    return math.ceil(round(n_informative / informativeness, 9))


def sign_test_sample_size(win_rate: float, tie_rate: float = 0.0, alpha: float = 0.05, power: float = 0.8,
                          method: str = "normal") -> SignTestSize:
    """Sample size of the one-sided sign test (Anchor §4.3, Table 2) by ``method`` ("normal" or "exact")."""
    if method not in SIGN_METHODS:
        raise ConfigError(f"method must be one of {SIGN_METHODS}, got {method!r}")
    check_unit("alpha", alpha)
    check_unit("power", power)
    check_unit("tie_rate", tie_rate, low_open=False)
    if not 0.5 < win_rate < 1:
        raise ConfigError(f"win_rate among discordant pairs must be in (0.5, 1), got {win_rate}")
    if method == "normal":
        n = sign_test_n_normal(win_rate, alpha, power)
    else:
        n = sign_test_n_exact(win_rate, alpha, power)
    informativeness = 1.0 - tie_rate
    achieved = float(sign_test_power_exact(n, win_rate, alpha)[0])
    return SignTestSize(method, win_rate, tie_rate, informativeness, alpha, power, n,
                        total_with_ties(n, informativeness), achieved)


@dataclass
class WilcoxonPower:
    """Simulated power of the one-sided Wilcoxon signed-rank test (zero_method='pratt') per sample size."""

    n_grid: list[int]
    power: list[float]
    target_power: float
    alpha: float
    n_required: int | None  # first n in the grid whose simulated power reaches the target
    n_simulations: int
    n_distributions: int

    def as_dict(self) -> dict:
        return asdict(self)


MAX_SIMULATED_CELLS = 20_000_000  # simulations × n drawn at once (160 MB of float64)
PERMUTATION_BELOW = 14  # scipy's "auto" runs a permutation test per sample below this n (~50 s per 200 samples)


def check_wilcoxon_sizes(n_grid, n_simulations: int) -> list[int]:
    """The sorted distinct sample sizes; ConfigError unless each is an integer ≥ 2 and simulations × n stays
    within MAX_SIMULATED_CELLS (``--n 100000000`` asked for 745 GiB)."""
    sizes = []
    for n in n_grid:
        if isinstance(n, bool) or not float(n).is_integer() or n < 2:
            raise ConfigError(f"`n_grid`: sample sizes must be integers ≥ 2, got {n!r}")
        sizes.append(int(n))
    if not sizes:
        raise ConfigError("`n_grid`: give at least one sample size")
    if isinstance(n_simulations, bool) or not isinstance(n_simulations, (int, np.integer)) or n_simulations < 1:
        raise ConfigError(f"`n_simulations` must be an integer ≥ 1, got {n_simulations!r}")
    if n_simulations * max(sizes) > MAX_SIMULATED_CELLS:
        raise ConfigError(f"`n={max(sizes):,}` × `n_simulations={n_simulations:,}` is too large to simulate "
                          f"(at most {MAX_SIMULATED_CELLS:,} draws at once); lower `n_grid` or `n_simulations`")
    return sorted(set(sizes))


def wilcoxon_power(distributions: list[np.ndarray], n_grid, alpha: float = 0.05, power: float = 0.8,
                   n_simulations: int = 1000, rng: np.random.Generator | None = None) -> WilcoxonPower:
    """Anchor App. C: simulated power of ``wilcoxon(S, alternative='greater', zero_method='pratt')``.

    ``distributions`` is a list of arrays of paired differences (e.g. verdict of model a minus verdict of
    model b per prompt); each simulation picks one at random and resamples ``n`` values with replacement.
    Vectorised: all simulations of one n are tested in one call. Below n = 14 the normal approximation is used
    (scipy's default there is a permutation test per sample: minutes for one grid point).
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    pools = [np.asarray(d, dtype=float) for d in distributions if len(d)]
    if not pools:
        raise InputError("no distributions of paired differences to simulate from")
    if not all(np.isfinite(p).all() for p in pools):
        raise InputError("paired differences must be finite numbers")
    check_unit("alpha", alpha)
    check_unit("power", power)
    n_grid = check_wilcoxon_sizes(n_grid, n_simulations)
    powers, n_required = [], None
    for n in n_grid:
        which = rng.integers(len(pools), size=n_simulations)
        samples = np.empty((n_simulations, n))
        for k, pool in enumerate(pools):
            rows = np.nonzero(which == k)[0]
            if rows.size:
                samples[rows] = pool[rng.integers(len(pool), size=(rows.size, n))]
        method = "approx" if n < PERMUTATION_BELOW else "auto"
        res = stats.wilcoxon(samples, axis=1, alternative="greater", zero_method="pratt", method=method)
        pvalues = np.nan_to_num(np.asarray(res.pvalue, dtype=float), nan=1.0)  # all-zero sample: no evidence
        powers.append(float(np.mean(pvalues < alpha)))
        if n_required is None and powers[-1] >= power:
            n_required = n
            break
    return WilcoxonPower(n_grid[: len(powers)], powers, power, alpha, n_required, n_simulations, len(pools))


def check_edge_window(effect: float, width: float) -> None:
    """ConfigError unless the edge window [effect, effect + width) of the model pairs used lies in [0, 0.5]."""
    if not (0 <= effect < 0.5 and 0 < width <= 0.5):  # NaN fails too
        raise ConfigError(f"`effect` must be in [0, 0.5) and `width` in (0, 0.5], got {effect} and {width}")


def distribution_from_probabilities(values, probabilities, size: int = 10_000) -> np.ndarray:
    """A pool of paired differences realising a given discrete distribution (value → probability) exactly
    up to rounding, for :func:`wilcoxon_power`."""
    values, probs = np.asarray(values, float), np.asarray(probabilities, float)
    if values.shape != probs.shape or np.any(probs < 0) or not math.isclose(probs.sum(), 1.0, abs_tol=1e-6):
        raise ConfigError(f"`distribution`: probabilities must be non-negative, one per value, and sum to 1; "
                          f"got {probs}")
    if not np.isfinite(values).all():
        raise ConfigError(f"`distribution`: values must be finite numbers, got {values}")
    counts = np.round(probs / probs.sum() * size).astype(int)
    return np.repeat(values, counts)


def edge_in_window(differences, effect: float, width: float) -> bool:
    """Whether a pair's edge ``wins / discordant − ½`` lies in [effect, effect + width) (Anchor App. C).

    Decided on the exact counts, with ``effect`` and ``width`` read as the decimals the user typed (``0.1`` is
    1/10, not the binary float just below it): a win rate of exactly 0.6 lies in the 0.10 band. No discordant
    prompt: no edge, never in a window.
    """
    d = np.asarray(differences, float)
    discordant, wins = int(np.count_nonzero(d)), int(np.sum(d > 0))
    if discordant == 0:
        return False
    edge = Fraction(wins, discordant) - Fraction(1, 2)
    low = Fraction(repr(float(effect)))
    return low <= edge < low + Fraction(repr(float(width)))
