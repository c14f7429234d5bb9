"""Large files as a stream of chunks: JSONL in blocks of whole lines, Parquet in record batches, each parsed by pyarrow.

A chunk offers its rows two ways: ``table()``, the columns as pyarrow parsed them (None when pyarrow cannot parse
them, or when the rows it found are not the file's rows: an object split over two lines, two objects on one
line), and the raw rows for the row-by-row readers of :mod:`judgewise.io.containers` (``records``/``frame``), with
the rows numbered as in the whole file (JSONL: line number; Parquet: row index + 1). Only one chunk is in memory
at a time.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io.containers import jsonl_bytes_records
from judgewise.io.validate import Validator

CHUNK_BYTES = 32 << 20  # JSONL bytes per chunk (about 300,000 Arena battles)
CHUNK_ROWS = 1 << 18  # Parquet rows per chunk
BLANK_INSIDE = re.compile(rb"\n[ \t\r]*\n")  # starts with a literal: scans at memchr speed
#: JSON nested deeper than this goes to the row-by-row parser (which reports it as an error): pyarrow's JSON parser
#: recurses on the C stack and crashes the process (segmentation fault) at about 20,000 levels
MAX_ARROW_DEPTH = 512
_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[[ord("{"), ord("[")]], _BRACKET_STEP[[ord("}"), ord("]")]] = 1, -1


def nests_deeper_than(data: bytes, depth: int) -> bool:
    """Whether brackets on one line of ``data`` nest deeper than ``depth`` (brackets inside strings count too, so it
    may say yes for a shallow line: that only sends the chunk to the slower parser). Only lines longer than
    ``depth`` bytes can, so only those are scanned."""
    arr = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], ends + 1))
    ends = np.concatenate((ends, [len(arr)]))
    for start, end in zip(starts[ends - starts > depth], ends[ends - starts > depth]):
        step = _BRACKET_STEP[arr[start:end]]
        brackets = step[np.flatnonzero(step)]
        if len(brackets) > depth and np.cumsum(brackets, dtype=np.int64).max() > depth:
            return True
    return False


def _nonblank_lines(data: bytes) -> int:
    """How many lines of ``data`` hold something other than whitespace."""
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    first, last = data[:data.find(b"\n")], data[data.rfind(b"\n", 0, len(data) - 1) + 1:]
    if first.strip() and last.strip() and BLANK_INSIDE.search(data) is None:
        return lines
    return sum(1 for line in data.split(b"\n") if line.strip())


class JsonlChunk:
    """Whole lines of a JSONL file; ``first_line`` is the file's line number of the first."""

    def __init__(self, data: bytes, first_line: int):
        self.data, self.first_line = data, first_line

    def table(self):
        """The lines as columns, or None when they are not exactly one valid UTF-8 JSON object per line (or nest
        deeper than :data:`MAX_ARROW_DEPTH`)."""
        import pyarrow as pa
        import pyarrow.json as pj

        if nests_deeper_than(self.data, MAX_ARROW_DEPTH):
            return None
        try:
            self.data.decode("utf-8")  # pyarrow lets invalid UTF-8 through
            table = pj.read_json(io.BytesIO(self.data), read_options=pj.ReadOptions(block_size=1 << 24))
        except (UnicodeDecodeError, pa.ArrowException):
            return None
        return table if table.num_rows == _nonblank_lines(self.data) else None

    def records(self, v: Validator) -> tuple[list[dict], np.ndarray]:
        """The lines parsed one by one (bad lines rejected or skipped by ``v``, counted as read)."""
        return jsonl_bytes_records(self.data, v, self.first_line)


def jsonl_chunks(path: Path, v: Validator, chunk_bytes: int | None = None) -> Iterator[JsonlChunk]:
    """The file's lines in chunks of about ``chunk_bytes`` (default CHUNK_BYTES); an unreadable or empty file is
    an error naming it."""
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise v.error(f"cannot read the file ({exc.strerror or exc})") from None
    with fh:
        line, seen = 1, False
        while block := fh.read(chunk_bytes):
            if not block.endswith(b"\n"):
                block += fh.readline()  # whole lines only
            if not block.isspace():
                seen = True
                yield JsonlChunk(block, line)
            line += block.count(b"\n")
    if not seen:
        raise v.error("the file is empty: expected at least one row of data")


class ParquetChunk:
    """A record batch of a Parquet file; ``first_row`` is the file's row number of its first row."""

    def __init__(self, table, first_row: int):
        self._table, self.first_row = table, first_row

    def table(self):
        return self._table

    def frame(self, v: Validator) -> tuple[pd.DataFrame, np.ndarray]:
        """The batch as pandas (as the whole-file reader makes it), counted as read."""
        import pyarrow as pa

        table = self._table
        v.report.rows_read += table.num_rows
        rows = np.arange(self.first_row, self.first_row + table.num_rows, dtype=np.int64)
        for i, col in enumerate(table.schema):  # strings read as stored: back to plain strings, as read whole
            if pa.types.is_dictionary(col.type):
                table = table.set_column(i, col.name, table.column(i).cast(col.type.value_type))
        return table.to_pandas(), rows


def parquet_chunks(path: Path, v: Validator, columns: list[str] | None = None,
                   chunk_rows: int | None = None) -> Iterator[ParquetChunk]:
    """The file's rows in batches of ``chunk_rows`` (default CHUNK_ROWS; only ``columns`` when given); an
    unreadable or empty file is an error."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
        strings = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
        pf = pq.ParquetFile(path, read_dictionary=strings)  # strings as stored: codes without hashing each row
        if pf.metadata.num_rows == 0:
            raise v.error("the Parquet file has no rows: expected at least one row of data")
        first = 1
        for batch in pf.iter_batches(batch_size=chunk_rows or CHUNK_ROWS, columns=columns):
            yield ParquetChunk(pa.Table.from_batches([batch]), first)
            first += batch.num_rows
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise v.error(f"not a readable Parquet file ({exc})") from None


def parquet_columns(path: Path, v: Validator) -> list[str]:
    """The column names of a Parquet file (an error naming it when it is not one)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise v.error(f"not a readable Parquet file ({exc})") from None
