"""PeerEval judgments JSONL (peereval-ai's ``peereval judge`` output, ``peereval score`` input) as a judgments table.

Each line is one verdict of one judge on one pair of answers in one display order (PeerEval's documented layout)::

    {"dataset": "...", "question_id": "...", "solver_left": "m1", "solver_right": "m2",
     "response_a_model": "m2", "response_b_model": "m1", "judge_model": "j", "position": "BA",
     "judgment": {"winner": "A", "confidence": 0.8, "reason": "..."}}

``winner`` (``A``, ``B`` or ``tie``, any case) refers to the displayed order: the canonical row is ``model_a`` =
``response_a_model`` (the answer shown first, also kept as ``first``), ``model_b`` = ``response_b_model``, ``judge``
= ``judge_model``, ``outcome`` 1 / 0 / 0.5, ``prompt_id`` = ``question_id`` (``dataset`` kept as a column, so
``rank --by dataset`` works). ``position`` is ``AB`` (solver_left shown first) or ``BA`` (solver_right first),
exactly as PeerEval writes it (``ba``, ``XY`` are refused, not guessed); when the shown models are absent they come
from it, so it is then required, and when both are given they must agree. A row with an ``error`` (any value but
null, ``false`` or blank text) is a failed judge call: skipped and counted with its error, whatever its
``judgment`` holds (as every failed game is). A row with no valid winner or position is an InputError naming file,
row and field (or skipped and counted with ``skip_invalid``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io.canonical import validate_table
from judgewise.io.containers import jsonl_records
from judgewise.io.tables import ReadReport, Table
from judgewise.io.validate import MISSING, Check, Validator, show

FORMAT = "peereval"
WINNER_OUTCOME = {"a": 1.0, "b": 0.0, "tie": 0.5}
POSITIONS = ("AB", "BA")  # PeerEval's display orders: solver_left shown first, solver_right shown first
POSITION_EXPECTED = "AB or BA (PeerEval's display order, exactly as written)"


def looks_like_peereval(probe) -> bool:
    """A JSONL file whose first record is a PeerEval verdict (a judgment object on a pair of solvers)."""
    keys = probe.keys
    return "judgment" in keys and "question_id" in keys and (
        {"solver_left", "solver_right"} <= keys or {"response_a_model", "response_b_model"} <= keys)


def _error(record: dict) -> str | None:
    """A failed call's error as text; None when the row has none (absent, null, ``false`` or blank text)."""
    value = record.get("error")
    if value is None or value is False or (isinstance(value, str) and not value.strip()):
        return None
    return str(value)


def _shown(record: dict) -> tuple:
    """The models shown as A and B: ``response_a_model``/``response_b_model``, else from ``position``."""
    a, b = record.get("response_a_model", MISSING), record.get("response_b_model", MISSING)
    if a is MISSING and b is MISSING:
        left, right = record.get("solver_left", MISSING), record.get("solver_right", MISSING)
        a, b = (right, left) if record.get("position") == "BA" else (left, right)
    return a, b


def _position_fault(record: dict) -> str | None:
    """What is wrong with a row's ``position`` (as an error shows it), or None: a value outside
    :data:`POSITIONS`, none where the shown models are absent, or an order the shown models contradict."""
    position = record.get("position", MISSING)
    a, b = record.get("response_a_model", MISSING), record.get("response_b_model", MISSING)
    shown = a is not MISSING or b is not MISSING
    if position is MISSING or position is None:
        return None if shown else f"{show(position)} (response_a_model and response_b_model are absent too)"
    if not (isinstance(position, str) and position in POSITIONS):
        return show(position)
    left, right = record.get("solver_left", MISSING), record.get("solver_right", MISSING)
    first, second = (right, left) if position == "BA" else (left, right)
    if shown and MISSING not in (left, right) and first != second and (a, b) == (second, first):
        said, other = ("solver_right", "solver_left") if position == "BA" else ("solver_left", "solver_right")
        return f"{show(position)} ({said} shown first), but response_a_model {show(a)} is {other}"
    return None


def _winner(record: dict):
    judgment = record.get("judgment")
    return judgment.get("winner", MISSING) if isinstance(judgment, dict) else MISSING


def _outcome(winner) -> float:
    return WINNER_OUTCOME.get(winner.strip().lower(), np.nan) if isinstance(winner, str) else np.nan


def read_peereval(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """A PeerEval judgments file as a canonical judgments table (see module doc)."""
    path = Path(path)
    v = Validator(str(path), ReadReport(source=str(path), format=FORMAT), skip_invalid)
    records, rows = jsonl_records(path, v)
    shown = [_shown(r) for r in records]
    frame = pd.DataFrame({
        "prompt_id": [r.get("question_id", MISSING) for r in records],
        "model_a": [a for a, _ in shown], "model_b": [b for _, b in shown],
        "judge": [r.get("judge_model", MISSING) for r in records],
        "winner": [_winner(r) for r in records],
        "position": [_position_fault(r) for r in records],
        "dataset": [r.get("dataset") for r in records],
        "error": pd.Series([_error(r) for r in records], dtype=object)})
    failed = frame["error"].notna()  # a failed call: no verdict, whatever its judgment says (counted as skipped)
    frame["outcome"] = frame["winner"].map(_outcome).where(~failed)
    frame["first"] = frame["model_a"]
    position = Check("position", POSITION_EXPECTED, lambda f: (f["position"].notna() & f["error"].isna()).to_numpy(),
                     lambda f, i, r: f["position"].iloc[i])
    winner = Check("judgment.winner", "A, B or tie (PeerEval's winner, in the shown order)",
                   lambda f: (f["outcome"].isna() & f["error"].isna()).to_numpy(),
                   lambda f, i, r: show(f["winner"].iloc[i]))
    frame, rows = v.apply(frame, rows, [position, winner])
    frame = frame.drop(columns=["winner", "position"] + ([] if failed.any() else ["error"]))
    if frame["dataset"].isna().all():
        frame = frame.drop(columns=["dataset"])
    return validate_table(frame, rows, "judgments", False, v)
