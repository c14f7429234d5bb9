"""The rounds of ``judgewise evaluate``: judge a batch, refit Bradley–Terry, check the target and the budget.

:class:`TargetRounds` is a design verdict callback (:data:`judgewise.designs.VerdictFn`) around the judging
engine (:class:`judgewise.judges.engine_verdicts.EngineVerdicts`: the durable store, retries, limits, answer orders).
After each batch it refits the ridge BT on every game judged so far (one row per game, both orders counted)
and raises :class:`StopRounds` when the target is reached (``"target"``) or the next batch would pass
``budget.max_calls`` / ``budget.max_cost`` (``"budget"``; before any cost is known, the first batch may pass
``max_cost`` by its own cost, as ``judge`` may). The budget counts every game of the evaluation,
already stored or paid now, so a rerun replays exactly the same rounds from the store and stops at the same
place, paying nothing twice. A single-shot design is fed to it in prompt chunks (:func:`run_in_chunks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from judgewise.errors import BudgetExceeded
from judgewise.io.schema import failed_mask, usable_mask
from judgewise.judges.limits import Budget
from judgewise.judges.engine_verdicts import EngineVerdicts
from judgewise.pipeline.targets import Target, target_reached
from judgewise.ratings.bradley_terry import fit_bt_arrays

CHUNKS = 30  # a single-shot design is judged in about this many prompt chunks
TREND_ROUNDS = 5  # the calls-to-target estimate fits the expected-τ trend of this many last rounds


class StopRounds(Exception):
    """Raised inside a design's run to end it: ``reason`` is ``"target"`` or ``"budget"``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class EvaluateProgress:
    """What an evaluate progress callback receives after every game."""

    games: int          # games of the evaluation so far (stored earlier or judged now)
    total: int          # the cap: budget.max_calls, or every game the design could ask for
    paid: int = 0       # judge calls paid by this run
    failed: int = 0     # failed games so far
    cost: float = 0.0   # dollars of the evaluation's games
    expected_tau: float | None = None
    calls_to_stop: int | None = None  # estimated games still to go until the τ target or the cap, first reached


def calls_to_target(games: list[int], expected_tau: list[float], target: float) -> float | None:
    """Games still needed until the posterior-expected Kendall τ reaches ``target``, from its trend: the
    uncertainty 1 − E[τ] of a BT ranking shrinks like a standard error, ∝ calls^−½, so c = (1 − E[τ])·√calls is
    estimated as the mean over the last :data:`TREND_ROUNDS` rounds and the target is reached at
    (c / (1 − target))² calls. None before two rounds or when the trend is not improving (a rough guide)."""
    g = np.asarray(games[-TREND_ROUNDS:], float)
    t = np.asarray(expected_tau[-TREND_ROUNDS:], float)
    if len(g) < 2 or g[-1] <= 0 or not t[-1] > t[0] or target >= 1:
        return None
    c = float(np.mean((1 - t) * np.sqrt(np.maximum(g, 1))))
    return max((c / (1 - target)) ** 2 - g[-1], 0.0)


