"""Durable SQLite store of generated answers: one row per (model, prompt, turn, settings), committed as it arrives.

``judgewise generate`` keeps every answer here, in its own tables (``generations``, ``generation_claims``,
``generation_journal``, ``generation_meta``), in the file the config names: a new file, or one that already holds
them (or a judging store, beside whose tables they are added). A row is keyed by a content hash of the model's
label, the prompt id, the turn, the *settings hash* (backend, model, sampling parameters, max_tokens, system prompt)
and the user turns up to it, so a rerun finds every finished answer and makes no call, and an edited question or
setting is a new answer. Like the judging store (:mod:`judgewise.store.judgments`): WAL journal, one ``BEGIN
IMMEDIATE`` transaction per answer (a ``kill -9`` loses at most the calls in flight), a claim (lease) per key in
flight so two processes sharing the file never pay for the same answer (a dead owner's claim is taken over at
once), and a journal of answers received but not yet stored (``scheduler.AnswerJournal``), so no answer received
is paid for again. A file that is not SQLite, a SQLite database of something else, or a newer schema is refused
without writing to it. Every row written follows ``store.storable_record`` (secrets scrubbed, what UTF-8
cannot hold escaped, numbers beyond 64 bits refused, each change noted).
"""

from __future__ import annotations

import logging
import operator
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from judgewise.errors import InputError
from judgewise.store.batches import batch_table_sql
from judgewise.store.leases import LeasedSqliteStore, connect_writer, owner_id
from judgewise.store.judgments import STORE_TABLES, check_version, storable_record, stored_version
from judgewise.store.sqlite import SQLITE_HEADER, connect_readonly, file_head, shown_tables, table_names, writable_path
from judgewise.store.storable import CallCost

log = logging.getLogger(__name__)

DEFAULT_GENERATION_STORE = "judgewise-generations.sqlite"
SCHEMA_VERSION = 1
GENERATION_TABLES = {"generations", "generation_claims", "generation_journal", "generation_meta"}
HINT = "name another file for store: (or --store); the answers of judgewise generate go to their own tables"
READ_HINT = "give the store `judgewise generate` wrote (store: of its config), or the generate config itself"

ANSWER_COLUMNS = ("key", "model", "prompt_id", "turn", "settings", "identity", "question", "status", "text",
                  "error", "finish_reason", "tokens_in", "tokens_out", "latency_s", "cost", "n_calls", "created_at")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL, prompt_id TEXT NOT NULL, turn INTEGER NOT NULL CHECK (turn >= 1),
    settings TEXT NOT NULL, identity TEXT NOT NULL, question TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    text TEXT, error TEXT, finish_reason TEXT,
    tokens_in INTEGER NOT NULL DEFAULT 0, tokens_out INTEGER NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0, n_calls INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS generations_by_answer ON generations (model, prompt_id, turn, settings);
