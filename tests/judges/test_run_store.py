"""The store-opening edge of a run (judges.run_store.opened_store): a path is opened and closed by it, a store
object passed in is left open for its owner; the engine is only ever given an open store."""

from __future__ import annotations

import sqlite3

import pytest

from judgewise.judges.run_store import opened_store
from judgewise.judges.runner import run_judging
from judgewise.store.judgments import JudgmentStore

from tests.support.fault_server import FaultServer
from tests.support.judging import comparisons, llm_judge


def test_a_store_given_as_a_path_is_opened_for_the_block_and_closed_after_it(tmp_path):
    path = tmp_path / "s.sqlite"
    with opened_store(path) as store:
        assert isinstance(store, JudgmentStore) and store.statuses(["k"]) == {}
    with pytest.raises(sqlite3.ProgrammingError):  # closed: its connection refuses work
        store.statuses(["k"])
    assert path.is_file()


def test_a_store_given_open_is_passed_through_and_left_open(tmp_path):
    with JudgmentStore(tmp_path / "s.sqlite") as mine:
        with opened_store(mine) as store:
            assert store is mine
        assert mine.statuses(["k"]) == {}  # still open after the block


def test_a_path_is_closed_even_when_the_block_fails(tmp_path):
    with pytest.raises(RuntimeError), opened_store(tmp_path / "s.sqlite") as store:
        raise RuntimeError("the run failed")
    with pytest.raises(sqlite3.ProgrammingError):
        store.statuses(["k"])


def test_a_run_on_an_open_store_leaves_it_open_and_its_rows_readable(tmp_path):
    with FaultServer() as srv, JudgmentStore(tmp_path / "s.sqlite") as store:
        result = run_judging(comparisons(2), llm_judge(srv.url), store)
        assert result.judged == 4 and len(store.frame()) == 4  # the caller's store is still open
