"""Durable SQLite store of judge calls: one row per game, committed as it arrives, shared by processes.

One row per *game* (a comparison shown in one order), keyed by a content hash of the judge's identity
(backend, model, sampling parameters, template name@version), the prompt, both responses and the order.
Rerunning a job finds every finished key and makes no call; a run killed with ``kill -9`` loses at most
the calls that were in flight. Several processes may share one file: WAL journal, ``busy_timeout``,
``BEGIN IMMEDIATE`` transactions, and a *claim* (lease) row per key in flight so a second process skips
keys another is paying for. A claim expires after its lease, or at once when its owner process (same
host) is dead, so a crashed run never blocks its restart. Answers received for a game not stored yet are
kept in an ``answers`` journal (see ``scheduler.AnswerJournal``) until the game's row is, so a restart never
sends a call again whose answer it already holds.

Opening refuses, without writing to it, a file that is not a judgewise store: a non-SQLite file, a SQLite
database with other tables, or a store of a newer schema version. Tables are created only in a new or empty
file. Readers (export, stats, report) use :meth:`JudgmentStore.open_readonly`, which never writes.

Verdict columns are stored in the canonical ``model_a`` view (``outcome``, ``verdict5``, ``soft``);
``label`` is the literal verdict token as the judge wrote it (shown-first view), ``first`` the model
shown first. Secrets never reach this file: identities are secret-free by contract, and every text written
(raw completion, error, label, journaled answers) goes through ``redaction.scrub`` (``storable_record``: what UTF-8
cannot hold escaped and numbers beyond 64 bits refused too, each change noted in the row).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import math
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io.atomic import atomic_target, write_text_atomic
from judgewise.io.schema import failed_mask, failure_reasons
from judgewise.store.storable import storable
from judgewise.store.leases import LeasedSqliteStore, connect_writer, owner_id

log = logging.getLogger(__name__)

DEFAULT_STORE = "judgewise-store.sqlite"
SCHEMA_VERSION = 2  # 2: pointwise grades (mode, score, turn); a version-1 store is migrated on opening to write
SQLITE_HEADER = b"SQLite format 3\x00"
STORE_TABLES = {"games", "claims", "meta"}  # what makes a SQLite file a judgewise store

GAME_COLUMNS = (
    "key", "prompt_id", "model_a", "model_b", "first", "swapped", "judge", "template", "judge_identity",
    "status", "raw", "verdict5", "label", "outcome", "soft", "error",
    "tokens_in", "tokens_out", "latency_s", "cost", "n_calls", "created_at", "mode", "score", "turn",
)
POINTWISE = "single"  # ``mode`` of a pointwise grade row (model_b is "" and ``score`` the rating); games: "pairwise"
#: columns added after version 1 (name → its value in rows written before them), for migration and old stores read
ADDED_COLUMNS = {"mode": "pairwise", "score": None, "turn": None}
#: schema version → its steps; written in SQL that SQLite and PostgreSQL both run (a PostgreSQL store is created at
#: the current version and takes only the steps after it)
MIGRATIONS = {2: ("ALTER TABLE games ADD COLUMN mode TEXT NOT NULL DEFAULT 'pairwise'",
                  "ALTER TABLE games ADD COLUMN score REAL", "ALTER TABLE games ADD COLUMN turn INTEGER")}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    key TEXT PRIMARY KEY,
    prompt_id TEXT NOT NULL, model_a TEXT NOT NULL, model_b TEXT NOT NULL,
    first TEXT NOT NULL, swapped INTEGER NOT NULL,
    judge TEXT NOT NULL, template TEXT, judge_identity TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    raw TEXT, verdict5 INTEGER, label TEXT, outcome REAL, soft REAL, error TEXT,
    tokens_in INTEGER NOT NULL DEFAULT 0, tokens_out INTEGER NOT NULL DEFAULT 0,
    latency_s REAL NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0, n_calls INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    mode TEXT NOT NULL DEFAULT 'pairwise', score REAL, turn INTEGER
);
CREATE INDEX IF NOT EXISTS games_by_status ON games (status);
CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (call TEXT PRIMARY KEY, game TEXT NOT NULL, answer TEXT NOT NULL,
                                    created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS answers_by_game ON answers (game);
"""

