"""Reliability metrics equal reference implementations (pingouin, krippendorff, scipy, scikit-learn) to 1e-9."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from judgewise.analysis.reliability import (ALPHA_LEVELS, ICC_FORMS, METRICS, cohen_kappa, get_metric, icc,
                                            kendall_tau_b_batch, krippendorff_alpha, pearson_r_batch,
                                            spearman_rho_batch)
from judgewise.errors import ConfigError, InputError
from judgewise.ratings import agreement

pg = pytest.importorskip("pingouin")
krippendorff = pytest.importorskip("krippendorff")
sk_metrics = pytest.importorskip("sklearn.metrics")

PINGOUIN_NAMES = {"1,1": "ICC(1,1)", "1,k": "ICC(1,k)", "2,1": "ICC(A,1)", "2,k": "ICC(A,k)", "3,1": "ICC(C,1)",
                  "3,k": "ICC(C,k)"}
TOL = 1e-9


def _ratings(seed: int, n: int, k: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(n, 1))
    if kind == "likert":
        return np.clip(np.round(3 + truth + rng.normal(scale=0.8, size=(n, k))), 1, 5)
    if kind == "binary":
        return (truth + rng.normal(size=(n, k)) > 0).astype(float)
    return truth + rng.normal(scale=0.7, size=(n, k)) + rng.normal(size=(1, k))  # continuous, rater offsets


def _pingouin_icc(x: np.ndarray) -> pd.Series:
    n, k = x.shape
    long = pd.DataFrame({"t": np.repeat(np.arange(n), k), "r": np.tile(np.arange(k), n), "s": x.ravel()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pg.intraclass_corr(long, targets="t", raters="r", ratings="s").set_index("Type")["ICC"]


CASES = [(seed, n, k, kind) for seed, (n, k) in enumerate([(3, 3), (3, 2), (10, 2), (40, 2), (25, 3), (12, 5)])
         for kind in ("likert", "binary", "continuous")]


@pytest.mark.parametrize("seed, n, k, kind", CASES)
def test_icc_all_six_forms_equal_pingouin(seed, n, k, kind):
    x = _ratings(seed, n, k, kind)
    ref = _pingouin_icc(x)
    for form, name in PINGOUIN_NAMES.items():
        if np.isfinite(ref[name]):
            assert icc(x, form) == pytest.approx(ref[name], abs=TOL), form
        else:  # zero denominator (no between-item variance): pingouin divides by 0, we say NaN
            assert np.isnan(icc(x, form)), form


def test_icc_with_one_constant_rater_equals_pingouin():
    x = np.column_stack([np.arange(10.0), np.full(10, 3.0)])
    ref = _pingouin_icc(x)
    for form, name in PINGOUIN_NAMES.items():
        assert icc(x, form) == pytest.approx(ref[name], abs=TOL)


def test_icc_is_nan_when_every_item_gets_the_same_mean_and_rejects_missing_data():
    assert all(np.isnan(icc(np.full((6, 2), 4.0), f)) for f in ICC_FORMS)
    with pytest.raises(InputError, match="complete data"):
        icc(np.array([[1.0, 2.0], [np.nan, 3.0], [2.0, 2.0]]))
    with pytest.raises(ConfigError, match="unknown ICC form"):
        icc(np.ones((3, 2)), "4,k")


@pytest.mark.parametrize("seed, n, k, kind", CASES)
@pytest.mark.parametrize("level", list(ALPHA_LEVELS))
def test_krippendorff_alpha_equals_reference_with_missing_values(seed, n, k, kind, level):
    x = _ratings(seed, n, k, kind)
    if level == "ratio":
        x = np.abs(x) + 0.5 * (kind == "continuous")
    x[np.random.default_rng(seed + 99).random(x.shape) < 0.2] = np.nan
    try:
        ref = krippendorff.alpha(reliability_data=x.T, level_of_measurement=level)
    except ValueError:  # reference refuses degenerate data (one value, or no pairable unit): we return NaN
        assert np.isnan(krippendorff_alpha(x, level))
        return
    ours = krippendorff_alpha(x, level)
    assert (np.isnan(ours) and np.isnan(ref)) or ours == pytest.approx(ref, abs=TOL)


def test_krippendorff_alpha_of_identical_values_is_nan_and_perfect_agreement_is_one():
    assert np.isnan(krippendorff_alpha(np.full((5, 2), 2.0)))
    x = np.repeat(np.arange(5.0)[:, None], 3, axis=1)
    assert all(krippendorff_alpha(x + 1, level) == pytest.approx(1.0) for level in ALPHA_LEVELS)


@pytest.mark.parametrize("seed, n, k, kind", [c for c in CASES if c[1] >= 3])
def test_batched_correlations_equal_scipy_and_the_agreement_module(seed, n, k, kind):
    x = _ratings(seed, n, k, kind)
    a, b = x[:, 0], x[:, 1]
    for batch, scalar, ref in [(spearman_rho_batch, agreement.spearman_rho, stats.spearmanr),
                               (kendall_tau_b_batch, agreement.kendall_tau_b, stats.kendalltau),
                               (pearson_r_batch, agreement.pearson_r, stats.pearsonr)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = ref(a, b)[0]
        got = batch(a, b)
        if np.isnan(expected):
            assert np.isnan(got) and np.isnan(scalar(a, b))
        else:
            assert got == pytest.approx(expected, abs=TOL) and scalar(a, b) == pytest.approx(expected, abs=TOL)


def test_correlations_of_a_constant_rater_are_nan():
    a, c = np.arange(6.0), np.full(6, 2.0)
    for name in ("rho", "tau", "r", "icc"):
        assert np.isnan(get_metric(name)(a, c) if name != "icc" else get_metric(name)(c, c)), name


@pytest.mark.parametrize("seed, kind", [(1, "likert"), (2, "binary"), (3, "likert")])
def test_kappa_mse_and_accuracy_equal_scikit_learn(seed, kind):
    x = _ratings(seed, 50, 2, kind)
    a, b = x[:, 0], x[:, 1]
    assert cohen_kappa(a, b) == pytest.approx(sk_metrics.cohen_kappa_score(a, b), abs=TOL)
    assert cohen_kappa(a, b, "quadratic") == pytest.approx(
        sk_metrics.cohen_kappa_score(a, b, weights="quadratic"), abs=TOL)
    assert get_metric("mse")(a, b) == pytest.approx(sk_metrics.mean_squared_error(a, b), abs=TOL)
    assert get_metric("accuracy")(a, b) == pytest.approx(sk_metrics.accuracy_score(a, b), abs=TOL)


def test_kappa_is_nan_when_both_raters_use_one_category():
    assert np.isnan(cohen_kappa(np.ones(5), np.ones(5)))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 12))
def test_every_registered_metric_gives_the_same_value_batched_and_one_subset_at_a_time(seed, b):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 5, size=(4, b)).astype(float)
    y = rng.integers(1, 5, size=(4, b)).astype(float)
    for name, metric in METRICS.items():
        many = metric.many(x, y)
        one = np.array([metric(x[i], y[i]) for i in range(4)])
        assert np.allclose(many, one, atol=1e-12, equal_nan=True), name


def test_unknown_metric_names_the_known_ones():
    with pytest.raises(ConfigError, match="known: .*icc"):
        get_metric("krippendorf")


def test_metric_rejects_mismatched_or_too_short_vectors():
    with pytest.raises(InputError, match="same length"):
        get_metric("icc")(np.ones(3), np.ones(4))
    with pytest.raises(InputError, match="at least 2"):
        get_metric("tau")(np.ones(1), np.ones(1))
