"""The rounds of ``judgewise evaluate`` as one plain loop: judge a round, fit once, ask "stop?" and get a reason.

:func:`drive_rounds` asks the design for a round (:class:`judgewise.designs.base.Round`), has
:class:`TargetRounds` judge it through the engine (:class:`judgewise.judges.engine_verdicts.EngineVerdicts`: the
durable store, retries, limits, answer orders), which refits the ridge BT once on every game judged so far (one row
per game, both orders counted; the prompt-clustered covariance, :mod:`judgewise.pipeline.targets`) and answers with
a stop reason or none: ``"target"`` when the target is reached, ``"budget"`` when the round did not fit in
``budget.max_calls`` / ``budget.max_cost`` (before any cost is known, the first round may pass ``max_cost`` by its
own cost, as ``judge`` may). The same fit goes back to the design with the outcomes, so a round fits BT once. The
budget counts every game of the evaluation, already stored or paid now, so a rerun replays exactly the same rounds
from the store and stops at the same place, paying nothing twice. A single-shot design is fed in prompt chunks
(:func:`chunk_steps`). A panel of judges answers a round as one judge does (:class:`RoundVerdicts`): every member
judges it, and the fit reads the panel's derived verdicts (:mod:`judgewise.pipeline.panel_rounds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np
import pandas as pd

from judgewise.designs.base import Answer, DesignRun, Pairs, Round, Steps, next_round
from judgewise.errors import BudgetExceeded
from judgewise.io.schema import failed_mask, usable_mask
from judgewise.judges.limits import Budget
from judgewise.judges.run_result import RunResult
from judgewise.pipeline.targets import Target, TargetCheck, check_target
from judgewise.ratings.bradley_terry import bt_cluster_covariance, fit_bt_arrays

CHUNKS = 30  # a single-shot design is judged in about this many prompt chunks
TREND_ROUNDS = 5  # the calls-to-target estimate fits the expected-τ trend of this many last rounds


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
    tau_probability: float | None = None  # P(τ_m ≥ target) at the last round (a τ target)


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


class RoundVerdicts(Protocol):
    """What judges a round for :class:`TargetRounds`: one judge
    (:class:`judgewise.judges.engine_verdicts.EngineVerdicts`) or a panel of judges
    (:class:`judgewise.pipeline.panel_rounds.PanelVerdicts`, each member judging every game)."""

    pool: object
    run_options: dict  # a round's budget, cost estimate and progress callback are set here before it is judged
    results: list[RunResult]  # one per round: every call's judgments (all members' for a panel) and counters
    skipped: list[str]

    def __call__(self, prompt: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

    def judgments(self) -> pd.DataFrame: ...

    def ranked_games(self, judgments: pd.DataFrame) -> pd.DataFrame: ...


@dataclass
class TargetRounds:
    """Judges an evaluate run's rounds and reads each against the target (module docstring). ``judges``: the
    calls each game takes (a panel's members each judge it), so ``max_games`` and ``total`` count calls."""

    engine: RoundVerdicts
    target: Target
    l2: float
    max_games: float = float("inf")
    max_cost: float | None = None
    total: int = 0
    progress: Callable[[EvaluateProgress], None] | None = None
    state: EvaluateProgress = field(default_factory=lambda: EvaluateProgress(0, 0))
    rounds: int = 0
    arrays: list = field(default_factory=list)  # (a ids, b ids, outcomes, prompt codes) per round, usable games
    trend: list = field(default_factory=list)  # (games, expected τ) after each round checked against the target
    current: tuple | None = None  # the fit (θ, Σ) of every game so far
    check: TargetCheck | None = None  # the last round's reading of the target
    fits: int = 0  # BT fits made (one per round)
    judges: int = 1

    def __post_init__(self) -> None:
        self.state.total = self.total
        self.index = {m: k for k, m in enumerate(self.engine.pool.models)}
        self.prompt_codes: dict[str, int] = {}
        self.per_comparison = (2 if self.engine.run_options.get("orders", "both") == "both" else 1) * self.judges

    def has_room(self, comparisons: int) -> bool:
        """Whether ``comparisons`` more fit in the budget (the games cap, and the cost cap not yet reached)."""
        return (self._room(comparisons) == comparisons
                and (self.max_cost is None or self.state.cost < self.max_cost))

    def _room(self, comparisons: int) -> int:
        """How many of ``comparisons`` the games cap leaves room for."""
        if self.max_games == float("inf"):
            return comparisons
        return int(max(min(comparisons, (self.max_games - self.state.games) // self.per_comparison), 0))

    def judge_round(self, step: Round, read_target: bool = True) -> tuple[np.ndarray, str | None]:
        """Judge what the budget allows of ``step``, refit, and read the target (unless ``read_target`` is False:
        the anchor pilot). Returns model_a's outcomes per comparison and the stop reason, or None to go on."""
        room = self._room(len(step))
        if room <= 0 or (self.max_cost is not None and self.state.cost >= self.max_cost):
            return np.full(len(step), np.nan), "budget"
        out, capped = self._judge(step.prompt[:room], step.a[:room], step.b[:room])
        self._refit()
        if capped or room < len(step):
            return np.r_[out, np.full(len(step) - len(out), np.nan)], "budget"
        if read_target:
            self.check = check_target(self.target, *self.current)
            self.state.expected_tau, self.state.tau_probability = self.check.expected_tau, self.check.probability
            self._estimate_stop()
        self._show()
        return out, "target" if read_target and self.check.reached else None

    def _judge(self, prompt, a, b) -> tuple[np.ndarray, bool]:
        """(outcomes, whether the cost cap ended the batch: what finished is stored and counted)."""
        base = self.state.games
        budget = Budget(max_cost=max(self.max_cost - self.state.cost, 0.0), stored_cost_counts=True) \
            if self.max_cost is not None else Budget()
        per_game = self.state.cost / self.state.games if self.state.games else 0.0  # the cap's estimate in flight
        self.engine.run_options.update(budget=budget, est_cost_per_game=per_game,
                                       progress=lambda p: self._show(base + p.done + p.cached))
        try:
            out = self.engine(prompt, a, b)
        except BudgetExceeded as exc:
            self.engine.results.append(exc.result)
            self._absorb(exc.result.judgments, exc.result.paid_calls)
            return np.full(len(prompt), np.nan), True
        self._absorb(self.engine.results[-1].judgments, self.engine.results[-1].paid_calls)
        return out, False

    def _absorb(self, judgments: pd.DataFrame, paid: int) -> None:
        self.rounds += 1
        s = self.state
        s.games += len(judgments)
        s.paid += int(paid)
        if not len(judgments):
            return
        s.failed += int(failed_mask(judgments).sum())
        s.cost += float(judgments["cost"].fillna(0).sum()) if "cost" in judgments.columns else 0.0
        self.fit_also(self.engine.ranked_games(judgments))

    def fit_also(self, judgments: pd.DataFrame) -> None:
        """Add games to the BT fit (the usable ones, between models of the pool). ``_absorb`` adds each round's;
        a caller adds games judged before the run (``evaluate --add-model``: the stored leaderboard's), which are
        fitted with the run's but not counted in its games, calls, cost or failures."""
        ok = judgments[usable_mask(judgments)]
        ok = ok[ok["model_a"].isin(self.index) & ok["model_b"].isin(self.index)]
        codes = self.prompt_codes
        prompts = [codes.setdefault(p, len(codes)) for p in ok["prompt_id"].astype(str)]
        self.arrays.append((ok["model_a"].map(self.index).to_numpy(int), ok["model_b"].map(self.index).to_numpy(int),
                            ok["outcome"].to_numpy(float), np.asarray(prompts, dtype=int)))
        self.current = None

    def _refit(self) -> None:
        """The round's one fit: ridge BT on every usable game, with the prompt-clustered covariance."""
        if not self.arrays:
            n = len(self.index)
            self.current = (np.zeros(n), np.eye(n) / self.l2)
            return
        a, b, o, prompt = (np.concatenate(parts) for parts in zip(*self.arrays))
        theta, cov = fit_bt_arrays(a, b, o, len(self.index), l2=self.l2)
        self.current = (theta, bt_cluster_covariance(theta, cov, a, b, o, prompt))
        self.check = None  # read against the target again only for a new fit
        self.fits += 1

    def fit(self) -> tuple[np.ndarray, np.ndarray]:
        """The fit (θ̂ natural scale, prompt-clustered covariance) of every usable game so far."""
        if self.current is None:
            self._refit()
        return self.current

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

    def _show(self, games: int | None = None) -> None:
        if self.progress is not None:
            s = self.state
            left = None if s.calls_to_stop is None or games is None else max(s.calls_to_stop - (games - s.games), 0)
            shown = s if games is None else EvaluateProgress(**{**s.__dict__, "games": games, "calls_to_stop": left})
            self.progress(shown)


def drive_rounds(steps: Steps, rounds: TargetRounds) -> tuple[str | None, DesignRun | None]:
    """The loop: each round judged, fitted once and read; the fit handed back to the design with the outcomes.
    Returns (the stop reason, None) when the target or the budget stopped it, else (None, the design's run)."""
    step = next_round(steps)
    while isinstance(step, Round):
        outcome, reason = rounds.judge_round(step)
        if reason is not None:
            steps.close()
            return reason, None
        step = next_round(steps, Answer(outcome, rounds.current))
    return None, step


def chunk_steps(pairs: Pairs, rng: np.random.Generator, chunks: int = CHUNKS) -> Steps:
    """A single-shot design's comparisons (:class:`judgewise.designs.Pairs`) as rounds of prompt chunks, the
    prompts in a seeded random order (so stopping early does not favour low prompt ids)."""
    n_prompts = len(pairs.prompt_ids)
    position = np.empty(n_prompts, dtype=int)
    position[rng.permutation(n_prompts)] = np.arange(n_prompts)
    size = max(1, -(-n_prompts // chunks))
    chunk = position[pairs.prompt] // size
    outcomes = []
    for c in range(int(chunk.max()) + 1 if len(chunk) else 0):
        take = np.flatnonzero(chunk == c)
        take = take[np.argsort(position[pairs.prompt[take]], kind="stable")]
        if len(take):
            outcomes.append((yield Round(pairs.prompt[take], pairs.a[take], pairs.b[take])).outcome)
    return DesignRun("chunks", pairs, np.concatenate(outcomes) if outcomes else np.zeros(0), {"stopped": None})
