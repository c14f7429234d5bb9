"""Run a judging job: comparisons → games (one or both orders) → judge → store, and the judgments table.

``run_judging`` is the Python API behind ``judgewise judge``. Each comparison becomes two games (both
answer orders, the default, against position bias as Arena-lite §4.3.3 and A.8.2 alternate the order) or
one whose order is a seeded coin per (prompt, pair). Games already in
the store are not judged again; new ones are judged under the scheduler's limits and stored as they
finish; the result is the canonical judgments table (one row per game, with ``first``) plus counts.
Every answer received is journaled in the store before anything else happens (``scheduler.AnswerJournal``),
so no call whose answer the engine holds is ever sent again; calls that timed out after being sent are
counted as ``maybe_charged_timeouts``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import gc
import hashlib
import json
import logging
import os
import sqlite3
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from judgewise.errors import BudgetExceeded, ConfigError, JudgeError, StoreUnavailable
from judgewise.io.schema import failed_mask, usable_mask
from judgewise.judges import eventloop
from judgewise.judges.batch import BatchCounts, BatchSettings, hold_store, run_batches
from judgewise.judges.base import Comparison, FatalCallError, Game, Judge, JudgeResult, RetryableCallError
from judgewise.judges.limits import Budget, RateLimits
from judgewise.judges.scheduler import GAME_KEY, RetryPolicy, ScheduledBackend, off_loop
from judgewise.store.leases import UNSTORABLE
from judgewise.store.sqlite import concat_frames
from judgewise.store.judgments import GameRecord, export_frame
from judgewise.store.opening import Location, open_store
from judgewise.store.protocol import JudgmentStoreLike, ResultStore, SharedQueue

log = logging.getLogger(__name__)

ORDERS = ("both", "one")
CLAIM_AHEAD = 32  # most games a run claims in one transaction (fewer commits per game at high concurrency)


# -- identities and keys ----------------------------------------------------------------------------
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def canonical_json(obj) -> str:
    """Stable JSON text (sorted keys) used for hashing and the stored judge identity (one encoder made once: a
    game key is planned for every game of a run)."""
    return _CANONICAL.encode(obj)


def judge_name(identity: dict) -> str:
    """The short judge label of the judgments table: ``identity["name"]`` or model|template."""
    if identity.get("name"):
        return str(identity["name"])
    backend = identity.get("backend")
    model = identity.get("model") or (backend.get("model") if isinstance(backend, dict) else None)
    parts = [str(p) for p in (model, template_name(identity)) if p]
    if parts:
        return "|".join(parts)
    kind = identity.get("kind") or identity.get("backend") or "judge"
    return f"{kind}-{hashlib.sha256(canonical_json(identity).encode()).hexdigest()[:8]}"


def template_name(identity: dict) -> str | None:
    """``name@version`` of the identity's template (LLMJudge: ``template`` + ``template_version``)."""
    t = identity.get("template")
    if isinstance(t, dict):
        t, version = t.get("name"), t.get("version")
    else:
        version = identity.get("template_version")
    if t is None:
        return None
    return f"{t}@{version}" if version is not None else str(t)


def game_key(identity: dict, game: Game, judge=None, identity_json: str | None = None) -> str:
    """Content hash of (judge identity with its parameters and template, prompt, both responses, order), and of
    the parameters the judge reads for this game only (``judge.game_parameters(game)`` when it has them: the
    simulated judge's true ratings of the two models, too many to be in its identity): sha256 of the canonical JSON
    of ``{"judge": identity, "prompt_id", "prompt", "reference", "model_a", "model_b", "response_a", "response_b",
    "swapped"[, "turns"][, "parameters"]}``. ``identity_json``: the identity's :func:`canonical_json` when the caller
    has it (planning a run encodes it once: :func:`keyed_games`)."""
    head = canonical_json(identity) if identity_json is None else identity_json
    parameters = judge.game_parameters(game) if hasattr(judge, "game_parameters") else None
    return _key_of(head, _comparison_json(game.comparison, parameters), game)


