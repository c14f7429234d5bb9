"""The numpy paths that keep scipy out of a rating without a bootstrap give scipy's numbers: the logistic function,
the connectivity check, the pair counts and the incidence products of the BT fit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.special import expit as scipy_expit

from judgewise.ratings.aggregate import BattleCategories, pair_counts, pair_stats_matrix
from judgewise.ratings.bradley_terry import Incidence
from judgewise.ratings.graph import is_connected
from judgewise.ratings.logistic import expit


def test_expit_equals_scipys_over_a_wide_range_without_warnings():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0.0, scale, 200_000) for scale in (1.0, 30.0, 300.0)]
                       + [np.linspace(-800.0, 800.0, 160_001), [-np.inf, -800.0, -745.2, 709.8, 800.0, np.inf]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = expit(x)
    np.testing.assert_allclose(ours, scipy_expit(x), rtol=0, atol=1e-15)
    assert np.all(ours[x <= -800.0] == 0.0) and np.all(ours[x >= 800.0] == 1.0) and np.isnan(expit(np.nan))


@pytest.mark.parametrize("directed", [False, True])
def test_is_connected_agrees_with_scipys_components_on_random_graphs(directed):
    rng = np.random.default_rng(1)
    seen = set()
    for trial in range(400):
        n = int(rng.integers(1, 12))
        edges = int(rng.integers(0, 3 * n))
        rows, cols = rng.integers(0, n, edges), rng.integers(0, n, edges)
        graph = sparse.csr_matrix((np.ones(edges), (rows, cols)), shape=(n, n))
        k, _ = connected_components(graph, directed=directed, connection="strong" if directed else "weak")
        assert is_connected(rows, cols, n, directed=directed) == (k <= 1), (trial, n, rows, cols)
        seen.add(k <= 1)
    assert seen == {True, False}  # both answers were checked


def test_a_long_chain_is_connected_and_one_missing_link_is_not():
    n = 500
    rows, cols = np.arange(n - 1), np.arange(1, n)
    assert is_connected(rows[::-1], cols[::-1], n)
    assert not is_connected(rows, cols, n, directed=True)  # a one-way chain is not strongly connected
    assert is_connected(np.concatenate([rows, [n - 1]]), np.concatenate([cols, [0]]), n, directed=True)
    assert not is_connected(np.delete(rows, 250), np.delete(cols, 250), n)


def _categories(rng, n_models=9, n=400) -> BattleCategories:
    a, b = rng.integers(0, n_models, n), rng.integers(0, n_models, n)
    return BattleCategories(np.minimum(a, b), np.maximum(a, b), rng.choice([0.0, 0.5, 1.0, 0.3], n),
                            rng.choice([1.0, 3.0, 0.7], n), rng.integers(1, 50, n).astype(float), np.arange(n),
                            n_models)


def test_pair_counts_are_the_sparse_product_bit_for_bit():
    cats = _categories(np.random.default_rng(2))
    matrix, lo, hi = pair_stats_matrix(cats)
    stats = matrix.T @ cats.count
    pc = pair_counts(cats)
    assert np.array_equal(pc.lo, lo) and np.array_equal(pc.hi, hi)
    assert np.array_equal(pc.wins, stats[:len(lo)]) and np.array_equal(pc.total, stats[len(lo):])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_incidence_of_one_row_is_the_sparse_product_bit_for_bit(sign):
    rng = np.random.default_rng(3)
    pc = pair_counts(_categories(rng))
    x = rng.normal(size=(5, pc.n_pairs)) * 10.0 ** rng.integers(-8, 8, size=(5, pc.n_pairs))
    incidence = Incidence(pc, sign)
    batch = incidence(x)  # through the sparse matrix
    rows = np.concatenate([incidence(x[[r]]) for r in range(len(x))])  # through np.bincount
    assert incidence.matrix is not None and np.array_equal(rows, batch)
    p = pc.n_pairs
    old = sparse.csr_matrix((np.concatenate([np.ones(p), np.full(p, sign)]),
                             (np.concatenate([pc.lo, pc.hi]), np.concatenate([np.arange(p), np.arange(p)]))),
                            shape=(pc.n_models, p))
    assert np.array_equal(rows, (old @ x.T).T)
