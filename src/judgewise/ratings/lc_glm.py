"""AlpacaEval's length-controlled GLM ``length_controlled_v1`` (Dubois et al. 2024, §3), written from its definition.

For a model m judged against the anchor b on instructions x, with soft preference p ∈ [0, 1] (m's side):

    logit P(m ≻ b | x) = w_len · tanh(Δ_x / sd(Δ)) + w_diff · d_x + w_int · g

* Δ_x = characters of m's output − characters of the anchor's; sd its sample standard deviation (ddof 1) over m's
  rows. (AlpacaEval writes the gap the other way round, anchor − model, so its ``np.tanh(std_delta_len)`` weight
  is ``−w_len``; judgewise keeps "positive = the judge likes longer" everywhere.)
* d_x the instruction's difficulty (given: AlpacaEval's table), g = 1 on m's rows and 0 on the "gamed" rows.
* No separate intercept; L1 penalty; the penalty C is chosen from ``logspace(−4, 4, 10)`` by 5-fold cross-validation
  on the weighted soft log-loss, fold of row j = j mod 5 (what scikit-learn's GroupKFold gives for AlpacaEval's one
  group per row), then the model is refitted on all rows with that C.
* Regularisation towards the baseline: the anchor's own length-gamed variants (rows of ``df_gamed.csv``, g = 0)
  join the fit with weight λ/2 = 0.1 each (λ = 0.2), so the length slope is pulled towards the one that explains
  the judge's preference between the anchor and its verbose/concise rewrites (§3.2 of the paper).

The length-controlled win rate sets the length term to zero: LC = 100 · mean σ(w_int + w_diff · d_x), over the
model's own instructions after a fit (AlpacaEval's ``get_length_controlled_winrate``) or over every instruction of
the difficulty table when weights are given (its ``predict_winrate``, with the anchor's weights subtracted).
"""

from __future__ import annotations

import numpy as np

from judgewise.ratings.logistic import expit

CS = np.logspace(-4, 4, 10)  # AlpacaEval's LogisticRegressionCV default grid (Cs=10)
N_SPLITS = 5
GAMED_LAMBDA = 0.2  # regularize_to_baseline_lambda of length_controlled_v1, split over its two gamed variants
LOGLOSS_EPS = 1e-15


def length_feature(delta: np.ndarray) -> np.ndarray:
    """tanh(Δ / sd(Δ)) with the sample standard deviation (ddof 1) of the model's length gaps (§3, eq. 3)."""
    sd = np.std(delta, ddof=1) if len(delta) > 1 else 0.0
    return np.tanh(delta / sd) if sd > 0 else np.zeros(len(delta))


def _l1_objective(x, p, w, lam, beta) -> float:
    eta = x @ beta
    return float(np.sum(w * (np.logaddexp(0.0, eta) - p * eta)) + lam * np.abs(beta).sum())


def _l1_quadratic_step(beta: np.ndarray, g: np.ndarray, h: np.ndarray, lam: float) -> np.ndarray:
    """argmin_u g·(u−β) + ½(u−β)ᵀH(u−β) + λ‖u‖₁ by coordinate descent (soft-thresholding each coordinate)."""
    u = beta.copy()
    for _ in range(100):
        before = u.copy()
        for j in range(len(u)):
            r = g[j] + h[j] @ (u - beta) - h[j, j] * (u[j] - beta[j])
            z = beta[j] - r / h[j, j]
            u[j] = np.sign(z) * max(abs(z) - lam / h[j, j], 0.0)
        if np.max(np.abs(u - before)) < 1e-15:
            break
    return u - beta


