"""Shared PostgreSQL store of judge calls: the SQLite store's rows and guarantees, for workers on many machines.

:class:`PgJudgmentStore` has the methods of :class:`~judgewise.store.judgments.JudgmentStore` (one row per game,
keyed by the same content hash; claims with leases; the answer journal; an "ok" row never overwritten), so the
runner, ``rank``, ``report``, ``serve`` and ``store export|stats`` read either. Its tables live in the PostgreSQL
schema ``judgewise`` of the database the URL names (``postgresql://user@host:5432/db``; put a password in
``PGPASSWORD`` or ``~/.pgpass`` rather than in the URL — it is masked wherever the URL is shown).

What PostgreSQL adds: the *queue* of worker mode. Each worker of a job (``judgewise judge --worker``) puts the
job's game keys in ``queue`` (idempotent), then takes batches with ``SELECT … FOR UPDATE SKIP LOCKED`` — workers
never wait on each other's rows nor take the same game — and a claim row (a lease on the server's clock, renewed
by the owner's heartbeat) per game taken. A worker that dies stops renewing: its leases expire and the games go
to the others (at once when the dead process was on the same host). Storing a game drops its claim, its journaled
answers and its queue rows in one transaction; a game taken by two workers anyway (a lease that expired under a
live worker) is still stored once.

Connections come from a pool (psycopg_pool); a lost connection (server restart, network drop) is retried with
backoff for ``reconnect_s`` before :class:`~judgewise.errors.StoreUnavailable`. Every operation is idempotent, so
a retry after a commit whose answer was lost does no harm. Schema versions are the SQLite store's
(``store.SCHEMA_VERSION``, ``store.MIGRATIONS``); a store of a newer version is refused with a clear error.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import time
from typing import Callable, Iterable

import pandas as pd

from judgewise.errors import ConfigError, InputError, StoreUnavailable
from judgewise.redaction import scrub
from judgewise.store.batches import (ADDED_LEDGER_COLUMNS, BATCH_COLUMNS, BATCH_STATES, batch_row, batch_table_sql,
                                     journal_rows, lease_gone, ledger_values, rows_to_absorb, writer_conflict,
                                     writer_key)
from judgewise.store.judgments import (GAME_COLUMNS, HISTORY_SQL, MIGRATIONS, SCHEMA_VERSION, STORE_TABLES, GameRecord,
                                    JudgmentStore, check_version, plain_value, scrubbed, store_stats)
from judgewise.store.labels import INSERT as LABEL_INSERT, PG_DDL as LABEL_DDL, SELECT as LABEL_SELECT
from judgewise.store.labels import TABLE as LABEL_TABLE, HumanLabel, labels_frame
from judgewise.store.leases import owner_id, owner_is_dead
from judgewise.store.storable import journal_json
from judgewise.store.urls import libpq_url, masked
from judgewise.store.protocol import JudgmentStoreLike

log = logging.getLogger(__name__)

PG_SCHEMA = "judgewise"  # the PostgreSQL schema (namespace) holding a store's tables
_LOCK = 0x6A756467  # pg_advisory_xact_lock key serialising the creation and migration of the tables
_WRITERS = _LOCK + 1  # the same, serialising the taking of writer leases (judgewise.store.batches.writer_conflict)
NOW = "EXTRACT(EPOCH FROM clock_timestamp())"  # leases run on the server's clock, not on the workers'
NUMERIC = ("swapped", "verdict5", "outcome", "soft", "tokens_in", "tokens_out", "latency_s", "cost", "n_calls",
           "created_at", "score", "turn", "tokens_cached")

BATCH_TABLE = batch_table_sql("{s}.batches", "DOUBLE PRECISION")  # also made in a store of before it (no version)
_TABLES = (
    """CREATE TABLE {s}.games (
        key TEXT PRIMARY KEY, prompt_id TEXT NOT NULL, model_a TEXT NOT NULL, model_b TEXT NOT NULL,
        first TEXT NOT NULL, swapped INTEGER NOT NULL, judge TEXT NOT NULL, template TEXT,
        judge_identity TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        raw TEXT, verdict5 INTEGER, label TEXT, outcome DOUBLE PRECISION, soft DOUBLE PRECISION, error TEXT,
        tokens_in BIGINT NOT NULL DEFAULT 0, tokens_out BIGINT NOT NULL DEFAULT 0,
        latency_s DOUBLE PRECISION NOT NULL DEFAULT 0, cost DOUBLE PRECISION NOT NULL DEFAULT 0,
        n_calls INTEGER NOT NULL DEFAULT 0, created_at DOUBLE PRECISION NOT NULL,
        mode TEXT NOT NULL DEFAULT 'pairwise', score DOUBLE PRECISION, turn INTEGER,
        tokens_cached BIGINT NOT NULL DEFAULT 0)""",
    "CREATE INDEX games_by_status ON {s}.games (status)",
    "CREATE TABLE {s}.claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX claims_by_owner ON {s}.claims (owner)",
    "CREATE TABLE {s}.meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE {s}.answers (call TEXT PRIMARY KEY, game TEXT NOT NULL, answer TEXT NOT NULL,
                                 created_at DOUBLE PRECISION NOT NULL)""",
    "CREATE INDEX answers_by_game ON {s}.answers (game)",
    "CREATE TABLE {s}.queue (job TEXT NOT NULL, key TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (job, key))",
    "CREATE INDEX queue_by_key ON {s}.queue (key)",
    "CREATE INDEX queue_by_seq ON {s}.queue (job, seq)",
    BATCH_TABLE,
)

