"""Row validation: vectorised checks that raise InputError at the first bad row, or skip and count bad rows.

Every reader funnels its rows through a :class:`Validator`. A check is a field name, what was expected, and a
vectorised test returning the mask of failing rows; the validator either raises an :class:`InputError` naming
file, row (1-based, as the reader numbers them), field, expected and found, or (``skip_invalid=True``) drops
the failing rows and records one reason per row in the :class:`ReadReport`. Rows are never dropped silently.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgewise.errors import InputError
from judgewise.io.tables import ReadReport

MAX_SHOWN_CHARS = 60
CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
NO_BOOLEANS = {"string", "floating", "integer", "mixed-integer-float", "decimal", "empty"}  # pandas infer_dtype


class _Missing:
    """Marks a field absent from a record (as opposed to present with null); reads as an empty string."""

    def __str__(self) -> str:
        return ""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def show(value) -> str:
    """How a found value is shown in an error message (short, quoted strings, 'nothing' for missing)."""
    if value is MISSING:
        return "nothing (the field is missing)"
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "null (no value)" if value is None else "NaN"
    if isinstance(value, str):
        text = value if len(value) <= MAX_SHOWN_CHARS else value[:MAX_SHOWN_CHARS] + "…"
        text = CONTROL_CHARS.sub(lambda m: repr(m.group())[1:-1], text)  # one line, whatever the value holds
        return '""' if value == "" else f'"{text}"'
    text = repr(value)
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS] + "…"


@dataclass(frozen=True)
class Check:
    """One row rule: ``bad(frame)`` is the mask of failing rows; ``found(frame, i, rows)`` describes row i."""

    field: str
    expected: str
    bad: Callable[[pd.DataFrame], np.ndarray]
    found: Callable[[pd.DataFrame, int, np.ndarray], str] | None = None

    def describe(self, frame: pd.DataFrame, i: int, rows: np.ndarray) -> str:
        if self.found is not None:
            return self.found(frame, i, rows)
        return show(frame[self.field].iloc[i]) if self.field in frame.columns else "nothing (field missing)"


class Validator:
    """Raises or skips-and-counts bad rows of one source file, recording into ``report``."""

    def __init__(self, file: str, report: ReadReport, skip_invalid: bool = False):
        self.file, self.report, self.skip_invalid = str(file), report, skip_invalid

    def error(self, detail: str, *, row: int | None = None, field: str | None = None) -> InputError:
        return InputError(detail, file=self.file, row=row, field=field)

    def reject(self, detail: str, *, row: int, field: str | None = None) -> None:
        """A bad row found while parsing: raise, or (skip_invalid) count it as skipped with its reason."""
        err = self.error(detail, row=row, field=field)
        if not self.skip_invalid:
            raise err
        self.report.skip(str(err))

    def apply(self, frame: pd.DataFrame, rows: np.ndarray, checks: Sequence[Check]) -> tuple[pd.DataFrame, np.ndarray]:
        """Run ``checks`` over ``frame`` (rows numbered by ``rows``); returns the rows that pass."""
        if not len(frame) or not checks:
            return frame, rows
        failing = np.column_stack([np.asarray(c.bad(frame), dtype=bool) for c in checks])
        bad_rows = np.flatnonzero(failing.any(axis=1))
        if not len(bad_rows):
            return frame, rows
        bad_rows = bad_rows[np.argsort(rows[bad_rows], kind="stable")]
        for i in bad_rows:
            check = checks[int(np.argmax(failing[i]))]
            self.reject(f"expected {check.expected}, found {check.describe(frame, int(i), rows)}",
                        row=int(rows[i]), field=check.field)
        keep = np.ones(len(frame), dtype=bool)
        keep[bad_rows] = False
        return frame[keep].reset_index(drop=True), rows[keep]


# ---- reusable masks --------------------------------------------------------------------------------------------

def mark_absent(frame: pd.DataFrame, records: list[dict]) -> pd.DataFrame:
    """Put :data:`MISSING` where a record lacks a field and ``None`` where it is null (DataFrame construction
    would make both NaN), so that messages say what was really found."""
    for col in frame.columns[frame.isna().any().to_numpy()]:
        empty = np.flatnonzero(frame[col].isna().to_numpy())
        found = [records[i].get(col, MISSING) for i in empty]
        marked = [k for k, value in enumerate(found) if value is None or value is MISSING]
        if marked:
            values = np.array(frame[col].to_numpy(), dtype=object)
            values[empty[marked]] = [found[k] for k in marked]
            frame[col] = pd.Series(values, index=frame.index, dtype=object)  # keep None apart from NaN
    return frame


def unmark_absent(frame: pd.DataFrame) -> pd.DataFrame:
    """Back to None for fields that may be absent (optional columns), once checks have run."""
    for col in frame.columns:
        if frame[col].dtype == object:
            values = frame[col].to_numpy()
            absent = np.fromiter((v is MISSING for v in values), dtype=bool, count=len(values))
            if absent.any():
                values = values.copy()
                values[absent] = None
                frame[col] = pd.Series(values, index=frame.index, dtype=object)
    return frame


def given(series: pd.Series) -> np.ndarray:
    """Values present: neither null nor absent from their record (:data:`MISSING`)."""
    if series.dtype != object:  # only an object column can hold the MISSING marker
        return series.notna().to_numpy()
    return series.notna().to_numpy() & np.fromiter((v is not MISSING for v in series), bool, len(series))


def missing_text(series: pd.Series) -> np.ndarray:
    """Null, empty or whitespace-only values (names and ids must be non-empty)."""
    null = series.isna().to_numpy()
    text = series.astype(str).str.strip().to_numpy()
    return null | (text == "")


def _is_name(value) -> bool:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str):
        return value.strip() != "" and not CONTROL_CHARS.search(value)
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def not_a_name(series: pd.Series) -> np.ndarray:
    """Values that cannot be a name or id: null, empty or blank text, text with control characters (a newline
    in a model name), booleans, bytes, lists, objects. Strings and numbers (question ids) are names."""
    if series.dtype.kind in "iuf":
        return ~np.isfinite(series.to_numpy(dtype=float))
    if len(series) > 10_000 and pd.api.types.infer_dtype(series, skipna=True) == "string":  # large text: vectorised
        null = series.isna().to_numpy()
        text = series.astype(object).where(~null, "").astype(str)
        return null | ((text.str.strip() == "") | text.str.contains(CONTROL_CHARS, regex=True)).to_numpy(dtype=bool)
    seen: dict = {}  # names repeat: each distinct value is checked once

    def ok(value) -> bool:
        key = (type(value), value)  # True and 1 hash alike
        try:
            return seen[key]
        except KeyError:
            seen[key] = result = _is_name(value)
            return result
        except TypeError:  # unhashable: a list or an object
            return False

    return ~np.fromiter((ok(v) for v in series), dtype=bool, count=len(series))


def name_text(series: pd.Series) -> pd.Series:
    """Names and ids as the tables keep them: text with surrounding whitespace removed ("A " is model "A"); a
    float id equal to an integer is that integer (``3.0`` is id ``"3"``, as ``3`` is, whichever way a chunk or a
    column typed it)."""
    if series.dtype.kind == "f" or (series.dtype == object and pd.api.types.infer_dtype(series) not in NO_FLOATS):
        series = _integral_floats_as_ints(series)
    return series.astype(str).str.strip()


NO_FLOATS = ("string", "integer", "empty", "boolean", "bytes")  # pandas' inferred types that hold no float
EXACT_INTEGERS = 2.0 ** 53  # floats below this in size that equal an integer are that integer exactly


def _integral_floats_as_ints(series: pd.Series) -> pd.Series:
    """The values, with each float that equals an integer (below 2**53 in size) replaced by that integer."""
    values = series.to_numpy(dtype=object)
    floats = np.fromiter((isinstance(v, float) for v in values), dtype=bool, count=len(values))
    picked = values[floats].astype(np.float64)
    whole = np.isfinite(picked) & (np.abs(picked) < EXACT_INTEGERS) & (picked == np.floor(picked))
    at = np.flatnonzero(floats)[whole]
    out = values.copy()
    out[at] = picked[whole].astype(np.int64)
    return pd.Series(out, index=series.index, dtype=object)


def not_text(series: pd.Series) -> np.ndarray:
    """Null values or values that are not strings (a response text must be a string, possibly empty)."""
    return ~series.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)


def as_number(series: pd.Series) -> np.ndarray:
    """Values as floats; NaN where a value is missing, not numeric, or a boolean."""
    if series.dtype == bool:
        return np.full(len(series), np.nan)
    if series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) not in NO_BOOLEANS:
        series = series.map(lambda v: np.nan if isinstance(v, bool) else v)
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)


def outside(series: pd.Series, low: float, high: float) -> np.ndarray:
    """Values that are not numbers in [low, high] (NaN, text and booleans fail)."""
    values = as_number(series)
    with np.errstate(invalid="ignore"):
        return ~((values >= low) & (values <= high))


def text_field(field: str, what: str) -> Check:
    """A name or id: non-empty text (or a number), no control characters."""
    return Check(field, f"a non-empty {what} (text without control characters)", lambda f: not_a_name(f[field]))


def prose_field(field: str, what: str) -> Check:
    """A text (a prompt, an instruction): a string that is not blank; line breaks and tabs are part of it."""
    return Check(field, f"a non-empty string ({what})", lambda f: not_text(f[field]) | missing_text(f[field]))


def number_field(field: str, low: float, high: float, what: str) -> Check:
    return Check(field, f"a number in [{low:g}, {high:g}] ({what})", lambda f: outside(f[field], low, high))


def duplicate_field(field: str) -> Check:
    """Values seen before in the same column, compared as the text ids become (1 and "1" are one id); absent and
    null values are no id. The message names the first row holding the value."""
    first_of: dict = {}  # the frame last described → {id: position of its first row}

    def ids(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        present = given(frame[field])
        text = frame[field].astype(str).where(present)
        return text.to_numpy(), present & text.duplicated(keep="first").to_numpy()

    def bad(frame: pd.DataFrame) -> np.ndarray:
        return ids(frame)[1]

    def found(frame: pd.DataFrame, i: int, rows: np.ndarray) -> str:
        if first_of.get("frame") is not frame:  # once per frame, not once per duplicate
            text, dup = ids(frame)
            firsts = np.flatnonzero(~dup & pd.notna(text))
            first_of.update(frame=frame, at=dict(zip(text[firsts], firsts)))
        first = first_of["at"][str(frame[field].iloc[i])]
        return f"{show(frame[field].iloc[i])} again (first at row {int(rows[first])})"

    return Check(field, "a unique value", bad, found)
