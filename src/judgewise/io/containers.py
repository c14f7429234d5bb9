"""Reading raw rows out of JSONL, JSON-list, CSV and Parquet files, with 1-based row numbers for every row.

Each function returns ``(frame, rows, tabular)``: a DataFrame of the raw values, the row number of each frame row
in the file (JSONL: line number; JSON list: element index + 1; CSV: data row, header not counted; Parquet: row
index + 1), and whether the file has a fixed header (CSV/Parquet: a missing column is a header error rather
than a row error). Rows that cannot be parsed go through the :class:`Validator` (raise, or skip and count).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.errors import InputError
from judgewise.io.csv_export import restore_texts
from judgewise.io.streams import note_read
from judgewise.io.tables import ReadReport
from judgewise.io.validate import Validator, mark_absent

FREE_TEXT_COLUMNS = ["text"]  # CSV: an empty cell here is an empty string, elsewhere a missing value


def read_bytes(path: Path, v: Validator) -> bytes:
    """The file's bytes; a missing, unreadable or empty file is an error naming it."""
    note_read(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise v.error(f"cannot read the file ({exc.strerror or exc})") from None
    if not data.strip():
        raise v.error("the file is empty: expected at least one row of data")
    return data


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode_utf8(data: bytes, v: Validator, first_line: int = 1) -> str:
    """The text of a whole-file format (CSV, JSON list); non-UTF-8 bytes are an error naming their line (a line
    of the file, not a row: a CSV header and multi-line cells make the two differ). ``first_line``: the file's
    line number of the first line of ``data`` (a chunk further in, where no byte-order mark is removed)."""
    try:
        return data.decode("utf-8-sig" if first_line == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        line = _line_of(data, exc.start) + first_line - 1
        raise v.error(f"byte 0x{data[exc.start]:02x} at line {line} is not UTF-8 (a UTF-16 or Latin-1 file?); "
                      "save the file as UTF-8") from None


# a \uXXXX escape of a lone surrogate in JSON text: a high one not followed by a low one, or a low one alone (a
# pre-filter: a pair, or an escaped backslash before "ud800", is ruled out on the parsed value)
_LONE_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                                    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
LONE_SURROGATE = ("a lone surrogate escape (\\ud800-\\udfff without its pair) is not a character; expected valid "
                  "Unicode text")


def has_lone_surrogate_escape(text: str) -> bool:
    """Whether the JSON ``text`` may hold a lone surrogate (:func:`lone_surrogate_field` then looks at its values)."""
    return _LONE_SURROGATE_ESCAPE.search(text) is not None


def lone_surrogate_field(record: dict) -> str | None:
    """The first field of ``record`` (a parsed JSON object) whose key or value holds a lone surrogate, which no UTF-8
    file, table or store can hold; None when there is none. Callers look only when :func:`has_lone_surrogate_escape`
    says the text may hold one (the common case costs one regex search of the text)."""
    for key, value in record.items():
        if _SURROGATE.search(key) or _holds_surrogate(value):
            return ascii(key) if _SURROGATE.search(key) else key
    return None


def _holds_surrogate(value) -> bool:
    """Whether a parsed JSON value holds a lone surrogate in any string, key or value, however deep (a loop, not
    recursion: JSON nested as deep as the parser allows would pass Python's recursion limit here)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class DuplicateKeyError(ValueError):
    """A JSON object that names one key twice."""


def unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """``json.loads``'s object hook: the object as a dict, or :class:`DuplicateKeyError` when a key appears twice
    (JSON leaves its meaning open: Python keeps the last value, pyarrow refuses the row, so neither is assumed)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise DuplicateKeyError(f"the key {twice!r} appears twice in one object; expected each key once")
    return obj


def parse_json(text: str, v: Validator, *, row: int | None = None, expected: str = "JSON"):
    """``json.loads(text)``; invalid or too deeply nested JSON, or an object with a key twice (:func:`unique_keys`),
    is an InputError naming file (and row)."""
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except RecursionError:
        raise v.error(f"JSON nested too deeply to read; expected {expected}", row=row) from None
    except DuplicateKeyError as exc:
        raise v.error(str(exc), row=row) from None
    except ValueError as exc:
        where = f" at line {exc.lineno} column {exc.colno}" if row is None and hasattr(exc, "lineno") else \
            (f" at column {exc.colno}" if hasattr(exc, "colno") else "")
        raise v.error(f"not valid JSON ({getattr(exc, 'msg', exc)}{where}); expected {expected}", row=row) from None


def _jsonl_lines(data: bytes, v: Validator, first_line: int = 1) -> list[tuple[int, str]]:
    """Non-blank lines with their 1-based line numbers (the first is ``first_line``: a chunk of a file starts
    further in); a line with non-UTF-8 bytes is rejected."""
    raw_lines = data.split(b"\n")
    encoding = "utf-8-sig" if first_line == 1 else "utf-8"  # a byte-order mark only opens a file
    try:
        texts = data.decode(encoding).split("\n")
    except UnicodeDecodeError:
        texts = []
        for number, raw in enumerate(raw_lines, start=first_line):
            try:
                texts.append(raw.decode(encoding))
            except UnicodeDecodeError as exc:
                v.report.rows_read += 1
                v.reject(f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1} is not UTF-8; save the file as "
                         "UTF-8", row=number)
                texts.append("")
    return [(number, text) for number, text in enumerate(texts, start=first_line) if text.strip()]


def _jsonl_fast(lines: list[tuple[int, str]]) -> list[dict] | None:
    """All lines parsed at once, each wrapped in its own brackets so that an object split over two lines (or two
    objects on one line) cannot parse; None when any line is not exactly one JSON object."""
    joined = "[[" + "],\n[".join(text for _, text in lines) + "]]"
    try:
        wrapped = json.loads(joined, object_pairs_hook=unique_keys)
    except (ValueError, RecursionError):
        return None
    if len(wrapped) != len(lines) or not all(len(w) == 1 and isinstance(w[0], dict) for w in wrapped):
        return None
    if has_lone_surrogate_escape(joined) and any(lone_surrogate_field(w[0]) for w in wrapped):
        return None
    return [w[0] for w in wrapped]


def jsonl_records(path: Path, v: Validator) -> tuple[list[dict], np.ndarray]:
    """One JSON object per non-blank line; a malformed line or a non-object is rejected with its line number."""
    return jsonl_bytes_records(read_bytes(path, v), v)


def jsonl_bytes_records(data: bytes, v: Validator, first_line: int = 1) -> tuple[list[dict], np.ndarray]:
    """:func:`jsonl_records` of JSONL bytes whose first line is line ``first_line`` of the file (a chunk)."""
    lines = _jsonl_lines(data, v, first_line)
    v.report.rows_read += len(lines)
    records = _jsonl_fast(lines)  # fast path: one parse of the whole file; line by line to locate a problem
    if records is not None:
        return records, np.array([n for n, _ in lines], dtype=np.int64)
    records, rows = [], []
    for number, text in lines:
        try:
            record = parse_json(text, v, row=number, expected="one JSON object per line")
        except InputError as exc:
            v.reject(exc.detail, row=number)
            continue
        if not isinstance(record, dict):
            v.reject(f"expected a JSON object {{...}}, found {type(record).__name__}", row=number)
            continue
        if has_lone_surrogate_escape(text) and (field := lone_surrogate_field(record)) is not None:
            v.reject(LONE_SURROGATE, row=number, field=field)
            continue
        records.append(record)
        rows.append(number)
    return records, np.array(rows, dtype=np.int64)


def json_list_records(path: Path, v: Validator) -> tuple[list[dict], np.ndarray]:
    """A JSON list of objects (e.g. AlpacaEval's annotations.json); row = element index + 1."""
    text = decode_utf8(read_bytes(path, v), v)
    data = parse_json(text, v, expected="a JSON list of objects")
    if not isinstance(data, list):
        raise v.error(f"expected a JSON list of objects, found a JSON {type(data).__name__}")
    if not data:
        raise v.error("the file is an empty JSON list: expected at least one row of data")
    v.report.rows_read += len(data)
    records, rows = [], []
    escapes = has_lone_surrogate_escape(text)
    for number, record in enumerate(data, start=1):
        if not isinstance(record, dict):
            v.reject(f"expected a JSON object {{...}}, found {type(record).__name__}", row=number)
        elif escapes and (field := lone_surrogate_field(record)) is not None:
            v.reject(LONE_SURROGATE, row=number, field=field)
        else:
            records.append(record)
            rows.append(number)
    return records, np.array(rows, dtype=np.int64)


def records_frame(records: list[dict], rows: np.ndarray) -> tuple[pd.DataFrame, np.ndarray, bool]:
    return mark_absent(pd.DataFrame.from_records(records), records), rows, False


def read_jsonl(path: Path, v: Validator) -> tuple[pd.DataFrame, np.ndarray, bool]:
    return records_frame(*jsonl_records(path, v))


def read_json_list(path: Path, v: Validator) -> tuple[pd.DataFrame, np.ndarray, bool]:
    return records_frame(*json_list_records(path, v))


def _csv_fast(text: str, header: list[str]) -> pd.DataFrame | None:
    """pandas' C parser for well-formed CSVs (every cell as text); None when the careful path is needed."""
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=object, keep_default_na=False, na_filter=False,
                            skip_blank_lines=False)
    except (pd.errors.ParserError, ValueError):
        return None
    if list(frame.columns) != header or frame.isna().to_numpy().any():  # a short row leaves NaN
        return None
    if not isinstance(frame.index, pd.RangeIndex):  # every row one cell longer: pandas made cell 1 the index
        return None
    return frame