_UPSERT = (f"INSERT INTO games AS g ({', '.join(GAME_COLUMNS)}) VALUES ({', '.join(['%s'] * len(GAME_COLUMNS))}) "
           "ON CONFLICT (key) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in GAME_COLUMNS if c != "key")
           + " WHERE g.status <> 'ok'")  # a judged row is never overwritten

_TAKE = f"""INSERT INTO claims AS c (key, owner, expires) VALUES (%(key)s, %(me)s, {NOW} + %(lease)s)
    ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires = excluded.expires
    WHERE c.expires <= {NOW} OR c.owner = excluded.owner RETURNING c.key"""

# One batch of a job's queue: rows no other live owner holds, locked without waiting (SKIP LOCKED) so workers
# never queue behind each other; claimed in key order (no lock cycle between two batches sharing keys).
_TAKE_BATCH = f"""WITH picked AS (
        SELECT q.key FROM queue q
        WHERE q.job = %(job)s AND NOT (q.key = ANY(%(exclude)s))
          AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.key = q.key AND c.expires > {NOW} AND c.owner <> %(me)s)
        ORDER BY q.seq LIMIT %(n)s
        FOR UPDATE OF q SKIP LOCKED)
    INSERT INTO claims AS c (key, owner, expires)
    SELECT key, %(me)s, {NOW} + %(lease)s FROM picked ORDER BY key
    ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires = excluded.expires
    WHERE c.expires <= {NOW} OR c.owner = excluded.owner
    RETURNING c.key"""


def _driver():
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise ConfigError("a postgresql:// store needs the PostgreSQL driver: pip install 'judgewise[postgres]'") \
            from None
    return psycopg, psycopg_pool


