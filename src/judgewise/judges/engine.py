"""The live loop of a run: the games it holds claimed and judged by many coroutines at once, each finished one
stored (or, refused by the store, stored as a failed game) and counted, until none is left or the run stops."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gc
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterator

from judgewise.judges.base import FatalCallError, Judge, JudgeResult, RetryableCallError
from judgewise.judges.limits import Budget
from judgewise.judges.rows_ahead import RowsAhead
from judgewise.judges.run_store import renew_claims
from judgewise.judges.scheduler import GAME_KEY, off_loop
from judgewise.store.judgments import GameRecord
from judgewise.store.leases import UNSTORABLE
from judgewise.store.protocol import ResultStore

log = logging.getLogger(__name__)

CLAIM_AHEAD = 32  # most games a run claims in one transaction (fewer commits per game at high concurrency)

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
class LiveRun:
    """One run's live loop over the games it holds claims on: what it judged, spent and stored, and why it stopped
    (``stop``: a budget reached, a call the backend refused)."""

    judge: Judge
    store: ResultStore
    identity: dict
    budget: Budget
    retry_failed: bool
    progress: Callable[[Progress], None] | None
    est_cost_per_game: float
    record: Callable[[str, object, dict, JudgeResult], GameRecord]  # the store row of a finished subject
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
    rows: RowsAhead | None = None  # reads back the rows stored before the last wave, during it
    crashed: BaseException | None = None  # the error of a commit that lost rows handed over: the run raises it
    stored_cost: float = 0.0  # cost of the games stored before the run, when the budget counts them

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
        reached = self.budget.reached(calls=self.state.calls, cost=self.state.cost + self.stored_cost,
                                      in_flight=self.in_flight,
                                      est_cost_per_game=self._cost_per_game())
        if reached is not None:
            self.store.release(key)
            self.stop = self.stop or reached
            return
        self.in_flight += 1  # until the game is stored and counted: the budget sees it either in flight or done
        handed_over = False  # to the end-of-turn commit, which counts the game out of in_flight
        try:
            result = await self._judged(key, game)
            if result is not None:
                rec = self.record(key, game, self.identity, result)
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

    async def play(self, todo: deque, workers: int) -> None:
        """Play ``todo`` (key, subject pairs) as a run of its own (not worker mode): the first ``workers`` calls'
        connections opened at once, then :meth:`drain`."""
        await open_ahead(self.judge, min(workers, len(todo)))
        await self.drain(todo, workers)

    async def drain_busy(self, poll_s: float, workers: int) -> None:
        """The games another process held when this run came to them: waited for (``poll_s``), then taken, or
        counted as stored by the other, until none is left or the run stops."""
        while self.busy and self.stop is None:
            await asyncio.sleep(poll_s)
            todo, self.busy = deque(self.busy), []
            await self.drain(todo, workers)

    @contextlib.contextmanager
    def kept_alive(self) -> Iterator[None]:
        """For the block (the run's loop): its claims renewed every third of the store's lease, the store's files
        checkpointed off the loop (SQLite: fsyncs off the loop), and what exists before the run (modules, inputs)
        left out of the garbage collector's scans."""
        with self.store.background_checkpoints():
            beat = asyncio.ensure_future(renew_claims(
                self.store, self.store.lease_s / 3, "could not renew the claims on games in flight (%s); if they "
                "expire, another process sharing the store may judge those games too"))
            gc.freeze()
            try:
                yield
            finally:
                gc.unfreeze()
                beat.cancel()


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


async def open_ahead(judge: Judge, calls: int) -> None:
    """Open the connections of the first ``calls`` calls at once, when the judge's backend can (the lean HTTP
    client's ``open_ahead``): at 256 calls in flight the first ones otherwise wait ~50 ms for their connections."""
    opener = getattr(getattr(judge, "backend", None), "open_ahead", None)
    if opener is not None and calls:
        await opener(calls)