HISTORY_SQL = ("SELECT SUM(tokens_out) * 1.0 / SUM(n_calls), SUM(latency_s) / SUM(n_calls), COUNT(*) "
               "FROM games WHERE status = 'ok' AND judge_identity = %s AND n_calls > 0")

_UPSERT = (f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) VALUES ({', '.join('?' * len(GAME_COLUMNS))}) "
           "ON CONFLICT(key) DO UPDATE SET "
           + ", ".join(f"{c} = excluded.{c}" for c in GAME_COLUMNS if c != "key")
           + " WHERE games.status != 'ok'")  # a judged row is never overwritten


@dataclass
class GameRecord:
    """One finished game as the store keeps it (verdict fields already in model_a's view)."""

    key: str
    prompt_id: str
    model_a: str
    model_b: str
    first: str
    swapped: bool
    judge: str
    template: str | None
    judge_identity: str
    status: str  # "ok" | "failed"
    raw: str = ""
    verdict5: int | None = None
    label: str | None = None
    outcome: float | None = None
    soft: float | None = None
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cost: float = 0.0
    n_calls: int = 0
    created_at: float = 0.0
    mode: str = "pairwise"
    score: float | None = None  # pointwise grades: the rating
    turn: int | None = None  # multi-turn conversations: the turn graded (1-based)

    def values(self) -> tuple:
        return tuple(getattr(self, c) for c in GAME_COLUMNS)


