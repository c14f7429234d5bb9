"""Judgments read column by column: names checked on their distinct values, models as integer codes per chunk.

The fast path of the judgments readers (Arena battles, canonical JSONL/CSV/Parquet tables). Each chunk of the file
(:mod:`judgewise.io.chunks`) is parsed by pyarrow; each name column is dictionary-encoded and the name rules of
:mod:`judgewise.io.validate` (non-empty, no control characters, surrounding whitespace removed) run on its
distinct values only, so a chunk of 300,000 battles among 150 models costs 150 checks, not 300,000. A chunk
that is not clean (a null, a bad name, an unknown winner, a line pyarrow cannot read) is read again row by row by
the format's own reader, which raises — or skips and counts — with the same message naming file, row and field as
before. Chunks are kept only as integer codes (plus their distinct names); at the end the codes of all chunks are
unified into one pandas ``Categorical`` per column, categories in order of first appearance (``model_a`` before
``model_b``, as :func:`judgewise.ratings.encode.encode` numbers models), so rankings are the same as from the
row-by-row path. Memory: two chunks (one coded while the next is parsed) plus a few bytes per row. CSV cells are
all text: a number column is read by reading each of its distinct texts as the row reader does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.errors import InputError
from judgewise.io.canonical import VERDICTS, finish_table, infer_kind, read_canonical, validate_rows
from judgewise.io.chunks import csv_chunks, jsonl_chunks, parquet_chunks, parquet_columns, read_ahead
from judgewise.io.containers import records_frame, require_csv_rows
from judgewise.io.progress import report
from judgewise.io.tables import ReadReport
from judgewise.io.validate import Validator, as_number, name_text, not_a_name

NAME_COLUMNS = ("prompt_id", "model_a", "model_b", "judge")
PLAIN_NAME = r"^[\x21-\x7e](?:[^\x00-\x1f\x7f]*[\x21-\x7e])?$"  # no whitespace to strip, no control character


class NotColumnar(Exception):
    """The file has columns the fast path does not carry: read it whole with the row-by-row reader."""


@dataclass
class CodedChunk:
    """One chunk's rows: each name column as (codes, distinct names) — codes None when every row has names[0] —
    and each number column as floats, or as (codes, distinct values) when it comes from a few labels."""

    rows: int
    names: dict = field(default_factory=dict)
    numbers: dict = field(default_factory=dict)


def _pa():
    import pyarrow as pa
    import pyarrow.compute as pc

    return pa, pc


def _clean_names(values, pa, pc):
    """Distinct values → their names as the tables keep them, or None when one is no name (``validate``)."""
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        if _visible_ascii(values, pa) or pc.all(pc.match_substring_regex(values, PLAIN_NAME)).as_py():
            return values.cast(pa.string())
    elif pa.types.is_integer(values.type):
        return values.cast(pa.string())  # str(int) == arrow's decimal text
    series = pd.Series(values.to_pylist(), dtype=object)
    if not_a_name(series).any():
        return None
    return pa.array(name_text(series).to_numpy(dtype=object), pa.string())


def _visible_ascii(values, pa) -> bool:
    """Whether every value (a text array without nulls) is non-empty and made of visible ASCII characters only (no
    space): a test of :data:`PLAIN_NAME` on the array's bytes at once, no per-value regex; False says nothing."""
    if values.null_count or not len(values):
        return False
    width = np.int64 if pa.types.is_large_string(values.type) else np.int32
    _, offsets, data = values.buffers()
    offsets = np.frombuffer(offsets, dtype=width)[values.offset:values.offset + len(values) + 1]
    text = np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]] if data is not None else np.empty(0, np.uint8)
    return bool(np.all(np.diff(offsets) > 0) and text.min() >= 0x21 and text.max() <= 0x7E)


def distinct_codes(column):
    """(codes, distinct values) of a column, distinct values in order of first appearance; a dictionary column
    (Parquet strings read as stored) keeps its dictionary, reordered, instead of hashing every row again."""
    pa, pc = _pa()
    if pa.types.is_dictionary(column.type) and column.num_chunks == 1:
        stored = column.chunk(0)
        seen = pc.unique(stored.indices)  # first appearance; a dictionary may hold values this chunk lacks
        lookup = np.zeros(len(stored.dictionary), dtype=np.int32)
        lookup[seen.to_numpy(zero_copy_only=False)] = np.arange(len(seen), dtype=np.int32)
        return lookup[stored.indices.to_numpy(zero_copy_only=False)], stored.dictionary.take(seen)
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    encoded = pc.dictionary_encode(column).combine_chunks()
    return encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary


def value_type(column):
    """The type of a column's values (a dictionary column's value type)."""
    pa, _ = _pa()
    return column.type.value_type if pa.types.is_dictionary(column.type) else column.type


def name_codes(column, *, json: bool):
    """(codes, names) of a name column, or None when it holds a null or a value that is no name. ``json``: only
    text and integers (a JSON float id would print differently from Python's ``str``)."""
    pa, pc = _pa()
    kind = value_type(column)
    allowed = pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind) or (
        not json and pa.types.is_floating(kind))
    if not allowed or column.null_count:
        return None
    codes, distinct = distinct_codes(column)
    names = _clean_names(distinct, pa, pc)
    if names is None:
        return None
    return _compact(codes, len(names)), names


def _compact(codes: np.ndarray, n: int) -> np.ndarray:
    """Codes in the smallest integer type that holds ``n`` ids (a chunk's codes stay in memory until the end)."""
    dtype = np.int8 if n < 127 else np.int16 if n < 32_767 else np.int32
    return codes if codes.dtype == dtype else codes.astype(dtype)


def distinct_pairs(a: tuple, b: tuple) -> bool:
    """True when no row compares a model with itself (names compared after cleaning)."""
    pa, pc = _pa()
    joint = pc.dictionary_encode(pa.concat_arrays([a[1], b[1]])).indices.to_numpy(zero_copy_only=False)
    return not np.any(joint[:len(a[1])][a[0]] == joint[len(a[1]):][b[0]])


def mapped_numbers(column, value: Callable) -> tuple[np.ndarray, np.ndarray] | None:
    """A column of labels mapped through ``value`` (applied to each distinct label) as (codes, values), or None
    on a null or a NaN result."""
    if column.null_count:
        return None
    codes, distinct = distinct_codes(column)
    table = np.array([value(x) for x in distinct.to_pylist()], dtype=np.float64)
    if np.isnan(table).any():
        return None
    return _compact(codes, len(table)), table


def number_column(column, low: float, high: float, *, nulls: bool = False) -> np.ndarray | None:
    """A numeric column as floats, or None when a value is not a number in [low, high] (a null is NaN when
    ``nulls`` allows it)."""
    pa, _ = _pa()
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        return None
    if column.null_count and not nulls:
        return None
    values = column.to_numpy().astype(np.float64) if not column.null_count else \
        column.cast(pa.float64()).to_numpy()
    with np.errstate(invalid="ignore"):
        ok = (values >= low) & (values <= high)
    if nulls:
        ok |= np.isnan(values)
    return values if ok.all() else None


def coded_frame(frame: pd.DataFrame, numbers: Iterable[str]) -> CodedChunk:
    """A validated canonical chunk (the row-by-row path's result) as codes."""
    pa, pc = _pa()
    coded = CodedChunk(len(frame))
    for col in NAME_COLUMNS:
        encoded = pc.dictionary_encode(pa.array(frame[col].astype(str).to_numpy(dtype=object), pa.string()))
        coded.names[col] = (encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary)
    for col in numbers:
        coded.numbers[col] = frame[col].to_numpy(dtype=np.float64)
    return coded


def _id_maps(parts: list[tuple]) -> tuple[list[np.ndarray], list[str]]:
    """For each part's distinct names, their ids in one shared space (ids in order of first appearance), and the
    names of that space."""
    pa, pc = _pa()
    encoded = pc.dictionary_encode(pa.concat_arrays([names for _, names in parts]))
    ids = encoded.indices.to_numpy(zero_copy_only=False)
    bounds = np.cumsum([0] + [len(names) for _, names in parts])
    return [ids[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])], encoded.dictionary.to_pylist()


def _category_dtype(n: int):
    """The code type pandas gives a Categorical of ``n`` categories (so that from_codes does not copy)."""
    return np.int8 if n < 127 else np.int16 if n < 32_767 else np.int32 if n < 2**31 - 1 else np.int64


