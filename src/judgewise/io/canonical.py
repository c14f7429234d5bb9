"""Canonical tables from JSONL / JSON / CSV / Parquet files or DataFrames: which table it is, row checks, types.

The schemas are in :mod:`judgewise.io.tables`. Checks per table (each failure names file, row, field):

* names and ids (every table): non-empty text or numbers without control characters; surrounding whitespace
  is removed (``"A "`` and ``"A"`` are the same model);
* judgments: ``prompt_id``, ``model_a``, ``model_b``, ``judge`` names; ``outcome`` a number in [0, 1];
  ``model_a`` ≠ ``model_b``; ``verdict`` (if given) in {-2, -1, 0, 1, 2}; ``judgment_id`` (if given) unique.
  A row with an ``error`` and no outcome (a failed judge call, as ``judgewise store export`` writes them) is not
  rated: it is counted as skipped with its error, without needing ``skip_invalid``.
* responses: ``prompt_id``, ``model`` non-empty; ``text`` a string; one response per (prompt_id, model).
* scores: ``item_id``, ``rater`` non-empty; ``score`` a finite number.
* grades (columns ``model`` and ``score``, no ``text``): ``prompt_id``, ``model``, ``judge`` non-empty; ``score`` a
  finite number, or nothing on a row with an ``error`` (a failed grade, kept so that rankings count it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.errors import InputError
from judgewise.io.containers import CONTAINERS, read_dataframe
from judgewise.io.schema import TABLE_KINDS, VERDICT5, failed_mask, missing_columns, require_columns
from judgewise.io.tables import ReadReport, Table
from judgewise.io.validate import (MISSING, Check, Validator, as_number, duplicate_field, given,
                                   name_text, not_a_name, not_text, number_field, show, text_field, unmark_absent)

VERDICTS = tuple(sorted(VERDICT5.values()))  # -2..2
TEXT_COLUMNS = {
    "judgments": ("prompt_id", "model_a", "model_b", "judge"),
    "responses": ("prompt_id", "model"),
    "scores": ("item_id", "rater"),
    "grades": ("prompt_id", "model", "judge"),
}
NUMBER_COLUMNS = {"judgments": ("outcome",), "responses": (), "scores": ("score",), "grades": ("score",)}


def infer_kind(columns, v: Validator) -> str:
    """Which canonical table the columns describe (judgments, responses or scores)."""
    cols = set(map(str, columns))
    if {"model_a", "model_b"} & cols or "outcome" in cols:
        return "judgments"
    if {"model", "score"} <= cols and "text" not in cols:
        return "grades"
    if "text" in cols or {"model", "prompt_id"} <= cols:
        return "responses"
    if {"item_id", "rater", "score"} & cols:
        return "scores"
    expected = "; ".join(f"{kind}: {', '.join(req)}" for kind, req in TABLE_KINDS.items())
    raise v.error(f"cannot tell which table this is: found columns {sorted(cols)}, expected the columns of one "
                  f"of the canonical tables ({expected}), or pass `format` for a foreign format")


def _verdict_check() -> Check:
    def bad(frame: pd.DataFrame) -> np.ndarray:
        return given(frame["verdict"]) & ~np.isin(as_number(frame["verdict"]), VERDICTS)

    return Check("verdict", "an integer in {-2, -1, 0, 1, 2} (5-way verdict, A's view) or nothing", bad)


def _same_model_check() -> Check:
    def bad(frame: pd.DataFrame) -> np.ndarray:
        return (name_text(frame["model_a"]) == name_text(frame["model_b"])).to_numpy()

    def found(frame: pd.DataFrame, i: int, rows: np.ndarray) -> str:
        return f"model_a = model_b = {show(frame['model_a'].iloc[i])}"

    return Check("model_b", "a different model from model_a", bad, found)


def _finite_check(field: str) -> Check:
    return Check(field, "a finite number", lambda f: ~np.isfinite(as_number(f[field])))


def checks_for(kind: str, columns) -> list[Check]:
    """The row checks of a canonical table (optional columns are checked only when present)."""
    checks = [text_field(col, "name or id") for col in TEXT_COLUMNS[kind]]
    if kind == "judgments":
        checks.append(number_field("outcome", 0, 1, "model_a's result: 1 win, 0 loss, 0.5 tie"))
        checks.append(_same_model_check())
        if "verdict" in columns:
            checks.append(_verdict_check())
        if "judgment_id" in columns:
            checks.append(Check("judgment_id", "a text or number id, or nothing",
                                lambda f: given(f["judgment_id"]) & not_a_name(f["judgment_id"])))
            checks.append(duplicate_field("judgment_id"))
    elif kind == "responses":
        checks.append(Check("text", "a string (the response text)", lambda f: not_text(f["text"])))
    elif kind == "grades":
        checks.append(_grade_score_check())
    else:
        checks.append(_finite_check("score"))
    return checks


def _grade_score_check() -> Check:
    """A grade's score: a finite number, or nothing when the row records a failed grade (a text ``error``)."""
    def bad(frame: pd.DataFrame) -> np.ndarray:
        failed = ~not_text(frame["error"]) if "error" in frame.columns else np.zeros(len(frame), dtype=bool)
        return ~np.isfinite(as_number(frame["score"])) & ~failed

    return Check("score", "a finite number (the rating), or nothing with an error (a failed grade)", bad)


