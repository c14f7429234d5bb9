"""Importers for Arena-Hard-Auto (lmarena/arena-hard-auto) files: battles, 5-way judgment games, model answers.

* **battles** (``{question_id, model_a, model_b, winner}``, JSONL or a JSON list, or a folder holding
  ``battles.jsonl`` and perhaps ``model_answer/``, attached as responses): ``winner`` ∈ model_a | model_b |
  tie, with Chatbot Arena's ``tie (bothbad)`` in any spelling (``tie(bothbad)``, ``tie_bothbad``, ``bothbad``)
  counted as a tie → ``outcome`` 1 / 0 / 0.5. ``prompt_id`` = ``question_id`` (or ``uid``); ``judge`` = the
  record's ``judge`` field when present, else ``"unknown"``.
* **games** (``model_judgment/<judge>/<model>.jsonl``: ``{question_id, model, judge, games: [{score}, {score}]}``):
  game 1 shows the baseline as A and the model as B, game 2 the reverse; ``score`` is the 5-way label
  (``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A``). One judgment row per game with ``model_a`` = the model,
  ``model_b`` = the baseline (``gpt-4-0314``, v0.1's anchor, unless the record names one), ``verdict`` from the
  model's view, ``outcome`` win/tie/loss, ``first`` = the model shown first.
* **answers** (``model_answer/*.jsonl``): a responses table; ``prompt_id`` = ``question_id`` or ``uid``,
  ``model`` = ``model_id`` or ``model`` or the file stem, ``text`` = ``choices[0].turns[0].content`` or the
  assistant message's ``content.answer`` (or ``content`` when it is a plain string).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io.canonical import checks_for, validate_table
from judgewise.io.containers import json_list_records, jsonl_records
from judgewise.io.schema import VERDICT5, verdict_outcome
from judgewise.io.tables import ReadReport, Table
from judgewise.io.validate import MISSING, Check, Validator, show, text_field

WINNER_OUTCOME = {"modela": 1.0, "modelb": 0.0, "tie": 0.5, "tiebothbad": 0.5, "bothbad": 0.5}
DEFAULT_BASELINE = "gpt-4-0314"
UNKNOWN_JUDGE = "unknown"


def _records(path: Path, v: Validator) -> tuple[list[dict], np.ndarray]:
    return json_list_records(path, v) if path.suffix.lower() == ".json" else jsonl_records(path, v)


def _prompt_ids(records: list[dict]) -> list:
    return [r.get("question_id", r.get("uid", MISSING)) for r in records]


def winner_outcome(winner) -> float:
    """model_a's result for an Arena-Hard/Chatbot-Arena ``winner`` label (NaN when not recognised)."""
    if not isinstance(winner, str):
        return float("nan")
    key = "".join(ch for ch in winner.lower() if ch.isalnum())
    return WINNER_OUTCOME.get(key, float("nan"))


BATTLES_FILE = "battles.jsonl"


def looks_like_battles(probe) -> bool:
    if probe.is_dir:  # an Arena-Hard data folder holding battles.jsonl (and perhaps model_answer/)
        return (probe.path / BATTLES_FILE).is_file()
    return {"model_a", "model_b", "winner"} <= probe.keys and "outcome" not in probe.keys


