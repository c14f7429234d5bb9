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
import operator
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgewise.errors import ConfigError, InputError
from judgewise.io.atomic import atomic_target, write_text_atomic
from judgewise.io.csv_export import write_csv
from judgewise.io.schema import failed_mask, failure_reasons
from judgewise.store.labels import INSERT as LABEL_INSERT, SELECT as LABEL_SELECT, SQLITE_DDL as LABEL_DDL
from judgewise.store.labels import TABLE as LABEL_TABLE, HumanLabel, labels_frame
from judgewise.store.batches import batch_table_sql
from judgewise.store.storable import CallCost, storable
from judgewise.store.leases import LeasedSqliteStore, connect_writer, owner_id
from judgewise.store.sqlite import (SQLITE_HEADER, connect_readonly, file_head, shown_tables, table_names,
                                   writable_path)

log = logging.getLogger(__name__)

DEFAULT_STORE = "judgewise-store.sqlite"
SCHEMA_VERSION = 3  # 2: pointwise grades (mode, score, turn); 3: tokens_cached. An older store is migrated when
# written to (read as it is)
STORE_TABLES = {"games", "claims", "meta"}  # what makes a SQLite file a judgewise store

GAME_COLUMNS = (
    "key", "prompt_id", "model_a", "model_b", "first", "swapped", "judge", "template", "judge_identity",
    "status", "raw", "verdict5", "label", "outcome", "soft", "error",
    "tokens_in", "tokens_out", "latency_s", "cost", "n_calls", "created_at", "mode", "score", "turn",
    "tokens_cached",
)
POINTWISE = "single"  # ``mode`` of a pointwise grade row (model_b is "" and ``score`` the rating); games: "pairwise"
#: columns added after version 1 (name → its value in rows written before them), for migration and old stores read
ADDED_COLUMNS = {"mode": "pairwise", "score": None, "turn": None, "tokens_cached": 0}
#: schema version → its steps; written in SQL that SQLite and PostgreSQL both run (a PostgreSQL store is created at
#: the current version and takes only the steps after it)
MIGRATIONS = {2: ("ALTER TABLE games ADD COLUMN mode TEXT NOT NULL DEFAULT 'pairwise'",
                  "ALTER TABLE games ADD COLUMN score REAL", "ALTER TABLE games ADD COLUMN turn INTEGER"),
              3: ("ALTER TABLE games ADD COLUMN tokens_cached INTEGER NOT NULL DEFAULT 0",)}

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
    mode TEXT NOT NULL DEFAULT 'pairwise', score REAL, turn INTEGER,
    tokens_cached INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS games_by_status ON games (status);
CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (call TEXT PRIMARY KEY, game TEXT NOT NULL, answer TEXT NOT NULL,
                                    created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS answers_by_game ON answers (game);
""" + batch_table_sql("batches") + ";\n"

HISTORY_SQL = ("SELECT SUM(tokens_out) * 1.0 / SUM(n_calls), SUM(latency_s) / SUM(n_calls), COUNT(*) "
               "FROM games WHERE status = 'ok' AND judge_identity = %s AND n_calls > 0")

_UPSERT = (f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) VALUES ({', '.join('?' * len(GAME_COLUMNS))}) "
           "ON CONFLICT(key) DO UPDATE SET "
           + ", ".join(f"{c} = excluded.{c}" for c in GAME_COLUMNS if c != "key")
           + " WHERE games.status != 'ok'")  # a judged row is never overwritten
_game_values = operator.attrgetter(*GAME_COLUMNS)  # a record's row, in column order


@dataclass
class GameRecord(CallCost):
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
    mode: str = "pairwise"
    score: float | None = None  # pointwise grades: the rating
    turn: int | None = None  # multi-turn conversations: the turn graded (1-based)

    def values(self) -> tuple:
        return _game_values(self)


class JudgmentStore(LeasedSqliteStore):
    """A SQLite file of judge games. Use one instance per process (not thread-safe); close() when done."""

    RESULTS, CLAIMS, JOURNAL, META, SCHEMA = "games", "claims", "answers", "meta", _SCHEMA
    BATCHES = "batches"
    COLUMNS, ADDED, ORDER = GAME_COLUMNS, ADDED_COLUMNS, "created_at, key"

    def __init__(self, path: str | os.PathLike = DEFAULT_STORE, *, lease_s: float = 120.0,
                 busy_timeout_s: float = 60.0, durable: bool = False):
        self.path = writable_path(path, DEFAULT_STORE)
        new = check_store_file(self.path, busy_timeout_s=busy_timeout_s, hint=WRITE_HINT) is None
        self.lease_s, self.readonly = lease_s, False
        self.owner = owner_id()
        db = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = db = connect_writer(self.path, busy_timeout_s, durable=durable)
            self._make_schema(new)
        except (OSError, sqlite3.OperationalError) as exc:  # a read-only, immutable or full place
            if db is not None:
                db.close()
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
            self._create_tables()
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
        return cls._reader(path, connect_readonly(path, busy_timeout_s))

    @classmethod
    def open_for_planning(cls, path: str | os.PathLike, *, busy_timeout_s: float = 60.0) -> "JudgmentStore":
        """What a dry run reads: the store at ``path`` read-only when there is one, else an empty store in memory,
        so that planning never creates or changes a file. Refuses what the writer would refuse (a directory, a
        file that is not a judgewise store)."""
        path = writable_path(path, DEFAULT_STORE)
        if check_store_file(path, busy_timeout_s=busy_timeout_s, hint=WRITE_HINT) is not None:
            return cls.open_readonly(path, busy_timeout_s=busy_timeout_s)
        return cls.empty(path)

    # -- reads (statuses, frame, count, integrity_check: SqliteStore) ----------------------------------------
    def meta(self) -> dict[str, str]:
        """The store's ``meta`` table (schema version, run facts such as the design) as name → value."""
        return dict(self._db.execute("SELECT name, value FROM meta").fetchall())

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

    # -- claims (leases) ------------------------------------------------------------------------------
    # -- writes ---------------------------------------------------------------------------------------
    # ``record(rec)`` stores one finished game (a GameRecord) in its own transaction, ``record_soon(rec)`` with the
    # others finished in the same turn of the event loop (``LeasedSqliteStore``); both through these two:
    def _ready(self, rec: GameRecord) -> None:
        scrubbed(rec)

    UPSERT, JOURNAL_GAME = _UPSERT, "game"  # how a game's row is written (``LeasedSqliteStore._write_rows``)

    def absorb(self, games: pd.DataFrame, meta: dict[str, str], answers: list[tuple]) -> None:
        """Add another store's rows (``judgewise store copy``): games (a row already judged ok here is kept), run
        facts not set here (never the schema version), journaled answers."""
        rows = [tuple(plain_value(v) for v in r) for r in games[list(GAME_COLUMNS)].itertuples(index=False)]
        self._journal_empty = self._journal_table_empty = False
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

    # -- human labels (append-only; judgewise.store.labels) ----------------------------------------------
    def add_label(self, label: HumanLabel) -> None:
        """Append one human label, committed before this returns (the table made on the first one)."""
        row = label.values()
        with self._write():
            self._db.execute(LABEL_DDL)
            self._db.execute(LABEL_INSERT.replace("%s", "?"), row)

    def labels(self) -> pd.DataFrame:
        """Every human label row, in commit order (empty when the store has none)."""
        if LABEL_TABLE not in table_names(self._db):
            return labels_frame([])
        return labels_frame(self._db.execute(LABEL_SELECT).fetchall())

    # -- summaries ------------------------------------------------------------------------------------
    def stats(self) -> dict:
        """Counts ok/failed, tokens, cost and calls, overall and by judge and by model."""
        df = self.frame()
        out = store_stats(df, path=str(self.path), in_flight=self.claims())
        out["maybe_charged_timeouts"] = self.maybe_charged_timeouts()
        return out


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
    texts = "".join([v for v in values.values() if type(v) is str])  # a secret, NUL or surrogate in a text is in it
    texts_clean = storable(texts)[0] is texts  # the common case: one check for all the texts
    if texts_clean and _plain_numbers(values.values()):  # ... and one for all the numbers: nothing to change
        return rec
    notes = []
    for name, default in _defaults(rec.__class__):
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


_PLAIN = frozenset((str, int, float, bool, type(None)))


def _plain_numbers(values) -> bool:
    """True when every value is text, None, a bool, a 64-bit integer or a finite float: a quick check (in C) that
    :func:`storable_record`'s loop over the fields would change no number (False: the loop decides)."""
    if not _PLAIN.issuperset(map(type, values)):
        return False
    nums = [v for v in values if type(v) is int or type(v) is float]
    if not nums:
        return True
    try:
        total = sum(nums)  # a NaN or an infinity makes it one (so may a large finite float: the loop then decides)
    except OverflowError:  # an integer too large for a float
        return False
    return total - total == 0 and INT64[0] <= min(nums) and max(nums) <= INT64[1]


@functools.lru_cache(maxsize=None)
def _defaults(cls: type) -> tuple:
    """(field name, default or None) of a record dataclass, once per class, in the order of its row: its own fields,
    then the keyword-only :class:`~judgewise.store.storable.CallCost` ones."""
    fields = sorted(dataclasses.fields(cls), key=lambda f: f.kw_only is True)
    return tuple((f.name, None if f.default is dataclasses.MISSING else f.default) for f in fields)


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
    head = file_head(path)
    if not head:
        return None
    if head != SQLITE_HEADER:
        raise InputError(f"not a SQLite file, so not a judgewise store; {hint}", file=str(path))
    try:
        db = connect_readonly(path, busy_timeout_s)
        try:
            return _check_tables(db, path, hint)
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise InputError(f"unreadable SQLite file ({exc}), not a judgewise store; {hint}", file=str(path)) from None


def _check_tables(db: sqlite3.Connection, path: Path, hint: str = WRITE_HINT) -> int | None:
    """Schema version of an open store, None for an empty database; InputError for anything else."""
    tables = table_names(db)
    if not tables:
        return None
    if not STORE_TABLES <= tables:
        raise InputError(f"a SQLite database that is not a judgewise store (its tables: {shown_tables(tables)}); "
                         f"{hint}", file=str(path))
    return check_version(stored_version(db, "meta"), str(path))


def stored_version(db: sqlite3.Connection, meta: str) -> str | None:
    """The ``schema_version`` row of the table ``meta`` of an open SQLite store, None when there is none."""
    row = db.execute(f"SELECT value FROM {meta} WHERE name = 'schema_version'").fetchone()
    return row[0] if row else None


def check_version(version, where: str, *, latest: int | None = None, what: str = "a judgewise store") -> int:
    """The stored ``schema_version`` as an int; InputError naming ``where`` when it is missing, not a number, or
    newer than ``latest`` (default :data:`SCHEMA_VERSION`): the one check of every store, SQLite and PostgreSQL
    judgments, and (``what`` "generation tables") the generation store's."""
    latest = SCHEMA_VERSION if latest is None else latest
    if not str(version).isdigit():
        raise InputError(f"{what} without a valid schema version (found {version!r})", file=where)
    if int(version) > latest:
        raise InputError(f"{what} of schema version {version}, newer than this judgewise reads "
                         f"({latest}); upgrade judgewise to use it", file=where)
    return int(version)


def _totals(df: pd.DataFrame) -> dict:
    return {
        "games": int(len(df)),
        "ok": int((df["status"] == "ok").sum()),
        "failed": int(failed_mask(df).sum()),
        "calls": int(df["n_calls"].sum()),
        "tokens_in": int(df["tokens_in"].sum()),
        "tokens_out": int(df["tokens_out"].sum()),
        "tokens_cached": int(df["tokens_cached"].sum()) if "tokens_cached" in df else 0,
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
    """Write an exported frame to ``.parquet``, ``.jsonl`` or ``.csv`` (chosen by the file name; a CSV's text cells
    neutralised for spreadsheets, :func:`judgewise.io.csv_export.write_csv`).

    Written atomically (a temporary file beside it, then renamed), so a crash never leaves half a table.
    """
    out = Path(out)
    if out.suffix == ".parquet":
        with atomic_target(out) as partial:
            df.to_parquet(partial, index=False)
    elif out.suffix == ".csv":
        write_csv(df, out)  # text a spreadsheet would run as a formula is neutralised
    elif out.suffix in (".jsonl", ".json"):
        write_text_atomic(out, "".join(json.dumps({k: plain_value(v) for k, v in rec.items()}, ensure_ascii=False) + "\n"
                                       for rec in df.to_dict(orient="records")))
    else:
        raise ConfigError(f"export file {out}: expected a name ending in .parquet, .jsonl or .csv, found '{out.suffix}'")
    return out


def plain_value(value):
    """A frame cell as JSON or a database driver takes it (numpy scalars as Python numbers, NaN/NA as None)."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value
