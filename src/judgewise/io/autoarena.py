"""AutoArena head-to-head files (CSV or Parquet; JSONL when forced): one judged game per row, as a judgments table.

AutoArena (kolenaIO/autoarena) compares two models' ``response`` to the same ``prompt`` and records which won. Its
head-to-head rows are ``prompt, model_a, model_b, response_a, response_b, winner`` with ``winner`` ``A`` (model_a's
response won), ``B`` (model_b's) or ``-`` (a tie; ``a``/``b`` and surrounding spaces are read as ``A``/``B``, any other
value is refused), and optionally the ``judge`` that voted. The prompt is free text (line breaks kept). Each row becomes a
canonical judgment ``prompt_id, model_a, model_b, judge, outcome`` (outcome 1 / 0 / 0.5), its prompt id the hash of
the prompt text (the same text has the same id in every file); a missing ``judge`` column reads as judge
``unknown``. The responses are attached as ``extras["responses"]`` (``prompt_id, model, text, instruction``; the
first text of a model on a prompt is kept). A bad row (no prompt, an unknown winner, a model name missing or the
same on both sides) is an InputError naming file, row and field, or skipped and counted with ``skip_invalid``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io.canonical import validate_table
from judgewise.io.containers import CONTAINERS
from judgewise.io.schema import require_columns, text_prompt_id
from judgewise.io.tables import ReadReport, Table
from judgewise.io.validate import Check, Validator, prose_field, show

FORMAT = "autoarena"
REQUIRED = ("prompt", "model_a", "model_b", "winner")
WINNER_OUTCOME = {"A": 1.0, "B": 0.0, "-": 0.5}
UNKNOWN_JUDGE = "unknown"
PROMPT_ID_PREFIX = "aa-"
CONTAINER_OF = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}  # anything else: JSONL


def looks_like_autoarena(probe) -> bool:
    """A file whose first record has AutoArena's head-to-head fields (prompt and winner beside the two models; a
    battle log's ``question_id`` or a canonical ``outcome`` says it is something else)."""
    return set(REQUIRED) <= probe.keys and not {"outcome", "question_id", "uid"} & probe.keys


def winner_outcome(winner) -> float:
    """model_a's result for an AutoArena ``winner`` (``A``, ``B``, ``-``; NaN for anything else)."""
    return WINNER_OUTCOME.get(winner.strip().upper(), np.nan) if isinstance(winner, str) else np.nan


def read_autoarena(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """An AutoArena head-to-head file as a canonical judgments table with its responses (see module doc)."""
    path = Path(path)
    v = Validator(str(path), ReadReport(source=str(path), format=FORMAT), skip_invalid)
    raw, rows, tabular = CONTAINERS[CONTAINER_OF.get(path.suffix.lower(), "jsonl")](path, v)
    require_columns(raw, REQUIRED, file=str(path), what="the AutoArena head-to-head file")
    raw = raw.assign(outcome=raw["winner"].map(winner_outcome))
    winner = Check("winner", "A, B or - (a tie: AutoArena's winner)", lambda f: f["outcome"].isna().to_numpy(),
                   lambda f, i, r: show(f["winner"].iloc[i]))
    raw, rows = v.apply(raw, rows, [prose_field("prompt", "the prompt text"), winner])
    frame = pd.DataFrame({
        "prompt_id": [text_prompt_id(str(p), PROMPT_ID_PREFIX) for p in raw["prompt"]],
        "model_a": raw["model_a"], "model_b": raw["model_b"],
        "judge": raw["judge"] if "judge" in raw.columns else UNKNOWN_JUDGE,
        "outcome": raw["outcome"]})
    table = validate_table(frame, rows, "judgments", tabular, v)
    responses = _responses(raw.assign(prompt_id=frame["prompt_id"].to_numpy()), str(path))
    if responses is not None:
        table.extras["responses"] = responses
    return table


def _responses(raw: pd.DataFrame, source: str) -> Table | None:
    """Both sides' responses as a responses table (first text per prompt and model), or None without them."""
    if not {"response_a", "response_b"} <= set(raw.columns):
        return None
    sides = [pd.DataFrame({"prompt_id": raw["prompt_id"], "model": raw[f"model_{s}"], "text": raw[f"response_{s}"],
                           "instruction": raw["prompt"]}) for s in ("a", "b")]
    frame = pd.concat(sides, ignore_index=True)
    frame = frame[frame["text"].notna()].drop_duplicates(["prompt_id", "model"]).reset_index(drop=True)
    if not len(frame):
        return None
    v = Validator(source, ReadReport(source=source, format=FORMAT), skip_invalid=True)
    v.report.rows_read = len(frame)
    return validate_table(frame, np.arange(1, len(frame) + 1), "responses", True, v)
