"""Bootstrap uncertainty for any rating method: cluster (prompt) or battle resampling, batched over replicates.

* ``unit="prompt"`` (default, cluster bootstrap): draw the prompts with replacement — verdicts on one prompt are
  not independent (same responses, same difficulty), so resampling whole prompts keeps that dependence.
  Drawn as a multinomial (n_prompts, uniform) vector of prompt multiplicities per replicate.
* ``unit="battle"``: draw the judgments with replacement, as a multinomial over the aggregated battle
  categories' counts (``aggregate.battle_categories``), not over rows — the same distribution, far fewer draws.

Methods with a :class:`StatsForm` turn a batch of draws into a batch of statistics with one sparse product and
fit the whole batch at once; the others are refitted replicate by replicate from integer row multiplicities.
Intervals are percentile intervals at ``ci_level`` (:func:`percentile_interval`; :func:`normal_interval` for
statistics whose replicates are biased away from the estimate); the bootstrap median is reported too. Seeded with
``numpy.random.Generator`` only.
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from judgewise.errors import ConfigError
from judgewise.ratings.method import MethodResult, RatingData
from judgewise.ratings.poisson import MIN_COMPILED_DRAWS, poisson_draws
from judgewise.ratings.threads import single_blas_thread

if TYPE_CHECKING:
    from scipy import sparse

UNITS = ("prompt", "battle")
CHUNK_CELLS = 2_000_000  # draws per chunk (rounds × units): bounds memory whatever the data size
CHUNK_ROUNDS = 128
WORKERS = 2  # threads for batched replicates (the target machine has 2 cores)


MAX_ROUNDS = 100_000  # more rounds than this change no interval and cost minutes to hours


def check_bootstrap(rounds: int, seed=0, name: str = "bootstrap") -> None:
    """ConfigError unless ``rounds`` is an integer in [0, MAX_ROUNDS] and ``seed`` a valid seed."""
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or not 0 <= rounds <= MAX_ROUNDS:
        raise ConfigError(f"{name} rounds must be an integer in [0, {MAX_ROUNDS:,}], got {rounds!r}")
    rng_from_seed(seed)


def rng_from_seed(seed) -> np.random.Generator:
    """The Generator of ``seed`` (a Generator is used as is, None is fresh entropy); ConfigError for a negative or
    non-integer seed."""
    if seed is None or isinstance(seed, np.random.Generator):
        return np.random.default_rng(seed)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"seed must be an integer ≥ 0, got {seed!r}")
    return np.random.default_rng(int(seed))


@dataclass
class BootstrapResult:
    """Replicate scores (rounds × models) and their summary at ``ci_level``."""

    replicates: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    median: np.ndarray
    ci_level: float
    unit: str
    interval: str = "percentile"
    accelerated: bool = False  # BCa: the acceleration came from a jackknife (else a = 0, :func:`jackknife`)


def _unit_matrix(data: RatingData, unit: str, matrix: sparse.csr_matrix) -> tuple[sparse.csr_matrix, np.ndarray]:
    """(units × statistics) matrix and the probabilities of drawing each unit."""
    from scipy import sparse  # on use (a bootstrap): its import is a fifth of a second of every command

    cats = data.cats
    if unit == "battle":
        return matrix, cats.count / cats.count.sum()
    per_prompt = cats.prompt_counts(data.enc.prompt, len(data.enc.prompts)) @ matrix
    present = np.flatnonzero(np.bincount(data.enc.prompt, minlength=len(data.enc.prompts)))
    per_prompt = per_prompt[present]
    return sparse.csr_matrix(per_prompt), np.full(len(present), 1.0 / len(present))


def multinomial(rng: np.random.Generator, n: int, probs: np.ndarray, rounds: int,
                compiled: bool = False) -> np.ndarray:
    """``rounds`` exact Multinomial(n, probs) draws (rounds × categories), several times faster than
    ``rng.multinomial``.

    Draw X ~ Poisson(n·probs) (:func:`judgewise.ratings.poisson.poisson_draws`); then T = ΣX. Given T = t,
    X ~ Multinomial(t, probs).
    If t < n, add n − t independent categorical draws: Multinomial(t) + Multinomial(n − t) = Multinomial(n).
    If t > n, remove t − n of the t items chosen uniformly without replacement: what remains are n exchangeable
    categorical draws, i.e. Multinomial(n). Either way the result is exactly Multinomial(n, probs); the
    correction touches only |n − t| ≈ √n items. ``compiled``: draw with the compiled sampler (worth it for large
    batches of draws, ``poisson.MIN_COMPILED_DRAWS``).
    """
    probs = probs / probs.sum()
    draws = poisson_draws(rng, n * probs, rounds, compiled)
    cumulative = np.cumsum(probs)
    for r, total in enumerate(draws.sum(axis=1)):  # integer-valued floats: sums exact below 2⁵³
        short = n - int(total)
        if short > 0:
            extra = np.searchsorted(cumulative, rng.random(short) * cumulative[-1], side="right")
            np.add.at(draws[r], np.minimum(extra, len(probs) - 1), 1.0)
        elif short < 0:
            positions = rng.choice(n - short, -short, replace=False, shuffle=False)
            np.subtract.at(draws[r], np.searchsorted(np.cumsum(draws[r]), positions, side="right"), 1.0)
    return draws


class UnitStatistics:
    """Each replicate's statistics from its unit multiplicities: draws (rounds × units) @ units (units × stats).

    In single precision when that is exact: every entry of the matrix a multiple of ½ (counts, ties as halves)
    and every sum below 2²² (the multiplicities' maximum × the largest column sum), so every partial sum is a
    float32 integer or half-integer — the same numbers at a third of the time and half the memory of the double
    product on a large prompt-unit matrix. Otherwise (fractional weights, huge counts) in double precision.
    """

    def __init__(self, units: sparse.spmatrix):
        doubled = units.data * 2.0
        self.exact32 = bool(np.all(doubled == np.round(doubled)))
        self.column_max = float(np.abs(units).sum(axis=0).max()) if units.nnz else 0.0
        self.units = units.astype(np.float32) if self.exact32 else units

    def __call__(self, draws: np.ndarray) -> np.ndarray:
        if self.exact32 and float(draws.max(initial=0.0)) * self.column_max < 2.0 ** 22:
            return np.asarray(self.units.T @ draws.astype(np.float32).T, dtype=np.float64).T
        return np.asarray(self.units.astype(np.float64, copy=False).T @ draws.T).T


def _stats_replicates(data: RatingData, result: MethodResult, rounds: int, unit: str,
                      rng: np.random.Generator, workers: int) -> np.ndarray:
    """Replicates in chunks of ≤ CHUNK_ROUNDS; chunk i draws from ``rng.spawn``'s i-th child, so the result
    does not depend on ``workers`` (threads: numpy's draws and ufuncs release the GIL)."""
    units, probs = _unit_matrix(data, unit, result.stats.matrix)
    n = int(data.cats.count.sum()) if unit == "battle" else len(probs)
    chunk = max(1, min(rounds, CHUNK_ROUNDS, CHUNK_CELLS // max(len(probs), 1)))
    sizes = [min(chunk, rounds - start) for start in range(0, rounds, chunk)]

    product = UnitStatistics(units)
    del units  # the product holds its own copy (single precision when exact)

    compiled = rounds * len(probs) >= MIN_COMPILED_DRAWS

    def run(child_and_size):
        child, size = child_and_size
        return result.stats.from_stats(product(multinomial(child, n, probs, size, compiled)))

    jobs = list(zip(rng.spawn(len(sizes)), sizes))
    if workers <= 1 or len(jobs) == 1:
        return np.concatenate([run(job) for job in jobs])
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return np.concatenate(list(pool.map(run, jobs)))


def unit_multiplicities(data: RatingData, unit: str, rng: np.random.Generator,
                        rounds: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``rounds`` replicates' integer multiplicities of the resampled units (rounds × units) and each row's unit:
    row i of replicate r is used ``multiplicity[r, row_unit[i]]`` times."""
    enc = data.enc
    if unit == "battle":
        draws = multinomial(rng, enc.n_rows, np.full(enc.n_rows, 1.0 / enc.n_rows), rounds)
        return draws.astype(np.int64), np.arange(enc.n_rows)
    present = np.flatnonzero(np.bincount(enc.prompt, minlength=len(enc.prompts)))
    drawn = np.zeros((rounds, len(enc.prompts)), dtype=np.int64)
    drawn[:, present] = multinomial(rng, len(present), np.full(len(present), 1.0 / len(present)), rounds)
    return drawn, np.asarray(enc.prompt, dtype=np.int64)


def row_multiplicities(data: RatingData, unit: str, rng: np.random.Generator, rounds: int = 1) -> np.ndarray:
    """Integer per-row multiplicities of ``rounds`` bootstrap replicates (rounds × rows), for methods refitted
    from rows; ``rounds=1`` is the replicate-by-replicate path's draw."""
    multiplicity, row_unit = unit_multiplicities(data, unit, rng, rounds)
    return multiplicity[:, row_unit]


def _batched_refits(data: RatingData, result: MethodResult, rounds: int, unit: str,
                    rng: np.random.Generator) -> np.ndarray:
    """Replicates through ``refit_batch``, ≤ CHUNK_CELLS multiplicities drawn and fitted at a time (the draws are
    batched too, so a seed gives other — equally distributed — replicates than the one-by-one path)."""
    units = data.enc.n_rows if unit == "battle" else len(data.enc.prompts)
    chunk = max(1, min(rounds, CHUNK_CELLS // max(units, 1)))
    sizes = [min(chunk, rounds - start) for start in range(0, rounds, chunk)]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return np.concatenate([_split_refit(result.refit_batch, *unit_multiplicities(data, unit, rng, size), pool)
                               for size in sizes])


def _split_refit(refit_batch, multiplicity: np.ndarray, row_unit: np.ndarray, pool) -> np.ndarray:
    """One chunk's replicates fitted in WORKERS threads, each on its share of the replicates (the compiled
    passes release the GIL); the same replicates, in the same order, as one call."""
    parts = np.array_split(np.arange(len(multiplicity)), min(WORKERS, len(multiplicity)))
    return np.concatenate(list(pool.map(lambda rows: refit_batch(multiplicity[rows], row_unit), parts)))


@single_blas_thread
def bootstrap(data: RatingData, result: MethodResult, rounds: int, *, unit: str = "prompt",
              rng: np.random.Generator, ci_level: float = 0.95, workers: int = WORKERS,
              interval: str = "bca") -> BootstrapResult:
    """Bootstrap ``rounds`` replicates of a method's scores and summarise them (module docstring): ``interval``
    "bca" (default, :func:`bca_interval`) or "percentile" (:func:`percentile_interval`, FastChat's and
    Arena-Hard-Auto's)."""
    check_bootstrap(rounds, rng)
    check_interval(interval)
    if unit not in UNITS:
        raise ConfigError(f'bootstrap unit must be one of {UNITS}, got "{unit}"')
    if not 0 < ci_level < 1:
        raise ConfigError(f"ci_level must be in (0, 1), got {ci_level}")
    reps = _replicates(data, result, rounds, unit, rng, workers)
    if interval == "percentile":
        return summarise(reps, ci_level, unit)
    jack = jackknife(data, result, unit)
    low, high = bca_interval(result.scores, reps, jack, ci_level)
    return BootstrapResult(reps, low, high, _median(reps), ci_level, unit, "bca", accelerated=jack is not None)


def _replicates(data: RatingData, result: MethodResult, rounds: int, unit: str, rng: np.random.Generator,
                workers: int) -> np.ndarray:
    """(rounds × models) bootstrap replicates of the method's scores, by its fastest path."""
    if result.stats is not None:
        reps = _stats_replicates(data, result, rounds, unit, rng, workers)
    elif result.refit_batch is not None:
        reps = _batched_refits(data, result, rounds, unit, rng)
    elif result.refit is not None:
        reps = np.stack([result.refit(row_multiplicities(data, unit, rng)[0]) for _ in range(rounds)])
    else:
        raise ConfigError("this rating method does not support the bootstrap (no stats form or refit)")
    return reps


def draw_units(rng: np.random.Generator, n_units: int, rounds: int | None = None) -> np.ndarray:
    """Indices of ``n_units`` units drawn with replacement (one replicate; ``rounds`` × ``n_units`` with
    ``rounds``): the resampling of bootstraps that refit on the drawn rows (prompts, comparisons) rather than on
    counts (:func:`multinomial`)."""
    return rng.integers(0, n_units, size=n_units if rounds is None else (rounds, n_units))


def percentile_interval(replicates, level: float, axis: int = 0):
    """Percentile bootstrap interval at ``level``: the (1 − level)/2 and (1 + level)/2 quantiles of the replicates
    along ``axis`` (NaNs ignored; NaN bounds where there is no replicate). The one definition every bootstrap in
    judgewise reports."""
    reps = np.asarray(replicates, dtype=float)
    if reps.size == 0:
        return float("nan"), float("nan")
    tail = 100.0 * (1.0 - level) / 2.0
    with warnings.catch_warnings():  # a column with no finite replicate gets NaN bounds, reported as such
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(reps, [tail, 100.0 - tail], axis=axis)
    return low, high


def normal_interval(point, replicates, level: float, bounds: tuple[float, float] = (-np.inf, np.inf)):
    """Normal ("standard") bootstrap interval at ``level``: ``point`` ± z·SD of the replicates (NaNs ignored),
    clipped to ``bounds``, the statistic's range (Efron & Tibshirani 1993, §13.2). Always contains ``point``.

    For a statistic whose replicates are biased away from the estimate, where the percentile interval can miss
    the point: a rank correlation between two rankings that each replicate re-estimates (resampling adds noise to
    both, which only lowers their agreement; at τ = 1 every replicate is ≤ 1). NaN bounds with fewer than two
    finite replicates or a NaN point."""
    reps = np.asarray(replicates, dtype=float)
    reps = reps[np.isfinite(reps)]
    if len(reps) < 2 or not np.isfinite(point):
        return float("nan"), float("nan")
    from scipy.special import ndtri  # on use: scipy.special's import is a tenth of a second of every command

    half = float(ndtri(0.5 + level / 2)) * float(np.std(reps, ddof=1))
    return float(max(point - half, bounds[0])), float(min(point + half, bounds[1]))


def summarise(reps: np.ndarray, ci_level: float, unit: str) -> BootstrapResult:
    """Percentile interval at ``ci_level`` (:func:`percentile_interval`) and median of each column of the
    replicates (NaNs ignored)."""
    low, high = percentile_interval(reps, ci_level)
    return BootstrapResult(reps, low, high, _median(reps), ci_level, unit)


def _median(reps: np.ndarray) -> np.ndarray:
    """Each column's median, NaNs ignored (NaN for a column without a finite replicate)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanpercentile(reps, 50.0, axis=0)


INTERVALS = ("bca", "percentile")
JACKKNIFE_UNITS = 1_000  # at most this many delete-one refits for BCa's acceleration (more units: a = 0; BCa costs
#                           at most a 1,000-round bootstrap more than the percentile interval)


def check_interval(interval: str) -> None:
    """ConfigError unless ``interval`` names a bootstrap interval of :data:`INTERVALS`."""
    if interval not in INTERVALS:
        raise ConfigError(f'interval (--interval) must be one of {", ".join(INTERVALS)}, got "{interval}"')


def jackknife(data: RatingData, result: MethodResult, unit: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Delete-one jackknife over the bootstrap's units, for BCa's acceleration: (replicates × models, how many
    units each replicate stands for), or None where it would cost more than the bootstrap (more than
    :data:`JACKKNIFE_UNITS` distinct units, or a method refitted one replicate at a time).

    A stats form drops one unit's statistics from the total (battles: one battle of each distinct category,
    standing for its count); a batch refit drops one unit's rows (multiplicity 0)."""
    if result.stats is not None:
        units, _ = _unit_matrix(data, unit, result.stats.matrix)
        if units.shape[0] > JACKKNIFE_UNITS:
            return None
        weight = data.cats.count.astype(float) if unit == "battle" else np.ones(units.shape[0])
        total = np.asarray(units.T @ weight).ravel()
        seen = len(result.stats.failures)
        reps = np.concatenate([result.stats.from_stats(total[None, :] - units[start:start + CHUNK_ROUNDS].toarray())
                               for start in range(0, units.shape[0], CHUNK_ROUNDS)])
        del result.stats.failures[seen:]  # the jackknife's fits are not bootstrap replicates
        return reps, weight
    if result.refit_batch is None:
        return None
    n_units = data.enc.n_rows if unit == "battle" else len(data.enc.prompts)
    present = np.arange(n_units) if unit == "battle" else \
        np.flatnonzero(np.bincount(data.enc.prompt, minlength=n_units))
    if len(present) > JACKKNIFE_UNITS:
        return None
    multiplicity = np.ones((len(present), n_units), dtype=np.int64)
    multiplicity[np.arange(len(present)), present] = 0
    row_unit = np.arange(n_units) if unit == "battle" else np.asarray(data.enc.prompt, dtype=np.int64)
    return result.refit_batch(multiplicity, row_unit), np.ones(len(present))


def acceleration(jack: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """BCa's acceleration per column from jackknife replicates (Efron & Tibshirani 1993, eq. 14.15):
    a = Σ w·d³ / (6·(Σ w·d²)^{3/2}), d = mean − replicate (weighted by ``weight``); 0 where the replicates agree."""
    d = np.average(jack, axis=0, weights=weight) - jack
    spread = (weight @ d ** 2) ** 1.5
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (weight @ d ** 3) / (6.0 * spread)
    return np.where(spread > 0, np.nan_to_num(a), 0.0)


def bca_interval(point, replicates, jack: tuple[np.ndarray, np.ndarray] | None, level: float):
    """Bias-corrected and accelerated (BCa) bootstrap interval at ``level`` for each column (Efron 1987; Efron &
    Tibshirani 1993, §14.3; DiCiccio & Efron 1996, §2): the percentile interval taken at the levels
    Φ(z₀ + (z₀ + z_α)/(1 − a(z₀ + z_α))), with z₀ = Φ⁻¹(share of replicates below the point, ties as half) the
    median-bias correction and a the acceleration (:func:`acceleration`; 0 without ``jack``: the
    bias-corrected percentile interval). Second-order accurate where the percentile interval is first-order:
    it corrects for a skewed or biased estimator (a win rate near 0 or 100%, a BT score of a model with few
    losses), where the percentile interval under-covers. A column whose replicates all equal its point gets
    that point; NaN replicates are ignored."""
    from scipy.special import ndtr, ndtri

    reps = np.asarray(replicates, dtype=float)
    point = np.asarray(point, dtype=float)
    finite = np.isfinite(reps)
    count = np.maximum(finite.sum(axis=0), 1)
    below = ((reps < point) & finite).sum(axis=0) + 0.5 * ((reps == point) & finite).sum(axis=0)
    z0 = ndtri(np.clip(below / count, 0.5 / count, 1 - 0.5 / count))
    a = np.zeros(reps.shape[1]) if jack is None else acceleration(*jack)
    z = ndtri(np.array([(1 - level) / 2, (1 + level) / 2]))[:, None]
    levels = ndtr(z0 + (z0 + z) / np.maximum(1 - a * (z0 + z), 1e-9))
    low, high = np.full(reps.shape[1], np.nan), np.full(reps.shape[1], np.nan)
    for j in np.flatnonzero(finite.any(axis=0)):
        low[j], high[j] = np.quantile(reps[finite[:, j], j], levels[:, j])
    return low, high
