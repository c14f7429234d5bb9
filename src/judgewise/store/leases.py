"""What every judgewise SQLite store shares: owners and leases (claims), the answer journal, write transactions.

The judging store (:mod:`judgewise.store.judgments`) and the generation store (:mod:`judgewise.store.generations`)
keep their own tables; a subclass names them in ``RESULTS``, ``CLAIMS``, ``JOURNAL`` and ``META`` and gives its
``SCHEMA``. A claim is a lease: (key, owner, expires); an owner is ``host:pid:nonce``, and a claim of a process on
this host that no longer runs is free at once (:func:`owner_is_dead`), else when it expires. A finished row is
stored by :meth:`LeasedSqliteStore.record` (its own transaction) or, inside an event loop, by
:meth:`LeasedSqliteStore.record_soon`: one transaction for every row finished in the same turn of the loop.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sqlite3
import threading
import time
import uuid
from pathlib import Path

from judgewise.store.batches import SqliteBatchLedger, lease_gone, writer_conflict, writer_key
from judgewise.store.sqlite import SqliteStore
from judgewise.store.storable import journal_json

log = logging.getLogger(__name__)

# What storing a row raises for a value its database cannot hold (sqlite3: OverflowError, UnicodeEncodeError, DataError,
# "Error binding parameter" ProgrammingError; ``pg_store`` turns psycopg's DataError into ValueError): that row alone
# is refused (the runner stores the game as failed instead); anything else (a locked or full disk) fails the commit.
UNSTORABLE = (ValueError, OverflowError, TypeError, sqlite3.DataError, sqlite3.InterfaceError, sqlite3.ProgrammingError)


def owner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_is_dead(owner: str) -> bool:
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


class Immediate:
    """Context manager: one ``BEGIN IMMEDIATE`` transaction (takes the write lock up front), rolled back on error."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type, *_):
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def _use_wal(db: sqlite3.Connection, wait_s: float) -> None:
    """Switch ``db`` to WAL mode, waiting up to ``wait_s`` for other connections. SQLite does not call its busy
    handler here: leaving rollback mode needs the exclusive lock, and a connection holding a shared lock while
    another holds the reserved one gets ``database is locked`` at once (processes racing to create one store), so
    the switch is tried again with a growing sleep (1 ms up to 50 ms) until the wait is spent."""
    deadline, pause = time.monotonic() + wait_s, 0.001
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def connect_writer(path: Path, busy_timeout_s: float, *, durable: bool = False) -> sqlite3.Connection:
    """A connection for writing in WAL mode; WAL + NORMAL survives a killed process (only an OS crash or power
    loss can drop the last commits), ``durable`` = FULL survives those too."""
    db = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None)
    db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    _use_wal(db, busy_timeout_s)
    db.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
    db.execute(f"PRAGMA journal_size_limit = {WAL_RESTART_BYTES}")
    return db


AUTOCHECKPOINT_PAGES = 1000  # SQLite's default
# A writer that never finds the WAL wholly copied when it begins (commits every few milliseconds, as a run's) appends
# to it for ever (35 MB for 2,560 games, and growing a file costs the kernel more than rewriting its pages): past
# this size a RESTART checkpoint, after the PASSIVE one has copied nearly all of it, makes the next writer start at
# the WAL's head again (the writer waits for it, a few milliseconds, once per this many bytes written); the file is
# cut back to this size.
WAL_RESTART_BYTES = 16 << 20
RESTART_WAIT_S = 0.02
PAGE_GUESS = 4096 + 24  # bytes of a WAL frame at SQLite's default page size (frames are counted, not bytes)


def _journal_rows(held: list[tuple]) -> list[tuple]:
    """Journal rows as stored: each answer as JSON (:func:`storable.journal_json`: ASCII, scrubbed of secrets)."""
    return [(call, game, journal_json(answer), at)
            for call, game, answer, at in held]


