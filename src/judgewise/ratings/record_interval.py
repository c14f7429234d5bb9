"""Each model's own record as a floor under its bootstrap interval: Wilson bounds at a Korn–Graubard effective size.

Why: a bootstrap cannot see uncertainty its sample does not show. A model that won none of its 50 games against
the anchor gives replicates that all win none, so its BCa interval is [0, 0] — yet 0 wins in 50 games is
consistent with a true win rate up to 7%. On AlpacaEval 2 subsets of 50 prompts, the ~2%-win-rate models had no
win in ~40% of subsets, and 95% intervals covered the all-prompts value 87–88% of the time
(``benchmarks/interval_coverage.py``).

What: per model, its record — the games it played (``weight``), the score it took in each (wins 1, ties ½) and the
prompt of each — gives its score rate r̂. Its variance v̂ is the ratio estimator's variance with games clustered by
prompt (Cochran 1977, §6.11: verdicts on one prompt share its answers). The interval is Wilson's score interval at
the **effective sample size** n* = r̂(1 − r̂)/v̂, capped at the games played and taken as the games played when
r̂ is 0 or 1 or v̂ is 0, with the quantile of Student's t on (prompts − 1) degrees of freedom in place of the normal
one: Korn & Graubard (1998), *Confidence intervals for proportions with small expected number of positive counts
estimated from survey data*, Survey Methodology 24(2), 193–201 (their Clopper–Pearson replaced by Wilson, as Dean &
Pagano 2015 compare). It applies where they do: records with fewer than :data:`RARE_COUNT` games' worth of wins, or
of losses (the usual n·p ≥ 5 rule for a normal approximation). Elsewhere the bootstrap sees the record's spread and
BCa stands alone; a floor there too only widened intervals that already covered (BT at 400 prompts: +23% width,
coverage 99.1% → 99.9%). A method turns these rate bounds into score bounds (:class:`MethodResult.record_bounds`: the
win rate itself; for Bradley–Terry the rating at which the model's expected rate against the opponents it met
equals the bound, the others held at their estimates), and ``rank`` widens the BCa interval to contain them.
"""

from __future__ import annotations

import numpy as np

RARE_COUNT = 5.0  # games' worth of wins (or losses) below which a record is rare and gets its floor (n·p ≥ 5)


def wilson_interval(successes, n, level: float = 0.95, quantile=None) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a binomial proportion (vectorised; NaN where ``n`` is 0): bounds 0 and 1 exact
    at 0 and ``n`` successes. ``quantile``: the critical value (default the normal one at ``level``)."""
    from scipy import stats  # on use: scipy.stats' import costs every command a third of a second

    k, n = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    z = stats.norm.ppf(0.5 + level / 2) if quantile is None else np.asarray(quantile, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    low = np.where(k <= 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    high = np.where(k >= n, 1.0, np.clip(centre + half, 0.0, 1.0))
    nan = ~(n > 0)
    return np.where(nan, np.nan, low), np.where(nan, np.nan, high)


def record_rate_bounds(model: np.ndarray, prompt: np.ndarray, score: np.ndarray, weight: np.ndarray,
                       n_models: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of each model id's score rate at ``level`` from its record (module docstring): row k is a game
    of ``model[k]`` on ``prompt[k]`` in which it scored ``score[k]`` ∈ [0, 1], counted ``weight[k]`` times. NaN
    for a model with no game or a record that is not rare (:data:`RARE_COUNT`): no floor there."""
    games = np.bincount(model, weights=weight, minlength=n_models)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.bincount(model, weights=weight * score, minlength=n_models) / games
    rare = games * np.minimum(rate, 1 - rate) < RARE_COUNT  # few wins or few losses: where a bootstrap is blind
    none = np.full(n_models, np.nan)
    if not rare.any():  # the usual case on large data: no clustering work at all
        return none, none.copy()
    keep = rare[model]  # the rare models' games only: the others get no floor
    model, prompt, score, weight = model[keep], np.asarray(prompt)[keep], score[keep], weight[keep]
    from scipy import stats  # on use: only a rare record needs Student's t

    cells, cell = np.unique(np.stack([model, prompt]), axis=1, return_inverse=True)
    residual = np.bincount(cell.ravel(), weights=weight * (score - np.nan_to_num(rate[model])))
    clusters = np.bincount(cells[0], minlength=n_models).astype(float)
    squares = np.bincount(cells[0], weights=residual ** 2, minlength=n_models)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = clusters / (clusters - 1) * squares / games ** 2
        n_eff = rate * (1 - rate) / variance
    informative = (variance > 0) & (rate > 0) & (rate < 1) & np.isfinite(n_eff)
    n_eff = np.where(informative, np.minimum(n_eff, games), games)
    quantile = stats.t.ppf(0.5 + level / 2, np.maximum(clusters - 1, 1))
    low, high = wilson_interval(rate * n_eff, n_eff, level, quantile)
    return np.where(rare, low, none), np.where(rare, high, none)