def keyed_games(identity: dict, games: Iterable[Game], judge=None) -> dict[str, Game]:
    """Store key (:func:`game_key`) → game, each game once (a repeated one collapses into the first): the
    identity encoded once, and each comparison's part of the key once for both its orders."""
    head, per_game = canonical_json(identity), hasattr(judge, "game_parameters")
    bodies: dict[Comparison, str] = {}
    out: dict[str, Game] = {}
    for g in games:
        c = g.comparison
        if per_game:
            body = _comparison_json(c, judge.game_parameters(g))
        elif (body := bodies.get(c)) is None:
            body = bodies[c] = _comparison_json(c, None)
        out.setdefault(_key_of(head, body, g), g)
    return out


def _comparison_json(c: Comparison, parameters) -> str:
    """The canonical JSON of a game's key payload but its order and turns ("swapped" and "turns" sort after
    every other key), without the closing brace."""
    payload = {"prompt_id": c.prompt_id, "prompt": c.prompt, "reference": c.reference,
               "model_a": c.model_a, "model_b": c.model_b, "response_a": c.response_a, "response_b": c.response_b}
    if parameters is not None:
        payload["parameters"] = parameters
    return canonical_json(payload)[:-1]


def _key_of(head: str, body: str, game: Game) -> str:
    """sha256 of the key payload's canonical JSON, its identity (``head``, which sorts first as "judge") and its
    order and turns (which sort last) put around ``body``."""
    tail = ',"swapped":true' if game.swapped else ',"swapped":false'
    if game.comparison.turns:  # a multi-turn conversation (single-turn keys are as they always were)
        tail += ',"turns":' + canonical_json([list(t) for t in game.comparison.turns])
    return hashlib.sha256(f'{{"judge":{head},{body[1:]}{tail}}}'.encode("utf-8")).hexdigest()


def _coin(seed: int, c: Comparison) -> bool:
    digest = hashlib.sha256(canonical_json([seed, c.prompt_id, c.model_a, c.model_b]).encode()).digest()
    return bool(digest[0] & 1)


def plan_games(comparisons: Iterable[Comparison], *, orders: str = "both", seed: int = 0) -> list[Game]:
    """Both orders per comparison, or one order chosen by a seeded coin per (prompt, pair); in the order the judge
    API's prompt cache rewards (:func:`cache_order`)."""
    if orders not in ORDERS:
        raise ConfigError(f'orders: expected one of {list(ORDERS)}, found "{orders}"')
    games = []
    for c in comparisons:
        if orders == "both":
            games += [Game(c, swapped=False), Game(c, swapped=True)]
        else:
            games.append(Game(c, swapped=_coin(seed, c)))
    return cache_order(games)


def cache_order(games: list[Game]) -> list[Game]:
    """``games`` grouped for a prompt cache (OpenAI's caches a prompt's prefix, 1,024 tokens or more, for a few
    minutes): a prompt's games together, and among them those showing the same answer first back to back, so that
    they share the prefix system prompt → instruction → first answer (the templates put the shared parts first).
    Stable: prompts, and first answers within a prompt, keep the order of their first game."""
    prompts: dict[str, int] = {}
    firsts: dict[tuple[str, str], int] = {}

    def place(g: Game) -> tuple[int, int]:
        prompt = g.comparison.prompt_id
        return prompts.setdefault(prompt, len(prompts)), firsts.setdefault((prompt, g.first_model), len(firsts))
    return sorted(games, key=place)


# -- settings ---------------------------------------------------------------------------------------
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


# -- results ----------------------------------------------------------------------------------------
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


# -- the run ----------------------------------------------------------------------------------------
def judge_labels(identity: dict) -> dict:
    """The judge columns of a store row: ``judge`` (:func:`judge_name`), ``template`` and ``judge_identity`` (the
    identity's canonical JSON)."""
    return {"judge": judge_name(identity), "template": template_name(identity),
            "judge_identity": canonical_json(identity)}


def _game_recorder(identity: dict) -> Callable:
    """:func:`_record` for one run, the identity's labels computed once (not once a game)."""
    labels = judge_labels(identity)
    return lambda key, game, _identity, result: _record(key, game, identity, result, labels)


