"""A run's hold on its store (judges.writer_lease): the writer lease taken before anything is paid, batch mode's
batches run under it with their counts returned, and the lease given back; against the fake Batch API
(tests/support/batch_server.py) and a real SQLite store."""

from __future__ import annotations

import pytest

from judgewise.errors import StoreBusy
from judgewise.judges import eventloop
from judgewise.judges.batch import BatchCounts, BatchSettings, hold_store
from judgewise.judges.game_keys import keyed_games, plan_games
from judgewise.judges.limits import Budget
from judgewise.judges.run_result import RunSettings
from judgewise.judges.writer_lease import batch_lines, hold_and_batch, release_writer
from judgewise.store.judgments import JudgmentStore

from tests.support.batch_server import BatchServer
from tests.support.judging import comparisons, llm_judge


def _keyed(judge, n: int) -> dict:
    return keyed_games(dict(judge.identity), plan_games(comparisons(n)), judge)


def test_batch_mode_returns_the_batches_counts_and_holds_the_lease_until_given_back(tmp_path):
    with BatchServer(tmp_path / "state.json") as srv, JudgmentStore(tmp_path / "s.sqlite") as store, \
            JudgmentStore(tmp_path / "s.sqlite") as other:
        judge = llm_judge(srv.url)
        keyed = _keyed(judge, 3)
        settings = RunSettings(batch=BatchSettings(poll_s=0.05))
        counts = eventloop.run(hold_and_batch(keyed, judge, store, settings))
        assert (counts.batches, counts.lines, counts.answered, counts.failed) == (1, 6, 6, 0)
        assert srv.state["live"] == 0 and set(srv.billed.values()) == {1}  # each call paid once, in the batch
        with pytest.raises(StoreBusy, match="running batches"):  # a second process is kept out while it holds
            hold_store(other, keyed, batch=False)
        release_writer(store)
        hold_store(other, keyed, batch=False)  # given back: a live run may take the store now
        release_writer(other)


def test_a_live_run_takes_the_lease_and_returns_no_batch_counts(tmp_path):
    with JudgmentStore(tmp_path / "s.sqlite") as store, JudgmentStore(tmp_path / "s.sqlite") as other:
        judge = llm_judge("http://127.0.0.1:9/v1")  # never called: nothing is batched in a live run
        keyed = _keyed(judge, 2)
        assert eventloop.run(hold_and_batch(keyed, judge, store, RunSettings())) == BatchCounts()
        with pytest.raises(StoreBusy, match="judging it live"):  # a batch run beside a live one is refused
            hold_store(other, keyed, batch=True)
        release_writer(store)


def test_the_batches_hold_no_more_calls_than_the_budget_allows():
    assert batch_lines(RunSettings()) is None
    assert batch_lines(RunSettings(budget=Budget(max_calls=40))) == 40
    assert batch_lines(RunSettings(budget=Budget(max_calls=40, max_cost=1.0), est_cost_per_game=0.05)) == 20