@dataclass
class TargetRounds:
    """The verdict callback of an evaluate run (module docstring)."""

    engine: EngineVerdicts
    target: Target
    l2: float
    max_games: float = float("inf")
    max_cost: float | None = None
    total: int = 0
    progress: Callable[[EvaluateProgress], None] | None = None
    state: EvaluateProgress = field(default_factory=lambda: EvaluateProgress(0, 0))
    rounds: int = 0
    arrays: list = field(default_factory=list)  # (a ids, b ids, outcomes) per round, one row per usable game
    trend: list = field(default_factory=list)  # (games, expected τ) after each round checked against the target

    def __post_init__(self) -> None:
        self.state.total = self.total
        self.index = {m: k for k, m in enumerate(self.engine.pool.models)}
        self.per_comparison = 2 if self.engine.run_options.get("orders", "both") == "both" else 1

    def __call__(self, prompt: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        room = int(min(len(prompt), (self.max_games - self.state.games) // self.per_comparison))
        if room <= 0 or (self.max_cost is not None and self.state.cost >= self.max_cost):
            raise StopRounds("budget")
        out = self._judge(prompt[:room], a[:room], b[:room])
        if room < len(prompt):
            raise StopRounds("budget")
        reached, self.state.expected_tau = target_reached(self.target, *self.fit())
        self._estimate_stop()
        self._show()
        if reached:
            raise StopRounds("target")
        return out

    def judge_batch(self, prompt: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Judge a batch within the budget without checking the target (the anchor pilot's games: counted, stored,
        fitted like every other round's). Raises :class:`StopRounds` ("budget") when it does not fit."""
        room = int(min(len(prompt), (self.max_games - self.state.games) // self.per_comparison))
        if room < len(prompt) or (self.max_cost is not None and self.state.cost >= self.max_cost):
            raise StopRounds("budget")
        out = self._judge(prompt, a, b)
        self._show()
        return out

    def _judge(self, prompt, a, b) -> np.ndarray:
        base = self.state.games
        budget = Budget(max_cost=max(self.max_cost - self.state.cost, 0.0)) if self.max_cost is not None else Budget()
        per_game = self.state.cost / self.state.games if self.state.games else 0.0  # the cap's estimate in flight
        self.engine.run_options.update(budget=budget, est_cost_per_game=per_game,
                                       progress=lambda p: self._show(base + p.done + p.cached))
        try:
            out = self.engine(prompt, a, b)
        except BudgetExceeded as exc:  # the cost cap mid-batch: what finished is stored and counted
            self.engine.results.append(exc.result)
            self._absorb(exc.result.judgments, exc.result.paid_calls)
            raise StopRounds("budget") from None
        self._absorb(self.engine.results[-1].judgments, self.engine.results[-1].paid_calls)
        return out

    def _absorb(self, judgments: pd.DataFrame, paid: int) -> None:
        self.rounds += 1
        s = self.state
        s.games += len(judgments)
        s.paid += int(paid)
        if not len(judgments):
            return
        s.failed += int(failed_mask(judgments).sum())
        s.cost += float(judgments["cost"].fillna(0).sum()) if "cost" in judgments.columns else 0.0
        self.fit_also(judgments)

    def fit_also(self, judgments: pd.DataFrame) -> None:
        """Add games to the BT fit (the usable ones, between models of the pool). ``_absorb`` adds each round's;
        a caller adds games judged before the run (``evaluate --add-model``: the stored leaderboard's), which are
        fitted with the run's but not counted in its games, calls, cost or failures."""
        ok = judgments[usable_mask(judgments)]
        ok = ok[ok["model_a"].isin(self.index) & ok["model_b"].isin(self.index)]
        self.arrays.append((ok["model_a"].map(self.index).to_numpy(int), ok["model_b"].map(self.index).to_numpy(int),
                            ok["outcome"].to_numpy(float)))

    def _estimate_stop(self) -> None:
        """:attr:`EvaluateProgress.calls_to_stop`: :func:`calls_to_target` for a τ target, capped by the budget."""
        s = self.state
        left = max(self.total - s.games, 0)
        if self.target.kendall_tau is not None and s.expected_tau is not None:
            self.trend.append((s.games, s.expected_tau))
            to_target = calls_to_target(*map(list, zip(*self.trend)), self.target.kendall_tau)
            s.calls_to_stop = left if to_target is None else int(min(to_target, left))
        else:
            s.calls_to_stop = left

    def fit(self) -> tuple[np.ndarray, np.ndarray]:
        """The ridge BT fit (θ̂ natural scale, covariance) on every usable game so far."""
        if not self.arrays:
            n = len(self.index)
            return np.zeros(n), np.eye(n) / self.l2
        a, b, o = (np.concatenate(parts) for parts in zip(*self.arrays))
        return fit_bt_arrays(a, b, o, len(self.index), l2=self.l2)

    def _show(self, games: int | None = None) -> None:
        if self.progress is not None:
            s = self.state
            left = None if s.calls_to_stop is None or games is None else max(s.calls_to_stop - (games - s.games), 0)
            shown = s if games is None else EvaluateProgress(**{**s.__dict__, "games": games, "calls_to_stop": left})
            self.progress(shown)


def run_in_chunks(pairs, rounds: TargetRounds, rng: np.random.Generator, chunks: int = CHUNKS) -> None:
    """Feed a single-shot design's comparisons (:class:`judgewise.designs.Pairs`) to ``rounds`` in chunks of
    prompts, the prompts in a seeded random order (so stopping early does not favour low prompt ids)."""
    n_prompts = len(pairs.prompt_ids)
    position = np.empty(n_prompts, dtype=int)
    position[rng.permutation(n_prompts)] = np.arange(n_prompts)
    size = max(1, -(-n_prompts // chunks))
    chunk = position[pairs.prompt] // size
    for c in range(int(chunk.max()) + 1 if len(chunk) else 0):
        take = np.flatnonzero(chunk == c)
        take = take[np.argsort(position[pairs.prompt[take]], kind="stable")]
        if len(take):
            rounds(pairs.prompt[take], pairs.a[take], pairs.b[take])