def widen(low: np.ndarray, high: np.ndarray, floor_low: np.ndarray, floor_high: np.ndarray,
          coupling: np.ndarray | None = None):
    """(low, high) widened to contain [floor_low, floor_high] where those are finite, and how many models moved.

    ``coupling[i, j]`` = ∂scoreᵢ/∂scoreⱼ when model j alone moves (a mean-centred scale: −1/(m − 1) off the
    diagonal, since raising one rating lowers the mean; an anchored or per-model scale: 0). Model j's widening
    beyond its bootstrap bound is passed on to the others to first order: up by Δⱼ⁺ moves model i's score by
    coupling[i, j]·Δⱼ⁺, down by Δⱼ⁻ by −coupling[i, j]·Δⱼ⁻; the moves that push a bound outwards are added in
    quadrature (independent models' errors: the root of the sum of squares, not the sum of worst cases)."""
    up = np.where(np.isfinite(floor_high), np.maximum(floor_high - high, 0.0), 0.0)
    down = np.where(np.isfinite(floor_low), np.maximum(low - floor_low, 0.0), 0.0)
    new_low, new_high = low - down, high + up
    if coupling is not None:  # what pushes each score down: others rising (c < 0) or falling (c > 0)
        off = np.where(np.eye(len(low), dtype=bool), 0.0, np.nan_to_num(coupling))
        pushes_down = np.minimum(off, 0.0) ** 2 @ up ** 2 + np.maximum(off, 0.0) ** 2 @ down ** 2
        pushes_up = np.minimum(off, 0.0) ** 2 @ down ** 2 + np.maximum(off, 0.0) ** 2 @ up ** 2
        new_low, new_high = new_low - np.sqrt(pushes_down), new_high + np.sqrt(pushes_up)
    moved = int(np.sum((new_low < low) | (new_high > high)))
    return new_low, new_high, moved


def both_sides(a: np.ndarray, b: np.ndarray, outcome: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                            np.ndarray]:
    """Every game between two different models from each side: (row, model, opponent, its score)."""
    rows = np.flatnonzero(a != b)
    return (np.concatenate([rows, rows]), np.concatenate([a[rows], b[rows]]), np.concatenate([b[rows], a[rows]]),
            np.concatenate([outcome[rows], 1.0 - outcome[rows]]))


def bt_ratings_at_rates(theta: np.ndarray, model: np.ndarray, opponent: np.ndarray, weight: np.ndarray,
                        rates: np.ndarray, span: float = 30.0, steps: int = 60) -> np.ndarray:
    """Per model id i, the log-odds rating θᵢ' at which its expected score rate against the opponents it met,
    Σ w·σ(θᵢ' − θ_opponent) / Σ w (Bradley–Terry, the others held at ``theta``), equals ``rates[i]``; by
    bisection within ``theta`` ± ``span`` (monotone in θᵢ'). NaN where the rate is NaN, 0 or 1 (no finite
    rating reaches it)."""
    from judgewise.ratings.logistic import expit

    n = len(theta)
    pairs, pair = np.unique(np.stack([model, opponent]), axis=1, return_inverse=True)
    games = np.bincount(pair.ravel(), weights=weight)
    total = np.bincount(pairs[0], weights=games, minlength=n)
    low, high = theta - span, theta + span
    for _ in range(steps):
        mid = (low + high) / 2
        expected = np.bincount(pairs[0], weights=games * expit(mid[pairs[0]] - theta[pairs[1]]), minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            above = expected / total > rates
        high, low = np.where(above, mid, high), np.where(above, low, mid)
    reachable = (rates > 0) & (rates < 1) & (total > 0)
    return np.where(reachable, (low + high) / 2, np.nan)


def bt_record_bounds(a, b, outcome, cluster, weight, theta: np.ndarray, to_scale, level: float):
    """(low, high, coupling) score bounds per model from its record (module docstring), on the scale ``to_scale``
    maps a θ vector to: each model's bound is its score with its own θ moved to :func:`bt_ratings_at_rates` of its
    rate bounds and every other θ kept (so a mean-centred or anchored scale moves as it would); ``coupling``:
    :func:`scale_coupling`, for :func:`widen`."""
    rows, model, opponent, score = both_sides(np.asarray(a), np.asarray(b), np.asarray(outcome, dtype=float))
    w = np.asarray(weight, dtype=float)[rows]
    rate_low, rate_high = record_rate_bounds(model, np.asarray(cluster)[rows], score, w, len(theta), level)
    if not (np.isfinite(rate_low).any() or np.isfinite(rate_high).any()):  # no rare record: nothing to floor
        nothing = np.full(len(theta), np.nan)
        return nothing, nothing.copy(), None
    out = []
    for rates in (rate_low, rate_high):
        moved = bt_ratings_at_rates(theta, model, opponent, w, rates)
        grid = np.where(np.eye(len(theta), dtype=bool), np.nan_to_num(moved)[:, None], theta[None, :])
        out.append(np.where(np.isfinite(moved), np.diagonal(to_scale(grid)), np.nan))
    return out[0], out[1], scale_coupling(theta, to_scale)


def scale_coupling(theta: np.ndarray, to_scale, step: float = 1e-3) -> np.ndarray:
    """coupling[i, j] = ∂scoreᵢ/∂scoreⱼ when θⱼ alone moves, on the scale ``to_scale`` maps θ to (finite
    differences; the map is linear): −1/(m − 1) for a mean-centred scale, 0 for an anchored one."""
    base = to_scale(theta)
    moved = to_scale(theta[None, :] + step * np.eye(len(theta))) - base[None, :]  # row j: θⱼ moved
    own = np.diagonal(moved)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(own[None, :] != 0, moved.T / own[None, :], 0.0)
