"""Independent re-implementations the tests compare judgewise against: the row-by-row reader, AlpacaEval's
annotations read with pandas, Arena-Hard's answer metadata."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from judgewise.io.battles import battle_frame
from judgewise.io.canonical import validate_table
from judgewise.io.containers import CONTAINERS, jsonl_records
from judgewise.io.tables import ReadReport
from judgewise.io.validate import Validator


def row_by_row(path: Path, battles: bool, skip_invalid: bool = False):
    """The former reader of this file: the whole file parsed row by row, then validated (the oracle)."""
    fmt = "arenahard-battles" if battles else path.suffix[1:]
    v = Validator(str(path), ReadReport(source=str(path), format=fmt), skip_invalid)
    if battles and path.suffix == ".jsonl":
        frame, rows = battle_frame(*jsonl_records(path, v), v)
        return validate_table(frame, rows, "judgments", False, v)
    if battles:  # Parquet battles had no row-by-row reader: its rows as records through battle_frame
        frame, rows, _ = CONTAINERS["parquet"](path, v)
        return validate_table(*battle_frame(frame.astype(object).where(frame.notna(), None).to_dict("records"),
                                            rows, v), "judgments", False, v)
    frame, rows, tabular = CONTAINERS[path.suffix[1:]](path, v)
    return validate_table(frame, rows, "judgments", tabular, v)


def alpacaeval_judgments(root) -> pd.DataFrame:
    """AlpacaEval annotations as canonical judgments, read with pandas (model_a = anchor, outcome = 2 − preference)."""
    frames = []
    for path in sorted((root / "results").glob("*/weighted_alpaca_eval_gpt4_turbo/annotations.json")):
        raw = pd.read_json(path, dtype=False)
        frames.append(pd.DataFrame({
            "prompt_id": raw["instruction"], "model_a": raw["generator_1"], "model_b": path.parts[-3],
            "judge": "weighted_alpaca_eval_gpt4_turbo",
            "outcome": 2.0 - pd.to_numeric(raw["preference"]),
        }))
    return pd.concat(frames, ignore_index=True)


def markdown_counts(text: str) -> dict:
    """Arena-Hard's markdown metadata of an answer (utils/add_markdown_info.py's rules: code blocks removed)."""
    for block in re.findall(r"```([^`]*)```", text):
        text = text.replace(block, "")
    return {"header_count": {f"h{k}": len(re.findall(rf"^#{{{k}}}\s", text, re.MULTILINE)) for k in range(1, 7)},
            "list_count": {"ordered": len(re.findall(r"^\s*\d+\.\s", text, re.MULTILINE)),
                           "unordered": len(re.findall(r"^\s*[-*+]\s", text, re.MULTILINE))},
            "bold_count": {"**": len(re.findall(r"\*\*[^*\n]+\*\*", text)),
                           "__": len(re.findall(r"__[^_\n]+__", text))}}
