"""Durable SQLite store of judge calls: one row per game, committed as it arrives, shared by processes.

One row per *game* (a comparison shown in one order), keyed by a content hash of the judge's identity
(backend, model, sampling parameters, template name@version), the prompt, both responses and the order.
Rerunning a job finds every finished key and makes no call; a run killed with ``kill -9`` loses at most
the calls that were in flight. Several processes may share one file: WAL journal, ``busy_timeout``,
``BEGIN IMMEDIATE`` transactions, and a *claim* (lease) row per key in flight so a second process skips
keys another is paying for. A claim expires after its lease, or at once when its owner process (same
host) is dead, so a crashed run never blocks its restart.

Verdict columns are stored in the canonical ``model_a`` view (``outcome``, ``verdict5``, ``soft``);
``label`` is the literal verdict token as the judge wrote it (shown-first view), ``first`` the model
shown first. Secrets never reach this file: identities are secret-free by contract and error texts
are scrubbed by the backend that produced them.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pandas as pd

from judgewise.errors import ConfigError
from judgewise.io.atomic import atomic_target, write_text_atomic

DEFAULT_STORE = "judgewise-store.sqlite"
SCHEMA_VERSION = 1

GAME_COLUMNS = (
    "key", "prompt_id", "model_a", "model_b", "first", "swapped", "judge", "template", "judge_identity",
    "status", "raw", "verdict5", "label", "outcome", "soft", "error",
    "tokens_in", "tokens_out", "latency_s", "cost", "n_calls", "created_at",
)

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
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS games_by_status ON games (status);
CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

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

    def values(self) -> tuple:
        return tuple(getattr(self, c) for c in GAME_COLUMNS)


def _owner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _owner_is_dead(owner: str) -> bool:
    """True when ``owner`` names a process on this host that no longer runs (or is a zombie)."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state in ("Z", "X")


class JudgmentStore:
    """A SQLite file of judge games. Use one instance per process (not thread-safe); close() when done."""

    def __init__(self, path: str | os.PathLike = DEFAULT_STORE, *, lease_s: float = 120.0,
                 busy_timeout_s: float = 60.0, durable: bool = False):
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigError(f"store path {self.path} is a directory; name a file, e.g. {self.path / DEFAULT_STORE}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lease_s = lease_s
        self.owner = _owner_id()
        self._db = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None)
        self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        self._db.execute("PRAGMA journal_mode = WAL")
        # WAL + NORMAL survives a killed process (only an OS crash/power loss can drop the last commits).
        self._db.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
        with self._write():
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self._db.execute(statement)
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    # -- transactions -------------------------------------------------------------------------------
    def _write(self):
        """Context manager: one ``BEGIN IMMEDIATE`` transaction (takes the write lock up front)."""
        return _Immediate(self._db)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "JudgmentStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reads ----------------------------------------------------------------------------------------
    def statuses(self, keys: Iterable[str]) -> dict[str, str]:
        """key → "ok"/"failed" for the keys already stored (absent keys are not in the result)."""
        out: dict[str, str] = {}
        keys = list(keys)
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            rows = self._db.execute(f"SELECT key, status FROM games WHERE key IN ({','.join('?' * len(chunk))})",
                                    chunk).fetchall()
            out.update(rows)
        return out

    def frame(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The stored games (all, or those with ``keys``) as a DataFrame with the store's columns."""
        cols = ", ".join(GAME_COLUMNS)
        if keys is None:
            return pd.read_sql_query(f"SELECT {cols} FROM games ORDER BY created_at, key", self._db)
        keys = list(keys)
        parts = [pd.read_sql_query(f"SELECT {cols} FROM games WHERE key IN ({','.join('?' * len(keys[i:i + 500]))})",
                                   self._db, params=keys[i:i + 500]) for i in range(0, len(keys), 500)]
        parts = [p for p in parts if len(p)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(GAME_COLUMNS))

    def count(self, status: str | None = None) -> int:
        if status is None:
            return self._db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM games WHERE status = ?", (status,)).fetchone()[0]

    def integrity_check(self) -> str:
        return self._db.execute("PRAGMA integrity_check").fetchone()[0]

    # -- claims (leases) ------------------------------------------------------------------------------
    def claim(self, key: str, *, retry_failed: bool = False) -> str:
        """Try to take ``key`` for judging. Returns "claimed", "done" (already stored; "failed" rows count
        as done unless ``retry_failed``) or "busy" (another live process holds an unexpired claim)."""
        now = time.time()
        with self._write():
            row = self._db.execute("SELECT status FROM games WHERE key = ?", (key,)).fetchone()
            if row and (row[0] == "ok" or not retry_failed):
                return "done"
            held = self._db.execute("SELECT owner, expires FROM claims WHERE key = ?", (key,)).fetchone()
            if held and held[0] != self.owner and held[1] > now and not _owner_is_dead(held[0]):
                return "busy"
            self._db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?)", (key, self.owner, now + self.lease_s))
            return "claimed"

    def renew_claims(self) -> int:
        """Extend the lease of every claim this instance holds; returns how many."""
        with self._write():
            cur = self._db.execute("UPDATE claims SET expires = ? WHERE owner = ?",
                                   (time.time() + self.lease_s, self.owner))
            return cur.rowcount

    def release(self, key: str) -> None:
        """Give up a claim without storing a result (e.g. the run stopped before judging it)."""
        with self._write():
            self._db.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self.owner))

    # -- writes ---------------------------------------------------------------------------------------
    def record(self, rec: GameRecord) -> None:
        """Store one finished game and drop its claim, in one committed transaction. An "ok" row already
        stored is never overwritten (a failed one is, when the key was retried)."""
        rec.created_at = rec.created_at or time.time()
        with self._write():
            self._db.execute(_UPSERT, rec.values())
            self._db.execute("DELETE FROM claims WHERE key = ?", (rec.key,))

    # -- summaries ------------------------------------------------------------------------------------
    def stats(self) -> dict:
        """Counts ok/failed, tokens, cost and calls, overall and by judge and by model."""
        df = self.frame()
        return store_stats(df, path=str(self.path),
                           in_flight=self._db.execute("SELECT COUNT(*) FROM claims").fetchone()[0])