class JudgmentStore(LeasedSqliteStore):
    """A SQLite file of judge games. Use one instance per process (not thread-safe); close() when done."""

    RESULTS, CLAIMS, JOURNAL, META, SCHEMA = "games", "claims", "answers", "meta", _SCHEMA

    def __init__(self, path: str | os.PathLike = DEFAULT_STORE, *, lease_s: float = 120.0,
                 busy_timeout_s: float = 60.0, durable: bool = False):
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigError(f"store path {self.path} is a directory; name a file, e.g. {self.path / DEFAULT_STORE}")
        new = check_store_file(self.path, busy_timeout_s=busy_timeout_s, hint=WRITE_HINT) is None
        self.lease_s, self.readonly = lease_s, False
        self.owner = owner_id()
        self._db = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = connect_writer(self.path, busy_timeout_s, durable=durable)
            self._make_schema(new)
        except (OSError, sqlite3.OperationalError) as exc:  # a read-only, immutable or full place
            if self._db is not None:
                self._db.close()
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            raise InputError(f"cannot open the store for writing ({getattr(exc, 'strerror', None) or exc}): is "
                             "the place read-only, the file immutable or the disk full? name a writable file",
                             file=str(self.path)) from None

    def _make_schema(self, new: bool) -> None:
        """The store's tables (made when missing), checked again under the write lock, migrated to this version."""
        with self._write():
            if not new:  # another process may have made it a store meanwhile: check again under the lock
                _check_tables(self._db, self.path)
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self._db.execute(statement)
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            _migrate(self._db)

    @classmethod
    def open_readonly(cls, path: str | os.PathLike, *, busy_timeout_s: float = 60.0) -> "JudgmentStore":
        """Open an existing store for reading only (``mode=ro``): export, stats, reports. Raises
        :class:`InputError` naming the file when it is missing or not a judgewise store; never writes to it, and
        leaves no -wal/-shm files beside it (a file no writer has open is read as immutable)."""
        path = Path(path)
        if path.is_dir():
            raise InputError(f"a directory, not a store file; {READ_HINT}", file=str(path))
        if not path.is_file():
            raise InputError("no such store file (run `judgewise judge` to make one)", file=str(path))
        if check_store_file(path, busy_timeout_s=busy_timeout_s, hint=READ_HINT) is None:
            raise InputError(f"empty, not a judgewise store; {READ_HINT}", file=str(path))
        self = cls.__new__(cls)
        self.path, self.lease_s, self.readonly, self.owner = path, 120.0, True, owner_id()
        in_use = Path(f"{path}-wal").exists()  # a writer has it open: read through the WAL (as check_store_file)
        self._db = _connect_readonly(path, busy_timeout_s, immutable=not in_use)
        return self

    @classmethod
    def open_for_planning(cls, path: str | os.PathLike, *, busy_timeout_s: float = 60.0) -> "JudgmentStore":
        """What a dry run reads: the store at ``path`` read-only when there is one, else an empty store in memory,
        so that planning never creates or changes a file. Refuses what the writer would refuse (a directory, a
        file that is not a judgewise store)."""
        path = Path(path)
        if path.is_dir():
            raise ConfigError(f"store path {path} is a directory; name a file, e.g. {path / DEFAULT_STORE}")
        if check_store_file(path, busy_timeout_s=busy_timeout_s, hint=WRITE_HINT) is not None:
            return cls.open_readonly(path, busy_timeout_s=busy_timeout_s)
        return cls.empty(path)

    # -- transactions -------------------------------------------------------------------------------
    # -- reads ----------------------------------------------------------------------------------------
    def statuses(self, keys: Iterable[str]) -> dict[str, str]:
        """key → "ok"/"failed" for the keys already stored (absent keys are not in the result)."""
        out: dict[str, str] = {}
        keys = list(keys)
        size = _max_params(self._db)
        for i in range(0, len(keys), size):
            chunk = keys[i:i + size]
            rows = self._db.execute(f"SELECT key, status FROM games WHERE key IN ({','.join('?' * len(chunk))})",
                                    chunk).fetchall()
            out.update(rows)
        return out

    def frame(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The stored games (all, or those with ``keys``) as a DataFrame with the store's columns."""
        cols = ", ".join(c if c in self._columns() else f"{_sql_literal(ADDED_COLUMNS[c])} AS {c}"
                         for c in GAME_COLUMNS)  # a version-1 store read as it is
        try:
            if keys is None:
                return query_frame(self._db, f"SELECT {cols} FROM games ORDER BY created_at, key")
            keys, size = list(keys), _max_params(self._db)
            batches = [keys[i:i + size] for i in range(0, len(keys), size)]  # one query a run (a frame each: ~5 ms)
            parts = [query_frame(self._db, f"SELECT {cols} FROM games WHERE key IN ({','.join('?' * len(b))})", b)
                     for b in batches]
        except InputError as exc:  # a BLOB among the games (refuse_blobs): named with this file
            raise InputError(exc.detail, file=str(self.path), field=exc.field) from None
        parts = [p for p in parts if len(p)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(GAME_COLUMNS))

    def _columns(self) -> set[str]:
        return {row[1] for row in self._db.execute("PRAGMA table_info(games)")}

    def meta(self) -> dict[str, str]:
        """The store's ``meta`` table (schema version, run facts such as the design) as name → value."""
        return dict(self._db.execute("SELECT name, value FROM meta").fetchall())

    def count(self, status: str | None = None) -> int:
        if status is None:
            return self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM games WHERE status = ?", (status,)).fetchone()[0]

    def modes(self) -> dict:
        """How many stored rows there are of each ``mode`` (pairwise games, pointwise grades), without reading
        the rows."""
        if "mode" not in self._columns():  # a version-1 store: games only
            n = self.count()
            return {ADDED_COLUMNS["mode"]: n} if n else {}
        return dict(self._db.execute("SELECT mode, COUNT(*) FROM games GROUP BY mode").fetchall())

    def judge_history(self, identity_json: str) -> tuple[float, float, int] | None:
        """Mean (tokens_out, latency_s) per call of the judge's earlier successful games, and their number."""
        row = self._db.execute(HISTORY_SQL.replace("%s", "?"), (identity_json,)).fetchone()
        return (row[0], row[1], row[2]) if row and row[2] else None

    def integrity_check(self) -> str:
        return self._db.execute("PRAGMA integrity_check").fetchone()[0]

    # -- claims (leases) ------------------------------------------------------------------------------
    # -- writes ---------------------------------------------------------------------------------------
    # ``record(rec)`` stores one finished game (a GameRecord) in its own transaction, ``record_soon(rec)`` with the
    # others finished in the same turn of the event loop (``LeasedSqliteStore``); both through these two:
    def _ready(self, rec: GameRecord) -> None:
        scrubbed(rec)

    def _write_row(self, rec: GameRecord) -> None:
        """Inside a write transaction: the game's row (an "ok" row already stored is never overwritten), its claim
        and journaled answers dropped."""
        self._db.execute(_UPSERT, rec.values())
        self._db.execute("DELETE FROM claims WHERE key = ?", (rec.key,))
        self._db.execute("DELETE FROM answers WHERE game = ?", (rec.key,))

    def absorb(self, games: pd.DataFrame, meta: dict[str, str], answers: list[tuple]) -> None:
        """Add another store's rows (``judgewise store copy``): games (a row already judged ok here is kept), run
        facts not set here (never the schema version), journaled answers."""
        rows = [tuple(plain_value(v) for v in r) for r in games[list(GAME_COLUMNS)].itertuples(index=False)]
        with self._write():
            self._db.executemany(_UPSERT, rows)
            self._db.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)",
                                 [(k, str(v)) for k, v in meta.items() if k != "schema_version"])
            self._db.executemany("INSERT OR IGNORE INTO answers VALUES (?, ?, ?, ?)", answers)

    def answer_rows(self) -> list[tuple]:
        """The answer journal: (call, game, answer, created_at) rows (``store copy`` moves them)."""
        self._flush_journal()
        return self._db.execute("SELECT call, game, answer, created_at FROM answers ORDER BY created_at").fetchall()

    # -- the answer journal (scheduler.AnswerJournal) ---------------------------------------------------
    def note_meta(self, name: str, value: str) -> None:
        """Record a run fact in ``meta`` (committed at once); a fact already recorded under ``name`` stays."""
        with self._write():
            self._db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (name, str(value)))

    def maybe_charged_timeouts(self) -> int:
        """Calls that timed out after being sent, over every run on this store."""
        row = self._db.execute("SELECT value FROM meta WHERE name = 'maybe_charged_timeouts'").fetchone()
        return int(row[0]) if row else 0

    # -- summaries ------------------------------------------------------------------------------------
    def stats(self) -> dict:
        """Counts ok/failed, tokens, cost and calls, overall and by judge and by model."""
        df = self.frame()
        out = store_stats(df, path=str(self.path),
                          in_flight=self._db.execute("SELECT COUNT(*) FROM claims").fetchone()[0])
        out["maybe_charged_timeouts"] = self.maybe_charged_timeouts()
        return out


