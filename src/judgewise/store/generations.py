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
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.store.leases import LeasedSqliteStore, connect_writer, owner_id
from judgewise.store.judgments import SQLITE_HEADER, STORE_TABLES, storable_record

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
"""

_UPSERT = (f"INSERT INTO generations ({', '.join(ANSWER_COLUMNS)}) VALUES ({', '.join('?' * len(ANSWER_COLUMNS))}) "
           "ON CONFLICT(key) DO UPDATE SET "
           + ", ".join(f"{c} = excluded.{c}" for c in ANSWER_COLUMNS if c != "key")
           + " WHERE generations.status != 'ok'")  # an answer stored ok is never overwritten


@dataclass
class AnswerRecord:
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
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cost: float = 0.0
    n_calls: int = 0
    created_at: float = 0.0

    def values(self) -> tuple:
        return tuple(getattr(self, c) for c in ANSWER_COLUMNS)


def generation_tables(path: Path, *, writing: bool) -> set[str] | None:
    """The tables of the SQLite file at ``path``, or None when there is no file or it is empty (or, reading, not a
    SQLite file at all). Raises :class:`InputError` naming the file when it is not SQLite (writing), holds no
    generation tables (writing: nor is an empty database or a judging store, to add them to), or holds generation
    tables of a newer schema. Writes nothing."""
    hint = HINT if writing else READ_HINT
    if not path.is_file() or path.stat().st_size == 0:
        return None
    with path.open("rb") as fh:
        if fh.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            if not writing:
                return None  # not SQLite: not a store, for a reader that reads other files otherwise
            raise InputError(f"not a SQLite file, so not a judgewise store; {hint}", file=str(path))
    try:
        db = _connect_readonly(path)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            version = (db.execute("SELECT value FROM generation_meta WHERE name = 'schema_version'").fetchone()
                       if "generation_meta" in tables else None)
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"unreadable SQLite file ({exc}); {hint}", file=str(path)) from None
    _check_tables(path, tables, version, writing=writing)
    return tables


def _check_tables(path: Path, tables: set[str], version, *, writing: bool) -> None:
    if GENERATION_TABLES <= tables:
        if version is None or not str(version[0]).isdigit():
            raise InputError(f"generation tables without a valid schema version (found {version!r})", file=str(path))
        if int(version[0]) > SCHEMA_VERSION:
            raise InputError(f"generated answers of schema version {version[0]}, newer than this judgewise reads "
                             f"({SCHEMA_VERSION}); upgrade judgewise to use it", file=str(path))
        return
    if writing and (not tables or STORE_TABLES <= tables):
        return  # an empty database, or a judging store: the generation tables are added beside its tables
    shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
    what = "holds no generated answers" if STORE_TABLES <= tables else "is a SQLite database of something else"
    raise InputError(f"{what} (its tables: {shown or 'none'}); {HINT if writing else READ_HINT}", file=str(path))


def _connect_readonly(path: Path, busy_timeout_s: float = 60.0) -> sqlite3.Connection:
    in_use = Path(f"{path}-wal").exists()  # a writer has it open: read through the WAL
    query = "mode=ro" if in_use else "immutable=1"
    db = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True, timeout=busy_timeout_s, isolation_level=None)
    db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    return db


class GenerationStore(LeasedSqliteStore):
    """The SQLite file of generated answers. One instance per process (not thread-safe); close() when done.

    It is what the judging engine (:func:`judgewise.judges.runner.arun_keyed`) needs of a store: ``statuses``,
    ``claim``/``release``/``renew_claims``, ``record``, ``frame``, and the answer journal (claims and the journal:
    :class:`~judgewise.store.leases.LeasedSqliteStore`)."""

    RESULTS, CLAIMS, JOURNAL, META, SCHEMA = ("generations", "generation_claims", "generation_journal",
                                             "generation_meta", _SCHEMA)

    def __init__(self, path: str | os.PathLike = DEFAULT_GENERATION_STORE, *, lease_s: float = 120.0,
                 busy_timeout_s: float = 60.0):
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigError(f"store path {self.path} is a directory; name a file, e.g. "
                              f"{self.path / DEFAULT_GENERATION_STORE}")
        generation_tables(self.path, writing=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lease_s, self.readonly, self.owner = lease_s, False, owner_id()
        self._db = connect_writer(self.path, busy_timeout_s)
        with self._write():
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            version = (self._db.execute("SELECT value FROM generation_meta WHERE name = 'schema_version'").fetchone()
                       if "generation_meta" in tables else None)
            _check_tables(self.path, tables, version, writing=True)  # again, under the write lock
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self._db.execute(statement)
            self._db.execute("INSERT OR IGNORE INTO generation_meta VALUES ('schema_version', ?)",
                             (str(SCHEMA_VERSION),))

    @classmethod
    def open_readonly(cls, path: str | os.PathLike) -> "GenerationStore":
        """An existing store opened for reading only (exports, ``responses:`` pointing at it); never writes."""
        path = Path(path)
        if generation_tables(path, writing=False) is None:
            raise InputError("no generated answers here (no such file, an empty one, or not SQLite); run "
                             "`judgewise generate` first", file=str(path))
        self = cls.__new__(cls)
        self.path, self.lease_s, self.readonly, self.owner = path, 120.0, True, owner_id()
        self._db = _connect_readonly(path)
        return self

    @classmethod
    def open_for_planning(cls, path: str | os.PathLike) -> "GenerationStore":
        """What a dry run reads: the store read-only when there is one, else an empty store in memory."""
        path = Path(path)
        if path.is_dir():
            raise ConfigError(f"store path {path} is a directory; name a file, e.g. {path / DEFAULT_GENERATION_STORE}")
        tables = generation_tables(path, writing=True)
        if tables is not None and GENERATION_TABLES <= tables:
            return cls.open_readonly(path)
        return cls.empty(path)

    # -- reads -------------------------------------------------------------------------------------------------
    def statuses(self, keys: Iterable[str]) -> dict[str, str]:
        """key → "ok"/"failed" for the keys already stored."""
        keys, out = list(keys), {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            out.update(self._db.execute(f"SELECT key, status FROM generations WHERE key IN "
                                        f"({','.join('?' * len(chunk))})", chunk).fetchall())
        return out

    def frame(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The stored answers (all, or those with ``keys``) with the store's columns."""
        cols = ", ".join(ANSWER_COLUMNS)
        if keys is None:
            return pd.read_sql_query(f"SELECT {cols} FROM generations ORDER BY model, prompt_id, turn, created_at",
                                     self._db)
        keys = list(keys)
        parts = [pd.read_sql_query(f"SELECT {cols} FROM generations WHERE key IN "
                                   f"({','.join('?' * len(keys[i:i + 500]))})", self._db, params=keys[i:i + 500])
                 for i in range(0, len(keys), 500)]
        parts = [p for p in parts if len(p)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(ANSWER_COLUMNS))

    def answers(self, keys: Iterable[str]) -> dict[str, str]:
        """key → text of the answers stored ok among ``keys``."""
        frame = self.frame(keys)
        ok = frame[frame["status"] == "ok"]
        return dict(zip(ok["key"], ok["text"].fillna("")))

    def count(self, status: str | None = None) -> int:
        if status is None:
            return self._db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM generations WHERE status = ?", (status,)).fetchone()[0]

    def integrity_check(self) -> str:
        return self._db.execute("PRAGMA integrity_check").fetchone()[0]

    # -- claims (leases) -----------------------------------------------------------------------------------------
    def claims(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM generation_claims").fetchone()[0]

    # -- writes -----------------------------------------------------------------------------------------------------
    # ``record(rec)`` stores one finished answer (an AnswerRecord) in its own transaction, ``record_soon(rec)`` with
    # the others finished in the same turn of the event loop (``LeasedSqliteStore``); both through these two:
    def _ready(self, rec: AnswerRecord) -> None:
        storable_record(rec, "error")  # the one rule of both stores (an "ok" answer's error is only a note)

    def _write_row(self, rec: AnswerRecord) -> None:
        """Inside a write transaction: the answer's row, its claim and journal entries dropped."""
        self._db.execute(_UPSERT, rec.values())
        self._db.execute("DELETE FROM generation_claims WHERE key = ?", (rec.key,))
        self._db.execute("DELETE FROM generation_journal WHERE key = ?", (rec.key,))

    # -- the answer journal (scheduler.AnswerJournal) -------------------------------------------------------------