"""Adaptive design: sequential rounds that spend each batch where it most reduces the expected ranking error.

After a short burn-in (random cycles through all models, so the comparison graph is connected), every
round fits the ratings (an injected ``fit`` — designs come before ratings in the package order, so the
caller passes a rating fit, e.g. ``judgewise.ratings.bradley_terry.fit_bt_arrays``, which the run pipeline
injects by default) and scores each model pair by
**expected information** about the ranking: the expected drop in the posterior probability that the pair is
mis-ordered if it were judged m more times. With the pair's rating gap Δ ~ N(μ, σ²) and Fisher information
f = p(1 − p) per comparison (p = σ(μ)), m more calls shrink the variance to σ'² = 1/(1/σ² + m·f) and the
posterior mean moves by N(0, σ² − σ'²) (preposterior analysis), so

    gain_m = Φ(−|μ|/σ) − E_z[ Φ(−|μ + z·sqrt(σ² − σ'²)| / σ') ].

Summed over pairs, Φ(−|μ|/σ) is the expected number of discordant pairs, i.e. (1 − Kendall τ)·C(n, 2)/2.
Because resolving a close pair may take many calls before any single one pays off (the value of
information is not concave), each candidate's gain is evaluated at look-aheads m = 1, 2, 4, …, 256 and the
round's calls are spread by the upper concave hull of those curves (``spread="hull"``, default, global look-ahead;
:func:`hull_allocation`): hull segments are taken best gain-per-call first across candidates, so a pair whose
value needs many calls is rated by that (KG*) and a pair already resolved (nothing left to gain, or under 2% of
the best gain per call) gets none; each pair gets at most ``per_pair`` calls a round (default 1 — spreading a
round over n pairs measured better than piling it on the few best, which the estimates may yet move).
``spread="top"`` gives ``per_pair`` calls to each of the pairs with the best KG* rate max_m gain_m / m.
In practice the calls go to near-adjacent models whose intervals overlap. With ``lookahead="global"``
(default) a candidate pair is valued by what its calls remove from the variance of *every* pair (``NEAR = 0``;
a positive ``NEAR`` keeps only pairs within that many ranks) through the BT covariance — a comparison with a third
model also separates two neighbours, and the sum over all pairs is the expected number of discordant pairs, i.e. the
expected Kendall τ a target reads. NEAR was 3 until tuning on half of the AlpacaEval benchmark's models
(``benchmarks/designs_alpacaeval.py``: 614 → 526 calls to τ ≥ 0.9); on the simulated designs benchmark all pairs
cost 5% more (adaptive_calls 2,340 → 2,470; 6 ranks: 2,409 but more calls in ``evaluate_simulated``) —
instead of only its own (``"direct"``). Rounds are small (``n_models`` calls by default), so the ratings are
refitted often. An optional indifference zone δ (log-odds) values only mis-orders larger than δ:
Φ(−(|μ| + δ)/σ).
The run stops at the ``budget``, once every adjacent pair of the current ranking is ordered
with probability ≥ ``confidence`` ("resolved"), or when no pair has anything left to gain ("exhausted"). Prompts are assigned per pair from a shuffled cycle, so a pair never
sees the same prompt twice while unused prompts remain (a pair is capped at |X| comparisons).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import ndtr

from judgewise.designs.base import DesignRun, Pairs, Round, Steps, VerdictFn, check_pool, drive
from judgewise.designs.ranking_posterior import misorder_probability
from judgewise.errors import ConfigError

# (a ids, b ids, outcomes of a, n_models) -> (scores on the natural log-odds scale, covariance matrix)
FitFn = Callable[[np.ndarray, np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray]]

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(24)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()
LOOKAHEAD = 2.0 ** np.arange(9)  # 1..256 more calls
NEAR = 0  # global look-ahead: the pairs within this many ranks make up the ranking error a call can reduce; 0: all
MIN_SHARE = 0.02  # hull segments worth less than this share of the best gain per call are not bought
CANDIDATES = 60  # pairs, by their own KG* rate, whose effect on all near pairs is evaluated


def expected_gain(mu: np.ndarray, var: np.ndarray, info: np.ndarray, m: np.ndarray, zone: float = 0.0) -> np.ndarray:
    """Expected drop in the mis-order probability after ``m`` more comparisons (module docstring), per pair
    (rows) and per m (columns)."""
    mu, var, info = mu[:, None], np.maximum(var, 1e-12)[:, None], info[:, None]
    var_after = 1.0 / (1.0 / var + m[None, :] * info)
    spread = np.sqrt(np.maximum(var - var_after, 0.0))
    moved = mu[..., None] + spread[..., None] * _NODES
    after = ndtr(-(np.abs(moved) + zone) / np.sqrt(var_after)[..., None]) @ _WEIGHTS
    return misorder_probability(mu, var, zone) - after


def hull_allocation(gain: np.ndarray, batch: int, room: np.ndarray, min_share: float = MIN_SHARE) -> np.ndarray:
    """Calls per candidate in one round from its expected gain after m = LOOKAHEAD calls (M × K): walk the
    upper concave hull of each candidate's gain curve from (0, 0) and take hull segments, best gain per call
    first across candidates, until the batch is spent (at most ``room`` calls per candidate). A pair whose
    value comes only after many calls still gets them; a pair with nothing to gain gets none, nor does one whose
    gain per call is below ``min_share`` of the best (the round is then smaller than the batch)."""
    xs = np.r_[0.0, LOOKAHEAD]
    segments = []  # (gain per call, candidate, calls)
    for k in range(gain.shape[1]):
        ys = np.r_[0.0, gain[:, k]]
        hull = [0]
        for i in range(1, len(xs)):
            while len(hull) >= 2 and _slope(xs, ys, hull[-2], hull[-1]) <= _slope(xs, ys, hull[-1], i):
                hull.pop()
            hull.append(i)
        segments += [(_slope(xs, ys, i, j), k, int(xs[j] - xs[i])) for i, j in zip(hull, hull[1:])
                     if ys[j] > ys[i]]
    calls, left = np.zeros(gain.shape[1], dtype=int), batch
    best = max((seg[0] for seg in segments), default=0.0)
    for rate, k, size in sorted(segments, key=lambda seg: -seg[0]):
        if rate < min_share * best:
            break
        take = int(min(size, left, room[k] - calls[k]))
        calls[k] += max(take, 0)
        left -= max(take, 0)
        if left <= 0:
            break
    return calls


def _slope(xs, ys, i, j) -> float:
    return (ys[j] - ys[i]) / (xs[j] - xs[i])


def _variance_gain(mu, var, reduction, zone: float):
    """Expected drop in mis-order probability of pairs (μ, σ²) whose variance falls by ``reduction``."""
    var = np.maximum(var, 1e-12)
    var_after = np.maximum(var - reduction, 1e-12)
    moved = mu[..., None] + np.sqrt(np.maximum(reduction, 0.0))[..., None] * _NODES
    after = ndtr(-(np.abs(moved) + zone) / np.sqrt(var_after)[..., None]) @ _WEIGHTS
    return misorder_probability(mu, var, zone) - after


@dataclass
class AdaptiveDesign:
    """Sequential expected-information design (module docstring); ``n_calls`` is the budget (an upper bound)."""

    budget: int = 0
    fit: FitFn | None = None
    batch_size: int = 0  # calls per round; 0: n_models
    confidence: float = 0.95
    init_rounds: int = 2
    per_pair: int = 1  # "top": calls to each chosen pair; "hull": at most this many per pair and round (0: no limit)
    lookahead: str = "global"  # "direct": a pair's own variance; "global": its effect on all near pairs
    indifference: float = 0.0  # log-odds: mis-orders of pairs closer than this are not worth calls
    spread: str = "hull"  # "hull": calls by marginal gain per call (hull_allocation); "top": per_pair to the best
    name = "adaptive"

    def __post_init__(self) -> None:
        if self.fit is None:
            raise ConfigError("the adaptive design needs a rating fit (fit=...), e.g. "
                              "judgewise.ratings.bradley_terry.fit_bt_arrays (a run config gets it by default)")
        if self.budget < 1:
            raise ConfigError(f"the adaptive design needs a budget of at least 1 call, got {self.budget}")
        if self.spread not in ("hull", "top"):
            raise ConfigError(f"spread must be 'hull' or 'top', got {self.spread!r}")
        if not 0.5 < self.confidence < 1:
            raise ConfigError(f"confidence must be in (0.5, 1), got {self.confidence}")

    def n_calls(self, n_models: int, n_prompts: int) -> int:
        return min(int(self.budget), n_prompts * n_models * (n_models - 1) // 2)

    def run(self, models, prompt_ids, verdicts: VerdictFn, rng: np.random.Generator) -> DesignRun:
        return drive(self.steps(models, prompt_ids, rng), verdicts)

    def steps(self, models, prompt_ids, rng: np.random.Generator) -> Steps:
        """The rounds (module docstring). An :class:`Answer` carrying the caller's fit of every game so far is used
        as this round's fit (one fit per round, shared with the caller's stopping rule); else the design fits."""
        check_pool(models, prompt_ids)
        state = _State(len(models), len(prompt_ids), rng, self.spread)
        pairs, outcome, fitted = Pairs.empty(prompt_ids, models), np.zeros(0), None
        budget = self.n_calls(len(models), len(prompt_ids))
        trajectory, reason = [], "budget"
        while len(pairs) < budget:
            room = budget - len(pairs)
            if state.rounds < self.init_rounds or len(pairs) == 0:
                lo, hi = state.cycle()
            else:
                theta, cov = fitted or self.fit(pairs.a, pairs.b, outcome, len(models))
                trajectory.append((len(pairs), np.asarray(theta, float).tolist()))
                reason, lo, hi = self._choose(state, theta, cov, room, len(models))
                if reason:
                    break
            prompt, a, b = state.assign(lo[:room], hi[:room])
            answer = yield Round(prompt, a, b)
            outcome, pairs, fitted = np.concatenate([outcome, answer.outcome]), pairs.extend(prompt, a, b), answer.fit
        else:
            reason = "budget"
        if len(pairs):
            theta, _ = fitted or self.fit(pairs.a, pairs.b, outcome, len(models))
            trajectory.append((len(pairs), np.asarray(theta, float).tolist()))
        return DesignRun(self.name, pairs, outcome, {"stopped": reason, "trajectory": trajectory,
                                                     "confidence": self.confidence})

    def _choose(self, state: "_State", theta, cov, room: int, n_models: int):
        """("resolved" | "exhausted" | "", lo, hi): the round's pairs, or why there is none."""
        if state.resolved(theta, cov, self.confidence, self.indifference):
            return "resolved", None, None
        allocate = state.allocate_global if self.lookahead == "global" else state.allocate
        hull = self.spread == "hull" and self.lookahead == "global"
        per_pair = self.per_pair if hull else max(self.per_pair, 1)
        lo, hi = allocate(theta, cov, min(self.batch_size or n_models, room), per_pair, self.indifference)
        return ("exhausted", None, None) if len(lo) == 0 else ("", lo, hi)


