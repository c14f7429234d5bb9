"""Large files as a stream of chunks: JSONL in blocks of whole lines, Parquet in record batches, each parsed by pyarrow.

A chunk offers its rows two ways: ``table()``, the columns as pyarrow parsed them (None when pyarrow cannot parse
them, or when the rows it found are not the file's rows: an object split over two lines, two objects on one
line), and the raw rows for the row-by-row readers of :mod:`judgewise.io.containers` (``records``/``frame``), with
the rows numbered as in the whole file (JSONL: line number; Parquet: row index + 1). At most two chunks are in
memory at a time: the one being coded and the next, read and parsed ahead in a background thread (:func:`read_ahead`).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io.containers import check_utf8, csv_header, csv_rows, decode_utf8, jsonl_bytes_records, unique_columns
from judgewise.io.csv_export import QUOTED_LEAD
from judgewise.io.streams import note_read
from judgewise.io.validate import Validator

CHUNK_BYTES = 32 << 20  # JSONL bytes per chunk (about 300,000 Arena battles)
CHUNK_ROWS = 1 << 18  # Parquet rows per chunk
#: JSON nested deeper than this goes to the row-by-row parser (which reports it as an error): pyarrow's JSON parser
#: recurses on the C stack and crashes the process (segmentation fault) at about 20,000 levels
MAX_ARROW_DEPTH = 512
_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[[ord("{"), ord("[")]], _BRACKET_STEP[[ord("}"), ord("]")]] = 1, -1


def newline_offsets(arr: np.ndarray, step: int = 1 << 20) -> np.ndarray:
    """The offsets of the newlines in ``arr`` (bytes as uint8), found a slice at a time (cache-sized pieces, no
    mask the size of the data)."""
    parts = [np.flatnonzero(arr[i:i + step] == 10) + i for i in range(0, len(arr), step)]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.intp)


def _line_bounds(arr: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets of each line, given the offsets of the newlines (the text after the last one is a
    line too, empty when the data ends with a newline)."""
    return np.concatenate(([0], ends + 1)), np.concatenate((ends, [len(arr)]))


def nests_deeper_than(data, depth: int, ends: np.ndarray | None = None) -> bool:
    """Whether brackets on one line of ``data`` nest deeper than ``depth`` (brackets inside strings count too, so it
    may say yes for a shallow line: that only sends the chunk to the slower parser). Only lines longer than
    ``depth`` bytes can, so only when there are such lines are the brackets counted (all lines in one pass).
    ``ends``: the offsets of the newlines, when already known."""
    arr = np.frombuffer(data, dtype=np.uint8)
    ends = newline_offsets(arr) if ends is None else ends
    starts, stops = _line_bounds(arr, ends)
    if not np.any(stops - starts > depth):
        return False
    at = np.flatnonzero(_BRACKET_STEP[arr])
    if len(at) <= depth:
        return False
    step = _BRACKET_STEP[arr[at]]
    level = np.cumsum(step, dtype=np.int64)
    line = np.searchsorted(ends, at)  # the line of each bracket: how many newlines come before it
    first = np.flatnonzero(np.concatenate(([True], line[1:] != line[:-1])))  # each line's first bracket
    return bool(np.any(np.maximum.reduceat(level, first) - (level[first] - step[first]) > depth))


def object_lines(arr: np.ndarray, ends: np.ndarray) -> int | None:
    """How many lines hold something other than whitespace, or None when one of them does not open with ``{`` and
    close with ``}``. With these bounds, pyarrow finding as many rows as lines proves one JSON object per line: a
    newline (never raw inside a string) between ``}`` and ``{`` can only part two top-level objects, so no object
    spans two lines and a line with two objects would make one row too many. Only lines that do not look like
    ``{...}`` (blank, padded with whitespace) are looked at one by one; a ``\\r`` before the newline is allowed."""
    starts, stops = _line_bounds(arr, ends)
    full = starts < stops
    starts, stops = starts[full], stops[full]
    last = arr[stops - 1]
    crlf = (last == 13) & (stops - starts > 1)
    last = np.where(crlf, arr[stops - 1 - crlf], last)
    blank = 0
    for i in np.flatnonzero((arr[starts] != ord("{")) | (last != ord("}"))):
        text = bytes(arr[starts[i]:stops[i]]).strip()
        if text and (text[:1] != b"{" or text[-1:] != b"}"):
            return None
        blank += not text
    return len(starts) - blank