CREATE TABLE IF NOT EXISTS generation_claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS generation_journal (call TEXT PRIMARY KEY, key TEXT NOT NULL, answer TEXT NOT NULL,
                                               created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS generation_journal_by_key ON generation_journal (key);
CREATE TABLE IF NOT EXISTS generation_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
""" + batch_table_sql("generation_batches") + ";\n"

_UPSERT = (f"INSERT INTO generations ({', '.join(ANSWER_COLUMNS)}) VALUES ({', '.join('?' * len(ANSWER_COLUMNS))}) "
           "ON CONFLICT(key) DO UPDATE SET "
           + ", ".join(f"{c} = excluded.{c}" for c in ANSWER_COLUMNS if c != "key")
           + " WHERE generations.status != 'ok'")  # an answer stored ok is never overwritten


_answer_values = operator.attrgetter(*ANSWER_COLUMNS)  # a record's row, in column order


@dataclass
class AnswerRecord(CallCost):
    """One finished answer as the store keeps it (``status`` "failed" with its ``error`` when there is none)."""

    key: str
    model: str
    prompt_id: str
    turn: int
    settings: str
    identity: str
    question: str
    status: str  # "ok" | "failed"
    text: str | None = None
    error: str | None = None
    finish_reason: str | None = None

    def values(self) -> tuple:
        return _answer_values(self)


def generation_tables(path: Path, *, writing: bool) -> set[str] | None:
    """The tables of the SQLite file at ``path``, or None when there is no file or it is empty (or, reading, not a
    SQLite file at all). Raises :class:`InputError` naming the file when it is not SQLite (writing), holds no
    generation tables (writing: nor is an empty database or a judging store, to add them to), or holds generation
    tables of a newer schema. Writes nothing."""
    hint = HINT if writing else READ_HINT
    if not path.is_file() or path.stat().st_size == 0:
        return None
    if file_head(path) != SQLITE_HEADER:
        if not writing:
            return None  # not SQLite: not a store, for a reader that reads other files otherwise
        raise InputError(f"not a SQLite file, so not a judgewise store; {hint}", file=str(path))
    try:
        db = connect_readonly(path)
        try:
            tables = _check_tables(db, path, writing=writing)
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"unreadable SQLite file ({exc}); {hint}", file=str(path)) from None
    return tables


def _check_tables(db: sqlite3.Connection, path: Path, *, writing: bool) -> set[str]:
    """The tables of an open SQLite file, checked: generation tables of a version this judgewise reads, or (writing)
    an empty database or a judging store to add them to; InputError naming the file for anything else."""
    tables = table_names(db)
    if GENERATION_TABLES <= tables:
        check_version(stored_version(db, "generation_meta"), str(path), latest=SCHEMA_VERSION,
                      what="generation tables")
        return tables
    if writing and (not tables or STORE_TABLES <= tables):
        return tables  # an empty database, or a judging store: the generation tables are added beside its tables
    what = "holds no generated answers" if STORE_TABLES <= tables else "is a SQLite database of something else"
    raise InputError(f"{what} (its tables: {shown_tables(tables) or 'none'}); {HINT if writing else READ_HINT}",
                     file=str(path))


class GenerationStore(LeasedSqliteStore):
    """The SQLite file of generated answers. One instance per process (not thread-safe); close() when done.

    It is what the judging engine (:func:`judgewise.judges.runner.arun_keyed`) needs of a store: ``statuses``,
    ``claim``/``release``/``renew_claims``, ``record``, ``frame``, and the answer journal (claims and the journal:
    :class:`~judgewise.store.leases.LeasedSqliteStore`)."""

    RESULTS, CLAIMS, JOURNAL, META, SCHEMA = ("generations", "generation_claims", "generation_journal",
                                             "generation_meta", _SCHEMA)
    BATCHES = "generation_batches"
    COLUMNS, ORDER = ANSWER_COLUMNS, "model, prompt_id, turn, created_at"

    def __init__(self, path: str | os.PathLike = DEFAULT_GENERATION_STORE, *, lease_s: float = 120.0,
                 busy_timeout_s: float = 60.0):
        self.path = writable_path(path, DEFAULT_GENERATION_STORE)
        generation_tables(self.path, writing=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lease_s, self.readonly, self.owner = lease_s, False, owner_id()
        self._db = connect_writer(self.path, busy_timeout_s)
        with self._write():
            _check_tables(self._db, self.path, writing=True)  # again, under the write lock
            self._create_tables()
            self._db.execute("INSERT OR IGNORE INTO generation_meta VALUES ('schema_version', ?)",
                             (str(SCHEMA_VERSION),))

    @classmethod
    def open_readonly(cls, path: str | os.PathLike) -> "GenerationStore":
        """An existing store opened for reading only (exports, ``responses:`` pointing at it); never writes."""
        path = Path(path)
        if generation_tables(path, writing=False) is None:
            raise InputError("no generated answers here (no such file, an empty one, or not SQLite); run "
                             "`judgewise generate` first", file=str(path))
        return cls._reader(path, connect_readonly(path))

    @classmethod
    def open_for_planning(cls, path: str | os.PathLike) -> "GenerationStore":
        """What a dry run reads: the store read-only when there is one, else an empty store in memory."""
        path = writable_path(path, DEFAULT_GENERATION_STORE)
        tables = generation_tables(path, writing=True)
        if tables is not None and GENERATION_TABLES <= tables:
            return cls.open_readonly(path)
        return cls.empty(path)

    # -- reads (statuses, frame, count, integrity_check: SqliteStore) ------------------------------------------
    def answers(self, keys: Iterable[str]) -> dict[str, str]:
        """key → text of the answers stored ok among ``keys``."""
        frame = self.frame(keys)
        ok = frame[frame["status"] == "ok"]
        return dict(zip(ok["key"], ok["text"].fillna("")))

    # -- writes -----------------------------------------------------------------------------------------------------
    # ``record(rec)`` stores one finished answer (an AnswerRecord) in its own transaction, ``record_soon(rec)`` with
    # the others finished in the same turn of the event loop (``LeasedSqliteStore``); both through these two:
    def _ready(self, rec: AnswerRecord) -> None:
        storable_record(rec, "error")  # the one rule of both stores (an "ok" answer's error is only a note)

    UPSERT, JOURNAL_GAME = _UPSERT, "key"  # how an answer's row is written (``LeasedSqliteStore._write_rows``)

    # -- the answer journal (scheduler.AnswerJournal) -------------------------------------------------------------