class PgJudgmentStore:
    """A judgment store in a PostgreSQL database, shared by processes on any number of machines (thread-safe:
    every operation takes a pooled connection). Same methods as :class:`JudgmentStore`, plus worker mode's
    :meth:`enqueue`, :meth:`claim_batch`, :meth:`queued` and :meth:`expire_dead_claims`."""

    threadsafe = True  # the runner calls it from worker threads (``scheduler.off_loop``)

    def __init__(self, url: str, *, lease_s: float = 120.0, reconnect_s: float = 60.0, pool_size: int = 6,
                 readonly: bool = False, _must_exist: bool = False):
        self.url, self.path, self.lease_s, self.reconnect_s = url, masked(url), float(lease_s), float(reconnect_s)
        self.readonly, self.owner = readonly, owner_id()
        self._pool = _open_pool(url, self.path, pool_size, readonly)
        try:
            if readonly:
                version = self._run("read the store", _stored_version_of(self.path))
                if version is None and _must_exist:
                    raise InputError(f"no judgewise store in this database (schema {PG_SCHEMA} has no tables); "
                                     "give the URL of a store `judgewise judge` wrote", file=self.path)
                self.exists = version is not None
            else:
                self._run("create the store", _create_or_migrate(self.path))
                self.exists = True
        except BaseException:
            self._pool.close()
            raise

    @classmethod
    def open_readonly(cls, url: str, **kw) -> "PgJudgmentStore":
        """Open an existing store for reading only (every transaction read-only): export, stats, reports.
        :class:`InputError` naming the URL when the database holds no judgewise store."""
        return cls(url, readonly=True, _must_exist=True, **kw)

    @classmethod
    def open_for_planning(cls, url: str, **kw) -> JudgmentStoreLike:
        """What a dry run reads: the store read-only when the database has one, else an empty store in memory
        (planning creates nothing)."""
        store = cls(url, readonly=True, **kw)
        if store.exists:
            return store
        store.close()
        return JudgmentStore.empty(masked(url))

    # -- plumbing -------------------------------------------------------------------------------------
    def _run(self, what: str, fn: Callable, *, retry: bool = True):
        """``fn(connection)`` in one transaction; a lost connection is retried with backoff for ``reconnect_s``
        (every operation is idempotent), then :class:`StoreUnavailable`."""
        psycopg, _ = _driver()
        deadline, delay = None, 0.05
        while True:
            try:
                with self._pool.connection() as conn, conn.transaction():
                    return fn(conn)
            except psycopg.OperationalError as exc:
                text, now = scrub(" ".join(str(exc).split()))[:200], time.monotonic()
                if not retry or (deadline is not None and now >= deadline):
                    waited = f" for {self.reconnect_s:g}s" if retry else ""
                    raise StoreUnavailable(f"store {self.path}: could not {what}: the database did not answer{waited} "
                                           f"({text}); everything stored is kept — rerun when it is back") from None
                if deadline is None:
                    deadline = now + self.reconnect_s
                    log.warning("store %s: could not %s (%s); retrying for up to %gs", self.path, what, text,
                                self.reconnect_s)
                time.sleep(delay)
                delay = min(2 * delay, 1.0)

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> "PgJudgmentStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reads ----------------------------------------------------------------------------------------
    def statuses(self, keys: Iterable[str]) -> dict[str, str]:
        """key → "ok"/"failed" for the keys already stored (absent keys are not in the result)."""
        keys = list(keys)
        return dict(self._run("read statuses", lambda c: c.execute(
            "SELECT key, status FROM games WHERE key = ANY(%s)", (keys,)).fetchall()))

    def frame(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The stored games (all, or those with ``keys``) as a DataFrame with the store's columns."""
        cols = ", ".join(GAME_COLUMNS)
        if keys is None:
            rows = self._run("read games", lambda c: c.execute(
                f"SELECT {cols} FROM games ORDER BY created_at, key").fetchall())
        else:
            keys = list(keys)
            rows = self._run("read games", lambda c: c.execute(
                f"SELECT {cols} FROM games WHERE key = ANY(%s)", (keys,)).fetchall())
        return _frame(rows)

    def meta(self) -> dict[str, str]:
        """The store's ``meta`` table (schema version, run facts) as name → value."""
        return dict(self._run("read meta", lambda c: c.execute("SELECT name, value FROM meta").fetchall()))

    def count(self, status: str | None = None) -> int:
        sql, args = ("SELECT COUNT(*) FROM games", ()) if status is None else \
            ("SELECT COUNT(*) FROM games WHERE status = %s", (status,))
        return self._run("count games", lambda c: c.execute(sql, args).fetchone()[0])

    def modes(self) -> dict:
        """How many stored rows there are of each ``mode`` (pairwise games, pointwise grades)."""
        return dict(self._run("count modes", lambda c: c.execute(
            "SELECT mode, COUNT(*) FROM games GROUP BY mode").fetchall()))

    def judge_history(self, identity_json: str) -> tuple[float, float, int] | None:
        """Mean (tokens_out, latency_s) per call of the judge's earlier successful games, and their number."""
        row = self._run("read history", lambda c: c.execute(HISTORY_SQL, (identity_json,)).fetchone())
        return (row[0], row[1], row[2]) if row and row[2] else None

    def integrity_check(self) -> str:
        """"ok" when every table is readable (PostgreSQL checks its own pages)."""
        self._run("check the store", lambda c: [c.execute(f"SELECT COUNT(*) FROM {t}") for t in sorted(STORE_TABLES)])
        return "ok"

    def answer_rows(self) -> list[tuple]:
        """The answer journal: (call, game, answer, created_at) rows (``store copy`` moves them)."""
        return self._run("read answers", lambda c: c.execute(
            "SELECT call, game, answer, created_at FROM answers ORDER BY created_at").fetchall())

    # -- claims (leases) ------------------------------------------------------------------------------
    def claim(self, key: str, *, retry_failed: bool = False) -> str:
        """Try to take ``key`` for judging: "claimed", "done" (stored; "failed" rows count as done unless
        ``retry_failed``) or "busy" (another live process holds an unexpired claim)."""
        def take(c) -> str:
            args = {"key": key, "me": self.owner, "lease": self.lease_s}
            if c.execute(_TAKE, args).fetchone() is None:  # a live claim: taken over only from a dead process
                held = c.execute("SELECT owner FROM claims WHERE key = %s", (key,)).fetchone()
                if held is not None and owner_is_dead(held[0]):
                    if not c.execute(f"UPDATE claims SET owner = %(me)s, expires = {NOW} + %(lease)s "
                                     "WHERE key = %(key)s AND owner = %(dead)s", {**args, "dead": held[0]}).rowcount:
                        return "busy"
                elif c.execute(_TAKE, args).fetchone() is None:  # (or released meanwhile: take it now)
                    return "busy"
            return "done" if self._drop_done(c, [key], retry_failed) else "claimed"
        return self._run("claim a game", take)

    def claim_many(self, keys: list[str], *, retry_failed: bool = False) -> list[str]:
        """:meth:`claim` for each of ``keys``, in order (each in its own transaction, as the SQLite store's one
        transaction would not save a round trip here)."""
        return [self.claim(key, retry_failed=retry_failed) for key in keys]

    def background_checkpoints(self):
        """Nothing to do (the SQLite store checkpoints its WAL in a thread during a run): a no-op block."""
        return contextlib.nullcontext()

    def _drop_done(self, c, keys: list[str], retry_failed: bool) -> set[str]:
        """Of keys just claimed, those already stored (read after the claim, so a game stored meanwhile is seen):
        their claims and queue rows are dropped."""
        done = {k for k, status in c.execute("SELECT key, status FROM games WHERE key = ANY(%s)", (keys,))
                if status == "ok" or not retry_failed}
        if done:
            c.execute("DELETE FROM claims WHERE key = ANY(%s) AND owner = %s", (list(done), self.owner))
            c.execute("DELETE FROM queue WHERE key = ANY(%s)", (list(done),))
        return done

    def take_writer(self, mode: str) -> tuple[str, str] | None:
        """Take this run's writer lease unless another live process's keeps it out (then that lease, nothing
        taken); as the SQLite store's (:meth:`~judgewise.store.leases.LeasedSqliteStore.take_writer`)."""
        def take(c):
            c.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITERS,))
            now = c.execute(f"SELECT {NOW}").fetchone()[0]
            held = c.execute("SELECT key, owner, expires FROM claims WHERE key LIKE 'writer:%%'").fetchall()
            conflict = writer_conflict(mode, self.owner, held, float(now), owner_is_dead)
            _drop_leases(c, held, lambda owner, expires: lease_gone(owner, expires, float(now), owner_is_dead))
            if conflict is None:
                c.execute("INSERT INTO claims VALUES (%s, %s, %s) ON CONFLICT (key) DO UPDATE SET owner = "
                          "excluded.owner, expires = excluded.expires",
                          (writer_key(mode, self.owner), self.owner, float(now) + self.lease_s))
            return conflict
        return self._run("take the store's writer lease", take)

    def release_writer(self) -> None:
        """Give back the writer lease this instance holds, and those of runs killed meanwhile (best effort:
        else it expires)."""
        def give_back(c) -> None:
            now = float(c.execute(f"SELECT {NOW}").fetchone()[0])
            held = c.execute("SELECT key, owner, expires FROM claims WHERE key LIKE 'writer:%%'").fetchall()
            _drop_leases(c, held, lambda owner, expires: owner == self.owner or lease_gone(owner, expires, now,
                                                                                             owner_is_dead))
        try:
            self._run("give back the writer lease", give_back, retry=False)
        except StoreUnavailable as exc:
            log.debug("writer lease left to expire: %s", exc)

    def renew_claims(self) -> int:
        """Extend the lease of every claim this instance holds; returns how many."""
        return self._run("renew claims", lambda c: c.execute(
            f"UPDATE claims SET expires = {NOW} + %s WHERE owner = %s", (self.lease_s, self.owner)).rowcount)

    def release(self, key: str) -> None:
        """Give up a claim without storing a result (the game stays in its job's queue for another worker). Best
        effort, never retried: a run that stops while the database is away leaves the claim to expire."""
        try:
            self._run("release a claim", lambda c: c.execute(
                "DELETE FROM claims WHERE key = %s AND owner = %s", (key, self.owner)), retry=False)
        except StoreUnavailable as exc:
            log.debug("claim on %s left to expire: %s", key[:12], exc)

    def expire_dead_claims(self) -> int:
        """End at once the live claims of processes on this host that are gone (killed, crashed); returns how many
        owners. Claims of other hosts end when their lease runs out."""
        def expire(c) -> int:
            owners = [r[0] for r in c.execute(f"SELECT DISTINCT owner FROM claims WHERE expires > {NOW} "
                                              "AND owner LIKE %s", (f"{socket.gethostname()}:%",))]
            dead = [o for o in owners if o != self.owner and owner_is_dead(o)]
            if dead:
                c.execute("UPDATE claims SET expires = 0 WHERE owner = ANY(%s)", (dead,))
            return len(dead)
        return self._run("expire dead claims", expire)

    # -- the shared queue (worker mode) -----------------------------------------------------------------
    def enqueue(self, job: str, keys: list[str]) -> None:
        """Put a job's game keys in the queue, in order (idempotent: every worker of the job does it)."""
        self._run("queue the job", lambda c: c.execute(
            "INSERT INTO queue (job, key, seq) SELECT %s, k, i FROM unnest(%s::text[]) WITH ORDINALITY AS t(k, i) "
            "ON CONFLICT DO NOTHING", (job, list(keys))))

    def claim_batch(self, job: str, n: int, *, retry_failed: bool = False, exclude: Iterable[str] = ()) -> list[str]:
        """Claim up to ``n`` games of the job's queue that no other live owner holds (``SELECT … FOR UPDATE SKIP
        LOCKED``); games already stored are dropped from the queue, not returned. ``exclude``: keys the caller is
        judging now (its own claims that a retried batch must not hand out twice)."""
        args = {"job": job, "n": int(n), "me": self.owner, "lease": self.lease_s, "exclude": list(exclude)}

        def take(c) -> list[str]:
            got = [r[0] for r in c.execute(_TAKE_BATCH, args)]
            done = self._drop_done(c, got, retry_failed) if got else set()
            return [k for k in got if k not in done]
        return self._run("claim games", take)

    def queued(self, job: str) -> int:
        """Games of the job not stored yet (in flight included)."""
        return self._run("count the queue", lambda c: c.execute(
            "SELECT COUNT(*) FROM queue WHERE job = %s", (job,)).fetchone()[0])

    # -- writes ---------------------------------------------------------------------------------------
    def record(self, rec: GameRecord) -> None:
        """Store one finished game, drop its queue rows, claim and journaled answers, in one transaction. An
        "ok" row already stored is never overwritten (a failed one is, when the key was retried)."""
        values = tuple(_param(v) for v in scrubbed(rec).values())

        def write(c) -> None:  # queue rows first: the lock order of claim_batch (queue, then claims)
            c.execute("DELETE FROM queue WHERE key = %s", (rec.key,))
            c.execute(_UPSERT, values)
            c.execute("DELETE FROM claims WHERE key = %s", (rec.key,))
            c.execute("DELETE FROM answers WHERE game = %s", (rec.key,))
        psycopg, _ = _driver()
        try:
            self._run("store a game", write)
        except psycopg.DataError as exc:  # a value the database refuses: the runner stores the game as failed
            raise ValueError(scrub(" ".join(str(exc).split()))[:300]) from None

    def absorb(self, games: pd.DataFrame, meta: dict[str, str], answers: list[tuple]) -> None:
        """Add another store's rows (``judgewise store copy``): games (a row already judged ok here is kept), run
        facts not set here (never the schema version), journaled answers."""
        rows = [tuple(_param(v) for v in r) for r in games[list(GAME_COLUMNS)].itertuples(index=False)]
        facts = [(k, str(v)) for k, v in meta.items() if k != "schema_version"]

        def write(c) -> None:
            with c.cursor() as cur:
                cur.executemany(_UPSERT, rows)
                cur.executemany("INSERT INTO meta VALUES (%s, %s) ON CONFLICT DO NOTHING", facts)
                cur.executemany("INSERT INTO answers VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING", answers)
        self._run("copy rows in", write)

    # -- the answer journal (scheduler.AnswerJournal) ---------------------------------------------------
    def held_answer(self, call_key: str) -> dict | None:
        """A completion received earlier for this call (its game not stored yet), or None."""
        row = self._run("read the answer journal", lambda c: c.execute(
            "SELECT answer FROM answers WHERE call = %s", (call_key,)).fetchone())
        return json.loads(row[0]) if row else None

    def hold_answer(self, game_key: str, call_key: str, answer: dict) -> None:
        """Commit a completion just received, before anything else is done with it."""
        text = journal_json(answer)
        try:
            self._run("journal an answer", lambda c: c.execute(
                "INSERT INTO answers VALUES (%s, %s, %s, %s) ON CONFLICT (call) DO UPDATE SET answer = "
                "excluded.answer", (call_key, game_key, text, time.time())))
        except StoreUnavailable as exc:  # the answer is still in memory and stored with its game
            log.warning("could not journal an answer received (%s); it is stored with its game when that ends", exc)

    def note_maybe_charged(self) -> None:
        """Count, durably, one call that timed out after being sent (the server may have billed it)."""
        try:
            self._run("count a timed-out call", lambda c: c.execute(
                "INSERT INTO meta VALUES ('maybe_charged_timeouts', '1') ON CONFLICT (name) "
                "DO UPDATE SET value = (CAST(meta.value AS INTEGER) + 1)::text"), retry=False)
        except StoreUnavailable as exc:
            log.warning("could not count a call that timed out after sending (%s)", exc)

    # -- the batch ledger (store.batches) ----------------------------------------------------------------
    def batch_intent(self, local_id: str, calls: dict[str, str]) -> None:
        """Record a batch about to be submitted: its ``calls`` (call key → game key), state ``intent``."""
        now = time.time()
        self._run("record a batch", lambda c: c.execute(
            "INSERT INTO batches (local_id, state, calls, created_at, updated_at) VALUES (%s, 'intent', %s, %s, %s)",
            (local_id, json.dumps(calls), now, now)))

    def batch_uploaded(self, local_id: str, file_id: str) -> None:
        """The batch's input file is uploaded as ``file_id`` (state still ``intent``), before it is created."""
        self._run("record a batch", lambda c: c.execute(
            "UPDATE batches SET input_file_id = %s, updated_at = %s WHERE local_id = %s",
            (file_id, time.time(), local_id)))

    def batch_submitted(self, local_id: str, batch_id: str) -> None:
        """The provider created the batch ``batch_id``: state ``submitted``."""
        self._run("record a batch", lambda c: _set_batch(c, local_id, "submitted", batch_id=batch_id))

    def batch_dropped(self, local_id: str, reason: str) -> None:
        """An ``intent`` the provider never created: state ``dropped`` (its calls were never sent)."""
        self._run("record a batch", lambda c: _set_batch(c, local_id, "dropped", outcome=reason))

    def batch_ended(self, local_id: str, outcome: str, counts: dict[str, int],
                    answers: list[tuple[str, str, dict]]) -> None:
        """The batch's ``answers`` journaled and the batch ``ended``, in one transaction."""
        def write(c) -> None:
            with c.cursor() as cur:
                cur.executemany("INSERT INTO answers VALUES (%s, %s, %s, %s) ON CONFLICT (call) DO UPDATE SET "
                                "answer = excluded.answer", journal_rows(answers, time.time()))
            _set_batch(c, local_id, "ended", outcome=outcome, counts=json.dumps(counts))
        self._run("record a batch's results", write)

    def batches(self, states: tuple[str, ...] = BATCH_STATES) -> list[dict]:
        """The ledger's rows in ``states``, oldest first."""
        rows = self._run("read the batches", lambda c: c.execute(
            f"SELECT {', '.join(BATCH_COLUMNS)} FROM batches WHERE state = ANY(%s) ORDER BY created_at, local_id",
            (list(states),)).fetchall())
        return [batch_row(r) for r in rows]

    def absorb_batches(self, rows: list[dict]) -> int:
        """Copy ledger rows of another store (``store copy``): those missing added, those further on replacing
        the row held (never moved back); how many were written."""
        def write(c) -> int:
            have = dict(c.execute("SELECT local_id, state FROM batches FOR UPDATE").fetchall())
            new, ahead = rows_to_absorb(rows, have)
            marks = ", ".join(["%s"] * len(BATCH_COLUMNS))
            sets = ", ".join(f"{col} = excluded.{col}" for col in BATCH_COLUMNS if col != "local_id")
            with c.cursor() as cur:
                cur.executemany(f"INSERT INTO batches ({', '.join(BATCH_COLUMNS)}) VALUES ({marks}) "
                                f"ON CONFLICT (local_id) DO UPDATE SET {sets}", [ledger_values(r) for r in new + ahead])
            return len(new) + len(ahead)
        return self._run("copy the batch ledger", write)

    def note_meta(self, name: str, value: str) -> None:
        """Record a run fact in ``meta`` (committed at once); a fact already recorded under ``name`` stays."""
        self._run("record a run fact", lambda c: c.execute(
            "INSERT INTO meta VALUES (%s, %s) ON CONFLICT DO NOTHING", (name, str(value))))

    def maybe_charged_timeouts(self) -> int:
        """Calls that timed out after being sent, over every run on this store."""
        return int(self.meta().get("maybe_charged_timeouts", 0))

    # -- human labels (append-only; judgewise.store.labels) ----------------------------------------------
    def add_label(self, label: HumanLabel) -> None:
        """Append one human label, committed before this returns (the table made on the first one)."""
        row = label.values()

        def write(c) -> None:
            c.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            c.execute(LABEL_DDL)
            c.execute(LABEL_INSERT, row)
        self._run("store a label", write, retry=False)

    def labels(self) -> pd.DataFrame:
        """Every human label row, in commit order (empty when the store has none)."""
        def read(c) -> list[tuple]:
            found = c.execute("SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
                              (PG_SCHEMA, LABEL_TABLE)).fetchone()
            return c.execute(LABEL_SELECT).fetchall() if found else []
        return labels_frame(self._run("read labels", read))

    # -- summaries ------------------------------------------------------------------------------------
    def stats(self) -> dict:
        """Counts ok/failed, tokens, cost and calls, overall and by judge and by model; live claims; queued."""
        in_flight, queued = self._run("count claims", lambda c: c.execute(
            f"SELECT (SELECT COUNT(*) FROM claims WHERE expires > {NOW} AND key NOT LIKE 'writer:%'), "
            "(SELECT COUNT(*) FROM queue)").fetchone())
        out = store_stats(self.frame(), path=self.path, in_flight=in_flight)
        out["maybe_charged_timeouts"] = self.maybe_charged_timeouts()
        out["queued"] = int(queued)
        return out


