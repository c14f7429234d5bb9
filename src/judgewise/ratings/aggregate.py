"""Aggregate encoded judgments to distinct battle categories and per-prompt counts (the unit of every bootstrap).

A battle category is a distinct ``(lo, hi, o_lo, weight)`` row: the two models as an *unordered* pair
(``lo < hi``), the outcome from ``lo``'s side (``o_lo = outcome`` when ``a == lo`` else ``1 - outcome``) and the
sample weight. Orientation is merged because ``(a, b, o)`` and ``(b, a, 1 - o)`` are the same judgment for every
rating in this package; merging them halves the number of categories a multinomial bootstrap has to draw.
2,000,000 battles among 150 models with outcomes in {0, ½, 1} become at most 150·149/2·3 = 33,525 categories.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import TYPE_CHECKING

import numpy as np

from judgewise.ratings.encode import EncodedJudgments

if TYPE_CHECKING:
    from scipy import sparse


@dataclass
class BattleCategories:
    """Distinct battles with their counts; ``of_row[i]`` is the category of row i of the encoded table (an integer
    array, int32 when the categories allow: it has one entry per row)."""

    lo: np.ndarray
    hi: np.ndarray
    o_lo: np.ndarray
    weight: np.ndarray
    count: np.ndarray
    of_row: np.ndarray
    n_models: int

    @property
    def n_categories(self) -> int:
        return len(self.lo)

    def prompt_counts(self, prompt: np.ndarray, n_prompts: int) -> sparse.csr_matrix:
        """Sparse (prompts × categories) matrix: how often each category occurs on each prompt."""
        from scipy import sparse  # on use (a bootstrap): its import is a fifth of a second of every command

        ones = np.ones(len(prompt))
        return sparse.csr_matrix((ones, (prompt, self.of_row)), shape=(n_prompts, self.n_categories))


def _value_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Small integer codes for float values and the distinct values; fast paths for all-ones and halves."""
    if values.min() == values.max():  # one value: code 0 everywhere (a scalar broadcasts, no 2M-row array)
        return np.zeros(1, dtype=np.int64)[0], values[:1].copy()
    if values.min() >= 0 and values.max() <= 32:  # halves: codes 0..64 fit one byte per row
        doubled = values * 2.0
        codes = doubled.astype(np.int8)
        if np.array_equal(codes, doubled):
            return codes, np.arange(codes.max() + 1) / 2.0
    distinct, codes = np.unique(values, return_inverse=True)
    return codes.astype(np.int64), distinct


def _lo_outcome_codes(enc: EncodedJudgments) -> tuple[np.ndarray, np.ndarray]:
    """Codes and values of the outcome from ``lo``'s side (``1 - outcome`` where ``a > b``). Outcomes in halves
    (win, tie, loss) are coded 2·o and flipped as 2 − code, one byte per row; others via the flipped floats."""
    codes, values = _value_codes(enc.outcome)
    if isinstance(codes, np.ndarray) and codes.dtype == np.int8 and values[-1] <= 1.0:
        flipped = np.subtract(2, codes, dtype=np.int8)
        np.copyto(flipped, codes, where=enc.a <= enc.b)
        return flipped, np.arange(3) / 2.0
    o_lo = enc.outcome.copy()
    np.subtract(1.0, enc.outcome, out=o_lo, where=enc.a > enc.b)
    return _value_codes(o_lo)


def battle_categories(enc: EncodedJudgments) -> BattleCategories:
    """Collapse the rows of ``enc`` to distinct (lo, hi, o_lo, weight) categories with row counts."""
    m = enc.n_models
    key = np.minimum(enc.a, enc.b, dtype=np.int64)  # built in place: fewer 10M-row temporaries
    key *= m
    key += np.maximum(enc.a, enc.b)
    o_code, o_values = _lo_outcome_codes(enc)
    w_code, w_values = _value_codes(enc.weight)
    n_o, n_w = len(o_values), len(w_values)
    key *= n_o
    key += o_code
    if n_w > 1:
        key *= n_w
        key += w_code
    if m * m * n_o * n_w <= 20_000_000:  # dense counting is far faster than sorting millions of keys
        counts = np.bincount(key, minlength=m * m * n_o * n_w)
        keys = np.flatnonzero(counts)
        lookup = np.zeros(len(counts), dtype=np.int32 if len(keys) < 2**31 else np.int64)
        lookup[keys] = np.arange(len(keys))
        of_row, count = lookup[key], counts[keys]
    else:
        keys, of_row, count = np.unique(key, return_inverse=True, return_counts=True)
    w_k, rest = keys % n_w, keys // n_w
    o_k, pair = rest % n_o, rest // n_o
    return BattleCategories(pair // m, pair % m, o_values[o_k].astype(np.float64), w_values[w_k].astype(np.float64),
                            count.astype(np.float64), of_row, m)


@dataclass
class PairCounts:
    """Bradley–Terry sufficient statistics: per unordered model pair, lo's (weighted) wins and the total weight."""

    lo: np.ndarray
    hi: np.ndarray
    wins: np.ndarray
    total: np.ndarray
    n_models: int

    @property
    def n_pairs(self) -> int:
        return len(self.lo)


def pair_index(cats: BattleCategories) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair id of each category, lo, hi of each distinct pair) — self-pairs (lo == hi) get id -1."""
    m = cats.n_models
    real = cats.lo != cats.hi
    code = cats.lo * m + cats.hi
    distinct, inverse = np.unique(code[real], return_inverse=True)
    pair_of_cat = np.full(cats.n_categories, -1, dtype=np.int64)
    pair_of_cat[real] = inverse
    return pair_of_cat, distinct // m, distinct % m


def pair_stats_matrix(cats: BattleCategories) -> tuple[sparse.csr_matrix, np.ndarray, np.ndarray]:
    """Sparse (categories × 2·pairs) map from one occurrence of a category to [wins | total] of its pair.

    ``counts @ matrix`` gives the stacked ``[wins, total]`` vector for any vector of category counts, so one
    sparse product turns a batch of bootstrap draws into a batch of pair statistics.
    """
    from scipy import sparse  # on use (a bootstrap): its import is a fifth of a second of every command

    pair_of_cat, lo, hi = pair_index(cats)
    real = np.flatnonzero(pair_of_cat >= 0)
    p = len(lo)
    rows = np.concatenate([real, real])
    cols = np.concatenate([pair_of_cat[real], p + pair_of_cat[real]])
    vals = np.concatenate([cats.weight[real] * cats.o_lo[real], cats.weight[real]])
    return sparse.csr_matrix((vals, (rows, cols)), shape=(cats.n_categories, 2 * p)), lo, hi


def pair_counts(cats: BattleCategories) -> PairCounts:
    """Sufficient statistics of the whole table (self-comparisons carry no information and are left out):
    ``cats.count @ pair_stats_matrix(cats)``, summed by ``np.bincount`` in the product's order (categories in
    turn), so the same numbers without scipy."""
    pair_of_cat, lo, hi = pair_index(cats)
    real = np.flatnonzero(pair_of_cat >= 0)
    pair, weight, count = pair_of_cat[real], cats.weight[real], cats.count[real]
    p = len(lo)
    wins = np.bincount(pair, weight * cats.o_lo[real] * count, p)
    return PairCounts(lo, hi, wins, np.bincount(pair, weight * count, p), cats.n_models)