FETCH_ROWS = 1 << 16  # rows per fetchmany: the Python objects of one batch at a time


def query_frame(db: sqlite3.Connection, sql: str, params: Sequence = ()) -> pd.DataFrame:
    """A query's rows as :func:`pandas.read_sql_query` gives them (the same dtypes), fetched in batches and
    turned into columns by pyarrow: the per-row Python tuples of one batch at a time instead of all rows, and no
    per-value pandas inference (a store of 1M games: half the time; ``rank`` on it peaks at 1.3 GB, not 2.0). A
    column pyarrow cannot type (text and numbers mixed, blobs) or an empty result: read_sql_query itself."""
    import pyarrow as pa

    cursor = db.execute(sql, params)
    names = [d[0] for d in cursor.description]
    parts: list[list] = [[] for _ in names]
    try:
        while batch := cursor.fetchmany(FETCH_ROWS):
            for part, values in zip(parts, zip(*batch)):
                part.append(pa.array(values))
        if parts and parts[0]:
            columns = {name: _one_column(part, pa) for name, part in zip(names, parts)}
            if any(pa.types.is_binary(col.type) for col in columns.values()):
                raise TypeError("blobs (pyarrow turns the text beside them into bytes too)")
            return pd.DataFrame({name: col.to_pandas() for name, col in columns.items()})
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        pass
    frame = pd.read_sql_query(sql, db, params=list(params) or None)  # mixed types: blobs among text, perhaps
    return refuse_blobs(frame, [col for col in frame.columns if frame[col].dtype == object])