def _open_pool(url: str, label: str, size: int, readonly: bool):
    """A connection pool on ``url`` (tables found through ``search_path``), after one plain connection that turns
    a wrong host, port, database or password into a clear error at once."""
    psycopg, psycopg_pool = _driver()
    try:
        url = libpq_url(url)
        psycopg.connect(url, connect_timeout=10).close()
    except psycopg.Error as exc:  # its text may quote the URL, or part of it: scrubbed of every password spelling
        raise ConfigError(f"store {label}: cannot connect to PostgreSQL: {scrub(' '.join(str(exc).split()))[:300]}") \
            from None

    def configure(conn) -> None:
        conn.execute(f"SET search_path TO {PG_SCHEMA}")
        if readonly:
            conn.execute("SET default_transaction_read_only = on")

    pool = psycopg_pool.ConnectionPool(url, min_size=1, max_size=max(1, size), open=False, timeout=5.0,
                                       kwargs={"autocommit": True, "connect_timeout": 5}, configure=configure,
                                       name=f"judgewise-store-{label}")
    pool.open(wait=True, timeout=15.0)
    return pool


def _stored_version_of(label: str):
    """A transaction body: the store's schema version, None when the database holds no store; InputError naming
    the URL for a ``judgewise`` schema of something else or a store of a newer version."""
    def read(c) -> int | None:
        tables = {r[0] for r in c.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                                          (PG_SCHEMA,))}
        if not tables:
            return None
        if not STORE_TABLES <= tables:
            raise InputError(f"schema {PG_SCHEMA} of this database holds tables that are not a judgewise store "
                             f"({', '.join(sorted(tables)[:5])}); judgewise will not write to it", file=label)
        row = c.execute(f"SELECT value FROM {PG_SCHEMA}.meta WHERE name = 'schema_version'").fetchone()
        return check_version(row[0] if row else None, label)
    return read