def _pair_duplicates(frame: pd.DataFrame, rows: np.ndarray, v: Validator) -> tuple[pd.DataFrame, np.ndarray]:
    """Responses: one text per (prompt_id, model)."""
    key = name_text(frame["prompt_id"]) + "\x00" + name_text(frame["model"])
    dup = Check("prompt_id", "one response per (prompt_id, model)",
                lambda f: key.duplicated(keep="first").to_numpy(),
                lambda f, i, r: f"a second response of model {show(f['model'].iloc[i])} to prompt "
                                f"{show(f['prompt_id'].iloc[i])}")
    return v.apply(frame, rows, [dup])


def _drop_failed_judgments(frame: pd.DataFrame, rows: np.ndarray, v: Validator) -> tuple[pd.DataFrame, np.ndarray]:
    """Judgments whose judge call failed (``error`` set, no outcome) are not rated: counted as skipped, with the
    error as reason, whether or not ``skip_invalid`` is set (they are recorded failures, not malformed rows)."""
    if "error" not in frame.columns or "outcome" not in frame.columns:
        return frame, rows
    failed = failed_mask(frame)  # the one rule (io.schema)
    errors = frame["error"].to_numpy()
    for i in np.flatnonzero(failed):
        v.report.skip(str(v.error(f"judge call failed ({show(errors[i])}); not rated", row=int(rows[i]),
                                  field="error")))
    return frame[~failed].reset_index(drop=True), rows[~failed]


def _require_columns(frame: pd.DataFrame, kind: str, tabular: bool, v: Validator) -> pd.DataFrame:
    """A table with a header must have every required column; record rows lacking a field fail per row."""
    if tabular:
        require_columns(frame, TABLE_KINDS[kind], file=v.file, what=f"the {kind} header")
    for col in missing_columns(frame.columns, TABLE_KINDS[kind]):
        frame[col] = MISSING
    return frame


def coerce(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Canonical dtypes: ids and names as str without surrounding whitespace ("A " and "A" are one model),
    outcome/score/verdict as float."""
    for col in TEXT_COLUMNS[kind]:
        frame[col] = name_text(frame[col])
    if kind == "responses":
        frame["text"] = frame["text"].astype(str)
    for col in NUMBER_COLUMNS[kind]:
        frame[col] = as_number(frame[col])
    if kind == "judgments" and "verdict" in frame.columns:
        frame["verdict"] = as_number(frame["verdict"])
    if kind == "judgments" and "judgment_id" in frame.columns:
        if not isinstance(frame["judgment_id"].dtype, pd.StringDtype):  # a text column is already that
            frame["judgment_id"] = frame["judgment_id"].map(lambda x: None if pd.isna(x) else str(x))
    return frame


def validate_rows(frame: pd.DataFrame, rows: np.ndarray, kind: str, tabular: bool, v: Validator) -> pd.DataFrame:
    """Check, clean and type raw rows (a whole file, or one chunk of it) as the canonical ``kind`` table."""
    frame = _require_columns(frame.copy(), kind, tabular, v)
    if kind == "judgments":
        frame, rows = _drop_failed_judgments(frame, rows, v)
    frame, rows = v.apply(frame, rows, checks_for(kind, frame.columns))
    if not tabular:  # only records can lack a field
        frame = unmark_absent(frame)
    if kind == "responses":
        frame, rows = _pair_duplicates(frame, rows, v)
    return coerce(frame, kind)


def finish_table(frame: pd.DataFrame, kind: str, v: Validator) -> Table:
    """The Table of validated rows; an error when no row is left (the report counts what was used)."""
    if not len(frame):
        raise v.error(f"no valid rows: all {v.report.rows_read} rows were skipped "
                      f"(first reason: {v.report.skipped_reasons[:1]})")
    v.report.rows_used = len(frame)
    return Table(kind, frame, v.report)


def validate_table(frame: pd.DataFrame, rows: np.ndarray, kind: str, tabular: bool, v: Validator) -> Table:
    """Check, clean and type a raw frame as the canonical ``kind`` table; the report counts what was used."""
    return finish_table(validate_rows(frame, rows, kind, tabular, v), kind, v)


def _kind(columns, wanted: str | None, v: Validator) -> str:
    """The table the columns describe; when they describe none, the one the caller wants (if any)."""
    try:
        return infer_kind(columns, v)
    except InputError:
        if wanted is None:
            raise
        return wanted


def read_canonical(path: Path, container: str, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """Read a canonical table stored as ``container`` (jsonl, json, csv, parquet); which table is inferred from
    the columns (``kind`` is used when the columns fit none). The row-by-row reader: judgments in JSONL or Parquet
    are read by :func:`judgewise.io.columnar.read_canonical_fast`, which comes back here for what it does not carry."""
    v = Validator(str(path), ReadReport(source=str(path), format=container), skip_invalid)
    frame, rows, tabular = CONTAINERS[container](Path(path), v)
    return validate_table(frame, rows, _kind(frame.columns, kind, v), tabular, v)


def from_dataframe(frame: pd.DataFrame, *, kind: str | None = None, skip_invalid: bool = False,
                   name: str = "<DataFrame>") -> Table:
    """Validate a pandas DataFrame as a canonical table (row = position + 1)."""
    v = Validator(name, ReadReport(source=name, format="dataframe"), skip_invalid)
    frame, rows, tabular = read_dataframe(frame, v)
    return validate_table(frame, rows, _kind(frame.columns, kind, v), tabular, v)