def _record(key: str, game: Game, identity: dict, result: JudgeResult, labels: dict | None = None) -> GameRecord:
    """A store row from a judge result, verdict turned to the canonical model_a view (``labels``: the identity's
    :func:`judge_labels`, when the caller has them)."""
    labels = labels or judge_labels(identity)
    c, v = game.comparison, result.verdict
    ok = v is not None and result.error is None
    flip = game.swapped

    def view(x, mirror):
        return None if x is None else (mirror(x) if flip else x)

    return GameRecord(
        key=key, prompt_id=c.prompt_id, model_a=c.model_a, model_b=c.model_b, first=game.first_model,
        swapped=flip, **labels, status="ok" if ok else "failed", raw=result.raw or "",
        verdict5=view(v.verdict5 if v else None, lambda x: -x), label=v.label if v else None,
        outcome=view(v.outcome if v else None, lambda x: 1.0 - x) if ok else None,
        soft=view(v.soft if v else None, lambda x: 1.0 - x),
        error=None if ok else (result.error or "judge returned no verdict"),
        tokens_in=result.tokens_in, tokens_out=result.tokens_out, latency_s=result.latency_s,
        cost=result.cost, n_calls=result.n_calls, turn=len(c.turns) or None, tokens_cached=result.tokens_cached)


KEPT = {"status", "error", "tokens_in", "tokens_out", "latency_s", "cost", "n_calls", "created_at", "mode", "turn",
        "tokens_cached"}


def refused_record(rec, reason: str):
    """``rec`` (any store record dataclass) as a failed row with ``reason``: its identifying fields (those without a
    default) and its call counts kept, everything the answer brought (texts, verdict, score) back to its default."""
    out = dataclasses.replace(rec, status="failed", error=reason)
    for f in dataclasses.fields(rec):
        value = getattr(out, f.name)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if f.default is not dataclasses.MISSING and (f.name not in KEPT or (f.default == 0 and not number)):
            setattr(out, f.name, f.default)
    return out


def refused_game(rec, exc: BaseException):
    """The failed row stored in place of ``rec`` when its store refused it (a value its database cannot hold,
    :data:`UNSTORABLE`): :func:`refused_record` with the reason, its calls, tokens and cost kept (``--retry-failed``
    asks again)."""
    reason = f"the answer could not be stored ({type(exc).__name__}: {str(exc)[:200]})"
    log.warning("game %s: %s; stored as a failed game", rec.key[:12], reason)
    return refused_record(rec, reason)


@dataclass
class Progress:
    """What a progress callback receives after every finished game."""

    total: int       # games to judge in this run (cached ones excluded)
    done: int = 0
    failed: int = 0
    cached: int = 0
    calls: int = 0
    cost: float = 0.0


