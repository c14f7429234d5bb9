"""Length-controlled win rate against an anchor: AlpacaEval 2's LC (Dubois et al. 2024, "Length-Controlled
AlpacaEval: A Simple Way to Debias Automatic Evaluators", §3) — exactly when its inputs are given, else self-fitted.

For model m on its judgments against the anchor (outcome o from m's side, soft labels allowed):

    logit P(m ≻ anchor | x) = α_m + β_m · tanh(Δ_x / sd_m(Δ)) + γ_m · d_x

Δ_x = characters of m's output − the anchor's, sd_m its sample standard deviation over m's rows, d_x the
instruction's difficulty. LC_m = 100 · mean_x σ(α_m + γ_m · d_x): the win rate with the length term switched off.
The anchor scores 50. Three ways to get the pieces, chosen by what is given:

* ``glm_weights`` + ``difficulty`` (AlpacaEval's ``baseline_<anchor>.csv`` and ``instruction_difficulty.csv``):
  **exact** — LC_m from the given weights, averaged over every instruction of the table (AlpacaEval's
  ``predict_winrate``). A model without a row in the weights is fitted as below.
* ``difficulty`` alone: **exact fit** — AlpacaEval's ``length_controlled_v1`` fit per model (``ratings.lc_glm``: no
  intercept, L1, C by 5-fold CV; with ``df_gamed.csv`` its gamed-baseline rows regularise the slope as AlpacaEval
  does), averaged over the model's own instructions. Differences left: the difficulty is looked up by instruction
  (``ratings.lc_inputs``), and the solver is exact where liblinear stops at tol 1e-4.
* neither: **self-fit**, from the table alone. d_x from the joint model logit = θ_m + d_x (ridge ``difficulty_l2``
  on d). Choice stated: the length slope β is one number shared by every model (``length_slope="shared"``, a
  property of the judge), fitted jointly with per-model α_m, γ_m (ridge ``l2`` on γ and β). A per-model slope
  (``"per_model"``, the earlier behaviour) is poorly identified for a model that nearly always loses, so variants
  of one model moved apart and with the table's other models (alpaca-7b vs alpaca-7b_verbose: −1.41 … −0.31 points
  apart over sub-tables, shared: +0.05 … +0.46). Without AlpacaEval's gamed-baseline rows nothing in a table pins
  the *between-model* length effect, so the self-fit corrects less than AlpacaEval (its slopes ≈ 1.3–2.2 in tanh
  units; the shared fit finds ≈ 0.73 on the shared data) and sits below the published LC for mid-table models.

Bootstrap replicates refit with d_x, the C of each exact fit and the given weights held fixed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgewise.errors import ConfigError, InputError, RatingError
from judgewise.ratings.lc_glm import fit_glm, lc_from_weights, length_feature
from judgewise.ratings.lc_inputs import align_difficulty, model_weights
from judgewise.ratings.logistic import expit
from judgewise.ratings.method import MethodResult, RatingData
from judgewise.ratings.winrate import oriented_rows, require_anchor

LENGTH_SLOPES = ("shared", "per_model")


def _logistic(x: np.ndarray, o: np.ndarray, w: np.ndarray, penalty: np.ndarray) -> np.ndarray:
    """Weighted soft-label logistic regression coefficients with a ridge ½·Σ penalty·coef²."""
    def fun(coef):
        eta = x @ coef
        loss = np.sum(w * (np.logaddexp(0.0, eta) - o * eta)) + 0.5 * np.sum(penalty * coef ** 2)
        return loss, x.T @ (w * (expit(eta) - o)) + penalty * coef

    from scipy.optimize import minimize  # on use: its import is a quarter second of every command

    return minimize(fun, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B",
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

    from scipy.optimize import minimize  # on use: its import is a quarter second of every command

    res = minimize(fun, np.zeros(n_models + n_prompts), jac=True, method="L-BFGS-B",
                   options={"maxiter": 5000, "gtol": 1e-8})
    return res.x[n_models:]


def shared_slope_glm(model: np.ndarray, x_len: np.ndarray, d: np.ndarray, o: np.ndarray, w: np.ndarray,
                     n_models: int, l2: float, start: np.ndarray | None = None) -> np.ndarray:
    """(α, γ, β) of logit = α_m + β·x_len + γ_m·d fitted jointly (one β), ridge ½·l2 on γ and β; as one array
    [α_0 … α_{M−1}, γ_0 … γ_{M−1}, β]."""
    m = n_models

    def fun(p):
        a, g, b = p[:m], p[m:2 * m], p[2 * m]
        eta = a[model] + b * x_len + g[model] * d
        r = w * (expit(eta) - o)
        loss = np.sum(w * (np.logaddexp(0.0, eta) - o * eta)) + 0.5 * l2 * (g @ g + b * b)
        return loss, np.concatenate([np.bincount(model, r, m), np.bincount(model, r * d, m) + l2 * g,
                                     [r @ x_len + l2 * b]])

    x0 = np.zeros(2 * m + 1) if start is None else start
    from scipy.optimize import minimize  # on use: its import is a quarter second of every command

    return minimize(fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": 10_000, "gtol": 1e-9}).x


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


def _rows(data: RatingData):
    """(anchor id, judged rows' model, prompt, outcome, weight, length gap, model groups)."""
    enc = data.enc
    anchor = enc.model_id(data.anchor) if data.anchor is not None else require_anchor(enc)
    rows, model, o = oriented_rows(enc, anchor)
    if len(rows) == 0:
        raise RatingError("no judgments against the anchor")
    prompt = enc.prompt[rows]
    delta = _length_deltas(data, model, prompt, anchor)
    groups = [np.flatnonzero(model == m) if m != anchor else np.array([], int) for m in range(enc.n_models)]
    return anchor, rows, model, prompt, o, enc.weight[rows], delta, groups


def _lc_over_rows(coefs: np.ndarray, d: np.ndarray, weights: np.ndarray) -> float:
    """100 · the weighted mean over a model's rows of σ(α + γ·d): the LC of a fitted model."""
    return float(100.0 * np.average(expit(coefs[2] + coefs[1] * d), weights=weights))


def _self_fit(data: RatingData, anchor: int, model, prompt, o, w, delta, groups, *, l2: float,
              difficulty_l2: float, length_slope: str):
    """Self-fitted LC (module doc): (scores, coefs [length, difficulty, intercept] per model, refit, facts)."""
    enc, n = data.enc, data.enc.n_models
    d = prompt_difficulty(model, prompt, o, w, n, len(enc.prompts), difficulty_l2)[prompt]
    x_len = np.zeros(len(model))
    for idx in groups:
        if len(idx):
            x_len[idx] = length_feature(delta[idx])
    point: dict = {}

    def fit(weights: np.ndarray):
        scores, coefs = np.full(n, np.nan), np.full((n, 3), np.nan)
        if length_slope == "shared":
            p = shared_slope_glm(model, x_len, d, o, weights, n, l2, start=point.get("p"))
            point.setdefault("p", p)
            coefs[:] = np.column_stack([np.full(n, p[2 * n]), p[n:2 * n], p[:n]])
        for m, idx in enumerate(groups):
            if len(idx) == 0 or weights[idx].sum() == 0:
                coefs[m] = np.nan
                continue
            if length_slope == "per_model":
                x = np.column_stack([x_len[idx], d[idx], np.ones(len(idx))])
                coefs[m] = _logistic(x, o[idx], weights[idx], np.array([l2, l2, 0.0]))
            scores[m] = _lc_over_rows(coefs[m], d[idx], weights[idx])
        scores[anchor] = 50.0
        return scores, coefs

    scores, coefs = fit(w)
    facts = {"lc_path": "self-fit", "length_slope": length_slope, "l2": l2, "difficulty_l2": difficulty_l2,
             "shared_length_coef": float(np.nanmax(coefs[:, 0])) if length_slope == "shared" else None}
    return scores, coefs, lambda weights: fit(weights)[0], facts


def _missing_difficulty(d: np.ndarray, prompt: np.ndarray, enc, source: str) -> None:
    if np.isnan(d).any():
        i = int(np.flatnonzero(np.isnan(d))[0])
        raise InputError(f'prompt "{enc.prompts[prompt[i]]}" has no difficulty in the table '
                         f"({len(np.unique(prompt[np.isnan(d)]))} judged prompts lack one)", file=source)


def _alpacaeval_fit(data: RatingData, anchor: int, model, prompt, o, w, delta, groups, *, difficulty,
                    glm_weights):
    """LC from AlpacaEval's inputs (module doc): (scores, coefs, refit, facts)."""
    enc = data.enc
    aligned = align_difficulty(difficulty, data.responses, enc.models[anchor], enc.prompts)
    d = aligned.by_prompt[prompt]
    _missing_difficulty(d, prompt, enc, aligned.source)
    given = model_weights(glm_weights, enc.models[anchor]) if glm_weights is not None else None
    coefs, scores = np.full((enc.n_models, 3), np.nan), np.full(enc.n_models, np.nan)
    source, penalty, x_len = {}, {}, {}
    for m, idx in enumerate(groups):
        if len(idx) == 0:
            continue
        name = enc.models[m]
        if given is not None and name in given.index:
            coefs[m] = given.loc[name, ["length", "difficulty", "intercept"]].to_numpy(float)
            scores[m], source[name] = lc_from_weights(coefs[m, 2], coefs[m, 1], aligned.values), "weights"
            continue
        x_len[m] = length_feature(delta[idx])
        coefs[m], penalty[m] = fit_glm(x_len[m], d[idx], o[idx], w[idx], aligned.gamed)
        scores[m], source[name] = _lc_over_rows(coefs[m], d[idx], w[idx]), "fit"
    scores[anchor] = 50.0

    def refit(weights: np.ndarray) -> np.ndarray:
        out = scores.copy()
        for m, c in penalty.items():
            idx = groups[m]
            if weights[idx].sum() == 0:
                out[m] = np.nan
                continue
            beta, _ = fit_glm(x_len[m], d[idx], o[idx], weights[idx], aligned.gamed, c=c)
            out[m] = _lc_over_rows(beta, d[idx], weights[idx])
        return out

    facts = {"lc_path": "alpacaeval weights" if given is not None else "alpacaeval fit",
             "lc_difficulty": aligned.source, "lc_gamed_rows": 0 if aligned.gamed is None else len(aligned.gamed[2]),
             "lc_source": source, "lc_penalty_c": {enc.models[m]: c for m, c in penalty.items()}}
    if given is not None:
        facts["lc_weights"] = given.attrs.get("source")
    return scores, coefs, refit, facts


def lc_winrate(data: RatingData, *, difficulty=None, glm_weights=None, length_slope: str = "shared",
               l2: float = 0.01, difficulty_l2: float = 1.0) -> MethodResult:
    """Length-controlled win rate per model (module doc; Dubois et al. 2024 §3).

    Parameters
    ----------
    data : RatingData
        Judgments against one anchor and the responses' texts.
    difficulty : path or LcDifficulty, optional
        AlpacaEval's instruction difficulty (``instruction_difficulty.csv``, ``df_gamed.csv``, or a table keyed
        by ``instruction``/``prompt_id``; :mod:`judgewise.io.alpacaeval_lc`). Given: AlpacaEval's own GLM.
    glm_weights : path or DataFrame, optional
        AlpacaEval's fitted weights against the anchor (``baseline_<anchor>.csv`` or its directory, or
        :func:`~judgewise.io.alpacaeval_lc.read_lc_weights`' frame); needs ``difficulty``.
    length_slope : {"shared", "per_model"}
        Self-fit only: one length slope for all models (default) or one per model.
    l2, difficulty_l2 : float
        Self-fit only: ridge on the slopes, and on d in the joint difficulty fit.

    Returns
    -------
    MethodResult
        Scores in percent (anchor 50); extra: raw ``win_rate``, ``length_coef`` (+ = the judge prefers longer),
        ``difficulty_coef``, ``intercept``; info: the path taken and, for AlpacaEval's, each model's source.
    """
    if length_slope not in LENGTH_SLOPES:
        raise ConfigError(f"length_slope must be one of {', '.join(LENGTH_SLOPES)}, got {length_slope!r}")
    if glm_weights is not None and difficulty is None:
        raise ConfigError("AlpacaEval's GLM weights need its instruction difficulty too (`difficulty`): the "
                          "length-controlled win rate averages σ(intercept + slope·difficulty) over instructions")
    enc = data.enc
    anchor, rows, model, prompt, o, w, delta, groups = _rows(data)
    if difficulty is None:
        scores, coefs, refit_w, facts = _self_fit(data, anchor, model, prompt, o, w, delta, groups, l2=l2,
                                                  difficulty_l2=difficulty_l2, length_slope=length_slope)
    else:
        scores, coefs, refit_w, facts = _alpacaeval_fit(data, anchor, model, prompt, o, w, delta, groups,
                                                        difficulty=difficulty, glm_weights=glm_weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = np.bincount(model, w * o, enc.n_models) / np.bincount(model, w, enc.n_models) * 100.0
    raw[anchor] = 50.0
    info = {"anchor": enc.models[anchor], "rows_used": int(len(rows)), "rows_not_used": int(enc.n_rows - len(rows)),
            "scale": "percent", **facts,
            "glm": "logit = α + β·tanh(Δlen/sd) + γ·difficulty; LC = mean σ(α + γ·difficulty)"}
    extra = {"win_rate": raw, "length_coef": coefs[:, 0], "difficulty_coef": coefs[:, 1], "intercept": coefs[:, 2]}
    n = np.bincount(model, minlength=enc.n_models)
    n[anchor] = len(rows)
    return MethodResult(scores, extra, info, n=n, refit=lambda mult: refit_w(w * mult[rows]))
