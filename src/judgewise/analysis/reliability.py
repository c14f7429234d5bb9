"""Judge reliability metrics (ICC, Krippendorff's α, ρ, τ-b, r, MSE, Cohen's κ, accuracy), vectorised over subsets.

Paper: Metric Match (../shared/papers/metric-match.md), App. A (formulas) and App. G (MSE).

Every two-rater metric ``T(x, y)`` takes judge scores ``x`` and reference (human) scores ``y`` and works on arrays of
shape ``(..., b)``: the leading axes are independent subsets (candidate subsets × trials in a study), the last axis the
``b`` items. This lets a study evaluate thousands of subsets in one numpy call.

NaN and degenerate inputs, explicitly:

* ICC, Pearson r, Spearman ρ, Kendall τ-b: NaN when a denominator is 0 (a constant rater for r/ρ/τ; for ICC a zero
  denominator, e.g. no variance between item means for the average forms). ICC is unbounded below on small
  subsets (MS_R → 0), which makes mean errors heavy-tailed at tiny budgets. NaN inside the data propagates (ICC raises on NaN in the matrix form: it needs complete
  data).
* Krippendorff's α treats NaN as a missing rating (as its definition allows); NaN when fewer than two pairable values
  or when every pairable value is the same (expected disagreement 0).
* Cohen's κ: NaN when the expected disagreement is 0 (both raters use one category); MSE and accuracy are always
  defined for non-empty input.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from judgewise.errors import ConfigError, InputError
from judgewise.ratings import agreement

# ---------------------------------------------------------------------------------------------------------------
# ICC (Paper App. A, Shrout & Fleiss forms)
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeanSquares:
    """Two-way ANOVA mean squares of an items × raters matrix (Paper App. A notation); arrays over leading axes.

    ``rows`` = MS_R (between items), ``cols`` = MS_C (between raters), ``error`` = MS_E (residual),
    ``within`` = MS_W (within items, the one-way model's residual = (SS_C + SS_E) / (n(k − 1))).
    """

    rows: np.ndarray
    cols: np.ndarray
    error: np.ndarray
    within: np.ndarray
    n: int
    k: int


def mean_squares(ratings) -> MeanSquares:
    """ANOVA mean squares of ``ratings`` with shape ``(..., n, k)`` (n items, k raters, complete data)."""
    x = np.asarray(ratings, dtype=float)
    if x.ndim < 2 or x.shape[-1] < 2 or x.shape[-2] < 2:
        raise InputError(f"ICC needs an items × raters matrix with ≥ 2 items and ≥ 2 raters, got shape {x.shape}")
    n, k = x.shape[-2], x.shape[-1]
    grand = x.mean(axis=(-2, -1), keepdims=True)
    item_means = x.mean(axis=-1, keepdims=True)   # S_i
    rater_means = x.mean(axis=-2, keepdims=True)  # M_j
    ss_rows = k * ((item_means - grand) ** 2).sum(axis=(-2, -1))
    ss_cols = n * ((rater_means - grand) ** 2).sum(axis=(-2, -1))
    ss_total = ((x - grand) ** 2).sum(axis=(-2, -1))
    ss_error = ss_total - ss_rows - ss_cols
    return MeanSquares(rows=ss_rows / (n - 1), cols=ss_cols / (k - 1), error=ss_error / ((n - 1) * (k - 1)),
                       within=(ss_cols + ss_error) / (n * (k - 1)), n=n, k=k)


def _ratio(num, den):
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)
    return out if out.ndim else float(out)


# form → ICC from mean squares (Paper App. A table; one-way forms use MS_W, the one-way residual of Shrout & Fleiss
# 1979 — the paper's table writes MS_E there, which is the two-way residual).
ICC_FORMS: dict[str, Callable[[MeanSquares], np.ndarray]] = {
    "1,1": lambda m: _ratio(m.rows - m.within, m.rows + (m.k - 1) * m.within),
    "1,k": lambda m: _ratio(m.rows - m.within, m.rows),
    "2,1": lambda m: _ratio(m.rows - m.error, m.rows + (m.k - 1) * m.error + m.k / m.n * (m.cols - m.error)),
    "2,k": lambda m: _ratio(m.rows - m.error, m.rows + (m.cols - m.error) / m.n),
    "3,1": lambda m: _ratio(m.rows - m.error, m.rows + (m.k - 1) * m.error),
    "3,k": lambda m: _ratio(m.rows - m.error, m.rows),
}


def icc(ratings, form: str = "3,k"):
    """Intraclass correlation of an items × raters matrix ``(..., n, k)`` in a Shrout–Fleiss form (Paper App. A).

    Default ICC(3,k): two-way, consistency, average of k fixed raters — the paper's choice. NaN when the form's
    denominator is 0 (for the average forms: MS_R = 0, i.e. every item has the same mean rating). Raises InputError on NaN (ICC needs complete data).
    """
    if form not in ICC_FORMS:
        raise ConfigError(f"unknown ICC form {form!r}; known: {sorted(ICC_FORMS)}")
    x = np.asarray(ratings, dtype=float)
    if np.isnan(x).any():
        raise InputError("ICC needs complete data: the ratings matrix holds NaN (missing ratings)")
    return ICC_FORMS[form](mean_squares(x))


def icc_pair(x, y, form: str = "3,k"):
    """ICC between two raters' score vectors (shape ``(..., b)``), e.g. judge and human (Paper App. A, k = 2)."""
    return icc(np.stack(np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float)), axis=-1), form)