class JsonlChunk:
    """Whole lines of a JSONL file (bytes or a memoryview of them); ``first_line`` is the file's line number of
    the first. The newlines are found once (``ends``): they give the line count, the blank lines and the long ones."""

    def __init__(self, data, first_line: int):
        self.data, self.first_line = data, first_line
        self.arr = np.frombuffer(data, dtype=np.uint8)
        self.ends = newline_offsets(self.arr)
        self._table = _UNPARSED
        self.progress: tuple[int, int] | None = None  # (bytes of the file read up to its end, the file's size)

    @property
    def newlines(self) -> int:
        return len(self.ends)

    def table(self):
        """The lines as columns, or None when they are not exactly one valid UTF-8 JSON object per line (or nest
        deeper than :data:`MAX_ARROW_DEPTH`). Parsed once (:func:`read_ahead` parses it in a background thread)."""
        if self._table is _UNPARSED:
            self._table = self._parse()
        return self._table

    def _parse(self):
        import pyarrow as pa
        import pyarrow.json as pj

        if nests_deeper_than(self.arr, MAX_ARROW_DEPTH, self.ends):
            return None
        try:
            table = pj.read_json(pa.BufferReader(pa.py_buffer(self.data)),
                                 read_options=pj.ReadOptions(block_size=self._block_size()))
            if not _isascii(self.data):
                table.validate(full=True)  # pyarrow lets invalid UTF-8 through: checked on the parsed strings
                table.column_names  # and on the keys
        except (UnicodeDecodeError, pa.ArrowException):
            return None
        return table if table.num_rows == object_lines(self.arr, self.ends) else None

    def _block_size(self) -> int:
        """pyarrow's parsing unit: 1 MB (many pieces for its threads to share), or room for the longest line."""
        longest = int(np.diff(self.ends, prepend=-1, append=len(self.arr)).max())
        return max(1 << 20, 2 * longest + 64)

    def records(self, v: Validator) -> tuple[list[dict], np.ndarray]:
        """The lines parsed one by one (bad lines rejected or skipped by ``v``, counted as read)."""
        return jsonl_bytes_records(bytes(self.data), v, self.first_line)


_UNPARSED = object()
_NOT_WHITESPACE = re.compile(rb"[^ \t\n\r\x0b\x0c]")


def _isascii(data) -> bool:
    """Whether the bytes are all ASCII (so valid UTF-8); of a memoryview, its whole underlying block is looked at
    (a no only costs a check of the parsed strings)."""
    return (data.obj if isinstance(data, memoryview) else data).isascii()


def _line_blocks(fh, size: int) -> Iterator[memoryview]:
    """The file in blocks of whole lines of about ``size`` bytes, each read once and not copied: a block ends
    at its last newline and the next read starts after it (a line longer than ``size`` is read on to its end; so
    is the last line of a block of a pipe, which cannot be read again)."""
    seekable = fh.seekable()
    while block := fh.read(size):
        cut = block.rfind(b"\n") + 1 if len(block) == size else len(block)
        if cut == 0 or (cut < len(block) and not seekable):
            block += fh.readline()
            cut = len(block)
        elif cut < len(block):
            fh.seek(cut - len(block), io.SEEK_CUR)
        yield memoryview(block)[:cut]


