"""Worker mode: one of many processes of one job on a shared (PostgreSQL) store, each claiming batches of the
job's games from the store's queue (``claim_batch``) until every game is stored, by anyone."""

from __future__ import annotations

import asyncio
import hashlib
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable

from judgewise.errors import ConfigError
from judgewise.judges.engine import LiveRun, gather_workers
from judgewise.judges.run_result import RunSettings
from judgewise.judges.scheduler import off_loop
from judgewise.store.protocol import ResultStore, SharedQueue


def check_worker_mode(store: ResultStore, settings: RunSettings) -> None:
    """ConfigError when ``settings.worker`` asks for what cannot be: with batch mode, or on a store without a
    shared queue (SQLite)."""
    if settings.worker and settings.batch is not None:
        raise ConfigError("batch mode (judge.batch: true) and worker mode do not go together: run one process")
    if settings.worker and not isinstance(store, SharedQueue):
        raise ConfigError("worker mode needs a shared PostgreSQL store (store: postgresql://user@host/db); "
                          "processes on one machine can share a SQLite store without --worker")


async def play_shared(run: LiveRun, keyed: dict, todo: deque, settings: RunSettings) -> None:
    """Worker mode's run: the games of ``todo`` (those not stored) queued under the job's id (:func:`job_id`; a
    game queued already stays queued once), then the job's games claimed and played until its queue is empty."""
    job = job_id(keyed, settings.retry_failed)
    run.store.enqueue(job, [k for k, _ in todo])
    await SharedFeed(run, job, settings.concurrency, settings.poll_s).drain(keyed, settings.concurrency)


def job_id(keys: Iterable[str], retry_failed: bool) -> str:
    """The id of a worker-mode job in the store's queue: a hash of every game key it plans (so each worker of the
    same config and inputs names the same job, whenever it starts) and of ``retry_failed``."""
    digest = hashlib.sha256(f"retry_failed={bool(retry_failed)}\n".encode())
    for key in sorted(keys):
        digest.update(key.encode() + b"\n")
    return digest.hexdigest()[:32]


@dataclass
class SharedFeed:
    """Worker mode's supply of games: batches claimed from the store's queue of the job (``claim_batch``), handed
    to the run's coroutines one at a time; None once the queue is empty (every game stored, by anyone)."""

    run: LiveRun
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