# ---------------------------------------------------------------------------------------------------------------
# Krippendorff's α (Paper App. A): α = 1 − (N − 1) Σ_u 1/(m_u − 1) Σ_{pairs in u} δ² / Σ_{pairs of values} δ²
# ---------------------------------------------------------------------------------------------------------------

def _pairable(x: np.ndarray) -> np.ndarray:
    valid = ~np.isnan(x)
    return valid & (valid.sum(axis=-1, keepdims=True) >= 2)


def _midranks(x: np.ndarray, pairable: np.ndarray) -> np.ndarray:
    """Average ranks of the pairable values among all pairable values of each leading-axes slice."""
    flat = np.where(pairable, x, np.inf).reshape(*x.shape[:-2], -1)
    ranks = stats.rankdata(flat, method="average", axis=-1)
    return ranks.reshape(x.shape)


def _within_unit(x, pairable, delta) -> np.ndarray:
    """Σ_u 1/(m_u − 1) Σ_{j ≠ l} δ²(x_uj, x_ul) over pairable ratings (the observed-disagreement numerator)."""
    both = pairable[..., :, None] & pairable[..., None, :]
    d = np.where(both, delta(x[..., :, None], x[..., None, :]), 0.0).sum(axis=(-2, -1))
    m = pairable.sum(axis=-1)
    return np.where(m >= 2, d / np.maximum(m - 1, 1), 0.0).sum(axis=-1)


def _pooled_squared(v, w, x):
    """Σ over all ordered pairs of pooled values of (v − w)²: 2N Σ (v − v̄)² (weights w ∈ {0, 1})."""
    n = w.sum(axis=-1)
    mean = (v * w).sum(axis=-1) / np.maximum(n, 1)
    return 2 * n * (w * (v - mean[..., None]) ** 2).sum(axis=-1)


def _pooled_nominal(v, w, x):
    """Σ over ordered pairs of pooled values of 1[v ≠ w]: N² − Σ_c n_c² (counts from min/max ranks)."""
    hi = stats.rankdata(v, method="max", axis=-1)
    lo = stats.rankdata(v, method="min", axis=-1)
    n = w.sum(axis=-1)
    return n ** 2 - (w * (hi - lo + 1)).sum(axis=-1)


def _pooled_ratio(v, w, x):
    """Σ over ordered pairs of pooled values of ((v − w)/(v + w))² (pairwise; O(N²) per subset)."""
    d = _ratio_delta(v[..., :, None], v[..., None, :])
    return (d * (w[..., :, None] * w[..., None, :])).sum(axis=(-2, -1))


def _ratio_delta(a, b):
    s = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(s != 0, ((a - b) / np.where(s != 0, s, 1.0)) ** 2, 0.0)  # 0/0 → 0, as krippendorff


