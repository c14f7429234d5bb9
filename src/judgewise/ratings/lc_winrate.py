"""Length-controlled win rate against an anchor, after AlpacaEval 2's GLM (Dubois et al. 2024; Anchor §2 win rate).

For each model m, on its judgments against the anchor (outcome o from m's side, soft labels allowed):

    logit P(m beats anchor on prompt x) = α_m + β_m·tanh(Δlen_x / sd_m(Δlen)) + γ_m·d_x

where Δlen_x = characters of m's response − characters of the anchor's response, sd_m its standard deviation
over m's prompts, and d_x a per-prompt difficulty. The length-controlled win rate is the model's predicted win
rate with the length term switched off: LC_m = 100 · mean_x σ(α_m + γ_m·d_x). The anchor scores 50.

Differences from AlpacaEval, stated so nobody expects its exact numbers: AlpacaEval reads d_x from a file
fitted once on its whole leaderboard; here d_x is fitted on the table at hand (joint logistic model
logit = θ_m + d_x over all models, ridge ``difficulty_l2`` on d). AlpacaEval's extra "regularise towards the
baseline" rows are not added; the per-model fit has a ridge ``l2`` on β and γ (as sklearn's C = 1/l2). Bootstrap
replicates refit the per-model GLMs with d_x held fixed (as AlpacaEval holds its file fixed).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import expit

from judgewise.errors import ConfigError, InputError, RatingError
from judgewise.ratings.method import MethodResult, RatingData
from judgewise.ratings.winrate import detect_anchor, oriented_rows


def _logistic(x: np.ndarray, o: np.ndarray, w: np.ndarray, penalty: np.ndarray) -> np.ndarray:
    """Weighted soft-label logistic regression coefficients with a ridge ½·Σ penalty·coef²."""
    def fun(coef):
        eta = x @ coef
        loss = np.sum(w * (np.logaddexp(0.0, eta) - o * eta)) + 0.5 * np.sum(penalty * coef ** 2)
        return loss, x.T @ (w * (expit(eta) - o)) + penalty * coef

    return optimize.minimize(fun, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B",
                             options={"maxiter": 5000, "gtol": 1e-9}).x


def prompt_difficulty(model: np.ndarray, prompt: np.ndarray, o: np.ndarray, w: np.ndarray, n_models: int,
                      n_prompts: int, l2: float) -> np.ndarray:
    """d_x of the joint model logit = θ_m + d_x (ridge ``l2`` on d), one value per prompt id."""
    def fun(params):
        theta, d = params[:n_models], params[n_models:]
        eta = theta[model] + d[prompt]
        g = w * (expit(eta) - o)
        loss = np.sum(w * (np.logaddexp(0.0, eta) - o * eta)) + 0.5 * l2 * d @ d
        return loss, np.concatenate([np.bincount(model, g, n_models), np.bincount(prompt, g, n_prompts) + l2 * d])

    res = optimize.minimize(fun, np.zeros(n_models + n_prompts), jac=True, method="L-BFGS-B",
                            options={"maxiter": 5000, "gtol": 1e-8})
    return res.x[n_models:]


def _length_deltas(data: RatingData, model: np.ndarray, prompt: np.ndarray, anchor: int) -> np.ndarray:
    if data.responses is None:
        raise ConfigError("the length-controlled win rate needs the responses table (prompt_id, model, text)")
    r = data.responses
    length = pd.Series(r["text"].fillna("").astype(str).str.len().to_numpy(),
                       index=pd.MultiIndex.from_arrays([r["prompt_id"].astype(str), r["model"].astype(str)]))
    length = length[~length.index.duplicated()]
    prompts = np.array(data.enc.prompts, dtype=object)[prompt]
    models = np.array(data.enc.models, dtype=object)
    own = length.reindex(pd.MultiIndex.from_arrays([prompts, models[model]])).to_numpy(float)
    base = length.reindex(pd.MultiIndex.from_arrays([prompts, np.full(len(prompt), models[anchor])])).to_numpy(float)
    missing = np.isnan(own) | np.isnan(base)
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise InputError(f'no response text for prompt "{prompts[i]}" of model "{models[model[i]]}" or the anchor '
                         f"({int(missing.sum())} judgments lack one)", field="text")
    return own - base


def lc_winrate(data: RatingData, *, l2: float = 0.01, difficulty_l2: float = 1.0) -> MethodResult:
    """Length-controlled win rate per model (module docstring); extra: the GLM coefficients and raw win rate."""
    enc = data.enc
    anchor = enc.model_id(data.anchor) if data.anchor is not None else detect_anchor(enc)
    rows, model, o = oriented_rows(enc, anchor)
    if len(rows) == 0:
        raise RatingError("no judgments against the anchor")
    w = enc.weight[rows]
    prompt = enc.prompt[rows]
    delta = _length_deltas(data, model, prompt, anchor)
    d = prompt_difficulty(model, prompt, o, w, enc.n_models, len(enc.prompts), difficulty_l2)[prompt]
    groups = [np.flatnonzero(model == m) for m in range(enc.n_models)]

    def fit(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scores, coefs = np.full(enc.n_models, np.nan), np.full((enc.n_models, 3), np.nan)
        for m, idx in enumerate(groups):
            if m == anchor or len(idx) == 0 or weights[idx].sum() == 0:
                continue
            sd = np.std(delta[idx]) or 1.0
            x = np.column_stack([np.ones(len(idx)), np.tanh(delta[idx] / sd), d[idx]])
            coefs[m] = _logistic(x, o[idx], weights[idx], np.array([0.0, l2, l2]))
            scores[m] = 100.0 * np.mean(expit(coefs[m, 0] + coefs[m, 2] * d[idx]))
        scores[anchor] = 50.0
        return scores, coefs

    scores, coefs = fit(w)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = np.bincount(model, w * o, enc.n_models) / np.bincount(model, w, enc.n_models) * 100.0
    raw[anchor] = 50.0

    def refit(multiplicity: np.ndarray) -> np.ndarray:
        return fit(w * multiplicity[rows])[0]

    info = {"anchor": enc.models[anchor], "rows_used": int(len(rows)), "rows_not_used": int(enc.n_rows - len(rows)),
            "l2": l2, "difficulty_l2": difficulty_l2, "scale": "percent",
            "glm": "logit = α + β·tanh(Δlen/sd) + γ·difficulty; LC = mean σ(α + γ·difficulty)"}
    extra = {"win_rate": raw, "length_coef": coefs[:, 1], "difficulty_coef": coefs[:, 2], "intercept": coefs[:, 0]}
    n = np.bincount(model, minlength=enc.n_models)
    n[anchor] = len(rows)
    return MethodResult(scores, extra, info, n=n, refit=refit)