def jsonl_chunks(path: Path, v: Validator, chunk_bytes: int | None = None) -> Iterator[JsonlChunk]:
    """The file's lines in chunks of about ``chunk_bytes`` (default CHUNK_BYTES); an unreadable or empty file is
    an error naming it."""
    note_read(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise v.error(f"cannot read the file ({exc.strerror or exc})") from None
    with fh:
        line, seen, size = 1, False, os.fstat(fh.fileno()).st_size
        for block in _line_blocks(fh, chunk_bytes or CHUNK_BYTES):
            chunk = JsonlChunk(block, line)
            chunk.progress = (fh.tell(), size) if fh.seekable() else None
            if _NOT_WHITESPACE.search(block):
                seen = True
                yield chunk
            line += chunk.newlines
    if not seen:
        raise v.error("the file is empty: expected at least one row of data")


class CsvChunk:
    """Whole lines of a CSV file after its header. ``first_row``: the row number the row reader gives its first
    line (records after the header, blank ones counted), ``first_line`` its line in the file. When no line holds a
    quote (``quoted`` False) each line is one record, so the chunk's rows are the file's rows."""

    def __init__(self, data, first_row: int, first_line: int, header: list[str], header_text: str):
        self.data, self.first_row, self.first_line = data, first_row, first_line
        self.header, self.header_text = header, header_text
        raw, n = (data.obj, len(data)) if isinstance(data, memoryview) else (data, len(data))  # a view: of a prefix
        self.newlines = raw.count(b"\n", 0, n)
        cr = raw.count(b"\r", 0, n) - raw.count(b"\r\n", 0, n) if raw.find(b"\r", 0, n) >= 0 else 0
        self.rows = self.newlines + cr + (0 if not n or raw.endswith((b"\n", b"\r"), 0, n) else 1)  # lone CR: a row
        self.quoted = raw.find(b'"', 0, n) >= 0
        self.apostrophe = raw.find(b"'", 0, n) >= 0  # a cell may carry a spreadsheet-guard quote (csv_export)
        self._table = _UNPARSED
        self.progress: tuple[int, int] | None = None  # as JsonlChunk's

    def table(self):
        """Every cell as text (pyarrow's CSV parser), or None when a line is quoted, ragged or not UTF-8."""
        if self._table is _UNPARSED:
            self._table = None if self.quoted else self._parse()
        return self._table

    def _parse(self):
        import pyarrow as pa
        import pyarrow.csv as pcsv

        text = {name: pa.string() for name in self.header}
        try:
            table = pcsv.read_csv(
                pa.BufferReader(pa.py_buffer(self.data)),
                read_options=pcsv.ReadOptions(column_names=self.header, block_size=1 << 20),
                parse_options=pcsv.ParseOptions(newlines_in_values=False, ignore_empty_lines=False),
                convert_options=pcsv.ConvertOptions(column_types=text, strings_can_be_null=False,
                                                    quoted_strings_can_be_null=False))
        except pa.ArrowException:
            return None
        if table.num_rows != self.rows or (self.apostrophe and _quoted_cells(table)):
            return None  # a cell a CSV writer quoted for spreadsheets: the row reader restores it (csv_export)
        return table

    def frame(self, v: Validator) -> tuple[pd.DataFrame, np.ndarray]:
        """The rows as the whole-file CSV reader makes them (:func:`judgewise.io.containers.csv_rows`), numbered
        as in the file, counted as read."""
        text = decode_utf8(bytes(self.data), v, first_line=self.first_line)
        return csv_rows(self.header_text + text, self.header, v, self.first_row)


def _quoted_cells(table) -> bool:
    """Whether a cell of the Arrow ``table`` starts with a quote before a formula character
    (:func:`judgewise.io.csv_export.restore_cell` would change it)."""
    import pyarrow.compute as pc

    return any(pc.any(pc.match_substring_regex(col, "^" + QUOTED_LEAD.pattern)).as_py() for col in table.columns)


def csv_chunks(path: Path, v: Validator, chunk_bytes: int | None = None) -> tuple[list[str], Iterator[CsvChunk]] | None:
    """The header of a CSV file and its lines after it in chunks of about ``chunk_bytes``; None when its header
    is not one line of UTF-8 (a quoted name holding a newline) or is blank: the whole-file reader then reads it
    and says what is wrong."""
    note_read(path)
    try:
        fh = open(path, "rb")
    except OSError:
        return None
    first = fh.readline()
    try:
        header_text = first.decode("utf-8-sig")
    except UnicodeDecodeError:  # e.g. UTF-16: the whole-file reader names the byte
        header_text = None
    if header_text is None or first.count(b'"') % 2 or b"\r" in first.rstrip(b"\r\n") or not header_text.strip():
        fh.close()  # not one line of UTF-8
        return None
    header = csv_header(header_text, v)

    def chunks() -> Iterator[CsvChunk]:
        with fh:
            row, line, size = 1, 2, os.fstat(fh.fileno()).st_size
            for block in _line_blocks(fh, chunk_bytes or CHUNK_BYTES):
                chunk = CsvChunk(block, row, line, header, header_text)
                chunk.progress = (fh.tell(), size) if fh.seekable() else None
                yield chunk
                row, line = row + chunk.rows, line + chunk.newlines

    return header, chunks()


def read_ahead(chunks: Iterable) -> Iterator:
    """The chunks, each read and parsed (``table()``) in a background thread while the caller works on the one
    before (pyarrow and numpy release the GIL): at most two chunks in memory."""
    from concurrent.futures import ThreadPoolExecutor

    it = iter(chunks)

    def step():
        chunk = next(it, None)
        if chunk is not None:
            chunk.table()
        return chunk

    with ThreadPoolExecutor(1, thread_name_prefix="judgewise-read") as pool:
        ahead = pool.submit(step)
        while (chunk := ahead.result()) is not None:
            ahead = pool.submit(step)
            yield chunk


class ParquetChunk:
    """A record batch of a Parquet file; ``first_row`` is the file's row number of its first row."""

    def __init__(self, table, first_row: int):
        self._table, self.first_row = table, first_row
        self.progress: tuple[int, int] | None = None  # as JsonlChunk's (rows read as a share of the size)

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

    note_read(path)
    try:
        schema = pq.read_schema(path)
        unique_columns(schema.names, v)
        strings = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
        pf = pq.ParquetFile(path, read_dictionary=strings)  # strings as stored: codes without hashing each row
        if pf.metadata.num_rows == 0:
            raise v.error("the Parquet file has no rows: expected at least one row of data")
        first, size, total = 1, os.path.getsize(path), pf.metadata.num_rows
        for batch in pf.iter_batches(batch_size=chunk_rows or CHUNK_ROWS, columns=columns):
            chunk = ParquetChunk(pa.Table.from_batches([batch]), first)
            check_utf8(chunk.table(), v, first)
            first += batch.num_rows
            chunk.progress = (size * (first - 1) // total, size)
            yield chunk
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise v.error(f"not a readable Parquet file ({exc})") from None


def parquet_columns(path: Path, v: Validator) -> list[str]:
    """The column names of a Parquet file (an error naming it when it is not one)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise v.error(f"not a readable Parquet file ({exc})") from None
    return unique_columns(names, v)