@dataclass(frozen=True)
class AlphaLevel:
    """A level of measurement: its δ² on (transformed) values and its Σ δ² over pooled pairs."""

    delta: Callable
    pooled: Callable
    ranks: bool = False  # ordinal: δ² is the squared difference of midranks (Paper App. A ordinal δ)


ALPHA_LEVELS: dict[str, AlphaLevel] = {
    "nominal": AlphaLevel(lambda a, b: (a != b).astype(float), _pooled_nominal),
    "ordinal": AlphaLevel(lambda a, b: (a - b) ** 2, _pooled_squared, ranks=True),
    "interval": AlphaLevel(lambda a, b: (a - b) ** 2, _pooled_squared),
    "ratio": AlphaLevel(_ratio_delta, _pooled_ratio),
}


def krippendorff_alpha(ratings, level: str = "interval"):
    """Krippendorff's α of an items × raters matrix ``(..., n, k)``; NaN marks a missing rating (Paper App. A).

    Levels: nominal, ordinal, interval, ratio. The ordinal δ² of the paper, (Σ_{g=v..k} n_g − (n_v + n_k)/2)², is
    the squared difference of the two values' midranks among the pairable values, which is how it is computed.
    NaN when fewer than two pairable values exist or all pairable values are equal.
    """
    if level not in ALPHA_LEVELS:
        raise ConfigError(f"unknown Krippendorff level {level!r}; known: {sorted(ALPHA_LEVELS)}")
    spec = ALPHA_LEVELS[level]
    x = np.asarray(ratings, dtype=float)
    if x.ndim < 2:
        raise InputError(f"Krippendorff's α needs an items × raters matrix, got shape {x.shape}")
    pairable = _pairable(x)
    values = _midranks(x, pairable) if spec.ranks else np.where(pairable, x, 0.0)
    observed = _within_unit(values, pairable, spec.delta)
    flat_w = pairable.reshape(*x.shape[:-2], -1).astype(float)
    flat_v = values.reshape(*x.shape[:-2], -1)
    if level == "nominal":
        flat_v = np.where(flat_w > 0, flat_v, np.inf)
    expected = spec.pooled(flat_v, flat_w, x)
    n_pairable = flat_w.sum(axis=-1)
    return 1.0 - _ratio((n_pairable - 1) * observed, np.where(n_pairable >= 2, expected, 0.0))


def alpha_pair(x, y, level: str = "interval"):
    """Krippendorff's α between two raters' score vectors (shape ``(..., b)``; NaN = missing)."""
    return krippendorff_alpha(np.stack(np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float)), axis=-1),
                              level)


# ---------------------------------------------------------------------------------------------------------------
# Correlations over many subsets at once. Scalar reference: judgewise.ratings.agreement (equal to 1e-12, tested).
# ---------------------------------------------------------------------------------------------------------------

def pearson_r_batch(x, y):
    """Pearson's r along the last axis (Paper App. A table); NaN when either side is constant."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    sxx, syy = (xc * xc).sum(axis=-1), (yc * yc).sum(axis=-1)
    den = np.sqrt(sxx * syy)
    # exact zero variance → NaN (scipy's rule); clip rounding past ±1
    return np.clip(_ratio((xc * yc).sum(axis=-1), np.where((sxx > 0) & (syy > 0), den, 0.0)), -1.0, 1.0)


def spearman_rho_batch(x, y):
    """Spearman's ρ along the last axis: Pearson r of average ranks (Paper App. A); NaN for a constant side."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    return pearson_r_batch(stats.rankdata(x, axis=-1), stats.rankdata(y, axis=-1))


