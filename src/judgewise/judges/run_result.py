"""What a run is told and what it gives back: :class:`RunSettings` (the keywords of ``run_judging``, once) and
:class:`RunResult` (the judgments table and the run's counts), with the per-comparison view of both orders."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgewise.io.schema import failed_mask, usable_mask
from judgewise.judges.batch import BatchCounts, BatchSettings
from judgewise.judges.limits import Budget, RateLimits
from judgewise.judges.scheduler import RetryPolicy


@dataclass(frozen=True)
class RunSettings:
    """How a run judges: the keywords of :func:`run_judging`, once, for every engine run (judging, grading,
    generating answers)."""

    orders: str = "both"  # "both" answer orders per comparison, or "one" chosen by a seeded coin (judging only)
    seed: int = 0  # the coin of ``orders`` "one", and the scheduler's retry jitter
    concurrency: int = 8  # games in flight at once
    limits: RateLimits | None = None  # requests / tokens per minute (:class:`RateLimits`)
    timeout_s: float = 120.0  # per call
    retry: RetryPolicy | None = None  # retries of a failed call (:class:`RetryPolicy`)
    budget: Budget | None = None  # caps on calls and cost (:class:`Budget`)
    retry_failed: bool = False  # judge again the games stored as failed
    est_cost_per_game: float = 0.0  # for the cost cap before the first result
    poll_s: float = 0.5  # how often to look again at games another process holds
    worker: bool = False  # one of many workers of one job on a shared (PostgreSQL) store
    batch: BatchSettings | None = None  # send the calls through OpenAI's Batch API first (judges.batch)

    @classmethod
    def of(cls, settings: RunSettings | None = None, **options) -> RunSettings:
        """``settings`` (default: every default) with the fields named in ``options`` replaced: what the keyword
        form (``run_judging(..., concurrency=16)``) builds; an unknown keyword is a TypeError naming it."""
        return dataclasses.replace(settings or cls(), **options)



@dataclass
class RunResult:
    """The judgments of a run (one row per game, canonical columns + store columns) and what it cost."""

    judgments: pd.DataFrame
    n_comparisons: int
    n_games: int
    judged: int = 0      # games judged ok in this run
    failed: int = 0      # games stored as failed in this run
    cached: int = 0      # games already in the store (no call made)
    calls_made: int = 0  # successful judge calls this run (re-asks included; answers reused from the journal not)
    retries: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    elapsed_s: float = 0.0
    stopped: str | None = None  # why the run stopped early, if it did
    duplicates: int = 0  # planned games identical to an earlier one (same key), judged once
    maybe_charged_timeouts: int = 0  # calls that timed out after being sent: the server may have billed them
    reused_answers: int = 0  # answers received by an earlier (stopped or killed) run, used instead of a new call
    by_others: int = 0  # worker mode: games of the job that other workers stored while this one ran
    batches: int = 0  # batch mode (judges.batch): batches submitted
    batches_resumed: int = 0  # open batches of an earlier (stopped or killed) run polled instead of resubmitted
    batch_lines: int = 0  # calls submitted in batches
    batch_answered: int = 0  # calls a batch answered (taken from the journal: neither in calls_made nor reused_answers)
    batch_failed: int = 0  # batch lines failed (an error, a malformed answer, no line): sent live or batched again
    batch_expired: int = 0  # batch lines not run before their batch expired: sent live or batched again
    batch_unreadable: int = 0  # batch output lines not readable (the provider may have billed them: paid again)
    batch_duplicates: int = 0  # batch output lines answering a call already answered (the first answer kept)
    batch_conflicting: int = 0  # of those, lines whose answer differed from the first
    tokens_cached: int = 0  # of tokens_in, read from the server's prompt cache (as its usage reported)

    def __repr__(self) -> str:
        """The counts, and the table by its size: ``asyncio.run`` formats the finished main task (and so its result)
        when it restores the SIGINT handler, and a table printed whole cost ~50 ms at the end of every run."""
        counts = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                           if f.name != "judgments")
        rows, cols = self.judgments.shape
        return f"RunResult(judgments=<{rows} rows x {cols} columns>, {counts})"

    def by_comparison(self) -> pd.DataFrame:
        """One row per comparison with both orders averaged (see :func:`average_orders`)."""
        return average_orders(self.judgments)

    @property
    def swap_consistency(self) -> float | None:
        return swap_consistency(self.judgments) if len(self.judgments) else None

    @property
    def paid_calls(self) -> int:
        """Calls this run paid for: live calls, and batch lines answered (or billed and unreadable)."""
        return self.calls_made + self.batch_answered + self.batch_unreadable

    @property
    def ok_total(self) -> int:
        """Games of the judgments table judged ok (stored earlier or now)."""
        return int((self.judgments["status"] == "ok").sum()) if len(self.judgments) else 0

    @property
    def failed_total(self) -> int:
        """Games of the judgments table stored as failed (io.schema's one rule)."""
        return int(failed_mask(self.judgments).sum()) if len(self.judgments) else 0

    @classmethod
    def combine(cls, results: list[RunResult], judgments: pd.DataFrame | None = None) -> RunResult:
        """Several runs (the rounds of a multi-round design) as one: every counter summed, the first reason to stop,
        and their judgments as one table with each game once (``judgments``: that table, when the caller has it
        already; an empty frame when only the counters are wanted)."""
        if judgments is None:
            frames = [r.judgments for r in results if len(r.judgments)]
            judgments = (pd.concat(frames, ignore_index=True).drop_duplicates("judgment_id") if frames
                         else pd.DataFrame())
        counted = [f.name for f in dataclasses.fields(cls) if f.name not in ("judgments", "stopped")]
        sums = {name: sum(getattr(r, name) for r in results) for name in counted}
        return cls(judgments=judgments, stopped=next((r.stopped for r in results if r.stopped), None), **sums)

    def __add__(self, other: RunResult) -> RunResult:
        return RunResult.combine([self, other])

    def counts(self) -> dict:
        """The counters under their summary names, cost and time rounded: what :meth:`combine` sums."""
        return {"comparisons": self.n_comparisons, "games": self.n_games, "judged": self.judged,
                "failed": self.failed, "cached": self.cached, "calls_made": self.calls_made,
                "retries": self.retries, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "cost": round(self.cost, 6), "elapsed_s": round(self.elapsed_s, 3), "duplicates": self.duplicates,
                "maybe_charged_timeouts": self.maybe_charged_timeouts, "reused_answers": self.reused_answers,
                "by_others": self.by_others, "tokens_cached": self.tokens_cached}

    def summary(self) -> dict:
        """The counters and the judgments table's totals, JSON-ready (``judge --json``)."""
        counts = self.counts()
        late = ("duplicates", "maybe_charged_timeouts", "reused_answers", "by_others")  # after the totals
        out = {**{k: v for k, v in counts.items() if k not in late}, "ok_total": self.ok_total,
               "failed_total": self.failed_total, "swap_consistency": self.swap_consistency,
               "stopped": self.stopped, **{k: counts[k] for k in late}}
        if self.batches or self.batches_resumed:  # batch mode only: the summary of a live run is as it was
            out["batch"] = self.batch_counts()
        return out

    def batch_counts(self) -> dict:
        """What the batches did: submitted, resumed, lines, answered, failed, expired."""
        return {"batches": self.batches, "resumed": self.batches_resumed, "lines": self.batch_lines,
                "answered": self.batch_answered, "failed": self.batch_failed, "expired": self.batch_expired,
                "unreadable": self.batch_unreadable, "duplicates": self.batch_duplicates,
                "conflicting": self.batch_conflicting}

    def note_batches(self, counts: BatchCounts) -> None:
        """Add what :func:`~judgewise.judges.batch.run_batches` did."""
        self.batches, self.batches_resumed, self.batch_lines = counts.batches, counts.resumed, counts.lines
        self.batch_answered, self.batch_failed, self.batch_expired = counts.answered, counts.failed, counts.expired
        self.batch_unreadable = counts.unreadable
        self.batch_duplicates, self.batch_conflicting = counts.duplicates, counts.conflicting
        self.reused_answers = max(0, self.reused_answers - counts.answered)  # those from batches are counted here


def average_orders(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per (prompt, model_a, model_b, judge): mean model_a outcome over the judged orders, games and
    failures, and whether the two orders agree on the winner (``consistent``; NA unless both judged)."""
    keys = ["prompt_id", "model_a", "model_b", "judge"]
    df = judgments.assign(ok=usable_mask(judgments))  # io.schema's one rule
    ok = df[df["ok"]].assign(side=lambda d: np.sign(d["outcome"] - 0.5))  # winner: +1 model_a, 0 tie, -1 model_b
    agg = ok.groupby(keys).agg(outcome=("outcome", "mean"), n_judged=("outcome", "size"),
                               n_sides=("side", "nunique"))
    counts = df.groupby(keys).agg(n_games=("ok", "size"), n_failed=("ok", lambda s: int((~s).sum())))
    out = counts.join(agg, how="left").reset_index()
    out["n_judged"] = out["n_judged"].fillna(0).astype(int)
    both = out["n_judged"] >= 2
    out["consistent"] = pd.array([pd.NA] * len(out), dtype="boolean")
    out.loc[both, "consistent"] = out.loc[both, "n_sides"] == 1
    return out.drop(columns="n_sides")


def swap_agreement(judgments: pd.DataFrame) -> np.ndarray:
    """1.0 / 0.0 per comparison judged at least twice (both orders): whether its verdicts name the same winner
    (or all tie) — the one definition of swap consistency (``analysis.bias.swap_consistency`` adds an interval)."""
    if not len(judgments) or "model_b" not in judgments.columns:  # pointwise grades have no order to swap
        return np.zeros(0)
    return average_orders(judgments)["consistent"].dropna().to_numpy(dtype=float)


def swap_consistency(judgments: pd.DataFrame) -> float | None:
    """Share of comparisons judged in both orders whose two verdicts name the same winner (or both tie)."""
    agree = swap_agreement(judgments)
    return float(agree.mean()) if len(agree) else None

