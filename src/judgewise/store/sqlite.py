"""What every judgewise SQLite store shares: the file check, read-only connections, and reading rows by key.

:class:`SqliteStore` is the base of the judging store (:mod:`judgewise.store.judgments`) and the generation store
(:mod:`judgewise.store.generations`), through :class:`~judgewise.store.leases.LeasedSqliteStore` (claims, the answer
journal, writes); a subclass names its table of rows (``RESULTS``), its columns (``COLUMNS``, with ``ADDED``: those
a store of an older schema may lack, and their values there) and the order of a whole read (``ORDER``).
"""

from __future__ import annotations

import os
import sqlite3
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from judgewise.errors import ConfigError, InputError

SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite file


def file_head(path: Path) -> bytes:
    """The first bytes of the file at ``path``, as many as :data:`SQLITE_HEADER` has (fewer for a shorter file)."""
    with path.open("rb") as fh:
        return fh.read(len(SQLITE_HEADER))


def writable_path(path: str | os.PathLike, default_name: str) -> Path:
    """``path`` as a Path, or a ConfigError when it is a directory (naming a file to give instead)."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"store path {path} is a directory; name a file, e.g. {path / default_name}")
    return path


def connect_readonly(path: Path, busy_timeout_s: float = 60.0) -> sqlite3.Connection:
    """A read-only connection. A file no writer has open (no -wal beside it) is read as immutable, which skips
    locking and the WAL index, so that not even the -wal/-shm files SQLite makes beside a WAL-mode file appear;
    one a writer has open (or died with open) is read through its WAL (``mode=ro``)."""
    in_use = Path(f"{path}-wal").exists()
    query = "mode=ro" if in_use else "immutable=1"
    db = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True, timeout=busy_timeout_s,
                         isolation_level=None)
    db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    return db


def table_names(db: sqlite3.Connection) -> set[str]:
    """The names of the tables of an open SQLite database."""
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def shown_tables(tables: set[str]) -> str:
    """Up to five table names, as a message shows what a foreign database holds."""
    return ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")


def max_params(db: sqlite3.Connection) -> int:
    """How many keys one ``IN (?, ...)`` query binds: at most 30,000, and within the connection's limit (32,766 since
    SQLite 3.32; 999 before)."""
    return max(1, min(30_000, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) - 16))


def sql_literal(value) -> str:
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"


class SqliteStore:
    """Rows by key in one table of a SQLite file: :meth:`statuses`, :meth:`frame`, :meth:`count`,
    :meth:`integrity_check` (module docstring)."""

    RESULTS: str = ""  # the table of rows, keyed by ``key``, with a ``status`` column ("ok" | "failed")
    COLUMNS: tuple[str, ...] = ()
    ADDED: Mapping[str, object] = {}  # columns a store of an older schema lacks → their value in its rows
    ORDER: str = "key"  # the order of a whole read (ORDER BY)

    path: Path
    lease_s: float
    readonly: bool
    owner: str
    _db: sqlite3.Connection

    def statuses(self, keys: Iterable[str]) -> dict[str, str]:
        """key → "ok"/"failed" for the keys already stored (absent keys are not in the result)."""
        out: dict[str, str] = {}
        keys = list(keys)
        size = max_params(self._db)
        for i in range(0, len(keys), size):
            chunk = keys[i:i + size]
            rows = self._db.execute(f"SELECT key, status FROM {self.RESULTS} WHERE key IN "
                                    f"({','.join('?' * len(chunk))})", chunk).fetchall()
            out.update(rows)
        return out

    def frame(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """The stored rows (all, or those with ``keys``) as a DataFrame with the store's columns."""
        have = self._columns() if self.ADDED else set(self.COLUMNS)
        cols = ", ".join(c if c in have else f"{sql_literal(self.ADDED[c])} AS {c}"
                         for c in self.COLUMNS)  # a store of an older schema read as it is
        try:
            if keys is None:
                return query_frame(self._db, f"SELECT {cols} FROM {self.RESULTS} ORDER BY {self.ORDER}")
            keys, size = list(keys), max_params(self._db)
            batches = [keys[i:i + size] for i in range(0, len(keys), size)]  # one query a run (a frame each: ~5 ms)
            parts = [query_frame(self._db, f"SELECT {cols} FROM {self.RESULTS} WHERE key IN "
                                           f"({','.join('?' * len(b))})", b) for b in batches]
        except InputError as exc:  # a BLOB among the rows (refuse_blobs): named with this file
            raise InputError(exc.detail, file=str(self.path), field=exc.field) from None
        return concat_frames(parts, self.COLUMNS)

    def frame_in_thread(self, keys: list[str]) -> Future:
        """A future of :meth:`frame` of ``keys``, read in a thread on a read-only connection of its own (the rows
        committed when it reads) while this store's connection goes on writing: a judging run reads back the rows
        stored before its last wave while that wave is in flight."""
        reader = object.__new__(type(self))
        reader.path, reader.readonly = self.path, True

        def read() -> pd.DataFrame:
            reader._db = connect_readonly(self.path)
            try:
                return reader.frame(keys)
            finally:
                reader._db.close()
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judgewise-rows")
        try:
            return pool.submit(read)
        finally:
            pool.shutdown(wait=False)  # the thread ends with its read

    def _columns(self) -> set[str]:
        return {row[1] for row in self._db.execute(f"PRAGMA table_info({self.RESULTS})")}

    def count(self, status: str | None = None) -> int:
        """How many rows are stored (of ``status`` only, when given)."""
        if status is None:
            return self._db.execute(f"SELECT COUNT(*) FROM {self.RESULTS}").fetchone()[0]
        return self._db.execute(f"SELECT COUNT(*) FROM {self.RESULTS} WHERE status = ?", (status,)).fetchone()[0]

    def integrity_check(self) -> str:
        """"ok" when SQLite finds the file sound, else its first finding."""
        return self._db.execute("PRAGMA integrity_check").fetchone()[0]


def concat_frames(parts: list[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    """Frames read by :func:`query_frame` (of the same columns) as one, with the dtypes one read of all their rows
    gives: a column with no value in one part (read as nulls) takes the dtype it has in the others, so that
    integers beside it do not become objects."""
    parts = [p for p in parts if len(p)]
    if len(parts) < 2:
        return parts[0] if parts else pd.DataFrame(columns=list(columns))
    for col in parts[0].columns:
        typed = [p[col].dtype for p in parts if p[col].notna().any()]
        if typed and len(set(typed)) == 1:
            # with nulls beside them, integers read as floats and booleans as objects (as pyarrow gives them)
            kind = {"i": "float64", "u": "float64", "b": "object"}.get(typed[0].kind, typed[0])
            parts = [p if p[col].dtype == typed[0] or p[col].notna().any() else p.assign(**{col: p[col].astype(kind)})
                     for p in parts]
    return pd.concat(parts, ignore_index=True)


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