class _State:
    """Bookkeeping of an adaptive run: calls per pair and each pair's cycle through the shuffled prompts."""

    def __init__(self, n_models: int, n_prompts: int, rng: np.random.Generator, spread: str = "hull"):
        self.n, self.n_prompts, self.rng, self.spread = n_models, n_prompts, rng, spread
        self.rounds = 0  # rounds asked for so far (the first ``init_rounds`` are burn-in cycles)
        self.lo, self.hi = np.triu_indices(n_models, k=1)
        self.used = np.zeros(len(self.lo), dtype=int)
        self.offset = rng.integers(n_prompts, size=len(self.lo))
        self.prompt_order = rng.permutation(n_prompts)

    def cycle(self) -> tuple[np.ndarray, np.ndarray]:
        """A random Hamiltonian cycle through all models (one path when n = 2)."""
        perm = self.rng.permutation(self.n)
        nxt = np.roll(perm, -1)
        if self.n == 2:
            perm, nxt = perm[:1], nxt[:1]
        return np.minimum(perm, nxt), np.maximum(perm, nxt)

    def resolved(self, theta, cov, confidence: float, zone: float) -> bool:
        order = np.argsort(-np.asarray(theta))
        i, j = order[:-1], order[1:]
        var = cov[i, i] + cov[j, j] - 2 * cov[i, j]
        return bool(np.all(misorder_probability(theta[i] - theta[j], var, zone) < 1 - confidence))

    def allocate(self, theta, cov, batch: int, per_pair: int, zone: float) -> tuple[np.ndarray, np.ndarray]:
        """The batch's pairs by the KG* rate (best expected gain per call over look-aheads of 1..256 calls,
        so pairs that need many calls to resolve are not undervalued), ``per_pair`` calls to each of the top
        ``batch / per_pair`` pairs."""
        lo, hi = self.lo, self.hi
        mu = theta[lo] - theta[hi]
        var = cov[lo, lo] + cov[hi, hi] - 2 * cov[lo, hi]
        p = 1.0 / (1.0 + np.exp(-mu))
        steps = LOOKAHEAD
        rate = (expected_gain(mu, var, p * (1 - p), steps, zone) / steps).max(axis=1)
        rate[self.used + per_pair > self.n_prompts] = -np.inf  # pair out of prompts
        top = np.argsort(-rate, kind="stable")[: max(1, batch // per_pair)]
        top = top[np.isfinite(rate[top])]
        pair = np.repeat(top, per_pair)[:batch]
        return lo[pair], hi[pair]

    def allocate_global(self, theta, cov, batch: int, per_pair: int, zone: float) -> tuple[np.ndarray, np.ndarray]:
        """Like :meth:`allocate`, but a candidate's value counts the variance it removes from *every* pair
        (within ``NEAR`` ranks when NEAR > 0) through the BT covariance: m calls on pair c with direction u cut pair e's
        variance by m·f·(u_eᵀΣu)² / (1 + m·f·uᵀΣu) (rank-one Fisher update)."""
        lo, hi = self.lo, self.hi
        mu = theta[lo] - theta[hi]
        var = cov[lo, lo] + cov[hi, hi] - 2 * cov[lo, hi]
        p = 1.0 / (1.0 + np.exp(-mu))
        info = p * (1 - p)
        direct = (expected_gain(mu, var, info, LOOKAHEAD, zone) / LOOKAHEAD).max(axis=1)
        direct[self.used + max(per_pair, 1) > self.n_prompts] = -np.inf
        cand = np.argsort(-direct, kind="stable")[:CANDIDATES]
        cand = cand[np.isfinite(direct[cand])]
        rank = np.empty(self.n, dtype=int)
        rank[np.argsort(-theta)] = np.arange(self.n)
        near = np.flatnonzero(np.abs(rank[lo] - rank[hi]) <= (NEAR or self.n))
        su = cov[:, lo[cand]] - cov[:, hi[cand]]                      # Σu per candidate (models × K)
        s = su[lo[cand], np.arange(len(cand))] - su[hi[cand], np.arange(len(cand))]
        w2 = (su[lo[near]] - su[hi[near]]) ** 2                        # (near × K)
        mf = LOOKAHEAD[:, None] * info[cand][None, :]                  # (M × K)
        reduction = mf[None] * w2[:, None, :] / (1 + mf * s[None, :])[None]   # (near × M × K)
        gain = _variance_gain(mu[near][:, None, None], var[near][:, None, None], reduction, zone).sum(axis=0)
        if self.spread == "hull":
            room = np.minimum(self.n_prompts - self.used[cand], per_pair or batch)
            pair = np.repeat(cand, hull_allocation(gain, batch, room))
        else:
            rate = (gain / LOOKAHEAD[:, None]).max(axis=0)
            top = cand[np.argsort(-rate, kind="stable")[: max(1, batch // per_pair)]]
            pair = np.repeat(top, per_pair)[:batch]
        return lo[pair], hi[pair]

    def assign(self, lo, hi) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Prompts for these (lo, hi) calls (each pair walks its own shifted cycle) and a random a/b order."""
        code = lo * self.n + hi - (lo + 1) * (lo + 2) // 2  # index of (lo, hi) in triu order
        order = np.argsort(code, kind="stable")
        rank_in_pair = np.empty(len(code), dtype=int)
        sorted_code = code[order]
        starts = np.r_[0, np.flatnonzero(np.diff(sorted_code)) + 1]
        rank_in_pair[order] = np.arange(len(code)) - np.repeat(starts, np.diff(np.r_[starts, len(code)]))
        step = self.used[code] + rank_in_pair
        prompt = self.prompt_order[(self.offset[code] + step) % self.n_prompts]
        np.add.at(self.used, code, 1)
        self.rounds += 1
        flip = self.rng.random(len(lo)) < 0.5
        return prompt, np.where(flip, hi, lo), np.where(flip, lo, hi)