def soft_l1_logistic(x: np.ndarray, p: np.ndarray, w: np.ndarray, c: float,
                     start: np.ndarray | None = None) -> np.ndarray:
    """argmin_β Σ w·[log(1+e^η) − p·η] + ‖β‖₁ / C, η = xβ, no intercept: liblinear's L1 logistic objective divided
    by C, with soft labels p as AlpacaEval's duplicated rows give them. Proximal Newton (the quadratic model's
    L1 problem by coordinate descent, then a backtracking line search) run to machine precision, where liblinear
    stops at tol 1e-4."""
    lam = 1.0 / c
    beta = np.zeros(x.shape[1]) if start is None else np.array(start, dtype=float)
    value = _l1_objective(x, p, w, lam, beta)
    for _ in range(200):
        q = expit(x @ beta)
        g = x.T @ (w * (q - p))
        h = (x.T * (w * q * (1 - q))) @ x + 1e-12 * np.eye(len(beta))
        step = _l1_quadratic_step(beta, g, h, lam)
        decrease = g @ step + lam * (np.abs(beta + step).sum() - np.abs(beta).sum())
        if np.max(np.abs(step)) < 1e-13 or decrease > -1e-16 * max(1.0, abs(value)):
            break
        t = 1.0
        while t > 1e-10:
            trial = _l1_objective(x, p, w, lam, beta + t * step)
            if trial <= value + 1e-4 * t * decrease:
                break
            t *= 0.5
        beta, value = beta + t * step, trial
    return beta


def soft_logloss(x: np.ndarray, p: np.ndarray, w: np.ndarray, beta: np.ndarray) -> float:
    """Mean over rows of w·(soft log-loss), predictions clipped to [1e-15, 1 − 1e-15] (AlpacaEval's CV score)."""
    q = np.clip(expit(x @ beta), LOGLOSS_EPS, 1 - LOGLOSS_EPS)
    return float(-np.mean(w * (p * np.log(q) + (1 - p) * np.log(1 - q))))


def choose_c(x: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    """The C of ``CS`` with the lowest summed out-of-fold soft log-loss (folds j mod 5; first C on a tie)."""
    fold = np.arange(len(p)) % N_SPLITS
    losses = np.zeros(len(CS))
    for f in range(N_SPLITS):
        train, test = fold != f, fold == f
        beta = None
        for i, c in enumerate(CS):  # warm start along the path, as the C grid only loosens the penalty
            beta = soft_l1_logistic(x[train], p[train], w[train], c, beta)
            losses[i] += soft_logloss(x[test], p[test], w[test], beta)
    return float(CS[int(np.argmin(losses))])


def design(length: np.ndarray, difficulty: np.ndarray, gamed: bool = False) -> np.ndarray:
    """Rows of (tanh length gap, difficulty, g) — g = 0 for the gamed-baseline rows."""
    return np.column_stack([length, difficulty, np.full(len(length), 0.0 if gamed else 1.0)])


def fit_glm(length: np.ndarray, difficulty: np.ndarray, p: np.ndarray, w: np.ndarray,
            gamed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
            c: float | None = None) -> tuple[np.ndarray, float]:
    """One model's (w_len, w_diff, w_int) and the C used (chosen by :func:`choose_c` unless given).

    ``gamed`` = (length feature, difficulty, preference) of the anchor's gamed variants, added first with weight
    λ/2 (module doc); the model's rows keep their weights ``w``.
    """
    x, pp, ww = design(length, difficulty), p, w
    if gamed is not None:
        x = np.vstack([design(gamed[0], gamed[1], gamed=True), x])
        pp = np.concatenate([gamed[2], p])
        ww = np.concatenate([np.full(len(gamed[2]), GAMED_LAMBDA / 2), w])
    if c is None:
        c = choose_c(x, pp, ww)
    return soft_l1_logistic(x, pp, ww, c), c


def lc_from_weights(intercept: float, difficulty_slope: float, difficulty: np.ndarray) -> float:
    """100 · mean σ(w_int + w_diff · d) — the win rate with the length term set to zero (§3, eq. 4)."""
    return float(100.0 * np.mean(expit(intercept + difficulty_slope * difficulty)))