def _join(chunks: list[CodedChunk], col: str, maps: list[np.ndarray], dtype, numbers: bool = False) -> np.ndarray:
    """The column of every chunk through its map, written into one array; each chunk's part is freed as it goes."""
    out = np.empty(sum(c.rows for c in chunks), dtype=dtype)
    start = 0
    for chunk, lookup in zip(chunks, maps):
        codes, _ = (chunk.numbers if numbers else chunk.names).pop(col)
        part = out[start:start + chunk.rows]
        if codes is None:
            part[:] = lookup[0]
        else:
            np.take(lookup.astype(dtype, copy=False), codes, out=part)
        start += chunk.rows
    return out


def _names_columns(chunks: list[CodedChunk], cols: tuple[str, ...]) -> list[pd.Categorical]:
    """Name columns sharing one category list (model_a and model_b do), categories in order of first
    appearance over the columns in turn."""
    maps, names = _id_maps([c.names[col] for col in cols for c in chunks])
    dtype = _category_dtype(len(names))
    categories = pd.Index(names, dtype=object)  # plain str: iterated fast (pandas 3 would store them in Arrow)
    return [pd.Categorical.from_codes(_join(chunks, col, maps[k * len(chunks):(k + 1) * len(chunks)], dtype),
                                      categories=categories, validate=False) for k, col in enumerate(cols)]


def _floats(numbers) -> np.ndarray:
    return numbers[1][numbers[0]] if isinstance(numbers, tuple) else numbers


def assemble(chunks: list[CodedChunk], columns: list[str]) -> pd.DataFrame:
    """One frame of all chunks: name columns as Categoricals (models share one category list), numbers as floats,
    columns in the order given; each chunk's codes are freed once copied."""
    if not chunks:
        return pd.DataFrame({col: pd.Series([], dtype=float if col not in NAME_COLUMNS else object)
                             for col in columns})
    out = {}
    out["prompt_id"], = _names_columns(chunks, ("prompt_id",))
    out["judge"], = _names_columns(chunks, ("judge",))
    out["model_a"], out["model_b"] = _names_columns(chunks, ("model_a", "model_b"))
    for col in [c for c in columns if c not in NAME_COLUMNS]:
        if all(isinstance(c.numbers[col], tuple) for c in chunks):
            maps = [c.numbers[col][1] for c in chunks]
            out[col] = _join(chunks, col, maps, np.float64, numbers=True)
        else:
            out[col] = np.concatenate([_floats(c.numbers.pop(col)) for c in chunks])
    return pd.DataFrame({col: out[col] for col in columns}, copy=False)  # fresh arrays: not copied into one block


def read_coded(chunks: Iterable, fast: Callable, careful: Callable, v, columns: list[str]) -> pd.DataFrame:
    """Read every chunk: ``fast(table)`` → CodedChunk or None (not clean); ``careful(chunk)`` → the chunk's
    validated frame from the row-by-row reader (which raises or skips with the format's own messages). Progress
    is reported after each chunk (:mod:`judgewise.io.progress`)."""
    numbers = [c for c in columns if c not in NAME_COLUMNS]
    coded = []
    for chunk in read_ahead(chunks):
        table = chunk.table()
        done = fast(table) if table is not None else None
        if done is not None:
            v.report.rows_read += table.num_rows
        else:
            done = coded_frame(careful(chunk), numbers)
        coded.append(done)
        if chunk.progress is not None:
            report(v.file, *chunk.progress)  # a bar, when the caller listens (io.progress)
    frame = assemble(coded, columns)
    _pa()[0].default_memory_pool().release_unused()  # pyarrow's freed chunks back to the system, for the fits
    return frame


FAST_JUDGMENT_COLUMNS = ("prompt_id", "model_a", "model_b", "judge", "outcome", "verdict")


def canonical_chunk(table, *, json: bool) -> CodedChunk | None:
    """A chunk of a canonical judgments table as codes (None: not clean). NotColumnar for other columns."""
    if not set(table.column_names) <= set(FAST_JUDGMENT_COLUMNS):
        raise NotColumnar(f"columns {sorted(set(table.column_names) - set(FAST_JUDGMENT_COLUMNS))}")
    if not set(FAST_JUDGMENT_COLUMNS[:5]) <= set(table.column_names):
        return None
    coded = CodedChunk(table.num_rows)
    for col in NAME_COLUMNS:
        coded.names[col] = name_codes(table[col], json=json)
        if coded.names[col] is None:
            return None
    outcome = _numbers(table["outcome"], 0.0, 1.0)
    if outcome is None or not distinct_pairs(coded.names["model_a"], coded.names["model_b"]):
        return None
    coded.numbers["outcome"] = outcome
    if "verdict" in table.column_names:
        verdict = _numbers(table["verdict"], -2.0, 2.0, nulls=True)
        values = None if verdict is None else verdict[1] if isinstance(verdict, tuple) else verdict
        if values is None or not np.isin(values[~np.isnan(values)], VERDICTS).all():  # distinct values suffice
            return None
        coded.numbers["verdict"] = verdict
    return coded


