"""The live loop of a run (judges.engine.LiveRun) driven directly on a real SQLite store and a real HTTP judge:
each game judged and stored once and counted, a budget stops it with the claims it did not play given back, and
the games another process holds are waited for and then found stored."""

from __future__ import annotations

import asyncio
from collections import deque

from judgewise.errors import BudgetExceeded
from judgewise.judges import eventloop
from judgewise.judges.engine import LiveRun, Progress
from judgewise.judges.game_keys import keyed_games, plan_games
from judgewise.judges.limits import Budget
from judgewise.judges.runner import game_recorder
from judgewise.store.judgments import JudgmentStore

from tests.support.fault_server import FaultServer
from tests.support.judging import comparisons, llm_judge


def _live_run(judge, store, budget: Budget, total: int) -> LiveRun:
    identity = dict(judge.identity)
    return LiveRun(judge, store, identity, budget, False, None, 0.0, game_recorder(identity),
                   state=Progress(total=total))


def _play(run: LiveRun, todo: deque, workers: int) -> None:
    async def go():
        try:
            with run.kept_alive():
                await run.play(todo, workers)
        finally:
            await run.judge.backend.aclose()
    eventloop.run(go())


def test_a_live_run_judges_and_stores_every_game_once_and_counts_it(tmp_path):
    with FaultServer() as srv, JudgmentStore(tmp_path / "s.sqlite") as store:
        judge = llm_judge(srv.url)
        keyed = keyed_games(dict(judge.identity), plan_games(comparisons(5)), judge)
        run = _live_run(judge, store, Budget(), len(keyed))
        _play(run, deque(keyed.items()), workers=4)
        assert srv.total_successes() == 10
        frame = store.frame()
    assert run.stop is None and run.judged == run.state.done == 10 and run.state.calls == 10
    assert sorted(run.stored_keys) == sorted(keyed) == sorted(frame["key"]) and set(frame["status"]) == {"ok"}


def test_a_call_budget_stops_the_loop_and_gives_back_the_claims_it_did_not_play(tmp_path):
    with FaultServer() as srv, JudgmentStore(tmp_path / "s.sqlite") as store:
        judge = llm_judge(srv.url)
        keyed = keyed_games(dict(judge.identity), plan_games(comparisons(4)), judge)
        run = _live_run(judge, store, Budget(max_calls=3), len(keyed))
        _play(run, deque(keyed.items()), workers=1)
        assert srv.total_successes() == 3 and len(store.frame()) == 3
        assert store.stats()["in_flight_claims"] == 0  # nothing left claimed for a rerun to wait on
    assert isinstance(run.stop, BudgetExceeded) and "call budget reached" in str(run.stop) and run.judged == 3


def test_a_game_another_process_holds_is_waited_for_and_judged_once_it_is_let_go(tmp_path):
    with FaultServer() as srv, JudgmentStore(tmp_path / "s.sqlite") as store, \
            JudgmentStore(tmp_path / "s.sqlite") as other:
        judge = llm_judge(srv.url)
        keyed = keyed_games(dict(judge.identity), plan_games(comparisons(2)), judge)
        held = next(iter(keyed))
        assert other.claim(held) == "claimed"  # another process is judging this game
        run = _live_run(judge, store, Budget(), len(keyed))

        async def go() -> list[str]:
            async def let_go_later():
                await asyncio.sleep(0.2)
                other.release(held)
            try:
                with run.kept_alive():
                    await run.play(deque(keyed.items()), 2)
                    busy = [k for k, _ in run.busy]
                    releasing = asyncio.ensure_future(let_go_later())
                    await run.drain_busy(0.05, 2)
                    await releasing
            finally:
                await judge.backend.aclose()
            return busy
        assert eventloop.run(go()) == [held]
        assert srv.total_successes() == 4
    assert run.busy == [] and run.judged == 4 and sorted(run.stored_keys) == sorted(keyed)