def read_battles(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """Arena-Hard / Chatbot Arena battles as a canonical judgments table (see module doc). Given a folder, reads
    its ``battles.jsonl`` and attaches the folder's model answers (if any) as ``extras["responses"]``."""
    path = Path(path)
    if path.is_dir():
        table = read_battles(path / BATTLES_FILE, skip_invalid=skip_invalid)
        if answer_files(path) and path.joinpath("model_answer").is_dir():
            table.extras["responses"] = read_answers(path, skip_invalid=skip_invalid)
        return table
    v = Validator(str(path), ReadReport(source=str(path), format="arenahard-battles"), skip_invalid)
    records, rows = _records(path, v)
    frame = pd.DataFrame({
        "prompt_id": _prompt_ids(records),
        "model_a": [r.get("model_a", MISSING) for r in records],
        "model_b": [r.get("model_b", MISSING) for r in records],
        "judge": [r.get("judge", UNKNOWN_JUDGE) for r in records],
        "winner": [r.get("winner", MISSING) for r in records],
    })
    frame["outcome"] = frame["winner"].map(winner_outcome)
    winner = Check("winner", "model_a, model_b, tie or tie (bothbad)", lambda f: f["outcome"].isna().to_numpy(),
                   lambda f, i, r: show(f["winner"].iloc[i]))
    frame, rows = v.apply(frame, rows, [text_field("prompt_id", "question_id"), winner])
    return validate_table(frame.drop(columns=["winner"]), rows, "judgments", False, v)


def game_files(path: Path) -> list[Path]:
    """A judgment file, a judge's folder of them, or ``model_judgment/`` holding one folder per judge."""
    if path.is_file():
        return [path]
    return sorted(path.glob("*.jsonl")) or sorted(path.glob("*/*.jsonl"))


def looks_like_games(probe) -> bool:
    if probe.is_dir:
        from judgewise.io.registry import Probe

        files = game_files(probe.path)
        return bool(files) and looks_like_games(Probe(files[0]))
    return {"question_id", "model", "games"} <= probe.keys


def _game_rows(record: dict, row: int, judge: str, v: Validator) -> list[dict]:
    """The judgment rows of one question's games (model's view); a game without a 5-way score is rejected."""
    model, baseline = record.get("model"), record.get("baseline", DEFAULT_BASELINE)
    games = record.get("games")
    if not isinstance(games, list) or not games:
        v.reject(f"expected a list of games, found {show(games)}", row=row, field="games")
        return []
    out = []
    for k, game in enumerate(games):
        score = game.get("score") if isinstance(game, dict) else None
        if not isinstance(score, str) or score not in VERDICT5:  # a list or dict score is unhashable
            v.reject(f"expected one of {', '.join(VERDICT5)}, found {show(score)}", row=row,
                     field=f"games[{k}].score")
            continue
        model_first = k % 2 == 1  # game 1: baseline is A; game 2: the model is A
        verdict = VERDICT5[score] * (1 if model_first else -1)
        out.append({"prompt_id": record.get("question_id"), "model_a": model, "model_b": baseline,
                    "judge": record.get("judge", judge), "outcome": verdict_outcome(verdict),
                    "verdict": verdict, "first": model if model_first else baseline, "game": k + 1, "_row": row})
    return out


def read_games(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """Arena-Hard ``model_judgment`` files (a file, or a judge's folder of them) as judgments (see module doc)."""
    path = Path(path)
    files = game_files(path)
    report = ReadReport(source=str(path), format="arenahard-games")
    rows_out = []
    for file in files:
        v = Validator(str(file), report, skip_invalid)
        records, rows = jsonl_records(file, v)
        for record, row in zip(records, rows):
            rows_out.extend({**game, "_file": str(file)} for game in _game_rows(record, int(row), file.parent.name, v))
    report.rows_read = len(rows_out) + report.rows_skipped  # rows are games, not lines
    v = Validator(str(path), report, skip_invalid)
    if not rows_out:
        raise v.error("no valid games found")
    checked = [_check_file_games(games, Validator(file, report, skip_invalid))
               for file, games in pd.DataFrame(rows_out).groupby("_file", sort=False)]
    frame = pd.concat([f for f, _ in checked], ignore_index=True)
    return validate_table(frame, np.concatenate([r for _, r in checked]), "judgments", False, v)


def _check_file_games(games: pd.DataFrame, v: Validator) -> tuple[pd.DataFrame, np.ndarray]:
    """The judgment row checks on one file's games, so that a bad row is named with its file (rows are its lines)."""
    games = games.drop(columns="_file").reset_index(drop=True)
    rows = games.pop("_row").to_numpy()
    return v.apply(games, rows, checks_for("judgments", games.columns))


def _answer_text(record: dict):
    """The answer text in either Arena-Hard layout (None when absent)."""
    choices = record.get("choices")
    if isinstance(choices, list) and choices:
        try:
            return choices[0]["turns"][0]["content"]
        except (KeyError, IndexError, TypeError):
            return None
    for message in record.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "assistant":
            content = message.get("content")
            return content.get("answer") if isinstance(content, dict) else content
    return None


def answer_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    base = path / "model_answer" if (path / "model_answer").is_dir() else path
    return sorted(base.glob("*.jsonl"))


def looks_like_answers(probe) -> bool:
    if probe.is_dir:
        files = answer_files(probe.path)
        from judgewise.io.registry import Probe

        return bool(files) and looks_like_answers(Probe(files[0]))
    return bool({"messages", "choices"} & probe.keys) and bool({"uid", "question_id"} & probe.keys)


def read_answers(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """Arena-Hard model answers (a model_answer folder, its parent, or one file) as a responses table."""
    path = Path(path)
    report = ReadReport(source=str(path), format="arenahard-answers")
    parts = []
    for file in answer_files(path):
        v = Validator(str(file), report, skip_invalid)
        records, rows = jsonl_records(file, v)
        frame = pd.DataFrame({
            "prompt_id": _prompt_ids(records),
            "model": [r.get("model_id") or r.get("model") or file.stem for r in records],
            "text": [_answer_text(r) for r in records],
        })
        part = validate_table(frame, rows, "responses", False, v)
        parts.append(part.frame)
    if not parts:
        raise Validator(str(path), report).error("no model answer files (*.jsonl) found")
    frame = pd.concat(parts, ignore_index=True)
    report.rows_used = len(frame)
    return Table("responses", frame, report)