def _kendall_batch(x, y, chunk_cells: int, variant: str):
    """Kendall's τ along the last axis from sign products over all ordered pairs (τ-a or τ-b)."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    lead, b = x.shape[:-1], x.shape[-1]
    xf, yf = x.reshape(-1, b), y.reshape(-1, b)
    out = np.empty(len(xf))
    step = max(1, chunk_cells // max(b * b, 1))
    for start in range(0, len(xf), step):
        sx = np.sign(xf[start:start + step, :, None] - xf[start:start + step, None, :]).astype(np.int8)
        sy = np.sign(yf[start:start + step, :, None] - yf[start:start + step, None, :]).astype(np.int8)
        num = np.einsum("nij,nij->n", sx, sy, dtype=np.int64)
        if variant == "a":
            den = np.full(len(num), float(b * (b - 1)))
        else:
            den = np.sqrt(np.abs(sx).sum(axis=(1, 2), dtype=np.int64).astype(float)
                          * np.abs(sy).sum(axis=(1, 2), dtype=np.int64))
        out[start:start + step] = _ratio(num, den)
    return out.reshape(lead) if lead else float(out[0])


def kendall_tau_b_batch(x, y, chunk_cells: int = 4_000_000):
    """Kendall's τ-b along the last axis: Σ sgn(Δx)sgn(Δy) / √(Σ sgn(Δx)² Σ sgn(Δy)²) (Paper App. A, with the
    tie correction of τ-b; equals (n_C − n_D)/(n(n−1)/2) without ties). NaN when either side is constant."""
    return _kendall_batch(x, y, chunk_cells, "b")


def kendall_tau_a_batch(x, y, chunk_cells: int = 4_000_000):
    """Kendall's τ-a along the last axis: (n_C − n_D) / (n(n−1)/2) — Metric Match App. A Eq. 3 as written, tied
    pairs counting as neither concordant nor discordant (so ties pull τ-a towards 0, unlike τ-b)."""
    return _kendall_batch(x, y, chunk_cells, "a")


# ---------------------------------------------------------------------------------------------------------------
# Error and agreement on categories
# ---------------------------------------------------------------------------------------------------------------

def mse(x, y):
    """Mean squared error between judge and human scores along the last axis (Paper App. G)."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    return ((x - y) ** 2).mean(axis=-1)