CSV_FIELD_LIMIT = (1 << 31) - 1  # characters in one cell: Python's csv module refuses cells past 131,072 by default


def _csv_reader(text: str):
    """``csv.reader`` over ``text`` with cells of any length (a long answer is one cell), as pandas reads them."""
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)
    return csv.reader(io.StringIO(text, newline=""))


def _csv_careful(text: str, header: list[str], v: Validator, first_row: int = 1) -> pd.DataFrame:
    """Python's csv module, row by row: a row with the wrong number of cells is rejected with its number."""
    try:
        body = list(_csv_reader(text))[1:]
    except csv.Error as exc:
        raise v.error(f"not valid CSV ({exc})") from None
    kept, rows = [], []
    for number, cells in enumerate(body, start=first_row):
        if not any(c.strip() for c in cells):
            kept.append([""] * len(header))
        elif len(cells) != len(header):
            v.reject(f"expected {len(header)} cells (as in the header), found {len(cells)}", row=number)
            v.report.rows_read += 1
            continue
        else:
            kept.append(cells)
        rows.append(number)
    frame = pd.DataFrame(kept, columns=header, dtype=object)
    frame.index = np.array(rows, dtype=np.int64) - 1
    return frame


def csv_header(text: str, v: Validator) -> list[str]:
    """The column names of a CSV's first record; each must be named once."""
    try:
        header = next(_csv_reader(text))
    except (csv.Error, StopIteration) as exc:
        raise v.error(f"not valid CSV ({exc})") from None
    if len(set(header)) != len(header) or any(not name.strip() for name in header):
        raise v.error(f"the CSV header must name each column once, found {header}")
    return header