class _Immediate:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type, *_):
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def _totals(df: pd.DataFrame) -> dict:
    return {
        "games": int(len(df)),
        "ok": int((df["status"] == "ok").sum()),
        "failed": int((df["status"] == "failed").sum()),
        "calls": int(df["n_calls"].sum()),
        "tokens_in": int(df["tokens_in"].sum()),
        "tokens_out": int(df["tokens_out"].sum()),
        "cost": round(float(df["cost"].sum()), 6),
    }


def store_stats(df: pd.DataFrame, *, path: str = "", in_flight: int = 0) -> dict:
    """The summary ``judgewise store stats`` prints, computed from a store frame."""
    both_sides = pd.concat([df.assign(model=df["model_a"]), df.assign(model=df["model_b"])], ignore_index=True)
    failed = df[df["status"] == "failed"]
    return {
        "store": path,
        **_totals(df),
        "in_flight_claims": int(in_flight),
        "by_judge": {str(j): _totals(g) for j, g in df.groupby("judge")},
        "by_model": {str(m): _totals(g) for m, g in both_sides.groupby("model")},
        "failure_reasons": {str(k): int(v) for k, v in
                            failed["error"].fillna("").str.slice(0, 80).value_counts().head(10).items()},
    }


def export_frame(df: pd.DataFrame, *, only_ok: bool = False) -> pd.DataFrame:
    """The canonical judgments table (io/tables.py) from a store frame, extra store columns kept.

    ``verdict`` is the 5-way verdict in model_a's view, ``judgment_id`` the store key; failed games keep
    ``outcome`` empty and their ``error`` unless ``only_ok``.
    """
    if only_ok:
        df = df[df["status"] == "ok"]
    out = df.rename(columns={"verdict5": "verdict", "key": "judgment_id"})
    head = ["prompt_id", "model_a", "model_b", "judge", "outcome", "verdict", "first", "raw", "error", "judgment_id"]
    out = out[head + [c for c in out.columns if c not in head]].reset_index(drop=True)
    out["swapped"] = out["swapped"].astype(bool)
    out["verdict"] = out["verdict"].astype("Int64")
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
        write_text_atomic(out, "".join(json.dumps({k: _plain(v) for k, v in rec.items()}, ensure_ascii=False) + "\n"
                                       for rec in df.to_dict(orient="records")))
    else:
        raise ConfigError(f"export file {out}: expected a name ending in .parquet or .jsonl, found '{out.suffix}'")
    return out


def _plain(value):
    if value is pd.NA or (isinstance(value, float) and value != value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value