@dataclass
class _Run:
    judge: Judge
    store: ResultStore
    identity: dict
    budget: Budget
    retry_failed: bool
    progress: Callable[[Progress], None] | None
    est_cost_per_game: float
    state: Progress = field(default_factory=lambda: Progress(total=0))
    in_flight: int = 0
    judged: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    stop: BaseException | None = None
    busy: list = field(default_factory=list)
    storing: set = field(default_factory=set)  # futures of rows handed to the store's end-of-turn commit
    stored_keys: list = field(default_factory=list)  # keys of the rows this run stored
    rows: _RowsAhead | None = None  # reads back the rows stored before the last wave, during it
    crashed: BaseException | None = None  # the error of a commit that lost rows handed over: the run raises it
    record: Callable[[str, object, dict, JudgeResult], GameRecord] = None  # default: a game's record (_record)

    async def claim_next(self, queue: deque, claimed: deque, size: int) -> None:
        """Claim the next ``size`` games of ``queue`` (one transaction: the store's ``claim_many``; one by one with
        ``size`` 1): those claimed go to ``claimed``, those stored meanwhile count as cached, and those another
        process holds wait in ``busy``."""
        batch = [queue.popleft() for _ in range(min(size, len(queue)))]
        if size > 1:
            answers = await off_loop(self.store, "claim_many", [k for k, _ in batch], retry_failed=self.retry_failed)
        else:
            answers = [await off_loop(self.store, "claim", batch[0][0], retry_failed=self.retry_failed)]
        for item, answer in zip(batch, answers):
            if answer == "done":
                self.state.cached += 1
                self.state.total -= 1
            elif answer == "busy":
                self.busy.append(item)
            else:
                claimed.append(item)

    async def judge_claimed(self, key: str, game) -> None:
        """Judge a game this run holds the claim of, and store it (or release the claim when the run stops). On a
        store that commits on the loop (SQLite's ``record_soon``) the row is committed at the end of this turn of
        the loop and the game counted then (:meth:`_settled`), while this worker goes on to its next game: its next
        call goes out in this turn, not two turns later (at 256 calls in flight, ~8% of them were waiting there).
        On any other store the row is committed before this returns."""
        try:
            self.budget.check(calls=self.state.calls, cost=self.state.cost, in_flight=self.in_flight,
                              est_cost_per_game=self._cost_per_game())
        except BudgetExceeded as exc:
            self.store.release(key)
            self.stop = self.stop or exc
            return
        self.in_flight += 1  # until the game is stored and counted: the budget sees it either in flight or done
        handed_over = False  # to the end-of-turn commit, which counts the game out of in_flight
        try:
            result = await self._judged(key, game)
            if result is not None:
                rec = (self.record or _record)(key, game, self.identity, result)
                if self._commits_on_loop():
                    handed_over = self._store_soon(rec)
                else:
                    self._stored(await self._store(rec))
        finally:
            if not handed_over:
                self.in_flight -= 1

    async def _judged(self, key: str, game) -> JudgeResult | None:
        """The judge's result for a claimed game (a failed one when retries ran out), or None when the backend
        refused the call (the run stops; the claim is released)."""
        token = GAME_KEY.set(key)  # the scheduler journals this game's answers under its key
        try:
            return await self.judge.judge(game)
        except RetryableCallError as exc:  # retries exhausted: a failed game with its reason
            return JudgeResult(verdict=None, error=str(exc), n_calls=0)
        except FatalCallError as exc:
            self.store.release(key)
            self.stop = self.stop or exc
            return None
        except BaseException:
            self.store.release(key)
            raise
        finally:
            GAME_KEY.reset(token)

    async def _store(self, rec):
        """Store ``rec``; a row the store refuses (a value its database cannot hold, :data:`UNSTORABLE`) is stored
        instead as a failed game with the reason (:func:`refused_game`), so that the rerun does not pay for it
        again. Returns once the row is committed."""
        try:
            await off_loop(self.store, "record", rec)
            return rec
        except UNSTORABLE as exc:
            failed = refused_game(rec, exc)
            await off_loop(self.store, "record", failed)
            return failed

    def _commits_on_loop(self) -> bool:
        """Whether the store commits the rows finished in a turn of the loop together (``record_soon``: a SQLite
        store, called on the loop), rather than each alone (``record``; in a thread for PostgreSQL)."""
        return hasattr(self.store, "record_soon") and not getattr(self.store, "threadsafe", False)

    def _store_soon(self, rec, refused: bool = False) -> bool:
        """Hand ``rec`` to the store's end-of-turn commit (``record_soon``); :meth:`_settled` counts it once
        committed. ``refused``: ``rec`` replaces a row the store refused. True (the row is handed over)."""
        done = self.store.record_soon(rec)
        self.storing.add(done)
        done.add_done_callback(functools.partial(self._settled, rec, refused))
        return True

    def _settled(self, rec, refused: bool, done: asyncio.Future) -> None:
        """A row handed to the end-of-turn commit is committed (counted as stored), refused by the store
        (:data:`UNSTORABLE`: stored instead as a failed game with the reason, as :meth:`_store` does), or lost
        with its commit (the error kept in :attr:`crashed`: the run stops and raises it)."""
        self.storing.discard(done)
        exc = asyncio.CancelledError() if done.cancelled() else done.exception()
        if exc is None:
            self.in_flight -= 1
            self._stored(rec)
        elif isinstance(exc, UNSTORABLE) and not refused:
            self._store_soon(refused_game(rec, exc), refused=True)
        else:
            self.in_flight -= 1
            self.crashed = self.crashed or exc

    async def settle(self) -> None:
        """Wait until every row handed to the end-of-turn commit is committed and counted; raise the error that
        lost one, if any."""
        while self.storing:
            await asyncio.wait(list(self.storing))
        if self.crashed is not None:
            raise self.crashed

    def _stored(self, rec: GameRecord) -> None:
        self.stored_keys.append(rec.key)
        s = self.state
        s.done += 1
        s.calls += rec.n_calls
        s.cost += rec.cost
        self.tokens_in += rec.tokens_in
        self.tokens_out += rec.tokens_out
        self.tokens_cached += rec.tokens_cached
        if rec.status == "ok":
            self.judged += 1
        else:
            s.failed += 1
            log.debug("game %s failed: %s", rec.key[:12], rec.error)
        if self.progress:
            self.progress(s)

    def _cost_per_game(self) -> float:
        return self.state.cost / self.state.done if self.state.done else self.est_cost_per_game

    async def drain(self, queue: deque, workers: int) -> None:
        """Play the queue with ``workers`` workers, claiming games ``workers // 8`` at a time (at most
        :data:`CLAIM_AHEAD`; one at a time from a store called off the loop, PostgreSQL); if one raises, the others are
        cancelled (releasing their claims) and awaited before the error propagates. Claims not played are released."""
        claimed: deque = deque()
        batched = not getattr(self.store, "threadsafe", False)  # SQLite: claim_many in one transaction
        size = max(1, min(CLAIM_AHEAD, workers // 8)) if batched else 1

        async def worker():
            while self.stop is None and self.crashed is None and (claimed or queue):
                if claimed:
                    await self.judge_claimed(*claimed.popleft())
                else:
                    await self.claim_next(queue, claimed, size)
            if self.rows is not None and not queue:  # nothing left to claim: the last wave is in flight
                self.rows.start(self.stored_keys)
        try:
            await gather_workers(worker, workers)
        finally:
            while claimed:
                self.store.release(claimed.popleft()[0])
        await self.settle()

    async def heartbeat(self, every_s: float) -> None:
        """Renew this run's claims; a failed renewal is logged and tried again (it must not end renewals)."""
        while True:
            await asyncio.sleep(every_s)
            try:
                await off_loop(self.store, "renew_claims")
            except (sqlite3.OperationalError, StoreUnavailable) as exc:
                log.warning("could not renew the claims on games in flight (%s); if they expire, another process "
                            "sharing the store may judge those games too", exc)


@dataclass
class _RowsAhead:
    """A run's rows read back in two parts: those stored before its last wave (``before``: the keys stored before
    the run, then those it stored), in a thread while that wave is in flight (:meth:`start`, once), then the rest.
    The rows read first are final: a run stores each key once, and never over an "ok" row."""

    store: ResultStore
    before: list[str]
    ahead: Future | None = None

    def start(self, stored: list[str]) -> None:
        if self.ahead is None:
            self.ahead = self.store.frame_in_thread(self.before + stored)

    def frame(self, keys: list[str]) -> pd.DataFrame:
        """The stored rows of ``keys`` (:meth:`store.frame`): those read ahead and the others."""
        if self.ahead is None:
            return self.store.frame(keys)
        try:
            ahead = self.ahead.result()
        except sqlite3.Error as exc:  # that connection could not read (locked, say): the store's own reads them all
            log.debug("rows read ahead failed (%s); reading them all now", exc)
            return self.store.frame(keys)
        have = set(ahead["key"])
        return concat_frames([ahead, self.store.frame([k for k in keys if k not in have])], ahead.columns)


def _rows_ahead(store: ResultStore, keyed: dict, todo: deque) -> _RowsAhead | None:
    """A :class:`_RowsAhead` for a store that reads in a thread (SQLite's ``frame_in_thread``), else None."""
    if not hasattr(store, "frame_in_thread"):
        return None
    judging = {k for k, _ in todo}
    return _RowsAhead(store, [k for k in keyed if k not in judging])


async def gather_workers(worker, workers: int) -> None:
    """Run ``workers`` copies of the coroutine function ``worker``; if one raises, the others are cancelled and
    awaited (so they release what they hold) before the error propagates."""
    tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def job_id(keys: Iterable[str], retry_failed: bool) -> str:
    """The id of a worker-mode job in the store's queue: a hash of every game key it plans (so each worker of the
    same config and inputs names the same job, whenever it starts) and of ``retry_failed``."""
    digest = hashlib.sha256(f"retry_failed={bool(retry_failed)}\n".encode())
    for key in sorted(keys):
        digest.update(key.encode() + b"\n")
    return digest.hexdigest()[:32]


@dataclass
class _SharedFeed:
    """Worker mode's supply of games: batches claimed from the store's queue of the job (``claim_batch``), handed
    to the run's coroutines one at a time; None once the queue is empty (every game stored, by anyone)."""

    run: _Run
    job: str
    size: int
    poll_s: float
    ready: deque = field(default_factory=deque)
    in_play: set = field(default_factory=set)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    finished: bool = False

    async def next(self) -> str | None:
        async with self.lock:
            store = self.run.store
            while self.run.stop is None and not self.finished:
                if self.ready:
                    return self.ready.popleft()
                want = max(self.size - len(self.in_play), self.size // 4, 1)  # a few ahead: fewer round trips
                got = await off_loop(store, "claim_batch", self.job, want, retry_failed=self.run.retry_failed,
                                     exclude=set(self.in_play))
                self.ready.extend(got)
                left = await off_loop(store, "queued", self.job) if (not got or self.run.progress) else 1
                if self.run.progress:  # what is left of the job, plus what this worker did
                    self.run.state.total = self.run.state.done + left
                if got:
                    continue
                if left == 0:
                    self.finished = True
                elif not await off_loop(store, "expire_dead_claims"):  # held by others: wait for them or their leases
                    await asyncio.sleep(self.poll_s)
            return None

    async def drain(self, keyed: dict, workers: int) -> None:
        """Play the job's games with ``workers`` coroutines until the queue is empty or the run stops; claims
        taken and not played are given back."""
        async def worker():
            while (key := await self.next()) is not None:
                self.in_play.add(key)
                try:
                    await self.run.judge_claimed(key, keyed[key])
                finally:
                    self.in_play.discard(key)
        try:
            await gather_workers(worker, workers)
        finally:
            while self.ready:
                self.run.store.release(self.ready.popleft())


def _wrap_backend(judge: Judge, **kw) -> tuple[ScheduledBackend | None, object | None]:
    """Put the judge's backend under the scheduler (unless already); returns (scheduled, original)."""
    backend = getattr(judge, "backend", None)
    if backend is None:
        return None, None
    if isinstance(backend, ScheduledBackend):
        return backend, None
    scheduled = ScheduledBackend(backend, **kw)
    judge.backend = scheduled
    return scheduled, backend


async def arun_judging(comparisons: Iterable[Comparison], judge: Judge, store: JudgmentStoreLike | Location,
                       settings: RunSettings | None = None, *, progress: Callable[[Progress], None] | None = None,
                       **options) -> RunResult:
    """Async form of :func:`run_judging` (same arguments)."""
    settings = RunSettings.of(settings, **options)
    comparisons = list(comparisons)
    games = plan_games(comparisons, orders=settings.orders, seed=settings.seed)
    keyed = keyed_games(dict(judge.identity), games, judge)  # duplicates collapse to one game
    return await arun_keyed(keyed, judge, store, settings, n_items=len(comparisons), n_planned=len(games),
                            progress=progress)


async def arun_keyed(keyed: dict, judge: Judge, store: ResultStore | Location, settings: RunSettings, *,
                     n_items: int, n_planned: int, record: Callable | None = None, export: Callable = export_frame,
                     progress: Callable[[Progress], None] | None = None) -> RunResult:
    """The engine under :func:`arun_judging` (and pointwise grading, ``judges.pointwise``; answer generation,
    ``judges.generator``): judge every subject of ``keyed`` (store key → what ``judge.judge`` takes) not stored yet,
    storing each as ``record`` makes it (default: a game's row), and return the run's rows as ``export`` makes them
    from the store. ``store`` is a path or URL (opened by ``open_store``) or a store object (a
    :class:`~judgewise.store.protocol.ResultStore`: a judging store, or e.g. ``GenerationStore``). When the run stops
    early, the raised error carries ``result`` and ``stop`` (the exception that stopped it).

    ``settings.worker``: one of many workers of the same job on a shared store (PostgreSQL): the job's keys go to the
    store's queue and this run judges the batches it claims from there until every game is stored, by anyone."""
    own_store = isinstance(store, (str, os.PathLike))
    store = open_store(store) if own_store else store
    retry_failed, concurrency, worker = settings.retry_failed, settings.concurrency, settings.worker
    if worker and settings.batch is not None:
        raise ConfigError("batch mode (judge.batch: true) and worker mode do not go together: run one process")
    if worker and not isinstance(store, SharedQueue):
        raise ConfigError("worker mode needs a shared PostgreSQL store (store: postgresql://user@host/db); "
                          "processes on one machine can share a SQLite store without --worker")
    t0 = time.perf_counter()
    try:
        batched = await _hold_and_batch(keyed, judge, store, settings)
    except BaseException:
        if own_store:
            store.close()
        raise
    identity = dict(judge.identity)
    done = store.statuses(keyed)
    todo = deque((k, g) for k, g in keyed.items()
                 if k not in done or (retry_failed and done[k] == "failed"))
    run = _Run(judge, store, identity, settings.budget or Budget(), retry_failed, progress,
               settings.est_cost_per_game,
               state=Progress(total=len(todo), cached=len(keyed) - len(todo)),
               record=record or _game_recorder(identity), rows=_rows_ahead(store, keyed, todo))
    scheduled, original = _wrap_backend(judge, concurrency=concurrency, limits=settings.limits,
                                        timeout_s=settings.timeout_s, policy=settings.retry, seed=settings.seed)
    if scheduled is not None:
        scheduled.journal = store
    beat = asyncio.ensure_future(run.heartbeat(store.lease_s / 3))
    checkpoints = store.background_checkpoints()  # SQLite: fsyncs off the loop
    checkpoints.__enter__()
    gc.freeze()  # what exists before the run (modules, inputs) is left out of the collector's scans until it ends
    try:
        if worker:
            job = job_id(keyed, retry_failed)
            store.enqueue(job, [k for k, _ in todo])
            await _SharedFeed(run, job, concurrency, settings.poll_s).drain(keyed, concurrency)
        else:
            await _open_ahead(judge, min(concurrency, len(todo)))
            await run.drain(todo, concurrency)
        while run.busy and run.stop is None:  # keys another process is judging: wait, then take or reuse
            await asyncio.sleep(settings.poll_s)
            todo, run.busy = deque(run.busy), []
            await run.drain(todo, concurrency)
        result = _result(run, store, list(keyed), n_items, n_planned, scheduled, time.perf_counter() - t0, export)
        result.note_batches(batched)
        if worker:
            result.by_others = max(0, len(result.judgments) - result.cached - result.judged - result.failed)
    finally:
        gc.unfreeze()
        beat.cancel()
        checkpoints.__exit__(None, None, None)
        if scheduled is not None:
            scheduled.journal = None
        if original is not None:
            judge.backend = original
        _let_go(store, own_store)
    _raise_if_stopped(run, result)
    return result


async def _hold_and_batch(keyed: dict, judge: Judge, store, settings: RunSettings) -> BatchCounts:
    """The store's writer lease taken for the run (one payer per call: :func:`~judgewise.judges.batch.hold_store`),
    then, in batch mode, its batches run (:func:`~judgewise.judges.batch.run_batches`) with the lease renewed
    (they take hours); the lease given back if they fail."""
    hold_store(store, keyed, batch=settings.batch is not None)
    if settings.batch is None:
        return BatchCounts()

    async def renew() -> None:
        while True:
            await asyncio.sleep(store.lease_s / 3)
            try:
                await off_loop(store, "renew_claims")
            except (sqlite3.OperationalError, StoreUnavailable) as exc:
                log.warning("could not renew the store's batch writer lease (%s); tried again", exc)
    beat = asyncio.ensure_future(renew())
    try:
        return await run_batches(keyed, judge, store, settings.batch, retry_failed=settings.retry_failed,
                                 max_lines=_batch_lines(settings))
    except BaseException:
        if hasattr(store, "release_writer"):
            store.release_writer()
        raise
    finally:
        beat.cancel()


def _let_go(store, own_store: bool) -> None:
    """The end of a run: its writer lease given back, the store closed when the run opened it."""
    try:
        if hasattr(store, "release_writer"):
            store.release_writer()
    finally:
        if own_store:
            store.close()


async def _open_ahead(judge: Judge, calls: int) -> None:
    """Open the connections of the first ``calls`` calls at once, when the judge's backend can (the lean HTTP
    client's ``open_ahead``): at 256 calls in flight the first ones otherwise wait ~50 ms for their connections."""
    open_ahead = getattr(getattr(judge, "backend", None), "open_ahead", None)
    if open_ahead is not None and calls:
        await open_ahead(calls)


def _batch_lines(settings: RunSettings) -> int | None:
    """The most calls a run's batches may hold: its call budget, and its cost budget at the estimated cost per
    game (at the batch discount's price the estimate overstates: a cap, never an overrun)."""
    budget = settings.budget or Budget()
    caps = [budget.max_calls] if budget.max_calls is not None else []
    if budget.max_cost is not None and settings.est_cost_per_game > 0:
        caps.append(int(budget.max_cost / settings.est_cost_per_game))
    return min(caps) if caps else None


def _result(run: _Run, store: ResultStore, keys, n_comp, n_games, scheduled, elapsed, export=export_frame) -> RunResult:
    s = run.state
    reused = scheduled.stats.reused_answers if scheduled is not None else 0
    rows = run.rows.frame(keys) if run.rows is not None else store.frame(keys)
    return RunResult(
        judgments=_in_order(export(rows), keys), n_comparisons=n_comp, n_games=n_games,
        judged=run.judged,
        failed=s.failed, cached=s.cached, calls_made=max(0, s.calls - reused),
        retries=scheduled.stats.retries if scheduled is not None else 0,
        tokens_in=run.tokens_in, tokens_out=run.tokens_out, cost=s.cost, elapsed_s=elapsed,
        stopped=str(run.stop) if run.stop else None, duplicates=n_games - len(keys),
        maybe_charged_timeouts=scheduled.stats.maybe_charged_timeouts if scheduled is not None else 0,
        reused_answers=reused, tokens_cached=run.tokens_cached)


def _in_order(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Rows in the order of the planned games (each key is one row at most: the store's primary key)."""
    at = pd.Index(frame["judgment_id"]).get_indexer(keys)
    return frame.take(at[at >= 0]).reset_index(drop=True)


def _raise_if_stopped(run: _Run, result: RunResult) -> None:
    if run.stop is None:
        return
    counts = (f"{result.judged} judged, {result.failed} failed, {result.cached} already stored this run; "
              f"everything finished is stored — rerun to continue")
    if isinstance(run.stop, BudgetExceeded):
        exc = BudgetExceeded(f"{run.stop} ({counts})")
    else:
        exc = JudgeError(f"the judge backend refused a call and the run stopped: {run.stop} ({counts})")
    exc.result, exc.stop = result, run.stop
    raise exc


def run_judging(comparisons: Iterable[Comparison], judge: Judge, store: JudgmentStoreLike | Location,
                settings: RunSettings | None = None, *, progress: Callable[[Progress], None] | None = None,
                **options) -> RunResult:
    """Judge every comparison (both orders by default) and return the judgments table and counts.

    ``store`` is a store (:class:`~judgewise.store.protocol.JudgmentStoreLike`: a :class:`JudgmentStore`, a
    PostgreSQL store), a file path or a ``postgresql://`` URL. ``settings``: a :class:`RunSettings`, or its fields as
    keywords (they replace those of ``settings`` when both are given): ``orders`` ("both"|"one"), ``seed``,
    ``concurrency``, ``limits`` (:class:`RateLimits`), ``timeout_s``, ``retry`` (:class:`RetryPolicy`),
    ``budget`` (:class:`Budget`), ``retry_failed`` (judge again games stored as failed),
    ``est_cost_per_game`` (for the cost cap before the first result). ``progress``: a callback.
    A judge with a ``backend`` attribute has it wrapped by the scheduler for the run, so limits and
    retries apply per call. Raises :class:`JudgeError` on a non-retryable backend error and
    :class:`BudgetExceeded` at a cap, both after storing every finished game (``exc.result`` has them).
    """
    return eventloop.run(closing_backend(arun_judging(comparisons, judge, store, settings, progress=progress,
                                                      **options), judge))


async def closing_backend(run, judge):
    """Await ``run``, then close the judge backend's HTTP clients inside this event loop: a client left to the
    garbage collector closes itself on the *next* run's loop and fails there ("Event loop is closed", printed as
    a traceback by asyncio) — evaluate and add-model judge round after round, one ``asyncio.run`` each."""
    try:
        return await run
    finally:
        aclose = getattr(getattr(judge, "backend", None), "aclose", None)
        if aclose is not None:
            await aclose()
