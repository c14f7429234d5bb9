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


def test_a_ledger_of_before_the_input_file_column_is_read_and_migrated(tmp_path):
    import sqlite3

    with JudgmentStore(tmp_path / "s.sqlite") as store:
        store.batch_intent("old-1", {"c": "g"})
    with sqlite3.connect(tmp_path / "s.sqlite") as db:  # the table as the first ledger made it (no input_file_id)
        db.execute("ALTER TABLE batches DROP COLUMN input_file_id")
    with JudgmentStore.open_readonly(tmp_path / "s.sqlite") as ro:
        assert [(r["local_id"], r["input_file_id"]) for r in ro.batches()] == [("old-1", None)]
    with JudgmentStore(tmp_path / "s.sqlite") as store:  # opened for writing: the column added
        store.batch_intent("new-1", {"d": "h"})
        store.batch_uploaded("new-1", "file-9")
        assert {r["local_id"]: r["input_file_id"] for r in store.batches()} == {"old-1": None, "new-1": "file-9"}


def test_absorbed_ledger_rows_are_added_or_moved_on_never_back(tmp_path):
    with JudgmentStore(tmp_path / "a.sqlite") as a, JudgmentStore(tmp_path / "b.sqlite") as b:
        for store in (a, b):
            store.batch_intent("x", {"c1": "g1"})
        b.batch_submitted("x", "batch-x")
        b.batch_ended("x", "completed", {"answered": 1}, [("g1", "c1", ANSWER)])
        a.batch_intent("y", {"c2": "g2"})
        a.batch_uploaded("y", "file-y")
        assert b.absorb_batches(a.batches()) == 1  # y added; x stays ended (a holds it as an intent)
        rows = {r["local_id"]: r for r in b.batches()}
        assert rows["x"]["state"] == "ended" and rows["y"]["state"] == "intent"
        assert rows["y"]["input_file_id"] == "file-y"
        a.batch_submitted("y", "batch-y")
        assert b.absorb_batches(a.batches()) == 1 and b.batches(OPEN_STATES)[0]["batch_id"] == "batch-y"


def test_a_batch_writer_keeps_out_every_other_writer_and_a_live_one_only_batch_writers(tmp_path):
    from judgewise.store.batches import BATCH_WRITER

    with JudgmentStore(tmp_path / "s.sqlite") as one, JudgmentStore(tmp_path / "s.sqlite") as two, \
            JudgmentStore(tmp_path / "s.sqlite") as three:
        assert one.take_writer("live") is None and two.take_writer("live") is None  # live runs share a store
        assert three.take_writer("batch") == (f"writer:live:{one.owner}", one.owner)
        one.release_writer()
        two.release_writer()
        assert three.take_writer("batch") is None
        assert one.take_writer("live") == (BATCH_WRITER, three.owner)
        assert two.take_writer("batch") == (BATCH_WRITER, three.owner)
        three.release_writer()
        assert two.take_writer("batch") is None and _leases(tmp_path) == [("writer:batch", two.owner)]
        assert one.claims() == 0  # row claims only


def test_the_writer_lease_of_a_dead_process_is_no_lease(tmp_path):
    import sqlite3

    with JudgmentStore(tmp_path / "s.sqlite") as store:
        with sqlite3.connect(tmp_path / "s.sqlite") as db:  # a lease of a process of this host that is gone
            import socket

            db.execute("INSERT INTO claims VALUES ('writer:batch', ?, 1e12)", (f"{socket.gethostname()}:999999999:x",))
        assert store.take_writer("live") is None  # the dead lease removed, this one taken
        assert _leases(tmp_path) == [(f"writer:live:{store.owner}", store.owner)]


def test_a_postgresql_store_keeps_writer_leases_and_absorbs_a_copied_ledger(pg_url, tmp_path):
    from judgewise.store.opening import copy_store

    with JudgmentStore(tmp_path / "s.sqlite") as store:
        store.batch_intent("open-1", {"c": "g"})
        store.batch_uploaded("open-1", "file-1")
        store.batch_submitted("open-1", "batch-1")
    info = copy_store(tmp_path / "s.sqlite", pg_url)
    assert (info["batches"], info["open_batches"]) == (1, 1)
    with open_store(pg_url) as one, open_store(pg_url) as two:
        assert [(r["batch_id"], r["input_file_id"]) for r in one.batches(OPEN_STATES)] == [("batch-1", "file-1")]
        assert one.take_writer("batch") is None
        assert two.take_writer("live") == ("writer:batch", one.owner)
        one.release_writer()
        assert two.take_writer("live") is None
        two.release_writer()


def _leases(folder) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(folder / "s.sqlite") as db:
        return db.execute("SELECT key, owner FROM claims WHERE key LIKE 'writer:%'").fetchall()