def accuracy(x, y):
    """Fraction of items where the two raters give exactly the same value (categorical agreement)."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    return (x == y).mean(axis=-1)


def cohen_kappa(x, y, weights: str | None = None) -> float:
    """Cohen's κ between two raters' categorical scores; ``weights`` None (unweighted) or "quadratic".

    Categories are the sorted distinct values of both raters; quadratic weights are (i − j)² on category *indices*
    (as scikit-learn's ``cohen_kappa_score``). κ = 1 − Σ w·O / Σ w·E; NaN when Σ w·E = 0.
    """
    if weights not in (None, "quadratic"):
        raise ConfigError(f"unknown κ weights {weights!r}; use None or 'quadratic'")
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.ndim != 1 or len(x) == 0:
        raise InputError(f"κ needs two non-empty 1-D vectors of equal length, got {x.shape} and {y.shape}")
    cats, codes = np.unique(np.concatenate([x, y]), return_inverse=True)
    c = len(cats)
    observed = np.zeros((c, c))
    np.add.at(observed, (codes[:len(x)], codes[len(x):]), 1.0)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    idx = np.arange(c)
    w = (idx[:, None] - idx[None, :]) ** 2 if weights == "quadratic" else (idx[:, None] != idx[None, :])
    return float(1.0 - _ratio((w * observed).sum(), (w * expected).sum()))


def fleiss_kappa(counts) -> float:
    """Fleiss' κ of an items × categories table of counts: ``counts[i, c]`` raters put item i in category c.

    Fleiss (1971), "Measuring nominal scale agreement among many raters": with n raters per item,
    P̄ = mean_i (Σ_c n_ic² − n) / (n(n − 1)), P̄_e = Σ_c p_c², p_c the share of all ratings in c;
    κ = (P̄ − P̄_e) / (1 − P̄_e), NaN when P̄_e = 1 (every rating in one category). Every item must have the same
    number n ≥ 2 of ratings (as ``statsmodels.stats.inter_rater.fleiss_kappa``).
    """
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or counts.shape[0] == 0:
        raise InputError(f"Fleiss' κ needs a non-empty items × categories table of counts, got shape {counts.shape}")
    per_item = counts.sum(axis=1)
    n = per_item[0]
    if n < 2 or not np.all(per_item == n):
        raise InputError("Fleiss' κ needs the same number (≥ 2) of ratings on every item, got "
                         f"{sorted(set(per_item.astype(int).tolist()))[:5]}")
    p_item = ((counts ** 2).sum(axis=1) - n) / (n * (n - 1))
    p_cat = counts.sum(axis=0) / counts.sum()
    expected = float((p_cat ** 2).sum())
    return float(1.0 - _ratio(1.0 - p_item.mean(), 1.0 - expected))


# ---------------------------------------------------------------------------------------------------------------
# Registry: name → two-rater metric with a batched form for studies
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReliabilityMetric:
    """A two-rater reliability metric T(judge, human).

    ``batch(x, y)`` works on ``(..., b)`` arrays; ``scalar`` (optional) is the reference single-subset function,
    used by :meth:`__call__` when given (otherwise ``batch`` on 1-D input). ``batch=None`` means "loop ``scalar``".
    """

    name: str
    description: str
    batch: Callable | None = None
    scalar: Callable | None = None

    def __call__(self, x, y) -> float:
        x, y = np.asarray(x, float), np.asarray(y, float)
        if x.shape != y.shape or x.ndim != 1:
            raise InputError(f"{self.name}: score vectors must be 1-D and the same length, got {x.shape}, {y.shape}")
        if len(x) < 2:
            raise InputError(f"{self.name}: need at least 2 items, got {len(x)}")
        with warnings.catch_warnings():  # scipy warns on constant input; the documented result is NaN
            warnings.simplefilter("ignore", stats.ConstantInputWarning)
            return float(self.scalar(x, y) if self.scalar is not None else self.batch(x, y))

    def many(self, x, y) -> np.ndarray:
        """The metric for every leading-axes slice of ``x``/``y`` (shape ``(..., b)``)."""
        if self.batch is not None:
            return np.asarray(self.batch(x, y), dtype=float)
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        flat = [self.scalar(a, b) for a, b in zip(x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1]))]
        return np.asarray(flat, dtype=float).reshape(x.shape[:-1])


METRICS: dict[str, ReliabilityMetric] = {}


def register_metric(metric: ReliabilityMetric, *aliases: str) -> ReliabilityMetric:
    """Add a metric (and optional alias names) to the registry; returns it."""
    for name in (metric.name, *aliases):
        METRICS[name] = metric
    return metric


def get_metric(name: str) -> ReliabilityMetric:
    """The registered metric called ``name``; ConfigError listing the known names otherwise."""
    try:
        return METRICS[name]
    except KeyError:
        raise ConfigError(f"unknown reliability metric {name!r}; known: {', '.join(sorted(METRICS))}") from None


def _register_builtin() -> None:
    for form in ICC_FORMS:
        code = "icc" + form.replace(",", "")
        register_metric(ReliabilityMetric(code, f"ICC({form}), Shrout–Fleiss (App. A)",
                                          lambda x, y, f=form: icc_pair(x, y, f)),
                        *(("icc",) if form == "3,k" else ()))
    for level in ALPHA_LEVELS:
        register_metric(ReliabilityMetric(f"alpha-{level}", f"Krippendorff's α, {level} (App. A)",
                                          lambda x, y, lv=level: alpha_pair(x, y, lv)),
                        *(("alpha",) if level == "interval" else ()))
    register_metric(ReliabilityMetric("rho", "Spearman's ρ (App. A)", spearman_rho_batch, agreement.spearman_rho))
    register_metric(ReliabilityMetric("tau", "Kendall's τ-b (App. A, tie-corrected)", kendall_tau_b_batch,
                                      agreement.kendall_tau_b), "tau-b")
    register_metric(ReliabilityMetric("tau-a", "Kendall's τ-a (App. A Eq. 3 as written)", kendall_tau_a_batch))
    register_metric(ReliabilityMetric("r", "Pearson's r (App. A)", pearson_r_batch, agreement.pearson_r),
                    "pearson")
    register_metric(ReliabilityMetric("mse", "mean squared error (App. G)", mse))
    register_metric(ReliabilityMetric("kappa", "Cohen's κ, unweighted", None, cohen_kappa))
    register_metric(ReliabilityMetric("kappa-quadratic", "Cohen's κ, quadratic weights", None,
                                      lambda x, y: cohen_kappa(x, y, "quadratic")))
    register_metric(ReliabilityMetric("accuracy", "exact-match agreement", accuracy))


_register_builtin()
