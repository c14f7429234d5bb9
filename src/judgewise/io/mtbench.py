"""Importers for MT-bench files in FastChat's ``llm_judge`` layout: questions, model answers, single and pair judgments.

* **questions** (``question.jsonl``: ``{question_id, category, turns: [t1, t2, ...]}``): a prompts frame
  ``prompt_id, category, turns`` (the user turns) and ``prompt`` = the first turn (:func:`read_questions`).
* **answers** (``model_answer/<model>.jsonl`` and ``reference_answer/<model>.jsonl``: ``{question_id, model_id,
  choices: [{turns: [...]}]}``): a responses table with ``turns`` (every assistant turn) and ``text`` = the first
  turn (what a single-turn pairwise judge is shown). Detected before Arena-Hard's answers, whose ``choices`` turns
  are ``{content}`` objects rather than strings.
* **single judgments** (``model_judgment/<judge>_single.jsonl``: ``{question_id, model, judge: [judge, prompt],
  score, turn, judgment, user_prompt}``): a **grades** table ``prompt_id, model, judge, score, turn, judge_prompt,
  raw``. FastChat's score ``-1`` (no rating found in the judgment) is a failed grade: kept with its ``error``
  and no score, counted, never averaged.
* **pair judgments** (``model_judgment/<judge>_pair.jsonl``: ``{question_id, model_1, model_2, g1_winner,
  g2_winner, judge, turn, g1_judgment, g2_judgment}``): a judgments table, two games per record — game 1 shows
  ``model_1`` first, game 2 ``model_2`` (FastChat has already mapped both winners to ``model_1``/``model_2``/
  ``tie``); ``error`` winners are failed games (counted as skipped).
* **a data folder** (``question.jsonl`` + ``model_answer/``, perhaps ``reference_answer/`` and ``model_judgment/``):
  the answers with their questions' ``prompt_turns``, ``category`` and ``instruction`` (the first user turn) on
  every row; the judgments of ``model_judgment/`` as the table when judgments or grades are asked for, and
  attached as ``extras`` otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from judgewise.io.canonical import validate_table
from judgewise.io.containers import jsonl_records
from judgewise.io.schema import GRADES_REQUIRED
from judgewise.io.tables import ReadReport, Table
from judgewise.io.validate import MISSING, Check, Validator, as_number, show, text_field

QUESTIONS_FILE = "question.jsonl"
ANSWERS_DIR, REFERENCES_DIR, JUDGMENTS_DIR = "model_answer", "reference_answer", "model_judgment"
PAIR_WINNER = {"model_1": 1.0, "model_2": 0.0, "tie": 0.5}
NO_RATING = -1  # FastChat's score when the judgment holds no [[rating]]


# -- detection ------------------------------------------------------------------------------------------------------
def _first_record(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8-sig") as fh:
            for line in fh:
                if line.strip():
                    record = json.loads(line)
                    return record if isinstance(record, dict) else {}
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError is a ValueError; RecursionError: deep nesting
        pass
    return {}


def is_answer_record(record: dict) -> bool:
    """A FastChat answer: ``choices[0].turns`` is a list of strings (Arena-Hard's are ``{content}`` objects)."""
    choices = record.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return False
    turns = choices[0].get("turns")
    return isinstance(turns, list) and bool(turns) and all(isinstance(t, str) for t in turns)


def is_question_file(path: Path) -> bool:
    record = _first_record(path)
    turns = record.get("turns")
    return "question_id" in record and isinstance(turns, list) and bool(turns) and isinstance(turns[0], str)


def _answer_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    base = path / ANSWERS_DIR if (path / ANSWERS_DIR).is_dir() else path
    return sorted(base.glob("*.jsonl"))


def looks_like_answers(probe) -> bool:
    files = _answer_files(probe.path) if probe.is_dir else [probe.path]
    return bool(files) and "question_id" in (record := _first_record(files[0])) and is_answer_record(record)


def looks_like_judgments(probe) -> bool:
    if probe.is_dir:
        files = judgment_files(probe.path)
        return bool(files) and not (probe.path / QUESTIONS_FILE).exists()
    keys = probe.keys
    return {"question_id", "model", "judge", "score", "turn"} <= keys or \
        {"question_id", "model_1", "model_2", "g1_winner", "g2_winner"} <= keys


def looks_like_folder(probe) -> bool:
    return probe.is_dir and (probe.path / ANSWERS_DIR).is_dir() and is_question_file(probe.path / QUESTIONS_FILE)


# -- questions and answers --------------------------------------------------------------------------------------------
def read_questions(path: str | Path, *, skip_invalid: bool = False) -> pd.DataFrame:
    """MT-bench questions as a prompts frame: ``prompt_id, category, turns, prompt`` (prompt = the first turn)."""
    path = Path(path)
    v = Validator(str(path), ReadReport(source=str(path), format="mtbench-questions"), skip_invalid)
    records, rows = jsonl_records(path, v)
    frame = pd.DataFrame({"prompt_id": [r.get("question_id", MISSING) for r in records],
                          "category": [r.get("category") for r in records],
                          "turns": [r.get("turns", MISSING) for r in records]})
    turns = Check("turns", "a non-empty list of strings (the user turns)", lambda f: ~f["turns"].map(_text_list))
    frame, rows = v.apply(frame, rows, [text_field("prompt_id", "question_id"), turns])
    return frame.assign(prompt_id=frame["prompt_id"].astype(str), prompt=frame["turns"].map(lambda t: t[0]))


def _text_list(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(t, str) for t in value)


def _choice_turns(record: dict):
    choices = record.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return MISSING
    return choices[0].get("turns", MISSING)


def read_answers(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """FastChat answers (a ``model_answer`` folder, its parent, or one file) as responses with ``turns``."""
    path = Path(path)
    report = ReadReport(source=str(path), format="mtbench-answers")
    parts = []
    for file in _answer_files(path):
        v = Validator(str(file), report, skip_invalid)
        records, rows = jsonl_records(file, v)
        frame = pd.DataFrame({"prompt_id": [r.get("question_id", MISSING) for r in records],
                              "model": [r.get("model_id") or r.get("model") or file.stem for r in records],
                              "turns": [_choice_turns(r) for r in records]})
        turns = Check("choices[0].turns", "a non-empty list of strings (the assistant turns)",
                      lambda f: ~f["turns"].map(_text_list).to_numpy(bool), lambda f, i, r: show(f["turns"].iloc[i]))
        frame, rows = v.apply(frame, rows, [turns])
        frame["text"] = frame["turns"].map(lambda t: t[0])
        parts.append(validate_table(frame, rows, "responses", False, v).frame)
    if not parts:
        raise Validator(str(path), report).error("no model answer files (*.jsonl) found")
    frame = pd.concat(parts, ignore_index=True)
    report.rows_used = len(frame)
    return Table("responses", frame, report)


# -- judgments ---------------------------------------------------------------------------------------------------------
def judgment_files(path: Path, suffix: str = "") -> list[Path]:
    """``*_single.jsonl`` / ``*_pair.jsonl`` files: the file itself, or those in a ``model_judgment`` folder."""
    if path.is_file():
        return [path]
    base = path / JUDGMENTS_DIR if (path / JUDGMENTS_DIR).is_dir() else path
    return sorted(f for f in base.glob("*.jsonl") if f.stem.endswith(("_single", "_pair")) and f.stem.endswith(suffix))


def _judge_parts(value) -> tuple[object, object]:
    """(judge model, prompt name) of FastChat's ``judge`` field (a [model, prompt] list, or a plain name)."""
    if isinstance(value, (list, tuple)) and value:
        return value[0], (value[1] if len(value) > 1 else None)
    return value, None


def _single_rows(records: list[dict]) -> pd.DataFrame:
    judges = [_judge_parts(r.get("judge", MISSING)) for r in records]
    given = [r.get("score", MISSING) for r in records]
    failed = as_number(pd.Series(given, dtype=object)) == NO_RATING
    return pd.DataFrame({
        "prompt_id": [r.get("question_id", MISSING) for r in records],
        "model": [r.get("model", MISSING) for r in records],
        "judge": [j for j, _ in judges], "judge_prompt": [t for _, t in judges],
        "score": [None if f else g for f, g in zip(failed, given)], "label": [None] * len(records),
        "turn": [r.get("turn", 1) for r in records],
        "raw": [r.get("judgment") for r in records],
        "error": np.where(failed, "no [[rating]] in the judgment (FastChat score -1)", None),
    })


def read_single(path: Path, v: Validator) -> pd.DataFrame:
    """One ``*_single.jsonl`` file's grades (see the module docstring); bad rows named by file, row and field."""
    records, rows = jsonl_records(path, v)
    frame = _single_rows(records)
    turn = Check("turn", "a turn number >= 1", lambda f: ~(as_number(f["turn"]) >= 1))
    frame, rows = v.apply(frame, rows, [turn])
    frame = validate_table(frame, rows, "grades", False, v).frame  # the canonical grades checks (io.canonical)
    return frame.assign(turn=as_number(frame["turn"]).astype(int))


def _pair_rows(records: list[dict], rows: np.ndarray) -> pd.DataFrame:
    out = []
    for record, row in zip(records, rows):
        judge, template = _judge_parts(record.get("judge", MISSING))
        a, b = record.get("model_1", MISSING), record.get("model_2", MISSING)
        for game, first in ((1, a), (2, b)):
            winner = record.get(f"g{game}_winner", MISSING)
            outcome = PAIR_WINNER.get(winner, np.nan) if isinstance(winner, str) else np.nan
            error = f"the judge gave no verdict (FastChat winner {show(winner)})" if winner == "error" else None
            out.append({"prompt_id": record.get("question_id", MISSING), "model_a": a, "model_b": b, "judge": judge,
                        "outcome": outcome, "first": first, "game": game, "turn": record.get("turn", 1),
                        "judge_prompt": template, "raw": record.get(f"g{game}_judgment"), "error": error,
                        "_winner": winner, "_row": row})
    return pd.DataFrame(out)


def read_pair(path: Path, v: Validator) -> pd.DataFrame:
    """One ``*_pair.jsonl`` file's games (see the module docstring)."""
    records, rows = jsonl_records(path, v)
    frame = _pair_rows(records, rows)
    if not len(frame):
        return frame
    rows = frame.pop("_row").to_numpy()
    winner = Check("g1_winner", "model_1, model_2, tie or error",
                   lambda f: f["outcome"].isna().to_numpy() & f["error"].isna().to_numpy(),
                   lambda f, i, r: f"g{f['game'].iloc[i]}_winner = {show(f['_winner'].iloc[i])}")
    frame, rows = v.apply(frame, rows, [winner])
    return validate_table(frame.drop(columns="_winner"), rows, "judgments", False, v).frame


def read_judgments(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """MT-bench judgment files as a grades table (``*_single``) or a judgments table (``*_pair``): a file, or a
    folder holding both — its pair files when judgments are asked for (or when it has no single files)."""
    path = Path(path)
    files = judgment_files(path)
    single = [f for f in files if f.stem.endswith("_single") or (path.is_file() and "score" in _first_record(f))]
    pair = [f for f in files if f not in single]
    want_pair = bool(pair) and (kind == "judgments" or not single)
    chosen = pair if want_pair else single
    report = ReadReport(source=str(path), format="mtbench-judgments")
    if not chosen:
        raise Validator(str(path), report).error("no MT-bench judgment files (*_single.jsonl or *_pair.jsonl)")
    frames = []
    for file in chosen:
        v = Validator(str(file), report, skip_invalid)
        frames.append(read_pair(file, v) if want_pair else read_single(file, v))
    frame = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else None
    if frame is None:
        raise Validator(str(path), report).error("no valid judgments found")
    report.rows_used = len(frame)
    if want_pair:
        return Table("judgments", frame, report)
    return Table("grades", frame[[*GRADES_REQUIRED, *[c for c in frame.columns if c not in GRADES_REQUIRED]]],
                 report)


# -- the data folder ----------------------------------------------------------------------------------------------
def read_folder(path: str | Path, *, skip_invalid: bool = False, kind: str | None = None) -> Table:
    """An MT-bench data folder (module docstring): answers with their questions, or its judgments on request."""
    path = Path(path)
    has_judgments = bool(judgment_files(path / JUDGMENTS_DIR)) if (path / JUDGMENTS_DIR).is_dir() else False
    if kind in ("judgments", "grades") and has_judgments:
        return read_judgments(path / JUDGMENTS_DIR, skip_invalid=skip_invalid, kind=kind)
    questions = read_questions(path / QUESTIONS_FILE, skip_invalid=skip_invalid)
    table = read_answers(path / ANSWERS_DIR, skip_invalid=skip_invalid)
    table.report.format = "mtbench"
    asked = questions.set_index("prompt_id")
    frame = table.frame
    table.frame = frame.assign(instruction=frame["prompt_id"].map(asked["prompt"]),
                               prompt_turns=frame["prompt_id"].map(asked["turns"]),
                               category=frame["prompt_id"].map(asked["category"]))
    if (path / REFERENCES_DIR).is_dir():
        table.extras["references"] = read_answers(path / REFERENCES_DIR, skip_invalid=skip_invalid)
    if has_judgments:
        judged = read_judgments(path / JUDGMENTS_DIR, skip_invalid=skip_invalid)
        table.extras[judged.kind] = judged
    return table
