"""The batch ledger: each provider batch a run submits (its calls, its state) recorded before it is sent.

A batch row is written in state ``intent`` (with every call it holds: call key → game key) before anything goes to
the provider, becomes ``submitted`` once the provider's batch id is known, and ``ended`` when its results are read
— the answers it brought journaled (the store's answer journal) in the same transaction. An ``intent`` the provider
never saw (the process died before the batch was created) becomes ``dropped``. The input file's id is recorded
(``input_file_id``) before the batch is created, so a rerun can find an ``intent``'s batch by it (or by its
``local_id`` in the batch's metadata) even where the provider's list leaves the metadata out. A rerun therefore polls
the batches still ``submitted`` (or found) instead of submitting their calls again. Shared by both SQLite stores
(:class:`SqliteBatchLedger`); the PostgreSQL store keeps the same table.

One batch writer per store: a run in batch mode holds the store's writer lease ``writer:batch`` (a claim row, renewed
with the run's claims), a live run a lease of its own ``writer:live:<owner>``; :func:`writer_conflict` says which
leases exclude which, so a second batch run, or a live run beside a batch run, is refused instead of paying for the
same calls twice.
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
BATCH_COLUMNS = ("local_id", "batch_id", "state", "outcome", "calls", "counts", "created_at", "updated_at",
                 "input_file_id")
ADDED_LEDGER_COLUMNS = ("input_file_id",)  # added after the table's first version (TEXT, NULL in older rows)
STATE_ORDER = {"intent": 0, "submitted": 1, "ended": 2, "dropped": 2}  # a copied row never goes back
BATCH_WRITER, LIVE_WRITER = "writer:batch", "writer:live:"  # the writer leases' keys in a store's claims table


def batch_table_sql(table: str, real: str = "REAL") -> str:
    """The ``CREATE TABLE`` of a batch ledger named ``table`` (``real``: the database's float type)."""
    states = ", ".join(f"'{s}'" for s in BATCH_STATES)
    return (f"CREATE TABLE IF NOT EXISTS {table} (local_id TEXT PRIMARY KEY, batch_id TEXT, "
            f"state TEXT NOT NULL CHECK (state IN ({states})), outcome TEXT, calls TEXT NOT NULL, counts TEXT, "
            f"created_at {real} NOT NULL, updated_at {real} NOT NULL, input_file_id TEXT)")


def batch_row(values: tuple, columns: tuple[str, ...] = BATCH_COLUMNS) -> dict:
    """A ledger row as a dict of :data:`BATCH_COLUMNS` (those an older table lacks None), ``calls`` and ``counts``
    decoded."""
    row: dict[str, Any] = dict.fromkeys(BATCH_COLUMNS) | dict(zip(columns, values))
    row["calls"] = json.loads(row["calls"])
    row["counts"] = json.loads(row["counts"]) if row["counts"] else {}
    return row


def ledger_values(row: dict) -> tuple:
    """A ledger row (:func:`batch_row`) as the values of an ``INSERT`` in :data:`BATCH_COLUMNS` order."""
    encoded = {**row, "calls": json.dumps(row["calls"]), "counts": json.dumps(row["counts"]) if row["counts"] else None}
    return tuple(encoded[c] for c in BATCH_COLUMNS)


def rows_to_absorb(incoming: list[dict], have: dict[str, str]) -> tuple[list[dict], list[dict]]:
    """Of ledger rows copied from another store, those the target lacks (to insert) and those it holds in an
    earlier state (``have``: local id → state; to overwrite): a copy never moves a batch back."""
    new = [r for r in incoming if r["local_id"] not in have]
    ahead = [r for r in incoming
             if r["local_id"] in have and STATE_ORDER[r["state"]] > STATE_ORDER[have[r["local_id"]]]]
    return new, ahead


def writer_conflict(mode: str, owner: str, held: list[tuple[str, str, float]], now: float,
                    is_dead: Callable[[str], bool]) -> tuple[str, str] | None:
    """The writer lease among ``held`` (key, owner, expires) that keeps a run in ``mode`` ("batch" or "live") of
    ``owner`` out, as (key, owner), or None: a batch run is kept out by any other writer, a live run by a batch
    writer only (live runs share a store through their claims). A lease of a dead process or expired is no lease."""
    for key, other, expires in held:
        if other == owner or lease_gone(other, expires, now, is_dead):
            continue
        if mode == "batch" or key == BATCH_WRITER:
            return key, other
    return None


def lease_gone(owner: str, expires: float, now: float, is_dead: Callable[[str], bool]) -> bool:
    """Whether a writer lease is no lease any more: expired, or its process (on this host) is gone."""
    return expires <= now or is_dead(owner)


def writer_key(mode: str, owner: str) -> str:
    """The claims-table key of the writer lease of a run in ``mode`` by ``owner``."""
    return BATCH_WRITER if mode == "batch" else LIVE_WRITER + owner


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
            self._db.execute(f"INSERT INTO {self.BATCHES} (local_id, state, calls, created_at, updated_at) "
                             "VALUES (?, 'intent', ?, ?, ?)", (local_id, json.dumps(calls), now, now))

    def batch_uploaded(self, local_id: str, file_id: str) -> None:
        """The batch's input file is uploaded as ``file_id`` (state still ``intent``): recorded before the batch is
        created, so a rerun can find the batch by its input file."""
        with self._write():
            self._db.execute(f"UPDATE {self.BATCHES} SET input_file_id = ?, updated_at = ? WHERE local_id = ?",
                             (file_id, time.time(), local_id))

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
        try:
            cursor = self._db.execute(f"SELECT * FROM {self.BATCHES} WHERE state IN ({marks}) "
                                      "ORDER BY created_at, local_id", states)
        except sqlite3.OperationalError as exc:  # a store read-only from before the ledger: no batch
            if "no such table" in str(exc):
                return []
            raise
        columns = tuple(d[0] for d in cursor.description)  # a read-only older table may lack the added columns
        return [batch_row(r, columns) for r in cursor.fetchall()]

    def absorb_batches(self, rows: list[dict]) -> int:
        """Copy ledger rows of another store (``store copy``): those missing added, those further on replacing
        the row held (never moved back); how many were written."""
        have = dict(self._db.execute(f"SELECT local_id, state FROM {self.BATCHES}").fetchall())
        new, ahead = rows_to_absorb(rows, have)
        marks = ", ".join("?" * len(BATCH_COLUMNS))
        with self._write():
            self._db.executemany(f"INSERT OR REPLACE INTO {self.BATCHES} ({', '.join(BATCH_COLUMNS)}) "
                                 f"VALUES ({marks})", [ledger_values(r) for r in new + ahead])
        return len(new) + len(ahead)

    def _ledger_columns(self) -> None:
        """Inside the opening transaction: the columns added to the ledger since a store was made, added."""
        have = {r[1] for r in self._db.execute(f"PRAGMA table_info({self.BATCHES})")}
        for column in ADDED_LEDGER_COLUMNS:
            if column not in have:
                self._db.execute(f"ALTER TABLE {self.BATCHES} ADD COLUMN {column} TEXT")

    def _set_batch(self, local_id: str, state: str, **values) -> None:
        with self._write():
            self._update_batch(local_id, state, **values)

    def _update_batch(self, local_id: str, state: str, **values) -> None:
        sets = "".join(f", {name} = ?" for name in values)
        self._db.execute(f"UPDATE {self.BATCHES} SET state = ?, updated_at = ?{sets} WHERE local_id = ?",
                         (state, time.time(), *values.values(), local_id))