def _numbers(column, low: float, high: float, *, nulls: bool = False):
    """A number column (:func:`number_column`), or a text one (CSV) read as the row reader reads each distinct
    text (:func:`judgewise.io.validate.as_number`; an empty cell is a null)."""
    pa, _ = _pa()
    kind = value_type(column)
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        return number_column(column, low, high, nulls=nulls)
    return text_numbers(column, low, high, nulls=nulls)


def text_numbers(column, low: float, high: float, *, nulls: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
    """A column of numbers written as text (CSV cells) as (codes, distinct values), each distinct text read by
    :func:`judgewise.io.validate.as_number`; None when one is not a number in [low, high] (an empty cell is a
    null: NaN when ``nulls`` allows it)."""
    if column.null_count:
        return None
    codes, distinct = distinct_codes(column)
    texts = pd.Series(distinct.to_pylist(), dtype=object)
    values = np.array(as_number(texts), dtype=np.float64)
    empty = (texts == "").to_numpy()
    with np.errstate(invalid="ignore"):
        ok = (values >= low) & (values <= high)
    if not (ok | (empty & nulls)).all():
        return None
    values[empty] = np.nan
    return _compact(codes, len(values)), values


def read_canonical_columnar(path, container: str, v, kind: str | None = None):
    """A canonical judgments table from JSONL, CSV or Parquet through the fast path (NotColumnar: another table,
    columns the fast path does not carry, or a CSV with quoted cells)."""
    if container == "parquet":
        columns = parquet_columns(path, v)
        chunks = parquet_chunks(path, v)
    elif container == "csv":
        columns, chunks = csv_chunks(path, v) or (None, None)
        if columns is None:
            raise NotColumnar("a CSV whose header is quoted or not UTF-8")
    else:
        chunks = jsonl_chunks(path, v)
        first = next(chunks)
        table = first.table()
        columns = table.column_names if table is not None else []
        chunks = _prepend(first, chunks)
    try:
        judgments = infer_kind(columns, v) == "judgments"
    except InputError:
        judgments = kind == "judgments"
    if not judgments or not set(columns) <= set(FAST_JUDGMENT_COLUMNS):
        raise NotColumnar("not a judgments table of the fast path's columns")
    order = [c for c in columns if c in FAST_JUDGMENT_COLUMNS]
    order += [c for c in FAST_JUDGMENT_COLUMNS[:5] if c not in order]

    def careful(chunk):
        if getattr(chunk, "quoted", False):  # a quoted cell may hold a newline: lines are no longer rows
            raise NotColumnar("a CSV with quoted cells")
        frame, rows = chunk.frame(v) if container != "jsonl" else records_frame(*chunk.records(v))[:2]
        if not set(frame.columns) <= set(FAST_JUDGMENT_COLUMNS):
            raise NotColumnar("a chunk has other columns")
        return validate_rows(frame, rows, "judgments", container != "jsonl", v)

    frame = read_coded(chunks, lambda t: canonical_chunk(t, json=container != "parquet"), careful, v, order)
    if container == "csv":
        require_csv_rows(frame, v)  # as the whole-file reader says it
    return finish_table(frame, "judgments", v)


def read_canonical_fast(path, container: str, *, skip_invalid: bool = False, kind: str | None = None):
    """A canonical table: judgments in JSONL, CSV or Parquet through the fast path, anything else (or columns it
    does not carry) through :func:`judgewise.io.canonical.read_canonical`."""
    if container in ("jsonl", "parquet", "csv") and kind in (None, "judgments"):
        v = Validator(str(path), ReadReport(source=str(path), format=container), skip_invalid)
        try:
            return read_canonical_columnar(Path(path), container, v, kind)
        except NotColumnar:
            pass
    return read_canonical(path, container, skip_invalid=skip_invalid, kind=kind)


def _prepend(first, rest):
    yield first
    yield from rest
