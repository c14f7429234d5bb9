"""Contextual (style-controlled) Bradley–Terry: P(a beats b) = σ(θ_a − θ_b + βᵀx_ab) (CLB §3.2.1, after
Arena-Hard / Chatbot Arena style control). ``x_ab`` are per-judgment features (``ratings.features``): style
differences, self-preference, or numeric columns of the judgments table. θ are the style-adjusted strengths;
β (per z-scored feature, log-odds per standard deviation) are reported in ``Ranking.info["coefficients"]``.

Fitted by L-BFGS with the exact gradient over rows (features are continuous, so rows do not aggregate); ties
count as half wins; optional ridges ½·l2·‖θ‖² and ½·l2_features·‖β‖² (the style definition's, e.g. Arena-Hard's:
``ratings.features``). Bootstrap replicates refit with row multiplicities as weights, warm-started at the estimate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io.schema import require_columns
from judgewise.ratings.encode import EncodedJudgments
from judgewise.ratings.features import STYLE_FEATURES, self_preference, style_differences
from judgewise.ratings.logistic import expit
from judgewise.ratings.method import MethodResult


def contextual_features(judgments: pd.DataFrame, responses: pd.DataFrame | None, *, style: bool, self_pref: bool,
                        families: dict | None, columns: list[str] | tuple = (), style_definition: str = "judgewise",
                        weight: np.ndarray | None = None) -> tuple[np.ndarray, list[str]]:
    """Feature matrix (rows × features) and feature names for the chosen controls (style by ``style_definition``,
    ``weight`` = the rows' frequency weights)."""
    blocks, names = [], []
    if style:
        if responses is None:
            raise ConfigError("style control needs the responses table (prompt_id, model, text): pass responses=")
        blocks.append(style_differences(judgments, responses, style_definition, weight))
        names += list(STYLE_FEATURES)
    if self_pref:
        blocks.append(self_preference(judgments, families)[:, None])
        names.append("self_preference")
    require_columns(judgments, tuple(columns), what="judgments table (contextual BT feature columns)")
    for column in columns:
        values = pd.to_numeric(judgments[column], errors="coerce").to_numpy(float)
        if not np.isfinite(values).all():
            i = int(np.flatnonzero(~np.isfinite(values))[0])
            raise InputError(f"feature {column} = {judgments[column].iloc[i]!r} is not a number", row=i + 1,
                             field=column)
        blocks.append(values[:, None])
        names.append(column)
    if not blocks:
        raise ConfigError("contextual BT needs at least one feature (style, self_preference or feature_columns)")
    return np.hstack(blocks), names


def check_not_confounded(enc: EncodedJudgments, x: np.ndarray, names: list[str]) -> None:
    """ConfigError when a feature is a function of the two models alone, hence indistinguishable from strength.

    The feature column is projected on the span of the model-difference design (indicator a − indicator b);
    a residual of ~0 means θ can absorb it. Typical case: self-preference with a single judge, where the flag is
    fixed by the pair of models — it is identifiable only across judges of different families.
    """
    m = enc.n_models
    lap = np.zeros((m, m))
    np.add.at(lap, (enc.a, enc.a), 1.0)
    np.add.at(lap, (enc.b, enc.b), 1.0)
    np.add.at(lap, (enc.a, enc.b), -1.0)
    np.add.at(lap, (enc.b, enc.a), -1.0)
    for j, name in enumerate(names):
        col = x[:, j]
        rhs = np.bincount(enc.a, col, m) - np.bincount(enc.b, col, m)
        fitted_theta = np.linalg.lstsq(lap, rhs, rcond=None)[0]
        residual = col - (fitted_theta[enc.a] - fitted_theta[enc.b])
        if np.linalg.norm(residual) <= 1e-8 * max(np.linalg.norm(col), 1e-300):
            raise ConfigError(f'feature "{name}" is confounded with model strength: it is determined by which two '
                              f"models are compared, so it cannot be told apart from their ratings"
                              + (" (self-preference needs judges from more than one family)"
                                 if name == "self_preference" else ""))


def fit_contextual(enc: EncodedJudgments, x: np.ndarray, weight: np.ndarray, l2: float = 0.0,
                   start: np.ndarray | None = None, l2_features: float = 0.0) -> np.ndarray:
    """[θ (models, mean 0) | β (features)] maximising the contextual BT likelihood with row weights ``weight``
    minus the ridges ½·l2·‖θ‖² and ½·l2_features·‖β‖²."""
    m, k = enc.n_models, x.shape[1]
    a, b, o = enc.a, enc.b, enc.outcome
    scale = max(float(weight.sum()), 1.0)

    def fun(params):
        theta, beta = params[:m], params[m:]
        eta = theta[a] - theta[b] + x @ beta
        loss = np.sum(weight * (np.logaddexp(0.0, eta) - o * eta)) + 0.5 * (l2 * theta @ theta
                                                                              + l2_features * beta @ beta)
        g = weight * (expit(eta) - o)
        grad = np.concatenate([np.bincount(a, g, m) - np.bincount(b, g, m) + l2 * theta,
                               x.T @ g + l2_features * beta])
        return loss / scale, grad / scale

    x0 = np.zeros(m + k) if start is None else start
    from scipy.optimize import minimize  # on use: its import is a quarter second of every command

    res = minimize(fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": 10_000, "gtol": 1e-9})
    params = res.x.copy()
    params[:m] -= params[:m].mean()
    return params


def contextual_result(data, x: np.ndarray, names: list[str], l2: float, to_scale,
                      l2_features: float = 0.0) -> MethodResult:
    """Point estimate, coefficients and a bootstrap refit for the contextual BT method (used by ``bradley_terry``)."""
    enc = data.enc
    check_not_confounded(enc, x, names)
    params = fit_contextual(enc, x, enc.weight, l2, l2_features=l2_features)
    m = enc.n_models
    theta, beta = params[:m], params[m:]

    def refit(multiplicity: np.ndarray) -> np.ndarray:
        return to_scale(fit_contextual(enc, x, enc.weight * multiplicity, l2, start=params,
                                       l2_features=l2_features)[:m])

    info = {"controls": names, "coefficients": {n: float(c) for n, c in zip(names, beta)},
            "coefficient_units": "log-odds of model_a winning per unit of the feature (style: per SD)"}
    return MethodResult(to_scale(theta), {"theta": theta}, info, refit=refit)
