"""The batch ledger: each provider batch a run submits (its calls, its state) recorded before it is sent.

A batch row is written in state ``intent`` (with every call it holds: call key → game key) before anything goes to
the provider, becomes ``submitted`` once the provider's batch id is known, and ``ended`` when its results are read
— the answers it brought journaled (the store's answer journal) in the same transaction. An ``intent`` the provider
never saw (the process died before the batch was created) becomes ``dropped``. A rerun therefore polls the batches
still ``submitted`` (or finds an ``intent``'s batch by its ``local_id`` in the batch's metadata) instead of
submitting their calls again. Shared by both SQLite stores (:class:`SqliteBatchLedger`); the PostgreSQL store keeps
the same table (:data:`PG_BATCH_TABLE`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import AbstractContextManager
from typing import Any, Callable

from judgewise.store.storable import journal_json

BATCH_STATES = ("intent", "submitted", "ended", "dropped")
OPEN_STATES = ("intent", "submitted")
BATCH_COLUMNS = ("local_id", "batch_id", "state", "outcome", "calls", "counts", "created_at", "updated_at")


def batch_table_sql(table: str, real: str = "REAL") -> str:
    """The ``CREATE TABLE`` of a batch ledger named ``table`` (``real``: the database's float type)."""
    states = ", ".join(f"'{s}'" for s in BATCH_STATES)
    return (f"CREATE TABLE IF NOT EXISTS {table} (local_id TEXT PRIMARY KEY, batch_id TEXT, "
            f"state TEXT NOT NULL CHECK (state IN ({states})), outcome TEXT, calls TEXT NOT NULL, counts TEXT, "
            f"created_at {real} NOT NULL, updated_at {real} NOT NULL)")


def batch_row(values: tuple) -> dict:
    """A ledger row as a dict, ``calls`` and ``counts`` decoded."""
    row = dict(zip(BATCH_COLUMNS, values))
    row["calls"] = json.loads(row["calls"])
    row["counts"] = json.loads(row["counts"]) if row["counts"] else {}
    return row


def journal_rows(answers: list[tuple[str, str, dict]], at: float) -> list[tuple]:
    """(call, game, answer JSON, created_at) journal rows from (game key, call key, answer) triples."""
    return [(call, game, journal_json(answer), at) for game, call, answer in answers]


class SqliteBatchLedger:
    """The ledger's methods over a SQLite store's ``BATCHES`` table and answer ``JOURNAL`` (module docstring)."""

    BATCHES, JOURNAL = "", ""
    _db: sqlite3.Connection  # the store's connection, and its write transaction (LeasedSqliteStore)
    _write: Callable[[], AbstractContextManager[Any]]
    _journal_empty: bool

    def batch_intent(self, local_id: str, calls: dict[str, str]) -> None:
        """Record a batch about to be submitted: its ``calls`` (call key → game key), state ``intent``."""
        now = time.time()
        with self._write():
            self._db.execute(f"INSERT INTO {self.BATCHES} VALUES (?, NULL, 'intent', NULL, ?, NULL, ?, ?)",
                             (local_id, json.dumps(calls), now, now))

    def batch_submitted(self, local_id: str, batch_id: str) -> None:
        """The provider created the batch ``batch_id``: state ``submitted``."""
        self._set_batch(local_id, "submitted", batch_id=batch_id)

    def batch_dropped(self, local_id: str, reason: str) -> None:
        """An ``intent`` the provider never created: state ``dropped`` (its calls were never sent)."""
        self._set_batch(local_id, "dropped", outcome=reason)

    def batch_ended(self, local_id: str, outcome: str, counts: dict[str, int],
                    answers: list[tuple[str, str, dict]]) -> None:
        """The batch's results are read: its ``answers`` (game key, call key, answer) journaled and the batch
        ``ended`` with the provider's ``outcome`` and its line ``counts``, in one transaction."""
        with self._write():
            self._db.executemany(f"INSERT OR REPLACE INTO {self.JOURNAL} VALUES (?, ?, ?, ?)",
                                 journal_rows(answers, time.time()))
            self._update_batch(local_id, "ended", outcome=outcome, counts=json.dumps(counts))
        if answers:
            self._journal_empty = False  # the journal now holds answers to look up

    def batches(self, states: tuple[str, ...] = BATCH_STATES) -> list[dict]:
        """The ledger's rows in ``states``, oldest first (each a dict of :data:`BATCH_COLUMNS`)."""
        marks = ", ".join("?" * len(states))
        rows = self._db.execute(f"SELECT {', '.join(BATCH_COLUMNS)} FROM {self.BATCHES} "
                                f"WHERE state IN ({marks}) ORDER BY created_at, local_id", states).fetchall()
        return [batch_row(r) for r in rows]

    def _set_batch(self, local_id: str, state: str, **values) -> None:
        with self._write():
            self._update_batch(local_id, state, **values)

    def _update_batch(self, local_id: str, state: str, **values) -> None:
        sets = "".join(f", {name} = ?" for name in values)
        self._db.execute(f"UPDATE {self.BATCHES} SET state = ?, updated_at = ?{sets} WHERE local_id = ?",
                         (state, time.time(), *values.values(), local_id))
