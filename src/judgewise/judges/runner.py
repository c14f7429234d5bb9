"""Run a judging job: comparisons → games (one or both orders) → judge → store, and the judgments table.

``run_judging`` is the Python API behind ``judgewise judge``. Each comparison becomes two games (both
answer orders, the default, against position bias as Arena-lite §4.3.3 and A.8.2 alternate the order) or
one whose order is a seeded coin per (prompt, pair). Games already in
the store are not judged again; new ones are judged under the scheduler's limits and stored as they
finish; the result is the canonical judgments table (one row per game, with ``first``) plus counts.
Every answer received is journaled in the store before anything else happens (``scheduler.AnswerJournal``),
so no call whose answer the engine holds is ever sent again; calls that timed out after being sent are
counted as ``maybe_charged_timeouts``.

The engine (:func:`arun_keyed`) takes an open store; the public entry points open one given as a path or URL
(:func:`~judgewise.judges.run_store.opened_store`). Its parts: the games' keys (``game_keys``), the store's
writer lease and batch mode (``writer_lease``), the live loop (``engine``), worker mode (``worker_feed``) and the
result (``run_result``).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import deque
from typing import Callable, Iterable, Iterator

import pandas as pd

from judgewise.errors import BudgetExceeded, JudgeError
from judgewise.judges import eventloop
from judgewise.judges.base import Comparison, Game, Judge, JudgeResult
from judgewise.judges.engine import LiveRun, Progress
# names of game_keys and run_result imported from runner before the split (issue 34) stay importable from here
from judgewise.judges.game_keys import (cache_order, canonical_json, game_key, judge_name,  # noqa: F401
                                        keyed_games, plan_games, template_name)
from judgewise.judges.limits import Budget
from judgewise.judges.rows_ahead import rows_ahead
from judgewise.judges.run_result import (RunResult, RunSettings, average_orders, swap_agreement,  # noqa: F401
                                         swap_consistency)
from judgewise.judges.run_store import opened_store
from judgewise.judges.scheduler import ScheduledBackend
from judgewise.judges.worker_feed import check_worker_mode, play_shared
from judgewise.judges.writer_lease import hold_and_batch, release_writer
from judgewise.store.judgments import GameRecord, export_frame
from judgewise.store.opening import Location
from judgewise.store.protocol import JudgmentStoreLike, ResultStore

log = logging.getLogger(__name__)


def judge_labels(identity: dict) -> dict:
    """The judge columns of a store row: ``judge`` (:func:`judge_name`), ``template`` and ``judge_identity`` (the
    identity's canonical JSON)."""
    return {"judge": judge_name(identity), "template": template_name(identity),
            "judge_identity": canonical_json(identity)}


def game_recorder(identity: dict) -> Callable:
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
    with opened_store(store) as opened:
        return await arun_keyed(keyed, judge, opened, settings, n_items=len(comparisons), n_planned=len(games),
                                progress=progress)



@contextlib.contextmanager
def scheduled_backend(judge: Judge, store: ResultStore, settings: RunSettings) -> Iterator[ScheduledBackend | None]:
    """For the block: the judge's backend under the scheduler (:func:`_wrap_backend`: the run's concurrency, limits,
    timeout and retries), journaling its answers in ``store``; the judge's own backend put back after it."""
    scheduled, original = _wrap_backend(judge, concurrency=settings.concurrency, limits=settings.limits,
                                        timeout_s=settings.timeout_s, policy=settings.retry, seed=settings.seed)
    if scheduled is not None:
        scheduled.journal = store
    try:
        yield scheduled
    finally:
        if scheduled is not None:
            scheduled.journal = None
        if original is not None:
            judge.backend = original


async def arun_keyed(keyed: dict, judge: Judge, store: ResultStore, settings: RunSettings, *, n_items: int,
                     n_planned: int, record: Callable | None = None, export: Callable = export_frame,
                     progress: Callable[[Progress], None] | None = None) -> RunResult:
    """The engine under :func:`arun_judging` (and pointwise grading, ``judges.pointwise``; answer generation,
    ``judges.generator``): judge every subject of ``keyed`` (store key → what ``judge.judge`` takes) not stored yet,
    storing each as ``record`` makes it (default: a game's row), and return the run's rows as ``export`` makes them
    from the store. ``store`` is an open store (a :class:`~judgewise.store.protocol.ResultStore`: a judging store,
    or e.g. ``GenerationStore``; its caller opens and closes it). When the run stops early, the raised error carries
    ``result`` and ``stop`` (the exception that stopped it). ``settings.worker``: one of many workers of the same
    job on a shared (PostgreSQL) store (``judges.worker_feed``)."""
    check_worker_mode(store, settings)
    t0 = time.perf_counter()
    batched = await hold_and_batch(keyed, judge, store, settings)
    try:
        run, todo = _start(keyed, judge, store, settings, record, progress)
        with scheduled_backend(judge, store, settings) as scheduled, run.kept_alive():
            if settings.worker:
                await play_shared(run, keyed, todo, settings)
            else:
                await run.play(todo, settings.concurrency)
            await run.drain_busy(settings.poll_s, settings.concurrency)  # keys another process was judging
            result = _result(run, list(keyed), n_items, n_planned, scheduled, time.perf_counter() - t0, export)
    finally:
        release_writer(store)
    result.note_batches(batched)
    if settings.worker:
        result.by_others = max(0, len(result.judgments) - result.cached - result.judged - result.failed)
    _raise_if_stopped(run, result)
    return result


def _start(keyed: dict, judge: Judge, store: ResultStore, settings: RunSettings, record: Callable | None,
           progress: Callable[[Progress], None] | None) -> tuple[LiveRun, deque]:
    """The run's live loop and what it has to judge: every key not stored yet, and those stored as failed when
    ``settings.retry_failed``."""
    identity, retry_failed = dict(judge.identity), settings.retry_failed
    done = store.statuses(keyed)
    todo = deque((k, g) for k, g in keyed.items() if k not in done or (retry_failed and done[k] == "failed"))
    run = LiveRun(judge, store, identity, settings.budget or Budget(), retry_failed, progress,
                  settings.est_cost_per_game, record or game_recorder(identity),
                  state=Progress(total=len(todo), cached=len(keyed) - len(todo)), rows=rows_ahead(store, keyed, todo))
    if run.budget.stored_cost_counts and run.budget.max_cost is not None and len(todo) < len(keyed):
        judging = {k for k, _ in todo}
        stored = store.frame([k for k in keyed if k not in judging])
        run.stored_cost = float(stored["cost"].fillna(0).sum()) if "cost" in stored.columns else 0.0
    return run, todo


def _result(run: LiveRun, keys, n_comp, n_games, scheduled, elapsed, export=export_frame) -> RunResult:
    s = run.state
    reused = scheduled.stats.reused_answers if scheduled is not None else 0
    rows = run.rows.frame(keys) if run.rows is not None else run.store.frame(keys)
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


def _raise_if_stopped(run: LiveRun, result: RunResult) -> None:
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