def _create_or_migrate(label: str):
    """A transaction body: create the tables (new store) or take the migration steps after the stored version,
    under an advisory lock so that workers starting together do it once."""
    read = _stored_version_of(label)

    def run(c) -> None:
        c.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        version = read(c)
        if version is None:
            c.execute(f"CREATE SCHEMA IF NOT EXISTS {PG_SCHEMA}")
            for statement in _TABLES:
                c.execute(statement.format(s=PG_SCHEMA))
            c.execute(f"INSERT INTO {PG_SCHEMA}.meta VALUES ('schema_version', %s)", (str(SCHEMA_VERSION),))
            return
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS.get(step, ()):
                c.execute(statement)
        c.execute(BATCH_TABLE.format(s=PG_SCHEMA))
        for column in ADDED_LEDGER_COLUMNS:
            c.execute(f"ALTER TABLE {PG_SCHEMA}.batches ADD COLUMN IF NOT EXISTS {column} TEXT")
        if version < SCHEMA_VERSION:
            c.execute("UPDATE meta SET value = %s WHERE name = 'schema_version'", (str(SCHEMA_VERSION),))
            log.info("store %s migrated from schema version %d to %d", label, version, SCHEMA_VERSION)
    return run


def _drop_leases(c, held: list[tuple], drop) -> None:
    """The writer leases of ``held`` (key, owner, expires) that ``drop`` names, deleted."""
    gone = [key for key, owner, expires in held if drop(owner, expires)]
    c.execute("DELETE FROM claims WHERE key = ANY(%s)", (gone,))


def _set_batch(c, local_id: str, state: str, **values) -> None:
    sets = "".join(f", {name} = %s" for name in values)
    c.execute(f"UPDATE batches SET state = %s, updated_at = %s{sets} WHERE local_id = %s",
              (state, time.time(), *values.values(), local_id))


def _frame(rows: list[tuple]) -> pd.DataFrame:
    """Rows of ``games`` as the SQLite store's frame (``pandas.read_sql_query``) has them: a numeric column with a
    number is numeric (NULL as NaN), one of NULLs only stays None."""
    df = pd.DataFrame.from_records(rows, columns=list(GAME_COLUMNS))
    for c in NUMERIC:
        if df[c].notna().any():
            df[c] = pd.to_numeric(df[c])
    return df


def _param(value):
    """A value as the games table takes it: frame cells as Python numbers or NULL, booleans as 0/1 (``swapped``
    is an INTEGER column, as in SQLite)."""
    value = plain_value(value)
    return int(value) if isinstance(value, bool) else value
