"""Poisson draws for the bootstraps: inversion of per-mean CDF tables with guide tables, in one compiled pass.

The bootstraps draw Poisson(λ_k) for every category k of every replicate, where the means take few distinct
values (a battle category's mean is its count, every prompt's mean is 1). For each distinct mean the CDF
F(j) = P(X ≤ j) is tabulated (scipy's regularised-gamma CDF, up to the first j where F(j) is 1.0 in double
precision) with a guide table g[i] = min{j : F(j) > i/G}, G the table length (Devroye 1986, §III.2.4, "the
method of guide tables"). A draw is one uniform U, j = g[⌊U·G⌋], then j += 1 while F(j) ≤ U: the least j with
F(j) > U, i.e. exact inversion (up to double rounding, as numpy's own samplers); about one comparison per draw
on average, against the logs and exponentials per draw of ``Generator.poisson``.
"""

from __future__ import annotations

import functools

import numpy as np

MAX_TABLE_MEANS = 4096  # distinct means worth a table each; beyond, numpy's sampler
#: fewer draws in all than this: numpy's sampler (compiling or loading the kernel costs more than it saves)
MIN_COMPILED_DRAWS = 10_000_000


@functools.lru_cache(maxsize=MAX_TABLE_MEANS)
def _cdf_table(mean: float) -> np.ndarray:
    """F(0), F(1), … of Poisson(mean), up to and including the first value that is 1.0 in double precision
    (``scipy.special.pdtr``, the regularised upper incomplete gamma Q(k + 1, mean))."""
    from scipy.special import pdtr

    size = int(mean + 12.0 * np.sqrt(mean) + 40.0)
    cdf = pdtr(np.arange(size), mean)
    while cdf[-1] < 1.0:
        size *= 2
        cdf = pdtr(np.arange(size), mean)
    return cdf[: int(np.searchsorted(cdf, 1.0)) + 1]


def _tables(distinct: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every distinct mean's CDF and guide table, concatenated: (cdf, guide, start of each, length of each)."""
    cdfs = [_cdf_table(float(mean)) for mean in distinct]
    lengths = np.array([len(c) for c in cdfs], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    guides = [np.searchsorted(c, np.arange(len(c)) / len(c), side="right") for c in cdfs]
    return np.concatenate(cdfs), np.concatenate(guides).astype(np.int64), starts, lengths


@functools.cache
def _kernel():
    """The compiled inversion pass (numba is imported on first use: most commands never draw)."""
    import numba

    @numba.njit(cache=True, nogil=True)
    def invert(uniform, table_of, cdf, guide, start, length):  # pragma: no cover - compiled
        """Each uniform replaced, in place, by its draw."""
        for r in range(uniform.shape[0]):
            for k in range(uniform.shape[1]):
                t = table_of[k]
                s, n = start[t], length[t]
                u = uniform[r, k]
                j = guide[s + min(int(u * n), n - 1)]
                while cdf[s + j] <= u:
                    j += 1
                uniform[r, k] = j
        return uniform

    return invert


def poisson_draws(rng: np.random.Generator, means: np.ndarray, rounds: int, compiled: bool = True) -> np.ndarray:
    """``rounds`` independent Poisson(means[k]) draws per category: a (rounds × categories) float64 array of
    integers (exact below 2⁵³; the layout and type the bootstrap's products use) (module doc). numpy's sampler
    instead when ``compiled`` is False (a caller drawing fewer than MIN_COMPILED_DRAWS in all) or with more than
    MAX_TABLE_MEANS distinct means (e.g. fractional weights)."""
    means = np.asarray(means, dtype=np.float64)
    if compiled:
        distinct, table_of = np.unique(means, return_inverse=True)
        compiled = len(distinct) <= MAX_TABLE_MEANS
    if not compiled:
        return rng.poisson(means, size=(rounds, len(means))).astype(np.float64)
    cdf, guide, start, length = _tables(distinct)
    draws = rng.random((rounds, len(means)))
    return _kernel()(draws, table_of.astype(np.int64), cdf, guide, start, length)