def refuse_blobs(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame``, or an InputError naming the first game (by key) and column of ``columns`` holding bytes (an SQLite
    BLOB): no column of a store holds bytes, and no name can be read from them."""
    for col in columns:
        blob = frame[col].map(lambda value: isinstance(value, bytes)).to_numpy(dtype=bool)
        if blob.any():
            at = int(blob.argmax())
            game = f"game {frame['key'].iat[at]!r}" if "key" in frame.columns else f"result row {at + 1}"
            raise InputError(f"{game} holds bytes (an SQLite BLOB) where text is expected, found "
                             f"{bytes(frame[col].iat[at])[:40]!r}; fix or delete that game", field=col)
    return frame


def _one_column(chunks: list, pa):
    """The batches of one column as one array: all-null batches take the others' type, integers among
    floats become floats (as pandas reads such a column); other mixtures raise."""
    types = {c.type for c in chunks} - {pa.null()}
    if types == {pa.int64(), pa.float64()}:
        types = {pa.float64()}
    if len(types) > 1:
        raise TypeError(f"a column of {types}")
    kind = types.pop() if types else pa.null()
    return pa.chunked_array([c.cast(kind) if c.type != kind else c for c in chunks], type=kind)


def scrubbed(rec: GameRecord) -> GameRecord:
    """``rec`` made ready to store (in place, :func:`storable_record`); the note of anything changed goes to its
    ``error`` when the game failed, else to its ``raw`` text (an "ok" grade has no outcome: an ``error`` there would
    count it failed)."""
    return storable_record(rec, "error" if rec.status == "failed" else "raw")


INT64 = (-(1 << 63), (1 << 63) - 1)  # what an INTEGER column holds (SQLite, PostgreSQL BIGINT)
NOTE = "[judgewise: {}]"  # how a stored row says what was changed to store it


def storable_record(rec, note_field: str):
    """A store record (a dataclass: :class:`GameRecord`, ``generation_store.AnswerRecord``) made ready to store,
    in place — the one rule both stores and both tables follow, so that any answer an API can return is stored:
    ``created_at`` set; every text scrubbed of secrets, with what neither UTF-8 nor PostgreSQL can hold (a lone
    surrogate, NUL) escaped (:func:`storable.storable`); an integer beyond 64 bits or a number that is not finite
    refused (its field's default kept). Each change is said in ``note_field`` (and logged)."""
    rec.created_at = rec.created_at or time.time()
    values = rec.__dict__
    notes = []
    texts = "".join(v for v in values.values() if type(v) is str)  # a secret, NUL or surrogate in a text is in it
    texts_clean = storable(texts)[0] is texts  # the common case: one check for all the texts
    for name, default in _defaults(type(rec)):
        value = values[name]
        kind = type(value)
        if kind is str:
            if value and not texts_clean:
                clean, n = storable(value)
                if n:
                    notes.append(f"{n} character(s) of {name} that UTF-8 cannot hold (a lone surrogate, NUL) "
                                 "stored as \\uXXXX escapes")
                if clean is not value:
                    values[name] = clean
        elif (kind is int and not INT64[0] <= value <= INT64[1]) or (kind is float and value - value != 0):
            notes.append(f"{name} = {_number_text(value)} is not storable (beyond 64 bits or not finite); "
                         f"stored as {default}")
            values[name] = default
        elif kind not in (bool, type(None), int, float) and isinstance(value, (int, float)) \
                and not isinstance(value, bool) and not _storable_number(value):  # numpy scalars and the like
            notes.append(f"{name} = {_number_text(value)} is not storable; stored as {default}")
            values[name] = default
    if notes:
        note = NOTE.format("; ".join(notes))
        log.warning("stored %s with changes: %s", rec.key[:12], note)
        current = getattr(rec, note_field)
        setattr(rec, note_field, f"{current}\n{note}" if current else note)
    return rec


@functools.lru_cache(maxsize=None)
def _defaults(cls) -> tuple:
    """(field name, default or None) of a record dataclass, once per class."""
    return tuple((f.name, None if f.default is dataclasses.MISSING else f.default) for f in dataclasses.fields(cls))


def _storable_number(value) -> bool:
    if isinstance(value, int):
        return INT64[0] <= value <= INT64[1]
    return math.isfinite(float(value))


def _number_text(value) -> str:
    """A number as a note shows it: at most 24 characters (a 400-digit count says how many digits it has)."""
    if isinstance(value, int) and value.bit_length() > 1000:
        return f"a {value.bit_length()}-bit integer"
    text = repr(value) if isinstance(value, float) else str(value)
    return text if len(text) <= 24 else f"{text[:12]}… ({len(text)} digits)"


def _max_params(db: sqlite3.Connection) -> int:
    """How many keys one ``IN (?, ...)`` query binds: at most 30,000, and within the connection's limit (32,766 since
    SQLite 3.32; 999 before)."""
    return max(1, min(30_000, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) - 16))


def _sql_literal(value) -> str:
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"


def _migrate(db: sqlite3.Connection) -> None:
    """Bring a store of an older schema version to :data:`SCHEMA_VERSION` (inside the opening transaction): each
    step's statements, then the version; rows written before keep their values (games are ``mode`` pairwise)."""
    version = int(db.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()[0])
    have = {row[1] for row in db.execute("PRAGMA table_info(games)")}
    for step in range(version + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS.get(step, ()):
            column = statement.split("ADD COLUMN ")[1].split()[0] if "ADD COLUMN" in statement else None
            if column not in have:
                db.execute(statement)
    if version < SCHEMA_VERSION:
        db.execute("UPDATE meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION),))
        log.info("store migrated from schema version %d to %d", version, SCHEMA_VERSION)


def _connect_readonly(path: Path, busy_timeout_s: float, *, immutable: bool = False) -> sqlite3.Connection:
    """A read-only connection. ``immutable`` also skips locking and the WAL index, so that not even the -wal/-shm
    files SQLite makes beside a WAL-mode file appear; only for a quick look at a file no one has open."""
    query = "immutable=1" if immutable else "mode=ro"
    db = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True, timeout=busy_timeout_s,
                         isolation_level=None)
    db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    return db


WRITE_HINT = "judgewise will not write to it: name a new store file (--store, or store: in the run config)"
READ_HINT = "give a store file written by `judgewise judge`"


def check_store_file(path: Path, *, busy_timeout_s: float = 60.0, hint: str = READ_HINT) -> int | None:
    """The schema version of the judgewise store at ``path``, or None when the file is missing, empty or an
    empty SQLite database (a store may be made there). Raises :class:`InputError` naming the file when it
    is not SQLite, is a SQLite database of something else, or a store of a newer schema; writes nothing."""
    if path.exists() and not path.is_file() and not path.is_dir():  # a FIFO would block, a device is no file
        raise InputError(f"is a FIFO, device or socket, not a store file; {hint}", file=str(path))
    if not path.is_file():
        return None
    with path.open("rb") as fh:
        head = fh.read(len(SQLITE_HEADER))
    if not head:
        return None
    if head != SQLITE_HEADER:
        raise InputError(f"not a SQLite file, so not a judgewise store; {hint}", file=str(path))
    in_use = Path(f"{path}-wal").exists()  # a writer has it open (or died with it open): read through the WAL
    try:
        db = _connect_readonly(path, busy_timeout_s, immutable=not in_use)
        try:
            return _check_tables(db, path, hint)
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"unreadable SQLite file ({exc}), not a judgewise store; {hint}", file=str(path)) from None


def _check_tables(db: sqlite3.Connection, path: Path, hint: str = WRITE_HINT) -> int | None:
    """Schema version of an open store, None for an empty database; InputError for anything else."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return None
    if not STORE_TABLES <= tables:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise InputError(f"a SQLite database that is not a judgewise store (its tables: {shown}); {hint}",
                         file=str(path))
    row = db.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()
    return check_version(row[0] if row else None, str(path))


def check_version(version, where: str) -> int:
    """The stored ``schema_version`` as an int; InputError naming ``where`` when it is missing, not a number, or
    newer than this judgewise reads (the one check of both the SQLite and the PostgreSQL store)."""
    if not str(version).isdigit():
        raise InputError(f"a judgewise store without a valid schema version (found {version!r})", file=where)
    if int(version) > SCHEMA_VERSION:
        raise InputError(f"a judgewise store of schema version {version}, newer than this judgewise reads "
                         f"({SCHEMA_VERSION}); upgrade judgewise to use it", file=where)
    return int(version)


def _totals(df: pd.DataFrame) -> dict:
    return {
        "games": int(len(df)),
        "ok": int((df["status"] == "ok").sum()),
        "failed": int(failed_mask(df).sum()),
        "calls": int(df["n_calls"].sum()),
        "tokens_in": int(df["tokens_in"].sum()),
        "tokens_out": int(df["tokens_out"].sum()),
        "cost": round(float(df["cost"].sum()), 6),
    }


def store_stats(df: pd.DataFrame, *, path: str = "", in_flight: int = 0) -> dict:
    """The summary ``judgewise store stats`` prints, computed from a store frame."""
    games = df[~grade_mask(df)]  # a pointwise grade has one model (model_b is "")
    both_sides = pd.concat([df.assign(model=df["model_a"]), games.assign(model=games["model_b"])], ignore_index=True)
    return {
        "store": path,
        **_totals(df),
        "in_flight_claims": int(in_flight),
        "by_judge": {str(j): _totals(g) for j, g in df.groupby("judge")},
        "by_model": {str(m): _totals(g) for m, g in both_sides.groupby("model")},
        "failure_reasons": failure_reasons(df),
    }


def export_frame(df: pd.DataFrame, *, only_ok: bool = False) -> pd.DataFrame:
    """The canonical judgments table (io/tables.py) from a store frame, extra store columns kept.

    ``verdict`` is the 5-way verdict in model_a's view, ``judgment_id`` the store key; failed games keep
    ``outcome`` empty and their ``error`` unless ``only_ok``.
    """
    df = df[~grade_mask(df)]  # pointwise grades: export_grades
    if only_ok:
        df = df[~failed_mask(df)]
    out = df.rename(columns={"verdict5": "verdict", "key": "judgment_id"})
    head = ["prompt_id", "model_a", "model_b", "judge", "outcome", "verdict", "first", "raw", "error", "judgment_id"]
    out = out[head + [c for c in out.columns if c not in head]].reset_index(drop=True)
    out["swapped"] = out["swapped"].astype(bool)
    out["verdict"] = out["verdict"].astype("Int64")
    return out


def grade_mask(df: pd.DataFrame):
    """Rows of a store frame that are pointwise grades (``mode`` single), not games."""
    if "mode" not in df.columns:
        return pd.Series(False, index=df.index).to_numpy()
    return (df["mode"].astype("string") == POINTWISE).fillna(False).to_numpy(bool)


GRADE_HEAD = ["prompt_id", "model", "judge", "score", "label", "turn", "raw", "error", "judgment_id"]


def export_grades(df: pd.DataFrame, *, only_ok: bool = False) -> pd.DataFrame:
    """The pointwise grades of a store frame as a grades table: ``prompt_id, model, judge, score, label, turn``
    (``score`` the rating, empty for a failed grade or a ``not_attempted`` label), ``raw``, ``error``,
    ``judgment_id`` (the store key), then the other store columns (``status``, ``template``, tokens, cost...)."""
    df = df[grade_mask(df)]
    if only_ok:
        df = df[~failed_mask(df)]
    out = df.rename(columns={"model_a": "model", "key": "judgment_id"})
    out = out.drop(columns=["model_b", "first", "swapped", "verdict5", "outcome", "soft", "mode"])
    out = out[GRADE_HEAD + [c for c in out.columns if c not in GRADE_HEAD]].reset_index(drop=True)
    out["turn"] = out["turn"].astype("Int64")
    return out


def write_export(df: pd.DataFrame, out: str | os.PathLike) -> Path:
    """Write an exported judgments frame to ``.parquet`` or ``.jsonl`` (chosen by the file name).

    Written atomically (a temporary file beside it, then renamed), so a crash never leaves half a table.
    """
    out = Path(out)
    if out.suffix == ".parquet":
        with atomic_target(out) as partial:
            df.to_parquet(partial, index=False)
    elif out.suffix in (".jsonl", ".json"):
        write_text_atomic(out, "".join(json.dumps({k: plain_value(v) for k, v in rec.items()}, ensure_ascii=False) + "\n"
                                       for rec in df.to_dict(orient="records")))
    else:
        raise ConfigError(f"export file {out}: expected a name ending in .parquet or .jsonl, found '{out.suffix}'")
    return out


def plain_value(value):
    """A frame cell as JSON or a database driver takes it (numpy scalars as Python numbers, NaN/NA as None)."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value
