"""Chatbot Arena / Arena-Hard battle logs at scale: JSONL or Parquet read chunk by chunk into a judgments table.

The battles are ``{question_id (or uid), model_a, model_b, winner}`` (+ optional ``judge``; other fields are
ignored), ``winner`` one of ``model_a``, ``model_b``, ``tie``, ``tie (bothbad)`` — FastChat's labels, both ties
(:func:`judgewise.io.arenahard.winner_outcome`). Each chunk goes through :mod:`judgewise.io.columnar` (checks on
distinct values, integer codes); a chunk that is not clean is read again by
:func:`judgewise.io.arenahard.battle_frame`, so a bad battle gets the same message (file, row, field) as from
the row-by-row reader. A Parquet file lacking a needed column is refused naming the columns it lacks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io.canonical import finish_table, validate_rows
from judgewise.io.chunks import jsonl_chunks, parquet_chunks, parquet_columns
from judgewise.io.columnar import CodedChunk, distinct_pairs, mapped_numbers, name_codes, read_coded, value_type
from judgewise.io.schema import require_columns
from judgewise.io.tables import Table
from judgewise.io.validate import MISSING, Check, Validator, show, text_field

COLUMNS = ["prompt_id", "model_a", "model_b", "judge", "outcome"]
COLUMNAR_SUFFIXES = (".jsonl", ".ndjson", ".parquet", ".pq")
WINNER_OUTCOME = {"modela": 1.0, "modelb": 0.0, "tie": 0.5, "tiebothbad": 0.5, "bothbad": 0.5}
UNKNOWN_JUDGE = "unknown"


def winner_outcome(winner) -> float:
    """model_a's result for an Arena-Hard/Chatbot-Arena ``winner`` label (NaN when not recognised)."""
    if not isinstance(winner, str):
        return float("nan")
    key = "".join(ch for ch in winner.lower() if ch.isalnum())
    return WINNER_OUTCOME.get(key, float("nan"))


def prompt_ids(records: list[dict]) -> list:
    """Each record's prompt: its ``question_id``, else its ``uid`` (Arena-Hard v2.0)."""
    return [r.get("question_id", r.get("uid", MISSING)) for r in records]


def battle_frame(records: list[dict], rows: np.ndarray, v: Validator) -> tuple[pd.DataFrame, np.ndarray]:
    """Battle records as raw judgment rows (``outcome`` from ``winner``), question id and winner checked: the
    row-by-row reader of battles (JSON lists, and the chunks the fast path finds unclean)."""
    frame = pd.DataFrame({
        "prompt_id": prompt_ids(records),
        "model_a": [r.get("model_a", MISSING) for r in records],
        "model_b": [r.get("model_b", MISSING) for r in records],
        "judge": [r.get("judge", UNKNOWN_JUDGE) for r in records],
        "winner": [r.get("winner", MISSING) for r in records],
    })
    frame["outcome"] = frame["winner"].map(winner_outcome)
    winner = Check("winner", "model_a, model_b, tie or tie (bothbad)", lambda f: f["outcome"].isna().to_numpy(),
                   lambda f, i, r: show(f["winner"].iloc[i]))
    frame, rows = v.apply(frame, rows, [text_field("prompt_id", "question_id"), winner])
    return frame.drop(columns=["winner"]), rows


def _prompt_column(columns) -> str:
    return "question_id" if "question_id" in columns or "uid" not in columns else "uid"


def battle_chunk(table, *, json: bool) -> CodedChunk | None:
    """A chunk of battles as codes, or None when it is not clean (read it row by row)."""
    import pyarrow as pa

    columns = table.column_names
    if not {"model_a", "model_b", "winner", _prompt_column(columns)} <= set(columns):
        return None
    coded = CodedChunk(table.num_rows)
    for col, source in (("prompt_id", _prompt_column(columns)), ("model_a", "model_a"), ("model_b", "model_b")):
        coded.names[col] = name_codes(table[source], json=json)
        if coded.names[col] is None:
            return None
    if "judge" in columns:
        coded.names["judge"] = name_codes(table["judge"], json=json)
        if coded.names["judge"] is None:
            return None
    else:
        coded.names["judge"] = (None, pa.array([UNKNOWN_JUDGE]))  # every row: codes not stored
    winner_type = value_type(table["winner"])
    if not (pa.types.is_string(winner_type) or pa.types.is_large_string(winner_type)):
        return None
    outcome = mapped_numbers(table["winner"], winner_outcome)
    if outcome is None or not distinct_pairs(coded.names["model_a"], coded.names["model_b"]):
        return None
    coded.numbers["outcome"] = outcome
    return coded


def require_battle_columns(columns: list[str], v) -> None:
    """A Parquet file's schema must hold the battle columns: an error naming the ones it lacks."""
    needed = (_prompt_column(columns), "model_a", "model_b", "winner")
    require_columns(pd.DataFrame(columns=columns), needed, file=v.file, what="the battles file")


def read_battles_columnar(path: Path, v) -> Table:
    """Battles from JSONL or Parquet (module doc) as a canonical judgments table; ``v`` raises or skips."""
    parquet = path.suffix.lower() in (".parquet", ".pq")
    if parquet:
        columns = parquet_columns(path, v)
        require_battle_columns(columns, v)
        wanted = [c for c in ("question_id", "uid", "model_a", "model_b", "winner", "judge") if c in columns]
        chunks = parquet_chunks(path, v, wanted)
    else:
        chunks = jsonl_chunks(path, v)

    def careful(chunk) -> pd.DataFrame:
        if parquet:
            frame, rows = chunk.frame(v)
            records = frame.astype(object).where(frame.notna(), None).to_dict("records")
        else:
            records, rows = chunk.records(v)
        frame, rows = battle_frame(records, rows, v)
        return validate_rows(frame, rows, "judgments", False, v)

    frame = read_coded(chunks, lambda table: battle_chunk(table, json=not parquet), careful, v, COLUMNS)
    return finish_table(frame, "judgments", v)