def csv_rows(text: str, header: list[str], v: Validator, first_row: int = 1) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows of CSV ``text`` (its first record the header; the next is row ``first_row`` of the file) as
    text cells, blank rows left out, counted as read; an empty cell is missing except in ``text``."""
    frame = _csv_fast(text, header)
    if frame is not None:
        frame.index = frame.index + (first_row - 1)
    else:
        frame = _csv_careful(text, header, v, first_row)
    blank = (frame == "").to_numpy().all(axis=1)
    rows = frame.index.to_numpy(dtype=np.int64)[~blank] + 1
    frame = frame[~blank].reset_index(drop=True)
    v.report.rows_read += len(frame)
    for col in frame.columns:
        frame[col] = restore_texts(frame[col])  # the quote a CSV judgewise wrote put before a formula start
    for col in frame.columns.difference(FREE_TEXT_COLUMNS):
        frame[col] = frame[col].mask(frame[col] == "", None)
    return frame, rows


def read_csv(path: Path, v: Validator) -> tuple[pd.DataFrame, np.ndarray, bool]:
    """A CSV with a header row; every value is text; an empty cell is missing (except in ``text``, where it is
    an empty response); blank lines are ignored; ragged rows are rejected."""
    text = decode_utf8(read_bytes(path, v), v)
    header = csv_header(text, v)
    frame, rows = csv_rows(text, header, v)
    require_csv_rows(frame, v)
    return frame, rows, True


def require_csv_rows(frame: pd.DataFrame, v: Validator) -> None:
    """A CSV read whole or in chunks must hold a data row (or have skipped one): the error names the file."""
    if not len(frame) and not v.report.rows_skipped:
        raise v.error("the CSV has a header but no data rows")


def unique_columns(names: list[str], v: Validator) -> list[str]:
    """The column names of a Parquet file, an error naming the first that appears more than once (Parquet allows
    it; a table cannot tell the two apart)."""
    twice = next((name for name in names if names.count(name) > 1), None) if len(set(names)) < len(names) else None
    if twice is not None:
        raise v.error(f"column {twice!r} appears {names.count(twice)} times in the Parquet file: each column must be "
                      "named once (rename or drop the copies)")
    return list(names)


def check_utf8(table, v: Validator, first_row: int = 1) -> None:
    """Raise an error naming row and field when a text column of the Arrow ``table`` (rows numbered from
    ``first_row``) holds bytes that are not UTF-8: Parquet's writers do not all check, and pandas cannot read them.
    Checked by Arrow on the stored values (a dictionary column: on its dictionary), then located only when bad."""
    import pyarrow as pa

    for name, column in zip(table.column_names, table.columns):
        offset = first_row
        for chunk in column.chunks:
            values = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
            if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
                try:
                    values.validate(full=True)
                except pa.ArrowInvalid:
                    row = _first_invalid_utf8(chunk)
                    if row is not None:
                        raise v.error("holds bytes that are not UTF-8 text; write the file's strings as UTF-8",
                                      row=offset + row, field=name) from None
            offset += len(chunk)


def _first_invalid_utf8(chunk) -> int | None:
    """The position of the first value of a string (or dictionary-of-string) Arrow array that is not UTF-8; None
    when only dictionary entries no row of ``chunk`` uses are (a Parquet dictionary serves every batch)."""
    import pyarrow as pa

    dictionary = pa.types.is_dictionary(chunk.type)
    values = chunk.dictionary if dictionary else chunk
    raw_values = values.view(pa.binary() if pa.types.is_string(values.type) else pa.large_binary()).to_pylist()
    bad = {i for i, raw in enumerate(raw_values) if raw is not None and not _is_utf8(raw)}
    codes = chunk.indices.to_pylist() if dictionary else range(len(chunk))
    return next((row for row, code in enumerate(codes) if code in bad), None)


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_parquet(path: Path, v: Validator) -> tuple[pd.DataFrame, np.ndarray, bool]:
    """A Parquet file; row = index + 1."""
    import pyarrow.parquet as pq

    note_read(path)
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:
        raise v.error(f"not a readable Parquet file ({exc})") from None
    table = table.select(unique_columns(table.column_names, v))
    check_utf8(table, v)
    frame = table.to_pandas()
    if not len(frame):
        raise v.error("the Parquet file has no rows: expected at least one row of data")
    v.report.rows_read += len(frame)
    return frame.reset_index(drop=True), np.arange(1, len(frame) + 1, dtype=np.int64), True


def read_dataframe(frame: pd.DataFrame, v: Validator) -> tuple[pd.DataFrame, np.ndarray, bool]:
    """A pandas DataFrame given directly; row = position + 1."""
    if not len(frame):
        raise v.error("the DataFrame has no rows: expected at least one row of data")
    v.report.rows_read += len(frame)
    return frame.reset_index(drop=True), np.arange(1, len(frame) + 1, dtype=np.int64), True


CONTAINERS = {
    "jsonl": read_jsonl,
    "json": read_json_list,
    "csv": read_csv,
    "parquet": read_parquet,
}

TABLE_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
"""The container of a plain table file (a prompts, correctness or grades table), by its suffix in any case."""


def table_container(path: Path, v: Validator, expected: str) -> str:
    """The container of ``path`` (:data:`TABLE_SUFFIXES`); another suffix is an error saying ``expected``."""
    kind = TABLE_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise v.error(f"{expected}, found '{path.suffix}'")
    return kind


def read_table(path: str | Path) -> pd.DataFrame:
    """A plain table file (JSONL, JSON list, CSV or Parquet) as a DataFrame of its raw values; a file that cannot
    be read, a bad row or another suffix is an :class:`InputError` naming the file."""
    path = Path(path)
    v = Validator(str(path), ReadReport(str(path), "table"))
    kind = table_container(path, v, "expected a .jsonl, .json, .csv or .parquet table")
    return CONTAINERS[kind](path, v)[0]
