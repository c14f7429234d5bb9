"""The batch ledger of every store (store/batches.py): a batch recorded as an intent, then submitted, then ended with
its answers journaled in the same transaction — on a real SQLite file, the generation store and PostgreSQL."""

from __future__ import annotations

import pytest

from judgewise.store.batches import OPEN_STATES
from judgewise.store.generations import GenerationStore
from judgewise.store.judgments import JudgmentStore
from judgewise.store.opening import open_store

from tests.support.pg_server import pg_server, pg_url  # noqa: F401 (fixtures)

ANSWER = {"text": "[[A>B]]", "tokens_in": 10, "tokens_out": 3, "latency_s": 0.0, "cost": 0.5, "top_logprobs": None,
          "raw": {"finish_reason": "stop"}}


def _walk_a_batch_through_its_states(store) -> None:
    calls = {"call-1": "game-1", "call-2": "game-2"}
    store.batch_intent("local-1", calls)
    store.batch_intent("local-2", {"call-3": "game-3"})
    assert [(r["local_id"], r["state"], r["batch_id"], r["calls"]) for r in store.batches(OPEN_STATES)] == [
        ("local-1", "intent", None, calls), ("local-2", "intent", None, {"call-3": "game-3"})]
    store.batch_submitted("local-1", "batch-abc")
    store.batch_dropped("local-2", "never created")
    assert store.held_answer("call-1") is None
    store.batch_ended("local-1", "completed", {"answered": 1, "failed": 1}, [("game-1", "call-1", ANSWER)])
    assert store.held_answer("call-1") == ANSWER and store.held_answer("call-2") is None
    assert store.batches(OPEN_STATES) == []
    rows = {r["local_id"]: r for r in store.batches()}
    assert (rows["local-1"]["state"], rows["local-1"]["batch_id"], rows["local-1"]["outcome"]) == (
        "ended", "batch-abc", "completed")
    assert rows["local-1"]["counts"] == {"answered": 1, "failed": 1}
    assert (rows["local-2"]["state"], rows["local-2"]["outcome"]) == ("dropped", "never created")


def test_a_sqlite_store_records_a_batch_before_submission_and_survives_reopening(tmp_path):
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        _walk_a_batch_through_its_states(store)
    with JudgmentStore(tmp_path / "s.sqlite") as again:  # the ledger and the journal are in the file
        assert [r["state"] for r in again.batches()] == ["ended", "dropped"]
        assert again.held_answer("call-1") == ANSWER


def test_the_generation_store_keeps_its_own_ledger(tmp_path):
    with GenerationStore(tmp_path / "g.sqlite") as store:
        _walk_a_batch_through_its_states(store)


def test_a_batch_intent_is_not_recorded_twice(tmp_path):
    with JudgmentStore(tmp_path / "s.sqlite") as store:
        store.batch_intent("local-1", {"c": "g"})
        with pytest.raises(Exception, match="UNIQUE"):
            store.batch_intent("local-1", {"c": "g"})


def test_a_postgresql_store_records_batches_as_the_sqlite_store_does(pg_url):
    with open_store(pg_url) as store:
        _walk_a_batch_through_its_states(store)
