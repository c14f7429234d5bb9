"""A run's hold on its store: the writer lease taken before anything is paid for (one payer per call,
:mod:`judgewise.judges.batch`), batch mode's batches run under it, and the lease given back at the end."""

from __future__ import annotations

import asyncio

from judgewise.judges.base import Judge
from judgewise.judges.batch import BatchCounts, hold_store, run_batches
from judgewise.judges.limits import Budget
from judgewise.judges.run_result import RunSettings
from judgewise.judges.run_store import renew_claims
from judgewise.store.protocol import ResultStore


async def hold_and_batch(keyed: dict, judge: Judge, store: ResultStore, settings: RunSettings) -> BatchCounts:
    """The store's writer lease taken for the run (one payer per call: :func:`~judgewise.judges.batch.hold_store`),
    then, in batch mode, its batches run (:func:`~judgewise.judges.batch.run_batches`) with the lease renewed
    (they take hours); the lease given back if they fail. Returns what the batches did (nothing, live)."""
    hold_store(store, keyed, batch=settings.batch is not None)
    if settings.batch is None:
        return BatchCounts()
    beat = asyncio.ensure_future(renew_claims(
        store, store.lease_s / 3, "could not renew the store's batch writer lease (%s); tried again"))
    try:
        return await run_batches(keyed, judge, store, settings.batch, retry_failed=settings.retry_failed,
                                 max_lines=batch_lines(settings))
    except BaseException:
        release_writer(store)
        raise
    finally:
        beat.cancel()


def release_writer(store: ResultStore) -> None:
    """Give back the store's writer lease (a store that keeps none, a caller's own object, has nothing to give)."""
    if hasattr(store, "release_writer"):
        store.release_writer()


def batch_lines(settings: RunSettings) -> int | None:
    """The most calls a run's batches may hold: its call budget, and its cost budget at the estimated cost per
    game (at the batch discount's price the estimate overstates: a cap, never an overrun)."""
    budget = settings.budget or Budget()
    caps = [budget.max_calls] if budget.max_calls is not None else []
    if budget.max_cost is not None and settings.est_cost_per_game > 0:
        caps.append(int(budget.max_cost / settings.est_cost_per_game))
    return min(caps) if caps else None