def _checkpoint_until(path: Path, stop: threading.Event, every_s: float) -> None:
    """PASSIVE checkpoints of the WAL of ``path`` every ``every_s`` until ``stop`` (never blocks a writer); past
    :data:`WAL_RESTART_BYTES`, a RESTART one after it."""
    try:
        # a short busy wait: a RESTART checkpoint waits out a commit in progress, but while it waits for a reader's
        # old snapshot (another process, a run reading its rows back) it holds every writer back (the run's event
        # loop), so it gives up after RESTART_WAIT_S and the next round tries again
        db = sqlite3.connect(path, timeout=RESTART_WAIT_S, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        log.warning("no background checkpoints of %s (%s): the WAL grows until the run ends", path, exc)
        return
    try:
        while not stop.wait(every_s):
            try:
                frames = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
                if frames * PAGE_GUESS > WAL_RESTART_BYTES:  # what is left to copy is what came since the PASSIVE
                    db.execute("PRAGMA wal_checkpoint(RESTART)")  # writing starts again at the WAL's head
            except sqlite3.Error as exc:  # busy or locked now: the next round catches up
                log.debug("background checkpoint of %s skipped: %s", path, exc)
    finally:
        db.close()


class LeasedSqliteStore(SqliteStore, SqliteBatchLedger):
    """Claims, the answer journal and transactions over a subclass's tables (module docstring)."""

    CLAIMS, JOURNAL, META, SCHEMA, BATCHES = "", "", "", "", ""

    @classmethod
    def empty(cls, path):
        """An empty store in memory, read as if it were ``path`` (what planning reads where no store is yet)."""
        self = cls._reader(path, sqlite3.connect(":memory:", isolation_level=None))
        self._create_tables()
        return self

    @classmethod
    def _reader(cls, path, db: sqlite3.Connection):
        """A store opened for reading only on the connection ``db`` (the file at ``path``, or a database in memory)."""
        self = cls.__new__(cls)
        self.path, self.lease_s, self.readonly, self.owner = path, 120.0, True, owner_id()
        self._db = db
        return self

    def _create_tables(self) -> None:
        """The subclass's tables and indexes (``SCHEMA``), those missing made."""
        for statement in filter(str.strip, self.SCHEMA.split(";")):
            self._db.execute(statement)
        self._ledger_columns()

    def _write(self) -> Immediate:
        return Immediate(self._db)

    @contextlib.contextmanager
    def background_checkpoints(self, every_s: float = 0.25):
        """For the block, the WAL is copied into the database file by a thread on its own connection (a PASSIVE
        checkpoint every ``every_s``; a RESTART one past :data:`WAL_RESTART_BYTES`) instead of by whichever commit
        passes 1,000 pages: that checkpoint's fsync then never stalls the caller (a judging run's event loop).
        Commits stay exactly as durable (a commit is in the WAL either way); back to SQLite's automatic checkpoints
        after the block."""
        stop = threading.Event()
        worker = threading.Thread(target=_checkpoint_until, args=(self.path, stop, every_s), daemon=True,
                                  name="judgewise-checkpoints")
        self._db.execute("PRAGMA wal_autocheckpoint = 0")
        worker.start()
        try:
            yield
        finally:
            stop.set()
            worker.join()
            self._db.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")

    def close(self) -> None:
        if not self.readonly:
            self._commit_turn()  # rows still waiting in record_soon, answers held back
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- claims (leases) -----------------------------------------------------------------------------------------
    def claims(self) -> int:
        """How many claims on rows are held (live or expired; the writer leases not counted)."""
        return self._db.execute(f"SELECT COUNT(*) FROM {self.CLAIMS} WHERE key NOT LIKE 'writer:%'").fetchone()[0]

    def claim(self, key: str, *, retry_failed: bool = False) -> str:
        """Try to take ``key``. Returns "claimed", "done" (already stored; "failed" rows count as done unless
        ``retry_failed``) or "busy" (another live process holds an unexpired claim)."""
        return self.claim_many([key], retry_failed=retry_failed)[0]

    def claim_many(self, keys: list[str], *, retry_failed: bool = False) -> list[str]:
        """:meth:`claim` for each of ``keys`` (its answer for each, in order), in one transaction."""
        now, out = time.time(), []
        with self._write():
            self._journal_table_empty = not self._db.execute(
                f"SELECT EXISTS (SELECT 1 FROM {self.JOURNAL})").fetchone()[0]
            self._journal_empty = self._held is None and self._journal_table_empty
            for i in range(0, len(keys), 500):  # three statements a batch of keys, not three a key
                chunk = keys[i:i + 500]
                marks = ",".join("?" * len(chunk))
                stored = dict(self._db.execute(f"SELECT key, status FROM {self.RESULTS} WHERE key IN ({marks})", chunk))
                held = {k: (owner, expires) for k, owner, expires in self._db.execute(
                    f"SELECT key, owner, expires FROM {self.CLAIMS} WHERE key IN ({marks})", chunk)}
                mine = []
                for key in chunk:
                    status, claim = stored.get(key), held.get(key)
                    if status is not None and (status == "ok" or not retry_failed):
                        out.append("done")
                    elif claim and claim[0] != self.owner and claim[1] > now and not owner_is_dead(claim[0]):
                        out.append("busy")
                    else:
                        mine.append((key, self.owner, now + self.lease_s))
                        out.append("claimed")
                self._db.executemany(f"INSERT OR REPLACE INTO {self.CLAIMS} VALUES (?, ?, ?)", mine)
        return out

    def take_writer(self, mode: str) -> tuple[str, str] | None:
        """Take this run's writer lease (``mode`` "batch" or "live", :func:`~judgewise.store.batches.writer_conflict`)
        unless another live process's lease keeps it out: then that lease (key, owner), nothing taken. Renewed with
        the claims (:meth:`renew_claims`), given back by :meth:`release_writer`."""
        now = time.time()
        with self._write():
            held = self._writer_leases()
            conflict = writer_conflict(mode, self.owner, held, now, owner_is_dead)
            self._drop_leases(held, lambda owner, expires: lease_gone(owner, expires, now, owner_is_dead))
            if conflict is None:
                self._db.execute(f"INSERT OR REPLACE INTO {self.CLAIMS} VALUES (?, ?, ?)",
                                 (writer_key(mode, self.owner), self.owner, now + self.lease_s))
        return conflict

    def release_writer(self) -> None:
        """Give back the writer lease this instance holds (none: nothing to do), and those of runs killed meanwhile
        (dead or expired: :func:`~judgewise.store.batches.lease_gone`)."""
        now = time.time()
        with self._write():
            held = self._writer_leases()
            self._drop_leases(held, lambda owner, expires: owner == self.owner or lease_gone(owner, expires, now,
                                                                                                owner_is_dead))

    def _writer_leases(self) -> list[tuple]:
        return self._db.execute(f"SELECT key, owner, expires FROM {self.CLAIMS} WHERE key LIKE 'writer:%'").fetchall()

    def _drop_leases(self, held: list[tuple], drop) -> None:
        """Inside a write transaction: the writer leases of ``held`` (key, owner, expires) that ``drop`` names."""
        self._db.executemany(f"DELETE FROM {self.CLAIMS} WHERE key = ?",
                             [(key,) for key, owner, expires in held if drop(owner, expires)])

    def renew_claims(self) -> int:
        """Extend the lease of every claim this instance holds; returns how many."""
        with self._write():
            return self._db.execute(f"UPDATE {self.CLAIMS} SET expires = ? WHERE owner = ?",
                                    (time.time() + self.lease_s, self.owner)).rowcount

    def release(self, key: str) -> None:
        """Give up a claim without storing a result (e.g. the run stopped before it)."""
        with self._write():
            self._db.execute(f"DELETE FROM {self.CLAIMS} WHERE key = ? AND owner = ?", (key, self.owner))

    # -- finished rows ---------------------------------------------------------------------------------------------
    # A subclass says how a row is written (``UPSERT``, ``JOURNAL_GAME``: :meth:`_write_rows` writes it, its claim and
    # journal rows dropped) and made ready to store (``_ready``: ``store.storable_record``).
    # (the empty defaults are immutable: each is replaced by a new list or set before it is added to)
    _pending: list = ()  # type: ignore[assignment]  # (row, future) of record_soon, committed at the end of the turn
    _waiting: set = frozenset()  # type: ignore[assignment]  # the keys of those rows
    _commit_loop = None  # the loop whose next turn commits what is held back (None: no commit scheduled)

    def record(self, rec) -> None:
        """Store one finished row and drop its claim and journaled answers, in one committed transaction. An "ok"
        row already stored is never overwritten (a failed one is, when the key was retried)."""
        self._ready(rec)
        refused = self._commit([rec])[0]
        if refused is not None:
            raise refused

    def record_soon(self, rec):
        """:meth:`record` inside an event loop, committed with every other row finished in the same turn of the
        loop: one transaction at the loop's next callback instead of one per row (a commit costs ~0.2 ms of CPU,
        a quarter of the engine's per call). The future returned is done once the row is committed, and only then
        does the caller count it stored; its exception is the row's own (a value the database cannot hold,
        :data:`UNSTORABLE`: only that row is left out) or the commit's (none of the rows stored). A row whose
        caller stopped waiting (a cancelled task) is committed all the same, at the latest by :meth:`close`."""
        import asyncio  # here, not at the top (see hold_answer)

        loop = asyncio.get_running_loop()
        self._ready(rec)
        done = loop.create_future()
        if not self._pending:
            self._pending, self._waiting = [], set()
        self._pending.append((rec, done))
        self._waiting.add(rec.key)
        if self._held:
            self._unsettled.discard(rec.key)  # its answers are superseded by the row, at the end of this turn
        self._commit_at_end_of_turn(loop)
        return done

    def _commit_at_end_of_turn(self, loop) -> None:
        if self._commit_loop is not loop:  # one callback a turn (scheduled anew in a new loop: an old one may be gone)
            self._commit_loop = loop
            loop.call_soon(self._commit_turn)

    def _commit_turn(self) -> None:
        """Commit what is held back: the rows waiting in record_soon with the journaled answers (one transaction),
        then each row's future settled; or, no row waiting, the answers alone."""
        self._commit_loop = None
        if not self._pending:
            return self._flush_journal()
        pending, self._pending, self._waiting = self._pending, [], set()
        try:
            outcomes = self._commit([rec for rec, _ in pending])
        except Exception as exc:  # noqa: BLE001 - nothing committed: each waiting caller raises it (never left waiting)
            outcomes = [exc] * len(pending)
        for (_, done), refused in zip(pending, outcomes):
            if done.done() or done.get_loop().is_closed():
                continue
            if refused is None:
                done.set_result(None)
            else:
                done.set_exception(refused)

    def _commit(self, recs: list) -> list:
        """One transaction: each of ``recs`` written (:meth:`_write_rows`) and the answers held back (those of the
        rows written superseded by them). Per row, None or the :data:`UNSTORABLE` error that left it out; any other
        error rolls everything back and is raised (the held answers kept for the next commit or close)."""
        held = self._held
        refused: list[BaseException | None] = [None] * len(recs)
        try:
            with self._write():
                try:
                    self._write_rows(recs)  # the common case: every row at once (three statements, not three a row)
                except UNSTORABLE:  # then row by row, to leave out only the rows refused (the statements repeat safely)
                    for i, rec in enumerate(recs):
                        try:
                            self._write_rows([rec])
                        except UNSTORABLE as exc:
                            refused[i] = exc
                self._settle_journal({rec.key for rec, no in zip(recs, refused) if no is None})
        except BaseException:
            self._held, self._unsettled = held, {r[1] for r in held or ()}
            raise
        return refused

    def _ready(self, rec) -> None:
        raise NotImplementedError

    UPSERT = ""  # the subclass's statement storing a row (its ``values()``); an "ok" row is never overwritten
    JOURNAL_GAME = "key"  # the journal's column naming the row's key

    def _write_rows(self, recs: list) -> None:
        """Inside a write transaction: the rows, their claims and their journaled answers dropped (none to drop
        when the journal held no row at the last claim and none was written since). Repeating it writes the same."""
        keys = [(rec.key,) for rec in recs]
        self._db.executemany(self.UPSERT, [rec.values() for rec in recs])
        self._db.executemany(f"DELETE FROM {self.CLAIMS} WHERE key = ?", keys)
        if not self._journal_table_empty:
            self._db.executemany(f"DELETE FROM {self.JOURNAL} WHERE {self.JOURNAL_GAME} = ?", keys)

    # -- the answer journal (scheduler.AnswerJournal) -------------------------------------------------------------
    # An answer received inside an event loop is held back until the end of the loop's turn: the game's row, stored
    # in the same step (the common case: the answer parsed), supersedes it in the row's own transaction, so a
    # finished game costs no journal write. Otherwise it is committed before the game's next call is sent
    # (held_answer runs before each call), or by the loop's next turn (call_soon), or at close: never later.
    _held: list | None = None  # journal rows not committed yet
    # the journal was empty at the last claim and nothing was journaled here since: no answer to look up (the games
    # claimed are this process's, and only the process holding a game's claim journals its answers)
    _journal_empty = False
    _unsettled: set = frozenset()  # type: ignore[assignment]  # games of those rows not waiting in record_soon
    # the journal's table held no row at the last claim and none was written here since (a stored row has no journal
    # rows to drop; only the process holding a game's claim journals its answers)
    _journal_table_empty = False

    def held_answer(self, call_key: str) -> dict | None:
        """A completion received earlier for this call (its result not stored yet), or None. Runs before every call
        is sent, so it first commits the answers held back: a game's earlier answers are durable before its next
        call goes out."""
        if self._journal_empty:  # the common case: nothing held back, nothing to find
            return None
        self._flush_journal()
        if self._journal_table_empty:  # answers were held, but none written (each superseded by its row): none to find
            return None
        row = self._db.execute(f"SELECT answer FROM {self.JOURNAL} WHERE call = ?", (call_key,)).fetchone()
        return json.loads(row[0]) if row else None

    def hold_answer(self, game_key: str, call_key: str, answer: dict) -> None:
        """Journal a completion just received: committed now outside an event loop, else as the comment above says."""
        row = (call_key, game_key, answer, time.time())  # serialised only if written (_journal_rows)
        import asyncio  # here, not at the top: reading a store (every rank of a file checks for one) never needs it

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if self._held is None:
            self._held, self._unsettled = [], set()
        self._held.append(row)
        self._journal_empty = False
        if game_key not in self._waiting:
            self._unsettled.add(game_key)
        if loop is None:
            self._flush_journal()
        else:
            self._commit_at_end_of_turn(loop)

    def _flush_journal(self) -> None:
        """Commit the answers held back (none: nothing to do), but those of rows waiting in record_soon: each is
        superseded by its row, committed at the end of this turn."""
        if not self._unsettled:  # the common case, checked before every call: nothing, or only superseded answers
            return
        held = self._held or []
        rows = [r for r in held if r[1] in self._unsettled]
        self._held, self._unsettled = [r for r in held if r[1] not in self._unsettled] or None, set()
        self._journal_table_empty = False
        try:
            with self._write():
                self._db.executemany(f"INSERT OR REPLACE INTO {self.JOURNAL} VALUES (?, ?, ?, ?)", _journal_rows(rows))
        except sqlite3.OperationalError as exc:  # the answers are still in memory and stored with their rows
            log.warning("could not journal %d answer(s) received (%s); each is stored with its row when that ends",
                        len(rows), exc)

    def _settle_journal(self, stored: set) -> None:
        """Inside the transaction storing the rows of the keys ``stored``: the answers held back are written with
        them, except those of these rows (each row supersedes them; ``_write_rows`` deletes any committed earlier)."""
        rows, self._held, self._unsettled = self._held, None, set()
        rows = [r for r in rows or () if r[1] not in stored]
        if rows:
            self._journal_table_empty = False
            self._db.executemany(f"INSERT OR REPLACE INTO {self.JOURNAL} VALUES (?, ?, ?, ?)", _journal_rows(rows))

    def note_maybe_charged(self) -> None:
        """Count, durably, one call that timed out after being sent (the server may have billed it)."""
        try:
            with self._write():
                self._db.execute(f"INSERT INTO {self.META} VALUES ('maybe_charged_timeouts', '1') ON CONFLICT(name) "
                                 "DO UPDATE SET value = CAST(value AS INTEGER) + 1")
        except sqlite3.OperationalError as exc:
            log.warning("could not count a call that timed out after sending (%s)", exc)
